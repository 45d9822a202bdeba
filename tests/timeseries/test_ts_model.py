"""Loss measures and breach probabilities (Eqs. 1-3)."""

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tempanon.timeseries.model import (
    breach_probabilities,
    instant_value_loss,
    pairwise_difference_features,
    pattern_loss,
)


def test_value_loss_formula():
    lo = np.array([[0.0, 1.0], [2.0, 2.0]])
    hi = np.array([[3.0, 5.0], [2.0, 2.0]])
    assert np.allclose(instant_value_loss(lo, hi), [np.sqrt((9 + 16) / 2), 0.0])


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(2, 8)), elements=st.floats(-5, 5, width=32)),
       arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(2, 8)), elements=st.floats(-5, 5, width=32)))
def test_fast_pattern_loss_equals_explicit_pairwise_features(A, B):
    m, n = min(A.shape[0], B.shape[0]), min(A.shape[1], B.shape[1])
    A, B = A[:m, :n], B[:m, :n]
    fast = pattern_loss(A, B)
    slow = pattern_loss(A, B, features=pairwise_difference_features)
    assert np.allclose(fast, slow, atol=1e-6)


def test_pattern_loss_zero_vector_conventions():
    flat = np.zeros((1, 4))
    shaped = np.array([[0.0, 1.0, 0.0, -1.0]])
    assert pattern_loss(flat, flat)[0] == 0.0
    assert pattern_loss(flat, shaped)[0] == 1.0
    assert pattern_loss(shaped, flat)[0] == 1.0
    assert np.isclose(pattern_loss(shaped, 2 * shaped)[0], 0.0)
    assert np.isclose(pattern_loss(shaped, -shaped)[0], 2.0)


def test_pairwise_features_order():
    f = pairwise_difference_features(np.array([[1.0, 3.0, 6.0]]))
    assert f.tolist() == [[2.0, 5.0, 3.0]]


def test_breach_probabilities():
    rel = pd.DataFrame({"kgroup": [0, 0, 0, 0, 1, 1], "pattern": ["ab", "ab", "ba", "ba", "aa", "aa"],
                        "pattern_level": [2, 2, 2, 2, 1, 1]})
    bp = breach_probabilities(rel)
    assert bp["p_value"].tolist() == [0.25] * 4 + [0.5] * 2
    assert bp["p_pattern"].tolist() == [0.5] * 6
