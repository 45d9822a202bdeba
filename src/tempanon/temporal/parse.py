"""Timestamp parsing to int64 seconds on the wall clock of a calendar time zone, and inference
of the data's granularity.

Rules (documented in docs/temporal.md):

* the *calendar time zone* (``timezone``, an IANA name such as ``America/New_York``) decides
  which day, week, month or part of the day an instant is in. Instants are kept as wall-clock
  seconds in that zone, so days, weeks and parts of the day follow its daylight saving time
  (a day of 23 or 25 hours is still one day);
* tz-aware timestamps (an offset or ``Z`` in the text, or a tz-aware column) are converted to the
  calendar time zone; without ``timezone`` they are converted to UTC and ``info["note"]`` says so;
* naive timestamps are wall-clock times of the calendar time zone (taken as they are);
* a column mixing naive and aware values is refused (which zone the naive ones are in is unknown);
* empty cells are *missing*: a category of their own that is never generalized (released empty)
  and must itself hold k respondents per quasi-identifier combination;
* any other cell that does not parse, or lies outside 1677-09-21 00:12:44 .. 2262-04-11 23:47:16
  (the range of nanosecond timestamps), raises :class:`InputError` naming the column, the line (the header is
  line 1, so data row ``i``, 0-based, is line ``i + 2``) and the value;
* fractions of a second are truncated (the finest granularity is the second) and counted in
  ``info["subsecond_truncated"]``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from tempanon.errors import InputError
from tempanon.temporal.granularity import DAY_G, HOUR_G, MINUTE_G, SECOND_G, Granularity, parse_granularity


_NS_LO = int(pd.Timestamp.min.ceil("s").value // 1_000_000_000)  # 1677-09-21T00:12:44
_NS_HI = int(pd.Timestamp.max.floor("s").value // 1_000_000_000)  # 2262-04-11T23:47:16


def _to_seconds(parsed: pd.Series, column: str, original: pd.Series, count=None,
                rows=None) -> tuple[np.ndarray, np.ndarray, int]:  # fmt: skip
    count = count or (lambda m: int(np.count_nonzero(m)))
    rows = rows if rows is not None else np.arange(len(original))
    missing = parsed.isna().to_numpy()
    arr = parsed.to_numpy()
    if arr.dtype.kind != "M":  # object column of Timestamps
        arr = pd.to_datetime(parsed).to_numpy()
    unit = np.datetime_data(arr.dtype)[0]
    secs = arr.astype("datetime64[s]").astype(np.int64)
    secs = np.where(missing, 0, secs)
    out = ~missing & ((secs < _NS_LO) | (secs > _NS_HI))
    if out.any():
        row = int(np.nonzero(out)[0][0])
        raise InputError(
            f"column {column!r}, line {line_of(rows[row])}: timestamp {original.iloc[row]!r} is outside 1677-09-21 00:12:44 .. "
            f"2262-04-11 23:47:16, the range tempanon can represent ({count(out)} such value(s))"
        )
    if unit in ("ns", "us", "ms"):
        per = {"ns": 1_000_000_000, "us": 1_000_000, "ms": 1_000}[unit]
        frac = count((arr.astype(np.int64) % per != 0) & ~missing)
    else:
        frac = 0
    return secs.astype(np.int64), missing, frac


def line_of(row: int) -> int:
    """The file line of 0-based data row ``row`` (one header line)."""
    return int(row) + 2


def check_timezone(timezone: str | None) -> str | None:
    """Validate an IANA time zone name (``None``: no calendar zone given)."""
    if timezone is None:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = str(timezone).strip()
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError):
        raise InputError(f"unknown time zone {timezone!r}: give an IANA name such as Europe/Rome, "
                         f"America/New_York or UTC") from None
    return name


_TZ_RE = r"(?:\dZ|[+-]\d\d:?\d\d|[+-]\d\d:\d\d:\d\d(?:\.\d+)?|:\d\d[+-]\d\d)$"
"""An offset at the end of a timestamp's text: Z after a digit, +hh:mm / +hhmm, +hh:mm:ss (Python's text of a
zone's local mean time before ~1900 or Amsterdam's +00:19:32 until 1937), or +hh after a time (not a date's -dd)."""
_SECONDS_OFFSET = r"([+-])(\d\d):(\d\d):(\d\d(?:\.\d+)?)$"


def _parse_seconds_offsets(text: pd.Series, bad: np.ndarray, parsed: pd.Series) -> pd.Series:
    """``parsed`` (UTC) with the values at ``bad`` that carry an offset with seconds parsed: each as its
    wall clock in UTC, then moved back by its offset (values that still do not parse stay NaT)."""
    sub = text[bad]
    wall, off = split_seconds_offsets(sub)
    if off is None:
        return parsed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            p = pd.to_datetime(wall, format="ISO8601", utc=True, errors="coerce")
        except (ValueError, TypeError, OverflowError):
            return parsed
    p = p - pd.to_timedelta(off, unit="s")
    out = parsed.copy() if isinstance(parsed.dtype, pd.DatetimeTZDtype) else pd.to_datetime(parsed).dt.tz_localize("UTC")
    ok = p.notna().to_numpy()
    out.loc[sub.index[ok]] = p[ok]
    return out


def split_seconds_offsets(text: pd.Series) -> tuple[pd.Series, np.ndarray | None]:
    """pandas parses no offset with seconds (``+00:19:32``, ``-04:56:02``; NaT). Such values are given to it
    as UTC (``+00:00``) with their offset in seconds returned beside (``None``: no such value), to be
    subtracted after parsing; the other values are unchanged."""
    m = text.str.extract(_SECONDS_OFFSET)
    has = m[0].notna().to_numpy()
    if not has.any():
        return text, None
    sign = np.where(m[0].to_numpy(dtype=object)[has] == "-", -1.0, 1.0)
    sec = (m[1][has].astype(float) * 3600 + m[2][has].astype(float) * 60 + m[3][has].astype(float)).to_numpy()
    off = np.zeros(len(text))
    off[has] = sign * sec
    out = text.copy()
    out[has] = text[has].str.replace(_SECONDS_OFFSET, "+00:00", regex=True)
    return out, off


def parse_timestamps(series: pd.Series, column: str = "time", timezone: str | None = None, *,
                     weights: np.ndarray | None = None, rows: np.ndarray | None = None,
                     date_order: str | None = "auto") -> tuple[np.ndarray, np.ndarray, dict]:  # fmt: skip
    """Parse a timestamp column. Returns ``(instants, missing, info)``: int64 wall-clock seconds in
    the calendar time zone (0 where missing), the boolean mask of missing cells, and a dict
    describing what was done.

    ``weights``/``rows`` (the out-of-core path, :mod:`tempanon.temporal.outofcore`): ``series``
    holds the *distinct* values of a column, ``weights`` how many rows hold each and ``rows`` the
    0-based row of each value's first occurrence, sorted ascending. Counts in ``info`` and in error
    messages are then row counts and lines are file lines, exactly as for the whole column.

    ``date_order`` (:data:`DATE_ORDERS`): how numeric dates (``05/03/2023``) are read
    (:func:`day_month_order`); ``info["date_order"]`` is the order used (``None``: no numeric date) and
    ``info["date_order_note"]`` the note when ``auto`` read an undecided column month first."""
    w = None if weights is None else np.asarray(weights, dtype=np.int64)

    def count(mask) -> int:
        m = np.asarray(mask, dtype=bool)
        return int(np.count_nonzero(m)) if w is None else int(w[m].sum())

    rows = np.arange(len(series)) if rows is None else np.asarray(rows, dtype=np.int64)
    tz = check_timezone(timezone)
    date_order = check_date_order(date_order)
    info: dict = {"timezone": "naive", "calendar_timezone": tz, "subsecond_truncated": 0, "date_order": None}
    target = tz or "UTC"
    s = series.reset_index(drop=True)
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        info["timezone"] = f"converted from {s.dtype.tz} to {target}"
        parsed = s.dt.tz_convert(target).dt.tz_localize(None)
        if tz is None:
            info["note"] = (f"the timestamps carry time zone {s.dtype.tz} and were granulated in UTC; pass --timezone "
                            f"(e.g. {s.dtype.tz}) to use that calendar's days and weeks")
    elif pd.api.types.is_datetime64_any_dtype(s.dtype):
        parsed = s
        info["timezone"] = "naive (wall clock" + (f" of {tz})" if tz else ")")
    else:
        text = s.astype("string").str.strip()
        blank = (text.isna() | (text == "")).fillna(True).astype(bool)
        text = text.where(~blank, None)
        has_tz = text.str.contains(_TZ_RE, regex=True).fillna(False).astype(bool) & ~blank
        n_tz, n_val = count(has_tz.to_numpy()), count((~blank).to_numpy())
        any_tz = n_tz > 0
        if any_tz and n_tz < n_val:
            minority = (~has_tz & ~blank) if n_tz * 2 >= n_val else has_tz
            row = int(np.nonzero(minority.to_numpy())[0][0])
            kind = "has no UTC offset" if n_tz * 2 >= n_val else "has a UTC offset"
            raise InputError(
                f"column {column!r}, line {line_of(rows[row])}: timestamp {text.iloc[row]!r} {kind}, unlike {max(n_tz, n_val - n_tz)} "
                f"of the {n_val} timestamps: a column mixing naive and time-zone-aware "
                f"times is ambiguous; write every value with its offset, or none (and give --timezone)"
            )
        timeonly = text.str.match(r"^\d{1,2}:\d\d(?::\d\d(?:[.,]\d+)?)?\s*(?:[AaPp]\.?[Mm]\.?)?$").fillna(False).astype(bool)
        if bool(timeonly.any()):  # pandas would date it today: not reproducible
            row = int(np.nonzero(timeonly.to_numpy())[0][0])
            raise InputError(f"column {column!r}, line {line_of(rows[row])}: timestamp {text.iloc[row]!r} has a time of day "
                             f"but no date ({count(timeonly.to_numpy())} such value(s))")
        order, note = day_month_order(text, column, lambda i: line_of(rows[i]), date_order)
        info["date_order"] = order
        if note:
            info["date_order_note"] = note
        ptext = as_month_first(text) if order == "day" else text  # (pandas reads numeric dates month first)
        parsed = None
        for fmt in ("ISO8601", "mixed"):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    p = pd.to_datetime(ptext, format=fmt, utc=any_tz, errors="coerce")
            except (ValueError, TypeError, OverflowError):
                continue
            bad = p.isna() & ~blank
            if not bool(bad.any()):
                parsed = p
                break
            parsed = p
        if parsed is None:  # every attempt raised: report the first value that fails alone
            parsed = pd.Series(pd.NaT, index=text.index, dtype="datetime64[ns]")
        bad = (parsed.isna() & ~blank).to_numpy()
        if any_tz and bad.any():  # offsets with seconds (only the values pandas left unparsed are looked at)
            parsed = _parse_seconds_offsets(ptext, bad, parsed)
            bad = (parsed.isna() & ~blank).to_numpy()
        if bad.any():
            row = int(np.nonzero(bad)[0][0])
            v = text.iloc[row]
            why = _why_unparseable(v)
            raise InputError(
                f"column {column!r}, line {line_of(rows[row])}: cannot parse timestamp {v!r}{why} "
                f"({count(bad)} unparsable value(s) in total)"
            )
        if not any_tz and isinstance(parsed.dtype, pd.DatetimeTZDtype):
            # pandas read an offset where none is written as one (e.g. '...-2005T'): not a timestamp we can place
            row = int(np.nonzero(~blank.to_numpy())[0][0])
            raise InputError(f"column {column!r}, line {line_of(rows[row])}: cannot parse timestamp {text.iloc[row]!r}: it "
                             f"reads as carrying a UTC offset ({parsed.dtype.tz}) in no form tempanon recognizes; write "
                             "offsets as +hh:mm, +hhmm or Z after the time")  # fmt: skip
        if any_tz:
            info["timezone"] = f"converted to {target}"
            parsed = parsed.dt.tz_convert(target).dt.tz_localize(None)
            if tz is None:
                info["note"] = ("the timestamps carry UTC offsets and were granulated in UTC; pass --timezone (an IANA "
                                "name such as America/New_York) to use a local calendar's days and weeks")
        else:
            info["timezone"] = "naive (wall clock" + (f" of {tz})" if tz else ")")
    secs, missing, frac = _to_seconds(parsed.reset_index(drop=True), column, s, count, rows)
    info["subsecond_truncated"] = frac
    info["missing"] = count(missing)
    return secs, missing, info


_NUMERIC_DATE = r"^\s*(\d{1,2})([./-])(\d{1,2})\2(\d{4}|\d{2})(?!\d)"

DATE_ORDERS = ("auto", "day", "month")
"""The values of ``date_order`` (``--date-order``; a job file's ``date_order``): how numeric dates
(``05/03/2023``, ``02.03.2023``) are read. ``auto`` (the default): day first when some value can only
be day first (a first part > 12, or dots) and none can only be month first (a second part > 12);
month first when the column shows month-first dates or none decides it (then a note says so);
refused when it shows both. ``day`` / ``month``: every value in that order; a value that cannot be
(``13/05/2023`` read month first) is an :class:`InputError` naming the column, line and value."""


def check_date_order(date_order: str | None) -> str:
    """Validate ``date_order`` (``None``: ``"auto"``)."""
    if date_order is None:
        return "auto"
    value = str(date_order).strip().lower()
    if value not in DATE_ORDERS:
        raise InputError(f"unknown date order {date_order!r}: give day (13/05/2023 is 13 May), month (05/13/2023 is "
                         "13 May) or auto (decided by the column's values)")
    return value


def numeric_dates(text: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The numeric dates in ``text`` (positionally): ``(pos, a, b, dots)``, the positions of the values
    that start with ``d/d/yyyy`` (``.`` or ``-`` too), their first and second parts and whether they
    are written with dots.

    The pattern is matched once per distinct *key*, not per value: a value's first 11 characters after
    its leading whitespace (``\\s``, which is what :meth:`str.lstrip` strips). A match there is at most
    10 characters (``dd/dd/dddd``) and its look-ahead reads the 11th, so the key decides the match and
    its groups exactly (tested against the pattern on every value, hypothesis). A column of distinct
    timestamps has few distinct keys (its days): 51,920 stop times, 366 keys; per value it was ~4 us
    of Python regex per row (docs/benchmarks.md)."""
    values = text.astype("string").to_numpy(dtype=object, na_value=None)
    keys = np.array([None if v is None else v.lstrip()[:11] for v in values], dtype=object)
    codes, uniq = pd.factorize(keys, use_na_sentinel=True)  # (None: code -1, no date)
    m = pd.Series(uniq, dtype="string").str.extract(_NUMERIC_DATE)
    found_u = np.append(m[0].notna().to_numpy(), False)  # (the last entry: code -1, a missing value)
    pos = np.flatnonzero(found_u[codes])
    c = codes[pos]
    return (pos, m[0].to_numpy()[c].astype(int), m[2].to_numpy()[c].astype(int),
            m[1].to_numpy()[c] == ".")  # fmt: skip


def day_month_order(text: pd.Series, column: str, lines, date_order: str | None = "auto") -> tuple[str | None, str | None]:
    """The order the numeric dates of a column are read in (:data:`DATE_ORDERS`): ``(order, note)``.
    ``order`` is ``"day"``, ``"month"`` or ``None`` (no numeric date); ``note`` is a one-line note when
    ``auto`` read month first a column in which every value could be either (a value whose two parts
    differ; e.g. ``05/03/2023``), else ``None``.

    pandas parses each numeric date on its own, month first unless that is impossible: in a column
    holding ``13/05/2023`` it read ``05/03/2023`` as May 3, silently. Refused (:class:`InputError`
    naming the line and value): in ``auto``, a column with both a value that can only be day first
    (first part > 12, or dots) and one that can only be month first (second part > 12); with an
    explicit order, a value it cannot read (``day``: a second part > 12; ``month``: a first part > 12).
    ``text``: the values, positionally; ``lines``: position -> file line (``None``: distinct values
    with no line, e.g. a hierarchy builder's)."""
    order = check_date_order(date_order)
    pos, a, b, dots = numeric_dates(text)
    if not len(pos):
        return None, None

    def at(i: int) -> str:
        v = text.iloc[int(pos[i])]
        return f"{v!r}" if lines is None else f"line {lines(int(pos[i]))} ({v!r})"

    def where(i: int) -> str:
        return "" if lines is None else f", line {lines(int(pos[i]))}"

    if order != "auto":
        bad = (b > 12) if order == "day" else (a > 12)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            v = text.iloc[int(pos[i])]
            part = "second" if order == "day" else "first"
            raise InputError(f"column {column!r}{where(i)}: date {v!r} cannot be {order} first ({part} part "
                             f"{b[i] if order == 'day' else a[i]} is not a month), but the date order {order!r} was given "
                             f"(--date-order {order})")
        return order, None
    day_first = (a > 12) | dots
    month_first = b > 12
    if day_first.any() and month_first.any():
        d, mo = int(np.flatnonzero(day_first)[0]), int(np.flatnonzero(month_first)[0])
        raise InputError(f"column {column!r}: numeric dates in two day/month orders: {at(d)} is day first, {at(mo)} "
                         "month first; write the dates as YYYY-MM-DD (ISO 8601)")
    if day_first.any():
        return "day", None
    if month_first.any():
        return "month", None
    either = np.flatnonzero((a != b) & (a >= 1) & (b >= 1))
    if not len(either):  # 05/05/2023: the same day in either order (00/05/2023 is no date: refused when parsed)
        return "month", None
    i = int(either[0])
    v = text.iloc[int(pos[i])]
    import calendar

    month = calendar.month_name
    note = (f"column {column!r}: every numeric date could be day or month first: read month first, {at(i)} as "
            f"{b[i]} {month[a[i]]}; pass --date-order day if it is {a[i]} {month[b[i]]}")
    return "month", note


def as_month_first(text: pd.Series) -> pd.Series:
    """``text`` with each numeric date read day first rewritten month first with slashes
    (``13.05.2023 10:00`` -> ``05/13/2023 10:00``), which pandas reads month first: the same year
    (two digits too) and time of day as the value written month first."""
    return text.str.replace(_NUMERIC_DATE, r"\3/\1/\4", regex=True)


def _why_unparseable(v) -> str:
    """A reason for a value pandas cannot parse: out of the representable range, or not a date."""
    import re

    m = re.match(r"^\s*([+-]?\d{1,6})-\d", str(v))
    if m:
        y = int(m.group(1))
        if y < 1677 or y > 2262:
            return f": year {y} is outside 1677-2262, the range tempanon can represent"
    return ""


def infer_data_granularity(instants: np.ndarray, missing: np.ndarray | None = None) -> Granularity:
    """The coarsest of day, hour, minute, second that every (non-missing) timestamp starts a
    granule of: timestamps all at midnight are taken as days, all on the full minute as minutes."""
    t = instants if missing is None else instants[~missing]
    for g in (DAY_G, HOUR_G, MINUTE_G):
        p, o = g.uniform  # type: ignore[misc]
        if len(t) and bool(np.all((t - o) % p == 0)):
            return g
    return SECOND_G


def data_granularity_of(data_granularity, instants: np.ndarray, missing: np.ndarray, country=None, parts=None,
                        date_order: str | None = "auto") -> Granularity:  # fmt: skip
    """The data granularity the search starts from: the one given (a :class:`Granularity` or its name;
    ``date_order``: how a boundary file's numeric dates are read), or the one inferred from the
    timestamps (:func:`infer_data_granularity`)."""
    if data_granularity is None:
        return infer_data_granularity(instants, missing)
    if isinstance(data_granularity, Granularity):
        return data_granularity
    return parse_granularity(data_granularity, country=country, parts=parts, date_order=date_order)
