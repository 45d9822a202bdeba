"""An input that is a pipe (``--data <(zcat t.csv.gz)``, a named pipe, ``/dev/stdin``) is refused up front on
every command and engine: every route reads its input more than once, and a pipe gives its lines to the
first reader only. Before, the second read saw a cut table: ``check <(zcat adult.csv.gz)`` said "its lines
have more fields than the header"; a route that opened the pipe with no writer would wait for ever.
Each command runs in a subprocess with a time limit, so a route that opens the pipe fails the test
instead of hanging it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tempanon.samples import sample_dir

SRC = Path(__file__).resolve().parents[2] / "src"

COMMANDS = {
    "check": ["check", "{in}", "--qi", "age,sex", "--k", "2"],
    "kanon": ["kanon", "{in}", "--qi", "age,sex", "--hierarchies", str(sample_dir("adult")), "--k", "2", "--out", "{out}/r.csv"],
    "timestamped": ["timestamped", "{in}", "--uid", "PATIENT", "--time", "START", "--k", "2", "--out", "{out}/r.csv"],
    "stream": ["stream", "{in}", "--time", "response_datetime", "--sensitive", "problem", "--qi", "race,sex", "--l", "2",
               "--window", "1", "--out", "{out}/rel"],
    "kp": ["kp", "{in}", "--id", "id", "--qi", "A0:A9", "--sensitive", "S", "--k", "10", "--p", "5", "--out", "{out}/kp.csv"],
    "init": ["init", "{in}", "--out", "{out}/job.toml"],
    "hierarchy": ["hierarchy", "--column", "age", "--type", "intervals", "--data", "{in}", "--widths", "5,10", "--out", "{out}/age.csv"],
}
ENGINES = {"check": ("numpy", "duckdb"), "kanon": ("numpy", "duckdb"), "timestamped": ("numpy", "duckdb")}


def _cases():
    for command in COMMANDS:
        for engine in ENGINES.get(command, (None,)):
            yield pytest.param(command, engine, id=f"{command}-{engine or 'default'}")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
@pytest.mark.parametrize(("command", "engine"), list(_cases()))
def test_a_pipe_as_input_is_refused_up_front(tmp_path, command, engine):
    fifo = tmp_path / "in.csv"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    out.mkdir()
    args = [a.replace("{in}", str(fifo)).replace("{out}", str(out)) for a in COMMANDS[command]]
    if engine is not None:
        args += ["--engine", engine]
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = "import sys; from tempanon.cli import main; sys.argv[0] = 'tempanon'; main()"
    try:
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} opened the pipe {fifo} (it waited for a writer) instead of refusing it")
    text = r.stdout + r.stderr
    assert r.returncode == 2, text
    assert f"input {fifo} is a pipe, not a file" in " ".join(text.split()), text
    assert "Traceback" not in text
    assert list(out.iterdir()) == []


def _dir_cases():
    for command in ("check", "kanon", "timestamped"):
        for engine in ("numpy", "duckdb", "spark"):
            marks = [pytest.mark.spark] if engine == "spark" else []
            yield pytest.param(command, engine, id=f"{command}-{engine}", marks=marks)


@pytest.mark.parametrize(("command", "engine"), list(_dir_cases()))
def test_a_directory_as_input_is_refused_on_every_engine(tmp_path, command, engine):
    """A folder given as the input (``data.io.check_input_file``): "input is a directory, not a table file"
    (exit 2) on every engine. ``kanon`` and ``timestamped`` on Spark read a CSV-named folder as a file:
    IsADirectoryError, a traceback and exit 1 (found by helper parity3; Spark is not started: refused before).
    A folder of Parquet part files (``d.parquet/``) is still Spark's to read."""
    folder = tmp_path / "in.csv"
    folder.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    args = [a.replace("{in}", str(folder)).replace("{out}", str(out)) for a in COMMANDS[command]] + ["--engine", engine]
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = "import sys; from tempanon.cli import main; sys.argv[0] = 'tempanon'; main()"
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, env=env)
    text = r.stdout + r.stderr
    assert r.returncode == 2, text
    assert f"input is a directory, not a table file: {folder}" in " ".join(text.split()), text
    assert "Traceback" not in text and list(out.iterdir()) == []
