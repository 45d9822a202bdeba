"""A run the engine cannot finish (out of memory, a failed Spark job) ends with exit 4 and a
message, not a traceback, and writes nothing."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import tempanon.kanon
from tempanon.cli import app
from tempanon.samples import adult_hierarchies_dir, adult_path

Py4JJavaError = type("Py4JJavaError", (Exception,), {"__module__": "py4j.protocol"})


@pytest.mark.parametrize(
    "exc,expect",
    [
        (MemoryError(), "out of memory"),
        (Py4JJavaError("An error occurred while calling o57.collectToPython.\n: java.lang.OutOfMemoryError: Java heap space"),
         "the Spark engine failed: An error occurred while calling o57.collectToPython."),
        (ValueError("a bug"), None),  # anything else is not hidden
    ],
)
def test_engine_failure_is_exit_4(tmp_path, monkeypatch, exc, expect):
    def boom(*a, **kw):
        raise exc

    monkeypatch.setattr(tempanon.kanon, "kanonymize", boom)
    out = tmp_path / "out.csv"
    r = CliRunner().invoke(app, ["kanon", str(adult_path()), "--qi", "age,sex", "--hierarchies", str(adult_hierarchies_dir()),
                                 "--k", "5", "--out", str(out)])  # fmt: skip
    assert not out.exists() and list(tmp_path.iterdir()) == []
    if expect is None:
        assert isinstance(r.exception, ValueError)
        return
    assert r.exit_code == 4, r.output
    text = " ".join(r.output.split())
    assert expect in text and "nothing was written" in text and "Traceback" not in r.output
    if isinstance(exc, Py4JJavaError):
        assert "--driver-memory" in text
