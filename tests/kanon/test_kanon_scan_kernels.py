"""The compiled counting kernels of large frequency sets (lattice/_scankernel.py) against numpy's
grouping: forced onto small tables, they give the same frequency sets (keys, counts, decoded codes),
the same rollups and the same Incognito search (nodes and every counter)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tempanon.lattice.freqset as fq
from tempanon.hierarchy import Hierarchy
from tempanon.kanon import encode_for_search, run_search

pytestmark = pytest.mark.skipif(fq._kernels() is None, reason="numba is not importable")


@pytest.fixture
def kernels(monkeypatch):
    """Switch the compiled path on (``True``) or off (``False``) for every size."""

    def use(on: bool) -> None:
        monkeypatch.setattr(fq, "_KERNEL_MIN_ROWS", 0 if on else 2**62)

    return use


def _same(a: fq.FrequencySet, b: fq.FrequencySet) -> None:
    assert a.attrs == b.attrs and a.levels == b.levels and a.cards == b.cards
    np.testing.assert_array_equal(a.keys, b.keys)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert a.counts.dtype == b.counts.dtype == np.int64
    for x, y in zip(a.cols, b.cols):
        np.testing.assert_array_equal(np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10_000),
    m=st.integers(1, 3_000),
    cards=st.lists(st.integers(1, 60), min_size=1, max_size=4),
    weighting=st.sampled_from(["none", "int", "float", "multi"]),
    mixed=st.booleans(),
)
def test_group_rows_and_rollup_equal_numpy(kernels, seed, m, cards, weighting, mixed):
    rng = np.random.default_rng(seed)
    cols = [rng.integers(0, c, m).astype(np.uint16) for c in cards]
    if mixed:  # columns of different dtypes are widened to one for the kernels
        cols[0] = cols[0].astype(np.int32)
    counts = rng.integers(1, 5, m).astype(np.int64)
    multi = None
    if weighting == "multi":
        rows = np.unique(rng.integers(0, m, max(1, m // 20)))
        multi, counts = (rows, rng.integers(1, 4, len(rows)).astype(np.int64)), None
    w = {"none": None, "int": counts, "float": None if counts is None else counts.astype(np.float64), "multi": None}[weighting]
    attrs, levels = tuple(range(len(cards))), (0,) * len(cards)
    kernels(False)
    want = fq.group_rows(attrs, levels, cols, cards, w, multi=multi)
    kernels(True)
    got = fq.group_rows(attrs, levels, cols, cards, w, multi=multi)
    _same(got, want)
    # a rollup of it: each attribute's codes merged in pairs (code // 2)
    from tempanon.lattice.dimension import Dimension

    dims = []
    for c in cards:
        base = np.arange(c)
        lv1 = base // 2
        dims.append(Dimension(f"a{len(dims)}", ("0", "1"), ((1,), ()), (base, lv1),
                              (base.astype(str).astype(object), np.unique(lv1).astype(str).astype(object)),
                              (np.zeros(c), np.ones(len(np.unique(lv1))))))  # fmt: skip
    target = tuple(int(x) for x in rng.integers(0, 2, len(cards)))
    kernels(False)
    want_up = fq.rollup(want, dims, target)
    kernels(True)
    _same(fq.rollup(got, dims, target), want_up)


def _masking(name: str, domain: int, height: int) -> Hierarchy:
    rows = []
    for v in range(domain):
        s = f"{v:03d}"
        rows.append([s] + [s[: 3 - i] + "*" * i for i in range(1, height)] + ["*"])
    return Hierarchy.from_rows(name, rows)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), max_sup=st.sampled_from([0, 7]), k=st.integers(2, 5), repeat=st.booleans())
def test_incognito_with_kernels_equals_numpy(kernels, seed, max_sup, k, repeat):
    """Same anonymous and minimal nodes and the same counters (scans, rollups, checks) on both paths,
    on near-unique tables (the ``multi`` counting) and on tables with repeated rows."""
    rng = np.random.default_rng(seed)
    domains = [int(d) for d in rng.integers(2, 200, 4)]
    n = 400
    names = [f"a{i}" for i in range(4)]
    df = pd.DataFrame({a: [f"{v:03d}" for v in rng.integers(0, d, n)] for a, d in zip(names, domains)})
    if repeat:
        df = pd.concat([df, df.iloc[: n // 3]], ignore_index=True)
    hier = {a: _masking(a, d, int(h)) for a, d, h in zip(names, domains, rng.integers(1, 4, 4))}
    out = {}
    for on in (False, True):
        kernels(on)
        dims, table = encode_for_search(df, names, hier)
        res = run_search("incognito", dims, table, k, max_sup)
        s = res.stats
        out[on] = (res.anonymous_nodes, res.minimal_nodes, s.table_scans, s.rollups, s.nodes_checked, s.marked)
    assert out[True] == out[False]


def test_level_columns_and_decoding(kernels):
    """Level columns gathered by the kernel (one dtype for every attribute) hold the same codes."""
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": [f"{v:03d}" for v in rng.integers(0, 300, 2000)], "b": [f"{v:03d}" for v in rng.integers(0, 9, 2000)]})
    hier = {"a": _masking("a", 300, 3), "b": _masking("b", 9, 2)}
    dims, table = encode_for_search(df, ["a", "b"], hier)
    kernels(False)
    want = [table.level_column(dims, j, lv).astype(np.int64) for j in range(2) for lv in range(dims[j].n_levels)]
    table._level_cols.clear()
    kernels(True)
    got = [table.level_column(dims, j, lv) for j in range(2) for lv in range(dims[j].n_levels)]
    assert len({c.dtype for c in got}) == 1
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x.astype(np.int64), y)


@settings(max_examples=40, deadline=None)
@given(
    labels=st.lists(st.text(max_size=4), min_size=1, max_size=12),
    data=st.data(),
    seed=st.integers(0, 2**32),
)
def test_release_order_from_codes_equals_order_from_text(labels, data, seed):
    """The in-memory release orders rows by class from its level codes (labels ranked once); the
    permutation equals the one ranked from the released text row by row."""
    from tempanon.kanon.api import _label_order, _published_order, _shuffle_within_classes

    labels = np.array(labels, dtype=object)
    np.testing.assert_array_equal(
        np.argsort(_label_order(labels), kind="stable"), np.argsort(_published_order(pd.Series(labels, dtype=object)), kind="stable")
    )
    n = data.draw(st.integers(1, 40))
    c1 = np.array(data.draw(st.lists(st.integers(0, len(labels) - 1), min_size=n, max_size=n)))
    c2 = np.array(data.draw(st.lists(st.integers(0, len(labels) - 1), min_size=n, max_size=n)))
    df = pd.DataFrame({"a": labels[c1], "b": labels[c2]}, index=np.arange(n) * 3)
    want, _ = _shuffle_within_classes(df, ["a", "b"], seed)
    got, _ = _shuffle_within_classes(df, ["a", "b"], seed, [(c1, labels), (c2, labels)])
    assert list(got.index) == list(want.index)
