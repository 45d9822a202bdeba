"""Out-of-core timestamped release on DuckDB (issue 15; Mascetti et al., TIME 2006, Algorithm 1).

:func:`anonymize_timestamped_file` runs the time-granularity search and the release of
:func:`tempanon.temporal.api.anonymize_timestamped` on a CSV or Parquet file **read in place by
DuckDB**: no pandas copy of the table is made, the driver holds only per-distinct-value tables.

* The file is the view ``src`` of a :class:`~tempanon.lattice.source_duckdb.DuckDBSource` whose
  connection is a DuckDB database file in a private temporary directory (so the materialized
  relation is buffer-managed and spills under ``memory_limit``).
* Timestamps are parsed **per distinct value** (``GROUP BY`` the column, with each value's row
  count): :func:`~tempanon.temporal.parse.parse_timestamps` with ``weights`` gives the same
  instants, counts and messages as on the whole column; the first file line of a bad value is
  looked up only when there is an error.
* The relation ``rel(q, t, u)`` (quasi-identifier combination code, instant, respondent) is
  created once in DuckDB from ``src`` and the distinct-value tables; Procedure 2 is then the same
  ``GROUP BY`` as the in-memory DuckDB path
  (:class:`~tempanon.lattice.source_temporal.DuckDBTimeSource`), so the search's results are the
  same as numpy's.
* The release is written by ``COPY (SELECT ...) TO`` a temporary file in the output's folder
  (rows grouped by class, ordered inside a class by a hash of the row salted with a fresh secret:
  never in input order, issue 12), **verified by an independent SQL query on the written file**
  (:func:`verify_written`), then renamed into place. If verification fails the temporary file is
  removed and nothing is written (:class:`~tempanon.errors.VerificationError`, exit 3).

The steward audit (``audit``: release row -> input line and respondent) is written by the engine
and checked row by row against the written release (:func:`write_release`; on Spark
``release_row`` counts the rows over the release's part files in name order, as for ``kanon``:
:mod:`tempanon.lattice.source_spark`, ``docs/engines.md``). With ``measures=True`` what the HTML
report measures is computed in the engine too (:mod:`tempanon.temporal.outofcore_report`).

With ``hierarchies`` the joint search of time and quasi-identifiers runs here too
(:mod:`tempanon.temporal.outofcore_joint`).

``engine="spark"``: the same queries in Spark SQL through a
:class:`~tempanon.lattice.source_spark.SparkSource` (the file read by Spark, ``rel`` or the joint
search's ``jbot`` cached in the session, :class:`~tempanon.lattice.source_temporal_spark.SparkTimeSource`,
:class:`~tempanon.lattice.source_temporal.DuckDBJointFileSource` over the Spark source), the release
written by Spark as a directory of part files, verified by the same SQL check, then renamed.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tempanon.data.io import replace_path
from tempanon.errors import InputError, VerificationError
from tempanon.temporal.api import said_boundary_notes
from tempanon.temporal.granularity import GAP, Granularity
from tempanon.temporal.least import least_generalization
from tempanon.temporal.parse import check_date_order


class _Rows:
    """Stands for the table in :func:`tempanon.temporal.api._summary` (which needs its length)."""

    def __init__(self, n: int):
        self.n = int(n)

    def __len__(self) -> int:
        return self.n


def _write(sq, query: str, path: str, parquet: bool) -> None:
    """Write the release query's result (module-level so tests can inject a faulty writer)."""
    sq._copy(query, path, parquet)



RN = "__tempanon_rn"  # the input row number (0-based, file order) of the numbered source
W = "__tempanon_w"  # the materialized release rows (write_release's materialize) and their sort keys


def write_release(sq, *, select: Sequence[str], body: str, order: Sequence[str], out, verify: Callable,
                  audit=None, uid: str | None = None, seed: int = 0,
                  before_release: Callable[[], None] | None = None, materialize: bool = False) -> dict:  # fmt: skip
    """Write ``SELECT select body ORDER BY order`` (``body`` starts with ``FROM src s``) to a temporary
    file beside ``out`` with DuckDB, ``verify(tmp, parquet, audit_tmp)`` it, then rename it (and the
    audit) into place; on any failure nothing is left. Returns ``verify``'s report.

    With ``audit`` (the steward's audit, issue 12: release row -> input line and respondent, never
    published) the source is numbered in file order, the row number is the order's last key (the
    order is total, so the release and the audit list the rows in the same order), and the audit is
    written by a second ``COPY`` of the same rows: two comment lines (steward-only label, the salt
    of the row order as the shuffle seed), then ``release_row,input_line,respondent`` as the
    in-memory path's (:func:`tempanon.temporal.api.audit_text`); ``verify`` checks it too.

    ``before_release`` (from :func:`_run_and_warn` through :func:`_run`), if given, is called first: what
    must be said before any release file exists (the respondent-id warning; as ``kanonymize``'s).

    ``materialize`` (DuckDB): the rows with their sort keys (and the audit's line and respondent) are
    first written to a temporary table, then sorted from it by the ``COPY``s: the joins and the sort
    in one query ran out of DuckDB's memory limit on the joint search's release (10M events at 100MB,
    the 100M-event benchmark at 2GB), each alone spills. Same rows in the same order."""
    from tempanon.lattice.source_duckdb import _is_parquet, _umask

    if before_release is not None:
        before_release()

    Q = sq.q  # the engine's identifier quoting
    target = Path(out)
    parquet = _is_parquet(target)
    order = list(order)
    if audit is not None:
        body = body.replace("FROM src s", f"FROM {sq._numbered('src', sq.columns)} s", 1)
        order.append(f"s.{RN}")
    resp = f"s.{Q(uid)}" if uid is not None else f"s.{RN} + 2"
    rows_body, line, who = body, f"s.{RN} + 2", resp
    if materialize and sq.engine == "duckdb":
        keys = [f"{W}o{i}" for i in range(len(order))]
        extra = [*(f"{o} AS {k}" for o, k in zip(order, keys)),
                 *([f"s.{RN} + 2 AS {W}line", f"{resp} AS {W}resp"] if audit is not None else [])]  # fmt: skip
        sq._exec(f"{sq.temp_result} {W}rows AS SELECT {', '.join([*select, *extra])} {body}")
        names = [f.name for f in sq._arrow(f"SELECT * FROM {W}rows LIMIT 0").schema if not f.name.startswith(W)]
        select, rows_body, order = [Q(c) for c in names], f"FROM {W}rows", keys
        line, who = f"{W}line", f"{W}resp"
    query = f"SELECT {', '.join(select)} {rows_body} ORDER BY {', '.join(order)}"
    tmps: list[str] = []
    failing = out  # the output being prepared (named in a write error: before, the release for the audit's too)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = sq._new_temp_path(target)
        tmps.append(tmp)
        atmp, holder = None, False
        if audit is not None:
            failing = audit
            atarget = Path(audit)
            atarget.parent.mkdir(parents=True, exist_ok=True)
            atmp = sq._new_audit_temp(atarget)
            tmps.append(atmp)
            tmps.append(atmp + ".rows")
            from tempanon.lattice.source_duckdb import audit_holder

            holder = audit_holder(atmp, atarget)
            if holder:
                tmps.append(str(Path(atmp).parent))
    except OSError as exc:
        from tempanon.data.io import write_error

        for t in tmps:
            Path(t).unlink(missing_ok=True)
        raise write_error(failing, exc) from exc
    try:
        _write(sq, query, tmp, parquet)
        if atmp is not None:
            from tempanon.temporal.api import AUDIT_HEADER

            head = (AUDIT_HEADER + "\n" + f"# shuffle seed: {seed}; respondent column: "
                    f"{uid or '(none: each row is a respondent, identified by its input line)'}\n")  # fmt: skip
            if sq.engine == "spark":  # no window over all rows: sorted parts numbered in name order (SparkSource)
                sq._write_numbered(atmp, head, f"SELECT s.{RN} + 2 AS input_line, {resp} AS respondent {body} "
                                               f"ORDER BY {', '.join(order)}", ["input_line", "respondent"])  # fmt: skip
            else:
                sq._copy(f"SELECT row_number() OVER (ORDER BY {', '.join(order)}) AS release_row, {line} AS input_line, "
                         f"{who} AS respondent {rows_body} ORDER BY release_row", atmp + ".rows", False)  # fmt: skip
                with open(atmp, "w", encoding="utf-8") as fh, open(atmp + ".rows", encoding="utf-8") as rows:
                    fh.write(head)
                    shutil.copyfileobj(rows, fh, 1 << 20)
                Path(atmp + ".rows").unlink()
        if rows_body != body:  # the materialized rows, no longer needed: their space freed for the verification
            sq._exec(f"DROP TABLE IF EXISTS {W}rows")
        report = verify(tmp, parquet, atmp)
        for t, dest in ((atmp, audit), (tmp, target)):  # the audit first: a release is never left without it
            if t is not None:
                if not Path(t).is_dir():  # (Spark writes a directory of part files)
                    os.chmod(t, 0o666 & ~_umask())
                replace_path(t, dest)  # an earlier Spark release of that name (a directory) is replaced
        if atmp is not None and holder:
            Path(atmp).parent.rmdir()  # the audit's temporary folder (Spark), now empty
    except BaseException:
        for t in tmps:
            shutil.rmtree(t, ignore_errors=True) if Path(t).is_dir() else Path(t).unlink(missing_ok=True)
        raise
    return report


def anonymize_timestamped_file(
    path: str | os.PathLike,
    *,
    out: str | os.PathLike,
    time: str,
    qi: Sequence[str] | str = (),
    uid: str | None = None,
    k: int,
    granularities=None,
    metric: str = "gen_c",
    max_suppression: float = 0.0,
    data_granularity: str | Granularity | None = None,
    country: str | None = None,
    parts=None,
    timezone: str | None = None,
    time_limit: float | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    announce: Callable[[str], None] | None = None,
    keep: Sequence[str] | str | None = (),
    drop: Sequence[str] | str | None = (),
    allow_identifier: Sequence[str] | str | None = (),
    sensitive: Sequence[str] | str | None = (),
    memory_limit: str | None = None,
    delimiter: str | None = None,
    threads: int | None = None,
    shuffle_seed: int | None = None,
    hierarchies: dict | None = None,
    max_driver_rows: int | None = None,
    audit: str | os.PathLike | None = None,
    engine: str = "duckdb",
    spark_master: str | None = None,
    measures: bool = False,
    date_order: str = "auto",
    warn: Callable[[str], None] | None = None,
    uid_option: str = "--uid",
    check_columns: Callable[[list[str]], None] | None = None,
):
    """Least respondent-level k-anonymous granularity of ``time`` for the table in the file
    ``path``, released to ``out`` (CSV, or Parquet by suffix) by DuckDB out of core; see the module
    docstring. ``engine="spark"``: the same queries in Spark SQL, the file read by Spark
    (``spark_master``, default a ``local[2]`` session) and the release written by Spark as a
    **directory** of part files named ``out``, verified by SQL on what was written, then renamed; an
    ``audit`` is written and checked by Spark too (:func:`write_release`). Returns a :class:`~tempanon.temporal.api.TimestampedResult` whose ``released`` is
    ``None`` (the release is the file) and whose summary has the keys of the in-memory path, with
    ``plan`` saying how it ran.

    ``audit``: the steward-only audit (release row -> input line and respondent, the salt of the
    row order as the shuffle seed; refused inside the release's folder), written by DuckDB and
    checked row by row against the written release and the input before both are renamed into
    place (:func:`write_release`).

    With ``hierarchies`` (quasi-identifier -> :class:`~tempanon.hierarchy.Hierarchy` or ARX file)
    time and those quasi-identifiers are generalized jointly (:mod:`tempanon.temporal.joint`), the
    search's frequency sets computed by DuckDB
    (:class:`~tempanon.lattice.source_temporal.DuckDBJointFileSource`; in the engine when the
    bottom set has more than ``max_driver_rows`` rows, default from the machine's memory).

    ``measures``: also compute, in the engine, what the HTML report measures (risk before and
    after, observed losses: :mod:`tempanon.temporal.outofcore_report`), returned as
    ``result.measures`` (the command's ``--report`` on this path).

    ``date_order``: as for :func:`~tempanon.temporal.api.anonymize_timestamped`; the distinct values
    are parsed on the driver by :func:`~tempanon.temporal.parse.parse_timestamps`, so DuckDB and Spark
    release the same instants as numpy (an undecided boundary file's note in ``summary["messages"]`` as
    there: :func:`~tempanon.temporal.api.said_boundary_notes`).

    Without ``uid``, a column that reads like a respondent id is warned about (``warning: ...``, naming
    ``uid_option``) through ``warn`` (default ``announce``) before the release is written.
    ``check_columns(columns)``: the caller's own check of the file's columns as the engine reads them
    (a job file's roles), before anything else is read."""
    import duckdb

    from tempanon.data.io import same_file
    from tempanon.lattice.source_duckdb import DuckDBSource

    from tempanon.data.io import check_input_file, refuse_nested_columns

    check_input_file(path, directory=True)

    # a nested Parquet column (list, struct, map) with a role: refused before DuckDB or Spark reads it
    refuse_nested_columns(path, {"time": [time], "uid": [uid] if uid else None, "qi": qi, "sensitive": sensitive,
                                 "keep": keep, "allow_identifier": allow_identifier})  # fmt: skip
    if same_file(out, path):
        raise InputError(f"the output {out} is the input: refusing to overwrite an input (nothing was read or written)")
    # as the command checks --out (checks only, nothing staged): out= a hierarchy file wrote the release over it, a
    # named pipe was replaced, out='r.xlsx' held CSV text (found in the uatb acceptance pass)
    from tempanon.data.io import OutputSet
    from tempanon.hierarchy.core import Hierarchy

    hier_inputs = []
    for h in (hierarchies or {}).values() if isinstance(hierarchies, dict) else ():
        if isinstance(h, Hierarchy) and h.lines is not None and os.path.isfile(h.source):
            h = h.source
        if isinstance(h, (str, os.PathLike)):
            hier_inputs.append(("hierarchy", h))
    OutputSet([path, *hier_inputs], {"out": out, "audit": audit}, tables={"out"},
              spark_releases={"out"} if engine == "spark" else ())
    if audit is not None:
        from tempanon.temporal.api import check_audit_path

        if same_file(audit, path):
            raise InputError(f"the audit {audit} is the input: refusing to overwrite an input (nothing was read or written)")
        check_audit_path(audit, out, [path])
    run = dict(out=out, time=time, qi=qi, uid=uid, k=k, granularities=granularities, metric=metric,
               max_suppression=max_suppression, data_granularity=data_granularity, country=country, parts=parts,
               timezone=timezone, time_limit=time_limit, progress=progress, announce=announce, keep=keep, drop=drop,
               allow_identifier=allow_identifier, sensitive=sensitive, memory_limit=memory_limit,
               shuffle_seed=shuffle_seed, hierarchies=hierarchies, max_driver_rows=max_driver_rows, audit=audit,
               measures=measures, date_order=check_date_order(date_order))  # fmt: skip
    if engine not in ("duckdb", "spark"):
        raise InputError(f"unknown engine {engine!r} for a file read in place; expected duckdb or spark")
    from tempanon.data.io import normalize_delimiter
    from tempanon.lattice.memory import check_memory_limit

    delimiter = normalize_delimiter(delimiter)  # one character (or 'tab', ...), before the engine's reader

    check_memory_limit(engine, memory_limit, spark_master=spark_master)  # before anything is read
    if engine == "spark":
        from tempanon.data.io import is_spark_release_dir

        target = Path(out)
        if target.is_dir() and not is_spark_release_dir(target):  # an earlier Spark release (or a file) is replaced
            raise InputError(f"{out} is a directory that does not hold an earlier Spark release (only part files, "
                             "_SUCCESS and their .crc files): Spark writes the release as a directory of part files "
                             "and replaces only an earlier one; remove it or choose another --out (nothing was read "
                             "or written)")  # fmt: skip
        from tempanon.lattice.source import spark_input_checks
        from tempanon.lattice.source_spark import SparkSource

        spark_input_checks(path)
        sq = SparkSource.from_path(path, master=spark_master, delimiter=delimiter, memory_limit=memory_limit)
        try:
            return said_boundary_notes(lambda notes: _run_and_warn(sq, run, notes, warn or announce, uid_option,
                                                                   check_columns, source=path))  # fmt: skip
        finally:
            # the run's cached tables first (each is re-analysed from the views it reads), then its views
            try:
                for name in ("small", "rel", "qdim", "jfs_batch", "jbot"):
                    sq._drop_materialized(name)
                for t in sq.spark.catalog.listTables():
                    if t.isTemporary and (t.name in ("tval", "tlab", "vlab", "gdim", "jsmall")
                                          or t.name.startswith(("jkey", "jlvl", "jrdim", "vmap"))):  # fmt: skip
                        sq.spark.catalog.dropTempView(t.name)
            except Exception:  # pragma: no cover - a driver that stopped: the original error is what counts
                pass
            sq.close()
    if engine != "duckdb":
        raise InputError(f"unknown engine {engine!r} for a file read in place; expected duckdb or spark")
    # the work database in a new folder of the temporary folder: one DuckDB cannot make or open there (the
    # folder full, not writable, gone) is no fault of the input: an I/O error on the engine's own files,
    # its failure (exit 4), as docs/engines.md classifies those (source_duckdb.engine_error)
    from tempanon.lattice.source_duckdb import TEMP_FOLDER_HINT as hint
    from tempanon.lattice.source_duckdb import EngineFailure, _first_line

    try:
        workdir = tempfile.mkdtemp(prefix="tempanon-ts-")
    except OSError as exc:
        raise EngineFailure(f"the DuckDB engine failed (an engine failure, not the input): cannot make its work folder "
                            f"in the temporary folder {tempfile.gettempdir()}: {exc}{hint}") from exc  # fmt: skip
    try:
        try:
            con = duckdb.connect(os.path.join(workdir, "work.duckdb"))
        except duckdb.Error as exc:
            raise EngineFailure(f"the DuckDB engine failed (an engine failure, not the input): cannot open its work "
                                f"database in {workdir}: {_first_line(exc)}{hint}") from exc  # fmt: skip
        sq = DuckDBSource(path, memory_limit=memory_limit, delimiter=delimiter, threads=threads, connection=con)
        try:
            return said_boundary_notes(lambda notes: _run_and_warn(sq, run, notes, warn or announce, uid_option,
                                                                   check_columns, source=path))  # fmt: skip
        except duckdb.Error as exc:  # the input's (exit 2) or the engine's (exit 4: out of memory, an internal error)
            from tempanon.lattice.source_duckdb import engine_error

            raise engine_error(path, exc) from exc
        finally:
            sq.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run_and_warn(sq, run: dict, notes: list[str], warn: Callable[[str], None] | None = None,
                  uid_option: str = "--uid", check_columns: Callable[[list[str]], None] | None = None,
                  source: str | os.PathLike | None = None):
    """:func:`_run` (``notes``: the list :func:`~tempanon.temporal.api.boundary_notes` fills, said by
    :func:`~tempanon.temporal.api.said_boundary_notes`); without a ``uid``, the command's warning of a column that reads like a
    respondent id (values that repeat over the rows), counted by the engine
    (:func:`tempanon.steward.init.respondent_id_warning_engine`), said through ``warn`` as
    ``warning: ...`` (the in-memory command's text; ``uid_option`` names the respondent id) once the
    search has found the release and before it is written (``before_release`` of :func:`write_release`,
    passed through :func:`_run`). ``check_columns``: called with the source's columns first. ``source``:
    the input file, named if it has no rows."""
    if check_columns is not None:
        check_columns(list(sq.columns))
    before_release: Callable[[], None] | None = None
    if run["uid"] is None and warn is not None:
        def id_warning() -> None:
            from tempanon.data.roles import parse_column_list
            from tempanon.steward.init import respondent_id_warning_engine

            roles = [c for x in (run["qi"], run["keep"], run["sensitive"]) for c in parse_column_list(x, sq.columns)]
            hint = respondent_id_warning_engine(sq, [run["time"], *roles], option=uid_option)
            if hint:
                warn(f"warning: {hint}")

        before_release = id_warning
    return _run(sq, **run, notes=notes, before_release=before_release, source=source)


def _as_read_text(values: pd.Series) -> pd.Series:
    """Typed timestamps as the in-memory path reads them (:func:`tempanon.data.io.read_table`,
    ``as_text``: Python's ``str`` of each value, missing kept), so that parsing gives the same
    instants, time-zone handling and notes: a time-zone-aware Parquet column is one with UTC
    offsets, not one in the zone of the engine's session (DuckDB gives such values in its own
    zone, e.g. ``Etc/UTC``, which the file never named)."""
    if not pd.api.types.is_datetime64_any_dtype(values.dtype):
        return values
    from tempanon.data.io import parquet_as_text

    out = parquet_as_text(values.to_frame(name="v"))["v"]  # (on whole arrays: timestamp_texts)
    out.name = values.name
    return out


def _check_shuffle_seed(shuffle_seed) -> None:
    """Refuse a shuffle seed that is not a non-negative integer (where the in-memory path does)."""
    if shuffle_seed is not None and (isinstance(shuffle_seed, bool) or not isinstance(shuffle_seed, (int, np.integer))
                                     or shuffle_seed < 0):
        raise InputError(f"the shuffle seed must be a non-negative integer (got {shuffle_seed!r})")


def _run(sq, *, out, time, qi, uid, k, granularities, metric, max_suppression, data_granularity, country, parts,
         timezone, time_limit, progress, announce, keep, drop, allow_identifier, sensitive, memory_limit,
         shuffle_seed=None, hierarchies=None, max_driver_rows=None, audit=None, measures=False,
         date_order="auto", notes=None, before_release=None, source=None):  # fmt: skip
    """The search and the release on the engine's source ``sq`` (see :func:`anonymize_timestamped_file`);
    ``before_release`` is handed to :func:`write_release`."""
    import pyarrow as pa

    from tempanon.data.roles import parse_column_list, plan_release, require_columns_list
    from tempanon.kanon.api import _screen
    from tempanon.lattice.source_temporal import DuckDBTimeSource
    from tempanon.temporal.api import _summary, _validate, boundary_notes, given_granularity, parse_granularities
    from tempanon.temporal.parse import data_granularity_of, parse_timestamps
    from tempanon.temporal.relations import build_dag, span_of

    notes = [] if notes is None else notes  # (undecided boundary files' notes: said by said_boundary_notes)
    Q = sq.q  # the engine's identifier quoting
    cols = sq.columns
    # column lists may be given as the command line's text ("a,b" or ranges "A0:A9", in file order)
    qi, keep, drop, allow_identifier, sensitive = (parse_column_list(x, cols) for x in (qi, keep, drop, allow_identifier,
                                                                                       sensitive))  # fmt: skip
    _validate(pd.DataFrame(columns=cols, index=[0]), time, qi, uid, k, metric, max_suppression, bool(hierarchies))
    if isinstance(hierarchies, (str, os.PathLike)):  # a folder of <column>.csv (the command's --hierarchies)
        from tempanon.temporal.joint import load_hierarchies

        hierarchies = load_hierarchies(hierarchies, qi)
    hierarchies = dict(hierarchies or {})
    unknown = [h for h in hierarchies if h not in qi]
    if unknown:
        raise InputError(f"hierarchy given for {', '.join(map(repr, unknown))}, which is not a quasi-identifier")
    n = sq.n_rows
    if n == 0:
        raise InputError("the input table has no rows" + (f": {source}" if source is not None else ""))
    require_columns_list(cols, sensitive, role="sensitive column")
    for c in sensitive:
        if c in qi or c in (time, uid):
            raise InputError(f"column {c!r} cannot be both sensitive and a quasi-identifier, the time or the uid")
    release_cols, left_out = plan_release(cols, released=[*qi, time, *sensitive], keep=keep, drop=drop,
                                          consumed=[uid] if uid else [])  # fmt: skip
    require_columns_list(cols, allow_identifier, role="--allow-identifier column")
    _check_shuffle_seed(shuffle_seed)
    if time_limit is not None and not float(time_limit) > 0:
        raise InputError(f"time limit must be a positive number of seconds (got {time_limit})")

    # ---- timestamps, per distinct value -----------------------------------------------------------
    tq = f"s.{Q(time)}"
    tab = sq._arrow(f"SELECT {tq} AS v, count(*) AS n FROM src s GROUP BY ALL")
    vcol = tab.column("v").combine_chunks()
    values = _as_read_text(vcol.to_pandas())
    weights = tab.column("n").to_numpy().astype(np.int64)

    def first_rows() -> tuple[pd.Series, np.ndarray, np.ndarray]:
        """The distinct values ordered by first occurrence, with weights and 0-based first rows."""
        t2 = sq._arrow(f"SELECT v, count(*) AS n, min(rn) AS r FROM (SELECT {tq} AS v, {sq.row_number} AS rn FROM src s) x "
                       "GROUP BY v ORDER BY r")  # fmt: skip
        return (_as_read_text(t2.column("v").combine_chunks().to_pandas()), t2.column("n").to_numpy().astype(np.int64),
                t2.column("r").to_numpy().astype(np.int64))  # fmt: skip

    try:
        instants, missing, tinfo = parse_timestamps(values, time, timezone, weights=weights, date_order=date_order)
    except InputError:  # again in file order, for the line of the first bad row
        v2, w2, r2 = first_rows()
        parse_timestamps(v2, time, timezone, weights=w2, rows=r2, date_order=date_order)
        raise
    if tinfo.get("date_order_note"):  # its example's line: in file order
        v2, w2, r2 = first_rows()
        tinfo["date_order_note"] = parse_timestamps(v2, time, timezone, weights=w2, rows=r2,
                                                    date_order=date_order)[2]["date_order_note"]
    data_granularity = given_granularity(data_granularity, country=country, parts=parts, date_order=date_order)
    boundary_notes([data_granularity], notes)
    g0 = data_granularity_of(data_granularity, instants, missing, country=country, parts=parts, date_order=date_order)
    z0 = g0.index(instants)
    if ((z0 == GAP) & ~missing).any():
        v2, w2, r2 = first_rows()
        i2, m2, _ = parse_timestamps(v2, time, timezone, weights=w2, rows=r2, date_order=date_order)
        j = int(np.nonzero((g0.index(i2) == GAP) & ~m2)[0][0])
        raise InputError(f"column {time!r}, line {int(r2[j]) + 2}: {v2.iloc[j]!r} lies in no granule of the "
                         f"data granularity {g0.name}")  # fmt: skip
    cands = parse_granularities(granularities, country=country, parts=parts, date_order=date_order, warn=False)
    boundary_notes(cands, notes)
    dag = build_dag(g0, cands, span_of(instants[~missing]))
    # the respondent ids and the identifier screening after the timestamps and the granularities, as the
    # in-memory path checks them (encode_uid, refuse_identifiers): an input with several problems is
    # refused for the same one on every engine
    if uid is not None:
        row = sq.first_missing_row(uid)
        if row is not None:
            raise InputError(f"column {uid!r}, line {int(row) + 2}: the respondent identifier is missing")
    # identifier screening of the columns released unchanged (the quasi-identifiers without a
    # hierarchy; those with one if the search leaves them at level 0, after it), before the search
    overrides = _screen(sq, [*keep, *(q for q in qi if q not in hierarchies)], allow_identifier, uid, time)
    max_suppressed = int(np.floor(float(max_suppression) * n + 1e-9))
    if hierarchies:
        from tempanon.temporal.outofcore_joint import run_joint

        return run_joint(sq, out=out, time=time, qi=qi, uid=uid, k=int(k), hierarchies=hierarchies, dag=dag,
                         vcol=vcol, values=values, instants=instants, missing=missing, z0=z0, tinfo=tinfo,
                         metric=metric, max_suppression=max_suppression, max_suppressed=max_suppressed,
                         time_limit=time_limit, progress=progress, announce=announce, keep=keep, drop=drop,
                         sensitive=sensitive, left_out=left_out, release_cols=release_cols,
                         allow_identifier=allow_identifier, overrides=overrides, memory_limit=memory_limit,
                         shuffle_seed=shuffle_seed, timezone=timezone, max_driver_rows=max_driver_rows,
                         audit=audit, measures=measures, before_release=before_release)  # fmt: skip

    # ---- the relation rel(q, t, u) in DuckDB ------------------------------------------------------
    distinct, inv = np.unique(instants[~missing], return_inverse=True)  # one sort of the distinct values
    ti = np.zeros(len(instants), dtype=np.int32)
    ti[~missing] = inv.ravel()
    sq._register("tval", pa.table({"v": vcol, "ti": pa.array(ti, mask=missing)}))
    if qi:
        qsel = ", ".join(f"s.{Q(c)} AS a{j}" for j, c in enumerate(qi))
        # The combinations are numbered in the order of their values, on every engine: the code is the
        # release's first sort key, so the class order reaches the written file. A ``SELECT DISTINCT``
        # comes back in whatever order the engine's threads (Spark: partitions, and a recomputation)
        # produce its groups, and ``row_number() OVER ()`` over it gave a different file on every run
        # with the same --shuffle-seed (tests/engine/test_engine_deterministic.py). The combinations
        # are distinct, so the order is total.
        qnum = f"row_number() OVER (ORDER BY {', '.join(f'a{j}' for j in range(len(qi)))}) - 1"
        sq._materialize("qdim", f"SELECT *, {qnum} AS q FROM (SELECT DISTINCT {qsel} FROM src s) x")
        qjoin = "JOIN qdim qd ON " + " AND ".join(f"s.{Q(c)} IS NOT DISTINCT FROM qd.a{j}" for j, c in enumerate(qi))
        qexpr = "qd.q"
    else:
        qjoin, qexpr = "", "0"
    uexpr = f"{sq.value_expr(uid)}" if uid is not None else sq.row_number
    # Procedure 2's relation, prepared once (DuckDBTimeSource.PREPARE: dense time index, the same
    # respondent's previous tuple with the same QI values)
    rel = (f"SELECT q, ti, lag(ti) OVER w AS tpi, row_number() OVER w = 1 AS first FROM "
           f"(SELECT {qexpr} AS q, tv.ti AS ti, {uexpr} AS u FROM src s {qjoin} JOIN tval tv ON {tq} IS NOT DISTINCT "
           "FROM tv.v) x WINDOW w AS (PARTITION BY q, u ORDER BY ti NULLS FIRST)")  # fmt: skip
    if sq.engine == "duckdb":
        sq._exec(f"CREATE TABLE rel AS {rel}")  # in the work database file: buffer-managed, spills
    else:
        sq._materialize("rel", rel)
    if uid is None:
        n_respondents = n
    elif not qi:  # one QI combination: each respondent's first tuple is counted once
        n_respondents = int(sq._rows("SELECT count(*) FILTER (WHERE first) AS n FROM rel")[0][0])
    else:
        n_respondents = int(sq._rows(f"SELECT count(DISTINCT {sq.value_expr(uid)}) AS n FROM src s")[0][0])
    from tempanon.temporal.api import refuse_k_above_respondents

    refuse_k_above_respondents(int(k), n_respondents, uid)  # as the in-memory search says it

    def gap_error(g, bad):
        v2, w2, r2 = first_rows()
        i2, m2, _ = parse_timestamps(v2, time, timezone, weights=w2, rows=r2, date_order=date_order)
        j = int(np.nonzero(~m2 & np.isin(i2, bad))[0][0])
        raise InputError(f"timestamp on line {int(r2[j]) + 2} lies in no granule of {g.name}")

    eng = "DuckDB" if sq.engine == "duckdb" else "Spark"
    if announce is not None:
        announce(f"searching {len(dag.nodes)} granularities (the data's {dag.nodes[0].name} and {len(dag.nodes) - 1} "
                 f"coarser) on {eng}, the file read in place"
                 f"{'; at most ' + format(time_limit, 'g') + ' s (--time-limit)' if time_limit else ''}")  # fmt: skip
    if sq.engine == "duckdb":
        src = DuckDBTimeSource.on_relation(sq.con, n, distinct, memory_limit=memory_limit, gap_error=gap_error)
    else:
        from tempanon.lattice.source_temporal_spark import SparkTimeSource

        src = SparkTimeSource.on_relation(sq.spark, n, distinct, gap_error=gap_error)
    res = least_generalization(None, dag, k, metric=metric, max_suppressed=max_suppressed,  # type: ignore[arg-type]
                               time_limit=time_limit, progress=progress, check=src.check)  # fmt: skip
    chosen = dag.nodes[res.chosen]
    final = src.check(chosen, k, max_suppressed)

    # ---- the release, written by DuckDB -----------------------------------------------------------
    sq._materialize("small", src.small_classes_sql(chosen, k))
    g_val = np.where(missing, 0, chosen.index(np.where(missing, instants[~missing][0] if (~missing).any() else 0, instants)))
    labels = np.empty(len(instants), dtype=object)
    labels[~missing] = chosen.labels_of(instants[~missing])
    labels[missing] = None
    sq._register("tlab", pa.table({"v": vcol, "g": pa.array(g_val, mask=missing),
                                   "label": pa.array(labels.tolist(), pa.string())}))  # fmt: skip
    out_cols = [c for c in cols if c in set(release_cols)]
    from tempanon.lattice.source_duckdb import _is_parquet

    # a CSV of one column writes a missing value as an empty line, which readers skip: write "" there
    tlabel = "coalesce(tl.label, '')" if len(out_cols) == 1 and not _is_parquet(Path(out)) else "tl.label"
    sel = [f"{tlabel} AS {Q(c)}" if c == time else f"s.{Q(c)}" for c in out_cols]
    salt = secrets.randbelow(2**62) if shuffle_seed is None else int(shuffle_seed) % 2**62
    row_hash = "hash(" + ", ".join([*(f"CAST(s.{Q(c)} AS {sq.text_type})" for c in out_cols if c != time), "tl.label",
                                    str(salt)]) + ")"  # fmt: skip
    body = (f"FROM src s {qjoin} JOIN tlab tl ON {tq} IS NOT DISTINCT FROM tl.v "
            f"{sq.anti_join} small m ON {qexpr} = m.q AND tl.g IS NOT DISTINCT FROM m.g")  # fmt: skip

    def verify(tmp, parquet, audit_tmp):
        return verify_written(sq, tmp, parquet, time=time, qi=qi, uid=uid, k=int(k), out_cols=out_cols, values=values,
                              vcol=vcol, instants=instants, missing=missing, granularity=chosen, timezone=timezone,
                              n_input=n, max_suppressed=max_suppressed, expected_rows=n - final.suppressed,
                              audit=audit_tmp, measures=measures)  # fmt: skip

    report = write_release(sq, select=sel, body=body, order=[*([qexpr] if qi else []), "tl.g", row_hash], out=out,
                           verify=verify, audit=audit, uid=uid, seed=salt, before_release=before_release)  # fmt: skip
    measured = report.pop("measures", None)

    # ---- summary, as the in-memory path's ----------------------------------------------------------
    from tempanon.temporal.api import TimestampedResult

    all_checks = [res.checks.get(v) for v in range(len(dag.nodes))]
    summary = _summary(_Rows(n), dag, res, all_checks, final, k=k, uid=uid, time=time, qi=qi, metric=metric,
                       max_suppression=max_suppression, max_suppressed=max_suppressed, tinfo=tinfo,
                       respondents=n_respondents, report=report)  # fmt: skip
    finish_summary(summary, report, k=k, uid=uid, time=time, qi=qi, keep=keep, sensitive=sensitive,
                   left_out=left_out, drop=drop, overrides=overrides, tinfo=tinfo, shuffle_seed=shuffle_seed,
                   audit=audit)  # fmt: skip
    if getattr(res, "budget_exhausted", False):
        summary["budget"] = {"exhausted": True, "checked": len(res.checks), "not_reached": len(res.not_reached),
                             "note": "the time limit stopped the search: the release is the best verified among the "
                                     "granularities checked, not necessarily the least"}  # fmt: skip
        summary["messages"].append(summary["budget"]["note"])
    summary["plan"] = {**src.describe(), "input": f"{sq.input} read in place by {eng}" + (" (out of core)" if eng == "DuckDB" else ""),
                       "release": (f"written by {eng} to a temporary " + ("file" if eng == "DuckDB" else "directory of part files")
                                   + ", verified by SQL on what was written, renamed into place")}  # fmt: skip
    if eng == "Spark":
        summary["plan"]["path"] = "the file read by Spark, frequency sets in engine"
    return TimestampedResult(None, summary, dag, chosen.name, measures=measured)  # type: ignore[arg-type]


def finish_summary(summary: dict, report: dict, *, k, uid, time, qi, keep, sensitive, left_out, drop, overrides,
                   tinfo, shuffle_seed, audit) -> None:  # fmt: skip
    """The entries every out-of-core summary (time alone or joint) adds to the search's: what was
    verified and the roles, the calendar time zone, the row order."""
    from tempanon.data.roles import verification_statement

    g = f"respondent-level {int(k)}-anonymity" + (f" ({uid!r})" if uid else "")
    statement = verification_statement(g, [*qi, time], insensitive=keep, overrides=overrides, left_out=left_out,
                                       dropped=drop)  # fmt: skip
    summary["verification"] = {**report, **statement}
    summary["keep"], summary["sensitive"], summary["left_out"] = list(keep), list(sensitive), list(left_out)
    summary["timezone"] = tinfo.get("calendar_timezone") or (
        "UTC (converted)" if "converted" in tinfo.get("timezone", "") else "none (naive wall clock as given)")
    if tinfo.get("note"):
        summary["messages"].append(tinfo["note"])
    from tempanon.temporal.api import date_order_summary

    date_order_summary(summary, tinfo)
    summary["row_order"] = row_order(shuffle_seed, audit)
    from tempanon.temporal.api import STEWARD_ONLY

    summary["steward_only"] = STEWARD_ONLY


def row_order(shuffle_seed, audit) -> str:
    """The summary's ``row_order`` of an out-of-core release."""
    return ("grouped by class, ordered within classes by a hash of the row salted with "
            + ("the given --shuffle-seed" if shuffle_seed is not None else
               "a fresh secret (recorded in the steward audit only)" if audit is not None else
               "a fresh secret (not recorded: no --audit)"))  # fmt: skip


def verify_written(sq, path: str, parquet: bool, *, time: str, qi: Sequence[str], uid: str | None, k: int,
                   out_cols: Sequence[str], values: pd.Series, vcol, instants: np.ndarray, missing: np.ndarray,
                   granularity: Granularity, timezone: str | None, n_input: int, max_suppressed: int,
                   expected_rows: int, qi_maps: dict | None = None, audit: str | None = None,
                   measures: bool = False) -> dict:  # fmt: skip
    """Independent check of the written release (Definition 4), by SQL on the file and the input.

    Uses neither the search's relation, codes nor frequency sets: each input row's expected time
    label is recomputed per distinct timestamp with pandas' calendar code (built-in
    granularities; otherwise the granularity's labels, checked to form contiguous blocks in time),
    the input's classes (quasi-identifier text, expected label) are counted in DuckDB with their
    distinct respondents and a fingerprint (sum of row hashes) of the rows they would release, and
    compared with the classes counted in the written file. Checks: the file's columns are the
    release's (no respondent id); every released class is a whole input class (same row count and
    same rows by fingerprint: other columns unchanged, labels right, missing times missing) with
    at least ``k`` distinct respondents; at most ``max_suppressed`` rows are missing; the row count
    is the search's. ``qi_maps`` (joint search): quasi-identifier -> ``{value text: released
    text}`` from the hierarchy file (:meth:`Hierarchy.mapping` at the released level); those
    quasi-identifiers' expected values come from it, text to text (a value it lacks is refused).
    ``audit`` (a written steward audit, :func:`write_release`): its rows are the release's rows
    1..N in order, each naming a distinct input line whose respondent it states and whose expected
    generalized row is exactly the release's row. ``measures``: after the checks pass, the report's
    aggregates (:func:`tempanon.temporal.outofcore_report.measure_written`) under the key
    ``"measures"`` (the caller removes it before the dict goes into the summary). Raises
    :class:`~tempanon.errors.VerificationError`."""
    import pyarrow as pa

    from tempanon.temporal.api import reference_times
    from tempanon.verify import _expected_time_labels

    Q = sq.q  # the engine's identifier quoting
    read = sq._read_written(path, parquet)
    file_cols = [f.name for f in sq._arrow(f"SELECT * FROM {read} LIMIT 0").schema]
    if uid is not None and uid in file_cols:
        raise VerificationError(f"the respondent identifier {uid!r} is published")
    if file_cols != list(out_cols):
        raise VerificationError(f"released columns {file_cols} are not the release's columns {list(out_cols)}")
    # expected labels of the distinct timestamps, recomputed
    times = reference_times(values.reset_index(drop=True), instants, missing, timezone)
    present = ~missing
    expected = _expected_time_labels(times[present], granularity.name)
    lab = np.empty(len(values), dtype=object)
    lab[missing] = None
    if expected is not None:
        lab[present] = expected.astype(str).to_numpy()
        if granularity.name == "business-day" and bool((times[present].dt.day_of_week >= 5).any()):
            raise VerificationError("a weekend timestamp is released as a business day")
        how = "recomputed"
    else:
        own = granularity.labels_of(instants[present])
        seq = pd.Series(own).iloc[np.argsort(instants[present], kind="stable")]
        seq = seq[~pd.Series(instants[present][np.argsort(instants[present], kind="stable")]).duplicated().to_numpy()]
        if int(seq.ne(seq.shift()).sum()) != seq.nunique():
            raise VerificationError("released time labels interleave in time: they are not the granules of one granularity")
        lab[present] = own
        how = "contiguous"
    # each joined label text also as an integer id (ids of the texts, "" included; li: the id of the row's
    # text, "" for a missing label): DuckDB groups by the ids, the texts joined back per class (below)
    ids: dict = {}  # the id tables: name -> (ids, texts)

    def text_ids(name, texts):
        uniq = sorted(set(texts) | {""})
        ids[name] = uniq
        at = {t: i for i, t in enumerate(uniq)}
        return pa.array([at[t] for t in texts], pa.int64()), at[""]

    lab_ids, _ = text_ids("vlabid", ["" if x is None else x for x in lab.tolist()])
    sq._register("vlab", pa.table({"v": vcol, "label": pa.array(lab.tolist(), pa.string()), "li": lab_ids}))
    txt = lambda e: f"coalesce(CAST({e} AS {sq.text_type}), '')"  # noqa: E731
    qi_maps = dict(qi_maps or {})
    key_ids: dict = {}  # quasi-identifier -> (its id expression, its id table)
    # A typed timestamp column's text (numpy's, SQLSource.text_expr) is computed once per distinct value,
    # in the map of its distinct values to their text (SQLSource._timestamp_map), joined by the typed value
    stamps = sq._timestamp_kinds("src")
    expect, mjoin = {}, ""
    for j, c in enumerate(out_cols):  # (a column released unchanged: as written)
        if c in stamps and c != time and c not in qi_maps:
            mjoin += f" JOIN {sq._timestamp_map(c)} tm{j} ON s.{Q(c)} IS NOT DISTINCT FROM tm{j}.v"
            expect[c] = f"tm{j}.t"
        else:
            expect[c] = sq.released_text("s", c)
    expect[time] = "coalesce(vl.label, '')"
    for i, (c, mp) in enumerate(qi_maps.items()):
        m_ids, empty = text_ids(f"vmapid{i}", [str(x) for x in mp.values()])
        sq._register(f"vmap{i}", pa.table({"t": pa.array(list(mp), pa.string()), "label": pa.array(list(mp.values()), pa.string()),
                                           "li": m_ids}))  # fmt: skip
        key_ids[c] = (f"coalesce(vm{i}.li, {empty})", f"vmapid{i}")
        if c in stamps:
            bad = sq._rows(f"SELECT x.t AS v FROM {sq._timestamp_map(c)} x {sq.anti_join} vmap{i} m ON x.t = m.t LIMIT 1")
        else:
            bad = sq._rows(f"SELECT {sq.text_expr(c)} AS v FROM src s {sq.anti_join} vmap{i} m ON {sq.text_expr(c)} = m.t LIMIT 1")
        if bad:
            raise VerificationError(f"column {c!r}: the input value {bad[0][0]!r} has no generalization in its hierarchy")
        mjoin += " " + sq.text_join(c, f"vmap{i}", f"vm{i}")  # (the text the hierarchy is keyed by: a typed timestamp's is numpy's)
        expect[c] = f"coalesce(vm{i}.label, '')"
    keys_in = [expect[c] for c in qi] + ["coalesce(vl.label, '')"]
    # the written text: a typed timestamp column of the release from its map too (SQLSource.mapped_text)
    written, rjoin = _written_texts(sq, out_cols, read)
    keys_out = [written[c] for c in qi] + [txt(f"f.{Q(time)}")]
    fp_in = "hash(" + ", ".join(expect[c] for c in out_cols) + ")"
    fp_out = "hash(" + ", ".join(written[c] for c in out_cols) + ")"
    names = [f"k{j}" for j in range(len(keys_in))]
    inputs = f"FROM src s JOIN vlab vl ON s.{Q(time)} IS NOT DISTINCT FROM vl.v{mjoin}"
    if uid is not None and sq.engine == "duckdb":
        # distinct respondents per class as a GROUP BY of (class, respondent), then of the class, with the
        # joined label texts (time, hierarchy) grouped by their integer ids and joined back per class:
        # count(DISTINCT) per class, and text keys from the joins, ran out of DuckDB's memory limit (the
        # joint search's verification, 10M events at 100MB; 100M at 2GB), this spills. count(x.u) leaves
        # a missing id out, as count(DISTINCT) does
        coded = [key_ids[c] if c in key_ids else (expect[c], None) for c in qi] + [("vl.li", "vlabid")]
        for name, texts in ids.items():
            sq._register(name, pa.table({"li": pa.array(range(len(texts)), pa.int64()), "label": pa.array(texts, pa.string())}))
        back = [f"d{j}.label AS {n}" if tab else f"y.{n}" for j, ((_, tab), n) in enumerate(zip(coded, names))]
        djoin = "".join(f" JOIN {tab} d{j} ON y.{n} = d{j}.li" for j, ((_, tab), n) in enumerate(zip(coded, names)) if tab)
        sq._exec(f"{sq.temp_result} v_expected AS SELECT {', '.join(back)}, y.n, y.sz, y.h FROM ("
                 f"SELECT {', '.join(names)}, CAST(sum(x.n) AS BIGINT) AS n, count(x.u) AS sz, sum(x.h) AS h FROM ("
                 f"SELECT {', '.join(f'{e} AS {n}' for (e, _), n in zip(coded, names))}, {sq.value_expr(uid)} AS u, count(*) AS n, "
                 f"sum({fp_in}) AS h {inputs} GROUP BY ALL) x GROUP BY {', '.join(names)}) y{djoin}")  # fmt: skip
    else:  # (not one form for both: Spark already plans this count(DISTINCT) as the GROUP BY (class, respondent),
        # then class, above, in aggregates that spill (AggUtils.planAggregateWithOneDistinct); without a uid, count(*))
        resp = f"count(DISTINCT {sq.value_expr(uid)})" if uid is not None else "count(*)"
        sq._exec(f"{sq.temp_result} v_expected AS SELECT {', '.join(f'{e} AS {n}' for e, n in zip(keys_in, names))}, "
                 f"count(*) AS n, {resp} AS sz, sum({fp_in}) AS h {inputs} GROUP BY ALL")  # fmt: skip
    sq._exec(f"{sq.temp_result} v_released AS SELECT {', '.join(f'{e} AS {n}' for e, n in zip(keys_out, names))}, "
             f"count(*) AS n, sum({fp_out}) AS h FROM {read} f{rjoin} GROUP BY ALL")  # fmt: skip
    on = " AND ".join(f"r.{c} = e.{c}" for c in names)
    rows = sq._rows(f"SELECT {', '.join('r.' + c for c in names)}, r.n AS rn, e.n AS en, e.sz AS esz, r.h = e.h AS same "
                    f"FROM v_released r LEFT JOIN v_expected e ON {on} "
                    f"WHERE e.n IS NULL OR e.n <> r.n OR e.sz < {int(k)} OR r.h <> e.h LIMIT 1")  # fmt: skip
    if rows:
        row = rows[0]
        cls = dict(zip([*qi, time], row[: len(names)]))
        rn, en, sz, same = row[len(names):]
        if en is None:
            raise VerificationError(f"released class {cls} is not the generalization of any input rows")
        if en != rn:
            raise VerificationError(f"released class {cls} has {rn} rows; the input has {en} rows generalizing to it")
        if sz < k:
            what = "respondents" if uid else "rows"
            raise VerificationError(f"output is not {k}-anonymous at the respondent level: class {cls} has {sz} {what}")
        raise VerificationError(f"released class {cls}: its rows are not the input's rows generalized (a value was "
                                "changed)")  # fmt: skip
    rows_out, classes, min_sz = sq._rows("SELECT coalesce(sum(r.n), 0) AS n, count(*) AS c, min(e.sz) AS m "
                                         f"FROM v_released r JOIN v_expected e ON {on}")[0]  # fmt: skip
    rows_out = int(rows_out)
    suppressed = int(n_input) - rows_out
    if suppressed > max_suppressed:
        raise VerificationError(f"output suppresses {suppressed} rows, more than the allowed {max_suppressed}")
    if rows_out != int(expected_rows):
        raise VerificationError(f"the written file has {rows_out} rows; the search released {expected_rows}")
    if audit is not None:
        _verify_audit(sq, audit, read, rows_out, out_cols=out_cols, expect=expect, joins=f"JOIN vlab vl ON s.{Q(time)} "
                      f"IS NOT DISTINCT FROM vl.v{mjoin}", uid=uid)  # fmt: skip
    extra = {}
    if measures:
        from tempanon.temporal.outofcore_report import measure_written

        extra["measures"] = measure_written(sq, time=time, qi=qi, uid=uid, expect=expect, names=names, keys_in=keys_in,
                                            vjoin=f"JOIN vlab vl ON s.{Q(time)} IS NOT DISTINCT FROM vl.v{mjoin}",
                                            n_input=n_input, generalized=tuple(qi_maps))  # fmt: skip
    return {**extra, "k": int(k), "classes": int(classes), "min_class_size": None if min_sz is None else int(min_sz),
            "rows_out": rows_out, "suppressed_rows": suppressed, "time_labels": how, "verified_file": True,
            "respondent_level": uid is not None,
            **({"qi_generalization": "checked against the hierarchy files"} if qi_maps else {}),
            **({"audit": "checked row by row against the written release and the input"} if audit is not None else {})}  # fmt: skip


def _written_texts(sq, out_cols, read: str) -> tuple[dict, str]:
    """The text of every released column of the written release's row ``f`` (``read``), as the checks
    compare it (:meth:`SQLSource.released_text`), and the joins it needs: a typed timestamp column's text
    from the input column's map by the typed value (:meth:`SQLSource.mapped_text`, a value no input row
    has: a text no expected one equals), not by the text expression per row."""
    texts, joins = {}, ""
    for j, c in enumerate(out_cols):
        m = sq.mapped_text("f", c, read, f"tw{j}")
        joins += m[0] if m else ""
        texts[c] = m[1] if m else sq.released_text("f", c, read)
    return texts, joins


def _verify_audit(sq, audit: str, read: str, rows_out: int, *, out_cols, expect: dict, joins: str, uid) -> None:
    """The audit against the written release (``read``) and the input, by SQL (see :func:`verify_written`)."""
    Q = sq.q  # the engine's identifier quoting

    a = sq._audit_relation(audit)
    names = [f.name for f in sq._arrow(f"SELECT * FROM {a} LIMIT 0").schema]
    if names != ["release_row", "input_line", "respondent"]:
        raise VerificationError(f"the audit's columns are {names}, not release_row, input_line, respondent")
    n, lo, hi, rows, lines = sq._rows(f"SELECT count(*), min(CAST(release_row AS BIGINT)), max(CAST(release_row AS BIGINT)), "
                                      f"count(DISTINCT release_row), count(DISTINCT input_line) FROM {a}")[0]  # fmt: skip
    if not (n == rows == lines == rows_out and (n == 0 or (lo, hi) == (1, rows_out))):
        raise VerificationError(f"the audit lists {n} rows ({rows} distinct release rows, {lines} distinct input lines); "
                                f"the release has {rows_out}")  # fmt: skip
    exp = "hash(" + ", ".join(expect[c] for c in out_cols) + ")"
    written, rjoin = _written_texts(sq, out_cols, read)
    got = "hash(" + ", ".join(written[c] for c in out_cols) + ")"
    resp = sq.released_text("s", uid) if uid is not None else f"CAST(s.{RN} + 2 AS {sq.text_type})"
    bad = sq._rows(
        f"SELECT {sq.merge_hint('f', 's')}x.release_row FROM {a} x "
        f"JOIN (SELECT {RN} + 1 AS rr, * FROM {sq._numbered(read, out_cols)} y) f ON CAST(x.release_row AS BIGINT) = f.rr "
        f"JOIN {sq._numbered('src', sq.columns)} s ON CAST(x.input_line AS BIGINT) - 2 = s.{RN} {joins}{rjoin} "
        f"WHERE {exp} <> {got} OR coalesce(x.respondent, '') <> {resp} LIMIT 1"
    )  # fmt: skip
    if bad:
        raise VerificationError(f"audit row for release row {bad[0][0]}: its input line's generalized row or respondent "
                                "is not that release row's")
    matched = sq._rows(f"SELECT count(*) FROM {a} x JOIN {sq._numbered('src', sq.columns)} s "
                       f"ON CAST(x.input_line AS BIGINT) - 2 = s.{RN}")[0][0]  # fmt: skip
    if matched != rows_out:
        raise VerificationError("the audit names input lines that are not in the input")


__all__ = ["anonymize_timestamped_file", "verify_written"]
