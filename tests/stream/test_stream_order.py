"""Theorem 1: every release is timestamp-order preserving (verify.check_timestamp_order), for every step."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.errors import VerificationError
from tempanon.stream.api import anonymize_stream
from tempanon.verify import check_timestamp_order


def _brute(home, pub, val) -> int:
    """Records r2 published in D'[j] after some r1 of the same value in D'[i], i < j, r1.TS > r2.TS."""
    n = 0
    for b in range(len(home)):
        if pub[b] < 0:
            continue
        if any(pub[a] >= 0 and val[a] == val[b] and pub[a] < pub[b] and home[a] > home[b] for a in range(len(home))):
            n += 1
    return n


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(-1, 3), st.sampled_from("abc")), max_size=12))
def test_check_timestamp_order_against_pair_scan(recs):
    home = np.array([h for h, _, _ in recs], dtype=int)
    pub = np.array([h + d if d >= 0 else -1 for h, d, _ in recs], dtype=int)
    val = [v for _, _, v in recs]
    bad = _brute(home, pub, val)
    if bad:
        with pytest.raises(VerificationError, match=f"{bad} record"):
            check_timestamp_order(home, pub, val)
    else:
        assert check_timestamp_order(home, pub, val)["out_of_order"] == 0


def test_swap_repairs_order():
    # r1 (TS 2) in D'[3], r2 (TS 1) in D'[4]: out of order; swapped it is preserving (and no dearer)
    with pytest.raises(VerificationError, match="Theorem 1"):
        check_timestamp_order([2, 1], [3, 4], ["x", "x"])
    assert check_timestamp_order([1, 2], [3, 4], ["x", "x"])["out_of_order"] == 0
    assert check_timestamp_order([2, 1], [3, 4], ["x", "y"])["out_of_order"] == 0  # other values: no constraint
    assert check_timestamp_order([2, 1], [3, -1], ["x", "x"])["out_of_order"] == 0  # suppressed: not released


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3]), st.integers(1, 3), st.sampled_from(["linear", "quadratic"]),
       st.sampled_from(["exact", "paper"]))
def test_every_step_releases_in_timestamp_order(seed, l, w, cost, step):
    rng = np.random.default_rng(seed)
    n = 60
    day = np.sort(rng.integers(0, 12, n))
    df = pd.DataFrame({
        "t": pd.to_datetime("2024-01-01") + pd.to_timedelta(day, unit="D"),
        "s": rng.choice(list("abcd"), n, p=[0.55, 0.15, 0.15, 0.15]),
        "q": rng.integers(0, 3, n).astype(str),
    })
    r = anonymize_stream(df, time="t", sensitive="s", qi="q", l=l, w=w, cost=cost, step=step)
    t = r.publisher.record_table()
    assert check_timestamp_order(t.home, t.placed, t.code)["out_of_order"] == 0
