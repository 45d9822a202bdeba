"""``timestamped --engine duckdb`` turned every DuckDB error that reached it into an input error ("DuckDB
engine: ...", exit 2), out of memory and DuckDB's internal errors too. Now only an error about the input
(a value that does not convert, a column that does not bind, an invalid input, an I/O error naming the
input file) is exit 2; the engine's failure (out of memory, an internal or fatal error, an I/O error on
its own files) is exit 4, "the DuckDB engine failed (an engine failure, not the input)", and nothing is
written (``source_duckdb.engine_error``). ``kanon --engine duckdb`` classifies the same way (it let such
an error out as a traceback, exit 1)."""

from __future__ import annotations

import duckdb
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.lattice.source_duckdb import DuckDBSource, engine_error
from tempanon.lattice.source_temporal import DuckDBTimeSource

runner = CliRunner()

OOM = duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate data of size 16.0 MiB (1.0 GiB/1.0 GiB used)")
INTERNAL = duckdb.InternalException("INTERNAL Error: Attempted to access index 3 within vector of size 3")
SPILL = duckdb.IOException('IO Error: Could not write file "/tmp/duckdb_spill/tmp_block_1.block": No space left on device')
CONVERSION = duckdb.ConversionException("Conversion Error: Could not convert string 'abc' to INT64")
BINDER = duckdb.BinderException('Binder Error: Referenced column "sex" not found in FROM clause!')


def _input(tmp_path):
    rows = [f"p{i % 20},{'FM'[i % 2]},2021-01-{1 + i % 28:02d} 10:00" for i in range(60)]
    src = tmp_path / "in" / "ts.csv"
    src.parent.mkdir()
    src.write_text("pid,sex,t\n" + "\n".join(rows) + "\n")
    return src


CASES = [(OOM, 4, "Out of Memory Error"), (INTERNAL, 4, "InternalException: INTERNAL Error"),
         (SPILL, 4, "No space left on device"), (CONVERSION, 2, "Could not convert string 'abc'"),
         (BINDER, 2, 'Referenced column "sex" not found')]  # fmt: skip


@pytest.mark.parametrize("exc,code,text", CASES, ids=["oom", "internal", "spill", "conversion", "binder"])
def test_timestamped_tells_the_engine_from_the_input(tmp_path, monkeypatch, exc, code, text):
    def fail(self, *a, **kw):
        raise exc

    monkeypatch.setattr(DuckDBTimeSource, "check", fail)
    src = _input(tmp_path)
    out = tmp_path / "out" / "r.csv"
    r = runner.invoke(app, ["timestamped", str(src), "--time", "t", "--uid", "pid", "--qi", "sex", "--k", "2",
                            "--granularities", "day,month", "--out", str(out), "--engine", "duckdb", "-q",
                            "--summary", str(tmp_path / "out" / "s.json")])  # fmt: skip
    msg = " ".join(r.output.split())
    assert r.exit_code == code, msg
    assert text in msg and "Traceback" not in msg, msg
    if code == 4:
        assert "the DuckDB engine failed (an engine failure, not the input)" in msg and "nothing was written" in msg, msg
    else:
        assert msg.startswith("error: DuckDB engine: ") and "engine failure" not in msg, msg
    assert not out.parent.exists() or list(out.parent.iterdir()) == []


@pytest.mark.parametrize("exc,code,text", CASES[:2] + CASES[3:4], ids=["oom", "internal", "conversion"])
def test_kanon_tells_the_engine_from_the_input(tmp_path, monkeypatch, exc, code, text):
    def fail(self, *a, **kw):
        raise exc

    monkeypatch.setattr(DuckDBSource, "bottom", fail)
    src = _input(tmp_path)
    h = tmp_path / "h"
    h.mkdir()
    (h / "sex.csv").write_text("F;*\nM;*\n")
    out = tmp_path / "out" / "r.csv"
    r = runner.invoke(app, ["kanon", str(src), "--qi", "sex", "--hierarchies", str(h), "--k", "2", "--out", str(out),
                            "--engine", "duckdb", "-q"])  # fmt: skip
    msg = " ".join(r.output.split())
    assert r.exit_code == code, (msg, r.exception)
    assert text in msg and "Traceback" not in msg, msg
    assert not out.exists()


def test_an_io_error_is_the_inputs_only_when_it_names_the_input(tmp_path):
    src = _input(tmp_path)
    named = duckdb.IOException(f'IO Error: Could not read from file "{src}": Input/output error')
    assert type(engine_error(str(src), named)).__name__ == "InputError"
    assert engine_error(str(src), SPILL).exit_code == 4
    assert engine_error(str(src), OOM).exit_code == 4 and "--memory-limit" in str(engine_error(str(src), OOM))
