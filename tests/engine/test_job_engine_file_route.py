"""A job file (``tempanon run JOB``) whose ``kanon`` or ``timestamped`` model has ``engine = "duckdb"`` (or
``"spark"``) and an ``[input] path`` runs the commands' file route: the engine reads the file itself
(:func:`tempanon.kanon.engine_command.release_on_engine`,
:func:`tempanon.temporal.outofcore.anonymize_timestamped_file`), the job's columns are checked on the
file's columns as the engine reads them, and the table is never read into pandas. Before, the job read
the whole table with pandas and handed the frame to the engine: no input larger than memory.

The respondent-id warning (a column that reads like one, no ``[columns] uid`` / ``--uid``) is said before
the release is written, on every engine, by a job and by ``kanon``/``timestamped --engine duckdb`` (the
DuckDB commands said it after writing; a job said it after writing on every engine)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import tempanon.data.io as tio
from tempanon.cli import app
from tempanon.report.sections import file_sha256

runner = CliRunner()

# the [output] table of both jobs: the release in its own folder, the steward-only files beside it
OUTPUT = """[output]
table = "{d}/r.{fmt}"
summary = "steward-{d}/s.json"
report = "steward-{d}/r.html"
audit = "steward-{d}/a.csv"
"""

KANON = """[input]
path = "{inp}"

[columns]
quasi_identifiers = ["age", "sex", "zip"]
identifying = ["name"]
keep = ["dx"]
allow_identifier = ["dx"]

[hierarchies]
age = {{ type = "intervals", widths = [10, 20, 40] }}
sex = "sex.csv"
zip = {{ type = "masking", levels = 4 }}

[model]
name = "kanon"
k = 5
max_suppression = 0.02
engine = "{eng}"

""" + OUTPUT

TIMESTAMPED = """[input]
path = "{inp}"

[columns]
quasi_identifiers = ["sex"]
time = "visit"
identifying = ["name"]
keep = ["dx"]

[model]
name = "timestamped"
k = 3
granularities = ["week", "month", "year"]
engine = "{eng}"

""" + OUTPUT

WARNING = ("warning: column 'patient_id' reads like a respondent id (50 values repeat over 400 rows) but is not "
           "[columns] uid")


def _data(tmp_path):
    """400 rows; ``patient_id`` repeats (50 patients, no uid given: the warning), ``name`` is dropped."""
    if (tmp_path / "t.csv").exists():
        return
    rng = np.random.default_rng(5)
    n = 400
    df = pd.DataFrame({"name": [f"N{i}" for i in range(n)], "patient_id": [f"p{i % 50}" for i in range(n)],
                       "age": rng.integers(18, 90, n).astype(str), "sex": rng.choice(["M", "F"], n),
                       "zip": rng.choice([f"537{i:02d}" for i in range(12)], n),
                       "visit": [f"2023-{1 + i % 12:02d}-{1 + i % 27:02d} {i % 24:02d}:00" for i in range(n)],
                       "dx": rng.choice(list("abcd"), n), "other": rng.choice(list("xyz"), n)})  # fmt: skip
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_parquet(tmp_path / "t.parquet", index=False)
    (tmp_path / "sex.csv").write_text("M;*\nF;*\n")


def _job(tmp_path, model, fmt, eng, text=None):
    _data(tmp_path)
    d = f"{model}-{fmt}-{eng}"
    tpl = text or (KANON if model == "kanon" else TIMESTAMPED)
    (tmp_path / f"{d}.toml").write_text(tpl.format(inp=f"t.{fmt}", fmt=fmt, eng=eng, d=d))
    return tmp_path / f"{d}.toml", d


def _release(path, fmt):
    t = pd.read_csv(path, dtype=str, keep_default_na=False) if fmt == "csv" else pd.read_parquet(path).astype(str)
    return t.sort_values(list(t.columns)).reset_index(drop=True)


def _run(tmp_path, model, fmt, eng):
    job, d = _job(tmp_path, model, fmt, eng)
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    return r, d


# what necessarily differs between the in-memory and the engine route: timings, the engine and its plan,
# the paths; for timestamped the release's row order (the engine's salted hash, as the commands') and the
# verification of the written file (its extra checks)
VOLATILE = {"runtime_seconds", "search_seconds", "engine", "engine_path", "plan", "job", "output", "report", "audit"}


def _summary(tmp_path, d, model):
    s = json.loads((tmp_path / f"steward-{d}" / "s.json").read_text())
    s = {k: v for k, v in s.items() if k not in VOLATILE}
    if model == "timestamped":
        s.pop("row_order")
        v = s.pop("verification")
        s["verification"] = {k: v[k] for k in ("guarantee", "checked_on", "classes", "k", "min_class_size", "suppressed_rows",
                                               "released_unchanged_declared_insensitive", "identifier_overrides")}  # fmt: skip
    return s


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("model", ["kanon", "timestamped"])
def test_engine_job_gives_the_numpy_release_and_summary(tmp_path, model, fmt):
    out = {}
    for eng in ("numpy", "duckdb"):
        r, d = _run(tmp_path, model, fmt, eng)
        assert WARNING in " ".join(r.output.split()), r.output
        out[eng] = (_release(tmp_path / d / f"r.{fmt}", fmt), _summary(tmp_path, d, model), d)
    pd.testing.assert_frame_equal(out["duckdb"][0], out["numpy"][0])
    assert out["duckdb"][1] == out["numpy"][1]
    assert out["duckdb"][1]["rows_out" if model == "kanon" else "tuples"] > 0
    # the report names the input file's checksum on both routes; the audit maps every release row
    for eng in ("numpy", "duckdb"):
        d = out[eng][2]
        assert file_sha256(tmp_path / f"t.{fmt}") in (tmp_path / f"steward-{d}" / "r.html").read_text()
        audit = pd.read_csv(tmp_path / f"steward-{d}" / "a.csv", comment="#")
        assert audit["release_row"].tolist() == list(range(1, len(out[eng][0]) + 1))


def _refuse_pandas_reads(monkeypatch):
    """Every way the table could reach pandas raises: read_table, pandas' CSV reader past the header
    line, its Parquet reader."""
    calls = []

    def refused(*a, **kw):
        calls.append(a[:1])
        raise AssertionError(f"the table was read into pandas: {a[:1]}")

    real_csv = pd.read_csv

    def read_csv(*a, **kw):
        if kw.get("nrows") is None or kw["nrows"] > 1:
            refused(*a, **kw)
        return real_csv(*a, **kw)

    monkeypatch.setattr(tio, "read_table", refused)
    monkeypatch.setattr(pd, "read_csv", read_csv)
    monkeypatch.setattr(pd, "read_parquet", refused)
    return calls


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("model", ["kanon", "timestamped"])
def test_engine_job_reads_no_table_into_pandas(tmp_path, monkeypatch, model, fmt):
    _data(tmp_path)
    calls = _refuse_pandas_reads(monkeypatch)
    job, d = _job(tmp_path, model, fmt, "duckdb")
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, (r.output, r.exception)
    assert calls == []
    assert WARNING in " ".join(r.output.split()), r.output
    assert (tmp_path / d / f"r.{fmt}").is_file() and (tmp_path / f"steward-{d}" / "r.html").is_file()
    # the control: on numpy the same patch catches the job's read of the table
    job, d = _job(tmp_path, model, fmt, "numpy")
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code != 0 and calls, r.output
    assert not (tmp_path / d).exists()


@pytest.mark.parametrize("model", ["kanon", "timestamped"])
@pytest.mark.parametrize("case", ["time", "uid", "qi", "keep", "allow", "two roles"])
def test_engine_job_checks_the_columns_as_numpy(tmp_path, model, case):
    """The job's column checks run on the file's columns as the engine reads them: the same exit
    status and message as on numpy, nothing written."""
    if model == "kanon" and case == "time":
        pytest.skip("kanon takes no time column")
    tpl = KANON if model == "kanon" else TIMESTAMPED
    edits = {"time": [('time = "visit"', 'time = "visits"')], "uid": [('identifying = ["name"]', 'identifying = ["name"]\nuid = "pid"')],
             "qi": [('"sex"', '"sex", "gender"')], "keep": [('keep = ["dx"]', 'keep = ["dx", "diagnosis"]')],
             "allow": [('keep = ["dx"]', 'keep = ["dx"]\nallow_identifier = ["nom"]')],
             "two roles": [('identifying = ["name"]', 'identifying = ["name", "dx"]')]}[case]  # fmt: skip
    if model == "kanon" and case == "allow":
        edits = [('allow_identifier = ["dx"]', 'allow_identifier = ["nom"]')]
    if model == "kanon" and case == "qi":
        edits = [('"sex", "zip"]', '"sex", "zip", "gender"]'), ('sex = "sex.csv"', 'sex = "sex.csv"\ngender = {{ type = "suppression" }}')]
    for old, new in edits:
        assert old in tpl
        tpl = tpl.replace(old, new, 1)
    msgs = {}
    for eng in ("numpy", "duckdb"):
        job, d = _job(tmp_path, model, "csv", eng, tpl)
        r = runner.invoke(app, ["run", str(job)])
        assert r.exit_code == 2, r.output
        msgs[eng] = " ".join(r.output.split()).replace(f"{d}.toml", "JOB")
        assert not (tmp_path / d).exists()
    assert msgs["duckdb"] == msgs["numpy"]
    assert "unknown" in msgs["numpy"] or "two roles" in msgs["numpy"], msgs


def _watch_warning(monkeypatch, module, out):
    """Patch ``module.info``: record, when the respondent-id warning is said, whether ``out`` exists."""
    seen = []
    real = module.info

    def info(message, quiet=False):
        if "reads like a respondent id" in str(message):
            seen.append(out.exists())
        return real(message, quiet)

    monkeypatch.setattr(module, "info", info)
    return seen


@pytest.mark.parametrize("eng", ["numpy", "duckdb"])
@pytest.mark.parametrize("model", ["kanon", "timestamped"])
def test_job_warns_before_the_release_is_written(tmp_path, monkeypatch, model, eng):
    import tempanon.steward.command as command

    job, d = _job(tmp_path, model, "csv", eng)
    seen = _watch_warning(monkeypatch, command, tmp_path / d / "r.csv")
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    assert seen == [False], r.output  # said once, before the release existed
    assert (tmp_path / d / "r.csv").is_file()


@pytest.mark.parametrize("cmd", ["kanon", "timestamped"])
def test_duckdb_command_warns_before_the_release_is_written(tmp_path, monkeypatch, cmd):
    import tempanon._cliutil as cliutil
    import tempanon.temporal.command as tcommand

    _data(tmp_path)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("M;*\nF;*\n")
    out = tmp_path / "rel" / "r.csv"
    seen = _watch_warning(monkeypatch, cliutil if cmd == "kanon" else tcommand, out)
    if cmd == "kanon":
        args = ["kanon", str(tmp_path / "t.csv"), "--qi", "sex", "--hierarchies", str(tmp_path / "h"), "--k", "2"]
    else:
        args = ["timestamped", str(tmp_path / "t.csv"), "--time", "visit", "--qi", "sex", "--k", "2", "--granularities", "month,year"]
    r = runner.invoke(app, [*args, "--engine", "duckdb", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert seen == [False], r.output
    assert out.is_file()


@pytest.mark.spark
@pytest.mark.parametrize("model", ["kanon", "timestamped"])
def test_spark_job_reads_the_file_and_warns_first(tmp_path, monkeypatch, spark_session, model):
    """Spark: the same file route (the file read by Spark, a directory of part files written), the same
    release as numpy, the warning before the release exists, no table read into pandas."""
    import tempanon.steward.command as command

    r, d = _run(tmp_path, model, "csv", "numpy")
    numpy_release = _release(tmp_path / d / "r.csv", "csv")
    calls = _refuse_pandas_reads(monkeypatch)
    job, d = _job(tmp_path, model, "csv", "spark")
    seen = _watch_warning(monkeypatch, command, tmp_path / d / "r.csv")
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, (r.output, r.exception)
    assert calls == [] and seen == [False], r.output
    monkeypatch.undo()
    parts = sorted((tmp_path / d / "r.csv").glob("part-*"))
    got = pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False) for p in parts], ignore_index=True)
    pd.testing.assert_frame_equal(got.sort_values(list(got.columns)).reset_index(drop=True), numpy_release)


def test_kanon_job_audit_in_the_release_folder_is_refused_on_both_routes(tmp_path):
    """The steward's audit beside the release: the engine route refused it (kanonymize's check), the
    numpy job wrote it (docs/steward.md: refused); both now refuse it alike, naming the job key."""
    msgs = {}
    for eng in ("numpy", "duckdb"):
        job, d = _job(tmp_path, "kanon", "csv", eng, KANON.replace('audit = "steward-{d}/a.csv"', 'audit = "{d}/a.csv"'))
        r = runner.invoke(app, ["run", str(job)])
        assert r.exit_code == 2, r.output
        msgs[eng] = " ".join(r.output.split()).replace(d, "D")
        assert not (tmp_path / d).exists()
    assert msgs["duckdb"] == msgs["numpy"]
    assert "key 'output.audit': the audit" in msgs["numpy"] and "is in the release's folder" in msgs["numpy"], msgs


def test_engine_job_on_a_workbook_keeps_the_pandas_route(tmp_path):
    """A workbook is read by pandas only (no engine reads .xlsx): an engine job on one still runs, its frame
    handed to the engine, as before; same release as the CSV of the same table on the file route."""
    openpyxl = pytest.importorskip("openpyxl")
    _data(tmp_path)
    wb = openpyxl.Workbook()
    df = pd.read_csv(tmp_path / "t.csv", dtype=str)
    wb.active.append(list(df.columns))
    for row in df.itertuples(index=False):
        wb.active.append(list(row))
    wb.save(tmp_path / "t.xlsx")
    got = {}
    for fmt in ("xlsx", "csv"):
        job, d = _job(tmp_path, "kanon", fmt, "duckdb", KANON.replace("r.{fmt}", "r.csv"))
        r = runner.invoke(app, ["run", str(job)])
        assert r.exit_code == 0, r.output
        got[fmt] = _release(tmp_path / d / "r.csv", "csv")
    pd.testing.assert_frame_equal(got["xlsx"], got["csv"])
