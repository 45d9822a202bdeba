"""Naive and KAPRA (Shou et al., TKDE, Section 5) on a float matrix ``X`` (series x instants).

Both return a :class:`~tempanon.timeseries.model.Grouping`: per series its k-group, P-subgroup,
published level and SAX word (-1 k-group for a suppressed series).
"""

from __future__ import annotations

import numpy as np

from tempanon.errors import NoSolutionError
from tempanon.timeseries.model import Grouping
from tempanon.timeseries.partition import envelopes, group_formation, top_down_partition
from tempanon.timeseries.sax import medians, sax_all_levels, word_ids
from tempanon.timeseries.tree import create_tree, recycle_bad_leaves


def pattern_ids(words_all: np.ndarray) -> np.ndarray:
    """``pid[L][i]``: dense id of series ``i``'s word at level ``L`` (row 0 unused)."""
    pid = np.zeros(words_all.shape[:2], dtype=np.int64)
    for L in range(1, words_all.shape[0]):
        pid[L] = word_ids(words_all[L])
    return pid


def highest_common_level(pid: np.ndarray, members: np.ndarray, group: np.ndarray, upto: np.ndarray) -> np.ndarray:
    """Per group ``g`` the highest level ``<= upto[g]`` at which all its members share one word
    (level 1 always qualifies)."""
    out = np.ones(len(upto), dtype=np.int64)
    order = np.argsort(group, kind="stable")
    g, m = group[order], members[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    gid = g[starts]
    done = np.zeros(len(gid), dtype=bool)
    for L in range(int(upto.max()) if len(upto) else 1, 1, -1):
        ids = pid[L][m]
        same = np.minimum.reduceat(ids, starts) == np.maximum.reduceat(ids, starts)
        hit = same & ~done & (L <= upto[gid])
        out[gid[hit]] = L
        done |= hit
    return out


def _finish(words_all, kgroup, psub, level) -> Grouping:
    n, w = words_all.shape[1], words_all.shape[2]
    words = np.zeros((n, w), dtype=np.uint8)
    pub = kgroup >= 0
    words[pub] = words_all[level[pub], np.flatnonzero(pub)]
    return Grouping(kgroup=kgroup, psubgroup=psub, level=np.where(pub, level, 0), words=words)


def kapra(X: np.ndarray, k: int, P: int, max_level: int, paa_segments: int | None = None,
          progress=None, recycle: bool = True) -> Grouping:
    """KAPRA (Section 5.3): create-tree over the whole data set (Algorithm 1), recycle bad leaves
    (Algorithm 2, fewer than ``P`` series suppressed), then group formation (Algorithm 3): split
    P-subgroups of ``>= 2P`` series by top-down partitioning, make those of ``>= k`` series
    k-groups, start every other k-group from the remaining P-subgroup with the lowest value loss,
    add the P-subgroups minimizing VL of the union, and assign the leftovers
    (:func:`~tempanon.timeseries.partition.group_formation`). ``recycle=False`` skips Algorithm 2
    and suppresses every series of a bad leaf (Table 4's "NR" rows; the API never does).

    The P-subgroups are formed from SAX words of z-normalized series (Section 5.1), which ignore a
    series' level; only the preprocessing of Algorithm 3 (splitting P-subgroups of ``>= 2P``) and
    steps 2-5 look at values. With ``k = P`` (Section 7.3) step 1 makes every P-subgroup a k-group,
    so the published envelope is that of series sharing one word, whatever their levels: on data
    whose levels vary far more than each series does (cuts of one random walk) the envelopes are
    wide (docs/benchmarks.md, "Why KAPRA's range errors on Walk are large")."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    step = (lambda d, i: progress(d, i, 4)) if progress else (lambda d, i: None)
    step("KAPRA", 0)
    words_all = sax_all_levels(X, max_level, paa_segments)
    pid = pattern_ids(words_all)
    leaves = create_tree(pid, np.zeros(n, dtype=np.int64), P, max_level)
    step("KAPRA", 1)
    good_series = leaves.good[leaves.leaf]
    psub = np.full(n, -1, dtype=np.int64)
    level = np.zeros(n, dtype=np.int64)
    gs = np.flatnonzero(good_series)
    psub[gs] = np.unique(leaves.leaf[gs], return_inverse=True)[1]
    level[gs] = leaves.level[leaves.leaf[gs]]
    bs = np.flatnonzero(~good_series)
    if recycle:
        r_s, r_k, r_l, suppressed = recycle_bad_leaves(pid, bs, leaves.level[leaves.leaf[bs]], P)
    else:  # Table 4's "NR" rows: every series of a bad leaf is suppressed
        r_s = r_k = r_l = np.zeros(0, dtype=np.int64)
        suppressed = bs
    base = int(psub.max()) + 1 if gs.size else 0
    psub[r_s] = base + r_k
    level[r_s] = r_l
    step("KAPRA", 2)
    pub = np.flatnonzero(psub >= 0)
    if pub.size < k:
        raise NoSolutionError(
            f"only {pub.size} series can be published after suppressing {suppressed.size} "
            f"(fewer than P={P} are suppressed), fewer than k={k}")
    # Algorithm 3 step 1: split P-subgroups of >= 2P series (same word) by top-down partitioning
    sub = top_down_partition(X[pub], psub[pub], P)
    psub[pub] = sub
    lo, hi = envelopes(X[pub], sub)
    sizes = np.bincount(sub)
    kg_of_sub = group_formation(lo, hi, sizes, k, progress=progress)
    kgroup = np.full(n, -1, dtype=np.int64)
    kgroup[pub] = kg_of_sub[sub]
    step("KAPRA", 4)
    g = _finish(words_all, kgroup, psub, level)
    g.stats = {"suppressed": int(suppressed.size)}
    return g


def naive(X: np.ndarray, k: int, P: int, max_level: int, paa_segments: int | None = None,
          progress=None) -> Grouping:
    """Naive (Section 5.2): top-down greedy clustering into k-groups of ``k..2k-1`` series, then
    create-tree inside each k-group (Algorithm 1), then the post-processing merge: each bad leaf
    joins the good leaf of its k-group whose reconstructed pattern is nearest (ties: the smaller
    leaf), and the merged leaf takes the highest level ``<=`` its level at which all its members
    share one word. Nothing is suppressed."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    if n < k:
        raise NoSolutionError(f"the input has {n} series, fewer than k={k}")
    step = (lambda d, i: progress(d, i, 3)) if progress else (lambda d, i: None)
    step("Naive", 0)
    words_all = sax_all_levels(X, max_level, paa_segments)
    pid = pattern_ids(words_all)
    kgroup = top_down_partition(X, np.zeros(n, dtype=np.int64), k)
    step("Naive", 1)
    leaves = create_tree(pid, kgroup, P, max_level)
    step("Naive", 2)
    leaf = leaves.leaf.copy()
    lev = leaves.level.copy()
    bad_leaves = np.flatnonzero(~leaves.good)
    if bad_leaves.size:
        good_leaves = np.flatnonzero(leaves.good)
        # representative reconstructed pattern of each leaf: from its first member
        first = np.full(len(lev), -1, dtype=np.int64)
        first[leaf[::-1]] = np.arange(n)[::-1]
        w = words_all.shape[2]
        rep = np.zeros((len(lev), w))
        for L in np.unique(lev):
            sel = np.flatnonzero(lev == L)
            rep[sel] = medians(int(L))[words_all[L, first[sel]]]
        lsize = np.bincount(leaf, minlength=len(lev))
        # all (bad, good) pairs inside one k-group
        gorder = good_leaves[np.argsort(leaves.root[good_leaves], kind="stable")]
        groot = leaves.root[gorder]
        lo_i = np.searchsorted(groot, leaves.root[bad_leaves], side="left")
        hi_i = np.searchsorted(groot, leaves.root[bad_leaves], side="right")
        reps = hi_i - lo_i
        b = np.repeat(bad_leaves, reps)
        offs = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        gcand = gorder[np.repeat(lo_i, reps) + offs]
        dist = ((rep[b] - rep[gcand]) ** 2).sum(axis=1)
        o = np.lexsort((gcand, lsize[gcand], dist, b))
        firsts = np.flatnonzero(np.r_[True, b[o][1:] != b[o][:-1]])
        target = np.zeros(len(lev), dtype=np.int64)
        target[b[o][firsts]] = gcand[o][firsts]
        moved = ~leaves.good[leaf]
        leaf[moved] = target[leaf[moved]]
        touched = np.unique(leaf[moved])
        sel = np.flatnonzero(np.isin(leaf, touched))
        tg = np.searchsorted(touched, leaf[sel])
        lev[touched] = highest_common_level(pid, sel, tg, lev[touched])
    psub = np.unique(leaf, return_inverse=True)[1].astype(np.int64)
    level = lev[leaf]
    step("Naive", 3)
    g = _finish(words_all, kgroup, psub, level)
    g.stats = {"suppressed": 0}
    return g
