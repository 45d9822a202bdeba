"""Scratch directories: named after their process; a directory left by a process that no longer
exists (killed by a signal that runs no cleanup) is removed when the next one is made."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

from tempanon.data.scratch import scratch_dir, sweep_stale


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_directories_of_dead_processes_are_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = _dead_pid()
    stale = tmp_path / f"tempanon-rollup-{dead}-abc"
    (stale / "sub").mkdir(parents=True)
    (stale / "sub" / "x.npz").write_bytes(b"0" * 100)
    mine = tmp_path / f"tempanon-duckdb-{os.getpid()}-def"
    mine.mkdir()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        other = tmp_path / f"tempanon-cube-{live.pid}-ghi"
        other.mkdir()
        unrelated = tmp_path / f"something-{dead}-x"
        unrelated.mkdir()
        a_file = tmp_path / f"tempanon-spark-{dead}-file"
        a_file.write_text("not a directory")
        new = scratch_dir("cube")
        assert os.path.isdir(new) and os.path.basename(new).startswith(f"tempanon-cube-{os.getpid()}-")
        assert not stale.exists()  # its process is gone
        assert mine.exists() and other.exists() and unrelated.exists() and a_file.exists()
        assert sweep_stale(str(tmp_path)) == []
    finally:
        live.kill()
        live.wait()
    assert sweep_stale(str(tmp_path)) == [str(other)]


def test_scratch_kind_is_checked():
    with pytest.raises(ValueError, match="lower-case"):
        scratch_dir("../x")


def test_a_killed_search_leaves_a_directory_the_next_one_removes(tmp_path):
    """End to end: a child process spills the bottom-up rollup cache to disk and is killed with
    SIGKILL; its directory remains until this process makes a scratch directory."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    code = (
        "import os, signal, tempfile\n"
        "from tempanon.data.scratch import scratch_dir\n"
        "d = scratch_dir('rollup')\n"
        "open(os.path.join(d, 'x.npz'), 'wb').write(b'0' * 1000)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(src), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", code], env=env)
    assert r.returncode != 0
    left = [p for p in tmp_path.iterdir() if p.name.startswith("tempanon-rollup-")]
    assert len(left) == 1 and (left[0] / "x.npz").exists()
    assert sweep_stale(str(tmp_path)) == [str(left[0])]
    assert not left[0].exists()
