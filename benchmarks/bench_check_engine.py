"""Cost of ``tempanon check FILE --engine numpy|duckdb`` on a generated CSV: CPU time and peak RSS of
the whole command (a child process under ``/usr/bin/time -v``: user + system seconds of all threads,
maximum resident set size), and the check that both engines print the same thing.

    python benchmarks/bench_check_engine.py --rows 2000000 [--engines numpy,duckdb] [--memory-limit 1GB] [--coarse]

The table is the Lands-End-shaped one of ``bench_engine.py`` (``generate_landsend``, seed 0) written
as CSV by DuckDB, under /tmp and deleted afterwards. The request fails k and l, so the failure
messages (the example class and its file line) and the identifier screening of the other columns
(``order_id``, ``amount``, ...) are part of the cost::

    tempanon check t.csv --qi zipcode,order_date,gender,style --sensitive price --k 5 --l 2 --json

(nearly one class per record: 1.93M classes of 2M rows). ``--coarse``: ``--qi
order_date,gender,shipment --sensitive style`` instead (1,280 classes, the smallest of 203 records).

Printed: one markdown table row per engine (rows, CPU s, wall s, peak RSS MB, exit status) and
whether the JSON outputs are identical.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

ARGS = ["--qi", "zipcode,order_date,gender,style", "--sensitive", "price", "--k", "5", "--l", "2", "--json"]
COARSE = ["--qi", "order_date,gender,shipment", "--sensitive", "style", "--k", "5", "--l", "2", "--json"]


def _run(csv: Path, engine: str, memory_limit: str | None, args: list[str]) -> tuple[dict, str]:
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "tempanon.cli", "check", str(csv), *args, "--engine", engine]
    if memory_limit:
        cmd += ["--memory-limit", memory_limit]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    stats = {}
    for key, pat in (("user", r"User time \(seconds\): ([\d.]+)"), ("sys", r"System time \(seconds\): ([\d.]+)"),
                     ("rss_kb", r"Maximum resident set size \(kbytes\): (\d+)"),
                     ("wall", r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)")):  # fmt: skip
        m = re.search(pat, p.stderr)
        stats[key] = m.group(1) if m else None
    parts = [float(x) for x in stats["wall"].split(":")]
    stats["wall_s"] = sum(v * 60 ** (len(parts) - 1 - i) for i, v in enumerate(parts))
    stats["exit"] = p.returncode
    return stats, p.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--engines", default="numpy,duckdb,duckdb:500MB", help="comma-separated; duckdb:500MB adds --memory-limit 500MB")
    ap.add_argument("--memory-limit", default=None, help="passed to the duckdb run only")
    ap.add_argument("--coarse", action="store_true", help="the coarse request (few large classes)")
    a = ap.parse_args()
    args = COARSE if a.coarse else ARGS
    import duckdb
    from bench_engine import generate_landsend

    tmp = Path(tempfile.mkdtemp(prefix="bench-check-engine-"))
    try:
        table, _ = generate_landsend(a.rows, tmp)
        csv = tmp / "t.csv"
        duckdb.sql(f"COPY (SELECT * FROM read_parquet('{table}')) TO '{csv}' (FORMAT csv, HEADER true)")
        table.unlink()
        size = csv.stat().st_size / 1024**2
        outs = {}
        print(f"{a.rows:,} rows, CSV {size:,.0f} MiB; tempanon check {' '.join(args)}")
        print("| engine | rows | CPU s (user + sys) | wall s | peak RSS MB | exit |")
        print("|---|---:|---:|---:|---:|---:|")
        for engine in a.engines.split(","):
            engine, _, limit = engine.partition(":")  # duckdb:500MB: that engine with that --memory-limit
            st, out = _run(csv, engine, limit or (a.memory_limit if engine != "numpy" else None), args)
            cpu = float(st["user"]) + float(st["sys"])
            lim = limit or (a.memory_limit if engine != "numpy" else None)
            outs[engine + (lim or "")] = out
            print(f"| {engine}{' --memory-limit ' + lim if lim else ''} | "
                  f"{a.rows:,} | {cpu:.1f} | {st['wall_s']:.1f} | {int(st['rss_kb']) / 1024:,.0f} | {st['exit']} |")
        same = len(set(outs.values())) == 1
        print(f"identical --json output on {', '.join(outs)}: {same}")
        if not same:
            for e, o in outs.items():
                print(e, o[:2000])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
