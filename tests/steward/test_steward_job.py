"""Job files (`tempanon run`), the starter job (`tempanon init`) and hierarchy building."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.hierarchy import Hierarchy
from tempanon.steward.job import key_line, load_job
from tempanon.verify import check_k_anonymity

runner = CliRunner()


def make_table(n=300, seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "name": [f"Person {i}" for i in range(n)],
        "patient_id": rng.integers(0, n // 2, n).astype(str),
        "age": rng.integers(18, 90, n).astype(str),
        "sex": rng.choice(["M", "F"], n),
        "zip": rng.choice([f"537{i:02d}" for i in range(12)], n),
        "visit": pd.date_range("2020-01-01", periods=n, freq="37h").strftime("%Y-%m-%d %H:%M"),
        "dx": rng.choice(["flu", "cold", "hiv", "ulcer"], n),
    })


JOB = """\
[input]
path = "data/t.csv"

[columns]
quasi_identifiers = ["age", "sex", "zip"]
identifying = ["name", "patient_id"]

[hierarchies]
age = { type = "intervals", widths = [10, 20, 40] }
sex = "h/sex.csv"
zip = { type = "masking", levels = 4 }

[model]
name = "kanon"
k = 5
max_suppression = 0.02

[output]
table = "out/t-anon.csv"
summary = "out/summary.json"
report = "out/report.html"
"""


@pytest.fixture
def jobdir(tmp_path):
    df = make_table()
    (tmp_path / "data").mkdir()
    df.to_csv(tmp_path / "data" / "t.csv", sep=";", index=False)
    Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]]).to_csv(tmp_path / "h" / "sex.csv")
    return tmp_path, df


def write_job(tmp_path, text=JOB, name="job.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_run_job_writes_verified_outputs_relative_to_the_job(jobdir, monkeypatch):
    tmp, df = jobdir
    job = write_job(tmp)
    monkeypatch.chdir(Path("/"))  # paths must not depend on the working directory
    r = runner.invoke(app, ["run", str(job), "--verbose"])
    assert r.exit_code == 0, r.output
    assert "nodes checked" in r.output
    out = pd.read_csv(tmp / "out" / "t-anon.csv", dtype=str, keep_default_na=False)
    assert "name" not in out.columns and "patient_id" not in out.columns
    check_k_anonymity(out, ["age", "sex", "zip"], 5, n_input=len(df), max_suppressed=int(0.02 * len(df)))
    summ = json.loads((tmp / "out" / "summary.json").read_text())
    assert summ["k"] == 5 and summ["rows_out"] == len(out)
    assert 'id="guarantee"' in (tmp / "out" / "report.html").read_text()


def test_run_job_from_duckdb(jobdir):
    duckdb = pytest.importorskip("duckdb")
    tmp, df = jobdir
    db = tmp / "data" / "clinic.duckdb"
    con = duckdb.connect(str(db))
    con.register("df", df)
    con.execute("CREATE TABLE visits AS SELECT * FROM df")
    con.close()
    text = JOB.replace('path = "data/t.csv"', 'database = "data/clinic.duckdb"\nsql = "SELECT * FROM src.visits WHERE sex IS NOT NULL"')
    r = runner.invoke(app, ["run", str(write_job(tmp, text)), "-q"])
    assert r.exit_code == 0, r.output
    out = pd.read_csv(tmp / "out" / "t-anon.csv", dtype=str)
    check_k_anonymity(out, ["age", "sex", "zip"], 5)
    assert "SHA-256 of the query result" in (tmp / "out" / "report.html").read_text()


@pytest.mark.parametrize(
    "old, new, message, line",
    [
        ("max_suppression = 0.02", "max_supression = 0.02", "key 'model.max_supression': unknown key", 16),
        ("k = 5", 'k = "5"', "key 'model.k': expected integer, got a string ('5')", 15),
        ("k = 5", "k = true", "key 'model.k': expected integer, got a boolean", 15),
        ('identifying = ["name", "patient_id"]', 'identifying = "name"', "key 'columns.identifying': expected list of strings", 6),
        ('zip = { type = "masking", levels = 4 }', 'zip = { type = "masking", level = 4 }', "key 'hierarchies.zip.level': unknown key", 11),
        ('zip = { type = "masking", levels = 4 }', 'zip = { type = "masks" }', "unknown hierarchy type 'masks'", 11),
        ('table = "out/t-anon.csv"', 'tabel = "out/t-anon.csv"', "key 'output.tabel': unknown key", 19),
        ('name = "kanon"', 'name = "sdc"', "unknown model 'sdc'; job files support: kanon, timestamped, kp, stream", 14),
        # (found by the acceptance pass uatc: said without the key and its line when the data was read)
        ('path = "data/t.csv"', 'path = "data/t.csv"\ndelimiter = ";;"', "key 'input.delimiter': the CSV delimiter must be one character", 3),
        # a name that is not a string (a list or a table ended in a TypeError traceback; found by the job fuzz, seed 36)
        ('name = "kanon"', "name = []", "key 'model.name': give the model's name as a string", 14),
        ('name = "kanon"', "name = { a = 1 }", "key 'model.name': give the model's name as a string", 14),
        ('name = "kanon"', "name = 3", "key 'model.name': give the model's name as a string", 14),
        # a NUL character in a file name (a ValueError traceback "embedded null byte"; found by the job fuzz, seed 38)
        ('table = "out/t-anon.csv"', 'table = "out/t\\u0000.csv"', "key 'output.table': 'out/t\\x00.csv' holds a NUL character", 19),
        ('path = "data/t.csv"', 'path = "data/t\\u0000.csv"', "key 'input.path': 'data/t\\x00.csv' holds a NUL character", 2),
        ('sex = "h/sex.csv"', 'sex = "h/s\\u0000.csv"', "key 'hierarchies.sex': 'h/s\\x00.csv' holds a NUL character", 10),
        ('path = "data/t.csv"', 'path = "data/none.csv"', "key 'input.path': file not found", 2),
        # (found by hand, session 23: "" was the job's folder, refused as 'a file of the input directory')
        ('path = "data/t.csv"', 'path = ""', "key 'input.path': empty; give the data file", 2),
        ('path = "data/t.csv"', 'path = "data"', "is a directory, not a data file", 2),
        ('sex = "h/sex.csv"', 'sex = "h/nope.csv"', "key 'hierarchies.sex.path': hierarchy file not found", 10),
        ('[output]', '[outputs]', "key 'outputs': unknown key", 18),
        ("k = 5", "k = 1", "key 'model.k': k must be at least 2", 15),
        ("max_suppression = 0.02", "max_suppression = 1.5", "key 'model.max_suppression': must be a fraction", 16),
        ("max_suppression = 0.02", 'algorithm = "flash"', "key 'model.algorithm': unknown algorithm 'flash'", 16),
        ("max_suppression = 0.02", 'criterion = "best"', "key 'model.criterion': unknown criterion 'best'", 16),
        ("max_suppression = 0.02", 'weights = { age = "x" }', "key 'model.weights.age': expected a non-negative number", 16),
        ("max_suppression = 0.02", "weights = { height = 1 }", "key 'model.weights.height': weight for 'height'", 16),
        # weights without weighted-height were ignored without a word (found by hand, session 27)
        ("max_suppression = 0.02", "weights = { age = 2 }", "key 'model.weights': weights are used by the criterion weighted-height only", 16),
        # (found by hand, session 27: a dates level '%Q' was built as the text '%Q' for every value; said with no line)
        ('zip = { type = "masking", levels = 4 }', 'zip = { type = "dates", formats = ["%Y", "%Q"] }',
         "key 'hierarchies.zip.formats': attribute 'zip': date format '%Q': unknown directive %Q", 11),
        # (found by the acceptance pass uatc: widths and start were checked only when the data was read, the
        # message naming no key nor line, and masking levels < 0 likewise)
        ('zip = { type = "masking", levels = 4 }', 'zip = { type = "intervals", widths = [10, 25] }',
         "key 'hierarchies.zip.widths': attribute 'zip': interval width 25 is not a multiple of 10", 11),
        ('zip = { type = "masking", levels = 4 }', 'zip = { type = "intervals", widths = [10], start = nan }',
         "key 'hierarchies.zip.start': attribute 'zip': the intervals' start must be a finite number", 11),
        ('zip = { type = "masking", levels = 4 }', 'zip = { type = "masking", levels = -1 }',
         "key 'hierarchies.zip.levels': attribute 'zip': masking levels must be >= 0", 11),
        # a quasi-identifier listed twice, said before the hierarchy of 'zip' is found not to be one
        ('quasi_identifiers = ["age", "sex", "zip"]', 'quasi_identifiers = ["age", "sex", "sex"]',
         "key 'columns.quasi_identifiers': quasi-identifier listed twice: 'sex'", 5),
    ],
)
def test_job_errors_name_key_and_line(jobdir, old, new, message, line):
    tmp, _ = jobdir
    assert old in JOB
    job = write_job(tmp, JOB.replace(old, new, 1))
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 2, r.output
    flat = " ".join(r.output.split())
    assert message in flat, flat
    assert f"line {line}" in flat, flat
    assert not (tmp / "out").exists()


def test_job_semantic_errors(jobdir):
    tmp, _ = jobdir
    cases = {
        JOB.replace('quasi_identifiers = ["age", "sex", "zip"]', 'quasi_identifiers = ["age", "sex", "zip", "height"]'): "hierarchies",
        JOB.replace('sex = "h/sex.csv"\n', ""): "no hierarchy for quasi-identifier(s) sex",
        JOB.replace('path = "data/t.csv"', 'path = "data/t.csv"\nsql = "select 1"'): "'sql' goes with 'database'",
        JOB.replace("[model]\n", "[model]\nweights = 3\n"): "key 'model.weights': expected table",
        "[input\n": "not valid TOML",
    }
    for text, message in cases.items():
        r = runner.invoke(app, ["run", str(write_job(tmp, text))])
        assert r.exit_code == 2, (message, r.output)
        assert message in " ".join(r.output.split()), (message, r.output)
    # a quasi-identifier that is not a column of the data
    text = JOB.replace('quasi_identifiers = ["age", "sex", "zip"]', 'quasi_identifiers = ["age", "sex", "zip", "height"]')
    text = text.replace("[model]", 'height = { type = "suppression" }\n\n[model]')
    r = runner.invoke(app, ["run", str(write_job(tmp, text))])
    assert r.exit_code == 2 and "unknown quasi-identifier 'height'" in r.output
    r = runner.invoke(app, ["run", str(tmp / "missing.toml")])
    assert r.exit_code == 2 and "job file not found" in r.output


def test_job_file_saved_with_a_byte_order_mark_or_not_in_utf8(jobdir):
    """A job file saved with a byte order mark (Windows editors' 'UTF-8 with BOM') was 'not valid TOML:
    Invalid statement (at line 1, column 1)'; one in Latin-1 ended in a traceback (UnicodeDecodeError).
    Found by hand (session 23: BOM and encodings in every input). Now the mark is skipped (the run
    as without it, old Mac line ends too, as read_text had them) and a file that is not UTF-8 is exit 2
    naming its line and byte."""
    tmp, _ = jobdir
    job = tmp / "job.toml"
    job.write_bytes(b"\xef\xbb\xbf" + JOB.replace("\n", "\r\n").encode("utf-8"))
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    job.write_bytes(b"# caf\xe9\n" + JOB.encode("utf-8"))
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "line 1: not UTF-8 (byte 6 of the line is 0xe9)" in " ".join(r.output.split()), r.output


def test_no_solution_exit_1_writes_nothing(jobdir):
    tmp, _ = jobdir
    job = write_job(tmp, JOB.replace("k = 5", "k = 100000"))
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 1
    assert not (tmp / "out").exists()


def test_key_line():
    text = textwrap.dedent("""\
        # comment
        [a]
        x = 1
        "quoted key" = 2
        [b.c]
        y = { z = 1 }
        b.c.w = 3
        [[arr]]
        q = 1
        """)
    assert key_line(text, ("a",)) == 2
    assert key_line(text, ("a", "x")) == 3
    assert key_line(text, ("a", "quoted key")) == 4
    assert key_line(text, ("b", "c", "y")) == 6
    assert key_line(text, ("b", "c", "y", "z")) == 6
    assert key_line(text, ("a", "nope")) is None


# ---- init ---------------------------------------------------------------------------------------
def test_init_proposes_roles_and_the_job_runs(tmp_path):
    df = make_table()
    data = tmp_path / "visits.csv"
    df.to_csv(data, index=False)
    r = runner.invoke(app, ["init", str(data)])
    assert r.exit_code == 0, r.output
    job = tmp_path / "visits.job.toml"
    text = job.read_text()
    j = load_job(job)
    assert j.identifying[0] == "name" and j.uid == "patient_id" and "dx" not in j.quasi_identifiers  # dx: no role, left out
    assert set(j.quasi_identifiers) == {"age", "sex", "zip", "visit"}  # demographics and the time
    kinds = {q: j.hierarchies[q].kind for q in j.quasi_identifiers}
    assert kinds == {"age": "intervals", "sex": "suppression", "zip": "masking", "visit": "dates"}
    for col in df.columns:  # one explanation per column
        assert f"# {col}:" in text
    # it refuses to overwrite
    again = runner.invoke(app, ["init", str(data)])
    assert again.exit_code == 2 and "--force" in again.output
    # the starter job runs as it is and its output is verified respondent-level k-anonymous
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    out = pd.read_csv(tmp_path / "visits-anonymized.csv", dtype=str, keep_default_na=False)
    assert "name" not in out.columns and "patient_id" not in out.columns
    assert len(out) >= 0.98 * len(df)  # max_suppression = 0.02
    # respondent-level k >= 5 implies every class has >= 5 rows
    check_k_anonymity(out, j.quasi_identifiers, 5)
    assert (tmp_path / "visits-report.html").exists()
    # the note on columns left out names the job file's keys, not the command line's options
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0 and "left out (no role, not released): dx" in r.output, r.output
    assert "[columns] (quasi_identifiers, sensitive, keep" in r.output and "--qi" not in r.output
    # the selected node as levels per quasi-identifier (not a Python dict's repr)
    assert re.search(r"selected (age|sex|zip|visit)=\w+(, (age|sex|zip|visit)=\w+){3};", r.output), r.output


def test_init_profiles_missing_values_and_free_text(tmp_path):
    df = pd.DataFrame({"comment": [f"free text {i}" for i in range(40)], "score": [None if i % 5 == 0 else str(i) for i in range(40)],
                       "constant": ["x"] * 40})
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    r = runner.invoke(app, ["init", str(data), "--out", str(tmp_path / "j.toml")])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "j.toml").read_text()
    assert "score: integer, 32 distinct, 8 missing" in text
    assert 'identifying = ["comment", "score"' in text  # the screened identifiers (then left-out columns, if listed)
    assert "# constant: a single value" in text


# ---- hierarchy ------------------------------------------------------------------------------------
def test_hierarchy_build_and_show(tmp_path):
    df = make_table()
    data = tmp_path / "t.csv"
    df.to_csv(data, index=False)
    out = tmp_path / "age.csv"
    r = runner.invoke(app, ["hierarchy", "--data", str(data), "--column", "age", "--type", "intervals", "--widths", "5,10,20", "--out", str(out)])
    assert r.exit_code == 0, r.output
    h = Hierarchy.from_csv(out)
    assert h.height == 4 and set(df.age) <= set(h.values.tolist())
    assert "20-24" in r.output and "age: " in r.output
    show = runner.invoke(app, ["hierarchy", str(out), "--max-children", "2"])
    assert show.exit_code == 0 and "more" in show.output
    for kind, extra in (("masking", ["--levels", "2"]), ("dates", ["--formats", "%Y-%m,%Y"]), ("suppression", [])):
        col = {"masking": "zip", "dates": "visit", "suppression": "sex"}[kind]
        r = runner.invoke(app, ["hierarchy", "--data", str(data), "--column", col, "--type", kind, *extra, "--out", str(tmp_path / f"{col}.csv"), "-q"])
        assert r.exit_code == 0, r.output
        assert set(df[col]) <= set(Hierarchy.from_csv(tmp_path / f"{col}.csv").values.tolist())


def test_hierarchy_taxonomy_from_file(tmp_path):
    tree = tmp_path / "dx.json"
    tree.write_text(json.dumps({"infection": ["flu", "cold", "hiv"], "other": ["ulcer"]}))
    data = tmp_path / "t.csv"
    make_table().to_csv(data, index=False)
    r = runner.invoke(app, ["hierarchy", "--data", str(data), "--column", "dx", "--type", "taxonomy", "--tree", str(tree), "--out", str(tmp_path / "dx.csv")])
    assert r.exit_code == 0, r.output
    assert Hierarchy.from_csv(tmp_path / "dx.csv").mapping(1)["hiv"] == "infection"
    tree.write_text(json.dumps({"infection": ["flu", "cold"], "other": ["ulcer"]}))
    r = runner.invoke(app, ["hierarchy", "--data", str(data), "--column", "dx", "--type", "taxonomy", "--tree", str(tree), "--out", str(tmp_path / "dx2.csv")])
    assert r.exit_code == 2 and "not in the taxonomy: 'hiv'" in r.output
    assert not (tmp_path / "dx2.csv").exists()


@pytest.mark.parametrize("out", ["data", "tree", "under_a_file", "directory"])
def test_hierarchy_never_writes_over_its_input(tmp_path, out):
    """``--out`` naming the ``--data`` table (or the ``--tree`` file) replaced it by the hierarchy (exit 0,
    the table gone); an unwritable ``--out`` (a read-only folder, a parent that is a file, a folder)
    ended in a traceback. Found by hand (session 23: output paths equal to the input, read-only
    folders). Now exit 2 with a message, every input unchanged, nothing written."""
    tree = tmp_path / "dx.json"
    tree.write_text(json.dumps({"infection": ["flu", "cold", "hiv"], "other": ["ulcer"]}))
    data = tmp_path / "t.csv"
    make_table().to_csv(data, index=False)
    (tmp_path / "a.txt").write_text("x\n")
    before = {p: p.read_bytes() for p in (tree, data)}
    target = {"data": data, "tree": tree, "under_a_file": tmp_path / "a.txt" / "dx.csv", "directory": tmp_path}[out]
    r = runner.invoke(app, ["hierarchy", "--data", str(data), "--column", "dx", "--type", "taxonomy", "--tree", str(tree),
                            "--out", str(target), "-q"])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert {"data": "refusing to overwrite an input", "tree": "refusing to overwrite an input",
            "under_a_file": "a parent of it is not a directory", "directory": "is a directory"}[out] in r.output, r.output
    assert {p: p.read_bytes() for p in (tree, data)} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "dx.json", "t.csv"]


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "give a hierarchy FILE"),
        (["--type", "intervals", "--column", "age"], "built from the data"),
        (["--type", "bogus", "--column", "age"], "unknown hierarchy type 'bogus'"),
        (["--type", "intervals", "--column", "age", "--data", "DATA", "--widths", "5,x"], "--widths: expected comma-separated numbers"),
        (["--type", "intervals", "--column", "height", "--data", "DATA", "--widths", "5"], "unknown column 'height'"),
        (["--type", "intervals", "--column", "age", "--data", "DATA", "--widths", "5,7"], "not a multiple"),
        (["--type", "intervals", "--column", "sex", "--data", "DATA", "--widths", "5"], "needs numeric values"),
        (["--type", "taxonomy", "--column", "dx"], "--tree"),
        (["NOFILE"], "hierarchy file not found"),
        # (found by hand, session 27: strftime passes an unknown directive through, so '%Q' made a level
        # holding the text '%Q' for every date, and a format with no directive a constant level: written, exit 0)
        (["--type", "dates", "--column", "visit", "--data", "DATA", "--formats", "%Y-%m,%Q"],
         "attribute 'visit': date format '%Q': unknown directive %Q"),
        (["--type", "dates", "--column", "visit", "--data", "DATA", "--formats", "%Y-%m,year"],
         "attribute 'visit': date format 'year' has no directive"),
        # (found by the acceptance pass uatc: an option of another type was ignored, exit 0, and FILE beside
        # --out was ignored too)
        (["--type", "masking", "--column", "age", "--data", "DATA", "--widths", "5,10"], "--widths is for --type intervals, not masking"),
        (["--type", "suppression", "--column", "age", "--data", "DATA", "--start", "3"], "--start is for --type intervals, not suppression"),
        (["--type", "intervals", "--column", "age", "--data", "DATA", "--widths", "5", "--levels", "2"],
         "--levels is for --type masking, not intervals"),
        (["--type", "suppression", "--column", "age", "--data", "DATA", "--formats", "%Y"], "--formats is for --type dates, not suppression"),
        (["--type", "suppression", "--column", "age", "--data", "DATA", "--tree", "DATA"], "--tree is for --type taxonomy, not suppression"),
        (["NOFILE", "--type", "suppression", "--column", "age", "--data", "DATA", "--out", "OTHER"], "give the file to write once"),
        # (found by the acceptance pass uatc: a UnicodeDecodeError traceback)
        (["--type", "taxonomy", "--column", "dx", "--tree", "LATIN1"], "latin1.json: not UTF-8 (byte 9 is 0xe9)"),
        # (found by the acceptance pass uatc: an IsADirectoryError traceback)
        (["DIR"], "is a directory, not a hierarchy file"),
        # (a negative count sliced from the end: 2 children shown as '... 5 more')
        (["NOFILE", "--max-children", "-3"], "Invalid value for '--max-children'"),
    ],
)
def test_hierarchy_errors(tmp_path, args, message):
    data = tmp_path / "t.csv"
    make_table(20).to_csv(data, index=False)
    args = [str(data) if a == "DATA" else str(tmp_path / "nofile.csv") if a == "NOFILE" else str(tmp_path / "other.csv")
            if a == "OTHER" else str(tmp_path) if a == "DIR" else str(tmp_path / "latin1.json") if a == "LATIN1" else a
            for a in args]  # fmt: skip
    (tmp_path / "latin1.json").write_bytes('{"a": ["\xe9"]}'.encode("latin-1"))
    r = runner.invoke(app, ["hierarchy", *args])
    assert r.exit_code == 2, r.output
    assert message in " ".join(r.output.split())


@pytest.mark.parametrize("kind", [["intervals", "--widths", "5"], ["suppression"], ["dates"], ["masking", "--levels", "2"]])
def test_hierarchy_from_a_header_only_table(tmp_path, kind):
    """A header-only export: exit 2 saying the table has no rows, as init does (found by hand, session 27:
    every builder said "attribute 'age': intervals builder is empty", not what was wrong with the file)."""
    data = tmp_path / "t.csv"
    make_table(0).to_csv(data, index=False)
    r = runner.invoke(app, ["hierarchy", "--data", str(data), "--column", "age", "--type", *kind, "--out", str(tmp_path / "h.csv")])
    assert r.exit_code == 2, r.output
    assert "the input table has no rows" in r.output and "t.csv" in r.output, r.output
    assert not (tmp_path / "h.csv").exists()


def test_init_errors(tmp_path):
    r = runner.invoke(app, ["init", str(tmp_path / "none.csv")])
    assert r.exit_code == 2 and "input file not found" in r.output
    data = tmp_path / "d.csv"
    make_table(20).to_csv(data, index=False)
    r = runner.invoke(app, ["init", str(data), "--k", "1"])
    assert r.exit_code == 2 and "--k must be at least 2" in r.output
    assert not (tmp_path / "d.job.toml").exists()


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=30, deadline=None)
@given(section=st.sampled_from(["input", "columns", "model", "output"]),
       key=st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True))
def test_any_unknown_key_is_named_with_its_line(tmp_path_factory, section, key):
    from tempanon.steward.job import COLUMNS_SCHEMA, INPUT_SCHEMA, MODELS, OUTPUT_SCHEMA, JobError

    known = {"input": INPUT_SCHEMA, "columns": COLUMNS_SCHEMA, "model": {**MODELS["kanon"].schema, "name": 1}, "output": OUTPUT_SCHEMA}
    if key in known[section]:
        return
    tmp = tmp_path_factory.mktemp("job")
    (tmp / "data").mkdir()
    make_table(20).to_csv(tmp / "data" / "t.csv", index=False)
    Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]]).to_csv(tmp / "h" / "sex.csv")
    lines = JOB.splitlines()
    header = lines.index(f"[{section}]")
    lines.insert(header + 1, f"{key} = 1")
    job = tmp / "job.toml"
    job.write_text("\n".join(lines) + "\n")
    with pytest.raises(JobError) as err:
        load_job(job)
    assert f"line {header + 2}: key '{section}.{key}': unknown key" in str(err.value)


def test_kanon_job_with_l_diversity(jobdir):
    """A kanon job with a sensitive column and l: every released class is l-diverse."""
    from tempanon.verify import check_l_diverse_classes

    tmp, df = jobdir
    text = (JOB.replace('identifying = ["name", "patient_id"]', 'identifying = ["name", "patient_id"]\nsensitive = ["dx"]')
               .replace("max_suppression = 0.02", "l = 2"))
    r = runner.invoke(app, ["run", str(write_job(tmp, text)), "-q"])
    assert r.exit_code == 0, r.output
    out = pd.read_csv(tmp / "out" / "t-anon.csv", dtype=str, keep_default_na=False)
    check_k_anonymity(out, ["age", "sex", "zip"], 5)
    check_l_diverse_classes(out, ["age", "sex", "zip"], "dx", 2)
    assert json.loads((tmp / "out" / "summary.json").read_text())["l"] == 2
    # a sensitive column without l is an error naming the key
    bad = text.replace("l = 2", "")
    r = runner.invoke(app, ["run", str(write_job(tmp, bad, "bad.toml"))])
    assert r.exit_code == 2 and "sensitive" in r.output and "needs [model] l" in r.output
    # l combines with suppression (issue 16): classes failing k or l are suppressed; l_diversity and c
    # are passed through like the CLI's --l-diversity and --c
    sup = text.replace("l = 2", 'l = 2\nl_diversity = "recursive"\nc = 3.0\nmax_suppression = 0.1')
    r = runner.invoke(app, ["run", str(write_job(tmp, sup, "sup.toml")), "-q"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp / "out" / "summary.json").read_text())["l_diversity"] == {"variant": "recursive", "l": 2, "c": 3.0}


def test_run_job_from_sqlite(jobdir):
    import sqlite3

    tmp, df = jobdir
    db = tmp / "data" / "clinic.sqlite"
    con = sqlite3.connect(db)
    df.to_sql("visits", con, index=False)
    con.close()
    text = JOB.replace('path = "data/t.csv"', 'database = "data/clinic.sqlite"\nsql = "SELECT * FROM visits"')
    r = runner.invoke(app, ["run", str(write_job(tmp, text)), "-q"])
    assert r.exit_code == 0, r.output
    out = pd.read_csv(tmp / "out" / "t-anon.csv", dtype=str, keep_default_na=False)
    check_k_anonymity(out, ["age", "sex", "zip"], 5, n_input=len(df), max_suppressed=int(0.02 * len(df)))


@pytest.mark.parametrize("model", ["kanon", "timestamped"])
def test_job_parquet_release_keeps_the_input_types(tmp_path, model):
    """``tempanon run`` with a Parquet ``[input] path`` and a Parquet ``[output] table`` writes the
    columns released unchanged with the input's types, as the ``kanon`` and ``timestamped`` commands do
    (``typed_release``); the quasi-identifiers and the time column stay text; values are the input's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 120
    rng = np.random.default_rng(3)
    t = pd.Timestamp("2021-03-01", tz="America/New_York") + pd.to_timedelta(rng.integers(0, 24 * 40, n), unit="h")
    seen = pd.Series(pd.Timestamp("2021-01-01") + pd.to_timedelta(np.arange(n) * 1_234_567, unit="us"))
    seen[3] = pd.NaT
    tab = pa.table({"pid": pa.array([f"p{i % 30}" for i in range(n)]), "sex": pa.array(rng.choice(["F", "M"], n)),
                    "t": pa.array(pd.Series(t)), "score": pa.array(rng.integers(0, 20, n), pa.int64()),
                    "seen": pa.array(seen)})  # fmt: skip
    (tmp_path / "data").mkdir()
    pq.write_table(tab, tmp_path / "data" / "t.parquet")
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    if model == "kanon":
        body = '[columns]\nquasi_identifiers = ["sex"]\nuid = "pid"\nkeep = ["score", "seen", "t"]\nallow_identifier = ["seen", "t"]\n' \
               '[hierarchies]\nsex = "h/sex.csv"\n[model]\nname = "kanon"\nk = 2\n'  # fmt: skip
    else:
        body = '[columns]\nquasi_identifiers = ["sex"]\nuid = "pid"\ntime = "t"\nkeep = ["score", "seen"]\nallow_identifier = ["seen"]\n' \
               '[model]\nname = "timestamped"\nk = 2\ngranularities = ["day", "week", "month"]\nmax_suppression = 0.1\n'  # fmt: skip
    job = write_job(tmp_path, f'[input]\npath = "data/t.parquet"\n{body}[output]\ntable = "out/o.parquet"\n')
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    out = pq.read_table(tmp_path / "out" / "o.parquet")
    assert out.schema.field("score").type == pa.int64()
    assert out.schema.field("seen").type == pa.timestamp("us")
    assert pa.types.is_string(out.schema.field("sex").type)
    if model == "kanon":
        assert out.schema.field("t").type == pa.timestamp("us", tz="America/New_York")
    else:
        assert pa.types.is_string(out.schema.field("t").type)  # the time column: granule labels
    # the released (score, seen) pairs are input rows' (a multiset of the input's pairs)
    pairs = lambda a: sorted(zip(a.column("score").to_pylist(), [str(x) for x in a.column("seen").to_pylist()]))  # noqa: E731
    src = pairs(tab)
    got = pairs(out)
    assert len(got) >= n * 0.9 and all(p in src for p in got)


@pytest.mark.skipif(sys.platform.startswith("win"), reason="%-m and %Ey are glibc/BSD strftime directives")
def test_dates_formats_with_strftime_flags_are_accepted():
    """The unknown-directive check takes a directive with its flags and modifiers whole: '%-m' (month
    without padding) and '%Ey' are strftime directives here, not the unknown directive '%-'; '%-Q' is
    refused as '%Q' is."""
    from tempanon.errors import HierarchyError
    from tempanon.hierarchy.builders import build_dates

    h = build_dates("d", ["2020-01-05", "2021-03-04"], formats=["%Y-%-m", "%Ey"])
    assert h.table[:, 1].tolist() == ["2020-1", "2021-3"]
    with pytest.raises(HierarchyError, match="unknown directive %-Q"):
        build_dates("d", ["2020-01-05"], formats=["%Y-%-Q"])


def test_dates_hierarchy_refuses_a_time_of_day_without_a_date(tmp_path):
    """'tempanon hierarchy --type dates' on '12:30' wrote 12:30;2026-11;2026;* (pandas dated it on the
    day the hierarchy was built), exit 0 (found by the acceptance pass uatc); timestamped and stream
    refuse such values."""
    from tempanon.errors import HierarchyError
    from tempanon.hierarchy.builders import build_dates

    with pytest.raises(HierarchyError, match=r"attribute 'd': time\(s\) of day without a date: '12:30', '7:05 pm' \(2 such"):
        build_dates("d", ["2020-01-05", "12:30", "7:05 pm"], formats=["%Y-%m", "%Y"])
    (tmp_path / "in.csv").write_text("d\n2020-01-05\n12:30\n")
    r = runner.invoke(app, ["hierarchy", "--data", str(tmp_path / "in.csv"), "--column", "d", "--type", "dates",
                            "--formats", "%Y-%m,%Y", "--out", str(tmp_path / "d.csv")])  # fmt: skip
    assert r.exit_code == 2 and "time(s) of day without a date: '12:30'" in r.output, r.output
    assert not (tmp_path / "d.csv").exists()


def test_builders_refuse_arguments_of_the_wrong_type():
    """build_dates(formats='%Y-%m') took the text letter by letter ("date format '%': unknown directive %"),
    build_masking(levels='x') was a ValueError traceback (found by the acceptance pass uatc)."""
    from tempanon.errors import HierarchyError
    from tempanon.hierarchy.builders import build_dates, build_masking

    with pytest.raises(HierarchyError, match=r"formats must be a list of strftime formats, one per level, e.g\."):
        build_dates("d", ["2020-01-05"], formats="%Y-%m")
    with pytest.raises(HierarchyError, match="masking levels must be an integer >= 0, got 'x'"):
        build_masking("z", ["123"], levels="x")
    assert build_masking("z", ["123"], levels=2).table.tolist() == [["123", "12*", "1**", "*"]]


def test_intervals_beyond_exact_floats_are_refused():
    """Numbers from 2**53 on are no longer exact as floats: 9007199254740999 was put in the interval
    '9007199254741000-9007199254741004' (which does not hold it) beside an overlapping
    '9007199254740996-9007199254741000', written, exit 0 (found by the acceptance pass uatc)."""
    from tempanon.errors import HierarchyError
    from tempanon.hierarchy.builders import build_intervals

    with pytest.raises(HierarchyError, match="value '9007199254740999' is too large for exact intervals"):
        build_intervals("v", ["9007199254740999", "9007199254740995"], [5])
    with pytest.raises(HierarchyError, match="interval width 1e\\+300 is too large"):
        build_intervals("v", ["1", "2"], [1e300])
    with pytest.raises(HierarchyError, match="the intervals' start 1e\\+17 is too large"):
        build_intervals("v", ["1", "2"], [5], start=1e17)
    assert build_intervals("v", ["1e15", "1"], [5]).table[:, 1].tolist() == ["1000000000000000-1000000000000004", "0-4"]
