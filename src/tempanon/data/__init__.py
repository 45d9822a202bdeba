"""Tables, column roles, dictionary encoding and I/O."""

from tempanon.data.io import atomic_write, read_table, write_json, write_table
from tempanon.data.roles import ColumnRoles, require_columns

__all__ = ["ColumnRoles", "atomic_write", "read_table", "require_columns", "write_json", "write_table"]
