"""Acceptance audit: ``tempanon stream --help`` showed ``--defer ... in between a mix .``: the help's
``[default: 2/3, ...]`` was read as console markup and removed, so the default was invisible. Every
option's help must show all of its text (no ``[...]`` eaten by the markup)."""

from __future__ import annotations

import re

import typer
from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─]", " ", text))


def test_stream_defer_default_shown():
    r = runner.invoke(app, ["stream", "--help"], terminal_width=200, env={"COLUMNS": "200"})
    assert r.exit_code == 0
    flat = _flat(r.output)
    assert "in between a mix (default 2/3" in flat and "0 with --step paper" in flat


def test_no_help_text_lost_to_markup():
    cmd = typer.main.get_command(app)
    for name, c in cmd.commands.items():
        r = runner.invoke(app, [name, "--help"], terminal_width=250, env={"COLUMNS": "250"})
        flat = _flat(r.output)
        for p in c.params:
            h = getattr(p, "help", None) or ""
            for bracket in re.findall(r"\[[^\]]*\]", h):
                assert _flat(bracket) in flat, (name, p.name, bracket)


def test_every_option_has_help():
    """``tempanon demo --help`` listed --max-suppression, --algorithm and --quiet with no text."""
    cmd = typer.main.get_command(app)
    bare = [(name, p.opts[0]) for name, c in cmd.commands.items() for p in c.params
            if p.param_type_name == "option" and not (getattr(p, "help", None) or "").strip()]
    assert bare == []


def test_demo_quiet_does_what_its_help_says(tmp_path):
    """demo's --quiet (its help had no text, then said 'no status output') silences the notes but the
    demo still prints its result, which is its purpose: the help says so."""
    h = _flat(runner.invoke(app, ["demo", "--help"], terminal_width=200, env={"COLUMNS": "200"}).output)
    assert "(the result is still printed)" in h
    r = runner.invoke(app, ["demo", "-q", "--out-dir", str(tmp_path / "d")])
    assert r.exit_code == 0 and "Result:" in r.output and "search plan" not in r.output
