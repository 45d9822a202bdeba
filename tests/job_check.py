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
