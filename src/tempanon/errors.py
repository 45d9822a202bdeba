"""Exceptions with the exit status the command line maps them to.

* :class:`InputError` (exit 2): bad usage or bad input. The message says what is wrong and
  where (column, row, value, hierarchy line).
* :class:`NoSolutionError` (exit 1): the input is fine but no anonymization satisfies the request.
* :class:`VerificationError` (exit 3): the independent verifier rejected an output; nothing was
  written. This indicates a bug and should never happen.

:class:`TempanonWarning` marks a valid but probably unintended result (e.g. a stream in which every
record must be suppressed); the command line prints it on stderr.
"""


class TempanonError(Exception):
    """Base class of every error tempanon raises on purpose."""

    exit_code = 2


class InputError(TempanonError, ValueError):
    """Bad usage or bad input (exit status 2)."""

    exit_code = 2


class HierarchyError(InputError):
    """A generalization hierarchy is malformed or does not cover the data (exit status 2)."""


class NoSolutionError(TempanonError):
    """No generalization/anonymization satisfies the request (exit status 1)."""

    exit_code = 1


class VerificationError(TempanonError):
    """The independent privacy check failed; the output was not written (exit status 3)."""

    exit_code = 3


class TempanonWarning(UserWarning):
    """A valid request whose result is probably not what the user wants (the command line prints it)."""
