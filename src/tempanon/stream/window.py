"""Integer programs over a window of snapshots (Wang, Xu, Wong, Fu, ICDM 2010, Sections III-V).

Records with the same home snapshot ``h`` and sensitive value ``s`` are interchangeable for the
information loss and for l-eligibility, so every program here works on *groups* ``g = (h, s)`` with
``u_g`` records, and on the numbers (not the identities) of records moved:

* ``y[g, j]``: records of group ``g`` published in snapshot ``j`` (``j`` a pending snapshot with
  ``h <= j <= h + w``), costing ``mu(j - h)`` each;
* ``z[g]``: records of group ``g`` suppressed, costing ``beta_s`` each;
* ``N[j] = sum_g y[g, j]`` the size of ``D'[j]``.

Constraints: ``sum_j y[g, j] + z[g] = u_g`` and, for every pending ``j`` and value ``s``,
``l * sum_{g with value s} y[g, j] <= N[j]`` (``D'[j]`` l-eligible, Definition 1). Objective: the
information loss of Equation (2). This is the ILP of the *first window* (Section III: all snapshots of
the window pending, nothing published yet), of each step of the broader step problem (``step="exact"``; not the paper's Definition 2, see
:mod:`tempanon.stream.publisher`) and, over a whole stream, the *offline* lower bound
(:mod:`tempanon.stream.offline`). It is solved by HiGHS through :func:`scipy.optimize.milp`.
(An equivalent formulation with integer caps ``k[j]`` — ``n[j, s] <= k[j]``, ``l * k[j] <= N[j]``, the
rest a totally unimodular network flow once the caps are fixed — was measured no faster with HiGHS on
the step problems, ~30 ms CPU each, so the direct one is kept.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from tempanon.errors import NoSolutionError
from tempanon.stream.highs import INFEASIBLE, OPTIMAL, csc32, make_lp


@dataclass
class WindowProblem:
    """Groups of interchangeable records and the pending snapshots they may be published in.

    ``lo[g]..hi[g]`` is the range of snapshot indices group ``g`` may be placed in (the caller
    intersects ``[h, h + w]`` with the pending snapshots); ``places`` are the pending snapshot indices.
    """

    home: np.ndarray  # (G,) home snapshot index of each group
    code: np.ndarray  # (G,) sensitive value code
    count: np.ndarray  # (G,) number of records
    lo: np.ndarray  # (G,) first allowed place
    hi: np.ndarray  # (G,) last allowed place
    l: int
    mu: np.ndarray  # mu[0..w]
    beta: np.ndarray  # beta by code
    value: np.ndarray | None = None  # (G,) sensitive value of each group when ``code`` only indexes beta
    # the variables and (place, value) rows, shared by the model forms built for the same problem
    _layout: tuple | None = field(default=None, init=False, repr=False, compare=False)
    # the cap-form LP of a step (its relaxation and branch and bound share one warm HiGHS instance)
    _step_lp: object | None = field(default=None, init=False, repr=False, compare=False)

    def layout(self) -> tuple:
        """``(var_group, var_place, places, place_idx, m, pairs, pair_idx)``: the placement variables,
        the pending places and each variable's place, and the (place, value) pairs that occur (key
        ``place_idx * m + value``) with each variable's pair. Computed once per problem (the LP
        relaxation and the step ILP of one step share it)."""
        if self._layout is None:
            var_group, var_place = _variables(self)
            places, place_idx = np.unique(var_place, return_inverse=True)
            gval = self.code if self.value is None else self.value
            m = int(gval.max()) + 1 if len(gval) else 1
            key = place_idx.astype(np.int64) * m + gval[var_group]
            pairs, pair_idx = np.unique(key, return_inverse=True)
            self._layout = (var_group, var_place, places, place_idx, m, pairs, pair_idx)
        return self._layout


@dataclass
class WindowSolution:
    """``var_group[k]`` records... of group ``var_group[k]`` placed at ``var_place[k]`` (``var_count[k]``
    of them); ``suppressed[g]`` records of group ``g`` suppressed; ``il`` the objective value;
    ``bound`` a proven lower bound on the optimum (equal to ``il`` when solved to optimality)."""

    var_group: np.ndarray
    var_place: np.ndarray
    var_count: np.ndarray
    suppressed: np.ndarray
    il: float
    bound: float
    optimal: bool
    method: str


def _variables(p: WindowProblem) -> tuple[np.ndarray, np.ndarray]:
    width = np.maximum(p.hi - p.lo + 1, 0)
    var_group = np.repeat(np.arange(len(p.home)), width)
    starts = np.repeat(p.lo, width)
    offsets = np.arange(len(var_group)) - np.repeat(np.cumsum(width) - width, width)
    return var_group, starts + offsets


def _direct_model(p: WindowProblem, upper_bound: float | None = None):
    """The direct form of the window ILP (module doc): variables ``[y (V) | z (G) | N (P)]``; returns
    ``(var_group, var_place, cost, constraints, bounds, integrality)``."""
    G = len(p.home)
    var_group, var_place, places, place_idx, m, pairs, pair_idx = p.layout()
    V = len(var_group)
    P = len(places)
    # variable layout: [y (V) | z (G) | N (P)]
    n_var = V + G + P
    cost = np.concatenate([p.mu[var_place - p.home[var_group]], p.beta[p.code], np.zeros(P)])
    rows, cols, vals, lo_b, hi_b = [], [], [], [], []
    # (a) conservation per group: sum_j y[g, j] + z[g] = u_g
    rows += [var_group, np.arange(G)]
    cols += [np.arange(V), V + np.arange(G)]
    vals += [np.ones(V), np.ones(G)]
    lo_b.append(p.count.astype(float))
    hi_b.append(p.count.astype(float))
    r0 = G
    # (b) N[j] = sum_g y[g, j]
    rows += [r0 + place_idx, r0 + np.arange(P)]
    cols += [np.arange(V), V + G + np.arange(P)]
    vals += [np.ones(V), -np.ones(P)]
    lo_b.append(np.zeros(P))
    hi_b.append(np.zeros(P))
    r0 += P
    # (c) l * n[j, s] - N[j] <= 0 for every (place, value) pair that occurs
    R = len(pairs)
    rows += [r0 + pair_idx, r0 + np.arange(R)]
    cols += [np.arange(V), V + G + pairs // m]
    vals += [np.full(V, float(p.l)), -np.ones(R)]
    lo_b.append(np.full(R, -np.inf))
    hi_b.append(np.zeros(R))
    r0 += R
    if upper_bound is not None:
        # objective cutoff: sum cost * x <= upper_bound (with a relative tolerance)
        nz = np.flatnonzero(cost[: V + G])
        rows.append(np.full(len(nz), r0))
        cols.append(nz)
        vals.append(cost[nz])
        lo_b.append(np.array([-np.inf]))
        hi_b.append(np.array([float(upper_bound) + 1e-7 * max(1.0, abs(float(upper_bound)))]))
        r0 += 1
    A = sparse.csc_array(  # column-wise, as HiGHS takes it (no conversion inside milp)
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r0, n_var)
    )
    A = csc32(A.data, A.indices, A.indptr, A.shape)
    total = float(p.count.sum())
    ub = np.concatenate([p.count[var_group], p.count, np.full(P, total)]).astype(float)
    constraints = LinearConstraint(A, np.concatenate(lo_b), np.concatenate(hi_b))
    bounds = Bounds(np.zeros(n_var), ub)
    integrality = np.concatenate([np.ones(V + G), np.zeros(P)])
    return var_group, var_place, cost, constraints, bounds, integrality


@dataclass
class LPRelaxation:
    """The LP relaxation of the window ILP: its optimum ``value`` (a lower bound on the IL) and, when
    the LP's optimal point happens to be integral, that point as a solution of the ILP (``solution``;
    then it is an optimal one)."""

    value: float
    solution: WindowSolution | None


def lp_relaxation(p: WindowProblem) -> LPRelaxation:
    """Solve the LP relaxation of the window ILP. It is solved in the cap form (:func:`_caps_arrays`):
    with continuous caps, ``n[j, s] <= k[j] <= N[j] / l`` projects onto ``l * n[j, s] <= N[j]``, so its
    optimum is the direct form's (``tests/stream/test_stream_reposition.py`` checks it against the direct
    form with presolve on); the warm HiGHS instance is kept on ``p`` for :func:`solve_step_bb`, whose
    root node this is. HiGHS's presolve is off: on these small LPs it costs more than it saves."""
    if len(p.home) == 0:
        return LPRelaxation(0.0, None)
    step = _step_lp(p)
    status, fun, xall = step.root
    if status != OPTIMAL:
        return LPRelaxation(0.0, None)
    V, G = step.V, step.G
    xr = xall[: V + G]
    if np.abs(xr - np.rint(xr)).max(initial=0.0) > 1e-7:
        return LPRelaxation(fun, None)
    return LPRelaxation(fun, step.solution(xr, "lp"))


def lp_lower_bound(p: WindowProblem) -> float:
    """The optimum of the window ILP's LP relaxation: a lower bound on its IL. With
    integral costs (integral ``mu`` and ``beta``) every IL is an integer, so the bound may be rounded
    up; on the daily use-of-force steps the rounded bound equals the ILP optimum in ~92% of the
    steps the combinatorial certificates leave open (measured), which makes it a certificate."""
    return lp_relaxation(p).value


def solve_window_ilp(
    p: WindowProblem, *, time_limit: float | None = None, mip_rel_gap: float = 0.0, upper_bound: float | None = None
) -> WindowSolution:
    """Solve the window ILP exactly (or, with ``time_limit``, return the best solution found and the
    proven lower bound ``bound``). ``upper_bound``: the IL of a known feasible solution (e.g. the
    combinatorial OptimalReposition's), added as the constraint ``IL <= upper_bound``; it prunes HiGHS's
    search and does not change the optimum (the known solution satisfies it)."""
    G = len(p.home)
    if G == 0:
        empty = np.zeros(0, dtype=np.int64)
        return WindowSolution(empty, empty, empty, empty, 0.0, 0.0, True, "empty")
    var_group, var_place, cost, constraints, bounds, integrality = _direct_model(p, upper_bound)
    V = len(var_group)
    n_var = len(cost)
    options = {"mip_rel_gap": mip_rel_gap, "presolve": True}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    res = milp(cost, constraints=constraints, integrality=integrality, bounds=bounds, options=options)
    if res.x is None and time_limit is not None:
        # no incumbent within the time limit: fall back on "suppress everything" (always feasible);
        # the lower bound is HiGHS's dual bound, or else the LP relaxation's optimum
        z = p.count.astype(np.int64)
        empty = np.zeros(0, dtype=np.int64)
        il = float(p.beta[p.code] @ z)
        bound = getattr(res, "mip_dual_bound", None)
        if bound is None or not np.isfinite(bound):
            lp = milp(cost, constraints=constraints, integrality=np.zeros(n_var), bounds=bounds)
            bound = float(lp.fun) if lp.status == 0 else 0.0
        return WindowSolution(empty, empty, empty, z, il, float(min(bound, il)), False, "milp")
    if res.x is None:  # suppressing everything is always feasible, so this is a solver failure
        raise NoSolutionError(f"HiGHS found no solution of the window ILP: {res.message}")
    x = np.rint(res.x).astype(np.int64)
    y, z = x[:V], x[V : V + G]
    il = float(cost[: V + G] @ x[: V + G])
    bound = getattr(res, "mip_dual_bound", None)
    optimal = res.status == 0 and mip_rel_gap == 0.0
    if bound is None or not np.isfinite(bound):
        bound = il if optimal else 0.0
    keep = y > 0
    return WindowSolution(var_group[keep], var_place[keep], y[keep], z, il, float(min(bound, il)), bool(optimal), "milp")


def _caps_arrays(p: WindowProblem):
    """The cap form of the window ILP (see :func:`solve_step_caps`) as arrays, the constraint matrix
    built column-wise directly (no sparse-matrix conversion: the steps build thousands of these small
    models). Variables ``[y (V) | z (G) | k (P)]``; rows: conservation (G), ``n[j, s] - k[j] <= 0``
    (R, one per (place, value) pair), ``N[j] - l * k[j] >= 0`` (P). Returns ``(var_group, var_place,
    cost, (indptr, indices, data, n_rows), row_lo, row_hi, col_ub)``."""
    G = len(p.home)
    var_group, var_place, places, place_idx, m, pairs, pair_idx = p.layout()
    V, P, R = len(var_group), len(places), len(pairs)
    cost = np.concatenate([p.mu[var_place - p.home[var_group]], p.beta[p.code], np.zeros(P)])
    pair_place = pairs // m  # sorted: the pairs of each place are contiguous
    per_place = np.bincount(pair_place, minlength=P)
    # y columns: (group row, pair row, size row), 1 each; z columns: the group row; k columns: its
    # pair rows (-1 each) then its size row (-l)
    y_idx = np.stack([var_group, G + pair_idx, G + R + place_idx], axis=1).ravel()
    k_len = per_place + 1
    k_start = np.cumsum(k_len) - k_len
    k_idx = np.empty(R + P, dtype=np.int64)
    k_val = np.empty(R + P)
    first_pair = np.cumsum(per_place) - per_place
    pos = k_start[pair_place] + (np.arange(R) - first_pair[pair_place])
    k_idx[pos], k_val[pos] = G + np.arange(R), -1.0
    k_idx[k_start + per_place], k_val[k_start + per_place] = G + R + np.arange(P), -float(p.l)
    indices = np.concatenate([y_idx, np.arange(G), k_idx])
    data = np.concatenate([np.ones(3 * V + G), k_val])
    indptr = np.concatenate([[0], np.cumsum(np.concatenate([np.full(V, 3), np.ones(G, np.int64), k_len]))])
    row_lo = np.concatenate([p.count.astype(float), np.full(R, -np.inf), np.zeros(P)])
    row_hi = np.concatenate([p.count.astype(float), np.zeros(R), np.full(P, np.inf)])
    ub = np.concatenate([p.count[var_group], p.count, np.full(P, float(p.count.sum()))]).astype(float)
    return var_group, var_place, cost, (indptr, indices, data, G + R + P), row_lo, row_hi, ub


@dataclass
class _StepLP:
    """The cap-form LP of a step in one warm HiGHS instance (:func:`tempanon.stream.highs.make_lp`) and
    its root solve (all caps free)."""

    p: WindowProblem
    lp: object
    var_group: np.ndarray
    var_place: np.ndarray
    cost: np.ndarray
    ub: np.ndarray
    V: int
    G: int
    P: int
    root: tuple

    def solution(self, xr: np.ndarray, method: str) -> WindowSolution | None:
        """The integral point ``xr = [y | z]`` as a solution, ``None`` if it is not one."""
        x = np.rint(xr).astype(np.int64)
        y = x[: self.V]
        keep = y > 0
        il = float(self.cost[: self.V + self.G] @ x)
        sol = WindowSolution(self.var_group[keep], self.var_place[keep], y[keep], x[self.V :], il, il, True, method)
        try:
            check_solution(self.p, sol)
        except AssertionError:
            return None
        return sol


def _step_lp(p: WindowProblem) -> _StepLP:
    if p._step_lp is None:
        var_group, var_place, cost, csc, row_lo, row_hi, ub = _caps_arrays(p)
        lp = make_lp(cost, csc, row_lo, row_hi, np.zeros(len(cost)), ub)
        V, G = len(var_group), len(p.home)
        p._step_lp = _StepLP(p, lp, var_group, var_place, cost, ub, V, G, len(cost) - V - G, lp.solve())
    return p._step_lp


def _caps_model(p: WindowProblem):
    """The cap form of the window ILP (see :func:`solve_step_caps`) for ``milp``: variables ``[y (V) |
    z (G) | k (P)]``; returns ``(var_group, var_place, cost, A, lo, hi, ub, integrality)``."""
    var_group, var_place, cost, (indptr, indices, data, n_rows), lo_b, hi_b, ub = _caps_arrays(p)
    A = csc32(data, indices, indptr, (n_rows, len(cost)))
    n_flow = len(var_group) + len(p.home)
    integrality = np.concatenate([np.zeros(n_flow), np.ones(len(cost) - n_flow)])
    return var_group, var_place, cost, A, lo_b, hi_b, ub, integrality


def _solve_caps(p: WindowProblem, time_limit: float | None) -> tuple[WindowSolution | None, object]:
    """Solve the cap form; ``None`` when HiGHS returns no point or a non-integral one."""
    var_group, var_place, cost, A, lo_b, hi_b, ub, integrality = _caps_model(p)
    V, G = len(var_group), len(p.home)
    options = {"mip_rel_gap": 0.0}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    res = milp(cost, constraints=LinearConstraint(A, lo_b, hi_b), integrality=integrality, bounds=Bounds(0, ub), options=options)
    if res.x is None or np.abs(res.x[: V + G] - np.rint(res.x[: V + G])).max(initial=0.0) > 1e-6:
        return None, res
    x = np.rint(res.x).astype(np.int64)
    y, z = x[:V], x[V : V + G]
    il = float(cost[: V + G] @ x[: V + G])
    optimal = res.status == 0
    bound = getattr(res, "mip_dual_bound", None)
    if bound is None or not np.isfinite(bound):
        bound = il if optimal else 0.0
    keep = y > 0
    sol = WindowSolution(var_group[keep], var_place[keep], y[keep], z, il, float(min(bound, il)), bool(optimal), "milp-caps")
    try:
        check_solution(p, sol)
    except AssertionError:
        return None, res
    return sol, res


def solve_step_caps(p: WindowProblem) -> WindowSolution | None:
    """The window ILP in its *cap* form, used for the online steps: integer caps ``k[j]`` (the largest
    count of a value in ``D'[j]``) with ``n[j, s] <= k[j]`` and ``N[j] >= l * k[j]``; the placements
    ``y`` and suppressions ``z`` are continuous. For fixed caps the rest is a network flow (source ->
    group -> (place, value) with capacity ``k[j]`` -> place with lower bound ``l * k[j]``; suppression
    arcs to the sink), whose constraint matrix is totally unimodular, so HiGHS branches on the caps
    only and the final LP solution is integral. Returns ``None`` if HiGHS returns a non-optimal,
    non-integral or infeasible point (the caller then solves :func:`solve_window_ilp`). Measured 14x
    faster than the direct form on daily stops windows at ``w = 8``, about as fast on the small
    daily use-of-force windows."""
    if len(p.home) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return WindowSolution(empty, empty, empty, empty, 0.0, 0.0, True, "empty")
    sol, res = _solve_caps(p, None)
    if sol is None or res.status != 0:
        return None
    return sol


@dataclass
class StepBranchAndBound:
    """Result of :func:`solve_step_bb`. ``proven``: the search finished, so the optimum is ``solution``
    when it is not ``None`` and otherwise the incumbent passed as ``upper_bound`` (nothing cheaper
    exists); ``proven = False`` (node limit, or an LP point HiGHS did not return as expected) leaves the
    step to :func:`solve_step_caps`. ``lps``: the LP relaxations solved."""

    solution: WindowSolution | None
    proven: bool
    lps: int


def solve_step_bb(p: WindowProblem, upper_bound: float | None = None, *, node_limit: int = 400) -> StepBranchAndBound:
    """The step ILP by our own branch and bound on the caps of its cap form (:func:`solve_step_caps`),
    each node an LP relaxation solved by HiGHS without presolve, warm-started from the previous node
    (:class:`tempanon.stream.highs.WarmLP`).

    Only the caps ``k[j]`` (one per pending snapshot) must be integral: once they are, the rest is a
    network flow with a totally unimodular matrix and integral right-hand sides, so a vertex of the
    node's LP with integral caps is an integral solution (checked all the same; an unexpected point
    ends the search unproven). Depth first, the lower branch ``k[j] <= floor`` first; a node is pruned
    when its LP bound (rounded up when every cost is an integer, as every IL then is) cannot beat the
    incumbent, ``upper_bound`` (the IL of the combinatorial solution) to begin with. On the MILP steps of
    the benchmark the search needs the root and ~4 more LPs (~2.3 ms in all with the warm start, ~11 ms
    through ``milp``) where HiGHS's MILP takes ~25 ms on these small problems (its fixed cost per MILP),
    measured on the recorded steps of daily use-of-force and stops at ``l = 3``, ``w = 4``;
    ``tests/stream/test_stream_reposition.py`` checks the optimum against the direct-form ILP."""
    G = len(p.home)
    if G == 0:
        empty = np.zeros(0, dtype=np.int64)
        if upper_bound is not None and float(upper_bound) <= 0.0:  # IL 0 is not strictly cheaper than the incumbent
            return StepBranchAndBound(None, True, 0)
        return StepBranchAndBound(WindowSolution(empty, empty, empty, empty, 0.0, 0.0, True, "empty"), True, 0)
    step = _step_lp(p)
    lp, cost, ub, V, P = step.lp, step.cost, step.ub, step.V, step.P
    caps = np.arange(V + G, V + G + P)
    finite = cost[: V + G]
    integral = bool(np.all(finite == np.round(finite)))
    best = np.inf if upper_bound is None else float(upper_bound)
    tol = 1e-9 * max(1.0, abs(best)) if np.isfinite(best) else 0.0
    stack = [(np.zeros(P), ub[V + G :].copy())]
    found, lps = None, 0
    while stack:
        if lps >= node_limit:
            return StepBranchAndBound(None, False, lps)
        k_lo, k_hi = stack.pop()
        lps += 1
        if lps == 1:  # the root, solved already by lp_relaxation (or just now by _step_lp)
            status, fun, xall = step.root
        else:
            lp.set_bounds(caps, k_lo, k_hi)
            status, fun, xall = lp.solve()
        if status == INFEASIBLE:
            continue
        if status != OPTIMAL:
            return StepBranchAndBound(None, False, lps)
        bound = float(np.ceil(fun - 1e-6)) if integral else fun
        if bound >= best - tol:
            continue
        k = xall[V + G :]
        frac = np.abs(k - np.rint(k))
        j = int(np.argmax(frac))
        if frac[j] > 1e-7:
            f = float(np.floor(k[j]))
            up_lo, down_hi = k_lo.copy(), k_hi.copy()
            up_lo[j], down_hi[j] = f + 1.0, f
            stack.append((up_lo, k_hi))  # explored after the lower branch
            stack.append((k_lo, down_hi))
            continue
        xr = xall[: V + G]
        if np.abs(xr - np.rint(xr)).max(initial=0.0) > 1e-6:
            return StepBranchAndBound(None, False, lps)
        sol = step.solution(xr, "branch-and-bound")
        if sol is None:
            return StepBranchAndBound(None, False, lps)
        il = sol.il
        if il < best - tol:
            best, found = il, sol
            tol = 1e-9 * max(1.0, abs(best))
    return StepBranchAndBound(found, True, lps)


def solve_window_caps(p: WindowProblem, *, time_limit: float | None = None) -> WindowSolution:
    """The window ILP in cap form (see :func:`solve_step_caps`) with an optional time limit, for the
    offline bound: returns the best solution found (``il``), HiGHS's proven dual bound (``bound``) and
    whether it is optimal. Falls back on :func:`solve_window_ilp` if the point is not integral."""
    if len(p.home) == 0:
        return solve_window_ilp(p)
    sol, _ = _solve_caps(p, time_limit)
    return sol if sol is not None else solve_window_ilp(p, time_limit=time_limit)


def check_solution(p: WindowProblem, s: WindowSolution) -> None:
    """Assert that a solution conserves records, respects reach, and leaves every place l-eligible
    (used by the tests; raises AssertionError)."""
    placed = np.bincount(s.var_group, weights=s.var_count, minlength=len(p.home))
    assert np.array_equal(placed.astype(np.int64) + s.suppressed, p.count), "records not conserved"
    assert np.all(s.var_place >= p.lo[s.var_group]) and np.all(s.var_place <= p.hi[s.var_group])
    if len(s.var_group):
        gval = p.code if p.value is None else p.value
        m = int(gval.max()) + 1
        places, pidx = np.unique(s.var_place, return_inverse=True)
        counts = np.bincount(pidx * m + gval[s.var_group], weights=s.var_count, minlength=len(places) * m).reshape(len(places), m)
        bad = np.flatnonzero(p.l * counts.max(axis=1) > counts.sum(axis=1))
        assert not len(bad), f"snapshot {places[bad[0]]} not {p.l}-eligible"
