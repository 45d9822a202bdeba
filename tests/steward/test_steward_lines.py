"""Row numbers in messages are file lines (issue 16): 1-based, the header is line 1, so a message
saying ``line N`` points at the N-th line of the input file. For a few representative errors of
every command, the line named must be the one holding the offending value."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.data.lines import at_label, at_line, at_row_label, line_of, line_of_label

runner = CliRunner()


def named_line(output: str) -> int:
    found = re.findall(r"\bline (\d+)\b", " ".join(output.split()))
    assert len(set(found)) == 1, f"expected one line number in {output!r}"
    assert not re.search(r"\brows? \d", " ".join(output.split())), output  # no 0-based 'row N' left
    return int(found[0])


def file_line(path, n) -> str:
    return path.read_text(encoding="utf-8").splitlines()[n - 1]


def invoke(*args):
    r = runner.invoke(app, [str(a) for a in args])
    assert r.exit_code in (1, 2), r.output
    return r


def test_helpers():
    assert line_of(0) == 2 and at_line(5) == "line 7"
    idx = pd.Index([10, 20, 30])
    assert line_of_label(idx, 30) == 4 and at_label(idx, 20) == "line 3" and at_label(idx, 99) == "row label 99"
    assert at_row_label(np.int64(3)) == "line 5" and at_row_label("r7") == "row label 'r7'" and at_row_label(True) == "row label True"


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    n = 30
    df = pd.DataFrame({
        "pid": [f"p{i // 2}" for i in range(n)],
        "zip": rng.choice(["53715", "53710"], n),
        "sex": rng.choice(["M", "F"], n),
        "when": pd.date_range("2020-01-01", periods=n, freq="D").strftime("%Y-%m-%d"),
        "dx": rng.choice(["flu", "cold", "hiv"], n),
    })
    hdir = tmp_path / "h"
    hdir.mkdir()
    (hdir / "zip.csv").write_text("53715;5371*;*\n53710;5371*;*\n")
    (hdir / "sex.csv").write_text("M;*\nF;*\n")
    return df, hdir


def write(df, tmp_path, name="t.csv"):
    p = tmp_path / name
    df.to_csv(p, index=False)
    return p


def test_kanon_names_the_file_line(table, tmp_path):
    df, hdir = table
    bad = df.copy()
    bad.loc[17, "zip"] = "99999"  # not in the hierarchy
    p = write(bad, tmp_path)
    r = invoke("kanon", p, "--qi", "zip,sex", "--hierarchies", hdir, "--k", 2, "--out", tmp_path / "o.csv")
    n = named_line(r.output)
    assert n == 19 and "99999" in file_line(p, n)
    bad = df.copy()
    bad.loc[11, "pid"] = ""  # missing respondent id
    p = write(bad, tmp_path, "u.csv")
    r = invoke("kanon", p, "--qi", "zip,sex", "--hierarchies", hdir, "--k", 2, "--uid", "pid", "--out", tmp_path / "o.csv")
    n = named_line(r.output)
    assert n == 13 and file_line(p, n).startswith(",")


def test_check_names_the_file_line_of_the_smallest_class(table, tmp_path):
    df, _ = table
    df = df.copy()
    df.loc[23, ["zip", "sex"]] = ["53799", "X"]  # a class of one, alone on its line
    p = write(df, tmp_path)
    r = invoke("check", p, "--qi", "zip,sex", "--k", 2)
    n = named_line(r.output)
    assert n == 25 and "53799,X" in file_line(p, n)


def test_timestamped_names_the_file_line(table, tmp_path):
    df, _ = table
    bad = df.copy()
    bad.loc[8, "when"] = "2020-13-45"
    p = write(bad, tmp_path)
    r = invoke("timestamped", p, "--uid", "pid", "--time", "when", "--qi", "zip", "--k", 2, "--out", tmp_path / "o.csv")
    n = named_line(r.output)
    assert n == 10 and "2020-13-45" in file_line(p, n)
    bad = df.copy()
    bad.loc[21, "pid"] = ""
    p = write(bad, tmp_path, "u.csv")
    r = invoke("timestamped", p, "--uid", "pid", "--time", "when", "--qi", "zip", "--k", 2, "--out", tmp_path / "o.csv")
    n = named_line(r.output)
    assert n == 23 and file_line(p, n).startswith(",")


def test_kp_names_the_file_line(tmp_path):
    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.normal(size=(20, 4)).round(3), columns=[f"A{i}" for i in range(4)])
    df.insert(0, "id", [f"R{i}" for i in range(20)])
    bad = df.astype(object)
    bad.loc[13, "A2"] = "abc"
    p = write(bad, tmp_path)
    r = invoke("kp", p, "--id", "id", "--qi", "A0:A3", "--k", 4, "--p", 2, "--out", tmp_path / "o.csv")
    n = named_line(r.output)
    assert n == 15 and "abc" in file_line(p, n) and file_line(p, n).startswith("R13,")
    dup = df.copy()
    dup.loc[16, "id"] = "R5"
    p = write(dup, tmp_path, "d.csv")
    r = runner.invoke(app, ["kp", str(p), "--id", "id", "--qi", "A0:A3", "--k", "4", "--p", "2", "--out", str(tmp_path / "o.csv")])
    assert r.exit_code == 2
    lines = [int(x) for x in re.search(r"lines ([\d, ]+)\)", " ".join(r.output.split())).group(1).split(", ")]
    assert lines == [7, 18] and all(file_line(p, m).startswith("R5,") for m in lines)


def test_stream_names_the_file_line(table, tmp_path):
    df, _ = table
    bad = df.copy()
    bad.loc[26, "when"] = "yesterday"
    p = write(bad, tmp_path)
    r = invoke("stream", p, "--time", "when", "--sensitive", "dx", "--qi", "zip,sex", "--l", 2, "--window", 1, "--out", tmp_path / "o")
    n = named_line(r.output)
    assert n == 28 and "yesterday" in file_line(p, n)


def test_a_ragged_csv_names_its_line(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("a,b\n1,2\n3,4\n5,6,7\n8,9\n")
    r = invoke("check", p, "--qi", "a")
    n = named_line(r.output)
    assert n == 4 and file_line(p, n) == "5,6,7"
