"""Time-granularity search on DuckDB and Spark vs numpy (issue 15): CPU and peak RSS.

    python benchmarks/bench_engine_temporal.py --rows 10000000 --engines numpy,duckdb,duckdb-file,spark [--memory-limit 2GB]

Generates ``--rows`` events with respondent ids (one respondent per 10 events on average, Zipf-ish
activity), two quasi-identifiers (sex: 2 values, region: 8) and a timestamp at minute resolution
over two years, as Parquet under /tmp (deleted afterwards). Then, for each engine in a fresh
subprocess (so ``ru_maxrss`` is that run's): read the Parquet with pandas, and run
:func:`tempanon.temporal.api.anonymize_timestamped` (k = 5, respondent-level, 1% suppression, the
default granularities: parse, search, release, independent verification). Reported: CPU seconds
(``time.process_time``, all threads) of the anonymization and of the search alone
(Algorithm 1's Procedure 2 calls: numpy ``prepare`` + checks, or the DuckDB queries), peak RSS
after reading and at the end. Printed as Markdown rows.

``--joint``: the joint search of time and the quasi-identifiers (:mod:`tempanon.temporal.joint`)
with hierarchies for both (region: R0-R3 / R4-R7 / *; sex: * ), the default granularities, k = 5,
1% suppression; ``duckdb-file`` is then the out-of-core joint path
(:mod:`tempanon.temporal.outofcore_joint`: frequency sets from DuckDB) and its plan's path
(bottom set fetched or frequency sets in the engine) is printed; ``TEMPANON_MAX_DRIVER_ROWS=0``
forces the engine path.

``spark`` runs the same queries in Spark SQL (``local[2]``; the rows read and encoded on the driver):
the session is started before the clock, and the JVM's CPU during the run (read from ``/proc`` of
the descendant processes, as in ``bench_engine.py``) is added to the CPU columns; the peak RSS
columns are the Python process's only.

``spark-file``: the same file path on Spark (the Parquet read by Spark, the release written by Spark
as a directory of part files and verified by SQL on it; time only).

``duckdb-file`` is the out-of-core path (:func:`tempanon.temporal.outofcore.anonymize_timestamped_file`):
the Parquet read in place by DuckDB (no pandas table), the release written by DuckDB as Parquet
beside it and verified by SQL on the written file; its CPU of the release COPY and of the
verification are printed as a comment line.

``--report``: also what the HTML report measures. File paths: ``measures=True`` (the GROUP BYs of
:mod:`tempanon.temporal.outofcore_report` inside the verification, included in the CPU columns and
printed apart); in-memory engines: :func:`tempanon.report.timestamped.timestamped_report` on the
rows after the run, its CPU printed as a comment line (not in the CPU column).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def generate(path: Path, rows: int, seed: int = 5, chunk: int = 5_000_000) -> None:
    """Write ``rows`` events as Parquet in chunks of ``chunk`` rows (constant driver memory, so
    100M events can be generated on a shared machine). Same distribution for every chunk size."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    n_resp = max(rows // 10, 1)
    t0 = np.datetime64("2022-01-01T00:00:00", "s").astype(np.int64)
    regions = np.array([f"R{i}" for i in range(8)], dtype=object)
    writer = None
    try:
        for lo in range(0, rows, chunk):
            m = min(chunk, rows - lo)
            uid = (rng.zipf(1.3, m) * 7919 + rng.integers(0, n_resp, m)) % n_resp
            minutes = rng.integers(0, 2 * 365 * 24 * 60, m)
            tab = pa.table({
                "uid": pa.array(uid.astype(np.int64)),
                "sex": pa.DictionaryArray.from_arrays(pa.array((uid % 2).astype(np.int32)), pa.array(["F", "M"])),
                "region": pa.DictionaryArray.from_arrays(pa.array(((uid // 2) % 8).astype(np.int32)), pa.array(list(regions))),
                "t": pa.array((t0 + minutes * 60).astype("datetime64[s]")),
            })  # fmt: skip
            if writer is None:
                writer = pq.ParquetWriter(str(path), tab.schema)
            writer.write_table(tab, row_group_size=1_000_000)
    finally:
        if writer is not None:
            writer.close()


def hierarchies() -> dict:
    from tempanon.hierarchy import Hierarchy

    return {"region": Hierarchy.from_rows("region", [[f"R{i}", "R0-R3" if i < 4 else "R4-R7", "*"] for i in range(8)]),
            "sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}


def _timed_kanonymize(search: list, jvm=lambda: 0.0) -> None:
    """Count the joint search's Incognito call (kanonymize) as its search CPU (with ``jvm()``, the
    Spark JVM's CPU so far, for the spark engine)."""
    import tempanon.kanon.api as kapi

    orig = kapi.kanonymize

    def timed(*a, **kw):
        c, j = time.process_time(), jvm()
        try:
            return orig(*a, **kw)
        finally:
            search[0] += time.process_time() - c + jvm() - j

    kapi.kanonymize = timed


def _jvm_clock(engine: str):
    """``(cpu, at_start)``: for spark, the session started before the clock and a function giving the
    JVM's CPU so far (a child process: read from /proc, :func:`bench_engine.descendants_cpu_and_peak`),
    with its start-up CPU (reported apart); for the other engines zero."""
    if engine != "spark":
        return (lambda: 0.0), 0.0
    from bench_engine import descendants_cpu_and_peak

    from tempanon.lattice.source_spark import local_session

    local_session(None)
    cpu = lambda: descendants_cpu_and_peak()[0]  # noqa: E731
    return cpu, cpu()


def child_file(path: str, memory_limit: str | None, joint: bool = False, engine: str = "duckdb", measures: bool = False) -> None:
    """The out-of-core path: the Parquet read in place by DuckDB (or Spark), the release written by
    the engine (Parquet, beside the input) and verified by SQL on what was written."""
    import tempanon.temporal.outofcore as ooc

    search = [0.0]
    orig_lg = ooc.least_generalization
    jvm, jvm_start = _jvm_clock(engine)

    def timed(*a, **kw):
        c, j = time.process_time(), jvm()
        try:
            return orig_lg(*a, **kw)
        finally:
            search[0] += time.process_time() - c + jvm() - j

    ooc.least_generalization = timed
    if joint:
        _timed_kanonymize(search, jvm)
    phase = {"write": 0.0, "verify": 0.0, "measure": 0.0}

    def timed_phase(name, fn):
        def wrapper(*a, **kw):
            c, j = time.process_time(), jvm()
            try:
                return fn(*a, **kw)
            finally:
                phase[name] += time.process_time() - c + jvm() - j
        return wrapper

    ooc._write = timed_phase("write", ooc._write)  # the release's COPY (sorted by class, hashed within)
    ooc.verify_written = timed_phase("verify", ooc.verify_written)  # the independent SQL check of the file
    import tempanon.temporal.outofcore_report as oor

    oor.measure_written = timed_phase("measure", oor.measure_written)  # --report's GROUP BYs (inside the verification)
    out = Path(path).parent / f"release-{engine}.parquet"
    c0, w0, j0 = time.process_time(), time.perf_counter(), jvm()
    res = ooc.anonymize_timestamped_file(path, out=out, time="t", qi=["sex", "region"], uid="uid", k=5,
                                         max_suppression=0.01, memory_limit=memory_limit, engine=engine,
                                         hierarchies=hierarchies() if joint else None, measures=measures)  # fmt: skip
    cpu, wall = time.process_time() - c0 + jvm() - j0, time.perf_counter() - w0
    s = res.summary
    size = sum(p.stat().st_size for p in out.glob("*")) if out.is_dir() else out.stat().st_size
    print(json.dumps({
        "engine": f"{engine}-file", "cpu": cpu, "jvm_start_cpu": jvm_start, "wall": wall, "search_cpu": search[0], "rss_read_mb": float("nan"),
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "granularity": s["granularity"],
        "gen_m": s["gen_m"], "gen_s": s["gen_s"], "suppressed": s["suppressed"], "respondents": s["respondents"],
        "verified": bool(s["verification"].get("verified_file")), "out_mb": size / 2**20,
        "write_cpu": phase["write"], "verify_cpu": phase["verify"], "measure_cpu": phase["measure"], "path": s["plan"]["path"],
        "sets": {x: s["plan"][x] for x in ("sets_fetched", "largest_fetched_rows", "sets_kept_in_engine", "engine_rollups",
                                           "engine_checks", "class_sets_fetched", "largest_class_set_rows") if x in s["plan"]},
    }))  # fmt: skip


def child(path: str, engine: str, memory_limit: str | None, joint: bool = False, report: bool = False) -> None:
    import pandas as pd

    if engine in ("duckdb-file", "spark-file"):
        return child_file(path, memory_limit, joint, engine.split("-")[0], report)

    import tempanon.temporal.least as least
    from tempanon.temporal.api import anonymize_timestamped

    df = pd.read_parquet(path)
    rss_read = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    search = [0.0]
    orig_lg = least.least_generalization
    jvm, jvm_start = _jvm_clock(engine)

    def timed(*a, **kw):  # the search proper (Procedure 1 + 2)
        c, j = time.process_time(), jvm()
        try:
            return orig_lg(*a, **kw)
        finally:
            search[0] += time.process_time() - c + jvm() - j

    import tempanon.temporal.api as api

    api.least_generalization = timed
    orig_prepare = api.prepare

    def timed_prepare(*a, **kw):  # numpy's sort of the relation belongs to its search
        c = time.process_time()
        try:
            return orig_prepare(*a, **kw)
        finally:
            search[0] += time.process_time() - c

    api.prepare = timed_prepare
    if joint:
        _timed_kanonymize(search, jvm)
    c0, w0, j0 = time.process_time(), time.perf_counter(), jvm()
    res = anonymize_timestamped(df, time="t", qi=["sex", "region"], uid="uid", k=5, max_suppression=0.01,
                                engine=engine, memory_limit=memory_limit if engine == "duckdb" else None, shuffle_seed=1,
                                hierarchies=hierarchies() if joint else None)  # fmt: skip
    cpu, wall = time.process_time() - c0 + jvm() - j0, time.perf_counter() - w0
    s = res.summary
    measure_cpu = 0.0
    if report:  # the in-memory report's measures (pandas, on the rows), for comparison with the file paths
        from tempanon.report.timestamped import timestamped_report

        c1 = time.process_time()
        timestamped_report(df, res, source=path, checksum=None)
        measure_cpu = time.process_time() - c1
    print(json.dumps({
        "engine": engine, "cpu": cpu, "measure_cpu": measure_cpu, "jvm_start_cpu": jvm_start, "wall": wall, "search_cpu": search[0], "rss_read_mb": rss_read,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "granularity": s["granularity"],
        "gen_m": s["gen_m"], "gen_s": s["gen_s"], "suppressed": s["suppressed"], "respondents": s["respondents"],
        "verified": bool(s["verification"]),
    }))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--engines", default="numpy,duckdb")
    ap.add_argument("--memory-limit", default=None)
    ap.add_argument("--tmpdir", default="/tmp", help="where the generated Parquet (and the duckdb-file release) go")
    ap.add_argument("--joint", action="store_true", help="the joint search (hierarchies for sex and region)")
    ap.add_argument("--report", action="store_true", help="file paths: also the HTML report's measures, by GROUP BY in the engine")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child[0], a.child[1], a.memory_limit, a.joint, a.report)
        return
    tmp = Path(tempfile.mkdtemp(prefix="tempanon-bench-ts-", dir=a.tmpdir))
    try:
        path = tmp / "events.parquet"
        c0, w0 = time.process_time(), time.perf_counter()
        generate(path, a.rows)
        print(f"# {a.rows:,} events generated in {time.perf_counter() - w0:.0f} s ({time.process_time() - c0:.0f} s CPU), "
              f"{path.stat().st_size / 2**20:,.0f} MiB Parquet; load: {os.getloadavg()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
        print("| events | engine | CPU s (anonymize) | CPU s (search) | wall s | peak RSS MB (after read) | peak RSS MB | granularity | gen_m | gen_s | suppressed |")
        print("|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
        for eng in a.engines.split(","):
            cmd = [sys.executable, __file__, "--child", str(path), eng]
            if a.memory_limit:
                cmd += ["--memory-limit", a.memory_limit]
            if a.joint:
                cmd += ["--joint"]
            if a.report:
                cmd += ["--report"]
            w1 = time.perf_counter()
            out = subprocess.run(cmd, capture_output=True, text=True)
            print(f"# {eng}: finished {time.strftime('%H:%M UTC', time.gmtime())} after {time.perf_counter() - w1:.0f} s; "
                  f"load {os.getloadavg()}", flush=True)
            if out.returncode != 0:
                print(f"| {a.rows:,} | {eng} | failed: {out.stderr.strip().splitlines()[-1:]} |")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            if r.get("jvm_start_cpu"):
                print(f"# {eng}: CPU s of the JVM's start (local[2], before the clock) {r['jvm_start_cpu']:.1f}; the "
                      "CPU columns include the JVM's CPU during the run (/proc of the descendant processes)", flush=True)
            if a.report and "write_cpu" not in r:
                print(f"# {eng}: CPU s of the in-memory report (pandas, not in the CPU column) {r['measure_cpu']:.1f}", flush=True)
            if "write_cpu" in r:
                print(f"# {eng}: CPU s of the release COPY {r['write_cpu']:.1f}, of the SQL verification {r['verify_cpu']:.1f}"
                      + (f" (of it the report's measures {r['measure_cpu']:.1f})" if a.report else "") + "; "
                      f"release {r['out_mb']:,.0f} MiB Parquet; frequency sets: {r['path']}"
                      + (f" ({', '.join(f'{x} {y:,}' for x, y in r['sets'].items())})" if r.get("sets") else ""), flush=True)
            print(f"| {a.rows:,} | {eng}{', `--memory-limit ' + a.memory_limit + '`' if a.memory_limit and eng != 'numpy' else ''} | {r['cpu']:.1f} | {r['search_cpu']:.1f} | {r['wall']:.1f} | {r['rss_read_mb']:,.0f} | "
                  f"{r['rss_mb']:,.0f} | {r['granularity'] if isinstance(r['granularity'], str) else ', '.join(f'{x}: {y}' for x, y in r['granularity'].items())} | {r['gen_m']} | {r['gen_s']:,} | {r['suppressed']:,} |", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
