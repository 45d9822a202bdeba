"""Customized publishing estimation (Section 6): soundness and tightening, Disjoint refused."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.errors import InputError
from tempanon.timeseries.api import kp_anonymize, released_source_rows
from tempanon.timeseries.data import random_walk, uniform
from tempanon.timeseries.publish import estimate_ranges, estimate_symbols
from tempanon.timeseries.sax import sax_words

QI = [f"A{i}" for i in range(6)]
VC = ["A0", "A1", "A2", "A4"]
PC = ["A1", "A2", "A3", "A5"]


@pytest.fixture(scope="module", params=["uniform", "walk"])
def published(request):
    gen = uniform if request.param == "uniform" else random_walk
    df = gen(120, n_instants=6, seed=7)
    r = kp_anonymize(df, id_col="id", qi=QI, k=4, P=2, max_level=4, publish_values=VC, publish_patterns=PC)
    order = r.audit.dropna().sort_values("output_row").index.to_numpy()
    X = df[QI].to_numpy()[order]
    dom = (float(df[QI].min().min()), float(df[QI].max().max()))
    return r, X, dom


def test_ranges_sound_and_lp_tighter(published):
    r, X, dom = published
    lem = estimate_ranges(r.released, QI, VC, PC, domain=dom, lp=False)
    lp = estimate_ranges(r.released, QI, VC, PC, domain=dom, lp=True)
    tighter = 0
    for c in ("A3", "A5"):
        x = X[:, QI.index(c)]
        l1, u1 = lem[f"{c}_lo"].to_numpy(), lem[f"{c}_hi"].to_numpy()
        l2, u2 = lp[f"{c}_lo"].to_numpy(), lp[f"{c}_hi"].to_numpy()
        assert ((l1 <= x + 1e-9) & (x <= u1 + 1e-9)).all()  # Lemma 1 is sound
        assert ((l2 <= x + 1e-7) & (x <= u2 + 1e-7)).all()  # the LP relaxation is sound
        assert ((l2 >= l1 - 1e-7) & (u2 <= u1 + 1e-7)).all()  # and never looser
        tighter += int(((u2 - l2) < (u1 - l1) - 1e-9).sum())
    assert tighter > 0


def test_lemma1_by_hand():
    rel = pd.DataFrame({"kgroup": [0], "psubgroup": [0], "A0_lo": [1.0], "A0_hi": [2.0], "A1_lo": [5.0],
                        "A1_hi": [6.0], "pattern": ["acb"], "pattern_level": [3]})
    est = estimate_ranges(rel, ["A0", "A1", "A2"], ["A0", "A1"], ["A0", "A1", "A2"], domain=(0.0, 10.0), lp=False)
    assert est.loc[0, "A2_lo"] == 1.0 and est.loc[0, "A2_hi"] == 6.0
    est = estimate_ranges(rel, ["A0", "A1", "A2"], ["A0", "A1"], ["A0", "A1", "A2"], domain=(0.0, 10.0))
    lo, hi = est.loc[0, "A2_lo"], est.loc[0, "A2_hi"]
    assert 1.0 < lo < hi < 6.0  # strictly tighter than Lemma 1
    # brute-force oracle: every grid series with word 'acb' inside the published ranges is covered
    g = np.linspace(0, 10, 201)
    x0, x1, x2 = np.meshgrid(g[(g >= 1) & (g <= 2)], g[(g >= 5) & (g <= 6)], g, indexing="ij")
    X = np.stack([x0.ravel(), x1.ravel(), x2.ravel()], axis=1)
    ok = (sax_words(X, 3) == [0, 2, 1]).all(axis=1)
    assert ok.any()
    assert lo <= X[ok, 2].min() + 1e-9 and X[ok, 2].max() <= hi + 1e-9


def test_possible_symbols_contain_truth(published):
    r, X, dom = published
    est = estimate_symbols(r.released, QI, VC, PC, domain=dom)
    for c in ("A0", "A4"):
        j = QI.index(c)
        for i in range(len(X)):
            level = int(r.released["pattern_level"].iloc[i])
            true = chr(97 + int(sax_words(X[i : i + 1], level)[0, j]))
            assert true in est[f"{c}_symbols"].iloc[i]
            assert est[f"{c}_symbol"].iloc[i] in est[f"{c}_symbols"].iloc[i]


def test_disjoint_refused(published):
    r, X, dom = published
    with pytest.raises(InputError, match="Disjoint"):
        estimate_ranges(r.released, QI, ["A0"], ["A3"])
    with pytest.raises(InputError, match="Disjoint"):
        estimate_symbols(r.released, QI, ["A0"], ["A3"])


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 4), st.data())
def test_estimates_sound_on_random_releases(seed, max_level, data):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(24, 5)).cumsum(axis=1)
    qi = [f"A{i}" for i in range(5)]
    df = pd.DataFrame(X, columns=qi)
    df.insert(0, "id", [f"s{i}" for i in range(24)])
    vc = sorted(data.draw(st.sets(st.sampled_from(qi), min_size=1, max_size=4)))
    pc = sorted(set(data.draw(st.sets(st.sampled_from(qi), min_size=1, max_size=4))) | {vc[0]})
    r = kp_anonymize(df, id_col="id", qi=qi, k=4, P=2, max_level=max_level, publish_values=vc, publish_patterns=pc)
    Xo = X[released_source_rows(r.audit)]
    dom = (float(X.min()), float(X.max()))
    rng_est = estimate_ranges(r.released, qi, vc, pc, domain=dom)
    for c in pc:
        if c in vc:
            continue
        x = Xo[:, qi.index(c)]
        assert (rng_est[f"{c}_lo"].to_numpy() <= x + 1e-7).all() and (x <= rng_est[f"{c}_hi"].to_numpy() + 1e-7).all()
    sym = estimate_symbols(r.released, qi, vc, pc, domain=dom)
    levels = r.released["pattern_level"].to_numpy()
    for c in vc:
        if c in pc:
            continue
        for i in range(len(Xo)):
            true = chr(97 + int(sax_words(Xo[i : i + 1], int(levels[i]))[0, qi.index(c)]))
            assert true in sym[f"{c}_symbols"].iloc[i]
