"""``timestamped --engine duckdb`` opens a work database in a new folder of the temporary folder; when
DuckDB cannot create it there (the temporary folder full, not writable, gone), that is no fault of the
input, yet it was exit 2, "DuckDB engine: cannot open a work database ...". As docs/engines.md
classifies an I/O error on DuckDB's own files (its spill directory, a full disk), it is now the engine's
failure (exit 4, "an engine failure, not the input"), naming the folder and TMPDIR; nothing written. A
temporary folder that cannot be made at all (``mkdtemp`` failing) is the same failure, not a traceback."""

from __future__ import annotations

import errno
import tempfile

import pytest
from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


def _run(tmp_path):
    rows = [f"p{i % 20},{'FM'[i % 2]},2021-01-{1 + i % 28:02d} 10:00" for i in range(60)]
    src = tmp_path / "ts.csv"
    src.write_text("pid,sex,t\n" + "\n".join(rows) + "\n")
    out = tmp_path / "out" / "r.csv"
    r = runner.invoke(app, ["timestamped", str(src), "--time", "t", "--uid", "pid", "--qi", "sex", "--k", "2",
                            "--granularities", "day,month", "--out", str(out), "--engine", "duckdb", "-q"])  # fmt: skip
    return r, " ".join(r.output.split()), out


def test_a_work_database_duckdb_cannot_create_is_the_engines_failure(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("not a folder")
    gone = tmp_path / "a-file" / "tempanon-ts-x"  # DuckDB's own error: the folder cannot hold a file
    real = tempfile.mkdtemp

    def mkdtemp(*a, prefix=None, **kw):
        return str(gone) if prefix == "tempanon-ts-" else real(*a, prefix=prefix, **kw)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    r, msg, out = _run(tmp_path)
    assert r.exit_code == 4, (msg, r.exception)
    assert msg.startswith("error: the DuckDB engine failed (an engine failure, not the input): "), msg
    assert f"cannot open its work database in {gone}" in msg and "TMPDIR" in msg and "nothing was written" in msg, msg
    assert "Traceback" not in msg and not out.exists()


def test_a_temporary_folder_that_cannot_be_made_is_the_engines_failure(tmp_path, monkeypatch):
    real = tempfile.mkdtemp

    def mkdtemp(*a, prefix=None, **kw):
        if prefix == "tempanon-ts-":
            raise OSError(errno.ENOSPC, "No space left on device", "/tmp/tempanon-ts-x")
        return real(*a, prefix=prefix, **kw)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    r, msg, out = _run(tmp_path)
    assert r.exit_code == 4, (msg, r.exception)
    assert "the DuckDB engine failed (an engine failure, not the input)" in msg, msg
    assert "No space left on device" in msg and "TMPDIR" in msg and "nothing was written" in msg, msg
    assert not out.exists()


def _kanon(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("pid,sex\n" + "\n".join(f"p{i},{'MF'[i % 2]}" for i in range(20)) + "\n")
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("M;*\nF;*\n")
    out = tmp_path / "out" / "r.csv"
    r = runner.invoke(app, ["kanon", str(src), "--qi", "sex", "--hierarchies", str(tmp_path / "h"), "--k", "2",
                            "--engine", "duckdb", "--out", str(out), "-q"])  # fmt: skip
    return r, " ".join(r.output.split()), out


def _job(tmp_path):
    (tmp_path / "t.csv").write_text("pid,sex\n" + "\n".join(f"p{i},{'MF'[i % 2]}" for i in range(20)) + "\n")
    (tmp_path / "job.toml").write_text('[input]\npath = "t.csv"\n\n[columns]\nquasi_identifiers = ["sex"]\nuid = "pid"\n\n'
                                       '[hierarchies]\nsex = { type = "suppression" }\n\n[model]\nname = "kanon"\nk = 2\n'
                                       'engine = "duckdb"\n\n[output]\ntable = "out/r.csv"\n')  # fmt: skip
    r = runner.invoke(app, ["run", str(tmp_path / "job.toml"), "-q"])
    return r, " ".join(r.output.split()), tmp_path / "out" / "r.csv"


@pytest.mark.parametrize("command", [_run, _kanon, _job], ids=["timestamped", "kanon", "job"])
def test_a_spill_folder_that_cannot_be_made_is_the_engines_failure(tmp_path, monkeypatch, command):
    """DuckDB's spill folder (``open_duckdb``'s ``scratch_dir``) that cannot be made: exit 4 (a traceback, exit 1, before)."""
    real = tempfile.mkdtemp

    def mkdtemp(*a, prefix=None, **kw):
        if prefix and prefix.startswith("tempanon-duckdb-"):
            raise OSError(errno.ENOSPC, "No space left on device", "/tmp/tempanon-duckdb-x")
        return real(*a, prefix=prefix, **kw)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    r, msg, out = command(tmp_path)
    assert r.exit_code == 4, (msg, r.exception)
    assert msg.startswith("error: the DuckDB engine failed (an engine failure, not the input): cannot make its spill folder"), msg
    assert "No space left on device" in msg and "TMPDIR" in msg and "nothing was written" in msg, msg
    assert not out.exists()
