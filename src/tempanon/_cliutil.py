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
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import typer

from tempanon.errors import TempanonError

T = TypeVar("T")

ProgressFn = Callable[[str, int, int], None]

DATE_ORDER_HELP = ("auto|day|month: how numeric dates such as 05/03/2023 are read (ISO dates are unaffected). "
                   "auto: day first when a value can only be day first (13/05/2023, or dots: 02.03.2023) and none "
                   "only month first; a column showing both is refused; a column where every value could be either "
                   "is read month first, with a note. day / month: every value in that order; a value that cannot "
                   "be is refused (exit 2).")
"""The help of ``--date-order`` (every command that reads dates; the values are
:data:`tempanon.temporal.parse.DATE_ORDERS`)."""


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` to stderr and exit with ``code``."""
    _print_markup(f"[bold red]error:[/] {message}")
    raise typer.Exit(code)


def run_api(fn: Callable[[], T]) -> T:
    """Run ``fn`` and map tempanon errors to messages and exit codes."""
    try:
        return fn()
    except TempanonError as exc:
        fail(_escape(str(exc)), exc.exit_code)
    except KeyboardInterrupt:
        fail("interrupted; nothing was written", 130)
    except MemoryError:
        fail("out of memory; nothing was written (for data larger than memory: --engine duckdb --memory-limit 4GB)",
             ENGINE_FAILED)  # fmt: skip
    except Exception as exc:
        import errno

        if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
            # a path given on the command line or in a job file that the system cannot even look up
            name = str(exc.filename) if exc.filename is not None else "a path"
            shown = name if len(name) <= 80 else f"{name[:60]}...{name[-17:]} ({len(name)} characters)"
            fail(_escape(f"{shown}: file name too long for this system; give a shorter path; nothing was written"))
        # a Spark failure: an exception of py4j or pyspark, or one raised while handling one (a
        # driver that stopped leaves a refused connection after py4j's "Answer from Java side is empty")
        chain, e = [], exc
        while e is not None and len(chain) < 10:
            chain.append(e)
            e = e.__cause__ or e.__context__
        spark = [x for x in chain if type(x).__module__.startswith(("py4j", "pyspark"))]
        if not spark:
            raise
        from tempanon.lattice.source_spark import spark_failure_line

        first = spark_failure_line(exc) or next((ln.strip() for ln in str(spark[0]).splitlines() if ln.strip()),
                                                type(spark[0]).__name__)  # fmt: skip
        stopped = any(type(x).__name__ == "Py4JNetworkError" for x in spark)
        memory = ("the Spark driver's memory: --memory-limit 4GB for the local session tempanon starts (or "
                  "PYSPARK_SUBMIT_ARGS='--driver-memory 4g pyspark-shell'), or --engine duckdb")  # fmt: skip
        hint = f" ({memory})" if any("OutOfMemory" in str(x) or "Java heap" in str(x) for x in spark) else (
            f" (the Spark driver stopped; if it ran out of memory: {memory})" if stopped else "")  # fmt: skip
        fail(_escape(f"the Spark engine failed: {first[:300]}{hint}; nothing was written"), ENGINE_FAILED)
    raise AssertionError("unreachable")


#: exit code of a run the engine could not finish (out of memory, a Spark job failed)
ENGINE_FAILED = 4


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


#: the console styles tempanon's own messages use; any other ``[tag]`` in a message is text (a column, a value, a path)
OWN_STYLES = frozenset({"bold", "bold red", "red", "yellow", "green", "dim", "italic", "/", "/bold", "/yellow", "/red",
                        "/green", "/dim", "/italic", "/bold red"})  # fmt: skip


def own_markup(message: str) -> str:
    """``message`` with every ``[tag]`` that is not one of :data:`OWN_STYLES` escaped, so that rich prints it
    as written: a column ``dose[mg]`` or an output ``out[v2].csv`` was printed as ``dose`` and ``out.csv``
    (rich took the brackets for styles), and a column ``note[/b]`` made the status line raise MarkupError after
    the release was written (a traceback, exit 1). Tags already escaped (``\\[x]``, :func:`rich.markup.escape`)
    are left as they are."""
    import re

    def fix(m: re.Match) -> str:
        slashes, tag = m.group(1), m.group(2)
        if len(slashes) % 2 == 1 or tag[1:-1] in OWN_STYLES:
            return m.group(0)
        return f"{slashes}{slashes}\\{tag}"

    return re.sub(r"(\\*)(\[[a-z#/@][^[]*?\])", fix, message)


def _print_markup(message: str) -> None:
    from rich.errors import MarkupError

    console = _stderr_console()
    try:
        console.print(own_markup(message), markup=True, emoji=False)
    except MarkupError:  # a text holding one of the own tags unbalanced ('x[/]'): printed without styles
        import re

        console.print(re.sub(r"\[(" + "|".join(map(re.escape, OWN_STYLES)) + r")\]", "", message), markup=False, emoji=False)


def info(message: str, quiet: bool = False) -> None:
    """Print a status line on stderr unless ``quiet`` (tempanon's own styles rendered, any other bracket printed as
    written: :func:`own_markup`)."""
    if not quiet:
        _print_markup(message)


PROGRESS_INTERVAL = 10.0
"""Seconds between plain progress lines when stderr is not a terminal (environment variable
``TEMPANON_PROGRESS_INTERVAL`` overrides it)."""


def _progress_interval() -> float:
    import os

    raw = os.environ.get("TEMPANON_PROGRESS_INTERVAL")
    try:
        value = float(raw) if raw else PROGRESS_INTERVAL
    except ValueError:
        value = PROGRESS_INTERVAL
    return max(value, 0.01) if value == value else PROGRESS_INTERVAL


_clock = time.monotonic  # the progress clock (a module attribute so tests can drive it)


@contextlib.contextmanager
def _plain_progress(interval: float) -> Iterator[ProgressFn]:
    """Progress for a log file or pipe: every ``interval`` seconds a line ``[  40 s] task: done/total``
    (the latest reported step, or ``working`` before the first), and at the end ``finished in N s``
    when the work took at least ``interval``. A daemon thread prints, so a long phase that reports
    no step still shows it is alive; a fast run prints nothing."""
    import threading

    err = sys.stderr
    start = _clock()
    state: dict[str, Any] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def line(text: str) -> None:
        try:
            print(text, file=err, flush=True)
        except (OSError, ValueError):  # stderr closed: progress is best effort
            pass

    def beat() -> None:
        while not stop.wait(interval):
            with lock:
                what = f"{state['d']}: {state['done']}/{state['total']}" if state else "working"
            line(f"[{_clock() - start:6.0f} s] {what}")

    def update(description: str, done: int, total: int) -> None:
        with lock:
            state.update(d=description, done=done, total=total)

    thread = threading.Thread(target=beat, name="tempanon-progress", daemon=True)
    thread.start()
    ok = False
    try:
        yield update
        ok = True
    finally:
        stop.set()
        thread.join()
        elapsed = _clock() - start
        if ok and elapsed >= interval:
            line(f"finished in {elapsed:.1f} s")


@contextlib.contextmanager
def progress_reporter(quiet: bool = False) -> Iterator[ProgressFn | None]:
    """Yield a ``progress(description, done, total)`` callback reporting on stderr.

    On a terminal it draws a Rich bar. Otherwise (a log file, a pipe, a scheduler) it prints a
    plain line every :data:`PROGRESS_INTERVAL` seconds while the work runs and the total time at
    the end (:func:`_plain_progress`). With ``quiet`` it yields ``None`` so the API does no
    progress work at all.
    """
    if quiet:
        yield None
        return
    if not sys.stderr.isatty():
        with _plain_progress(_progress_interval()) as update:
            yield update
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=_stderr_console(),
        transient=True,
    )
    tasks: dict[str, Any] = {}

    def update(description: str, done: int, total: int) -> None:
        if description not in tasks:
            tasks[description] = progress.add_task(description, total=total)
        progress.update(tasks[description], completed=done, total=total)

    with progress:
        yield update


def levels_text(levels: dict) -> str:
    """A selected node for the status line: ``age=4, sex=0`` (each quasi-identifier's level name;
    the summary keeps the mapping)."""
    return ", ".join(f"{q}={v}" for q, v in levels.items())


def report_roles(summary: dict, quiet: bool = False, job: bool = False) -> None:
    """Print the columns left out of the release (no role) and the overridden identifier findings
    on stderr (from the summary's ``left_out`` and ``verification`` keys); ``job``: a job file's run
    (the advice names the job's keys)."""
    from tempanon.data.roles import left_out_line

    line = left_out_line(summary.get("left_out") or [], job=job)
    if line:
        info(f"[yellow]note:[/] {_escape(line)}", quiet)
    for o in (summary.get("verification") or {}).get("identifier_overrides", []):
        info(f"[yellow]note:[/] column {_escape(repr(o['column']))} released unchanged by {'allow_identifier' if job else '--allow-identifier'} although "
             f"{_escape(o['reason'])}", quiet)  # fmt: skip
