"""The worked examples of Shou et al. (TKDE) verbatim: Tables 1-3, Figure 3, Eq. 1-2, Section 5.4.

Table 3's pattern column is illustrative in the paper (e.g. Bob's series 145..196 is 'aaabcc' at
level 3, not 'aabbcc'); the tests use the patterns that are the real SAX words (Alice, Jane) and
test the rest of Table 3 (envelopes, Eq. 1, Eq. 2) as printed.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from shared_data import shared_data  # tests/shared_data.py
from tempanon.timeseries.ldiversity import perturb_l_diverse
from tempanon.timeseries.model import breach_probabilities, instant_value_loss
from tempanon.timeseries.partition import envelopes
from tempanon.timeseries.sax import sax_words, words_to_strings
from tempanon.timeseries.tree import create_tree

# Table 1 (unit: thousand): 2005..2010 are the quasi-identifiers, 2011 the sensitive value
TABLE1 = np.array([
    [170, 175, 188, 197, 213, 221],  # 1 Alice
    [145, 157, 165, 177, 204, 196],  # 2 Bob
    [176, 181, 147, 134, 125, 112],  # 3 Cathy
    [98, 120, 125, 132, 151, 161],  # 4 David
    [117, 107, 87, 74, 51, 56],  # 5 Jane
    [32, 54, 59, 67, 96, 101],  # 6 Lily
    [88, 93, 56, 43, 20, 25],  # 7 Mary
    [71, 63, 47, 38, 43, 20],  # 8 Steve
], dtype=float)
SENSITIVE = [200, 180, 160, 110, 85, 90, 55, 46]


def test_table2_conventional_4_anonymity_envelopes():
    """Table 2: groups {1,2,3,4} and {5,6,7,8} and their value ranges."""
    lo, hi = envelopes(TABLE1, np.array([0, 0, 0, 0, 1, 1, 1, 1]))
    assert list(zip(lo[0], hi[0])) == [(98, 176), (120, 181), (125, 188), (132, 197), (125, 213), (112, 221)]
    assert list(zip(lo[1], hi[1])) == [(32, 117), (54, 107), (47, 87), (38, 74), (20, 96), (20, 101)]


def _table3():
    group = np.array([0, 0, 0, 1, 0, 1, 1, 1])  # Table 3: {1,2,3,5} and {4,6,7,8}
    lo, hi = envelopes(TABLE1, group)
    pr = ["aabbcc", "aabbcc", "ccbbaa", "abbbcc", "ccbbaa", "abbbcc", "bbbaaa", "bbbaaa"]
    rel = pd.DataFrame({"kgroup": group, "pattern": pr, "pattern_level": 3})
    return group, lo, hi, rel


def test_table3_envelopes():
    _, lo, hi, _ = _table3()
    assert list(zip(lo[0], hi[0])) == [(117, 176), (107, 181), (87, 188), (74, 197), (51, 213), (56, 221)]
    assert list(zip(lo[1], hi[1])) == [(32, 98), (54, 120), (47, 125), (38, 132), (20, 151), (20, 161)]


def test_table3_breach_probabilities_eq1():
    """Eq. 1 with e = 1 on Table 3 (k = 4, P = 2): 1/|G| = 1/4 by values, 1/P = 1/2 by pattern."""
    _, _, _, rel = _table3()
    b = breach_probabilities(rel)
    assert (b["p_value"] == 0.25).all() and (b["p_pattern"] == 0.5).all()


def test_instant_value_loss_eq2_on_table3():
    group, lo, hi, _ = _table3()
    vl = instant_value_loss(lo[group], hi[group])
    by_hand = np.sqrt(((176 - 117) ** 2 + (181 - 107) ** 2 + (188 - 87) ** 2 + (197 - 74) ** 2 + (213 - 51) ** 2
                       + (221 - 56) ** 2) / 6)
    assert np.isclose(vl[0], by_hand) and np.allclose(vl[[0, 1, 2, 4]], by_hand)


def test_sax_words_of_table3_that_are_real():
    """Section 5.1 on Table 1 at level 3: Alice 'aabbcc' and Jane 'ccbbaa' as Table 3 prints them."""
    w = list(words_to_strings(sax_words(TABLE1, 3)))
    assert w[0] == "aabbcc" and w[4] == "ccbbaa"
    assert w[1] == "aaabcc"  # Bob: Table 3's 'aabbcc' is not his SAX word (the table is illustrative)


def test_figure3_create_tree():
    """Figure 3 (P = 2): the k-group of 8 series is Node1 at level 1 ('aaaaaa'); level 2 splits it
    into Node2 = {1,2,3,4} and Node3 = {5,6,7,8}; level 3 splits Node2 into Node4, Node5 (2 + 2)
    and Node3 into Node6 (3) and Node7 (1, a bad leaf). The words are given as pattern ids."""
    pid = np.zeros((4, 8), dtype=np.int64)
    pid[2] = [0, 0, 0, 0, 1, 1, 1, 1]
    pid[3] = [0, 0, 1, 1, 2, 2, 2, 3]
    leaves = create_tree(pid, np.zeros(8, dtype=np.int64), P=2, max_level=3)
    got = {}
    for leaf in np.unique(leaves.leaf):
        got[tuple(np.flatnonzero(leaves.leaf == leaf) + 1)] = (int(leaves.level[leaf]), bool(leaves.good[leaf]))
    assert got == {(1, 2): (3, True), (3, 4): (3, True), (5, 6, 7): (3, True), (8,): (3, False)}


def test_section_5_4_number_of_perturbed_values():
    """x_i = |EC(v_i)| - floor(|PS(r)| / l), and 0 < x_i < |EC(v_i)| (the paper's proof)."""
    vals = np.array([5.0, 5.0, 5.0, 5.0, 1.0, 2.0])  # |PS| = 6, |EC(5)| = 4, l = 2: x = 4 - 3 = 1
    new = perturb_l_diverse(vals, np.zeros(6, dtype=np.int64), 2, 0.5)
    moved = np.flatnonzero(new != vals)
    assert moved.size == 1 and vals[moved[0]] == 5.0 and 5.0 < new[moved[0]] <= 5.5
    assert np.unique(new).size == 4 and (pd.Series(new).value_counts() <= 3).all()
    vals = np.array([7.0] * 5 + [1.0])  # l = 3: floor(6/3) = 2, x = 5 - 2 = 3 with 0 < 3 < 5
    new = perturb_l_diverse(vals, np.zeros(6, dtype=np.int64), 3, 1.0)
    assert int((new != vals).sum()) == 3 and (pd.Series(new).value_counts() <= 2).all()


WALK = next((d / "randomwalk_10k_float.csv" for d in [shared_data("timeseries")] if d and (d / "randomwalk_10k_float.csv").exists()), None)


@pytest.mark.skipif(WALK is None, reason="../shared/data/timeseries/randomwalk_10k_float.csv not present")
@pytest.mark.parametrize("k, P, expected", [(10, 2, 1808), (10, 5, 2518), (20, 5, 2630), (50, 5, 2827)])
def test_algorithm3_seed_rule_on_the_10k_walk(k, P, expected):
    """Issue 13's measurement of Algorithm 3 with the paper's seed (lowest VL first) on the 10k
    walk: total VL 1808 / 2518 / 2630 / 2827 (the farthest-from-centre seed gave 2904 / 3000 /
    3404 / 3860)."""
    from tempanon.timeseries.api import kp_anonymize

    df = pd.read_csv(WALK)
    r = kp_anonymize(df, id_col="id", qi=[f"A{i}" for i in range(10)], k=k, P=P, shuffle_seed=0)
    assert round(r.summary["value_loss"]) == expected


def test_kapra_at_k_equal_P_groups_by_shape_not_level():
    """Section 5.3 with k = P (the setting of Section 7.3): KAPRA's P-subgroups share one SAX word
    (z-normalized shape, blind to the level), and Algorithm 3 step 1 makes every P-subgroup of
    >= k series a k-group, so the published envelope (Definition 3) spans the levels of series of
    one shape. Naive's top-down clustering groups by value instead. Hand-computed on four series:
    an increasing ramp at levels 0 and 100 and a decreasing one at 0.5 and 100.5. This is why
    KAPRA's envelopes on Walk (cuts of one walk: levels independent of shapes) are wide
    (docs/benchmarks.md, Figures 9-10)."""
    from tempanon.timeseries.algorithms import kapra, naive
    from tempanon.timeseries.model import instant_value_loss

    up = np.arange(6.0)
    X = np.array([up, up + 100, up[::-1] + 0.5, up[::-1] + 100.5])
    g = kapra(X, 2, 2, 5)
    assert g.kgroup[0] == g.kgroup[1] != g.kgroup[2] == g.kgroup[3]
    assert (g.psubgroup == g.kgroup).all()  # k = P: the k-groups are the P-subgroups
    assert (g.words[0] == g.words[1]).all() and (g.level == 5).all()
    lo, hi = envelopes(X, g.kgroup)
    # every envelope is 100 wide at every instant: VL = 100 per series, 400 in all (Eq. 2)
    assert np.allclose(hi - lo, 100.0)
    assert np.isclose(instant_value_loss(lo[g.kgroup], hi[g.kgroup]).sum(), 400.0)
    n = naive(X, 2, 2, 5)
    assert n.kgroup[0] == n.kgroup[2] != n.kgroup[1] == n.kgroup[3]
    lo, hi = envelopes(X, n.kgroup)
    # {0..5, 5.5..0.5}: widths 5.5, 3.5, 1.5, 0.5, 2.5, 4.5 -> VL sqrt(71.5 / 6) per series (Eq. 2)
    assert np.allclose(hi[n.kgroup[0]] - lo[n.kgroup[0]], [5.5, 3.5, 1.5, 0.5, 2.5, 4.5])
    assert np.isclose(instant_value_loss(lo[n.kgroup], hi[n.kgroup]).sum(), 4 * np.sqrt(71.5 / 6))
    assert (n.level == 1).all()  # the two shapes of a k-group share no word above level 1
