"""Typed timestamp columns released unchanged by ``--engine spark`` (a Parquet input's kept,
insensitive columns).

Spark's CSV writer spells a typed timestamp ``2021-01-02T00:00:00.000Z`` (milliseconds only: the
microseconds were lost) where ``CAST`` to text, which the checks compare the input with, gives
``2021-01-02 00:00:00``: ``kanon --engine spark --audit`` and ``timestamped --engine spark`` with
such a column were refused (exit 3, nothing written). The Spark CSV release now writes such a
column in the numpy path's text (Python's ``str`` of the value: microseconds when not zero, an
aware value in its Parquet column's zone with its offset), and the checks compare that text. The
oracle is the numpy path's release of the same input, row by row through the steward's audit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .test_engine_audit import _by_line, _read_audit
from .test_engine_temporal import _audited, _cli

pytestmark = pytest.mark.spark

KEPT = ["seen", "ny", "naive"]


def _input(tmp_path, n: int = 48):
    """Respondent ``pid``; ``sex`` (a quasi-identifier); ``t`` an aware time column; kept columns:
    ``seen`` aware (UTC) with microseconds, ``ny`` aware in New York time across the spring DST
    change (offsets -05:00 and -04:00) with microseconds and a missing value, ``naive`` a naive
    timestamp with microseconds and a missing value."""
    i = np.arange(n)
    df = pd.DataFrame({
        "pid": i % 16, "sex": np.where(i % 3 == 0, "F", "M"),
        "t": pd.Timestamp("2021-01-02 02:00", tz="UTC") + pd.to_timedelta(i * 5, unit="h"),
        "seen": pd.Timestamp("2021-01-02", tz="UTC") + pd.to_timedelta(i % 3 * 1234567, unit="us"),
        "ny": (pd.Timestamp("2021-03-14 06:00", tz="UTC") + pd.to_timedelta(i % 3 * 3_600_000_001, unit="us")).tz_convert("America/New_York"),
        "naive": pd.Timestamp("2021-01-02") + pd.to_timedelta(i % 4 * 100001, unit="us"),
    })  # fmt: skip
    df.loc[5, "naive"] = pd.NaT
    df.loc[7, "ny"] = pd.NaT
    path = tmp_path / "in.parquet"
    df.to_parquet(path, index=False)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    (tmp_path / "steward").mkdir()
    return path


def test_kanon_spark_csv_release_keeps_typed_timestamps_as_numpy(tmp_path, spark_session):
    """``kanon --engine spark --audit`` with kept typed timestamps (aware UTC, aware New York, naive;
    microseconds; missing values): the release is written and checked (exit 0), each input line
    released as the same row, in the same text, as by numpy."""
    inp = _input(tmp_path)
    got = {}
    for eng in ("numpy", "spark"):
        (tmp_path / eng).mkdir()
        out, audit = tmp_path / eng / "r.csv", tmp_path / "steward" / f"{eng}.csv"
        r = _cli(["kanon", str(inp), "--qi", "sex", "--hierarchies", str(tmp_path / "h"), "--k", "3", "--uid", "pid",
                  "--keep", ",".join(KEPT), "--allow-identifier", ",".join(KEPT), "--out", str(out), "--audit", str(audit),
                  "--engine", eng, "-q"])  # fmt: skip
        assert r.exit_code == 0, r.output
        got[eng] = _by_line(out, audit)
    pd.testing.assert_frame_equal(got["spark"], got["numpy"])
    rel = got["spark"]
    assert set(rel["seen"]) == {"2021-01-02 00:00:00+00:00", "2021-01-02 00:00:01.234567+00:00", "2021-01-02 00:00:02.469134+00:00"}
    assert {"2021-03-14 01:00:00-05:00", "2021-03-14 03:00:00.000001-04:00", ""} <= set(rel["ny"])
    assert {"2021-01-02 00:00:00", "2021-01-02 00:00:00.300003", ""} <= set(rel["naive"])


def test_timestamped_spark_csv_release_keeps_typed_timestamps_as_numpy(tmp_path, spark_session):
    """``timestamped --engine spark --audit`` with the same kept columns: written and checked, the
    same rows by input line as numpy's (the time column generalized)."""
    inp = _input(tmp_path)
    got = {}
    for eng in ("numpy", "spark"):
        (tmp_path / eng).mkdir()
        out, audit = tmp_path / eng / "o.csv", tmp_path / "steward" / f"{eng}.csv"
        r = _cli(["timestamped", str(inp), "--time", "t", "--k", "2", "--uid", "pid", "--qi", "sex",
                  "--keep", ",".join(KEPT), "--allow-identifier", ",".join(KEPT), "--out", str(out), "--audit", str(audit),
                  "--engine", eng, "-q"])  # fmt: skip
        assert r.exit_code == 0, r.output
        text = "".join(p.read_text() if i == 0 else p.read_text().split("\n", 1)[1] for i, p in enumerate(sorted(out.glob("part-*")))) \
            if out.is_dir() else out.read_text()  # fmt: skip
        got[eng] = _audited(text, audit)
    pd.testing.assert_frame_equal(got["spark"], got["numpy"])
    assert "2021-01-02 00:00:01.234567+00:00" in set(got["spark"]["seen"])
    assert "2021-01-02 00:00:00.100001" in set(got["spark"]["naive"])


def test_python_timestamp_text_is_pythons_str(spark_session):
    """:func:`python_timestamp_text` against ``str(pandas.Timestamp)``: random instants (before and
    after 1970, with and without microseconds), naive and aware in UTC, New York (both offsets),
    Kolkata (+05:30) and Monrovia in 1970 (-00:44:30, an offset with seconds)."""
    import pyarrow as pa

    from tempanon.lattice.source_spark import python_timestamp_text, utc_session

    rng = np.random.default_rng(11)
    us = rng.integers(-2 * 10**15, 2 * 10**15, 300)
    us[::3] -= us[::3] % 1_000_000  # whole seconds
    us[1::7] = np.arange(len(us[1::7])) * 86_400_000_000 + 10**11  # around 1970 (Monrovia's odd offset)
    with utc_session(spark_session):
        df = spark_session.createDataFrame(pa.table({"a": pa.array(us, pa.timestamp("us", tz="UTC")),
                                                     "n": pa.array(us, pa.timestamp("us"))}))  # fmt: skip
        zones = [None, "America/New_York", "Asia/Kolkata", "Africa/Monrovia"]
        exprs = [python_timestamp_text("n", "timestamp_ntz")] + [python_timestamp_text("a", "timestamp", z) for z in zones]
        got = df.selectExpr(*(f"{e} AS c{j}" for j, e in enumerate(exprs))).toPandas()
    inst = pd.to_datetime(us, unit="us", utc=True)
    assert got["c0"].tolist() == [str(x) for x in inst.tz_localize(None)]
    for j, z in enumerate(zones, 1):
        assert got[f"c{j}"].tolist() == [str(x) for x in inst.tz_convert(z or "UTC")], z


# ---- Parquet releases: TIMESTAMP_MICROS, not INT96 --------------------------------------------------


def _parquet_fields(path):
    import pyarrow.dataset as ds

    return {f.name: f.type for f in ds.dataset(str(path), format="parquet").schema}


@pytest.mark.parametrize("command", ["kanon", "timestamped"])
def test_spark_parquet_release_timestamps_micros(tmp_path, spark_session, command):
    """A Spark Parquet release writes kept timestamps as DuckDB's does (pyarrow schema): aware as
    ``timestamp[us, tz=UTC]`` (before: INT96, read back by pyarrow as naive ``timestamp[ns]``),
    naive as ``timestamp[us]``; a column in another zone (``ny``, America/New_York in the input) in
    that zone, as the numpy path writes it (since 2026-11-27: before, Spark and DuckDB wrote it in UTC;
    ``test_engine_parquet_zone``): the same instants, row by row through the audits."""
    import pyarrow as pa

    inp = _input(tmp_path)
    got, fields = {}, {}
    for eng in ("numpy", "duckdb", "spark"):
        (tmp_path / eng).mkdir()
        out, audit = tmp_path / eng / "r.parquet", tmp_path / "steward" / f"{eng}.csv"
        args = (["--qi", "sex", "--hierarchies", str(tmp_path / "h"), "--k", "3"] if command == "kanon"
                else ["--time", "t", "--k", "2", "--qi", "sex"])  # fmt: skip
        r = _cli([command, str(inp), *args, "--uid", "pid", "--keep", ",".join(KEPT), "--allow-identifier", ",".join(KEPT),
                  "--out", str(out), "--audit", str(audit), "--engine", eng, "-q"])  # fmt: skip
        assert r.exit_code == 0, r.output
        fields[eng] = _parquet_fields(out)
        rel = pd.read_parquet(out)
        if command == "kanon":
            rel.index = _read_audit(audit)[1]["input_line"].to_numpy()
        else:
            from tempanon.temporal.api import read_audit

            rel.index = read_audit(audit)["input_line"].astype(int).to_numpy()
        got[eng] = rel.sort_index()
    want = {"seen": pa.timestamp("us", tz="UTC"), "ny": pa.timestamp("us", tz="America/New_York"), "naive": pa.timestamp("us")}
    assert {c: fields["spark"][c] for c in KEPT} == {c: fields["duckdb"][c] for c in KEPT} == want
    assert {c: fields["numpy"][c] for c in KEPT} == want
    sp, nu = got["spark"], got["numpy"]
    for c in KEPT:
        pd.testing.assert_series_equal(sp[c], nu[c].astype(sp[c].dtype), check_names=False)
    pd.testing.assert_frame_equal(sp.drop(columns=KEPT), nu.drop(columns=KEPT), check_dtype=False)
    pd.testing.assert_frame_equal(sp, got["duckdb"], check_dtype=False)


def test_utc_session_sets_and_restores_the_parquet_timestamp_type(spark_session):
    """:func:`utc_session` sets TIMESTAMP_MICROS for tempanon's calls only: a caller's value (INT96)
    or its absence is given back, also after an error."""
    from tempanon.lattice.source_spark import PARQUET_TIMESTAMP_TYPE, utc_session

    key = PARQUET_TIMESTAMP_TYPE
    old = spark_session.conf.get(key, None)
    try:
        spark_session.conf.set(key, "INT96")
        with utc_session(spark_session):
            assert spark_session.conf.get(key) == "TIMESTAMP_MICROS"
            with utc_session(spark_session):
                pass
            assert spark_session.conf.get(key) == "TIMESTAMP_MICROS"  # the outer call still runs
        assert spark_session.conf.get(key) == "INT96"
        spark_session.conf.unset(key)
        with pytest.raises(ZeroDivisionError), utc_session(spark_session):
            1 / 0
        assert spark_session.conf.get(key) == "INT96"  # unset again: Spark's default
        assert spark_session.conf.get("spark.sql.session.timeZone") == "UTC"  # (the shared session's own)
    finally:
        spark_session.conf.unset(key) if old is None else spark_session.conf.set(key, old)
