"""The Incognito paper's running example (Figure 1, Example 3.1), checked by hand."""

from __future__ import annotations

import pytest

from tempanon.kanon import ALGORITHMS, encode_for_search, kanonymize, run_search
from tempanon.kanon.search import _graph_generation, _search_family, _Ctx

QI = ["Birthdate", "Sex", "Zipcode"]

# Worked out by hand from Figure 1 for k = 2 (levels in the order B, S, Z):
# <B1,S1,Z0>, <B1,S1,Z1>, <B1,S1,Z2>, <B1,S0,Z2>, <B0,S1,Z2> are 2-anonymous, the first, fourth
# and fifth minimal -- the three minimal generalizations named in Example 3.1.
ANONYMOUS = {(1, 1, 0), (1, 1, 1), (1, 1, 2), (1, 0, 2), (0, 1, 2)}
MINIMAL = {(1, 1, 0), (1, 0, 2), (0, 1, 2)}


@pytest.mark.parametrize("algorithm", [a for a in ALGORITHMS if a != "binary-search"])
def test_every_complete_algorithm_finds_the_papers_generalizations(patients, patients_h, algorithm):
    dims, table = encode_for_search(patients, QI, patients_h)
    res = run_search(algorithm, dims, table, 2)
    assert set(res.anonymous_nodes) == ANONYMOUS
    assert set(res.minimal_nodes) == MINIMAL
    assert res.lattice_size == 12


def test_binary_search_finds_a_minimal_height_node(patients, patients_h):
    dims, table = encode_for_search(patients, QI, patients_h)
    res = run_search("binary-search", dims, table, 2)
    # the minimal height of an anonymous node is 2 (<B1,S1,Z0> and <B0,S1,Z2>... have heights 2, 3)
    assert sum(res.minimal_nodes[0]) == min(sum(n) for n in ANONYMOUS) == 2


def test_iterations_follow_example_3_1(patients, patients_h):
    """Iteration 1: every single attribute is 2-anonymous ungeneralized. Iteration 2 keeps, per
    pair, exactly the anonymous nodes; the candidates of size 3 are pruned by the a-priori rule."""
    dims, table = encode_for_search(patients, QI, patients_h)
    ctx = _Ctx(dims, table, 2, 0, None)
    import numpy as np

    S1 = {(j,): _search_family(ctx, (j,), np.ones(dims[j].n_levels, bool), "basic", None) for j in range(3)}
    assert all(g.all() for g in S1.values())  # B0, S0, Z0 already 2-anonymous
    C2 = _graph_generation(S1, dims)
    S2 = {f: _search_family(ctx, f, c, "basic", None) for f, c in C2.items()}
    # <Sex, Zipcode>: S1Z0 and S0Z2 are the minimal 2-anonymous nodes; S0Z0, S0Z1 are not
    sz = S2[(1, 2)]
    assert not sz[0, 0] and not sz[0, 1] and sz[0, 2] and sz[1, 0]
    # <Birthdate, Sex>: only B0S0 fails; <Birthdate, Zipcode>: B0Z0, B0Z1 fail
    assert not S2[(0, 1)][0, 0] and S2[(0, 1)][1, 0] and S2[(0, 1)][0, 1]
    assert not S2[(0, 2)][0, 0] and not S2[(0, 2)][0, 1] and S2[(0, 2)][0, 2] and S2[(0, 2)][1, 0]
    C3 = _graph_generation(S2, dims)
    cand = C3[(0, 1, 2)]
    # a-priori pruning: <B0,S0,*> cannot be a candidate since <B0,S0> is not anonymous
    assert not cand[0, 0, :].any()
    # the surviving candidates are exactly the nodes whose three 2-subsets are anonymous
    import itertools

    for b, s, z in itertools.product(range(2), range(2), range(3)):
        expected = S2[(0, 1)][b, s] and S2[(0, 2)][b, z] and S2[(1, 2)][s, z]
        assert cand[b, s, z] == expected


def test_release_of_patients(patients, patients_h):
    res = kanonymize(patients, QI, patients_h, 2, criterion="height", keep=["Disease"])
    assert res.selected_node in MINIMAL
    assert res.table.index.is_unique and sorted(res.table.index) == list(patients.index)
    res.table = res.table.sort_index()  # rows are shuffled within classes; compare in input order
    # height criterion: <B1,S1,Z0> has height 2, the lowest; the release generalizes accordingly
    assert res.selected_node == (1, 1, 0)
    assert list(res.table["Birthdate"]) == ["*"] * 6
    assert list(res.table["Sex"]) == ["Person"] * 6
    assert list(res.table["Zipcode"]) == list(patients["Zipcode"])
    assert list(res.table["Disease"]) == list(patients["Disease"])  # declared insensitive (keep): unchanged
    assert res.table.groupby(QI).size().min() >= 2


def test_pruning_counts_add_up(patients, patients_h):
    """Every candidate node is either checked or skipped by marking; the subset lattices' other
    nodes were pruned a priori."""
    from tempanon.kanon.search import incognito

    dims, table = encode_for_search(patients, QI, patients_h)
    st = incognito(dims, table, 2).stats
    assert st.candidates == st.nodes_checked + st.marked
    # size-1 lattices: 2+2+3; pairs: 4+6+6; triple: 12 -> 35 nodes in all subset lattices
    assert st.candidates + st.pruned_subsets == 35
    assert st.pruned_subsets > 0  # e.g. <B0,S0,*> never became candidates (Example 3.1)
