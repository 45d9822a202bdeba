"""Every command's --help: the description is wrapped by Rich at the terminal's width (no ragged lines
from the source's line breaks), examples keep their lines, and each anonymizing command states its
exit status."""

import re

import pytest
from typer.testing import CliRunner

from tempanon.cli import _reflow, app

runner = CliRunner()
COMMANDS = [c.name for c in app.registered_commands]


def _description(name):
    """The lines between the usage line and the first box of ``tempanon NAME --help`` at 80 columns,
    grouped into paragraphs."""
    out = runner.invoke(app, [name, "--help"], terminal_width=80, env={"COLUMNS": "80"}).output
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if "Usage:" in ln) + 1
    end = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("╭"))
    paragraphs, cur = [], []
    for ln in lines[start:end]:
        if ln.strip():
            cur.append(ln.rstrip())
        elif cur:
            paragraphs.append(cur)
            cur = []
    if cur:
        paragraphs.append(cur)
    return paragraphs


@pytest.mark.parametrize("name", COMMANDS)
def test_help_description_is_wrapped_at_the_terminal_width(name):
    # a line that is not its paragraph's last is filled to near the width (the source's breaks at ~100
    # characters left lines of 20 characters between full ones); the hierarchy examples are exempt
    for para in _description(name):
        if para[0].strip().startswith("Show:"):
            continue
        for ln in para[:-1]:
            nxt = para[para.index(ln) + 1].split()[0]
            assert len(ln) + 1 + len(nxt) > 79, (name, ln)


def test_examples_keep_their_lines_and_exit_status_is_stated():
    show = [p for p in _description("hierarchy") if p[0].strip().startswith("Show:")]
    assert show and show[0][1].strip().startswith("Build:")
    for name in ("kanon", "timestamped", "stream", "kp", "run", "check"):
        text = " ".join(" ".join(p) for p in _description(name))
        assert re.search(r"Exit status: 0 \w+", " ".join(text.split())), name


def test_reflow():
    assert _reflow("One\n    two.\n\n    Three\n    four.\n    ") == "One two.\n\nThree four."
    assert _reflow("A.\n\n    \b\n    x y\n    z\n") == "A.\n\nx y\nz"
    assert _reflow(None) is None


def test_short_options_are_the_same_on_every_command():
    """-q is --quiet and -v is --verbose wherever the long option exists (kp had --quiet only)."""
    import typer.main

    cmd = typer.main.get_command(app)
    for name, sub in cmd.commands.items():
        for p in sub.params:
            opts = set(p.opts) | set(getattr(p, "secondary_opts", []))
            for long, short in (("--quiet", "-q"), ("--verbose", "-v")):
                if long in opts:
                    assert short in opts, (name, long)
