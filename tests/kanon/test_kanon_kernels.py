"""The batched root check and the one-value-level shortcut of the Incognito search, against the
plain per-node rollup and the exhaustive scan."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempanon.hierarchy import Hierarchy
from tempanon.kanon import encode_for_search, run_search
from tempanon.lattice.freqset import rollup, small_class_tuples, table_frequency_set
from tempanon.lattice.lattice import Lattice


def _masking(name: str, domain: int, height: int) -> Hierarchy:
    """Values 0..domain-1 as 3-digit strings, one more digit masked per level, then '*'."""
    rows = []
    for v in range(domain):
        s = f"{v:03d}"
        rows.append([s] + [s[: 3 - i] + "*" * i for i in range(1, height)] + ["*"])
    return Hierarchy.from_rows(name, rows)


def _table(rng, n: int, domains: list[int], heights: list[int]):
    names = [f"a{i}" for i in range(len(domains))]
    df = pd.DataFrame({a: [f"{v:03d}" for v in rng.integers(0, d, n)] for a, d in zip(names, domains)})
    hier = {a: _masking(a, d, h) for a, d, h in zip(names, domains, heights)}
    return encode_for_search(df, names, hier)


@pytest.mark.parametrize(
    "domains, n",
    [([6, 5, 4], 200), ([300, 250, 200], 400)],  # a small key space (bincount) and a large one (row-wise sort)
    ids=["dense", "sorted"],
)
def test_batched_small_class_tuples_equal_per_node_rollups(domains, n):
    rng = np.random.default_rng(7)
    dims, table = _table(rng, n, domains, [3, 3, 2])
    attrs = (0, 1, 2)
    source = table_frequency_set(table, dims, attrs, (0, 0, 0))
    nodes = list(Lattice(dims).nodes())
    got = small_class_tuples(source, dims, nodes, 3)
    for node, value in zip(nodes, got.tolist()):
        fs = rollup(source, dims, node)
        assert value == int(fs.counts[fs.counts < 3].sum()), node
    # a source above level 0 and a subset of the nodes
    mid = table_frequency_set(table, dims, attrs, (1, 1, 0))
    above = [nd for nd in nodes if nd[0] >= 1 and nd[1] >= 1]
    got = small_class_tuples(mid, dims, above, 4)
    want = [int(f.counts[f.counts < 4].sum()) for f in (rollup(mid, dims, nd) for nd in above)]
    assert got.tolist() == want


def test_batched_check_refuses_respondent_counts():
    df = pd.DataFrame({"a": ["1", "2", "1"], "uid": [1, 1, 2]})
    hier = {"a": Hierarchy.from_rows("a", [["1", "*"], ["2", "*"]])}
    dims, table = encode_for_search(df, ["a"], hier, "uid")
    fs = table_frequency_set(table, dims, (0,), (0,))
    with pytest.raises(ValueError, match="respondent"):
        small_class_tuples(fs, dims, [(1,)], 2)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from([0, 5, 40]), st.integers(2, 6))
def test_wider_tables_match_exhaustive(seed, max_sup, k):
    """Larger domains than the oracle module's (the sort path of the batched check, many roots
    with and without a one-value attribute): every Incognito variant == exhaustive."""
    rng = np.random.default_rng(seed)
    dims, table = _table(rng, 300, [int(d) for d in rng.integers(2, 120, 4)], [int(h) for h in rng.integers(1, 4, 4)])
    oracle = run_search("exhaustive", dims, table, k, max_sup)
    for alg in ("incognito", "super-roots", "cube"):
        res = run_search(alg, dims, table, k, max_sup)
        assert res.anonymous_nodes == oracle.anonymous_nodes, alg
        assert res.minimal_nodes == oracle.minimal_nodes, alg


def test_nodes_with_a_one_value_attribute_are_decided_without_data():
    """A candidate with an attribute at '*' has its projection's frequency set; the search counts
    it as checked (the paper's count) but computes nothing for it."""
    rng = np.random.default_rng(3)
    dims, table = _table(rng, 500, [40, 30, 8], [3, 3, 1])
    res = run_search("incognito", dims, table, 3, 0)
    assert 0 < res.stats.by_projection < res.stats.nodes_checked
    # basic Incognito: every other check is one table scan (a root) or one rollup (a child)
    assert res.stats.table_scans + res.stats.rollups == res.stats.nodes_checked - res.stats.by_projection
    full = run_search("exhaustive", dims, table, 3, 0)
    assert full.stats.by_projection == 0
    assert full.anonymous_nodes == res.anonymous_nodes


@pytest.mark.parametrize(
    "m, cards",
    [(500, [6, 5, 4]), (500, [900, 800]), (40_000, [900, 800, 700]), (40_000, [40, 30])],
    ids=["dense", "sorted", "hashed", "dense-large"],
)
def test_near_unique_counts_equal_weighted_grouping(m, cards):
    """A near-unique table is grouped by counting rows plus the extra tuples of its few repeated
    rows (``multi``); the frequency set equals the one grouped with float weights, on every path
    of group_rows (bincount, sort, hash)."""
    from tempanon.lattice.freqset import group_rows

    rng = np.random.default_rng(11)
    cols = [rng.integers(0, c, m).astype(np.uint16) for c in cards]
    counts = np.ones(m, dtype=np.int64)
    rows = rng.choice(m, size=max(1, m // 50), replace=False)
    counts[rows] = rng.integers(2, 9, len(rows))
    attrs, levels = tuple(range(len(cards))), (0,) * len(cards)
    want = group_rows(attrs, levels, cols, cards, counts.astype(np.float64))
    got = group_rows(attrs, levels, cols, cards, None, multi=(rows, counts[rows] - 1))
    order_w, order_g = np.lexsort(want.codes.T[::-1]), np.lexsort(got.codes.T[::-1])
    np.testing.assert_array_equal(want.codes[order_w], got.codes[order_g])
    np.testing.assert_array_equal(want.counts[order_w], got.counts[order_g])
    assert got.counts.dtype == np.int64 and got.n_tuples == int(counts.sum())
