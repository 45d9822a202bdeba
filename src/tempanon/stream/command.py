"""``tempanon stream``: publish a stream of snapshots l-diverse with bounded delay (a thin layer over
:mod:`tempanon.stream.api`)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.markup import escape

from tempanon._cliutil import DATE_ORDER_HELP, info, progress_reporter, run_api
from tempanon.errors import InputError, TempanonWarning
from tempanon.stream.release_files import SNAPSHOT_FILE, anatomy_files, earlier_release_files, stage_release

if TYPE_CHECKING:  # pandas is imported lazily so that ``tempanon --help`` stays fast
    import pandas as pd

PUBLISH_MODES = ("anatomy", "generalization")


def _write_snapshot(out: Path, label: str, qit: pd.DataFrame, st: pd.DataFrame) -> None:
    from tempanon.data.io import write_table

    write_table(qit, out / f"{label}.qit.csv")
    write_table(st, out / f"{label}.st.csv")


def fast_kernel_cached() -> bool | None:
    """Whether numba's on-disk cache holds the fast step's compiled kernel, found without compiling it:
    the index file of the kernel's entry point (``_fastkernel.steps``, the one function called from
    Python; its callees are compiled into it) read as numba reads it before a load -- empty when the file
    is missing, written by another numba, or stale (the source's modification time and size, its
    "stamp") -- holding an entry for this CPU and code (numba's key after the signature: the codegen's
    magic tuple, the hashes of the function's bytecode and closure). ``True`` without numba (nothing to
    compile); ``None`` when it cannot tell (numba's cache internals changed): the caller then says the
    kernel may be compiled. Costs the import of numba and of the kernel module (which the run needs
    anyway) and one small file read: ~0.4 CPU-s, measured."""
    try:
        from tempanon.stream import _fastkernel as k

        if not k.HAVE_NUMBA:
            return True
        entry = k.steps
        cache = entry._cache
        overloads = cache._cache_file._load_index()  # {} when missing, stale or of another numba version
        want = tuple(cache._index_key(None, entry.targetctx.codegen())[1:])
        return any(tuple(key[1:]) == want for key in overloads)
    except Exception:  # (numba's private cache API; never a reason to fail a run)
        return None


def checkpoint_path(out: Path) -> Path:
    """Where an interrupted standard-input run keeps its window: beside ``--out`` (never inside the
    published folder: it holds records not yet anonymized)."""
    out = Path(out)
    return out.parent / f"{out.name}.checkpoint"


def parse_suppression_cost(text: str) -> float | dict:
    """``"10"`` -> 10.0; ``"Fight=20,default=10"`` -> ``{"Fight": 20.0, "default": 10.0}``."""
    text = str(text).strip()
    if "=" not in text:
        try:
            return float(text)
        except ValueError as exc:
            raise InputError(f"--suppression-cost {text!r} is not a number nor 'value=cost,...'") from exc
    out: dict = {}
    for part in text.split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise InputError(f"--suppression-cost: {part!r} is not 'value=cost'")
        key, val = part.rsplit("=", 1)
        if key.strip() in out:  # ('Fight=20,Fight=30' kept the last without a word)
            raise InputError(f"--suppression-cost: the cost of {key.strip()!r} is given twice")
        try:
            out[key.strip()] = float(val)
        except ValueError as exc:
            raise InputError(f"--suppression-cost: cost of {key.strip()!r} is not a number: {val!r}") from exc
    return out


def _audit_frame(audit: pd.DataFrame) -> pd.DataFrame:
    return audit[["row", "snapshot", "published", "distance"]]


def _verified(run):
    """``run()``, with any independent-check failure named as such: a :class:`VerificationError` (exit
    status 3; raised before the failing release is written: with a file input nothing is written) says
    "verification failed" first."""
    from tempanon.errors import VerificationError

    try:
        return run()
    except VerificationError as exc:
        if str(exc).startswith("verification failed"):
            raise
        raise VerificationError(f"verification failed: {exc}") from exc


def stream(
    input: str = typer.Argument(..., help="Input table (CSV/Parquet), or '-' for JSON lines on standard input."),
    time: str = typer.Option(..., "--time", help="Time column; snapshots are its values truncated to --snapshot."),
    sensitive: str = typer.Option(..., "--sensitive", help="Sensitive column (protected by l-diversity)."),
    qi: Optional[str] = typer.Option(None, "--qi", help="Quasi-identifier columns, e.g. 'race,sex,age' (required; other columns are left out)."),
    l: int = typer.Option(..., "--l", "-l", help="l of l-diversity (>= 2)."),
    window: int = typer.Option(
        ..., "--window", "-w",
        help="Largest publication delay w in snapshots (0 = suppression only). The paper's reposition window of size "
        "w + 1 (it holds w + 1 snapshots: a record moves at most w).",
    ),
    snapshot: str = typer.Option("day", "--snapshot", help="Snapshot unit: minute, hour, day, week, month, year, number."),
    timezone: Optional[str] = typer.Option(
        None, "--timezone",
        help="Cut snapshots by this zone's clock (IANA name, e.g. America/Chicago): times with a UTC offset are "
        "converted to it. Default: the wall clock each time is written in.",
    ),
    date_order: str = typer.Option("auto", "--date-order", help=DATE_ORDER_HELP + " Standard input: auto holds the order "
                                   "of the first value that decides it and refuses a later value in the other order."),
    cost: str = typer.Option("linear", "--cost", help="Reposition cost mu: linear, quadratic, or 'mu(0),mu(1),...,mu(w)'."),
    suppression_cost: str = typer.Option(
        "10", "--suppression-cost",
        help="Suppression cost beta: a number, or per value 'Fight=20,Theft=5,default=10'.",
    ),
    out: Path = typer.Option(
        ..., "--out",
        help="Directory for <snapshot>.qit.csv and <snapshot>.st.csv (Anatomy) or <snapshot>.csv (generalization), "
        "only snapshots with records; a run replaces an earlier release's snapshot files in it, and a folder "
        "holding anything else is refused.",
    ),
    summary: Optional[Path] = typer.Option(
        None, "--summary",
        help="Write a JSON summary here (data steward only: it holds each snapshot's original size; not inside --out).",
    ),
    audit: Optional[Path] = typer.Option(None, "--audit", help="Write the per-record audit CSV here (data steward only)."),
    seed: int = typer.Option(0, "--seed", help="Seed of Anatomy's random group choices."),
    defer: Optional[float] = typer.Option(
        None, "--defer", min=0.0, max=1.0,
        help="How a step prices a suppression that a later step can still recycle: 0 = beta (the paper's "
        "pricing), 1 = its cheapest recycling cost, in between a mix (default 2/3, measured best; 0 with --step paper; "
        "docs/stream.md).",
    ),
    step: str = typer.Option(
        "fast", "--step",
        help="The online step: fast (default: tempanon's compiled local search for the broader step problem, every "
        "pending placement may change; not proven optimal), exact (the same step problem solved exactly: ILP when no "
        "certificate) or paper (the paper's Definition 2: recycle-reposition, inherited snapshots fixed). docs/stream.md.",
    ),
    max_snapshots: int = typer.Option(
        20000, "--max-snapshots", min=1,
        help="Refuse a stream spanning more snapshots than this (consecutive granules from the first to the last "
        "record, empty ones included): a coarser --snapshot is usually meant.",
    ),
    resume: bool = typer.Option(
        False, "--resume",
        help="Standard input only: continue an interrupted run from its checkpoint (OUT.checkpoint beside --out), "
        "feeding the input that follows the last line read (the interruption message names it).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or status output."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter of a file input (detected if omitted)."),
    drop: Optional[str] = typer.Option(None, "--drop", help="Identifying columns (never published; named so they are not reported as left out)."),
    allow_identifier: Optional[str] = typer.Option(None, "--allow-identifier", help="Publish these quasi-identifiers exactly (Anatomy QIT) although identifier screening flags them (reported)."),
    keep: Optional[str] = typer.Option(None, "--keep", help="Not available for streams: Anatomy publishes only the quasi-identifiers (QIT) and the sensitive column (ST)."),
    report: Optional[Path] = typer.Option(None, "--report", help="Write a self-contained HTML report here (after verification; file input only)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show the window steps (ILP), repositions and the time per phase."),
    publish: str = typer.Option(
        "anatomy", "--publish",
        help="How each popped snapshot is published: anatomy (QIT + ST tables) or generalization "
        "(Incognito with an l-diversity check; needs --hierarchies; file input only).",
    ),
    hierarchies: Optional[Path] = typer.Option(
        None, "--hierarchies",
        help="Directory with <attribute>.csv hierarchies (ARX format) for every quasi-identifier (--publish generalization).",
    ),
) -> None:
    """Publish a stream of snapshots l-diverse (Anatomy) with delay at most --window snapshots,
    repositioning and suppressing records at minimum information loss (Wang et al., ICDM 2010).

    Exit status: 0 written, 1 no release possible (--l above the sensitive column's distinct values,
    missing counted as one) or a step's ILP found no solution (--step exact or paper), 2 bad input, 3
    the independent verifier rejected the output (nothing written).
    """

    from time import perf_counter as _clock

    phases: dict[str, float] = {}
    built: list = []  # the report, once built

    def _model_options(beta) -> dict:
        """The model's options, passed alike by the file and the standard-input paths."""
        return {"time": time, "sensitive": sensitive, "l": l, "w": window, "qi": qi, "snapshot": snapshot, "cost": cost,
                "suppression_cost": beta, "seed": seed, "defer": defer, "step": step, "max_snapshots": max_snapshots,
                "timezone": timezone, "date_order": date_order}

    def announce_kernel() -> None:
        """Say why the first fast-step run of an environment pauses: numba compiles the kernel once (about
        20 CPU seconds on a shared 2-core machine, summary ``jit_compile_cpu_seconds``), later runs
        load it from numba's cache. Said only when it will compile: the kernel not loaded in this
        process and not in numba's cache (:func:`fast_kernel_cached`; when that cannot tell, said)."""
        from tempanon.stream import fast

        if str(step).lower() == "fast" and window > 0 and fast._kernel is None and not fast_kernel_cached():
            info("preparing the fast step's compiled kernel (numba; the first run in an environment compiles it, "
                 "about 20 CPU seconds, later runs load it from the cache)", quiet)

    def run() -> dict:
        t0 = _clock()
        beta = parse_suppression_cost(suppression_cost)
        if publish not in PUBLISH_MODES:
            raise InputError(f"--publish {publish!r}: expected one of {', '.join(PUBLISH_MODES)}")
        generalize = publish == "generalization"
        if generalize and hierarchies is None:
            raise InputError("--publish generalization needs --hierarchies DIR (one <attribute>.csv per quasi-identifier)")
        if not generalize and hierarchies is not None:
            raise InputError("--hierarchies is only used with --publish generalization")
        if generalize and input == "-":
            raise InputError(
                "--publish generalization needs an input file; with '-' (standard input) snapshots are published by Anatomy"
            )
        if out.exists() and not out.is_dir():
            raise InputError(f"--out {out} exists and is not a directory")
        if report is not None and input == "-":
            raise InputError("--report needs an input file (the report measures the input table); with '-' use --summary")
        if report is not None and Path(report).resolve() in {Path(p).resolve() for p in (input, summary, audit) if p is not None}:
            raise InputError("--report must be a file of its own (not the input, --summary or --audit)")
        # (the report too: it shows the input's checksum, each snapshot's original size and suppressions, and
        # in the folder it made every later run into it refused: 'holds r.html, which is not a snapshot file')
        for name, path in (("--summary", summary), ("--audit", audit), ("--report", report)):
            if path is not None and Path(out).resolve() in Path(path).resolve().parents:
                raise InputError(
                    f"{name} {path} is inside the published folder --out {out}: it is for the data steward only "
                    "(original snapshot sizes, row placements); write it elsewhere"
                )
        if resume and input != "-":
            raise InputError("--resume continues an interrupted standard-input stream ('-'); a file input is simply run again")
        _check_roles_and_outputs(beta)
        if input == "-":
            if delimiter is not None:
                raise InputError("--delimiter applies to a CSV file input; standard input is read as JSON lines")
            return _run_stdin()
        from tempanon.data.io import refuse_nested_columns

        # a nested Parquet column (list, struct, map) given a role: refused before any row is read
        refuse_nested_columns(input, {"--time": [time], "--sensitive": [sensitive], "--qi": qi,
                                      "--allow-identifier": allow_identifier})  # fmt: skip
        from tempanon.data.io import read_table

        # a Parquet file: only the columns given a role are read (without --qi every column is one)
        roles = None if qi is None else {"--time": [time] if time else None, "--sensitive": [sensitive] if sensitive else None,
                                         "--qi": qi, "--drop": drop, "--allow-identifier": allow_identifier}  # fmt: skip
        from tempanon.data.io import keep_table_columns

        table = read_table(input, as_text=True, roles=roles, delimiter=delimiter)
        df = keep_table_columns(table.reset_index(drop=True), table)  # (its columns with no role: left out)
        del table
        if df.empty:  # as kanon, timestamped and kp: a header-only export is a mistake, not an empty release
            raise InputError(f"the input table has no rows: {input}")
        _screen_qi(df)
        hier = None
        if generalize:
            from tempanon.data.roles import parse_column_list
            from tempanon.hierarchy import load_hierarchies

            qi_cols = (
                parse_column_list(qi, list(df.columns)) if qi is not None else [c for c in df.columns if c not in (time, sensitive)]
            )
            hier = load_hierarchies(hierarchies, [c for c in qi_cols if c in df.columns])
        with progress_reporter(quiet) as progress:
            from tempanon.data.roles import parse_column_list
            from tempanon.stream.api import anonymize_stream

            announce_kernel()
            result = anonymize_stream(df, progress=progress, **_model_options(beta),
                                      allow_identifier=parse_column_list(allow_identifier, list(df.columns)))
        phases["read, publish and verify"] = _clock() - t0
        if generalize:
            from tempanon.stream.generalize import generalize_snapshots

            t1 = _clock()
            # each snapshot is generalized and verified l-diverse (independent check) before anything is written
            gen = generalize_snapshots(df, result.published, result.summary["qi"], sensitive, l, hier,
                                       allow_identifier=parse_column_list(allow_identifier, list(df.columns)))
            phases["generalize and verify"] = _clock() - t1
            t1 = _clock()
            if report is not None:  # built before anything is written
                from tempanon.report.sections import file_sha256
                from tempanon.report.stream import stream_report

                t2 = _clock()
                built.append(stream_report(df, result, source=str(input), checksum=file_sha256(input), generalized=gen,
                                           parameters={"suppression cost": suppression_cost, "seed": seed,
                                                       "defer": result.summary["defer"], "step": step}))
                phases["build report"] = _clock() - t2
            from tempanon.data.io import csv_text

            with _file_outputs() as outs:  # staged, then committed together
                earlier = earlier_release_files(out, [input, hierarchies])  # scanned before anything is staged
                stage_release(outs, out, [(f"{g.label}.csv", csv_text(g.table)) for g in gen if len(g.table)], earlier)
                done = _finish(result, gen, outs=outs)
                outs.commit()
            phases["write outputs"] = _clock() - t1
            return done
        if report is not None:  # built before anything is written
            from tempanon.report.sections import file_sha256
            from tempanon.report.stream import stream_report

            t1 = _clock()
            built.append(stream_report(df, result, source=str(input), checksum=file_sha256(input),
                                       parameters={"suppression cost": suppression_cost, "seed": seed,
                                                   "defer": result.summary["defer"], "step": step}))
            phases["build report"] = _clock() - t1
        t1 = _clock()
        # everything verified: write (staged, then committed together)
        with _file_outputs() as outs:
            stage_release(outs, out, anatomy_files(result), earlier_release_files(out, [input, hierarchies]))
            done = _finish(result, outs=outs)
            outs.commit()
        phases["write outputs"] = _clock() - t1
        return done

    def _run_stdin() -> dict:
        import pickle

        import pandas as pd

        from tempanon.data.roles import parse_column_list

        _screen_qi(pd.DataFrame(columns=[*parse_column_list(qi), time, sensitive]))  # names only: values arrive later

        from tempanon.data.io import atomic_write
        from tempanon.stream.api import StreamInterrupted, stream_json_lines

        ckpt = checkpoint_path(out)
        params = {"time": time, "sensitive": sensitive, "qi": qi, "l": l, "window": window, "snapshot": snapshot,
                  "cost": cost, "suppression_cost": suppression_cost, "seed": seed, "defer": defer, "step": step,
                  **({"timezone": timezone} if timezone is not None else {}),
                  **({"date_order": date_order} if date_order != "auto" else {})}
        state = None
        if resume:
            if not ckpt.exists():
                raise InputError(f"--resume: no checkpoint {ckpt} (it is written beside --out when a run is interrupted)")
            try:
                saved = pickle.loads(ckpt.read_bytes())  # the steward's own file, written by an interrupted run
            except Exception as exc:
                raise InputError(f"--resume: checkpoint {ckpt} cannot be read ({exc})") from exc
            if saved.get("params") != params:
                diff = [k for k in params if saved.get("params", {}).get(k) != params[k]]
                raise InputError(f"--resume: the options differ from the interrupted run's ({', '.join(diff)}); use the same ones")
            state = saved["state"]
        elif ckpt.exists():
            raise InputError(f"{ckpt} holds the window of an interrupted run: continue it with --resume, or remove it")
        out.mkdir(parents=True, exist_ok=True)

        def on_publish(p) -> None:
            if p.size:  # snapshots without records: listed in the summary, no file
                _write_snapshot(out, p.label, p.qit, p.st)
                info(f"published {p.label} ({p.size} records)", quiet)

        def _lines(first: int):
            """Standard input's lines decoded as UTF-8 here, naming the line of a byte that is not: Python's own
            decoding of sys.stdin raised a UnicodeDecodeError traceback (PYTHONIOENCODING=utf-8) or turned the
            byte into a lone surrogate ('... not valid Unicode ('\\udce9' ...)', C locale)."""
            raw = getattr(sys.stdin, "buffer", None)
            if raw is None:
                yield from sys.stdin
                return
            for lineno, data in enumerate(raw, start=first):
                try:
                    yield data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(f"standard input, line {lineno}: not UTF-8 (byte {exc.start + 1} of the line is "
                                     f"0x{data[exc.start]:02x}); send the records as UTF-8 (e.g. iconv -f latin1 -t utf-8)") from None

        def _call(state):
            return stream_json_lines(_lines(1 if state is None else state["lines"] + 1), on_publish=on_publish, resume=state,
                                     interruptible=True, **_model_options(parse_suppression_cost(suppression_cost)))

        announce_kernel()
        try:
            result = _call(state)
        except StreamInterrupted as exc:
            blob = pickle.dumps({"params": params, "state": exc.state})
            atomic_write(ckpt, lambda p: p.write_bytes(blob))
            _finish(exc.result, final=False)
            raise StreamInterrupted(
                f"{exc}; the window (records read but not yet published) is saved in {ckpt}: continue with the same "
                f"options and --resume, feeding standard input from line {exc.state['lines'] + 1}"
                + (f"; what was published is in {summary}" if summary is not None else ""),
                exc.state, exc.result) from None
        if ckpt.exists():
            ckpt.unlink()  # the run is complete: the window was published
        return _finish(result)

    roles_info: dict = {}

    def _check_roles_and_outputs(beta) -> None:
        """Fail closed (issue 12): --qi is required (checked after the parameters, so their errors
        come first); outputs may not be an input (see OutputSet)."""
        from tempanon.stream.api import make_cost
        from tempanon.stream.model import validate_l, validate_window
        from tempanon.stream.snapshots import validate_granule

        validate_l(l)
        validate_window(window)
        from tempanon.stream.api import _check_window_span

        _check_window_span(window, max_snapshots)  # (before the cost table of w + 1 entries is built)
        validate_granule(snapshot)
        from tempanon.temporal.parse import check_date_order

        check_date_order(date_order)
        make_cost(cost, window, beta)
        if qi is None:
            raise InputError("name the quasi-identifiers with --qi (other columns are left out; it no longer means every column)")
        if keep is not None:
            raise InputError("--keep is not available for streams: Anatomy publishes only the quasi-identifiers (QIT) "
                             "and the sensitive column (ST); list columns to publish exactly in --qi")
        _file_outputs()  # checked before anything is read
        earlier = earlier_release_files(out, [input, hierarchies])
        if input == "-" and not resume and any(SNAPSHOT_FILE.match(p.name) for p in earlier):
            raise InputError(
                f"--out {out} holds an earlier release's snapshot files: a standard-input stream publishes each snapshot "
                "as it is ready, so it starts in a new or empty folder (continue an interrupted run with --resume); "
                "remove them or choose another folder"
            )

    def _file_outputs():
        """The run's outputs, checked against the inputs and each other (no overwrite)."""
        from tempanon.data.io import OutputSet

        return OutputSet([input, ("--hierarchies", hierarchies)], {"--summary": summary, "--audit": audit, "--report": report},
                         directories={"--out": out})

    def _screen_qi(df) -> None:
        """Anatomy publishes the quasi-identifiers exactly: screen them (tempanon.data.screen) before anything is written."""
        from tempanon.data.roles import parse_column_list, verification_statement
        from tempanon.data.screen import refuse_identifiers

        from tempanon.data.io import table_columns

        cols = list(df.columns)
        q = parse_column_list(qi, cols)
        d = parse_column_list(drop, cols)
        allow = parse_column_list(allow_identifier, cols)
        for c in d:  # (--drop race --qi race published race in every QIT, exit 0)
            if c in q or c == sensitive:
                raise InputError(f"column {c!r} is released by the model; it cannot also be dropped (--drop)")
        if input != "-":  # (standard input: the records' keys are not known yet)
            from tempanon.data.roles import require_columns_list

            require_columns_list(cols, d, role="--drop column")
            require_columns_list(cols, allow, role="--allow-identifier column")
        overrides = refuse_identifiers(df, [c for c in q if c in cols], allow=allow, time=time)
        # (a Parquet file read with only its role columns: every column of the file)
        left = [c for c in table_columns(df) if c not in {*q, *d, time, sensitive}]
        roles_info["left_out"] = left
        roles_info["verification"] = verification_statement(
            f"{l}-diversity of {sensitive!r} in every published snapshot", [*q, sensitive], overrides=overrides,
            left_out=left, dropped=d)

    def _finish(result, gen=None, final: bool = True, outs=None) -> dict:
        """The summary; writes the audit, report and summary (staged in ``outs`` when given: a file
        input's outputs are committed as one set; a stdin stream has published snapshots already)."""
        from tempanon.data.io import write_json, write_table

        s = dict(result.summary)
        s.update(roles_info)
        s["input"] = input
        s["out"] = str(out)
        s["suppression_cost"] = suppression_cost
        s["publish"] = publish
        s["files_written"] = sum(1 for p in s["per_snapshot"] if p["published"] and p["published_size"] > 0)
        s["steward_only"] = (
            "this summary is for the data steward only: per_snapshot 'size' and 'suppressed' are the original snapshot "
            "sizes; keep it out of the published folder"
        )
        if not final:
            s["checkpoint"] = str(checkpoint_path(out))
        if gen is not None:
            s["hierarchies"] = str(hierarchies)
            s["generalization"] = {
                g.label: {"levels": dict(g.levels), "loss": float(g.loss), "classes": int(g.classes), "records": int(len(g.table))}
                for g in gen
            }
        if audit is not None:
            if outs is not None:
                outs.table(_audit_frame(result.audit), audit, "--audit")
            else:
                write_table(_audit_frame(result.audit), audit)
        if built:
            from tempanon.report.sections import add_verification

            if "verification" not in built[0].section_keys():
                add_verification(built[0], s.get("verification"))
            if outs is not None:
                outs.stage(report, built[0].write, "--report")
            else:
                built[0].write(report)
            s["report"] = str(report)
        if summary is not None:
            if outs is not None:
                outs.json(s, summary, "--summary")
            else:
                write_json(s, summary)
        return s

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TempanonWarning)  # printed below from the summary
        s = run_api(lambda: _verified(run))
    for message in s.get("warnings", []):
        info(f"[yellow]warning:[/yellow] {escape(message)}", quiet)
    if verbose:
        info(
            f"window steps: {s['steps_solved_by_ilp']} solved by the ILP; {s['repositioned']} records repositioned "
            f"(total distance {s['total_reposition_distance']}), {s['suppressed']} suppressed\n"
            + "\n".join(f"  {name}: {sec:.3f} s" for name, sec in phases.items()),
            quiet,
        )
    info(
        f"published {s['snapshots']} snapshots of {s['records']} records to {out} ({s['files_written']} with records, in "
        f"{s['files_written'] * (2 if publish == 'anatomy' else 1)} files): "
        f"{s['suppressed']} suppressed, {s['repositioned']} repositioned (max {s['max_reposition_distance']}), "
        f"information loss {s['information_loss']:g}",
        quiet,
    )
    if s.get("verification"):  # issue 12: what was verified, on which columns (last line)
        from tempanon._cliutil import report_roles
        from tempanon.data.roles import statement_line

        report_roles(s, quiet)
        info(escape(statement_line(s["verification"])), quiet)
