"""Model of Section II: l-eligibility, the initial solution, cost validation (C1-C3), IL (Eq. 1-2)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.errors import InputError
from tempanon.stream.model import (
    CostModel,
    eligible_cap,
    information_loss,
    initial_suppression,
    is_l_eligible,
    validate_l,
    validate_window,
)


def test_l_eligible_definition():
    assert is_l_eligible(np.array([1, 1]), 2)
    assert not is_l_eligible(np.array([2, 1]), 2)
    assert is_l_eligible(np.array([2, 2, 2]), 3)
    assert not is_l_eligible(np.array([3, 2, 2]), 3)
    assert is_l_eligible(np.array([], dtype=int), 5)
    assert is_l_eligible(np.array([0, 0]), 5)


def _greedy_one_at_a_time(counts, l):
    c = list(counts)
    removed = [0] * len(c)
    while c and l * max(c) > sum(c):
        i = int(np.argmax(c))
        c[i] -= 1
        removed[i] += 1
    return removed


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=7), st.integers(2, 6))
def test_initial_solution_is_the_one_at_a_time_process(counts, l):
    counts = np.array(counts)
    assert initial_suppression(counts, l).tolist() == _greedy_one_at_a_time(counts, l)
    kept = counts - initial_suppression(counts, l)
    assert is_l_eligible(kept, l)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=4), st.integers(2, 4), st.lists(st.floats(0.5, 5), min_size=4, max_size=4))
def test_cap_is_cheapest_suppression_brute_force(counts, l, beta):
    counts = np.array(counts)
    beta = np.array(beta[: len(counts)])
    best = min(
        float(beta @ (counts - np.array(k)))
        for k in itertools.product(*[range(c + 1) for c in counts])
        if is_l_eligible(np.array(k), l)
    )
    assert float(beta @ initial_suppression(counts, l)) == pytest.approx(best)


def test_eligible_cap_examples():
    assert eligible_cap(np.array([3, 1]), 2) == 1
    assert eligible_cap(np.array([5]), 2) == 0
    assert eligible_cap(np.array([2, 2, 2, 9]), 3) == 3


def test_builtin_costs():
    lin = CostModel.linear(4, 2.0)
    assert lin.mu.tolist() == [0, 2, 4, 6, 8]
    quad = CostModel.quadratic(3, beta=7)
    assert quad.mu.tolist() == [0, 1, 4, 9]
    assert quad.beta_array(["a", "b"]).tolist() == [7, 7]
    per = CostModel.linear(2, 1.0, {"a": 3.0, "default": 5.0})
    assert per.beta_array(["a", "b"]).tolist() == [3, 5]


@pytest.mark.parametrize(
    "mu, what",
    [
        ([1, 2, 3], "(C1)"),
        ([0, 2, 2], "(C2)"),
        ([0, 3, 2], "(C2)"),
        ([0, 3, 4], "(C3)"),
        ([0, 1], "needs"),
    ],
)
def test_cost_conditions_rejected(mu, what):
    with pytest.raises(InputError, match=what.replace("(", r"\(").replace(")", r"\)")):
        CostModel.from_function(mu, 2)


def test_user_function_validated():
    CostModel.from_function(lambda d: d**3, 4)
    with pytest.raises(InputError, match=r"\(C3\)"):
        CostModel.from_function(lambda d: np.sqrt(d), 3)
    with pytest.raises(InputError, match="failed"):
        CostModel.from_function(lambda d: 1 / 0, 3)


@pytest.mark.parametrize("beta", [0, -1, "x", float("nan")])
def test_bad_suppression_cost(beta):
    with pytest.raises(InputError, match="suppression cost"):
        CostModel.linear(2, 1.0, beta)


def test_l_and_w_validation():
    with pytest.raises(InputError, match="l must be >= 2"):
        validate_l(1)
    with pytest.raises(InputError, match="w must be >= 0"):
        validate_window(-1)
    with pytest.raises(InputError):
        validate_l(2.5)


def test_information_loss_equations():
    mu = np.array([0.0, 1.0, 4.0])
    beta = np.array([10.0, 3.0])
    dist = np.array([0, 1, 2, 0, 0])
    sup = np.array([False, False, False, True, True])
    codes = np.array([0, 0, 1, 0, 1])
    assert information_loss(dist, sup, codes, mu, beta) == 0 + 1 + 4 + 10 + 3


@pytest.mark.parametrize("bad", [1.5, -0.2, "half", None, float("nan")])
def test_defer_must_be_a_number_between_0_and_1(bad):
    from tempanon.stream.model import validate_defer
    from tempanon.stream.publisher import StreamPublisher

    with pytest.raises(InputError, match="defer"):
        validate_defer(bad)
    if bad is not None:  # None: the step's own default (test_defer_none_is_the_steps_default)
        with pytest.raises(InputError, match="defer"):
            StreamPublisher(2, 1, sensitive="s", defer=bad)
    assert validate_defer(True) == 1.0 and validate_defer(False) == 0.0 and validate_defer(0.5) == 0.5


def test_defer_none_is_the_steps_default():
    from tempanon.stream.model import DEFAULT_DEFER
    from tempanon.stream.publisher import StreamPublisher

    assert StreamPublisher(2, 1, sensitive="s").defer == DEFAULT_DEFER
    assert StreamPublisher(2, 1, sensitive="s", step="exact", defer=None).defer == DEFAULT_DEFER
    assert StreamPublisher(2, 1, sensitive="s", step="paper").defer == 0.0
    with pytest.raises(InputError, match="defer must be 0"):
        StreamPublisher(2, 1, sensitive="s", step="paper", defer=0.5)
    assert StreamPublisher(2, 1, sensitive="s", step="fast").defer == DEFAULT_DEFER
    with pytest.raises(InputError, match="step 'quick'"):
        StreamPublisher(2, 1, sensitive="s", step="quick")
