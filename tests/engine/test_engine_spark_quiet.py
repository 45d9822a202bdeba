"""``--engine spark --quiet`` prints nothing but errors: the local Spark session tempanon starts
used to print its start-up lines to the terminal (the JVM's "WARNING: Using incubator modules",
"Using Spark's default log4j profile", "WARN Utils: Your hostname ... resolves to a loopback
address", "Setting default log level to "WARN"", the native-hadoop warning). Run as a user runs it:
the command line in a new process (its own JVM)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
NOISE = ["WARNING: Using incubator modules", "log4j", "WARN", "resolves to a loopback", "SPARK_LOCAL_IP",
         "Setting default log level", "setLogLevel", "NativeCodeLoader"]  # fmt: skip


def _run(args, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "tempanon.cli", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)  # fmt: skip


def test_quiet_spark_run_prints_nothing(tmp_path, spark_session):
    """A whole kanon run on Spark with --quiet: exit 0, nothing on standard output or error; and a
    refused input still prints its error (errors are not swallowed)."""
    (tmp_path / "in.csv").write_text("pid,sex,zip\n" + "".join(f"{i},{'FM'[i % 2]},0{i % 3}\n" for i in range(30)))
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    (tmp_path / "h" / "zip.csv").write_text("00;*\n01;*\n02;*\n")
    r = _run(["kanon", "in.csv", "--qi", "sex,zip", "--hierarchies", "h", "--k", "3", "--uid", "pid", "--out", "rel/r.csv",
              "--engine", "spark", "--quiet"], tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert [n for n in NOISE if n in r.stderr or n in r.stdout] == [], r.stderr
    assert r.stderr == "" and r.stdout == ""
    assert (tmp_path / "rel" / "r.csv").is_dir()
    r = _run(["kanon", "in.csv", "--qi", "sex,nope", "--hierarchies", "h", "--k", "3", "--out", "rel/s.csv", "--engine", "spark",
              "--quiet"], tmp_path)  # fmt: skip
    assert r.returncode == 2 and "nope" in r.stderr
    assert [n for n in NOISE if n in r.stderr] == [], r.stderr


def test_start_noise_filter_passes_other_lines():
    """The JVM's standard error is passed on line by line, only the start-up notices dropped."""
    import re

    from tempanon.lattice.source_spark import _START_NOISE

    dropped = [b"WARNING: Using incubator modules: jdk.incubator.vector\n",
               b"Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties\n",
               b'Setting default log level to "WARN".\n',
               b"To adjust logging level use sc.setLogLevel(newLevel). For SparkR, use setLogLevel(newLevel).\n"]  # fmt: skip
    kept = [b"Terminating due to java.lang.OutOfMemoryError: Java heap space\n",
            b"26/11/26 10:54:33 ERROR Executor: Exception in task 0.0\n", b"Error: Could not find or load main class\n"]  # fmt: skip
    assert all(_START_NOISE.match(x) for x in dropped)
    assert not any(_START_NOISE.match(x) for x in kept)
    assert isinstance(_START_NOISE, re.Pattern)
