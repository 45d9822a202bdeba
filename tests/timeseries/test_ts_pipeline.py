"""End-to-end properties of Naive and KAPRA (hypothesis) and of kp_anonymize's options."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.errors import InputError, NoSolutionError
from tempanon.timeseries.api import kp_anonymize
from tempanon.timeseries.data import random_walk, uniform
from tempanon.timeseries.model import instant_value_loss
from tempanon.timeseries.sax import sax_words
from tempanon.verify import check_kp_anonymity


def _frame(rows):
    X = np.array(rows, dtype=float)
    df = pd.DataFrame(X, columns=[f"A{j}" for j in range(X.shape[1])])
    df.insert(0, "id", [f"s{i}" for i in range(len(rows))])
    df["S"] = np.arange(len(rows)) % 3
    return df


tables = st.integers(1, 6).flatmap(lambda w: st.lists(
    st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.25, -3.0]), min_size=w, max_size=w), min_size=1, max_size=45))


@settings(max_examples=70, deadline=None)
@given(tables, st.integers(2, 8), st.data(), st.sampled_from(["kapra", "naive"]), st.integers(1, 5))
def test_every_release_is_kp_anonymous(rows, k, data, algorithm, max_level):
    P = data.draw(st.integers(2, k))
    df = _frame(rows)
    qi = [c for c in df.columns if c.startswith("A")]
    if len(rows) < k:
        with pytest.raises(NoSolutionError):
            kp_anonymize(df, id_col="id", qi=qi, k=k, P=P, algorithm=algorithm, max_level=max_level)
        return
    paa_segments = data.draw(st.one_of(st.none(), st.integers(1, len(qi))))
    try:
        r = kp_anonymize(df, id_col="id", qi=qi, sensitive=["S"], k=k, P=P, algorithm=algorithm,
                         max_level=max_level, paa_segments=paa_segments)
    except NoSolutionError:
        assert algorithm == "kapra" and len(rows) - (P - 1) < k
        return
    # re-check from the outside, independently of the call inside kp_anonymize
    rep = check_kp_anonymity(df, r.released, r.audit, id_col="id", qi=qi, k=k, P=P, sensitive=["S"],
                             paa_segments=paa_segments)
    assert rep["suppressed"] < P
    if algorithm == "naive":
        assert rep["suppressed"] == 0
    assert r.summary["suppressed"] + r.summary["published"] == len(rows)
    assert r.summary["breach_value_max"] <= 1 / k and r.summary["breach_pattern_max"] <= 1 / P
    assert r.released["pattern_level"].max() <= max_level
    # the summary's VL is Eq. 2 summed over the released envelopes
    lo = r.released[[f"{c}_lo" for c in qi]].to_numpy()
    hi = r.released[[f"{c}_hi" for c in qi]].to_numpy()
    assert np.isclose(r.summary["value_loss"], instant_value_loss(lo, hi).sum())


def test_kapra_on_walk_and_uniform_verified():
    for df in (random_walk(2000, seed=1), uniform(2000, seed=2)):
        for algorithm in ("kapra", "naive"):
            r = kp_anonymize(df, id_col="id", qi=[f"A{i}" for i in range(10)], sensitive=["S"], k=10, P=5,
                             algorithm=algorithm)
            s = r.summary
            assert s["suppressed"] < 5 and s["kgroups"] >= 1 and 1 <= s["mean_level"] <= 5
            for key in ("k", "P", "algorithm", "kgroups", "psubgroups", "suppressed", "value_loss",
                        "pattern_loss", "mean_level", "runtime_seconds"):
                assert key in s


def test_kapra_preserves_patterns_better_than_naive():
    """The paper's main claim (Figs. 4-5): KAPRA's pattern loss is far below Naive's."""
    df = random_walk(3000, seed=4)
    qi = [f"A{i}" for i in range(10)]
    pl = {a: kp_anonymize(df, id_col="id", qi=qi, k=10, P=5, algorithm=a).summary["pattern_loss"]
          for a in ("kapra", "naive")}
    assert pl["kapra"] < 0.5 * pl["naive"]


def test_identical_patterns_get_max_level():
    base = np.array([0.0, 1.0, 3.0, 2.0])
    rows = [base * (i + 1) + i for i in range(6)]  # same shape, different scale/offset
    df = _frame(rows)
    r = kp_anonymize(df, id_col="id", qi=["A0", "A1", "A2", "A3"], k=6, P=3, max_level=7)
    assert (r.released["pattern_level"] == 7).all()
    assert (r.released["pattern"] == "".join(chr(97 + s) for s in sax_words(base[None], 7)[0])).all()


def test_l_diversity_perturbation():
    df = random_walk(400, seed=9)
    df["S"] = (np.arange(400) % 2).astype(float)  # two values: every P-subgroup of size >= 3 needs work for l=3
    r = kp_anonymize(df, id_col="id", qi=[f"A{i}" for i in range(10)], sensitive=["S"], k=6, P=3,
                     l_diversity=3, epsilon=0.4, numeric_sensitive=True)
    rel = r.released
    size = rel.groupby("psubgroup")["S"].transform("size")
    top = rel.groupby(["psubgroup", "S"])["S"].transform("size")
    assert (top <= size // 3).all()
    assert r.summary["perturbed"] > 0
    orig = df["S"].to_numpy()[r.audit.dropna()["output_row"].sort_values().index.to_numpy()]
    assert np.abs(rel["S"].to_numpy() - orig).max() <= 0.4


def test_customized_publishing_columns():
    df = random_walk(300, seed=2)
    qi = [f"A{i}" for i in range(10)]
    r = kp_anonymize(df, id_col="id", qi=qi, k=5, P=2, publish_values=["A0", "A1", "A2", "A5"],
                     publish_patterns=["A2", "A5", "A7"])
    cols = list(r.released.columns)
    assert "A0_lo" in cols and "A7_lo" not in cols and "A3_hi" not in cols
    assert r.released["pattern"].str.len().eq(3).all()
    with pytest.raises(InputError, match="Disjoint"):
        kp_anonymize(df, id_col="id", qi=qi, k=5, P=2, publish_values=["A0"], publish_patterns=["A1"])


def test_paa_word_length():
    df = random_walk(200, seed=2)
    r = kp_anonymize(df, id_col="id", qi=[f"A{i}" for i in range(10)], k=5, P=2, paa_segments=4)
    assert r.released["pattern"].str.len().eq(4).all()


def test_missing_sensitive_is_a_category():
    df = random_walk(60, seed=2)
    df.loc[[3, 10], "S"] = np.nan
    r = kp_anonymize(df, id_col="id", qi=[f"A{i}" for i in range(10)], sensitive=["S"], k=5, P=2)
    assert r.released["S"].isna().sum() == 2


def test_pattern_loss_with_paa_is_measured_on_the_full_series():
    """Eq. 3 / Section 7.1: p(r) from the original normalized series (all n instants), p*(r) from
    the series reconstructed from the published word (each PAA symbol over its segment); not on
    the averaged series."""
    from tempanon.timeseries.model import pairwise_difference_features, pattern_loss
    from tempanon.timeseries.sax import medians, znormalize
    from tempanon.timeseries.api import released_source_rows

    df = random_walk(300, 12, seed=8)
    qi = [f"A{i}" for i in range(12)]
    r = kp_anonymize(df, id_col="id", qi=qi, k=6, P=3, paa_segments=4)
    X = df[qi].to_numpy()[released_source_rows(r.audit)]
    rec = np.vstack([np.repeat(medians(int(L))[[ord(ch) - 97 for ch in p]], 3)
                     for p, L in zip(r.released["pattern"], r.released["pattern_level"])])
    fa = pairwise_difference_features(znormalize(X))
    fb = pairwise_difference_features(rec)
    cos = (fa * fb).sum(1) / np.sqrt((fa * fa).sum(1) * (fb * fb).sum(1)).clip(1e-300)
    expected = np.where((fb ** 2).sum(1) == 0, 1.0, 1 - cos)
    assert np.isclose(r.summary["pattern_loss"], expected.sum())
    averaged = pattern_loss(znormalize(X).reshape(len(X), 4, 3).mean(axis=2), rec[:, ::3]).sum()
    assert not np.isclose(r.summary["pattern_loss"], averaged)


def _bumps(n_series, n, seed):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, n)
    X = np.array([np.exp(-((t - rng.uniform(.3, .7)) / 0.1) ** 2) * rng.uniform(1, 2) + rng.normal(0, .05, n)
                  for _ in range(n_series)])
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(n)])
    df.insert(0, "id", [f"s{i}" for i in range(n_series)])
    return df


@pytest.mark.parametrize("n, kind", [(150, "bumps"), (144, "walk")])
def test_default_paa_keeps_long_series_above_level_1(n, kind):
    """Issue 16: with one symbol per value, 97.5-100% of the patterns of 150-point (GunPoint-like)
    and 144-point series collapse to level 1; the default word length must not (and the collapse
    is warned about)."""
    if kind == "bumps":
        df = _bumps(200, n, 0)
    else:
        rng = np.random.default_rng(1)
        df = pd.DataFrame(np.cumsum(rng.normal(size=(300, n)), axis=1), columns=[f"x{i}" for i in range(n)])
        df.insert(0, "id", [f"s{i}" for i in range(300)])
    qi = [c for c in df.columns if c != "id"]
    r = kp_anonymize(df, id_col="id", qi=qi, k=10, P=5)
    assert r.summary["paa_rule"] == "default" and 4 <= r.summary["word_length"] <= 10
    assert r.summary["level1_share"] < 0.1 and r.summary["warnings"] == []
    full = kp_anonymize(df, id_col="id", qi=qi, k=10, P=5, paa_segments=n)
    assert full.summary["level1_share"] > 0.9 and full.summary["word_length"] == n
    assert len(full.summary["warnings"]) == 1 and "level 1" in full.summary["warnings"][0]


def test_default_paa_rule():
    from tempanon.timeseries.api import default_paa_segments

    assert default_paa_segments(10, 10_000, 5) == 10  # the paper's setting: one symbol per value
    assert default_paa_segments(6, 50, 5) == 6
    assert default_paa_segments(52, 811, 5) == 5  # floor(log(162.2) / log(2.5))
    assert default_paa_segments(150, 200, 5) == 4
    assert default_paa_segments(24, 10**7, 2) == 10
    assert default_paa_segments(12, 10, 5) == 4


def test_l_diversity_refuses_a_categorical_sensitive_value():
    """Issue 16: perturbation turned a binary label 1/2 into 1.25 and 2.25."""
    df = random_walk(200, seed=5)
    df["S"] = np.where(np.arange(200) % 3 == 0, 1, 2)
    qi = [f"A{i}" for i in range(10)]
    with pytest.raises(InputError, match="looks categorical.*2 distinct whole numbers: 1, 2"):
        kp_anonymize(df, id_col="id", qi=qi, sensitive=["S"], k=10, P=5, l_diversity=2, epsilon=0.5)
    r = kp_anonymize(df, id_col="id", qi=qi, sensitive=["S"], k=10, P=5, l_diversity=2, epsilon=0.5,
                     numeric_sensitive=True)
    assert r.summary["perturbed"] > 0
