"""Value generalization hierarchies (VGH), Incognito Section 2.

A :class:`Hierarchy` is a table with one row per ground value (a *leaf*) and one column per level:
column 0 holds the value itself, column ``j`` its generalization at level ``j``, the last column a
single top value (usually ``*``). It is the ARX CSV format in memory.

Missing values
--------------
A missing cell (``NaN``/``None``/empty CSV cell) is its own category, written as the empty string.
If the hierarchy lists the empty string as a value it is generalized as that row says; otherwise
it stays missing (empty) at every level below the top and becomes the top value at the top level.
Missing values are never dropped.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tempanon.errors import HierarchyError, InputError
from tempanon.lattice.dimension import Dimension

MISSING = ""
"""The text of the missing-value category in hierarchies and released tables."""


def as_text(series: pd.Series) -> np.ndarray:
    """The values of ``series`` as an object array of ``str``, missing values as :data:`MISSING`.

    Integral floats print without a decimal part (``39.0`` -> ``"39"``), so a column that pandas
    read as float because of missing cells still matches a hierarchy written with integers.
    Work is per distinct value, not per row. An object column of mixed types (``1``, ``True``,
    ``1.0``: equal in Python, different texts in a release) is taken cell by cell as the text the
    release writes (:func:`tempanon.data.cells.released_text`): ``1.0`` there is ``"1.0"``, ``True``
    is ``"True"``, not merged with ``1``.
    """
    from tempanon.data.cells import is_mixed, released_text

    s = series if isinstance(series, pd.Series) else pd.Series(series, dtype=object)
    if is_mixed(s):
        t = released_text(s)
        return t.where(t.notna(), MISSING).to_numpy(dtype=object)
    codes, uniq = pd.factorize(s, use_na_sentinel=True)
    texts = np.array([_to_text(u) for u in uniq] + [MISSING], dtype=object)
    return texts[codes]


def _to_text(value: object) -> str:
    if value is None:
        return MISSING
    if isinstance(value, float):
        if value != value:  # NaN
            return MISSING
        if value.is_integer():
            return str(int(value))
    if isinstance(value, (np.floating,)):
        if np.isnan(value):
            return MISSING
        if float(value).is_integer():
            return str(int(value))
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value)


@dataclass(eq=False)
class Hierarchy:
    """A full-domain value generalization hierarchy for one attribute.

    Parameters
    ----------
    name:
        The attribute (column) it generalizes; used in error messages.
    table:
        ``(n_values, height + 1)`` array of ``str``: row ``i`` is value ``table[i, 0]`` and its
        generalizations, the last column a single top value.
    lines:
        For error messages: the 1-based source line of each row (``None`` for built hierarchies).
    source:
        Where the hierarchy came from (a file path or a builder name).
    """

    name: str
    table: np.ndarray
    lines: Sequence[int] | None = None
    source: str = "hierarchy"
    _dimension: Dimension | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.table = np.asarray(self.table, dtype=object)
        _validate(self.name, self.table, self.lines, self.source)

    # ---- construction ------------------------------------------------------------------------
    @classmethod
    def from_rows(cls, name: str, rows: Sequence[Sequence[str]], *, source: str = "hierarchy", lines: Sequence[int] | None = None) -> Hierarchy:
        """Build from rows ``[value, level1, ..., top]``; raises :class:`HierarchyError` on ragged rows."""
        if not rows:
            raise HierarchyError(f"attribute {name!r}: {source} is empty")
        width = len(rows[0])
        for i, row in enumerate(rows):
            if len(row) != width:
                line = lines[i] if lines else i + 1
                raise HierarchyError(
                    f"attribute {name!r}: {source} line {line} has {len(row)} columns, expected {width} "
                    f"like line {lines[0] if lines else 1} (ragged rows)"
                )
        table = np.array([[str(c) for c in row] for row in rows], dtype=object).reshape(len(rows), width)
        return cls(name=name, table=table, lines=list(lines) if lines else None, source=source)

    @classmethod
    def from_csv(cls, path: str | os.PathLike, name: str | None = None, *, delimiter: str = ";") -> Hierarchy:
        """Read the ARX format: ``;``-separated, no header, column 0 the value, column j level j.

        A value holding the separator, a quote, a line break or outer spaces is quoted with ``"``
        (a quote inside doubled); spaces around an unquoted value are stripped (:func:`_hierarchy_rows`)."""
        p = Path(path)
        attr = name or p.stem
        if not p.exists():
            raise HierarchyError(f"attribute {attr!r}: hierarchy file not found: {p}")
        if p.is_dir():  # ('tempanon hierarchy DIR' was an IsADirectoryError traceback)
            raise HierarchyError(f"attribute {attr!r}: {p} is a directory, not a hierarchy file")
        raw = p.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise HierarchyError(
                f"attribute {attr!r}: hierarchy file {p} is not UTF-8: byte 0x{raw[exc.start]:02x} on line {line}; "
                "save it as UTF-8 (e.g. iconv -f latin1 -t utf-8), the encoding tempanon reads data and hierarchies in"
            ) from None
        rows, lines = [], []
        for lineno, row in _hierarchy_rows(text, delimiter, attr, p):
            if not row or all(not c.strip() for c in row):
                continue
            rows.append(row)
            lines.append(lineno)
        return cls.from_rows(attr, rows, source=str(p), lines=lines)

    def to_csv(self, path: str | os.PathLike, *, delimiter: str = ";") -> Path:
        """Write the ARX format atomically."""
        from tempanon.data.io import atomic_write

        def write(tmp: Path) -> None:
            rows = self.table.tolist()
            # a lone carriage return is left unquoted by the csv writer and read back as a line end,
            # and an unquoted value's outer spaces are layout to the reader (:meth:`from_csv`): then
            # every field is quoted (as data.io.csv_text does for a carriage return)
            quote_all = any("\r" in c or c != c.strip() for row in rows for c in map(str, row))
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                csv.writer(fh, delimiter=delimiter, lineterminator="\n", quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL).writerows(rows)

        return atomic_write(path, write)

    # ---- properties --------------------------------------------------------------------------
    @property
    def height(self) -> int:
        return self.table.shape[1] - 1

    @property
    def values(self) -> np.ndarray:
        return self.table[:, 0]

    def mapping(self, level: int) -> dict[str, str]:
        """``{value: generalization at level}`` for every value (plus the missing category)."""
        out = dict(zip(self.table[:, 0].tolist(), self.table[:, level].tolist()))
        if MISSING not in out:
            out[MISSING] = self.table[0, -1] if level == self.height else MISSING
        return out

    def with_missing(self) -> Hierarchy:
        """This hierarchy with a row for the missing category if it has none (see module doc)."""
        if MISSING in set(self.table[:, 0].tolist()):
            return self
        row = [MISSING] * self.height + [self.table[0, -1]]
        table = np.vstack([self.table, np.array([row], dtype=object)])
        lines = list(self.lines) + [0] if self.lines else None
        return Hierarchy(self.name, table, lines, self.source)

    # ---- encoding ----------------------------------------------------------------------------
    def dimension(self) -> Dimension:
        """The chain of levels 0..height as a :class:`~tempanon.lattice.Dimension`.

        Base codes are the row numbers of the table (every value of the hierarchy, whether or not
        it occurs in the data). ``loss`` of a value covering ``c`` of the ``L`` leaves is
        ``(c - 1) / (L - 1)``: 0 for an ungeneralized value, 1 for the top.
        """
        if self._dimension is None:
            n, h1 = self.table.shape
            codes, labels, losses = [], [], []
            for j in range(h1):
                lab, code = pd.factorize(pd.Series(self.table[:, j], dtype=object))
                codes.append(np.asarray(lab, dtype=np.int64))
                labels.append(np.asarray(code, dtype=object))
                cover = np.bincount(lab, minlength=len(code))
                losses.append((cover - 1) / (n - 1) if n > 1 else np.zeros(len(code)))
            self._dimension = Dimension(
                name=self.name,
                level_names=tuple(str(j) for j in range(h1)),
                parents=tuple((j + 1,) if j + 1 < h1 else () for j in range(h1)),
                codes=tuple(codes),
                labels=tuple(labels),
                loss=tuple(losses),
            )
        return self._dimension

    def encode(self, series: pd.Series) -> tuple[Dimension, np.ndarray]:
        """Encode a data column to base codes; every value must occur in the hierarchy.

        Raises :class:`HierarchyError` naming the column, the missing values and the first row of
        each (by the series index).
        """
        text = as_text(series)
        hier = self.with_missing() if (text == MISSING).any() else self
        leaves = pd.Index(hier.table[:, 0].tolist())
        codes = leaves.get_indexer(text)
        if (codes < 0).any():
            bad = np.flatnonzero(codes < 0)
            vals = pd.unique(text[bad])
            from tempanon.data.lines import at_row_label

            # the label of the first row holding the value (a frequency source's distinct values keep
            # the labels of their first rows; a table read from a file is labelled by position)
            first_rows = [series.index[bad[np.argmax(text[bad] == v)]] for v in vals[:5]]
            shown = ", ".join(f"{v!r} ({at_row_label(r)})" for v, r in zip(vals[:5], first_rows))
            more = f" and {len(vals) - 5} more" if len(vals) > 5 else ""
            raise HierarchyError(
                f"column {self.name!r}: {len(vals)} value(s) missing from the hierarchy ({self.source}): {shown}{more}"
            )
        return hier.dimension(), codes.astype(np.int64)


def _hierarchy_rows(text: str, delimiter: str, attr: str, path: Path) -> list[tuple[int, list[str]]]:
    """The rows of a hierarchy file as ``(line, cells)``: ``delimiter``-separated cells, a cell
    quoted with ``"`` (RFC 4180, as :meth:`Hierarchy.to_csv` and ARX write it: a ``""`` inside is a
    quote) holding the delimiter, a quote, a line break or outer spaces as written. The spaces
    around an unquoted cell are layout and are stripped (``7 ; 0-9`` is ``7`` and ``0-9``); a
    quoted cell keeps its own (``" 7"`` is `` 7``, a value that a data file can hold beside
    ``7``). Text after a quoted cell's closing quote (``"a"b``) or a quote never closed is
    ambiguous and refused with the line; a quote inside an unquoted cell (``5'11"``) is literal.
    ``line`` is the physical line the row starts on."""
    if '"' not in text:  # no quoting: the csv module's reader (C), the cells stripped
        # (newline="": a line ends at \n, \r\n or a lone \r, as on the quoted path; a file saved with old Mac line
        # ends was a traceback, the csv module refusing the \r inside a line)
        return [(n, [c.strip() for c in row]) for n, row in enumerate(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), start=1)]
    import re

    d = re.escape(delimiter)
    field = re.compile(rf'[ \t]*"((?:[^"]|"")*)"[ \t]*|(?![ \t]*")([^{d}\r\n]*)')
    rows: list[tuple[int, list[str]]] = []
    pos, line, end = 0, 1, len(text)
    while pos < end:
        start_line, row = line, []
        while True:
            m = field.match(text, pos)
            if m is None:  # a quote opened and never closed
                raise HierarchyError(
                    f"attribute {attr!r}: hierarchy file {path} line {line}: a quoted value is never closed "
                    f"(starting {text[pos:pos + 20].strip()!r}); close it with '\"' and double a quote inside it ('\"\"')"
                )
            quoted = m.group(1)
            row.append(quoted.replace('""', '"') if quoted is not None else m.group(2).strip())
            if quoted is not None:
                line += quoted.count("\n") + quoted.count("\r") - quoted.count("\r\n")
            pos = m.end()
            if pos < end and text.startswith(delimiter, pos):
                pos += len(delimiter)
                continue
            if pos < end and text[pos] not in "\r\n":  # "a"b: the quote does not hold the whole value
                raise HierarchyError(
                    f"attribute {attr!r}: hierarchy file {path} line {line}: text after the closing quote of a quoted value "
                    f"({text[m.start():m.end() + 10].strip()!r}); quote the whole value and double a quote inside it (\"a\"\"b\")"
                )
            break
        if text.startswith("\r\n", pos):
            pos += 2
        elif pos < end:
            pos += 1
        line += 1
        rows.append((start_line, row))
    return rows


def _validate(name: str, table: np.ndarray, lines: Sequence[int] | None, source: str) -> None:
    def where(i: int) -> str:
        return f"line {lines[i]}" if lines and lines[i] else f"row {i + 1}"

    if table.ndim != 2 or table.shape[0] == 0:
        raise HierarchyError(f"attribute {name!r}: {source} is empty")
    if table.shape[1] < 2:
        raise HierarchyError(
            f"attribute {name!r}: {source} has only one column; a hierarchy needs the value and at least a top level"
        )
    # the same value listed twice with different generalizations
    seen: dict[str, int] = {}
    for i, v in enumerate(table[:, 0].tolist()):
        if v in seen:
            j = seen[v]
            if list(table[i]) != list(table[j]):
                raise HierarchyError(
                    f"attribute {name!r}: value {v!r} is listed twice with different generalizations "
                    f"({source} {where(j)} and {where(i)})"
                )
            raise HierarchyError(f"attribute {name!r}: value {v!r} is listed twice ({source} {where(j)} and {where(i)})")
        seen[v] = i
    # each value at level j has exactly one parent at level j+1
    for j in range(table.shape[1] - 1):
        parent: dict[str, tuple[str, int]] = {}
        col, up = table[:, j].tolist(), table[:, j + 1].tolist()
        for i, (v, p) in enumerate(zip(col, up)):
            if v in parent and parent[v][0] != p:
                raise HierarchyError(
                    f"attribute {name!r}: value {v!r} at level {j} has two different parents at level {j + 1}: "
                    f"{parent[v][0]!r} ({source} {where(parent[v][1])}) and {p!r} ({source} {where(i)})"
                )
            parent.setdefault(v, (p, i))
    tops = pd.unique(table[:, -1])
    if len(tops) != 1:
        raise HierarchyError(
            f"attribute {name!r}: the top level of {source} must be a single value, found {len(tops)}: "
            + ", ".join(repr(t) for t in tops[:5])
        )


def load_hierarchies(directory: str | os.PathLike, attributes: Sequence[str]) -> dict[str, Hierarchy]:
    """Read ``DIR/<attribute>.csv`` (ARX format) for each attribute."""
    d = Path(directory)
    if not d.is_dir():  # (a file was 'not found' too)
        raise InputError(f"--hierarchies {d} is a file, not a directory: give the directory that holds one <column>.csv "
                         "per quasi-identifier" if d.exists() else f"hierarchy directory not found: {d}")  # fmt: skip
    out = {}
    for a in attributes:
        p = d / f"{a}.csv"
        if not p.exists():
            raise HierarchyError(f"attribute {a!r}: no hierarchy file {p}")
        out[a] = Hierarchy.from_csv(p, name=a)
    return out
