"""The per-distinct-value release check (verify.check_generalized_release) that kanonymize's
numpy path runs: it must reach the same verdict as the row-by-row checks it replaces
(check_k_anonymity + check_generalization) on correct and on tampered releases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon import verify
from tempanon.errors import VerificationError
from tempanon.hierarchy import Hierarchy
from tempanon.kanon import kanonymize

H_A = Hierarchy.from_rows("a", [["x", "xy", "*"], ["y", "xy", "*"], ["z", "zz", "*"]])
H_B = Hierarchy.from_rows("b", [["1", "*"], ["2", "*"]])


def _old_verdict(original, released, qi, k, mapping, uid, max_sup) -> bool:
    check = released
    if uid is not None:
        check = released.assign(__uid__=original.loc[released.index, uid].to_numpy())
    try:
        verify.check_k_anonymity(check, qi, k, uid="__uid__" if uid else None, n_input=len(original), max_suppressed=max_sup)
        verify.check_generalization(original, released, mapping)
    except VerificationError:
        return False
    return True


def _new_verdict(original, released, qi, k, mapping, uid, max_sup) -> bool:
    try:
        verify.check_generalized_release(original, released, qi, k, mapping, uid=uid, max_suppressed=max_sup)
    except VerificationError:
        return False
    return True


@st.composite
def cases(draw):
    n = draw(st.integers(2, 30))
    df = pd.DataFrame({
        "a": draw(st.lists(st.sampled_from(["x", "y", "z", None]), min_size=n, max_size=n)),
        "b": draw(st.lists(st.sampled_from(["1", "2"]), min_size=n, max_size=n)),
        "u": draw(st.lists(st.sampled_from(["r1", "r2", "r3"]), min_size=n, max_size=n)),
    })  # fmt: skip
    k = draw(st.integers(2, 4))
    uid = draw(st.sampled_from([None, "u"]))
    sup = draw(st.sampled_from([0.0, 0.2, 0.5]))
    tamper = draw(st.sampled_from(["none", "value", "drop_row", "add_dup", "none"]))
    seed = draw(st.integers(0, 2**16))
    return df, k, uid, sup, tamper, seed


@settings(max_examples=60, deadline=None)
@given(cases())
def test_same_verdict_as_row_by_row_checks(case):
    df, k, uid, sup, tamper, seed = case
    try:
        res = kanonymize(df, ["a", "b"], {"a": H_A, "b": H_B}, k, uid=uid, max_suppression=sup, verify=False, engine="numpy")
    except Exception:
        return
    released = res.table.copy()
    rng = np.random.default_rng(seed)
    if tamper == "value" and len(released):
        i = released.index[rng.integers(len(released))]
        released.loc[i, "a"] = "zz" if released.loc[i, "a"] != "zz" else "xy"
    elif tamper == "drop_row" and len(released):
        released = released.drop(index=released.index[rng.integers(len(released))])
    mapping = {q: h.mapping(v) for q, h, v in zip(["a", "b"], [H_A, H_B], res.selected_node)}
    args = (df, released, ["a", "b"], k, mapping, uid, res.max_suppressed_rows)
    assert _new_verdict(*args) == _old_verdict(*args)
    if tamper == "none":
        assert _new_verdict(*args)


def test_messages_name_column_row_and_class():
    df = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": ["1", "2", "2", "1"]})
    res = kanonymize(df, ["a", "b"], {"a": H_A, "b": H_B}, 2, engine="numpy")
    mapping = {q: h.mapping(v) for q, h, v in zip(["a", "b"], [H_A, H_B], res.selected_node)}
    bad = res.table.copy()
    bad.loc[2, "a"] = "zz"
    with pytest.raises(VerificationError, match=r"column 'a', row 2: released value 'zz' is not the generalization 'xy' of 'x'"):
        verify.check_generalized_release(df, bad, ["a", "b"], 2, mapping)
    with pytest.raises(VerificationError, match="not 3-anonymous"):
        verify.check_generalized_release(df, res.table, ["a", "b"], 3, {})
    with pytest.raises(VerificationError, match="suppresses 1 rows, more than the allowed 0"):
        verify.check_generalized_release(df, res.table.iloc[1:], ["a", "b"], 1, mapping, max_suppressed=0)
    with pytest.raises(VerificationError, match="repeats an input row"):
        verify.check_generalized_release(df, pd.concat([res.table, res.table.iloc[:1]]), ["a", "b"], 2, mapping)
    with pytest.raises(VerificationError, match="fewer than 2 respondents"):
        same = df.assign(u=["p", "p", "p", "p"])
        verify.check_generalized_release(same, res.table, ["a", "b"], 2, mapping, uid="u")
