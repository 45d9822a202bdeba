"""A Parquet input read as text (``read_table(..., as_text=True)``, the numpy path's reading) gives every
value pandas' ``str`` of it, missing as missing: computed per distinct value and, for timestamps, on whole
arrays (``timestamp_texts``), checked here against the value-by-value conversion it replaced."""

from __future__ import annotations

import datetime
import decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempanon.data.io import parquet_as_text, read_table, timestamp_texts


def _per_value(df: pd.DataFrame) -> pd.DataFrame:
    """The conversion before: ``str`` of every cell of ``astype(object)``, missing as None."""
    obj = df.astype(object).where(df.notna(), None)
    return obj.map(lambda v: None if v is None else str(v))


ZONES = [None, "UTC", "America/New_York", "Asia/Kolkata", "Europe/Paris", "Europe/Amsterdam",
         "Australia/Lord_Howe", "Pacific/Chatham", "Etc/GMT+3", "+05:30", "-03:00"]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("tz", ZONES)
def test_timestamp_texts_equal_str_of_each_value(unit, tz):
    rng = np.random.default_rng(abs(hash((unit, tz))) % 2**32)
    n = 800
    # 1850-2200 (1678-2261 in nanoseconds): Paris and Amsterdam had offsets with seconds before 1911 / 1937
    lo, hi = (-3_800_000_000, 7_200_000_000) if unit != "ns" else (-9_200_000_000, 9_200_000_000)
    secs = rng.integers(lo, hi, n)
    sub = rng.integers(0, 10**9, n)
    kind = rng.integers(0, 4, n)  # whole seconds, milli-, micro-, nanoseconds
    ns = np.where(kind == 0, 0, np.where(kind == 1, sub // 10**6 * 10**6, np.where(kind == 2, sub // 1000 * 1000, sub)))
    s = pd.Series((secs * 10**9 + ns).astype("datetime64[ns]"))
    if unit != "ns":
        s = s.dt.as_unit(unit)
    s[rng.random(n) < 0.05] = pd.NaT
    if tz is not None:
        s = s.dt.tz_localize("UTC").dt.tz_convert(tz)
    got = timestamp_texts(s)
    assert got is not None
    expected = [None if x is pd.NaT else str(x) for x in s.astype(object)]
    assert list(got) == expected


def test_timestamp_texts_out_of_range_years_left_to_the_caller():
    s = pd.Series(np.array(["10000-01-01T00:00:00", "2021-01-01"], dtype="datetime64[s]"))
    assert timestamp_texts(s) is None
    out = parquet_as_text(pd.DataFrame({"t": s}))
    assert out["t"].tolist() == ["10000-01-01 00:00:00", "2021-01-01 00:00:00"]


def _frame() -> pd.DataFrame:
    return pd.DataFrame({
        "f": [0.0, -0.0, np.nan, np.inf, 1.5, 1.5, 1e-300, 39.0],
        "i": np.arange(8, dtype=np.int64) - 3,
        "b": [True, False, True, True, False, False, True, False],
        "s": ["a", None, "b", "a", "", "é", "a b", None],
        "d": [decimal.Decimal("1.0"), decimal.Decimal("1.00"), None, decimal.Decimal("-2"), decimal.Decimal("1.0"),
              decimal.Decimal("3.14"), None, decimal.Decimal("0")],
        "date": [datetime.date(2021, 1, 2), None, datetime.date(1850, 12, 31)] * 2 + [None, datetime.date(2021, 1, 2)],
        "raw": [b"x", b"y", None, b"x", b"", b"z", b"x", None],
        "lst": [[1, 2], [1, 2], None, [3], [], [1], [2], None],
        "cat": pd.Categorical(["x", "y", None, "x", "y", "x", None, "z"]),
        "t": pd.to_datetime(["2021-03-14 01:59:59.5", None, "2021-03-14 03:00:00", "2021-11-07 01:30:00",
                             "1900-01-01", "2021-01-01 00:00:00.000001", None, "2021-01-01"], format="ISO8601"),
    })


def test_parquet_as_text_equals_the_value_by_value_conversion():
    df = _frame()
    got = parquet_as_text(df)
    exp = _per_value(df)
    for c in df.columns:
        assert got[c].tolist() == exp[c].tolist(), c
    # negative zero keeps its own text (a factorization by value would merge it with 0.0)
    assert got["f"].tolist()[:2] == ["0.0", "-0.0"]
    # decimals of two scales keep theirs
    assert got["d"].tolist()[:2] == ["1.0", "1.00"]


def test_read_table_parquet_as_text(tmp_path):
    n = 5000
    rng = np.random.default_rng(3)
    t = np.datetime64("2020-01-01T00:00") + rng.integers(0, 10**6, n).astype("timedelta64[s]")
    ints = pa.array([None if x % 97 == 0 else int(x) for x in rng.integers(0, 1000, n)], type=pa.int64())
    table = pa.table({
        "t": pa.array(t.astype("datetime64[us]")),
        "ts": pa.array(t.astype("datetime64[us]")).cast(pa.timestamp("us", tz="America/New_York")),
        "ms": pa.array(t.astype("datetime64[ms]")).cast(pa.timestamp("ms", tz="UTC")),
        "sex": pa.array(rng.choice(["F", "M", None], n).tolist()),
        "age": pa.array(rng.integers(0, 100, n)),
        "w": pa.array(rng.random(n) * 100),
        "ni": ints,
        "dec": pa.array([decimal.Decimal(f"{x}.50") for x in rng.integers(0, 9, n)], type=pa.decimal128(5, 2)),
        "day": pa.array(t.astype("datetime64[D]").astype(object).tolist(), type=pa.date32()),
        "b": pa.array(rng.random(n) < 0.5),
    })
    path = tmp_path / "in.parquet"
    pq.write_table(table, path)
    got = read_table(path, as_text=True)
    exp = _per_value(pd.read_parquet(path))
    assert list(got.columns) == list(exp.columns)
    for c in exp.columns:
        assert got[c].tolist() == exp[c].tolist(), c
    pd.testing.assert_frame_equal(got, exp)  # the same frame, dtypes too
