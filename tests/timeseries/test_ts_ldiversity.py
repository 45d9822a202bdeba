"""l-diversity by perturbation (Section 5.4) on random groups (hypothesis)."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tempanon.timeseries.api import kp_anonymize
from tempanon.timeseries.data import random_walk
from tempanon.timeseries.ldiversity import perturb_l_diverse
from tempanon.timeseries.model import breach_probabilities


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.0, 1.0, 1.5, 2.0, 100.0])), min_size=1, max_size=60),
       st.integers(1, 4), st.sampled_from([0.01, 0.5, 3.0]))
# a moved value (0 + 3 * 2/3 = 2) lands on a value of the P-subgroup; halving it then met the other moved one
@example(pairs=[(0, 0.0), (0, 0.0), (0, 0.0), (0, 2.0)], l=3, eps=3.0)
def test_perturbation_caps_every_value(pairs, l, eps):
    ps = np.array([p for p, _ in pairs])
    ps = np.unique(ps, return_inverse=True)[1]
    size = np.bincount(ps)
    if size.min() < l:
        return
    vals = np.array([v for _, v in pairs])
    new = perturb_l_diverse(vals, ps, l, eps)
    assert np.all((new >= vals) & (new <= vals + eps))
    for g in range(size.size):
        _, cnt = np.unique(new[ps == g], return_counts=True)
        assert cnt.max() <= size[g] // l
        # exactly x_i = |EC(v_i)| - floor(|PS|/l) records moved per over-represented value
        u, c0 = np.unique(vals[ps == g], return_counts=True)
        moved = int((new[ps == g] != vals[ps == g]).sum())
        assert moved == int(np.maximum(c0 - size[g] // l, 0).sum())


def test_breach_probabilities_bounded_on_release():
    df = random_walk(500, seed=11)
    r = kp_anonymize(df, id_col="id", qi=[f"A{i}" for i in range(10)], k=8, P=4)
    bp = breach_probabilities(r.released)
    assert bp["p_value"].max() <= 1 / 8
    assert bp["p_pattern"].max() <= 1 / 4
    assert (bp["p_pattern"] >= bp["p_value"]).all()
