"""Publishing each popped snapshot by generalization with the Incognito engine's l-diversity check."""

from __future__ import annotations

import pandas as pd
import pytest

from tempanon.errors import InputError
from tempanon.hierarchy import build_intervals, build_suppression
from tempanon.samples import sample_dir
from tempanon.stream import anonymize_stream
from tempanon.stream.generalize import generalize_snapshots
from tempanon.verify import check_l_diverse_classes

QI = ["race", "sex", "age", "precinct"]


@pytest.fixture(scope="module")
def stream():
    df = pd.read_csv(sample_dir("stream") / "use_of_force_sample.csv").iloc[:300]
    res = anonymize_stream(df, time="response_datetime", sensitive="problem", qi=QI, l=2, w=2, snapshot="day")
    hier = {q: build_suppression(q, df[q]) for q in ["race", "sex", "precinct"]}
    hier["age"] = build_intervals("age", df["age"].dropna(), [10, 20, 40, 80])
    return df, res, hier


def test_every_snapshot_is_published_l_diverse_by_generalization(stream):
    df, res, hier = stream
    pubs = res.published
    gen = generalize_snapshots(df, pubs, QI, "problem", 2, hier)
    assert [g.label for g in gen] == [p.label for p in pubs]
    for g, p in zip(gen, pubs):
        assert len(g.table) == p.size  # nothing suppressed: an l-eligible snapshot is l-diverse at the top
        assert sorted(g.table.index) == sorted(p.rows)  # rows shuffled within classes (kanonymize's default)
        if len(g.table):
            check_l_diverse_classes(g.table, QI, "problem", 2)
            # the sensitive values are published unchanged
            assert g.table["problem"].astype(str).tolist() == df.loc[g.table.index, "problem"].astype(str).tolist()
    assert any(len(g.table) and min(g.levels.values()) < max(h.height for h in hier.values()) for g in gen)


def test_missing_hierarchy_is_an_error(stream):
    df, res, hier = stream
    with pytest.raises(InputError, match="missing: age"):
        generalize_snapshots(df, res.published, QI, "problem", 2, {k: v for k, v in hier.items() if k != "age"})
