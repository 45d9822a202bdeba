"""Engines end to end (issue 15): CPU and peak RSS per frequency-set source.

    python benchmarks/bench_engine.py landsend --rows 10000000 --engines duckdb,numpy [--memory-limit 4GB]
    python benchmarks/bench_engine.py adult [--repeat 5]

``landsend`` generates a Parquet table shaped like the Incognito paper's Lands End data (Figure 9;
the same attributes, cardinalities, hierarchies and Zipf skew as ``bench_incognito.py landsend``)
plus two non-QI columns, into a temporary directory under /tmp (deleted afterwards), then runs for
each engine, in a fresh subprocess (so peak RSS is that run's): k = 5, basic Incognito (all
anonymous nodes), selection by loss, the release written to Parquet and verified. Reported: wall
seconds, CPU seconds of the process (all threads; ``time.process_time``) and peak RSS
(``ru_maxrss``), end to end from the input path to the verified output file. For ``spark`` (local
session started by the run) the JVM's CPU seconds are added and its peak RSS is added to the
driver's (an upper bound of the joint peak), read from ``/proc`` before the session stops.

``adult`` runs :func:`tempanon.kanon.kanonymize` in memory on the bundled Adult sample (9 QIs,
k = 5) at 0% and 2% suppression, end to end (encode, search, selection, release, verification),
and prints the median and minimum CPU seconds over ``--repeat`` runs.

Each result is printed as a Markdown table row.
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
sys.path.insert(0, str(ROOT / "benchmarks"))


def generate_landsend(n_rows: int, directory: Path, seed: int = 0, chunk: int = 2_000_000) -> tuple[Path, Path]:
    """Write ``landsend.parquet`` (string QI columns, dictionary-encoded) and one ARX hierarchy file
    per QI into ``directory``; returns (table path, hierarchy directory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bench_incognito import LANDSEND, _landsend_hierarchy

    hdir = directory / "hier"
    hdir.mkdir(parents=True, exist_ok=True)
    values, probs = {}, {}
    for name, card, height in LANDSEND:
        h, vals = _landsend_hierarchy(name, card, height)
        h.to_csv(hdir / f"{name}.csv")
        values[name] = pa.array(vals, pa.string())
        p = 1.0 / np.arange(1, card + 1) ** 0.8
        probs[name] = p / p.sum()
    rng = np.random.default_rng(seed)
    path = directory / "landsend.parquet"
    writer = None
    done = 0
    while done < n_rows:
        m = min(chunk, n_rows - done)
        cols = {}
        for name, card, _ in LANDSEND:
            codes = rng.choice(card, size=m, p=probs[name]).astype(np.int32)
            cols[name] = pa.DictionaryArray.from_arrays(pa.array(codes), values[name])
        cols["order_id"] = pa.array(np.arange(done, done + m, dtype=np.int64))
        cols["amount"] = pa.array(rng.integers(1, 50_000, m).astype(np.int64))
        batch = pa.table(cols)
        if writer is None:
            writer = pq.ParquetWriter(path, batch.schema)
        writer.write_table(batch)
        done += m
    writer.close()
    return path, hdir


def descendants_cpu_and_peak() -> tuple[float, float]:
    """CPU seconds (user + system, with their reaped children) and the sum of the peak RSS (MB,
    ``VmHWM``) of every live descendant process of this one (Linux ``/proc``): the Spark JVM. The
    summed peaks are an upper bound of the joint peak."""
    tick = os.sysconf("SC_CLK_TCK")
    todo, cpu, peak = [os.getpid()], 0.0, 0.0
    while todo:
        pid = todo.pop()
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
        if pid == os.getpid():
            continue
        try:
            f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += sum(int(x) for x in f[11:15]) / tick  # utime, stime, cutime, cstime
            hwm = [ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ln.startswith("VmHWM:")]
            peak += int(hwm[0].split()[1]) / 1024 if hwm else 0.0
        except OSError:
            pass
    return cpu, peak


def run_one(engine: str, table: str, hdir: str, out: str, memory_limit: str | None, k: int) -> dict:
    """One end-to-end run in this process: path in, verified Parquet out."""
    from bench_incognito import LANDSEND

    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize
    from tempanon.lattice.source import open_source

    qi = [a for a, _, _ in LANDSEND]
    t0, c0 = time.perf_counter(), time.process_time()
    hier = load_hierarchies(hdir, qi)
    src = open_source(table, engine, memory_limit=memory_limit)
    jvm_cpu = jvm_peak = 0.0
    try:
        res = kanonymize(src, qi, hier, k, algorithm="incognito", out=out)
        if engine == "spark":  # the JVM is a child process: its CPU and peak RSS, read before it stops
            jvm_cpu, jvm_peak = descendants_cpu_and_peak()
    finally:
        src.close()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0 + jvm_cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 + jvm_peak
    return {
        "engine": engine, "rows": res.rows_in, "distinct_rows": (getattr(res, "plan", None) or {}).get("distinct_rows"),
        "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak, "search_s": res.search.stats.seconds,
        "anonymous": len(res.anonymous_nodes), "minimal": len(res.minimal_nodes), "selected": list(res.selected_node),
        "rows_out": res.rows_out, "verified": bool(res.engine_checks and res.engine_checks.get("verified_file")) or engine == "numpy",
        "engine_path": res.engine_path, "memory_limit": memory_limit, "table_scans": res.search.stats.table_scans,
        "engine_queries": (getattr(res, "plan", None) or {}).get("source", {}).get("engine_queries"),
        "grouping_sets_jobs": (getattr(res, "plan", None) or {}).get("source", {}).get("grouping_sets_jobs"),
        "single_group_bys": (getattr(res, "plan", None) or {}).get("source", {}).get("single_group_bys"),
        "source": (getattr(res, "plan", None) or {}).get("source"),
    }  # fmt: skip


def bench_landsend(rows: int, engines: list[str], memory_limit: str | None, k: int, keep: bool) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="tempanon-bench-engine-", dir="/tmp"))
    try:
        t0 = time.perf_counter()
        table, hdir = generate_landsend(rows, tmp)
        gen = time.perf_counter() - t0
        size_mb = table.stat().st_size / 2**20
        print(f"# Lands End-shaped Parquet: {rows:,} rows, {size_mb:.0f} MB, generated in {gen:.1f} s; k={k}, basic Incognito")
        print("| rows | distinct QI rows | engine | memory limit | wall s | CPU s | peak RSS MB | search s | anonymous | minimal | rows out | verified | path | engine jobs (GROUPING SETS / single GROUP BY) |")
        print("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|")
        for engine in engines:
            out = tmp / f"release-{engine}.parquet"
            cmd = [sys.executable, __file__, "_one", engine, str(table), str(hdir), str(out), str(k)] + ([memory_limit] if memory_limit and engine == "duckdb" else [])  # (numpy refuses a limit)
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"| {rows:,} | {engine} | {memory_limit or '-'} | failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]} |")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(
                f"| {rows:,} | {r['distinct_rows'] or '-':,} | {engine} | {memory_limit or '-'} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | {r['search_s']:.1f} | "
                f"{r['anonymous']} | {r['minimal']} | {r['rows_out']:,} | {r['verified']} | {r['engine_path']} | "
                + (f"{r['engine_queries']} ({r['grouping_sets_jobs']} / {r['single_group_bys']})" if r["engine_queries"] is not None else "-") + " |",
                flush=True,
            )
            print("<!-- " + json.dumps(r) + " -->", flush=True)
            shutil.rmtree(out, ignore_errors=True) if out.is_dir() else out.unlink(missing_ok=True)  # spark: a directory
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def bench_adult(repeat: int) -> None:
    from tempanon.data.io import read_table
    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize
    from tempanon.samples import ADULT_QI, adult_hierarchies_dir, adult_path

    df = read_table(adult_path(), as_text=True)
    hier = load_hierarchies(adult_hierarchies_dir(), ADULT_QI)
    print("| suppression | median CPU s | min CPU s | runs | anonymous | suppressed rows |")
    print("|---:|---:|---:|---:|---:|---:|")
    for sup in (0.0, 0.02):
        kanonymize(df, ADULT_QI, hier, 5, max_suppression=sup)  # warm-up (imports, caches)
        cpus = []
        for _ in range(repeat):
            c = time.process_time()
            res = kanonymize(df, ADULT_QI, hier, 5, max_suppression=sup)
            cpus.append(time.process_time() - c)
        print(f"| {sup:.0%} | {np.median(cpus):.3f} | {min(cpus):.3f} | {repeat} | {len(res.anonymous_nodes)} | {res.suppressed_rows} |", flush=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_one":
        engine, table, hdir, out, k = sys.argv[2:7]
        mem = sys.argv[7] if len(sys.argv) > 7 else None
        print(json.dumps(run_one(engine, table, hdir, out, mem, int(k))))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    le = sub.add_parser("landsend")
    le.add_argument("--rows", type=int, default=10_000_000)
    le.add_argument("--engines", default="duckdb")
    le.add_argument("--memory-limit", default=None)
    le.add_argument("--k", type=int, default=5)
    le.add_argument("--keep", action="store_true", help="keep the generated data")
    le.add_argument("--max-driver-rows", type=int, default=None,
                    help="bottom sets above this many rows stay in the engine (TEMPANON_MAX_DRIVER_ROWS)")
    ad = sub.add_parser("adult")
    ad.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    os.environ.setdefault("PYTHONPATH", str(ROOT / "src"))
    if a.cmd == "landsend":
        if a.max_driver_rows is not None:
            os.environ["TEMPANON_MAX_DRIVER_ROWS"] = str(a.max_driver_rows)
        bench_landsend(a.rows, a.engines.split(","), a.memory_limit, a.k, a.keep)
    else:
        bench_adult(a.repeat)


if __name__ == "__main__":
    main()
