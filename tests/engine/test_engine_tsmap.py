"""The joint search's keys and the report's measures of a typed timestamp column, without its text per row.

``timestamped FILE --hierarchies --engine duckdb|spark``: a typed timestamp quasi-identifier with a
hierarchy is keyed by its typed value, each distinct value given the code of its text from the map of
its distinct values to their text (``SQLSource._timestamp_map``), not by the text expression per row
(``SQLSource.text_expr``; the search's bottom frequency set and the release's joins). ``--report``
(``outofcore_report.measure_written``) groups and counts a typed timestamp column (the time column and
the quasi-identifiers) by its typed value, the text being a bijection of it within one column. The
queries are recorded: none applies the text expression to the input's rows. The release, the audit
and the report are numpy's (an aware quasi-identifier across the autumn DST change, where two
instants share one wall clock, and a naive one with microseconds, each with a missing value).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .test_engine_temporal import _audited, _cli
from .test_engine_temporal_report import _same

ENGINES = ["duckdb", pytest.param("spark", marks=pytest.mark.spark)]


def _input(tmp_path, n: int = 240):
    """Parquet written with pyarrow: respondent ``pid`` (60), ``sex``, ``t`` (the time column, aware UTC),
    ``ny`` (aware America/New_York, 16 distinct instants around 2021-11-07's fall back: 01:00-01:59
    happens twice, at -04:00 and -05:00), ``naive`` (naive with microseconds, 12 distinct values), a
    missing value in ``ny`` and ``naive``; hierarchies keyed by numpy's text (``str``) in ``h/``."""
    rng = np.random.default_rng(7)
    i = np.arange(n)
    pid = i % 60
    t = pd.Timestamp("2021-11-01", tz="UTC") + pd.to_timedelta(rng.integers(0, 24 * 20, n), unit="h")
    ny = (pd.Timestamp("2021-11-07 04:30", tz="UTC") + pd.to_timedelta(rng.integers(0, 16, n) * 30, unit="min")).tz_convert(
        "America/New_York")  # fmt: skip
    naive = pd.Timestamp("2021-11-05 08:00") + pd.to_timedelta(rng.integers(0, 12, n) * 36_000_000_123, unit="us")
    ny, naive = pd.Series(ny), pd.Series(naive)
    ny[5] = pd.NaT
    naive[9] = pd.NaT
    tab = pa.table({"pid": pa.array([f"p{p}" for p in pid]), "sex": pa.array(np.where(pid % 3 == 0, "F", "M")),
                    "t": pa.array(pd.Series(t)), "ny": pa.array(ny), "naive": pa.array(naive)})  # fmt: skip
    path = tmp_path / "in.parquet"
    pq.write_table(tab, path, row_group_size=60)
    schema = pq.read_schema(path)
    assert schema.field("ny").type == pa.timestamp("us", tz="America/New_York")
    assert schema.field("naive").type == pa.timestamp("us")
    h = tmp_path / "h"
    h.mkdir()
    for c, s in (("ny", ny), ("naive", naive)):
        keys = sorted({"" if pd.isna(v) else str(v) for v in s})
        (h / f"{c}.csv").write_text("".join(f'"{v}";{v[:13] or "?"};{v[:10] or "?"};*\n' for v in keys))
    texts = {str(v) for v in ny.dropna()}
    assert "2021-11-07 01:30:00-04:00" in texts and "2021-11-07 01:30:00-05:00" in texts  # one wall clock, two instants
    (tmp_path / "steward").mkdir()
    return path, h


def _run(path, h, tmp_path, eng, k="3"):
    d = tmp_path / eng
    d.mkdir()
    out, audit = d / "o.csv", tmp_path / "steward" / f"{eng}-audit.csv"
    r = _cli(["timestamped", str(path), "--time", "t", "--uid", "pid", "--qi", "sex,ny,naive", "--k", k,
              "--hierarchies", str(h), "--granularities", "day,week,month", "--max-suppression", "0.05",
              "--shuffle-seed", "5", "--out", str(out), "--audit", str(audit), "--summary", str(d / "s.json"),
              "--report", str(d / "r.html"), "--engine", eng, "-q"])  # fmt: skip
    assert r.exit_code == 0, (eng, r.output)
    text = "".join(p.read_text() if i == 0 else p.read_text().split("\n", 1)[1] for i, p in enumerate(sorted(out.glob("part-*")))) \
        if out.is_dir() else out.read_text()  # fmt: skip
    return _audited(text, audit), json.loads((d / "s.json").read_text()), (d / "r.html").read_text()


class _R:
    def __init__(self, t):
        self.t = t

    def render(self):
        return self.t


@pytest.mark.parametrize("engine", ENGINES)
def test_joint_search_and_report_as_numpy(tmp_path, engine, request):
    """The joint search with both timestamp quasi-identifiers generalized by their hierarchies: numpy's
    node, rows by input line and report (risk, classes, losses: the distinct values a released value
    covers, the missing value one of them)."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    path, h = _input(tmp_path)
    rows, summ, rep = {}, {}, {}
    for eng in ("numpy", engine):
        rows[eng], summ[eng], rep[eng] = _run(path, h, tmp_path, eng)
    pd.testing.assert_frame_equal(rows[engine], rows["numpy"])
    for s in summ.values():  # the file path's own plan, verifier and row order; the paths and the clock
        for key in ("plan", "verification", "row_order", "report", "search_seconds"):
            s.pop(key, None)
    assert summ[engine] == summ["numpy"]
    # both timestamp quasi-identifiers generalized: the report counts the distinct input values (the
    # missing one too) each released value covers
    assert summ["numpy"]["node"][2] > 0 and summ["numpy"]["node"][3] > 0, summ["numpy"]["node"]
    _same(_R(rep["numpy"]), _R(rep[engine]))


def _record(monkeypatch, engine):
    """Every SQL text the engine runs: DuckDB's source's ``_arrow`` and ``_exec`` (``_rows``, ``_copy`` and
    ``_materialize`` go through them), every ``SparkSession.sql`` on Spark."""
    seen: list[str] = []
    if engine == "duckdb":
        from tempanon.lattice.source_duckdb import DuckDBSource as cls

        names = ("_arrow", "_exec")
    else:
        from pyspark.sql import SparkSession as cls

        names = ("sql",)
    for name in names:
        orig = getattr(cls, name)

        def rec(self, sql, *a, _orig=orig, **kw):
            seen.append(sql)
            return _orig(self, sql, *a, **kw)

        monkeypatch.setattr(cls, name, rec)
    return seen


@pytest.mark.parametrize("engine", ENGINES)
def test_no_timestamp_text_per_input_row(tmp_path, monkeypatch, engine, request):
    """No query of the joint search, its release, verification, audit check and report applies the text
    expression of a typed timestamp column (the time column, both quasi-identifiers) to the input's rows
    ``s``: only the maps compute it, once per distinct value. (On main the search's bottom frequency set
    and the release joined ``ny`` and ``naive`` by it, and the report grouped all three by it.)"""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    from tempanon.lattice.source_duckdb import duckdb_timestamp_text
    from tempanon.lattice.source_spark import python_timestamp_text

    text = duckdb_timestamp_text if engine == "duckdb" else python_timestamp_text
    path, h = _input(tmp_path)
    seen = _record(monkeypatch, engine)
    _run(path, h, tmp_path, engine)
    per_row = {c: text(f"s.{q}", kind, zone) for c, q, kind, zone in (
        ("t", '"t"' if engine == "duckdb" else "`t`", "timestamp", "UTC"),
        ("ny", '"ny"' if engine == "duckdb" else "`ny`", "timestamp", "America/New_York"),
        ("naive", '"naive"' if engine == "duckdb" else "`naive`", "timestamp_ntz", None))}  # fmt: skip
    assert any("strftime" in s or "date_format" in s for s in seen)  # the maps' (the recorder sees the text)
    bad = {c: [s for s in seen if e in s] for c, e in per_row.items()}
    assert not any(bad.values()), {c: [s[:300] for s in v] for c, v in bad.items() if v}


@pytest.mark.parametrize("engine", ENGINES)
def test_screening_of_kept_timestamps_per_distinct_value(tmp_path, monkeypatch, engine, request):
    """Identifier screening of typed timestamp columns released unchanged (``kanon --keep``: ``_screen``,
    ``SQLSource.distinct_values``) takes their text once per distinct value: no ``SELECT DISTINCT`` applies
    the text expression to the input's rows ``s`` (on main the screening's query did, one per column). The
    verdicts are numpy's: refused alike without ``--allow-identifier`` (the same message), and with it the
    same rows by input line."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    from tempanon.lattice.source_duckdb import duckdb_timestamp_text
    from tempanon.lattice.source_spark import python_timestamp_text

    from .test_engine_audit import _by_line

    text = duckdb_timestamp_text if engine == "duckdb" else python_timestamp_text
    path, _ = _input(tmp_path)
    (tmp_path / "hs").mkdir()
    (tmp_path / "hs" / "sex.csv").write_text("F;*\nM;*\n")
    kept = ["t", "ny", "naive"]

    def kanon(eng, tag, allow):
        d = tmp_path / f"{eng}-{tag}"
        d.mkdir()
        extra = ["--allow-identifier", ",".join(kept)] if allow else []
        out, audit = d / "o.csv", tmp_path / "steward" / f"{eng}-{tag}.csv"
        r = _cli(["kanon", str(path), "--k", "2", "--uid", "pid", "--qi", "sex", "--hierarchies", str(tmp_path / "hs"),
                  "--keep", ",".join(kept), *extra, "--out", str(out), "--audit", str(audit), "--engine", eng, "-q"])  # fmt: skip
        return r, out, audit

    # a timestamp column named like a time ('t'), near-unique or not: whatever numpy decides, the engine decides
    refused = {eng: kanon(eng, "plain", False)[0] for eng in ("numpy", engine)}
    assert refused[engine].exit_code == refused["numpy"].exit_code
    if refused["numpy"].exit_code != 0:
        assert refused[engine].output.strip().splitlines()[-1] == refused["numpy"].output.strip().splitlines()[-1]
    rows = {}
    seen = None
    for eng in ("numpy", engine):
        if eng == engine:
            seen = _record(monkeypatch, engine)
        r, out, audit = kanon(eng, "allowed", True)
        assert r.exit_code == 0, (eng, r.output)
        rows[eng] = _by_line(out, audit)
    pd.testing.assert_frame_equal(rows[engine], rows["numpy"])
    per_row = {c: text(f"s.{q}", kind, zone) for c, q, kind, zone in (
        ("t", '"t"' if engine == "duckdb" else "`t`", "timestamp", "UTC"),
        ("ny", '"ny"' if engine == "duckdb" else "`ny`", "timestamp", "America/New_York"),
        ("naive", '"naive"' if engine == "duckdb" else "`naive`", "timestamp_ntz", None))}  # fmt: skip
    distinct = [s for s in seen if "SELECT DISTINCT" in s.upper()]
    assert distinct  # the screening's queries were recorded
    bad = {c: [s for s in distinct if e in s] for c, e in per_row.items()}
    assert not any(bad.values()), {c: [s[:300] for s in v] for c, v in bad.items() if v}
