"""Acceptance audit: ``kanon --engine duckdb`` printed no ``search plan: lattice of N nodes ...``
line (and so no large-lattice warning), which README promises before every search and ``--engine
numpy`` prints. The engine path now passes the same notice."""

from __future__ import annotations

from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


def test_duckdb_prints_search_plan(tmp_path):
    rows = [f"{'MF'[i % 2]},{20 + i % 4}" for i in range(40)]
    (tmp_path / "t.csv").write_text("sex,age\n" + "\n".join(rows) + "\n")
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("M;*\nF;*\n")
    (tmp_path / "h" / "age.csv").write_text("".join(f"{a};{a // 10 * 10}s;*\n" for a in range(20, 24)))
    args = ["kanon", str(tmp_path / "t.csv"), "--qi", "sex,age", "--hierarchies", str(tmp_path / "h"), "--k", "2"]
    for engine in ("numpy", "duckdb"):
        r = runner.invoke(app, args + ["--engine", engine, "--out", str(tmp_path / f"{engine}.csv")])
        assert r.exit_code == 0, r.output
        assert "search plan: lattice of 6 nodes" in r.output, (engine, r.output)
    r = runner.invoke(app, args + ["--engine", "duckdb", "-q", "--out", str(tmp_path / "q.csv")])
    assert r.exit_code == 0 and "search plan" not in r.output
