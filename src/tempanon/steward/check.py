"""``check``: the k, respondent-level k, l, uniques and prosecutor risk of a table as it is, and
whether it meets requested levels (to gate a release in a pipeline).

The measures are defined in :mod:`tempanon.metrics.risk`.

**Engines.** ``engine="numpy"`` holds the table in pandas. ``engine="duckdb"`` / ``"spark"`` read a
CSV or Parquet file in place and never load it into pandas: the class sizes come from the
engine's ``GROUP BY`` as a histogram (the query of :meth:`SQLSource.input_aggregates
<tempanon.lattice.source_duckdb.SQLSource.input_aggregates>`, as for the ``kanon`` report) and go
through the same :func:`~tempanon.metrics.risk.risk_from_aggregates`; the sensitive values come as
a histogram of the classes' sorted value counts (:func:`_l_histogram`: a class's l of every model
depends on those only), whose l's are computed by the same numpy function as in memory
(:func:`tempanon.metrics.risk._l_per_class`, the same floats). A failed level's example class (the
first record, in file order, of a smallest or least diverse class, and its file line) is found by
a further ``GROUP BY`` over the rows numbered in file order (the numbering of the steward audit,
:meth:`SQLSource._numbered <tempanon.lattice.source_duckdb.SQLSource._numbered>`). Identifier screening of the other
columns uses the rules of :mod:`tempanon.data.screen` on counts and on the distinct values (at most
the 20,000 the in-memory screening samples, picked at the same positions of the values in order of
first appearance). With ``audit`` the respondents are joined to the rows by row number in the
engine (:func:`_with_audit`). Verdict, numbers and messages are those of the numpy path (tested,
``tests/steward/test_check_engine.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tempanon.errors import InputError
from tempanon.metrics.risk import RiskSummary, class_codes, measure

L_MODELS = ("distinct", "frequency", "entropy")

ENGINES = ("auto", "numpy", "duckdb", "spark")

JSON_KEYS = ("k", "respondent_k", "l_distinct", "l_frequency", "uniques", "prosecutor_risk_max", "prosecutor_risk_mean")


@dataclass
class CheckResult:
    """Measures of a table and the requested levels it misses (``failures``, in user terms)."""

    risk: RiskSummary
    quasi_identifiers: list[str]
    uid: str | None
    sensitive: list[str]
    k_requested: int | None
    l_requested: int | None
    l_model: str
    failures: list[str] = field(default_factory=list)
    identifier_findings: list = field(default_factory=list)  # other columns that look like direct identifiers
    nested_columns: dict = field(default_factory=dict)  # no-role columns of a nested type (name -> type): no role, not screened

    @property
    def ok(self) -> bool:
        return not self.failures

    def as_dict(self) -> dict:
        """The ``--json`` object: the keys of :data:`JSON_KEYS` first, then the details."""
        r = self.risk.as_dict()
        out = {key: r[key] for key in JSON_KEYS}
        out.update(
            {
                "l_entropy": r["l_entropy"],
                "rows": r["rows"],
                "classes": r["classes"],
                "respondents": r["respondents"],
                "records_at_risk": r["records_at_risk"],
                "risk_threshold": r["risk_threshold"],
                "quasi_identifiers": self.quasi_identifiers,
                "uid": self.uid,
                "sensitive": self.sensitive,
                "k_requested": self.k_requested,
                "l_requested": self.l_requested,
                "l_model": self.l_model,
                "ok": self.ok,
                "failures": self.failures,
                "identifier_findings": [{"column": f.column, "reason": f.reason} for f in self.identifier_findings],
                "nested_columns": [{"column": c, "type": t} for c, t in self.nested_columns.items()],
            }
        )
        return out


def _example_class(df: pd.DataFrame, qi: Sequence[str], sizes_per_record: np.ndarray, target: int) -> str:
    """Values of the first record whose class has the failing size, e.g. ``age=39, sex=M``."""
    i = int(np.flatnonzero(sizes_per_record == target)[0])
    row = df.iloc[i]
    parts = []
    for q in qi:
        v = row[q]
        parts.append(f"{q}={'<missing>' if pd.isna(v) else v}")
    return ", ".join(parts) + f" (line {i + 2})"  # the file line (header = line 1)


def _check_request(k, l, l_model: str, sensitive) -> None:
    """The requested levels, refused as on every engine before anything is measured."""
    if k is not None and (isinstance(k, bool) or int(k) < 1):
        raise InputError(f"--k must be a positive integer, got {k}")
    if l is not None and (isinstance(l, bool) or int(l) < 1):
        raise InputError(f"--l must be a positive integer, got {l}")
    if l_model not in L_MODELS:
        raise InputError(f"unknown l-diversity model {l_model!r}; expected one of {', '.join(L_MODELS)}")
    if l is not None and not sensitive:
        raise InputError("--l needs a sensitive column (--sensitive)")


def check_engine(data, engine: str = "auto", memory_limit: str | None = None) -> str:
    """The engine ``check`` runs on for ``data`` (``auto``: as ``kanon --engine auto``, DuckDB for files
    from 256 MiB or with a ``memory_limit``; a spreadsheet and a DataFrame are numpy), ``memory_limit``
    refused where the engine cannot keep it (:func:`tempanon.lattice.memory.check_memory_limit`)."""
    from tempanon.lattice.source import FrequencySource, resolve_engine

    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    if isinstance(data, FrequencySource):
        return data.engine
    if engine == "auto" and memory_limit is None and (isinstance(data, (str, bytes)) or hasattr(data, "__fspath__")):
        from pathlib import Path

        from tempanon.data.excel import is_spreadsheet

        p = Path(data)
        if p.is_file() and is_spreadsheet(p):
            return "numpy"
    return resolve_engine(data, engine, memory_limit)


def open_check_source(path, engine: str, *, memory_limit: str | None = None, delimiter: str | None = None,
                      spark_master: str | None = None):
    """The engine source (:class:`~tempanon.lattice.source_duckdb.SQLSource`) ``check`` reads the
    file ``path`` with on ``engine`` (``duckdb`` or ``spark``); the caller closes it."""
    from tempanon.data.excel import is_spreadsheet
    from tempanon.data.io import check_input_file
    from tempanon.lattice.memory import check_memory_limit
    from tempanon.lattice.source import open_source

    check_memory_limit(engine, memory_limit, spark_master=spark_master)  # before anything is read
    p = check_input_file(path)
    if is_spreadsheet(p):
        raise InputError(f"{p}: a spreadsheet is read into memory; check it with --engine numpy "
                         "(or save it as CSV or Parquet for --engine duckdb/spark)")  # fmt: skip
    return open_source(p, engine, memory_limit=memory_limit, delimiter=delimiter, spark_master=spark_master)


def check_table(
    df,
    qi: Sequence[str],
    *,
    uid: str | None = None,
    sensitive: Sequence[str] = (),
    k: int | None = None,
    l: int | None = None,
    l_model: str = "frequency",
    threshold: float = 0.2,
    engine: str = "auto",
    memory_limit: str | None = None,
    delimiter: str | None = None,
    spark_master: str | None = None,
    audit: str | None = None,
    nested: Mapping[str, str] | None = None,
) -> CheckResult:
    """Measure ``df`` (see :func:`tempanon.metrics.measure`) and compare with the requested levels.

    With ``uid`` the requested ``k`` is checked against the respondent-level k (distinct
    respondents per class), as ``tempanon kanon --uid`` guarantees it; ``l`` is checked against
    the l of ``l_model`` (``frequency``, the default: the model :func:`tempanon.kanon.kanonymize` and
    ``kanon --l-diversity`` release with, so a table checked and then released is judged by one model;
    ``distinct`` or ``entropy``) and needs ``sensitive``.

    ``df``: a pandas DataFrame, a CSV or Parquet path, a Spark DataFrame, or an open engine source. ``engine``
    (``auto``, ``numpy``, ``duckdb``, ``spark``; ``memory_limit``, ``spark_master`` as for
    :func:`tempanon.kanon.kanonymize`): who computes the class aggregates. On ``duckdb`` and
    ``spark`` a file is read in place, never loaded into pandas (module doc); the result (measures,
    failures and their messages, identifier findings) is the numpy path's. ``audit``: the steward-only
    audit of a timestamped release, whose respondents go into the new column ``uid``
    (:func:`attach_audit`; on an engine joined there by row number).

    Columns of a nested type (list, struct, map) with no role are not screened for identifiers (their
    text is another on every engine, and they can take no role: never released, as ``init`` proposes
    none) but listed in ``nested_columns`` (name -> type; ``--json``: ``nested_columns``), on every
    engine alike; one given a role is refused (:func:`~tempanon.data.io.refuse_nested_columns`).
    ``nested``: those columns (name -> type) when ``df`` is not the Parquet path itself (the command
    passes the file's, :func:`~tempanon.data.io.nested_parquet_columns`); default: a Parquet path's,
    or the columns of a pandas DataFrame whose cells include lists, dicts, bytes, timedeltas, ...
    (``frame_nested_columns``).
    """
    from tempanon.data.io import nested_parquet_columns, refuse_nested_columns
    from tempanon.lattice.source import FrequencySource, NumpySource

    # a Parquet path: a nested column (list, struct, map) with a role is refused before any engine reads it
    refuse_nested_columns(df, {"qi": qi, "uid": [uid] if uid else None, "sensitive": sensitive})
    from tempanon.data.cells import text_mixed_columns

    # one value per released text (data/cells.py): 1, True and 1.0 are three values
    df = text_mixed_columns(df, [*([qi] if isinstance(qi, str) else qi or []), uid,
                                 *([sensitive] if isinstance(sensitive, str) else sensitive or [])])
    frame_given = nested is None and isinstance(df, pd.DataFrame)
    if nested is None:
        nested = nested_parquet_columns(df)  # (empty unless df is a Parquet path)
    nested = dict(nested)
    eng = check_engine(df, engine, memory_limit)
    if isinstance(df, NumpySource):
        df = df.data
    if isinstance(df, FrequencySource):
        if memory_limit is not None:
            raise InputError("memory_limit applies when tempanon opens the engine; this source is already open")
        return _check_source(df, qi, uid=uid, sensitive=sensitive, k=k, l=l, l_model=l_model, threshold=threshold,
                             audit=audit, nested=nested)  # fmt: skip
    if eng != "numpy":
        if isinstance(df, (str, bytes)) or hasattr(df, "__fspath__"):
            src = open_check_source(df, eng, memory_limit=memory_limit, delimiter=delimiter, spark_master=spark_master)
        else:  # a pandas DataFrame handed to an engine, or a Spark DataFrame
            from tempanon.lattice.source import open_source

            src = open_source(df, eng, memory_limit=memory_limit, spark_master=spark_master)
        try:
            return _check_source(src, qi, uid=uid, sensitive=sensitive, k=k, l=l, l_model=l_model, threshold=threshold,
                                 audit=audit, nested=nested)  # fmt: skip
        finally:
            src.close()
    from tempanon.lattice.memory import check_memory_limit

    check_memory_limit("numpy", memory_limit)
    if not isinstance(df, pd.DataFrame):
        from tempanon.data.io import read_table

        df = read_table(df, as_text=True, delimiter=delimiter)
    if audit is not None:
        df = attach_audit(df, audit, uid)
    if isinstance(qi, str) or isinstance(sensitive, str) or sensitive is None:  # the command's text, "a,b" or A:B
        from tempanon.data.roles import parse_column_list

        qi = parse_column_list(qi, list(df.columns)) if isinstance(qi, str) else qi
        sensitive = parse_column_list(sensitive, list(df.columns)) if not isinstance(sensitive, (list, tuple)) else sensitive
    _check_request(k, l, l_model, sensitive)
    risk = measure(df, qi, uid=uid, sensitive=sensitive, threshold=threshold)
    if uid is not None and audit is None:
        from tempanon.data.lines import at_label

        miss = df[uid].isna().to_numpy()
        if miss.any():
            _refuse_missing_uid(uid, at_label(df.index, df.index[int(np.argmax(miss))]))
    res = CheckResult(risk, list(qi), uid, list(sensitive), k, l, l_model)
    from tempanon.data.screen import screen_columns

    # the same identifier screening as every command: columns beside the measured ones that look identifying
    others = [c for c in df.columns if c not in {*qi, *sensitive, uid}]
    if frame_given and others:  # a DataFrame given to the API: its columns with list, dict, ... cells
        from tempanon.data.io import frame_nested_columns

        picked = [j for j, c in enumerate(df.columns) if c in set(others)]
        nested = frame_nested_columns(df.iloc[:, picked])
    res.nested_columns = {c: nested[c] for c in others if c in nested}
    res.identifier_findings = screen_columns(df, [c for c in others if c not in nested], uid=uid)

    def k_example(got: int) -> str:
        cls, _ = class_codes(df, qi)
        return _example_class(df, qi, risk.class_sizes[cls], got)

    def l_classes() -> tuple[int, Callable[[int], str]]:
        from tempanon.metrics.risk import l_of_classes

        cls, per_class = l_of_classes(df, qi, sensitive, l_model)
        return int((per_class < l).sum()), lambda got: _example_class(df, qi, per_class[cls], got)

    _failures(res, k_example, l_classes)
    return res


def _failures(res: CheckResult, k_example: Callable[[int], str], l_classes: Callable[[], tuple[int, Callable[[int], str]]]) -> None:
    """The requested levels ``res`` misses, in user terms (one text for every engine): ``k_example``
    gives the example of a class of ``got`` records (respondents), ``l_classes`` the number of
    classes below the requested l and the example of a class of a given l."""
    risk, k, l, uid = res.risk, res.k_requested, res.l_requested, res.uid
    if risk.rows == 0:
        if k is not None or l is not None:
            res.failures.append("the table has no rows, so no level can be checked")
        return
    if k is not None:
        got = risk.respondent_k if uid else risk.k
        if got < k:
            what = "respondents" if uid else "records"
            # (an engine's aggregates may be a histogram: class_counts classes of each size)
            w = np.ones(len(risk.class_sizes), dtype=np.int64) if risk.class_counts is None else risk.class_counts
            small = int(w[risk.class_sizes < k].sum())
            res.failures.append(
                f"{'respondent-level ' if uid else ''}k is {got}, below the requested {k}: {small} of {risk.classes} "
                f"classes have fewer than {k} {what}; the smallest, with {got}, is {k_example(got)}"
            )
    if l is not None:
        l_model, sensitive = res.l_model, res.sensitive
        got_l = {"distinct": risk.l_distinct, "frequency": risk.l_frequency, "entropy": risk.l_entropy}[l_model]
        if got_l < l:
            below, example = l_classes()
            res.failures.append(
                f"{l_model} l-diversity of {', '.join(sensitive)} is {got_l}, below the requested {l}: "
                f"{below} of {risk.classes} classes have l below {l}; the least diverse, "
                f"with l = {got_l}, is {example(got_l)}"
            )


# ---- the engine path (module doc) ------------------------------------------------------------


class _Texts:
    """The engine's expressions for a column's value as the numpy path (pandas' readers) sees it (row
    alias ``s``), on a Parquet input's typed columns (a CSV is read as text). The engines' input view
    already makes a float NaN missing and reads an integer column holding a missing value as floats,
    as pandas does (:meth:`~tempanon.lattice.source_duckdb.SQLSource._init_view`); here:

    * a typed timestamp has the text the engine releases it with
      (:meth:`~tempanon.lattice.source_duckdb.SQLSource.released_text`: numpy's on every engine,
      ``docs/engines.md``, "Typed timestamps on DuckDB, and as quasi-identifiers").

    ``key``: the class key text, missing as the empty string (as
    :meth:`~tempanon.lattice.source_duckdb.SQLSource.text_expr`).

    ``rel``: the relation checked (the input ``src``, or with ``--audit`` the input with the
    respondent column, :func:`_with_audit`), ``numbered`` that relation with every row's number in
    file order (column :data:`~tempanon.lattice.source_duckdb.AUDIT_RN`), ``columns`` its columns."""

    def __init__(self, src, rel: str = "src", numbered: str | None = None, columns: Sequence[str] | None = None):
        import pyarrow as pa

        self.src, self.rel = src, rel
        self.numbered = numbered or src._numbered("src", src.columns)
        self.columns = list(src.columns if columns is None else columns)
        schema = src._arrow(f"SELECT * FROM {rel} LIMIT 0").schema
        self.times = {f.name for f in schema if pa.types.is_timestamp(f.type)}

    def val(self, col: str) -> str:
        return f"s.{self.src.q(col)}"

    def text(self, col: str) -> str:
        if col in self.times:
            return f"(CASE WHEN s.{self.src.q(col)} IS NULL THEN NULL ELSE {self.src.released_text('s', col)} END)"
        return f"CAST({self.val(col)} AS {self.src.text_type})"

    def distinct(self, col: str) -> str:
        """The text of ``col`` as identifier screening tells values apart (missing stays NULL): a DataFrame's
        float column with ``-0.0`` and ``0.0`` one value, as numpy's screening counts the floats
        (:meth:`~tempanon.lattice.source_duckdb.SQLSource.value_expr`); any other column its :meth:`text`."""
        if col in getattr(self.src, "_float_cols", ()):
            return self.src.value_expr(col)
        return self.text(col)

    def key(self, col: str) -> str:
        if col in getattr(self.src, "_float_cols", ()):  # a DataFrame's float: 0.0 and -0.0 one value, as numpy's as_text
            return f"(CASE WHEN CAST({self.val(col)} AS DOUBLE) = 0 THEN '0' ELSE coalesce({self.text(col)}, '') END)"
        return f"coalesce({self.text(col)}, '')"


def _refuse_missing_uid(uid: str, where: str) -> None:
    """A respondent id that is missing is refused, as kanon and timestamped refuse it: counted as one
    more respondent, it could make a class of one person look like a class of two, so check passed
    what kanon --uid refuses to anonymize."""
    raise InputError(f"respondent id column {uid!r} has a missing value at {where}: every row needs its respondent "
                     "for respondent-level k")


def _check_source(src, qi, *, uid, sensitive, k, l, l_model, threshold, audit=None, nested=None) -> CheckResult:
    """:func:`check_table` on an engine source: aggregates by ``GROUP BY`` in the engine. ``qi`` and
    ``sensitive`` may be the command's text (``"a,b"``, ranges ``A:B``), parsed on the columns the
    table has once ``audit`` added the respondent column (the numpy command's order of errors)."""
    from tempanon.data.roles import parse_column_list

    tx = _Texts(src) if audit is None else _with_audit(src, audit, uid)
    qi = parse_column_list(qi, tx.columns) if isinstance(qi, str) else list(qi)
    sensitive = parse_column_list(sensitive, tx.columns) if sensitive is None or isinstance(sensitive, str) else list(sensitive)
    _check_request(k, l, l_model, sensitive)
    # the column checks of measure() (same messages): on the columns of an empty frame
    measure(pd.DataFrame({c: pd.Series(dtype=object) for c in tx.columns}), qi, uid=uid, sensitive=sensitive,
            threshold=threshold)  # fmt: skip
    if uid is not None and audit is None:
        row = src.first_missing_row(uid)
        if row is not None:
            from tempanon.data.lines import at_row_label

            _refuse_missing_uid(uid, at_row_label(row))
    # SQLSource.input_aggregates on the texts of _Texts: a histogram of the class sizes (and
    # respondents) over the classes, and the sensitive values as a histogram of count lists (_l_histogram)
    inner = _rows_query(src, tx, qi, uid=uid, numbered=False)
    risk = src._aggregates(inner, len(qi), uid=uid is not None, n_sensitive=0).risk(threshold)
    if sensitive and risk.rows:
        from tempanon.metrics.risk import l_from_pairs

        pairs, m, _ = _l_histogram(src, tx, qi, sensitive)
        ls = []
        for pc_, cnt in pairs:
            if int(m.sum()) != risk.classes or int((np.bincount(pc_, weights=cnt) * m).sum()) != risk.rows:
                raise ValueError("class aggregates: the sensitive counts do not cover the same classes and records as the sizes")
            ls.append(l_from_pairs(pc_, cnt))
        risk.l_distinct, risk.l_frequency, risk.l_entropy = (min(v) for v in zip(*ls))
    res = CheckResult(risk, qi, uid, sensitive, k, l, l_model)
    others = [c for c in tx.columns if c not in {*qi, *sensitive, uid}]
    nested = dict(nested or {})  # (nested columns with no role: listed, not screened, as on numpy)
    res.nested_columns = {c: nested[c] for c in others if c in nested}
    res.identifier_findings = _screen_source(src, tx, [c for c in others if c not in nested], uid)
    _failures(res, lambda got: _engine_k_example(src, tx, qi, uid, got),
              lambda: _engine_l_classes(src, tx, qi, sensitive, l_model, l))  # fmt: skip
    return res


def _with_audit(src, audit, uid: str | None) -> _Texts:
    """:func:`attach_audit` in the engine: the input with column ``uid`` holding each row's respondent
    from the steward-only audit of ``tempanon timestamped --audit`` (``release_row`` is the 1-based
    data row), as a view joined on the row numbers, after the same checks and messages (the audit is
    this release's: one row per release row, ``release_row`` 1, 2, ... in order)."""
    from tempanon.lattice.source_duckdb import AUDIT_RN
    from tempanon.temporal.api import check_audit_header

    if uid is None:
        raise InputError("--audit gives the respondents of each release row: name their column with --uid")
    if uid in src.columns:
        raise InputError(f"--uid {uid!r} is already a column of the table; with --audit name a new column")
    check_audit_header(audit)
    if src.engine == "spark":  # (its two lines of comments start with '#'; Spark's reader has no skip)
        with src._utc():
            src.spark.read.csv(str(audit), header=True, comment="#", quote='"', escape='"', inferSchema=False,
                               nullValue="").createOrReplaceTempView("tempanon_check_audit")  # fmt: skip
        src._made("tempanon_check_audit")
    else:
        src._exec(f"CREATE OR REPLACE TEMP VIEW tempanon_check_audit AS SELECT * FROM {src._audit_relation(str(audit))}")
    names = [f.name for f in src._arrow("SELECT * FROM tempanon_check_audit LIMIT 0").schema]
    if names != ["release_row", "input_line", "respondent"]:
        raise InputError(f"audit {audit}: expected columns release_row,input_line,respondent, got {', '.join(names)}")
    if AUDIT_RN in src.columns:
        raise InputError(f"the input has a column named {AUDIT_RN!r}, which the engine numbers rows with; rename it")
    a = src._numbered("tempanon_check_audit", names)
    n_audit, bad = src._rows(f"SELECT count(*) AS n, coalesce(sum(CASE WHEN TRY_CAST(a.release_row AS BIGINT) = a.{AUDIT_RN} + 1 "
                             f"THEN 0 ELSE 1 END), 0) AS bad FROM {a} a")[0]  # fmt: skip
    if int(n_audit) != src.n_rows or int(bad):
        raise InputError(f"the audit {audit} lists {int(n_audit)} release rows, the table has {src.n_rows}: "
                         f"it is not this release's audit")  # fmt: skip
    src._exec(f"CREATE OR REPLACE TEMP VIEW tempanon_check_rows AS SELECT s.*, coalesce(a.respondent, '') AS {src.q(uid)} "
              f"FROM {src._numbered('src', src.columns)} s JOIN {a} a ON s.{AUDIT_RN} = a.{AUDIT_RN}")  # fmt: skip
    return _Texts(src, "tempanon_check_rows", "tempanon_check_rows", [*src.columns, uid])


def _rows_query(src, tx: _Texts, qi: Sequence[str], *, uid: str | None = None, sensitive: Sequence[str] = (),
                numbered: bool = True) -> str:
    """A query of the input's rows: class key texts ``k0..``, ``u`` (respondent), ``x0..`` (sensitive),
    missing as the empty string, and (``numbered``) ``rn``, the row's number in file order (0-based:
    its file line is ``rn + 2``; the numbering of the steward audit)."""
    from tempanon.lattice.source_duckdb import AUDIT_RN

    cols = [f"{tx.key(q)} AS k{i}" for i, q in enumerate(qi)]
    if uid is not None:
        cols.append(f"{tx.key(uid)} AS u")
    cols += [f"{tx.key(c)} AS x{j}" for j, c in enumerate(sensitive)]
    if not numbered:
        return f"SELECT {', '.join(cols)} FROM {tx.rel} s"
    if AUDIT_RN in src.columns:
        raise InputError(f"the input has a column named {AUDIT_RN!r}, which the engine numbers rows with; rename it")
    cols.append(f"s.{AUDIT_RN} AS rn")
    return f"SELECT {', '.join(cols)} FROM {tx.numbered} s"


def _row_example(src, tx: _Texts, qi: Sequence[str], rn: int) -> str:
    """``_example_class``'s text for the row numbered ``rn`` (its values in the engine's text)."""
    from tempanon.lattice.source_duckdb import AUDIT_RN

    cols = ", ".join(f"{tx.text(q)} AS v{i}" for i, q in enumerate(qi))
    row = src._rows(f"SELECT {cols} FROM {tx.numbered} s WHERE s.{AUDIT_RN} = {int(rn)}")[0]
    parts = [f"{q}={'<missing>' if v is None else v}" for q, v in zip(qi, row)]
    return ", ".join(parts) + f" (line {int(rn) + 2})"  # the file line (header = line 1)


def _engine_k_example(src, tx: _Texts, qi: Sequence[str], uid: str | None, got: int) -> str:
    """The first record (file order) of a class of ``got`` records (respondents with ``uid``)."""
    keys = ", ".join(f"k{i}" for i in range(len(qi)))
    size = "count(DISTINCT u)" if uid is not None else "count(*)"
    rn = src._rows(f"SELECT min(f) AS f FROM (SELECT {size} AS n, min(rn) AS f FROM ({_rows_query(src, tx, qi, uid=uid)}) t "
                   f"GROUP BY {keys}) c WHERE n = {int(got)}")[0][0]  # fmt: skip
    return _row_example(src, tx, qi, rn)


def _l_histogram(src, tx: _Texts, qi: Sequence[str], sensitive: Sequence[str], *, first: bool = False) -> tuple[list, np.ndarray, np.ndarray | None]:
    """The sensitive values of the classes as a histogram: every class reduced to the sorted counts of
    its values in each sensitive column (``cs0..``), the classes grouped by those lists, ``m`` classes
    each (``f``: the first row of the first of them, with ``first``). A class's l of every model
    depends on those counts only, so the l's come from the few distinct lists, not one row per class
    (on a table of nearly one class per record, one row per class would be the whole table's worth).
    Returns per sensitive column the pairs ``(combination, count)`` of its lists, ``m`` and ``f``."""
    import pyarrow.compute as pc

    keys = [f"k{i}" for i in range(len(qi))]
    ks = ", ".join(keys)
    inner = _rows_query(src, tx, qi, sensitive=sensitive, numbered=first)
    sort_list = "array_sort(collect_list(c))" if src.engine == "spark" else "list_sort(list(c))"
    ctes = [f"t AS ({inner})"]
    for j in range(len(sensitive)):
        ctes.append(f"c{j} AS (SELECT {ks}, {sort_list} AS cs{', min(f) AS f' if first else ''} FROM (SELECT {ks}, x{j}, "
                    f"count(*) AS c{', min(rn) AS f' if first else ''} FROM t GROUP BY {ks}, x{j}) p GROUP BY {ks})")  # fmt: skip
    joins = " ".join(f"JOIN c{j} ON " + " AND ".join(f"c0.{k} = c{j}.{k}" for k in keys) for j in range(1, len(sensitive)))
    lists = ", ".join(f"c{j}.cs" for j in range(len(sensitive)))
    sel = ", ".join(f"c{j}.cs AS cs{j}" for j in range(len(sensitive)))
    tab = src._arrow(f"WITH {', '.join(ctes)} SELECT {sel}, count(*) AS m{', min(c0.f) AS f' if first else ''} "
                     f"FROM c0 {joins} GROUP BY {lists}")  # fmt: skip
    m = np.asarray(tab.column("m").to_numpy(), dtype=np.int64)
    pairs = []
    for j in range(len(sensitive)):
        col = tab.column(f"cs{j}")
        lengths = np.asarray(pc.list_value_length(col).to_numpy(zero_copy_only=False), dtype=np.int64)
        counts = np.asarray(pc.list_flatten(col).to_numpy(zero_copy_only=False), dtype=np.int64)
        pairs.append((np.repeat(np.arange(len(m), dtype=np.int64), lengths), counts))
    f = np.asarray(tab.column("f").to_numpy(), dtype=np.int64) if first else None
    return pairs, m, f


def _l_per_combination(pairs: list, model: str) -> np.ndarray:
    """Each combination's l under ``model`` (the smallest over the sensitive columns), computed from its
    sorted counts by the in-memory function (:func:`tempanon.metrics.risk._l_per_class`, summing the
    entropy in increasing count order as for a class: the same float)."""
    from tempanon.metrics.risk import _l_per_class

    out = None
    for pc_, cnt in pairs:
        distinct, l_freq, ent = _l_per_class(pc_, cnt)
        per = {"distinct": distinct, "frequency": l_freq,
               "entropy": np.floor(np.exp(ent) + 1e-9).astype(np.int64)}[model]  # fmt: skip
        out = per if out is None else np.minimum(out, per)
    return out


def _engine_l_classes(src, tx: _Texts, qi: Sequence[str], sensitive: Sequence[str], model: str,
                      l: int) -> tuple[int, Callable[[int], str]]:  # fmt: skip
    """``l_of_classes`` on the engine (:func:`_l_histogram`): the number of classes whose l under
    ``model`` is below ``l``, and the example (first row in file order) of a class of a given l."""
    pairs, m, f = _l_histogram(src, tx, qi, sensitive, first=True)
    per = _l_per_combination(pairs, model)

    def example(got: int) -> str:
        return _row_example(src, tx, qi, int(f[per == got].min()))

    return int(m[per < l].sum()), example


def _screen_source(src, tx: _Texts, columns: Sequence[str], uid: str | None, min_rows: int = 20) -> list:
    """:func:`tempanon.data.screen.screen_columns` on an engine source, with the same findings and
    texts: near-uniqueness from counts in the engine, names and value shapes from the column's
    distinct values (those the in-memory screening samples when there are more than it looks at:
    the same positions of the distinct values in order of first appearance)."""
    import pyarrow as pa

    from tempanon.data import screen
    from tempanon.lattice.source_duckdb import AUDIT_RN

    cols = [c for c in dict.fromkeys(columns) if c != uid]
    if not cols:
        return []
    # one scan for every column's present and distinct values, one for the distinct values of those
    # with few (GROUPING SETS: a column's values are the rows where it is not NULL)
    row = src._rows("SELECT " + ", ".join(f"count({tx.val(c)}) AS n{i}, count(DISTINCT {tx.distinct(c)}) AS d{i}"
                                          for i, c in enumerate(cols)) + f" FROM {tx.rel} s")[0]  # fmt: skip
    counts = {c: (int(row[2 * i]), int(row[2 * i + 1])) for i, c in enumerate(cols)}
    few = [c for c in cols if counts[c][1] <= screen._MAX_DISTINCT]
    few_values: dict = {}
    if few:
        sel = ", ".join(f"{tx.text(c)} AS t{i}" for i, c in enumerate(few))
        sets = ", ".join(f"({tx.text(c)})" for c in few)
        tab = src._arrow(f"SELECT {sel} FROM {tx.rel} s GROUP BY GROUPING SETS ({sets})")
        for i, c in enumerate(few):
            few_values[c] = [v for v in tab.column(f"t{i}").to_pylist() if v is not None]
    found = []
    for c in cols:
        v, text = tx.val(c), tx.distinct(c)
        n, d = counts[c]
        near = []
        if n >= min_rows and d >= 0.9 * n:
            near.append(f"near-unique per row ({d} distinct values in {n} rows)")
        elif uid is not None:
            # (SQLSource.respondent_uniqueness on the texts of _Texts) the distinct (respondent, present value)
            # pairs: respondents, those holding a value no other respondent has, distinct values
            n_resp, own, distinct = src._rows(
                f"WITH p AS (SELECT DISTINCT {tx.distinct(uid)} AS u, {text} AS v FROM {tx.rel} s WHERE {v} IS NOT NULL), "
                "h AS (SELECT v, count(*) AS c FROM p GROUP BY v) "
                "SELECT count(DISTINCT p.u) AS n, count(DISTINCT CASE WHEN h.c = 1 THEN p.u END) AS own, "
                "count(DISTINCT p.v) AS d FROM p JOIN h ON p.v = h.v"
            )[0]  # fmt: skip
            if n_resp >= min_rows and own >= 0.9 * n_resp and distinct >= 0.9 * n_resp:
                near.append(f"near-unique per respondent ({own} of {n_resp} respondents ({uid!r}) "
                            "carry a value no other respondent has)")  # fmt: skip
        if d > screen._MAX_DISTINCT:
            # the in-memory screening samples _MAX_DISTINCT of the distinct values (in order of first
            # appearance) by position, and the positions depend on their number only
            pos = pd.Series(np.arange(d, dtype=np.int64)).sample(screen._MAX_DISTINCT, random_state=0).to_numpy()
            src._register("tempanon_check_pos", pa.table({"pos": pa.array(np.sort(pos))}))
            values = src._arrow(
                f"SELECT p.t AS t FROM (SELECT t, row_number() OVER (ORDER BY r) - 1 AS pos FROM (SELECT {text} AS t, "
                f"min(s.{AUDIT_RN}) AS r FROM {tx.numbered} s WHERE {v} IS NOT NULL GROUP BY {text}) d) p "
                "JOIN tempanon_check_pos q ON p.pos = q.pos"
            ).column("t").to_pylist()  # fmt: skip
        else:
            values = few_values[c]
        shown = screen.screen_columns(pd.DataFrame({c: pd.Series(values, dtype=object)}), [c], min_rows=2**62)
        reasons = shown[0].reason.split("; ") if shown else []
        at = 1 if screen.identifier_name_token(c) is not None else 0  # screen_columns' order: name, uniqueness, values
        reasons[at:at] = near
        if reasons:
            found.append(screen.IdentifierFinding(str(c), "; ".join(reasons)))
    return found


def attach_audit(df: pd.DataFrame, audit: str, uid: str | None) -> pd.DataFrame:
    """The release ``df`` with column ``uid`` holding each row's respondent, taken from the
    steward-only audit of ``tempanon timestamped --audit`` (release_row is the 1-based data row),
    so that respondent-level k can be re-checked on a release that does not carry the uid."""
    from tempanon.temporal.api import read_audit

    if uid is None:
        raise InputError("--audit gives the respondents of each release row: name their column with --uid")
    if uid in df.columns:
        raise InputError(f"--uid {uid!r} is already a column of the table; with --audit name a new column")
    a = read_audit(audit)
    rows = pd.to_numeric(a["release_row"], errors="coerce")
    if len(a) != len(df) or rows.isna().any() or not (rows.to_numpy() == np.arange(1, len(df) + 1)).all():
        raise InputError(f"the audit {audit} lists {len(a)} release rows, the table has {len(df)}: "
                         f"it is not this release's audit")
    out = df.copy()
    out[uid] = a["respondent"].to_numpy()
    return out


__all__ = ["CheckResult", "ENGINES", "JSON_KEYS", "L_MODELS", "attach_audit", "check_engine", "check_table", "open_check_source"]
