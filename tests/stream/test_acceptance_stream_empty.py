"""Acceptance audit: ``tempanon stream`` on a header-only CSV (an export that went wrong) said
``published 0 snapshots of 0 records`` with exit 0 and created an empty release folder, where
``kanon``, ``timestamped`` and ``kp`` refuse a table without rows. Now exit 2, nothing created."""

from __future__ import annotations

from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


def test_header_only_file_is_refused(tmp_path):
    src = tmp_path / "h.csv"
    src.write_text("t,race,problem\n")
    out = tmp_path / "rel"
    r = runner.invoke(app, ["stream", str(src), "--time", "t", "--sensitive", "problem", "--qi", "race", "--l", "2",
                            "--window", "1", "--out", str(out), "--summary", str(tmp_path / "s.json")])
    assert r.exit_code == 2, r.output
    assert "the input table has no rows" in r.output
    assert not out.exists() and not (tmp_path / "s.json").exists()
