"""l-diversity variants (distinct, entropy, recursive (c,l), frequency) in the kanon search, with and
without suppression: every complete algorithm against a brute force written from the definitions;
the independent verifier; the 'impossible' proofs against an enumeration oracle."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempanon.errors import NoSolutionError, VerificationError
from tempanon.kanon import encode_for_search, kanonymize, run_search
from tempanon.kanon.ldiversity import LDiversity, _frequency_possible
from tempanon.kanon.search import COMPLETE
from tempanon.lattice.freqset import encode_table
from tempanon.lattice.lattice import Lattice
from tempanon.verify import check_l_diversity

from .test_kanon_oracle import problems

QI = ["Birthdate", "Sex", "Zipcode"]


def _diverse(counts: list[int], variant: str, l: int, c: float | None) -> bool:
    """The definitions, from a class's sensitive value counts (plain Python)."""
    r = sorted(counts, reverse=True)
    n = sum(r)
    if variant == "frequency":
        return r[0] * l <= n
    if variant == "distinct":
        return len(r) >= l
    if variant == "entropy":
        return -sum(x / n * math.log(x / n) for x in r) >= math.log(l) - 1e-12
    return r[0] < c * sum(r[l - 1 :])


def _brute(df, qi, hier, k, max_sup, variant, l, c):
    out = set()
    for node in Lattice([hier[q].encode(df[q].rename(q))[0] for q in qi]).nodes():
        g = pd.DataFrame({q: df[q].map(hier[q].mapping(v)) for q, v in zip(qi, node)})
        suppressed = 0
        for _key, grp in g.assign(s=df["s"]).groupby(qi):
            counts = grp["s"].value_counts().tolist()
            if len(grp) < k or not _diverse(counts, variant, l, c):
                suppressed += len(grp)
        if suppressed <= max_sup:
            out.add(node)
    return out


VARIANT = st.sampled_from([("frequency", None), ("distinct", None), ("entropy", None), ("recursive", 1.5), ("recursive", 3.0)])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.integers(2, 3), VARIANT, st.sampled_from([0, 0, 2, 5]), st.data())
def test_every_complete_algorithm_matches_the_definition(problem, l, variant_c, max_sup, data):
    df, qi, hier, k, _, _ = problem
    variant, c = variant_c
    df = df.assign(s=[data.draw(st.sampled_from("abcd")) for _ in range(len(df))])
    dims, _ = encode_for_search(df, qi, hier)
    cols = [hier[q].encode(df[q].rename(q))[1] for q in qi]
    table = encode_table(dims, cols, sensitive=df["s"].to_numpy(dtype=object))
    brute = _brute(df, qi, hier, k, max_sup, variant, l, c)
    ld = LDiversity(l, variant, c)
    for alg in sorted(COMPLETE):
        res = run_search(alg, dims, table, k, max_sup, l=ld)
        assert set(res.anonymous_nodes) == brute, (alg, variant, max_sup)
        assert res.complete


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.integers(2, 3), VARIANT, st.sampled_from([0, 0.1, 0.3]), st.data())
def test_release_is_verified_and_suppresses_classes_failing_l(problem, l, variant_c, sup, data):
    """The API's release: kept classes have >= k rows and are l-diverse (checked by the verifier
    and here again from the definition); at most floor(sup * n) rows are suppressed."""
    df, qi, hier, k, _, _ = problem
    variant, c = variant_c
    df = df.assign(s=[data.draw(st.sampled_from("abcd")) for _ in range(len(df))])
    try:
        res = kanonymize(df, qi, hier, k, sensitive="s", l=l, l_diversity=variant, c=c, max_suppression=sup)
    except NoSolutionError:
        assert not _brute(df, qi, hier, k, int(math.floor(sup * len(df) + 1e-9)), variant, l, c)
        return
    rel = res.table
    assert len(df) - len(rel) <= int(math.floor(sup * len(df) + 1e-9))
    for _key, grp in rel.groupby(qi):
        assert len(grp) >= k
        assert _diverse(grp["s"].value_counts().tolist(), variant, l, c)
    assert res.summary()["l_diversity"] == {"variant": variant, "l": l, "c": c}


def test_verifier_checks_each_variant():
    rel = pd.DataFrame({"q": ["a"] * 4 + ["b"] * 4, "s": ["x", "x", "y", "z", "x", "y", "z", "w"]})
    # class a: counts 2,1,1; class b: 1,1,1,1
    check_l_diversity(rel, ["q"], "s", 2, "frequency")
    check_l_diversity(rel, ["q"], "s", 3, "distinct")
    with pytest.raises(VerificationError, match="distinct 4-diversity"):
        check_l_diversity(rel, ["q"], "s", 4, "distinct")
    # entropy of class a: -(.5 ln .5 + 2 * .25 ln .25) = 1.0397 < ln 3 = 1.0986
    check_l_diversity(rel, ["q"], "s", 2, "entropy")
    with pytest.raises(VerificationError, match="entropy 3-diversity"):
        check_l_diversity(rel, ["q"], "s", 3, "entropy")
    # recursive (c,2) on class a: 2 < c * (1 + 1) holds for c = 1.5, fails for c = 1
    check_l_diversity(rel, ["q"], "s", 2, "recursive", 1.5)
    with pytest.raises(VerificationError, match=r"recursive \(1,2\)-diversity"):
        check_l_diversity(rel, ["q"], "s", 2, "recursive", 1.0)
    # exactly l equally frequent values: entropy log l, passes (boundary)
    check_l_diversity(pd.DataFrame({"q": ["a"] * 3, "s": list("xyz")}), ["q"], "s", 3, "entropy")


def test_a_value_holding_87_percent_is_reported_as_impossible():
    """Issue 16: when one value holds 87% of the rows, frequency 2-diversity is impossible and the
    message says so (not 'allow more suppression or lower k'); with enough suppression it is not."""
    n = 100
    df = pd.DataFrame({"q": [str(i % 10) for i in range(n)], "s": ["flu"] * 87 + [f"v{i}" for i in range(13)]})
    hier = {"q": {"type": "suppression"}}
    with pytest.raises(NoSolutionError) as e:
        kanonymize(df, ["q"], hier, 2, sensitive="s", l=2)
    msg = str(e.value)
    assert "frequency 2-diversity is impossible for this data" in msg
    assert "value 'flu' of 's' holds 87 of 100 rows (87.0%)" in msg
    assert "lower k" not in msg
    # 74 suppressed 'flu' rows would leave 13 of 26: still impossible with 73, possible with 74
    with pytest.raises(NoSolutionError, match="impossible.*suppressing up to 73 rows cannot change that"):
        kanonymize(df, ["q"], hier, 2, sensitive="s", l=2, max_suppression=0.73)
    assert LDiversity(2).impossible_reason(np.array([87, *[1] * 13]), None, 74, "s") is None
    # distinct: 2 values cannot make 3-diverse classes, whatever is suppressed
    two = df.assign(s=["a"] * 50 + ["b"] * 50)
    with pytest.raises(NoSolutionError, match="distinct 3-diversity is impossible.*only 2 distinct"):
        kanonymize(two, ["q"], hier, 2, sensitive="s", l=3, l_diversity="distinct", max_suppression=0.5)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=4), st.integers(2, 3), st.integers(0, 6))
def test_frequency_possible_matches_enumeration(counts, l, budget):
    """Oracle: try every way of removing rows (at most ``budget``) from the value counts."""
    counts = sorted(counts, reverse=True)
    ok = False
    for rem in itertools.product(*(range(c + 1) for c in counts)):
        if sum(rem) > budget:
            continue
        kept = [c - r for c, r in zip(counts, rem)]
        if sum(kept) and max(kept) * l <= sum(kept):
            ok = True
            break
    assert _frequency_possible(np.array(counts), l, budget) == ok


def test_l_diversity_variants_on_patients(patients, patients_h):
    """Figure 1's Disease is unique per patient: every class is distinct-, entropy- and
    recursive-diverse as soon as it is 2-anonymous; the releases pass the verifier."""
    for variant, c in (("distinct", None), ("entropy", None), ("recursive", 2.0), ("frequency", None)):
        res = kanonymize(patients, QI, patients_h, 2, sensitive="Disease", l=2, l_diversity=variant, c=c, criterion="height")
        assert res.selected_node == (1, 1, 0)
        check_l_diversity(res.table, QI, "Disease", 2, variant, c)
