"""Cost of the report and the summary's ``risk`` on the engine path (``tempanon kanon FILE --engine
duckdb --report``): the engine's class aggregates of the input and of the written release, and the
report built from them, against the run that produced the release.

    python benchmarks/bench_engine_report.py --rows 2000000 [--engine duckdb] [--uid] [--audit]

Generates the Lands-End-shaped Parquet table of ``bench_engine.py`` (under /tmp, deleted
afterwards), runs k = 5 Incognito with the release written to Parquet and verified by the engine,
then times ``input_aggregates`` + ``release_aggregates`` (``--uid order_id``: respondents per class
too) and ``kanon_report_from_aggregates`` + render. Reported: CPU seconds of the process (all
threads, ``time.process_time``) and wall seconds of each phase, the class counts, peak RSS.

``--audit`` (DuckDB, Spark): the search, release and verification run once more with the steward's
audit (``kanonymize(..., audit=...)``: a second COPY of the rows and its row-by-row SQL check), reported
as a further column, then once more without it (``--audit`` only: the same warm engine, so the
difference of the last two columns is the audit's cost).

``--timestamped`` (with ``--audit``): instead, the timestamped file path
(:func:`tempanon.temporal.outofcore.anonymize_timestamped_file`, the events of
``bench_engine_temporal.py``: k = 5, respondent-level, 1% suppression, time only) run three times on
the engine: without the audit (warm-up), with it, and again without it.

``--engine spark``: the CPU seconds are the Python process's **plus the JVM's** (``utime + stime``
of the Spark driver JVM, a child of this process, from ``/proc/<pid>/stat``; local mode, so the
executors' threads are in it); the first column includes the JVM's warm-up. Peak RSS is this
process's only (the JVM's heap is ``--memory-limit``, default 1g).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--engine", default="duckdb")
    ap.add_argument("--uid", action="store_true")
    ap.add_argument("--audit", action="store_true", help="also the run with the steward audit, then again without it")
    ap.add_argument("--memory-limit", default=None, help="Spark: the local driver's heap (e.g. 4GB)")
    ap.add_argument("--timestamped", action="store_true", help="the timestamped file path with and without --audit")
    a = ap.parse_args()
    if a.timestamped:
        return timestamped(a)
    from bench_engine import generate_landsend
    from bench_incognito import LANDSEND

    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize
    from tempanon.lattice.source import open_source
    from tempanon.report.kanon import kanon_report_from_aggregates

    tmp = Path(tempfile.mkdtemp(prefix="bench-engine-report-"))
    try:
        table, hdir = generate_landsend(a.rows, tmp)
        qi = [x for x, _, _ in LANDSEND]
        uid = "order_id" if a.uid else None
        src = open_source(table, a.engine, memory_limit=a.memory_limit)
        cpu = _cpu_clock(src)
        try:
            phases = {}
            t, c = time.perf_counter(), cpu()
            res = kanonymize(src, qi, load_hierarchies(hdir, qi), 5, uid=uid, out=str(tmp / "out.parquet"))
            phases["search, release, verify"] = (cpu() - c, time.perf_counter() - t)
            t, c = time.perf_counter(), cpu()
            before = src.input_aggregates(qi, uid=uid)
            after, values = src.release_aggregates(res.output, uid=uid)
            rb, ra = before.risk(), after.risk()
            phases["aggregates and risk"] = (cpu() - c, time.perf_counter() - t)
            t, c = time.perf_counter(), cpu()
            html = kanon_report_from_aggregates(res, columns=src.columns, before=before, after=after, values=values,
                                                source=str(table), checksum=None).render()  # fmt: skip
            phases["report"] = (cpu() - c, time.perf_counter() - t)
            if a.audit:
                t, c = time.perf_counter(), cpu()
                kanonymize(src, qi, load_hierarchies(hdir, qi), 5, uid=uid, out=str(tmp / "out2.parquet"),
                           audit=str(tmp / "steward" / "audit.csv"))  # fmt: skip
                phases["search, release, verify with the audit"] = (cpu() - c, time.perf_counter() - t)
                t, c = time.perf_counter(), cpu()
                kanonymize(src, qi, load_hierarchies(hdir, qi), 5, uid=uid, out=str(tmp / "out3.parquet"))
                phases["again without the audit"] = (cpu() - c, time.perf_counter() - t)
        finally:
            src.close()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"| {a.engine} | {a.rows:,} | {'order_id' if a.uid else '-'} | {rb.classes:,} -> {ra.classes:,} | "
              + " | ".join(f"{cpu:.1f} / {wall:.1f}" for cpu, wall in phases.values()) + f" | {peak:,.0f} | {len(html) / 1024:.0f} KB |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def timestamped(a) -> None:
    from bench_engine_temporal import generate

    import tempanon.temporal.outofcore as ooc

    tmp = Path(tempfile.mkdtemp(prefix="bench-engine-ts-audit-"))
    try:
        path = tmp / "events.parquet"
        generate(path, a.rows)
        cpu, cols = None, []
        for i, audit in enumerate((None, tmp / "steward" / "audit.csv", None)):
            t, c = time.perf_counter(), cpu() if cpu else 0.0
            res = ooc.anonymize_timestamped_file(path, out=tmp / "rel" / f"out{i}.parquet", time="t", qi=["sex", "region"], uid="uid",
                                                 k=5, max_suppression=0.01, engine=a.engine, memory_limit=a.memory_limit,
                                                 audit=audit)  # fmt: skip
            if cpu is None:  # the first run started the JVM: its CPU from here on
                cpu = _cpu_clock(type("S", (), {"engine": a.engine})())
                cols.append("(warm-up)")
                continue
            cols.append(f"{cpu() - c:.1f} / {time.perf_counter() - t:.1f}")
        s = res.summary
        print(f"| timestamped {a.engine} | {a.rows:,} | {s['granularity']}, {s['suppressed']:,} suppressed | "
              + " | ".join(cols[1:]) + f" | {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _cpu_clock(src):
    """CPU seconds of this process, plus the Spark driver JVM's (a child process) on Spark."""
    proc = None
    if getattr(src, "engine", None) == "spark":
        from pyspark import SparkContext

        proc = getattr(SparkContext._gateway, "proc", None)
    if proc is None:
        return time.process_time
    import os

    tick = os.sysconf("SC_CLK_TCK")

    def cpu() -> float:
        with open(f"/proc/{proc.pid}/stat") as fh:
            f = fh.read().rsplit(")", 1)[1].split()
        return time.process_time() + (int(f[11]) + int(f[12])) / tick  # utime, stime of the JVM

    return cpu


if __name__ == "__main__":
    main()
