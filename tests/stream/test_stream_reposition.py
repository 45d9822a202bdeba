"""OptimalReposition on counts (tempanon.stream.reposition): exactness of what it certifies, feasibility
and monotonicity of its local search, the exact single-snapshot solver, the cap-form step ILP, and the
example where the new snapshot makes a cheaper arrangement of the old snapshots possible."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tempanon.stream.model import CostModel, initial_suppression
from tempanon.stream.publisher import StreamPublisher
from tempanon.stream.reposition import (
    check_counts,
    information_loss,
    local_search,
    lower_bound,
    optimal_reposition,
    single_place_optimum,
    step_tables,
)
from stream_active import active_records
from tempanon.stream.window import (
    WindowProblem,
    check_solution,
    lp_relaxation,
    solve_step_bb,
    solve_step_caps,
    solve_window_ilp,
)


def _random_problem(rng, l, w, n_values, T, max_count, quadratic):
    """Groups (home, value) over snapshots 0..T-1, pending window = the last min(T, w+1) snapshots."""
    last = T - 1
    first = max(0, last - w)
    homes, vals, counts = [], [], []
    for h in range(max(0, last - 2 * w), T):
        for v in range(n_values):
            c = int(rng.integers(0, max_count + 1))
            if c:
                homes.append(h), vals.append(v), counts.append(c)
    home, val, count = np.array(homes, np.int64), np.array(vals, np.int64), np.array(counts, np.int64)
    mu = np.array([d * d if quadratic else d for d in range(w + 1)], float)
    beta = rng.choice([1.0, 2.0, 5.0, 10.0], n_values)
    lo, hi = np.maximum(home, first), np.minimum(home + w, last)
    keep = lo <= hi
    p = WindowProblem(home[keep], val[keep], count[keep], lo[keep], hi[keep], l, mu, beta)
    return p, first, last


def _previous_window_start(p, first, last):
    """A start as the publisher has it: the old records placed optimally in first..last-1 (the previous
    window, l-eligible) and the new snapshot's records by the initial solution (Section IV)."""
    G = len(p.home)
    P = last - first + 1
    xz = np.zeros((G, P + 1), np.int64)
    old = p.home < last
    if old.any() and P > 1:
        q = WindowProblem(p.home[old], p.code[old], p.count[old], p.lo[old], np.minimum(p.hi[old], last - 1), p.l, p.mu, p.beta)
        s = solve_window_ilp(q)
        idx = np.flatnonzero(old)
        np.add.at(xz, (idx[s.var_group], s.var_place - first), s.var_count)
        xz[idx, P] = s.suppressed
    elif old.any():
        xz[old, P] = p.count[old]
    new = np.flatnonzero(p.home == last)
    if len(new):
        counts = np.bincount(p.code[new], weights=p.count[new]).astype(np.int64)
        supp = initial_suppression(counts, p.l)
        xz[new, P] = supp[p.code[new]]
        xz[new, P - 1] = p.count[new] - xz[new, P]
    return xz


@settings(max_examples=80, deadline=None)
@given(
    st.integers(0, 10**6), st.sampled_from([2, 3, 4, 5]), st.integers(1, 4), st.integers(2, 6),
    st.integers(1, 6), st.integers(1, 3), st.booleans(),
)
def test_certified_results_are_optimal_and_all_results_feasible(seed, l, w, n_values, T, max_count, quadratic):
    rng = np.random.default_rng(seed)
    p, first, last = _random_problem(rng, l, w, n_values, T, max_count, quadratic)
    tab = step_tables(p, first, last)
    xz0 = _previous_window_start(p, first, last)
    check_counts(tab, xz0[:, :-1], xz0[:, -1])  # the assumed start: every pending snapshot l-eligible
    res = optimal_reposition(p, first, last, xz0[:, :-1], xz0[:, -1])
    check_counts(tab, res.x, res.z)
    assert res.il == pytest.approx(information_loss(tab, np.concatenate([res.x, res.z[:, None]], 1)))
    assert res.il <= information_loss(tab, xz0) + 1e-9  # never worse than the initial solution
    opt = solve_window_ilp(p)
    assert res.il >= opt.il - 1e-9  # a feasible solution, so never below the optimum
    assert res.lower_bound <= opt.il + 1e-9  # the bound is a valid lower bound
    if res.certificate is not None:
        assert res.il == pytest.approx(opt.il, abs=1e-9), f"certificate {res.certificate!r} on a non-optimal result"


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3, 5]), st.integers(1, 4), st.integers(1, 6), st.booleans())
def test_single_place_optimum_equals_brute_force(seed, l, n_values, n_groups, quadratic):
    """One snapshot (index 3) and groups from homes 0..3: keeping a record costs mu(3 - h), which can
    exceed a small beta (non-positive savings, needed only to reach l * K records)."""
    rng = np.random.default_rng(seed)
    home = rng.integers(0, 4, n_groups)
    code = rng.integers(0, n_values, n_groups)
    count = rng.integers(1, 4, n_groups)
    mu = np.array([d * d if quadratic else d for d in range(4)], float)
    beta = rng.choice([1.0, 2.0, 5.0, 10.0], n_values)
    p = WindowProblem(home, code, count, np.full(n_groups, 3), np.full(n_groups, 3), l, mu, beta)
    tab = step_tables(p, 3, 3)
    xz = single_place_optimum(tab)
    check_counts(tab, xz[:, :1], xz[:, 1])
    best = np.inf
    for keep in itertools.product(*[range(c + 1) for c in count]):
        keep = np.array(keep, np.int64)
        n = np.bincount(code, weights=keep, minlength=n_values)
        if n.sum() and l * n.max() > n.sum():
            continue
        best = min(best, float(keep @ tab.cost[:, 0] + (count - keep) @ tab.cost[:, 1]))
    assert information_loss(tab, xz) == pytest.approx(best)
    assert information_loss(tab, xz) == pytest.approx(solve_window_ilp(p).il)


def test_single_place_optimum_prefers_cheap_records_and_respects_costs():
    # one place, l = 2: values a (3 records, beta 10), b (1 record, beta 1); keeping b lets one a stay
    p = WindowProblem(np.array([0, 0]), np.array([0, 1]), np.array([3, 1]), np.array([0, 0]), np.array([0, 0]), 2,
                      np.array([0.0]), np.array([10.0, 1.0]))
    tab = step_tables(p, 0, 0)
    xz = single_place_optimum(tab)
    assert xz.tolist() == [[1, 2], [1, 0]]
    assert information_loss(tab, xz) == 20.0


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3, 5]), st.integers(1, 4), st.integers(2, 5), st.booleans())
def test_local_search_is_monotone_and_feasible(seed, l, w, T, quadratic):
    rng = np.random.default_rng(seed)
    p, first, last = _random_problem(rng, l, w, 4, T, 3, quadratic)
    tab = step_tables(p, first, last)
    xz0 = np.zeros((len(p.home), tab.P + 1), np.int64)
    xz0[:, -1] = p.count  # suppress everything: always feasible
    xz, moves = local_search(tab, xz0, pair_candidates=6)
    check_counts(tab, xz[:, :-1], xz[:, -1])
    il0, il = information_loss(tab, xz0), information_loss(tab, xz)
    assert il <= il0
    assert (moves == 0) == (il == il0)
    assert lower_bound(tab) <= solve_window_ilp(p).il + 1e-9 <= il + 1e-9


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3, 5]), st.integers(1, 4), st.integers(1, 5), st.booleans(), st.booleans())
def test_cap_form_step_ilp_equals_direct_form(seed, l, w, T, quadratic, per_group_prices):
    rng = np.random.default_rng(seed)
    p, _, _ = _random_problem(rng, l, w, 4, T, 3, quadratic)
    if per_group_prices and len(p.home):  # the --defer encoding: code = group, value = sensitive value
        p = WindowProblem(p.home, np.arange(len(p.home)), p.count, p.lo, p.hi, l, p.mu,
                          rng.choice([1.0, 3.0, 10.0], len(p.home)), value=p.code)
    direct = solve_window_ilp(p)
    caps = solve_step_caps(p)
    assert caps is not None
    check_solution(p, caps)
    assert caps.il == pytest.approx(direct.il)


@pytest.fixture(params=["warm", "milp"])
def lp_path(request, monkeypatch):
    """Run a test with the warm-started HiGHS instance and with the ``milp`` fallback."""
    from tempanon.stream import highs

    if request.param == "milp":
        monkeypatch.setenv("TEMPANON_HIGHS", "milp")
    elif not highs.fast_path_available():
        pytest.skip("this scipy does not ship the HiGHS bindings the fast path uses")
    return request.param


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 10**6), st.sampled_from([2, 3, 5]), st.integers(1, 4), st.integers(1, 5), st.booleans(),
       st.sampled_from(["none", "optimum", "above", "fractional"]))
@example(seed=68171, l=2, w=1, T=1, quadratic=False, incumbent="optimum")  # an empty step: IL 0 is not below the incumbent 0
def test_step_branch_and_bound_equals_direct_form(lp_path, seed, l, w, T, quadratic, incumbent):
    """Our branch and bound on the caps: the optimum of the direct-form ILP (HiGHS's MILP), with no
    incumbent, with the optimum as incumbent (then it proves that nothing is cheaper), with a worse one,
    and with fractional per-group prices (no rounding of the bounds)."""
    rng = np.random.default_rng(seed)
    p, _, _ = _random_problem(rng, l, w, 4, T, 3, quadratic)
    if incumbent == "fractional" and len(p.home):
        p = WindowProblem(p.home, np.arange(len(p.home)), p.count, p.lo, p.hi, l, p.mu,
                          rng.uniform(0.5, 6.0, len(p.home)), value=p.code)
    direct = solve_window_ilp(p)
    upper = {"none": None, "optimum": direct.il, "above": direct.il + 1.0, "fractional": None}[incumbent]
    bb = solve_step_bb(p, upper_bound=upper)
    assert bb.proven
    if incumbent == "optimum":
        assert bb.solution is None  # nothing strictly cheaper than the incumbent
    else:
        assert bb.solution is not None
        check_solution(p, bb.solution)
        assert bb.solution.il == pytest.approx(direct.il, rel=1e-9, abs=1e-9)


def test_step_branch_and_bound_node_limit_falls_back(lp_path):
    """A search cut short is reported unproven; the publisher then solves the step with HiGHS's MILP,
    and its summary names the solver of each ILP step."""
    rng = np.random.default_rng(7)
    for _ in range(200):  # a problem whose root LP has fractional caps
        p, _, _ = _random_problem(rng, 3, 3, 4, 4, 3, False)
        root = solve_step_bb(p)
        if root.lps > 1:
            break
    else:
        pytest.fail("no problem needing a branch found")
    assert not solve_step_bb(p, node_limit=1).proven
    pub = StreamPublisher(3, 2, sensitive="s", qi=["q"], cost="linear", suppression_cost=10, defer=0, step="exact")
    for t, vals in enumerate(["aab", "aaab", "ab", "ccab", "a", "bbca"]):
        pub.push(pd.DataFrame({"q": 0, "s": list(vals)}, index=np.arange(10 * t, 10 * t + len(vals))), label=str(t))
    pub.flush()
    s = pub.summary()
    assert sum(s["ilp_step_solvers"].values()) == s["steps_solved_by_ilp"]
    assert set(s["ilp_step_solvers"]) <= {"branch-and-bound", "highs-caps", "highs-direct"}


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3]), st.integers(1, 3), st.integers(1, 5))
def test_warm_lp_equals_milp_fallback(seed, l, w, T):
    """The warm-started HiGHS instance and the milp fallback give the same LP optimum, at the root and
    after the same bound changes (a warm start must not change the answer)."""
    from tempanon.stream import highs
    from tempanon.stream.window import _caps_arrays

    if not highs.fast_path_available():
        pytest.skip("this scipy does not ship the HiGHS bindings the fast path uses")
    rng = np.random.default_rng(seed)
    p, _, _ = _random_problem(rng, l, w, 4, T, 3, False)
    if not len(p.home):
        return
    vg, vp, cost, csc, lo, hi, ub = _caps_arrays(p)
    warm = highs.WarmLP(cost, csc, lo, hi, np.zeros(len(cost)), ub)
    cold = highs._MilpLP(cost, csc, lo, hi, np.zeros(len(cost)), ub)
    caps = np.arange(len(vg) + len(p.home), len(cost))
    for _ in range(4):
        a, b = warm.solve(), cold.solve()
        assert a[0] == b[0]
        if a[0] == highs.OPTIMAL:
            assert a[1] == pytest.approx(b[1], rel=1e-9, abs=1e-9)
        k_lo = rng.integers(0, 2, len(caps)).astype(float)
        k_hi = k_lo + rng.integers(0, 3, len(caps))
        warm.set_bounds(caps, k_lo, k_hi)
        cold.set_bounds(caps, k_lo, k_hi)


def test_new_snapshot_restructures_old():
    """l = 2, w = 2, linear mu, beta 10. Step 1: D[1] = {a, a, a, b} can only stay in D'[1], so c, d, g
    of D[0] move there (IL 3). Step 2: D[2] = {e, f} is l-eligible, yet the optimum moves two a into
    D'[2] and puts c, d, g back into D'[0] (IL 2; or an equivalent arrangement): at least three
    simultaneous moves (no pair improves), out of reach of LP- and LL-Repositions, so no certificate applies and the step ILP decides."""
    pub = StreamPublisher(2, 2, sensitive="s", qi=["q"], cost="linear", suppression_cost=10, step="exact")
    pub.push(pd.DataFrame({"q": [0, 0, 0], "s": ["c", "d", "g"]}, index=[0, 1, 2]), label="0")
    pub.push(pd.DataFrame({"q": [0] * 4, "s": ["a", "a", "a", "b"]}, index=[3, 4, 5, 6]), label="1")
    assert pub.information_loss() == 3.0
    pub.push(pd.DataFrame({"q": [0, 0], "s": ["e", "f"]}, index=[7, 8]), label="2")
    assert pub.information_loss() == 2.0
    t = pub.record_table().set_index("row")
    # optimal arrangements (IL 2) all move records of D[0] back home: e.g. c, d, g in D'[0] and two a
    # in D'[2], or d, g in D'[0], c and two a in D'[1], one a in D'[2]
    assert (t.loc[[0, 1, 2], "placed"] == 0).sum() >= 2
    assert (t.loc[[3, 4, 5], "placed"] == 2).sum() >= 1
    # the LP- and LL-Repositions cannot reach it: an exact method decides (here the LP relaxation's
    # optimal point is integral; otherwise the step ILP)
    last = pub.steps[-1]
    assert (last.method == "milp" and last.confirmed is False) or last.certificate == "integral LP"
    s = pub.summary()
    assert s["steps_solved_by_ilp"] + s["steps_solved_combinatorially"] == 3


def _group_problem(table, t, w, l, mu, beta, m):
    """Independent construction of step t's problem from the record table before the push."""
    oldest = max(0, t - w)
    act = active_records(table, oldest, w)
    return act, oldest


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3, 4]), st.integers(1, 3), st.sampled_from(["linear", "quadratic"]), st.integers(3, 6))
def test_publisher_steps_equal_step_ilp(seed, l, w, cost_kind, n_values):
    """Every step of the publisher (combinatorial or ILP path) has the optimum of the step problem, built
    here independently from the record table and solved by the direct-form ILP."""
    rng = np.random.default_rng(seed)
    values = [chr(97 + i) for i in range(n_values)]
    beta = {v: float(rng.choice([2.0, 5.0, 10.0])) for v in values}
    cost = CostModel.linear(w, 1.0, beta) if cost_kind == "linear" else CostModel.quadratic(w, beta)
    pub = StreamPublisher(l, w, sensitive="s", qi=["q"], cost=cost, defer=0, step="exact")  # the paper's pricing
    rid = 0
    for t in range(7):
        n = int(rng.integers(0, 7))
        p = np.array([3.0] + [1.0] * (n_values - 1))
        snap = pd.DataFrame({"q": np.zeros(n, int), "s": rng.choice(values, n, p=p / p.sum())}, index=np.arange(rid, rid + n))
        rid += n
        before = pub.record_table()
        pub.push(snap, label=str(t))
        after = pub.record_table().set_index("row")
        oldest = max(0, t - w)
        if len(before):
            act = active_records(before, oldest, w)
            rows = list(act["row"]) + list(snap.index)
        else:
            rows = list(snap.index)
        if not rows:
            continue
        home = after.loc[rows, "home"].to_numpy()
        code = after.loc[rows, "code"].to_numpy()
        placed = after.loc[rows, "placed"].to_numpy()
        bcode = cost.beta_array(pub.values)
        got = float(sum(bcode[c] if q < 0 else cost.mu[q - h] for h, c, q in zip(home, code, placed)))
        m = len(pub.values)
        key, cnt = np.unique(home * m + code, return_counts=True)
        gh, gc = key // m, key % m
        prob = WindowProblem(gh, gc, cnt, np.maximum(gh, oldest), np.minimum(gh + w, t), l, cost.mu, bcode)
        assert got == pytest.approx(solve_window_ilp(prob).il), f"step {t}: {pub.steps[-1]}"
    pub.flush()
    s = pub.summary()
    assert s["steps_solved_by_ilp"] + s["steps_solved_combinatorially"] == len(pub.steps)
    assert s["steps_ilp_confirmed_combinatorial"] <= s["steps_solved_by_ilp"]


def test_counterexample_needs_more_than_pairs():
    """The step-2 problem of test_new_snapshot_restructures_old on counts: from the previous window
    (c, d, g and a, a, a, b in D'[1]; e, f in D'[2]) no single move and no pair of moves improves
    (exhaustive pair search), yet the optimum is 1 lower."""
    # groups: (home, value): c, d, g (home 0), a x3, b (home 1), e, f (home 2)
    home = np.array([0, 0, 0, 1, 1, 2, 2])
    val = np.array([2, 3, 6, 0, 1, 4, 5])
    count = np.array([1, 1, 1, 3, 1, 1, 1])
    p = WindowProblem(home, val, count, home, np.minimum(home + 2, 2), 2, np.array([0.0, 1.0, 2.0]), np.full(7, 10.0))
    tab = step_tables(p, 0, 2)
    xz0 = np.zeros((7, 4), np.int64)
    xz0[[0, 1, 2, 3, 4], 1] = count[:5]
    xz0[[5, 6], 2] = 1
    assert information_loss(tab, xz0) == 3.0
    xz, moves = local_search(tab, xz0, pair_candidates=10_000)
    assert moves == 0 and information_loss(tab, xz) == 3.0
    assert solve_window_ilp(p).il == 2.0
    res = optimal_reposition(p, 0, 2, xz0[:, :3], xz0[:, 3], lp_certificate=False)
    assert res.certificate is None and res.lower_bound < 2.0 and res.il == 3.0
    # the LP relaxation's optimum is the ILP's here; whether HiGHS returns an integral optimal point
    # depends on its basis: either OptimalReposition returns that point ("integral LP") or the step's
    # branch and bound finds the optimum below the combinatorial IL and proves it
    assert lp_relaxation(p).value == pytest.approx(2.0)
    res = optimal_reposition(p, 0, 2, xz0[:, :3], xz0[:, 3])
    if res.certificate is None:
        bb = solve_step_bb(p, upper_bound=res.il)
        assert bb.proven and bb.solution is not None and bb.solution.il == 2.0
        check_solution(p, bb.solution)
    else:
        assert res.certificate == "integral LP" and res.il == 2.0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3]), st.integers(1, 3), st.integers(2, 5), st.floats(0.3, 3.0))
def test_lp_certificate_with_fractional_costs(seed, l, w, T, scale):
    """The LP bound certifies a step only when the combinatorial IL reaches it; it is rounded up only
    when every cost is an integer. With costs scaled by a fraction nothing may be rounded, and every
    certified result must still be the ILP optimum."""
    rng = np.random.default_rng(seed)
    p, first, last = _random_problem(rng, l, w, 4, T, 3, False)
    p = WindowProblem(p.home, p.code, p.count, p.lo, p.hi, p.l, p.mu * scale, p.beta * scale + 0.37)
    xz0 = _previous_window_start(p, first, last)
    res = optimal_reposition(p, first, last, xz0[:, :-1], xz0[:, -1])
    opt = solve_window_ilp(p)
    assert res.lower_bound <= opt.il + 1e-6
    if res.certificate is not None:
        assert res.il == pytest.approx(opt.il, abs=1e-6), res.certificate


def test_lp_certificate_proves_steps_the_combinatorial_bounds_leave_open():
    """On random windows the LP bound (rounded up: integral costs) certifies some steps that the three
    combinatorial bounds do not, and each of them is the ILP optimum."""
    rng = np.random.default_rng(11)
    by_lp = 0
    for _ in range(150):
        p, first, last = _random_problem(rng, 2, 3, 4, 5, 3, False)
        xz0 = _previous_window_start(p, first, last)
        without = optimal_reposition(p, first, last, xz0[:, :-1], xz0[:, -1], lp_certificate=False)
        res = optimal_reposition(p, first, last, xz0[:, :-1], xz0[:, -1])
        if res.certificate == "LP bound":
            assert without.certificate is None
            assert res.il == pytest.approx(solve_window_ilp(p).il)
            by_lp += 1
    assert by_lp > 0


# --- fast paths of the search against their one-at-a-time counterparts -------------------------


def _reference_best_pair(tab, xz, n, candidates):
    """The LL-Reposition search one candidate at a time (the scan the batched search replaced)."""
    from tempanon.stream.reposition import _apply, _extend, _move_tables, eligible

    O = tab.P + 1
    has = xz > 0
    with np.errstate(invalid="ignore"):  # inf - inf where neither option is open; masked just below
        d1 = tab.cost[:, None, :] - np.where(has, tab.cost, np.inf)[:, :, None]
    d1 = np.where(has[:, :, None] & tab.allowed[:, None, :] & ~np.eye(O, dtype=bool)[None], d1, np.inf)
    flat = np.flatnonzero(np.isfinite(d1))
    if not len(flat):
        return 0.0, None
    best, best_moves = -1e-9, None
    for k in flat[np.argsort(d1.flat[flat], kind="stable")][:candidates]:
        g1, a1, b1 = (int(v) for v in np.unravel_index(k, d1.shape))
        _apply(tab, xz, n, g1, a1, b1)
        try:
            bad = np.flatnonzero(~eligible(n, tab.l))
            if len(bad) == 0 or len(bad) > 2:
                continue
            rem, add = _move_tables(n, tab.l)
            rem_g, add_g = _extend(tab, rem, add)
            has2 = xz > 0
            ok = (has2 & rem_g)[:, :, None] & (tab.allowed & add_g)[:, None, :] & ~np.eye(O, dtype=bool)[None]
            for q in bad:
                ok &= ((np.arange(O)[:, None] == q) | (np.arange(O)[None, :] == q))[None]
            ok[g1, b1, a1] = False
            with np.errstate(invalid="ignore"):  # inf - inf only where ok is False
                delta = np.where(ok, tab.cost[:, None, :] - np.where(has2, tab.cost, np.inf)[:, :, None], np.inf)
            j = int(np.argmin(delta))
            total = float(d1.flat[k]) + float(delta.flat[j])
            if total < best:
                g2, a2, b2 = np.unravel_index(j, delta.shape)
                best, best_moves = total, [(g1, a1, b1), (int(g2), int(a2), int(b2))]
        finally:
            _apply(tab, xz, n, g1, b1, a1)
    return (0.0, None) if best_moves is None else (best, best_moves)


def _random_feasible_state(rng, p, first, last):
    """A feasible count matrix: the initial solution, then a few random single moves that keep every
    snapshot l-eligible (so the states are varied, not only local optima)."""
    from tempanon.stream.reposition import _apply, eligible, place_counts

    tab = step_tables(p, first, last)
    xz = _previous_window_start(p, first, last)
    n = place_counts(tab, xz)
    for _ in range(int(rng.integers(0, 6))):
        g = int(rng.integers(0, len(p.home)))
        a, b = (int(v) for v in rng.integers(0, tab.P + 1, 2))
        if a == b or xz[g, a] == 0 or not tab.allowed[g, b]:
            continue
        _apply(tab, xz, n, g, a, b)
        if not eligible(n, tab.l).all():
            _apply(tab, xz, n, g, b, a)
    return tab, xz, n


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3, 5]), st.integers(1, 4), st.integers(2, 6), st.integers(1, 5), st.booleans())
def test_batched_pair_search_equals_one_at_a_time(seed, l, w, T, max_count, quadratic):
    from tempanon.stream.reposition import _best_pair

    rng = np.random.default_rng(seed)
    p, first, last = _random_problem(rng, l, w, 4, T, max_count, quadratic)
    if not len(p.home):
        return
    tab, xz, n = _random_feasible_state(rng, p, first, last)
    for candidates in (1, 4, 9):
        want = _reference_best_pair(tab, xz.copy(), n.copy(), candidates)
        got = _best_pair(tab, xz.copy(), n.copy(), candidates)
        assert got[1] == want[1]
        assert got[0] == pytest.approx(want[0])


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3, 5]), st.integers(1, 4), st.integers(2, 6), st.integers(1, 40), st.booleans())
def test_multi_unit_move_count_equals_one_at_a_time(seed, l, w, T, max_count, quadratic):
    """``_units`` is the number of records of the best LP-Reposition that can move one after the
    other with every snapshot l-eligible after each (checked by applying single moves)."""
    from tempanon.stream.reposition import _apply, _best_single, _units, eligible

    rng = np.random.default_rng(seed)
    p, first, last = _random_problem(rng, l, w, 4, T, max_count, quadratic)
    if not len(p.home):
        return
    tab, xz, n = _random_feasible_state(rng, p, first, last)
    _, mv = _best_single(tab, xz, n)
    if mv is None:
        return
    k = _units(tab, xz, n, *mv)
    xs, ns, steps = xz.copy(), n.copy(), 0
    while xs[mv[0], mv[1]] > 0:
        _apply(tab, xs, ns, *mv)
        if not eligible(ns, tab.l).all():
            break
        steps += 1
    assert k == steps >= 1


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3, 5]), st.integers(1, 3), st.integers(2, 5), st.booleans())
def test_local_search_with_large_counts_ends_at_a_local_optimum(seed, l, w, T, quadratic):
    """Multi-unit moves on large counts (e.g. weekly snapshots): the result is feasible, never worse
    than the start, and no LP-Reposition nor repaired LL-Reposition improves it."""
    from tempanon.stream.reposition import _best_pair, _best_single, place_counts

    rng = np.random.default_rng(seed)
    p, first, last = _random_problem(rng, l, w, 4, T, 300, quadratic)
    if not len(p.home):
        return
    tab = step_tables(p, first, last)
    xz0 = _previous_window_start(p, first, last)
    xz, moves = local_search(tab, xz0)
    check_counts(tab, xz[:, :-1], xz[:, -1])
    assert information_loss(tab, xz) <= information_loss(tab, xz0)
    n = place_counts(tab, xz)
    assert _best_single(tab, xz, n)[1] is None
    assert _best_pair(tab, xz, n, 4)[1] is None
    assert moves <= 4 * int(tab.count.sum()) + 16


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3, 5]), st.integers(1, 4), st.integers(1, 6), st.booleans(), st.sampled_from([1.0, 0.37]))
def test_lp_relaxation_without_presolve_has_the_same_optimum(seed, l, w, T, quadratic, scale):
    """The LP relaxation is solved with HiGHS's presolve off; its optimum is the one with presolve on."""
    from scipy.optimize import milp

    from tempanon.stream.window import _direct_model, lp_relaxation

    rng = np.random.default_rng(seed)
    p, _, _ = _random_problem(rng, l, w, 4, T, 4, quadratic)
    if not len(p.home):
        return
    p = WindowProblem(p.home, p.code, p.count, p.lo, p.hi, l, p.mu * scale, p.beta * scale)
    _, _, cost, cons, bounds, integ = _direct_model(p)
    ref = milp(cost, constraints=cons, integrality=np.zeros_like(integ), bounds=bounds, options={"presolve": True})
    assert lp_relaxation(p).value == pytest.approx(float(ref.fun), rel=1e-9, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3, 5]), st.integers(1, 40), st.integers(1, 6))
def test_single_place_optimum_with_many_records_equals_cap_enumeration(seed, l, max_count, n_groups):
    """The caps that need non-positive savings are evaluated in bulk and pruned by an upper bound;
    the optimum equals an enumeration of every cap with a plain sort per cap."""
    rng = np.random.default_rng(seed)
    count = rng.integers(1, max_count + 1, n_groups)
    value = rng.integers(0, 3, n_groups)
    keep = rng.choice([0.0, 1.0, 2.0, 4.0], n_groups)
    drop = rng.choice([1.0, 2.0, 3.0], n_groups)
    from tempanon.stream.reposition import StepTables

    tab = StepTables(0, 1, np.stack([keep, drop], axis=1), np.ones((n_groups, 2), bool), value, 3, count, l)
    got = information_loss(tab, single_place_optimum(tab))
    # reference: for every cap K, keep the best records (<= K per value, >= l*K in all)
    rec_val = np.repeat(value, count)
    rec_save = np.repeat(drop - keep, count)
    best = float((count * drop).sum())
    for K in range(1, int(np.bincount(rec_val).max()) + 1):
        cand = []
        for v in range(3):
            s = np.sort(rec_save[rec_val == v])[::-1][:K]
            cand.extend(s.tolist())
        cand = np.sort(np.array(cand))[::-1]
        if len(cand) < l * K:
            continue
        take = max(l * K, int((cand > 0).sum()))
        best = min(best, float((count * drop).sum()) - float(cand[:take].sum()))
    assert got == pytest.approx(best)


def test_broken_private_bindings_fall_back_on_milp(monkeypatch):
    """If scipy's private HiGHS bindings are missing or behave unexpectedly, the self-test turns the
    fast path off and every LP goes through scipy.optimize.milp, with the same step optima."""
    from tempanon.stream import highs

    class Broken:  # has the names, but every call fails
        def __getattr__(self, name):
            raise RuntimeError(f"no {name} here")

    for hc in (None, Broken()):
        monkeypatch.setattr(highs, "_hc", hc)
        monkeypatch.setattr(highs, "_FAST", None)
        monkeypatch.delenv("TEMPANON_HIGHS", raising=False)
        assert not highs.fast_path_available()
        rng = np.random.default_rng(3)
        p, _, _ = _random_problem(rng, 2, 2, 4, 4, 3, False)
        assert isinstance(highs.make_lp(np.ones(1), (np.array([0, 1]), np.array([0]), np.array([1.0]), 1),
                                        np.zeros(1), np.ones(1), np.zeros(1), np.ones(1)), highs._MilpLP)
        bb = solve_step_bb(p)
        assert bb.proven and bb.solution.il == pytest.approx(solve_window_ilp(p).il)
