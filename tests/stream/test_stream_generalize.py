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


def test_an_allowed_flagged_quasi_identifier_is_not_refused_again_per_snapshot():
    """A quasi-identifier the screening flags by name (here ``ip``) and that stays at level 0 is
    refused by every snapshot's kanonymize, unless the user allowed it: the allowance must reach
    the inner search (it used to be dropped, so ``--allow-identifier`` did not work here)."""

    df = pd.DataFrame({"ip": ["a", "a", "b", "b"] * 5, "dx": ["x", "y"] * 10,
                       "t": pd.date_range("2020-01-01", periods=20, freq="h").astype(str)})
    res = anonymize_stream(df, time="t", sensitive="dx", qi=["ip"], l=2, w=0, snapshot="day",
                          allow_identifier=["ip"])  # (the Anatomy QIT screens it too)
    hier = {"ip": build_suppression("ip", df["ip"])}
    with pytest.raises(InputError, match="ip"):
        generalize_snapshots(df, res.published, ["ip"], "dx", 2, hier)
    gen = generalize_snapshots(df, res.published, ["ip"], "dx", 2, hier, allow_identifier=["ip"])
    assert sum(len(g.table) for g in gen) == 20 and all(g.levels["ip"] == 0 for g in gen)
