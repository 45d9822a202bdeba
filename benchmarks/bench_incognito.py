"""Incognito benchmark: time and nodes checked, like the paper's "nodes searched" comparison.

    python benchmarks/bench_incognito.py adult [--k 2,5,10] [--qis 3-9] [--algorithms ...] [--sup 0,0.02]
    python benchmarks/bench_incognito.py landsend [--rows 4600000]

``adult`` uses ../shared/data/adult (falls back to the bundled sample) with the quasi-identifiers
added in the order age, sex, race, marital-status, education, native-country, workclass,
occupation, salary-class. Times are CPU seconds of the search alone (``time.process_time``), the
table encoded once beforehand as every algorithm shares that step.

``landsend`` builds a synthetic table shaped like the paper's Lands End data (Figure 9: 8
quasi-identifiers with its cardinalities and hierarchy heights), runs Incognito end to end
(encoding included) and reports time and peak memory (ru_maxrss).
"""

from __future__ import annotations

import argparse
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from tempanon.hierarchy import Hierarchy, load_hierarchies
from tempanon.kanon import encode_for_search, run_search
from tempanon.samples import ADULT_QI, adult_hierarchies_dir, adult_path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "adult"
ALL = ["incognito", "super-roots", "cube", "bottom-up-rollup", "bottom-up", "binary-search", "exhaustive"]


def _adult() -> tuple[pd.DataFrame, Path]:
    if (SHARED / "adult.csv").exists():
        return pd.read_csv(SHARED / "adult.csv", sep=";", dtype=str, keep_default_na=False), SHARED
    return pd.read_csv(adult_path(), sep=";", dtype=str, keep_default_na=False), adult_hierarchies_dir()


def bench_adult(ks: list[int], qis: range, algorithms: list[str], sups: list[float], repeat: int = 1) -> None:
    df, hdir = _adult()
    hier = load_hierarchies(hdir, list(ADULT_QI))
    print(f"# Adult, {len(df)} rows; CPU seconds of the search; machine: {platform.machine()}, python {platform.python_version()}")
    print(f"# CPU s: minimum of {repeat} run(s); 'by projection': checks decided without a frequency set")
    print("| QIs | k | supp | algorithm | nodes checked | by projection | table scans | rollups | anonymous | minimal | CPU s |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for nq in qis:
        qi = list(ADULT_QI[:nq])
        dims, table = encode_for_search(df, qi, hier)
        for k in ks:
            for sup in sups:
                max_sup = int(sup * len(df))
                for alg in algorithms:
                    cpu = float("inf")
                    for _ in range(repeat):
                        t = time.process_time()
                        res = run_search(alg, dims, table, k, max_sup)
                        cpu = min(cpu, time.process_time() - t)
                    st = res.stats
                    print(
                        f"| {nq} | {k} | {sup:g} | {alg} | {st.nodes_checked} | {st.by_projection} | {st.table_scans} | {st.rollups} | "
                        f"{len(res.anonymous_nodes)} | {len(res.minimal_nodes)} | {cpu:.3f} |",
                        flush=True,
                    )


# Figure 9 of the Incognito paper (Lands End): distinct values and hierarchy height per attribute.
LANDSEND = [
    ("zipcode", 31953, 5),
    ("order_date", 320, 3),
    ("gender", 2, 1),
    ("style", 1509, 1),
    ("price", 346, 4),
    ("quantity", 1, 1),
    ("cost", 1412, 4),
    ("shipment", 2, 1),
]


def _landsend_hierarchy(name: str, card: int, height: int) -> tuple[Hierarchy, list[str]]:
    if name == "zipcode":
        values = [f"{v:05d}" for v in np.linspace(1000, 99999, card).astype(int)]
        rows = [[v] + [v[: 5 - j] + "*" * j for j in range(1, 5)] + ["*"] for v in values]
    elif name == "order_date":
        days = pd.date_range("2003-01-01", periods=card, freq="D")
        values = [d.strftime("%Y-%m-%d") for d in days]
        rows = [[d.strftime("%Y-%m-%d"), d.strftime("%Y-%m"), d.strftime("%Y"), "*"] for d in days]
    elif name in ("price", "cost"):
        values = [f"{v:04d}" for v in np.linspace(1, 9999, card).astype(int)]
        rows = [[v] + [v[: 4 - j] + "*" * j for j in range(1, 4)] + ["*"] for v in values]
    else:
        values = [f"{name}{i}" for i in range(card)]
        rows = [[v, "*"] for v in values]
    h = Hierarchy.from_rows(name, rows)
    assert h.height == height, (name, h.height, height)
    return h, values


def bench_landsend(n_rows: int, k: int, algorithm: str, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    c0 = time.process_time()
    data, hier = {}, {}
    for name, card, height in LANDSEND:
        h, values = _landsend_hierarchy(name, card, height)
        hier[name] = h
        # Zipf-like skew over the values, as in sales data
        p = 1.0 / np.arange(1, card + 1) ** 0.8
        codes = rng.choice(card, size=n_rows, p=p / p.sum())
        data[name] = pd.Categorical.from_codes(codes, categories=values)
    df = pd.DataFrame(data)
    gen_s = time.perf_counter() - t0
    t1, c1 = time.perf_counter(), time.process_time()
    qi = [a for a, _, _ in LANDSEND]
    dims, table = encode_for_search(df, qi, hier)
    enc_s = time.perf_counter() - t1
    t2, c2 = time.perf_counter(), time.process_time()
    res = run_search(algorithm, dims, table, k, 0)
    search_s, search_cpu = time.perf_counter() - t2, time.process_time() - c2
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = 1
    for d in dims:
        size *= d.n_levels
    print(f"# Lands End-shaped synthetic table: {n_rows} rows, {len(qi)} QIs, lattice {size} nodes, k={k}, {algorithm}")
    print("| rows | distinct QI rows | generate s | encode s | search s (wall) | search s (CPU) | nodes checked | anonymous | minimal | peak RSS MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {n_rows} | {len(table.counts)} | {gen_s:.1f} | {enc_s:.1f} | {search_s:.1f} | {search_cpu:.1f} | "
        f"{res.stats.nodes_checked} | {len(res.anonymous_nodes)} | {len(res.minimal_nodes)} | {peak:.0f} |"
    )
    del c0, c1


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", choices=["adult", "landsend"])
    ap.add_argument("--k", default="2,5,10")
    ap.add_argument("--qis", default="3-9")
    ap.add_argument("--sup", default="0,0.02")
    ap.add_argument("--algorithms", default=",".join(ALL))
    ap.add_argument("--rows", type=int, default=4_600_000)
    ap.add_argument("--repeat", type=int, default=1, help="report the minimum CPU time of this many runs")
    a = ap.parse_args(argv)
    ks = [int(x) for x in a.k.split(",")]
    if a.dataset == "adult":
        lo, _, hi = a.qis.partition("-")
        bench_adult(ks, range(int(lo), int(hi or lo) + 1), a.algorithms.split(","), [float(s) for s in a.sup.split(",")], a.repeat)
    else:
        for alg in a.algorithms.split(","):
            bench_landsend(a.rows, ks[0], alg)


if __name__ == "__main__":
    sys.exit(main())
