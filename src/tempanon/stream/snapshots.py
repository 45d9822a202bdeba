"""Cutting a timestamped table into a stream of snapshots: consecutive granules of a time unit.

A record's snapshot is its time truncated to the granule (``minute``, ``hour``, ``day``, ``week``
— weeks start on Monday —, ``month``, ``year``), or, with ``number``, the time column holds the
snapshot numbers themselves (integers). Snapshots are *consecutive* granules from the first record's to
the last record's, empty ones included. Labels are file-name safe: ``2016-01-31T05-47`` (minute),
``2016-01-31T05`` (hour), ``2016-01-31`` (day, and week: its Monday), ``2016-01`` (month), ``2016``
(year), the number itself (number).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tempanon.errors import InputError

GRANULES = ("minute", "hour", "day", "week", "month", "year", "number")
_LABEL = {
    "minute": "%Y-%m-%dT%H-%M",
    "hour": "%Y-%m-%dT%H",
    "day": "%Y-%m-%d",
    "week": "%Y-%m-%d",
    "month": "%Y-%m",
    "year": "%Y",
}


def validate_granule(granule: str) -> str:
    g = str(granule).strip().lower()
    if g not in GRANULES:
        raise InputError(f"unknown snapshot unit {granule!r}; use one of {', '.join(GRANULES)}")
    return g


@dataclass
class SnapshotIndex:
    """``snapshot[i]`` is the 0-based snapshot of row ``i``; ``labels[k]`` the label of snapshot ``k``;
    ``order`` sorts the rows by time (stable)."""

    snapshot: np.ndarray
    labels: list[str]
    order: np.ndarray
    times: pd.Series


def parse_times(column: pd.Series, name: str, granule: str) -> pd.Series:
    """Parse the time column; raise :class:`InputError` naming the first bad row and value."""
    raw = column
    missing = raw.isna() | (raw.astype(str).str.strip() == "")
    if missing.any():
        row = int(np.nonzero(missing.to_numpy())[0][0])
        raise InputError(f"column {name!r}, line {row + 2}: missing time (every record needs one)")
    if granule == "number":
        num = pd.to_numeric(raw, errors="coerce")
        bad = num.isna() | (num != num.round())
        if bad.any():
            row = int(np.nonzero(bad.to_numpy())[0][0])
            raise InputError(f"column {name!r}, line {row + 2}: {raw.iloc[row]!r} is not an integer snapshot number")
        return num.astype(np.int64)
    parsed = None
    if raw.dtype == object or isinstance(raw.dtype, pd.StringDtype):
        # fast path: ISO 8601 text in one format is parsed in C by the same parser that "mixed" uses
        # for such text; anything else (a bad value, mixed time zones, ...) takes the general path
        try:
            parsed = pd.to_datetime(raw, format="ISO8601")
        except (ValueError, TypeError, OverflowError):
            parsed = None
    if parsed is None:
        try:
            parsed = pd.to_datetime(raw, errors="coerce", format="mixed")
        except (ValueError, TypeError) as exc:
            raise InputError(f"column {name!r}: cannot parse times ({exc})") from exc
    bad = parsed.isna()
    if bad.any():
        row = int(np.nonzero(bad.to_numpy())[0][0])
        raise InputError(f"column {name!r}, line {row + 2}: {raw.iloc[row]!r} is not a date/time")
    return parsed


def truncate(times: pd.Series, granule: str) -> pd.Series:
    """The start of each time's granule."""
    if granule == "number":
        return times
    if granule in ("minute", "hour", "day"):
        return times.dt.floor({"minute": "min", "hour": "h", "day": "D"}[granule])
    day = times.dt.floor("D")
    if granule == "week":
        return day - pd.to_timedelta(day.dt.day_of_week, unit="D")
    if granule == "month":
        return day - pd.to_timedelta(day.dt.day - 1, unit="D")
    return day - pd.to_timedelta(day.dt.day_of_year - 1, unit="D")


def granule_range(first, last, granule: str) -> list:
    """Every granule start from ``first`` to ``last`` (both granule starts)."""
    return list(_granule_index(first, last, granule))


def _granule_index(first, last, granule: str) -> pd.Index:
    """:func:`granule_range` as an index (a ``DatetimeIndex`` for time granules)."""
    if granule == "number":
        return pd.Index(range(int(first), int(last) + 1))
    freq = {"minute": "min", "hour": "h", "day": "D", "week": "7D", "month": "MS", "year": "YS"}[granule]
    return pd.date_range(first, last, freq=freq)


def label_of(start, granule: str) -> str:
    if granule == "number":
        return str(int(start))
    return pd.Timestamp(start).strftime(_LABEL[granule])


def index_snapshots(column: pd.Series, name: str, granule: str) -> SnapshotIndex:
    """Assign every row to its snapshot (consecutive granules, empty ones included)."""
    granule = validate_granule(granule)
    times = parse_times(column.reset_index(drop=True), name, granule)
    if len(times) == 0:
        return SnapshotIndex(np.zeros(0, dtype=np.int64), [], np.zeros(0, dtype=np.int64), times)
    starts = truncate(times, granule)
    grid_index = _granule_index(starts.min(), starts.max(), granule)
    if len(grid_index) > 5_000_000:
        raise InputError(f"the stream spans {len(grid_index)} {granule} snapshots; choose a coarser --snapshot unit")
    snap = grid_index.get_indexer(starts)
    if (snap < 0).any():  # should not happen: every start is on the grid
        row = int(np.nonzero(snap < 0)[0][0])
        raise InputError(f"column {name!r}, line {row + 2}: time {column.iloc[row]!r} falls outside the snapshot grid")
    # sort by the instants (epoch nanoseconds; a tz-aware column would otherwise become Timestamp objects)
    keys = times.array.asi8 if hasattr(times.array, "asi8") else times.to_numpy()
    order = np.argsort(keys, kind="stable")
    if granule == "number":
        labels = [str(int(g)) for g in grid_index]
    else:
        labels = list(grid_index.strftime(_LABEL[granule]))
    return SnapshotIndex(snap.astype(np.int64), labels, order, times)
