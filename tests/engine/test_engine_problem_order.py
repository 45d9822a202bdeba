"""An input with several problems is refused for the same one, with the same message, by ``tempanon
timestamped`` and a timestamped job on every engine: the in-memory (numpy) order. Before, DuckDB and Spark
checked the respondent ids and screened the columns released unchanged before reading the timestamps and
the granularities (numpy: after), checked a negative shuffle seed only when writing (numpy: before the
timestamps), and a job on an engine checked its roles (uid among the quasi-identifiers) before its columns
(numpy: after); a job's misplaced audit was refused by numpy only after the search, by the engines before
reading (now by both before anything is read)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


def _rows(bad_time: bool = False, missing_uid: bool = False, email: bool = False) -> str:
    rows = []
    for i in range(40):
        t = "not a time" if bad_time and i == 5 else f"2023-0{1 + i % 9}-1{i % 9} 10:00"
        uid = "" if missing_uid and i == 3 else f"p{i % 8}"
        rows.append(f"{uid},{t},{'MF'[i % 2]},{f'user{i}@example.com' if email else f'x{i % 3}'}")
    return "pid,t,sex,note\n" + "\n".join(rows) + "\n"


BAD_TIME = "error: column 't', line 7: cannot parse timestamp 'not a time' (1 unparsable value(s) in total)"
GAP = "error: column 't', line 3: '2023-02-11 10:00' lies in no granule of the data granularity business-day"
GRANULARITY = "error: unknown granularity 'fortnightly'; use one of second, minute, hour"
MISSING_UID = "error: column 'pid', line 5: the respondent identifier is missing"
SEED = "error: the shuffle seed must be a non-negative integer (got -3)"

# (name, input, extra command-line options, the first line of the error)
COMMAND = [
    ("bad time, missing uid", _rows(bad_time=True, missing_uid=True), [], BAD_TIME),
    ("bad time, identifier kept", _rows(bad_time=True, email=True), ["--keep", "note"], BAD_TIME),
    ("unknown granularity, missing uid", _rows(missing_uid=True), ["--granularities", "fortnightly"], GRANULARITY),
    ("unknown granularity, identifier kept", _rows(email=True), ["--keep", "note", "--granularities", "fortnightly"],
     GRANULARITY),
    ("gap, missing uid", _rows(missing_uid=True), ["--data-granularity", "business-day"], GAP),
    ("gap, identifier kept", _rows(email=True), ["--keep", "note", "--data-granularity", "business-day"], GAP),
    ("negative shuffle seed, bad time", _rows(bad_time=True), ["--shuffle-seed", "-3"], SEED),
]  # fmt: skip


def _first(output: str) -> str:
    """The error, from its ``error:`` on (a slow engine's progress lines may come first)."""
    text = " ".join(output.split())
    return text[text.find("error:"):]


@pytest.mark.parametrize("case", COMMAND, ids=[c[0] for c in COMMAND])
def test_the_command_names_the_first_problem_as_numpy(tmp_path, backend, case):
    _, text, extra, expected = case
    (tmp_path / "in.csv").write_text(text)
    opts = ["--granularities", "week,month,year", *extra] if "--granularities" not in extra else extra
    r = runner.invoke(app, ["timestamped", str(tmp_path / "in.csv"), "--time", "t", "--qi", "sex", "--uid", "pid", "--k",
                            "2", "--engine", backend, "--out", str(tmp_path / "o.csv"), *opts])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert _first(r.output).startswith(expected), r.output
    assert not (tmp_path / "o.csv").exists()


# (name, input, the job's [columns] and [model] additions and [output] lines, the error after "error: ")
JOB = [
    ("bad time, missing uid", _rows(bad_time=True, missing_uid=True), "", "", "", BAD_TIME),
    ("bad time, identifier kept", _rows(bad_time=True, email=True), 'keep = ["note"]\n', "", "", BAD_TIME),
    ("gap, missing uid", _rows(missing_uid=True), "", 'data_granularity = "business-day"\n', "", GAP),
    ("uid among the quasi-identifiers, unknown keep column", _rows(), 'keep = ["nope"]\n', "", "",
     "error: JOB, line 4: key 'columns': unknown insensitive (--keep) column 'nope'; the input has columns: pid, t, "
     "sex, note"),
    ("audit in the release folder, bad time", _rows(bad_time=True), "", "", 'audit = "out/a.csv"\n',
     "error: JOB, line 17: key 'output.audit': --audit OUT/a.csv is inside the release's folder OUT: the audit links "
     "release rows to respondents"),
]  # fmt: skip


@pytest.mark.parametrize("case", JOB, ids=[c[0] for c in JOB])
def test_a_job_names_the_first_problem_as_numpy(tmp_path, backend, case):
    name, text, columns, model, output, expected = case
    (tmp_path / "in.csv").write_text(text)
    qi = '["sex", "pid"]' if name.startswith("uid among") else '["sex"]'
    job = tmp_path / "job.toml"
    job.write_text(f'[input]\npath = "in.csv"\n\n[columns]\ntime = "t"\nquasi_identifiers = {qi}\nuid = "pid"\n{columns}\n'
                   f'[model]\nname = "timestamped"\nk = 2\ngranularities = ["week", "month", "year"]\nengine = "{backend}"\n'
                   f'{model}\n[output]\ntable = "out/o.csv"\n{output}')  # fmt: skip
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 2, r.output
    expected = expected.replace("JOB", str(job)).replace("OUT", str(tmp_path / "out"))
    assert _first(r.output).startswith(expected), r.output
    assert not (tmp_path / "out" / "o.csv").exists()
