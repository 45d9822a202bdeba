"""The independent verifier, atomic writes and table I/O."""

from __future__ import annotations

import pandas as pd
import pytest

from tempanon.data.io import atomic_write, detect_delimiter, read_table, write_json, write_table
from tempanon.data.roles import parse_column_list
from tempanon.errors import InputError, VerificationError
from tempanon.verify import check_generalization, check_k_anonymity


def test_verifier_rejects_small_classes_and_names_one():
    df = pd.DataFrame({"a": ["x", "x", "y"], "b": ["1", "1", "2"]})
    with pytest.raises(VerificationError, match=r"not 2-anonymous: 1 equivalence class.*'a': 'y'"):
        check_k_anonymity(df, ["a", "b"], 2)
    assert check_k_anonymity(df.iloc[:2], ["a", "b"], 2, n_input=3, max_suppressed=1)["suppressed_rows"] == 1
    with pytest.raises(VerificationError, match="suppresses 1 rows, more than the allowed 0"):
        check_k_anonymity(df.iloc[:2], ["a", "b"], 2, n_input=3, max_suppressed=0)


def test_verifier_counts_distinct_respondents():
    df = pd.DataFrame({"a": ["x"] * 3, "u": ["p", "p", "q"]})
    check_k_anonymity(df, ["a"], 3)  # 3 rows
    with pytest.raises(VerificationError, match="respondents"):
        check_k_anonymity(df, ["a"], 3, uid="u")  # but only 2 respondents


def test_verifier_checks_generalization_against_hierarchy():
    orig = pd.DataFrame({"z": ["53715", "53703"]})
    ok = pd.DataFrame({"z": ["5371*", "5370*"]})
    check_generalization(orig, ok, {"z": {"53715": "5371*", "53703": "5370*"}})
    with pytest.raises(VerificationError, match=r"input line 3.*'5371\*' is not the generalization '5370\*'"):
        check_generalization(orig, pd.DataFrame({"z": ["5371*", "5371*"]}), {"z": {"53715": "5371*", "53703": "5370*"}})


def test_failed_verification_writes_nothing(tmp_path, monkeypatch):
    """If the verifier rejects a release, kanonymize raises and the CLI leaves no file."""
    from typer.testing import CliRunner

    import tempanon.verify as verify
    from tempanon.cli import app
    from tempanon.samples import adult_hierarchies_dir

    def reject(*a, **k):
        raise VerificationError("simulated verifier failure")

    monkeypatch.setattr(verify, "check_k_anonymity", reject)
    monkeypatch.setattr(verify, "check_generalized_release", reject)  # kanon's per-distinct-value check
    data = tmp_path / "d.csv"
    pd.DataFrame({"sex": ["Male", "Female"] * 3}).to_csv(data, index=False)
    out = tmp_path / "out.csv"
    r = CliRunner().invoke(app, ["kanon", str(data), "--qi", "sex", "--hierarchies", str(adult_hierarchies_dir()), "--k", "2", "--out", str(out)])
    assert r.exit_code == 3
    assert "simulated verifier failure" in r.output
    assert not out.exists() and list(tmp_path.iterdir()) == [data]


def test_delimiter_detection_and_text_reading(tmp_path):
    assert detect_delimiter("a;b;c\n1;2;3\n") == ";"
    assert detect_delimiter("a,b\n1,2\n") == ","
    assert detect_delimiter("a\tb\n1\t2\n") == "\t"
    p = tmp_path / "t.csv"
    p.write_text("zip;n\n05371;1\n;2\n")
    df = read_table(p, as_text=True)
    assert df["zip"].iloc[0] == "05371" and pd.isna(df["zip"].iloc[1])


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
@pytest.mark.parametrize("sep", [";", "\t", "|", ","])
def test_delimiter_of_a_file_with_a_quoted_line_break(tmp_path, sep, eol):
    """A quoted field holding a line break (Windows line ends, or a semicolon file with a quoted
    delimiter too) made csv.Sniffer give up, and the fallback counted the delimiter per physical line:
    a semicolon file with CRLF line ends was read as one column 'age;sex;dx'."""
    rows = [["age", "sex", "dx"], ["30", "M", f"flu{eol}severe"], ["30", "M", f"co{sep}ld"], ["40", "F", "flu"], ["40", "F", "hiv"]]
    text = eol.join(sep.join(f'"{v}"' if (eol in v or sep in v) else v for v in r) for r in rows) + eol
    assert detect_delimiter(text) == sep
    p = tmp_path / "t.csv"
    p.write_bytes(("\ufeff" + text).encode())
    df = read_table(p, as_text=True)
    assert list(df.columns) == ["age", "sex", "dx"] and df["dx"].tolist() == [f"flu{eol}severe", f"co{sep}ld", "flu", "hiv"]


def test_parquet_roundtrip_and_atomic_write(tmp_path):
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    write_table(df, tmp_path / "t.parquet")
    assert read_table(tmp_path / "t.parquet").equals(df)
    write_json({"x": 1}, tmp_path / "s.json")
    import os
    import stat

    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "s.json").stat().st_mode) == 0o666 & ~mask  # not mkstemp's 0600

    def boom(path):
        path.write_text("partial")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(tmp_path / "never.csv", boom)
    assert not (tmp_path / "never.csv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_input_errors(tmp_path):
    with pytest.raises(InputError, match="not found"):
        read_table(tmp_path / "missing.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(InputError, match="empty"):
        read_table(tmp_path / "empty.csv")
    assert parse_column_list("A0:A2,S", ["id", "A0", "A1", "A2", "S"]) == ["A0", "A1", "A2", "S"]
    with pytest.raises(InputError, match="listed twice"):
        parse_column_list("a,a")


def test_sql_source_through_duckdb(tmp_path):
    import duckdb

    db = tmp_path / "d.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('a', 1), ('b', 2)) v(x, y)")
    con.close()
    df = read_table(db, sql="SELECT x, y FROM src.t ORDER BY y")
    assert df["x"].tolist() == ["a", "b"]
    with pytest.raises(InputError, match="SQL query failed"):
        read_table(db, sql="SELECT nope FROM src.t")


def test_sql_source_sqlite(tmp_path):
    import sqlite3

    db = tmp_path / "d.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (x TEXT, y INTEGER)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [("a", 1), ("b", 2)])
    con.commit()
    con.close()
    assert read_table(db, sql="SELECT x, y FROM src.t ORDER BY y")["x"].tolist() == ["a", "b"]
    assert read_table(db, sql="SELECT x FROM t WHERE y = 2")["x"].tolist() == ["b"]
    with pytest.raises(InputError, match="SQL query failed"):
        read_table(db, sql="SELECT nope FROM t")
