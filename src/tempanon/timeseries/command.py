"""``tempanon kp``: (k,P)-anonymity for time series (thin layer over :func:`kp_anonymize`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from tempanon._cliutil import DATE_ORDER_HELP, info, progress_reporter, report_roles, run_api
from tempanon.data.roles import statement_line


def kp(
    input: Annotated[Path, typer.Argument(help="Table with one series per row (CSV, Parquet).")],
    out: Annotated[Path, typer.Option("--out", help="Released table (CSV, or Parquet by suffix).")],
    id: Annotated[Optional[str], typer.Option("--id", help="Id column (removed from the release); with --long, --entity.")] = None,
    qi: Annotated[Optional[str], typer.Option("--qi", help="Quasi-identifier columns, in time order: a list 'A0,A1' or a range 'A0:A9' (with --long: time values; default all).")] = None,
    long: Annotated[bool, typer.Option("--long", help="Long format: one row per entity and time (--entity, --time, --value).")] = False,
    entity: Annotated[Optional[str], typer.Option("--entity", help="With --long: the entity (series id) column.")] = None,
    time_col: Annotated[Optional[str], typer.Option("--time", help="With --long: the time column (ordered as numbers, timestamps or text).")] = None,
    value: Annotated[Optional[str], typer.Option("--value", help="With --long: the reading column.")] = None,
    date_order: Annotated[Optional[str], typer.Option("--date-order", help="With --long, the --time values: " + DATE_ORDER_HELP + " (default auto)")] = None,
    na_values: Annotated[Optional[str], typer.Option("--na-values", help="Missing-value sentinels of the readings, e.g. '-1,NA'.")] = None,
    shuffle_seed: Annotated[Optional[int], typer.Option("--shuffle-seed", help="Seed of the release's row order inside groups (default: a fresh secret; recorded only in --audit).")] = None,
    missing: Annotated[str, typer.Option("--missing", help="A series with a missing reading: refuse (default, exit 2) or drop (left out of the release; counted in the summary).")] = "refuse",
    k: Annotated[int, typer.Option("--k", help="Every value envelope is shared by at least k series.")] = 10,
    p: Annotated[int, typer.Option("--p", help="Inside a k-group every pattern is shared by at least P series (P <= k).")] = 5,
    sensitive: Annotated[Optional[str], typer.Option("--sensitive", help="Sensitive column(s), published as they are.")] = None,
    algorithm: Annotated[str, typer.Option("--algorithm", help="kapra (default) or naive.")] = "kapra",
    max_level: Annotated[int, typer.Option("--max-level", help="Largest SAX alphabet size (level).")] = 5,
    paa: Annotated[Optional[int], typer.Option("--paa", help="Number of PAA segments of the SAX word (default: one symbol per value up to 10 values, else 4-10 segments from the number of series and P; docs/timeseries.md).")] = None,
    l_diversity: Annotated[Optional[int], typer.Option("--l-diversity", help="Make each P-subgroup l-diverse by perturbing the (numeric) sensitive value.")] = None,
    epsilon: Annotated[Optional[float], typer.Option("--epsilon", help="Largest change of a perturbed sensitive value.")] = None,
    sensitive_numeric: Annotated[bool, typer.Option("--sensitive-numeric", help="The sensitive column is a numeric measurement even if it holds few whole numbers (else l-diversity refuses it as categorical).")] = False,
    publish_values: Annotated[Optional[str], typer.Option("--publish-values", help="Publish value ranges only for these quasi-identifiers.")] = None,
    publish_patterns: Annotated[Optional[str], typer.Option("--publish-patterns", help="Publish pattern symbols only for these quasi-identifiers.")] = None,
    summary: Annotated[Optional[Path], typer.Option("--summary", help="Write a JSON summary here.")] = None,
    audit: Annotated[Optional[Path], typer.Option("--audit", help="Steward-only CSV: id, output_row (empty if suppressed), shuffle_seed; not inside the release's folder.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or status output.")] = False,
    report: Annotated[Optional[Path], typer.Option("--report", help="Write a self-contained HTML report here (after verification).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show the grouping (k-groups, P-subgroups, levels) and the time per phase.")] = False,
    keep: Annotated[Optional[str], typer.Option("--keep", help="Columns declared insensitive: released unchanged (screened for identifiers). Columns with no role are left out.")] = None,
    drop: Annotated[Optional[str], typer.Option("--drop", help="Identifying columns, removed from the release.")] = None,
    allow_identifier: Annotated[Optional[str], typer.Option("--allow-identifier", help="Release these columns unchanged although identifier screening flags them (reported).")] = None,
    delimiter: Annotated[Optional[str], typer.Option("--delimiter", help="CSV delimiter (detected if omitted).")] = None,
) -> None:
    """(k,P)-anonymize time series with KAPRA or Naive (Shou et al., TKDE).

    Each published series carries its k-group's value envelope (<col>_lo, <col>_hi) and its
    P-subgroup's SAX pattern (letters, 'a' lowest) with its level. The release is checked by an
    independent verifier before anything is written; all files are written atomically.

    Exit status: 0 ok, 1 no solution, 2 bad input, 3 verification failed.
    """
    from tempanon.data.io import OutputSet, read_table
    from tempanon.data.roles import parse_column_list
    from tempanon.timeseries.api import kp_anonymize, write_kp_audit

    import time

    phases: dict[str, float] = {}
    long_info: dict = {}  # the long format: how times were ordered, warnings

    def work():
        t0 = time.perf_counter()
        # every output checked against the input and each other before anything is read
        outs = OutputSet([input], {"--out": out, "--summary": summary, "--audit": audit, "--report": report},
                         tables={"--out"})
        if audit is not None:  # the audit links ids to release rows: never beside the release (issue 12)
            rel_dir = Path(out).resolve().parent
            if Path(audit).resolve().parent == rel_dir or rel_dir in Path(audit).resolve().parents:
                from tempanon.errors import InputError

                raise InputError(f"--audit {audit} is inside the release folder {rel_dir}; the audit links ids to "
                                 "release rows and is for the data steward only: write it elsewhere")
        from tempanon.data.io import refuse_nested_columns
        from tempanon.errors import InputError

        if date_order is not None:  # refused before the input is read
            from tempanon.temporal.parse import check_date_order

            if not long:
                raise InputError("--date-order is for --long (how the --time values' numeric dates are read)")
            check_date_order(date_order)

        # a nested Parquet column (list, struct, map) given a role: refused before any row is read
        # (with --long, --qi names time values, not columns)
        refuse_nested_columns(input, {"--id": [id] if id else None, "--entity": [entity] if entity else None,
                                      "--time": [time_col] if time_col else None, "--value": [value] if value else None,
                                      "--qi": None if long else qi, "--sensitive": sensitive,
                                      "--publish-values": None if long else publish_values,
                                      "--publish-patterns": None if long else publish_patterns,
                                      "--keep": keep, "--allow-identifier": allow_identifier})  # fmt: skip
        # a Parquet file: only the columns given a role are read (the others are left out all the same). Cells as
        # text, as kanon, timestamped and job files read them: the id, sensitive and kept columns are released (and
        # audited) as written; numbers inferred made id 00001 '1' in the audit and a kept zip 01004 '1004'
        df = read_table(input, delimiter=delimiter, as_text=True, roles={
            "--id": [id] if id else None, "--entity": [entity] if entity else None,
            "--time": [time_col] if time_col else None, "--value": [value] if value else None,
            "--qi": None if long else qi, "--sensitive": sensitive, "--publish-values": None if long else publish_values,
            "--publish-patterns": None if long else publish_patterns, "--keep": keep, "--drop": drop,
            "--allow-identifier": allow_identifier})  # fmt: skip
        id_col = id
        if long:
            if entity is None or time_col is None or value is None:
                raise InputError("--long needs --entity, --time and --value")
            if id is not None and id != entity:
                raise InputError("with --long the series id is --entity; leave out --id")
            from tempanon.timeseries.longformat import long_to_wide

            import warnings

            from tempanon.errors import TempanonWarning

            sens0 = parse_column_list(sensitive, list(df.columns))
            # --keep columns (one value per entity, as sensitive ones) and --drop columns go through the pivot too: they
            # were 'unknown --keep column' after it (the wide table's columns named), so --keep and --drop did not
            # work with --long (found in the uatb acceptance pass)
            keep0 = [c for c in parse_column_list(keep, list(df.columns)) if c not in sens0]
            drop0 = [c for c in parse_column_list(drop, list(df.columns)) if c in df.columns]
            long_df = df
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", TempanonWarning)
                df, times = long_to_wide(df, entity=entity, time=time_col, value=value, keep=[*sens0, *keep0],
                                         date_order=date_order)  # fmt: skip
            first = long_df[entity].astype(str).drop_duplicates().index  # each entity's first row (as job files do)
            for c in drop0:
                if c not in df.columns:
                    df[c] = long_df[c].loc[first].to_numpy()
            long_info["time_order"] = df.attrs.get("time_order")
            long_info["date_order"] = df.attrs.get("date_order")
            long_info["warnings"] = [str(w.message) for w in caught if issubclass(w.category, TempanonWarning)]
            id_col = entity
        elif entity is not None or time_col is not None or value is not None:
            raise InputError("--entity, --time and --value need --long")
        if id_col is None:
            raise InputError("missing option --id (the series id column)")
        cols = list(df.columns)
        if qi is None:
            if not long:
                raise InputError("missing option --qi (the quasi-identifier columns in time order)")
            q = times
        else:
            q = parse_column_list(qi, cols)
        sens = parse_column_list(sensitive, cols)
        pv = parse_column_list(publish_values, cols) if publish_values is not None else None
        pp = parse_column_list(publish_patterns, cols) if publish_patterns is not None else None
        with progress_reporter(quiet) as progress:
            result = kp_anonymize(
                df, id_col=id_col, qi=q, k=k, P=p, sensitive=sens, algorithm=algorithm.lower(),
                max_level=max_level, paa_segments=paa, l_diversity=l_diversity, epsilon=epsilon,
                publish_values=pv, publish_patterns=pp, numeric_sensitive=sensitive_numeric, na_values=na_values,
                missing=missing, shuffle_seed=shuffle_seed, progress=progress, keep=parse_column_list(keep, cols),
                drop=parse_column_list(drop, cols), allow_identifier=parse_column_list(allow_identifier, cols))
        if long_info:  # how the long format's times were ordered (and a warning when as text)
            result.summary["time_order"] = long_info["time_order"]
            if long_info["date_order"]:  # numeric dates: the order they were read in, as timestamped says it
                result.summary["date_order"] = f"{long_info['date_order']} first"
            result.summary["warnings"] = [*result.summary.get("warnings", []), *long_info["warnings"]]
        phases["read, group, publish and verify"] = time.perf_counter() - t0
        rep = None
        if report is not None:  # built before anything is written; written after the output, atomically
            from tempanon.report.kp import kp_report
            from tempanon.report.sections import file_sha256

            t1 = time.perf_counter()
            rep = kp_report(result.data if result.data is not None else df, result, id_col=id_col, qi=q, sensitive=sens, source=str(input), checksum=file_sha256(input))
            phases["build report"] = time.perf_counter() - t1
        t1 = time.perf_counter()
        with outs:  # staged, then committed together
            outs.table(result.released, out, "--out")
            if audit is not None:
                outs.stage(audit, lambda p_: write_kp_audit(result, p_), "--audit")
            if rep is not None:
                from tempanon.report.sections import add_verification

                add_verification(rep, result.summary.get("verification"))
                outs.stage(report, rep.write, "--report")
            if summary is not None:
                outs.json({**result.summary, **({"report": str(report)} if report is not None else {})}, summary, "--summary")
            outs.commit()
        phases["write outputs"] = time.perf_counter() - t1
        return result

    result = run_api(work)
    s = result.summary
    report_roles(s, quiet)
    if verbose:
        import numpy as np

        levels = np.bincount(result.grouping.level[result.grouping.kgroup >= 0])
        info(
            f"grouping: {s['kgroups']} k-groups, {s['psubgroups']} P-subgroups, {s['suppressed']} series suppressed; "
            "published pattern levels: " + ", ".join(f"{lv}: {c}" for lv, c in enumerate(levels) if c) + "\n"
            + "\n".join(f"  {name}: {sec:.3f} s" for name, sec in phases.items()),
            quiet,
        )
    for w in s.get("warnings", []):
        info(f"[yellow]warning:[/] {w}", quiet)
    info(
        f"{s['algorithm']}: {s['published']} of {s['series']} series published in {s['kgroups']} k-groups / "
        f"{s['psubgroups']} P-subgroups, {s['suppressed']} suppressed, VL={s['value_loss']:.4g}, "
        f"PL={s['pattern_loss']:.4g}, mean level {s['mean_level']:.3g} -> {out}" + (f" and {report}" if report is not None else ""),
        quiet,
    )
    info(statement_line(s["verification"]), quiet)
