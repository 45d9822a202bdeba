"""Algorithms 1-3 against straightforward reference implementations (oracles) on small inputs."""

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.timeseries.algorithms import highest_common_level, pattern_ids
from tempanon.timeseries.partition import envelopes, group_formation, group_formation_reference, top_down_partition
from tempanon.timeseries.sax import sax_all_levels
from tempanon.timeseries.tree import create_tree, recycle_bad_leaves


def ref_create_tree(words, members, P, max_level):
    """Algorithm 1 written literally with recursion and dicts; ``words[L][i]`` is a tuple."""
    leaves = []

    def maximize(mem, level):
        best = level
        for L in range(level + 1, max_level + 1):
            if len({words[L][i] for i in mem}) == 1:
                best = L
        return best

    def split(mem, level):
        if len(mem) < P:
            leaves.append((frozenset(mem), level, False))
            return
        if level == max_level:
            leaves.append((frozenset(mem), level, True))
            return
        if len(mem) < 2 * P:
            leaves.append((frozenset(mem), maximize(mem, level), True))
            return
        children = defaultdict(list)
        for i in mem:
            children[words[level + 1][i]].append(i)
        tg = [c for c in children.values() if len(c) >= P]
        tb = [c for c in children.values() if len(c) < P]
        if not tg:
            leaves.append((frozenset(mem), level, True))
            return
        if sum(map(len, tb)) >= P:
            split(sum(tb, []), level)  # childmerge at N.level, split again (generic recursion)
        else:
            for c in tb:
                split(c, level + 1)
        for c in tg:
            split(c, level + 1)

    split(list(members), 1)
    return set(leaves)


def ref_recycle(words, bad, P):
    """Algorithm 2 literally: ``bad`` is a list of (members, level)."""
    good = []
    nodes = [(list(m), lv) for m, lv in bad]
    cur = max(lv for _, lv in nodes)
    while sum(len(m) for m, _ in nodes) >= P and cur >= 1:
        at = [nd for nd in nodes if nd[1] == cur]
        rest = [nd for nd in nodes if nd[1] != cur]
        merged = defaultdict(list)
        for m, _ in at:
            for i in m:
                merged[words[cur][i]].append(i)
        nodes = rest
        for m in merged.values():
            if len(m) >= P:
                good.append((frozenset(m), cur))
            else:
                nodes.append((m, cur - 1))
        cur -= 1
    return set(good), {i for m, _ in nodes for i in m}


series = st.integers(4, 60).flatmap(lambda n: st.lists(
    st.lists(st.integers(0, 4), min_size=5, max_size=5), min_size=n, max_size=n))


def _setup(rows, max_level):
    X = np.array(rows, dtype=float)
    W = sax_all_levels(X, max_level)
    words = {L: [tuple(w) for w in W[L]] for L in range(1, max_level + 1)}
    return X, W, pattern_ids(W), words


@settings(max_examples=80, deadline=None)
@given(series, st.integers(1, 6), st.integers(1, 5), st.integers(1, 3))
def test_create_tree_matches_reference(rows, P, max_level, n_roots):
    X, W, pid, words = _setup(rows, max_level)
    n = len(rows)
    roots = np.arange(n) % n_roots
    leaves = create_tree(pid, roots, P, max_level)
    got = set()
    for leaf in range(len(leaves.level)):
        mem = frozenset(np.flatnonzero(leaves.leaf == leaf).tolist())
        got.add((mem, int(leaves.level[leaf]), bool(leaves.good[leaf])))
        assert {int(r) for r in roots[list(mem)]} == {int(leaves.root[leaf])}
    expect = set()
    for r in range(n_roots):
        expect |= ref_create_tree(words, np.flatnonzero(roots == r).tolist(), P, max_level)
    assert got == expect
    assert (leaves.leaf >= 0).all()


@settings(max_examples=80, deadline=None)
@given(series, st.integers(1, 6), st.integers(2, 5))
def test_recycle_matches_reference(rows, P, max_level):
    X, W, pid, words = _setup(rows, max_level)
    leaves = create_tree(pid, np.zeros(len(rows), dtype=np.int64), P, max_level)
    bad_ids = np.flatnonzero(~leaves.good)
    if bad_ids.size == 0:
        return
    bs = np.flatnonzero(~leaves.good[leaves.leaf])
    s, key, lev, supp = recycle_bad_leaves(pid, bs, leaves.level[leaves.leaf[bs]], P)
    got = set()
    for kk in np.unique(key):
        mem = s[key == kk]
        assert len(set(lev[key == kk].tolist())) == 1
        got.add((frozenset(mem.tolist()), int(lev[key == kk][0])))
    bad = [(np.flatnonzero(leaves.leaf == b).tolist(), int(leaves.level[b])) for b in bad_ids]
    eg, es = ref_recycle(words, bad, P)
    assert got == eg
    assert set(supp.tolist()) == es
    assert len(es) < P or not bad


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 120), st.integers(1, 9), st.integers(0, 10_000), st.booleans())
def test_top_down_partition_sizes(n, m, seed, ties):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, 3)).astype(float) if ties else rng.random((n, 3))
    lab = top_down_partition(X, np.zeros(n, dtype=np.int64), m)
    sizes = np.bincount(lab)
    if n >= 2 * m:
        assert sizes.min() >= m
    assert sizes.max() < 2 * m or len(sizes) == 1 and n < 2 * m
    assert sizes.sum() == n


def test_top_down_partition_separates_clusters():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(0, 0.01, (10, 4)), rng.normal(5, 0.01, (10, 4))])
    lab = top_down_partition(X, np.zeros(20, dtype=np.int64), 10)
    assert len(set(lab[:10])) == 1 and len(set(lab[10:])) == 1 and lab[0] != lab[10]


def _vl_total(lo, hi, size):
    return size * np.sqrt(np.mean((hi - lo) ** 2, axis=-1))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=25), st.integers(1, 12), st.integers(0, 1000))
def test_group_formation_every_group_reaches_k(sizes, k, seed):
    sizes = np.array(sizes)
    if sizes.sum() < k:
        return
    rng = np.random.default_rng(seed)
    lo = rng.random((len(sizes), 3))
    hi = lo + rng.random((len(sizes), 3))
    kg = group_formation(lo, hi, sizes, k)
    assert (kg >= 0).all()
    tot = np.bincount(kg, weights=sizes)
    assert tot.min() >= k


def _brute_force_algorithm3(lo, hi, size, k):
    """Algorithm 3 written out once more, independently of partition.py: plain Python lists."""
    R = len(size)
    vl = lambda L, H, m: m * np.sqrt(np.mean((np.asarray(H) - np.asarray(L)) ** 2))
    out = [-1] * R
    groups = []
    for i in range(R):
        if size[i] >= k:
            out[i] = len(groups)
            groups.append([lo[i], hi[i], size[i]])
    alive = [i for i in range(R) if size[i] < k]
    while sum(size[i] for i in alive) >= k:
        s = min(alive, key=lambda i: (np.sqrt(np.mean((hi[i] - lo[i]) ** 2)), i))  # step 2
        alive.remove(s)
        G = [lo[s], hi[s], size[s]]
        out[s] = len(groups)
        while G[2] < k:  # steps 3-4
            j = min(alive, key=lambda i: (vl(np.minimum(G[0], lo[i]), np.maximum(G[1], hi[i]), G[2] + size[i]), i))
            alive.remove(j)
            out[j] = len(groups)
            G = [np.minimum(G[0], lo[j]), np.maximum(G[1], hi[j]), G[2] + size[j]]
        groups.append(G)
    for j in alive:  # step 5
        inc = [vl(np.minimum(g[0], lo[j]), np.maximum(g[1], hi[j]), g[2] + size[j]) - vl(g[0], g[1], g[2]) for g in groups]
        t = int(np.argmin(inc))
        out[j] = t
        g = groups[t]
        groups[t] = [np.minimum(g[0], lo[j]), np.maximum(g[1], hi[j]), g[2] + size[j]]
    return np.array(out)


def _envelope_inputs(rng, R, n, mode):
    if mode == 0:  # continuous
        lo = rng.random((R, n))
        return lo, lo + rng.random((R, n)) * 0.3
    if mode == 1:  # a coarse grid: many exact ties
        lo = rng.integers(0, 3, (R, n)).astype(float)
        return lo, lo + rng.integers(0, 2, (R, n))
    base = np.cumsum(rng.normal(size=R))[:, None] + rng.normal(size=(R, n)) * 0.1  # walk-like
    return base, base + rng.random((R, n)) * 0.2


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(1, 4), st.integers(1, 12), st.integers(0, 2), st.integers(0, 10_000))
def test_group_formation_is_algorithm_3(R, n, k, mode, seed):
    """Fast (indexed) search = literal quadratic reference = an independent brute force, including
    the paper's seed rule (lowest instant value loss first) and the tie-breaks (lowest index)."""
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 10, R)
    if size.sum() < k:
        return
    lo, hi = _envelope_inputs(rng, R, n, mode)
    fast = group_formation(lo, hi, size, k)
    ref = group_formation_reference(lo, hi, size, k)
    assert fast.tolist() == ref.tolist()
    if mode != 1:  # exact float ties could be ordered differently by the brute force's sqrt
        assert ref.tolist() == _brute_force_algorithm3(lo, hi, size, k).tolist()


@pytest.mark.parametrize("seed", range(6))
def test_group_formation_index_exact_on_large_inputs(seed):
    """Inputs large enough for many kd leaves and blocks and for several index rebuilds."""
    rng = np.random.default_rng(seed)
    R = int(rng.integers(800, 2500))
    n = int(rng.integers(1, 11))
    k = int(rng.choice([2, 5, 10, 20, 50]))
    lo, hi = _envelope_inputs(rng, R, n, seed % 3)
    size = rng.integers(1, 10, R)
    assert group_formation(lo, hi, size, k).tolist() == group_formation_reference(lo, hi, size, k).tolist()


def test_group_formation_seed_is_lowest_value_loss():
    """Algorithm 3 step 2: the first k-group starts from the P-subgroup whose envelope has the
    smallest VL, here the middle one (width 0.1), not the one farthest from the centre."""
    lo = np.array([[0.0], [5.0], [9.0], [5.05]])
    hi = np.array([[1.0], [5.1], [10.0], [5.6]])
    size = np.array([2, 2, 2, 2])
    kg = group_formation(lo, hi, size, 4)
    assert kg[1] == kg[3] and kg[0] == kg[2] and kg[1] == 0


def test_envelopes_and_common_level():
    X = np.array([[0.0, 1.0], [2.0, -1.0], [5.0, 5.0]])
    lo, hi = envelopes(X, np.array([0, 0, 1]))
    assert lo.tolist() == [[0.0, -1.0], [5.0, 5.0]] and hi.tolist() == [[2.0, 1.0], [5.0, 5.0]]
    W = sax_all_levels(np.array([[0, 1, 2], [0, 1, 2], [2, 1, 0.0]]), 4)
    pid = pattern_ids(W)
    lv = highest_common_level(pid, np.array([0, 1, 2]), np.array([0, 0, 1]), np.array([4, 4]))
    assert lv.tolist() == [4, 4]
    lv = highest_common_level(pid, np.array([0, 1, 2]), np.array([0, 0, 0]), np.array([4]))
    assert lv.tolist() == [1]
