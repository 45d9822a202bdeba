"""``stream --step fast`` said "preparing the fast step's compiled kernel (numba; the first run ...
compiles it ...)" on every run, because it asked only whether this process had loaded the kernel: a run
whose kernel numba loads from its on-disk cache in a fraction of a second said it too. It now asks
numba's cache first (``tempanon.stream.command.fast_kernel_cached``: the index file of the kernel's entry
point, read as numba reads it before a load) and says it only when the kernel will be compiled.

The cache checks run in a subprocess with ``NUMBA_CACHE_DIR`` pointed at a temporary folder (numba reads
it when imported): empty, then holding an index as numba writes one after a compile (written with
numba's own index writer, for this CPU and this source: a simulated warm cache, no compile), then an
index for another CPU and a stale one. Compiling into an empty folder for real (about 20 CPU-s) runs
only with ``TEMPANON_SLOW_TESTS=1``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tempanon.cli import app

SRC = str(Path(__file__).resolve().parents[2] / "src")
SAMPLE_ARGS = ["--time", "response_datetime", "--sensitive", "problem", "--qi", "race,sex", "--l", "2", "--window", "1",
               "--snapshot", "week"]  # fmt: skip

PROBE = r"""
import json, sys
from tempanon.stream.command import fast_kernel_cached
from tempanon.stream import _fastkernel as k

out = {"empty": fast_kernel_cached()}
entry = k.steps
cache = entry._cache
files = cache._cache_file
key = cache._index_key(("simulated signature",), entry.targetctx.codegen())
files._save_index({key: "simulated.nbc"})  # as numba writes it after a compile (no data file: not loaded)
out["warm"] = fast_kernel_cached()
files._save_index({(key[0], ("another", "cpu", ""), key[2]): "simulated.nbc"})
out["another_cpu"] = fast_kernel_cached()
real = files._source_stamp
files._source_stamp = (0.0, 0)  # an index written for an earlier version of the source
files._save_index({key: "simulated.nbc"})
files._source_stamp = real
out["stale"] = fast_kernel_cached()
print(json.dumps(out))
"""


def _python(code: str, cache_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir), "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)


def test_the_cache_check_reads_numbas_index(tmp_path):
    pytest.importorskip("numba")
    r = _python(PROBE, tmp_path / "numba-cache")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got == {"empty": False, "warm": True, "another_cpu": False, "stale": False}, got


def _run(tmp_path, name, *extra):
    from tempanon.samples import sample_dir

    sample = sample_dir("stream") / "use_of_force_sample.csv"
    return CliRunner().invoke(app, ["stream", str(sample), *SAMPLE_ARGS, *extra, "--out", str(tmp_path / name)])


@pytest.mark.parametrize("cached,said", [(False, True), (True, False), (None, True)], ids=["cold", "warm", "unknown"])
def test_said_only_when_the_kernel_will_be_compiled(tmp_path, monkeypatch, cached, said):
    import tempanon.stream.command as command
    from tempanon.stream import fast

    monkeypatch.setattr(fast, "_kernel", None)  # not loaded in this process
    monkeypatch.setattr(command, "fast_kernel_cached", lambda: cached)
    r = _run(tmp_path, "a")
    assert r.exit_code == 0, r.output
    assert ("preparing the fast step's compiled kernel" in r.output) is said, r.output


@pytest.mark.skipif(not os.environ.get("TEMPANON_SLOW_TESTS"), reason="compiles the kernel (~20 CPU-s): TEMPANON_SLOW_TESTS=1")
def test_a_real_compile_fills_the_cache(tmp_path):
    """Without simulation: an empty cache folder says not cached; after the kernel is compiled into it,
    a new process says cached and loads it (no compile)."""
    pytest.importorskip("numba")
    code = ("import json, time\nfrom tempanon.stream.command import fast_kernel_cached\nfrom tempanon.stream import fast\n"
            "before = fast_kernel_cached()\nt = time.process_time()\nfast.kernel()\n"
            "print(json.dumps([before, time.process_time() - t]))")  # fmt: skip
    first = _python(code, tmp_path / "c")
    assert first.returncode == 0, first.stderr
    before, compile_cpu = json.loads(first.stdout.strip().splitlines()[-1])
    second = _python(code, tmp_path / "c")
    assert second.returncode == 0, second.stderr
    after, load_cpu = json.loads(second.stdout.strip().splitlines()[-1])
    assert before is False and after is True
    assert load_cpu < compile_cpu / 3, (load_cpu, compile_cpu)
