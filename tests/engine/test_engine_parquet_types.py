"""A Parquet release of a Parquet input keeps the input's column types for the columns released
unchanged, on every engine.

The numpy path reads the input as text (``read_table(..., as_text=True)``) and wrote every column of a
Parquet release as text (``large_string``), while DuckDB and Spark wrote a column released unchanged
(``--keep``, a sensitive column, a timestamped quasi-identifier without a hierarchy) with its type. Now
the numpy path writes those columns typed too (:func:`tempanon.data.io.typed_release`: the verified
text mapped back to the input's values through a map of each column's distinct values, checked per
distinct value), with DuckDB's types: an integer column holding a missing value is ``double`` (pandas
reads it as floats, and so do the engines' views), a ``ms`` timestamp is ``us``, a ``large_string`` is
``string``, a boolean is text (``True`` / ``False``) on every engine. An aware timestamp keeps its zone
on every engine (since 2026-11-27: DuckDB and Spark wrote it as UTC, the same instants;
``test_engine_parquet_zone`` compares the whole schemas). The oracle is the input file itself, row by row
through the steward's audit.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .test_engine_temporal import _cli

ENGINES = ["duckdb", pytest.param("spark", marks=pytest.mark.spark)]
KEEP = ["i64", "f64", "imiss", "dec", "d", "naive", "ms", "utc", "ny", "s", "b"]


def _input(tmp_path, n: int = 24):
    """A Parquet file written with pyarrow: respondent ``pid``, ``sex`` (quasi-identifier), ``t`` (the
    timestamped commands' time), ``grp`` (an int64 quasi-identifier of timestamped, no hierarchy) and the
    kept columns: int64, double (``0.0``, ``-0.0`` and a NaN, which pandas reads as missing), int64 with a
    missing value, decimal(5,2), date, naive timestamps in microseconds and in milliseconds, aware UTC
    and America/New_York timestamps (across the spring DST change) each with a missing value, a string
    and a boolean with a missing value."""
    i = [int(x) for x in range(n)]

    def col(values, typ, missing=()):
        return pa.array([None if j in missing else v for j, v in enumerate(values)], typ)

    base = dt.datetime(2021, 1, 2)
    f64 = [x / 3 for x in i]
    f64[1] = -0.0
    f64[9] = float("nan")
    table = pa.table({
        "pid": pa.array([x % 12 for x in i], pa.int64()),
        "sex": pa.array(["F" if x % 3 == 0 else "M" for x in i]),
        "t": col([pd.Timestamp("2021-01-02 02:00", tz="UTC") + pd.Timedelta(hours=5 * x) for x in i], pa.timestamp("us", tz="UTC")),
        "grp": pa.array([x % 2 for x in i], pa.int64()),
        "i64": col([x * 1_000_003 - 7 for x in i], pa.int64()),
        "f64": col(f64, pa.float64()),
        "imiss": col(i, pa.int64(), missing=(3,)),
        "dec": col([decimal.Decimal(f"{x}.{(x * 7) % 100:02d}") for x in i], pa.decimal128(5, 2)),
        "d": col([dt.date(2021, 1, 1) + dt.timedelta(days=x) for x in i], pa.date32()),
        "naive": col([base + dt.timedelta(microseconds=x * 1_234_567) for x in i], pa.timestamp("us")),
        "ms": col([base + dt.timedelta(milliseconds=x * 1_234) for x in i], pa.timestamp("ms")),
        "utc": col([pd.Timestamp("2021-01-02", tz="UTC") + pd.Timedelta(microseconds=x * 1_234_567) for x in i],
                   pa.timestamp("us", tz="UTC"), missing=(4,)),
        "ny": col([pd.Timestamp("2021-03-14 06:00", tz="UTC") + pd.Timedelta(hours=x % 3, microseconds=x * 234_000) for x in i],
                  pa.timestamp("us", tz="America/New_York"), missing=(5,)),
        "s": col([f"s{x % 5}" for x in i], pa.string(), missing=(6,)),
        "b": col([bool(x % 2) for x in i], pa.bool_(), missing=(7,)),
    })  # fmt: skip
    path = tmp_path / "in.parquet"
    pq.write_table(table, path)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    (tmp_path / "steward").mkdir()
    return path


def _expected_types(inp) -> dict[str, pa.DataType]:
    """The numpy release's type of every kept column: the input's, but for an integer column holding a
    missing value (double), milliseconds (microseconds) and the boolean (text)."""
    schema = pq.read_schema(inp)
    want = {c: schema.field(c).type for c in KEEP}
    want.update(imiss=pa.float64(), ms=pa.timestamp("us"), b=pa.string())
    return want


def _read(out) -> pa.Table:
    """A Parquet release: a file, or Spark's directory of part files (in name order, as its audit)."""
    if out.is_dir():
        return pa.concat_tables([pq.read_table(p) for p in sorted(out.glob("part-*.parquet"))])
    return pq.read_table(out)


def _lines(cmd: str, audit) -> list[int]:
    """The input line of every release row, from the steward's audit."""
    text = "".join(ln for ln in audit.read_text().splitlines(keepends=True) if not ln.startswith("#"))
    aud = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    assert aud["release_row"].tolist() == [str(r) for r in range(1, len(aud) + 1)]
    return [int(x) for x in aud["input_line"]]


def _run(cmd, inp, tmp_path, eng, extra=(), keep=KEEP):
    (tmp_path / eng).mkdir(exist_ok=True)
    out, audit = tmp_path / eng / f"{cmd}.parquet", tmp_path / "steward" / f"{eng}-{cmd}.csv"
    if cmd == "kanon":
        args = ["kanon", str(inp), "--qi", "sex", "--hierarchies", str(tmp_path / "h")]
    else:
        args = ["timestamped", str(inp), "--time", "t", "--qi", "sex,grp"]
    r = _cli([*args, "--k", "2", "--uid", "pid", *extra, "--keep", ",".join(keep), "--allow-identifier", ",".join(keep),
              "--out", str(out), "--audit", str(audit), "--engine", eng, "-q"])  # fmt: skip
    assert r.exit_code == 0, (cmd, eng, r.output)
    return out, audit


def _values(table: pa.Table, column: str) -> list:
    """Python values; an aware timestamp as its instant (so a zone's name does not matter), NaN as None."""
    out = []
    for v in table.column(column).to_pylist():
        if isinstance(v, dt.datetime) and v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc)
        if isinstance(v, float) and v != v:
            v = None
        out.append(v)
    return out


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cmd", ["kanon", "timestamped"])
def test_kept_columns_typed_as_the_input_on_every_engine(tmp_path, engine, cmd, request):
    """``kanon`` / ``timestamped --keep`` of every typed column into a Parquet release, on numpy and on
    the engine: numpy's kept columns have the input's types (DuckDB's rules: double for the integers
    with a missing value, ``us`` for ``ms``, text for the boolean), the engine's the same (an aware
    column in its zone: America/New_York kept, since 2026-11-27); every released row, found through the audit, holds its input line's values
    (-0.0 kept, NaN and missing values null, the boolean ``True``/``False``). On main numpy wrote every
    column as text."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp = _input(tmp_path)
    source = pq.read_table(inp)
    want = _expected_types(inp)
    rows = {}
    for eng in ("numpy", engine):
        out, audit = _run(cmd, inp, tmp_path, eng)
        rel = _read(out)
        got = {c: rel.schema.field(c).type for c in KEEP}
        assert got == want, eng
        lines = _lines(cmd, audit)
        assert len(lines) == rel.num_rows > 0
        taken = source.take(pa.array([ln - 2 for ln in lines]))
        for c in KEEP:
            if c == "b":
                assert rel.column(c).to_pylist() == [None if v is None else str(v) for v in taken.column(c).to_pylist()]
            else:
                assert _values(rel, c) == _values(taken, c), (eng, c)
        rows[eng] = pd.DataFrame({c: _values(rel, c) for c in KEEP}, index=lines, dtype=object).sort_index()
        assert str(rows[eng].loc[3, "f64"]) == "-0.0" and rows[eng].loc[11, "f64"] is None  # (rows 1 and 9)
    pd.testing.assert_frame_equal(rows[engine], rows["numpy"])
    if cmd == "timestamped":  # a quasi-identifier without a hierarchy is released unchanged: typed
        assert _read(tmp_path / "numpy" / f"{cmd}.parquet").schema.field("grp").type == pa.int64()


@pytest.mark.parametrize("engine", ENGINES)
def test_generalized_columns_stay_text(tmp_path, engine, request):
    """A quasi-identifier stays text on every engine in kanon (also at level 0: its hierarchy's text) and
    in timestamped with a hierarchy, as the time column's labels; a sensitive column (released unchanged)
    is typed."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp = _input(tmp_path)
    (tmp_path / "h" / "grp.csv").write_text("0;*\n1;*\n")
    types = {}
    for eng in ("numpy", engine):
        out, _ = _run("kanon", inp, tmp_path, eng, keep=["i64"])
        types[eng, "kanon"] = {f.name: f.type for f in _read(out).schema}
        out, _ = _run("timestamped", inp, tmp_path, eng, extra=["--hierarchies", str(tmp_path / "h"), "--sensitive", "d"],
                      keep=["i64"])  # fmt: skip
        types[eng, "ts"] = {f.name: f.type for f in _read(out).schema}
    for eng in ("numpy", engine):
        assert pa.types.is_string(types[eng, "kanon"]["sex"]) and types[eng, "kanon"]["i64"] == pa.int64()
        ts = types[eng, "ts"]
        assert pa.types.is_string(ts["sex"]) and pa.types.is_string(ts["grp"]) and pa.types.is_string(ts["t"]), (eng, ts)
        assert ts["i64"] == pa.int64() and ts["d"] == pa.date32(), (eng, ts)


def test_python_api_writes_typed(tmp_path):
    """The Python API: ``kanonymize(path, engine="numpy", out=...)`` writes the kept columns typed, as
    ``engine="duckdb"`` does; ``anonymize_timestamped`` returns ``unchanged_columns``, and
    ``write_table(res.released, out, like=input, unchanged=...)`` writes them typed."""
    from tempanon.data.io import read_table, write_table
    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize
    from tempanon.temporal import anonymize_timestamped

    inp = _input(tmp_path)
    want = _expected_types(inp)
    hier = load_hierarchies(tmp_path / "h", ["sex"])
    schemas = {}
    for eng in ("numpy", "duckdb"):
        out = tmp_path / f"api-{eng}.parquet"
        res = kanonymize(str(inp), ["sex"], hier, 2, uid="pid", keep=KEEP, allow_identifier=KEEP, engine=eng, out=str(out))
        assert res.output == str(out)
        schemas[eng] = {c: pq.read_schema(out).field(c).type for c in KEEP}
    assert schemas["numpy"] == want
    assert schemas["duckdb"] == want
    df = read_table(inp, as_text=True)
    res = anonymize_timestamped(df, time="t", qi=["sex"], uid="pid", k=2, keep=KEEP, allow_identifier=KEEP)
    assert res.unchanged_columns == ["sex", *KEEP]
    out = write_table(res.released, tmp_path / "ts-api.parquet", like=inp, unchanged=res.unchanged_columns)
    assert {c: pq.read_schema(out).field(c).type for c in KEEP} == want
    assert pq.read_schema(out).field("t").type == pa.string()
    text = lambda df: [[None if pd.isna(v) else str(v) for v in row] for row in df.astype(object).to_numpy().tolist()]  # noqa: E731
    assert text(pd.read_parquet(out)) == text(res.released)  # read back the numpy path's way: the verified text


def test_csv_release_and_non_parquet_input_unchanged(tmp_path):
    """A CSV release is the same bytes with or without the input's types; a Parquet release of a CSV
    input (no types to keep) is the same table as before (every column text)."""
    from tempanon.data.io import read_table, write_table

    inp = _input(tmp_path)
    df = read_table(inp, as_text=True)[KEEP]
    a = write_table(df, tmp_path / "a.csv")
    b = write_table(df, tmp_path / "b.csv", like=inp, unchanged=KEEP)
    assert a.read_bytes() == b.read_bytes()
    csv_in = write_table(df, tmp_path / "in.csv")
    text = read_table(csv_in, as_text=True)
    p = write_table(text, tmp_path / "c.parquet", like=csv_in, unchanged=KEEP)
    q = tmp_path / "d.parquet"
    text.to_parquet(q, index=False)
    assert pq.read_table(p).equals(pq.read_table(q)) and pq.read_schema(p).equals(pq.read_schema(q), check_metadata=True)


def _corrupt(monkeypatch, column: str):
    """``parquet_value_map`` with two values of ``column`` swapped (the map a bug could give), and the
    release typed through it (not by row, ``_typed_by_row``, which takes the input's values at the
    release's rows)."""
    from tempanon.data import io as tio

    real = tio.parquet_value_map
    monkeypatch.setattr(tio, "_typed_by_row", lambda *a, **kw: None)

    def swapped(path, field, *text):
        texts, rows, values = real(path, field, *text)
        if field == column:  # the first two texts point at each other's row
            rows = rows.copy()
            rows[[0, 1]] = rows[[1, 0]]
        return texts, rows, values

    monkeypatch.setattr(tio, "parquet_value_map", swapped)


@pytest.mark.parametrize("cmd", ["kanon", "timestamped"])
def test_mismatch_refused_nothing_written(tmp_path, monkeypatch, cmd):
    """A typed value whose text is not the verified text (a corrupted map) is refused: exit 3, the column
    and the value named, no traceback, no release, no summary and no temporary file."""
    inp = _input(tmp_path)
    _corrupt(monkeypatch, "dec")
    (tmp_path / "numpy").mkdir()
    out = tmp_path / "numpy" / "o.parquet"
    args = (["kanon", str(inp), "--qi", "sex", "--hierarchies", str(tmp_path / "h")] if cmd == "kanon"
            else ["timestamped", str(inp), "--time", "t", "--qi", "sex"])  # fmt: skip
    r = _cli([*args, "--k", "2", "--uid", "pid", "--keep", ",".join(KEEP), "--allow-identifier", ",".join(KEEP),
              "--out", str(out), "--summary", str(tmp_path / "steward" / "s.json"), "-q"])  # fmt: skip
    assert r.exit_code == 3, r.output
    assert "column 'dec'" in r.output and "reads back as" in r.output and "nothing was written" in r.output, r.output
    assert "Traceback" not in r.output
    assert list((tmp_path / "numpy").iterdir()) == [] and list((tmp_path / "steward").iterdir()) == []


def test_mismatch_refused_by_write_table(tmp_path, monkeypatch):
    """The Python API's ``write_table`` refuses alike (VerificationError) and leaves no file."""
    from tempanon.data.io import read_table, write_table
    from tempanon.errors import VerificationError

    inp = _input(tmp_path)
    _corrupt(monkeypatch, "ny")
    df = read_table(inp, as_text=True)
    with pytest.raises(VerificationError, match="column 'ny'"):
        write_table(df, tmp_path / "o.parquet", like=inp, unchanged=KEEP)
    assert not any(p.name.startswith(("o.", ".o.")) for p in tmp_path.iterdir())
    # a released value that is no input value (not released unchanged) is refused too
    df.loc[0, "s"] = "no such value"
    with pytest.raises(VerificationError, match="column 's'.*no value of the input"):
        write_table(df, tmp_path / "o.parquet", like=inp, unchanged=["s"])


def test_other_types_as_duckdb_writes_them(tmp_path):
    """The other types a column released unchanged is typed with, against DuckDB's release of the same
    input (kanon, audited): int8/int16/int32/uint8/uint64 and float32 kept, timestamps in ``ns`` kept
    (nanoseconds, naive and aware), ``ms`` aware as ``us`` (DuckDB's units), ``large_string`` and a
    dictionary of strings as ``string``, ``decimal(38,3)`` and ``time64`` kept; the same
    values row by row. (Spark refuses ``ns`` timestamps and ``TIME`` columns: not run there. A ``binary``
    column with a role is refused since 2026-11-27: test_engine_binary_duration.)"""
    n = 24
    i = list(range(n))
    ts = [pd.Timestamp("2021-01-02") + pd.Timedelta(nanoseconds=x * 1_234_567_891) for x in i]
    cols = {
        "pid": pa.array([x % 12 for x in i], pa.int64()), "sex": pa.array(["F" if x % 3 == 0 else "M" for x in i]),
        "i8": pa.array(i, pa.int8()), "i16": pa.array(i, pa.int16()), "i32": pa.array(i, pa.int32()),
        "u8": pa.array(i, pa.uint8()), "u64": pa.array([2**64 - 1 - x for x in i], pa.uint64()),
        "f32": pa.array([x / 3 for x in i], pa.float32()),
        "ns": pa.array([t.value for t in ts], pa.timestamp("ns")),
        "nstz": pa.array([t.value for t in ts], pa.timestamp("ns", tz="Asia/Kolkata")),
        "mstz": pa.array([t.value // 1_000_000 for t in ts], pa.timestamp("ms", tz="UTC")),
        "ls": pa.array([f"s{x % 5}" for x in i], pa.large_string()),
        "dict": pa.array([f"v{x % 4}" for x in i], pa.string()).dictionary_encode(),
        "dec38": pa.array([decimal.Decimal(f"{x}.{x:03d}") for x in i], pa.decimal128(38, 3)),
        "t64": pa.array([dt.time(1, 2, x % 60, 1000 * x) for x in i], pa.time64("us")),
    }  # fmt: skip
    inp = tmp_path / "in.parquet"
    pq.write_table(pa.table(cols), inp)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    (tmp_path / "steward").mkdir()
    keep = [c for c in cols if c not in ("pid", "sex")]
    source = pq.read_table(inp)
    got = {}
    for eng in ("numpy", "duckdb"):
        out, audit = _run("kanon", inp, tmp_path, eng, keep=keep)
        rel = _read(out)
        got[eng] = {c: rel.schema.field(c).type for c in keep}
        taken = source.take(pa.array([ln - 2 for ln in _lines("kanon", audit)]))
        for c in keep:
            assert _values(rel, c) == _values(taken.set_column(taken.schema.get_field_index(c), c,
                                                               taken.column(c).cast(rel.schema.field(c).type)), c), (eng, c)
    assert got["numpy"] == {**{c: pa.string() if c in ("ls", "dict") else source.schema.field(c).type for c in keep},
                            "mstz": pa.timestamp("us", tz="UTC")}  # fmt: skip
    assert got["duckdb"] == got["numpy"]  # (nstz in Asia/Kolkata: DuckDB wrote it tz=UTC before 2026-11-27)


def test_typed_by_row_only_where_every_row_is_the_inputs(tmp_path):
    """The by-row path (``_typed_by_row``) takes the input's typed values at the release's rows only when
    every released text is the input's text at its row; a release whose rows do not match (here: index
    labels shifted by one) is left to the map, which types each text as its own input value: the written
    values are the released texts' in both cases."""
    from tempanon.data.io import _typed_by_row, read_table, write_table

    inp = _input(tmp_path)
    df = read_table(inp, as_text=True)
    tab = pq.read_table(inp)
    rel = df.iloc[::-1].iloc[: len(df) - 3]  # a subset, in another order, index labels = input rows
    got = _typed_by_row(rel, "i64", tab.schema.field("i64").type, tab.column("i64"), df)
    assert got is not None and got.to_pylist() == tab.column("i64").take(pa.array(rel.index.to_numpy())).to_pylist()
    shifted = rel.copy()
    shifted.index = shifted.index + 1
    shifted = shifted[shifted.index < len(df)]
    assert _typed_by_row(shifted, "i64", tab.schema.field("i64").type, tab.column("i64"), df) is None
    for frame, name in ((rel, "a.parquet"), (shifted, "b.parquet")):
        write_table(frame, tmp_path / name, like=inp, unchanged=["i64"], input_text=df)
        back = pq.read_table(tmp_path / name)
        assert back.schema.field("i64").type == tab.schema.field("i64").type
        assert [None if v is None else str(v) for v in back.column("i64").to_pylist()] == frame["i64"].tolist()


def _frame(n: int = 24) -> pd.DataFrame:
    """A DataFrame with a quasi-identifier ``sex`` and a column of each kind released unchanged: int64,
    int32, float64 (``-0.0``, ``1e+20``, ``0.1``, NaN, inf), float32, bool, naive and aware
    (America/New_York; Europe/Amsterdam in 1930, where Java's zone data and Python's differ) timestamps in
    microseconds, a nullable Int64 and a string, each of the last two with a missing cell."""
    i = np.arange(n)
    f64 = i / 3
    f64[1], f64[2], f64[5], f64[7], f64[8] = -0.0, 1e20, 0.1, np.nan, np.inf
    return pd.DataFrame({
        "sex": ["F" if x % 3 == 0 else "M" for x in i],
        "i64": i.astype("int64") * 1_000_003 - 7,
        "i32": i.astype("int32") - 5,
        "f64": f64,
        "f32": (i / 7).astype("float32"),
        "b": i % 2 == 1,
        "naive": pd.Timestamp("2021-01-02") + pd.to_timedelta(i * 1_234_567, unit="us"),
        "ny": pd.Timestamp("2021-03-14 06:00", tz="UTC").tz_convert("America/New_York") + pd.to_timedelta(i * 2_345_678_901, unit="us"),
        "ams": pd.Series(pd.date_range("1930-03-01", periods=n, freq="37h", tz="Europe/Amsterdam")).dt.as_unit("us"),
        "nint": pd.array([None if x == 3 else int(x) for x in i], dtype="Int64"),
        "s": pd.Series([None if x == 6 else f"s{x % 5}" for x in i], dtype="str"),
    })  # fmt: skip


def _parts(path) -> list:
    path = Path(path)
    return sorted(path.glob("part-*.parquet")) if path.is_dir() else [path]


def test_dataframe_parquet_release_typed_as_numpys(tmp_path, engine):
    """``kanonymize(DataFrame, engine=..., out="x.parquet", audit=)``: every column released unchanged
    has numpy's type (``write_table`` of pandas' frame) and numpy's values row for row (the release's
    rows as a multiset: ``-0.0`` apart from ``0.0``, missing cells null, the zone kept); the
    quasi-identifier is text. The audit's row-by-row check reads the typed written file. On main Spark
    wrote every column as text, and DuckDB wrote the boolean as text ``True`` / ``False`` (its view's
    text) where numpy and Spark wrote ``bool`` (since 2026-11-27 ``bool`` on DuckDB too:
    ``test_engine_frame_bools``). Known difference kept: a pandas ``str`` column is ``large_string`` on
    numpy, ``string`` on the engines (the same Parquet type)."""
    from tempanon.hierarchy import Hierarchy
    from tempanon.kanon.api import kanonymize

    df = _frame()
    keep = [c for c in df.columns if c != "sex"]
    hier = {"sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}
    files = {}
    for eng in ("numpy", engine):
        out = tmp_path / eng / "r.parquet"
        out.parent.mkdir()
        kw = {"audit": str(tmp_path / f"{eng}-audit.csv")} if eng != "numpy" else {}
        kanonymize(df, ["sex"], hier, 2, keep=keep, engine=eng, out=str(out), screen=False, **kw)
        files[eng] = _parts(out)
    schemas = {e: [pq.read_schema(p) for p in ps] for e, ps in files.items()}

    def norm(t, e, c):
        return pa.string() if t == pa.large_string() else t

    want = {f.name: norm(f.type, "numpy", f.name) for f in schemas["numpy"][0]}
    assert want["sex"] == pa.string() and want["b"] == pa.bool_() and want["ny"] == pa.timestamp("us", tz="America/New_York")
    for s in schemas[engine]:
        assert {f.name: norm(f.type, engine, f.name) for f in s} == want, engine
        assert [f.name for f in s] == list(df.columns) and all(f.nullable for f in s)

    def rows(e):
        tab = pa.concat_tables([pq.read_table(p) for p in files[e]])
        cols = {c: tab.column(c).to_pylist() for c in df.columns}
        # (math.copysign tells -0.0 from 0.0; a datetime with its zone's name)
        return sorted(repr(tuple((v, np.copysign(1, v)) if isinstance(v, float) else (v, str(getattr(v, "tzinfo", "")))
                                 for v in r)) for r in zip(*cols.values()))  # fmt: skip

    assert rows(engine) == rows("numpy")
    assert any("-0.0" in r for r in rows(engine)) and any("1e+20" in r for r in rows(engine))


@pytest.mark.spark
@pytest.mark.parametrize("audit", [True, False])
def test_dataframe_typed_release_checked_on_spark(tmp_path, spark_session, monkeypatch, audit):
    """Spark's typed columns are checked on the written file, with the audit (row by row against the
    input) and without it (row by row against the release's texts before the cast): a float written one
    step off (the cast changed) is refused, nothing written; a negated boolean, an aware timestamp a
    microsecond off and a ``ns`` one (naive and aware) a nanosecond off too. Without the audit nothing
    checked them before (fails on main for ``audit=False``)."""
    from tempanon.errors import VerificationError
    from tempanon.hierarchy import Hierarchy
    from tempanon.kanon.api import kanonymize
    from tempanon.lattice.source_spark import SparkSource

    df = _frame()
    df["ns"] = pd.Series(pd.Timestamp("1969-12-31 23:59:59") + pd.to_timedelta(np.arange(len(df)) * 1_234_567_891, unit="ns"))
    df["ns_ny"] = df["ns"].dt.tz_localize("America/New_York")
    hier = {"sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}
    real = SparkSource._typed_expr
    for typ, bad in (("DOUBLE", lambda e: f"CAST({e} AS DOUBLE) * 1.0000000000000002"), ("BOOLEAN", lambda e: f"NOT ({real(e, 'BOOLEAN')})"),
                     ("TIMESTAMP", lambda e: f"CAST({e} AS TIMESTAMP) + INTERVAL 1 MICROSECOND"),
                     ("NANOS", lambda e: f"{real(e, 'NANOS')} + 1")):
        monkeypatch.setattr(SparkSource, "_typed_expr", staticmethod(lambda e, t, typ=typ, bad=bad: bad(e) if t == typ else real(e, t)))
        out = tmp_path / typ / "r.parquet"
        kw = {"audit": str(tmp_path / f"{typ}-audit.csv")} if audit else {}
        with pytest.raises(VerificationError, match="column"):
            kanonymize(df, ["sex"], hier, 2, keep=[c for c in df.columns if c != "sex"], engine="spark", out=str(out), screen=False,
                       **kw)  # fmt: skip
        assert not out.exists() and not (tmp_path / f"{typ}-audit.csv").exists() and not list(tmp_path.glob(f"{typ}/.*"))


def test_typed_values_checked_against_their_texts_by_pyarrow():
    """:func:`tempanon.data.io.check_typed_texts` (Spark's typed release without an audit: the text
    columns written beside the typed ones, compared in the part files' rewrite): each typed column's
    values (as cast to numpy's types) equal pandas' texts of the DataFrame's cells, parsed by pyarrow
    (a float by its bits, ``-0.0`` apart from ``0.0``; ``True``/``False`` only; ``ms`` timestamps
    whose texts have six digits; ``ns`` ones with nine; an aware one by its instant, Python's offset
    with seconds (Amsterdam 1930, ``+00:19:32``) included); any single change of a text is refused,
    naming the release row (numbered from ``first_row``), the column and both values."""
    from tempanon.data.io import check_typed_texts
    from tempanon.errors import VerificationError
    from tempanon.hierarchy.core import as_text

    g = pa.table({"f": pa.array([0.1, -0.0, None, float("inf"), 1e20]),
                  "u": pa.array([2**64 - 1, 0, 1, None, 5], pa.uint64()),
                  "b": pa.array([True, False, None, True, False]),
                  "ns": pa.array([1, -1, None, 0, 10**18], pa.timestamp("ns")),
                  "ms": pa.array([123, -1, None, 0, 10**12], pa.timestamp("ms")),
                  "az": pa.array([-1262304000000000 + 12345, 0, None, 1, 2], pa.timestamp("us", tz="Europe/Amsterdam"))})  # fmt: skip

    def text(c):
        col = g.column(c)
        s = col.to_pandas(types_mapper={pa.uint64(): pd.UInt64Dtype(), pa.bool_(): pd.BooleanDtype()}.get)
        t = pd.Series(s.to_numpy().astype(str) if c == "f" else as_text(s), dtype=object)  # (from_pandas' texts)
        return pa.array(t.where(s.notna(), None).tolist(), pa.string())

    texts = {c: text(c) for c in g.column_names}
    assert texts["az"][0].as_py() == "1930-01-01 00:19:32.012345+00:19:32" and texts["ms"][0].as_py() == "1970-01-01 00:00:00.123000"
    check_typed_texts(g, texts, 10)
    for c, j, v in [("f", 0, "0.1000000001"), ("f", 1, "0.0"), ("f", 3, "-inf"), ("f", 2, "nan"), ("u", 0, "18446744073709551614"),
                    ("b", 1, "True"), ("b", 0, "true"), ("ns", 0, "1970-01-01 00:00:00.000000002"), ("ms", 3, None),
                    ("ms", 2, "1970-01-01 00:00:00"), ("az", 0, "x"), ("az", 1, "1970-01-01 01:00:00+01:01"),
                    ("az", 0, "1930-01-01 00:19:32.012345+00:19:31")]:  # fmt: skip
        changed = dict(texts)
        values = changed[c].to_pylist()
        values[j] = v
        changed[c] = pa.array(values, pa.string())
        with pytest.raises(VerificationError, match=rf"row {11 + j}, column .{c}.: .* the released value is {re.escape(repr(v))}"):
            check_typed_texts(g, changed, 10)


def _release_like_numpys(tmp_path, df: pd.DataFrame, audit: bool, engine: str = "spark") -> None:
    """``kanonymize(df, out="r.parquet")`` on numpy and on Spark (with or without the audit): every part
    file's schema is numpy's (``pyarrow.parquet.read_schema``; ``large_string`` as ``string``) and the
    rows as a multiset are numpy's values, missing cells null (a float by its sign too, a timestamp with
    its zone's name)."""
    from tempanon.hierarchy import Hierarchy
    from tempanon.kanon.api import kanonymize

    hier = {"sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}
    files = {}
    for eng in ("numpy", engine):
        out = tmp_path / eng / "r.parquet"
        out.parent.mkdir()
        kw = {"audit": str(tmp_path / f"{eng}-audit.csv")} if audit and eng != "numpy" else {}
        kanonymize(df, ["sex"], hier, 2, keep=[c for c in df.columns if c != "sex"], engine=eng, out=str(out), screen=False, **kw)
        files[eng] = _parts(out)

    def types(schema):
        return {f.name: pa.string() if f.type == pa.large_string() else f.type for f in schema}

    want = types(pq.read_schema(files["numpy"][0]))
    for p in files[engine]:
        assert types(pq.read_schema(p)) == want, p.name

    def rows(e):
        tab = pa.concat_tables([pq.read_table(p) for p in files[e]])
        cols = [tab.column(c).to_pylist() for c in df.columns]
        return sorted(repr(tuple((v, np.copysign(1, v)) if isinstance(v, float) else (v, str(getattr(v, "tzinfo", "")))
                                 for v in r)) for r in zip(*cols))  # fmt: skip

    assert rows(engine) == rows("numpy")


@pytest.mark.spark
@pytest.mark.parametrize("audit", [False, True])
def test_dataframe_timestamp_units_typed_as_numpys_on_spark(tmp_path, spark_session, audit):
    """Timestamps in ``ns`` (with nanoseconds, before 1970 too), ``ms`` and ``s``, naive and aware
    (America/New_York, UTC), each with a missing value: numpy writes ``timestamp[ns]``, ``[ms]`` and ``[ms]``
    (Parquet has no seconds), the zone kept; Spark wrote them as text."""
    n = 24
    i = np.arange(n)
    ns = pd.Series(pd.Timestamp("1969-12-31 23:59:58") + pd.to_timedelta(i * 1_234_567_891, unit="ns"))
    ns[3] = pd.NaT
    ms, s = ns.dt.floor("ms").astype("datetime64[ms]"), ns.dt.floor("s").astype("datetime64[s]")
    df = pd.DataFrame({"sex": ["F" if x % 3 == 0 else "M" for x in i], "ns": ns, "ms": ms, "s": s,
                       "ns_ny": ns.dt.tz_localize("America/New_York"), "ms_utc": ms.dt.tz_localize("UTC"),
                       "s_ny": s.dt.tz_localize("America/New_York")})  # fmt: skip
    _release_like_numpys(tmp_path, df, audit)


@pytest.mark.spark
@pytest.mark.parametrize("audit", [False, True])
def test_dataframe_unsigned_typed_as_numpys_on_spark(tmp_path, spark_session, audit):
    """uint8-uint64 at their maximum (uint64 above int64's range) and nullable UInt8-UInt64 with a
    missing value: numpy writes them as Parquet's unsigned integers; Spark wrote them as text."""
    n = 24
    i = np.arange(n)
    df = pd.DataFrame({"sex": ["F" if x % 3 == 0 else "M" for x in i]})
    for bits in (8, 16, 32, 64):
        top = 2**bits - 1
        df[f"u{bits}"] = np.array([top - int(x) if x % 2 else int(x) for x in i], dtype=f"uint{bits}")
        df[f"nu{bits}"] = pd.array([None if x == 5 else (top if x == 7 else int(x)) for x in i], dtype=f"UInt{bits}")
    _release_like_numpys(tmp_path, df, audit)


@pytest.mark.spark
@pytest.mark.parametrize("audit", [False, True])
def test_dataframe_nullable_typed_as_numpys_on_spark(tmp_path, spark_session, audit):
    """pandas' nullable Int8-Int64, ``boolean``, Float32 and Float64, each with missing values: numpy
    writes int8-int64, ``bool``, ``float`` and ``double`` with nulls; Spark wrote the boolean and the
    floats as text."""
    n = 24
    i = np.arange(n)
    df = pd.DataFrame({
        "sex": ["F" if x % 3 == 0 else "M" for x in i],
        "i8": pd.array([None if x == 4 else int(x) - 12 for x in i], dtype="Int8"),
        "i64": pd.array([None if x in (2, 9) else int(x) * 10**15 for x in i], dtype="Int64"),
        "b": pd.array([None if x % 5 == 0 else bool(x % 2) for x in i], dtype="boolean"),
        "f32": pd.array([None if x == 6 else x / 7 for x in i], dtype="Float32"),
        "f64": pd.array([None if x == 6 else (-0.0 if x == 1 else (1e20 if x == 2 else x / 3)) for x in i], dtype="Float64"),
    })  # fmt: skip
    _release_like_numpys(tmp_path, df, audit)


def _cells_frame(n: int = 24) -> pd.DataFrame:
    """Columns whose Parquet type numpy (pandas' ``to_parquet``) takes from their cells or categories:
    ``object`` columns of Python ints (one above 2^32, one with a missing cell), of ``datetime.date``
    (year 1 to 9999, a missing cell) and of Python floats; categoricals of strings (one with a missing
    value, one ordered, one with 300 categories: ``int16`` codes), of ints (``int64``, ``int8``), of
    booleans and of dates."""
    import datetime as dt

    i = np.arange(n)
    days = [dt.date(1, 1, 1), dt.date(1582, 10, 4), dt.date(1969, 12, 31), dt.date(9999, 12, 31)]
    return pd.DataFrame({
        "sex": ["F" if x % 3 == 0 else "M" for x in i],
        "oint": pd.Series([int(x) * 2**33 - 5 for x in i], dtype=object),
        "oint_na": pd.Series([None if x == 4 else int(x) for x in i], dtype=object),
        "odate": pd.Series([None if x == 5 else days[x % 4] for x in i], dtype=object),
        "ofloat": pd.Series([None if x == 6 else (-0.0 if x == 1 else x / 3) for x in i], dtype=object),
        "cat": pd.Categorical([None if x == 7 else f"c{x % 3}" for x in i]),
        "cat_ord": pd.Categorical([f"o{x % 2}" for x in i], categories=["o1", "o0"], ordered=True),
        "cat_wide": pd.Categorical([f"w{x}" for x in i], categories=[f"w{j}" for j in range(300)]),
        "cat_int": pd.Categorical([int(x) % 4 * 1000 for x in i]),
        "cat_i8": pd.Categorical(pd.Series([x % 3 - 1 for x in i], dtype="int8")),
        "cat_bool": pd.Categorical([bool(x % 2) for x in i]),
        "cat_date": pd.Categorical([days[x % 2] for x in i]),
    })  # fmt: skip


@pytest.mark.parametrize("audit", [False, True])
def test_dataframe_object_and_categorical_columns_typed_as_numpys(tmp_path, engine, audit):
    """numpy writes :func:`_cells_frame`'s columns ``int64``, ``date32``, ``double``, ``dictionary<string>``
    (its code width and order), ``int64``, ``int8``, ``bool`` and ``date32``. Spark wrote each as text
    (helper sparkty, 2026-11-27); DuckDB the ints with a missing cell, the categoricals of strings and of
    dates as text (and an ``object`` column of small ints ``int32``: ``test_dataframe_small_object_ints``)."""
    df = _cells_frame()
    want = pa.Table.from_pandas(df, preserve_index=False).schema
    assert want.field("cat_wide").type.index_type == pa.int16() and want.field("odate").type == pa.date32()
    _release_like_numpys(tmp_path, df, audit, engine)


def test_dataframe_small_object_ints_are_int64_on_duckdb(tmp_path):
    """An ``object`` column of Python ints that fit ``int32``: numpy ``int64``, DuckDB wrote ``int32``."""
    df = _cells_frame()[["sex"]].assign(small=pd.Series([x % 7 - 3 for x in range(24)], dtype=object))
    _release_like_numpys(tmp_path, df, False, "duckdb")


def test_object_and_categorical_typed_release_checked_on_duckdb(tmp_path, monkeypatch):
    """DuckDB's typed file (cast by pyarrow's safe cast in the footer check's rewrite) is verified
    afterwards as any written release: with the audit, an integer made one off in the written file is
    refused, nothing written. (Without the audit DuckDB's check compares the classes, not the values
    released unchanged: as for its other typed columns, docs/engines.md.)"""
    import pyarrow.compute as pc

    from tempanon.data import io
    from tempanon.errors import VerificationError
    from tempanon.hierarchy import Hierarchy
    from tempanon.kanon.api import kanonymize

    real = io.zone_written_parquet

    def shifted(path, *a, **kw):
        done = real(path, *a, **kw)
        t = pq.read_table(path)
        if "oint_na" in t.column_names:
            j = t.column_names.index("oint_na")
            t = t.set_column(j, t.schema.field(j), pc.add(t.column(j), 1))
            pq.write_table(t, path)
        return done

    monkeypatch.setattr(io, "zone_written_parquet", shifted)
    df = _cells_frame()[["sex", "oint_na", "cat", "cat_date"]]
    hier = {"sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}
    out = tmp_path / "rel" / "r.parquet"
    with pytest.raises(VerificationError, match="oint_na"):
        kanonymize(df, ["sex"], hier, 2, keep=["oint_na", "cat", "cat_date"], engine="duckdb", out=str(out), screen=False,
                   audit=str(tmp_path / "audit.csv"))  # fmt: skip
    assert not out.exists() and not (tmp_path / "audit.csv").exists()


def test_object_and_categorical_texts_checked_by_pyarrow():
    """:func:`check_typed_texts` on the types :func:`_cells_frame` adds on Spark: ``date32`` against
    pandas' ISO text, a dictionary of strings against its values' text; one changed text is refused."""
    from tempanon.data.io import check_typed_texts
    from tempanon.errors import VerificationError

    g = pa.table({"d": pa.array([0, -719162, None, 2932896], pa.date32()),
                  "c": pa.array(["a", None, "b", "a"]).cast(pa.dictionary(pa.int8(), pa.string()))})  # fmt: skip
    texts = {"d": pa.array(["1970-01-01", "0001-01-01", None, "9999-12-31"]), "c": pa.array(["a", None, "b", "a"])}
    check_typed_texts(g, texts)
    for c, j, v in [("d", 0, "1970-01-02"), ("d", 2, "1970-01-01"), ("d", 1, "x"), ("c", 2, "a"), ("c", 1, "b"), ("c", 0, None)]:
        changed = dict(texts)
        values = changed[c].to_pylist()
        values[j] = v
        changed[c] = pa.array(values, pa.string())
        with pytest.raises(VerificationError, match=rf"row {j + 1}, column .{c}."):
            check_typed_texts(g, changed)


@pytest.mark.spark
@pytest.mark.parametrize("audit", [True, False])
def test_object_and_categorical_typed_release_checked_on_spark(tmp_path, spark_session, monkeypatch, audit):
    """The new typed columns are checked on the written file as the others are (with the audit row by
    row against the input, without it by :func:`check_typed_texts`): a date a day off, an integer one off
    and a categorical's value changed are refused, nothing written."""
    from tempanon.errors import VerificationError
    from tempanon.hierarchy import Hierarchy
    from tempanon.kanon.api import kanonymize
    from tempanon.lattice.source_spark import SparkSource

    df = _cells_frame()[["sex", "oint", "odate", "cat"]]
    hier = {"sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}
    real = SparkSource._typed_expr
    for typ, bad in (("DATE", lambda e: f"date_add(CAST({e} AS DATE), 1)"), ("BIGINT", lambda e: f"CAST({e} AS BIGINT) + 1"),
                     ("STRING", lambda e: f"CASE WHEN {e} = 'c1' THEN 'c2' ELSE {e} END")):  # fmt: skip
        monkeypatch.setattr(SparkSource, "_typed_expr", staticmethod(lambda e, t, typ=typ, bad=bad: bad(e) if t == typ else real(e, t)))
        out = tmp_path / typ / "r.parquet"
        kw = {"audit": str(tmp_path / f"{typ}-audit.csv")} if audit else {}
        with pytest.raises(VerificationError, match="column"):
            kanonymize(df, ["sex"], hier, 2, keep=["oint", "odate", "cat"], engine="spark", out=str(out), screen=False, **kw)
        assert not out.exists() and not (tmp_path / f"{typ}-audit.csv").exists() and not list(tmp_path.glob(f"{typ}/.*"))
