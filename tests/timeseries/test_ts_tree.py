"""Algorithms 1-3 against straightforward reference implementations (oracles) on small inputs."""

from collections import defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.timeseries.algorithms import highest_common_level, pattern_ids
from tempanon.timeseries.partition import envelopes, group_formation, top_down_partition
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


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 14), st.integers(0, 10_000))
def test_group_formation_greedy_step_is_exact_argmin(R, seed):
    """Sizes k/2: every k-group is a seed plus the one P-subgroup minimizing VL of the union.
    Brute force over all candidates for the first k-group (seed: farthest from the centroid)."""
    rng = np.random.default_rng(seed)
    lo = rng.random((R, 3))
    hi = lo + rng.random((R, 3))
    size = np.full(R, 3)
    kg = group_formation(lo, hi, size, 6)
    centre = (lo + hi) / 2
    s0 = int(np.argmax(((centre - centre.mean(axis=0)) ** 2).sum(axis=1)))
    g0 = kg[s0]
    partner = [j for j in np.flatnonzero(kg == g0) if j != s0]
    vl = {j: _vl_total(np.minimum(lo[s0], lo[j]), np.maximum(hi[s0], hi[j]), 6) for j in range(R) if j != s0}
    best = min(vl.values())
    assert any(np.isclose(vl[j], best, rtol=1e-5) for j in partner)
    if R % 2 == 0:
        assert np.bincount(kg).max() == 2  # pairs only
    assert np.bincount(kg, weights=size).min() >= 6


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
