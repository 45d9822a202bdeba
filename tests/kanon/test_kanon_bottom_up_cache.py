"""Bottom-up breadth-first search with rollup (Incognito paper, Section 2.2) keeps a bounded set of
frequency sets: the same checks, scans, rollups (each from the same direct specialization, the one
with the fewest rows) and results as keeping every non-anonymous node's set, never more sets than
the search checks at one height, and the same again when every set waits on disk."""

from __future__ import annotations

import tempfile

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempanon.hierarchy import Hierarchy
from tempanon.kanon import encode_for_search, run_search
from tempanon.kanon import search as S
from tempanon.lattice.lattice import Lattice

from hierarchy_strategies import random_chain


def _reference(dims, table, k, max_sup):
    """The unbounded search (tempanon before the bound): every checked non-anonymous node's set
    kept from two heights below on, each node rolled up from its smallest direct specialization.
    Returns (anonymous grid, rollups as (parent, child) pairs, most sets held at once)."""
    attrs = tuple(range(len(dims)))
    lat = Lattice(dims, attrs)
    heights = S._heights_grid(dims, attrs)
    anon = np.zeros(heights.shape, dtype=bool)
    cache, pairs, peak = {}, [], 0
    last_h = 0
    for node in S._sorted_nodes(np.ones(heights.shape, dtype=bool), heights):
        if anon[node]:
            for g in lat.direct_generalizations(node):
                anon[g] = True
            continue
        h = int(heights[node])
        if h != last_h:
            for nd in [nd for nd in cache if heights[nd] + lat.max_edge_height < h]:
                del cache[nd]
            last_h = h
        if node == lat.bottom:
            fs = S.table_frequency_set(table, dims, attrs, node)
        else:
            parent = min(lat.direct_specializations(node), key=lambda s: len(cache[s]))
            pairs.append((parent, node))
            fs = S.rollup(cache[parent], dims, node)
        if fs.is_anonymous(k, max_sup):
            anon[node] = True
            for g in lat.direct_generalizations(node):
                anon[g] = True
        else:
            cache[node] = fs
            peak = max(peak, len(cache))
    return anon, pairs, peak


def _checked_per_height(dims, anonymous):
    """Nodes bottom-up checks at each height: those without an anonymous direct specialization."""
    lat = Lattice(dims)
    anon = set(anonymous)
    out: dict[int, int] = {}
    for node in lat.nodes():
        if not any(s in anon for s in lat.direct_specializations(node)):
            out[lat.height(node)] = out.get(lat.height(node), 0) + 1
    return out


def _run(dims, table, k, max_sup, memory):
    """bottom_up with rollup, recording every rollup as a (parent, child) pair."""
    pairs = []
    real = S.rollup

    def recording(fs, dims_, levels):
        pairs.append((tuple(int(v) for v in fs.levels), tuple(int(v) for v in levels)))
        return real(fs, dims_, levels)

    S.rollup = recording
    try:
        res = S.bottom_up(dims, table, k, max_sup, use_rollup=True, cache_memory=memory)
    finally:
        S.rollup = real
    return res, pairs


@st.composite
def chain_problems(draw):
    q = draw(st.integers(1, 4))
    n = draw(st.integers(1, 40))
    hier, data = {}, {}
    for a in range(q):
        name = f"q{a}"
        domain = draw(st.integers(1, 6))
        hier[name] = random_chain(draw, name, domain)
        data[name] = [f"{name}{draw(st.integers(0, domain - 1))}" for _ in range(n)]
    df = pd.DataFrame(data)
    uid = None
    if draw(st.booleans()):
        df["uid"] = [draw(st.integers(0, max(0, n // 2))) for _ in range(n)]
        uid = "uid"
    return df, list(hier), hier, draw(st.integers(2, 5)), draw(st.sampled_from([0, 0, 1, 3])), uid


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chain_problems())
def test_bounded_cache_rolls_up_as_the_unbounded_search_and_holds_at_most_one_height(problem):
    df, qi, hier, k, max_sup, uid = problem
    dims, table = encode_for_search(df, qi, hier, uid)
    ref_anon, ref_pairs, _ = _reference(dims, table, k, max_sup)
    oracle = run_search("exhaustive", dims, table, k, max_sup)
    per_height = _checked_per_height(dims, oracle.anonymous_nodes)
    results = []
    for memory in (None, 0, 64):  # default budget, every set on disk, a few sets in memory
        res, pairs = _run(dims, table, k, max_sup, memory)
        assert res.anonymous_nodes == oracle.anonymous_nodes
        assert res.minimal_nodes == oracle.minimal_nodes
        assert res.stats.cache_peak <= max(per_height.values())
        assert len(pairs) == res.stats.rollups == res.stats.nodes_checked - 1
        results.append((pairs, res.stats.nodes_checked, res.stats.table_scans))
        if memory == 0:
            assert res.stats.cache_spilled >= res.stats.cache_peak  # every set held went to disk
        assert res.anonymous_nodes == S._sorted_nodes(ref_anon, S._heights_grid(dims, tuple(range(len(dims)))))
        assert pairs == ref_pairs  # the same parents, in the same order
    assert results[0] == results[1] == results[2]
    plain = S.bottom_up(dims, table, k, max_sup)
    assert plain.stats.nodes_checked == results[0][1] and plain.anonymous_nodes == oracle.anonymous_nodes


def _near_unique_problem(n=400, seed=3):
    """Four attributes with 3-level chains over a near-unique random table: many non-anonymous
    nodes at every height."""
    rng = np.random.default_rng(seed)
    hier, data = {}, {}
    for a, card in enumerate((40, 30, 24, 20)):
        name = f"a{a}"
        rows = [[f"{name}_{v}", f"{name}_{v // 2}x", f"{name}_{v // 6}y", "*"] for v in range(card)]
        hier[name] = Hierarchy.from_rows(name, rows)
        data[name] = [f"{name}_{v}" for v in rng.integers(0, card, n)]
    return encode_for_search(pd.DataFrame(data), list(hier), hier)


def test_cache_holds_fewer_sets_than_two_heights_and_what_one_height_checks():
    """The unbounded search held every non-anonymous set of two adjacent heights; the bounded one
    holds a set only while a generalization may still roll up from it: here fewer than the nodes
    checked at any one height, with the same rollups."""
    dims, table = _near_unique_problem()
    k = 3
    ref_anon, ref_pairs, ref_peak = _reference(dims, table, k, 0)
    res, pairs = _run(dims, table, k, 0, None)
    per_height = _checked_per_height(dims, res.anonymous_nodes)
    assert pairs == ref_pairs and res.stats.rollups == len(ref_pairs) > 100
    assert res.stats.cache_spilled == 0
    assert res.stats.cache_peak <= max(per_height.values()) < ref_peak


def test_cache_over_its_memory_budget_waits_on_disk_and_is_removed(tmp_path, monkeypatch):
    dims, table = _near_unique_problem(n=300, seed=5)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    small, pairs_small = _run(dims, table, 2, 0, 20_000)
    full, pairs_full = _run(dims, table, 2, 0, None)
    assert small.stats.cache_spilled > 0 and full.stats.cache_spilled == 0
    assert pairs_small == pairs_full and small.anonymous_nodes == full.anonymous_nodes
    assert small.stats.cache_peak == full.stats.cache_peak
    assert list(tmp_path.iterdir()) == []  # the spill directory is gone


def test_budget_stop_removes_the_spilled_sets(tmp_path, monkeypatch):
    dims, table = _near_unique_problem(n=300, seed=5)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    res = S.bottom_up(dims, table, 2, 0, use_rollup=True, cache_memory=0, budget=S.Budget(max_nodes=60))
    assert not res.complete and res.stats.cache_spilled > 0
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("memory", [None, 0])
def test_l_diversity_inside_the_search_with_a_spilled_cache(memory):
    """The sensitive digit is kept with the codes (rollups with l-diversity read it)."""
    from tempanon.lattice.freqset import encode_table

    rng = np.random.default_rng(0)
    dims, _ = _near_unique_problem(n=200, seed=1)
    cols = [rng.integers(0, d.n_base, 200) for d in dims]
    table = encode_table(dims, cols, sensitive=rng.integers(0, 3, 200).astype(object))
    got = S.bottom_up(dims, table, 2, 0, use_rollup=True, l=2, cache_memory=memory)
    want = run_search("exhaustive", dims, table, 2, 0, l=2)
    assert got.anonymous_nodes == want.anonymous_nodes
