"""The exact step on counts (tempanon's broader step problem; moves named after Wang, Xu, Wong, Fu, ICDM 2010, Section V).

The step problem
----------------
One step of the online publisher with ``step="exact"`` (see :mod:`tempanon.stream.publisher`) is
tempanon's *broader step problem* over the pending snapshots (broader than the paper's Definition 2,
which keeps every inherited ``|P_j[s]|`` fixed and is solved by :mod:`tempanon.stream.recycle`:
here every pending placement may change, suppressed records of a home before the window may be
recycled, and suppressions may be priced by ``defer``) over the pending snapshots ``first..last`` (``last = t`` the new snapshot):
records with the same home ``h`` and sensitive value ``s`` are interchangeable, so the problem is a
:class:`~tempanon.stream.window.WindowProblem` over *groups* ``g = (h, s)`` of ``u_g`` records, and a
solution is a count matrix ``x[g, p]`` (records of ``g`` placed in pending snapshot ``first + p``,
costing ``mu(first + p - h)`` each, Equation 1) plus ``z[g]`` suppressed (``beta_s`` each, Equation 2),
with ``sum_p x[g, p] + z[g] = u_g``, ``x[g, p] = 0`` outside ``lo_g..hi_g`` and every pending snapshot
l-eligible (Definition 1: ``l * n[p, s] <= N[p]``).

The algorithm (the paper's notions, reconstructed on counts)
------------------------------------------------------------
1. **Initial solution** (Section IV): the previous placement of the old records, and the new snapshot
   with its most frequent value suppressed until l-eligible (``model.initial_suppression``; done by the
   publisher before the step). With the previous window l-eligible it is feasible.
2. **Repositions scored by their information gain** (Equations 5-6): the gain of a move is the
   decrease of the information loss. :func:`local_search` applies, best gain first,

   * *LP-Repositions* (l-eligibility-preserving): one record of a group moved between two options —
     a pending snapshot in its reach or its suppressed set — such that both touched snapshots stay
     l-eligible. Moving a record forward into the new snapshot, recycling a suppressed record into a
     snapshot, and un-suppressing a record of the new snapshot are all of this kind;
   * *LL-Repositions* (l-eligibility-losing) followed by the move that repairs them: a first move that
     leaves at most two snapshots not l-eligible, then a second move that makes every snapshot
     l-eligible again. A *relay* (a record leaves ``D'[j]`` for a later snapshot and a record of the
     same value takes its place in ``D'[j]`` from an earlier snapshot or from its suppressed set) is such
     a pair. The pair is kept only when the total gain is positive; otherwise the LL-Reposition is
     rolled back (never applied).

   Inside a group records are interchangeable, so timestamp order (Theorem 1) is restored when the
   counts are mapped back to records (earliest records to the earliest snapshots, the latest ones
   suppressed; ``publisher._apply_counts``): by convexity (C3), ``mu(a) + mu(b') <= mu(a') + mu(b)`` for
   crossing assignments, so the order-preserving assignment is never dearer.
   Every applied move strictly lowers the information loss (a finite set of integer count matrices), so
   the search terminates; the work per move is one vectorized scan of ``G x (P+1)^2`` single moves and
   one batched scan of ``pair_candidates`` such tables for pairs (our counterpart of Theorem 2's
   bound). An LP-Reposition moves as many records of its group at once as stay l-eligible one after
   the other (*multi-unit moves*, :func:`local_search`), so large counts cost one scan, not one per
   record.

Why a certificate, and when the fallback runs
---------------------------------------------
The paper's OptimalReposition improves the new snapshot by moves *into* it. For the step problem as
solved here (every pending placement may change) that is **not** always optimal, and neither is any
fixed-size exchange neighbourhood: the new snapshot can make a *cheaper arrangement of the old
snapshots* possible even when it is itself l-eligible. Example (``l = 2``, ``w = 2``, linear ``mu``):
``D[0] = {c, d, g}``, ``D[1] = {a, a, a, b}``. At step 1 the optimum moves ``c, d, g`` into ``D'[1]``
(IL 3; suppressing an ``a`` costs 10). At step 2, ``D[2] = {e, f}`` arrives (l-eligible); the optimum
moves two ``a`` into ``D'[2]`` and **puts c, d, g back** into ``D'[0]`` (IL 2). Reaching an optimum takes at
least three simultaneous single moves (e.g. ``d, g`` back to ``D'[0]`` and one ``a`` forward); no
pair of moves improves (``tests/stream/test_stream_reposition.py::test_new_snapshot_restructures_old``).
The problem with several snapshots is a bin-assignment problem with diversity side constraints; we
found no polynomial exact algorithm, and the LP relaxation is not integral (it leaves 7-63% of real steps
with a gap). So the combinatorial result is returned only with a proof of optimality, a **certificate**:

* ``single place`` — one pending snapshot (the first step): :func:`single_place_optimum` is exact
  (for a cap ``K`` the best table is the greedy one over a partition matroid, see its docstring);
* ``lower bound`` — the IL equals :func:`lower_bound`, the largest of three valid bounds: every
  record at its cheapest option (eligibility ignored); the *merged* bound (a union of l-eligible
  tables is l-eligible, so the placed records of any solution form one l-eligible table); the
  *new-snapshot* bound (the least excess over those cheapest options that makes ``D'[last]``
  l-eligible). It fires where suppression is forced (e.g. a value too frequent for ``l``) and where the
  step costs only what the new snapshot needs;
* ``LP bound`` — the IL equals the optimum of the step ILP's LP relaxation
  (:func:`tempanon.stream.window.lp_lower_bound`), rounded up when every cost is an integer (then
  every IL is). The relaxation is not integral, but after rounding it matches the optimum on most
  real steps (92% of the steps the bounds above leave open on daily use-of-force, l = 2, w = 4), and
  an LP costs ~0.3-1 ms (HiGHS without presolve, :mod:`tempanon.stream.highs`) against ~25 ms for
  HiGHS's MILP; ``lp_certificate=False`` switches it off;
* ``integral LP`` — the LP relaxation's optimal point is integral: it is then an optimal solution of
  the step ILP, and it is returned instead of the combinatorial one;
* ``w = 0`` and ``IL 0`` (the publisher's own fast paths): with ``w = 0`` every snapshot is alone and
  the initial solution is the cheapest suppression for any ``beta`` (``model.eligible_cap``); a step
  that changes nothing and suppresses nothing costs 0.

Otherwise the step ILP is solved exactly: by our branch and bound on the caps of its cap form
(:func:`tempanon.stream.window.solve_step_bb`; its root is the LP relaxation above, its incumbent the
combinatorial solution, its nodes warm-started LPs), or, if that search is cut short, by HiGHS's MILP
(:func:`~tempanon.stream.window.solve_step_caps`, then :func:`~tempanon.stream.window.solve_window_ilp`
with the combinatorial IL as a cutoff). The publisher counts each path (``steps_solved_combinatorially``,
``steps_solved_by_ilp``, ``ilp_step_solvers``) and how often the combinatorial IL already was the
optimum the ILP proved (``steps_ilp_confirmed_combinatorial``). No step is returned that is not proven
optimal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tempanon.stream.window import WindowProblem, lp_relaxation

_TOL = 1e-9


@dataclass
class StepTables:
    """Dense tables of a step problem over the pending snapshots ``first..first + P - 1``.

    ``cost[g, p]`` (``inf`` where snapshot ``first + p`` is out of reach) and, in column ``P``, the
    suppression cost ``beta_g``; ``value[g]`` the compact sensitive value of group ``g`` (``0..m-1``)."""

    first: int
    P: int
    cost: np.ndarray  # (G, P + 1)
    allowed: np.ndarray  # (G, P + 1) bool, column P (suppression) always True
    value: np.ndarray  # (G,)
    m: int
    count: np.ndarray  # (G,)
    l: int


@dataclass
class RepositionResult:
    """A solution of the step problem: ``x[g, p]`` records of group ``g`` placed in snapshot
    ``first + p`` and ``z[g]`` suppressed; ``il`` its information loss; ``certificate`` the reason it is
    proven optimal (``None``: not proven, the caller must solve the ILP); ``lower_bound`` the bound
    used; ``moves`` the number of applied LP-Repositions and repaired LL-Repositions."""

    x: np.ndarray
    z: np.ndarray
    il: float
    certificate: str | None
    lower_bound: float
    moves: int


def step_tables(p: WindowProblem, first: int, last: int) -> StepTables:
    """The cost and reach tables of problem ``p`` over the pending snapshots ``first..last``."""
    P = int(last - first + 1)
    places = first + np.arange(P)
    inside = (places[None, :] >= p.lo[:, None]) & (places[None, :] <= p.hi[:, None])
    d = np.clip(places[None, :] - p.home[:, None], 0, len(p.mu) - 1)
    cost = np.where(inside, np.asarray(p.mu, float)[d], np.inf)
    beta_g = np.asarray(p.beta, float)[p.code]
    val = p.code if p.value is None else p.value
    uniq, vidx = np.unique(val, return_inverse=True)
    G = len(p.home)
    return StepTables(
        first=int(first),
        P=P,
        cost=np.concatenate([cost, beta_g[:, None]], axis=1),
        allowed=np.concatenate([inside, np.ones((G, 1), dtype=bool)], axis=1),
        value=vidx.astype(np.int64),
        m=max(len(uniq), 1),
        count=np.asarray(p.count, dtype=np.int64),
        l=int(p.l),
    )


def information_loss(tab: StepTables, xz: np.ndarray) -> float:
    """Equation (2) of the count matrix ``xz`` (``(G, P + 1)``, last column suppressed)."""
    c = np.where(xz > 0, tab.cost, 0.0)
    return float((c * xz).sum())


def place_counts(tab: StepTables, xz: np.ndarray) -> np.ndarray:
    """``n[p, s]``: records of value ``s`` placed in snapshot ``first + p``."""
    n = np.zeros((tab.P, tab.m), dtype=np.int64)
    np.add.at(n.T, tab.value, xz[:, : tab.P])
    return n


def eligible(n: np.ndarray, l: int) -> np.ndarray:
    """Definition 1 for every row of ``n`` (the empty table is l-eligible)."""
    return l * n.max(axis=1, initial=0) <= n.sum(axis=1)


def _move_tables(n: np.ndarray, l: int) -> tuple[np.ndarray, np.ndarray]:
    """``rem[p, s]``: snapshot ``p`` is l-eligible after removing one record of value ``s`` (and has
    one); ``add[p, s]``: it is l-eligible after adding one. Whatever its state before. ``n`` may
    have leading dimensions (several count tables at once)."""
    N = n.sum(axis=-1)[..., None]
    m = n.shape[-1]
    if m >= 2:
        part = -np.partition(-n, 1, axis=-1)
        top1, top2 = part[..., :1], part[..., 1:2]
    else:
        top1, top2 = n[..., :1], np.zeros_like(n[..., :1])
    is_top = n == top1
    unique_top = is_top & (is_top.sum(axis=-1)[..., None] == 1)
    max_after_rem = np.where(unique_top, np.maximum(top1 - 1, top2), top1)
    rem = (n >= 1) & (l * max_after_rem <= N - 1)
    add = l * np.maximum(top1, n + 1) <= N + 1
    return rem, add


def _extend(tab: StepTables, rem: np.ndarray, add: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group and option (``P`` snapshots + suppression): removal / addition keeps eligibility."""
    G = len(tab.value)
    ones = np.ones((G, 1), dtype=bool)
    return (
        np.concatenate([rem.T[tab.value], ones], axis=1),
        np.concatenate([add.T[tab.value], ones], axis=1),
    )


@np.errstate(invalid="ignore")
def _best_single(tab: StepTables, xz: np.ndarray, n: np.ndarray) -> tuple[float, tuple[int, int, int] | None]:
    """The best LP-Reposition (a single move keeping every snapshot l-eligible)."""
    rem, add = _move_tables(n, tab.l)
    rem_g, add_g = _extend(tab, rem, add)
    src = (xz > 0) & rem_g  # (G, O)
    dst = tab.allowed & add_g
    O = tab.P + 1
    delta = tab.cost[:, None, :] - np.where(src, tab.cost, np.inf)[:, :, None]  # (G, src, dst)
    ok = src[:, :, None] & dst[:, None, :] & ~np.eye(O, dtype=bool)[None]
    delta = np.where(ok, delta, np.inf)
    k = int(np.argmin(delta))
    best = float(delta.flat[k])
    if not best < -_TOL:
        return 0.0, None
    g, a, b = np.unravel_index(k, delta.shape)
    return best, (int(g), int(a), int(b))


def _apply(tab: StepTables, xz: np.ndarray, n: np.ndarray, g: int, a: int, b: int, k: int = 1) -> None:
    xz[g, a] -= k
    xz[g, b] += k
    s = tab.value[g]
    if a < tab.P:
        n[a, s] -= k
    if b < tab.P:
        n[b, s] += k


def _units(tab: StepTables, xz: np.ndarray, n: np.ndarray, g: int, a: int, b: int) -> int:
    """How many records of group ``g`` the LP-Reposition ``a -> b`` can move at once, every
    snapshot l-eligible after each of them (all are l-eligible before; each unit has the same gain).

    Removing ``u`` records of value ``s`` from ``D'[a]`` keeps ``l * max(n[a, s] - u, M) <= N[a] - u``
    (``M`` the largest count of another value) iff ``u <= N[a] - l * M``; adding ``u`` to ``D'[b]``
    keeps ``l * max(top, n[b, s] + u) <= N[b] + u`` iff ``(l - 1) * u <= N[b] - l * n[b, s]``. Both
    bounds are monotone in ``u``, so every intermediate state is l-eligible too."""
    k = int(xz[g, a])
    s = tab.value[g]
    l = tab.l
    if a < tab.P:
        row = n[a]
        other = np.delete(row, s).max(initial=0)
        k = min(k, int(row.sum()) - l * int(other))
    if b < tab.P:
        row = n[b]
        k = min(k, (int(row.sum()) - l * int(row[s])) // (l - 1))
    return max(k, 1)


@np.errstate(invalid="ignore")
def _best_pair(tab: StepTables, xz: np.ndarray, n: np.ndarray, candidates: int) -> tuple[float, list | None]:
    """The best LL-Reposition with its repair: a first move (any, l-eligibility may be lost in at most
    two snapshots) followed by a second move after which every snapshot is l-eligible.

    The ``candidates`` first moves of highest gain are tried, each with its best repair (the first
    in ``(group, source, destination)`` order among equals); the first candidate of the best total
    gain wins. All candidates are evaluated at once on stacked copies of the counts."""
    O = tab.P + 1
    P = tab.P
    has = xz > 0
    d1 = tab.cost[:, None, :] - np.where(has, tab.cost, np.inf)[:, :, None]
    not_same = ~np.eye(O, dtype=bool)
    ok1 = has[:, :, None] & tab.allowed[:, None, :] & not_same[None]
    d1 = np.where(ok1, d1, np.inf)
    flat = np.flatnonzero(np.isfinite(d1))
    if not len(flat):
        return 0.0, None
    order = flat[np.argsort(d1.flat[flat], kind="stable")][:candidates]
    C = len(order)
    g1, a1, b1 = np.unravel_index(order, d1.shape)
    first_gain = d1.flat[order]
    cc = np.arange(C)
    # the state after each first move (the LL-Reposition), one copy per candidate
    xzc = np.repeat(xz[None], C, axis=0)
    xzc[cc, g1, a1] -= 1
    xzc[cc, g1, b1] += 1
    nc = np.repeat(n[None], C, axis=0)
    s1 = tab.value[g1]
    src_in, dst_in = a1 < P, b1 < P
    nc[cc[src_in], a1[src_in], s1[src_in]] -= 1
    nc[cc[dst_in], b1[dst_in], s1[dst_in]] += 1
    bad = ~(tab.l * nc.max(axis=2, initial=0) <= nc.sum(axis=2))  # (C, P)
    n_bad = bad.sum(axis=1)
    # a feasible first move is already an LP-Reposition (or has no gain); more than two broken
    # snapshots cannot be repaired by one move
    live = (n_bad >= 1) & (n_bad <= 2)
    if not live.any():
        return 0.0, None
    rem, add = _move_tables(nc, tab.l)  # (C, P, m)
    ones = np.ones((C, len(tab.value), 1), dtype=bool)
    rem_g = np.concatenate([rem.transpose(0, 2, 1)[:, tab.value, :], ones], axis=2)  # (C, G, O)
    add_g = np.concatenate([add.transpose(0, 2, 1)[:, tab.value, :], ones], axis=2)
    has2 = xzc > 0
    src = has2 & rem_g
    dst = tab.allowed[None] & add_g
    ok = src[:, :, :, None] & dst[:, :, None, :] & not_same[None, None]
    # every snapshot not l-eligible must be the source or the destination of the repair
    bad_o = np.concatenate([bad, np.zeros((C, 1), dtype=bool)], axis=1)  # (C, O)
    cover = (bad_o[:, :, None].astype(np.int64) + bad_o[:, None, :]) == n_bad[:, None, None]
    ok &= cover[:, None]
    ok[cc, g1, b1, a1] = False  # not the plain undo
    delta = np.where(ok, tab.cost[None, :, None, :] - np.where(has2, tab.cost[None], np.inf)[:, :, :, None], np.inf)
    delta = delta.reshape(C, -1)
    j = np.argmin(delta, axis=1)
    total = np.where(live, first_gain + delta[cc, j], np.inf)
    c = int(np.argmin(total))
    if not total[c] < -_TOL:
        return 0.0, None
    g2, a2, b2 = np.unravel_index(int(j[c]), d1.shape)
    return float(total[c]), [(int(g1[c]), int(a1[c]), int(b1[c])), (int(g2), int(a2), int(b2))]


def local_search(tab: StepTables, xz: np.ndarray, *, pair_candidates: int = 4, max_moves: int | None = None) -> tuple[np.ndarray, int]:
    """Apply LP-Repositions and repaired LL-Repositions, best information gain first, until none has a
    positive gain. ``xz`` must be feasible (every snapshot l-eligible); the result is feasible and its
    IL never higher. Returns the new count matrix and the number of applied moves (records moved by
    LP-Repositions plus applied pairs).

    *Multi-unit moves*: the best LP-Reposition moves as many records of its group at once as keep
    both snapshots l-eligible after every single one (:func:`_units`); each of them is an
    LP-Reposition with the same gain, so this is the same search without one scan per record (large
    counts, e.g. weekly snapshots of ~1,000 records). It ends, as before, at a local optimum: no
    LP-Reposition and no repaired LL-Reposition among the candidates gains."""
    xz = xz.copy()
    n = place_counts(tab, xz)
    moves = 0
    limit = max_moves if max_moves is not None else 4 * int(tab.count.sum()) + 16
    while moves < limit:
        _, mv = _best_single(tab, xz, n)
        if mv is not None:
            k = min(_units(tab, xz, n, *mv), limit - moves)
            _apply(tab, xz, n, *mv, k)
            moves += k
            continue
        if pair_candidates <= 0:
            break
        _, mvs = _best_pair(tab, xz, n, pair_candidates)
        if mvs is None:
            break
        for mv in mvs:
            _apply(tab, xz, n, *mv)
        moves += 1
    return xz, moves


def single_place_optimum(tab: StepTables) -> np.ndarray:
    """Exact optimum of a step with one pending snapshot (``P == 1``).

    Each record is kept (cost ``cost[g, 0]``) or suppressed (``beta_g``); its *saving* when kept is
    ``beta_g - cost[g, 0]``. For a cap ``K`` (at most ``K`` records per value, at least ``l * K``
    records), the kept sets are the independent sets of a partition matroid (capacity ``K`` per value)
    with at least ``l * K`` elements; the best is greedy: every record of positive saving in order of
    saving (at most ``K`` per value), then, if fewer than ``l * K``, the largest remaining savings up
    to ``l * K`` (a best basis of the matroid truncated at that size). Every l-eligible table with
    maximum count ``K`` is feasible for cap ``K``, so the minimum over ``K = 0..max`` is the optimum."""
    G = len(tab.value)
    out = np.zeros((G, 2), dtype=np.int64)
    out[:, 1] = tab.count
    reach = tab.allowed[:, 0]
    if not reach.any():
        return out
    # one entry per record that can be kept: (value, saving), sorted by value then saving descending
    gidx = np.repeat(np.flatnonzero(reach), tab.count[reach])
    if not len(gidx):
        return out
    save = tab.cost[gidx, 1] - tab.cost[gidx, 0]
    val = tab.value[gidx]
    order = np.lexsort((-save, val))
    gidx, save, val = gidx[order], save[order], val[order]
    rank = np.arange(len(val)) - np.searchsorted(val, val, side="left")  # rank inside its value
    kmax = int(rank.max()) + 1
    Ks = np.arange(1, kmax + 1)
    # candidates of cap K: rank < K; their number sum_s min(K, c_s)
    n_cand = np.searchsorted(np.sort(rank), Ks, side="left")
    # the positive savings are first inside each value: kept for cap K are those of rank < K
    pos = save > _TOL
    pos_rank = np.sort(rank[pos])
    pos_save_by_rank = np.bincount(rank[pos], weights=save[pos], minlength=kmax)
    n_pos = np.searchsorted(pos_rank, Ks, side="left")
    gain_pos = np.cumsum(pos_save_by_rank)[:kmax]
    need = tab.l * Ks - n_pos
    feasible = n_cand >= tab.l * Ks
    gain = np.where(feasible & (need <= 0), gain_pos, -np.inf)
    fill = Ks[feasible & (need > 0)]  # non-positive savings needed to reach l * K records
    if len(fill):
        # gain[K] adds the largest need[K] savings among the non-positive ones of rank < K. Without
        # the rank condition this is a prefix sum of all of them, an upper bound ``ub``: the caps
        # are evaluated exactly in order of ``ub`` (a cap-by-record table per chunk) until ``ub``
        # falls below the best gain found, which no remaining cap can then reach.
        rest = np.flatnonzero(~pos)
        rest = rest[np.argsort(-save[rest], kind="stable")]
        r_rank, r_save = rank[rest], save[rest]
        prefix = np.concatenate([[0.0], np.cumsum(r_save)])
        ub = gain_pos[fill - 1] + prefix[np.minimum(need[fill - 1], len(rest))]
        by_ub = np.argsort(-ub, kind="stable")
        fill, ub = fill[by_ub], ub[by_ub]
        best = float(gain.max()) if len(gain) else -np.inf
        i, chunk = 0, 8
        while i < len(fill):
            if np.isfinite(best) and ub[i] < best - 1e-9 * max(1.0, abs(best)):
                break
            Kc = fill[i : i + chunk]
            cand = r_rank[None, :] < Kc[:, None]
            take = cand & (np.cumsum(cand, axis=1) <= need[Kc - 1][:, None])
            gain[Kc - 1] = gain_pos[Kc - 1] + (take * r_save[None, :]).sum(axis=1)
            best = max(best, float(gain[Kc - 1].max()))
            i += len(Kc)
            chunk = min(2 * chunk, max(8, 2_000_000 // max(len(rest), 1)))
    best_keep = np.zeros(len(val), dtype=bool)
    if len(gain) and gain.max() > _TOL:
        K = int(np.argmax(gain)) + 1  # the smallest best cap
        best_keep = (rank < K) & pos
        if tab.l * K > n_pos[K - 1]:
            rest = np.flatnonzero((rank < K) & ~pos)
            best_keep[rest[np.argsort(-save[rest], kind="stable")][: tab.l * K - n_pos[K - 1]]] = True
    kept = np.bincount(gidx[best_keep], minlength=G)
    out[:, 0] = kept
    out[:, 1] = tab.count - kept
    return out


def _min_cost(tab: StepTables) -> np.ndarray:
    """``c_min[g]``: the cheapest option of group ``g`` (a snapshot in reach or suppression)."""
    return np.where(tab.allowed, tab.cost, np.inf).min(axis=1)


def _one_place(tab: StepTables, keep: np.ndarray, drop: np.ndarray, rows: np.ndarray) -> float:
    """Optimum of the single-snapshot problem over groups ``rows`` with per-record costs ``keep`` (in
    the snapshot) and ``drop`` (out of it)."""
    sub = StepTables(0, 1, np.stack([keep[rows], drop[rows]], axis=1), np.ones((len(rows), 2), dtype=bool),
                     tab.value[rows], tab.m, tab.count[rows], tab.l)
    return information_loss(sub, single_place_optimum(sub))


def lower_bound(tab: StepTables) -> float:
    """A valid lower bound on the step optimum, the largest of three (each record's cost is written
    ``c_min + excess``, ``c_min`` its cheapest option with eligibility ignored):

    * ``trivial``: ``sum_g u_g * c_min[g]``;
    * ``merged``: the union of l-eligible tables is l-eligible (``l * sum_j n[j, s] <= sum_j N[j]``), so
      the placed records of any feasible solution form one l-eligible table; with each placed record
      charged ``c_min`` (no more than it pays) and each suppressed one ``beta``, the single-snapshot
      optimum over all records (:func:`single_place_optimum`) is a lower bound;
    * ``new snapshot``: ``trivial`` plus the least excess that makes the new snapshot ``D'[last]``
      l-eligible: its own records (only option: stay or be suppressed) cost ``beta`` when left out, and
      an older record costs its excess ``cost[g, last] - c_min[g]`` when put in (and 0 when left out,
      its excess elsewhere is >= 0); every record's excess is counted at most once.
    """
    c_min = _min_cost(tab)
    trivial = float((tab.count * c_min).sum())
    G = len(tab.value)
    if G == 0:
        return 0.0
    P = tab.P
    placeable = tab.allowed[:, :P].any(axis=1)
    keep_min = np.where(placeable, np.where(tab.allowed[:, :P], tab.cost[:, :P], np.inf).min(axis=1), np.inf)
    rows = np.flatnonzero(placeable)
    merged = float((tab.count[~placeable] * tab.cost[~placeable, P]).sum())
    if len(rows):
        merged += _one_place(tab, keep_min, tab.cost[:, P], rows)
    best = max(trivial, merged)
    if P > 1:
        reach = np.flatnonzero(tab.allowed[:, P - 1])
        if len(reach):
            only_last = ~tab.allowed[:, : P - 1].any(axis=1)
            keep = tab.cost[:, P - 1] - c_min
            drop = np.where(only_last, tab.cost[:, P] - c_min, 0.0)
            best = max(best, trivial + _one_place(tab, keep, drop, reach))
    return best


def optimal_reposition(
    p: WindowProblem,
    first: int,
    last: int,
    x0: np.ndarray,
    z0: np.ndarray,
    *,
    pair_candidates: int = 4,
    lp_certificate: bool = True,
) -> RepositionResult:
    """OptimalReposition of one step (Figure 4): the local search of LP- and LL-Repositions from the
    initial solution ``(x0, z0)`` (``x0[g, p]`` records of group ``g`` in snapshot ``first + p``,
    feasible), with a certificate of optimality when one applies (see the module docstring). The
    caller solves the step ILP when ``certificate`` is ``None``."""
    tab = step_tables(p, first, last)
    G = len(tab.value)
    if G == 0:
        return RepositionResult(np.zeros((0, tab.P), np.int64), np.zeros(0, np.int64), 0.0, "empty", 0.0, 0)
    if tab.P == 1:
        xz = single_place_optimum(tab)
        il = information_loss(tab, xz)
        return RepositionResult(xz[:, :1], xz[:, 1], il, "single place", il, 0)
    xz0 = np.concatenate([np.asarray(x0, dtype=np.int64), np.asarray(z0, dtype=np.int64)[:, None]], axis=1)
    lb = lower_bound(tab)
    il0 = information_loss(tab, xz0)
    if il0 <= lb + _TOL:
        return RepositionResult(xz0[:, : tab.P], xz0[:, tab.P], il0, "lower bound", lb, 0)
    xz, moves = local_search(tab, xz0, pair_candidates=pair_candidates)
    il = information_loss(tab, xz)
    cert = "lower bound" if il <= lb + _TOL else None
    if cert is None and lp_certificate:
        # the LP relaxation's optimum, rounded up when every IL is an integer
        relax = lp_relaxation(p)
        lp = relax.value
        finite = tab.cost[np.isfinite(tab.cost)]
        if np.all(finite == np.round(finite)):
            lp = float(np.ceil(lp - 1e-6))
        if il <= lp + _TOL:
            cert, lb = "LP bound", max(lb, lp)
        elif relax.solution is not None:
            # the LP's optimal point is integral: an optimal solution of the step ILP itself
            sol = relax.solution
            xz = np.zeros((G, tab.P + 1), dtype=np.int64)
            np.add.at(xz, (sol.var_group, sol.var_place - first), sol.var_count)
            xz[:, tab.P] = sol.suppressed
            il = information_loss(tab, xz)
            cert, lb = "integral LP", max(lb, relax.value)
    return RepositionResult(xz[:, : tab.P], xz[:, tab.P], il, cert, lb, moves)


def check_counts(tab: StepTables, x: np.ndarray, z: np.ndarray) -> None:
    """Assert that ``(x, z)`` conserves records, respects reach and leaves every snapshot l-eligible."""
    xz = np.concatenate([x, z[:, None]], axis=1)
    assert np.all(xz >= 0), "negative count"
    assert np.array_equal(xz.sum(axis=1), tab.count), "records not conserved"
    assert not np.any((xz > 0) & ~tab.allowed), "a record placed out of reach"
    assert np.all(eligible(place_counts(tab, xz), tab.l)), "a snapshot is not l-eligible"
