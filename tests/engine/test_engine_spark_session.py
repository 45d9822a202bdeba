"""A Spark session the caller passes in (a Spark DataFrame, ``SparkSource.from_path(..., spark=)``, or
the process's active session, which :func:`~tempanon.lattice.source_spark.local_session` returns)
whose ``spark.sql.session.timeZone`` is not UTC: tempanon's results are the same as with its own
session (UTC) and as the numpy path's, and the caller's session keeps its time zone.

Where the session's zone reached the results before (``docs/engines.md``, "The session time zone
on Spark"): Spark's CSV writer wrote a kept time-zone-aware timestamp in that zone
(``2021-01-01T21:00:00.000-05:00``); ``CAST(ts AS STRING)``, the text a hierarchy is keyed by, gave
the zone's wall clock (a hierarchy's values were then missing); the timestamped release's row order
hashes that text. And ``local_session`` on a running session set UTC on it for good. The oracle is
the numpy path (a kept typed timestamp is released in Python's text on Spark too); the time zone is America/New_York on the shared session, set and restored by a fixture.
"""

from __future__ import annotations

import math
import re
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from .test_engine_audit import _read_audit, _read_release

pytestmark = pytest.mark.spark

TZ = "spark.sql.session.timeZone"
NY = "America/New_York"


@pytest.fixture
def ny(spark_session):
    """The shared session in New York time (as a caller's may be), restored afterwards."""
    old = spark_session.conf.get(TZ, None)
    spark_session.conf.set(TZ, NY)
    yield spark_session
    if old is None:
        spark_session.conf.unset(TZ)
    else:
        spark_session.conf.set(TZ, old)


def _views(spark) -> set[str]:
    return {t.name for t in spark.catalog.listTables() if t.isTemporary}


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    # (no mapping of Spark's text: a kept aware timestamp is written in Python's, `+00:00`, as numpy's;
    # before, Spark's CSV writer's ISO `...T00:00:00.000Z` was mapped here)
    df = df.astype(str)
    return df.sort_values(list(df.columns)).reset_index(drop=True)


# what the run released, not how it ran (as tests/safety/test_fuzz_engines.py's RUN_KEYS)
RUN_KEYS = {"engine", "plan", "runtime_seconds", "search_seconds", "input", "output", "verification", "report", "audit",
            "row_order", "engine_path", "job", "table", "summary", "table_scans", "rollups", "checks", "nodes_checked",
            "checks_by_projection"}  # fmt: skip


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _same_summary(a: dict, b: dict) -> None:
    for key in sorted((set(a) | set(b)) - RUN_KEYS):
        assert _same(a.get(key), b.get(key)), (key, a.get(key), b.get(key))


def _table(n: int = 48) -> pd.DataFrame:
    """Respondent ``pid``; ``sex``; ``at`` an aware quasi-identifier at 02:00 or 14:00 UTC (02:00 is
    the evening before in New York), two respondents a value, four a day (k = 3 generalizes it to
    its day); ``t`` an aware time column every 5 hours; ``seen`` an aware column released unchanged
    (two values, at midnight UTC)."""
    i = np.arange(n)
    day = pd.Timestamp("2021-01-02 02:00", tz="UTC")
    return pd.DataFrame({"pid": i % 16, "sex": np.where(i % 3 == 0, "F", "M"),
                         "at": day + pd.to_timedelta((i % 8) * 12, unit="h"),
                         "t": day + pd.to_timedelta(i * 5, unit="h"),
                         "seen": pd.Timestamp("2021-01-02", tz="UTC") + pd.to_timedelta(i % 2, unit="D")})  # fmt: skip


def _write_input(tmp: Path, fmt: str) -> Path:
    df = _table()
    path = tmp / f"in.{fmt}"
    if fmt == "parquet":
        df.to_parquet(path, index=False, row_group_size=16)
    else:  # the values' text (Python's, with the offset), as a CSV holds them
        df.astype(str).to_csv(path, index=False)
    return path


def _hierarchies(tmp: Path) -> Path:
    """``at`` -> its UTC day -> *, keyed by Python's text and by Spark's (UTC) text of the typed value;
    ``sex`` -> *."""
    hdir = tmp / "h"
    hdir.mkdir()
    rows = []
    for h in range(8):
        ts = pd.Timestamp("2021-01-02 02:00", tz="UTC") + pd.Timedelta(hours=12 * h)
        for text in (str(ts), ts.strftime("%Y-%m-%d %H:%M:%S")):
            rows.append(f"{text};{ts.strftime('%Y-%m-%d')};*")
    (hdir / "at.csv").write_text("\n".join(rows) + "\n")
    (hdir / "sex.csv").write_text("F;*\nM;*\n")
    return hdir


# ---- kanon ---------------------------------------------------------------------------------------


def _kanon(data, hdir: Path, out: Path | None, audit: Path | None = None):
    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize

    hier = load_hierarchies(hdir, ["sex", "at"])
    return kanonymize(data, ["sex", "at"], hier, 3, uid="pid", keep=["seen"], allow_identifier=["seen"],
                      out=None if out is None else str(out), audit=None if audit is None else str(audit))  # fmt: skip


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("how", ["source", "dataframe"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_kanon_on_a_caller_session_in_new_york_releases_what_numpy_does(tmp_path, ny, fmt, how, suffix):
    """kanon on a caller's session in New York time (``SparkSource.from_path(path, spark=)``, or a
    Spark DataFrame of the caller's): the same release (aware timestamps in UTC's text) and summary
    as the numpy path, the audit written and checked; the caller's session is still in New York
    time afterwards and holds none of tempanon's views."""
    from tempanon.lattice.source_spark import SparkSource

    inp, hdir = _write_input(tmp_path, fmt), _hierarchies(tmp_path)
    want = _kanon(str(inp), hdir, None)
    before = _views(ny)
    if how == "source":
        data = SparkSource.from_path(inp, spark=ny)
    elif fmt == "parquet":
        data = ny.read.parquet(str(inp))
    else:
        data = ny.read.csv(str(inp), header=True)
    out = tmp_path / "spark" / f"r{suffix}"
    # (a kept typed timestamp: written to a CSV release in numpy's text and checked through it, so the
    # CSV releases are audited too; before they were refused, docs/engines.md)
    audit = tmp_path / "steward" / "a.csv"
    try:
        got = _kanon(data, hdir, out, audit)
    finally:
        if how == "source":
            data.close()
    assert ny.conf.get(TZ) == NY
    assert _views(ny) == before
    _same_summary(want.summary(), got.summary())
    rel = _read_release(out)
    if suffix == ".parquet" and fmt == "parquet":  # typed (TIMESTAMP_MICROS, aware): pandas' text of them is Python's
        assert str(pd.read_parquet(out)["seen"].dtype) == "datetime64[us, UTC]"
    assert got.engine_checks["audit"].startswith("checked row by row")
    assert _read_audit(audit)[1]["release_row"].tolist() == list(range(1, len(rel) + 1))
    if suffix == ".csv" and fmt == "parquet":  # numpy's text of the instants, in UTC
        assert set(rel["seen"]) == {"2021-01-02 00:00:00+00:00", "2021-01-03 00:00:00+00:00"}
    pd.testing.assert_frame_equal(_sorted(rel), _sorted(want.table))


def test_kanon_release_read_back_on_a_caller_session(tmp_path, ny):
    """Without ``out`` the release comes back as a pandas table (nothing lazy in the caller's
    session): the same rows as numpy's, the instants of the kept column unchanged."""
    inp, hdir = _write_input(tmp_path, "parquet"), _hierarchies(tmp_path)
    want = _kanon(str(inp), hdir, None)
    got = _kanon(ny.read.parquet(str(inp)), hdir, None)
    assert ny.conf.get(TZ) == NY
    assert isinstance(got.table, pd.DataFrame)
    table = got.table.copy()
    assert str(table["seen"].dtype) == "datetime64[us, UTC]"  # (TIMESTAMP_MICROS: aware, in UTC; INT96 was naive)
    table["seen"] = table["seen"].map(str)
    pd.testing.assert_frame_equal(_sorted(table), _sorted(want.table))


def test_kanon_refused_on_a_caller_session_restores_its_time_zone(tmp_path, ny, monkeypatch):
    """A run that fails inside tempanon's work (a hierarchy without one of the values; and a run
    interrupted inside a query) leaves the caller's session in its own time zone."""
    from tempanon.errors import InputError
    from tempanon.lattice.source_spark import SparkSource

    inp, hdir = _write_input(tmp_path, "parquet"), _hierarchies(tmp_path)
    (hdir / "at.csv").write_text("\n".join((hdir / "at.csv").read_text().splitlines()[:-2]) + "\n")  # the last value gone
    src = SparkSource.from_path(inp, spark=ny)
    try:
        with pytest.raises(InputError, match="'at': 1 value"):
            _kanon(src, hdir, tmp_path / "o" / "r.csv")
        assert ny.conf.get(TZ) == NY
    finally:
        src.close()

    src = SparkSource.from_path(inp, spark=ny)
    seen = []

    def interrupted(sql, *args, **kwargs):
        seen.append(ny.conf.get(TZ))
        raise KeyboardInterrupt

    monkeypatch.setattr(ny, "sql", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            src.n_rows  # noqa: B018  (a query)
    finally:
        monkeypatch.undo()
        src.close()
    assert seen == ["UTC"] and ny.conf.get(TZ) == NY


# ---- timestamped ---------------------------------------------------------------------------------


def _timestamped_numpy(inp: Path, out: Path):
    """``timestamped --engine numpy``: the release (text) and the summary."""
    import json

    from typer.testing import CliRunner

    from tempanon.cli import app

    r = CliRunner().invoke(app, ["timestamped", str(inp), "--time", "t", "--uid", "pid", "--qi", "sex", "--k", "3",
                                 "--granularities", "day,week,month", "--keep", "seen", "--allow-identifier", "seen",
                                 "--out", str(out), "--summary", str(out.parent / "s.json"), "--engine", "numpy", "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    return _read_release(out), json.loads((out.parent / "s.json").read_text())


def _timestamped_spark(inp: Path, out: Path, audit: Path):
    from tempanon.temporal.outofcore import anonymize_timestamped_file

    res = anonymize_timestamped_file(inp, out=out, audit=audit, engine="spark", time="t", qi=["sex"], uid="pid", k=3,
                                     granularities=["day", "week", "month"], keep=["seen"], allow_identifier=["seen"],
                                     shuffle_seed=12345)  # fmt: skip
    return res.summary


# (a typed timestamp kept in a CSV release was refused by the timestamped path's verification on any
# session, Spark's CSV text not being CAST's; now written and checked in numpy's text: docs/engines.md)
@pytest.mark.parametrize("fmt, suffix", [("parquet", ".parquet"), ("parquet", ".csv"), ("csv", ".csv")])
def test_timestamped_on_the_callers_active_session_in_new_york(tmp_path, ny, fmt, suffix):
    """``anonymize_timestamped_file(engine="spark")`` while the caller's session (New York time) is
    the process's active one (``local_session`` returns it): the same release and summary as the
    numpy path, and, for one shuffle seed, the same rows in the same order as on a UTC session; the
    audit written and checked; the session is still in New York time afterwards."""
    inp = _write_input(tmp_path, fmt)
    want, want_summary = _timestamped_numpy(inp, tmp_path / "numpy" / f"o{suffix}")
    before = _views(ny)
    got_summary = _timestamped_spark(inp, tmp_path / "spark" / f"o{suffix}", tmp_path / "steward" / "a.csv")
    assert ny.conf.get(TZ) == NY
    assert _views(ny) == before
    _same_summary(want_summary, got_summary)
    assert got_summary["verification"]["audit"].startswith("checked row by row")
    rel = _read_release(tmp_path / "spark" / f"o{suffix}")
    pd.testing.assert_frame_equal(_sorted(rel), _sorted(want))
    # the same seed on a session in UTC: the same rows in the same order (the row hash reads UTC's text)
    ny.conf.set(TZ, "UTC")
    try:
        _timestamped_spark(inp, tmp_path / "utc" / f"o{suffix}", tmp_path / "steward" / "b.csv")
    finally:
        ny.conf.set(TZ, NY)
    pd.testing.assert_frame_equal(_read_release(tmp_path / "utc" / f"o{suffix}"), rel)
    assert (tmp_path / "steward" / "a.csv").read_text() == (tmp_path / "steward" / "b.csv").read_text()


def test_timestamped_in_memory_spark_on_the_callers_active_session(tmp_path, ny):
    """The in-memory timestamped search with ``engine="spark"`` (rows encoded on the driver) on the
    caller's active session: numpy's result, the session still in New York time."""
    from tempanon.temporal.api import anonymize_timestamped

    df = _table().astype({"at": str})
    kw = dict(time="t", qi=["sex"], uid="pid", k=3, granularities=["day", "week", "month"], shuffle_seed=3)
    want = anonymize_timestamped(df, engine="numpy", **kw)
    got = anonymize_timestamped(df, engine="spark", **kw)
    assert ny.conf.get(TZ) == NY
    assert got.chosen == want.chosen == "month"
    pd.testing.assert_frame_equal(got.released, want.released)


def test_local_session_leaves_a_running_session_as_it_is(ny):
    """``local_session`` on a process whose session runs (the caller's) returns it without setting
    tempanon's options on it (before: its time zone became UTC for good)."""
    from tempanon.lattice.source_spark import local_session

    ny.conf.set("spark.sql.shuffle.partitions", "3")
    try:
        assert local_session() is ny
        assert ny.conf.get(TZ) == NY and ny.conf.get("spark.sql.shuffle.partitions") == "3"
    finally:
        ny.conf.set("spark.sql.shuffle.partitions", "8")


# ---- the context manager -------------------------------------------------------------------------


def test_utc_session_sets_and_restores_the_callers_value(spark_session):
    """``utc_session``: UTC inside, the caller's value after (an unset value unset again), also on an
    error; nested and concurrent uses restore once, when the last one leaves."""
    from tempanon.lattice.source_spark import utc_session

    spark = spark_session
    old = spark.conf.get(TZ, None)
    try:
        spark.conf.set(TZ, NY)
        with utc_session(spark):
            assert spark.conf.get(TZ) == "UTC"
            assert spark.sql("SELECT CAST(TIMESTAMP '2021-01-02 00:00:00 UTC' AS STRING) AS s").collect()[0].s == "2021-01-02 00:00:00"
            with utc_session(spark):
                assert spark.conf.get(TZ) == "UTC"
            assert spark.conf.get(TZ) == "UTC"
        assert spark.conf.get(TZ) == NY
        with pytest.raises(ZeroDivisionError):
            with utc_session(spark):
                1 / 0  # noqa: B018
        assert spark.conf.get(TZ) == NY
        spark.conf.unset(TZ)
        with utc_session(spark):
            assert spark.conf.get(TZ) == "UTC"
        assert spark.conf.get(TZ, None) is None
        # two threads whose uses overlap (the first leaves while the second is inside)
        spark.conf.set(TZ, NY)
        inside, leave_first, seen = threading.Event(), threading.Event(), []

        def first():
            with utc_session(spark):
                inside.set()
                leave_first.wait(30)

        th = threading.Thread(target=first)
        th.start()
        inside.wait(30)
        with utc_session(spark):
            leave_first.set()
            th.join(30)
            seen.append(spark.conf.get(TZ))
        seen.append(spark.conf.get(TZ))
        assert seen == ["UTC", NY]
    finally:
        if old is None:
            spark.conf.unset(TZ)
        else:
            spark.conf.set(TZ, old)


def test_the_zone_reached_the_text_tempanon_reads(tmp_path, ny):
    """The premise of this file, on the bare session: the CSV writer's and CAST's text of an aware
    timestamp follow the session's zone (so a test on a UTC session could not see the fault)."""
    inp = _write_input(tmp_path, "parquet")
    row = ny.sql(f"SELECT CAST(seen AS STRING) AS s FROM parquet.`{inp}` ORDER BY seen LIMIT 1").collect()[0]
    assert row.s == "2021-01-01 19:00:00"
    ny.read.parquet(str(inp)).select("seen").limit(1).write.csv(str(tmp_path / "w"))
    assert re.match(r"2021-01-0[12]T19:00:00\.000-05:00", next((tmp_path / "w").glob("part-*")).read_text())
