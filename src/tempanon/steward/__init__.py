"""What a data steward uses day to day: risk checks of a table, job files, a guided start,
hierarchy building. Each function here is the Python API behind a ``tempanon`` command."""

from tempanon._lazy import lazy_exports

_EXPORTS = {
    'CheckResult': 'check',
    'check_table': 'check',
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
