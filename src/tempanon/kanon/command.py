"""``tempanon kanon`` and ``tempanon demo``: thin CLI layers over :func:`tempanon.kanon.kanonymize`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from tempanon._cliutil import info, levels_text, progress_reporter, report_roles, run_api
from tempanon.data.roles import statement_line
from tempanon.errors import InputError


def _risk_before_after(df, res, qi: list[str], uid: str | None, threshold: float = 0.2) -> dict:
    """Re-identification risk of the input and of the release (:func:`tempanon.metrics.measure`):
    k, uniques, prosecutor risk max/mean and the share of records above ``threshold``."""
    from tempanon.metrics.risk import measure

    released = res.table
    if uid is not None:
        released = released.assign(__uid__=df.loc[released.index, uid].to_numpy())
    keep = ("rows", "classes", "k", "respondent_k", "uniques", "prosecutor_risk_max", "prosecutor_risk_mean", "records_at_risk")
    before = measure(df, qi, uid=uid, threshold=threshold).as_dict()
    after = measure(released, qi, uid="__uid__" if uid else None, threshold=threshold).as_dict()
    return {"threshold": threshold, "before": {k: before[k] for k in keep}, "after": {k: after[k] for k in keep}}


AUDIT_HEADER = "# tempanon kanon audit: for the data steward only, never publish it with the release"


def audit_text(res) -> str:
    """The steward's audit of a kanon release: a comment line saying it is steward-only, the secret
    shuffle seed, then CSV ``release_row,input_line`` (1-based; the header is line 1 of the input)."""
    import pandas as pd

    rows = pd.DataFrame({"release_row": range(1, len(res.table) + 1), "input_line": [int(i) + 2 for i in res.table.index]})
    return f"{AUDIT_HEADER}\n# shuffle seed: {res.shuffle_seed}\n" + rows.to_csv(index=False)


def describe_checks(st, lattice_size: int) -> str:
    """What the search's node count counts: Incognito checks nodes of the lattices of every quasi-identifier
    subset (each once), so its count may exceed the full lattice's size; the other searches check nodes
    of the full lattice only."""
    if st.search_space > lattice_size:
        return (f"{st.nodes_checked} nodes checked, each once (distinct nodes of the lattices of all quasi-identifier "
                f"subsets, {st.search_space} nodes in all; {st.full_lattice_checks} of them in the full lattice of "
                f"{lattice_size} nodes)")
    return f"{st.nodes_checked} nodes checked of {lattice_size}"


def _parse_weights(spec: str | None) -> dict[str, float] | None:
    if not spec:
        return None
    out: dict[str, float] = {}
    for part in spec.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise InputError(f"--weights: expected name=number, got {part.strip()!r}")
        name, val = (s.strip() for s in part.split("=", 1))
        try:
            out[name] = float(val)
        except ValueError:
            raise InputError(f"--weights: weight of {name!r} is not a number: {val!r}") from None
    return out


def _run(
    input_path: Path,
    qi: str,
    hierarchies: Path,
    k: int,
    max_suppression: float,
    algorithm: str,
    criterion: str,
    weights: str | None,
    uid: str | None,
    drop: str | None,
    out: Path,
    summary: Path | None,
    quiet: bool,
    delimiter: str | None,
    report: Path | None = None,
    verbose: bool = False,
    sensitive: str | None = None,
    l: int | None = None,
    search_opts: dict | None = None,
    keep: str | None = None,
    allow_identifier: str | None = None,
    audit: Path | None = None,
    engine: str = "auto",
    memory_limit: str | None = None,
    spark_master: str | None = None,
) -> dict:
    from tempanon.data.io import OutputSet
    from tempanon.lattice.source import resolve_engine

    # every output checked against the inputs and each other before anything is read
    outs = OutputSet([input_path, ("--hierarchies", hierarchies)], {"--out": out, "--summary": summary, "--report": report, "--audit": audit},
                     spark_releases={"--out"} if engine == "spark" else (), tables={"--out"})
    if audit is not None and Path(os.path.realpath(audit)).parent == Path(os.path.realpath(out)).parent:
        raise InputError(f"--audit {audit} is in the release's folder: it links release rows to input lines and is for "
                         "the data steward only; write it elsewhere")
    from tempanon.data.io import refuse_nested_columns
    from tempanon.lattice.memory import check_memory_limit

    # a nested Parquet column (list, struct, map) given a role: refused before any engine reads a row
    refuse_nested_columns(input_path, {"--qi": qi, "--uid": [uid] if uid else None, "--sensitive": [sensitive] if sensitive else None,
                                       "--keep": keep, "--allow-identifier": allow_identifier})  # fmt: skip
    if spark_master is not None and engine != "spark":  # (ignored before; timestamped and job files refuse it)
        raise InputError("--spark-master needs --engine spark")
    resolved = resolve_engine(input_path, engine, memory_limit)
    check_memory_limit(resolved, memory_limit, spark_master=spark_master)
    if resolved != "numpy":  # out-of-core engines: tempanon.kanon.engine_command
        from tempanon.kanon.engine_command import run_with_engine

        return run_with_engine(locals())
    from tempanon.data.io import read_table
    from tempanon.data.roles import parse_column_list
    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize

    import time

    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    # a Parquet file: only the columns given a role are read (the others are left out all the same)
    df = read_table(input_path, as_text=True, delimiter=delimiter,
                    roles={"--qi": qi, "--drop": drop, "--keep": keep, "--allow-identifier": allow_identifier,
                           "--uid": [uid] if uid else None, "--sensitive": [sensitive] if sensitive else None})  # fmt: skip
    qi_cols = parse_column_list(qi, list(df.columns))
    drop_cols = parse_column_list(drop, list(df.columns))
    keep_cols = parse_column_list(keep, list(df.columns))
    allow_cols = parse_column_list(allow_identifier, list(df.columns))
    from tempanon.data.roles import require_columns

    require_columns(df, allow_cols, role="--allow-identifier column")

    require_columns(df, qi_cols, role="quasi-identifier")
    hier = load_hierarchies(hierarchies, qi_cols)
    if df.empty:  # a header-only export, named (as stream and init say it)
        raise InputError(f"the input table has no rows: {input_path}")
    phases["read input and hierarchies"] = time.perf_counter() - t0
    with progress_reporter(quiet) as progress:
        res = kanonymize(
            df,
            qi_cols,
            hier,
            k,
            uid=uid,
            identifying=drop_cols,
            max_suppression=max_suppression,
            algorithm=algorithm,
            criterion=criterion,
            weights=_parse_weights(weights),
            sensitive=sensitive,
            l=l,
            progress=progress,
            notice=lambda m: info(m, quiet),
            **(search_opts or {}),
            keep=keep_cols,
            allow_identifier=allow_cols,
        )
    if uid is None:  # an id column whose values repeat: k would count rows, not people
        from tempanon.steward.init import respondent_id_warning

        hint = respondent_id_warning(df, [*qi_cols, *keep_cols, *([sensitive] if sensitive else [])], path=input_path)
        if hint:
            info(f"warning: {hint}", quiet)
    # verified inside kanonymize; write atomically
    phases["search"] = res.search.stats.seconds
    phases["select, release and verify"] = max(res.runtime_seconds - res.search.stats.seconds, 0.0)
    rep = None
    if report is not None:  # built before anything is written; written after the output, atomically
        from tempanon.report.kanon import kanon_report
        from tempanon.report.sections import file_sha256

        t1 = time.perf_counter()
        rep = kanon_report(df, res, source=str(input_path), checksum=file_sha256(input_path), identifying=drop_cols)
        phases["build report"] = time.perf_counter() - t1
    summ = res.summary()
    summ.update({"input": str(input_path), "output": str(out)})
    summ["risk"] = _risk_before_after(df, res, qi_cols, uid)
    if report is not None:
        summ["report"] = str(report)
    if audit is not None:  # as the engine path's summary (tempanon.kanon.engine_command)
        summ["audit"] = str(audit)
    t1 = time.perf_counter()
    with outs:  # staged, then committed together
        outs.table(res.table, out, "--out", like=input_path, unchanged=res.unchanged_columns, input_text=df)
        if rep is not None:
            from tempanon.report.sections import add_verification

            add_verification(rep, summ.get("verification"))
            outs.stage(report, rep.write, "--report")
        if summary is not None:
            outs.json(summ, summary, "--summary")
        if audit is not None:
            text = audit_text(res)
            outs.stage(audit, lambda p: p.write_text(text, encoding="utf-8"), "--audit")
        outs.commit()
    phases["write outputs"] = time.perf_counter() - t1
    if verbose:
        st = res.search.stats
        info(
            f"search: {describe_checks(st, res.lattice_size)}"
            + f" ({len(res.anonymous_nodes)} anonymous, "
            f"{len(res.minimal_nodes)} minimal; {st.by_projection} decided by projection without a frequency set), "
            f"{st.table_scans} table scans, {st.rollups} rollups"
            + (
                f"; pruned: {st.pruned_subsets} subset-lattice nodes by the subset property, "
                f"{st.marked} of {st.candidates} candidates by marking (generalization property)"
                if st.candidates
                else ""
            )
            + (f", {st.cube_cuboids} cube cuboids" if st.cube_cuboids else "")
            + "\n"
            + "\n".join(f"  {name}: {sec:.3f} s" for name, sec in phases.items()),
            quiet,
        )
    return summ


def kanon(
    input: Annotated[Path, typer.Argument(help="Input table (CSV with ; or , or tab, or Parquet).")],
    qi: Annotated[str, typer.Option("--qi", help="Quasi-identifier columns, comma-separated (ranges A:B allowed).")],
    hierarchies: Annotated[Path, typer.Option("--hierarchies", help="Directory with <attribute>.csv hierarchies (ARX format).")],
    k: Annotated[int, typer.Option("--k", help="Every class must have at least k rows (k distinct respondents with --uid).")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the generalized table (.csv or .parquet).")],
    max_suppression: Annotated[float, typer.Option("--max-suppression", help="Fraction of rows that may be suppressed.")] = 0.0,
    algorithm: Annotated[str, typer.Option("--algorithm", help="incognito|super-roots|cube|binary-search|bottom-up|bottom-up-rollup|exhaustive")] = "incognito",
    criterion: Annotated[str, typer.Option("--criterion", help="height|weighted-height|discernibility|loss")] = "loss",
    weights: Annotated[str | None, typer.Option("--weights", help="Per-attribute weights for weighted-height, e.g. age=2,sex=1.")] = None,
    uid: Annotated[str | None, typer.Option("--uid", help="Respondent id column: k counts distinct respondents; dropped from the output.")] = None,
    drop: Annotated[str | None, typer.Option("--drop", help="Identifying columns to remove from the output.")] = None,
    keep: Annotated[str | None, typer.Option("--keep", help="Columns declared insensitive: released unchanged (screened for identifiers). Columns with no role are left out.")] = None,
    allow_identifier: Annotated[str | None, typer.Option("--allow-identifier", help="Release these columns unchanged although identifier screening flags them (reported).")] = None,
    audit: Annotated[Path | None, typer.Option("--audit", help="Steward-only CSV: input line of every release row and the secret shuffle seed (not in the release's folder; with --engine spark release_row counts the rows over the release's part files in name order).")] = None,
    summary: Annotated[Path | None, typer.Option("--summary", help="Write a JSON summary here.")] = None,
    delimiter: Annotated[str | None, typer.Option("--delimiter", help="CSV delimiter (detected if omitted).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or status output.")] = False,
    report: Annotated[Path | None, typer.Option("--report", help="Write a self-contained HTML report here (after verification).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show the search: nodes checked, table scans, rollups, time per phase.")] = False,
    sensitive: Annotated[str | None, typer.Option("--sensitive", help="Sensitive column: with --l every class must be l-diverse on it.")] = None,
    l: Annotated[int | None, typer.Option("--l", help="l-diversity of --sensitive in every class; --l-diversity says what l means.")] = None,
    l_diversity: Annotated[str, typer.Option("--l-diversity", "--l-model", help="frequency (default, as check --l-model: most frequent value <= |class|/l rows) | distinct (>= l values) | entropy (entropy >= log l) | recursive ((c,l): r1 < c(r_l+...+r_m), with --c).")] = "frequency",
    c: Annotated[float | None, typer.Option("--c", help="c of recursive (c,l)-diversity.")] = None,
    max_nodes: Annotated[int | None, typer.Option("--max-nodes", help="Stop the search after this many checks and release the best verified result found so far.")] = None,
    time_limit: Annotated[float | None, typer.Option("--time-limit", help="Stop the search after this many seconds and release the best verified result found so far.")] = None,
    max_lattice: Annotated[int | None, typer.Option("--max-lattice", help="Refuse lattices with more nodes than this (default 1,000,000).")] = None,
    engine: Annotated[str, typer.Option("--engine", help="auto|numpy|duckdb|spark: who reads the rows and computes frequency sets (auto: DuckDB for files from 256 MiB).")] = "auto",
    memory_limit: Annotated[str | None, typer.Option("--memory-limit", help="Bound the engine's memory, e.g. 4GB, 512MiB or 80%: DuckDB spills to a temporary directory beyond it (auto picks DuckDB when a limit is given); with --engine spark the local driver's heap; refused with --engine numpy.")] = None,
    spark_master: Annotated[str | None, typer.Option("--spark-master", help="Spark master URL for --engine spark (default: a local[2] session).")] = None,
) -> None:
    """k-anonymize a table by full-domain generalization (Incognito, SIGMOD 2005).

    Exit status: 0 written, 1 no generalization satisfies k, 2 bad input, 3 verification failed,
    4 the engine could not finish (out of memory, a failed Spark job).
    """
    summ = run_api(
        lambda: _run(input, qi, hierarchies, k, max_suppression, algorithm, criterion, weights, uid, drop, out, summary, quiet, delimiter, report, verbose, sensitive, l,
                     dict(l_diversity=l_diversity, c=c, max_nodes=max_nodes, time_limit=time_limit, max_lattice=max_lattice),
                     keep, allow_identifier, audit, engine=engine, memory_limit=memory_limit, spark_master=spark_master)  # fmt: skip
    )
    report_roles(summ, quiet)
    info(
        f"{summ['algorithm']}: {len(summ['anonymous_nodes'])} of {summ['lattice_size']} nodes are {summ['k']}-anonymous "
        f"({summ['nodes_checked']} nodes checked{' in the lattices of all quasi-identifier subsets' if summ['checks']['search_space'] > summ['lattice_size'] else ''}); selected {levels_text(summ['selected_levels'])} by {summ['criterion']}; "
        f"{summ['suppressed_rows']} rows suppressed; loss {summ['loss']:.4f}\n"
        + (f"search stopped early ({summ['stopped_early']}): best verified result found so far\n" if summ.get("stopped_early") else "")
        + f"wrote {out}" + (f" and {summary}" if summary else "") + (f" and {report}" if report else "")
        + ((f"; steward audit {audit}" + (" (checked row by row)" if summ["verification"].get("audit") else "")) if audit else ""),
        quiet,
    )
    info(statement_line(summ["verification"]), quiet)


def demo(
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Directory for the result and its summary.")] = Path("tempanon-output"),
    k: Annotated[int, typer.Option("--k", help="k of k-anonymity.")] = 5,
    max_suppression: Annotated[float, typer.Option("--max-suppression", help="Fraction of rows that may be suppressed (as kanon).")] = 0.0,
    algorithm: Annotated[str, typer.Option("--algorithm", help="incognito|super-roots|cube|binary-search|bottom-up|bottom-up-rollup|exhaustive (as kanon)")] = "incognito",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or notes on stderr (the result is still printed).")] = False,
) -> None:
    """k-anonymize the bundled UCI Adult sample (30,162 rows, 9 quasi-identifiers) with Incognito."""
    from tempanon.samples import ADULT_QI, adult_hierarchies_dir, adult_path

    out = out_dir / "adult-anonymized.csv"
    summary = out_dir / "adult-summary.json"
    summ = run_api(
        lambda: _run(adult_path(), ",".join(ADULT_QI), adult_hierarchies_dir(), k, max_suppression, algorithm, "loss", None, None, None, out, summary, quiet, None)
    )
    typer.echo(
        f"Adult ({summ['rows_in']} rows), k={summ['k']}: {len(summ['anonymous_nodes'])} of {summ['lattice_size']} "
        f"full-domain generalizations are {summ['k']}-anonymous; {summ['nodes_checked']} checked by {summ['algorithm']} "
        f"in {summ['search_seconds']:.2f} s.\n"
        f"Selected (min. loss {summ['loss']:.4f}): {levels_text(summ['selected_levels'])}\n"
        f"Result:  {out.resolve()}\nSummary: {summary.resolve()}\n"
        + statement_line(summ["verification"])
    )
