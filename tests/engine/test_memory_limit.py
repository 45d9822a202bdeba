"""``--memory-limit`` / ``memory_limit``: kept by the engine that can keep it, refused where it cannot
be kept (numpy; a cluster master; a running Spark session of another heap), ``auto`` choosing DuckDB
when a limit is given, and its text checked before anything is read (:mod:`tempanon.lattice.memory`)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tempanon.errors import InputError
from tempanon.lattice.memory import check_memory_limit, machine_memory, parse_memory_limit, spark_driver_memory
from tempanon.lattice.source import open_source, resolve_engine
from tempanon.lattice.source_temporal import resolve_time_engine

SAMPLES = Path(__file__).resolve().parents[2] / "src" / "tempanon" / "samples"
ADULT = SAMPLES / "adult"
ENCOUNTERS = SAMPLES / "timestamped" / "encounters.csv.gz"


@pytest.mark.parametrize(
    ("text", "size"),
    [("4GB", 4 * 10**9), ("4 GB", 4 * 10**9), ("4gb", 4 * 10**9), ("1.5GB", 1_500_000_000), ("512MiB", 512 * 2**20),
     ("2GiB", 2 * 2**30), ("100KB", 100_000), ("3 gigabytes", 3 * 10**9), ("1T", 10**12), ("64kib", 65536), ("10 B", 10)],
)  # fmt: skip
def test_parse_memory_limit_units(text, size):
    assert parse_memory_limit(text) == size


def test_parse_memory_limit_percent_of_the_machine():
    total = machine_memory()
    if total is None:
        pytest.skip("this platform does not report its memory")
    assert parse_memory_limit("50%") == total // 2
    with pytest.raises(InputError, match="percentage"):
        parse_memory_limit("150%")


@pytest.mark.parametrize(("text", "message"), [("1000", "a number and a unit"), ("4XB", "unknown unit 'XB'"), ("0GB", "is zero"),
                                               ("", "a number and a unit"), ("-1GB", "a number and a unit"), ("GB", "a number and a unit")])  # fmt: skip
def test_parse_memory_limit_refuses_with_the_text(text, message):
    with pytest.raises(InputError, match=message) as err:
        parse_memory_limit(text)
    assert repr(text) in str(err.value)


def test_spark_driver_memory_in_whole_mebibytes():
    assert spark_driver_memory("2GiB") == "2048m"
    assert spark_driver_memory("1GB") == f"{10**9 // 2**20}m"
    with pytest.raises(InputError, match="512 MiB"):
        spark_driver_memory("100MB")


def test_check_memory_limit_per_engine():
    check_memory_limit("numpy", None)
    check_memory_limit("duckdb", "1GB")
    check_memory_limit("spark", "1GB")  # the local driver (tempanon's default master)
    check_memory_limit("spark", "1GB", spark_master="local[4]")
    with pytest.raises(InputError, match="numpy engine holds the table in memory"):
        check_memory_limit("numpy", "1GB")
    with pytest.raises(InputError, match="cluster"):
        check_memory_limit("spark", "1GB", spark_master="spark://head:7077")
    with pytest.raises(InputError, match="unknown unit"):
        check_memory_limit("duckdb", "1 lots")


def test_auto_means_duckdb_with_a_limit(tmp_path):
    small = ADULT / "adult.csv.gz"
    assert resolve_engine(small, "auto") == "numpy"
    assert resolve_engine(small, "auto", "1GB") == "duckdb"
    assert resolve_engine(pd.DataFrame({"a": [1]}), "auto", "1GB") == "duckdb"
    assert resolve_time_engine("auto") == "numpy"
    assert resolve_time_engine("auto", "1GB") == "duckdb"
    src = open_source(pd.DataFrame({"a": ["x", "y"]}), "auto", memory_limit="1GB")
    try:
        assert src.engine == "duckdb"
        assert src.con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "953.6 MiB"
    finally:
        src.close()
    with pytest.raises(InputError, match="numpy engine"):
        open_source(pd.DataFrame({"a": ["x"]}), "numpy", memory_limit="1GB")
    with pytest.raises(InputError, match="numpy engine"):
        resolve_time_engine("numpy", "1GB")


def _cli(args):
    from typer.testing import CliRunner

    from tempanon.cli import app

    return CliRunner().invoke(app, args)


KANON = ["kanon", str(ADULT / "adult.csv.gz"), "--qi", "age,sex,race", "--hierarchies", str(ADULT), "--k", "10", "-q"]


def test_cli_kanon_numpy_with_a_limit_is_refused_before_anything(tmp_path):
    out = tmp_path / "r.csv"
    r = _cli([*KANON, "--engine", "numpy", "--memory-limit", "1GB", "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert "numpy engine holds the table in memory" in r.output and "Traceback" not in r.output
    assert not out.exists()
    r = _cli([*KANON, "--memory-limit", "lots", "--out", str(out)])
    assert r.exit_code == 2 and "'lots'" in r.output, r.output
    r = _cli([*KANON, "--engine", "spark", "--spark-master", "spark://head:7077", "--memory-limit", "1GB", "--out", str(out)])
    assert r.exit_code == 2 and "cluster" in r.output, r.output
    assert not out.exists()


def test_cli_kanon_auto_with_a_limit_runs_duckdb_same_release(tmp_path):
    """A limit on a small file: DuckDB reads it in place within the limit; the same classes as numpy."""
    rel = {}
    for name, extra in (("numpy", []), ("auto", ["--memory-limit", "1GB"])):
        out, summ = tmp_path / f"{name}.csv", tmp_path / f"{name}.json"
        r = _cli([*KANON, "--out", str(out), "--summary", str(summ), *extra])
        assert r.exit_code == 0, r.output
        rel[name] = (pd.read_csv(out, dtype=str, keep_default_na=False), json.loads(summ.read_text()))
    assert rel["auto"][1]["engine"] == "duckdb" and rel["numpy"][1]["engine"] == "numpy"
    cols = ["age", "sex", "race"]
    a = rel["numpy"][0][cols].value_counts().sort_index()
    b = rel["auto"][0][cols].value_counts().sort_index()
    pd.testing.assert_series_equal(a, b)


def test_cli_timestamped_auto_with_a_limit_reads_the_file_in_place(tmp_path):
    args = ["timestamped", str(ENCOUNTERS), "--time", "START", "--uid", "PATIENT", "--k", "3", "--max-suppression", "0.06",
            "--qi", "ENCOUNTERCLASS", "--shuffle-seed", "11", "-q"]  # fmt: skip
    r = _cli([*args, "--out", str(tmp_path / "a.csv"), "--summary", str(tmp_path / "a.json"), "--memory-limit", "1GB"])
    assert r.exit_code == 0, r.output
    plan = json.loads((tmp_path / "a.json").read_text())["plan"]
    assert plan["memory_limit"] == "1GB" and "out of core" in plan["input"]
    r = _cli([*args, "--out", str(tmp_path / "b.csv"), "--engine", "numpy", "--memory-limit", "1GB"])
    assert r.exit_code == 2 and "numpy engine" in r.output, r.output
    assert not (tmp_path / "b.csv").exists()


@pytest.mark.spark
def test_spark_session_heap_is_checked(spark_session):
    """The running session's heap is fixed: the same limit is accepted, another one refused."""
    from tempanon.lattice.source_spark import _jvm_bytes, local_session

    have = spark_session.sparkContext.getConf().get("spark.driver.memory", "1g")
    same = f"{_jvm_bytes(have) // 2**20}MiB"
    assert local_session("local[2]", same) is not None
    other = f"{_jvm_bytes(have) // 2**20 + 512}MiB"
    with pytest.raises(InputError, match=f"driver has {have} of heap"):
        local_session("local[2]", other)
    with pytest.raises(InputError, match="already running"):
        open_source(spark_session.createDataFrame(pd.DataFrame({"a": ["x"]})), "spark", memory_limit="1GB")


@pytest.mark.spark
def test_spark_driver_started_with_the_limit(spark_session, tmp_path):
    """A fresh process: the local driver tempanon starts has the heap the limit asks for (the JVM's
    own maximum heap, read back through py4j)."""
    import os
    import subprocess
    import sys

    code = ("from tempanon.lattice.source_spark import local_session\n"
            "s = local_session(None, '1GiB')\n"
            "print(s.sparkContext.getConf().get('spark.driver.memory'), s.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory())\n"
            "s.stop()\n")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    conf, heap = r.stdout.split()[-2:]
    assert conf == "1024m"
    assert 0.5 * 2**30 < int(heap) <= 2**30  # the JVM reports a little less than -Xmx


def test_cli_kanon_csv_read_out_of_memory_is_the_engines_failure(tmp_path):
    """A limit too small for DuckDB to read a CSV input (its reader's first block, 2.4 MiB) is the
    engine's failure (exit 4, with the --memory-limit hint), not a bad input: the view's first read
    said "cannot read adult.csv: Out of Memory Error ...", exit 2 (found in the uatd acceptance pass)."""
    import gzip

    csv = tmp_path / "adult.csv"
    csv.write_bytes(gzip.decompress((ADULT / "adult.csv.gz").read_bytes()))
    out = tmp_path / "r.csv"
    r = _cli(["kanon", str(csv), "--qi", "age,sex,race", "--hierarchies", str(ADULT), "--k", "10", "-q",
              "--engine", "duckdb", "--memory-limit", "1MB", "--out", str(out)])  # fmt: skip
    assert r.exit_code == 4, r.output
    assert "engine failure, not the input" in r.output and "--memory-limit" in r.output, r.output
    assert "cannot read" not in r.output and "Traceback" not in r.output
    assert not out.exists()
