"""Level-transfer candidates whose caps no placement meets are not solved (issue 14, 2026-11-26): a cut
test (``_fastkernel.caps_infeasible``, Hall's condition on runs of snapshots) proves them infeasible
before their flow (``XFER_HALL``, default). It must never skip a candidate whose flow would have been
accepted, and so place every record as without it."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from shared_data import shared_data  # tests/shared_data.py


def _load_fast_tests():
    # the helpers of test_stream_fast.py (the suite imports test modules by path: no package to import from)
    import importlib.util

    spec = importlib.util.spec_from_file_location("_stream_fast_helpers", Path(__file__).with_name("test_stream_fast.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_tsf = _load_fast_tests()
_fixed_cap_ilp, _random_window, _stream_release, _Window = _tsf._fixed_cap_ilp, _tsf._random_window, _tsf._stream_release, _tsf._Window



def _hall(k, win, l, caps, p, q):
    P, mv = win.P, win.mv
    V = P * mv + P + 2
    hw = np.full(4 * V, -7, dtype=np.int64)
    k.hall_tables(np.int64(win.na), np.int64(P), np.int64(mv), win.code, win.lo, win.hi, hw)
    return bool(k.caps_infeasible(np.int64(P), np.int64(mv), np.int64(l), np.asarray(caps, dtype=np.int64), np.int64(p), np.int64(q), hw))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 4), st.integers(1, 8), st.data())
def test_hall_sure_only_when_the_cut_test_passes(seed, l, w, data):
    """The shortcut (``_fastkernel.hall_slack`` for levels ``M``, ``hall_sure`` per candidate) says a
    candidate (``M`` with ``p`` one higher, ``q`` one lower) passes only when ``caps_infeasible`` says it
    does not fail: skipping the cut test there changes no answer."""
    from tempanon.stream import fast

    k = fast.kernel()
    rng = np.random.default_rng(seed)
    P, oldest = w + 1, 10
    na = int(rng.integers(2, 60))
    home = np.sort(rng.integers(oldest - w, oldest + P, size=na))
    code = rng.integers(0, int(rng.integers(1, 6)), size=na).astype(np.int64)
    mv = int(code.max()) + 1
    lo = (np.maximum(home, oldest) - oldest).astype(np.int64)
    hi = (np.minimum(home + w, oldest + P - 1) - oldest).astype(np.int64)
    win = _Window(P, oldest, na, home, code, mv, lo, hi, None, None, None, None, None, None, None, None)
    M = rng.integers(0, int(rng.integers(1, 4)), size=P).astype(np.int64)
    p = data.draw(st.integers(0, P - 1))
    q = data.draw(st.integers(0, P - 1).filter(lambda x: x != p))
    if M[q] == 0:
        M[q] = 1
    V = P * mv + P + 2
    hw = np.full(4 * V + P * P + P, -7, dtype=np.int64)
    k.hall_tables(np.int64(win.na), np.int64(P), np.int64(mv), win.code, win.lo, win.hi, hw)
    k.hall_slack(np.int64(P), np.int64(mv), np.int64(l), M, hw)
    caps = M.copy()
    caps[p] += 1
    caps[q] -= 1
    D = hw[2 * P * mv + 2 * mv + P * P + q]
    sure = k.hall_sure(np.int64(P), np.int64(mv), np.int64(l), np.int64(p), np.int64(q), D, hw)
    fails = k.caps_infeasible(np.int64(P), np.int64(mv), np.int64(l), caps, np.int64(p), np.int64(q), hw)
    assert not (sure and fails)
    event(f"sure={bool(sure)} fails={bool(fails)}")


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 4), st.integers(1, 4), st.data())
def test_caps_infeasible_only_when_the_ilp_is(seed, l, w, data):
    """On random windows and caps: whenever the cut test says no placement meets the caps, the ILP with
    those fixed caps (every count within its cap, every snapshot at least ``l`` times its cap) has no
    solution; and with ``p``, ``q`` every pair of snapshots (runs through either)."""
    from tempanon.stream import fast

    k = fast.kernel()
    win = _random_window(seed, w, True)
    caps = np.random.default_rng(seed + 3).integers(0, 3, size=win.P)
    p = data.draw(st.integers(0, win.P - 1))
    q = data.draw(st.integers(0, win.P - 1))
    if _hall(k, win, l, caps, p, q):
        assert _fixed_cap_ilp(win.home, win.code, win.lo, win.hi, win.price, win.mu, caps, l, win.oldest) is None


def test_caps_infeasible_finds_a_cut_through_two_snapshots():
    """Two snapshots that each have enough records for their caps alone but not both together: the run of
    both is the cut (values ``a, a, b``, each record can be in either snapshot, ``l = 2``)."""
    from tempanon.stream import fast

    k = fast.kernel()
    P, na, mv = 2, 3, 2
    lo = np.zeros(na, dtype=np.int64)
    hi = np.ones(na, dtype=np.int64)
    code = np.array([0, 0, 1], dtype=np.int64)
    win = _Window(P, 5, na, np.full(na, 5), code, mv, lo, hi, np.ones(na), np.arange(2.0), None, None, None, None, None, None)
    ilp = lambda caps: _fixed_cap_ilp(win.home, code, lo, hi, win.price, win.mu, np.array(caps), 2, 5)  # noqa: E731
    for caps in ([1, 0], [0, 1]):  # feasible: a and b in one snapshot
        assert ilp(caps) is not None and not _hall(k, win, 2, caps, 0, 1)
    # caps 1, 1 need 4 records: each snapshot alone has 2 values, both together only 3 records
    assert ilp([1, 1]) is None and _hall(k, win, 2, [1, 1], 0, 1)


def _streams(seed, cases):
    rng = np.random.default_rng(seed)
    for case in range(cases):
        l = int(rng.integers(2, 6))
        w = [2, 4, 5, 8][case % 4]
        kind = ["linear", "quadratic"][case % 2]
        snaps = ["".join(rng.choice(list("abcdef"), size=int(rng.integers(0, 12)), p=[0.3, 0.25, 0.15, 0.12, 0.1, 0.08])) for _ in range(16)]
        yield l, w, kind, snaps


def test_skipped_candidates_are_infeasible_and_placements_unchanged():
    """On random streams (w in {2, 4, 5, 8}, l in 2..5, both mu): with ``XFER_HALL_CHECK`` every candidate
    the cut test would skip is solved anyway and none of them ends without penalty (``STATS[40]``); the
    placements with the test (default), with the check and without the test are the same, and the test
    skips candidates (fewer flows)."""
    from tempanon.stream import fast

    skipped = infeasible = 0
    for l, w, kind, snaps in _streams(11, 12):
        tables = {}
        for mode, moves in (("on", fast.MOVES), ("check", fast.MOVES | fast.XFER_HALL_CHECK), ("off", fast.MOVES & ~fast.XFER_HALL)):
            before = fast.STATS.copy()
            tables[mode] = _stream_release(snaps, l, w, kind, moves)
            d = fast.STATS - before
            if mode == "check":
                assert d[40] == 0
                skipped += int(d[39])
            if mode == "off":
                assert d[39] == 0
                infeasible += int(d[41])
        pd.testing.assert_frame_equal(tables["on"], tables["off"])
        pd.testing.assert_frame_equal(tables["check"], tables["off"])
    assert 0 < skipped <= infeasible


DATA = shared_data("snapshots")


@pytest.mark.skipif(DATA is None, reason="shared data not available")
@pytest.mark.parametrize("l,w,cost", [(3, 8, "linear"), (5, 4, "quadratic")])
def test_use_of_force_skipped_candidates_are_infeasible(l, w, cost):
    """Daily use-of-force (its first 4,000 records): with ``XFER_HALL_CHECK`` every candidate the cut test
    skips is solved and ends infeasible, and the placements are those without the test."""
    from tempanon.stream import fast
    from tempanon.stream.api import anonymize_stream

    df = pd.read_csv(DATA / "mn_police_use_of_force.csv", dtype=str, keep_default_na=False, na_values=[""]).iloc[:4000]
    qi = ["race", "sex", "age", "precinct", "neighborhood"]
    placed = {}
    saved = fast.MOVES
    try:
        for mode, moves in (("check", saved | fast.XFER_HALL_CHECK), ("off", saved & ~fast.XFER_HALL)):
            fast.MOVES = moves
            before = fast.STATS.copy()
            r = anonymize_stream(df, time="response_datetime", sensitive="problem", qi=qi, l=l, w=w, snapshot="day", step="fast", cost=cost)
            d = fast.STATS - before
            placed[mode] = r.publisher.record_table()["placed"].to_numpy()
            if mode == "check":
                assert d[39] > 0 and d[40] == 0
    finally:
        fast.MOVES = saved
    assert (placed["check"] == placed["off"]).all()
