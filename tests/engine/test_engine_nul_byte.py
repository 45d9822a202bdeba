"""A NUL byte in a CSV input on DuckDB: its sniffer may refuse the file without naming a line ("cannot
read t.csv: Error when sniffing file "t.csv"."), which left the user to search the file (found in the
uatd acceptance pass, 2026-11-28; numpy reads the byte as part of the value). When the sniffer fails
and the strict reader finds no bad line, the refusal names the NUL byte's line
(``source_duckdb.nul_byte_error``, run only then)."""

from __future__ import annotations

import gzip
from pathlib import Path

from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()
ADULT = Path(__file__).resolve().parents[2] / "src" / "tempanon" / "samples" / "adult"


def test_a_nul_byte_is_named_by_its_line_on_duckdb(tmp_path):
    lines = gzip.decompress((ADULT / "adult.csv.gz").read_bytes()).splitlines(keepends=True)[:10]
    src = tmp_path / "t.csv"
    src.write_bytes(b"".join(lines) + b"Male;3\x009;White;x;x;x;x;x;x\n")  # (the case DuckDB's sniffer refused)
    out = tmp_path / "r.csv"
    r = runner.invoke(app, ["kanon", str(src), "--qi", "age,sex", "--hierarchies", str(ADULT), "--k", "2", "--out", str(out),
                            "--engine", "duckdb", "-q"])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "t.csv, line 11: a NUL byte (0x00, byte 7 of the line)" in r.output, r.output
    assert "sniffing" not in r.output and not out.exists()
