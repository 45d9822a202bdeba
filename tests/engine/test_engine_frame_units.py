"""A DataFrame's timestamps in seconds or milliseconds, and its booleans, released unchanged as numpy
releases them.

Parquet release (``kanonymize(df, keep=..., engine=..., out="x.parquet")``): numpy (pandas'
``to_parquet``) writes ``datetime64[s]`` and ``[ms]``, naive or aware, as ``timestamp[ms]`` (Parquet
has no seconds), an aware one in its zone. DuckDB reads ``datetime64[s]`` as ``TIMESTAMP_S`` and an
aware ``[ms]``/``[s]`` column as ``TIMESTAMPTZ`` (microseconds), and wrote them ``timestamp[us]``: the
same instants in another unit (found by helper sparkty, 2026-11-27; the ``ns`` case:
``test_engine_frame_ns.py``). Spark: already numpy's types since ab62c33 (its part files' rewrite).

The release read back as a DataFrame (no ``out=``, DuckDB): numpy returns the kept columns in the
input's dtypes; DuckDB returned a boolean column as text ``'True'`` / ``'False'`` (its input view's
text) and those timestamps in ``us``."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempanon.errors import VerificationError
from tempanon.hierarchy import Hierarchy
from tempanon.kanon.api import kanonymize

HIER = {"sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}
UNITS = ["ts_s", "ts_ms", "tz_ms", "tz_s"]
BOOLS = ["b", "nb", "ob", "pab"]


def _frame() -> pd.DataFrame:
    n = 8
    wall = pd.to_datetime([f"2020-03-{28 + i % 2} 0{i}:59:5{i}.12{i}" for i in range(n)])
    flags = [True, None, False, True, False, True, None, False]
    return pd.DataFrame({
        "sex": list("FMFMFMFM"),
        "ts_s": wall.astype("datetime64[s]"),
        "ts_ms": wall.astype("datetime64[ms]"),
        "tz_ms": wall.tz_localize("UTC").tz_convert("Europe/Berlin").astype("datetime64[ms, Europe/Berlin]"),  # (DST night)
        "tz_s": wall.tz_localize("UTC").astype("datetime64[s, UTC]"),
        "b": [i % 3 == 0 for i in range(n)],
        "nb": pd.array(flags, dtype="boolean"),
        "ob": pd.Series(flags, dtype=object),
        "pab": pd.Series(flags, dtype="bool[pyarrow]"),
    })  # fmt: skip


def _parquet(df, eng, tmp_path, audit=False):
    out = tmp_path / eng / "r.parquet"
    out.parent.mkdir()
    (tmp_path / "steward").mkdir(exist_ok=True)
    kw = {"audit": str(tmp_path / "steward" / f"{eng}.csv")} if audit and eng != "numpy" else {}
    kanonymize(df, ["sex"], HIER, 2, keep=[c for c in df.columns if c != "sex"], engine=eng, out=str(out), screen=False, **kw)
    parts = sorted(out.glob("part-*.parquet")) if out.is_dir() else [out]
    return pa.concat_tables([pq.read_table(p) for p in parts])


@pytest.mark.parametrize("audit", [False, True])
def test_dataframe_timestamp_units_in_a_parquet_release(tmp_path, engine, audit):
    df = _frame()[["sex", *UNITS]]
    want, got = _parquet(df, "numpy", tmp_path), _parquet(df, engine, tmp_path, audit)
    for c in UNITS:
        assert got.schema.field(c).type == want.schema.field(c).type, (engine, c, got.schema.field(c).type)
        assert sorted(got.column(c).cast(pa.int64()).to_pylist()) == sorted(want.column(c).cast(pa.int64()).to_pylist()), c
    assert want.schema.field("ts_s").type == pa.timestamp("ms") and want.schema.field("tz_ms").type == pa.timestamp("ms", tz="Europe/Berlin")


def _memory(df, eng):
    res = kanonymize(df, ["sex"], HIER, 2, keep=[c for c in df.columns if c != "sex"], engine=eng, screen=False)
    return res.table.sort_index()


def test_dataframe_release_in_memory_keeps_booleans_and_units_on_duckdb():
    """``kanonymize(df, engine="duckdb")`` without ``out=``: the kept columns in numpy's dtypes and values
    (both releases keep the input's row labels)."""
    df = _frame()
    want, got = _memory(df, "numpy"), _memory(df, "duckdb")
    for c in [*BOOLS, *UNITS]:
        assert str(got[c].dtype) == str(want[c].dtype), (c, got[c].dtype, want[c].dtype)
        pd.testing.assert_series_equal(got[c], want[c], check_index_type=False)
    assert [type(v) for v in got["ob"] if v is not None] == [type(v) for v in want["ob"] if v is not None]


def test_a_changed_instant_in_memory_is_refused_on_duckdb(monkeypatch):
    """The in-memory release's dtype is given back only where every value stays the same: a value the
    input's unit would truncate is refused (VerificationError), never changed."""
    from tempanon.lattice import source_duckdb

    real = source_duckdb.pd.read_parquet

    def shifted(path, *a, **kw):
        t = real(path, *a, **kw)
        t["ts_s"] = t["ts_s"].astype("datetime64[ms]") + pd.Timedelta(milliseconds=1)
        return t

    monkeypatch.setattr(source_duckdb.pd, "read_parquet", shifted)
    with pytest.raises(VerificationError, match="ts_s"):
        _memory(_frame()[["sex", "ts_s"]], "duckdb")
