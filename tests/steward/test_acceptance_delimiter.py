"""Acceptance audit: ``--delimiter`` given as more than one character. ``check --engine duckdb
--delimiter tab`` ended in a traceback (``TypeError: "delimiter" must be a 1-character string``);
the numpy reader took ``tab`` as a regular expression with pandas ParserWarnings, and ``init``
wrote a one-column job. Now a name (``tab``, ``\\t``, ...) is its character and anything else
longer than one character is exit 2 with a message, nothing written."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.data.io import normalize_delimiter, read_table
from tempanon.errors import InputError

runner = CliRunner()


@pytest.fixture
def tab_file(tmp_path):
    rows = [f"{20 + i % 3}\t{'MF'[i % 2]}\t{i % 4}" for i in range(40)]
    p = tmp_path / "t.csv"
    p.write_text("age\tsex\tdx\n" + "\n".join(rows) + "\n")
    return p


def test_normalize_delimiter():
    assert normalize_delimiter(None) is None and normalize_delimiter("") is None
    assert normalize_delimiter("tab") == normalize_delimiter("\\t") == normalize_delimiter("TAB") == "\t"
    assert normalize_delimiter(";") == ";" and normalize_delimiter("semicolon") == ";"
    for bad in (";;", "ab", '"', "\n"):
        with pytest.raises(InputError, match="one character"):
            normalize_delimiter(bad)


def test_read_table_takes_tab_by_name(tab_file):
    df = read_table(tab_file, as_text=True, delimiter="tab")
    assert list(df.columns) == ["age", "sex", "dx"] and len(df) == 40


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_check_delimiter_name_and_bad(tab_file, engine):
    ok = runner.invoke(app, ["check", str(tab_file), "--qi", "age,sex", "--k", "2", "--delimiter", "tab",
                             "--engine", engine, "--json"])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(app, ["check", str(tab_file), "--qi", "age,sex", "--k", "2", "--delimiter", ";;",
                              "--engine", engine])
    assert bad.exit_code == 2
    assert "delimiter must be one character" in bad.output and "Traceback" not in bad.output
    assert bad.exception is None or isinstance(bad.exception, SystemExit)


def test_kanon_duckdb_bad_delimiter_writes_nothing(tab_file, tmp_path):
    hier = tmp_path / "h"
    hier.mkdir()
    (hier / "sex.csv").write_text("M;*\nF;*\n")
    out = tmp_path / "out.csv"
    r = runner.invoke(app, ["kanon", str(tab_file), "--qi", "sex", "--hierarchies", str(hier), "--k", "2",
                            "--delimiter", "ab", "--engine", "duckdb", "--out", str(out)])
    assert r.exit_code == 2 and "delimiter must be one character" in r.output
    assert not out.exists()


def test_init_bad_delimiter_writes_no_job(tab_file, tmp_path):
    job = tmp_path / "j.toml"
    r = runner.invoke(app, ["init", str(tab_file), "--delimiter", "ab", "--out", str(job)])
    assert r.exit_code == 2 and "delimiter must be one character" in r.output
    assert not job.exists()


def test_timestamped_file_engine_bad_delimiter(tmp_path):
    from tempanon.temporal import anonymize_timestamped_file

    p = tmp_path / "v.csv"
    pd.DataFrame({"pid": [f"p{i % 5}" for i in range(30)], "t": ["2023-01-02"] * 30}).to_csv(p, index=False)
    with pytest.raises(InputError, match="one character"):
        anonymize_timestamped_file(p, out=tmp_path / "o.csv", time="t", uid="pid", k=2, delimiter="ab")
