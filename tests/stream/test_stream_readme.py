"""The numbers README.md quotes for its `tempanon stream` example are the ones the command gives."""

import json
import re
from importlib import resources
from pathlib import Path

from typer.testing import CliRunner

from tempanon.cli import app

README = Path(__file__).resolve().parents[2] / "README.md"
SAMPLE = Path(str(resources.files("tempanon") / "samples" / "stream" / "use_of_force_sample.csv"))


def test_readme_stream_example_numbers(tmp_path):
    text = README.read_text()
    m = re.search(
        r"On the sample: ([\d,]+) records, (\d+) days, (\d+) suppressed, (\d+) delayed \(at\s+most (\d+) days\),"
        r"\s+information loss (\d+) \(`--step exact`: (\d+) suppressed, (\d+) delayed, (\d+)\)",
        text,
    )
    assert m, "README no longer quotes the stream example's numbers in the expected form"
    records, days, suppressed, delayed, most, il, ex_supp, ex_delayed, ex_il = (int(g.replace(",", "")) for g in m.groups())
    # the default step (fast) gives the first numbers, --step exact the ones in brackets
    for step, expected in ((None, (suppressed, delayed, il)), ("exact", (ex_supp, ex_delayed, ex_il))):
        s = _run(tmp_path / (step or "default"), step)
        assert (s["records"], s["snapshots"], s["max_reposition_distance"]) == (records, days, most)
        assert (s["suppressed"], s["repositioned"], s["information_loss"]) == expected, step


def _run(out, step):
    out.mkdir()
    step_args = [] if step is None else ["--step", step]
    r = CliRunner().invoke(app, [
        "stream", str(SAMPLE), "--time", "response_datetime", "--sensitive", "problem", "--qi", "race,sex,age,precinct",
        "--l", "3", "--window", "2", "--snapshot", "day", "--cost", "quadratic",
        *step_args,
        "--out", str(out / "released"), "--summary", str(out / "s.json"), "--quiet",
    ])
    assert r.exit_code == 0, r.output
    return json.loads((out / "s.json").read_text())
