"""Input shapes of (k,P)-anonymity: long format and missing-value sentinels (issue 16).

* :func:`long_to_wide` - one row per (entity, time) reading -> one row per entity with one column
  per time point (in time order), the form :func:`~tempanon.timeseries.api.kp_anonymize` takes.
  Times are ordered as numbers, else as numbered labels (``t0 .. t23`` by their number), else as
  timestamps, else as text (with a warning). An (entity, time) pair read twice
  is refused; a time point an entity has no reading for is a *missing reading*. Every other
  column kept (e.g. the sensitive one) must hold one value per entity.
* :func:`mark_missing` - values listed as missing-value sentinels (``--na-values``, e.g. ``-1``)
  become missing readings.

Missing readings are then handled by ``missing=`` of :func:`kp_anonymize`: ``"refuse"`` (the
default: exit 2 naming the first one and the count) or ``"drop"`` (a series with a missing reading
is left out of the anonymization and of the release; the summary counts them in
``dropped_incomplete``, and they are not in the audit). Missing readings are never imputed: an
envelope or a SAX word of an imputed value would describe values nobody measured.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tempanon.data.roles import require_columns
from tempanon.errors import InputError


def _time_order(values: pd.Series, lines=None, date_order: str | None = "auto") -> tuple[np.ndarray, str, str | None, str | None]:
    """Sort keys of the distinct time values and how they were read: ``(keys, how, order, note)``. ``how``
    is ``"numbers"``, ``"numbered labels"`` (one text, a whole number, one text: ``t0 .. t23``, ``W1 .. W52``,
    ordered by the number: as text ``t10`` would come before ``t2``, and every series' readings would be
    scrambled in the pivot), ``"timestamps"`` or ``"text"`` (alphabetical; :func:`long_to_wide` warns).

    Numeric dates (``05/03/2023``) are read in ``date_order`` as ``timestamped`` reads them
    (:func:`tempanon.temporal.parse.day_month_order`): ``order`` is the order used (``"day"``,
    ``"month"``; ``None``: no numeric date) and ``note`` the note of an undecided column ``auto`` read
    month first. With ``day`` or ``month`` a value that cannot be read so (``13/05/2023`` month first,
    ``31/02/2023`` day first) is an :class:`InputError` naming the column, the line (``lines``: position
    -> file line) and the value."""
    num = pd.to_numeric(values, errors="coerce")
    if num.notna().all():
        return num.to_numpy(dtype=float), "numbers", None, None
    text = values.astype(str)
    parts = text.str.extract(r"^(\D*?)(\d+)(\D*)$")  # before timestamps: pandas reads 't01' as a time of day
    if parts.notna().all().all() and parts[0].nunique() == 1 and parts[2].nunique() == 1:
        number = parts[1].astype(float)
        if number.nunique() == len(number):  # (t01 and t1 both: not numbered labels)
            return number.to_numpy(), "numbered labels", None, None
    from tempanon.temporal.parse import as_month_first, check_date_order, day_month_order

    date_order = check_date_order(date_order)
    column = str(values.name or "time")
    # numeric dates in one day/month order, as timestamped reads them (13/05/2023 beside 05/03/2023:
    # day first; pandas alone read 05/03/2023 as May 3 and put its column out of order)
    stripped = text.str.strip()
    order, note = day_month_order(stripped, column, lines, date_order)
    ptext = as_month_first(stripped) if order == "day" else values
    try:
        ts = pd.to_datetime(ptext, errors="raise", utc=True, format="mixed")
        return ts.astype("int64").to_numpy(), "timestamps", order, note
    except (ValueError, TypeError, OverflowError):
        pass
    if date_order != "auto" and order is not None:  # numeric dates said to be in an order: each must read so
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one = [pd.to_datetime(v, errors="coerce", utc=True, format="mixed") for v in ptext]
        bad = next((i for i, t in enumerate(one) if pd.isna(t)), None)
        if bad is not None:
            where = "" if lines is None else f", line {lines(bad)}"
            raise InputError(f"column {column!r}{where}: cannot parse timestamp {text.iloc[bad]!r} (--date-order "
                             f"{date_order}: the times are read as dates, {date_order} first)")
    # mostly timestamps with a few that are not (a typo such as 2023-01-32): ordering them all as text would
    # put the readings out of time order (25/01/2023 after 01/02/2023), and a lone bad time would become a
    # time point of its own that every other series misses: refuse it, naming it
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        each = pd.to_datetime(pd.Series(list(ptext), dtype=object), errors="coerce", utc=True, format="mixed")
    parsed = int(each.notna().sum())
    if parsed >= 2 and 2 * parsed > len(each):
        bad = int(np.flatnonzero(each.isna().to_numpy())[0])
        where = "" if lines is None else f", line {lines(bad)}"
        raise InputError(f"column {column!r}{where}: cannot parse timestamp {text.iloc[bad]!r} ({parsed} of the "
                         f"{len(each)} distinct times are timestamps, {len(each) - parsed} not): correct it, or give every "
                         "time as a number, so that the readings can be put in time order")  # fmt: skip
    return text.to_numpy(), "text", None, None


def long_to_wide(df: pd.DataFrame, *, entity: str, time: str, value: str,
                 keep: Sequence[str] = (), date_order: str | None = "auto") -> tuple[pd.DataFrame, list[str]]:
    """Pivot a long table to one row per entity. Returns ``(wide, time_columns)``: ``wide`` has
    the entity column, one column per distinct time (named by the time's text, in time order)
    and the ``keep`` columns; entities in order of first appearance. How the times were ordered
    (:func:`_time_order`) is ``wide.attrs["time_order"]``; times ordered as plain text raise a
    :class:`~tempanon.errors.TempanonWarning` naming the first ones in that order.

    ``date_order`` (:data:`tempanon.temporal.parse.DATE_ORDERS`, ``--date-order``): how numeric dates
    such as ``05/03/2023`` are read, as ``timestamped`` reads them: ``auto`` decides from the values
    (a column where every value could be either is read month first, with a
    :class:`~tempanon.errors.TempanonWarning`: the note, also ``wide.attrs["date_order_note"]``);
    ``day`` / ``month`` read every value so, and a value that cannot be read so is an
    :class:`InputError` naming the column, the line and the value. ``wide.attrs["date_order"]`` is
    the order used (``None``: no numeric date)."""
    keep = list(keep)
    require_columns(df, [entity, time, value, *keep], role="long-format column")
    for name, c in (("--entity", entity), ("--time", time)):
        miss = df[c].isna().to_numpy()
        if miss.any():
            raise InputError(f"{name} column {c!r}, line {int(np.flatnonzero(miss)[0]) + 2}: missing value")
    ent_text = df[entity].astype(str)
    time_text = df[time].astype(str)
    dup = pd.DataFrame({"e": ent_text, "t": time_text}).duplicated(keep=False).to_numpy()
    if dup.any():
        i = np.flatnonzero(dup)
        e, t = ent_text.iloc[i[0]], time_text.iloc[i[0]]
        lines = [int(j) + 2 for j in i[(ent_text.iloc[i] == e).to_numpy() & (time_text.iloc[i] == t).to_numpy()]][:5]
        raise InputError(f"long format: entity {e!r} has more than one reading at time {t!r} (lines {lines})")
    first = np.flatnonzero(~time_text.duplicated().to_numpy())  # the first row of each distinct time
    ut = time_text.iloc[first]
    keys, how, order, note = _time_order(df[time].iloc[first], lambda i: int(first[i]) + 2, date_order)
    if note:
        import warnings

        from tempanon.errors import TempanonWarning

        warnings.warn(TempanonWarning(note), stacklevel=2)
    times = ut.to_numpy()[np.argsort(keys, kind="stable")].tolist()
    if how == "text" and len(times) > 1:
        import warnings

        from tempanon.errors import TempanonWarning

        warnings.warn(f"--time {time!r}: its values are neither numbers, numbered labels nor timestamps, so the readings "
                      f"are ordered as text (alphabetically): {' < '.join(map(str, times[:5]))}"
                      f"{' < ...' if len(times) > 5 else ''}; if that is not their time order, give numbers or timestamps",
                      TempanonWarning, stacklevel=2)  # fmt: skip
    ents = ent_text.drop_duplicates()
    e_idx = pd.Index(ents.to_numpy()).get_indexer(ent_text)
    t_idx = pd.Index(times).get_indexer(time_text)
    M = np.full((len(ents), len(times)), np.nan, dtype=object)
    M[e_idx, t_idx] = df[value].to_numpy(dtype=object)
    wide = pd.DataFrame(M, columns=times)
    for c in wide.columns:
        try:
            wide[c] = pd.to_numeric(wide[c])
        except (ValueError, TypeError):
            pass  # non-numeric readings: reported by kp_anonymize with the entity
    clash = [c for c in [entity, *keep] if c in times]
    if clash:
        raise InputError(f"long format: time value {clash[0]!r} is also a column name; rename the column")
    wide.insert(0, entity, df[entity].loc[ents.index].to_numpy())
    for c in keep:
        per = pd.DataFrame({"e": ent_text, "v": df[c].astype(str)}).drop_duplicates()
        many = per["e"].duplicated(keep=False).to_numpy()
        if many.any():
            e = per["e"].iloc[int(np.flatnonzero(many)[0])]
            vals = per.loc[per["e"] == e, "v"].head(3).tolist()
            raise InputError(f"long format: column {c!r} has several values for entity {e!r} ({', '.join(vals)}); "
                             "a sensitive or kept column needs one value per entity")
        wide[c] = df[c].loc[ents.index].to_numpy()
    wide.attrs["time_order"] = how
    wide.attrs["date_order"], wide.attrs["date_order_note"] = order, note
    return wide, [str(t) for t in times]


def parse_na_values(spec: str | Sequence | None) -> list[str]:
    """``"-1,NA"`` -> ``["-1", "NA"]`` (texts compared with each value's text and number)."""
    if spec is None:
        return []
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        spec = [spec]  # one sentinel given as a number (na_values=-1)
    if not isinstance(spec, str) and not isinstance(spec, (list, tuple, set, frozenset, np.ndarray, pd.Series)):
        raise InputError(f"na_values must be a text such as '-1,NA' or a list of sentinels, got {type(spec).__name__} {spec!r}")
    parts = spec.split(",") if isinstance(spec, str) else [str(p) for p in spec]
    out = [p.strip() for p in parts if p.strip()]
    if not out:
        raise InputError("--na-values is empty")
    return out


def mark_missing(df: pd.DataFrame, columns: Sequence[str], na_values: Sequence[str]) -> tuple[pd.DataFrame, int]:
    """Copy of ``df`` with every value of ``columns`` equal to a sentinel (as text, or as a number
    equal to a numeric sentinel: ``-1`` matches ``-1.0``) replaced by a missing value. Returns the
    copy and the number of values replaced."""
    if not na_values:
        return df, 0
    texts = set(na_values)
    nums = []
    for v in na_values:
        try:
            nums.append(float(v))
        except ValueError:
            pass
    out = df.copy()
    count = 0
    for c in columns:
        col = out[c]
        mask = col.astype(str).isin(texts).to_numpy().copy()
        if nums:
            num = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
            mask |= np.isin(num, nums)
        mask &= col.notna().to_numpy()
        if mask.any():
            count += int(mask.sum())
            out[c] = col.astype(object).where(~mask, np.nan)
    return out, count


def job_prepare(job, df: pd.DataFrame) -> pd.DataFrame:
    """The ``kp`` job's long format: ``[model] long_time`` and ``long_value`` (both or neither)
    pivot the input with ``[columns] uid`` as the entity; ``quasi_identifiers`` then name time
    values (ranges like ``"1:30"`` work). Sensitive columns must hold one value per entity;
    identifying columns keep their first value (they are dropped from the release anyway).
    ``[model] date_order``: how the times' numeric dates are read (:func:`long_to_wide`); the note of an
    undecided order is ``wide.attrs["date_order_note"]``, said by the run's status line."""
    p = job.params
    if "long_time" not in p and "long_value" not in p:
        return df
    if "long_time" not in p or "long_value" not in p:
        raise job.ctx.error(("model", "long_time" if "long_time" not in p else "long_value"),
                            "the long format needs both long_time and long_value")
    if job.uid is None:
        raise job.ctx.error(("columns", "uid"), "the long format needs uid (the entity column)")
    import warnings

    from tempanon.errors import TempanonWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TempanonWarning)
        keep = [*job.sensitive, *(c for c in (job.keep or []) if c not in job.sensitive)]  # (keep: refused as unknown)
        wide, _ = long_to_wide(df, entity=job.uid, time=p["long_time"], value=p["long_value"], keep=keep,
                               date_order=p.get("date_order", "auto"))  # fmt: skip
    for w in caught:  # the undecided date order's note is said by the run's status line, with the job file's key
        if not (issubclass(w.category, TempanonWarning) and str(w.message) == wide.attrs.get("date_order_note")):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    ents = df[job.uid].astype(str).drop_duplicates()
    for c in job.identifying:
        if c in df.columns and c not in wide.columns:
            wide[c] = df[c].loc[ents.index].to_numpy()
    return wide
