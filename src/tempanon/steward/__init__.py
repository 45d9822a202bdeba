"""What a data steward uses day to day: risk checks of a table, job files, a guided start,
hierarchy building. Each function here is the Python API behind a ``tempanon`` command."""

from tempanon.steward.check import CheckResult, check_table

__all__ = ["CheckResult", "check_table"]
