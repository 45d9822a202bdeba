"""Backends for the engine suite: numpy and DuckDB always; Spark behind the ``spark`` marker with
one session-scoped local[2] session (skipped with a reason where Java or pyspark is absent)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

BACKENDS = ["numpy", "duckdb", pytest.param("spark", marks=pytest.mark.spark)]


def _spark_unavailable() -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'tempanon[spark]')"
    java = shutil.which("java")
    if java is None:
        return "no Java runtime on PATH (Spark needs Java 17)"
    try:
        subprocess.run([java, "-version"], capture_output=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"java -version failed: {exc}"
    return None


@pytest.fixture(scope="session")
def spark_session():
    reason = _spark_unavailable()
    if reason:
        pytest.skip(reason)
    from tempanon.lattice.source_spark import local_session

    spark = local_session("local[2]")
    yield spark
    spark.stop()


@pytest.fixture(params=BACKENDS)
def backend(request):
    """The engine name; for spark the session is started (once) first."""
    if request.param == "spark":
        request.getfixturevalue("spark_session")
    return request.param


@pytest.fixture(params=BACKENDS[1:])
def engine(request):
    """An engine compared with numpy, the reference (for spark the session is started once first)."""
    if request.param == "spark":
        request.getfixturevalue("spark_session")
    return request.param
