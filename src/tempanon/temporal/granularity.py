"""Time granularities (Mascetti et al., TIME 2006, Section 3.2 and Appendix A).

A *granularity* ``G`` maps integer indexes to *granules*, sets of instants, such that granules
with smaller indexes hold earlier instants (granules never interleave) and some instants may lie
in no granule (*gaps*: a business day has none on weekends). Here the time line is the int64
number of seconds since 1970-01-01T00:00:00 (wall clock of the data; tz-aware data is converted to
UTC, see :mod:`tempanon.temporal.parse`).

Every class below is vectorized over numpy arrays of instants:

* ``index(t)`` -> int64 granule index of each instant, ``GAP`` (the smallest int64) for an instant in a gap. Indexes
  are order-preserving integer identifiers (not necessarily consecutive: a business day is
  identified by a weekday counter, holidays leave holes), which is all the algorithms need.
* ``start(i)`` -> the first instant of granule ``i`` (``end(i)`` the instant after its hull).
* ``label(i)`` -> the published text of granule ``i`` ("2006-01", "2006-W01",
  "2006-01-03 morning").
* ``change_points(lo, hi)`` -> a sorted superset of the instants in ``(lo, hi)`` where ``index``
  changes (including entering or leaving a gap), or ``None`` when there are too many; then the
  granularity is ``uniform`` (``index = floor((t - offset) / period)``, no gaps) and relations are
  decided arithmetically. :mod:`tempanon.temporal.relations` builds finer-than, groups-into,
  covers, shift-equivalence and ``up`` on top of these four primitives.

Built-ins: second, minute, hour, parts of the day (configurable boundaries), day, business day
(weekdays minus the public holidays of a country, via ``holidays``), ISO week, month, quarter,
semester, year. User-defined: fixed-length groupings of another granularity (``2weeks``,
``6hours``), month groupings with an anchor month (fiscal quarters ``3months@10``), groupings by
explicit boundaries (academic terms), and date-format truncations (``format:%Y-%m``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tempanon.errors import InputError

DAY = 86_400
WEEK = 7 * DAY
MONDAY_OFFSET = -3 * DAY  # 1970-01-01 was a Thursday: ISO weeks start on 1969-12-29
MAX_CHANGE_POINTS = 2_000_000
GAP = np.int64(np.iinfo(np.int64).min)  # index of an instant in no granule (indexes may be negative)


def _fmt(instants: np.ndarray, fmt: str) -> np.ndarray:
    """strftime of int64 epoch seconds (vectorized through pandas; used on granules, not tuples)."""
    if len(instants) == 0:
        return np.array([], dtype=object)
    return pd.to_datetime(np.asarray(instants, dtype=np.int64), unit="s").strftime(fmt).to_numpy(dtype=object)


def _grid(lo: int, hi: int, period: int, offset: int) -> np.ndarray | None:
    first = offset + ((lo - offset) // period + 1) * period
    n = (hi - first + period - 1) // period if hi > first else 0
    if n > MAX_CHANGE_POINTS:
        return None
    return first + period * np.arange(max(n, 0), dtype=np.int64)


class Granularity:
    """Base class; see the module docstring for the contract."""

    #: ``(period, offset)`` when ``index = floor((t - offset) / period)`` with no gaps, else None.
    uniform = None
    #: True when some instants lie in no granule.
    has_gaps = False
    #: a boundary file's note when ``auto`` could not decide its numeric date order and read it month
    #: first (:func:`boundaries_from_file`); the timestamped run puts it in its summary's messages
    date_order_note = None

    def index(self, t: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def start(self, i: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def end(self, i: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def label(self, i: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def change_points(self, lo: int, hi: int) -> np.ndarray | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def labels_of(self, t: np.ndarray) -> np.ndarray:
        """Labels of the granules holding the instants ``t`` (labels formatted once per granule)."""
        idx = self.index(np.asarray(t, dtype=np.int64))
        uniq, inv = np.unique(idx, return_inverse=True)
        lab = np.empty(len(uniq), dtype=object)
        ok = uniq != GAP
        lab[ok] = self.label(uniq[ok])
        lab[~ok] = None
        return lab[inv]

    def __repr__(self) -> str:
        return f"<granularity {self.name}>"


@dataclass(repr=False, eq=False)
class Uniform(Granularity):
    """Granules of ``period`` seconds starting at ``offset + i * period`` (second, minute, hour,
    day, ISO week, and fixed-length groupings of them such as 6 hours or 2 weeks)."""

    name: str
    period: int
    offset: int = 0
    fmt: str = "%Y-%m-%dT%H:%M:%S"
    span_label: bool = False  # label "first..last" (groupings) instead of the start formatted

    def __post_init__(self) -> None:
        if self.period <= 0:
            raise InputError(f"granularity {self.name!r}: the period must be positive")
        self.uniform = (int(self.period), int(self.offset))

    def index(self, t):
        return (np.asarray(t, dtype=np.int64) - self.offset) // self.period

    def start(self, i):
        return np.asarray(i, dtype=np.int64) * self.period + self.offset

    def end(self, i):
        return self.start(i) + self.period

    def label(self, i):
        s = self.start(i)
        if not self.span_label:
            return _fmt(s, self.fmt)
        return _fmt(s, self.fmt).astype(object) + ".." + _fmt(self.end(i) - 1, self.fmt).astype(object)

    def change_points(self, lo, hi):
        return _grid(lo, hi, self.period, self.offset)


def _month_number(t: np.ndarray) -> np.ndarray:
    return np.asarray(t, dtype=np.int64).astype("datetime64[s]").astype("datetime64[M]").astype(np.int64)


def _month_start(m: np.ndarray) -> np.ndarray:
    return np.asarray(m, dtype=np.int64).astype("datetime64[M]").astype("datetime64[s]").astype(np.int64)


@dataclass(repr=False, eq=False)
class Months(Granularity):
    """Groups of ``n`` calendar months; group 0 starts in month ``anchor`` (1-12) of 1970.

    month (n=1), quarter (3), semester (6), year (12); fiscal quarters starting in October are
    ``Months("fiscal-quarter", 3, anchor=10)``.
    """

    name: str
    n: int = 1
    anchor: int = 1
    style: str = "month"  # label style: month, quarter, semester, year, span

    def __post_init__(self) -> None:
        if self.n <= 0 or not 1 <= self.anchor <= 12:
            raise InputError(f"granularity {self.name!r}: bad month grouping n={self.n} anchor={self.anchor}")

    def index(self, t):
        return (_month_number(t) - (self.anchor - 1)) // self.n

    def start(self, i):
        return _month_start(np.asarray(i, dtype=np.int64) * self.n + (self.anchor - 1))

    def end(self, i):
        return _month_start((np.asarray(i, dtype=np.int64) + 1) * self.n + (self.anchor - 1))

    def label(self, i):
        i = np.asarray(i, dtype=np.int64)
        first = i * self.n + (self.anchor - 1)
        year = (first // 12 + 1970).astype(str).astype(object)
        if self.style == "month":
            return _fmt(self.start(i), "%Y-%m")
        if self.style == "year" and self.anchor == 1:
            return year
        if self.style in ("quarter", "semester") and self.anchor == 1:
            letter = "Q" if self.style == "quarter" else "S"
            return year + letter + ((first % 12) // self.n + 1).astype(str).astype(object)
        return _fmt(self.start(i), "%Y-%m").astype(object) + ".." + _fmt(self.end(i) - 1, "%Y-%m").astype(object)

    def change_points(self, lo, hi):
        m0, m1 = _month_number(np.array([lo, hi]))
        ms = np.arange(m0, m1 + 2, dtype=np.int64)
        ms = ms[(ms - (self.anchor - 1)) % self.n == 0]
        cps = _month_start(ms)
        return cps[(cps > lo) & (cps < hi)]


@dataclass(repr=False, eq=False)
class BusinessDay(Granularity):
    """Monday-Friday days minus the public holidays of ``country`` (``holidays`` package).

    Indexes are contiguous (Definition 9, condition 2): business day ``i`` is the ``i``-th
    business day counted from 1970-01-01 (negative before), so weekends and holidays are gaps of
    the time line but never holes of the index set, and a grouping ``2business-days`` pairs two
    consecutive *business* days (a pair never ends on a holiday). Index of day ``d``: its weekday
    counter ``5 * week + weekday`` minus the weekday holidays between day 0 and ``d``; the
    holidays of every year between 1970 and the days asked for are computed (cached per year).
    """

    name: str = "business-day"
    country: str | None = None
    subdiv: str | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.has_gaps = True
        if self.country is not None:
            import holidays

            try:
                holidays.country_holidays(self.country, subdiv=self.subdiv, years=2000)
            except (NotImplementedError, KeyError, ValueError) as exc:
                raise InputError(f"business-day: unknown holiday country {self.country!r} ({exc})") from None

    def _year_holidays(self, y: int) -> np.ndarray:
        if y not in self._cache:
            import holidays

            hs = holidays.country_holidays(self.country, subdiv=self.subdiv, years=int(y))
            days = np.array(sorted(hs.keys()), dtype="datetime64[D]").astype(np.int64)
            self._cache[y] = days[(days + 3) % 7 < 5]  # holidays on weekdays (weekends are gaps anyway)
        return self._cache[y]

    def _holidays_covering(self, d_lo: int, d_hi: int) -> np.ndarray:
        """Sorted weekday holidays of every year from min(1970, year(d_lo)) to max(1970, year(d_hi))."""
        if self.country is None:
            return np.array([], dtype=np.int64)
        y = np.array([min(d_lo, 0), max(d_hi, 0)], dtype="datetime64[D]").astype("datetime64[Y]").astype(np.int64) + 1970
        return np.concatenate([self._year_holidays(yy) for yy in range(int(y[0]), int(y[1]) + 1)])

    @staticmethod
    def _counter(d: np.ndarray) -> np.ndarray:
        return 5 * ((d + 3) // 7) + (d + 3) % 7

    def index(self, t):
        d = np.asarray(t, dtype=np.int64) // DAY
        wd = (d + 3) % 7  # 0 = Monday
        idx = self._counter(d)
        if self.country is None or len(d) == 0:
            return np.where(wd >= 5, GAP, idx)
        hol = self._holidays_covering(int(d.min()), int(d.max()))
        before = np.searchsorted(hol, d, side="left") - np.searchsorted(hol, 0, side="left")
        is_hol = np.isin(d, hol)
        return np.where((wd >= 5) | is_hol, GAP, idx - before)

    def _day(self, i):
        i = np.asarray(i, dtype=np.int64)
        plain = 7 * (i // 5) + (i % 5) - 3  # the i-th weekday
        if self.country is None or len(i) == 0:
            return plain
        # the i-th business day: skip the holidays met on the way (iterate until stable)
        c = i.copy()
        for _ in range(64):
            d = 7 * (c // 5) + (c % 5) - 3
            hol = self._holidays_covering(int(min(d.min(), plain.min())), int(max(d.max(), plain.max())))
            h0 = np.searchsorted(hol, 0, side="left")
            # weekday holidays in [0, d] (d >= 0) or -(those in [d, 0)) shift the counter
            new = i + np.searchsorted(hol, d, side="right") - h0
            new = np.where(d < 0, i + np.searchsorted(hol, d, side="left") - h0, new)
            if np.array_equal(new, c):
                break
            c = new
        d = 7 * (c // 5) + (c % 5) - 3
        return d

    def start(self, i):
        return self._day(i) * DAY

    def end(self, i):
        return self.start(i) + DAY

    def label(self, i):
        return _fmt(self.start(i), "%Y-%m-%d")

    def change_points(self, lo, hi):
        return _grid(lo, hi, DAY, 0)


@dataclass(repr=False, eq=False)
class PartsOfDay(Granularity):
    """Each day split into named parts ``[(name, start_hour, end_hour), ...]`` (hours may be
    fractional; parts are sorted, non-overlapping, within 0-24; uncovered hours are gaps)."""

    name: str = "part-of-day"
    parts: tuple[tuple[str, float, float], ...] = (
        ("night", 0, 6),
        ("morning", 6, 12),
        ("afternoon", 12, 18),
        ("evening", 18, 24),
    )

    def __post_init__(self) -> None:
        parts = sorted((str(n), float(a), float(b)) for n, a, b in self.parts)
        parts.sort(key=lambda p: p[1])
        if not parts:
            raise InputError(f"{self.name}: no parts of the day given")
        prev = 0.0
        for n, a, b in parts:
            if not (0 <= a < b <= 24) or a < prev:
                raise InputError(f"{self.name}: part {n!r} {a}-{b} must lie within 0-24 h without overlap")
            prev = b
        self.parts = tuple(parts)
        self._starts = np.array([round(a * 3600) for _, a, _ in parts], dtype=np.int64)
        self._ends = np.array([round(b * 3600) for _, _, b in parts], dtype=np.int64)
        self._names = np.array([n for n, _, _ in parts], dtype=object)
        self.has_gaps = bool(self._starts[0] > 0 or self._ends[-1] < DAY or np.any(self._starts[1:] > self._ends[:-1]))

    def index(self, t):
        t = np.asarray(t, dtype=np.int64)
        d, s = np.divmod(t, DAY)
        p = np.searchsorted(self._starts, s, side="right") - 1
        pc = np.clip(p, 0, len(self._starts) - 1)
        inside = (p >= 0) & (s < self._ends[pc])
        return np.where(inside, d * len(self._starts) + pc, GAP)

    def start(self, i):
        d, p = np.divmod(np.asarray(i, dtype=np.int64), len(self._starts))
        return d * DAY + self._starts[p]

    def end(self, i):
        d, p = np.divmod(np.asarray(i, dtype=np.int64), len(self._starts))
        return d * DAY + self._ends[p]

    def label(self, i):
        p = np.asarray(i, dtype=np.int64) % len(self._starts)
        return _fmt(self.start(i), "%Y-%m-%d ").astype(object) + self._names[p]

    def change_points(self, lo, hi):
        d0, d1 = lo // DAY, hi // DAY + 1
        days = np.arange(d0, d1 + 1, dtype=np.int64) * DAY
        cps = (days[:, None] + np.unique(np.r_[self._starts, self._ends])[None, :]).ravel()
        return cps[(cps > lo) & (cps < hi)]


@dataclass(repr=False, eq=False)
class Grouping(Granularity):
    """Fixed-length grouping of ``n`` consecutive indexes of ``base`` (``2 business-days``).
    Gaps of the base stay gaps; a granule may then be non-convex (its hull spans the gap)."""

    name: str
    base: Granularity
    n: int
    anchor: int = 0

    def __post_init__(self) -> None:
        if self.n <= 0:
            raise InputError(f"granularity {self.name!r}: group size must be positive")
        self.has_gaps = self.base.has_gaps

    def index(self, t):
        b = self.base.index(t)
        return np.where(b == GAP, GAP, (b - self.anchor) // self.n)

    def start(self, i):
        return self.base.start(np.asarray(i, dtype=np.int64) * self.n + self.anchor)

    def end(self, i):
        return self.base.end(np.asarray(i, dtype=np.int64) * self.n + self.anchor + self.n - 1)

    def label(self, i):
        i = np.asarray(i, dtype=np.int64)
        first = self.base.label(i * self.n + self.anchor)
        last = self.base.label(i * self.n + self.anchor + self.n - 1)
        return first.astype(object) + ".." + last.astype(object)

    def change_points(self, lo, hi):
        return self.base.change_points(lo, hi)


@dataclass(repr=False, eq=False)
class Boundaries(Granularity):
    """Granules given explicitly as ``[start, end)`` intervals with labels (academic terms,
    fiscal periods). Instants outside every interval are gaps."""

    name: str
    starts: np.ndarray
    ends: np.ndarray
    labels: np.ndarray

    def __post_init__(self) -> None:
        s = np.asarray(self.starts, dtype=np.int64)
        e = np.asarray(self.ends, dtype=np.int64)
        if len(s) == 0:
            raise InputError(f"granularity {self.name!r}: no granules given")
        order = np.argsort(s, kind="stable")
        s, e = s[order], e[order]
        lab = np.asarray(self.labels, dtype=object)[order]
        bad = np.nonzero(e <= s)[0]
        if len(bad):
            raise InputError(f"granularity {self.name!r}: granule {lab[bad[0]]!r} ends before it starts")
        over = np.nonzero(s[1:] < e[:-1])[0]
        if len(over):
            j = over[0]
            raise InputError(f"granularity {self.name!r}: granules {lab[j]!r} and {lab[j + 1]!r} overlap")
        self.starts, self.ends, self.labels = s, e, lab
        self.has_gaps = True

    def index(self, t):
        t = np.asarray(t, dtype=np.int64)
        j = np.searchsorted(self.starts, t, side="right") - 1
        jc = np.clip(j, 0, len(self.starts) - 1)
        return np.where((j >= 0) & (t < self.ends[jc]), jc, GAP)

    def start(self, i):
        return self.starts[np.asarray(i, dtype=np.int64)]

    def end(self, i):
        return self.ends[np.asarray(i, dtype=np.int64)]

    def label(self, i):
        return self.labels[np.asarray(i, dtype=np.int64)]

    def change_points(self, lo, hi):
        cps = np.unique(np.r_[self.starts, self.ends])
        return cps[(cps > lo) & (cps < hi)]


@dataclass(repr=False, eq=False)
class Format(Granularity):
    """Date-format truncation: the granularity whose granules are the instants sharing the text
    ``strftime(fmt)``, e.g. ``%Y-%m`` (months) or ``%Y-%m-%d %H`` (hours). Only formats whose
    granules do not interleave are accepted (a format naming the month without the year would
    put every January in one granule); the chain of ISO truncations ``%Y`` < ``%Y-%m`` < ... is a
    total order usable as an Incognito hierarchy (see :func:`truncation_chain`)."""

    name: str
    fmt: str

    def __post_init__(self) -> None:
        codes = set(re.findall(r"%([a-zA-Z])", self.fmt))
        unknown = codes - set("YmdHMSGVjbBy")
        if unknown:
            raise InputError(f"format {self.fmt!r}: unsupported directive(s) {sorted(unknown)}")
        has = lambda c: c in codes  # noqa: E731
        year = has("Y") or has("y")
        if has("V") != has("G") or (has("V") and (year or codes & set("mbBdjHMS"))):
            raise InputError(
                f"format {self.fmt!r}: the ISO week %V goes with the ISO year %G alone (use format:%G-W%V or the "
                f"granularity week); %Y is the calendar year, which differs from the ISO year around January 1 "
                f"(2005-01-01 is in 2004-W53), and %G without %V is not supported"
            )
        if has("G") and has("V"):
            unit = WEEK_G
        elif has("S"):
            unit = SECOND_G
        elif has("M"):
            unit = MINUTE_G
        elif has("H"):
            unit = HOUR_G
        elif has("d") or has("j"):
            unit = DAY_G
        elif has("m") or has("b") or has("B"):
            unit = MONTH_G
        elif year:
            unit = YEAR_G
        else:
            raise InputError(f"format {self.fmt!r} names no calendar field")
        needed = {
            id(SECOND_G): ["M", "H", "d|j", "m|b|B|j", "Y|y"],
            id(MINUTE_G): ["H", "d|j", "m|b|B|j", "Y|y"],
            id(HOUR_G): ["d|j", "m|b|B|j", "Y|y"],
            id(DAY_G): ["m|b|B|j", "Y|y"],
            id(MONTH_G): ["Y|y"],
            id(YEAR_G): [],
            id(WEEK_G): [],
        }[id(unit)]
        for alt in needed:
            if not any(has(c) for c in alt.split("|")):
                raise InputError(
                    f"format {self.fmt!r} is not a granularity: without %{alt.split('|')[0]} its granules "
                    f"interleave (e.g. the same text recurs in different years)"
                )
        self.unit = unit

    def index(self, t):
        return self.unit.index(t)

    def start(self, i):
        return self.unit.start(i)

    def end(self, i):
        return self.unit.end(i)

    def label(self, i):
        return _fmt(self.start(i), self.fmt)

    @property
    def uniform(self):  # type: ignore[override]
        return self.unit.uniform

    def change_points(self, lo, hi):
        return self.unit.change_points(lo, hi)


SECOND_G = Uniform("second", 1, 0, "%Y-%m-%dT%H:%M:%S")
MINUTE_G = Uniform("minute", 60, 0, "%Y-%m-%dT%H:%M")
HOUR_G = Uniform("hour", 3600, 0, "%Y-%m-%dT%H")
DAY_G = Uniform("day", DAY, 0, "%Y-%m-%d")
WEEK_G = Uniform("week", WEEK, MONDAY_OFFSET, "%G-W%V")
MONTH_G = Months("month", 1, 1, "month")
YEAR_G = Months("year", 12, 1, "year")

_UNITS = {
    "second": SECOND_G,
    "minute": MINUTE_G,
    "hour": HOUR_G,
    "day": DAY_G,
    "week": WEEK_G,
    "month": MONTH_G,
    "year": YEAR_G,
}
_ALIASES = {
    "seconds": "second", "sec": "second", "s": "second",
    "minutes": "minute", "min": "minute",
    "hours": "hour", "h": "hour",
    "days": "day", "d": "day",
    "weeks": "week", "w": "week", "iso-week": "week",
    "months": "month", "m": "month",
    "years": "year", "y": "year",
    "quarters": "quarter", "semesters": "semester",
    "business-days": "business-day", "businessday": "business-day", "bday": "business-day",
    "part-of-day": "part-of-day", "parts-of-day": "part-of-day", "daypart": "part-of-day",
}  # fmt: skip


def builtin(name: str, *, country: str | None = None, parts=None) -> Granularity:
    """A built-in granularity by name: second, minute, hour, part-of-day, day, business-day,
    week, month, quarter, semester, year."""
    key = _ALIASES.get(name.lower(), name.lower())
    if key in _UNITS:
        return _UNITS[key]
    if key == "quarter":
        return Months("quarter", 3, 1, "quarter")
    if key == "semester":
        return Months("semester", 6, 1, "semester")
    if key == "business-day":
        return BusinessDay("business-day", country=country)
    if key == "part-of-day":
        return PartsOfDay("part-of-day", parts) if parts else PartsOfDay("part-of-day")
    raise KeyError(name)


BUILTIN_NAMES = ("second", "minute", "hour", "part-of-day", "day", "business-day", "week", "month",
                 "quarter", "semester", "year")  # fmt: skip

_SPEC = re.compile(r"^\s*(\d+)\s*[- ]?\s*([a-zA-Z-]+?)(?:@(\d+))?\s*$")


def parse_granularity(spec: str, *, country: str | None = None, parts=None, date_order: str | None = "auto",
                      warn: bool = True) -> Granularity:  # fmt: skip
    """Parse one ``--granularities`` item.

    * a built-in name (``hour``, ``business-day``, ``week``, ``quarter``, ...);
    * ``N<unit>`` a fixed-length grouping: ``6hours``, ``2weeks``, ``3days``, ``2business-days``;
      month units give calendar groupings, optionally anchored: ``3months@10`` (fiscal quarters
      starting in October), ``2years``;
    * ``format:<strftime>`` a date-format truncation, e.g. ``format:%Y-%m``;
    * ``file:<path>`` explicit boundaries from a CSV with columns ``label,start,end``, their numeric
      dates read in ``date_order`` (:func:`boundaries_from_file`; ``warn``: whether its note is warned).
    """
    s = spec.strip()
    if not s:
        raise InputError("empty granularity name")
    if s.lower().startswith("format:"):
        return Format(s, s.split(":", 1)[1])
    if s.lower().startswith("file:"):
        return boundaries_from_file(s.split(":", 1)[1], date_order=date_order, warn=warn)
    try:
        return builtin(s, country=country, parts=parts)
    except KeyError:
        pass
    m = _SPEC.match(s)
    if m:
        n, unit, anchor = int(m.group(1)), m.group(2).lower(), m.group(3)
        unit = _ALIASES.get(unit, unit)
        if n <= 0:
            raise InputError(f"granularity {spec!r}: the group size must be positive")
        if unit in ("month", "quarter", "semester", "year"):
            per = {"month": 1, "quarter": 3, "semester": 6, "year": 12}[unit] * n
            a = int(anchor) if anchor else 1
            if not 1 <= a <= 12:
                raise InputError(f"granularity {spec!r}: the anchor month must be 1-12")
            if per == 1 and a == 1:
                return MONTH_G
            return Months(s, per, a, "span")
        if anchor:
            raise InputError(f"granularity {spec!r}: an anchor (@) is only allowed for month groupings")
        try:
            base = builtin(unit, country=country, parts=parts)
        except KeyError:
            raise InputError(f"unknown granularity unit {unit!r} in {spec!r}") from None
        if n == 1:
            return base
        if base.uniform is not None:
            p, o = base.uniform
            return Uniform(s, p * n, o, base.fmt, span_label=True)  # type: ignore[attr-defined]
        return Grouping(s, base, n)
    raise InputError(
        f"unknown granularity {spec!r}; use one of {', '.join(BUILTIN_NAMES)}, N<unit> (e.g. 6hours, "
        f"2weeks, 3months@10), format:<strftime> or file:<csv with label,start,end>"
    )


def boundaries_from_file(path: str, name: str | None = None, *, date_order: str | None = "auto",
                         warn: bool = True) -> Boundaries:  # fmt: skip
    """Explicit-boundary granularity from a CSV ``label,start,end`` (end exclusive), or a Parquet file with
    those columns. A Parquet ``label``, ``start`` or ``end`` of a nested type (list, struct, map) is refused
    (:class:`InputError`, exit 2) before any row is read: its text (``[1 2]``, ``{'a': 1}``) would make an
    odd label or no time at all.

    ``start`` and ``end`` are timestamps (:func:`tempanon.temporal.parse.parse_timestamps`); their numeric
    dates (``05/03/2023``) are read in ``date_order`` (:data:`tempanon.temporal.parse.DATE_ORDERS`, the
    order the timestamped command reads the data's time column in, ``--date-order``): ``auto`` decides one
    order for both columns from their values together, per file (an undecided file is read month first
    with a :class:`~tempanon.errors.TempanonWarning`, also the granularity's ``date_order_note``; ``warn=False``:
    the note only, for a caller that says it itself, as the timestamped run does in its summary); ``day`` /
    ``month`` read every value so, and a value that cannot be read so is an :class:`InputError` naming the
    file, the column, the line and the value."""
    from pathlib import Path

    from tempanon.data.io import nested_parquet_columns, parquet_type_phrase, read_table
    from tempanon.temporal.parse import check_date_order, day_month_order, parse_timestamps

    date_order = check_date_order(date_order)
    nested = {c: t for c, t in nested_parquet_columns(path).items() if c.lower() in ("label", "start", "end")}
    if nested:
        what = "; ".join(f"{c!r} ({t})" for c, t in nested.items())
        kinds = sorted({parquet_type_phrase(t).removeprefix("a ").removesuffix(" Parquet type") for t in nested.values()})
        raise InputError(f"boundary file {path}: column(s) with a {' or '.join(kinds)} Parquet type: {what}. A boundary file's label, "
                         "start and end are scalar values (text, dates, times): write them as scalar columns (the label "
                         "as text); nothing was read")  # fmt: skip
    df = read_table(path, as_text=True)
    cols = [c.lower() for c in df.columns]
    if not {"label", "start", "end"} <= set(cols):
        raise InputError(f"boundary file {path}: needs columns label,start,end (has {', '.join(df.columns)})")
    df.columns = cols
    order, said = date_order, None
    if order == "auto":
        # one day/month order for both columns, decided by their values together (13/01/2023 in start: day first)
        both = pd.concat([df["start"], df["end"]], ignore_index=True).astype("string").str.strip()
        n = len(df)
        try:
            decided, note = day_month_order(both, "start/end", lambda i: i % n + 2)
        except InputError as exc:
            raise InputError(f"boundary file {path}: {exc}") from None
        if note:
            said = (f"boundary file {path}: " + note.replace("pass --date-order day if it is", "if it is")
                    + ", pass --date-order day (a job's date_order = \"day\"; the time column is read so too) or write "
                    "the boundaries as YYYY-MM-DD")  # fmt: skip
            if warn:
                import warnings

                from tempanon.errors import TempanonWarning

                warnings.warn(TempanonWarning(said), stacklevel=2)
        order = decided or "auto"
    try:  # (an explicit order: a value it cannot read is refused here, naming its column and line)
        s, ms, _ = parse_timestamps(df["start"], "start", date_order=order)
        e, me, _ = parse_timestamps(df["end"], "end", date_order=order)
    except InputError as exc:
        raise InputError(f"boundary file {path}: {exc}") from None
    if ms.any() or me.any():
        row = int(np.nonzero(ms | me)[0][0]) + 1
        raise InputError(f"boundary file {path}, line {row + 1}: start and end are required")
    g = Boundaries(name or f"file:{Path(path).stem}", s, e, df["label"].to_numpy(dtype=object))
    g.date_order_note = said
    return g


def parse_parts(spec: str | None):
    """``"night=0-6,morning=6-12,afternoon=12-18,evening=18-24"`` -> parts for :class:`PartsOfDay`
    (hours may be fractional: ``lunch=12-13.5``)."""
    if spec is None or not spec.strip():
        return None
    parts = []
    for item in spec.split(","):
        m = re.match(r"^\s*([^=]+?)\s*=\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*$", item)
        if not m:
            raise InputError(f"part of the day {item.strip()!r}: expected name=START-END in hours, e.g. morning=6-12")
        parts.append((m.group(1), float(m.group(2)), float(m.group(3))))
    PartsOfDay("part-of-day", tuple(parts))  # validate
    return tuple(parts)


def truncation_chain(levels=("second", "minute", "hour", "day", "month", "year")) -> list[Granularity]:
    """The chain of ISO date-format truncations (a total order), finest first."""
    fmts = {
        "second": "%Y-%m-%dT%H:%M:%S",
        "minute": "%Y-%m-%dT%H:%M",
        "hour": "%Y-%m-%dT%H",
        "day": "%Y-%m-%d",
        "month": "%Y-%m",
        "year": "%Y",
    }
    return [Format(lv, fmts[lv]) for lv in levels]
