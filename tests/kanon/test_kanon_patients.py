"""The Incognito paper's running example (Figure 1, Example 3.1), checked by hand."""

from __future__ import annotations

import numpy as np
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


# ---- the paper's worked examples, one test each ---------------------------------------------------


def _fs(patients, patients_h, attrs, levels):
    from tempanon.lattice.freqset import table_frequency_set

    dims, table = encode_for_search(patients, QI, patients_h)
    return dims, table, table_frequency_set(table, dims, attrs, levels)


def test_section_1_1_frequency_set_and_k_anonymity(patients, patients_h):
    """Section 1.1: SELECT COUNT(*) FROM Patients GROUP BY Sex, Zipcode has groups of fewer than 2,
    so Patients is not 2-anonymous w.r.t. <Sex, Zipcode>."""
    _d, _t, fs = _fs(patients, patients_h, (1, 2), (0, 0))
    assert sorted(fs.counts.tolist()) == [1, 1, 2, 2]  # (M,53715) (F,53715) once; (M,53703) (F,53706) twice
    assert not fs.is_anonymous(2)
    expected = patients.groupby(["Sex", "Zipcode"]).size()
    assert sorted(expected.tolist()) == sorted(fs.counts.tolist())


def test_section_3_generalization_property_example(patients, patients_h):
    """2-anonymous w.r.t. <S0>, hence w.r.t. its generalization <S1>."""
    _d, _t, s0 = _fs(patients, patients_h, (1,), (0,))
    _d, _t, s1 = _fs(patients, patients_h, (1,), (1,))
    assert s0.is_anonymous(2) and s1.is_anonymous(2)
    assert s1.counts.tolist() == [6]


def test_section_3_rollup_property_example(patients, patients_h):
    """F2 = frequency set w.r.t. <Birthdate, Sex, Z1>, produced from F1 (w.r.t. <Birthdate, Sex,
    Zipcode>) by rolling Zipcode up, equals the one computed from the table."""
    from tempanon.lattice.freqset import rollup

    dims, _t, f1 = _fs(patients, patients_h, (0, 1, 2), (0, 0, 0))
    _d, _t, direct = _fs(patients, patients_h, (0, 1, 2), (0, 0, 1))
    f2 = rollup(f1, dims, (0, 0, 1))
    assert np.array_equal(f2.codes, direct.codes) and np.array_equal(f2.counts, direct.counts)


def test_section_3_subset_property_example(patients, patients_h):
    """2-anonymous w.r.t. <S1, Zipcode> => w.r.t. <Zipcode> and <S1>; not w.r.t. <Sex, Zipcode>
    => not w.r.t. <Birthdate, Sex, Zipcode>."""
    assert _fs(patients, patients_h, (1, 2), (1, 0))[2].is_anonymous(2)
    assert _fs(patients, patients_h, (2,), (0,))[2].is_anonymous(2)
    assert _fs(patients, patients_h, (1,), (1,))[2].is_anonymous(2)
    assert not _fs(patients, patients_h, (1, 2), (0, 0))[2].is_anonymous(2)
    assert not _fs(patients, patients_h, (0, 1, 2), (0, 0, 0))[2].is_anonymous(2)


def test_figures_3_and_6_lattice_edges_heights_distance_vectors(patients, patients_h):
    """Figure 3 / Figure 6: the <Sex, Zipcode> lattice has 6 nodes and the 7 edges of the Edges
    relation (IDs 1..6 = S0Z0, S1Z0, S0Z1, S1Z1, S0Z2, S1Z2); height of <S1, Z1> is 2; <S0, Z2> is
    a direct generalization of <S0, Z1> and an implied one of <S0, Z0>."""
    from tempanon.lattice.lattice import Lattice

    dims, _t = encode_for_search(patients, QI, patients_h)
    lat = Lattice(dims, (1, 2))
    ids = {(0, 0): 1, (1, 0): 2, (0, 1): 3, (1, 1): 4, (0, 2): 5, (1, 2): 6}
    edges = {(ids[a], ids[b]) for a in lat.nodes() for b in lat.direct_generalizations(a)}
    assert lat.size == 6
    assert edges == {(1, 2), (1, 3), (2, 4), (3, 4), (3, 5), (4, 6), (5, 6)}
    assert lat.height((1, 1)) == 2
    assert (0, 2) in lat.direct_generalizations((0, 1)) and (0, 2) not in lat.direct_generalizations((0, 0))
    assert lat.is_generalization((0, 0), (0, 2)) and lat.distance_vector((0, 0), (0, 2)) == (0, 2)


def test_example_3_1_search_of_sex_zipcode_figure_5a(patients, patients_h):
    """Figure 5(a): <S0,Z0> fails; <S1,Z0> and <S0,Z1> are rolled up and checked; <S1,Z0> is
    2-anonymous so <S1,Z1>, <S1,Z2> are marked; <S0,Z1> fails so <S0,Z2> is checked, and passes.
    Four checks, two marked nodes. tempanon's projection short cut decides <S1,Z0> and <S0,Z2>
    without a frequency set (S1 = Person and Z2 = 537** have one value; their projections <Z0> and
    <S0> are in S_1): so one table scan (the root) and one rollup (<S0,Z1>) instead of three."""
    import numpy as np

    dims, table = encode_for_search(patients, QI, patients_h)
    ctx = _Ctx(dims, table, 2, 0, None)
    anon = _search_family(ctx, (1, 2), np.ones((2, 3), dtype=bool), "basic", None)
    assert {tuple(map(int, c)) for c in np.argwhere(anon)} == {(1, 0), (1, 1), (1, 2), (0, 2)}
    assert ctx.stats.nodes_checked == 4 and ctx.stats.marked == 2
    assert ctx.stats.by_projection == 2
    assert ctx.stats.table_scans == 1 and ctx.stats.rollups == 1


def test_section_3_3_1_super_root_of_figure_7a(patients, patients_h):
    """Figure 7(a): <B1,S1,Z0>, <B1,S0,Z2> and <B0,S1,Z2> are the roots of the 3-attribute graph,
    one family; Super-roots Incognito scans the table once, at <B0,S0,Z0>, for all three."""
    import numpy as np

    from tempanon.kanon.search import _meet, _roots

    dims, table = encode_for_search(patients, QI, patients_h)
    ctx = _Ctx(dims, table, 2, 0, None)
    S1 = {(j,): _search_family(ctx, (j,), np.ones(dims[j].n_levels, bool), "basic", None) for j in range(3)}
    S2 = {f: _search_family(ctx, f, c, "basic", None) for f, c in _graph_generation(S1, dims).items()}
    cand = _graph_generation(S2, dims)[(0, 1, 2)]
    roots = set(_roots(cand, dims, (0, 1, 2)))
    assert roots == {(1, 1, 0), (1, 0, 2), (0, 1, 2)}
    assert _meet(dims, (0, 1, 2), sorted(roots)) == (0, 0, 0)
    # one table scan per family with roots to compute: iteration 2 has three families, iteration 3 one
    res = run_search("super-roots", dims, table, 2)
    basic = run_search("incognito", dims, table, 2)
    assert res.anonymous_nodes == basic.anonymous_nodes
    assert res.stats.table_scans <= 3 + 3 + 1


def test_figure_7b_full_lattice_is_what_a_priori_pruning_avoids(patients, patients_h):
    """Figure 7(b): without a-priori pruning the 3-attribute lattice has 2 x 2 x 3 = 12 nodes; the
    candidate graph of Figure 7(a) has fewer (those whose 2-subsets are all 2-anonymous)."""
    import numpy as np

    dims, table = encode_for_search(patients, QI, patients_h)
    ctx = _Ctx(dims, table, 2, 0, None)
    S1 = {(j,): _search_family(ctx, (j,), np.ones(dims[j].n_levels, bool), "basic", None) for j in range(3)}
    S2 = {f: _search_family(ctx, f, c, "basic", None) for f, c in _graph_generation(S1, dims).items()}
    cand = _graph_generation(S2, dims)[(0, 1, 2)]
    assert cand.size == 12 and 0 < int(cand.sum()) < 12
