"""Typed timestamps of a Parquet input have the numpy path's text on every engine.

The numpy path reads a Parquet input with pandas and compares and writes Python's ``str`` of a value:
``2021-01-02 00:00:00+00:00`` (an aware column, in its Parquet column's zone: ``2021-03-14
03:00:00-04:00`` for America/New_York), ``2021-01-02 00:00:01.234000`` (six digits whenever the
microseconds are not zero), ``2021-01-02 00:00:00``. DuckDB's ``CAST`` to text gave ``... 00:00:00+00``
(in UTC, whatever the column's zone) and trimmed trailing zeros (``00:00:01.234``); Spark's gave
``2021-01-02 00:00:00`` for an aware value. So a hierarchy keyed by numpy's text was refused on the
engines ("values missing from the hierarchy"), and a kept aware timestamp was written in another text
in a DuckDB CSV release. Now every engine compares and writes numpy's text
(:func:`tempanon.lattice.source_duckdb.duckdb_timestamp_text`,
:func:`tempanon.lattice.source_spark.python_timestamp_text`). The oracle is the numpy path's release
of the same input, row by row through the steward's audit, and ``str(pandas.Timestamp)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .test_engine_audit import _by_line
from .test_engine_temporal import _audited, _cli

ENGINES = ["duckdb", pytest.param("spark", marks=pytest.mark.spark)]
TS = ["utc", "ny", "naive", "whole"]  # the typed timestamp columns of the input


def _input(tmp_path, n: int = 24):
    """A Parquet file written with pyarrow: respondent ``pid``, ``sex``, ``t`` (the timestamped
    commands' time column) and four typed timestamp columns, each with a missing value: ``utc``
    aware (UTC) with microseconds and milliseconds (``.234000``), ``ny`` aware in America/New_York
    across the spring DST change (offsets -05:00 and -04:00), ``naive`` with microseconds and
    milliseconds, ``whole`` naive in whole seconds."""
    i = np.arange(n)
    base = pd.Timestamp("2021-01-02", tz="UTC")
    frac = pd.to_timedelta(np.array([0, 1_234_567, 234_000])[i % 3], unit="us")
    df = pd.DataFrame({
        "pid": i % 12, "sex": np.where(i % 3 == 0, "F", "M"),
        "t": pd.Timestamp("2021-01-02 02:00", tz="UTC") + pd.to_timedelta(i * 5, unit="h"),
        "utc": base + frac,
        "ny": (pd.Timestamp("2021-03-14 06:00", tz="UTC") + pd.to_timedelta(i % 3, unit="h") + frac).tz_convert("America/New_York"),
        "naive": base.tz_localize(None) + frac,
        "whole": base.tz_localize(None) + pd.to_timedelta(i % 3, unit="s"),
    })  # fmt: skip
    for c, row in zip(TS, (4, 5, 7, 8)):
        df.loc[row, c] = pd.NaT
    path = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path)
    schema = pq.read_schema(path)
    assert schema.field("ny").type == pa.timestamp("us", tz="America/New_York")
    assert schema.field("naive").type == pa.timestamp("us")
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    (tmp_path / "steward").mkdir()
    return path


def _numpy_text(path) -> pd.DataFrame:
    """Every column of the input as the numpy path reads it: Python's str, missing as ''."""
    df = pd.read_parquet(path)
    return df.astype(object).where(df.notna(), None).map(lambda v: "" if v is None else str(v))


def _kanon(inp, tmp_path, eng, tag, extra, suffix=".csv"):
    (tmp_path / eng).mkdir(exist_ok=True)
    out, audit = tmp_path / eng / f"{tag}{suffix}", tmp_path / "steward" / f"{eng}-{tag}.csv"
    r = _cli(["kanon", str(inp), "--k", "2", "--uid", "pid", *extra, "--out", str(out), "--audit", str(audit),
              "--summary", str(tmp_path / "steward" / f"{eng}-{tag}.json"), "--engine", eng, "-q"])  # fmt: skip
    return r, out, audit


def _risk(tmp_path, eng, tag) -> dict:
    import json

    return json.loads((tmp_path / "steward" / f"{eng}-{tag}.json").read_text())["risk"]


def test_numpy_text_of_the_input(tmp_path):
    """The oracle's text (what the numpy path reads), as the brief names it: offsets in the column's
    zone, six digits of microseconds unless zero, no fraction for whole seconds."""
    text = _numpy_text(_input(tmp_path))
    assert {"2021-01-02 00:00:00+00:00", "2021-01-02 00:00:01.234567+00:00", "2021-01-02 00:00:00.234000+00:00", ""} == set(text["utc"])
    assert {"2021-03-14 01:00:00-05:00", "2021-03-14 03:00:01.234567-04:00", "2021-03-14 04:00:00.234000-04:00", ""} == set(text["ny"])
    assert {"2021-01-02 00:00:00", "2021-01-02 00:00:01.234567", "2021-01-02 00:00:00.234000", ""} == set(text["naive"])
    assert {"2021-01-02 00:00:00", "2021-01-02 00:00:01", "2021-01-02 00:00:02", ""} == set(text["whole"])


@pytest.mark.parametrize("engine", ENGINES)
def test_kanon_kept_timestamps_released_as_numpy(tmp_path, engine, request):
    """``kanon --keep`` of the four timestamp columns into a CSV release, audited: each input line is
    released as the same row, in the same text, as by numpy (DuckDB wrote ``+00`` and trimmed
    ``.234000`` to ``.234``)."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp = _input(tmp_path)
    extra = ["--qi", "sex", "--hierarchies", str(tmp_path / "h"), "--keep", ",".join(TS), "--allow-identifier", ",".join(TS)]
    got = {}
    for eng in ("numpy", engine):
        r, out, audit = _kanon(inp, tmp_path, eng, "keep", extra)
        assert r.exit_code == 0, (eng, r.output)
        got[eng] = _by_line(out, audit)
    pd.testing.assert_frame_equal(got[engine], got["numpy"])
    want = _numpy_text(inp)
    for c in TS:
        assert got[engine][c].to_dict() == {i + 2: v for i, v in want[c].items()}, c


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("column", TS)
def test_kanon_timestamp_quasi_identifier_keyed_by_numpy_text(tmp_path, engine, column, request):
    """A typed timestamp as a quasi-identifier, its hierarchy keyed by numpy's text (the missing value
    too): accepted on every engine with numpy's release; a hierarchy keyed by DuckDB's old text
    (``CAST``: ``+00``, trailing zeros trimmed) is refused alike on every engine (exit 2, values
    missing from the hierarchy)."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp = _input(tmp_path)
    values = sorted(set(_numpy_text(inp)[column]))
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    cast = sorted({"" if v is None else v for (v,) in con.execute(f"SELECT CAST({column} AS VARCHAR) FROM read_parquet('{inp}')").fetchall()})
    con.close()
    assert (cast == values) == (column == "whole")  # DuckDB's CAST text differs from numpy's but for whole seconds
    for tag, keys in (("numpy", values), ("cast", cast)):
        hdir = tmp_path / f"h-{tag}"
        hdir.mkdir()
        (hdir / "sex.csv").write_text("F;*\nM;*\n")
        (hdir / f"{column}.csv").write_text("".join(f'"{v}";{v[:10] or "?"};*\n' for v in keys))
        # (one row may be suppressed, the missing value's: the timestamp is then released at level 0, its text)
        extra = ["--qi", f"sex,{column}", "--hierarchies", str(hdir), "--max-suppression", "0.05"]
        res = {}
        for eng in ("numpy", engine):
            r, out, audit = _kanon(inp, tmp_path, eng, tag, extra)
            res[eng] = r.exit_code
            if r.exit_code == 0:
                res[eng, "rows"] = _by_line(out, audit)
            else:
                assert "missing from the hierarchy" in r.output, (eng, r.output)
        assert res[engine] == res["numpy"], (tag, res)
        if tag == "numpy" or column == "whole":
            assert res["numpy"] == 0
            pd.testing.assert_frame_equal(res[engine, "rows"], res["numpy", "rows"])
            assert set(res[engine, "rows"][column]) == set(keys) - {""}  # released unchanged: the hierarchy's keys
            assert _risk(tmp_path, engine, tag) == _risk(tmp_path, "numpy", tag)  # (the input's classes, by the value)
        else:
            assert res["numpy"] == 2


@pytest.mark.parametrize("engine", ENGINES)
def test_timestamped_kept_timestamps_released_as_numpy(tmp_path, engine, request):
    """``timestamped --keep`` of the timestamp columns into a CSV release, audited: the same rows by
    input line as numpy's, in numpy's text."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp = _input(tmp_path)
    got = {}
    for eng in ("numpy", engine):
        (tmp_path / eng).mkdir()
        out, audit = tmp_path / eng / "o.csv", tmp_path / "steward" / f"{eng}.csv"
        r = _cli(["timestamped", str(inp), "--time", "t", "--k", "2", "--uid", "pid", "--qi", "sex",
                  "--keep", ",".join(TS), "--allow-identifier", ",".join(TS), "--out", str(out), "--audit", str(audit),
                  "--engine", eng, "-q"])  # fmt: skip
        assert r.exit_code == 0, (eng, r.output)
        text = "".join(p.read_text() if i == 0 else p.read_text().split("\n", 1)[1] for i, p in enumerate(sorted(out.glob("part-*")))) \
            if out.is_dir() else out.read_text()  # fmt: skip
        got[eng] = _audited(text, audit)
    pd.testing.assert_frame_equal(got[engine], got["numpy"])
    assert "2021-03-14 04:00:00.234000-04:00" in set(got[engine]["ny"])
    assert "2021-01-02 00:00:00.234000" in set(got[engine]["naive"])


# (Europe/Paris: local mean time +00:09:21 before 1911. Not Europe/Amsterdam: ICU, DuckDB's zone data, links it to
# Europe/Brussels, whose history before 1940 differs from the one Python's tzdata holds)
ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Europe/Paris", "+05:30", "-03:00"]


def test_duckdb_timestamp_text_is_pythons_str():
    """:func:`duckdb_timestamp_text` against ``str(pandas.Timestamp)``: random instants (before 1900,
    where a zone's local mean time has an offset in seconds, before and after 1970) with whole
    seconds, milliseconds, microseconds and nanoseconds, naive and in six zones (named and fixed
    offsets), and a missing value (NULL stays NULL)."""
    import duckdb

    from tempanon.lattice.source_duckdb import duckdb_timestamp_text

    rng = np.random.default_rng(7)
    lo, hi = pd.Timestamp("1850-01-01").value, pd.Timestamp("2200-01-01").value
    ns = rng.integers(lo, hi, 400)
    ns[:100] -= ns[:100] % 1_000_000_000  # whole seconds
    ns[100:200] -= ns[100:200] % 1_000_000  # milliseconds
    ns[200:300] -= ns[200:300] % 1_000  # microseconds (the rest: nanoseconds)
    instants = pd.to_datetime(ns, unit="ns", utc=True)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'America/Los_Angeles'")  # (the text does not depend on the session's zone)
    for unit in ("us", "ns"):
        vals = instants if unit == "ns" else instants.floor("us")
        cols = {"n": pa.array(vals.tz_localize(None).as_unit(unit).append(pd.DatetimeIndex([pd.NaT])))}
        for j, z in enumerate(ZONES):
            cols[f"a{j}"] = pa.array(vals.tz_convert(z).as_unit(unit).append(pd.DatetimeIndex([pd.NaT], tz=z)))
        tab = pa.table(cols)
        exprs = [duckdb_timestamp_text("n", "timestamp_ntz")] + [duckdb_timestamp_text(f"a{j}", "timestamp", z) for j, z in enumerate(ZONES)]
        got = con.execute(f"SELECT {', '.join(exprs)} FROM tab").fetchall()
        want = tab.to_pandas()
        for j, name in enumerate(tab.column_names):
            expect = [None if v is pd.NaT else str(v) for v in want[name]]
            assert [row[j] for row in got] == expect, (unit, name)
    con.close()


def test_unknown_zone_of_an_aware_column_is_refused(tmp_path):
    """An aware Parquet column in a zone DuckDB's ICU does not know is an input error naming the
    column and the zone (not a wrong text)."""
    from tempanon.errors import InputError
    from tempanon.lattice.source_duckdb import DuckDBSource

    p = tmp_path / "z.parquet"
    pq.write_table(pa.table({"a": pa.array([0, 1], pa.timestamp("us", tz="Mars/Olympus"))}), p)
    with pytest.raises(InputError, match="column 'a' is in time zone 'Mars/Olympus'"):
        DuckDBSource(p)


@pytest.mark.parametrize("engine", ENGINES)
def test_timestamped_joint_timestamp_quasi_identifier_keyed_by_numpy_text(tmp_path, engine, request):
    """``timestamped --hierarchies`` (the joint search) with an aware timestamp in New York time as a
    quasi-identifier, its hierarchy keyed by numpy's text: accepted (the search's dimension and the
    verification's mapping read the same text) with numpy's rows by input line."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp = _input(tmp_path)
    keys = sorted(set(_numpy_text(inp)["ny"]))
    (tmp_path / "h" / "ny.csv").write_text("".join(f'"{v}";{v[:10] or "?"};*\n' for v in keys))
    got = {}
    for eng in ("numpy", engine):
        (tmp_path / eng).mkdir()
        out, audit = tmp_path / eng / "j.csv", tmp_path / "steward" / f"{eng}-j.csv"
        r = _cli(["timestamped", str(inp), "--time", "t", "--k", "2", "--uid", "pid", "--qi", "sex,ny",
                  "--hierarchies", str(tmp_path / "h"), "--granularities", "day,week,month,year", "--out", str(out),
                  "--audit", str(audit), "--engine", eng, "-q"])  # fmt: skip
        assert r.exit_code == 0, (eng, r.output)
        text = "".join(p.read_text() if i == 0 else p.read_text().split("\n", 1)[1] for i, p in enumerate(sorted(out.glob("part-*")))) \
            if out.is_dir() else out.read_text()  # fmt: skip
        got[eng] = _audited(text, audit)
    pd.testing.assert_frame_equal(got[engine], got["numpy"])
