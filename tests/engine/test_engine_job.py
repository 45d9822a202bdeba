"""The job-file key ``engine`` (``[model] engine = "duckdb"``): same release as numpy; a bad
engine name is an exit-2 error."""

from __future__ import annotations

import pandas as pd
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.hierarchy import Hierarchy

JOB = """\
[input]
path = "t.csv"

[columns]
quasi_identifiers = ["age", "sex", "zip"]
identifying = ["name"]

[hierarchies]
age = { type = "intervals", widths = [10, 20, 40] }
sex = "sex.csv"
zip = { type = "masking", levels = 4 }

[model]
name = "kanon"
k = 5
max_suppression = 0.02
ENGINE

[output]
table = "out-NAME/t-anon.csv"
summary = "out-NAME/summary.json"
"""


def test_job_engine_key(tmp_path):
    import numpy as np

    rng = np.random.default_rng(3)
    n = 300
    pd.DataFrame({
        "name": [f"P{i}" for i in range(n)],
        "age": rng.integers(18, 90, n).astype(str),
        "sex": rng.choice(["M", "F"], n),
        "zip": rng.choice([f"537{i:02d}" for i in range(12)], n),
    }).to_csv(tmp_path / "t.csv", index=False)  # fmt: skip
    Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]]).to_csv(tmp_path / "sex.csv")
    outs = {}
    for eng in ("numpy", "duckdb"):
        job = tmp_path / f"{eng}.toml"
        job.write_text(JOB.replace("ENGINE", f'engine = "{eng}"').replace("NAME", eng))
        r = CliRunner().invoke(app, ["run", str(job), "-q"])
        assert r.exit_code == 0, r.output
        t = pd.read_csv(tmp_path / f"out-{eng}" / "t-anon.csv", dtype=str, keep_default_na=False)
        outs[eng] = t.sort_values(list(t.columns)).reset_index(drop=True)
    pd.testing.assert_frame_equal(outs["duckdb"], outs["numpy"])
    job = tmp_path / "bad.toml"
    job.write_text(JOB.replace("ENGINE", 'engine = "oracle"').replace("NAME", "bad"))
    r = CliRunner().invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 2 and "unknown engine 'oracle'" in r.output
