"""Issue 15: on the engine path, frequency sets too large for the driver stay in the engine (the
engine checks them and rolls them up itself); the results are those of numpy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tempanon.hierarchy import build_intervals, build_suppression
from tempanon.lattice.freqset import rollup, table_frequency_set

from .test_engine_backends import assert_same, run, synthea_like


@pytest.mark.parametrize("sup,algorithm", [(0.0, "incognito"), (0.05, "incognito"), (0.05, "super-roots"), (0.02, "bottom-up-rollup")])
def test_large_sets_stay_in_engine(backend, tmp_path, monkeypatch, sup, algorithm):
    """Fetch limit of 20 rows: every larger root of Incognito's GROUPING SETS jobs stays in the engine;
    its check (classes below k and their tuples) and the rollups of its descendants run there until a
    set is small enough to fetch. Same anonymous, minimal and selected nodes and release as numpy, and
    the summary says how many sets stayed in the engine."""
    if backend == "numpy":
        pytest.skip("the numpy source holds its rows in memory")
    from tempanon.lattice.source_duckdb import SQLSource

    monkeypatch.setattr(SQLSource, "max_driver_rows", 10)
    monkeypatch.setattr(SQLSource, "max_fetch_rows", 20)
    fetched = []
    real = SQLSource._note_fetch

    def spy(self, rows):
        fetched.append(rows)
        return real(self, rows)

    monkeypatch.setattr(SQLSource, "_note_fetch", spy)
    enc, hier = synthea_like()
    qi = ["birth_year", "gender", "race", "zip"]
    kw = dict(max_suppression=sup, algorithm=algorithm)
    a, ta = run("numpy", enc, qi, hier, 4, tmp_path, **kw)
    b, tb = run(backend, enc, qi, hier, 4, tmp_path, as_file=True, **kw)
    assert_same(a, ta, b, tb)
    src = b.plan["source"]
    assert src["path"] == "frequency sets in engine" and src["fetch_limit_rows"] == 20
    assert src["sets_fetched"] == len(fetched) and src["largest_fetched_rows"] == max(fetched)
    if algorithm in ("incognito", "super-roots"):
        assert src["sets_kept_in_engine"] >= 1
        if algorithm == "incognito":  # (super-roots' roots are rolled up from their super-root)
            assert src["engine_checks"] >= src["sets_kept_in_engine"] and src["engine_rollups"] >= 1
    else:  # one GROUP BY per set, fetched as before
        assert src["sets_kept_in_engine"] == 0


def test_engine_set_checks_and_rollups_equal_driver(tmp_path):
    """An engine-kept set against the driver's: same row count, same small-class counts for several
    k, same rollups (fetched or kept in the engine) on every generalization."""
    from tempanon.lattice.freqset import encode_table
    from tempanon.lattice.lattice import Lattice
    from tempanon.lattice.source_duckdb import DuckDBSource, EngineFrequencySet

    rng = np.random.default_rng(3)
    n = 600
    df = pd.DataFrame({"a": rng.integers(0, 40, n).astype(str), "b": rng.integers(0, 9, n).astype(str), "c": rng.choice(["x", "y", "z"], n)})
    hier = {"a": build_intervals("a", df["a"], widths=[5, 20]), "b": build_intervals("b", df["b"], widths=[3]), "c": build_suppression("c", df["c"])}
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    src = DuckDBSource(path)
    src.max_driver_rows, src.max_fetch_rows = 1, 30
    try:
        dims = src.encode(["a", "b", "c"], hier)
        table = src.bottom()
        attrs = (0, 1, 2)
        src.prepare_frequency_sets([(attrs, (0, 0, 0))])
        fs = src.engine_frequency_set(attrs, (0, 0, 0))
        assert isinstance(fs, EngineFrequencySet)
        codes = [np.asarray(c) for c in src._codes]
        texts = [pd.Series(t) for t in src._texts]
        cols = [c[pd.Index(t).get_indexer(df[q].astype(str))] for c, t, q in zip(codes, texts, ["a", "b", "c"])]
        ref_table = encode_table(dims, cols)
        ref = table_frequency_set(ref_table, dims, attrs, (0, 0, 0))
        assert len(fs) == len(ref)
        for node in Lattice(dims).nodes():
            root = EngineFrequencySet(src, fs.base, fs.base_levels, fs.attrs, fs.levels, fs.cards, len(fs))  # nothing fetched
            got = rollup(root, dims, node)
            want = rollup(ref, dims, node)
            assert len(got) == len(want)
            for k in (2, 3, 7):
                assert got.suppressed_tuples(k) == want.suppressed_tuples(k)
                assert got.is_anonymous(k, 5) == want.is_anonymous(k, 5)
            assert sorted(zip(map(tuple, got.codes.tolist()), got.counts.tolist())) == sorted(zip(map(tuple, want.codes.tolist()), want.counts.tolist()))
        assert src.engine_rollups >= 1 and src.engine_checks >= 1
        src.finish_frequency_sets()
    finally:
        src.close()
    assert table.n_rows == n
