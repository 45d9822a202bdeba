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
