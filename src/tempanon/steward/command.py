"""``tempanon check``, ``run``, ``init`` and ``hierarchy``: thin CLI layers over :mod:`tempanon.steward`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from tempanon._cliutil import DATE_ORDER_HELP, info, levels_text, progress_reporter, run_api
from tempanon.errors import InputError


def check(
    input: Annotated[Path, typer.Argument(help="Table to check (CSV with ; , tab or |, or Parquet).")],
    qi: Annotated[str, typer.Option("--qi", help="Quasi-identifier columns, comma-separated (ranges A:B allowed).")],
    uid: Annotated[str | None, typer.Option("--uid", help="Respondent id column: also report respondent-level k; --k is checked against it.")] = None,
    sensitive: Annotated[str | None, typer.Option("--sensitive", help="Sensitive column(s) for l-diversity.")] = None,
    k: Annotated[int | None, typer.Option("--k", help="Required k: exit 1 when the table is not k-anonymous.")] = None,
    l: Annotated[int | None, typer.Option("--l", help="Required l: exit 1 when the table is not l-diverse.")] = None,
    l_model: Annotated[str, typer.Option("--l-model", help="Which l --l checks: frequency (default, the model kanon --l-diversity releases with: the most frequent value has at most |class|/l rows) | distinct (>= l values) | entropy (entropy >= log l).")] = "frequency",
    threshold: Annotated[float, typer.Option("--threshold", help="A record is 'at risk' when its prosecutor risk exceeds this.")] = 0.2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the measures as one JSON object.")] = False,
    delimiter: Annotated[str | None, typer.Option("--delimiter", help="CSV delimiter (detected if omitted).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing; only the exit status tells.")] = False,
    audit: Annotated[Path | None, typer.Option("--audit", help="Steward-only audit of a timestamped release: the respondent of each row goes into the --uid column.")] = None,
    engine: Annotated[str, typer.Option("--engine", help="auto|numpy|duckdb|spark: who reads the rows and computes the classes (auto: DuckDB for files from 256 MiB).")] = "auto",
    memory_limit: Annotated[str | None, typer.Option("--memory-limit", help="Bound the engine's memory, e.g. 4GB, 512MiB or 80%: DuckDB spills to a temporary directory beyond it (auto picks DuckDB when a limit is given); with --engine spark the local driver's heap; refused with --engine numpy.")] = None,
    spark_master: Annotated[str | None, typer.Option("--spark-master", help="Spark master URL for --engine spark (default: a local[2] session).")] = None,
) -> None:
    """Measure k, respondent-level k, l, uniques and prosecutor risk of a table as it is.

    With --engine duckdb or spark the file (CSV or Parquet) is read in place, not loaded into memory:
    the classes are counted by GROUP BY in the engine, with the same numbers and messages.

    Exit status: 0 every requested level is met, 1 a requested level is not met, 2 bad input,
    4 the engine could not finish (out of memory, a failed Spark job).
    """
    from tempanon.data.io import read_table
    from tempanon.data.roles import parse_column_list
    from tempanon.steward.check import check_engine, check_table, open_check_source

    def go():
        from tempanon.data.io import refuse_nested_columns

        # a nested Parquet column (list, struct, map) given a role: refused before any engine reads a row
        refuse_nested_columns(input, {"--qi": qi, "--uid": [uid] if uid else None, "--sensitive": sensitive})
        from tempanon.data.io import nested_parquet_columns

        nested = nested_parquet_columns(input)  # (with no role: listed, never screened nor released)
        eng = check_engine(input, engine, memory_limit)
        if eng != "numpy":
            src = open_check_source(input, eng, memory_limit=memory_limit, delimiter=delimiter, spark_master=spark_master)
            try:  # (the column lists are parsed once --audit added its column, as below)
                return check_table(src, qi, uid=uid, sensitive=sensitive, k=k, l=l, l_model=l_model, threshold=threshold,
                                   audit=audit, nested=nested)  # fmt: skip
            finally:
                src.close()
        from tempanon.lattice.memory import check_memory_limit

        check_memory_limit(eng, memory_limit)  # before anything is read
        df = read_table(input, as_text=True, delimiter=delimiter)
        if audit is not None:
            from tempanon.steward.check import attach_audit

            df = attach_audit(df, audit, uid)
        cols = list(df.columns)
        return check_table(
            df,
            parse_column_list(qi, cols),
            uid=uid,
            sensitive=parse_column_list(sensitive, cols),
            k=k,
            l=l,
            l_model=l_model,
            threshold=threshold,
            engine="numpy",
            nested=nested,
        )

    res = run_api(go)
    if as_json and not quiet:
        typer.echo(json.dumps(res.as_dict(), allow_nan=False))
    elif not quiet:
        _print_check(res)
    if not as_json:
        for f in res.identifier_findings:
            info(f"[yellow]note:[/] column {_esc(repr(f.column))} looks like a direct identifier: {_esc(f.reason)}", quiet)
        from tempanon.data.io import parquet_type_phrase, parquet_type_way_out

        for c, t in res.nested_columns.items():
            info(f"[yellow]note:[/] column {_esc(repr(c))} has {parquet_type_phrase(t)} ({_esc(t)}): it can take no role and is "
                 "never released (tempanon compares and releases text, numbers, dates and times only; a column with no role is left out); "
                 f"not screened for identifiers; {parquet_type_way_out(t).removesuffix(' first')} to use it", quiet)  # fmt: skip
    if not res.ok:
        for f in res.failures:
            info(f"[bold red]not met:[/] {_esc(f)}", quiet)
        raise typer.Exit(1)


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _print_check(res) -> None:
    from rich.console import Console
    from rich.table import Table

    r = res.risk
    t = Table(title=f"{r.rows:,} rows, {r.classes:,} equivalence classes over {', '.join(res.quasi_identifiers)}", show_header=True)
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_column("requested", justify="right")

    def row(name, value, req=None):
        t.add_row(name, "n/a" if value is None else (f"{value:.4g}" if isinstance(value, float) else str(value)), "" if req is None else str(req))

    row("k", r.k, None if res.uid else res.k_requested)
    if res.uid:
        row(f"respondent-level k ({r.respondents} respondents)", r.respondent_k, res.k_requested)
    if res.sensitive:
        row("l (distinct)", r.l_distinct, res.l_requested if res.l_model == "distinct" else None)
        row("l (frequency)", r.l_frequency, res.l_requested if res.l_model == "frequency" else None)
        row("l (entropy)", r.l_entropy, res.l_requested if res.l_model == "entropy" else None)
    row("unique records", r.uniques)
    row("prosecutor risk, max", r.prosecutor_risk_max)
    row("prosecutor risk, mean", r.prosecutor_risk_mean)
    row(f"records with risk > {r.risk_threshold:g}", r.records_at_risk)
    Console(highlight=False).print(t)


def run(
    job: Annotated[Path, typer.Argument(help="Job file (TOML): input, columns, hierarchies, model, output.")],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or status output.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show the search: nodes checked, table scans, rollups, time.")] = False,
) -> None:
    """Run a whole anonymization described in a job file (see `tempanon init`).

    Exit status: 0 written, 1 no anonymization satisfies the model, 2 bad job file or input,
    3 the independent verifier rejected the output (nothing written).
    """
    from tempanon.steward.job import load_job, run_job

    loaded = []

    def go():
        j = load_job(job)
        loaded.append(j)
        with progress_reporter(quiet) as progress:
            return run_job(j, progress, warn=lambda line: info(_esc(line), quiet))

    summ = run_api(go)
    res = summ.pop("_result", None)
    status, detail = summ.pop("_status", None), summ.pop("_verbose", None)
    for line in summ.pop("_warnings", []):  # (none: said through warn= before anything was written)
        info(_esc(line), quiet)
    # every file the run wrote: the table (or snapshot folder), the audit, the report and the summary
    summary_path = [str(loaded[0].summary)] if loaded and loaded[0].summary is not None else []
    written = [summ["output"]] + [summ[k] for k in ("audit", "report") if k in summ] + summary_path
    if status is not None:  # a model other than kanon describes its own run
        if verbose and detail:
            info(detail, quiet)
        info(f"{status}\nwrote {', '.join(written)}", quiet)
        _statement(summ, quiet)
        return
    if verbose and res is not None:
        st = res.search.stats
        info(
            f"search: {st.nodes_checked} nodes checked of {res.lattice_size} ({len(res.anonymous_nodes)} anonymous, "
            f"{len(res.minimal_nodes)} minimal), {st.table_scans} table scans, {st.rollups} rollups; "
            f"search {st.seconds:.3f} s, whole run {res.runtime_seconds:.3f} s",
            quiet,
        )
    info(
        f"{summ['algorithm']}: k={summ['k']}, selected {levels_text(summ['selected_levels'])}; {summ['suppressed_rows']} of {summ['rows_in']} rows "
        f"suppressed; loss {summ['loss']:.4f}\nwrote {', '.join(written)}",
        quiet,
    )
    _statement(summ, quiet)


def _statement(summ: dict, quiet: bool) -> None:
    """Issue 12: the columns left out, overridden identifier findings, and (last line) exactly what was verified."""
    from tempanon._cliutil import report_roles
    from tempanon.data.roles import statement_line

    v = summ.get("verification")
    if isinstance(v, dict) and "guarantee" in v:
        report_roles(summ, quiet, job=True)
        info(_esc(statement_line(v)), quiet)


def init(
    input: Annotated[Path, typer.Argument(help="Table to profile (CSV or Parquet).")],
    out: Annotated[Path | None, typer.Option("--out", help="Job file to write (default: <input stem>.job.toml beside the input).")] = None,
    k: Annotated[int, typer.Option("--k", help="k to propose.")] = 5,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing job file.")] = False,
    delimiter: Annotated[str | None, typer.Option("--delimiter", help="CSV delimiter (detected if omitted).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No status output.")] = False,
) -> None:
    """Profile a table and write a starter job file with a proposed role for every column."""
    from tempanon.data.io import OutputSet, nested_parquet_columns, read_table
    from tempanon.steward.init import profile_columns, starter_job

    target = out or input.with_name(input.name.split(".")[0] + ".job.toml")

    def go():
        # never the input, also with --force (before, `--out` naming the input replaced the table by the job file)
        with OutputSet([input], {"--out": target}) as outs:
            if target.exists() and not force:
                raise InputError(f"{target} exists; use --force to overwrite it")
            if k < 2:
                raise InputError(f"--k must be at least 2, got {k}")
            df = read_table(input, as_text=True, delimiter=delimiter)
            if df.empty:  # nothing to profile: every proposal would be a guess from no data
                raise InputError(f"the input table has no rows: {input} (nothing to profile; no job file written)")
            profiles = profile_columns(df, nested=nested_parquet_columns(input))  # (a list, struct or map: no role)
            text = starter_job(input, target, df, profiles, k=k)
            outs.stage(target, lambda p: p.write_text(text, encoding="utf-8"), "--out")
            outs.commit()
        return profiles

    profiles = run_api(go)
    from tempanon.steward.init import LARGE_LATTICE, lattice_size

    roles = {"identifying": "remove (identifier)", "uid": "respondent id (removed)", "qi": "quasi-identifier", "other": "left out (no role)"}
    info("\n".join(f"  {_esc(p.name)}: {roles[p.role]}" + (f" ({p.hierarchy['type']})" if p.role == "qi" and p.hierarchy else "")
                   for p in profiles), quiet)
    size = lattice_size(profiles)
    info(f"lattice of the proposed quasi-identifiers: {size:,} nodes"
         + (" [yellow](millions: the search may run for hours; keep fewer quasi-identifiers)[/]" if size >= LARGE_LATTICE else ""), quiet)
    info(f"wrote {_esc(str(target))}; review it, then: tempanon run {_esc(str(target))}", quiet)


def hierarchy(
    file: Annotated[Path | None, typer.Argument(help="Hierarchy file (ARX format): shown as a tree, or written with --out.")] = None,
    data: Annotated[Path | None, typer.Option("--data", help="Table whose column the hierarchy is built from.")] = None,
    column: Annotated[str | None, typer.Option("--column", help="Column of --data to build the hierarchy for.")] = None,
    kind: Annotated[str | None, typer.Option("--type", help="intervals|masking|dates|suppression|taxonomy")] = None,
    widths: Annotated[str | None, typer.Option("--widths", help="intervals: widths per level, each a multiple of the previous, e.g. 5,10,20.")] = None,
    start: Annotated[float, typer.Option("--start", help="intervals: where the first interval starts.")] = 0,
    levels: Annotated[int | None, typer.Option("--levels", help="masking: digits masked before the top (default: all).")] = None,
    formats: Annotated[str | None, typer.Option("--formats", help="dates: strftime formats per level, e.g. %Y-%m,%Y.")] = None,
    date_order: Annotated[str | None, typer.Option("--date-order", help="dates: " + DATE_ORDER_HELP + " (default auto)")] = None,
    tree: Annotated[Path | None, typer.Option("--tree", help="taxonomy: JSON or TOML file of nested categories.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the built hierarchy here (ARX format).")] = None,
    max_children: Annotated[int, typer.Option("--max-children", min=0, help="Tree view: children shown per node.")] = 8,
    delimiter: Annotated[str | None, typer.Option("--delimiter", help="CSV delimiter of --data (detected if omitted).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No tree view or status output.")] = False,
) -> None:
    """Build a generalization hierarchy (like ARX's wizards) or show one as a tree.

    \b
    Show:  tempanon hierarchy age.csv
    Build: tempanon hierarchy --data adult.csv --column age --type intervals --widths 5,10,20 --out age.csv
    """
    from tempanon.hierarchy import Hierarchy
    from tempanon.steward.hierarchy import KINDS, build, tree_view

    def go():
        if kind is None:
            if file is None:
                raise InputError("give a hierarchy FILE to show, or --type (with --data/--column) to build one")
            if any(v is not None for v in (data, column, widths, levels, formats, tree, out, date_order)):
                raise InputError("--data/--column/--widths/--levels/--formats/--date-order/--tree/--out build a hierarchy: "
                                 "add --type")
            return Hierarchy.from_csv(file), None
        if column is None:
            raise InputError("--column is required to build a hierarchy (it names the attribute)")
        if date_order is not None and kind != "dates":
            raise InputError(f"--date-order is for --type dates (how its numeric dates are read), not {kind}")
        # an option of another type was ignored ('--type masking --widths 5,10' built a masking hierarchy)
        for option, given, for_kind in (("--widths", widths is not None, "intervals"), ("--start", start != 0, "intervals"),
                                        ("--levels", levels is not None, "masking"), ("--formats", formats is not None, "dates"),
                                        ("--tree", tree is not None, "taxonomy")):  # fmt: skip
            if given and kind != for_kind and kind in KINDS:  # (an unknown --type: build() names it)
                raise InputError(f"{option} is for --type {for_kind}, not {kind}")
        if file is not None and out is not None and Path(file) != Path(out):
            raise InputError(f"give the file to write once: FILE {file} or --out {out}")
        from tempanon.data.io import OutputSet

        target = out or file
        # checked before anything is read: never the --data table or the --tree file (before, `--out` naming
        # the table replaced it by the hierarchy), a write error a message (a read-only folder: a traceback)
        with OutputSet([("--data", data), ("--tree", tree)], {"--out": target}) as outs:
            values = None
            if data is not None:
                from tempanon.data.io import read_table, refuse_nested_columns

                refuse_nested_columns(data, {"--column": [column]})  # (a list or struct has no hierarchy)
                df = read_table(data, as_text=True, delimiter=delimiter, roles={"--column": [column]})  # (Parquet: that column)
                if column not in df.columns:
                    raise InputError(f"unknown column {column!r} in {data}; the input has columns: {', '.join(map(str, df.columns))}")
                if df.empty:  # as init: a header-only export is a mistake (it said "intervals builder is empty")
                    raise InputError(f"the input table has no rows: {data} (nothing to build the hierarchy of {column!r} from)")
                values = df[column]
            h = build(kind, column, values, widths=widths, start=start, levels=levels, formats=formats, tree=tree,
                      date_order=date_order or "auto")
            if target is not None:
                outs.stage(target, h.to_csv, "--out")
                outs.commit()
        return h, target

    h, target = run_api(go)
    if not quiet:
        from rich.console import Console

        Console(highlight=False).print(tree_view(h, max_children))
    if target is not None:
        info(f"wrote {target} ({len(h.table)} values, height {h.height})", quiet)


__all__ = ["check", "hierarchy", "init", "run"]
