"""SAX (Section 5.1): breakpoints, symbols, constant rows, PAA, reconstruction, word ids."""

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tempanon.timeseries import sax


def _symbol_bruteforce(z: float, level: int) -> int:
    """Symbol by scanning the intervals [beta_j, beta_{j+1}) with the stdlib normal quantile."""
    cuts = [-math.inf] + [NormalDist().inv_cdf(j / level) for j in range(1, level)] + [math.inf]
    for j in range(level):
        if cuts[j] <= z < cuts[j + 1]:
            return j
    raise AssertionError


def test_breakpoints_are_gaussian_quantiles():
    assert sax.breakpoints(1).size == 0
    assert np.allclose(sax.breakpoints(2), [0.0])
    assert np.allclose(sax.breakpoints(4), [-0.6744897501960817, 0.0, 0.6744897501960817])
    with pytest.raises(ValueError):
        sax.breakpoints(0)


def test_medians_are_interval_medians():
    assert np.allclose(sax.medians(1), [0.0])
    assert np.allclose(sax.medians(3), [NormalDist().inv_cdf(1 / 6), 0.0, NormalDist().inv_cdf(5 / 6)])


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(2, 7)),
              elements=st.floats(-1e3, 1e3, allow_nan=False, width=32)),
       st.integers(1, 8))
def test_words_match_bruteforce(X, level):
    W = sax.sax_words(X, level)
    Z = sax.znormalize(X)
    assert not np.isnan(Z).any()
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            assert W[i, j] == _symbol_bruteforce(Z[i, j], level)


def test_constant_row_gets_middle_symbol_no_nan():
    X = np.array([[3.3] * 7, [0.0] * 7, [1e6 + 1e-9 * i for i in range(7)]])
    Z = sax.znormalize(X)
    assert np.array_equal(Z, np.zeros_like(Z))
    assert (sax.sax_words(X, 5) == 2).all()  # odd level: the middle symbol 'c'
    assert (sax.sax_words(X, 4) == 2).all()  # even level: 0 is a breakpoint, upper-middle 'c'


def test_value_on_breakpoint_goes_up():
    assert sax.symbols_of(np.array([[0.0, -1e-12]]), 2).tolist() == [[1, 0]]


def test_levels_not_nested_recomputed_each_level():
    X = np.array([[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]])
    allw = sax.sax_all_levels(X, 5)
    for L in range(1, 6):
        assert np.array_equal(allw[L], sax.sax_words(X, L))


def test_paa_means_and_identity():
    Z = np.arange(10, dtype=float)[None]
    assert np.array_equal(sax.paa(Z, None), Z)
    assert np.allclose(sax.paa(Z, 3), [[np.mean([0, 1, 2, 3]), np.mean([4, 5, 6]), np.mean([7, 8, 9])]])
    with pytest.raises(ValueError):
        sax.paa(Z, 11)


@settings(max_examples=40, deadline=None)
@given(arrays(np.uint8, st.tuples(st.integers(1, 30), st.integers(1, 40)), elements=st.integers(0, 4)))
def test_word_ids_equal_iff_words_equal(W):
    ids = sax.word_ids(W)
    for a in range(W.shape[0]):
        for b in range(W.shape[0]):
            assert (ids[a] == ids[b]) == bool((W[a] == W[b]).all())


def test_word_ids_long_words_use_void_path():
    rng = np.random.default_rng(0)
    W = rng.integers(0, 5, (50, 60)).astype(np.uint8)
    W[10] = W[3]
    ids = sax.word_ids(W)
    assert ids[10] == ids[3] and len(set(ids.tolist())) == 49


def test_strings_round_trip():
    W = np.array([[0, 1, 2], [4, 0, 0]], dtype=np.uint8)
    s = sax.words_to_strings(W)
    assert s.tolist() == ["abc", "eaa"]
    assert np.array_equal(sax.strings_to_words(s, 3), W)


def test_reconstruct_mixed_levels():
    W = np.array([[0, 1], [2, 0]], dtype=np.uint8)
    R = sax.reconstruct(W, np.array([2, 3]))
    assert np.allclose(R[0], [sax.medians(2)[0], sax.medians(2)[1]])
    assert np.allclose(R[1], [sax.medians(3)[2], sax.medians(3)[0]])
