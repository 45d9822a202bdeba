"""Where a row is, in words a user can open: the **file line**.

Every message about a row of an input or output table names it as ``line N``: the line of the
CSV file, counting the header as line 1, so the first data row is line 2 (what an editor or
``sed -n Np`` shows). A Parquet, Excel or SQL source has no lines; the same number is the row's
position + 2, i.e. its line once written as CSV (for Excel, the sheet's row number). A quoted
CSV field holding a line break makes the file's later lines run ahead of these numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

HEADER_LINES = 1
"""Lines before the first data row (the header)."""


def line_of(position: int) -> int:
    """File line of the data row at 0-based ``position``."""
    return int(position) + HEADER_LINES + 1


def at_line(position: int) -> str:
    """``"line N"`` for the data row at 0-based ``position``."""
    return f"line {line_of(position)}"


def line_of_label(index: pd.Index, label: Any) -> int | None:
    """File line of the first row labelled ``label`` in ``index`` (``None`` if absent)."""
    hits = np.flatnonzero(np.asarray(index == label))
    return line_of(int(hits[0])) if len(hits) else None


def at_label(index: pd.Index, label: Any) -> str:
    """``"line N"`` for the row labelled ``label`` (``"row label X"`` if ``index`` lacks it)."""
    line = line_of_label(index, label)
    return f"line {line}" if line is not None else f"row label {label!r}"


def at_row_label(label: Any) -> str:
    """``"line N"`` for a row known only by its label: a table read from a file (``read_table``)
    and the frequency sources are labelled by position, so an integer label ``i`` is line
    ``i + 2``; any other label is shown as ``row label X``."""
    if isinstance(label, (int, np.integer)) and not isinstance(label, bool):
        return at_line(int(label))
    return f"row label {label!r}"


__all__ = ["HEADER_LINES", "at_label", "at_line", "at_row_label", "line_of", "line_of_label"]
