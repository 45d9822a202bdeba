"""The timestamped file path's verification (``outofcore.verify_written``) with typed timestamp columns.

``verify_written`` compares the written release with the input's rows generalized; the expected text of a
typed timestamp column (a kept one, a quasi-identifier released unchanged, or one generalized by its
hierarchy, keyed by numpy's text) comes from the map of its distinct values to their text
(``SQLSource._timestamp_map``), joined by the typed value, not from the text expression per row. These
tests show that the check still decides: the release of numpy's rows is accepted (the same rows by input
line as numpy's), and a release with one such value changed is refused, nothing written.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempanon.errors import VerificationError

from .test_engine_temporal import _audited, _cli


def _input(tmp_path, n: int = 60):
    """Parquet: respondent ``pid`` (10), ``t`` (the time column, naive), ``seen`` (aware UTC with
    milliseconds, near-unique, a missing value), ``ts`` (aware America/New_York, 2 distinct hours
    given by the respondent, a quasi-identifier); hierarchies keyed by numpy's text in ``h/``."""
    i = np.arange(n)
    pid = i % 10
    base = pd.Timestamp("2021-03-01")
    seen = pd.Series(pd.Timestamp("2021-03-01", tz="UTC") + pd.to_timedelta(i * 3_600_123, unit="ms"))
    seen[7] = pd.NaT
    ts = pd.Timestamp("2021-03-13 20:00", tz="America/New_York") + pd.to_timedelta((pid % 2) * 24, unit="h")
    tab = pa.table({"pid": pa.array([f"p{p}" for p in pid]), "t": pa.array(base + pd.to_timedelta(i % 5, unit="D")),
                    "seen": pa.array(seen), "ts": pa.array(pd.Series(ts))})  # fmt: skip
    path = tmp_path / "in.parquet"
    pq.write_table(tab, path)
    h = tmp_path / "h"
    h.mkdir()
    keys = sorted({str(v) for v in pd.Series(ts)})
    (h / "ts.csv").write_text("".join(f'"{v}";{v[:7]};*\n' for v in keys))
    (tmp_path / "steward").mkdir()
    return path, h


def _run(path, tmp_path, tag, joint, h, engine="duckdb", suffix=".csv", **kw):
    from tempanon.hierarchy import load_hierarchies
    from tempanon.temporal.outofcore import anonymize_timestamped_file

    out = tmp_path / tag / f"out{suffix}"
    out.parent.mkdir(exist_ok=True)
    hier = {"hierarchies": load_hierarchies(h, ["ts"])} if joint else {}
    res = anonymize_timestamped_file(path, out=out, time="t", uid="pid", qi=["ts"], k=2, keep=["seen"],
                                     allow_identifier=["seen", "ts"], granularities=["day", "week", "month"],
                                     engine=engine, **hier, **kw)  # fmt: skip
    return res, out


@pytest.mark.parametrize("joint", [False, True])
@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_typed_timestamps_verified_and_released_as_numpy(tmp_path, engine, joint, request):
    """The same rows by input line as numpy's (``seen`` kept, ``ts`` released unchanged or through its
    hierarchy), the verification passed, the audit checked."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    path, h = _input(tmp_path)
    got = {}
    for eng in ("numpy", engine):
        out, audit = tmp_path / eng / "o.csv", tmp_path / "steward" / f"{eng}.csv"
        r = _cli(["timestamped", str(path), "--time", "t", "--uid", "pid", "--qi", "ts", "--k", "2", "--keep", "seen",
                  "--allow-identifier", "seen,ts", "--granularities", "day,week,month", "--out", str(out),
                  "--audit", str(audit), "--engine", eng, "-q", *(["--hierarchies", str(h)] if joint else [])])  # fmt: skip
        assert r.exit_code == 0, (eng, r.output)
        text = "".join(p.read_text() if i == 0 else p.read_text().split("\n", 1)[1] for i, p in enumerate(sorted(out.glob("part-*")))) \
            if out.is_dir() else out.read_text()  # fmt: skip
        got[eng] = _audited(text, audit)
    pd.testing.assert_frame_equal(got[engine], got["numpy"])
    assert "2021-03-01 01:00:00.123000+00:00" in set(got["numpy"]["seen"])
    assert set(got["numpy"]["ts"]) == ({"2021-03"} if joint else {"2021-03-13 20:00:00-05:00", "2021-03-14 21:00:00-04:00"})


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("joint", [False, True])
@pytest.mark.parametrize("column", ["seen", "ts"])
def test_a_changed_timestamp_is_refused(tmp_path, monkeypatch, joint, column, suffix):
    """A writer that changes one row's kept ``seen`` (to another instant) or its ``ts`` (released
    unchanged: to another instant; through the hierarchy: to another label): the verification
    refuses (with and without the audit), nothing is written. In a Parquet release the columns
    released unchanged are typed: their written text comes from the input's map by the typed value,
    and the changed instant is one no input row has."""
    import tempanon.temporal.outofcore as ooc

    path, h = _input(tmp_path)
    orig = ooc._write
    if column == "ts" and joint:
        other = "'2021-04'"
    else:
        other = "TIMESTAMPTZ '2000-01-01 00:00:00+00'"

    def corrupt(sq, query, out, parquet):
        orig(sq, f"SELECT * REPLACE (CASE WHEN row_number() OVER () = 5 THEN {other} ELSE {column} END AS {column}) "
                 f"FROM ({query})", out, parquet)

    monkeypatch.setattr(ooc, "_write", corrupt)
    for tag, kw in (("plain", {}), ("audited", {"audit": tmp_path / "steward" / "a.csv"})):
        with pytest.raises(VerificationError, match="a value was changed|not the generalization|rows generalizing to it|audit row"):
            _run(path, tmp_path, tag, joint, h, suffix=suffix, **kw)
        assert list((tmp_path / tag).iterdir()) == []
        assert list((tmp_path / "steward").iterdir()) == []
    monkeypatch.setattr(ooc, "_write", orig)
    res, out = _run(path, tmp_path, "plain", joint, h, suffix=suffix)
    assert out.exists() and res.summary["verification"]["verified_file"]


@pytest.mark.parametrize("command", ["kanon", "timestamped", "timestamped-joint"])
@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_parquet_release_checked_without_text_per_row(tmp_path, monkeypatch, engine, command, request):
    """A Parquet release keeps a timestamp released unchanged typed; its verification and the audit's
    row-by-row check take the written value's text from the input column's map by the typed value, so
    no query applies the text expression to a row of the release (``f``) or of the input (``s``) for
    ``seen`` (kept) or ``ts`` (a quasi-identifier, released unchanged by the time-only search; kanon
    keeps both). On main the checks did, on both sides. The rows by input line are numpy's."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    from tempanon.lattice.source_duckdb import duckdb_timestamp_text
    from tempanon.lattice.source_spark import python_timestamp_text

    from .test_engine_tsmap import _record

    text = duckdb_timestamp_text if engine == "duckdb" else python_timestamp_text
    path, h = _input(tmp_path)
    (tmp_path / "hs").mkdir()
    (tmp_path / "hs" / "pid.csv").write_text("".join(f"p{p};*\n" for p in range(10)))
    got, seen = {}, None
    for eng in ("numpy", engine):
        out, audit = tmp_path / eng / "o.parquet", tmp_path / "steward" / f"{eng}.csv"
        if command == "kanon":
            args = ["kanon", str(path), "--qi", "pid", "--hierarchies", str(tmp_path / "hs"), "--k", "2",
                    "--keep", "seen,ts", "--allow-identifier", "seen,ts"]  # fmt: skip
        else:
            args = ["timestamped", str(path), "--time", "t", "--uid", "pid", "--qi", "ts", "--k", "2", "--keep", "seen",
                    "--allow-identifier", "seen,ts", "--granularities", "day,week,month",
                    *(["--hierarchies", str(h)] if command.endswith("joint") else [])]  # fmt: skip
        if eng == engine:
            seen = _record(monkeypatch, engine)
        r = _cli([*args, "--out", str(out), "--audit", str(audit), "--engine", eng, "-q"])
        assert r.exit_code == 0, (eng, r.output)
        files = sorted(out.glob("part-*.parquet")) if out.is_dir() else [out]
        tab = pa.concat_tables([pq.read_table(f) for f in files])
        assert tab.schema.field("seen").type != pa.string() or eng == "numpy"  # typed on the engines
        lines = pd.read_csv(audit, comment="#", dtype=str)
        df = tab.to_pandas()
        for c in ("seen", "ts"):  # the instants (an engine writes a New York column in UTC; numpy: its text)
            if not (command.endswith("joint") and c == "ts"):
                df[c] = pd.to_datetime(df[c], utc=True, format="ISO8601")
        df = df.astype(object).where(df.notna(), None).map(lambda v: "" if v is None else str(v))
        df.index = lines.sort_values("release_row", key=lambda s: s.astype(int))["input_line"].astype(int).to_numpy()
        got[eng] = df.sort_index()[sorted(df.columns)]
    pd.testing.assert_frame_equal(got[engine], got["numpy"])
    per_row = []
    for c, kind, zone in (("seen", "timestamp", "UTC"), ("ts", "timestamp", "America/New_York")):
        q = f'"{c}"' if engine == "duckdb" else f"`{c}`"
        per_row += [text(f"{a}.{q}", kind, zone) for a in ("s", "f")]
    bad = [s for s in seen if any(e in s for e in per_row)]
    assert not bad, [s[:300] for s in bad]
