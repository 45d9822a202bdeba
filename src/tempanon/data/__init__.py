"""Tables, column roles, dictionary encoding and I/O."""

from tempanon._lazy import lazy_exports

_EXPORTS = {
    "atomic_write": "io",
    "read_table": "io",
    "write_json": "io",
    "write_table": "io",
    "ColumnRoles": "roles",
    "require_columns": "roles",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
