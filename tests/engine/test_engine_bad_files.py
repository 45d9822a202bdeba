"""A damaged input file gets the same exit-2 message on every engine, naming the file and, for a CSV,
the line; never a traceback, a Java stack trace, or a release.

Found on main (2026-11-27): a CSV line with fewer fields than the header was read by numpy (pandas
fills it with missing values) and by Spark (its PERMISSIVE reader; a line with *more* fields had its
extra fields dropped, exit 0) where DuckDB refused it; a byte that is not UTF-8 in DuckDB's first
64 KB ended the run with a Python traceback (exit 1); a damaged Parquet page ended it with a traceback
on DuckDB and with 290 lines of Java and "An error occurred while calling o72.getResult." (exit 4)
on Spark; DuckDB's sniffer refused a line with an extra field in 20 lines of "Possible fixes", no
line number."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.lattice.source_duckdb import csv_error_message, csv_line_error
from tempanon.lattice.source_spark import spark_failure_line, spark_input_error

runner = CliRunner()

ROWS = 60


def _rows() -> list[str]:
    return [f"{'MF'[i % 2]},{20 + i % 7}" for i in range(ROWS)]


def _hierarchies(tmp_path):
    h = tmp_path / "h"
    h.mkdir(exist_ok=True)
    (h / "sex.csv").write_text("M;*\nF;*\n")
    (h / "age.csv").write_text("".join(f"{a};*\n" for a in range(20, 27)))
    return h


def _csv(tmp_path, bad_line: int, text: str | bytes) -> tuple:
    """``t.csv``: header ``sex,age`` and ROWS lines, line ``bad_line`` (the header is line 1) replaced."""
    lines = [b"sex,age"] + [r.encode() for r in _rows()]
    lines[bad_line - 1] = text if isinstance(text, bytes) else text.encode()
    p = tmp_path / "t.csv"
    p.write_bytes(b"\n".join(lines) + b"\n")
    return p


def _kanon(tmp_path, src, engine, *extra):
    out = tmp_path / "o.csv"
    r = runner.invoke(app, ["kanon", str(src), "--qi", "age", "--keep", "sex", "--hierarchies", str(_hierarchies(tmp_path)),
                            "--k", "2", "--out", str(out), "--engine", engine, "-q", *extra])  # fmt: skip
    return r, out


CASES = {
    # name: (line, text, what every engine's message must say)
    "more fields": (21, "F,22,extra", "line 21"),
    "fewer fields": (31, "F", "line 31"),
    "not UTF-8": (11, b"K\xf6ln,22", "line 11: not UTF-8"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_csv_line_is_refused_alike(tmp_path, backend, case):
    line, text, said = CASES[case]
    src = _csv(tmp_path, line, text)
    r, out = _kanon(tmp_path, src, backend)
    msg = " ".join(r.output.split())
    assert r.exit_code == 2, msg
    assert said in msg and "t.csv" in msg, msg
    assert "Traceback" not in msg and "at org.apache" not in msg and "Possible fixes" not in msg, msg
    assert not out.exists()


def test_a_quote_left_open_is_refused_alike(tmp_path, backend):
    src = _csv(tmp_path, 41, '"M,22')
    r, out = _kanon(tmp_path, src, backend)
    msg = " ".join(r.output.split())
    assert r.exit_code == 2 and "t.csv" in msg and "Traceback" not in msg, msg
    assert "line 41: Value with unterminated quote found." in msg, msg  # (numpy said pandas' "EOF inside string")
    assert not out.exists()


def test_valid_variants_are_read_alike(tmp_path, backend):
    """What the strict line check must not refuse: an empty last field, a blank line, CRLF line ends, a
    quoted field holding the delimiter. The same release on every engine."""
    rows = _rows()
    rows[5] = "F,"  # a missing age, written as an empty field
    rows[9] = '"M",23'
    text = "sex,age\r\n" + "\r\n".join(rows[:30]) + "\r\n\r\n" + "\r\n".join(rows[30:]) + "\r\n"
    src = tmp_path / "t.csv"
    src.write_text(text)
    h = _hierarchies(tmp_path)
    (h / "age.csv").write_text("".join(f"{a};*\n" for a in range(20, 27)) + ";*\n")
    out = tmp_path / "o.csv"
    r = runner.invoke(app, ["kanon", str(src), "--qi", "age", "--keep", "sex", "--hierarchies", str(h), "--k", "2",
                            "--out", str(out), "--engine", backend, "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert csv_line_error(src, ",") is None


def _damaged_parquet(tmp_path):
    """A Parquet file whose ``age`` column's page header is overwritten (its footer intact: the
    schema reads, the column's data does not; DuckDB raised a bare ``duckdb.Error``, "don't know
    what type")."""
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"sex": [r.split(",")[0] for r in _rows()], "age": [r.split(",")[1] for r in _rows()]}), p)
    start = pq.ParquetFile(p).metadata.row_group(0).column(1).data_page_offset
    data = bytearray(p.read_bytes())
    data[start:start + 8] = b"\x5a" * 8
    p.write_bytes(bytes(data))
    return p


def test_a_damaged_parquet_file_is_refused_alike(tmp_path, backend):
    src = _damaged_parquet(tmp_path)
    r, out = _kanon(tmp_path, src, backend)
    msg = " ".join(r.output.split())
    assert r.exit_code == 2, msg
    assert "cannot read" in msg and "t.parquet" in msg, msg
    assert "Traceback" not in msg and "at org.apache" not in msg and "o72" not in msg, msg
    assert not out.exists()


def test_csv_error_message_names_the_problem_of_a_multiline_record():
    """DuckDB prints the original record, which a quote left open stretches over many lines, before
    the problem: the problem is the line before the fixes, not the record's second line."""
    text = ("Invalid Input Error: CSV Error on Line: 71\nOriginal Line: \"M,33\nM,38\nM,36\n\n"
            "Value with unterminated quote found.\n\nPossible fixes:\n* Disable the parser's strict mode\n\n"
            "  file = t.csv\n  delimiter = , (Set By User)\n")  # fmt: skip
    assert csv_error_message("t.csv", Exception(text)) == "t.csv, line 71: Value with unterminated quote found. (nothing was written)"
    text = ("Invalid Input Error: CSV Error on Line: 51\nOriginal Line: F,30,extra\nExpected Number of Columns: 2 Found: 3\n"
            "Possible fixes:\n* Enable null padding\n  file = t.csv\n")  # fmt: skip
    assert csv_error_message("t.csv", Exception(text)) == "t.csv, line 51: Expected Number of Columns: 2 Found: 3 (nothing was written)"


# the text of a Py4JJavaError as Spark 4 raised it for the damaged Parquet file (stack shortened)
_SPARK_READ = """An error occurred while calling o72.getResult.
: org.apache.spark.SparkException: Exception thrown in awaitResult:
\tat org.apache.spark.util.SparkThreadUtils$.awaitResult(SparkThreadUtils.scala:70)
Caused by: org.apache.spark.SparkException: [FAILED_READ_FILE.NO_HINT] Encountered error while reading file file:///d/t.parquet.  SQLSTATE: KD001
\tat org.apache.spark.sql.errors.QueryExecutionErrors$.cannotReadFilesError(QueryExecutionErrors.scala:920)
Caused by: java.io.IOException: can not read class org.apache.parquet.format.PageHeader: Socket is closed by peer.
\tat org.apache.parquet.format.Util.read(Util.java:452)
\t... 41 more
Caused by: shaded.parquet.org.apache.thrift.transport.TTransportException: Socket is closed by peer.
"""

_SPARK_OTHER = """An error occurred while calling o91.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2856)
Caused by: org.apache.spark.SparkArithmeticException: [DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012
\tat org.apache.spark.sql.errors.QueryExecutionErrors$.divideByZeroError(QueryExecutionErrors.scala:203)
"""


def test_spark_errors_are_read_from_the_java_text():
    assert spark_input_error(Exception(_SPARK_READ), "/d/t.parquet") == (
        "cannot read /d/t.parquet: can not read class org.apache.parquet.format.PageHeader: Socket is closed by peer. "
        "(nothing was written)")  # fmt: skip
    assert spark_input_error(Exception(_SPARK_OTHER), "/d/t.parquet") is None
    assert spark_input_error(Exception(_SPARK_READ), "DataFrame") is None  # no file to name
    assert spark_input_error(Exception(_SPARK_READ), "/d/other.parquet") is None  # another file failed
    assert spark_failure_line(Exception(_SPARK_OTHER)) == "SparkArithmeticException: [DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012"
    assert spark_failure_line(Exception("no Java here")) is None


@pytest.mark.parametrize("case", ["more fields", "fewer fields"])
def test_a_bad_csv_line_is_refused_when_its_bad_field_is_in_a_column_left_out(tmp_path, backend, case):
    """A third column no role names (left out of the release): Spark read only the columns the run uses
    (its CSV parser's column pruning), so its strict mode never saw that the line has a field too many
    or too few, and it released the table (exit 0) where numpy and DuckDB refuse the file. Found by the
    kanonorder helper (session 25: pairs of problems on every engine)."""
    line = {"more fields": 21, "fewer fields": 31}[case]
    rows = [f"{r},n{i}" for i, r in enumerate(_rows())]
    rows[line - 2] = {"more fields": "F,22,n,extra", "fewer fields": "F,22"}[case]
    src = tmp_path / "t.csv"
    src.write_text("sex,age,note\n" + "\n".join(rows) + "\n")
    r, out = _kanon(tmp_path, src, backend)
    msg = " ".join(r.output.split())
    assert r.exit_code == 2, msg
    assert f"line {line}" in msg and "t.csv" in msg, msg
    assert "Traceback" not in msg and "at org.apache" not in msg, msg
    assert not out.exists()


@pytest.mark.parametrize("case", ["duplicate name", "more fields", "more fields on every line", "quote left open"])
def test_a_bad_header_or_line_gets_numpys_message(tmp_path, engine, case):
    """The same exit code and the same message, word for word, on numpy and on the engine. A header
    naming a column twice: numpy said "duplicate column name(s) 'age'; every column needs a name of its
    own", DuckDB and Spark said "column 'age' appears twice in the header (columns 2 and 3)"; all now say
    "duplicate column name(s) 'age' (columns 2 and 3); ...". A line
    with a field too many: numpy said pandas' "cannot read t.csv: Error tokenizing data. C error:
    Expected 2 fields in line 21, saw 3" where the engines (and numpy itself, for a line with a field
    too few) say "t.csv, line 21: Expected Number of Columns: 2 Found: 3 (nothing was written)": numpy
    now says the latter. Every data line with a field too many: numpy took the first column for the
    index (pandas' implicit index: each value under the next column's name, then "values missing from
    the hierarchy"), DuckDB's sniffer skipped the header and read columns named after the first data
    line ("unknown quasi-identifier 'age'"); both now refuse line 2. A quote left open: pandas' "EOF
    inside string starting at row 39", now the engines' line 41."""
    rows = _rows()
    if case == "duplicate name":
        src = tmp_path / "t.csv"
        src.write_text("sex,age,age\n" + "".join(f"{r},{i}\n" for i, r in enumerate(rows)))
    elif case == "more fields on every line":
        src = tmp_path / "t.csv"
        src.write_text("sex,age\n" + "".join(f"{r},x\n" for r in rows))
    else:
        src = _csv(tmp_path, *{"more fields": (21, "F,22,extra"), "quote left open": (41, '"M,22')}[case])
    said = {"duplicate name": "t.csv: duplicate column name(s) 'age' (columns 2 and 3); every column needs a name of its own",
            "more fields": "t.csv, line 21: Expected Number of Columns: 2 Found: 3 (nothing was written)",
            "more fields on every line": "t.csv, line 2: Expected Number of Columns: 2 Found: 3 (nothing was written)",
            "quote left open": "t.csv, line 41: Value with unterminated quote found. (nothing was written)"}[case]  # fmt: skip
    got = {}
    for e in ("numpy", engine):
        r, out = _kanon(tmp_path, src, e)
        got[e] = (r.exit_code, " ".join(r.output.split()))
        assert not out.exists()
    assert got["numpy"][0] == 2 and got["numpy"][1].endswith(said), got["numpy"]
    assert got[engine] == got["numpy"]
