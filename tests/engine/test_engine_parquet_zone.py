"""A Parquet release has the same Arrow schema on every engine: an aware timestamp column in its input's
zone, every field nullable.

Parquet stores an aware timestamp as an instant (``isAdjustedToUTC``); the zone's name is Arrow's, kept
in the file's ``ARROW:schema`` metadata. The numpy path writes a kept ``America/New_York`` column with
pyarrow in that zone; DuckDB and Spark wrote the same instants as ``tz=UTC``, and DuckDB 2 wrote a column
without missing values ``REQUIRED`` (``not null``) where pandas and pyarrow write every field nullable.
Now DuckDB writes every column nullable (a projection) and both engines' written files are given the
input's zones (``tempanon.data.io.zone_written_parquet``: rewritten row group by row group, only when the
schema differs) before the release is verified on the written file. The oracle for values is the input
file, row by row through the steward's audit; a rewrite that changed an instant is refused.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .test_engine_parquet_types import KEEP as TYPED
from .test_engine_parquet_types import _input as _typed_input
from .test_engine_parquet_types import _lines, _run

ENGINES = ["duckdb", pytest.param("spark", marks=pytest.mark.spark)]
KEEP = [*TYPED, "ny2", "utc2"]


def _input(tmp_path):
    """The typed input of ``test_engine_parquet_types`` (int64, double, int64 with a missing value,
    decimal, date, naive ``us`` and ``ms``, aware UTC and America/New_York with a missing value, string,
    boolean) and aware New York and UTC columns without a missing value (``ny2``, ``utc2``)."""
    inp = _typed_input(tmp_path)
    table = pq.read_table(inp)
    hours = [pd.Timestamp("2021-11-07 04:30", tz="UTC") + pd.Timedelta(minutes=37 * x) for x in range(table.num_rows)]
    table = table.append_column("ny2", pa.array(hours, pa.timestamp("us", tz="America/New_York")))
    table = table.append_column("utc2", pa.array(hours, pa.timestamp("us", tz="UTC")))
    pq.write_table(table, inp)
    return inp


def _files(out):
    """The Parquet files of a release: the file, or Spark's part files in name order."""
    return sorted(out.glob("part-*.parquet")) if out.is_dir() else [out]


def _schema(path) -> pa.Schema:
    return pq.read_schema(path).remove_metadata()


def _by_line(out, audit, cmd) -> dict[int, tuple]:
    """Every released row's values (Python objects; an aware timestamp with its zone) by its input line."""
    rel = pa.concat_tables([pq.read_table(p) for p in _files(out)])
    lines = _lines(cmd, audit)
    assert len(lines) == rel.num_rows > 0
    rows = rel.to_pylist()
    return {ln: tuple((k, _plain(v)) for k, v in row.items()) for ln, row in zip(lines, rows)}


def _plain(v):
    if isinstance(v, float) and v != v:
        return None
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.isoformat(), str(v.tzinfo)  # the wall clock, its offset and the zone's name
    return v


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cmd", ["kanon", "timestamped"])
def test_release_schema_and_values_are_numpys(tmp_path, engine, cmd, request):
    """``kanon`` / ``timestamped --keep`` of every typed column into a Parquet release: the engine's
    release schema (every part file's, on Spark) equals numpy's field by field — order, names, types,
    units, zones (``America/New_York`` kept), nullability (every field nullable) — and every released
    row, found through the audit, holds numpy's values for its input line, the aware ones in the same
    zone. On main DuckDB and Spark wrote ``ny`` and ``ny2`` as ``tz=UTC`` and DuckDB wrote the columns
    without a missing value ``not null``."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp = _input(tmp_path)
    schemas, rows = {}, {}
    for eng in ("numpy", engine):
        out, audit = _run(cmd, inp, tmp_path, eng, keep=KEEP)
        schemas[eng] = [_schema(p) for p in _files(out)]
        rows[eng] = _by_line(out, audit, cmd)
    (want,) = schemas["numpy"]
    assert want.field("ny").type == pa.timestamp("us", tz="America/New_York")
    assert want.field("ny2").type == pa.timestamp("us", tz="America/New_York") and want.field("utc2").type.tz == "UTC"
    assert all(f.nullable for f in want)
    assert schemas[engine], engine
    for got in schemas[engine]:
        assert got.names == want.names, engine
        for f, g in zip(want, got):
            assert g.equals(f), (engine, g, f)
        assert got.equals(want)
    assert rows[engine] == rows["numpy"]


@pytest.mark.parametrize("engine, how", [("duckdb", "metadata"), ("duckdb", "rewrite"),
                                         pytest.param("spark", "rewrite", marks=pytest.mark.spark)])
@pytest.mark.parametrize("cmd", ["kanon", "timestamped"])
def test_a_changed_instant_in_a_rewritten_release_is_refused(tmp_path, monkeypatch, engine, how, cmd, request):
    """The written schema's check (and rewrite) comes before the verification of the written file: a
    ``zone_written_parquet`` that also moves one row's ``ny2`` to an instant no input row has is refused
    by the checks of the file (kanon's audit row by row, timestamped's verification), exit 3, nothing
    written; the same run with the real one is accepted. DuckDB writes the zones in the file's
    ``ARROW:schema`` (``how="metadata"``: the check finds nothing to rewrite) or, without that metadata
    (``how="rewrite"``, as for Spark's part files), the file is rewritten. On main nothing checked or
    rewrote the file."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    import tempanon.data.io as tio
    from tempanon.lattice.source_duckdb import DuckDBSource

    from .test_engine_temporal import _cli

    real = tio.zone_written_parquet
    calls = []

    def faulty(path, zones, types=None, texts=None, first_row=0):
        done = real(path, zones, types, texts, first_row)
        table = pq.read_table(path)
        if table.num_rows and not calls:
            i = table.schema.get_field_index("ny2")
            moved = pa.array([dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)] + table.column(i).to_pylist()[1:],
                             table.schema.field(i).type)  # fmt: skip
            pq.write_table(table.set_column(i, table.schema.field(i), moved), path)
            calls.append((path, done))
        return done

    if how == "rewrite" and engine == "duckdb":
        monkeypatch.setattr(DuckDBSource, "_zone_metadata", lambda self, query: "")
    inp = _input(tmp_path)
    monkeypatch.setattr(tio, "zone_written_parquet", faulty)
    (tmp_path / engine).mkdir()
    out, audit = tmp_path / engine / f"{cmd}.parquet", tmp_path / "steward" / f"{engine}-{cmd}.csv"
    if cmd == "kanon":
        args = ["kanon", str(inp), "--qi", "sex", "--hierarchies", str(tmp_path / "h")]
    else:
        args = ["timestamped", str(inp), "--time", "t", "--qi", "sex,grp"]
    args += ["--k", "2", "--uid", "pid", "--keep", ",".join(KEEP), "--allow-identifier", ",".join(KEEP),
             "--out", str(out), "--audit", str(audit), "--engine", engine, "-q"]  # fmt: skip
    r = _cli(args)
    assert calls and calls[0][1] is (how == "rewrite"), calls  # checked (rewritten for its zone), then tampered with
    assert r.exit_code == 3, r.output
    assert "Traceback" not in r.output
    assert list((tmp_path / engine).iterdir()) == [] and list((tmp_path / "steward").iterdir()) == []
    monkeypatch.setattr(tio, "zone_written_parquet", real)
    r = _cli(args)
    assert r.exit_code == 0, r.output
    assert all(_schema(p).field("ny2").type.tz == "America/New_York" for p in _files(out))


def test_zone_written_parquet_rewrites_only_what_differs(tmp_path):
    """The helper: a file already in the input's zones and nullable is left alone (not rewritten); a
    DuckDB-written file (``tz=UTC``, a ``REQUIRED`` column) is rewritten with the same row groups, the
    same instants in the input's zone, every field nullable, and its key-value metadata kept; a column
    not named in ``zones`` keeps its zone."""
    import duckdb

    from tempanon.data.io import zone_written_parquet

    path = tmp_path / "d.parquet"
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"COPY (SELECT i, TIMESTAMPTZ '2021-03-14 06:00:00+00' + i * INTERVAL 1 HOUR AS ny, "
                f"TIMESTAMPTZ '2021-01-01 00:00:00+00' AS other FROM range(300000) r(i)) TO '{path}' "
                f"(FORMAT parquet, ROW_GROUP_SIZE 100000, KV_METADATA {{origin: 'test'}})")  # fmt: skip
    con.close()
    before = pq.read_table(path)
    meta = pq.ParquetFile(path).metadata
    assert not before.schema.field("other").nullable and before.schema.field("ny").type.tz == "UTC"
    assert zone_written_parquet(path, {"ny": "America/New_York"}) is True
    after = pq.read_table(path)
    f = pq.ParquetFile(path)
    assert f.metadata.num_row_groups == meta.num_row_groups > 1
    assert [f.metadata.row_group(i).num_rows for i in range(f.metadata.num_row_groups)] == \
        [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]  # fmt: skip
    assert after.schema.field("ny").type == pa.timestamp("us", tz="America/New_York")
    assert after.schema.field("other").type == pa.timestamp("us", tz="UTC")
    assert all(f.nullable for f in after.schema)
    assert f.metadata.metadata[b"origin"] == b"test"
    assert after.column("ny").cast(pa.int64()).equals(before.column("ny").cast(pa.int64()))
    assert after.column("i").equals(before.column("i")) and after.column("other").equals(before.column("other"))
    stamp = path.stat().st_mtime_ns
    assert zone_written_parquet(path, {"ny": "America/New_York"}) is False
    assert path.stat().st_mtime_ns == stamp and [p.name for p in tmp_path.iterdir()] == ["d.parquet"]
