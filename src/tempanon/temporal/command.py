"""``tempanon timestamped``: k-anonymity for timestamped data (Mascetti et al., TIME 2006).

A thin layer over :func:`tempanon.temporal.api.anonymize_timestamped`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from tempanon._cliutil import DATE_ORDER_HELP, info, progress_reporter, report_roles, run_api
from tempanon.data.roles import statement_line



def _dropped(res) -> list[str]:
    """The columns ``--drop`` removed (the summary's verification statement): the report names
    them "direct identifier (removed)", as kanon's and the job runner's reports do, not "left out"."""
    return list((res.summary.get("verification") or {}).get("dropped") or [])

def timestamped(
    input: Annotated[Path, typer.Argument(help="Input table (CSV with any delimiter, or Parquet).")],
    time: Annotated[str, typer.Option("--time", help="Timestamp column to generalize.")],
    k: Annotated[int, typer.Option("--k", help="Respondent-level k.")],
    out: Annotated[Path, typer.Option("--out", help="Released table (CSV or .parquet), written atomically (with --engine spark: a directory of part files of that name).")],
    uid: Annotated[Optional[str], typer.Option("--uid", help="Respondent identifier column (dropped).")] = None,
    qi: Annotated[str, typer.Option("--qi", help="Other quasi-identifiers, comma-separated or A0:A9.")] = "",
    granularities: Annotated[
        str,
        typer.Option(
            "--granularities",
            help="Candidate granularities: hour,part-of-day,day,business-day,week,month,quarter,semester,year, "
            "N<unit> (6hours, 2weeks, 3months@10), format:<strftime>, file:<csv label,start,end>.",
        ),
    ] = "hour,part-of-day,day,business-day,week,month,quarter,semester,year",
    hierarchies: Annotated[
        Optional[Path],
        typer.Option("--hierarchies", help="Folder of <column>.csv hierarchies: generalize time and these QIs jointly."),
    ] = None,
    metric: Annotated[str, typer.Option("--metric", help="gen_c (the paper's <=_c: gen_m = fewest respondents in a class, smaller first, then gen_s = their sum, larger first), gen_m or gen_s; with --hierarchies also height, loss, discernibility.")] = "gen_c",
    max_suppression: Annotated[
        float, typer.Option("--max-suppression", help="Fraction of tuples that may be suppressed.")
    ] = 0.0,
    data_granularity: Annotated[
        Optional[str], typer.Option("--data-granularity", help="Granularity of the timestamps (default: inferred).")
    ] = None,
    country: Annotated[
        Optional[str], typer.Option("--country", help="Public holidays of this country for business-day (e.g. US).")
    ] = None,
    day_parts: Annotated[
        Optional[str],
        typer.Option("--day-parts", help="Parts of the day for part-of-day, e.g. night=0-6,morning=6-12,afternoon=12-18,evening=18-24."),
    ] = None,
    timezone: Annotated[
        Optional[str],
        typer.Option("--timezone", help="Calendar time zone (IANA name, e.g. America/New_York): days, weeks and parts of "
                     "the day are its local ones (DST-correct); aware times are converted to it, naive ones are its wall clock."),
    ] = None,
    date_order: Annotated[str, typer.Option("--date-order", help=DATE_ORDER_HELP)] = "auto",
    time_limit: Annotated[
        Optional[float],
        typer.Option("--time-limit", help="Stop the search after this many seconds with the best verified granularity so far."),
    ] = None,
    audit: Annotated[
        Optional[Path],
        typer.Option("--audit", help="Steward-only CSV: release row -> input line and respondent, and the shuffle seed "
                     "(never publish; refused inside the release's folder)."),
    ] = None,
    shuffle_seed: Annotated[
        Optional[int],
        typer.Option("--shuffle-seed", help="Seed of the within-class row shuffle (default: a fresh secret seed, recorded "
                     "only in --audit)."),
    ] = None,
    summary: Annotated[Optional[Path], typer.Option("--summary", help="Write a JSON summary here.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or status output.")] = False,
    report: Annotated[
        Optional[Path], typer.Option("--report", help="Write a self-contained HTML report here (after verification).")
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show the search: granularities checked, pruned, time per phase.")
    ] = False,
    keep: Annotated[Optional[str], typer.Option("--keep", help="Columns declared insensitive: released unchanged (screened for identifiers). Columns with no role are left out.")] = None,
    drop: Annotated[Optional[str], typer.Option("--drop", help="Identifying columns, removed from the release.")] = None,
    sensitive: Annotated[Optional[str], typer.Option("--sensitive", help="Sensitive columns, released as they are.")] = None,
    allow_identifier: Annotated[Optional[str], typer.Option("--allow-identifier", help="Release these columns unchanged although identifier screening flags them (reported).")] = None,
    engine: Annotated[str, typer.Option("--engine", help="auto|numpy|duckdb|spark: who computes the time-granularity search's frequency sets (auto: numpy; duckdb: GROUP BY in DuckDB, same results, the file read in place and the release written and verified by DuckDB (with --hierarchies too: the joint search's frequency sets in DuckDB; --audit written by DuckDB too; --report measured by GROUP BY on the input and the written release); spark: the same queries in Spark SQL, the file read by Spark (with --hierarchies too) and the release written by Spark as a directory of part files named --out, verified by SQL on what was written; --report measured in Spark too; --audit written by Spark, release_row counting the rows over the part files in name order).")] = "auto",
    memory_limit: Annotated[Optional[str], typer.Option("--memory-limit", help="Bound the engine's memory, e.g. 4GB, 512MiB or 80%: DuckDB spills to a temporary directory beyond it (auto picks DuckDB when a limit is given); with --engine spark the local driver's heap; refused with --engine numpy.")] = None,
    spark_master: Annotated[Optional[str], typer.Option("--spark-master", help="Spark master URL for --engine spark (default: a local[2] session).")] = None,
    delimiter: Annotated[Optional[str], typer.Option("--delimiter", help="CSV delimiter (detected if omitted).")] = None,
) -> None:
    """Least k-anonymous generalization of timestamps over time granularities (many tuples per
    respondent; Mascetti, Bettini, Wang, Jajodia, TIME 2006).

    Exit status: 0 written, 1 no granularity satisfies k within --max-suppression, 2 bad input, 3 the
    independent verifier rejected the output (nothing written), 4 the engine could not finish (out of
    memory, a failed Spark job).
    """
    from tempanon.data.io import OutputSet, read_table
    from tempanon.data.roles import parse_column_list
    from tempanon.errors import InputError
    from tempanon.temporal.api import anonymize_timestamped

    import time as _time

    phases: dict[str, float] = {}

    def work():
        from tempanon.temporal.granularity import parse_parts

        t0 = _time.perf_counter()
        # every output checked against the inputs and each other before anything is read
        outs = OutputSet([input, ("--hierarchies", hierarchies)], {"--out": out, "--summary": summary, "--report": report, "--audit": audit},
                         spark_releases={"--out"} if engine == "spark" else (), tables={"--out"})
        parts = parse_parts(day_parts)
        from tempanon.temporal.parse import check_date_order

        check_date_order(date_order)  # refused before the input is read
        from tempanon.lattice.source_temporal import resolve_time_engine

        if spark_master is not None and engine != "spark":
            raise InputError("--spark-master needs --engine spark")
        # refused before the input is read; auto is numpy, or DuckDB with --memory-limit
        eng = resolve_time_engine(engine, memory_limit, spark_master)
        if audit is not None:
            from tempanon.temporal.api import check_audit_path

            check_audit_path(audit, out, [input, summary, report])
        from tempanon.data.io import refuse_nested_columns

        # a nested Parquet column (list, struct, map) given a role: refused before any engine reads a row
        refuse_nested_columns(input, {"--time": [time], "--uid": [uid] if uid else None, "--qi": qi, "--sensitive": sensitive,
                                      "--keep": keep, "--allow-identifier": allow_identifier})  # fmt: skip
        if eng == "duckdb":
            # the file read in place, the release (and audit) written by DuckDB, the report's measures by GROUP BY
            return _out_of_core(outs, phases, t0, eng)
        if eng == "spark":  # the file read by Spark, the release (and the audit) written by Spark
            return _out_of_core(outs, phases, t0, eng)
        # a Parquet file: only the columns given a role are read (the others are left out all the same)
        df = read_table(input, as_text=True, delimiter=delimiter, roles={
            "--time": [time] if time else None, "--uid": [uid] if uid else None, "--qi": qi, "--sensitive": sensitive,
            "--keep": keep, "--drop": drop, "--allow-identifier": allow_identifier})  # fmt: skip
        if df.empty:  # as kanon, stream and init: a header-only export is a mistake, named
            raise InputError(f"the input table has no rows: {input}")
        qis = parse_column_list(qi, list(df.columns))
        cols = list(df.columns)
        roles = {"keep": parse_column_list(keep, cols), "drop": parse_column_list(drop, cols),
                 "allow_identifier": parse_column_list(allow_identifier, cols),
                 "sensitive": parse_column_list(sensitive, cols)}  # fmt: skip
        hier = None
        if hierarchies is not None:
            from tempanon.temporal.joint import load_hierarchies

            hier = load_hierarchies(hierarchies, qis)
        with progress_reporter(quiet) as progress:
            res = anonymize_timestamped(
                df, time=time, qi=qis, k=k, uid=uid, granularities=granularities, metric=metric,
                max_suppression=max_suppression, data_granularity=data_granularity, country=country,
                parts=parts, hierarchies=hier, progress=progress, timezone=timezone, time_limit=time_limit,
                shuffle_seed=shuffle_seed, announce=lambda m: info(m, quiet), engine=eng, memory_limit=memory_limit,
                spark_master=spark_master, date_order=date_order, **roles,
            )  # fmt: skip
        phases["read, search, release and verify"] = _time.perf_counter() - t0
        if uid is None:  # an id column whose values repeat: k would count tuples, not people
            from tempanon.steward.init import respondent_id_warning

            hint = respondent_id_warning(df, [time, *qis, *roles["keep"], *roles["sensitive"]], path=input)
            if hint:
                info(f"warning: {hint}", quiet)
        rep = None
        if report is not None:  # built before anything is written; written after the output, atomically
            from tempanon.report.sections import file_sha256
            from tempanon.report.timestamped import timestamped_report

            t1 = _time.perf_counter()
            extra = {"granularities requested": granularities, "country (holidays)": country, "day parts": day_parts,
                     "hierarchies": str(hierarchies) if hierarchies is not None else None}
            rep = timestamped_report(df, res, source=str(input), checksum=file_sha256(input),
                                     parameters={k_: v for k_, v in extra.items() if v is not None},
                                     identifying=_dropped(res))  # fmt: skip
            phases["build report"] = _time.perf_counter() - t1
        t1 = _time.perf_counter()
        with outs:  # staged, then committed together
            outs.table(res.released, out, "--out", like=input, unchanged=res.unchanged_columns, input_text=df)
            if audit is not None:
                from tempanon.temporal.api import audit_text

                text = audit_text(res)
                outs.stage(audit, lambda p: p.write_text(text, encoding="utf-8"), "--audit")
            if rep is not None:
                from tempanon.report.sections import add_verification

                add_verification(rep, res.summary.get("verification"))
                outs.stage(report, rep.write, "--report")
            if summary is not None:
                outs.json({**res.summary, **({"report": str(report)} if report is not None else {})}, summary, "--summary")
            outs.commit()
        phases["write outputs"] = _time.perf_counter() - t1
        return res

    def _out_of_core(outs, phases, t0, engine):
        from tempanon.temporal.outofcore import anonymize_timestamped_file

        with progress_reporter(quiet) as progress:
            res = anonymize_timestamped_file(
                input, out=out, time=time, qi=qi, k=k, uid=uid, granularities=granularities, metric=metric,
                max_suppression=max_suppression, data_granularity=data_granularity, country=country,
                parts=parse_parts(day_parts), timezone=timezone, time_limit=time_limit, progress=progress,
                announce=lambda m: info(m, quiet), keep=keep, drop=drop, allow_identifier=allow_identifier,
                sensitive=sensitive, memory_limit=memory_limit, shuffle_seed=shuffle_seed, hierarchies=hierarchies,
                audit=audit, engine=engine, spark_master=spark_master, measures=report is not None, delimiter=delimiter,
                date_order=date_order,
            )  # fmt: skip
        phases[f"read, search, write and verify ({'DuckDB, out of core' if engine == 'duckdb' else 'Spark'})"] = \
            _time.perf_counter() - t0
        rep = None
        if report is not None:  # from the engine's aggregates of the input and of the release as written
            from tempanon.report.sections import add_verification, file_sha256
            from tempanon.report.timestamped import timestamped_report_from_measures

            from tempanon.kanon.engine_command import report_failed

            t1 = _time.perf_counter()
            extra = {"granularities requested": granularities, "country (holidays)": country, "day parts": day_parts,
                     "hierarchies": str(hierarchies) if hierarchies is not None else None}
            try:
                rep = timestamped_report_from_measures(res, source=str(input), checksum=file_sha256(input),
                                                       parameters={k_: v for k_, v in extra.items() if v is not None},
                                                       identifying=_dropped(res))  # fmt: skip
                add_verification(rep, res.summary.get("verification"))
                html = rep.render()  # rendered here: what is left to fail while writing is the file system
            except Exception as exc:  # said plainly (exit 4), no traceback; the verified release stays
                raise report_failed(out, engine, "the report", exc) from exc
            phases["build report (engine aggregates)"] = _time.perf_counter() - t1
        if summary is not None or rep is not None:  # the release (and audit) are in place (verified); the rest staged, committed
            t1 = _time.perf_counter()
            with outs:
                if rep is not None:
                    outs.stage(report, lambda p: Path(p).write_text(html, encoding="utf-8"), "--report")
                if summary is not None:
                    outs.json({**res.summary, **({"report": str(report)} if report is not None else {})}, summary, "--summary")
                outs.commit()
            phases["write summary and report"] = _time.perf_counter() - t1
        return res

    from tempanon.temporal.granularity import parse_parts

    res = run_api(work)
    if verbose:
        from tempanon.report.timestamped import search_lines

        info(search_lines(res.summary) + "\n" + "\n".join(f"  {name}: {sec:.3f} s" for name, sec in phases.items()), quiet)
    report_roles(res.summary, quiet)
    for m in res.summary["messages"]:
        info(f"[yellow]note:[/] {m}", quiet)
    s = res.summary
    gran = s["granularity"]
    if isinstance(gran, dict):  # joint: {time: granularity, qi: level} (was printed as the dict, as no job says it)
        gran = f"{gran[time]} (" + ", ".join(f"{q} at level {v}" for q, v in gran.items() if q != time) + ")"
    info(
        f"{s['k']}-anonymous at the respondent level with time as [bold]{gran}[/] "
        f"(gen_m {s['gen_m']}, gen_s {s['gen_s']}, {s['suppressed']} tuple(s) suppressed, "
        f"{s['respondents']} respondents); wrote {out}" + (" (a directory of part files)" if out.is_dir() else "")
        + (f" and {report}" if report is not None else ""),
        quiet,
    )
    info(statement_line(s["verification"]), quiet)

