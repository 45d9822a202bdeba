"""Bulk and fast paths of the publisher give the same result as the general, per-snapshot path:
``push_coded_many`` against ``push_coded`` one snapshot at a time (same placements, steps, releases,
Anatomy groups), the segment kernels against their per-snapshot counterparts, the IL-0 test of a step
against a scan of the record table, and ``check_anatomy`` against a text-based reference."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.errors import InputError, VerificationError
from tempanon.stream.anatomy import anatomy_groups, anatomy_segments, qit_order
from tempanon.stream.api import anonymize_stream
from tempanon.stream.model import CostModel, initial_suppression, initial_suppression_segments
from tempanon.stream.publisher import StreamPublisher
from tempanon.stream.snapshots import parse_times
from tempanon.verify import check_anatomy
from stream_active import active_records


def _coded_stream(rng, T, max_n, n_values, skew):
    sizes = rng.integers(0, max_n + 1, T)
    p = np.array([skew] + [1.0] * (n_values - 1))
    codes = rng.choice(n_values, int(sizes.sum()), p=p / p.sum())
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    rows = rng.permutation(len(codes)) + 100
    return codes, rows, bounds


def _publisher(l, w, n_values, cost_kind, seed, step="fast"):
    values = [f"v{i}" for i in range(n_values - 1)] + [None]
    cost = CostModel.linear(w, 1.0, {"v0": 4.0, "default": 10.0}) if cost_kind == "linear" else CostModel.quadratic(w, 6.0)
    pub = StreamPublisher(l, w, sensitive="s", cost=cost, seed=seed, step=step)
    pub.set_values(values)
    return pub


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3]), st.integers(0, 3), st.sampled_from(["linear", "quadratic"]), st.integers(2, 5),
       st.sampled_from(["fast", "exact"]))
def test_push_coded_many_equals_push_coded(seed, l, w, cost_kind, n_values, step):
    rng = np.random.default_rng(seed)
    codes, rows, bounds = _coded_stream(rng, int(rng.integers(1, 12)), 9, n_values, float(rng.choice([1.0, 4.0])))
    labels = [f"s{k}" for k in range(len(bounds) - 1)]
    one = _publisher(l, w, n_values, cost_kind, seed, step)
    out1 = []
    for k in range(len(labels)):
        a, b = bounds[k], bounds[k + 1]
        out1 += one.push_coded(codes[a:b], rows[a:b], label=labels[k])
    out1 += one.flush()
    bulk = _publisher(l, w, n_values, cost_kind, seed, step)
    seen = []
    out2 = bulk.push_coded_many(codes, rows, bounds, labels, progress=lambda k, n: seen.append((k, n)))
    out2 += bulk.flush()
    assert seen[-1] == (len(labels), len(labels))
    assert len(out1) == len(out2) == len(labels)
    for p, q in zip(out1, out2):
        assert (p.index, p.label) == (q.index, q.label)
        for f in ("rows", "home", "distance", "codes", "group"):
            assert np.array_equal(getattr(p, f), getattr(q, f)), f
        assert p.information_loss == pytest.approx(q.information_loss, abs=1e-9)
    assert [(s.method, s.active, s.certificate, s.confirmed) for s in one.steps] == [
        (s.method, s.active, s.certificate, s.confirmed) for s in bulk.steps
    ]
    pd.testing.assert_frame_equal(one.record_table(), bulk.record_table())
    s1, s2 = one.summary(), bulk.summary()
    assert s1.pop("step_cpu_seconds") >= 0 and s2.pop("step_cpu_seconds") >= 0  # timing differs
    assert s1.pop("jit_compile_cpu_seconds") >= 0 and s2.pop("jit_compile_cpu_seconds") >= 0  # only the first load compiles
    assert s1 == s2


def test_push_coded_many_checks_its_input():
    pub = _publisher(2, 1, 3, "linear", 0)
    with pytest.raises(InputError, match="bounds"):
        pub.push_coded_many(np.array([0, 1]), np.array([0, 1]), np.array([0, 1]), ["a"])
    with pytest.raises(InputError, match="outside"):
        pub.push_coded_many(np.array([0, 7]), np.array([0, 1]), np.array([0, 2]), ["a"])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 6), st.integers(1, 8))
def test_initial_suppression_segments_equals_per_snapshot(seed, l, n_values):
    rng = np.random.default_rng(seed)
    codes, _, bounds = _coded_stream(rng, int(rng.integers(1, 8)), 30, n_values, float(rng.choice([1.0, 3.0, 10.0])))
    K = len(bounds) - 1
    seg = np.repeat(np.arange(K), np.diff(bounds))
    drop, n_supp = initial_suppression_segments(codes, seg, K, l)
    for k in range(K):
        c = codes[bounds[k] : bounds[k + 1]]
        d = drop[bounds[k] : bounds[k + 1]]
        supp = initial_suppression(np.bincount(c, minlength=n_values), l) if len(c) else np.zeros(n_values, int)
        assert n_supp[k] == supp.sum() == d.sum()
        for v in range(n_values):  # the latest records of each value are suppressed
            mine = d[c == v]
            assert not mine[: len(mine) - supp[v]].any() and mine[len(mine) - supp[v] :].all()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 4))
def test_anatomy_segments_equals_per_snapshot(seed, l):
    rng = np.random.default_rng(seed)
    codes, _, bounds = _coded_stream(rng, int(rng.integers(1, 8)), 25, 5, 1.0)
    K = len(bounds) - 1
    seg = np.repeat(np.arange(K), np.diff(bounds))
    keep = ~initial_suppression_segments(codes, seg, K, l)[0]
    codes, seg = codes[keep], seg[keep]
    group, order = anatomy_segments(codes, seg, K, l, np.random.default_rng(seed))
    r = np.random.default_rng(seed)
    start = 0
    for k in range(K):
        c = codes[seg == k]
        g = anatomy_groups(c, l, r)
        perm = qit_order(g, r)
        assert np.array_equal(group[seg == k], g)
        assert np.array_equal(order[start : start + len(c)] - start, perm)
        start += len(c)


def test_anatomy_segments_rejects_non_eligible():
    with pytest.raises(InputError, match="not 2-eligible"):
        anatomy_segments(np.array([0, 1, 1, 1]), np.array([0, 0, 1, 1]), 2, 2, np.random.default_rng(0))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([2, 3]), st.integers(1, 3))
def test_il0_step_test_equals_record_scan(seed, l, w):
    """A step takes the IL-0 path exactly when no active record of an older snapshot is moved or
    suppressed and the new snapshot suppresses nothing; ``active`` counts the records not published."""
    rng = np.random.default_rng(seed)
    pub = StreamPublisher(l, w, sensitive="s", qi=["q"])
    rid = 0
    for t in range(10):
        n = int(rng.integers(0, 8))
        vals = rng.choice(list("abcd"), n, p=[0.4, 0.2, 0.2, 0.2])
        snap = pd.DataFrame({"q": np.zeros(n, int), "s": vals}, index=np.arange(rid, rid + n))
        rid += n
        before = pub.record_table()
        pub.push(snap, label=str(t))
        oldest = max(0, t - w)
        act = active_records(before, oldest, w)
        off = bool(len(act) and (act.placed != act.home).any())
        # the publisher's test is conservative: a suppressed record of a home in [t - 2w, oldest) that can no
        # longer be recycled (Theorem 1) also sends the step to the full search (same result, IL 0)
        if len(before):
            off |= bool(((before.home >= max(0, t - 2 * w)) & (before.home < oldest) & (before.placed == -1)).any())
        codes = pub.record_table().query("home == @t")["code"].to_numpy()
        new_supp = int(initial_suppression(np.bincount(codes), l).sum()) if n else 0
        step = pub.steps[-1]
        seen = pub.record_table()["code"].nunique()
        if seen < l:  # nothing can be published yet: the "fewer than l values" shortcut
            assert step.method == "initial" and step.certificate == "fewer than l values"
            assert (pub.record_table()["placed"] == -1).all()
        else:
            assert (step.method == "initial") == (not off and new_supp == 0)
            if step.method == "initial":
                assert step.certificate == "lower bound"
        assert step.active == len(act) + n


@pytest.mark.parametrize(
    "values",
    [
        ["2020-01-01", "2020-01-02T03:04"],
        ["2016/01/01 00:47:36", "2016/01/02 10:00:00"],
        ["2017-01-01T06:00:42Z", "2017-01-02T00:00:00Z"],
        ["2020-01-01T00:00:00+01:00", "2020-01-01T00:00:00+01:00"],
        ["Jan 3 2020 10:00", "2020-01-04"],
        ["2020-01-01 10:00", "2020-01-01T10:00:00.123"],
    ],
)
def test_parse_times_fast_path_equals_mixed(values):
    """The wall clocks parse_times cuts snapshots by are pandas' "mixed" parse (with an offset: the
    wall clock it is written in; the order keys are the instants)."""
    col = pd.Series(values, dtype=object)
    want = pd.to_datetime(col, errors="coerce", format="mixed")
    got = parse_times(col, "t", "day")
    if isinstance(want.dtype, pd.DatetimeTZDtype):
        assert got.attrs["instants"].tolist() == want.dt.tz_convert("UTC").dt.as_unit("ns").array.asi8.tolist()
        want = want.dt.tz_localize(None)
    assert got.equals(want.dt.as_unit("ns"))


# --- the Anatomy checker against the text-based reference --------------------------------------


def _text(col):
    obj = pd.Series(col).astype(object)
    return obj.where(obj.notna(), "\x00<NA>").astype(str).reset_index(drop=True)


def _reference_check(qit, st_, l, sensitive, partition=None, expected_values=None, expected_partition=None):
    """The checker's rules written directly on text keys (group by published text)."""
    counts = pd.to_numeric(st_["count"], errors="coerce")
    if counts.isna().any() or (counts <= 0).any() or (counts != counts.round()).any():
        raise VerificationError("sensitive table has a count that is not a positive integer")
    sg, qg = _text(st_["group"]), _text(qit["group"])
    if partition is not None:
        sg = _text(st_[partition]) + "\x01" + sg
        qg = _text(qit[partition]) + "\x01" + qg
    sv = _text(st_[sensitive])
    pairs = pd.DataFrame({"g": sg, "v": sv})
    if pairs.duplicated().any():
        raise VerificationError(f"sensitive table repeats (group, value) at line {int(pairs.duplicated().to_numpy().nonzero()[0][0]) + 2}")
    per = counts.reset_index(drop=True).groupby(sg.to_numpy()).agg(["sum", "max"])
    sizes = qg.value_counts()
    if set(per.index) != set(sizes.index):
        raise VerificationError(f"groups differ between the two tables, e.g. {sorted(set(per.index) ^ set(sizes.index))[:3]}")
    sizes = sizes.reindex(per.index)
    bad = per["sum"].to_numpy() != sizes.to_numpy()
    if bad.any():
        g = per.index[bad.nonzero()[0][0]]
        raise VerificationError(
            f"group {g.replace(chr(1), ', group ')}: sensitive counts add up to {int(per.loc[g, 'sum'])} but it has {int(sizes.loc[g])} QIT rows"
        )
    bad = l * per["max"].to_numpy() > per["sum"].to_numpy()
    if bad.any():
        g = per.index[bad.nonzero()[0][0]]
        raise VerificationError(f"group {g.replace(chr(1), ', group ')} is not {l}-diverse: a value has {int(per.loc[g, 'max'])} of its {int(per.loc[g, 'sum'])} records")
    if expected_values is not None:
        want, got = _text(expected_values), sv
        if partition is not None and expected_partition is not None:
            want = _text(expected_partition) + "\x01" + want
            got = _text(st_[partition]) + "\x01" + sv
        w_, g_ = want.value_counts().sort_index(), counts.reset_index(drop=True).groupby(got.to_numpy()).sum().sort_index()
        if len(w_) != len(g_) or not (w_.index == g_.index).all() or not (w_.to_numpy() == g_.to_numpy()).all():
            raise VerificationError("released sensitive values differ from the records meant to be published")
    return {"groups": int(len(per)), "records": int(len(qit)), "min_group_size": int(sizes.min()) if len(sizes) else None}


_ATOMS = [1, "1", 1.0, 2, "2", True, None, np.nan, "a", "b", "c"]


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 10**6),
    st.sampled_from(["int", "str", "mixed"]),
    st.booleans(),
    st.sampled_from(["none", "group", "value", "count", "drop", "expected"]),
)
def test_checker_equals_text_reference(seed, group_kind, with_partition, tamper):
    """On valid and tampered releases (groups as integers, strings, or mixed values that compare equal
    but print differently, e.g. 1, 1.0 and "1"), ``check_anatomy`` accepts exactly what the text-based
    reference accepts, with the same report or the same message."""
    rng = np.random.default_rng(seed)
    n_groups = int(rng.integers(1, 5))
    rows_q, rows_s, expected, exp_part = [], [], [], []
    for g in range(n_groups):
        part = f"p{int(rng.integers(0, 2))}" if with_partition else None
        vals = rng.choice(["a", "b", "c", None], int(rng.integers(2, 5)), replace=False).tolist()
        if group_kind == "int":
            gid = g + 1
        elif group_kind == "str":
            gid = f"{g + 1}"
        else:
            gid = _ATOMS[int(rng.integers(0, 6))]
        for v in vals:
            rows_s.append({"snapshot": part, "group": gid, "s": v, "count": 1})
            rows_q.append({"snapshot": part, "age": int(rng.integers(20, 60)), "group": gid})
            expected.append(v)
            exp_part.append(part)
    qit, st_ = pd.DataFrame(rows_q), pd.DataFrame(rows_s)
    if group_kind == "mixed":
        qit["group"] = qit["group"].astype(object)
        st_["group"] = st_["group"].astype(object)
    expected = pd.Series(expected, dtype=object)
    exp_part = pd.Series(exp_part, dtype=object)
    i = int(rng.integers(0, len(st_)))
    if tamper == "group":
        qit["group"] = qit["group"].astype(object)
        qit.loc[int(rng.integers(0, len(qit))), "group"] = _ATOMS[int(rng.integers(0, len(_ATOMS)))]
    elif tamper == "value":
        st_["s"] = st_["s"].astype(object)
        st_.loc[i, "s"] = _ATOMS[int(rng.integers(0, len(_ATOMS)))]
    elif tamper == "count":
        st_.loc[i, "count"] = int(rng.integers(0, 4))
    elif tamper == "drop":
        st_ = st_.drop(index=i).reset_index(drop=True)
    elif tamper == "expected":
        expected.iloc[int(rng.integers(0, len(expected)))] = _ATOMS[int(rng.integers(0, len(_ATOMS)))]
    part = "snapshot" if with_partition else None
    if not with_partition:
        qit, st_ = qit.drop(columns="snapshot"), st_.drop(columns="snapshot")
    kwargs = dict(partition=part, expected_values=expected, expected_partition=exp_part if with_partition else None)
    try:
        want = _reference_check(qit, st_, 2, "s", **kwargs)
    except VerificationError as exc:
        with pytest.raises(VerificationError) as got:
            check_anatomy(qit, st_, 2, sensitive="s", **kwargs)
        assert str(got.value) == str(exc)
    else:
        assert check_anatomy(qit, st_, 2, sensitive="s", **kwargs) == want


def test_anonymize_stream_w0_release_is_verified_and_reproducible():
    rng = np.random.default_rng(5)
    n = 300
    df = pd.DataFrame(
        {
            "t": (pd.Timestamp("2021-01-01") + pd.to_timedelta(np.sort(rng.integers(0, 20 * 24 * 60, n)), unit="min")).strftime("%Y-%m-%d %H:%M"),
            "s": rng.choice(["a", "b", "c", None], n, p=[0.6, 0.2, 0.1, 0.1]),
            "age": rng.integers(20, 30, n).astype(str),
        }
    )
    r1 = anonymize_stream(df, time="t", sensitive="s", l=2, w=0, snapshot="day", seed=3)
    r2 = anonymize_stream(df, time="t", sensitive="s", l=2, w=0, snapshot="day", seed=3)
    pd.testing.assert_frame_equal(r1.qit, r2.qit)
    pd.testing.assert_frame_equal(r1.st, r2.st)
    for p in r1.published:
        qit, st_ = r1.tables(p.label)
        check_anatomy(qit, st_, 2, sensitive="s", qi=["age"])
    # per snapshot, the suppressed records are those of the initial solution of its own counts
    for k, item in enumerate(r1.summary["per_snapshot"]):
        codes = r1.publisher.record_table().query("home == @k")["code"].to_numpy()
        want = initial_suppression(np.bincount(codes), 2).sum() if len(codes) else 0
        assert item["suppressed"] == want
