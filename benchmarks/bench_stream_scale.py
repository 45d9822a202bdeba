"""Throughput of snapshot-stream publishing against the size of the snapshots (issue 4).

A step of the online publisher works on *groups* of interchangeable records (home snapshot x sensitive
value), at most ``(2w + 1) x m`` of them, whatever the number of records; so the cost of a step does
not grow with the snapshot size, and the records per second do. This benchmark makes that visible: it
bootstraps every daily (or weekly) snapshot of a real stream ``--scale`` times (each snapshot's records
resampled with replacement, so the value shares and their day-to-day skew stay those of the data) and
publishes the result with the same l and w.

    python benchmarks/bench_stream_scale.py --dataset stops --unit day --l 3 --w 4 --scales 1,4,16,64
    python benchmarks/bench_stream_scale.py --dataset uof --unit day --l 2 --w 4 --scales 1,16,256

Prints a table (records, records per snapshot, IL per record, suppressed %, step ILPs, CPU seconds,
records per CPU-second) and appends JSON lines to ``--jsonl``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import emit

from tempanon.stream.api import anonymize_stream
from tempanon.stream.snapshots import parse_times, truncate

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "snapshots"
DATASETS = {
    "uof": ("mn_police_use_of_force.csv", "response_datetime", "problem", ["race", "sex", "age", "precinct", "neighborhood"]),
    "stops": ("mpls_stops.csv", "date", "race", ["gender", "policePrecinct", "neighborhood", "problem"]),
}


def bootstrap(df: pd.DataFrame, time_col: str, unit: str, scale: int, seed: int = 0) -> pd.DataFrame:
    """Every snapshot of ``df`` (``time_col`` truncated to ``unit``) resampled ``scale`` times its size,
    with replacement; the timestamps are kept (so the records stay in their snapshot)."""
    if scale == 1:
        return df
    rng = np.random.default_rng(seed)
    snap = truncate(parse_times(df[time_col], time_col, unit), unit)
    codes, uniq = pd.factorize(snap, sort=True)
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(len(uniq)))
    sizes = np.diff(np.append(starts, len(order)))
    # for each output record: its snapshot, then a uniform pick among that snapshot's records
    out_snap = np.repeat(np.arange(len(uniq)), sizes * scale)
    pick = starts[out_snap] + (rng.random(len(out_snap)) * sizes[out_snap]).astype(np.int64)
    rows = order[pick]
    out = df.iloc[rows].reset_index(drop=True)
    return out.iloc[np.argsort(out_snap, kind="stable")].reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", choices=sorted(DATASETS), default="stops")
    ap.add_argument("--unit", default="day")
    ap.add_argument("--l", type=int, default=3)
    ap.add_argument("--w", type=int, default=4)
    ap.add_argument("--scales", default="1,4,16,64")
    ap.add_argument("--defer", type=float, default=None, help="pricing of recyclable suppressions (default: the library's)")
    ap.add_argument("--jsonl", type=Path, default=None)
    args = ap.parse_args(argv)
    name, time_col, sens, qi = DATASETS[args.dataset]
    path = DATA / name
    if not path.exists():
        print(f"data not found: {path}")
        return 1
    base = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    kw = {} if args.defer is None else {"defer": args.defer}
    print(f"{'data':6} {'unit':4} {'l':>2} {'w':>2} {'scale':>5} {'records':>9} {'rec/snap':>8} {'IL/rec':>7} {'supp%':>6} {'ILP steps':>9} {'CPU s':>7} {'rec/CPU-s':>10}")
    for scale in map(int, args.scales.split(",")):
        df = bootstrap(base, time_col, args.unit, scale)
        c0 = time.process_time()
        r = anonymize_stream(df, time=time_col, sensitive=sens, qi=qi, l=args.l, w=args.w, snapshot=args.unit, **kw)
        cpu = time.process_time() - c0
        s = r.summary
        n = s["records"]
        row = {
            "dataset": args.dataset, "unit": args.unit, "l": args.l, "w": args.w, "scale": scale, "records": n,
            "snapshots": s["snapshots"], "records_per_snapshot": n / max(s["snapshots"], 1),
            "information_loss": s["information_loss"], "suppressed": s["suppressed"], "ilp_steps": s["steps_solved_by_ilp"],
            "certificates": s["step_certificates"], "defer": s.get("defer"), "cpu_seconds": cpu,
            "records_per_cpu_second": n / cpu, "loadavg": os.getloadavg()[0],
        }
        emit(
            f"{args.dataset:6} {args.unit:4} {args.l:>2} {args.w:>2} {scale:>5} {n:>9} {row['records_per_snapshot']:8.0f} "
            f"{s['information_loss'] / n:7.3f} {100 * s['suppressed'] / n:6.2f} {row['ilp_steps']:>9} {cpu:7.2f} {row['records_per_cpu_second']:10.0f}",
            row, args.jsonl,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
