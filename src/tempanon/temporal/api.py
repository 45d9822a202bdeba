"""Python API of timestamped-data anonymization (Mascetti, Bettini, Wang, Jajodia, TIME 2006).

:func:`anonymize_timestamped` takes a DataFrame with many tuples per respondent, finds the least
respondent-level k-anonymous generalization of the timestamp over a set of granularities
(Algorithm 1, :mod:`tempanon.temporal.least`), or, with ``hierarchies``, the joint generalization
of time and the other quasi-identifiers (:mod:`tempanon.temporal.joint`), verifies the release
independently (:func:`tempanon.verify.check_timestamped_release`) and returns it with a summary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tempanon.data.roles import require_columns
from tempanon.errors import InputError, NoSolutionError
from tempanon.temporal.granularity import GAP, Granularity, parse_granularity
from tempanon.temporal.least import METRICS, check_granularity, least_generalization, prepare
from tempanon.temporal.parse import data_granularity_of, parse_timestamps
from tempanon.temporal.relations import GranularityDAG, build_dag, span_of

DEFAULT_GRANULARITIES = ("hour", "part-of-day", "day", "business-day", "week", "month", "quarter",
                         "semester", "year")  # fmt: skip


@dataclass
class TimestampedResult:
    released: pd.DataFrame  # original row labels as index, UID dropped, time as granule labels
    summary: dict
    dag: GranularityDAG = field(repr=False)
    chosen: str = ""
    #: steward-only: the secret seed of the row shuffle (recorded in the audit, not the summary)
    shuffle_seed: int | None = field(default=None, repr=False)
    _audit_source: tuple | None = field(default=None, repr=False)
    _audit: pd.DataFrame | None = field(default=None, repr=False)
    #: the file path with ``measures=True``: the report's aggregates computed by the engine
    #: (:mod:`tempanon.temporal.outofcore_report`); ``None`` otherwise
    measures: dict | None = field(default=None, repr=False)
    #: the columns of ``released`` released unchanged (all but the time and the quasi-identifiers with a
    #: hierarchy: ``keep``, ``sensitive``, the other quasi-identifiers): a Parquet release of a Parquet
    #: input writes them with the input's types (``tempanon.data.io.write_table(res.released, out,
    #: like=input, unchanged=res.unchanged_columns)``), as the engines do
    unchanged_columns: list = field(default_factory=list, repr=False)
    #: the notes of ``file:`` granularities (boundary files) whose numeric date order ``auto`` could not
    #: decide (read month first; :func:`~tempanon.temporal.granularity.boundaries_from_file`), also in
    #: ``summary["messages"]``
    boundary_notes: list = field(default_factory=list, repr=False)

    @property
    def audit(self) -> pd.DataFrame | None:
        """Steward-only: release row (1-based) -> input line and respondent; never published
        (built on first access)."""
        if self._audit is None and self._audit_source is not None:
            self._audit = make_audit(*self._audit_source)
        return self._audit


AUDIT_HEADER = ("# STEWARD ONLY - DO NOT RELEASE. tempanon timestamped audit: links each release row to its "
                "input line and respondent.")


def shuffle_within_classes(released: pd.DataFrame, cols: Sequence[str], seed: int | None,
                           class_key: np.ndarray | None = None) -> tuple[pd.DataFrame, int]:  # fmt: skip
    """The release with its rows grouped by class (sorted by the released values of ``cols``, or by
    ``class_key``, one int64 per released row, when the search already has it) and shuffled within
    each class by a secret seed (Issue 12: input order leaks which rows belong to the same
    respondent). ``seed`` None draws one from :mod:`secrets`; returns (rows, seed)."""
    if seed is None:
        import secrets

        seed = secrets.randbits(63)
    rng = np.random.default_rng(int(seed))
    if len(released) == 0:
        return released, int(seed)
    keys = [rng.random(len(released))]
    if class_key is not None:  # random permutation, then a stable sort by class: random order within classes
        perm = rng.permutation(len(released))
        order = perm[np.argsort(np.asarray(class_key, dtype=np.int64)[perm], kind="stable")]
        return released.iloc[order], int(seed)
    for c in reversed(list(cols)):
        text = released[c].astype(object).where(released[c].notna(), "").astype(str).to_numpy()
        keys.append(pd.factorize(text, sort=True)[0])
    order = np.lexsort(tuple(keys))
    return released.iloc[order], int(seed)


def check_audit_path(audit, out, others=()) -> None:
    """Refuse an audit path inside the release's folder (it links rows to respondents) or equal to
    another file of the run (exit 2, before anything is read or written)."""
    from pathlib import Path

    a = Path(audit).resolve()
    o = Path(out).resolve()
    if a == o or any(p is not None and Path(p).resolve() == a for p in others):
        raise InputError(f"--audit {audit} must be a file of its own (not the input, --out, --summary or --report)")
    if o.parent == a.parent or o.parent in a.parents:
        raise InputError(f"--audit {audit} is inside the release's folder {o.parent}: the audit links release rows to "
                         f"respondents and is for the data steward only; write it elsewhere")


def audit_text(result: TimestampedResult) -> str:
    """The audit file: two comment lines (steward-only label, shuffle seed), then CSV."""
    from tempanon.data.io import csv_text

    return (AUDIT_HEADER + "\n" + f"# shuffle seed: {result.shuffle_seed}; respondent column: "
            f"{result.summary.get('uid') or '(none: each row is a respondent, identified by its input line)'}\n"
            + csv_text(result.audit))


def write_audit(result: TimestampedResult, path) -> None:
    from tempanon.data.io import atomic_write

    text = audit_text(result)
    atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def check_audit_header(path) -> None:
    """Refuse ``path`` unless it can be read and starts like a timestamped audit (:data:`AUDIT_HEADER`)."""
    try:
        with open(path, encoding="utf-8") as fh:
            first = fh.readline()
    except OSError as exc:
        raise InputError(f"cannot read the audit {path}: {exc.strerror or exc}") from None
    if not first.startswith(AUDIT_HEADER[:30]):
        raise InputError(f"{path} is not a tempanon timestamped audit (its first line should be {AUDIT_HEADER[:30]!r}...)")


def read_audit(path) -> pd.DataFrame:
    """Read a timestamped audit (columns release_row, input_line, respondent; comment lines skipped)."""
    from pathlib import Path

    p = Path(path)
    check_audit_header(p)
    df = pd.read_csv(p, comment=None, skiprows=2, dtype=str, keep_default_na=False)
    if list(df.columns) != ["release_row", "input_line", "respondent"]:
        raise InputError(f"audit {path}: expected columns release_row,input_line,respondent, got {', '.join(df.columns)}")
    return df


def make_audit(df: pd.DataFrame, released: pd.DataFrame | pd.Index, uid: str | None) -> pd.DataFrame:
    """Steward-only audit: release row (1-based data row of the written release), the input's file
    line (header = line 1) and the respondent of each released row (``released``: the release or
    its index of input row labels)."""
    index = released if isinstance(released, pd.Index) else released.index
    pos = df.index.get_indexer(index)
    return pd.DataFrame({
        "release_row": np.arange(1, len(index) + 1, dtype=np.int64),
        "input_line": pos.astype(np.int64) + 2,
        "respondent": (df[uid].to_numpy()[pos] if uid is not None else (pos + 2).astype(object)),
    })  # fmt: skip


def encode_columns(df: pd.DataFrame, cols: Sequence[str]) -> np.ndarray:
    """One int64 code per distinct combination of ``cols`` (missing values are a category)."""
    if not cols:
        return np.zeros(len(df), dtype=np.int64)
    codes = []
    for c in cols:
        col = df[c].astype(object).where(df[c].notna(), "\x00<NA>").astype(str)  # as written: 1 and 1.0 differ
        codes.append(pd.factorize(col)[0].astype(np.int64))
    if len(codes) == 1:
        return codes[0]
    from tempanon.temporal.joint import dense

    key = codes[0]
    for c in codes[1:]:
        card = int(c.max()) + 1
        if int(key.max()) + 1 > (2**62) // card:  # re-densify before the key would overflow
            key = dense(key)[0]
        key = key * card + c
    return dense(key)[0]


def refuse_k_above_respondents(k: int, respondents: int, uid: str | None) -> None:
    """k above the respondents (rows without a uid): no granularity or suppression can help, so say
    that, in the words of kanon (and of the joint search, which runs kanon's), not the list of every
    granularity tried with the advice to generalize more."""
    if k > respondents:
        what = "distinct respondents" if uid is not None else "rows"
        raise NoSolutionError(f"k={k} is impossible for this data: the whole table has only {respondents} {what}, fewer than k")


def encode_uid(df: pd.DataFrame, uid: str | None) -> np.ndarray:
    if uid is None:
        return np.arange(len(df), dtype=np.int64)
    col = df[uid]
    miss = col.isna().to_numpy()
    if miss.any():
        row = int(np.nonzero(miss)[0][0])
        raise InputError(f"column {uid!r}, line {row + 2}: the respondent identifier is missing")
    return pd.factorize(col)[0].astype(np.int64)


def parse_granularities(specs: str | Sequence[str | Granularity] | None, *, country: str | None = None,
                        parts=None, date_order: str | None = "auto", warn: bool = True) -> list[Granularity]:  # fmt: skip
    """The ``--granularities`` list (:func:`~tempanon.temporal.granularity.parse_granularity`); ``date_order``:
    how the numeric dates of ``file:`` boundary files are read (the data's ``--date-order``); ``warn=False``:
    an undecided boundary file's note is left in its ``date_order_note`` only (:func:`boundary_notes`)."""
    if specs is None:
        specs = DEFAULT_GRANULARITIES
    if isinstance(specs, str):
        specs = [s for s in specs.split(",") if s.strip()]
    elif isinstance(specs, Granularity):
        specs = [specs]
    elif isinstance(specs, (bytes, dict)) or not hasattr(specs, "__iter__"):
        raise InputError(f"granularities must be a list such as ['day', 'month'] or a text 'day,month', got "
                         f"{type(specs).__name__} {specs!r}")  # fmt: skip
    out = [s if isinstance(s, Granularity) else parse_granularity(s, country=country, parts=parts, date_order=date_order,
                                                                  warn=warn) for s in specs]  # fmt: skip
    if not out:
        raise InputError("no granularity given")
    names = [g.name for g in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"granularity listed twice: {', '.join(dupes)}")
    # (--country without business-day, --day-parts without part-of-day were ignored without a word)
    for given, unit, what in ((country, "business-day", "the public holidays of the business-day granularity"),
                              (parts, "part-of-day", "the parts of the part-of-day granularity")):  # fmt: skip
        if given is not None and not any(unit in n for n in names):
            option = "country (--country)" if unit == "business-day" else "day parts (--day-parts)"
            raise InputError(f"{option} gives {what}, which is not among the granularities ({', '.join(names)}): add "
                             f"{unit}, or leave it out")  # fmt: skip
    return out


def given_granularity(data_granularity, *, country=None, parts=None, date_order: str | None = "auto"):
    """``data_granularity`` as given, a name parsed (:func:`~tempanon.temporal.granularity.parse_granularity`)
    with an undecided boundary file's note left in its ``date_order_note`` for the run's summary
    (:func:`said_boundary_notes`), not warned."""
    if isinstance(data_granularity, str):
        return parse_granularity(data_granularity, country=country, parts=parts, date_order=date_order, warn=False)
    return data_granularity


def boundary_notes(granularities: Sequence[Granularity], notes: list[str]) -> None:
    """Add to ``notes`` the ``date_order_note`` of each boundary file among ``granularities`` (a numeric
    date order ``auto`` could not decide: read month first), each once."""
    for g in granularities:
        note = getattr(g, "date_order_note", None)
        if note and note not in notes:
            notes.append(note)


def said_boundary_notes(run: Callable[[list[str]], "TimestampedResult"]) -> "TimestampedResult":
    """``run(notes)`` (a timestamped run filling ``notes`` by :func:`boundary_notes`) with the notes of
    undecided boundary files said as the time column's date-order note is: in the summary's ``messages``
    (the command prints them as ``note: ...``, a job in its status line) and the result's
    ``boundary_notes``. A run that fails warns them (:class:`~tempanon.errors.TempanonWarning`, at the
    public function's caller) before its error goes up: a boundary read month first may be why it failed."""
    notes: list[str] = []
    try:
        result = run(notes)
    except Exception:
        import warnings

        from tempanon.errors import TempanonWarning

        for note in notes:  # (stacklevel 3: the caller of anonymize_timestamped or anonymize_timestamped_file)
            warnings.warn(TempanonWarning(note), stacklevel=3)
        raise
    result.boundary_notes = list(notes)
    result.summary["messages"].extend(notes)
    return result


def reference_times(col: pd.Series, instants: np.ndarray, missing: np.ndarray, timezone: str | None) -> pd.Series:
    """The original times for the verifier, re-derived from the column by pandas alone (ISO 8601,
    offsets converted with ``tz_convert`` to the calendar zone, floored to the second), not from the
    search's own int64 seconds, so a wrong time-zone or epoch conversion in :mod:`parse` is caught.
    Falls back on the parsed seconds when pandas cannot read the column in one ISO 8601 pass."""
    own = pd.Series(pd.to_datetime(np.where(missing, 0, instants), unit="s"), index=col.index).where(~missing)
    if isinstance(col.dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_any_dtype(col.dtype):
        return own
    text = col.astype("string").str.strip()
    text = text.where(~(text.isna() | (text == "")).fillna(True).astype(bool), None)
    has_offset = bool(text.str.contains(r"(?:\dZ|[+-]\d\d:?\d\d|[+-]\d\d:\d\d:\d\d(?:\.\d+)?|:\d\d[+-]\d\d)$",
                                        regex=True).fillna(False).any())  # fmt: skip
    # an offset with seconds (a zone's local mean time: +00:19:32) pandas does not parse: those values by
    # Python's own ISO parser, once per distinct value (not parse.py's arithmetic on the offset)
    sec = text.str.contains(r"[+-]\d\d:\d\d:\d\d(?:\.\d+)?$", regex=True).fillna(False).astype(bool).to_numpy()
    try:
        import datetime as _dt
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = pd.to_datetime(text.where(~sec, None), format="ISO8601", utc=has_offset)
        if sec.any():
            iso = {v: pd.Timestamp(_dt.datetime.fromisoformat(v)).tz_convert("UTC") for v in pd.unique(text[sec])}
            out = out.where(~sec, pd.Series(text[sec].map(iso), index=text.index[sec]).reindex(text.index))
    except (ValueError, TypeError, OverflowError):
        return own
    if bool((out.isna().to_numpy() & ~missing).any()):  # some values needed the element-wise parser
        return own
    if has_offset:
        out = out.dt.tz_convert(timezone or "UTC").dt.tz_localize(None)
    return pd.Series(out.dt.floor("s").to_numpy(), index=col.index).where(~missing)


def _validate(df, time, qi, uid, k, metric, max_suppression, joint=False):
    from tempanon.data.io import check_frame

    check_frame(df)
    require_columns(df, [time], role="time column")
    require_columns(df, qi, role="quasi-identifier")
    if uid is not None:
        require_columns(df, [uid], role="respondent identifier column")
        if uid in qi or uid == time:
            raise InputError(f"the respondent identifier {uid!r} cannot also be a quasi-identifier or the time")
    if time in qi:
        raise InputError(f"the time column {time!r} is generalized by granularities; do not list it in --qi")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise InputError(f"k must be an integer of at least 2 (got {k!r}): k = 1 would publish the original "
                         f"timestamps unchanged")
    if metric not in METRICS and not (joint and metric in ("height", "loss", "discernibility")):
        extra = " (height, loss, discernibility with --hierarchies)"
        raise InputError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}{extra}")
    if (isinstance(max_suppression, bool) or not isinstance(max_suppression, (int, float, np.integer, np.floating))
            or not 0.0 <= float(max_suppression) < 1.0):  # ('0.1' was taken as 0.1, None a TypeError; as kanonymize)
        raise InputError(f"max-suppression must be in [0, 1) (got {max_suppression!r})")
    if len(df) == 0:
        raise InputError("the input table has no rows")


def anonymize_timestamped(
    df: pd.DataFrame,
    *,
    time: str,
    qi: Sequence[str] = (),
    k: int,
    uid: str | None = None,
    granularities: str | Sequence[str | Granularity] | None = None,
    metric: str = "gen_c",
    max_suppression: float = 0.0,
    data_granularity: str | Granularity | None = None,
    country: str | None = None,
    parts=None,
    hierarchies: dict | None = None,
    criterion: str = "gen_c",
    timezone: str | None = None,
    time_limit: float | None = None,
    shuffle_seed: int | None = None,
    announce: Callable[[str], None] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    keep: Sequence[str] = (),
    drop: Sequence[str] = (),
    allow_identifier: Sequence[str] = (),
    sensitive: Sequence[str] = (),
    engine: str = "auto",
    memory_limit: str | None = None,
    spark_master: str | None = None,
    date_order: str = "auto",
) -> TimestampedResult:
    """Least respondent-level k-anonymous generalization of ``time`` (Section 4, Algorithm 1).

    ``qi`` are the other quasi-identifiers, published unchanged unless ``hierarchies`` maps some of
    them to generalization hierarchies: then time and those attributes are generalized jointly
    (an Incognito search over the product of the granularity DAG and the hierarchies, see
    :mod:`tempanon.temporal.joint`). ``uid`` identifies respondents (each row is one when None).
    ``max_suppression`` is the fraction of tuples that may be removed. Raises
    :class:`~tempanon.errors.NoSolutionError` when no granularity works.

    Fail closed: the release holds only ``time``, ``qi``, ``sensitive`` (released as they are) and
    ``keep`` (declared insensitive, released unchanged); ``drop`` are identifiers, and every other column is left out
    (``summary["left_out"]``). Columns released unchanged (``keep``, quasi-identifiers not
    generalized) are screened for direct identifiers and second timestamps
    (:func:`tempanon.data.screen.refuse_identifiers`) unless listed in ``allow_identifier``;
    ``summary["verification"]`` says what was verified on which columns.

    ``engine`` (issue 15): ``"duckdb"`` computes Procedure 2's frequency sets in DuckDB
    (:mod:`tempanon.lattice.source_temporal`; ``memory_limit`` e.g. ``"4GB"``: ``engine="auto"`` is DuckDB when
    it is given, ``"numpy"`` refuses it, with ``"spark"`` it is the local driver's heap: :mod:`tempanon.lattice.memory`), with results
    identical to ``"numpy"`` (the default of ``"auto"``); with ``hierarchies`` DuckDB computes the
    joint search's bottom frequency set (rollups on the driver,
    :class:`~tempanon.lattice.source_temporal.DuckDBJointSource`); ``"spark"`` runs the same queries
    in Spark SQL (:mod:`tempanon.lattice.source_temporal_spark`; ``spark_master`` a master URL, default
    a ``local[2]`` session; the rows are parsed and encoded on the driver, the codes go to Spark).

    ``date_order``: how numeric dates such as ``05/03/2023`` are read: ``"auto"`` (day first when a
    value can only be day first, ``13/05/2023`` or ``02.03.2023``, and none only month first; a column
    showing both is refused; a column where every value could be either is read month first and
    ``summary["messages"]`` says so), ``"day"`` or ``"month"`` (a value that cannot be read so is
    refused); see :func:`tempanon.temporal.parse.day_month_order`. Every engine gives the same instants:
    the values are parsed on the driver. The start and end of ``file:`` granularities (boundary files)
    are read in the same order (``auto``: decided per file, :func:`~tempanon.temporal.granularity.boundaries_from_file`;
    the note of a file read month first undecided is in ``summary["messages"]`` too, :func:`said_boundary_notes`).
    """
    args = dict(time=time, qi=qi, k=k, uid=uid, granularities=granularities, metric=metric,
                max_suppression=max_suppression, data_granularity=data_granularity, country=country, parts=parts,
                hierarchies=hierarchies, criterion=criterion, timezone=timezone, time_limit=time_limit,
                shuffle_seed=shuffle_seed, announce=announce, progress=progress, keep=keep, drop=drop,
                allow_identifier=allow_identifier, sensitive=sensitive, engine=engine, memory_limit=memory_limit,
                spark_master=spark_master, date_order=date_order)  # fmt: skip
    return said_boundary_notes(lambda notes: _anonymize_timestamped(df, notes=notes, **args))


def _anonymize_timestamped(
    df: pd.DataFrame,
    *,
    time: str,
    qi: Sequence[str],
    k: int,
    uid: str | None,
    granularities: str | Sequence[str | Granularity] | None,
    metric: str,
    max_suppression: float,
    data_granularity: str | Granularity | None,
    country: str | None,
    parts,
    hierarchies: dict | None,
    criterion: str,
    timezone: str | None,
    time_limit: float | None,
    shuffle_seed: int | None,
    announce: Callable[[str], None] | None,
    progress: Callable[[str, int, int], None] | None,
    keep: Sequence[str],
    drop: Sequence[str],
    allow_identifier: Sequence[str],
    sensitive: Sequence[str],
    engine: str,
    memory_limit: str | None,
    spark_master: str | None,
    date_order: str,
    notes: list[str],
) -> TimestampedResult:
    """:func:`anonymize_timestamped`'s work; ``notes`` is filled by :func:`boundary_notes` (said by
    :func:`said_boundary_notes`)."""
    from tempanon.data.roles import column_names

    if not isinstance(df, pd.DataFrame):
        raise InputError(f"df must be a pandas DataFrame, got {type(df).__name__} (a file: read it with "
                         "tempanon.data.io.read_table, or give its path to anonymize_timestamped_file)")  # fmt: skip
    qi = column_names(qi, "qi")
    keep, drop, allow_identifier = (column_names(v, n) for v, n in ((keep, "keep"), (drop, "drop"),
                                                                    (allow_identifier, "allow_identifier")))  # fmt: skip
    if hierarchies is not None and not isinstance(hierarchies, Mapping):
        raise InputError(f"hierarchies must map quasi-identifiers to their hierarchies, got {type(hierarchies).__name__} "
                         f"{hierarchies!r}; for a directory of ARX files use tempanon.hierarchy.load_hierarchies(dir, qi)")  # fmt: skip
    if hierarchies:  # a config dict ({'type': 'intervals', ...}), as kanonymize and job files take it (it was an
        # AttributeError, "'dict' object has no attribute 'encode'", on every engine)
        from tempanon.hierarchy.builders import hierarchy_from_config

        hierarchies = {q: hierarchy_from_config(h, where=f"hierarchy of {q!r}") if isinstance(h, Mapping) else h
                       for q, h in hierarchies.items()}  # fmt: skip
    _validate(df, time, qi, uid, k, metric, max_suppression, bool(hierarchies))
    from tempanon.temporal.parse import check_date_order

    date_order = check_date_order(date_order)
    from tempanon.lattice.source_temporal import resolve_time_engine

    engine_name = resolve_time_engine(engine, memory_limit, spark_master)
    from tempanon.data.io import table_columns
    from tempanon.data.roles import plan_release, require_columns_list

    keep, drop = list(keep), list(drop)
    sensitive = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    columns = table_columns(df)  # (a Parquet file read with only its role columns: every column of the file)
    require_columns_list(columns, sensitive, role="sensitive column")
    for c in sensitive:
        if c in qi or c in (time, uid):
            raise InputError(f"column {c!r} cannot be both sensitive and a quasi-identifier, the time or the uid")
    release_cols, left_out = plan_release(columns, released=[*qi, time, *sensitive], keep=keep, drop=drop,
                                          consumed=[uid] if uid else [])  # fmt: skip
    require_columns_list(columns, allow_identifier, role="--allow-identifier column")
    roles = {"release": set(release_cols), "keep": keep, "drop": drop, "left_out": left_out,
             "allow": list(allow_identifier), "sensitive": sensitive}  # fmt: skip
    from tempanon.data.io import refuse_nested_columns

    refuse_nested_columns(df, {"time": [time], "uid": [uid] if uid else None, "qi": qi, "sensitive": sensitive,
                               "keep": keep, "allow_identifier": list(allow_identifier)})  # fmt: skip
    from tempanon.data.cells import text_mixed_columns

    df = text_mixed_columns(df, [uid, *qi, *sensitive, *keep])  # one value per released text (data/cells.py)
    if shuffle_seed is not None and (isinstance(shuffle_seed, bool) or not isinstance(shuffle_seed, (int, np.integer))
                                     or shuffle_seed < 0):
        raise InputError(f"the shuffle seed must be a non-negative integer (got {shuffle_seed!r})")
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float, np.integer, np.floating)) or not time_limit > 0:
            raise InputError(f"time limit must be a positive number of seconds (got {time_limit!r})")

    df = df.reset_index(drop=True)
    instants, missing, tinfo = parse_timestamps(df[time], time, timezone, date_order=date_order)
    data_granularity = given_granularity(data_granularity, country=country, parts=parts, date_order=date_order)
    boundary_notes([data_granularity], notes)
    g0 = data_granularity_of(data_granularity, instants, missing, country=country, parts=parts, date_order=date_order)
    z0 = g0.index(instants)
    bad = (z0 == GAP) & ~missing
    if bad.any():
        row = int(np.nonzero(bad)[0][0])
        raise InputError(f"column {time!r}, line {row + 2}: {df[time].iloc[row]!r} lies in no granule of the "
                         f"data granularity {g0.name}")  # fmt: skip
    cands = parse_granularities(granularities, country=country, parts=parts, date_order=date_order, warn=False)
    boundary_notes(cands, notes)
    span = span_of(instants[~missing])
    dag = build_dag(g0, cands, span)
    uid_codes = encode_uid(df, uid)
    n = len(df)
    max_suppressed = int(np.floor(float(max_suppression) * n + 1e-9))
    # the input is valid; identifier screening of the columns released unchanged whatever the search finds (kept, and
    # quasi-identifiers without a hierarchy) before the search, as kanon and the engines do: fail fast
    from tempanon.data.screen import refuse_identifiers

    early = [*keep, *(q for q in qi if q not in (hierarchies or {}))]
    roles["overrides"] = refuse_identifiers(df, early, allow=roles["allow"], uid=uid, time=time)
    roles["screened"] = set(early)
    roles["hierarchies"] = list(hierarchies or {})
    if hierarchies:
        from tempanon.temporal.joint import joint_anonymize

        if announce is not None:  # the engine states the lattice size and its estimate (notice)
            announce(f"joint search: {len(dag.nodes)} time granularities x the hierarchies of "
                     f"{', '.join(h for h in hierarchies)} (Incognito, pruned by the generalization property)"
                     f"{'; at most ' + format(time_limit, 'g') + ' s (--time-limit)' if time_limit else ''}")

        jres = _apply_roles(df, joint_anonymize(df, time=time, qi=qi, k=k, uid=uid, dag=dag, instants=instants, missing=missing,
                               z0=z0, hierarchies=hierarchies, metric=metric, criterion=criterion,
                               max_suppression=float(max_suppression), tinfo=tinfo, progress=progress,
                               time_limit=time_limit, notice=announce, engine=engine_name,
                               memory_limit=memory_limit, spark_master=spark_master),
                            roles)  # fmt: skip
        return finish(jres, df, time=time, qi=qi, uid=uid, shuffle_seed=shuffle_seed, tinfo=tinfo,
                      class_key=getattr(jres, "_class_key", None))
    refuse_k_above_respondents(k, int(uid_codes.max()) + 1 if len(uid_codes) else 0, uid)  # codes 0..m-1
    if announce is not None:
        announce(f"searching {len(dag.nodes)} granularities (the data's {dag.nodes[0].name} and {len(dag.nodes) - 1} "
                 f"coarser){'; at most ' + format(time_limit, 'g') + ' s (--time-limit)' if time_limit else ''}")
    q = encode_columns(df, qi)
    plan = None
    if engine_name in ("duckdb", "spark"):  # Procedure 2 as GROUP BY in the engine (tempanon.lattice.source_temporal)
        from tempanon.lattice.source_temporal import class_key, time_source

        src = time_source(engine_name, q, instants, missing, uid_codes, memory_limit=memory_limit,
                          spark_master=spark_master)  # fmt: skip
        try:
            res = least_generalization(None, dag, k, metric=metric, max_suppressed=max_suppressed,  # type: ignore[arg-type]
                                       time_limit=time_limit, progress=progress, check=src.check)  # fmt: skip
            chosen = dag.nodes[res.chosen]
            final = src.check(chosen, k, max_suppressed)
            keep = np.ones(n, dtype=bool)
            if final.suppressed:
                keep[src.suppressed_rows(chosen, k)] = False
            cls = class_key(q, src.granules(chosen))
            plan = src.describe()
        finally:
            src.close()
        n_respondents = int(np.count_nonzero(np.bincount(uid_codes - uid_codes.min())))
    else:
        prep = prepare(q, instants, missing, uid_codes, np.where(missing, 0, z0))
        res = least_generalization(prep, dag, k, metric=metric, max_suppressed=max_suppressed, time_limit=time_limit,
                                   progress=progress)  # fmt: skip
        chosen = dag.nodes[res.chosen]
        final = check_granularity(prep, chosen, k, max_suppressed, keep_arrays=True)
        keep_sorted = final.keep
        keep = np.zeros(n, dtype=bool)
        keep[prep.order] = keep_sorted
        n_respondents = prep.n_respondents
        # class of every released row: runs of the relation sorted by (QI, time) under the chosen granularity
        h = final.granule
        new_class = np.r_[True, (prep.q[1:] != prep.q[:-1]) | (h[1:] != h[:-1])]
        cls = np.empty(n, dtype=np.int64)
        cls[prep.order] = np.cumsum(new_class)
    labels = np.empty(n, dtype=object)
    labels[~missing] = chosen.labels_of(instants[~missing])
    labels[missing] = None
    released = df.loc[keep].copy()
    released[time] = pd.Series(labels[keep], index=released.index, dtype=object)
    if uid is not None:
        released = released.drop(columns=[uid])
    # Candidates for the summary: what Algorithm 1 evaluated; pruned granularities are not
    # re-checked (that would undo the pruning), the summary says why they were not.
    all_checks = [res.checks.get(v) for v in range(len(dag.nodes))]
    from tempanon.verify import check_timestamped_release

    otimes = reference_times(df[time], instants, missing, timezone)
    report = check_timestamped_release(df, released, time=time, qi=qi, uid=uid, k=k, granularity=chosen.name,
                                       original_times=otimes, n_input=n, max_suppressed=max_suppressed)  # fmt: skip
    summary = _summary(df, dag, res, all_checks, final, k=k, uid=uid, time=time, qi=qi, metric=metric,
                       max_suppression=max_suppression, max_suppressed=max_suppressed, tinfo=tinfo,
                       respondents=n_respondents, report=report)  # fmt: skip
    if plan is not None:
        summary["plan"] = plan
    return finish(_apply_roles(df, TimestampedResult(released, summary, dag, chosen.name), roles), df, time=time, qi=qi, uid=uid,
                  shuffle_seed=shuffle_seed, tinfo=tinfo, res=res, class_key=cls[keep])  # fmt: skip


STEWARD_ONLY = ("this summary counts the input (tuples, respondents, suppressed, each candidate's tuples below k): for "
                "the data steward, not for release")  # fmt: skip


def finish(result: TimestampedResult, df: pd.DataFrame, *, time: str, qi: Sequence[str], uid: str | None,
           shuffle_seed: int | None, tinfo: dict, res=None, class_key: np.ndarray | None = None) -> TimestampedResult:  # fmt: skip
    """Shuffle the release within classes, build the steward's audit, state time zone and budget."""
    result.released, result.shuffle_seed = shuffle_within_classes(result.released, [*qi, time], shuffle_seed, class_key)
    result._audit_source = (df, result.released.index.copy(), uid)  # the order as released, fixed now
    s = result.summary
    s["timezone"] = tinfo.get("calendar_timezone") or ("UTC (converted)" if "converted" in tinfo.get("timezone", "")
                                                       else "none (naive wall clock as given)")  # fmt: skip
    if tinfo.get("note"):
        s["messages"].append(tinfo["note"])
    date_order_summary(s, tinfo)
    s["row_order"] = "grouped by class, shuffled within classes (secret seed, recorded in the steward audit only)"
    s["steward_only"] = STEWARD_ONLY
    if res is not None and getattr(res, "budget_exhausted", False):
        s["budget"] = {"exhausted": True, "checked": len(res.checks), "not_reached": len(res.not_reached),
                       "note": "the time limit stopped the search: the release is the best verified among the "
                               "granularities checked, not necessarily the least"}  # fmt: skip
        s["messages"].append(s["budget"]["note"])
    return result


def date_order_summary(summary: dict, tinfo: dict) -> None:
    """The summary's ``date_order`` (how numeric dates were read: ``"day first"``, ``"month first"``;
    absent when the column has none) and the note of an undecided column read month first."""
    if tinfo.get("date_order"):
        summary["date_order"] = f"{tinfo['date_order']} first"
    if tinfo.get("date_order_note"):
        summary["messages"].append(tinfo["date_order_note"])


def _apply_roles(df: pd.DataFrame, res: TimestampedResult, roles: dict) -> TimestampedResult:
    """Project the verified release on its declared columns, screen those released unchanged,
    and add ``left_out`` and the verified statement to the summary (see :mod:`tempanon.data.roles`)."""
    from tempanon.data.roles import verification_statement
    from tempanon.data.screen import refuse_identifiers

    s = res.summary
    qi, time = list(s["qi"]), s["time"]
    node = s.get("node")
    generalized = {q for i, q in enumerate(qi) if node is not None and int(node[1 + i]) > 0}
    unchanged = [*roles["keep"], *(q for q in qi if q not in generalized)]
    late = [c for c in unchanged if c not in roles.get("screened", ())]  # the rest was screened before the search
    overrides = [*roles.get("overrides", []), *refuse_identifiers(df, late, allow=roles["allow"], uid=s["uid"], time=time)]
    res.released = res.released[[c for c in res.released.columns if c in roles["release"]]]
    res.unchanged_columns = [c for c in res.released.columns if c != time and c not in roles.get("hierarchies", ())]
    uid = s["uid"]
    g = f"respondent-level {s['k']}-anonymity" + (f" ({uid!r})" if uid else "")
    statement = verification_statement(g, [*qi, time], insensitive=roles["keep"], overrides=overrides,
                                       left_out=roles["left_out"], dropped=roles["drop"])  # fmt: skip
    s["verification"] = {**(s.get("verification") or {}), **statement}
    s["keep"] = list(roles["keep"])
    s["sensitive"] = list(roles["sensitive"])
    s["left_out"] = list(roles["left_out"])
    return res


def _summary(df, dag, res, all_checks, final, *, k, uid, time, qi, metric, max_suppression, max_suppressed, tinfo,
             respondents, report) -> dict:  # fmt: skip
    candidates = []
    idx = {g.name: i for i, g in enumerate(dag.nodes)}
    names = [dag.nodes[0].name] + [n for n in list(idx)[1:]] + list(dag.disregarded) + [
        n for n in dag.equivalent if n not in idx]  # fmt: skip
    for name in names:
        entry: dict = {"granularity": name}
        if name in dag.disregarded:
            entry.update(compatible=False, reason=dag.disregarded[name], k_anonymous=None, gen_m=None, gen_s=None)
        else:
            i = idx.get(name, idx.get(dag.equivalent.get(name, ""), 0))
            c = all_checks[i]
            entry.update(compatible=True, directly_coarser=[dag.nodes[p].name for p in dag.parents[i]],
                         evaluated_by_algorithm=c is not None, minimal=i in res.minimal)  # fmt: skip
            if c is not None:
                entry.update(k_anonymous=bool(c.k_anonymous), gen_m=c.gen_m, gen_s=c.gen_s, suppressed=c.suppressed,
                             classes=c.classes, min_respondents=c.min_respondents)  # fmt: skip
            elif i in getattr(res, "bounded", {}):
                implied = any(dag.finer[a, i] and res.checks[a].k_anonymous for a in res.checks)
                entry.update(k_anonymous=True if implied else None, gen_m=None, gen_s=None, not_checked=res.bounded[i])
            elif i in res.pruned:
                entry.update(k_anonymous=True, gen_m=None, gen_s=None,
                             not_checked=f"pruned: coarser than {dag.nodes[res.pruned[i]].name}, which is k-anonymous "
                                         f"(so this one is too, and no less general by Theorems 2-4)")  # fmt: skip
            else:
                entry.update(k_anonymous=None, gen_m=None, gen_s=None,
                             not_checked="not reached: the time limit stopped the search")
            if i in res.pruned:
                entry["pruned_coarser_than"] = dag.nodes[res.pruned[i]].name
            if name in dag.equivalent:
                entry["equivalent_to"] = dag.equivalent[name]
            if i == 0:
                entry["data_granularity"] = True
        candidates.append(entry)
    return {
        "k": int(k),
        "respondents": int(respondents),
        "tuples": int(len(df)),
        "released_tuples": int(len(df) - final.suppressed),
        "uid": uid,
        "time": time,
        "qi": list(qi),
        "data_granularity": dag.nodes[0].name,
        "granularity": dag.nodes[res.chosen].name,
        "metric": metric,
        "gen_m": final.gen_m,
        "gen_s": final.gen_s,
        "gen_c": list(final.gen_c),
        "suppressed": final.suppressed,
        "max_suppression": float(max_suppression),
        "max_suppressed_tuples": int(max_suppressed),
        "minimal_k_anonymous": [dag.nodes[v].name for v in res.minimal],
        "candidates": candidates,
        "messages": list(dag.messages),
        "timestamps": tinfo,
        "verification": report,
    }
