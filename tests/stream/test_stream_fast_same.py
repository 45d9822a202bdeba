"""The fast step's kernel made cheaper without changing what it finds (issue 14, 2026-11-26): the hot
functions compiled without numba's reference counting (``_fastkernel.jit_nonrt``), the candidates'
sort without allocation (``_fastkernel.stable_order``), and the flows' residual network rewritten in
place after a cycle instead of rebuilt (``_fastkernel.cancel_cycles``). Every placement is the same as
before: fingerprints of whole random streams' releases computed with the kernel of main at 7c6b8fb
(before these changes), and the daily use-of-force cells in docs/benchmarks.md ("Fast step: the same
search, cheaper").

Since 2026-11-26 afternoon the default (``fast.WHOLE_GAINS``) applies a lift or a level transfer only
when it lowers the true IL, so the default's placements differ; without that flag the search is still
the one fingerprinted here, and the flag is shown to change nothing where every gain is whole (no ties'
perturbation) or where costs are not whole numbers.

Since 2026-11-26 evening the flows price a violation by a bound on the step's IL (``fast.PENALTY_BOUND``)
instead of ``1e7``: on these streams the placements are the same, and no flow stops on a rounding
"cycle" any more (without the bound some did)."""

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.stream.model import CostModel
from tempanon.stream.publisher import StreamPublisher


def _stream_fingerprints(beta=10.0, cases=30):
    """Per random stream (w in {1, 2, 4, 5, 8}, l in {2, 3, 5}, linear and quadratic mu, defer 0 and the
    default, skewed values): md5 of the final placements (``placed`` per record, flushed)."""
    import pandas as pd

    rng = np.random.default_rng(20261126)
    out = []
    for case in range(cases):
        w = [1, 2, 4, 5, 8][case % 5]
        l = [2, 3, 5][case % 3]
        kind = ["linear", "quadratic"][case % 2]
        kw = {"defer": 0.0} if case % 4 == 0 else {}
        cost = CostModel.linear(w, 1.0, beta) if kind == "linear" else CostModel.quadratic(w, beta)
        pub = StreamPublisher(l, w, sensitive="s", qi=["q"], cost=cost, step="fast", **kw)
        rid = 0
        for t in range(18):
            vals = rng.choice(list("abcdefg"), size=int(rng.integers(0, 14)), p=[0.3, 0.2, 0.15, 0.12, 0.1, 0.08, 0.05])
            snap = pd.DataFrame({"q": [0] * len(vals), "s": list(vals)}, index=np.arange(rid, rid + len(vals)))
            rid += len(vals)
            pub.push(snap, label=str(t))
        pub.flush()
        placed = np.ascontiguousarray(pub.record_table()["placed"].to_numpy(), dtype=np.int64)
        out.append(hashlib.md5(placed.tobytes()).hexdigest()[:12])
    return out


# computed with the kernel of main at 7c6b8fb (before the changes above)
MAIN_FINGERPRINTS = [
    '5ce8f971b779', '0ef79d5e0f9a', 'e3b595b0d10b', 'a8acdfecf812', '58c0cc734e02', '7160f84e94cf',
    '6972dc936259', '9b8559239841', '52cd3ab4d6bd', '79c5e6b66f4f', 'b2c7db9fee39', 'e7115c568b4a',
    '6536a7a0ed4e', '470b6209d91a', 'e0d296e919f9', '8c3affa8a3fa', '77ed7bc58909', '4c76d8665433',
    'e0a7745339b8', 'ca6a4d556e15', 'dfd2820fe9d0', '8c66235d0e9c', '591bd5611ac6', '805ce1b4cf8e',
    'fe46e057b84b', 'dbf9231995b9', '9511e92713a5', '91fda72c616c', '0085450e2eb9', 'e3105845f146',
]


def test_placements_are_those_of_the_kernel_before():
    """30 random streams place every record exactly as the kernel before the changes did (the streams
    use the flow polish and the level transfers: checked through the kernel's counters)."""
    from tempanon.stream import fast

    before = fast.STATS.copy()
    saved = fast.MOVES
    fast.MOVES = saved & ~(fast.WHOLE_GAINS | fast.XFER_START | fast.GROUPS)
    try:
        got = _stream_fingerprints()
    finally:
        fast.MOVES = saved
    assert fast.STATS[9] > before[9] and fast.STATS[36] > before[36] and fast.STATS[37] > before[37]
    assert got == MAIN_FINGERPRINTS


def test_penalty_bound_leaves_no_flow_unproved():
    """Without ``PENALTY_BOUND`` some flows of the 30 streams stop on a parent-graph cycle that is not
    negative (distances of size 1e7 round at 1.9e-9, above the tolerance), i.e. without the proof that
    the flow is optimal (``STATS[42]``); with it none does, and every placement is as before."""
    from tempanon.stream import fast

    off, grown_off = _run(fast.MOVES & ~fast.PENALTY_BOUND)
    on, grown_on = _run(fast.MOVES | fast.PENALTY_BOUND)
    assert grown_on[42] == 0
    assert grown_off[42] > 0
    assert on == off


def _on_and_off(flag, counter):
    """The 30 random streams' fingerprints with and without ``flag``, and ``STATS[counter]``'s growth in
    each run."""
    from tempanon.stream import fast

    out = []
    for moves in (fast.MOVES | flag, fast.MOVES & ~flag):
        fps, grown = _run(moves)
        out.append((fps, grown[counter]))
    return out


def test_xfer_order_changes_no_placement_and_saves_flows():
    """``XFER_ORDER`` (a round's level-transfer candidates by decreasing dual bound, the round ended by
    the first that cannot beat the best so far) places every record as the index order does, with
    fewer candidates solved (``STATS[36]``) on the 30 random streams."""
    from tempanon.stream import fast

    (on, solved_on), (off, solved_off) = _on_and_off(fast.XFER_ORDER, 36)
    assert on == off
    assert 0 < solved_on < solved_off


def test_lift_order_changes_no_placement_and_tries_fewer_lifts():
    """``LIFT_ORDER`` (a lift scan over the pending snapshots by decreasing bound, ended by the first that
    cannot beat the best lift so far; ties kept in index order) places every record as the index order
    does on the 30 random streams, with fewer lifts tried (``STATS[3]``)."""
    from tempanon.stream import fast

    (on, tried_on), (off, tried_off) = _on_and_off(fast.LIFT_ORDER, 3)
    assert on == off
    assert 0 < tried_on < tried_off


def test_dual_reuse_changes_no_placement():
    """``DUAL_REUSE`` (the first transfer round's forward dual taken from the flow polish's last
    Bellman-Ford run, ``STATS[44]``) places every record as computing it anew does, on the 30 random
    streams."""
    from tempanon.stream import fast

    (on, reused_on), (off, reused_off) = _on_and_off(fast.DUAL_REUSE, 44)
    assert on == off
    assert reused_on > 0 and reused_off == 0


def test_net_reuse_changes_no_placement():
    """``NET_REUSE`` (a transfer round's residual network built once and patched for each candidate:
    the arcs of the records its start moved, the slots' arcs for its caps; rewritten back after it)
    places every record as building each candidate's network anew does, on the 30 random streams, with
    transfer candidates solved (``STATS[36]``)."""
    from tempanon.stream import fast

    (on, solved_on), (off, solved_off) = _on_and_off(fast.NET_REUSE, 36)
    assert on == off
    assert solved_on == solved_off > 0


def test_xfer_duals_change_no_placement_and_save_flows():
    """``XFER_DUALS`` (a round's later candidates also bounded by the dual of each candidate solved
    before them, ``STATS[45]``) places every record as without it on the 30 random streams, with fewer
    candidates solved (``STATS[36]``): a candidate it skips could not have beaten the best one."""
    from tempanon.stream import fast

    (on, solved_on), (off, solved_off) = _on_and_off(fast.XFER_DUALS, 36)
    assert on == off
    assert 0 < solved_on < solved_off
    assert _run(fast.MOVES | fast.XFER_DUALS)[1][45] > 0


def test_dual_pool_changes_no_placement_and_saves_flows():
    """``DUAL_POOL`` (every dual of a step, the rounds' and the solved candidates', bounds the candidates
    of every later round too: each is a dual of the same step problem) places every record as without
    it on the 30 random streams, with fewer candidates solved (``STATS[36]``)."""
    from tempanon.stream import fast

    (on, solved_on), (off, solved_off) = _on_and_off(fast.DUAL_POOL, 36)
    assert on == off
    assert 0 < solved_on < solved_off


def test_empty_bound_changes_no_placement():
    """``EMPTY_BOUND`` (a snapshot is not emptied on trial when its records at their cheapest other
    options could not beat the best emptying so far, ``STATS[46]``) places every record as without it on
    the 30 random streams, and skips some trials there."""
    from tempanon.stream import fast

    (on, skipped_on), (off, skipped_off) = _on_and_off(fast.EMPTY_BOUND, 46)
    assert on == off
    assert skipped_on > 0 and skipped_off == 0


def test_xfer_start_saves_cycles():
    """``XFER_START`` (a greedy start for each level-transfer candidate's flow): fewer cycles cancelled
    in the candidates' flows (``STATS[43]``, each a Bellman-Ford run) on the 30 random streams, for about
    as many candidates solved (only ties between equal-IL flows can differ; the optimum of each
    candidate is tested against the fixed-cap ILP in test_stream_fast.py)."""
    from tempanon.stream import fast

    _, grown_on = _run(fast.MOVES | fast.XFER_START)
    _, grown_off = _run(fast.MOVES & ~fast.XFER_START)
    solved_on, cycles_on = grown_on[36], grown_on[43]
    solved_off, cycles_off = grown_off[36], grown_off[43]
    assert solved_on > 0 and abs(solved_on - solved_off) <= 0.1 * solved_off
    assert cycles_on < 0.7 * cycles_off


def _with_moves(moves, fn):
    from tempanon.stream import fast

    saved = fast.MOVES
    fast.MOVES = moves
    try:
        return fn()
    finally:
        fast.MOVES = saved


_RUNS: dict = {}


def _run(moves, beta=10.0, cases=30):
    """The random streams' fingerprints with the kernel's ``moves`` and the growth of every ``STATS``
    counter in that run, computed once per (moves, beta, cases, TIE) in this module: the kernel is
    deterministic (the fingerprints are asserted), and most tests compare a flag's run with the
    default's, which is the same run every time."""
    from tempanon.stream import fast

    key = (int(moves), float(beta), int(cases), float(fast.TIE))
    if key not in _RUNS:
        before = fast.STATS.copy()
        fps = _with_moves(moves, lambda: _stream_fingerprints(beta=beta, cases=cases))
        _RUNS[key] = (fps, fast.STATS - before)
    return _RUNS[key]


def test_whole_gains_changes_nothing_without_ties():
    """With ``TIE = 0`` every gain of a whole-number cost model is a whole number, so "lowers the true IL
    by more than 0.5" is "lowers it at all": the same placements with and without ``WHOLE_GAINS`` (a
    threshold above 1 would fail this). And the flag does change the default's placements (with ties)."""
    from tempanon.stream import fast

    saved_tie = fast.TIE
    fast.TIE = 0.0
    try:
        on = _run(fast.MOVES | fast.WHOLE_GAINS, cases=15)[0]
        off = _run(fast.MOVES & ~fast.WHOLE_GAINS, cases=15)[0]
    finally:
        fast.TIE = saved_tie
    assert on == off
    with_ties = _run(fast.MOVES | fast.WHOLE_GAINS, cases=15)[0]
    assert with_ties != MAIN_FINGERPRINTS[:15]


def test_whole_gains_changes_nothing_without_whole_costs():
    """With a suppression price of 10.5 the costs are not whole numbers (no ties' perturbation, no
    threshold): the same placements with and without ``WHOLE_GAINS``."""
    from tempanon.stream import fast

    on = _run(fast.MOVES | fast.WHOLE_GAINS, beta=10.5, cases=15)[0]
    off = _run(fast.MOVES & ~fast.WHOLE_GAINS, beta=10.5, cases=15)[0]
    assert on == off


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, -1e-6, 3.0, 1e300]), max_size=150))
def test_stable_order_is_numpy_mergesort(keys):
    """``_fastkernel.stable_order`` (fill_candidates' sort, no allocation) is ``np.argsort(kind="mergesort")``
    (stable: equal keys in index order), on lists with many ties."""
    from tempanon.stream import fast

    k = fast.kernel()
    key = np.array(keys, dtype=np.float64)
    nc = len(key)
    idx = np.full(nc + 1, -7, dtype=np.int64)
    tmp = np.zeros(nc + 1, dtype=np.int64)
    k.stable_order(key, np.int64(nc), idx, tmp)
    assert idx[:nc].tolist() == np.argsort(key, kind="mergesort").tolist()
    assert idx[nc] == -7
