"""Time-zone-aware timestamps before 1970 in zones whose history the engines' zone data does not keep.

The numpy path reads an aware Parquet column with pandas, whose offsets come from Python's zone data
(``zoneinfo``: Debian's tzdata, each zone's own history). DuckDB takes a zone's rules from ICU and Spark
from Java, whose data merge zones that agree since 1970: Europe/Amsterdam is Brussels' (1930: ``+00:00``
where Python has Amsterdam's ``+00:19:32``), Europe/Oslo Berlin's (1964: ``+01:00`` where Python has
summer time ``+02:00``), Atlantic/Reykjavik Abidjan's. So a kept column was released in another text
(silently: each engine checked its own text) and a hierarchy keyed by numpy's text was refused as
"values missing from the hierarchy" on DuckDB. Now each engine finds, over the range of the column's
values, the intervals where its offsets differ from Python's (``zone_offset_fixes``) and gives the
values there Python's offset. New York (``-04:56:02`` before 1883) and Kolkata (``+05:21:10`` before
1906) agree in every zone data and are here as a control. The oracle is the numpy path's release of the
same input and ``str(pandas.Timestamp)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .test_engine_temporal import _cli

ENGINES = ["duckdb", pytest.param("spark", marks=pytest.mark.spark)]
OLD = ["ams", "osl", "ny", "kol"]
OLD_ZONES = ["Europe/Amsterdam", "Europe/Oslo", "Atlantic/Reykjavik", "Europe/Stockholm", "Europe/Dublin",
             "Asia/Kuala_Lumpur", "America/New_York", "Asia/Kolkata"]  # fmt: skip


def _input(tmp_path, n: int = 40):
    """A Parquet file written with pyarrow: respondent ``pid``, ``sex``, ``t`` (aware UTC, 1930) and four
    aware columns of old instants, each with a missing value: ``ams`` (Europe/Amsterdam 1930-31, the
    instants of ``t``: ``+00:19:32`` and summer time ``+01:19:32``), ``osl`` (Europe/Oslo 1950-71,
    summer time 1959-65), ``ny`` (America/New_York 1880-84, ``-04:56:02`` then ``-05:00``), ``kol``
    (Asia/Kolkata 1900-42, ``+05:21:10``, ``+05:30``, ``+06:30``)."""
    i = np.arange(n)
    t = pd.Timestamp("1930-03-01", tz="UTC") + pd.to_timedelta(i * 9, unit="D") + pd.to_timedelta(i * 37, unit="min")
    df = pd.DataFrame({
        "pid": i % 20, "sex": np.where(i % 2 == 0, "F", "M"), "t": t,
        "ams": t.tz_convert("Europe/Amsterdam"),
        "osl": (pd.Timestamp("1950-01-01 12:00", tz="UTC") + pd.to_timedelta(i * 200, unit="D")).tz_convert("Europe/Oslo"),
        "ny": (pd.Timestamp("1880-01-01 12:00", tz="UTC") + pd.to_timedelta(i * 40, unit="D")).tz_convert("America/New_York"),
        "kol": (pd.Timestamp("1900-01-01 12:00", tz="UTC") + pd.to_timedelta(i * 400, unit="D")).tz_convert("Asia/Kolkata"),
    })  # fmt: skip
    for c, row in zip(OLD, (3, 5, 7, 9)):
        df.loc[row, c] = pd.NaT
    path = tmp_path / "old.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path)
    assert pq.read_schema(path).field("ams").type == pa.timestamp("us", tz="Europe/Amsterdam")
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    return path


def _numpy_text(path) -> pd.DataFrame:
    df = pd.read_parquet(path)
    return df.astype(object).where(df.notna(), None).map(lambda v: "" if v is None else str(v))


def _lines(out) -> list[str]:
    """The release's lines, header first, the rows sorted (the order within a class is a salted hash
    the engines need not share); a Spark release's part files joined."""
    if out.is_dir():
        parts = sorted(out.glob("part-*"))
        text = "".join(p.read_text() if j == 0 else p.read_text().split("\n", 1)[1] for j, p in enumerate(parts))
    else:
        text = out.read_text()
    head, *rows = text.splitlines()
    return [head, *sorted(rows)]


def _run(tmp_path, engine, tag, args):
    out = tmp_path / engine / f"{tag}.csv"
    out.parent.mkdir(exist_ok=True)
    r = _cli([*args, "--out", str(out), "--engine", engine, "-q"])
    return r, out


def test_the_input_is_old_zone_data(tmp_path):
    """The oracle's text has the offsets the module doc names (so the data exercise them)."""
    text = _numpy_text(_input(tmp_path))
    assert "1930-03-01 00:19:32+00:19:32" in set(text["ams"]) and any(v.endswith("+01:19:32") for v in text["ams"])
    assert any(v.endswith("+02:00") and v.startswith("1964") for v in text["osl"])
    assert "1880-01-01 07:03:58-04:56:02" in set(text["ny"]) and any(v.endswith("+05:21:10") for v in text["kol"])


def test_duckdb_text_of_old_instants_is_pythons_str():
    """:func:`duckdb_timestamp_text` with the source's fixes against ``str(pandas.Timestamp)`` on 3,000
    random instants 1850-2030 in eight zones; without the fixes ICU's text differs in Amsterdam (the
    test can fail), and a zone whose data agree gets no fix."""
    import duckdb

    from tempanon.lattice.source_duckdb import duckdb_timestamp_text, icu_offsets, zone_offset_fixes

    rng = np.random.default_rng(11)
    lo, hi = pd.Timestamp("1850-01-01").value // 10**9, pd.Timestamp("2030-01-01").value // 10**9
    secs = np.sort(rng.integers(lo, hi, 3000))
    vals = pd.to_datetime(secs * 10**6 + rng.integers(0, 10**6, 3000), unit="us", utc=True)
    con = duckdb.connect()
    fixed = {}
    for z in OLD_ZONES:
        fixes = zone_offset_fixes(z, int(secs[0]), int(secs[-1]) + 1, icu_offsets(con, z))
        fixed[z] = len(fixes)
        tab = pa.table({"a": pa.array(vals.tz_convert(z).as_unit("us").append(pd.DatetimeIndex([pd.NaT], tz=z)))})
        want = [None if v is pd.NaT else str(v) for v in tab.to_pandas()["a"]]
        got = [r[0] for r in con.execute(f"SELECT {duckdb_timestamp_text('a', 'timestamp', z, fixes)} FROM tab").fetchall()]
        assert got == want, z
        if z == "Europe/Amsterdam":
            plain = [r[0] for r in con.execute(f"SELECT {duckdb_timestamp_text('a', 'timestamp', z)} FROM tab").fetchall()]
            assert sum(a != b for a, b in zip(plain, want)) > 500
    con.close()
    assert fixed["America/New_York"] == 0 and fixed["Asia/Kolkata"] == 0
    assert fixed["Europe/Amsterdam"] > 10 and fixed["Europe/Oslo"] > 0 and fixed["Atlantic/Reykjavik"] > 0


def test_no_fix_for_modern_data(tmp_path):
    """Values after 1970 in Amsterdam: the zone data agree, no interval, the text expression is ICU's
    alone (nothing changes for such data)."""
    from tempanon.lattice.source_duckdb import DuckDBSource

    p = tmp_path / "m.parquet"
    t = pd.date_range("2001-01-01", "2024-12-31", periods=50, tz="Europe/Amsterdam")
    pq.write_table(pa.table({"a": pa.array(t)}), p)
    src = DuckDBSource(p)
    try:
        assert src._zone_fixes == {}
    finally:
        src.close()


@pytest.mark.parametrize("engine", ENGINES)
def test_kanon_kept_old_timestamps_released_as_numpy(tmp_path, engine, request):
    """``kanon --keep`` of the old aware columns into a CSV release: the same lines as numpy's (each
    row holds ``t``, unique, so the rows are matched); on main DuckDB and Spark wrote Amsterdam's
    1930 values in Brussels' offsets (``1930-03-01 00:00:00+00:00``) and Oslo's 1964 summer in
    ``+01:00``."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp = _input(tmp_path)
    args = ["kanon", str(inp), "--k", "2", "--uid", "pid", "--qi", "sex", "--hierarchies", str(tmp_path / "h"),
            "--keep", ",".join(["t", *OLD]), "--allow-identifier", ",".join(["t", *OLD])]  # fmt: skip
    got = {}
    for eng in ("numpy", engine):
        r, out = _run(tmp_path, eng, "keep", args)
        assert r.exit_code == 0, (eng, r.output)
        got[eng] = _lines(out)
    assert got[engine] == got["numpy"]
    assert any("1930-03-01 00:19:32+00:19:32" in line for line in got[engine])


@pytest.mark.parametrize("engine", ENGINES)
def test_kanon_old_timestamp_quasi_identifiers_keyed_by_numpy_text(tmp_path, engine, request):
    """``ams`` and ``osl`` as quasi-identifiers, their hierarchies keyed by numpy's text (value -> month
    -> ``*``): accepted with numpy's release (on main DuckDB refused: "40 value(s) missing from the
    hierarchy ... '1930-03-01 00:00:00+00:00'")."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp = _input(tmp_path)
    text = _numpy_text(inp)
    for c in ("ams", "osl"):
        (tmp_path / "h" / f"{c}.csv").write_text("".join(f'"{v}";{v[:7] or "?"};*\n' for v in sorted(set(text[c]))))
    args = ["kanon", str(inp), "--k", "2", "--uid", "pid", "--qi", "sex,ams,osl", "--hierarchies", str(tmp_path / "h"),
            "--max-suppression", "0.1"]  # fmt: skip
    got = {}
    for eng in ("numpy", engine):
        r, out = _run(tmp_path, eng, "qi", args)
        assert r.exit_code == 0, (eng, r.output)
        got[eng] = _lines(out)
    assert got[engine] == got["numpy"]


@pytest.mark.parametrize("engine", ENGINES)
def test_timestamped_old_timestamps_as_numpy(tmp_path, engine, request):
    """``timestamped`` with the old columns kept (time-only search) and with ``ams`` as a quasi-identifier
    keyed by numpy's text (the joint search): numpy's release lines."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp = _input(tmp_path)
    text = _numpy_text(inp)
    (tmp_path / "h" / "ams.csv").write_text("".join(f'"{v}";{v[:7] or "?"};*\n' for v in sorted(set(text["ams"]))))
    runs = {
        "keep": ["--qi", "sex", "--keep", ",".join(OLD), "--allow-identifier", ",".join(OLD)],
        "joint": ["--qi", "sex,ams", "--hierarchies", str(tmp_path / "h"), "--max-suppression", "0.3"],
    }
    for tag, extra in runs.items():
        got = {}
        for eng in ("numpy", engine):
            r, out = _run(tmp_path, eng, tag, ["timestamped", str(inp), "--time", "t", "--k", "2", "--uid", "pid",
                                                "--granularities", "day,month,year", *extra])  # fmt: skip
            assert r.exit_code == 0, (tag, eng, r.output)
            got[eng] = _lines(out)
        assert got[engine] == got["numpy"], tag


def test_a_sentinel_value_does_not_widen_the_grid(tmp_path, monkeypatch):
    """Old Amsterdam values and a sentinel ``9999-12-31``: the offsets are compared only on the steps
    that hold a value (a grid over the whole range would be 11.7 million points), and the release's
    lines are numpy's."""
    from tempanon.lattice import source_duckdb

    n = 40
    t = pd.Timestamp("1930-03-01", tz="UTC") + pd.to_timedelta(np.arange(n) * 9, unit="D")
    ams = pd.Series(t.tz_convert("Europe/Amsterdam"))
    ams.iloc[-1] = pd.Timestamp("9999-12-31 12:00", tz="Europe/Amsterdam")
    df = pd.DataFrame({"pid": np.arange(n) % 20, "sex": np.where(np.arange(n) % 2 == 0, "F", "M"), "ams": ams})
    inp = tmp_path / "sentinel.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), inp)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    points = []
    real = source_duckdb.icu_offsets

    def counted(con, zone):
        f = real(con, zone)

        def offsets(secs):
            points.append(len(secs))
            return f(secs)

        return offsets

    monkeypatch.setattr(source_duckdb, "icu_offsets", counted)
    args = ["kanon", str(inp), "--k", "2", "--uid", "pid", "--qi", "sex", "--hierarchies", str(tmp_path / "h"),
            "--keep", "ams", "--allow-identifier", "ams"]  # fmt: skip
    got = {}
    for eng in ("numpy", "duckdb"):
        r, out = _run(tmp_path, eng, "sentinel", args)
        assert r.exit_code == 0, (eng, r.output)
        got[eng] = _lines(out)
    assert got["duckdb"] == got["numpy"]
    assert any("9999-12-31 12:00:00+01:00" in line for line in got["duckdb"])
    assert any("+00:19:32" in line for line in got["duckdb"])
    assert 0 < sum(points) < 20_000, sum(points)
