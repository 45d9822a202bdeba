"""Timestamp parsing to int64 epoch seconds, and inference of the data's granularity.

Rules (documented in docs/temporal.md):

* datetime columns are used as they are; text is parsed as ISO 8601 first, then element by
  element (``format="mixed"``);
* tz-aware timestamps are converted to UTC; naive ones are taken as wall-clock time. A column
  mixing both is parsed with naive values read as UTC (reported in ``info["timezone"]``);
* empty cells are *missing*: a category of their own that is never generalized (released empty)
  and must itself hold k respondents per quasi-identifier combination;
* any other cell that does not parse raises :class:`InputError` naming the column, the 1-based
  data row and the value;
* fractions of a second are truncated (the finest granularity is the second) and counted in
  ``info["subsecond_truncated"]``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from tempanon.errors import InputError
from tempanon.temporal.granularity import DAY_G, HOUR_G, MINUTE_G, SECOND_G, Granularity


def _to_seconds(parsed: pd.Series) -> tuple[np.ndarray, np.ndarray, int]:
    missing = parsed.isna().to_numpy()
    ns = parsed.astype("datetime64[ns]").to_numpy().astype("datetime64[ns]").astype(np.int64)
    secs = np.floor_divide(ns, 1_000_000_000)
    frac = int(np.count_nonzero((ns % 1_000_000_000 != 0) & ~missing))
    secs = np.where(missing, 0, secs).astype(np.int64)
    return secs, missing, frac


def parse_timestamps(series: pd.Series, column: str = "time") -> tuple[np.ndarray, np.ndarray, dict]:
    """Parse a timestamp column. Returns ``(instants, missing, info)``: int64 epoch seconds (0
    where missing), the boolean mask of missing cells, and a dict describing what was done."""
    info: dict = {"timezone": "naive", "subsecond_truncated": 0}
    s = series.reset_index(drop=True)
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        info["timezone"] = f"converted from {s.dtype.tz} to UTC"
        parsed = s.dt.tz_convert("UTC").dt.tz_localize(None)
    elif pd.api.types.is_datetime64_any_dtype(s.dtype):
        parsed = s
    else:
        text = s.astype("string").str.strip()
        blank = (text.isna() | (text == "")).fillna(True).astype(bool)
        text = text.where(~blank, None)
        has_tz = text.dropna().str.contains(r"(?:Z|[+-]\d\d:?\d\d)$", regex=True).astype(bool)
        any_tz = bool(has_tz.any())
        all_tz = bool(has_tz.all()) if len(has_tz) else False
        if any_tz:
            info["timezone"] = "converted to UTC" if all_tz else "mixed: naive values read as UTC"
        parsed = None
        for fmt in ("ISO8601", "mixed"):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    p = pd.to_datetime(text, format=fmt, utc=any_tz, errors="coerce")
            except (ValueError, TypeError, OverflowError):
                continue
            bad = p.isna() & ~blank
            if not bool(bad.any()):
                parsed = p
                break
            parsed = p
        assert parsed is not None
        bad = (parsed.isna() & ~blank).to_numpy()
        if bad.any():
            row = int(np.nonzero(bad)[0][0])
            raise InputError(
                f"column {column!r}, line {row + 2}: cannot parse timestamp {text.iloc[row]!r} "
                f"({int(bad.sum())} unparsable value(s) in total)"
            )
        if any_tz:
            parsed = parsed.dt.tz_convert("UTC").dt.tz_localize(None)
    secs, missing, frac = _to_seconds(parsed)
    info["subsecond_truncated"] = frac
    info["missing"] = int(missing.sum())
    return secs, missing, info


def infer_data_granularity(instants: np.ndarray, missing: np.ndarray | None = None) -> Granularity:
    """The coarsest of day, hour, minute, second that every (non-missing) timestamp starts a
    granule of: timestamps all at midnight are taken as days, all on the full minute as minutes."""
    t = instants if missing is None else instants[~missing]
    for g in (DAY_G, HOUR_G, MINUTE_G):
        p, o = g.uniform  # type: ignore[misc]
        if len(t) and bool(np.all((t - o) % p == 0)):
            return g
    return SECOND_G
