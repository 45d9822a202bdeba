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
* :func:`group_formation` - Algorithm 3 steps 1-5 on P-subgroups: those with ``>= k`` series
  become k-groups (step 1); each new k-group starts from the remaining P-subgroup with the lowest
  instant value loss (step 2), then repeatedly takes the P-subgroup minimizing ``VL(G + s)``
  (step 3) until it has ``>= k`` series (step 4); leftovers (fewer than ``k`` series in all) join
  the k-group whose total VL grows least (step 5). The candidate search of step 3 is exact but
  goes through a kd-tree of the envelopes with a separable lower bound (:class:`_EnvelopeIndex`),
  so the phase is near-linear instead of the paper's ``O(|PGL|^2)``;
  :func:`group_formation_reference` is the literal quadratic version it is tested against.
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
    """Total VL (Eq. 2 summed over the members) of envelopes ``[lo, hi]`` holding ``size`` series."""
    return size * np.sqrt(np.mean((hi - lo) ** 2, axis=-1))


def seed_value_loss(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Instant value loss (Eq. 2) of each P-subgroup's envelope: the VL every member of the
    P-subgroup would have if it were a group on its own. Algorithm 3 step 2 starts each k-group
    from the remaining P-subgroup with the smallest value (ties: the lowest index)."""
    return np.sqrt(np.mean((np.asarray(hi, float) - np.asarray(lo, float)) ** 2, axis=-1))


def union_score(glo: np.ndarray, ghi: np.ndarray, gs, lo: np.ndarray, hi: np.ndarray, size: np.ndarray) -> np.ndarray:
    """``n * VL(G + s)^2`` for each candidate ``s`` (rows of ``lo``/``hi``/``size``): VL of the
    union summed over its ``|G| + |s|`` members (Eq. 2), squared and times ``n`` - the same order
    as ``VL(G + s)``, without square roots. One formula for the fast and the reference search, so
    both compare bit-identical numbers."""
    span = np.maximum(hi, ghi) - np.minimum(lo, glo)
    t = np.asarray(size, dtype=float) + float(gs)
    return t * t * np.square(span).sum(axis=1)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for every ``(s, l)``."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offs = np.cumsum(lengths) - lengths
    return np.repeat(starts - offs, lengths) + np.arange(total)


def kd_order(Q: np.ndarray, leaf: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Order the rows of ``Q`` as the leaves of a balanced kd-tree (each round splits every node at
    the median of its widest coordinate). Returns ``(perm, node)``: row order and the leaf number
    (in tree order) of each position; leaves hold ``leaf..2*leaf-1`` rows (fewer if ``Q`` is
    small). All nodes of one round are split at once (one ``lexsort``)."""
    R = Q.shape[0]
    perm = np.arange(R)
    node = np.zeros(R, dtype=np.int64)
    depth = int(np.floor(np.log2(R / leaf))) if R >= 2 * leaf else 0
    for _ in range(depth):
        starts = _first_per_group(node)
        Qs = Q[perm]
        spread = np.maximum.reduceat(Qs, starts, axis=0) - np.minimum.reduceat(Qs, starts, axis=0)
        dim = np.argmax(spread, axis=1)
        seg = np.cumsum(np.r_[True, node[1:] != node[:-1]]) - 1
        key = Qs[np.arange(R), dim[seg]]
        o = np.lexsort((perm, key, node))
        perm, node = perm[o], node[o]
        sizes = np.diff(np.r_[starts, R])
        rank = np.arange(R) - starts[seg]
        node = node * 2 + (rank >= sizes[seg] // 2)
    return perm, node


class _EnvelopeIndex:
    """Exact minimal-``VL(G + s)`` search over the alive P-subgroups (Algorithm 3 step 3).

    The envelopes are stored in kd-tree order (:func:`kd_order` over the points ``(lo, hi)``),
    grouped in leaves of 16-31 and blocks of 32 leaves. For a box of envelopes (per instant the
    smallest ``hi`` and the largest ``lo`` of its members, and their smallest size)
    ``(|G| + min size)^2 * sum_j (max(ghi_j, min hi_j) - min(glo_j, max lo_j))^2`` is a lower
    bound of :func:`union_score` of every member, since the span of a union grows with ``hi`` and
    falls with ``lo`` at every instant. A query scores the members of the most promising leaf for
    an upper bound, keeps the blocks and then the leaves whose bound does not exceed it, and
    scores their alive members exactly: the minimum (ties: the lowest index) is the quadratic
    search's answer. Taken P-subgroups are marked dead; the index is rebuilt on the survivors
    when fewer than half of its entries are alive, so the total rebuild cost stays ``O(R log R)``.
    """

    LEAF, BLOCK = 16, 32

    def __init__(self, lo, hi, size, ids):
        self.lo_all, self.hi_all, self.size_all = lo, hi, size
        self.pos = np.full(lo.shape[0], -1, dtype=np.int64)
        self._build(np.asarray(ids, dtype=np.int64))

    def _build(self, ids):
        lo, hi = self.lo_all[ids], self.hi_all[ids]
        # the size as a heavily weighted extra coordinate: the first splits separate sizes, so a
        # box's smallest size is its members' size and the size factor of the bound is tight
        sz = self.size_all[ids].astype(float)[:, None]
        span = float(max(hi.max() - lo.min(), 1.0)) if ids.size else 1.0
        perm, node = kd_order(np.hstack([lo, hi, sz * (4.0 * span)]), self.LEAF)
        self.ids = ids[perm]
        self.lo, self.hi = lo[perm], hi[perm]
        self.size = self.size_all[self.ids].astype(float)
        self.alive = np.ones(self.ids.size, dtype=bool)
        self.pos[self.ids] = np.arange(self.ids.size)
        self.n_alive = self.ids.size
        R = self.ids.size
        if R == 0:
            self.lstart = np.zeros(0, dtype=np.int64)
            self.lcount = self.lalive = self.bfirst = self.bcount = self.balive = self.lstart
            self.leaf_of = np.zeros(0, dtype=np.int64)
            return
        self.lstart = _first_per_group(node)
        self.lcount = np.diff(np.r_[self.lstart, R])
        self.leaf_of = np.cumsum(np.r_[True, node[1:] != node[:-1]]) - 1
        self.lmaxlo = np.maximum.reduceat(self.lo, self.lstart, axis=0)
        self.lminhi = np.minimum.reduceat(self.hi, self.lstart, axis=0)
        self.lminsz = np.minimum.reduceat(self.size, self.lstart)
        self.lalive = self.lcount.copy()
        block = node[self.lstart] // self.BLOCK
        self.bfirst = _first_per_group(block)  # first leaf of each block
        self.bcount = np.diff(np.r_[self.bfirst, len(self.lstart)])
        self.block_of = np.cumsum(np.r_[True, block[1:] != block[:-1]]) - 1
        self.bmaxlo = np.maximum.reduceat(self.lmaxlo, self.bfirst, axis=0)
        self.bminhi = np.minimum.reduceat(self.lminhi, self.bfirst, axis=0)
        self.bminsz = np.minimum.reduceat(self.lminsz, self.bfirst)
        self.balive = np.add.reduceat(self.lalive, self.bfirst)

    def remove(self, gid: int) -> None:
        p = self.pos[gid]
        self.alive[p] = False
        leaf = self.leaf_of[p]
        self.lalive[leaf] -= 1
        self.balive[self.block_of[leaf]] -= 1
        self.n_alive -= 1
        if self.n_alive and self.n_alive * 2 < self.ids.size and self.ids.size > 4 * self.LEAF:
            self._build(self.ids[self.alive])

    @staticmethod
    def _bound(glo, ghi, gs, maxlo, minhi, minsz):
        # a hair below the true bound, so rounding never prunes a box holding the minimum
        return union_score(glo, ghi, gs, maxlo, minhi, minsz) * (1.0 - 1e-9)

    def best(self, glo, ghi, gs, hint: int) -> int:
        """Global index of the alive P-subgroup minimizing :func:`union_score` (lowest index on
        ties). ``hint``: a P-subgroup near ``G`` (its seed or last member, alive or not); the
        alive members of its leaf and the two next to it give the first upper bound."""
        L = self.lstart.size
        h = int(min(max(self.pos[hint], 0), self.ids.size - 1))
        l0 = int(self.leaf_of[h])
        p = np.arange(self.lstart[max(l0 - 1, 0)], self.lstart[l0 + 2] if l0 + 2 < L else self.ids.size)
        p = p[self.alive[p]]
        ub = float(union_score(glo, ghi, gs, self.lo[p], self.hi[p], self.size[p]).min()) if p.size else np.inf
        bb = self._bound(glo, ghi, gs, self.bmaxlo, self.bminhi, self.bminsz)
        blocks = np.flatnonzero((bb <= ub) & (self.balive > 0))
        leaves = _ranges(self.bfirst[blocks], self.bcount[blocks])
        leaves = leaves[self.lalive[leaves] > 0]
        lb = self._bound(glo, ghi, gs, self.lmaxlo[leaves], self.lminhi[leaves], self.lminsz[leaves])
        keep = lb <= ub
        leaves, lb = leaves[keep], lb[keep]
        # first the 8 leaves with the smallest bounds (they tighten ub), then every other leaf
        # whose bound does not exceed the best score found: none holding the minimum is skipped
        if leaves.size > 8:
            first = np.argpartition(lb, 8)[:8]
            rest = np.ones(leaves.size, dtype=bool)
            rest[first] = False
            i0, s0 = self._score_leaves(leaves[first], glo, ghi, gs)
            sel = leaves[rest & (lb <= s0)]
            if sel.size:
                i1, s1 = self._score_leaves(sel, glo, ghi, gs)
                if s1 < s0 or (s1 == s0 and i1 < i0):
                    return i1
            return i0
        return self._score_leaves(leaves, glo, ghi, gs)[0]

    def _score_leaves(self, leaves, glo, ghi, gs):
        """``(lowest index among the minima, minimal score)`` over the alive members of ``leaves``."""
        p = _ranges(self.lstart[leaves], self.lcount[leaves])
        p = p[self.alive[p]]
        if p.size == 0:
            return -1, np.inf
        sc = union_score(glo, ghi, gs, self.lo[p], self.hi[p], self.size[p])
        m = sc.min()
        return int(self.ids[p[sc == m]].min()), float(m)


def _assign_leftovers(out, lo, hi, size, left, GL, GH, GS) -> None:
    """Step 5: each remaining P-subgroup (in index order) joins the k-group whose total VL grows
    least (ties: the lowest k-group id)."""
    GS = GS.astype(float)
    for j in left:
        nlo, nhi = np.minimum(GL, lo[j]), np.maximum(GH, hi[j])
        inc = _vl_total(nlo, nhi, GS + size[j]) - _vl_total(GL, GH, GS)
        t = int(np.argmin(inc))
        out[j] = t
        GL[t], GH[t], GS[t] = nlo[t], nhi[t], GS[t] + size[j]


def _prepare(lo, hi, size, k):
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    size = np.asarray(size, dtype=np.int64)
    out = np.full(size.size, -1, dtype=np.int64)
    large = np.flatnonzero(size >= k)
    out[large] = np.arange(large.size)  # step 1
    rest = np.flatnonzero(size < k)
    key = seed_value_loss(lo[rest], hi[rest])
    seeds = rest[np.lexsort((rest, key))]  # step 2 order: lowest VL first, ties lowest index
    return lo, hi, size, out, large, rest, seeds


def group_formation_reference(lo: np.ndarray, hi: np.ndarray, size: np.ndarray, k: int) -> np.ndarray:
    """Algorithm 3 steps 1-5 literally: every step-3 search scores all remaining P-subgroups
    (``O(|PGL|^2)``). The oracle of :func:`group_formation` in the tests."""
    lo, hi, size, out, large, rest, seeds = _prepare(lo, hi, size, k)
    alive = np.zeros(size.size, dtype=bool)
    alive[rest] = True
    total = int(size[rest].sum())
    GL, GH, GS = list(lo[large]), list(hi[large]), list(size[large])
    n_groups, ptr = large.size, 0
    while total >= k:
        while not alive[seeds[ptr]]:
            ptr += 1
        s = int(seeds[ptr])
        alive[s] = False
        out[s] = n_groups
        glo, ghi, gs = lo[s], hi[s], int(size[s])
        while gs < k:
            c = np.flatnonzero(alive)
            j = int(c[np.argmin(union_score(glo, ghi, gs, lo[c], hi[c], size[c]))])
            alive[j] = False
            out[j] = n_groups
            glo, ghi, gs = np.minimum(glo, lo[j]), np.maximum(ghi, hi[j]), gs + int(size[j])
        total -= gs
        GL.append(glo), GH.append(ghi), GS.append(gs)
        n_groups += 1
    left = np.flatnonzero(alive)
    if left.size:
        if n_groups == 0:
            raise ValueError("group formation needs at least k series")
        _assign_leftovers(out, lo, hi, size, left, np.array(GL), np.array(GH), np.array(GS))
    return out


def group_formation(lo: np.ndarray, hi: np.ndarray, size: np.ndarray, k: int, progress=None) -> np.ndarray:
    """Algorithm 3 steps 1-5 (Section 5.3.3): the k-group id of every P-subgroup, given their
    envelopes ``lo``/``hi`` and sizes. Step 1: P-subgroups of ``>= k`` series are k-groups. Step
    2: a new k-group ``G`` starts from the remaining P-subgroup with the smallest instant value
    loss (:func:`seed_value_loss`; ties: the lowest index). Step 3: add the P-subgroup minimizing
    ``VL(G + s)`` (Eq. 2 summed over the union's members; ties: the lowest index) until
    ``|G| >= k`` (step 4). Step 5: the leftovers (fewer than ``k`` series) join the k-group whose
    total VL grows least. The same result as :func:`group_formation_reference`; the step-3
    search goes through :class:`_EnvelopeIndex`. Requires ``size.sum() >= k``.
    """
    lo, hi, size, out, large, rest, seeds = _prepare(lo, hi, size, k)
    index = _EnvelopeIndex(lo, hi, size, rest)
    taken = np.zeros(size.size, dtype=bool)
    total = int(size[rest].sum())
    start_total = total
    GL, GH, GS = [lo[large]], [hi[large]], [size[large]]
    n_groups, ptr = large.size, 0
    while total >= k:
        if progress is not None and n_groups % 2000 == 0:
            progress("group formation", start_total - total, start_total)
        while taken[seeds[ptr]]:
            ptr += 1
        s = int(seeds[ptr])
        taken[s] = True
        index.remove(s)
        out[s] = n_groups
        glo, ghi, gs, hint = lo[s], hi[s], int(size[s]), s
        while gs < k:
            j = index.best(glo, ghi, gs, hint)
            taken[j] = True
            index.remove(j)
            out[j] = n_groups
            glo, ghi, gs, hint = np.minimum(glo, lo[j]), np.maximum(ghi, hi[j]), gs + int(size[j]), j
        total -= gs
        GL.append(glo[None]), GH.append(ghi[None]), GS.append(np.array([gs]))
        n_groups += 1
    if progress is not None:
        progress("group formation", start_total, start_total)
    left = rest[~taken[rest]]
    if left.size:
        if n_groups == 0:
            raise ValueError("group formation needs at least k series")
        _assign_leftovers(out, lo, hi, size, left, np.concatenate(GL), np.concatenate(GH), np.concatenate(GS))
    return out
