"""A Spark release is a directory of part files named like the output file. Running again with the
same ``--out`` replaces the earlier release (before: refused, "is a directory; give a file name"), and
only a directory that holds nothing but a Spark release is ever replaced (tempanon.data.io.replace_path,
is_spark_release_dir)."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.data.io import OutputSet, is_spark_release_dir, replace_path
from tempanon.errors import InputError

from job_check import fail_replace_of  # tests/job_check.py

from .test_engine_backends import synthea_files

runner = CliRunner()


def _spark_dir(path, rows=("a,b\n1,2\n",)):
    path.mkdir()
    for i, text in enumerate(rows):
        (path / f"part-0000{i}-x-c000.csv").write_text(text)
        (path / f".part-0000{i}-x-c000.csv.crc").write_bytes(b"crc")
    (path / "_SUCCESS").write_text("")
    return path


def test_is_spark_release_dir(tmp_path):
    assert is_spark_release_dir(_spark_dir(tmp_path / "r"))
    assert is_spark_release_dir(tmp_path / "r") and not is_spark_release_dir(tmp_path / "missing")
    (tmp_path / "r" / "notes.txt").write_text("x")
    assert not is_spark_release_dir(tmp_path / "r")
    _spark_dir(tmp_path / "s")
    (tmp_path / "s" / "sub").mkdir()
    assert not is_spark_release_dir(tmp_path / "s")


def test_replace_path_swaps_directories_and_restores_on_failure(tmp_path, monkeypatch):
    old = _spark_dir(tmp_path / "out.csv", ["old\n", "old2\n"])
    new = _spark_dir(tmp_path / ".new.tmp", ["new\n"])
    replace_path(new, old)
    assert sorted(os.listdir(old)) == [".part-00000-x-c000.csv.crc", "_SUCCESS", "part-00000-x-c000.csv"]
    assert (old / "part-00000-x-c000.csv").read_text() == "new\n"
    assert sorted(os.listdir(tmp_path)) == ["out.csv"]  # nothing left aside
    # the rename of the new release fails: the earlier one is put back
    new = _spark_dir(tmp_path / ".new2.tmp", ["newer\n"])
    undo = fail_replace_of(monkeypatch, ".new2.tmp")
    with pytest.raises(OSError):
        replace_path(new, old)
    undo()
    assert (old / "part-00000-x-c000.csv").read_text() == "new\n"
    assert sorted(os.listdir(tmp_path)) == [".new2.tmp", "out.csv"]
    # a directory that is not a Spark release is never replaced; a file is (a numpy release before)
    (old / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="does not hold an earlier Spark release"):
        replace_path(new, old)
    assert (old / "notes.txt").read_text() == "mine"
    f = tmp_path / "file.csv"
    f.write_text("numpy release")
    replace_path(new, f)
    assert f.is_dir() and (f / "part-00000-x-c000.csv").read_text() == "newer\n"


def test_output_set_takes_an_earlier_spark_release_only_where_spark_writes(tmp_path):
    d = _spark_dir(tmp_path / "o.csv")
    OutputSet([], {"--out": d}, spark_releases={"--out"})  # accepted
    with pytest.raises(InputError, match="is a directory; give a file name"):
        OutputSet([], {"--out": d})
    with pytest.raises(InputError, match="is a directory; give a file name"):
        OutputSet([], {"--summary": d}, spark_releases={"--out"})
    (d / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="does not hold an earlier Spark release"):
        OutputSet([], {"--out": d}, spark_releases={"--out"})


def _parts_rows(out) -> list:
    rows = []
    for p in sorted(out.glob("part-*")):
        rows += pd.read_csv(p, dtype=str, keep_default_na=False).astype(str).agg("|".join, axis=1).tolist()
    return sorted(rows)


@pytest.mark.spark
def test_kanon_spark_rerun_replaces_the_release(spark_session, tmp_path):
    src, hdir = synthea_files(tmp_path, ".csv")
    base = ["kanon", str(src), "--qi", "birth_year,gender,race,zip", "--hierarchies", str(hdir), "--uid", "patient",
            "--engine", "spark", "-q"]  # fmt: skip
    out, fresh = tmp_path / "o.csv", tmp_path / "fresh.csv"
    for k, target in ((4, out), (10, out), (10, fresh)):
        r = runner.invoke(app, [*base, "--k", str(k), "--out", str(target), "--summary", str(tmp_path / f"{k}{target.name}.json")])
        assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "4o.csv.json").read_text())["selected_node"] != json.loads((tmp_path / "10o.csv.json").read_text())["selected_node"]
    assert _parts_rows(out) == _parts_rows(fresh)  # the k = 10 release, nothing of the k = 4 one
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]
    (out / "notes.txt").write_text("mine")
    r = runner.invoke(app, [*base, "--k", "4", "--out", str(out)])
    assert r.exit_code == 2 and "does not hold an earlier Spark release" in " ".join(r.output.split()), r.output
    assert (out / "notes.txt").read_text() == "mine" and _parts_rows(out) == _parts_rows(fresh)


@pytest.mark.spark
def test_timestamped_spark_rerun_replaces_the_release(spark_session, tmp_path):
    from .test_engine_temporal import SAMPLE

    out = tmp_path / "o.csv"
    for k in (3, 5):
        r = runner.invoke(app, ["timestamped", str(SAMPLE), "--time", "START", "--uid", "PATIENT", "--k", str(k),
                                "--max-suppression", "0.2", "--qi", "ENCOUNTERCLASS", "--out", str(out), "--engine", "spark", "-q"])  # fmt: skip
        assert r.exit_code == 0, r.output
    fresh = tmp_path / "fresh.csv"
    r = runner.invoke(app, ["timestamped", str(SAMPLE), "--time", "START", "--uid", "PATIENT", "--k", "5",
                            "--max-suppression", "0.2", "--qi", "ENCOUNTERCLASS", "--out", str(fresh), "--engine", "spark", "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert _parts_rows(out) == _parts_rows(fresh)
