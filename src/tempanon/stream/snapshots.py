"""Cutting a timestamped table into a stream of snapshots: consecutive granules of a time unit.

A record's snapshot is its time truncated to the granule (``minute``, ``hour``, ``day``, ``week``
— weeks start on Monday —, ``month``, ``year``), or, with ``number``, the time column holds the
snapshot numbers themselves (integers). Snapshots are *consecutive* granules from the first record's to
the last record's, empty ones included. Labels are file-name safe: ``2016-01-31T05-47`` (minute),
``2016-01-31T05`` (hour), ``2016-01-31`` (day, and week: its Monday), ``2016-01`` (month), ``2016``
(year), the number itself (number).
"""

from __future__ import annotations

import re
import warnings
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
    ``order`` sorts the rows by snapshot, then by instant (stable)."""

    snapshot: np.ndarray
    labels: list[str]
    order: np.ndarray
    times: pd.Series


# a UTC offset written after a time: Z after a digit, +hh:mm or +hhmm, or +hh after :mm or :ss (not a date's -dd).
# It reads the input as people write it, matched on a value's last 6 characters (utc_offsets). Not the same
# as tempanon.data.io._OFFSET_TEXT, which splits the text pandas writes for an aware timestamp (wall clock
# + HH:MM[:SS], whole value) in the typed-release check: each is exact for its own texts only.
_OFFSET = re.compile(r"(?:(?<=\d)Z|[+-]\d\d:?\d\d|(?<=:\d\d)[+-]\d\d)$")


# a time of day without a date ("12:30", "7:05:09.5 pm"), as tempanon.temporal.parse refuses it
_TIME_ONLY = r"^\d{1,2}:\d\d(?::\d\d(?:[.,]\d+)?)?\s*(?:[AaPp]\.?[Mm]\.?)?$"


def _shown(value) -> str:
    """A cell as an error message shows it: numpy's scalars as Python's (``1577836800``, not
    ``np.int64(1577836800)``; ``True``, not ``np.True_``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _as_ns(parsed: pd.Series, raw: pd.Series, name: str) -> pd.Series:
    """``parsed`` at nanosecond resolution. pandas parses a time such as ``-3`` (year -3) or
    ``2300-01-01`` at a coarser resolution, and one outside the range of nanosecond timestamps
    (1677-09-21 .. 2262-04-11) is refused with its line, as ``timestamped`` refuses it
    (:func:`tempanon.temporal.parse._to_seconds`); before, the conversion raised pandas'
    OutOfBoundsDatetime, a traceback (found by tests/safety/test_fuzz_commands.py)."""
    try:
        return parsed.dt.as_unit("ns")
    except (OverflowError, pd.errors.OutOfBoundsDatetime):
        pass
    wall = parsed.dt.tz_localize(None) if isinstance(parsed.dtype, pd.DatetimeTZDtype) else parsed
    secs = wall.to_numpy().astype("datetime64[s]").astype(np.int64)
    lo, hi = pd.Timestamp.min.ceil("s").value // 10**9, pd.Timestamp.max.floor("s").value // 10**9
    out = parsed.notna().to_numpy() & ((secs < lo) | (secs > hi))
    row = int(np.flatnonzero(out)[0]) if out.any() else 0
    raise InputError(f"column {name!r}, line {row + 2}: time {_shown(raw.iloc[row])} is outside 1677-09-21 00:12:44 .. 2262-04-11 23:47:16, "
                     f"the range tempanon can represent ({int(out.sum())} such value(s))")  # fmt: skip


def utc_offsets(text: pd.Series) -> pd.Series:
    """The UTC offset written at the end of each value of ``text`` (str values; :data:`_OFFSET`), or
    missing: the same as ``text.str.extract`` of the pattern, matched once per distinct *tail* (a value's
    last 6 characters) instead of per value. A match ends at the end and is at most 6 characters with
    its look-behind (``:dd+hh``), so the tail decides it exactly (tested against the pattern on every
    value, hypothesis); a column of distinct timestamps has few distinct tails (51,920 stop times:
    ~3,600, ``mm:ssZ``)."""
    values = text.to_numpy(dtype=object)
    tails = np.array([v[-6:] for v in values], dtype=object)
    codes, uniq = pd.factorize(tails)
    found = pd.Series(uniq, dtype=object).str.extract(f"({_OFFSET.pattern[:-1]})$", expand=False)
    return pd.Series(found.to_numpy(dtype=object)[codes], index=text.index, dtype=object)


def parse_times(column: pd.Series, name: str, granule: str, timezone: str | None = None,
                date_order: str | None = "auto") -> pd.Series:
    """Parse the time column; raise :class:`InputError` naming the first bad row and value.

    Returns the times as **wall-clock** times (naive), the ones snapshots are cut by, and
    ``.attrs["instants"]`` their order keys (int64 ns: absolute instants where the values carry UTC
    offsets). Without ``timezone`` a value with an offset keeps the wall clock it is written in
    (``2020-04-01T10:00-05:00`` is 10:00), so a column whose offset changes with daylight saving time
    is cut into the days of the clock that wrote it, as one with a single offset always was (before
    2026-11-26 several offsets were refused: "Mixed timezones detected"). With ``timezone`` (an IANA
    name) values with an offset are converted to that zone's wall clock and values without one are
    its wall clock. The rule is per value, so a standard-input stream (one value at a time) cuts the
    same snapshots as the file. A column mixing values with and without offsets is refused.

    ``date_order``: how numeric dates such as ``05/03/2023`` are read
    (:func:`tempanon.temporal.parse.day_month_order`, as ``timestamped`` reads them); ``.attrs["date_order"]``
    is the order used (``None``: no numeric date) and ``.attrs["date_order_note"]`` the note when ``auto``
    read an undecided column month first."""
    from tempanon.temporal.parse import check_date_order

    date_order = check_date_order(date_order)
    raw = column
    missing = raw.isna() | (raw.astype(str).str.strip() == "")
    if missing.any():
        row = int(np.nonzero(missing.to_numpy())[0][0])
        raise InputError(f"column {name!r}, line {row + 2}: missing time (every record needs one)")
    if granule == "number":
        num = pd.to_numeric(raw, errors="coerce")
        # inf and numbers beyond int64 (1e30) are no snapshot numbers: before, inf was a traceback
        # (IntCastingNaNError) and 1e30 wrapped around to -2**63 (then a traceback counting the span)
        if pd.api.types.is_float_dtype(num.dtype):
            huge = ~(num.abs() < 2.0**63) & num.notna()
        elif pd.api.types.is_unsigned_integer_dtype(num.dtype):
            huge = num > np.iinfo(np.int64).max
        else:
            huge = pd.Series(False, index=num.index)
        bad = num.isna() | (num != num.round()) | huge
        if bad.any():
            row = int(np.nonzero(bad.to_numpy())[0][0])
            raise InputError(f"column {name!r}, line {row + 2}: {_shown(raw.iloc[row])} is not an integer snapshot number"
                             + (" (too large: snapshot numbers are 64-bit integers)" if huge.iloc[row] else ""))
        out = num.astype(np.int64)
        out.attrs["instants"] = out.to_numpy()
        return out
    if timezone is not None:
        from tempanon.temporal.parse import check_timezone

        timezone = check_timezone(timezone)
    if isinstance(raw.dtype, pd.DatetimeTZDtype):
        aware = raw.reset_index(drop=True).dt.as_unit("ns")
        instants = aware.dt.tz_convert("UTC").array.asi8
        wall = aware.dt.tz_convert(timezone).dt.tz_localize(None) if timezone else aware.dt.tz_localize(None)
        wall.attrs["instants"] = instants
        return wall
    if pd.api.types.is_datetime64_any_dtype(raw.dtype):
        wall = raw.reset_index(drop=True).dt.as_unit("ns")
        wall.attrs["instants"] = wall.array.asi8
        return wall
    text = raw.astype(str).str.strip().reset_index(drop=True)
    timeonly = text.str.match(_TIME_ONLY).to_numpy(dtype=bool)
    if timeonly.any():  # pandas would date it today: the snapshots would depend on the day of the run
        row = int(np.flatnonzero(timeonly)[0])
        raise InputError(f"column {name!r}, line {row + 2}: time {_shown(raw.iloc[row])} has a time of day but no date "
                         f"({int(timeonly.sum())} such value(s)); a stream's snapshots need dates")
    from tempanon.temporal.parse import as_month_first, day_month_order

    # one day/month order per column (a file's; standard input: per value, held by the caller)
    order, note = day_month_order(text, name, lambda i: i + 2, date_order)
    ptext = as_month_first(text) if order == "day" else text  # (pandas reads numeric dates month first)
    offset = utc_offsets(text)
    has = offset.notna().to_numpy()
    if has.any() and not has.all():
        minority = ~has if has.sum() * 2 >= len(has) else has
        row = int(np.flatnonzero(minority)[0])
        kind = "has no UTC offset" if has.sum() * 2 >= len(has) else "has a UTC offset"
        raise InputError(f"column {name!r}, line {row + 2}: time {_shown(raw.iloc[row])} {kind}, unlike most of the column: a "
                         "column mixing times with and without offsets is ambiguous; write every value with its offset, "
                         "or none (and give --timezone)")  # fmt: skip
    parsed = None
    for fmt in ("ISO8601", "mixed"):
        # ISO 8601 text in one format is parsed in C by the same parser that "mixed" uses for such
        # text; anything else takes the general path
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed = pd.to_datetime(ptext, format=fmt, utc=bool(has.any()), errors="coerce")
        except (ValueError, TypeError, OverflowError):
            parsed = None
            continue
        if not parsed.isna().any():
            break
    if parsed is None:
        raise InputError(f"column {name!r}: cannot parse times")
    parsed = _as_ns(parsed, raw, name)  # (pandas infers a resolution per column: instants are compared in ns)
    bad = parsed.isna()
    if bad.any():
        row = int(np.nonzero(bad.to_numpy())[0][0])
        hint = "; a column of snapshot numbers needs --snapshot number" if re.fullmatch(r"[+-]?\d+", text.iloc[row]) else ""
        raise InputError(f"column {name!r}, line {row + 2}: {_shown(raw.iloc[row])} is not a date/time{hint}")
    if not has.any():
        if isinstance(parsed.dtype, pd.DatetimeTZDtype):  # an offset pandas read where none is written as one
            raise InputError(f"column {name!r}, line 2: time {raw.iloc[0]!r} reads as carrying a UTC offset in no form "
                             "tempanon recognizes; write offsets as +hh:mm, +hhmm or Z after the time")  # fmt: skip
        parsed.attrs["instants"] = parsed.array.asi8
        parsed.attrs["date_order"], parsed.attrs["date_order_note"] = order, note
        return parsed
    instants = parsed.array.asi8  # UTC
    if timezone:
        wall = parsed.dt.tz_convert(timezone).dt.tz_localize(None)
    else:  # each value's own wall clock: the instant plus its written offset
        o = offset.to_numpy(dtype=object)
        minutes = np.zeros(len(o), dtype=np.int64)
        for text_offset in pd.unique(o):  # few distinct offsets
            if text_offset == "Z":
                continue
            sign = -1 if text_offset[0] == "-" else 1
            digits = text_offset[1:].replace(":", "")
            value = sign * (int(digits[:2]) * 60 + (int(digits[2:4]) if len(digits) >= 4 else 0))
            minutes[o == text_offset] = value
        wall = pd.Series(pd.to_datetime(instants + minutes * 60_000_000_000, unit="ns"))
    wall.attrs["instants"] = instants
    wall.attrs["date_order"], wall.attrs["date_order_note"] = order, note
    return wall


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


def _granule_count(first, last, granule: str) -> int:
    """``len(granule_range(first, last, granule))``, counted without building it (a Python int: the
    numbers of ``number`` may span more than 2**63)."""
    if granule == "number":
        return int(last) - int(first) + 1
    first, last = pd.Timestamp(first), pd.Timestamp(last)
    if granule == "month":
        return (last.year - first.year) * 12 + last.month - first.month + 1
    if granule == "year":
        return last.year - first.year + 1
    step = {"minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}[granule] * 10**9
    return (last.value - first.value) // step + 1


def label_of(start, granule: str) -> str:
    if granule == "number":
        return str(int(start))
    return pd.Timestamp(start).strftime(_LABEL[granule])


def index_snapshots(column: pd.Series, name: str, granule: str, timezone: str | None = None,
                    date_order: str | None = "auto") -> SnapshotIndex:
    """Assign every row to its snapshot (consecutive granules, empty ones included), cut by the wall
    clock of :func:`parse_times` (``date_order``: how numeric dates are read; the times' ``attrs`` say
    which order was used and hold the note of an undecided column); rows ordered by snapshot, then by
    their instants."""
    granule = validate_granule(granule)
    times = parse_times(column.reset_index(drop=True), name, granule, timezone, date_order)
    if len(times) == 0:
        return SnapshotIndex(np.zeros(0, dtype=np.int64), [], np.zeros(0, dtype=np.int64), times)
    starts = truncate(times, granule)
    n = _granule_count(starts.min(), starts.max(), granule)
    if n > 5_000_000:  # counted before the grid is built (minutes over centuries are gigabytes)
        raise InputError(f"the stream spans {n:,} {granule} snapshots; "
                         + ("every number from the first to the last is a snapshot: number them consecutively"
                            if granule == "number" else "choose a coarser --snapshot unit"))
    grid_index = _granule_index(starts.min(), starts.max(), granule)
    snap = grid_index.get_indexer(starts)
    if (snap < 0).any():  # should not happen: every start is on the grid
        row = int(np.nonzero(snap < 0)[0][0])
        raise InputError(f"column {name!r}, line {row + 2}: time {_shown(column.iloc[row])} falls outside the snapshot grid")
    # sort by snapshot, then by the instants (epoch nanoseconds: the absolute order also where daylight
    # saving time repeats an hour). The wall clock that cuts the snapshots need not follow the instants
    # (01:30-04:00 is before 01:10-05:00; times in several offsets): sorted by instants alone, the
    # snapshots' rows were not contiguous and the publisher's bounds gave records another snapshot
    order = np.lexsort((np.asarray(times.attrs["instants"]), snap))
    if granule == "number":
        labels = [str(int(g)) for g in grid_index]
    else:
        labels = list(grid_index.strftime(_LABEL[granule]))
    return SnapshotIndex(snap.astype(np.int64), labels, order, times)
