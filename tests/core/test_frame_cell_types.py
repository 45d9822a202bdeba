"""A DataFrame given to the Python API with a column that has a role and holds a cell tempanon cannot
release faithfully (bytes, a timedelta, a list/tuple/dict/set/array, another object such as a complex
number or a UUID; or a column of a timedelta64, complex, Arrow binary dtype, a categorical of such
values) is refused with an InputError naming the column, the first such cell's line (position + 2,
as every message names a row; with the index label when the frame is not numbered 0, 1, ...), its
type and what to do, as a binary or duration Parquet column is (tests/engine/
test_engine_binary_duration.py). One check, :func:`tempanon.data.io.refuse_nested_columns`, is run by
every entry point. Before (main at c1ff9fb, measured with a script): every API accepted bytes,
timedelta and other objects; numpy released ``b'M'`` and ``Timedelta('0 days 00:00:48')`` objects as
they were, DuckDB released a timedelta as raw bytes (``b'\\x00...h\\xbf...'``) and a complex number
as text. A column with no role is not looked at; text, numbers, booleans, dates, times (datetime64
with or without a zone) and missing values pass."""

from __future__ import annotations

import datetime as dt
import decimal
import re
import uuid

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempanon.data.io import frame_unreleasable_columns, refuse_nested_columns
from tempanon.errors import InputError
from tempanon.hierarchy import Hierarchy
from tempanon.kanon.api import kanonymize
from tempanon.steward.check import check_table
from tempanon.stream.api import anonymize_stream
from tempanon.temporal.api import anonymize_timestamped
from tempanon.timeseries.api import kp_anonymize

N, ROW = 40, 5  # the bad cell's row (0-based): line 7


class Thing:
    def __repr__(self) -> str:
        return "Thing()"


# kind -> (the column: valid text before ROW, the bad value from ROW on), what the message says of it
CELLS = {
    "bytes": (b"M", "bytes cells (line 7: b'M')", "binary"),
    "bytearray": (bytearray(b"M"), "bytearray cells (line 7: bytearray(b'M'))", "binary"),
    "Timedelta": (pd.Timedelta(seconds=48), "Timedelta cells (line 7: 0 days 00:00:48)", "duration"),
    "timedelta": (dt.timedelta(seconds=48), "timedelta cells (line 7: 0:00:48)", "duration"),
    "np.timedelta64": (np.timedelta64(48, "s"), "timedelta64 cells (line 7: 48 seconds)", "duration"),
    "list": ([1, 2], "list cells (line 7: [1, 2])", "nested"),
    "tuple": ((1, 2), "tuple cells (line 7: (1, 2))", "nested"),
    "dict": ({"a": 1}, "dict cells (line 7: {'a': 1})", "nested"),
    "set": ({1}, "set cells (line 7: {1})", "nested"),
    "ndarray": (np.array([1]), "ndarray cells (line 7: [1])", "nested"),
    "object": (Thing(), "Thing cells (line 7: Thing())", "other"),
    "complex": (1j, "complex cells (line 7: 1j)", "other"),
    "uuid": (uuid.UUID(int=1), "UUID cells (line 7: 00000000-0000-0000-0000-000000000001)", "other"),
}
WAY_OUT = {"binary": "decode a bytes column into a text (str) column first",
           "duration": "convert a timedelta column to a number of seconds first",
           "other": "convert a column of other objects to text first (df[c].astype(str))",
           "nested": "flatten it into scalar columns first"}  # fmt: skip


def _cells(value) -> pd.Series:
    return pd.Series([f"u{i % 4}" for i in range(ROW)] + [value] * (N - ROW), dtype=object)


def _column(kind: str) -> tuple[pd.Series, str, str]:
    """The bad column of ``kind`` (rows before ROW valid or missing), the message's text for it, its kind."""
    if kind in CELLS:
        value, what, k = CELLS[kind]
        return _cells(value), what, k
    if kind == "timedelta64 dtype":
        s = pd.Series(pd.to_timedelta([None] * ROW + [48] * (N - ROW), unit="s"))
        return s, f"{s.dtype} dtype (line 7: 0 days 00:00:48)", "duration"
    if kind == "arrow binary":
        s = pd.Series([None] * ROW + [b"M"] * (N - ROW), dtype=pd.ArrowDtype(pa.binary()))
        return s, "binary[pyarrow] dtype (line 7: b'M')", "binary"
    if kind == "arrow duration":
        s = pd.Series([None] * ROW + [pd.Timedelta(seconds=48)] * (N - ROW), dtype=pd.ArrowDtype(pa.duration("s")))
        return s, "duration[s][pyarrow] dtype (line 7: 0 days 00:00:48)", "duration"
    if kind == "categorical bytes":
        return _cells(b"M").astype("category"), "bytes cells (line 7: b'M')", "binary"
    if kind == "complex128 dtype":
        s = pd.Series([np.nan] * ROW + [1j] * (N - ROW), dtype="complex128")
        return s, "complex128 dtype (line 7: 1j)", "other"
    raise AssertionError(kind)


KINDS = [*CELLS, "timedelta64 dtype", "arrow binary", "arrow duration", "categorical bytes", "complex128 dtype"]


def _frame(x: pd.Series) -> pd.DataFrame:
    return pd.DataFrame({"t": [f"2021-01-{1 + i % 9:02d}" for i in range(N)], "sex": ["M", "F"] * (N // 2),
                         "p": ["a", "b", "c", "d"] * (N // 4), "x": x})  # fmt: skip


def _sex():
    return {"sex": Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]])}


def _series_frame(x: pd.Series) -> pd.DataFrame:
    return pd.DataFrame({"id": [f"s{i}" for i in range(N)], "a": np.arange(N, dtype=float), "b": np.arange(N) % 3.0, "x": x})


# entry point (API, role) -> a call with the column "x" given that role
CALLS = {
    "kanonymize numpy qi": lambda df: kanonymize(df, qi=["sex", "x"], hierarchies=_sex(), k=2, engine="numpy"),
    "kanonymize numpy keep": lambda df: kanonymize(df, qi=["sex"], hierarchies=_sex(), k=2, engine="numpy", keep=["x"]),
    "kanonymize duckdb keep": lambda df: kanonymize(df, qi=["sex"], hierarchies=_sex(), k=2, engine="duckdb", keep=["x"]),
    "kanonymize duckdb sensitive": lambda df: kanonymize(df, qi=["sex"], hierarchies=_sex(), k=2, engine="duckdb",
                                                         sensitive="x", l=2),
    "anonymize_timestamped qi": lambda df: anonymize_timestamped(df, time="t", k=2, qi=["x"]),
    "anonymize_timestamped keep": lambda df: anonymize_timestamped(df, time="t", k=2, keep=["x"]),
    "anonymize_timestamped sensitive": lambda df: anonymize_timestamped(df, time="t", k=2, sensitive=["x"]),
    "anonymize_timestamped time": lambda df: anonymize_timestamped(df, time="x", k=2),
    "anonymize_stream qi": lambda df: anonymize_stream(df, time="t", sensitive="p", l=2, w=1, qi=["sex", "x"]),
    "anonymize_stream sensitive": lambda df: anonymize_stream(df, time="t", sensitive="x", l=2, w=1, qi=["sex"]),
    "check_table qi": lambda df: check_table(df, qi=["sex", "x"]),
    "check_table sensitive": lambda df: check_table(df, qi=["sex"], sensitive=["x"], l=2),
    "kp_anonymize sensitive": lambda df: kp_anonymize(_series_frame(df["x"]), id_col="id", qi=["a", "b"], k=2, P=2,
                                                      sensitive=["x"]),
    "kp_anonymize keep": lambda df: kp_anonymize(_series_frame(df["x"]), id_col="id", qi=["a", "b"], k=2, P=2, keep=["x"]),
}  # fmt: skip
ROLE = {name: name.rsplit(" ", 1)[1] for name in CALLS}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("call", list(CALLS))
def test_every_api_refuses_a_column_with_a_role_holding_such_a_cell(call, kind):
    x, what, k = _column(kind)
    with pytest.raises(InputError) as err:
        CALLS[call](_frame(x))
    msg = str(err.value)
    assert f"'x' ({what}) given the role {ROLE[call]}" in msg, msg
    assert WAY_OUT[k] in msg and "leave such a column without a role" in msg and "nothing was written" in msg, msg
    assert msg.startswith("the DataFrame: column(s) with a " + ("nested value" if k == "nested" else
                                                                "value tempanon cannot give a role")), msg  # fmt: skip


@pytest.mark.parametrize("call", ["kanonymize numpy keep", "kanonymize duckdb keep", "anonymize_timestamped keep",
                                  "anonymize_stream qi", "check_table qi", "kp_anonymize keep"])  # fmt: skip
def test_the_line_and_the_index_label_of_a_frame_not_numbered_from_0(call):
    df = _frame(_cells(b"M"))
    df.index = [f"r{i}" for i in range(N)]
    with pytest.raises(InputError, match=re.escape("'x' (bytes cells (line 7, index 'r5': b'M'))")):
        CALLS[call](df)


def _valid_column() -> pd.Series:
    """Text, numbers, booleans, dates, times, timestamps (naive and zoned) and missing values, mixed in
    one object column: every kind passes."""
    values = ["a", 1, 2.5, True, None, np.nan, pd.NA, pd.NaT, decimal.Decimal("1.5"), np.int64(3), np.float32(0.5),
              np.bool_(False), dt.date(2021, 1, 2), dt.time(12, 30), dt.datetime(2021, 1, 2, 3, 4),
              pd.Timestamp("2021-01-02 03:04", tz="Europe/Paris"), np.datetime64("2021-01-02"), np.str_("b")]  # fmt: skip
    return pd.Series([values[i % len(values)] for i in range(N)], dtype=object)


VALID = {
    "mixed object": _valid_column,
    "datetime64": lambda: pd.Series(pd.date_range("2021-01-01", periods=N, freq="D")),
    "datetime64 zoned": lambda: pd.Series(pd.date_range("2021-01-01", periods=N, freq="D", tz="Europe/Paris")),
    "int": lambda: pd.Series(np.arange(N) % 4),
    "float with nan": lambda: pd.Series([np.nan if i % 5 == 0 else i % 3 / 2 for i in range(N)]),
    "bool": lambda: pd.Series([i % 2 == 0 for i in range(N)]),
    "text": lambda: pd.Series([f"u{i % 4}" for i in range(N)]),
    "categorical text": lambda: pd.Series([f"u{i % 4}" for i in range(N)], dtype="category"),
    "arrow string": lambda: pd.Series([f"u{i % 4}" for i in range(N)], dtype=pd.ArrowDtype(pa.string())),
}


@pytest.mark.parametrize("valid", list(VALID))
def test_valid_columns_are_not_refused(valid):
    x = VALID[valid]()
    assert frame_unreleasable_columns(pd.DataFrame({"x": x})) == {}
    refuse_nested_columns(_frame(x), {"qi": ["x"], "keep": ["t", "sex", "p"]})  # (no error)


@pytest.mark.parametrize("call", ["kanonymize numpy keep", "kanonymize duckdb keep", "anonymize_timestamped keep",
                                  "anonymize_stream sensitive", "check_table sensitive", "kp_anonymize sensitive"])  # fmt: skip
def test_a_valid_mixed_frame_runs_on_every_api(call):
    x = pd.Series([["a", 1, 2.5, True, None, pd.Timestamp("2021-01-02")][i % 6] for i in range(N)], dtype=object)
    df = _frame(x)
    df["t"] = pd.to_datetime(df["t"]).dt.tz_localize("UTC")  # a zoned datetime64 time column
    if call.startswith("anonymize_stream"):
        df = _frame(x)  # (the stream's snapshots: the default granule of a text time)
    CALLS[call](df)  # (no error)


def test_the_stream_tells_1_from_true_in_a_sensitive_column():
    # (was a strict xfail: 1 and True compare and hash equal, the stream took them for one value and
    # its verification refused its own release; now one value per released text, data/cells.py)
    x = pd.Series([["a", 1, True][i % 3] for i in range(N)], dtype=object)
    res = anonymize_stream(_frame(x), time="t", sensitive="x", l=2, w=1, qi=["sex"])
    counts = res.st.groupby(res.st["x"].astype(str))["count"].sum().to_dict()
    # (some records may be suppressed: at most the input's 14, 13, 13 of each text, none merged)
    assert set(counts) == {"1", "True", "a"} and counts["1"] <= 14 and counts["True"] <= 13, counts


@pytest.mark.parametrize("kind", ["bytes", "Timedelta", "timedelta64 dtype", "object", "list"])
def test_a_column_without_a_role_is_left_out_not_refused(kind):
    df = _frame(_column(kind)[0])
    r = kanonymize(df, qi=["sex"], hierarchies=_sex(), k=2, engine="numpy")
    assert "x" not in r.table.columns
    assert "x" not in anonymize_timestamped(df, time="t", k=2).released.columns


_scalars = st.one_of(st.text(max_size=5), st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=False),
                     st.booleans(), st.none(), st.dates().map(lambda d: d), st.times(),
                     st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)))  # fmt: skip
_bad = st.sampled_from([b"x", bytearray(b"y"), pd.Timedelta(seconds=3), dt.timedelta(days=1), np.timedelta64(5, "m"),
                        [1], (2,), {"k": 3}, {4}, frozenset({5}), np.array([6]), Thing(), 2j, uuid.UUID(int=7)])  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_scalars, min_size=1, max_size=60), st.data(), _bad, st.booleans())
def test_the_error_names_the_row_of_the_one_bad_cell(cells, data, bad, numbered):
    row = data.draw(st.integers(0, len(cells) - 1))
    cells = list(cells)
    cells[row] = bad
    df = pd.DataFrame({"ok": range(len(cells)), "x": pd.Series(cells, dtype=object)})
    if not numbered:
        df.index = pd.Index([10 * i + 3 for i in range(len(cells))])
    where = f"line {row + 2}" if numbered else f"line {row + 2}, index {10 * row + 3}"
    with pytest.raises(InputError) as err:
        refuse_nested_columns(df, {"qi": ["ok", "x"]})
    assert f"'x' ({type(bad).__name__} cells ({where}: " in str(err.value)
    assert "'ok'" not in str(err.value)
    refuse_nested_columns(df, {"qi": ["ok"]})  # (no role: not looked at)


def test_check_lists_such_a_column_without_a_role_and_does_not_screen_it():
    df = _frame(_column("bytes")[0])
    res = check_table(df, qi=["sex"])
    assert res.nested_columns == {"x": "bytes cells (line 7: b'M')"}
    assert all(f.column != "x" for f in res.identifier_findings)
