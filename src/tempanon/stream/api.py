"""Python API of snapshot-stream publishing (Wang, Xu, Wong, Fu, ICDM 2010).

* :func:`anonymize_stream` — a whole timestamped table: cut into snapshots (consecutive granules),
  pushed through a :class:`~tempanon.stream.publisher.StreamPublisher`, every release verified.
* :func:`stream_json_lines` — JSON lines (one record per line, in time order) published as the
  snapshots pop out of the window; ``on_publish`` is called with each release as soon as it exists.
"""

from __future__ import annotations

import json
import time as _time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tempanon.data.roles import parse_column_list, require_columns
from tempanon.errors import InputError, TempanonError, TempanonWarning
from tempanon.stream.model import DEFAULT_STEP, CostModel, validate_defer, validate_l, validate_step, validate_window
from tempanon.stream.publisher import PublishedSnapshot, StreamPublisher
from tempanon.temporal.parse import check_date_order
from tempanon.stream.snapshots import (
    granule_range,
    index_snapshots,
    label_of,
    parse_times,
    truncate,
    utc_offsets,
    validate_granule,
)

ProgressFn = Callable[[str, int, int], None]


@dataclass
class StreamResult:
    """``published``: every released snapshot in order; ``audit``: per input row (0-based) its own
    snapshot, the snapshot it was published in (missing if suppressed) and the distance; ``summary``:
    the totals (see :meth:`StreamPublisher.summary`) plus timing."""

    published: list[PublishedSnapshot]
    audit: pd.DataFrame
    summary: dict
    publisher: StreamPublisher
    qit: pd.DataFrame | None = None
    st: pd.DataFrame | None = None
    labels: list[str] | None = None
    row_snapshot: np.ndarray | None = None

    def tables(self, label: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The QIT and ST published for the snapshot labelled ``label``."""
        for p in self.published:
            if p.label == label and p.qit is not None:
                return p.qit, p.st
        if self.qit is None:
            raise KeyError(label)
        q = self.qit[self.qit["snapshot"] == label].drop(columns="snapshot").reset_index(drop=True)
        s = self.st[self.st["snapshot"] == label].drop(columns="snapshot").reset_index(drop=True)
        return q, s


DEFAULT_MAX_SNAPSHOTS = 20_000
"""The largest number of snapshots a stream may span by default (consecutive granules, empty ones
included): a stream of records 30 days apart cut by the minute is 43,201 snapshots, almost all empty."""


def _check_span(n: int, max_snapshots: int | None, granule: str, labels) -> None:
    if max_snapshots is not None and n > max_snapshots:
        raise InputError(
            f"the stream spans {n:,} snapshots of one {granule} ({labels[0]} to {labels[-1]}), more than the limit of "
            f"{max_snapshots:,} (--max-snapshots): use a coarser --snapshot, or raise --max-snapshots"
        )


def _check_window_span(w: int, max_snapshots: int | None) -> None:
    """A window above the stream's largest span delays nothing more, but the step's tables grow with it
    (``--window 1000000000`` was killed by the system, out of memory, on a stream of two days)."""
    if max_snapshots is not None and w > max_snapshots:
        raise InputError(f"window w = {w:,} is more than the {max_snapshots:,} snapshots a stream may span (--max-snapshots): "
                         f"no record can be delayed that far; give a window of at most {max_snapshots:,}")


def _check_number_options(granule: str, timezone: str | None, date_order: str) -> None:
    """With snapshot unit ``number`` the time column holds snapshot numbers: a time zone or a day/month
    order would be ignored (the summary even named the zone as the clock used)."""
    if granule == "number" and timezone is not None:
        raise InputError("--timezone cuts snapshots of times; with --snapshot number the time column holds snapshot numbers")
    if granule == "number" and date_order != "auto":
        raise InputError("--date-order reads numeric dates; with --snapshot number the time column holds snapshot numbers")


def _span_ok(pushed: int, current, upto, granule: str, max_snapshots: int) -> bool:
    """Raise before pushing the empty granules between ``current`` and ``upto`` when the stream would
    span more than ``max_snapshots`` snapshots (standard input: the gap is known before any work)."""
    step = {"minute": "1min", "hour": "1h", "day": "1D", "week": "7D"}.get(granule)
    if granule == "number":
        gap = int(upto) - int(current) + 1
    elif step is not None:
        gap = int((pd.Timestamp(upto) - pd.Timestamp(current)) // pd.Timedelta(step)) + 1
    else:
        gap = len(granule_range(current, upto, granule))
    if pushed + gap - 1 > max_snapshots:
        raise InputError(
            f"a record of snapshot {label_of(upto, granule)} follows the open snapshot {label_of(current, granule)} "
            f"{gap - 1:,} snapshots of one {granule} later: the stream would span more than the limit of "
            f"{max_snapshots:,} snapshots (--max-snapshots); use a coarser --snapshot, or raise --max-snapshots"
        )
    return True


def make_cost(cost: str | CostModel | list, w: int, suppression_cost: float | dict = 10.0) -> CostModel:
    """``"linear"`` (``mu(d) = d``), ``"quadratic"`` (``d**2``), a list / comma-separated text of
    ``mu(0), mu(1), ..., mu(w)``, or a :class:`CostModel`; validated against (C1)-(C3)."""
    w = validate_window(w)
    if isinstance(cost, CostModel):
        return cost
    if isinstance(cost, str):
        name = cost.strip().lower()
        if name == "linear":
            return CostModel.linear(w, 1.0, suppression_cost)
        if name == "quadratic":
            return CostModel.quadratic(w, suppression_cost)
        if "," in name or name.replace(".", "", 1).isdigit():
            parts = name.split(",")
            if len(parts) > 1 and not parts[-1].strip():
                parts = parts[:-1]  # (a trailing comma)
            empty = [i for i, v in enumerate(parts) if not v.strip()]
            if empty:  # ('0,1,,3' was read as 0,1,3: every later value one distance too early)
                raise InputError(f"cost {cost!r}: value {empty[0] + 1} (mu({empty[0]})) is empty; give mu(0),mu(1),...,mu(w)")
            try:
                values = [float(v) for v in parts]
            except ValueError as exc:
                raise InputError(f"cost {cost!r}: not a list of numbers mu(0),...,mu(w)") from exc
            return CostModel.from_function(values, w, suppression_cost, name=f"table({cost})")
        raise InputError(f"unknown cost {cost!r}: use linear, quadratic or a list mu(0),mu(1),...,mu(w)")
    return CostModel.from_function(cost, w, suppression_cost)


def _audit(pub: StreamPublisher, table: pd.DataFrame | None = None) -> pd.DataFrame:
    t = pub.record_table() if table is None else table
    sup = t["placed"].to_numpy() < 0
    dist = pd.array(np.where(sup, 0, t["distance"].to_numpy()), dtype="Int64")
    dist[sup] = pd.NA
    out = pd.DataFrame(
        {
            "row": t["row"].to_numpy(),
            "snapshot": t["snapshot"].to_numpy(),
            "published": t["published"].to_numpy(),
            "distance": dist,
        }
    )
    return out.sort_values("row", kind="stable").reset_index(drop=True)


def anonymize_stream(
    df: pd.DataFrame,
    *,
    time: str,
    sensitive: str,
    l: int,
    w: int,
    qi: str | list[str] | None = None,
    snapshot: str = "day",
    cost: str | CostModel | list = "linear",
    suppression_cost: float | dict = 10.0,
    seed: int = 0,
    progress: ProgressFn | None = None,
    defer: float | bool | None = None,
    step: str = DEFAULT_STEP,
    max_snapshots: int | None = DEFAULT_MAX_SNAPSHOTS,
    timezone: str | None = None,
    date_order: str = "auto",
    allow_identifier: Sequence[str] = (),
) -> StreamResult:
    """Publish the snapshots of ``df`` (cut by truncating ``time`` to ``snapshot``) l-diverse with delay
    at most ``w``. ``qi`` defaults to every column but ``time`` and ``sensitive``. Anatomy publishes the
    quasi-identifiers exactly (the QIT), so they are screened for direct identifiers as
    ``tempanon stream`` screens them (:func:`tempanon.data.screen.refuse_identifiers`, raising
    :class:`InputError`) unless listed in ``allow_identifier``; ``summary["verification"]`` reports
    the overrides. The timestamp is never
    published. Missing sensitive values are a category of their own; missing QI values are published
    as missing. ``timezone`` (an IANA name): snapshots are that zone's days (hours, ...): times with a
    UTC offset are converted to it; without it each time's written wall clock cuts the snapshots
    (:func:`~tempanon.stream.snapshots.parse_times`). ``date_order``: how numeric dates such as
    ``05/03/2023`` are read, ``"auto"``, ``"day"`` or ``"month"``, as ``timestamped`` reads them
    (:func:`tempanon.temporal.parse.day_month_order`); the note of an undecided column read month
    first is one of ``summary["warnings"]``."""
    l = validate_l(l)
    timezone = _check_zone(timezone)
    date_order = check_date_order(date_order)
    w = validate_window(w)
    _check_window_span(w, max_snapshots)
    step = validate_step(step)
    defer = None if defer is None else validate_defer(defer)
    granule = validate_granule(snapshot)
    _check_number_options(granule, timezone, date_order)
    from tempanon.data.io import check_frame

    if not isinstance(df, pd.DataFrame):  # (a list was an AttributeError traceback)
        raise InputError(f"the stream must be a pandas DataFrame, got {type(df).__name__} (a file: tempanon stream FILE, or "
                         "read it with pandas first)")
    check_frame(df)
    require_columns(df, [time], role="time column")
    require_columns(df, [sensitive], role="sensitive column")
    if time == sensitive:
        raise InputError(f"column {time!r} cannot be both the time and the sensitive column")
    qi_cols = parse_column_list(qi, list(df.columns)) if qi is not None else [c for c in df.columns if c not in (time, sensitive)]
    require_columns(df, qi_cols, role="quasi-identifier")
    for c in qi_cols:
        if c in (time, sensitive):
            raise InputError(f"column {c!r} cannot be a quasi-identifier: it is the {'time' if c == time else 'sensitive'} column")
    from tempanon.stream.anatomy import check_release_names

    check_release_names(qi_cols, sensitive)
    from tempanon.data.io import refuse_nested_columns

    refuse_nested_columns(df, {"time": [time], "sensitive": [sensitive], "qi": qi_cols})
    from tempanon.data.screen import refuse_identifiers

    # the QIT publishes the quasi-identifiers exactly: screened before anything is published
    overrides = refuse_identifiers(df, qi_cols, allow=parse_column_list(allow_identifier), time=time)
    from tempanon.data.cells import text_mixed_columns

    df = text_mixed_columns(df, [sensitive, *qi_cols])  # one value per released text (data/cells.py)
    cm = make_cost(cost, w, suppression_cost)
    start = _time.perf_counter()
    df = df.reset_index(drop=True)
    idx = index_snapshots(df[time], time, granule, timezone, date_order)
    _check_span(len(idx.labels), max_snapshots, granule, idx.labels)
    pub = StreamPublisher(l, w, sensitive=sensitive, qi=qi_cols, cost=cm, seed=seed, verify=False, defer=defer, step=step)
    sens = df[sensitive].astype(object)
    sens = sens.where(sens.notna(), None)
    codes, uniques = pd.factorize(sens.to_numpy(dtype=object), use_na_sentinel=False)
    if len(uniques) < l and len(df):
        # as kanon's k above the rows: an impossible request is an error, not an empty release (the push API,
        # StreamPublisher and standard input, where values may still arrive, warn instead)
        from tempanon.errors import NoSolutionError

        raise NoSolutionError(
            f"the sensitive column {sensitive!r} has {len(uniques)} distinct value(s) in the whole table (missing "
            f"counted as one), fewer than l = {l}: no snapshot can be {l}-eligible, so every record would be "
            f"suppressed and nothing published. Lower l to at most {len(uniques)} or choose another "
            "sensitive column"
        )
    pub.set_values(list(uniques))
    codes = codes.astype(np.int64)
    unknown = [k for k in cm.beta_by_value if k not in set(uniques)]
    if unknown:
        raise InputError(
            f"suppression cost given for value(s) {', '.join(map(repr, unknown))} that do not occur in column {sensitive!r}"
        )
    order = idx.order
    snap_sorted = idx.snapshot[order]
    bounds = np.searchsorted(snap_sorted, np.arange(len(idx.labels) + 1), side="left")
    step_progress = None if progress is None else (lambda k, n: progress("publishing snapshots", k, n))
    published: list[PublishedSnapshot] = pub.push_coded_many(codes[order], order, bounds, idx.labels, progress=step_progress)
    published += pub.flush()
    qit, st = release_tables(df, published, qi_cols, sensitive, pub.values, codes)
    verify_release(qit, st, l, qi_cols, sensitive, df, published)
    table = pub.record_table()
    from tempanon.verify import check_stream_delays, check_timestamp_order

    check_timestamp_order(table["home"].to_numpy(), table["placed"].to_numpy(), table["code"].to_numpy())  # Theorem 1
    # each record within its own snapshot's window, that snapshot taken from the time column again
    check_stream_delays(idx.snapshot, table["row"].to_numpy(), table["placed"].to_numpy(), w, idx.labels)
    seconds = _time.perf_counter() - start
    summary = pub.summary(table)
    summary.update(
        seconds=seconds,
        records_per_second=(len(df) / seconds) if seconds > 0 else None,
        time=time,
        sensitive=sensitive,
        qi=qi_cols,
        snapshot_unit=granule,
        timezone=_zone_note(timezone),
    )
    from tempanon.data.roles import verification_statement

    summary["verification"] = verification_statement(
        f"{l}-diversity of {sensitive!r} in every published snapshot", [*qi_cols, sensitive], overrides=overrides,
        left_out=[c for c in df.columns if c not in {*qi_cols, time, sensitive}])
    _date_order_summary(summary, idx.times.attrs.get("date_order"), idx.times.attrs.get("date_order_note"))
    for message in summary["warnings"]:
        warnings.warn(message, TempanonWarning, stacklevel=2)
    return StreamResult(published, _audit(pub, table), summary, pub, qit, st, list(idx.labels), idx.snapshot)


def release_tables(
    df: pd.DataFrame, published: list[PublishedSnapshot], qi: list[str], sensitive: str, values: list, codes: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """All releases as two tables with a leading ``snapshot`` column (the label): the QITs
    (``snapshot``, QIs, ``group``) and the STs (``snapshot``, ``group``, value, ``count``)."""
    from tempanon.stream.anatomy import sensitive_table

    labels = np.array([p.label for p in published], dtype=object)
    sizes = np.array([p.size for p in published], dtype=np.int64)
    snap = np.repeat(np.arange(len(published)), sizes)
    rows = np.concatenate([p.rows for p in published]).astype(np.int64) if published else np.zeros(0, dtype=np.int64)
    group = np.concatenate([p.group for p in published]) if published else np.zeros(0, dtype=np.int64)
    rec_codes = codes[rows]
    qit = df[qi].take(rows).reset_index(drop=True)
    qit.insert(0, "snapshot", labels[snap] if len(snap) else np.zeros(0, dtype=object))
    qit["group"] = group
    vals = np.array(values, dtype=object)
    st = sensitive_table(group, rec_codes, vals[rec_codes] if len(rec_codes) else np.zeros(0, dtype=object), sensitive, extra={"snapshot": snap})
    st["snapshot"] = labels[st["snapshot"].to_numpy()] if len(st) else st["snapshot"].astype(object)
    return qit, st


def verify_release(
    qit: pd.DataFrame, st: pd.DataFrame, l: int, qi: list[str], sensitive: str, df: pd.DataFrame, published: list[PublishedSnapshot]
) -> dict:
    """Independent check of every release (:func:`tempanon.verify.check_anatomy`): every group l-diverse
    and each snapshot's released values equal to the original values of the records published there
    (taken from the input table by row)."""
    from tempanon.verify import check_anatomy

    rows = np.concatenate([p.rows for p in published]).astype(np.int64) if published else np.zeros(0, dtype=np.int64)
    labels = np.repeat(np.array([p.label for p in published], dtype=object), [p.size for p in published])
    return check_anatomy(
        qit,
        st,
        l,
        sensitive=sensitive,
        qi=qi,
        partition="snapshot",
        expected_values=df[sensitive].iloc[rows].reset_index(drop=True),
        expected_partition=pd.Series(labels, dtype=object),
    )


class StreamInterrupted(TempanonError):
    """Publishing from standard input was interrupted (SIGINT) at a safe point: ``state`` is the
    checkpoint (the window and the open snapshot, to continue with ``resume=``), ``result`` what was
    published so far. Exit status 130."""

    exit_code = 130

    def __init__(self, message: str, state: dict, result: StreamResult) -> None:
        super().__init__(message)
        self.state = state
        self.result = result


def final_audit(pub: StreamPublisher) -> pd.DataFrame:
    """The audit rows whose outcome is final: published in a released snapshot, or suppressed with no
    pending snapshot in reach (``home + w`` before the first unpublished snapshot)."""
    t = pub.record_table()
    nxt = pub._next_pub
    placed, home = t["placed"].to_numpy(), t["home"].to_numpy()
    final = ((placed >= 0) & (placed < nxt)) | ((placed < 0) & (home + pub.w < nxt))
    return _audit(pub, t[final].reset_index(drop=True))


def _date_order_summary(summary: dict, order: str | None, note: str | None) -> None:
    """The summary's ``date_order`` (``"day first"``/``"month first"``; absent without numeric dates)
    and the note of an undecided column read month first, first of its ``warnings``."""
    if order:
        summary["date_order"] = f"{order} first"
    if note:
        summary["warnings"] = [note, *summary.get("warnings", [])]


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list) -> dict:
    """A JSON object's pairs as a dict, refusing a key given twice (json.loads keeps the last)."""
    out = dict(pairs)
    if len(out) < len(pairs):
        seen: set = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return out


class _StdinDateOrder:
    """The day/month order of a standard-input stream, value by value: ``auto`` holds the order the
    first deciding value shows (``13/05/2023``: day first) and refuses a later value that shows the
    other, naming both lines; an undecided value (``05/03/2023``) before any evidence is read month
    first, with a note, and holds month first (a later day-first value is refused: the earlier ones
    may be published already). ``day``/``month``: every value in that order (a value that cannot be is
    refused by :func:`~tempanon.stream.snapshots.parse_times`)."""

    def __init__(self, date_order: str, state: dict | None = None):
        self.given = date_order
        self.state = dict(state or {"order": None, "line": None, "value": None, "assumed": False, "note": None})

    def current(self) -> str:
        """The order the values read so far were read in (the open snapshot's, parsed again when it closes)."""
        return self.given if self.given != "auto" else self.state["order"] or "month"

    def read(self) -> str | None:
        """The order numeric dates were read in (``None``: none seen), for the summary."""
        return self.current() if self.state.get("seen") else None

    def order_for(self, value, lineno: int, name: str) -> str:
        from tempanon.temporal.parse import numeric_dates

        pos, a, b, dots = numeric_dates(pd.Series([str(value).strip()], dtype=object))
        s = self.state
        s["seen"] = s.get("seen", False) or bool(len(pos))
        if self.given != "auto":
            return self.given
        if not len(pos) or a[0] == b[0]:
            return s["order"] or "month"
        shows = "day" if (a[0] > 12 or dots[0]) else "month" if b[0] > 12 else None
        if shows is None:
            if s["order"] is None:
                import calendar

                month = calendar.month_name
                s.update(order="month", line=lineno, value=value, assumed=True,
                         note=(f"column {name!r}: numeric date {value!r} (standard input, line {lineno}) could be day or "
                               f"month first: read month first, as {b[0]} {month[a[0]]}, and so every later one; pass "
                               f"--date-order day if it is {a[0]} {month[b[0]]}"))  # fmt: skip
            return s["order"]
        if s["order"] is not None and s["order"] != shows:
            how = ("was read month first (it could be either)" if s["assumed"] else f"is {s['order']} first")
            raise InputError(f"standard input, line {lineno}: date {value!r} is {shows} first, but {s['value']!r} on line "
                             f"{s['line']} {how}; give --date-order day or month (or write the dates as YYYY-MM-DD)")
        if s["order"] is None:
            s.update(order=shows, line=lineno, value=value, assumed=False)
        return shows


def _check_zone(timezone: str | None) -> str | None:
    from tempanon.temporal.parse import check_timezone

    return check_timezone(timezone)


def _zone_note(timezone: str | None) -> str:
    """How the snapshots' clock was read (the summary's ``timezone``; see :func:`parse_times`)."""
    if timezone is not None:
        return f"{timezone}: times with a UTC offset converted to its wall clock, times without one read as its wall clock"
    return "the wall clock each time is written in (a UTC offset is not converted); --timezone converts to one zone"


def _json_value(value, key: str, lineno: int):
    """A quasi-identifier's or the sensitive value of a JSON record as the release writes it: its text
    (``None`` for null), so values written alike are one value, as they are in a file input read as text
    (a number 1 and a string "1" were two values to l-diversity but one in the published table: the
    release's check failed, exit 3). A JSON array or object, or text that is not valid Unicode (a lone
    surrogate escape), is refused with the line."""
    if value is None or isinstance(value, str):
        if value is not None:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise InputError(f"standard input, line {lineno}: key {key!r} holds text that is not valid Unicode "
                                 f"({value!r}: a lone surrogate escape)") from None  # fmt: skip
        return value
    if isinstance(value, (dict, list)):
        raise InputError(f"standard input, line {lineno}: key {key!r} holds a JSON {'object' if isinstance(value, dict) else 'array'}; "
                         "a value must be text, a number, true/false or null")  # fmt: skip
    return str(value)  # (a number or a boolean: its text as a CSV writer gives it, 1, 1.5, True)


def stream_json_lines(
    lines: Iterable[str],
    *,
    time: str,
    sensitive: str,
    l: int,
    w: int,
    qi: str | list[str] | None = None,
    snapshot: str = "day",
    cost: str | CostModel | list = "linear",
    suppression_cost: float | dict = 10.0,
    seed: int = 0,
    on_publish: Callable[[PublishedSnapshot], None] | None = None,
    defer: float | bool | None = None,
    step: str = DEFAULT_STEP,
    max_snapshots: int | None = DEFAULT_MAX_SNAPSHOTS,
    resume: dict | None = None,
    interruptible: bool = False,
    timezone: str | None = None,
    date_order: str = "auto",
) -> StreamResult:
    """Publish JSON-lines records as they arrive: a snapshot is pushed when the first record of a later
    granule arrives (the empty granules in between are pushed too), and every snapshot leaving the window
    is passed to ``on_publish`` at once. Records must come in time order *across* snapshots (inside a
    snapshot any order; they are sorted by time); a record of an already closed snapshot raises
    :class:`InputError` after everything popped so far was handed to ``on_publish`` (nothing published
    is lost or duplicated). The columns are ``qi`` or the keys of the first record; a key missing from
    a later record is a missing value. Rows are numbered from 0 in the order of the non-blank lines.

    ``interruptible``: SIGINT (Ctrl-C) is taken between two records only (never inside a step) and
    raises :class:`StreamInterrupted` with a checkpoint ``state``; ``resume=state`` continues from it,
    reading the input that follows the last line read (``state["lines"]``; line numbers and rows go on).
    The checkpoint holds the publisher (every record not yet published) and the open snapshot.
    ``timezone``: as for :func:`anonymize_stream`, value by value. ``date_order``: as for
    :func:`anonymize_stream`; ``auto`` holds the order of the first value that decides it (an
    undecided first value, ``05/03/2023``, holds month first with a note) and refuses a later value
    in the other order (:class:`_StdinDateOrder`)."""
    l = validate_l(l)
    if isinstance(lines, str):  # one text of JSON lines (iterated, it gave its characters: 'line 1: not valid JSON')
        lines = lines.splitlines(keepends=True)
    timezone = _check_zone(timezone)
    dord = _StdinDateOrder(check_date_order(date_order), None if resume is None else resume.get("date_order"))
    # whether the times carry a UTC offset, as the first one shows it (line, value): a file's column mixing
    # both is refused; value by value, times of later snapshots were accepted either way (exit 0) and a
    # mix inside one snapshot was named by its line in the snapshot's buffer, not on standard input
    offsets: dict = {"has": None} if resume is None else dict(resume.get("offsets") or {"has": None})
    w = validate_window(w)
    _check_window_span(w, max_snapshots)
    step = validate_step(step)
    defer = None if defer is None else validate_defer(defer)
    granule = validate_granule(snapshot)
    _check_number_options(granule, timezone, check_date_order(date_order))
    cm = make_cost(cost, w, suppression_cost)
    start = _time.perf_counter()
    published: list[PublishedSnapshot] = []
    if resume is None:
        pub: StreamPublisher | None = None
        qi_cols: list[str] | None = None
        buffer: list[dict] = []
        buffer_rows: list[int] = []
        current = None  # granule start of the open snapshot
        row = -1
        done_lines = 0
    else:
        pub, qi_cols = resume["publisher"], resume["qi"]
        buffer, buffer_rows, current, row, done_lines = (
            resume["buffer"], resume["buffer_rows"], resume["current"], resume["row"], resume["lines"])

    def emit(items: list[PublishedSnapshot]) -> None:
        for item in items:
            published.append(item)
            if on_publish is not None:
                on_publish(item)

    def close(upto) -> None:
        """Push the open snapshot and the empty granules before ``upto`` (exclusive)."""
        nonlocal buffer, buffer_rows
        if upto is not None and max_snapshots is not None:
            _span_ok(len(pub._snaps) + 1, current, upto, granule, max_snapshots)
        frame = pd.DataFrame(buffer, columns=[*qi_cols, sensitive, time], index=pd.Index(buffer_rows, dtype=np.int64))
        if len(frame):
            ts = parse_times(frame[time].reset_index(drop=True), time, granule, timezone, dord.current())
            frame = frame.iloc[np.argsort(np.asarray(ts.attrs["instants"]), kind="stable")]
        emit(pub.push(frame[[*qi_cols, sensitive]], label=label_of(current, granule)))
        buffer, buffer_rows = [], []
        if upto is not None:
            grid = granule_range(current, upto, granule)
            for g in grid[1:-1]:
                empty = pd.DataFrame({c: pd.Series(dtype=object) for c in [*qi_cols, sensitive]})
                emit(pub.push(empty, label=label_of(g, granule)))

    def read(lineno: int, line: str) -> None:
        nonlocal pub, qi_cols, current, row
        if isinstance(line, (bytes, bytearray)):  # (json.loads takes bytes: lines of a binary file)
            try:
                line = bytes(line).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"standard input, line {lineno}: not UTF-8 (byte {exc.start + 1} of the line is "
                                 f"0x{line[exc.start]:02x})") from None
        if lineno == 1 and line.startswith("\ufeff"):  # a byte order mark, as a file's (json.loads refused it)
            line = line[1:]
        if not line.strip():
            return
        row += 1
        try:
            rec = json.loads(line, object_pairs_hook=_unique_keys)
        except _DuplicateKey as exc:  # (json keeps the last one silently: '"q": "x", "q": "y"' published y)
            raise InputError(f"standard input, line {lineno}: key {exc.args[0]!r} is given twice in one record") from None
        except json.JSONDecodeError as exc:
            raise InputError(f"standard input, line {lineno}: not valid JSON ({exc.msg})") from exc
        except RecursionError:
            raise InputError(f"standard input, line {lineno}: not valid JSON here (nested too deeply)") from None
        if not isinstance(rec, dict):
            raise InputError(f"standard input, line {lineno}: a record must be a JSON object, got {type(rec).__name__}")
        if qi_cols is None:
            for col, role in ((time, "time column"), (sensitive, "sensitive column")):
                if col not in rec:
                    raise InputError(f"standard input, line {lineno}: unknown {role} {col!r}; the record has keys {', '.join(rec)}")
            keys = list(rec)
            qi_cols = parse_column_list(qi, keys) if qi is not None else [k for k in keys if k not in (time, sensitive)]
            for c in qi_cols:
                if c in (time, sensitive):
                    raise InputError(f"column {c!r} cannot be a quasi-identifier")
                if c not in rec:
                    raise InputError(f"standard input, line {lineno}: unknown quasi-identifier {c!r}; the record has keys {', '.join(rec)}")
            pub = StreamPublisher(l, w, sensitive=sensitive, qi=qi_cols, cost=cm, seed=seed, defer=defer, step=step)
        t_value = rec.get(time)
        try:
            ts = parse_times(pd.Series([t_value], dtype=object), time, granule, timezone,
                             dord.order_for(t_value, lineno, time))
        except InputError as exc:
            raise InputError(f"standard input, line {lineno}: {str(exc).split(': ', 1)[-1]}") from exc
        if granule != "number":
            has = bool(utc_offsets(pd.Series([str(t_value).strip()], dtype=object)).notna().iloc[0])
            if offsets["has"] is None:
                offsets.update(has=has, line=lineno, value=t_value)
            elif has != offsets["has"]:
                kind = "has a UTC offset" if has else "has no UTC offset"
                raise InputError(f"standard input, line {lineno}: time {t_value!r} {kind}, unlike the time {offsets['value']!r} of "
                                 f"line {offsets['line']}: a stream mixing times with and without offsets is ambiguous; write every "
                                 "value with its offset, or none (and give --timezone)")  # fmt: skip
        g = truncate(ts, granule).iloc[0]
        if current is None:
            current = g
        elif g < current:
            raise InputError(
                f"standard input, line {lineno}: time {t_value!r} belongs to snapshot {label_of(g, granule)}, "
                f"which is already closed (the open snapshot is {label_of(current, granule)}); records must come in time order"
            )
        elif g > current:
            close(g)
            current = g
        buffer.append({**{c: _json_value(rec.get(c), c, lineno) for c in [*qi_cols, sensitive]}, time: rec.get(time)})
        buffer_rows.append(row)

    # SIGINT between records only: inside a record's work it is held until the record is done
    critical, pending = [False], [False]
    old_handler = None
    if interruptible:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            def _on_sigint(signum, frame):  # noqa: ARG001
                if critical[0]:
                    pending[0] = True
                else:
                    raise KeyboardInterrupt

            old_handler = signal.signal(signal.SIGINT, _on_sigint)
    try:
        try:
            for lineno, line in enumerate(lines, start=done_lines + 1):
                critical[0] = True
                read(lineno, line)
                done_lines = lineno
                critical[0] = False
                if pending[0]:
                    raise KeyboardInterrupt
            critical[0] = True
            if pub is None:
                raise InputError("standard input has no record")
            close(None)
            emit(pub.flush())
            critical[0] = False
        except KeyboardInterrupt:
            if pub is None:
                raise InputError("interrupted before the first record; nothing was written") from None
            state = {"publisher": pub, "qi": qi_cols, "buffer": buffer, "buffer_rows": buffer_rows, "current": current,
                     "row": row, "lines": done_lines, "date_order": dict(dord.state), "offsets": dict(offsets)}
            summary = pub.summary()
            summary.update(interrupted=True, lines_read=done_lines, time=time, sensitive=sensitive, qi=qi_cols, snapshot_unit=granule,
                           timezone=_zone_note(timezone))
            res = StreamResult(published, final_audit(pub), summary, pub)
            n_files = sum(1 for p in published if p.size)
            raise StreamInterrupted(
                f"interrupted after line {done_lines} of standard input: {len(published)} snapshot(s) published "
                f"({n_files} with records written)", state, res) from None
    finally:
        if old_handler is not None:
            import signal

            signal.signal(signal.SIGINT, old_handler)
    seconds = _time.perf_counter() - start
    summary = pub.summary()
    summary.update(seconds=seconds, time=time, sensitive=sensitive, qi=qi_cols, snapshot_unit=granule, timezone=_zone_note(timezone))
    _date_order_summary(summary, dord.read(), dord.state["note"])
    for message in summary["warnings"]:
        warnings.warn(message, TempanonWarning, stacklevel=2)
    return StreamResult(published, _audit(pub), summary, pub)
