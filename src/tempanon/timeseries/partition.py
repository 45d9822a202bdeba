"""Value-based grouping: top-down partitioning and KAPRA's group formation.

* :func:`top_down_partition` - the top-down greedy clustering of Xu et al. (KDD Explorations
  2006, Section 4.2) used by Naive (Shou et al., Section 5.2) to form k-groups and by KAPRA
  (Section 5.3.3, Algorithm 3 step 1) to split large P-subgroups. Every group with ``>= 2m``
  members is split in two: seeds ``u`` (its first member), ``v`` farthest from ``u`` and ``u'``
  farthest from ``v``; each member joins the nearer seed (Euclidean distance, i.e. the VL of the
  two-point envelope), then the smaller side takes the members of the other side that are
  relatively closest to it until it has ``m``. Xu et al. add members one by one to the side whose
  loss grows least; the vectorized assignment to the nearer seed is the one deviation.
  All groups of one round are split at once (sorts and ``reduceat``), so the whole partition costs
  ``O(N log N)``.
* :func:`group_formation` - Algorithm 3 steps 2-4 on P-subgroups: those with ``>= k`` series
  become k-groups; the rest are merged greedily (seed, then repeatedly the P-subgroup minimizing
  ``VL`` of the union, exactly) until each k-group has ``>= k`` series; leftovers (fewer than
  ``k`` series in all) join the k-group whose ``VL`` grows least. Each greedy step is one
  vectorized pass over the remaining P-subgroups, so this phase is ``O(R^2 n / k)`` for ``R``
  P-subgroups: it dominates at 100k series.
"""

from __future__ import annotations

import numpy as np


def _first_per_group(g_sorted: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.r_[True, g_sorted[1:] != g_sorted[:-1]])


def _argmax_per_group(g: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Position (into ``g``) of the maximal ``value`` of each group id ``0..G-1``; first on ties."""
    order = np.lexsort((np.arange(g.size), -value, g))
    return order[_first_per_group(g[order])]


def top_down_partition(X: np.ndarray, labels: np.ndarray, m: int) -> np.ndarray:
    """Split every group of ``labels`` with ``>= 2m`` members until all groups have ``< 2m``
    members; every new group has ``>= m`` members. Returns dense labels (groups of ``< 2m``
    keep their members together)."""
    X = np.asarray(X, dtype=float)
    labels = np.unique(labels, return_inverse=True)[1].astype(np.int64)
    while True:
        size = np.bincount(labels)
        big = size >= 2 * m
        if not big.any():
            return labels
        sel = np.flatnonzero(big[labels])
        g = np.unique(labels[sel], return_inverse=True)[1]
        order = np.argsort(g, kind="stable")
        sel, g = sel[order], g[order]
        starts = _first_per_group(g)
        u = sel[starts]
        Xs = X[sel]
        d_u = ((Xs - X[u][g]) ** 2).sum(axis=1)
        v = sel[_argmax_per_group(g, d_u)]
        d_v = ((Xs - X[v][g]) ** 2).sum(axis=1)
        u2 = sel[_argmax_per_group(g, d_v)]
        d_u2 = ((Xs - X[u2][g]) ** 2).sum(axis=1)
        side = (d_v < d_u2).astype(np.int64)  # 1: joins v, 0: joins u'
        side[sel == v[g]] = 1  # seeds keep their side
        side[sel == u2[g]] = 0
        ng = len(starts)
        cnt1 = np.bincount(g, weights=side, minlength=ng).astype(np.int64)
        cnt0 = np.bincount(g, minlength=ng) - cnt1
        for small_side, cnt in ((0, cnt0), (1, cnt1)):
            need = np.maximum(m - cnt, 0)
            if not need.any():
                continue
            # candidates: members on the other side of groups that need more, closest relatively
            margin = d_u2 - d_v if small_side == 0 else d_v - d_u2
            cand = np.flatnonzero((side != small_side) & (need[g] > 0))
            o = cand[np.lexsort((cand, margin[cand], g[cand]))]
            gs = g[o]
            rank = np.arange(o.size) - _first_per_group(gs)[np.cumsum(np.r_[True, gs[1:] != gs[:-1]]) - 1]
            side[o[rank < need[gs]]] = small_side
        new = labels.copy()
        new[sel] = labels[sel] * 2 + side
        new[~big[labels]] *= 2
        labels = np.unique(new, return_inverse=True)[1].astype(np.int64)


def envelopes(X: np.ndarray, labels: np.ndarray):
    """Per group the ``min`` and ``max`` at every instant (``labels`` dense, ``>= 0``)."""
    order = np.argsort(labels, kind="stable")
    ls = labels[order]
    starts = _first_per_group(ls)
    lo = np.minimum.reduceat(X[order], starts, axis=0)
    hi = np.maximum.reduceat(X[order], starts, axis=0)
    return lo, hi


def _vl_total(lo: np.ndarray, hi: np.ndarray, size: np.ndarray) -> np.ndarray:
    return size * np.sqrt(np.mean((hi - lo) ** 2, axis=-1))


def group_formation(lo: np.ndarray, hi: np.ndarray, size: np.ndarray, k: int, progress=None) -> np.ndarray:
    """Algorithm 3 steps 2-4: assign each P-subgroup (given by its envelope and size) a k-group.

    Seeds: the remaining P-subgroup whose envelope centre is farthest from the centroid of all
    centres (the paper leaves the seed open; this is MDAV's border-first rule, precomputed once so
    each seed costs O(1)). The greedy step picks the P-subgroup
    minimizing ``VL(G + s) = (|G|+|s|) sqrt(mean((hi-lo)^2))`` exactly (compared squared, on
    float32 copies of the envelopes, in preallocated buffers). Returns the k-group id of every
    P-subgroup. Requires ``size.sum() >= k``.
    """
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    size = np.asarray(size, dtype=np.int64)
    R = size.size
    out = np.full(R, -1, dtype=np.int64)
    large = np.flatnonzero(size >= k)
    out[large] = np.arange(large.size)
    n_groups = large.size
    rest = np.flatnonzero(size < k)
    # compact working arrays (swap-remove keeps them dense)
    ids = rest.copy()
    wlo = lo[rest].astype(np.float32)
    whi = hi[rest].astype(np.float32)
    ws = size[rest].astype(np.float32)
    centre = (lo[rest] + hi[rest]) / 2
    # seeds: farthest from the centroid of all envelope centres first (as in MDAV), O(1) each
    cc = centre - centre.mean(axis=0) if rest.size else centre
    sweep = np.argsort(-np.einsum("ij,ij->i", cc, cc), kind="stable")
    where = np.arange(rest.size)  # working position of each rest entry, -1 once taken
    back = np.arange(rest.size)  # rest entry of each working position
    cnt = ids.size
    total = int(ws.sum())
    g_lo, g_hi, g_size = [lo[large]], [hi[large]], [size[large]]
    buf_a = np.empty_like(wlo)
    buf_b = np.empty_like(wlo)

    def take(j):
        nonlocal cnt
        last = cnt - 1
        picked = ids[j], lo[ids[j]], hi[ids[j]], int(size[ids[j]])
        where[back[j]] = -1
        for arr in (ids, wlo, whi, ws, back):
            arr[j] = arr[last]
        where[back[j]] = j if j < last else -1
        cnt = last
        return picked

    ptr = 0
    start_total = total
    while total >= k:
        if progress is not None and n_groups % 500 == 0:
            progress("group formation", start_total - total, start_total)
        while where[sweep[ptr]] < 0:
            ptr += 1
        sid, glo, ghi, gs = take(int(where[sweep[ptr]]))
        out[sid] = n_groups
        while gs < k:
            a, b = buf_a[:cnt], buf_b[:cnt]
            np.maximum(whi[:cnt], ghi.astype(np.float32), out=a)
            np.minimum(wlo[:cnt], glo.astype(np.float32), out=b)
            np.subtract(a, b, out=a)
            score = np.einsum("ij,ij->i", a, a) * (gs + ws[:cnt]) ** 2
            j = int(np.argmin(score))
            sid, slo, shi, ss = take(j)
            out[sid] = n_groups
            glo, ghi, gs = np.minimum(glo, slo), np.maximum(ghi, shi), gs + ss
        total -= gs
        g_lo.append(glo[None]), g_hi.append(ghi[None]), g_size.append(np.array([gs]))
        n_groups += 1
    if progress is not None:
        progress("group formation", start_total, start_total)
    if cnt:
        if n_groups == 0:
            raise ValueError("group formation needs at least k series")
        GL, GH, GS = np.concatenate(g_lo), np.concatenate(g_hi), np.concatenate(g_size)
        for j in range(cnt):
            slo, shi, ss = lo[ids[j]], hi[ids[j]], size[ids[j]]
            nlo, nhi = np.minimum(GL, slo), np.maximum(GH, shi)
            inc = _vl_total(nlo, nhi, GS + ss) - _vl_total(GL, GH, GS)
            t = int(np.argmin(inc))
            out[ids[j]] = t
            GL[t], GH[t], GS[t] = nlo[t], nhi[t], GS[t] + ss
    return out
