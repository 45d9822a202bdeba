"""Incognito benchmark: time and nodes checked, like the paper's "nodes searched" comparison.

    python benchmarks/bench_incognito.py adult [--k 2,5,10] [--qis 3-9] [--algorithms ...] [--sup 0,0.02] [--repeat 3]
    python benchmarks/bench_incognito.py adult45 ...      # the paper's 45,222-row Adults table (UCI train + test)
    python benchmarks/bench_incognito.py landsend [--rows 4600000] [--algorithms incognito,super-roots,cube]

``adult45`` rebuilds the paper's Adults table (Section 4.1: UCI adult.data + adult.test without
records with unknown values, 45,222 rows) from ``../shared/data/adult/uci``. Cube rows also
report the cube's build time separately (Figure 12).

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
# ../shared beside the repository (a worktree one level deeper finds it two levels up)
SHARED = next((p / "shared" / "data" / "adult" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared").is_dir()),
              ROOT.parent / "shared" / "data" / "adult")
ALL = ["incognito", "super-roots", "cube", "bottom-up-rollup", "bottom-up", "binary-search", "exhaustive"]


COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation", "relationship",
           "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "salary-class"]


def _adult45() -> tuple[pd.DataFrame, Path]:
    """UCI adult.data + adult.test without records with '?' (Section 4.1: 45,222 records)."""
    frames = []
    for name in ("adult.data", "adult.test"):
        df = pd.read_csv(SHARED / "uci" / name, header=None, names=COLUMNS, sep=r",\s*", engine="python", dtype=str,
                         comment="|", skip_blank_lines=True)
        frames.append(df)
    df = pd.concat(frames, ignore_index=True).dropna()
    df["salary-class"] = df["salary-class"].str.rstrip(".")
    df = df[~(df[list(ADULT_QI)] == "?").any(axis=1)].reset_index(drop=True)
    return df[list(ADULT_QI)], SHARED


def _adult(dataset: str = "adult") -> tuple[pd.DataFrame, Path]:
    if dataset == "adult45":
        return _adult45()
    if (SHARED / "adult.csv").exists():
        return pd.read_csv(SHARED / "adult.csv", sep=";", dtype=str, keep_default_na=False), SHARED
    return pd.read_csv(adult_path(), sep=";", dtype=str, keep_default_na=False), adult_hierarchies_dir()


def bench_adult(ks: list[int], qis: range, algorithms: list[str], sups: list[float], repeat: int = 1, dataset: str = "adult") -> None:
    df, hdir = _adult(dataset)
    hier = load_hierarchies(hdir, list(ADULT_QI))
    print(f"# Adult, {len(df)} rows; CPU seconds of the search; machine: {platform.machine()}, python {platform.python_version()}")
    print(f"# CPU s: median and min of {repeat} run(s); 'by projection': checks decided without a frequency set; "
          "cube build: CPU s of the zero-generalization cuboids (Figure 12)")
    print("| QIs | k | supp | algorithm | checks | full-lattice checks | by projection | table scans | rollups | anonymous | minimal | CPU s median | CPU s min | cube build CPU s |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for nq in qis:
        qi = list(ADULT_QI[:nq])
        dims, table = encode_for_search(df, qi, hier)
        for k in ks:
            for sup in sups:
                max_sup = int(sup * len(df))
                for alg in algorithms:
                    cpus = []
                    build = ""
                    for _ in range(repeat):
                        t = time.process_time()
                        res = run_search(alg, dims, table, k, max_sup)
                        cpus.append(time.process_time() - t)
                    if alg == "cube":
                        from tempanon.kanon.search import _CubeStore, _Ctx

                        bs = []
                        for _ in range(repeat):
                            t = time.process_time()
                            _CubeStore(_Ctx(dims, table, k, max_sup, None), 1 << 30).close()
                            bs.append(time.process_time() - t)
                        build = f"{float(np.median(bs)):.3f}"
                    st = res.stats
                    print(
                        f"| {nq} | {k} | {sup:g} | {alg} | {st.nodes_checked} | {st.full_lattice_checks} | {st.by_projection} | {st.table_scans} | {st.rollups} | "
                        f"{len(res.anonymous_nodes)} | {len(res.minimal_nodes)} | {float(np.median(cpus)):.3f} | {min(cpus):.3f} | {build} |",
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
    st = res.stats
    print("| rows | distinct QI rows | algorithm | generate s | encode s | search s (wall) | search s (CPU) | checks | table scans | rollups | cuboids (spilled) | anonymous | minimal | peak RSS MB |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {n_rows} | {len(table.counts)} | {algorithm} | {gen_s:.1f} | {enc_s:.1f} | {search_s:.1f} | {search_cpu:.1f} | "
        f"{st.nodes_checked} | {st.table_scans} | {st.rollups} | {st.cube_cuboids} ({st.cube_spilled}) | "
        f"{len(res.anonymous_nodes)} | {len(res.minimal_nodes)} | {peak:.0f} |", flush=True
    )
    del c0, c1


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", choices=["adult", "adult45", "landsend"])
    ap.add_argument("--k", default="2,5,10")
    ap.add_argument("--qis", default="3-9")
    ap.add_argument("--sup", default="0,0.02")
    ap.add_argument("--algorithms", default=",".join(ALL))
    ap.add_argument("--rows", type=int, default=4_600_000)
    ap.add_argument("--repeat", type=int, default=1, help="report the minimum CPU time of this many runs")
    a = ap.parse_args(argv)
    ks = [int(x) for x in a.k.split(",")]
    if a.dataset in ("adult", "adult45"):
        lo, _, hi = a.qis.partition("-")
        bench_adult(ks, range(int(lo), int(hi or lo) + 1), a.algorithms.split(","), [float(s) for s in a.sup.split(",")], a.repeat, a.dataset)
    else:
        for alg in a.algorithms.split(","):
            bench_landsend(a.rows, ks[0], alg)


if __name__ == "__main__":
    sys.exit(main())
