"""Hierarchy builders: numeric intervals, digit masking, suppression, date truncation, taxonomy.

Each ``build_*`` function takes the distinct values of a column and returns a
:class:`~tempanon.hierarchy.core.Hierarchy`. :class:`HierarchySpec` wraps a builder and its
parameters so a hierarchy can be given *before* the data is seen (from code or a small config
dict); it builds itself from the column's distinct values when the column is encoded.

Config form (``hierarchy_from_config``)::

    {"type": "intervals", "widths": [5, 10, 20], "start": 0}
    {"type": "masking", "levels": 2}                # 53715 -> 5371* -> 537** -> *
    {"type": "suppression"}                         # value -> *
    {"type": "dates", "formats": ["%Y-%m-%d", "%Y-%m", "%Y"]}
    {"type": "taxonomy", "tree": {"Europe": {"West": ["FR", "DE"]}, "Asia": ["CN"]}}
    {"type": "file", "path": "age.csv"}
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tempanon.errors import HierarchyError, InputError
from tempanon.hierarchy.core import MISSING, Hierarchy, as_text
from tempanon.lattice.dimension import Dimension

TOP = "*"


def _distinct(values: Iterable[object]) -> list[str]:
    texts = as_text(pd.Series(list(values), dtype=object))
    return [v for v in pd.unique(texts) if v != MISSING]


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def check_interval_widths(name: str, widths: Sequence[float], start: float = 0) -> None:
    """Refuse (:class:`HierarchyError`) widths that are not positive finite numbers each a multiple of
    the previous one, or a start that is not a finite number (a job file checks them before any data
    is read, naming the key and its line)."""
    if not widths:
        raise HierarchyError(f"attribute {name!r}: intervals need at least one width")
    for w in widths:  # (0 or NaN: a traceback in the division below; inf: one interval '[0,inf)' at every level)
        if isinstance(w, bool) or not isinstance(w, (int, float, np.integer, np.floating)) or not math.isfinite(w) or w <= 0:
            raise HierarchyError(f"attribute {name!r}: interval widths must be positive finite numbers, got {w!r}")
        if w >= 2.0**53:  # (floats no longer hold every integer there: the intervals' bounds would be wrong)
            raise HierarchyError(f"attribute {name!r}: interval width {float(w):.6g} is too large (widths must stay below 2**53 = "
                                 "9,007,199,254,740,992)")
    if isinstance(start, bool) or not isinstance(start, (int, float, np.integer, np.floating)) or not math.isfinite(start):
        raise HierarchyError(f"attribute {name!r}: the intervals' start must be a finite number, got {start!r}")
    if abs(start) >= 2.0**53:
        raise HierarchyError(f"attribute {name!r}: the intervals' start {start!r} is too large (it must stay below 2**53 = "
                             "9,007,199,254,740,992)")
    for a, b in zip(widths, widths[1:]):
        if b <= a or not math.isclose(b / a, round(b / a)):
            raise HierarchyError(f"attribute {name!r}: interval width {b} is not a multiple of {a}")


def build_intervals(name: str, values: Iterable[object], widths: Sequence[float], *, start: float = 0, top: str = TOP) -> Hierarchy:
    """Numeric intervals: level ``j`` puts ``v`` in ``[start + i*w_j, start + (i+1)*w_j)``, written
    ``lo-hi`` with ``hi`` inclusive for integers (``20-24``) and ``[lo,hi)`` otherwise.

    Each width must be a multiple of the previous one, so every interval has one parent.
    """
    check_interval_widths(name, widths, start)
    distinct = _distinct(values)
    try:
        nums = np.array([float(v) for v in distinct])
    except ValueError as exc:
        raise HierarchyError(f"attribute {name!r}: interval hierarchy needs numeric values ({exc})") from None
    finite = np.isfinite(nums) if len(nums) else np.ones(0, dtype=bool)
    if not finite.all():  # ('inf', 'nan' are numbers to float(): no interval holds them)
        bad = [t for t, ok in zip(distinct, finite) if not ok]
        raise HierarchyError(f"attribute {name!r}: interval hierarchy needs finite numbers, got {', '.join(map(repr, bad[:5]))}"
                             f"{' and more' if len(bad) > 5 else ''}")  # fmt: skip
    # beyond 2**53 a float no longer holds every integer: 9007199254740999 was put in '9007199254741000-9007199254741004'
    # (an interval that does not hold it), beside an overlapping '9007199254740996-9007199254741000'
    exact = 2.0**53
    big = [t for t, x in zip(distinct, nums) if abs(x - start) + max(widths) >= exact]
    if big:
        raise HierarchyError(f"attribute {name!r}: value {big[0]!r} is too large for exact intervals (numbers must stay "
                             f"below 2**53 = 9,007,199,254,740,992); generalize such codes by masking instead")
    integral = bool(np.all(np.mod(nums, 1) == 0)) and all(float(w).is_integer() for w in widths) and float(start).is_integer()
    rows = []
    for text, x in zip(distinct, nums):
        row = [text]
        for w in widths:
            lo = start + math.floor((x - start) / w) * w
            row.append(f"{_fmt(lo)}-{_fmt(lo + w - 1)}" if integral else f"[{_fmt(lo)},{_fmt(lo + w)})")
        row.append(top)
        rows.append(row)
    return Hierarchy.from_rows(name, rows, source="intervals builder")


def build_masking(name: str, values: Iterable[object], levels: int | None = None, *, char: str = "*", top: str = TOP) -> Hierarchy:
    """Digit masking from the right: ``53715 -> 5371* -> 537** -> ... -> *``.

    ``levels`` masking steps (default: the length of the longest value) before the top. Values of
    different lengths are right-padded with the mask character when masked.
    """
    if levels is not None and (isinstance(levels, bool) or not isinstance(levels, (int, np.integer))):
        raise HierarchyError(f"attribute {name!r}: masking levels must be an integer >= 0, got {levels!r}")  # (int('x'): a ValueError)
    distinct = _distinct(values)
    width = max((len(v) for v in distinct), default=1)
    steps = width if levels is None else int(levels)
    if steps < 0:
        raise HierarchyError(f"attribute {name!r}: masking levels must be >= 0")
    rows = []
    for v in distinct:
        padded = v.ljust(width, char)
        row = [v] + [padded[: max(width - j, 0)] + char * min(j, width) for j in range(1, steps + 1)]
        row.append(top)
        rows.append(row)
    if steps >= width:  # fully masked level equals for all values: fold into the top
        rows = [r[:-2] + [top] for r in rows] if steps > 0 else rows
    return Hierarchy.from_rows(name, rows, source="masking builder")


def build_suppression(name: str, values: Iterable[object], *, top: str = TOP) -> Hierarchy:
    """Suppression only: each value generalizes directly to ``*``."""
    return Hierarchy.from_rows(name, [[v, top] for v in _distinct(values)], source="suppression builder")


DEFAULT_DATE_FORMATS = ("%Y-%m-%d %H:%M", "%Y-%m-%d", "%Y-%m", "%Y")

_WALL_AND_OFFSET = re.compile(r"^(.*\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(?:Z|[+-]\d{2}(?::?\d{2})?(?::\d{2}(?:\.\d+)?)?)$")


# a time of day without a date ("12:30", "7:05:09.5 pm"), as tempanon.temporal.parse refuses it
_TIME_ONLY = re.compile(r"^\d{1,2}:\d\d(?::\d\d(?:[.,]\d+)?)?\s*(?:[AaPp]\.?[Mm]\.?)?$")


def parse_wall_clock(values: Sequence[object], day_first: bool = False) -> pd.Series:
    """``values`` (text) parsed as date/times, each at its own wall clock; an unparsable value is
    missing (``NaT``). Texts with one UTC offset parse as pandas parses them (aware, in that offset).
    Texts with several offsets, as a zone with daylight saving time writes them (``2021-03-14
    01:00:00-05:00``, ``2021-03-14 03:00:00-04:00``), made pandas raise "Mixed timezones detected"
    (a traceback in ``init`` and in the dates builder): each is now parsed at its wall clock, its
    offset dropped, so the day, month and hour it names are the ones written. ``day_first``: numeric
    dates (``05/03/2023``) are day first (:func:`tempanon.temporal.parse.as_month_first`); else pandas
    reads them month first unless that is impossible."""
    s = pd.Series(list(values), dtype=object)
    if day_first:
        from tempanon.temporal.parse import as_month_first

        s = s.map(lambda v: as_month_first(pd.Series([v.strip()], dtype=object)).iloc[0] if isinstance(v, str) else v)
    try:
        return pd.to_datetime(s, errors="coerce", format="mixed")
    except ValueError:  # several UTC offsets
        wall = s.map(lambda v: _WALL_AND_OFFSET.sub(r"\1", v.strip()) if isinstance(v, str) else v)
        return pd.to_datetime(wall, errors="coerce", format="mixed")


def _check_date_format(name: str, fmt: object) -> None:
    """Refuse a dates level that would not be a truncation: strftime passes an unknown directive
    through as text (``%Q`` gives ``%Q`` for every date) and a format without a directive gives
    one constant text, so either would be written as a level that generalizes every date alike."""
    import datetime as _dt
    import re

    if not isinstance(fmt, str):
        raise HierarchyError(f"attribute {name!r}: date format {fmt!r} is not a text")
    probe = _dt.datetime(2001, 2, 3, 4, 5, 6)
    # a directive with glibc's flags (%-m, %_d, %0e, %^a, %#b) and E/O modifiers (%Ey) counts whole
    directives = [d for d in re.findall(r"%([-_0^#]?[EO]?.?)", fmt) if d != "%"]
    for d in directives:
        if not d or probe.strftime("%" + d) == "%" + d:
            raise HierarchyError(f"attribute {name!r}: date format {fmt!r}: unknown directive %{d} "
                                 f"(strftime directives such as %Y, %m, %d, %H, %M)")
    if not directives:
        raise HierarchyError(f"attribute {name!r}: date format {fmt!r} has no directive, so every date would be "
                             f"generalized to that one text (use strftime directives such as %Y-%m or %Y)")


def build_dates(name: str, values: Iterable[object], formats: Sequence[str] = DEFAULT_DATE_FORMATS, *, top: str = TOP,
                date_order: str = "auto") -> Hierarchy:
    """Date/time truncation: ``YYYY-MM-DD HH:MM -> YYYY-MM-DD -> YYYY-MM -> YYYY -> *``.

    The values are parsed as timestamps (an unparsable one is an error naming it); level ``j`` is
    ``strftime(formats[j-1])``; the original text stays level 0. ``date_order``: how numeric dates
    such as ``05/03/2023`` are read, as ``timestamped`` reads them
    (:func:`tempanon.temporal.parse.day_month_order`: ``auto`` decides by the values, a
    :class:`~tempanon.errors.TempanonWarning` says when an undecided column is read month first;
    ``day``, ``month``).
    """
    if isinstance(formats, str):  # (taken letter by letter: "date format '%': unknown directive %")
        raise HierarchyError(f"attribute {name!r}: formats must be a list of strftime formats, one per level, e.g. "
                             f"['%Y-%m', '%Y'], got the text {formats!r}")
    for f in formats:
        _check_date_format(name, f)
    distinct = _distinct(values)
    from tempanon.errors import InputError, TempanonWarning
    from tempanon.temporal.parse import day_month_order

    try:  # one day/month order (05/03/2023 beside 13/05/2023 was read as May 3)
        order, note = day_month_order(pd.Series([str(v) for v in distinct], dtype=object), name, None, date_order)
    except InputError as exc:
        raise HierarchyError(f"attribute {name!r}: {str(exc).split(': ', 1)[1]}") from None
    timeonly = [v for v in distinct if isinstance(v, str) and _TIME_ONLY.match(v.strip())]
    if timeonly:  # pandas would date them today: the hierarchy would depend on the day it was built
        raise HierarchyError(f"attribute {name!r}: time(s) of day without a date: {', '.join(map(repr, timeonly[:5]))} "
                             f"({len(timeonly)} such value(s)); a dates hierarchy needs dates")
    parsed = parse_wall_clock(distinct, day_first=order == "day")
    if parsed.isna().any():
        bad = [distinct[i] for i in np.flatnonzero(parsed.isna().to_numpy())[:5]]
        raise HierarchyError(f"attribute {name!r}: unparsable date/time value(s): {', '.join(map(repr, bad))}")
    if note:
        import warnings

        note = note.replace("pass --date-order day", "build it with date_order = \"day\" (a job file's dates hierarchy; "
                            "tempanon hierarchy --date-order day)")
        warnings.warn(TempanonWarning(f"dates hierarchy of {note}"), stacklevel=2)
    cols = [distinct] + [parsed.dt.strftime(f).tolist() for f in formats]
    rows = [list(r) + [top] for r in zip(*cols)]
    return Hierarchy.from_rows(name, rows, source="dates builder")


def build_taxonomy(name: str, tree: Mapping[str, Any], *, top: str = TOP) -> Hierarchy:
    """A taxonomy tree as nested dicts (inner nodes) and lists (leaves).

    All leaves must be at the same depth (full-domain generalization needs levels).
    """
    rows: list[list[str]] = []

    def walk(node: Any, path: list[str]) -> None:
        if isinstance(node, Mapping):
            for key, child in node.items():
                walk(child, [str(key)] + path)
        elif isinstance(node, (list, tuple, set)):
            for leaf in node:
                rows.append([str(leaf)] + path)
        elif node is None:
            rows.append(path)
        else:
            raise HierarchyError(f"attribute {name!r}: taxonomy nodes must be dicts or lists, got {node!r}")

    walk(tree, [top])
    depths = {len(r) for r in rows}
    if len(depths) > 1:
        raise HierarchyError(f"attribute {name!r}: taxonomy leaves at different depths {sorted(depths)}; full-domain levels need equal depth")
    return Hierarchy.from_rows(name, rows, source="taxonomy builder")


_BUILDERS = {"intervals", "masking", "suppression", "dates", "taxonomy", "file"}


@dataclass
class HierarchySpec:
    """A hierarchy to be built from the data's distinct values when the column is encoded."""

    kind: str
    params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in _BUILDERS:
            raise InputError(f"unknown hierarchy type {self.kind!r}; expected one of {', '.join(sorted(_BUILDERS))}")

    def build(self, name: str, values: Iterable[object] = ()) -> Hierarchy:
        p = dict(self.params)
        if self.kind == "intervals":
            return build_intervals(name, values, p.pop("widths"), **p)
        if self.kind == "masking":
            return build_masking(name, values, **p)
        if self.kind == "suppression":
            return build_suppression(name, values, **p)
        if self.kind == "dates":
            return build_dates(name, values, **p)
        if self.kind == "taxonomy":
            return build_taxonomy(name, p["tree"], **{k: v for k, v in p.items() if k != "tree"})
        return Hierarchy.from_csv(p["path"], name=name)

    def build_for(self, series: pd.Series) -> Hierarchy:
        """The hierarchy built from ``series``' distinct texts in file order (``pd.unique``), named after
        the column: what :meth:`encode` encodes with. Build it once and reuse it (encoding, release labels,
        verification): every build gives the builder's warnings again."""
        name = str(series.name) if series.name is not None else self.kind
        return self.build(name, pd.unique(as_text(series)))

    def encode(self, series: pd.Series) -> tuple[Dimension, np.ndarray]:
        return self.build_for(series).encode(series)


_REQUIRED = {"intervals": {"widths"}, "taxonomy": {"tree"}, "file": {"path"}}
_ALLOWED = {
    "intervals": {"widths", "start", "top"},
    "masking": {"levels", "char", "top"},
    "suppression": {"top"},
    "dates": {"formats", "top", "date_order"},
    "taxonomy": {"tree", "top"},
    "file": {"path"},
}


def hierarchy_from_config(config: Mapping[str, Any], *, where: str = "hierarchy config") -> HierarchySpec:
    """Validate a config dict (see module doc) and return a :class:`HierarchySpec`."""
    if "type" not in config:
        raise InputError(f"{where}: missing key 'type'")
    kind = str(config["type"])
    if kind not in _BUILDERS:
        raise InputError(f"{where}: unknown hierarchy type {kind!r}; expected one of {', '.join(sorted(_BUILDERS))}")
    params = {k: v for k, v in config.items() if k != "type"}
    unknown = set(params) - _ALLOWED[kind]
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} for type {kind!r}")
    missing = _REQUIRED.get(kind, set()) - set(params)
    if missing:
        raise InputError(f"{where}: type {kind!r} needs key(s) {', '.join(sorted(missing))}")
    if "date_order" in params:
        from tempanon.temporal.parse import check_date_order

        try:
            params["date_order"] = check_date_order(params["date_order"])
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    return HierarchySpec(kind, params)
