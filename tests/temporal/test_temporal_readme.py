"""The README's `tempanon timestamped` example runs on the bundled sample and gives the numbers it quotes."""

import json
import re
from importlib import resources
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from tempanon.cli import app

README = Path(__file__).resolve().parents[2] / "README.md"
SAMPLE = Path(str(resources.files("tempanon") / "samples" / "timestamped" / "encounters.csv.gz"))


def test_readme_timestamped_example_numbers(tmp_path, monkeypatch):
    text = README.read_text()
    cmd = re.search(r"```bash\n(tempanon timestamped .*?)\n```", text, re.S)
    assert cmd, "README no longer has the timestamped example"
    args = cmd.group(1).replace("\\\n", " ").split()[1:]
    assert args[1] == "src/tempanon/samples/timestamped/encounters.csv.gz"
    args[1] = str(SAMPLE)  # the same file, wherever the package is installed
    m = re.search(r"\(([\d,]+) encounters of (\d+) patients.*?picks `(\w+)` \(gen_m (\d+), gen_s ([\d,]+)\) and\s+"
                  r"suppresses (\d+) encounters", text, re.S)  # fmt: skip
    assert m, "README no longer quotes the timestamped example's numbers in the expected form"
    tuples, patients, gran, gen_m, gen_s, suppressed = m.groups()
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, args[1:] if args[0] != "timestamped" else args)
    assert r.exit_code == 0, r.output
    s = json.loads((tmp_path / "steward" / "summary.json").read_text())
    assert (s["tuples"], s["respondents"], s["granularity"], s["gen_m"], s["gen_s"], s["suppressed"]) == (
        int(tuples.replace(",", "")), int(patients), gran, int(gen_m), int(gen_s.replace(",", "")), int(suppressed))
    assert s["timezone"] == "America/New_York"
    rel = pd.read_csv(tmp_path / "release" / "released.csv", dtype=str)
    assert "PATIENT" not in rel.columns and len(rel) == s["tuples"] - s["suppressed"]
    assert rel["START"].str.match(r"^\d{4}Q[1-4]$").all()
    assert (tmp_path / "steward" / "audit.csv").read_text().startswith("# STEWARD ONLY")
