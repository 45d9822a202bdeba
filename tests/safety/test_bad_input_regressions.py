"""Issue 12: inputs that used to reach users as tracebacks get an exit-2 message instead."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import HierarchyError
from tempanon.hierarchy import Hierarchy
from tempanon.samples import sample_dir

runner = CliRunner()


def test_stream_l_beyond_int64_is_a_clear_error(tmp_path):
    src = sample_dir("stream") / "use_of_force_sample.csv"
    r = runner.invoke(app, ["stream", str(src), "--time", "response_datetime", "--sensitive", "problem", "--qi", "race,sex",
                            "--l", str(10**23), "--window", "1", "--out", str(tmp_path / "rel")])
    assert r.exit_code == 2, r.output
    assert "l must be at most 2,147,483,647" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "rel").exists()


def test_latin1_hierarchy_file_names_file_line_and_byte(tmp_path):
    a = sample_dir("adult")
    h = tmp_path / "h"
    shutil.copytree(a, h, ignore=shutil.ignore_patterns("*.gz"))
    with open(h / "sex.csv", "ab") as f:
        f.write("Maïs;*\n".encode("latin-1"))
    with pytest.raises(HierarchyError, match=r"sex\.csv is not UTF-8: byte 0xef on line 3"):
        Hierarchy.from_csv(h / "sex.csv")
    r = runner.invoke(app, ["kanon", str(a / "adult.csv.gz"), "--qi", "age,sex", "--hierarchies", str(h), "--k", "5",
                            "--out", str(tmp_path / "o.csv")])
    assert r.exit_code == 2, r.output
    assert "not UTF-8" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "o.csv").exists()


def _latin1_table(path, rows=30_000, extra=None):
    """A UTF-8 CSV whose last line holds a Latin-1 byte (or ``extra``): past DuckDB's sniffer sample
    (20,480 rows), so the engine meets it in the middle of the work, not when it opens the file."""
    with open(path, "wb") as f:
        f.write(b"pid,when,age,city\n")
        for i in range(rows):
            f.write(f"p{i % 500},2020-01-{1 + i % 28:02d},{30 + i % 10},Bonn\n".encode())
        f.write(extra if extra is not None else "p1,2020-01-05,31,Köln\n".encode("latin-1"))
    return rows + 2  # the bad line (the header is line 1)


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
@pytest.mark.parametrize("command", ["kanon", "timestamped"])
def test_latin1_table_names_file_line_and_byte(tmp_path, engine, command):
    """A table that is not UTF-8: exit 2 naming the file, the line and the byte, on every path. Before:
    numpy said "cannot read t.csv: 'utf-8' codec can't decode byte 0xf6 in position 19" (a position
    inside pandas' buffer), and DuckDB, which reads lazily, ended the run with a traceback."""
    src = tmp_path / "t.csv"
    line = _latin1_table(src)
    h = tmp_path / "h"
    h.mkdir()
    (h / "age.csv").write_text("".join(f"{a};*\n" for a in range(30, 40)))
    args = (["kanon", str(src), "--qi", "age", "--hierarchies", str(h), "--k", "2"] if command == "kanon" else
            ["timestamped", str(src), "--time", "when", "--uid", "pid", "--k", "2"])  # fmt: skip
    r = runner.invoke(app, [*args, "--keep", "city", "--out", str(tmp_path / "o.csv"), "--engine", engine, "-q"])
    msg = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert f"t.csv, line {line}: not UTF-8 (byte 19 of the line is 0xf6)" in msg and "iconv" in msg, msg
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert not (tmp_path / "o.csv").exists()


def test_duckdb_bad_csv_line_past_the_sample_is_an_input_error(tmp_path):
    """A line with a field too many, past DuckDB's sniffer sample: exit 2 naming the line, as the
    numpy path does (before: a traceback)."""
    src = tmp_path / "t.csv"
    line = _latin1_table(src, extra=b"p1,2020-01-05,31,Bonn,extra\n")
    h = tmp_path / "h"
    h.mkdir()
    (h / "age.csv").write_text("".join(f"{a};*\n" for a in range(30, 40)))
    for engine in ("numpy", "duckdb"):
        r = runner.invoke(app, ["kanon", str(src), "--qi", "age", "--hierarchies", str(h), "--k", "2", "--out",
                                str(tmp_path / "o.csv"), "--engine", engine, "-q"])  # fmt: skip
        assert r.exit_code == 2, r.output
        assert f"line {line}" in r.output and "4" in r.output, r.output
        assert r.exception is None or isinstance(r.exception, SystemExit)
    assert not (tmp_path / "o.csv").exists()


def test_not_utf8_message_reads_gzip(tmp_path):
    import gzip

    from tempanon.data.io import read_table
    from tempanon.errors import InputError

    p = tmp_path / "t.csv.gz"
    with gzip.open(p, "wb") as f:
        f.write("a,b\n1,x\n2,Köln\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"t\.csv\.gz, line 3: not UTF-8 \(byte 4 of the line is 0xf6\)"):
        read_table(p)


def test_table_saved_with_pandas_index_says_how_to_save_it(tmp_path):
    """A CSV saved by pandas with its index (an empty first header cell) is refused (engines would
    name that column differently: tests/safety/test_fuzz_engines.py); the message says why it has
    no name and how to save it."""
    import pandas as pd

    from tempanon.data.io import read_table
    from tempanon.errors import InputError

    p = tmp_path / "t.csv"
    pd.DataFrame({"age": [30, 31], "sex": ["M", "F"]}).to_csv(p)  # index=True
    with pytest.raises(InputError, match=r"column 1 has no name in the header \(a table saved by pandas with its index"):
        read_table(p)
    r = runner.invoke(app, ["check", str(p), "--qi", "age,sex"])
    assert r.exit_code == 2 and "index=False" in " ".join(r.output.split()), r.output


@pytest.mark.parametrize("api", ["kanon", "timestamped", "stream", "kp"])
@pytest.mark.parametrize("columns, message", [
    ([0, 1, 2], "column 1 is named 0 (int); column names must be text"),
    (["a", "A", "t"], "columns 'a' and 'A' differ only in case"),
    (["a", "a", "t"], "duplicate column name(s) 'a' (columns 1 and 2)"),
])  # fmt: skip
def test_dataframe_column_names_are_checked_by_every_api(api, columns, message):
    """A DataFrame given to the Python API gets the file reader's checks of its column names: names that
    are not text (``pd.DataFrame(array)``) ended in a TypeError inside an error message (kanon) or a
    wrong 'unknown column'; names twice or differing in case reached the engines, which rename them."""
    import numpy as np
    import pandas as pd

    from tempanon.errors import InputError
    from tempanon.kanon import kanonymize
    from tempanon.stream.api import anonymize_stream
    from tempanon.temporal.api import anonymize_timestamped
    from tempanon.timeseries.api import kp_anonymize

    df = pd.DataFrame(np.arange(12).reshape(4, 3) % 2, columns=columns)
    a, t = columns[0], columns[2]
    calls = {
        "kanon": lambda: kanonymize(df, qi=[a], k=2, hierarchies={a: "x"}),
        "timestamped": lambda: anonymize_timestamped(df, time=t, uid=a, k=2),
        "stream": lambda: anonymize_stream(df, time=t, sensitive=a, l=2, w=1, qi=[]),
        "kp": lambda: kp_anonymize(df, id_col=t, qi=[a], k=2, P=2),
    }
    with pytest.raises(InputError) as e:
        calls[api]()
    assert str(e.value).startswith("the DataFrame: ") and message in str(e.value)


def _people_csv(tmp_path, name="in.csv"):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(3)
    n = 40
    df = pd.DataFrame({"pid": rng.integers(0, 15, n), "t": (pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 90, n), unit="D")).strftime("%Y-%m-%d"),
                       "age": rng.integers(20, 24, n), "sex": rng.choice(["F", "M"], n)})  # fmt: skip
    h = tmp_path / "h"
    h.mkdir(exist_ok=True)
    (h / "age.csv").write_text("".join(f"{a};*\n" for a in range(20, 24)))
    (h / "sex.csv").write_text("F;*\nM;*\n")
    return df.to_csv(index=False), h


@pytest.mark.parametrize("command", ["kanon", "timestamped"])
def test_a_csv_with_old_mac_line_ends_on_duckdb_as_on_numpy(tmp_path, command):
    """A CSV whose lines end in a lone carriage return: numpy (pandas) and DuckDB read it, but the
    DuckDB path's header check (csv module on a StringIO) ended in a traceback ('new-line character
    seen in unquoted field'). Found by hand (session 23: line ends of every input). Now the same
    release on both."""
    text, h = _people_csv(tmp_path)
    src = tmp_path / "in.csv"
    src.write_bytes(text.replace("\n", "\r").encode())
    got = {}
    for eng in ("numpy", "duckdb"):
        out = tmp_path / f"o-{eng}.csv"
        args = (["--qi", "age,sex", "--hierarchies", str(h)] if command == "kanon" else ["--time", "t", "--uid", "pid"])
        r = runner.invoke(app, [command, str(src), *args, "--k", "2", "--max-suppression", "0.5", "--out", str(out),
                                "--engine", eng, "-q"])  # fmt: skip
        assert r.exit_code == 0, (eng, r.output, repr(r.exception))
        got[eng] = sorted(out.read_text().splitlines())
    assert got["duckdb"] == got["numpy"]


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
@pytest.mark.parametrize("broken", ["not gzip", "cut short"])
def test_a_broken_gzip_input_is_exit_2_on_every_engine(tmp_path, engine, broken):
    """A ``.csv.gz`` that is not gzip ended in a traceback on DuckDB (BadGzipFile while the header was
    sampled; numpy: 'cannot read'), and one cut short printed Click's bare 'Aborted.' (exit 1) on numpy
    (an EOFError past read_table's handler) and in check, init, stream. Found by hand (session 23:
    broken compressed inputs). Now exit 2, 'cannot read FILE: why' on both."""
    import gzip

    text, h = _people_csv(tmp_path)
    src = tmp_path / "in.csv.gz"
    src.write_bytes(b"not gzip at all" if broken == "not gzip" else gzip.compress(text.encode())[:40])
    for args in (["kanon", str(src), "--qi", "age,sex", "--hierarchies", str(h), "--k", "2", "--out", str(tmp_path / "o.csv"), "--engine", engine],
                 ["timestamped", str(src), "--time", "t", "--k", "2", "--out", str(tmp_path / "t.csv"), "--engine", engine],
                 ["check", str(src), "--qi", "age,sex", "--engine", engine]):  # fmt: skip
        r = runner.invoke(app, args)
        assert r.exit_code == 2, (args[0], r.output, repr(r.exception))
        assert f"cannot read {src}" in r.output, (args[0], r.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h", "in.csv.gz"]


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_a_csv_holding_only_a_byte_order_mark_is_empty_on_every_engine(tmp_path, engine):
    """A CSV of a byte order mark alone (an empty sheet saved as 'CSV UTF-8'): numpy said 'cannot read
    ...: No columns to parse from file', DuckDB read one column 'column0' and refused the roles as
    unknown ('the input has columns: column0'). Found by hand (session 23: BOM in every input). Now
    'input file is empty' on both, as for a file of no bytes."""
    src = tmp_path / "in.csv"
    src.write_bytes(b"\xef\xbb\xbf\n")
    _, h = _people_csv(tmp_path)
    for args in (["check", str(src), "--qi", "age,sex", "--engine", engine],
                 ["kanon", str(src), "--qi", "age,sex", "--hierarchies", str(h), "--k", "2", "--out", str(tmp_path / "o.csv"), "--engine", engine]):  # fmt: skip
        r = runner.invoke(app, args)
        assert r.exit_code == 2, (args[0], r.output)
        assert f"input file is empty: {src}" in r.output, (args[0], r.output)
