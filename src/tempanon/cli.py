"""The ``tempanon`` command line: one Typer app, each command a thin layer over the Python API.

Exit status: 0 success, 1 no anonymization satisfies the request, 2 bad usage or bad input,
3 the independent verifier rejected the output (nothing written), 4 the engine could not finish
(out of memory, a failed Spark job; nothing written), 5 tempanon failed unexpectedly (a bug: the
traceback is printed; Python's own status for it, 1, is the one that means "no anonymization").
"""

from __future__ import annotations

import re

import typer

app = typer.Typer(
    name="tempanon",
    help="Anonymize temporal data: k-anonymity (Incognito), timestamped data, snapshot streams, time series.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    """Attach every command. Each capability keeps its command function in its own module."""
    from tempanon.kanon.command import demo, kanon

    app.command("kanon")(kanon)
    app.command("demo")(demo)
    # Commands of the other capabilities register here when their module exists.
    import importlib

    for module, names in (
        ("tempanon.temporal.command", ("timestamped",)),
        ("tempanon.stream.command", ("stream",)),
        ("tempanon.timeseries.command", ("kp",)),
        ("tempanon.steward.command", ("check", "run", "init", "hierarchy")),
    ):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is None or not (module == exc.name or module.startswith(exc.name + ".")):
                raise  # a real missing dependency inside the module
            continue
        for name in names:
            app.command(name.replace("_", "-"))(getattr(mod, name))


def _reflow(doc: str | None) -> str | None:
    """A command's docstring as Typer's help shows it: the lines of each paragraph joined into one, so
    Rich wraps the text at the terminal's width (it keeps single line breaks, and the source's lines,
    wrapped at ~100 characters, came out as a ragged column of long and short lines at 80). A
    paragraph whose first line is ``\\b`` (click's convention) keeps its lines: examples."""
    if not doc:
        return doc
    import inspect

    paragraphs = []
    for para in re.split(r"\n\s*\n", inspect.cleandoc(doc)):
        lines = para.splitlines()
        if lines and lines[0].strip() == "\b":
            paragraphs.append("\n".join(lines[1:]))
        else:
            paragraphs.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs)


_register()
for _command in app.registered_commands:
    _command.callback.__doc__ = _reflow(_command.callback.__doc__)


def _show_tempanon_warnings() -> None:
    """A :class:`~tempanon.errors.TempanonWarning` (a valid input that is probably not what the user
    means) is printed as ``warning: ...`` on stderr, as the commands' own notes are, not as Python's
    ``file:line: TempanonWarning: ...``; other warnings as Python shows them."""
    import warnings

    from tempanon.errors import TempanonWarning

    python_show = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, TempanonWarning):
            from tempanon._cliutil import _escape, _stderr_console

            _stderr_console().print(f"[yellow]warning:[/] {_escape(str(message))}", markup=True, emoji=False)
        else:
            python_show(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def main() -> None:
    import warnings

    # pyspark warns on import that it "does not yet fully support pandas >= 3.0.0"; tempanon's Spark
    # paths are tested with the pandas it installs (the spark-marked suite), and the line reached users
    # of --engine spark even with --quiet
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    _show_tempanon_warnings()
    try:
        app()
    except Exception:  # (SystemExit and KeyboardInterrupt pass): an unexpected error is not 'no solution' (exit 1)
        import sys
        import traceback

        traceback.print_exc()
        print("error: tempanon failed unexpectedly (a bug: please report it with the traceback above); exit 5",
              file=sys.stderr)  # fmt: skip
        sys.exit(INTERNAL_ERROR)


#: exit status of an unexpected error (a traceback): Python exits 1 for it, tempanon's 'no solution'
INTERNAL_ERROR = 5


if __name__ == "__main__":
    main()
