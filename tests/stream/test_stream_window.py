"""The window ILP on counts (first window / offline) against brute force on tiny instances."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.stream.offline import offline_lower_bound
from tempanon.stream.window import WindowProblem, check_solution, solve_window_ilp


def _brute(snap, codes, T, l, mu, beta):
    w = len(mu) - 1
    opts = [[-1] + list(range(h, min(h + w, T - 1) + 1)) for h in snap]
    best = np.inf
    for ch in itertools.product(*opts):
        ch = np.array(ch)
        if all(l * np.bincount(codes[ch == j]).max() <= (ch == j).sum() for j in range(T) if (ch == j).any()):
            best = min(best, sum(beta[c] if p < 0 else mu[p - h] for h, c, p in zip(snap, codes, ch)))
    return best


def _random_stream(seed: int, T: int, n_max: int, n_values: int, w: int, quad: bool):
    """Records in ``T`` snapshots (sorted), value codes, ``mu`` on ``0..w`` and per-value ``beta``."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, n_max))
    snap = np.sort(rng.integers(0, T, n))
    codes = rng.integers(0, n_values, n)
    mu = np.array([d * d if quad else d for d in range(w + 1)], float)
    return snap, codes, mu, rng.choice([1.0, 3.0, 10.0], n_values)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([2, 3]), st.integers(0, 2), st.booleans())
def test_first_window_ilp_equals_brute_force(seed, l, w, quad):
    T = 3
    snap, codes, mu, beta = _random_stream(seed, T, 8, 3, w, quad)
    off = offline_lower_bound(snap, codes, l, mu, beta, n_snapshots=T, time_limit=None)
    assert off.optimal and off.lower_bound == pytest.approx(off.best_il)
    assert off.best_il == pytest.approx(_brute(snap, codes, T, l, mu, beta))


def test_solution_feasible_and_values_decoupled_from_prices():
    # two groups of the same value with different suppression prices (the 'value' field)
    p = WindowProblem(
        home=np.array([0, 1, 1]), code=np.array([0, 1, 2]), count=np.array([3, 1, 1]),
        lo=np.array([0, 1, 1]), hi=np.array([1, 1, 1]), l=2, mu=np.array([0.0, 1.0]),
        beta=np.array([10.0, 10.0, 10.0]), value=np.array([0, 1, 0]),
    )
    s = solve_window_ilp(p)
    check_solution(p, s)
    # D'[0] can hold no lone 'a'; D'[1] = {b, one a}: best with the home-1 'a' (cost 0), the three
    # home-0 'a' suppressed (30); moving one of them instead costs 1 + 10 + 20 = 31
    assert s.il == pytest.approx(30.0) and s.optimal
    assert s.suppressed.tolist() == [3, 0, 0]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([2, 3, 5]), st.integers(0, 3), st.booleans())
def test_offline_cap_form_equals_direct_form(seed, l, w, quad):
    T = 5
    snap, codes, mu, beta = _random_stream(seed, T, 30, 4, w, quad)
    direct = offline_lower_bound(snap, codes, l, mu, beta, n_snapshots=T, time_limit=None)
    caps = offline_lower_bound(snap, codes, l, mu, beta, n_snapshots=T, time_limit=None, form="caps")
    assert direct.optimal and caps.optimal
    assert caps.best_il == pytest.approx(direct.best_il) and caps.lower_bound == pytest.approx(caps.best_il)


def test_offline_form_is_checked():
    with pytest.raises(ValueError):
        offline_lower_bound(np.array([0]), np.array([0]), 2, np.array([0.0]), np.array([1.0]), form="nope")
