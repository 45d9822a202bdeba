"""``[model] memory_limit`` and ``spark_master`` of a ``kanon`` or ``timestamped`` job: the commands'
``--memory-limit`` and ``--spark-master``. A limit reaches the engine that reads the ``[input] path``
(DuckDB's ``memory_limit``), ``engine = "auto"`` with a limit runs on DuckDB (as the commands resolve
it), and what the commands refuse a job refuses before anything is read, naming the key and its line:
a limit on numpy, on a query's or a spreadsheet's table (held by pandas), a limit DuckDB cannot read,
a Spark master without Spark. Before, a job had neither key (an unknown key) and DuckDB took 80% of
the machine's memory whatever the input."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

import tempanon.lattice.source_duckdb as sdb
from job_check import assert_job_error
from tempanon.cli import app

from .test_job_engine_file_route import KANON, TIMESTAMPED, _data, _release

runner = CliRunner()


def _job(tmp_path, model, eng, extra, fmt="csv"):
    _data(tmp_path)
    d = f"{model}-{eng}-{abs(hash(extra)) % 1000}"
    text = (KANON if model == "kanon" else TIMESTAMPED).format(inp=f"t.{fmt}", fmt=fmt, eng=eng, d=d)
    text = text.replace(f'engine = "{eng}"\n', f'engine = "{eng}"\n{extra}')
    (tmp_path / f"{d}.toml").write_text(text)
    return tmp_path / f"{d}.toml", d, text


@pytest.fixture
def limits(monkeypatch):
    """The memory limits DuckDB connections were opened with."""
    seen = []
    real = sdb.open_duckdb

    def spy(*, memory_limit=None, **kw):
        seen.append(memory_limit)
        return real(memory_limit=memory_limit, **kw)

    monkeypatch.setattr(sdb, "open_duckdb", spy)
    return seen


@pytest.mark.parametrize("model", ["kanon", "timestamped"])
@pytest.mark.parametrize("eng", ["duckdb", "auto"])
def test_memory_limit_reaches_duckdb_and_the_release_is_numpys(tmp_path, limits, model, eng):
    job, d, _ = _job(tmp_path, model, eng, 'memory_limit = "300MB"\n')
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    assert limits and set(limits) == {"300MB"}, limits  # (auto with a limit: DuckDB, as the commands)
    ref, dref, _ = _job(tmp_path, model, "numpy", "")
    r = runner.invoke(app, ["run", str(ref), "-q"])
    assert r.exit_code == 0, r.output
    assert _release(tmp_path / d / "r.csv", "csv").equals(_release(tmp_path / dref / "r.csv", "csv"))


def test_without_a_limit_duckdb_is_opened_without_one(tmp_path, limits):
    job, d, _ = _job(tmp_path, "kanon", "duckdb", "")
    assert runner.invoke(app, ["run", str(job), "-q"]).exit_code == 0
    assert limits and set(limits) == {None}


@pytest.mark.parametrize(("model", "extra", "message"), [
    ("kanon", 'memory_limit = "1GB"\n', "the numpy engine holds the table in memory and cannot keep a limit"),
    ("timestamped", 'memory_limit = "1GB"\n', "the numpy engine holds the table in memory and cannot keep a limit"),
])
def test_a_limit_on_numpy_is_refused(tmp_path, model, extra, message):
    job, d, text = _job(tmp_path, model, "numpy", extra)
    line = text.splitlines().index(extra.strip()) + 1
    (tmp_path / "out").mkdir(exist_ok=True)
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 2, r.output
    msg = " ".join(r.output.split())
    assert message in msg and f"line {line}: key 'model.memory_limit'" in msg, msg
    assert not (tmp_path / d).exists()


@pytest.mark.parametrize(("eng", "old", "new", "key", "message"), [
    ("duckdb", 'engine = "duckdb"', 'engine = "duckdb"\nmemory_limit = "lots"', "memory_limit", "lots"),
    ("duckdb", 'engine = "duckdb"', 'engine = "duckdb"\nspark_master = "local[1]"', "spark_master", 'spark_master needs engine = "spark"'),
    ("duckdb", 'path = "t.csv"', 'database = "db.sqlite"\nsql = "SELECT * FROM t"', "memory_limit", "a query's result is held in memory"),
    ("duckdb", 'path = "t.csv"', 'path = "t.xlsx"', "memory_limit", "t.xlsx) is read into memory by pandas"),
])
def test_refused_before_anything_is_read(tmp_path, eng, old, new, key, message):
    import sqlite3

    _data(tmp_path)
    df = pd.read_csv(tmp_path / "t.csv", dtype=str)
    with sqlite3.connect(tmp_path / "db.sqlite") as con:
        df.to_sql("t", con, index=False)
    if "xlsx" in new:
        df.to_excel(tmp_path / "t.xlsx", index=False)
    text = KANON.format(inp="t.csv", fmt="csv", eng=eng, d="out")
    if key == "memory_limit" and "memory_limit" not in new:
        text = text.replace(f'engine = "{eng}"', f'engine = "{eng}"\nmemory_limit = "1GB"')
    lines = text.replace(old, new, 1).splitlines()
    line = next(i for i, s in enumerate(lines, 1) if s.startswith(f"{key} ="))
    assert_job_error(text, tmp_path, old, new, message, line)
    assert f"key 'model.{key}'" in " ".join(runner.invoke(app, ["run", str(tmp_path / "job.toml")]).output.split())


@pytest.mark.spark
def test_spark_job_with_a_master_and_a_limit(spark_session, tmp_path):
    # (the heap of the suite's running session, 1g: a JVM's heap is fixed when it starts, so another is refused)
    job, d, _ = _job(tmp_path, "kanon", "spark", 'memory_limit = "1GiB"\nspark_master = "local[2]"\n')
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    ref, dref, _ = _job(tmp_path, "kanon", "numpy", "")
    assert runner.invoke(app, ["run", str(ref), "-q"]).exit_code == 0
    rel = pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False) for p in sorted((tmp_path / d / "r.csv").glob("part-*"))])
    rel = rel.sort_values(list(rel.columns)).reset_index(drop=True)
    assert rel.equals(_release(tmp_path / dref / "r.csv", "csv"))
