"""A run the engine cannot finish (out of memory, a failed Spark job) ends with exit 4 and a
message, not a traceback, and writes nothing."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import tempanon.kanon
from tempanon.cli import app
from tempanon.samples import adult_hierarchies_dir, adult_path

Py4JJavaError = type("Py4JJavaError", (Exception,), {"__module__": "py4j.protocol"})
Py4JNetworkError = type("Py4JNetworkError", (Exception,), {"__module__": "py4j.protocol"})


def _driver_stopped() -> Exception:
    """What a local Spark driver that stopped (e.g. out of heap) leaves: py4j's network error, and
    while handling it a refused connection (a builtin exception)."""
    try:
        raise Py4JNetworkError("Answer from Java side is empty")
    except Py4JNetworkError:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as exc:
            return exc


@pytest.mark.parametrize(
    "exc,expect",
    [
        (MemoryError(), "out of memory"),
        (Py4JJavaError("An error occurred while calling o57.collectToPython.\n: java.lang.OutOfMemoryError: Java heap space"),
         "the Spark engine failed: OutOfMemoryError: Java heap space"),  # (the Java error, not py4j's first line)
        (_driver_stopped(), "the Spark engine failed: Answer from Java side is empty (the Spark driver stopped"),
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
    if not isinstance(exc, MemoryError):
        assert "--driver-memory" in text and "--memory-limit 4GB" in text
