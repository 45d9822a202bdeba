"""The Spark audit's row-by-row check does not broadcast the written release or the input.

``kanon --engine spark --audit`` at 1M rows ran out of the default 1 GB driver heap
(``benchmarks/bench_engine_report.py --rows 1000000 --engine spark --audit``): the check's join of
the audit with the numbered written release was planned as a **broadcast** hash join (Spark sizes a
Parquet release by its compressed files, a few MB for a million rows), so the driver collected and
built a hash table of every released row. The check now asks for sort-merge joins
(``SparkSource.merge_hint``, ``MERGE(f), MERGE(s)``), on kanon's and timestamped's checks; measured in
``docs/benchmarks.md`` ("Spark audit within the default heap"). Here, on small tables Spark would
broadcast without the hint, the executed plans (after adaptive execution) join the release rows and
the input lines by sort-merge joins."""

from __future__ import annotations

import pytest

from .test_engine_audit import _generated
from .test_engine_temporal import _small_csv

pytestmark = pytest.mark.spark


@pytest.fixture
def plans(monkeypatch, spark_session):
    """The final executed plans of the row-by-row check queries (recognised by their text)."""
    from tempanon.lattice.source_spark import SparkSource

    got: list[str] = []
    orig = SparkSource._arrow

    def arrow(self, sql):
        if "AS matched" in sql or "x.release_row FROM" in sql:
            with self._utc():
                df = self.spark.sql(sql)
                out = df.toArrow()
                got.append(df._jdf.queryExecution().executedPlan().toString())
            return out
        return orig(self, sql)

    monkeypatch.setattr(SparkSource, "_arrow", arrow)
    return got


def _assert_merge_joins(plan: str) -> None:
    lines = plan.splitlines()
    broadcast = [x for x in lines if "BroadcastHashJoin" in x and ("release_row" in x or "input_line" in x)]
    assert broadcast == [], "\n".join(broadcast)
    merged = [x for x in lines if "SortMergeJoin" in x]
    assert any("release_row" in x for x in merged) and any("input_line" in x for x in merged), plan


def test_kanon_audit_check_joins_by_sort_merge(tmp_path, plans):
    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize

    inp, hdir = _generated(tmp_path, n_people=80)
    (tmp_path / "rel").mkdir()
    res = kanonymize(str(inp), ["age", "sex", "zip"], load_hierarchies(hdir, ["age", "sex", "zip"]), 3, uid="person",
                     keep=["visit"], engine="spark", out=str(tmp_path / "rel" / "r.parquet"), audit=str(tmp_path / "a.csv"))  # fmt: skip
    assert res.engine_checks["audit"].startswith("checked row by row")
    assert len(plans) == 1
    _assert_merge_joins(plans[0])


def test_timestamped_audit_check_joins_by_sort_merge(tmp_path, plans):
    import tempanon.temporal.outofcore as ooc

    small = _small_csv(tmp_path)
    (tmp_path / "rel").mkdir()
    res = ooc.anonymize_timestamped_file(small, out=tmp_path / "rel" / "o.parquet", audit=tmp_path / "a.csv", engine="spark",
                                         time="START", qi=["CLS"], k=3, uid="PATIENT", max_suppression=0.06)  # fmt: skip
    assert res.summary["verification"]["audit"].startswith("checked row by row")
    assert len(plans) == 1
    _assert_merge_joins(plans[0])
