"""``tempanon kanon --engine duckdb|spark``: the command when the rows stay in an engine (issue 15).

The table is never loaded into pandas: the engine reads the file, serves the bottom frequency set
and writes the release itself (temp file, independent verification query on the written file,
rename). The before/after risk measures of the summary (``risk``, as on the numpy path) and the
HTML report (``--report``) are built from aggregates the engine computes by ``GROUP BY``: one row
per equivalence class of the input and of the release **as written** (read back by the engine
after its verification), and the record count of every released value of each quasi-identifier
(:meth:`~tempanon.lattice.source_duckdb.SQLSource.input_aggregates`,
:meth:`~tempanon.lattice.source_duckdb.SQLSource.release_aggregates`,
:func:`tempanon.report.kanon.kanon_report_from_aggregates`). The measures go through the same
functions as on the numpy path (:func:`tempanon.metrics.risk.risk_from_aggregates`), so the same run
gives the same numbers.

``--audit`` (DuckDB and Spark): the steward's audit is written by a second ``COPY`` of the release's
rows in the same total order, checked row by row by SQL with the release's verification, and renamed
into place just before the release (:meth:`~tempanon.lattice.source_duckdb.SQLSource.release`). On
Spark, whose release is a directory of part files, ``release_row`` counts the rows over the part
files in name order (rows in file order inside each part); that order is defined by the write and
checked on what was written, never taken from Spark's read-back order
(:mod:`tempanon.lattice.source_spark`, ``docs/engines.md``).

The same API runs a job file's ``kanon`` model with ``engine = "duckdb"|"spark"`` on an ``[input] path``
(:func:`release_on_engine`, :func:`measure_release`; :func:`tempanon.steward.job.run_job`). Without
``--uid``, the warning of a column that reads like a respondent id is printed before the release is
written (``kanonymize(before_release=)``).

Order of the outputs: the release (and its audit) is written, verified and renamed into place by the engine first;
then the aggregates are computed and the report built; the report and the summary are then staged
and committed together (:class:`~tempanon.data.io.OutputSet`). If the aggregates or the report fail,
the command says so (exit 4), the verified release stays, and neither report nor summary is written.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from tempanon.errors import TempanonError

RISK_KEYS = ("rows", "classes", "k", "respondent_k", "uniques", "prosecutor_risk_max", "prosecutor_risk_mean", "records_at_risk")
"""The measures of the summary's ``risk`` block (as :func:`tempanon.kanon.command._risk_before_after`)."""


class ReportFailed(TempanonError):
    """The release was written and verified, but its risk measures or report could not be built (exit 4)."""

    exit_code = 4


def risk_block(before, after, threshold: float = 0.2) -> dict:
    """The summary's ``risk``: the measures of the input and of the release (``ClassAggregates``)."""
    b, a = before.risk(threshold).as_dict(), after.risk(threshold).as_dict()
    return {"threshold": threshold, "before": {k: b[k] for k in RISK_KEYS}, "after": {k: a[k] for k in RISK_KEYS}}


def run_with_engine(a: dict[str, Any]) -> dict:
    """Run ``kanon`` with the arguments of :func:`tempanon.kanon.command._run` (its ``locals()``)."""
    from tempanon._cliutil import info, progress_reporter
    from tempanon.data.io import OutputSet
    from tempanon.data.roles import parse_column_list
    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon.command import _parse_weights, describe_checks
    from tempanon.lattice.source import open_source
    from tempanon.report.sections import file_sha256

    report, summary = a.get("report"), a.get("summary")
    outs = a.get("outs")
    if outs is None:  # checked against the inputs and each other before anything is read
        outs = OutputSet([a["input_path"], ("--hierarchies", a["hierarchies"])], {"--out": a["out"], "--summary": summary, "--report": report,
                                                               "--audit": a.get("audit")},
                         spark_releases={"--out"} if a["engine"] == "spark" else (), tables={"--out"})  # fmt: skip
    t0 = time.perf_counter()
    phases: dict[str, float] = {}
    src = open_source(a["input_path"], a["engine"], memory_limit=a.get("memory_limit"), delimiter=a.get("delimiter"),
                      spark_master=a.get("spark_master"))  # fmt: skip
    try:
        # the numpy command's order (tempanon.kanon.command._run): every column list parsed, the
        # --allow-identifier columns, the quasi-identifiers, then the hierarchies
        qi_cols = parse_column_list(a["qi"], src.columns)
        drop_cols = parse_column_list(a["drop"], src.columns)
        keep_cols = parse_column_list(a.get("keep"), src.columns)
        allow_cols = parse_column_list(a.get("allow_identifier"), src.columns)
        src.require_columns(allow_cols, role="--allow-identifier column")
        src.require_columns(qi_cols, role="quasi-identifier")
        hier = load_hierarchies(a["hierarchies"], qi_cols)
        if src.n_rows == 0:  # a header-only export, named (as the numpy command, stream and init say it)
            from tempanon.errors import InputError

            raise InputError(f"the input table has no rows: {a['input_path']}")
        with progress_reporter(a["quiet"]) as progress:
            res = release_on_engine(
                src, qi_cols, hier, a["k"], input_path=a["input_path"], warn=lambda m: info(m, a["quiet"]),
                uid=a["uid"], identifying=drop_cols, max_suppression=a["max_suppression"],
                algorithm=a["algorithm"], criterion=a["criterion"], weights=_parse_weights(a["weights"]),
                sensitive=a["sensitive"], l=a["l"], progress=progress, out=str(a["out"]), **(a.get("search_opts") or {}),
                notice=lambda m: info(m, a["quiet"]),  # the search plan and the large-lattice warning, as on numpy
                keep=keep_cols,
                allow_identifier=allow_cols,
                audit=None if a.get("audit") is None else str(a["audit"]),
            )  # fmt: skip
        phases["search, release and verify"] = time.perf_counter() - t0
        # the release is written and verified: the measures and the report come from the engine's
        # aggregates of the input and of the written release
        summ = res.summary()
        summ.update({"input": str(a["input_path"]), "output": str(a["out"]),
                     "verification": {**(res.engine_checks or {}), **res.verification}})  # fmt: skip
        if a.get("audit") is not None:  # written by the engine, checked row by row, renamed before the release
            summ["audit"] = str(a["audit"])
        path = Path(a["input_path"])
        summ["risk"], html = measure_release(
            src, res, a["out"], a["engine"], uid=a["uid"], qi_cols=qi_cols, risk=True, phases=phases,
            verification=summ.get("verification"),
            report=None if report is None else {
                "source": str(a["input_path"]), "identifying": drop_cols,
                "checksum": file_sha256(path) if path.is_file() else None})  # (Spark reads directories of part files too)
        if report is not None:
            summ["report"] = str(report)
    finally:
        src.close()
    t1 = time.perf_counter()
    with outs:  # staged, then committed together (the release is already in place)
        if html is not None:
            outs.stage(report, lambda p: p.write_text(html, encoding="utf-8"), "--report")
        if summary is not None:
            outs.json(summ, summary, "--summary")
        outs.commit()
    phases["write report and summary"] = time.perf_counter() - t1
    if a.get("verbose"):
        st = res.search.stats
        info(
            f"engine {res.engine} ({res.engine_path}): {describe_checks(st, res.lattice_size)}, "
            f"{st.table_scans} table scans, {st.rollups} rollups; search {st.seconds:.3f} s, "
            f"total {time.perf_counter() - t0:.3f} s\n"
            + "\n".join(f"  {name}: {sec:.3f} s" for name, sec in phases.items()),
            a["quiet"],
        )
    return summ


def report_failed(out: Any, engine: str, what: str, exc: BaseException) -> ReportFailed:
    """The error of a report (or risk measures) that could not be built after the release ``out``
    was written and verified: its first line, plainly, for exit 4 (the timestamped file path too)."""
    first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
    if not isinstance(exc, TempanonError):
        first = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return ReportFailed(f"the release {out} was written and verified, but {what} could not be built "
                        f"({engine} engine): {first[:300]}; no report or summary was written")


def release_on_engine(src: Any, qi: list[str], hierarchies: Any, k: int, *, uid: str | None, sensitive: str | None,
                      keep: list[str], warn: Any = None, uid_option: str = "--uid", input_path: Any = None, **kw: Any) -> Any:
    """:func:`tempanon.kanon.kanonymize` on an engine source over a file (``src``: DuckDB or Spark read
    the file themselves; the engine writes the release to ``kw["out"]``, verifies and renames it):
    what ``kanon --engine duckdb|spark`` and a job file's ``kanon`` model with ``engine = "duckdb"|"spark"``
    run (:func:`tempanon.steward.job.run_job`). Without ``uid``, a column that reads like a respondent id
    (:func:`tempanon.steward.init.respondent_id_warning_engine`, counted by the engine) is said through
    ``warn("warning: ...")`` before the release is written (``uid_option``: how the caller names the
    respondent id). A DuckDB error not classified on its way is the input's (exit 2) or the engine's
    (exit 4): :func:`tempanon.lattice.source_duckdb.engine_error`."""
    from tempanon.kanon import kanonymize

    def before_release() -> None:
        if uid is None and warn is not None:  # an id column whose values repeat: k would count rows, not people
            from tempanon.steward.init import respondent_id_warning_engine

            hint = respondent_id_warning_engine(src, [*qi, *keep, *([sensitive] if sensitive else [])], option=uid_option)
            if hint:
                warn(f"warning: {hint}")

    try:
        return kanonymize(src, qi, hierarchies, k, uid=uid, sensitive=sensitive, keep=keep, before_release=before_release, **kw)
    except Exception as exc:  # a DuckDB error not classified on its way: the input's (exit 2) or the engine's (exit 4)
        duckdb = sys.modules.get("duckdb")
        if duckdb is not None and isinstance(exc, duckdb.Error):
            from tempanon.lattice.source_duckdb import engine_error

            raise engine_error(input_path, exc) from exc
        raise


def measure_release(src: Any, res: Any, out: Any, engine: str, *, uid: str | None, qi_cols: list[str], risk: bool = True,
                    report: dict | None = None, verification: Any = None, phases: dict | None = None) -> tuple[dict | None, str | None]:
    """After :func:`release_on_engine`: the summary's ``risk`` block (``risk``) and the rendered HTML
    report (``report``: the keywords ``source``, ``checksum``, ``identifying``, optionally
    ``checksum_kind``, of :func:`tempanon.report.kanon.kanon_report_from_aggregates`; ``verification``
    added to it), from the engine's aggregates of the input and of the release as written. A failure
    is said plainly (:func:`report_failed`, exit 4): the verified release stays. Returns ``(risk block
    or None, html or None)``."""
    block = html = None
    if not risk and report is None:
        return block, html
    t1 = time.perf_counter()
    try:
        before = src.input_aggregates(qi_cols, uid=uid)
        after, values = src.release_aggregates(res.output or out, uid=uid)
        if risk:
            block = risk_block(before, after)
            if phases is not None:
                phases["risk aggregates"] = time.perf_counter() - t1
        if report is not None:
            from tempanon.report.kanon import kanon_report_from_aggregates
            from tempanon.report.sections import add_verification

            t1 = time.perf_counter()
            rep = kanon_report_from_aggregates(res, columns=src.columns, before=before, after=after, values=values,
                                               checker=f"the {res.engine} engine's class counts of the written release",
                                               **report)  # fmt: skip
            add_verification(rep, verification)
            html = rep.render()  # rendered here: what is left to fail while writing is the file system
            if phases is not None:
                phases["build report"] = time.perf_counter() - t1
    except Exception as exc:  # a tempanon error, an engine error (Spark, DuckDB), memory: said plainly, no traceback
        what = ("the risk measures and the report" if risk else "the report") if report is not None else "the risk measures"
        raise report_failed(out, engine, what, exc) from exc
    return block, html
