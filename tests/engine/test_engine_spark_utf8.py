"""A table that is not UTF-8 on the Spark engine: Spark's CSV reader puts U+FFFD in place of such a
byte, so a kept column's 'Köln' written in Latin-1 was released as 'K\ufffdln' with exit 0. The
file is now checked before Spark reads it (tempanon.data.io.check_utf8), with the message numpy and
DuckDB give (tests/safety/test_bad_input_regressions.py)."""

from __future__ import annotations

import gzip

import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.data.io import check_utf8
from tempanon.errors import InputError

runner = CliRunner()


def test_check_utf8(tmp_path):
    p = tmp_path / "a.csv"
    p.write_bytes(("a\n" + "é" * 10 + "\n").encode() * 100)
    check_utf8(p, chunk=7)  # chunks cut inside a character: still UTF-8
    p.write_bytes(("é" * 100).encode())  # no line end at all
    check_utf8(p, chunk=7)
    p.write_bytes("a,b\n1,x\n2,Köln\n3,y\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"a\.csv, line 3: not UTF-8 \(byte 4 of the line is 0xf6\)"):
        check_utf8(p, chunk=5)
    g = tmp_path / "a.csv.gz"
    with gzip.open(g, "wb") as f:
        f.write("a\nKöln\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"line 2: not UTF-8"):
        check_utf8(g)


@pytest.mark.spark
def test_spark_refuses_a_table_that_is_not_utf8(spark_session, tmp_path):
    src = tmp_path / "t.csv"
    src.write_bytes(("age,city\n" + "".join(f"{30 + i % 3},Bonn\n" for i in range(30)) + "31,Köln\n").encode("latin-1"))
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "age.csv").write_text("30;*\n31;*\n32;*\n")
    r = runner.invoke(app, ["kanon", str(src), "--qi", "age", "--hierarchies", str(tmp_path / "h"), "--k", "2",
                            "--keep", "city", "--out", str(tmp_path / "o.csv"), "--engine", "spark", "-q"])  # fmt: skip
    msg = " ".join(r.output.split())
    assert r.exit_code == 2 and "t.csv, line 32: not UTF-8 (byte 5 of the line is 0xf6)" in msg, msg
    assert not (tmp_path / "o.csv").exists()
    r = runner.invoke(app, ["timestamped", str(src), "--time", "age", "--k", "2", "--keep", "city",
                            "--out", str(tmp_path / "t_o.csv"), "--engine", "spark", "-q"])  # fmt: skip
    assert r.exit_code == 2 and "line 32: not UTF-8" in " ".join(r.output.split()), r.output
