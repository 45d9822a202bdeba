"""The README's `tempanon kp` example runs as written (from a clean directory) and says what it shows."""

import re
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from tempanon.cli import app

ROOT = Path(__file__).resolve().parents[2]


def test_readme_kp_example(tmp_path, monkeypatch):
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(tempanon kp .*?)```", text, re.S).group(1)
    argv = block.replace("\\\n", " ").split()[1:]
    argv = [str(ROOT / a) if a.startswith("src/") else a for a in argv]
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    rel = pd.read_csv(tmp_path / "release" / "kp.csv")
    assert {"kgroup", "psubgroup", "A0_lo", "A9_hi", "pattern", "pattern_level", "S"} <= set(rel.columns)
    assert "id" not in rel.columns
    assert (tmp_path / "steward" / "audit.csv").read_text().startswith("# STEWARD ONLY")
    audit = pd.read_csv(tmp_path / "steward" / "audit.csv", comment="#")
    assert list(audit.columns) == ["id", "output_row", "shuffle_seed"]
