"""Anatomy publishing and the independent l-diversity checker."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.errors import InputError, VerificationError
from tempanon.stream.anatomy import anatomize
from tempanon.stream.model import initial_suppression
from tempanon.verify import check_anatomy, check_l_eligible


def _eligible_table(counts, l):
    counts = np.array(counts)
    counts = counts - initial_suppression(counts, l)
    codes = np.repeat(np.arange(len(counts)), counts)
    values = np.array([f"v{c}" for c in codes], dtype=object)
    qi = pd.DataFrame({"age": np.arange(len(codes)) % 7, "zip": [f"0{i % 3}" for i in range(len(codes))]})
    return qi, values, codes


@settings(max_examples=120, deadline=None)
@given(st.lists(st.integers(0, 15), min_size=1, max_size=9), st.integers(2, 6), st.integers(0, 99))
def test_anatomy_groups_are_l_diverse(counts, l, seed):
    qi, values, codes = _eligible_table(counts, l)
    qit, st_ = anatomize(qi, values, codes, l, sensitive="s", rng=np.random.default_rng(seed))
    check_anatomy(qit, st_, l, sensitive="s", qi=["age", "zip"], expected_values=pd.Series(values, dtype=object))
    if len(codes):
        sizes = qit["group"].value_counts()
        assert sizes.min() >= l and len(sizes) == len(codes) // l
        # residue handled as in Anatomy: at most l - 1 records beyond l per group in total
        assert int((sizes - l).sum()) == len(codes) - l * (len(codes) // l)
        # the QIT carries the same quasi-identifier rows (a permutation)
        assert sorted(map(tuple, qit[["age", "zip"]].to_numpy().tolist())) == sorted(map(tuple, qi.to_numpy().tolist()))


def test_anatomy_rejects_non_eligible():
    qi = pd.DataFrame({"a": [1, 2, 3]})
    with pytest.raises(InputError, match="not 2-eligible"):
        anatomize(qi, np.array(["x", "x", "y"], dtype=object), np.array([0, 0, 1]), 2)


def test_missing_sensitive_is_a_category():
    qi = pd.DataFrame({"a": [1, 2, 3, 4]})
    values = np.array(["x", None, "x", None], dtype=object)
    qit, st_ = anatomize(qi, values, np.array([0, 1, 0, 1]), 2, sensitive="s")
    check_anatomy(qit, st_, 2, sensitive="s", qi=["a"], expected_values=pd.Series(values))
    assert st_["s"].isna().sum() == 2


def _release():
    qit = pd.DataFrame({"age": [30, 31, 40, 41], "group": [1, 1, 2, 2]})
    st_ = pd.DataFrame({"group": [1, 1, 2, 2], "s": ["flu", "hiv", "flu", "cold"], "count": [1, 1, 1, 1]})
    return qit, st_


def test_checker_accepts_valid_release():
    qit, st_ = _release()
    rep = check_anatomy(qit, st_, 2, sensitive="s", qi=["age"])
    assert rep == {"groups": 2, "records": 4, "min_group_size": 2}


@pytest.mark.parametrize(
    "table, tamper, message",
    [
        ("st", lambda t: t.assign(s=["flu", "flu", "flu", "cold"]), "repeats"),
        ("st", lambda t: t.assign(count=[2, 1, 1, 1]), "add up"),
        ("st", lambda t: t.assign(count=[1, 0, 1, 1]), "positive integer"),
        ("qit", lambda t: t.assign(group=[1, 1, 1, 2]), "add up"),
        ("qit", lambda t: t.assign(time=["t"] * 4), "non-QI"),
        ("qit", lambda t: t.assign(group=[1, 1, 3, 3]), "differ"),
    ],
)
def test_checker_rejects_tampered_release(table, tamper, message):
    qit, st_ = _release()
    if table == "st":
        st_ = tamper(st_)
    else:
        qit = tamper(qit)
    with pytest.raises(VerificationError, match=message):
        check_anatomy(qit, st_, 2, sensitive="s", qi=["age"])


def test_checker_rejects_non_diverse_group_and_wrong_values():
    qit = pd.DataFrame({"age": [1, 2, 3], "group": [1, 1, 1]})
    st_ = pd.DataFrame({"group": [1, 1], "s": ["flu", "hiv"], "count": [2, 1]})
    with pytest.raises(VerificationError, match="not 2-diverse"):
        check_anatomy(qit, st_, 2, sensitive="s")
    qit, st_ = _release()
    with pytest.raises(VerificationError, match="differ from the records"):
        check_anatomy(qit, st_, 2, sensitive="s", expected_values=pd.Series(["flu", "hiv", "flu", "flu"]))


def test_check_l_eligible():
    check_l_eligible(pd.Series(["a", "b", "a", None]), 2)
    with pytest.raises(VerificationError, match="not 3-eligible"):
        check_l_eligible(pd.Series(["a", "a", "b"]), 3)
