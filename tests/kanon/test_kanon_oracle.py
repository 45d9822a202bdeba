"""Property-based tests: every sound and complete search returns exactly the exhaustive scan's
anonymous nodes (with and without suppression, with and without respondent ids, on chains and on
a diamond-shaped level DAG); binary search returns a node of minimal height; rollup equals the
frequency set computed from the table."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempanon.kanon import encode_for_search, run_search
from tempanon.kanon.search import COMPLETE
from tempanon.lattice import Dimension
from tempanon.lattice.freqset import rollup, table_frequency_set
from tempanon.lattice.lattice import Lattice

from hierarchy_strategies import random_chain


class _DiamondEncoder:
    """Levels 0 -> {1, 2} -> 3 with two incomparable partitions at 1 and 2 (a non-chain DAG)."""

    def __init__(self, p1: list[int], p2: list[int]):
        self.p1, self.p2 = p1, p2

    def encode(self, series: pd.Series):
        d = len(self.p1)
        base = np.arange(d)
        # level 3: connected components of the union of both partitions (their join)
        parent = list(range(d))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for part in (self.p1, self.p2):
            first = {}
            for v, g in enumerate(part):
                if g in first:
                    parent[find(v)] = find(first[g])
                first.setdefault(g, v)
        top = [find(v) for v in range(d)]
        codes, labels, losses = [], [], []
        for part in (list(base), self.p1, self.p2, top):
            lab, uniq = pd.factorize(pd.Series(part))
            codes.append(lab.astype(np.int64))
            labels.append(np.array([f"g{u}" for u in uniq], dtype=object))
            losses.append(np.zeros(len(uniq)))
        dim = Dimension("diamond", ("0", "a", "b", "top"), ((1, 2), (3,), (3,), ()), tuple(codes), tuple(labels), tuple(losses))
        return dim, series.astype(int).to_numpy()


@st.composite
def problems(draw, allow_dag: bool = False):
    q = draw(st.integers(1, 3))
    n = draw(st.integers(1, 30))
    hier, data = {}, {}
    for a in range(q):
        name = f"q{a}"
        domain = draw(st.integers(1, 5))
        hier[name] = random_chain(draw, name, domain)
        data[name] = [f"{name}{draw(st.integers(0, domain - 1))}" for _ in range(n)]
    if allow_dag:
        d = draw(st.integers(2, 5))
        p1 = [draw(st.integers(0, 2)) for _ in range(d)]
        p2 = [draw(st.integers(0, 2)) for _ in range(d)]
        hier["t"] = _DiamondEncoder(p1, p2)
        data["t"] = [draw(st.integers(0, d - 1)) for _ in range(n)]
    df = pd.DataFrame(data)
    uid = None
    if draw(st.booleans()):
        n_resp = draw(st.integers(1, max(1, n)))
        df["uid"] = [draw(st.integers(0, n_resp - 1)) for _ in range(n)]
        uid = "uid"
    k = draw(st.integers(2, 4))
    max_sup = draw(st.sampled_from([0, 0, 1, 3, 10]))
    return df, list(hier), hier, k, max_sup, uid


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(problems())
def test_complete_algorithms_match_exhaustive(problem):
    df, qi, hier, k, max_sup, uid = problem
    dims, table = encode_for_search(df, qi, hier, uid)
    oracle = run_search("exhaustive", dims, table, k, max_sup)
    for alg in sorted(COMPLETE - {"exhaustive"}):
        res = run_search(alg, dims, table, k, max_sup)
        assert res.anonymous_nodes == oracle.anonymous_nodes, alg
        assert res.minimal_nodes == oracle.minimal_nodes, alg
        assert res.stats.nodes_checked <= Lattice(dims).size * (2 ** len(dims)), alg


@SETTINGS
@given(problems(allow_dag=True))
def test_complete_algorithms_match_exhaustive_on_a_level_dag(problem):
    df, qi, hier, k, max_sup, uid = problem
    dims, table = encode_for_search(df, qi, hier, uid)
    oracle = run_search("exhaustive", dims, table, k, max_sup)
    for alg in sorted(COMPLETE - {"exhaustive"}):
        assert run_search(alg, dims, table, k, max_sup).anonymous_nodes == oracle.anonymous_nodes, alg


@SETTINGS
@given(problems())
def test_binary_search_returns_a_minimal_height_node(problem):
    df, qi, hier, k, max_sup, uid = problem
    dims, table = encode_for_search(df, qi, hier, uid)
    oracle = run_search("exhaustive", dims, table, k, max_sup)
    res = run_search("binary-search", dims, table, k, max_sup)
    lat = Lattice(dims)
    if not oracle.anonymous_nodes:
        assert res.minimal_nodes == []
    else:
        assert res.minimal_nodes[0] in oracle.anonymous_nodes
        assert lat.height(res.minimal_nodes[0]) == min(lat.height(n) for n in oracle.anonymous_nodes)


def _brute_anonymous(df, qi, hier, node, k, max_sup, uid):
    """Directly from the strings: generalize with the hierarchy tables, group with pandas."""
    g = pd.DataFrame({q: df[q].map(hier[q].mapping(v)) for q, v in zip(qi, node)})
    if uid:
        sizes = g.assign(u=df[uid]).groupby(qi)["u"].nunique()
    else:
        sizes = g.groupby(qi).size()
    rows = g.groupby(qi).size()
    small = sizes[sizes < k].index
    return int(rows.loc[small].sum()) <= max_sup


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_exhaustive_agrees_with_pandas_brute_force(problem):
    df, qi, hier, k, max_sup, uid = problem
    dims, table = encode_for_search(df, qi, hier, uid)
    oracle = set(run_search("exhaustive", dims, table, k, max_sup).anonymous_nodes)
    brute = {n for n in Lattice(dims).nodes() if _brute_anonymous(df, qi, hier, n, k, max_sup, uid)}
    assert oracle == brute


@SETTINGS
@given(problems(allow_dag=True), st.data())
def test_rollup_equals_frequency_set_from_table(problem, data):
    df, qi, hier, k, max_sup, uid = problem
    dims, table = encode_for_search(df, qi, hier, uid)
    lat = Lattice(dims)
    nodes = list(lat.nodes())
    lo = data.draw(st.sampled_from(nodes))
    ups = [n for n in nodes if lat.is_generalization(lo, n)]
    hi = data.draw(st.sampled_from(ups))
    attrs = tuple(range(len(dims)))
    rolled = rollup(table_frequency_set(table, dims, attrs, lo), dims, hi)
    direct = table_frequency_set(table, dims, attrs, hi)
    assert np.array_equal(rolled.codes, direct.codes)
    assert np.array_equal(rolled.counts, direct.counts)
    assert np.array_equal(rolled.class_sizes(), direct.class_sizes())


def test_binary_search_refuses_ungraded_levels():
    """Samarati's binary search needs every step to rise one height; a skip edge is refused."""
    import pytest

    from tempanon.errors import InputError

    codes = (np.arange(3), np.array([0, 0, 1]), np.array([0, 0, 0]))
    labels = tuple(np.array([f"v{i}" for i in range(len(set(c.tolist())))], dtype=object) for c in codes)
    # 0 -> 1 -> 2 and a direct 0 -> 2 edge: level 2 has height 2, the 0 -> 2 step skips height 1
    dim = Dimension("t", ("0", "1", "2"), ((1, 2), (2,), ()), codes, labels, tuple(np.zeros(len(x)) for x in labels))
    assert not dim.is_graded
    from tempanon.lattice.freqset import encode_table

    table = encode_table([dim], [np.array([0, 1, 2, 2])])
    with pytest.raises(InputError, match="graded"):
        run_search("binary-search", [dim], table, 2)
    assert run_search("incognito", [dim], table, 2).anonymous_nodes == run_search("exhaustive", [dim], table, 2).anonymous_nodes


@SETTINGS
@given(problems(), st.integers(2, 3), st.data())
def test_l_diversity_search_matches_brute_force(problem, l, data):
    """With a sensitive column, every complete algorithm returns exactly the nodes whose classes
    all have >= k rows and a most frequent sensitive value of at most |E|/l rows."""
    df, qi, hier, k, _, _ = problem
    df = df.assign(s=[data.draw(st.sampled_from("abc")) for _ in range(len(df))])
    dims, _ = encode_for_search(df, qi, hier)
    from tempanon.lattice.freqset import encode_table

    cols = [hier[q].encode(df[q].rename(q))[1] for q in qi]
    table = encode_table(dims, cols, sensitive=df["s"].to_numpy(dtype=object))
    brute = set()
    for node in Lattice(dims).nodes():
        g = pd.DataFrame({q: df[q].map(hier[q].mapping(v)) for q, v in zip(qi, node)})
        c = g.assign(s=df["s"]).groupby(qi + ["s"]).size().groupby(level=list(range(len(qi)))).agg(["max", "sum"])
        if (c["sum"] >= k).all() and (c["max"] * l <= c["sum"]).all():
            brute.add(node)
    for alg in sorted(COMPLETE):
        assert set(run_search(alg, dims, table, k, 0, l=l).anonymous_nodes) == brute, alg


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_parallel_families_give_identical_results(problem):
    from tempanon.kanon.search import incognito

    df, qi, hier, k, max_sup, uid = problem
    dims, table = encode_for_search(df, qi, hier, uid)
    for variant in ("basic", "super-roots", "cube"):
        one = incognito(dims, table, k, max_sup, variant=variant, workers=1)
        two = incognito(dims, table, k, max_sup, variant=variant, workers=2)
        assert one.anonymous_nodes == two.anonymous_nodes
        assert one.stats.nodes_checked == two.stats.nodes_checked
        assert one.stats.rollups == two.stats.rollups and one.stats.table_scans == two.stats.table_scans


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_incognito_accounts_for_every_subset_lattice_node(problem):
    """candidates + pruned = all nodes of all subset lattices; candidates = checked + marked."""
    import itertools

    from tempanon.kanon.search import incognito

    df, qi, hier, k, max_sup, uid = problem
    dims, table = encode_for_search(df, qi, hier, uid)
    st = incognito(dims, table, k, max_sup).stats
    total = sum(int(np.prod([dims[j].n_levels for j in sub])) for i in range(1, len(dims) + 1)
                for sub in itertools.combinations(range(len(dims)), i))
    assert st.candidates + st.pruned_subsets == total
    assert st.candidates == st.nodes_checked + st.marked
