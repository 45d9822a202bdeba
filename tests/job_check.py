"""Test helper: run a job file with one edit and check the error names the key and its line."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tempanon.cli import app


def assert_job_error(job_text: str, tmp_path: Path, old: str, new: str, message: str, line: int) -> None:
    """Replace ``old`` by ``new`` in ``job_text``, run it: exit 2, ``message`` and ``line`` named,
    nothing written to ``out/``."""
    assert old in job_text
    job = tmp_path / "job.toml"
    job.write_text(job_text.replace(old, new, 1))
    r = CliRunner().invoke(app, ["run", str(job)])
    assert r.exit_code == 2, r.output
    msg = " ".join(r.output.split())
    assert message in msg, msg
    assert f"job.toml, line {line}:" in msg, msg
    assert not (tmp_path / "out").exists()


def stream_job(src, out, *, l: int, window: int, model: str = "", output: str = "") -> str:
    """The text of a stream job over ``src`` (columns when, dx, zip) writing the folder ``out``;
    ``model`` and ``output`` are more lines of those tables."""
    return (f'[input]\npath = "{src}"\n[columns]\ntime = "when"\nsensitive = ["dx"]\nquasi_identifiers = ["zip"]\n'
            f'[model]\nname = "stream"\nl = {l}\nwindow = {window}\n{model}[output]\ndirectory = "{out}"\n{output}')


def fail_replace_of(monkeypatch, suffix: str):
    """Make ``os.replace`` fail (no space left) when its source ends with ``suffix``; returns the
    function that undoes it."""
    import os

    real = os.replace

    def failing(a, b):
        if str(a).endswith(suffix):
            raise OSError(28, "No space left on device")
        return real(a, b)

    monkeypatch.setattr(os, "replace", failing)
    return lambda: monkeypatch.setattr(os, "replace", real)
