"""Feedback on long runs when stderr is not a terminal (issue 16): plain progress lines and a final
timing from ``_cliutil.progress_reporter``, end to end through the CLI."""
from __future__ import annotations

import io
import itertools
import re
import time

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon import _cliutil
from tempanon.cli import app


def _wait_for(buf: io.StringIO, pattern: str, limit: float = 20.0) -> str:
    """Poll ``buf`` until ``pattern`` appears (the heartbeat thread prints it); fail after ``limit`` s."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if re.search(pattern, buf.getvalue()):
            return buf.getvalue()
        time.sleep(0.01)
    raise AssertionError(f"{pattern!r} never printed; got {buf.getvalue()!r}")


def test_plain_lines_and_final_timing_when_not_a_terminal(monkeypatch):
    buf = io.StringIO()  # not a TTY
    monkeypatch.setattr("sys.stderr", buf)
    monkeypatch.setenv("TEMPANON_PROGRESS_INTERVAL", "0.02")
    with _cliutil.progress_reporter() as progress:
        assert progress is not None
        _wait_for(buf, r"\] working$|\] working\n")  # before the first step: still alive
        progress("Incognito: subsets of size 2/5", 3, 10)
        _wait_for(buf, r"\[\s*\d+ s\] Incognito: subsets of size 2/5: 3/10\n")
        assert "finished" not in buf.getvalue()
    out = buf.getvalue()
    assert re.search(r"finished in \d+\.\d s\n$", out)
    n = len(out)
    time.sleep(0.1)
    assert len(buf.getvalue()) == n  # the heartbeat stopped with the work


def test_a_fast_run_prints_nothing_and_quiet_does_no_progress_work(monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr("sys.stderr", buf)
    monkeypatch.setenv("TEMPANON_PROGRESS_INTERVAL", "3600")
    with _cliutil.progress_reporter() as progress:
        progress("search", 1, 2)
    assert buf.getvalue() == ""
    with _cliutil.progress_reporter(quiet=True) as progress:
        assert progress is None


def test_no_final_timing_after_an_error(monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr("sys.stderr", buf)
    monkeypatch.setenv("TEMPANON_PROGRESS_INTERVAL", "0.01")
    with pytest.raises(RuntimeError), _cliutil.progress_reporter():
        time.sleep(0.05)
        raise RuntimeError("boom")
    assert "finished" not in buf.getvalue()


@pytest.mark.parametrize("raw, want", [("0.5", 0.5), ("0", 0.01), ("nonsense", _cliutil.PROGRESS_INTERVAL), ("nan", _cliutil.PROGRESS_INTERVAL)])
def test_interval_from_the_environment(monkeypatch, raw, want):
    monkeypatch.setenv("TEMPANON_PROGRESS_INTERVAL", raw)
    assert _cliutil._progress_interval() == want


def test_cli_and_job_runner_report_timing_on_a_pipe(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(20, 70, 300).astype(str), "sex": rng.choice(["M", "F"], 300)})
    data = tmp_path / "t.csv"
    df.to_csv(data, index=False)
    hdir = tmp_path / "h"
    hdir.mkdir()
    from tempanon.hierarchy import build_intervals, build_suppression

    build_intervals("age", df.age, [10, 20, 40]).to_csv(hdir / "age.csv")
    build_suppression("sex", df.sex).to_csv(hdir / "sex.csv")
    monkeypatch.setenv("TEMPANON_PROGRESS_INTERVAL", "0.01")
    # every run is "long": the progress clock advances 1 s per reading, so the outcome does not
    # depend on how fast this machine runs the (tiny) search
    ticks = itertools.count()
    monkeypatch.setattr(_cliutil, "_clock", lambda: float(next(ticks)))
    r = CliRunner().invoke(app, ["kanon", str(data), "--qi", "age,sex", "--hierarchies", str(hdir), "--k", "5",
                                 "--out", str(tmp_path / "o.csv")])
    assert r.exit_code == 0, r.output
    assert re.search(r"finished in \d+\.\d s", r.output)
    job = tmp_path / "job.toml"
    job.write_text(f"""[input]\npath = "t.csv"\n[columns]\nquasi_identifiers = ["age", "sex"]\n
[hierarchies]\nage = "h/age.csv"\nsex = "h/sex.csv"\n[model]\nname = "kanon"\nk = 5\n[output]\ntable = "o2.csv"\n""")
    r = CliRunner().invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    assert re.search(r"finished in \d+\.\d s", r.output)
    (tmp_path / "o2.csv").unlink()
    r = CliRunner().invoke(app, ["run", str(job), "--quiet"])
    assert r.exit_code == 0 and r.output == ""
