"""Plumbing shared by every command of the Typer app in :mod:`tempanon.cli`.

A command module defines a plain function with Typer annotations and calls the Python API inside
:func:`run_api`, which turns :class:`~tempanon.errors.TempanonError` into a plain message on
stderr and the documented exit status (0 ok, 1 no solution, 2 bad input, 3 verification failed).
Long work reports progress through a callback ``progress(description, done, total)``;
:func:`progress_reporter` gives one backed by a Rich progress bar (or a no-op with ``--quiet``).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import typer

from tempanon.errors import TempanonError

T = TypeVar("T")

ProgressFn = Callable[[str, int, int], None]


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` to stderr and exit with ``code``."""
    _stderr_console().print(f"[bold red]error:[/] {message}", markup=True, emoji=False)
    raise typer.Exit(code)


def run_api(fn: Callable[[], T]) -> T:
    """Run ``fn`` and map tempanon errors to messages and exit codes."""
    try:
        return fn()
    except TempanonError as exc:
        fail(_escape(str(exc)), exc.exit_code)
    except KeyboardInterrupt:
        fail("interrupted; nothing was written", 130)
    raise AssertionError("unreachable")


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def info(message: str, quiet: bool = False) -> None:
    """Print a status line on stderr unless ``quiet``."""
    if not quiet:
        _stderr_console().print(message, markup=True, emoji=False)


@contextlib.contextmanager
def progress_reporter(quiet: bool = False) -> Iterator[ProgressFn | None]:
    """Yield a ``progress(description, done, total)`` callback drawing a Rich bar on stderr.

    With ``quiet`` (or when stderr is not a terminal and ``quiet`` is set) yields ``None`` so the
    API does no progress work at all.
    """
    if quiet:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=_stderr_console(),
        transient=True,
        disable=not sys.stderr.isatty(),
    )
    tasks: dict[str, Any] = {}

    def update(description: str, done: int, total: int) -> None:
        if description not in tasks:
            tasks[description] = progress.add_task(description, total=total)
        progress.update(tasks[description], completed=done, total=total)

    with progress:
        yield update


def report_roles(summary: dict, quiet: bool = False) -> None:
    """Print the columns left out of the release (no role) and the overridden identifier findings
    on stderr (from the summary's ``left_out`` and ``verification`` keys)."""
    from tempanon.data.roles import left_out_line

    line = left_out_line(summary.get("left_out") or [])
    if line:
        info(f"[yellow]note:[/] {_escape(line)}", quiet)
    for o in (summary.get("verification") or {}).get("identifier_overrides", []):
        info(f"[yellow]note:[/] column {_escape(repr(o['column']))} released unchanged by --allow-identifier although "
             f"{_escape(o['reason'])}", quiet)  # fmt: skip
