"""The paper's step: recycle-reposition, exactly Definition 2 (Wang, Xu, Wong, Fu, ICDM 2010, Sections III-V).

Window convention
-----------------
The paper's reposition window of size ``W`` holds ``W`` snapshots, so a record moves at most ``W - 1``
snapshots. tempanon's ``w`` (``--window``) is the *largest delay*: the paper's window of size
``w + 1``. At step ``t`` the window holds ``D'[t - w .. t]``; the paper's ``D'[2..w+1]`` is
``D'[t - w .. t]`` here and the paper's ``P_{w+1}`` is ``P_t``.

The problem (Definition 2)
--------------------------
The *initial solution* keeps the inherited ``(P_j, S_j)``, ``t - w <= j < t``, and suppresses the most
frequent value of ``D[t]`` until ``P_t`` is l-eligible (Section III). *Recycle-reposition* then moves
records forward only so that every ``|P_j[s]|``, ``j < t``, stays as it is: suppressed records of the
window (``S_j``, home ``j >= t - w``; the paper's ``S_i`` leave with ``D'[i]``) are recycled, each by a
*relay* (Section IV, Equations 3-4): ``r_0`` enters ``P_i`` (its home), the record of ``P_{i_0}[s]`` with
the largest timestamp moves on to the next snapshot with a record of ``s``, and so on until one record
reaches ``P_t``. The relay's gain is ``IG(r) = beta_s - psi(r)`` (Equation 5), ``psi`` the increase of
reposition cost of the moved records (Equation 6). Definition 2 asks for the recycle-reposition of least
``IL(D'[t - w .. t])`` with ``P_t`` l-eligible.

How it is solved here (and why it is exact)
-------------------------------------------
* A relay keeps timestamp order (Theorem 1): the placed records of a value, sorted by home, fill the
  slots of ``P_{t-w}[s], ..., P_{t-1}[s]`` (their sizes are fixed) and then ``P_t[s]`` in order. So a
  relay of a record of home ``h`` is the insertion of ``h`` into the sorted list of homes; the records
  after it shift by one slot (:func:`_relay_gains`, vectorized with suffix sums; a record that would move
  more than ``w`` snapshots makes the relay infeasible). Home-``t`` records are relays with ``psi = 0``.
* Values interact only through the level of ``P_t`` (the key of Theorem 3): per value the relays are
  taken best ``IG`` first (:func:`relay_sequence`); the gains of consecutive relays of one value do not
  increase (the per-value problem is a min-cost flow whose cost is convex in the number of records sent
  to ``P_t``; checked against the ILP in the tests).
* The loop of Figure 4 over these sequences (:func:`figure4`): LP-Reposition (relays of positive ``IG``
  without lifting ``Level(P_t)``), LL-Reposition (``m = (i + 1) l - |P_t|`` relays, best ``IG`` first,
  ``|P_t[s]| <= i``), until ``|M^2| < m`` or ``IG(M^2) <= 0``, and the roll-back of the last ``M^2``.
  Taken literally (``variant="literal"``) this is not optimal for Definition 2 (a lift of negative
  ``IG(M^2)`` can pay through the LP-Repositions it enables at the next level; ``m = 0`` stops the loop
  although the next level is free; and ``M^2`` of one level may hold relays a higher level does not
  need). The *corrected* loop (default) lifts level by level to the highest reachable level ``K``; at
  each level it runs LP-Reposition from the LP state of the level below (all positive relays with
  ``|P_t[s]| < K``), then LL-Reposition for the ``m`` relays still missing, records the IL, and rolls the
  LL-Reposition back before the next level; the best level wins. With non-increasing gains per value,
  level ``K``'s state is the optimum among solutions with ``Level(P_t) <= K`` (a partition matroid, as in
  :func:`tempanon.stream.reposition.single_place_optimum`), so the best level is the optimum of
  Definition 2. ``tests/stream/test_stream_recycle.py`` checks it against an ILP of Definition 2.
* Work (Theorem 2: ``sigma * (w + |SA|)``, ``sigma`` the recycled records): each relay costs one pass over
  the records of its value in the window and each level one pass over the values;
  :class:`RecycleResult` counts ``relays`` and ``chain_moves`` (records moved by relays, at most
  ``w + 1`` per relay).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_TOL = 1e-9


@dataclass
class RecycleResult:
    """``old_place``: the new place of every inherited placed record (same order as given);
    ``cand_place``: the place of every candidate (``-1`` suppressed); ``il``: ``IL`` of the window's
    records (inherited placed ones + candidates, Equation 2); ``il_initial`` the initial solution's;
    ``level``: ``Level(P_t)``; ``relays``: relays in the result (recycled records, home-``t`` records
    kept included); ``chain_moves``: records moved by those relays (Theorem 2's work)."""

    old_place: np.ndarray
    cand_place: np.ndarray
    il: float
    il_initial: float
    level: int
    relays: int
    chain_moves: int


def _relay_gains(M: np.ndarray, S: np.ndarray, homes: np.ndarray, t: int, w: int, mu: np.ndarray, beta: float):
    """IG (Equations 5-6) of relaying one record of each home in ``homes`` into the value's placed
    records (homes ``M`` sorted, in slots ``S``, sorted). Returns ``(gain, moves)`` per home, ``-inf``
    where the relay would move a record more than ``w`` snapshots."""
    n = len(M)
    S1 = np.append(S, t)  # the slots after the relay: one more in P_t
    if n:
        d_old = S - M
        d_new = S1[1:] - M
        ok = d_new <= w
        diff = np.where(ok, mu[np.minimum(d_new, w)] - mu[d_old], np.inf)
        suffix = np.concatenate([np.cumsum(diff[::-1])[::-1], [0.0]])
        moved = np.concatenate([np.cumsum((S1[1:] != S)[::-1])[::-1], [0]])
    else:
        suffix = np.zeros(1)
        moved = np.zeros(1, dtype=np.int64)
    pos = np.searchsorted(M, homes, side="right")  # after the equal homes (interchangeable)
    d0 = S1[pos] - homes
    ok0 = (d0 >= 0) & (d0 <= w)
    psi = np.where(ok0, mu[np.clip(d0, 0, w)], np.inf) + suffix[pos]
    return beta - psi, moved[pos] + 1


def relay_sequence(old_homes, old_slots, cand_homes, t: int, w: int, mu: np.ndarray, beta: float):
    """The relays of one value, best ``IG`` first (ties: the latest home), until no candidate is left or
    none is feasible. Returns ``(gains, homes, moves)`` (one entry per relay, in order)."""
    M = np.sort(np.asarray(old_homes, dtype=np.int64))
    S = np.sort(np.asarray(old_slots, dtype=np.int64))
    homes, counts = np.unique(np.asarray(cand_homes, dtype=np.int64), return_counts=True)
    counts = counts.copy()
    gains, picked, moves = [], [], []
    # home-t records first: IG = beta, nothing moves (P_t is the last snapshot)
    k_t = int(counts[homes == t].sum()) if len(homes) else 0
    if k_t:
        gains += [float(beta)] * k_t
        picked += [t] * k_t
        moves += [1] * k_t
        counts[homes == t] = 0
        M = np.concatenate([M, np.full(k_t, t, dtype=np.int64)])
    c_t = k_t  # records in P_t
    while counts.any():
        live = homes[counts > 0]
        Sfull = np.concatenate([S, np.full(c_t, t, dtype=np.int64)])
        g, mv = _relay_gains(M, Sfull, live, t, w, mu, beta)
        if not np.isfinite(g).any():
            break
        best = np.flatnonzero(g >= g.max() - _TOL)[-1]  # the latest home among the best
        h = int(live[best])
        gains.append(float(g[best]))
        picked.append(h)
        moves.append(int(mv[best]))
        M = np.insert(M, np.searchsorted(M, h, side="right"), h)
        c_t += 1
        counts[np.searchsorted(homes, h)] -= 1
    return gains, picked, moves


def _next_gain(gains: list[list[float]], a: np.ndarray, s: int) -> float:
    return gains[s][a[s]] if a[s] < len(gains[s]) else -np.inf


def lp_reposition(gains: list[list[float]], a: np.ndarray, cap: int) -> list[tuple[int, float]]:
    """Strategy I, LP-Reposition (Section V.A): relay records of positive IG, best first, into values
    with ``|P_t[s]| < cap`` (``cap`` = ``Level(P_t)``: the level does not rise). ``a`` (relays taken per
    value) is updated in place; returns the relays ``(value, IG)``."""
    out = []
    while True:
        best, bs = _TOL, -1
        for s in range(len(gains)):
            if a[s] < cap:
                g = _next_gain(gains, a, s)
                if g > best:
                    best, bs = g, s
        if bs < 0:
            return out
        a[bs] += 1
        out.append((bs, best))


def ll_reposition(gains: list[list[float]], a: np.ndarray, m: int, cap: int) -> list[tuple[int, float]]:
    """Strategy II, LL-Reposition (Section V.A): ``m`` relays, each the record of largest IG (any sign)
    with ``|P_t[r.SA]| < cap`` (``cap = i + 1`` lifts from level ``i``); fewer when none is left.
    Updates ``a`` in place and returns ``M^2`` as ``(value, IG)``."""
    out = []
    for _ in range(m):
        best, bs = -np.inf, -1
        for s in range(len(gains)):
            if a[s] < cap:
                g = _next_gain(gains, a, s)
                if g > best:
                    best, bs = g, s
        if bs < 0:
            break
        a[bs] += 1
        out.append((bs, best))
    return out


def figure4(gains: list[list[float]], start: np.ndarray, l: int, variant: str = "corrected") -> np.ndarray:
    """OptimalReposition (Figure 4) on per-value relay sequences: ``gains[s]`` the IGs of the relays of
    value ``s`` in order, ``start[s]`` how many of them the initial solution has (the home-``t`` records
    it keeps). Returns how many relays of each value the result takes (the count of ``P_t[s]``).

    ``variant="literal"``: Figure 4 as printed; ``"corrected"``: level by level with roll-back (module
    doc), the optimum of Definition 2."""
    a = np.asarray(start, dtype=np.int64).copy()
    length = np.array([len(g) for g in gains], dtype=np.int64)

    def lp(a: np.ndarray, cap: int) -> None:
        lp_reposition(gains, a, cap)

    def ll(a: np.ndarray, m: int, cap: int) -> list[tuple[int, float]]:
        return ll_reposition(gains, a, m, cap)

    if variant == "literal":
        while True:
            i = int(a.max(initial=0))
            lp(a, i)
            i = int(a.max(initial=0))
            m = max(0, (i + 1) * l - int(a.sum()))
            m2 = ll(a, m, i + 1)
            if len(m2) < m or sum(g for _, g in m2) <= _TOL:
                for s, _ in m2:  # line 7: roll back the last LL-Reposition
                    a[s] -= 1
                return a
    if variant != "corrected":
        raise ValueError(f"unknown Figure 4 variant {variant!r}")

    def gain_of(a: np.ndarray) -> float:
        return sum(sum(g[:k]) for g, k in zip(gains, a))

    i0 = int(a.max(initial=0))
    lp(a, i0)
    best_a, best_gain = a.copy(), gain_of(a)
    top = int(length.max(initial=0))
    for K in range(i0 + 1, top + 1):
        lp(a, K)  # the LP state of level K (from the LP state of level K - 1)
        m = max(0, K * l - int(a.sum()))
        m2 = ll(a, m, K)
        if len(m2) < m:  # level K is out of reach, and so is every higher level
            break
        g = gain_of(a)
        if g > best_gain + _TOL:
            best_a, best_gain = a.copy(), g
        for s, _ in m2:  # roll back before the next level
            a[s] -= 1
    return best_a


def recycle_step(
    old_home: np.ndarray,
    old_place: np.ndarray,
    old_code: np.ndarray,
    cand_home: np.ndarray,
    cand_code: np.ndarray,
    cand_kept: np.ndarray,
    *,
    t: int,
    w: int,
    l: int,
    mu: np.ndarray,
    beta: np.ndarray,
    variant: str = "corrected",
) -> RecycleResult:
    """One step of the paper's method at ``t`` (module doc).

    ``old_*``: the records placed in the inherited pending snapshots ``D'[t - w .. t - 1]`` (home,
    place, value code), timestamp-order preserving per value; ``cand_*``: the records that may be
    recycled into the window: suppressed ones of home ``t - w .. t - 1`` and every record of ``D[t]``
    (``cand_kept``: kept in ``P_t`` by the initial solution). ``beta`` by code. Records of one home and
    value are interchangeable; the earliest (lowest index) are published first."""
    mu = np.asarray(mu, dtype=float)
    old_home = np.asarray(old_home, dtype=np.int64)
    old_place = np.asarray(old_place, dtype=np.int64)
    old_code = np.asarray(old_code, dtype=np.int64)
    cand_home = np.asarray(cand_home, dtype=np.int64)
    cand_code = np.asarray(cand_code, dtype=np.int64)
    cand_kept = np.asarray(cand_kept, dtype=bool)
    new_old = old_place.copy()
    new_cand = np.full(len(cand_home), -1, dtype=np.int64)
    # a value without candidates has no record in P_t and its placed records stay where they are
    values = np.unique(cand_code)
    seqs, starts, pickeds, movess = [], [], [], []
    old_by_v, cand_by_v = [], []
    for s in values:
        oi = np.flatnonzero(old_code == s)
        ci = np.flatnonzero(cand_code == s)
        g, picked, moves = relay_sequence(old_home[oi], old_place[oi], cand_home[ci], t, w, mu, float(beta[s]))
        seqs.append(g)
        pickeds.append(picked)
        movess.append(moves)
        starts.append(int(np.count_nonzero(cand_kept[ci] & (cand_home[ci] == t))))
        old_by_v.append(oi)
        cand_by_v.append(ci)
    start = np.array(starts, dtype=np.int64)
    il_base = float(mu[np.clip(old_place - old_home, 0, len(mu) - 1)].sum() + beta[cand_code].sum())
    il_initial = il_base - sum(sum(seqs[k][: start[k]]) for k in range(len(values)))
    a = figure4(seqs, start, l, variant) if len(values) else start
    relays = chain = 0
    for k in range(len(values)):
        oi, ci, n = old_by_v[k], cand_by_v[k], int(a[k])
        relays += n
        chain += int(sum(movess[k][:n]))
        # the records published: the old ones and, per home, the earliest candidates picked
        chosen = []
        if n:
            ph, pc = np.unique(np.asarray(pickeds[k][:n], dtype=np.int64), return_counts=True)
            for h, c in zip(ph.tolist(), pc.tolist()):
                mine = ci[cand_home[ci] == h]
                chosen.append(mine[:c])
        chosen = np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.int64)
        slots = np.concatenate([np.sort(old_place[oi]), np.full(n, t, dtype=np.int64)])
        homes = np.concatenate([old_home[oi], cand_home[chosen]])
        is_old = np.concatenate([np.ones(len(oi), bool), np.zeros(len(chosen), bool)])
        idx = np.concatenate([oi, chosen])
        order = np.lexsort((idx, ~is_old, homes))  # timestamp order; inherited records first among equals
        dest = np.empty(len(idx), dtype=np.int64)
        dest[order] = slots
        new_old[oi] = dest[is_old]
        new_cand[chosen] = dest[~is_old]
    pub = new_cand >= 0
    il = float(mu[np.clip(new_old - old_home, 0, len(mu) - 1)].sum() + mu[np.clip(new_cand[pub] - cand_home[pub], 0, len(mu) - 1)].sum()
               + beta[cand_code[~pub]].sum())
    level = int(a.max(initial=0)) if len(values) else 0
    return RecycleResult(new_old, new_cand, il, il_initial, level, relays, chain)
