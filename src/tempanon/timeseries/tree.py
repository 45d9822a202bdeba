"""Pattern trees: node splitting (Algorithm 1) and recycling of bad leaves (Algorithm 2).

Shou et al., TKDE, Section 5.2 (create-tree) and Section 5.3 (recycle bad leaves). The tree is
built breadth-first for all roots at once on integer codes: ``pid[L][i]`` is the id of series
``i``'s SAX word at level ``L``, and a tentative split of a node is a group-by of
``(node, pid[level+1])`` with :func:`numpy.unique`.

Node splitting of a node ``N`` (Algorithm 1):

* ``|N| < P``: bad leaf; ``N.level == max_level``: good leaf;
  ``P <= |N| < 2P``: *maximize-level* (the highest level ``<= max_level`` at which all members
  still share one word) and good leaf;
* otherwise a tentative split at ``N.level + 1``: children of size ``>= P`` are TG nodes, the
  others TB nodes. No TG node: ``N`` is a good leaf. If the TB nodes hold ``>= P`` series they are
  merged into ``childmerge`` at ``N.level`` (with ``N``'s pattern); re-splitting it would give the
  same TB nodes, so it is a good leaf (after maximize-level when ``< 2P``). Otherwise every TB node
  is a bad leaf at ``N.level + 1``. TG nodes are split recursively at ``N.level + 1``.

Levels only grow along a path, so there are at most ``max_level`` rounds of vectorized work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Leaves:
    """Leaves of pattern trees: per series its leaf, per leaf its level, label and root."""

    leaf: np.ndarray  # leaf id of each series
    level: np.ndarray  # per leaf
    good: np.ndarray  # per leaf: good (>= P) or bad
    root: np.ndarray  # per leaf: the root (k-group for Naive, 0 for KAPRA)


def maximize_level(pid: np.ndarray, members: np.ndarray, group: np.ndarray, level: np.ndarray,
                   max_level: int) -> np.ndarray:
    """Highest level in ``[level[g], max_level]`` at which all members of group ``g`` share one
    word. ``members``: series indices; ``group``: dense group id of each member; ``level``: current
    level of each group (members share a word there). Returns the new level of each group."""
    out = np.asarray(level, dtype=np.int64).copy()
    if members.size == 0:
        return out
    order = np.argsort(group, kind="stable")
    g = group[order]
    m = members[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    gid = g[starts]
    done = np.zeros(len(gid), dtype=bool)
    for L in range(max_level, 1, -1):
        ids = pid[L][m]
        same = np.minimum.reduceat(ids, starts) == np.maximum.reduceat(ids, starts)
        hit = same & ~done & (L > out[gid])
        out[gid[hit]] = L
        done |= same | (L <= out[gid])
    return out


def create_tree(pid: np.ndarray, roots: np.ndarray, P: int, max_level: int) -> Leaves:
    """Algorithm 1 (node splitting) for every root at once. ``roots``: dense root id per series;
    every root starts at level 1 (all series share the word ``aa..a``)."""
    n = roots.size
    leaf_of = np.full(n, -1, dtype=np.int64)
    leaf_level: list[np.ndarray] = []
    leaf_good: list[np.ndarray] = []
    leaf_root: list[np.ndarray] = []
    n_leaves = 0

    def emit(series: np.ndarray, key: np.ndarray, level_of_key: np.ndarray, good: bool, root_of_key):
        """Make one leaf per distinct ``key`` among ``series``."""
        nonlocal n_leaves
        if series.size == 0:
            return
        uk, inv = np.unique(key, return_inverse=True)
        first = np.zeros(len(uk), dtype=np.int64)
        first[inv[::-1]] = np.arange(len(inv))[::-1]
        leaf_of[series] = n_leaves + inv
        leaf_level.append(np.asarray(level_of_key)[first])
        leaf_good.append(np.full(len(uk), good))
        leaf_root.append(np.asarray(root_of_key)[first])
        n_leaves += len(uk)

    idx = np.arange(n, dtype=np.int64)
    node = np.unique(roots, return_inverse=True)[1].astype(np.int64)
    nroot = np.unique(roots)
    nlevel = np.ones(len(nroot), dtype=np.int64)
    while idx.size:
        size = np.bincount(node)
        s_size = size[node]
        s_level = nlevel[node]
        s_root = nroot[node]
        bad = s_size < P
        emit(idx[bad], node[bad], s_level[bad], False, s_root[bad])
        at_max = ~bad & (s_level >= max_level)
        emit(idx[at_max], node[at_max], s_level[at_max], True, s_root[at_max])
        small = ~bad & ~at_max & (s_size < 2 * P)
        if small.any():
            sub_nodes, sub_inv = np.unique(node[small], return_inverse=True)
            new_level = maximize_level(pid, idx[small], sub_inv, nlevel[sub_nodes], max_level)
            emit(idx[small], node[small], new_level[sub_inv], True, s_root[small])
        split = ~bad & ~at_max & ~small
        if not split.any():
            break
        idx, node, s_level, s_root = idx[split], node[split], s_level[split], s_root[split]
        child_pid = pid[s_level + 1, idx]
        width = int(child_pid.max()) + 1
        ckey, cinv = np.unique(node * width + child_pid, return_inverse=True)
        csize = np.bincount(cinv)
        tg_series = csize[cinv] >= P
        nodes_u, node_inv = np.unique(node, return_inverse=True)
        has_tg = np.bincount(node_inv, weights=tg_series, minlength=len(nodes_u)) > 0
        tb_total = np.bincount(node_inv, weights=~tg_series, minlength=len(nodes_u))
        s_has_tg = has_tg[node_inv]
        # no TG child: N itself is a good leaf
        keep = ~s_has_tg
        emit(idx[keep], node[keep], s_level[keep], True, s_root[keep])
        # TB nodes: childmerge (good leaf at N.level) or bad leaves at N.level + 1
        tb = s_has_tg & ~tg_series
        merge = tb & (tb_total[node_inv] >= P)
        if merge.any():
            m_nodes, m_inv = np.unique(node[merge], return_inverse=True)
            m_size = np.bincount(m_inv)
            m_level = nlevel[m_nodes].copy()
            lift = m_size < 2 * P
            if lift.any():
                sel = lift[m_inv]
                m_level[lift] = maximize_level(pid, idx[merge][sel], np.unique(m_inv[sel], return_inverse=True)[1],
                                               m_level[lift], max_level)
            emit(idx[merge], node[merge], m_level[m_inv], True, s_root[merge])
        badtb = tb & ~merge
        emit(idx[badtb], cinv[badtb], s_level[badtb] + 1, False, s_root[badtb])
        # TG nodes: split recursively at N.level + 1
        go = s_has_tg & tg_series
        idx = idx[go]
        cn, node = np.unique(cinv[go], return_inverse=True)
        first = np.zeros(len(cn), dtype=np.int64)
        first[node[::-1]] = np.arange(len(node))[::-1]
        nlevel = (s_level[go] + 1)[first]
        nroot = s_root[go][first]
        node = node.astype(np.int64)
    cat = (lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt))
    return Leaves(leaf_of, cat(leaf_level, np.int64), cat(leaf_good, bool), cat(leaf_root, np.int64))


def recycle_bad_leaves(pid: np.ndarray, series: np.ndarray, level: np.ndarray, P: int):
    """Algorithm 2 (Section 5.3.2). ``series``: members of bad leaves; ``level``: their leaf level.

    From the highest bad level down: bad leaves at the current level with the same word are merged;
    a merged node with ``>= P`` series becomes a good leaf; the others move one level down (their
    words recomputed at the lower level). Stops when fewer than ``P`` series remain in bad leaves,
    which are suppressed. Returns ``(good_series, good_key, good_level, suppressed_series)`` where
    ``good_key`` numbers the new good leaves densely.
    """
    series = np.asarray(series, dtype=np.int64)
    lvl = np.asarray(level, dtype=np.int64).copy()
    out_s, out_k, out_l = [], [], []
    n_new = 0
    cur = int(lvl.max()) if lvl.size else 0
    alive = np.ones(series.size, dtype=bool)
    while alive.sum() >= P and cur >= 1:
        at = alive & (lvl == cur)
        if at.any():
            ids = pid[cur][series[at]]
            u, inv = np.unique(ids, return_inverse=True)
            cnt = np.bincount(inv)
            ok = cnt[inv] >= P
            pos = np.flatnonzero(at)
            if ok.any():
                u2, inv2 = np.unique(inv[ok], return_inverse=True)
                out_s.append(series[pos[ok]])
                out_k.append(n_new + inv2)
                out_l.append(np.full(ok.sum(), cur))
                n_new += len(u2)
                alive[pos[ok]] = False
            lvl[pos[~ok]] = cur - 1
        cur -= 1
    cat = (lambda parts: np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64))
    return cat(out_s), cat(out_k), cat(out_l), series[alive]
