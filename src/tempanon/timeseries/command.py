"""``tempanon kp``: (k,P)-anonymity for time series (thin layer over :func:`kp_anonymize`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from tempanon._cliutil import info, progress_reporter, report_roles, run_api
from tempanon.data.roles import statement_line


def kp(
    input: Annotated[Path, typer.Argument(help="Table with one series per row (CSV, Parquet).")],
    id: Annotated[str, typer.Option("--id", help="Id column (removed from the release).")],
    qi: Annotated[str, typer.Option("--qi", help="Quasi-identifier columns, in time order: a list 'A0,A1' or a range 'A0:A9'.")],
    out: Annotated[Path, typer.Option("--out", help="Released table (CSV, or Parquet by suffix).")],
    k: Annotated[int, typer.Option("--k", help="Every value envelope is shared by at least k series.")] = 10,
    p: Annotated[int, typer.Option("--p", help="Inside a k-group every pattern is shared by at least P series (P <= k).")] = 5,
    sensitive: Annotated[Optional[str], typer.Option("--sensitive", help="Sensitive column(s), published as they are.")] = None,
    algorithm: Annotated[str, typer.Option("--algorithm", help="kapra (default) or naive.")] = "kapra",
    max_level: Annotated[int, typer.Option("--max-level", help="Largest SAX alphabet size (level).")] = 5,
    paa: Annotated[Optional[int], typer.Option("--paa", help="Number of PAA segments of the SAX word (default: one symbol per quasi-identifier).")] = None,
    l_diversity: Annotated[Optional[int], typer.Option("--l-diversity", help="Make each P-subgroup l-diverse by perturbing the (numeric) sensitive value.")] = None,
    epsilon: Annotated[Optional[float], typer.Option("--epsilon", help="Largest change of a perturbed sensitive value.")] = None,
    publish_values: Annotated[Optional[str], typer.Option("--publish-values", help="Publish value ranges only for these quasi-identifiers.")] = None,
    publish_patterns: Annotated[Optional[str], typer.Option("--publish-patterns", help="Publish pattern symbols only for these quasi-identifiers.")] = None,
    summary: Annotated[Optional[Path], typer.Option("--summary", help="Write a JSON summary here.")] = None,
    audit: Annotated[Optional[Path], typer.Option("--audit", help="Steward-only CSV: id, output_row (empty if suppressed).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress or status output.")] = False,
    report: Annotated[Optional[Path], typer.Option("--report", help="Write a self-contained HTML report here (after verification).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show the grouping (k-groups, P-subgroups, levels) and the time per phase.")] = False,
    keep: Annotated[Optional[str], typer.Option("--keep", help="Columns declared insensitive: released unchanged (screened for identifiers). Columns with no role are left out.")] = None,
    drop: Annotated[Optional[str], typer.Option("--drop", help="Identifying columns, removed from the release.")] = None,
    allow_identifier: Annotated[Optional[str], typer.Option("--allow-identifier", help="Release these columns unchanged although identifier screening flags them (reported).")] = None,
) -> None:
    """(k,P)-anonymize time series with KAPRA or Naive (Shou et al., TKDE).

    Each published series carries its k-group's value envelope (<col>_lo, <col>_hi) and its
    P-subgroup's SAX pattern (letters, 'a' lowest) with its level. The release is checked by an
    independent verifier before anything is written; all files are written atomically.
    Exit status: 0 ok, 1 no solution, 2 bad input, 3 verification failed.
    """
    from tempanon.data.io import OutputSet, read_table
    from tempanon.data.roles import parse_column_list
    from tempanon.timeseries.api import kp_anonymize

    import time

    phases: dict[str, float] = {}

    def work():
        t0 = time.perf_counter()
        # every output checked against the input and each other before anything is read
        outs = OutputSet([input], {"--out": out, "--summary": summary, "--audit": audit, "--report": report})
        df = read_table(input)
        cols = list(df.columns)
        q = parse_column_list(qi, cols)
        sens = parse_column_list(sensitive, cols)
        pv = parse_column_list(publish_values, cols) if publish_values is not None else None
        pp = parse_column_list(publish_patterns, cols) if publish_patterns is not None else None
        with progress_reporter(quiet) as progress:
            result = kp_anonymize(
                df, id_col=id, qi=q, k=k, P=p, sensitive=sens, algorithm=algorithm.lower(),
                max_level=max_level, paa_segments=paa, l_diversity=l_diversity, epsilon=epsilon,
                publish_values=pv, publish_patterns=pp, progress=progress, keep=parse_column_list(keep, cols),
                drop=parse_column_list(drop, cols), allow_identifier=parse_column_list(allow_identifier, cols))
        phases["read, group, publish and verify"] = time.perf_counter() - t0
        rep = None
        if report is not None:  # built before anything is written; written after the output, atomically
            from tempanon.report.kp import kp_report
            from tempanon.report.sections import file_sha256

            t1 = time.perf_counter()
            rep = kp_report(df, result, id_col=id, qi=q, sensitive=sens, source=str(input), checksum=file_sha256(input))
            phases["build report"] = time.perf_counter() - t1
        t1 = time.perf_counter()
        with outs:  # staged, then committed together
            outs.table(result.released, out, "--out")
            if audit is not None:
                outs.table(result.audit, audit, "--audit")
            if rep is not None:
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
    info(
        f"{s['algorithm']}: {s['published']} of {s['series']} series published in {s['kgroups']} k-groups / "
        f"{s['psubgroups']} P-subgroups, {s['suppressed']} suppressed, VL={s['value_loss']:.4g}, "
        f"PL={s['pattern_loss']:.4g}, mean level {s['mean_level']:.3g} -> {out}" + (f" and {report}" if report is not None else ""),
        quiet,
    )
    info(statement_line(s["verification"]), quiet)
