"""A Parquet input with a column Spark cannot read (a timestamp in nanoseconds, a time of day) is refused
with ``--engine spark`` before Spark starts: exit 2 naming the columns and the ways out, nothing written.
On main Spark started, failed the whole read (``PARQUET_TYPE_ILLEGAL``, ``UNSUPPORTED_TIME_TYPE``) with
a Java stack trace on the console, and tempanon exited 4 ("the engine could not finish"). The other
engines read such files, as the message says."""

from __future__ import annotations

import datetime

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .test_engine_temporal import _cli


def _files(tmp_path):
    n = 40
    t = pd.Series(pd.Timestamp("2021-01-02") + pd.to_timedelta(np.arange(n) * 3_600_000_000_007, unit="ns"))
    base = {"pid": [f"p{i % 10}" for i in range(n)], "sex": ["F", "M"] * (n // 2)}
    ns = tmp_path / "ns.parquet"
    pq.write_table(pa.table({**base, "t": pa.array(t, pa.timestamp("ns")), "seen": pa.array(t, pa.timestamp("ns", tz="UTC"))}), ns)
    tm = tmp_path / "tm.parquet"
    pq.write_table(pa.table({**base, "t": pa.array(t.dt.floor("us"), pa.timestamp("us")),
                             "tt": pa.array([datetime.time(1, 2, 3)] * n, pa.time64("us"))}), tm)  # fmt: skip
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    return ns, tm


def _kanon(path, tmp_path, eng, tag):
    out = tmp_path / f"{eng}-{tag}" / "o.csv"
    out.parent.mkdir()
    return _cli(["kanon", str(path), "--qi", "sex", "--hierarchies", str(tmp_path / "h"), "--k", "2", "--uid", "pid",
                 "--out", str(out), "--engine", eng, "-q"]), out  # fmt: skip


def _timestamped(path, tmp_path, eng, tag):
    out = tmp_path / f"{eng}-{tag}" / "o.csv"
    out.parent.mkdir()
    return _cli(["timestamped", str(path), "--time", "t", "--uid", "pid", "--qi", "sex", "--k", "2",
                 "--granularities", "day,week,month", "--out", str(out), "--engine", eng, "-q"]), out  # fmt: skip


@pytest.mark.parametrize("run", [_kanon, _timestamped])
def test_spark_refuses_columns_it_cannot_read_before_it_starts(tmp_path, monkeypatch, run):
    import tempanon.lattice.source_spark as ss

    def no_session(*a, **kw):
        raise AssertionError("Spark was started for an input it cannot read")

    monkeypatch.setattr(ss, "local_session", no_session)
    ns, tm = _files(tmp_path)
    for path, tag, names in ((ns, "ns", ["'t' (timestamp in nanoseconds)", "'seen' (timestamp in nanoseconds)"]),
                             (tm, "tm", ["'tt' (time of day, time64[us])"])):  # fmt: skip
        r, out = run(path, tmp_path, "spark", tag)
        assert r.exit_code == 2, r.output
        text = " ".join(r.output.split())
        for name in names:
            assert name in text, text
        assert "--engine duckdb" in text and "Traceback" not in r.output
        assert not out.exists() and list(out.parent.iterdir()) == []


@pytest.mark.parametrize("run", [_kanon, _timestamped])
@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_the_other_engines_read_them(tmp_path, run, engine):
    """The message's way out holds: the default engine and DuckDB release both files (the nanosecond time
    column as the time column of ``timestamped``)."""
    ns, tm = _files(tmp_path)
    for path, tag in ((ns, "ns"), (tm, "tm")):
        r, out = run(path, tmp_path, engine, tag)
        assert r.exit_code == 0, (engine, tag, r.output)
        assert out.exists()
