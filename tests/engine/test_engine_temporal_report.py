"""``timestamped FILE --engine duckdb|spark --report``: the report's numbers measured by the engine
(input and the release as written, :mod:`tempanon.temporal.outofcore_report`) equal those the
in-memory report measures in pandas (:func:`tempanon.report.timestamped.timestamped_report`): risk
before and after, the guarantee's classes and class sizes, observed losses per column, the summary
(time alone, joint with hierarchies, missing values, no respondent column)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tempanon.data.io import read_table
from tempanon.hierarchy import Hierarchy
from tempanon.report.timestamped import timestamped_report, timestamped_report_from_measures
from tempanon.temporal.api import anonymize_timestamped
from tempanon.temporal.outofcore import anonymize_timestamped_file

SAMPLE = Path(__file__).resolve().parents[2] / "src" / "tempanon" / "samples" / "timestamped" / "encounters.csv.gz"
ENC_ROWS = [["wellness", "preventive", "*"], ["ambulatory", "visit", "*"], ["outpatient", "visit", "*"],
            ["urgentcare", "acute", "*"], ["emergency", "acute", "*"], ["inpatient", "stay", "*"],
            ["snf", "stay", "*"], ["hospice", "stay", "*"], ["virtual", "visit", "*"]]  # fmt: skip


def _text(rep) -> list[str]:
    """The report's visible text, line by line, without pictures, styles and the checker's name."""
    t = rep.render()
    t = re.sub(r"<svg.*?</svg>", "", t, flags=re.S)
    t = re.sub(r"<style.*?</style>|<script.*?</script>", "", t, flags=re.S)
    lines = [x.strip() for x in re.sub(r"<[^>]+>", "\n", t).splitlines() if x.strip()]
    return [x for x in lines if "independent checker" not in x]


def _both(path, tmp_path, engine="duckdb", **kw):
    df = read_table(path, as_text=True)
    mem = anonymize_timestamped(df, shuffle_seed=3, **kw)
    f = anonymize_timestamped_file(path, out=str(tmp_path / "r.csv"), measures=True, engine=engine, shuffle_seed=3, **kw)
    a = timestamped_report(df, mem, source="x", checksum=None)
    b = timestamped_report_from_measures(f, source="x", checksum=None)
    return mem, f, a, b


def _same(a, b):
    ta, tb = _text(a), _text(b)
    assert len(ta) == len(tb)
    diff = [(x, y) for x, y in zip(ta, tb) if x != y]
    assert not diff, diff[:5]


def test_sample_time_only_same_report(tmp_path):
    kw = dict(time="START", uid="PATIENT", k=3, max_suppression=0.06, qi=["ENCOUNTERCLASS"])
    mem, f, a, b = _both(SAMPLE, tmp_path, **kw)
    assert f.released is None and f.measures is not None and mem.measures is None
    _same(a, b)
    assert "measures" not in f.summary["verification"]  # the aggregates stay out of the summary
    m = f.measures
    assert m["rows_out"] == len(mem.released) and m["rows_in"] == len(read_table(SAMPLE, as_text=True))


def test_sample_joint_same_report(tmp_path):
    hier = {"ENCOUNTERCLASS": Hierarchy.from_rows("ENCOUNTERCLASS", ENC_ROWS)}
    kw = dict(time="START", uid="PATIENT", k=5, max_suppression=0.05, qi=["ENCOUNTERCLASS"], hierarchies=hier,
              granularities="day,week,month,year")  # fmt: skip
    mem, f, a, b = _both(SAMPLE, tmp_path, **kw)
    assert f.summary["mode"] == "joint"
    _same(a, b)


def _generated(tmp_path, seed: int, uid: bool) -> Path:
    rng = np.random.default_rng(seed)
    n = 400
    t = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 24 * 90, n), unit="h")
    times = t.strftime("%Y-%m-%d %H:%M").to_numpy(dtype=object)
    times[rng.random(n) < 0.05] = None
    sex = rng.choice(["F", "M"], n).astype(object)
    sex[rng.random(n) < 0.05] = None
    df = pd.DataFrame({"when": times, "sex": sex, "zip": rng.choice(["100", "101", "102", ""], n)})
    if uid:
        df["pid"] = rng.integers(0, 120, n).astype(str)
    p = tmp_path / f"g{seed}.csv"
    df.to_csv(p, index=False)
    return p


@pytest.mark.parametrize("seed,uid", [(1, True), (2, False), (3, True)])
def test_generated_with_missing_values_same_report(tmp_path, seed, uid):
    p = _generated(tmp_path, seed, uid)
    kw = dict(time="when", uid="pid" if uid else None, k=3, max_suppression=0.1, qi=["sex", "zip"],
              granularities="day,week,month")  # fmt: skip
    mem, f, a, b = _both(p, tmp_path, **kw)
    _same(a, b)
    ra, rb = f.measures["after"].risk(), f.measures["before"].risk()
    assert ra.rows == len(mem.released) and rb.rows == 400


def test_cli_duckdb_report_reads_the_file_in_place(tmp_path):
    from typer.testing import CliRunner

    from tempanon.cli import app

    texts = {}
    for eng in ("numpy", "duckdb"):
        r = CliRunner().invoke(app, ["timestamped", str(SAMPLE), "--time", "START", "--uid", "PATIENT", "--k", "3",
                                     "--max-suppression", "0.06", "--qi", "ENCOUNTERCLASS", "--shuffle-seed", "11",
                                     "--out", str(tmp_path / f"{eng}.csv"), "--summary", str(tmp_path / f"{eng}.json"),
                                     "--report", str(tmp_path / f"{eng}.html"), "--engine", eng])  # fmt: skip
        assert r.exit_code == 0, r.output
        assert "into memory" not in r.output
        texts[eng] = (tmp_path / f"{eng}.html").read_text()
    import json

    plan = json.loads((tmp_path / "duckdb.json").read_text())["plan"]
    assert "out of core" in plan["input"]
    assert json.loads((tmp_path / "duckdb.json").read_text())["report"] == str(tmp_path / "duckdb.html")

    class _R:
        def __init__(self, t):
            self.t = t

        def render(self):
            return self.t

    _same(_R(texts["numpy"]), _R(texts["duckdb"]))


def test_cli_report_build_failure_leaves_no_report(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import tempanon.report.timestamped as rt
    from tempanon.cli import app

    def boom(*a, **k):
        raise ValueError("report broke")

    monkeypatch.setattr(rt, "timestamped_report_from_measures", boom)
    rep = tmp_path / "r.html"
    r = CliRunner().invoke(app, ["timestamped", str(SAMPLE), "--time", "START", "--uid", "PATIENT", "--k", "3",
                                 "--max-suppression", "0.06", "--qi", "ENCOUNTERCLASS", "--out", str(tmp_path / "o.csv"),
                                 "--summary", str(tmp_path / "s.json"), "--report", str(rep), "--engine", "duckdb", "-q"])  # fmt: skip
    assert r.exit_code == 4, r.output
    msg = " ".join(r.output.split())
    assert "was written and verified, but the report could not be built" in msg and "report broke" in msg
    assert "Traceback" not in r.output
    assert (tmp_path / "o.csv").exists()  # the verified release stays
    assert not rep.exists() and not (tmp_path / "s.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


@pytest.mark.spark
def test_spark_file_same_report(spark_session, tmp_path):
    kw = dict(time="START", uid="PATIENT", k=3, max_suppression=0.06, qi=["ENCOUNTERCLASS"])
    mem, f, a, b = _both(SAMPLE, tmp_path, engine="spark", **kw)
    _same(a, b)
    hier = {"ENCOUNTERCLASS": Hierarchy.from_rows("ENCOUNTERCLASS", ENC_ROWS)}
    kw = dict(time="START", uid="PATIENT", k=5, max_suppression=0.05, qi=["ENCOUNTERCLASS"], hierarchies=hier,
              granularities="day,week,month,year")  # fmt: skip
    mem, f, a, b = _both(SAMPLE, tmp_path / "j", engine="spark", **kw)
    _same(a, b)
