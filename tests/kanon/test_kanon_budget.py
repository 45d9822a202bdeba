"""Long runs: search budgets (max nodes, time limit) return only nodes that are truly anonymous and
say that they stopped; the lattice-size guard refuses huge lattices before any search; the cube's
memory budget (cuboids spilled to disk) changes nothing in the result; checks are counted as
documented (each node of a searched lattice at most once)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempanon.errors import InputError
from tempanon.kanon import encode_for_search, kanonymize, run_search
from tempanon.kanon.search import ALGORITHMS, COMPLETE, Budget, incognito
from tempanon.lattice.lattice import Lattice

from .test_kanon_oracle import problems

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(problems(), st.integers(1, 25))
def test_a_budget_stops_with_truly_anonymous_nodes_only(problem, max_nodes):
    df, qi, hier, k, max_sup, uid = problem
    dims, table = encode_for_search(df, qi, hier, uid)
    oracle = set(run_search("exhaustive", dims, table, k, max_sup).anonymous_nodes)
    for alg in ALGORITHMS:
        res = run_search(alg, dims, table, k, max_sup, budget=Budget(max_nodes=max_nodes))
        assert set(res.anonymous_nodes) <= oracle, alg
        assert res.stats.nodes_checked <= max_nodes, alg
        if res.stats.stopped:
            assert not res.complete and "max-nodes" in res.stats.stopped
        elif alg in COMPLETE:
            assert set(res.anonymous_nodes) == oracle, alg


@SETTINGS
@given(problems())
def test_checks_count_each_node_once(problem):
    """Incognito's checks are nodes of the subset lattices (<= search_space, = prod(levels+1) - 1);
    the full-lattice checks are at most the lattice; the baselines check full-lattice nodes only."""
    df, qi, hier, k, max_sup, uid = problem
    dims, table = encode_for_search(df, qi, hier, uid)
    size = Lattice(dims).size
    total = int(np.prod([d.n_levels + 1 for d in dims])) - 1
    for alg in sorted(COMPLETE):
        st_ = run_search(alg, dims, table, k, max_sup).stats
        assert st_.full_lattice_checks <= size
        if alg in ("incognito", "super-roots", "cube"):
            assert st_.search_space == total and st_.nodes_checked <= total
        else:
            assert st_.nodes_checked == st_.full_lattice_checks <= size == st_.search_space


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_cube_spilled_to_disk_gives_the_same_result(problem):
    """Cube Incognito with no memory for cuboids (every one written to disk and read back in its
    iteration) returns exactly the exhaustive scan's nodes."""
    df, qi, hier, k, max_sup, uid = problem
    dims, table = encode_for_search(df, qi, hier, uid)
    oracle = run_search("exhaustive", dims, table, k, max_sup)
    res = incognito(dims, table, k, max_sup, variant="cube", cube_memory=0)
    assert res.anonymous_nodes == oracle.anonymous_nodes
    assert res.stats.cube_cuboids == 2 ** len(dims) - 2
    assert res.stats.cube_spilled == res.stats.cube_cuboids


def test_time_limit_stops_and_the_api_releases_a_verified_partial_result():
    from tempanon.samples import ADULT_QI, adult_hierarchies_dir, adult_path
    from tempanon.hierarchy import load_hierarchies

    df = pd.read_csv(adult_path(), sep=";", dtype=str, keep_default_na=False)
    hier = load_hierarchies(adult_hierarchies_dir(), list(ADULT_QI))
    notes: list[str] = []
    res = kanonymize(df, list(ADULT_QI), hier, 5, max_nodes=300, notice=notes.append)
    s = res.summary()
    assert s["stopped_early"] == "--max-nodes 300 reached" and not s["complete"]
    assert s["checks"]["total"] <= 300
    assert any(n.startswith("search plan: lattice of 12,960 nodes") for n in notes)
    assert any("stopped early" in n and "verified" in n for n in notes)
    assert res.table.groupby(list(ADULT_QI)).size().min() >= 5  # verified inside, and here again
    # a time limit too short for the first check still releases the most general node
    tiny = kanonymize(df, list(ADULT_QI), hier, 5, time_limit=1e-9)
    assert tiny.summary()["stopped_early"].startswith("--time-limit")
    assert tiny.selected_node == tuple(d.n_levels - 1 for d in tiny.dimensions)


def test_lattice_guard_refuses_before_searching():
    """Issue 12: 3,000 rows with 14 quasi-identifiers once reached 23.6 GB. A lattice above the
    limit is refused with a message naming its size and the option that raises the limit."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"q{i}": rng.integers(0, 30, 3000).astype(str) for i in range(14)})
    hier = {c: {"type": "intervals", "widths": [10]} for c in df.columns}  # 3 levels each: 3^14 nodes
    with pytest.raises(InputError, match=r"lattice has 4,782,969 nodes .* above the limit of 1,000,000 .*--max-lattice"):
        kanonymize(df, list(df.columns), hier, 5)
    with pytest.raises(InputError, match="above the limit of 10"):
        kanonymize(df[["q0", "q1", "q2"]], ["q0", "q1", "q2"], hier, 5, max_lattice=10)
    with pytest.raises(InputError, match="max_lattice must be a positive integer"):
        kanonymize(df[["q0"]], ["q0"], hier, 5, max_lattice=0)


def test_budget_parameters_are_validated():
    with pytest.raises(InputError, match="max_nodes must be a positive integer"):
        Budget(max_nodes=0)
    with pytest.raises(InputError, match="time_limit must be a positive number"):
        Budget(time_limit=0)
