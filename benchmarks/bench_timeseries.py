"""Benchmark of (k,P)-anonymity for time series (issue 5): Naive vs KAPRA.

Prints Markdown tables:
1. the targets: KAPRA on the 10k random walk (../shared/data/timeseries/randomwalk_10k_float.csv,
   k=10, P=5, max level 5) and on 100k "Uniform" series of 10 values;
2. scaling of Naive and KAPRA on Walk and Uniform at 10k/20k/50k/100k: time, VL, PL, suppressed;
3. the shape of Figures 4-5 (VL and PL while varying P at k=10 and k at P=5) and Table 4
   (suppressed series) on the 10k walk;
4. query utility (Section 7): 200 queries of each workload on the 10k walk.

Times are wall-clock seconds of :func:`kp_anonymize` (SAX, algorithm, release, independent
verification). Every run's output passed ``check_kp_anonymity`` (kp_anonymize raises otherwise).

    python benchmarks/bench_timeseries.py            # everything
    python benchmarks/bench_timeseries.py --quick    # sizes up to 20k, fewer parameter points
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from tempanon.timeseries.api import kp_anonymize, released_source_rows
from tempanon.timeseries.data import random_walk, uniform
from tempanon.timeseries.queries import evaluate

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "timeseries" / "randomwalk_10k_float.csv"
QI = [f"A{i}" for i in range(10)]


def walk(n: int) -> tuple[pd.DataFrame, str]:
    if n == 10_000 and SHARED.exists():
        return pd.read_csv(SHARED), "Walk (shared 10k file)"
    return random_walk(n, seed=n), f"Walk (generated, seed {n})"


def run(df, algorithm, k=10, P=5, max_level=5):
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    r = kp_anonymize(df, id_col="id", qi=QI, sensitive=["S"], k=k, P=P, algorithm=algorithm, max_level=max_level)
    s = dict(r.summary)
    s["wall"] = time.perf_counter() - t0
    s["cpu"] = time.process_time() - cpu0
    return s


def row(name, n, s):
    return (f"| {name} | {n:,} | {s['algorithm']} | {s['wall']:.2f} | {s['cpu']:.2f} | {s['value_loss']:.1f} | "
            f"{s['pattern_loss']:.1f} | {s['mean_level']:.2f} | {s['kgroups']} | {s['suppressed']} |")


HEAD = ("| data | series | algorithm | wall s | CPU s | VL(T) | PL(T) | mean level | k-groups | suppressed |\n"
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sizes", default=None, help="comma-separated series counts for the scaling table")
    ap.add_argument("--naive-max", type=int, default=100_000, help="largest size Naive is run at")
    ap.add_argument("--targets-only", action="store_true", help="only the two target runs")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else (
        [10_000, 20_000] if args.quick else [10_000, 20_000, 50_000, 100_000])
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"numpy {np.__version__}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")

    print("### Targets (k=10, P=5, max level 5)\n")
    print(HEAD)
    df, name = walk(10_000)
    s = run(df, "kapra")
    print(row(name, 10_000, s) + (" target < 3 s: " + ("met" if s["wall"] < 3 else "MISSED")))
    n_big = 100_000 if not args.quick else 20_000
    s = run(uniform(n_big, seed=1), "kapra")
    print(row("Uniform", n_big, s) + (" target < 30 s: " + ("met" if s["wall"] < 30 else "MISSED")))
    sys.stdout.flush()
    if args.targets_only:
        return

    print("\n### Scaling: Naive vs KAPRA (k=10, P=5, max level 5)\n")
    print(HEAD)
    for gen in ("walk", "uniform"):
        for n in sizes:
            df, name = walk(n) if gen == "walk" else (uniform(n, seed=1), "Uniform")
            for algorithm in ("naive", "kapra"):
                if algorithm == "naive" and n > args.naive_max:
                    continue
                print(row(name, n, run(df, algorithm)))
                sys.stdout.flush()

    df, name = walk(10_000)
    print(f"\n### Figures 4-5 / Table 4 shape on {name}: VL(T), PL(T), suppressed\n")
    print("| vary | k | P | Naive VL | KAPRA VL | Naive PL | KAPRA PL | Naive supp. | KAPRA supp. | KAPRA s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    Ps = [2, 5, 10] if args.quick else [2, 3, 4, 5, 6, 8, 10]
    ks = [5, 20, 50] if args.quick else [5, 10, 20, 30, 40, 50]
    for vary, k, P in [("P", 10, p) for p in Ps] + [("k", k, 5) for k in ks]:
        a, b = run(df, "naive", k, P), run(df, "kapra", k, P)
        print(f"| {vary} | {k} | {P} | {a['value_loss']:.1f} | {b['value_loss']:.1f} | {a['pattern_loss']:.1f} | "
              f"{b['pattern_loss']:.1f} | {a['suppressed']} | {b['suppressed']} | {b['wall']:.2f} |")
        sys.stdout.flush()


    print(f"\n### Query utility on {name} (k=10, P=5, 200 queries each)\n")
    print("| algorithm | range rel. error | PSQ precision | PSQ recall | PRQ precision | complex rel. error |")
    print("|---|---:|---:|---:|---:|---:|")
    for algorithm in ("naive", "kapra"):
        r = kp_anonymize(df, id_col="id", qi=QI, k=10, P=5, algorithm=algorithm)
        X = df[QI].to_numpy()[released_source_rows(r.audit)]
        q = evaluate(X, r.released, QI, n_queries=200, seed=0)
        print(f"| {algorithm} | {q['range_relative_error']:.3f} | {q['psq_precision']:.3f} | {q['psq_recall']:.3f} | "
              f"{q['prq_precision']:.3f} | {q['complex_relative_error']:.3f} |")


if __name__ == "__main__":
    main()
