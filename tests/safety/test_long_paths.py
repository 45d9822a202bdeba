"""A path the system cannot look up (a name longer than the file system allows, ``ENAMETOOLONG``) given
to any command, as its input, its output or in a job file, is refused with a message (exit 2), never a
traceback, and nothing is written. Before, ``check``, ``timestamped``, ``kp``, ``init`` and ``run``
ended in ``OSError: [Errno 36] File name too long`` (found by tests/safety/test_fuzz_jobs.py, seed 34)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()
LONG = "a" * 300 + ".csv"  # (a file name: 255 bytes at most on Linux and macOS file systems)


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    n = 30
    rng = np.random.default_rng(1)
    pd.DataFrame({"pid": rng.integers(0, 10, n).astype(str), "sid": [f"s{i}" for i in range(n)], "t": pd.date_range("2021-01-01", periods=n, freq="D").strftime("%Y-%m-%d"),
                  "sex": rng.choice(["F", "M"], n), "dx": rng.choice(list("abc"), n),
                  **{f"A{j}": rng.normal(size=n).round(2) for j in range(3)}}).to_csv("in.csv", index=False)  # fmt: skip
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    return tmp_path


COMMANDS = {
    "check": ["check", "{inp}", "--qi", "sex"],
    "kanon": ["kanon", "{inp}", "--qi", "sex", "--hierarchies", "h", "--k", "2", "--out", "{out}"],
    "timestamped": ["timestamped", "{inp}", "--time", "t", "--uid", "pid", "--k", "2", "--out", "{out}"],
    "stream": ["stream", "{inp}", "--time", "t", "--sensitive", "dx", "--qi", "sex", "--l", "2", "--window", "1", "--out", "{outdir}"],
    "kp": ["kp", "{inp}", "--id", "sid", "--qi", "A0:A2", "--k", "2", "--p", "2", "--out", "{out}"],
    "init": ["init", "{inp}"],
}


def _args(cmd, inp, out):
    return [a.format(inp=inp, out=f"rel/{out}", outdir=out) for a in COMMANDS[cmd]]


@pytest.mark.parametrize("which", ["input", "output"])
@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_a_too_long_path_is_refused(data, cmd, which):
    if which == "output" and cmd in ("check", "init"):
        pytest.skip("no output path")
    r = runner.invoke(app, _args(cmd, LONG if which == "input" else "in.csv", LONG if which == "output" else "o.csv"))
    assert r.exit_code == 2, (r.exit_code, repr(r.exception), r.output)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    msg = " ".join(r.output.split())
    assert "too long" in msg or "not found" in msg or "does not exist" in msg, msg
    assert not (data / "rel").exists() or not any((data / "rel").iterdir())


@pytest.mark.parametrize("key", ["input", "output"])
def test_a_job_with_a_too_long_path(data, key):
    inp, out = (LONG, "rel/o.csv") if key == "input" else ("in.csv", f"rel/{LONG}")
    (data / "job.toml").write_text(f'[input]\npath = "{inp}"\n[columns]\nquasi_identifiers = ["sex"]\n'
                                   '[hierarchies]\nsex = "h/sex.csv"\n[model]\nname = "kanon"\nk = 2\n'
                                   f'[output]\ntable = "{out}"\n')  # fmt: skip
    r = runner.invoke(app, ["run", "job.toml"])
    assert r.exit_code == 2, (r.exit_code, repr(r.exception), r.output)
    assert "too long" in " ".join(r.output.split())
    assert not (data / "rel").exists() or not any((data / "rel").iterdir())
