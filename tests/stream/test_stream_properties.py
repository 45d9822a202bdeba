"""Property tests of the whole pipeline on random small streams."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.errors import NoSolutionError, TempanonWarning
from tempanon.stream.api import anonymize_stream
from tempanon.verify import check_anatomy


@settings(max_examples=20, deadline=None)
@given(
    st.integers(0, 10_000),
    st.sampled_from([2, 3]),
    st.integers(0, 3),
    st.sampled_from(["linear", "quadratic"]),
    st.sampled_from(["day", "hour"]),
)
def test_stream_invariants(seed, l, w, cost, unit):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    start = pd.Timestamp("2021-01-01")
    times = start + pd.to_timedelta(np.sort(rng.integers(0, 6 * 24 * 60, n)), unit="min")
    df = pd.DataFrame(
        {
            "t": times.strftime("%Y-%m-%d %H:%M"),
            "s": rng.choice(["a", "b", "c", None], n, p=[0.55, 0.2, 0.15, 0.1]),
            "age": rng.integers(20, 30, n).astype(str),
        }
    ).sample(frac=1, random_state=seed)  # input order need not be time order
    # refused exactly when fewer distinct values (missing one of them) than l; never a warning
    few = df["s"].nunique(dropna=False) < l
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TempanonWarning)
        if few:
            with pytest.raises(NoSolutionError, match=f"fewer than l = {l}"):
                anonymize_stream(df, time="t", sensitive="s", l=l, w=w, snapshot=unit, cost=cost)
            return
        r = anonymize_stream(df, time="t", sensitive="s", l=l, w=w, snapshot=unit, cost=cost)
    assert [m.category for m in caught] == []
    audit = r.audit
    # every input row exactly once; published within [own, own + w] or suppressed
    assert audit["row"].tolist() == list(range(n))
    pos = {lab: i for i, lab in enumerate(r.labels)}
    own = audit["snapshot"].map(pos)
    pub = audit["published"].map(pos)
    ok = pub.notna()
    assert ((pub[ok] - own[ok]) == audit["distance"][ok].astype(int)).all()
    assert audit["distance"][ok].astype(int).between(0, w).all()
    assert r.summary["suppressed"] == int((~ok).sum())
    # own snapshot is the record's granule
    fmt = "%Y-%m-%d" if unit == "day" else "%Y-%m-%dT%H"
    want = pd.to_datetime(df.reset_index(drop=True)["t"]).dt.strftime(fmt)
    assert (audit["snapshot"] == want).all()
    # consecutive granules and a verified release per snapshot
    assert len(r.published) == len(r.labels)
    for p in r.published:
        qit, st_ = r.tables(p.label)
        check_anatomy(qit, st_, l, sensitive="s", qi=["age"])
        assert len(qit) == int((audit["published"] == p.label).sum())
    # IL (Eq. 2) recomputed from the audit
    mu = r.publisher.mu
    beta = 10.0
    il = mu[audit["distance"][ok].astype(int).to_numpy()].sum() + beta * int((~ok).sum())
    assert r.summary["information_loss"] == il
