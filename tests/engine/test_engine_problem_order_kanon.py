"""An input with several problems is refused for the same one, with the same message, by ``tempanon
kanon``, a kanon job and ``tempanon check`` on every engine: the in-memory (numpy) order (as
test_engine_problem_order.py for timestamped). Before, ``kanon --engine duckdb|spark`` checked the
--allow-identifier columns inside the API, after the quasi-identifiers, the hierarchies and the
parameters (numpy: first), and parsed the --keep and --allow-identifier lists after reading the
hierarchies (numpy: before); a kanon job's file hierarchy missing a value of the data named the value by
its position among the distinct values on an engine (numpy: its file line), and so did a taxonomy's."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()

AGE = "".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 50))
SEX = "M;*\nF;*\n"
COLUMNS = "pid, age, sex, zip, email, disease, note"


def _rows(bad_sex: bool = False, missing_uid: bool = False, empty: bool = False) -> str:
    """40 rows of 10 respondents; ``bad_sex``: 'X' (no value of the sex hierarchy) on line 8."""
    out = ["pid,age,sex,zip,email,disease,note"]
    for i in range(0 if empty else 40):
        sex = "X" if bad_sex and i == 6 else "MF"[i % 2]
        uid = "" if missing_uid and i == 3 else f"p{i % 10}"
        out.append(f"{uid},{20 + i % 30},{sex},1234{i % 4},user{i}@example.com,{'abc'[i % 3]},n{i % 2}")
    return "\n".join(out) + "\n"


def _first(output: str) -> str:
    """The error, from its ``error:`` on (a slow engine's progress lines may come first)."""
    text = " ".join(output.split())
    return text[text.find("error:"):]


ALLOW = f"error: unknown --allow-identifier column 'noallow'; the input has columns: {COLUMNS}"
HIER_X = "error: column 'sex': 1 value(s) missing from the hierarchy (H/sex.csv): 'X' (line 8)"
EMAIL = ("error: refusing to release column(s) unchanged that look like direct identifiers: column 'email': its name "
         "looks like an identifier")  # fmt: skip
QI = f"error: unknown quasi-identifier 'nope'; the input has columns: {COLUMNS}"

# (name, input, hierarchy files (name -> text, None: absent), options, the error (H: the hierarchy folder, O: the output's))
COMMAND = [
    ("unknown allow column, unknown quasi-identifier", _rows(), {}, ["--qi", "age,sex,nope", "--allow-identifier", "noallow"],
     ALLOW),
    ("unknown allow column, bad hierarchy file", _rows(), {"sex": "M;*\nF\n"}, ["--allow-identifier", "noallow"], ALLOW),
    ("unknown allow column, no hierarchy file", _rows(), {"sex": None}, ["--allow-identifier", "noallow"], ALLOW),
    ("unknown allow column, empty input", _rows(empty=True), {}, ["--allow-identifier", "noallow"], ALLOW),
    ("unknown allow column, missing respondent id", _rows(missing_uid=True), {}, ["--uid", "pid", "--allow-identifier",
                                                                                   "noallow"], ALLOW),
    ("unknown allow column, bad k", _rows(), {}, ["--k", "1", "--allow-identifier", "noallow"], ALLOW),
    ("unknown allow column, sensitive without l", _rows(), {}, ["--sensitive", "disease", "--allow-identifier", "noallow"],
     ALLOW),
    ("unknown allow column, unknown keep column", _rows(), {}, ["--keep", "nokeep", "--allow-identifier", "noallow"], ALLOW),
    ("bad keep range, unknown quasi-identifier", _rows(), {}, ["--qi", "age,sex,nope", "--keep", "nope:zz"],
     "error: column range 'nope:zz': unknown column 'nope'"),
    ("keep listed twice, bad hierarchy file", _rows(), {"sex": "M;*\nF\n"}, ["--keep", "note,note"],
     "error: column listed twice: note"),
    ("bad allow range, no hierarchy file", _rows(), {"sex": None}, ["--allow-identifier", "zip:pid"],
     "error: column range 'zip:pid': 'zip' comes after 'pid' in the table"),
    ("value missing from a hierarchy, identifier kept", _rows(bad_sex=True), {}, ["--keep", "email"], EMAIL),
    ("audit in the release folder, value missing from a hierarchy", _rows(bad_sex=True), {}, ["--audit", "O/a.csv"],
     "error: --audit O/a.csv is in the release's folder"),
]  # fmt: skip


@pytest.mark.parametrize("case", COMMAND, ids=[c[0] for c in COMMAND])
def test_kanon_names_the_first_problem_as_numpy(tmp_path, backend, case):
    _, text, hier, extra, expected = case
    (tmp_path / "in.csv").write_text(text)
    h = tmp_path / "h"
    h.mkdir()
    for name, body in {"age": AGE, "sex": SEX, **hier}.items():
        if body is not None:
            (h / f"{name}.csv").write_text(body)
    out = tmp_path / "out"
    out.mkdir()
    opts = [o.replace("O/", f"{out}/") for o in extra]
    if "--qi" not in opts:
        opts += ["--qi", "age,sex"]
    if "--k" not in opts:
        opts += ["--k", "2"]
    r = runner.invoke(app, ["kanon", str(tmp_path / "in.csv"), "--hierarchies", str(h), "--out", str(out / "o.csv"),
                            "--engine", backend, *opts])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert _first(r.output).startswith(expected.replace("H/", f"{h}/").replace("O/", f"{out}/")), r.output
    assert not list(out.iterdir())


# (name, input, [columns] lines, [model] lines, [output] lines, the error (JOB: the job file, T: its folder))
JOB = [
    ("value missing from a file hierarchy", _rows(bad_sex=True), "", "", "", HIER_X.replace("H/", "T/h/")),
    ("value missing from a taxonomy hierarchy", _rows(bad_sex=True), "", "", "",
     "error: column 'sex': 1 value(s) missing from the hierarchy (taxonomy builder): 'X' (line 8)"),
    ("value missing from a file hierarchy, identifier kept", _rows(bad_sex=True), 'keep = ["email"]\n', "", "", EMAIL),
    ("identifier kept, missing respondent id", _rows(missing_uid=True), 'keep = ["email"]\nuid = "pid"\n', "", "",
     "error: respondent id column 'pid' has a missing value at line 5"),
    ("unknown allow column, unknown quasi-identifier", _rows(), 'allow_identifier = ["noallow"]\n', "", "",
     f"error: JOB, line 4: key 'columns': unknown quasi-identifier 'nope'; the input has columns: {COLUMNS}"),
    ("empty input, sensitive without l", _rows(empty=True), 'sensitive = ["disease"]\n', "", "",
     "error: JOB, line 6: key 'columns.sensitive': a sensitive column in the kanon model needs [model] l"),
    ("l-diversity with a respondent id, identifier kept", _rows(), 'keep = ["email"]\nsensitive = ["disease"]\nuid = "pid"\n',
     "l = 2\n", "", "error: l-diversity with respondent ids (uid) is not supported"),
]  # fmt: skip


@pytest.mark.parametrize("case", JOB, ids=[c[0] for c in JOB])
def test_a_kanon_job_names_the_first_problem_as_numpy(tmp_path, backend, case):
    name, text, columns, model, output, expected = case
    (tmp_path / "in.csv").write_text(text)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "age.csv").write_text(AGE)
    (tmp_path / "h" / "sex.csv").write_text(SEX)
    (tmp_path / "h" / "nope.csv").write_text("a;*\n")
    qi = '["age", "sex", "nope"]' if "unknown quasi-identifier" in name else '["age", "sex"]'
    nope = 'nope = "h/nope.csv"\n' if "unknown quasi-identifier" in name else ""
    job = tmp_path / "job.toml"
    sex = '{ type = "taxonomy", tree = { "*" = ["M", "F"] } }' if "taxonomy" in name else '"h/sex.csv"'
    job.write_text(f'[input]\npath = "in.csv"\n\n[columns]\nquasi_identifiers = {qi}\n{columns}\n'
                   f'[hierarchies]\nage = "h/age.csv"\nsex = {sex}\n{nope}\n'
                   f'[model]\nname = "kanon"\nk = 2\nengine = "{backend}"\n{model}\n[output]\ntable = "out/o.csv"\n{output}')  # fmt: skip
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 2, r.output
    expected = expected.replace("JOB", str(job)).replace("T/", f"{tmp_path}/")
    assert _first(r.output).startswith(expected), r.output
    assert not (tmp_path / "out" / "o.csv").exists()


AUDIT = "# STEWARD ONLY - DO NOT RELEASE. tempanon timestamped audit\n# shuffle seed: 1; respondent column: pid\n"

# (name, input, audit text or None, options, the error)
CHECK = [
    ("audit of another release, unknown quasi-identifier", _rows(),
     AUDIT + "release_row,input_line,respondent\n" + "".join(f"{i},{i + 1},r{i}\n" for i in range(1, 13)),
     ["--qi", "age,nope", "--uid", "resp"], "error: the audit A lists 12 release rows, the table has 40"),
    ("audit without uid, bad k", _rows(), AUDIT, ["--k", "0"],
     "error: --audit gives the respondents of each release row: name their column with --uid"),
    ("bad k, unknown quasi-identifier", _rows(), None, ["--qi", "age,nope", "--k", "0"],
     "error: --k must be a positive integer, got 0"),
    ("bad sensitive range, unknown l model", _rows(), None, ["--sensitive", "nope:zz", "--l-model", "nope"],
     "error: column range 'nope:zz': unknown column 'nope'"),
    ("l without sensitive, unknown respondent id", _rows(), None, ["--l", "2", "--uid", "nope"],
     "error: --l needs a sensitive column (--sensitive)"),
]  # fmt: skip


@pytest.mark.parametrize("case", CHECK, ids=[c[0] for c in CHECK])
def test_check_names_the_first_problem_as_numpy(tmp_path, backend, case):
    _, text, audit, extra, expected = case
    (tmp_path / "in.csv").write_text(text)
    opts = list(extra)
    if audit is not None:
        (tmp_path / "a.csv").write_text(audit)
        opts += ["--audit", str(tmp_path / "a.csv")]
    if "--qi" not in opts:
        opts += ["--qi", "age,sex"]
    r = runner.invoke(app, ["check", str(tmp_path / "in.csv"), "--engine", backend, *opts])
    assert r.exit_code == 2, r.output
    assert _first(r.output).startswith(expected.replace("A ", f"{tmp_path / 'a.csv'} ")), r.output
