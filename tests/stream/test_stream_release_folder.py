"""The published folder of a stream release (tempanon.stream.release_files): after a run it holds
exactly that run's verified snapshot files. A second run into the folder of an earlier one replaces
it, never leaving a file of the earlier run (another l, window or input) beside the new ones; a folder
holding anything else is refused before anything is read; ``tempanon stream`` and ``tempanon run``
write the same folder."""

import os
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.data.io import OutputSet

from job_check import fail_replace_of, stream_job  # tests/job_check.py

runner = CliRunner()
ARGS = ["--time", "when", "--sensitive", "dx", "--qi", "zip", "--window", "2", "-q"]


def _stream(tmp_path, n=60, days=20, seed=1):
    """Small daily snapshots with a skewed sensitive value: at l = 3 some snapshots stay empty that
    have records at l = 2."""
    import numpy as np

    rng = np.random.default_rng(seed)
    when = (pd.Timestamp("2024-01-01") + pd.to_timedelta(np.sort(rng.integers(0, days * 24, n)), unit="h"))
    df = pd.DataFrame({"when": when.strftime("%Y-%m-%d %H:%M"), "dx": rng.choice(["a", "b", "c", "d"], n, p=[0.6, 0.2, 0.1, 0.1]),
                       "zip": rng.choice(["01", "02"], n)})
    p = tmp_path / "in.csv"
    df.to_csv(p, index=False)
    return p


def _files(folder: Path) -> dict:
    return {f.name: f.read_bytes() for f in sorted(folder.iterdir())}


def _run(*args):
    return runner.invoke(app, ["stream", *map(str, args)])


def test_second_run_replaces_the_earlier_release(tmp_path):
    src = _stream(tmp_path)
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    r = _run(src, *ARGS, "--l", 2, "--out", out)
    assert r.exit_code == 0, r.output
    first = _files(out)
    r = _run(src, *ARGS, "--l", 3, "--out", out)
    assert r.exit_code == 0, r.output
    r = _run(src, *ARGS, "--l", 3, "--out", fresh)
    assert r.exit_code == 0, r.output
    # the folder is exactly the l = 3 release (before: the l = 2 files of snapshots empty at l = 3 stayed)
    assert set(first) - set(_files(fresh)), "the example needs snapshots that only the l = 2 release has"
    assert _files(out) == _files(fresh)
    assert not any(name.startswith(".") for name in os.listdir(out))  # no leftovers of the commit


def test_everything_suppressed_gives_an_empty_folder(tmp_path):
    """A stream with l distinct values in all, but never l of them within a window: every record is
    suppressed, a valid release (exit 0) of an empty folder. With fewer than l values in the whole
    table the run is refused instead (exit 1) and the folder of the earlier run is left as it was."""
    src = _stream(tmp_path)
    out = tmp_path / "out"
    assert _run(src, *ARGS, "--l", 2, "--out", out).exit_code == 0
    before = _files(out)
    r = _run(src, *ARGS, "--l", 5, "--out", out)  # 4 values < l = 5: no release possible
    assert r.exit_code == 1 and "fewer than l = 5" in r.output, r.output
    assert _files(out) == before
    df = pd.read_csv(src, dtype=str)
    late = pd.DataFrame({"when": ["2024-03-01 10:00"], "dx": ["e"], "zip": ["01"]})  # a fifth value, alone
    pd.concat([df, late]).to_csv(src5 := tmp_path / "in5.csv", index=False)
    r = runner.invoke(app, ["stream", str(src5), *ARGS[:-1], "--l", "5", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "(0 with records, in 0 files)" in " ".join(r.output.split())
    assert out.is_dir() and not any(out.iterdir())
    empty = tmp_path / "new"
    assert _run(src5, *ARGS, "--l", 5, "--out", empty).exit_code == 0
    assert empty.is_dir() and not any(empty.iterdir())


@pytest.mark.parametrize("intruder", ["notes.txt", "sub/", "data.csv"])
def test_folder_with_anything_else_is_refused_untouched(tmp_path, intruder):
    src = _stream(tmp_path)
    out = tmp_path / "out"
    assert _run(src, *ARGS, "--l", 2, "--out", out).exit_code == 0
    (out / intruder.rstrip("/")).mkdir() if intruder.endswith("/") else (out / intruder).write_text("mine")
    before = _files(out) if not intruder.endswith("/") else sorted(os.listdir(out))
    r = _run(src, *ARGS, "--l", 3, "--out", out)
    assert r.exit_code == 2, r.output
    assert repr(intruder.rstrip("/")) in r.output and "not a snapshot file" in r.output
    assert (_files(out) if not intruder.endswith("/") else sorted(os.listdir(out))) == before


def test_input_inside_the_folder_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    src = _stream(out)  # out/in.csv
    r = _run(src, *ARGS, "--l", 2, "--out", out)
    assert r.exit_code == 2 and "holds the input" in r.output, r.output
    assert os.listdir(out) == ["in.csv"]
    named = out / "2024-01-01.csv"  # even when its name looks like a snapshot file
    src.rename(named)
    r = _run(named, *ARGS, "--l", 2, "--out", out)
    assert r.exit_code == 2 and "holds the input" in r.output, r.output
    assert os.listdir(out) == ["2024-01-01.csv"]


def test_stdin_stream_refuses_an_earlier_release(tmp_path):
    src = _stream(tmp_path)
    out = tmp_path / "out"
    assert _run(src, *ARGS, "--l", 2, "--out", out).exit_code == 0
    before = _files(out)
    df = pd.read_csv(src, dtype=str)
    lines = "".join(df.iloc[[i]].to_json(orient="records", lines=True) for i in range(len(df)))
    r = runner.invoke(app, ["stream", "-", *ARGS, "--l", "2", "--out", str(out)], input=lines)
    assert r.exit_code == 2 and "earlier release" in r.output, r.output
    assert _files(out) == before


def test_job_writes_the_same_folder_and_replaces_an_earlier_release(tmp_path, monkeypatch):
    src = _stream(tmp_path)
    cli = tmp_path / "cli"
    assert _run(src, *ARGS, "--l", 3, "--out", cli).exit_code == 0
    out = tmp_path / "job_out"
    assert _run(src, *ARGS, "--l", 2, "--out", out).exit_code == 0  # an earlier release in the job's folder
    job = tmp_path / "job.toml"
    job.write_text(stream_job(src, out, l=3, window=2))
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    assert _files(out) == _files(cli)  # before: a pair of files per snapshot, empty ones too, and stale l = 2 files
    (out / "notes.txt").write_text("mine")
    r = runner.invoke(app, ["run", str(job)])
    msg = " ".join(r.output.split())
    assert r.exit_code == 2 and "line 12: key 'output.directory'" in msg and "'notes.txt'" in msg, msg
    assert (out / "notes.txt").read_text() == "mine"


def test_output_set_removal_is_undone_when_the_commit_fails(tmp_path, monkeypatch):
    old = tmp_path / "2024-01-01.qit.csv"
    old.write_text("old")
    outs = OutputSet()
    outs.text("new", tmp_path / "2024-01-02.qit.csv")
    outs.remove(old)
    undo = fail_replace_of(monkeypatch, ".tmp.qit.csv")
    with pytest.raises(Exception, match="cannot write .*2024-01-02.qit.csv: no space left"):
        outs.commit()  # the file that failed is named (before: the last file moved aside)
    undo()
    assert old.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["2024-01-01.qit.csv"]
    outs = OutputSet()
    outs.text("new", tmp_path / "2024-01-02.qit.csv")
    outs.remove(old)
    outs.commit()
    assert sorted(os.listdir(tmp_path)) == ["2024-01-02.qit.csv"]


def test_output_set_never_removes_an_input_or_its_own_output(tmp_path):
    src = tmp_path / "2024-01-01.csv"
    src.write_text("x")
    with pytest.raises(Exception, match="refusing to overwrite an input"):
        OutputSet([src]).remove(src)
    outs = OutputSet()
    outs.text("new", tmp_path / "a.csv")
    with pytest.raises(Exception, match="is also"):
        outs.remove(tmp_path / "a.csv")
