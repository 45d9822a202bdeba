"""DuckDB blames the input only when the file it failed to read is the input.

``input_error_message`` took a bare ``duckdb.Error`` (DuckDB's Parquet reader: "TProtocolException:
Exceeded size limit", "don't know what type"), or any error mentioning "magic bytes" or the input's name,
on a Parquet input as the input's: when the release DuckDB had just written failed to read back for the
verification, the run ended with exit 2 "cannot read in.parquet: ... (a damaged Parquet file?)" about an
intact input. Now, as ``spark_input_error`` does on Spark, the input is blamed when the error names it
(in its text, not in the query DuckDB echoes), not when it names another file, and for a bare error only
if the input does not read through; a damaged file that is not the input is the engine's failure (exit
4, "the DuckDB engine failed: cannot read ... (not the input)"). A damaged input is still exit 2
(``tests/engine/test_engine_bad_files.py``, and below with a Parquet release).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.lattice import source_duckdb
from tempanon.lattice.source_duckdb import DuckDBSource, input_error_message

runner = CliRunner()


def _input(tmp_path, damaged: bool = False):
    """``in.parquet``: ``sex``, ``age`` (text), ``pid``, 60 rows; ``damaged``: the ``age`` column's first
    page header overwritten (DuckDB: a bare ``duckdb.Error``)."""
    n = 60
    p = tmp_path / "in.parquet"
    pq.write_table(pa.table({"sex": ["F", "M"] * (n // 2), "age": [str(20 + i % 6) for i in range(n)], "pid": list(range(n))}), p)
    if damaged:
        _damage_pages(p)
    h = tmp_path / "h"
    h.mkdir(exist_ok=True)
    (h / "age.csv").write_text("".join(f"{20 + i};2*;*\n" for i in range(6)))
    (h / "sex.csv").write_text("F;*\nM;*\n")
    return p


def _damage_pages(path) -> None:
    """Overwrite the first page header of every column of the Parquet file ``path`` (its footer intact)."""
    md = pq.ParquetFile(path).metadata
    data = bytearray(path.read_bytes() if hasattr(path, "read_bytes") else open(path, "rb").read())
    for j in range(md.num_columns):
        c = md.row_group(0).column(j)
        start = c.dictionary_page_offset or c.data_page_offset
        data[start:start + 8] = b"\x5a" * 8
    with open(path, "wb") as fh:
        fh.write(bytes(data))


def _truncate(path) -> None:
    with open(path, "rb") as fh:
        data = fh.read()
    with open(path, "wb") as fh:
        fh.write(data[: len(data) // 2])


@pytest.fixture(params=["pages", "truncated"])
def broken_readback(request, monkeypatch):
    """The release DuckDB wrote is damaged just before the verification reads it back: its pages
    (a bare ``duckdb.Error``, no file named) or its end (``No magic bytes found at end of file
    '<the release's temporary file>'``)."""
    real = DuckDBSource._read_written
    damage = _damage_pages if request.param == "pages" else _truncate

    def read_written(self, path, parquet):
        if parquet:
            damage(path)
        return real(self, path, parquet)

    monkeypatch.setattr(DuckDBSource, "_read_written", read_written)
    return request.param


def _kanon(tmp_path, src, out):
    return runner.invoke(app, ["kanon", str(src), "--qi", "sex,age", "--hierarchies", str(tmp_path / "h"), "--k", "2",
                               "--out", str(out), "--engine", "duckdb", "-q"])  # fmt: skip


def test_kanon_release_read_back_failure_is_the_engines(tmp_path, broken_readback):
    src = _input(tmp_path)
    out = tmp_path / "out.parquet"
    r = _kanon(tmp_path, src, out)
    msg = " ".join(r.output.split())
    assert r.exit_code == 4, msg
    assert "the DuckDB engine failed: cannot read" in msg and "(not the input)" in msg and "nothing was written" in msg, msg
    assert "cannot read " + str(src) not in msg and "damaged Parquet file?" not in msg, msg
    if broken_readback == "truncated":  # the file DuckDB names is the release's temporary file, beside --out
        assert str(tmp_path) in msg and "in.parquet" not in msg, msg
    assert "Traceback" not in msg and not out.exists()


def test_timestamped_release_read_back_failure_is_the_engines(tmp_path, broken_readback):
    n = 60
    src = tmp_path / "ts.parquet"
    pq.write_table(pa.table({"pid": [i % 20 for i in range(n)], "sex": ["F", "M"] * (n // 2),
                             "t": [f"2021-01-{1 + i % 28:02d} 10:00" for i in range(n)]}), src)  # fmt: skip
    out = tmp_path / "out.parquet"
    r = runner.invoke(app, ["timestamped", str(src), "--time", "t", "--uid", "pid", "--qi", "sex", "--k", "2",
                            "--granularities", "day,month", "--out", str(out), "--engine", "duckdb", "-q"])  # fmt: skip
    msg = " ".join(r.output.split())
    assert r.exit_code == 4, msg
    assert "the DuckDB engine failed: cannot read" in msg and "ts.parquet" not in msg, msg
    assert "Traceback" not in msg and not out.exists()


def test_a_damaged_input_is_still_the_inputs(tmp_path):
    """A damaged input page with a Parquet release: exit 2 naming the input (the probe of the input fails)."""
    src = _input(tmp_path, damaged=True)
    out = tmp_path / "out.parquet"
    r = _kanon(tmp_path, src, out)
    msg = " ".join(r.output.split())
    assert r.exit_code == 2, msg
    assert f"cannot read {src}" in msg and "damaged Parquet file?" in msg, msg
    assert not out.exists()


def test_the_file_named_in_the_error_decides(tmp_path):
    """The error's text, not the query DuckDB echoes under it (``LINE 1: ...``), names the failing file:
    a truncated release named in the text is not the input's even when the query also reads the input;
    the input named there is; a bare error is the input's only when the input does not read through."""
    import duckdb

    good = _input(tmp_path)
    other = tmp_path / "release.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), other)
    _truncate(other)
    con = duckdb.connect()
    with pytest.raises(duckdb.Error) as err:
        con.execute(f"SELECT * FROM read_parquet('{good}') i, read_parquet('{other}') r").fetchall()
    assert "release.parquet" in str(err.value) and "LINE 1" in str(err.value)
    assert input_error_message(str(good), err.value) is None
    assert "cannot read" in input_error_message(str(other), err.value)
    echoed = duckdb.InvalidInputException(f"Invalid Input Error: No magic bytes found at end of file '{other}'\n\n"
                                          f"LINE 1: SELECT * FROM read_parquet('{good}') i, read_parquet('{other}') r")  # fmt: skip
    assert input_error_message(str(good), echoed) is None  # (main: the input's name in the echoed query blamed it)
    bare = duckdb.Error("TProtocolException: Exceeded size limit")
    assert input_error_message(str(good), bare) is None  # the input reads through
    bad = tmp_path / "bad"
    bad.mkdir()
    damaged = _input(bad, damaged=True)
    assert input_error_message(str(damaged), bare).startswith(f"cannot read {damaged}: TProtocolException")
    assert isinstance(source_duckdb.EngineFailure("x"), Exception) and source_duckdb.EngineFailure.exit_code == 4
