"""Incognito benchmark: time and nodes checked, like the paper's "nodes searched" comparison.

    python benchmarks/bench_incognito.py adult [--k 2,5,10] [--qis 3-9] [--algorithms ...] [--sup 0,0.02] [--repeat 3]
    python benchmarks/bench_incognito.py adult45 ...      # the paper's 45,222-row Adults table (UCI train + test)
    python benchmarks/bench_incognito.py landsend [--rows 4600000] [--algorithms incognito,super-roots,cube]
    python benchmarks/bench_incognito.py landsend-series --rows 460000 --qis 3-8 --k 2 [--budget 600] [--mem-gb 6]
    python benchmarks/bench_incognito.py landsend-series --rows 460000 --qis 8 --k 2,5,10,25,50 ...
    python benchmarks/bench_incognito.py landsend-tables [--out FILE.jsonl] [--experiment LABEL,...]

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

``landsend-series`` re-runs the paper's Lands End experiments (Section 4.2: Figure 10, time by
QID size, the first n attributes of Figure 9 in its order; Figure 11, time by k at the full QID;
Figure 12, Cube Incognito's build and anonymization split). Every run (one algorithm, QID size,
k) is its own subprocess, ``nice -n 5``, one at a time, with a CPU-time budget for the search
(RLIMIT_CPU set by the child once the table is generated and encoded; SIGXCPU ends it: status
``> budget``, as the paper marks the runs it stopped) and an address-space cap (RLIMIT_AS: a
MemoryError is reported as ``out of memory``). After a ``> budget`` or ``out of memory`` run the
same algorithm is not started at larger QID sizes (recorded as ``not run``). One JSON line per
run goes to ``benchmarks/results/incognito_landsend_<date>.jsonl`` with the commit, the machine's
load and every counter. The generated and encoded table is pickled once per (rows, QIs, src commit)
to a temporary directory and loaded by the later runs (``setup_from_cache``), so the runs spend
their time on the search; the searches' CPU time and counters do not include the setup. The
Incognito variants run on one thread (``workers=1``; the library's
default searches families on two threads from 500,000 distinct rows), so one run uses one core.

What is counted (``SearchStats``): ``checks`` are k-anonymity tests, each of one node, each node
at most once -- of the full lattice for the baselines, of the lattices of all attribute subsets
for Incognito (``search_space`` = prod(levels + 1) - 1 nodes, so Incognito's checks may exceed the
full lattice's size); ``full_lattice_checks`` the checks of full-lattice nodes; ``by_projection``
the checks decided without a frequency set; ``table_scans`` + ``rollups`` the frequency sets
computed (from the table / from another frequency set).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
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


def _landsend_frame(n_rows: int, seed: int = 0, n_qi: int = len(LANDSEND)) -> tuple[pd.DataFrame, dict[str, Hierarchy]]:
    """The first ``n_qi`` attributes of the synthetic Lands End table (the same values for every
    ``n_qi``: the columns are drawn in Figure 9's order from one generator)."""
    rng = np.random.default_rng(seed)
    data, hier = {}, {}
    for name, card, height in LANDSEND[:n_qi]:
        h, values = _landsend_hierarchy(name, card, height)
        hier[name] = h
        # Zipf-like skew over the values, as in sales data
        p = 1.0 / np.arange(1, card + 1) ** 0.8
        codes = rng.choice(card, size=n_rows, p=p / p.sum())
        data[name] = pd.Categorical.from_codes(codes, categories=values)
    return pd.DataFrame(data), hier


def bench_landsend(n_rows: int, k: int, algorithm: str, seed: int = 0) -> None:
    t0 = time.perf_counter()
    c0 = time.process_time()
    df, hier = _landsend_frame(n_rows, seed)
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


# ---- the paper's Lands End series, one subprocess per run (issue 13) ------------------------------

RESULTS = ROOT / "benchmarks" / "results"
INCOGNITO_VARIANTS = {"incognito": "basic", "super-roots": "super-roots", "cube": "cube"}
SERIES_ALGORITHMS = ["binary-search", "bottom-up", "bottom-up-rollup", "incognito", "super-roots", "cube"]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_self() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def landsend_cell(algorithm: str, n_rows: int, n_qi: int, k: int, seed: int, budget: float, threads: int) -> None:
    """Child process: generate, encode, then search under a CPU budget; print JSON lines.

    The first line (``phase: setup``) is printed before the search so that the parent still knows
    the table's size when the budget or the memory cap ends the process."""
    from tempanon.kanon import search as S

    import pickle

    w0, c0 = time.perf_counter(), _cpu_self()
    cache_dir = os.environ.get("TEMPANON_BENCH_CACHE")  # encoded tables, per src commit (set by the parent)
    cache = Path(cache_dir) / f"landsend_{n_rows}_{n_qi}_{seed}.pkl" if cache_dir else None
    cached = cache is not None and cache.exists()
    if cached:
        with open(cache, "rb") as fh:
            dims, table = pickle.load(fh)
    else:
        df, hier = _landsend_frame(n_rows, seed, n_qi)
        dims, table = encode_for_search(df, list(df.columns), hier)
        del df
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as fh:
                pickle.dump((dims, table), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, cache)
    lattice = 1
    for d in dims:
        lattice *= d.n_levels
    rec: dict = {
        "phase": "setup", "distinct_rows": int(len(table.counts)), "lattice_size": lattice,
        "setup_cpu_s": round(_cpu_self() - c0, 2), "setup_wall_s": round(time.perf_counter() - w0, 2),
        "setup_peak_rss_mb": round(_rss_mb()), "setup_from_cache": cached,
    }  # fmt: skip
    print(json.dumps(rec), flush=True)
    if budget:
        soft = int(_cpu_self()) + 1 + int(budget)
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        new_hard = soft + 15 if hard == resource.RLIM_INFINITY else min(hard, soft + 15)
        resource.setrlimit(resource.RLIMIT_CPU, (min(soft, new_hard), new_hard))
    build: dict[str, float] = {}
    if algorithm == "cube" and hasattr(S, "_CubeStore"):
        base = S._CubeStore

        class _TimedCube(base):  # type: ignore[misc, valid-type]
            def _build(self) -> None:  # the zero-generalization cuboids (Figure 12's "build")
                t, w = time.process_time(), time.perf_counter()
                super()._build()
                build["cpu"], build["wall"] = time.process_time() - t, time.perf_counter() - w

        S._CubeStore = _TimedCube
    status = "ok"
    res = None
    t, w = time.process_time(), time.perf_counter()
    try:
        if algorithm in INCOGNITO_VARIANTS:
            res = S.incognito(dims, table, k, 0, variant=INCOGNITO_VARIANTS[algorithm], workers=threads)
        else:
            res = run_search(algorithm, dims, table, k, 0)
    except MemoryError:
        status = "out of memory"
    cpu, wall = time.process_time() - t, time.perf_counter() - w
    rec = {"phase": "search", "status": status, "search_cpu_s": round(cpu, 3), "search_wall_s": round(wall, 3),
           "peak_rss_mb": round(_rss_mb())}  # fmt: skip
    if build:
        rec["cube_build_cpu_s"] = round(build["cpu"], 3)
        rec["cube_build_wall_s"] = round(build["wall"], 3)
    if res is not None:
        st = res.stats
        import hashlib

        rec.update({
            "checks": st.nodes_checked, "full_lattice_checks": st.full_lattice_checks, "search_space": st.search_space,
            "by_projection": st.by_projection, "table_scans": st.table_scans, "rollups": st.rollups,
            "cube_cuboids": st.cube_cuboids, "cube_spilled": st.cube_spilled, "marked": st.marked,
            "cache_peak": getattr(st, "cache_peak", None), "cache_spilled": getattr(st, "cache_spilled", None),
            "anonymous": len(res.anonymous_nodes), "minimal": len(res.minimal_nodes), "complete": res.complete,
            "minimal_height": (min(sum(dims[j].heights[v] for j, v in enumerate(nd)) for nd in res.minimal_nodes)
                               if res.minimal_nodes else None),
            "anonymous_sha1": hashlib.sha1(repr(res.anonymous_nodes).encode()).hexdigest()[:12],
        })  # fmt: skip
    print(json.dumps(rec), flush=True)


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def _run_cell(algorithm: str, n_rows: int, n_qi: int, k: int, seed: int, budget: float, mem_gb: float, threads: int,
              setup_allowance: float = 900.0, cache_dir: Path | None = None) -> dict:
    """Run one cell in a child process (nice 5, RLIMIT_AS, RLIMIT_CPU); return its record."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "landsend-cell", "--algorithms", algorithm, "--rows", str(n_rows),
           "--qis", str(n_qi), "--k", str(k), "--seed", str(seed), "--budget", str(budget), "--threads", str(threads)]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    if cache_dir is not None:
        env["TEMPANON_BENCH_CACHE"] = str(cache_dir)
    cap = int(mem_gb * (1 << 30))
    cpu_hard = int(budget + setup_allowance)

    def limits() -> None:
        os.nice(5)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_hard, cpu_hard + 15))

    wall_limit = 4 * (budget + setup_allowance)
    load = os.getloadavg()
    w0 = time.perf_counter()
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, env=env, preexec_fn=limits)
        killed = False
        while True:
            pid, wstatus, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - w0 > wall_limit and not killed:
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
            time.sleep(0.5)
        proc.returncode = os.waitstatus_to_exitcode(wstatus)
        wall = time.perf_counter() - w0
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read().decode(errors="replace"), fe.read().decode(errors="replace")
    rec: dict = {}
    for line in out.splitlines():
        if line.startswith("{"):
            rec.update(json.loads(line))
    rec.pop("phase", None)
    child_cpu = ru.ru_utime + ru.ru_stime
    rc = proc.returncode
    if "status" not in rec:
        search_cpu = child_cpu - rec.get("setup_cpu_s", 0.0)
        if "MemoryError" in err or "Unable to allocate" in err or "Cannot allocate memory" in err or "std::bad_alloc" in err:
            status = "out of memory" if "setup_cpu_s" in rec else "out of memory (generating/encoding the table)"
        elif rc in (-signal.SIGXCPU, -signal.SIGKILL) and "setup_cpu_s" in rec and not killed and search_cpu >= 0.95 * budget:
            status = "> budget"
        elif killed:
            status = "> wall limit"
        else:
            status = f"error (exit {rc}): " + " ".join(err.strip().splitlines()[-2:])[-300:]
        rec.update({"status": status, "search_cpu_s": round(search_cpu, 1) if "setup_cpu_s" in rec else None,
                    "peak_rss_mb": round(ru.ru_maxrss / 1024)})  # fmt: skip
    rec.update({"child_cpu_s": round(child_cpu, 2), "child_wall_s": round(wall, 2), "child_peak_rss_mb": round(ru.ru_maxrss / 1024),
                "exit": rc, "load_avg_start": [round(x, 2) for x in load]})  # fmt: skip
    return rec


def landsend_series(rows: list[int], qis: list[int], ks: list[int], algorithms: list[str], budget: float, mem_gb: float,
                    threads: int, seed: int, out: Path | None, experiment: str) -> None:
    """The paper's Lands End experiments, one child process per run, one run at a time."""
    commit = _git("rev-parse", "HEAD")
    src_commit = _git("log", "-1", "--format=%H", "--", "src")  # the last commit that changed the code measured
    dirty = bool(_git("status", "--porcelain", "--", "src"))
    date = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")
    out = out or RESULTS / f"incognito_landsend_{date}.jsonl"
    # the generated and encoded table is cached per src commit (pickled dims and table), so a run
    # spends its time on the search; the first run of each (rows, QIs) builds it
    cache_dir = None if dirty or not src_commit else Path(tempfile.gettempdir()) / "tempanon-landsend-cache" / src_commit[:12]
    print(f"# Lands End-shaped synthetic table (Figure 9), commit {commit[:10]}{' (src modified)' if dirty else ''}; "
          f"budget {budget:g} CPU s per search, RLIMIT_AS {mem_gb:g} GB, {threads} thread(s), nice 5; -> {out}")  # fmt: skip
    print("| rows | QIs | k | algorithm | status | search CPU s | search wall s | checks (full lattice) | by projection | "
          "table scans | rollups | cube build CPU s | anonymous | minimal | peak RSS MB |")
    print("|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    stopped: dict[tuple[str, int, int], int] = {}
    for n_rows in rows:
        for k in ks:
            for n_qi in qis:
                for alg in algorithms:
                    base = {"experiment": experiment, "date_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                            "commit": commit, "src_commit": src_commit, "src_modified": dirty, "algorithm": alg, "qid_size": n_qi,
                            "qids": [a for a, _, _ in LANDSEND[:n_qi]], "k": k, "rows": n_rows, "seed": seed,
                            "budget_cpu_s": budget, "mem_cap_gb": mem_gb, "threads": threads if alg in INCOGNITO_VARIANTS else 1,
                            "nice": 5, "machine": f"{platform.machine()} {os.cpu_count()} cpu", "python": platform.python_version(),
                            "numpy": np.__version__}  # fmt: skip
                    key = (alg, n_rows, k)
                    if key in stopped and n_qi > stopped[key]:
                        rec = {**base, "status": f"not run (stopped at {stopped[key]} QIs)"}
                    else:
                        rec = {**base, **_run_cell(alg, n_rows, n_qi, k, seed, budget, mem_gb, threads, cache_dir=cache_dir)}
                        if rec["status"] in ("> budget", "> wall limit") or rec["status"].startswith("out of memory"):
                            stopped[key] = n_qi
                    with open(out, "a") as fh:
                        fh.write(json.dumps(rec) + "\n")
                    g = rec.get
                    cb = g("cube_build_cpu_s")
                    print(f"| {n_rows} | {n_qi} | {k} | {alg} | {rec['status']} | {g('search_cpu_s', '')} | {g('search_wall_s', '')} | "
                          f"{g('checks', '')} ({g('full_lattice_checks', '')}) | {g('by_projection', '')} | {g('table_scans', '')} | "
                          f"{g('rollups', '')} | {'' if cb is None else cb} | {g('anonymous', '')} | {g('minimal', '')} | "
                          f"{g('peak_rss_mb', '')} |", flush=True)  # fmt: skip


def _cell_text(rec: dict, budget_mark: bool = True) -> str:
    st = rec.get("status", "")
    if st == "ok":
        return f"{rec['search_cpu_s']:.2f}" if rec["search_cpu_s"] < 100 else f"{rec['search_cpu_s']:.0f}"
    if st == "> budget":
        return f"> {rec['budget_cpu_s']:g}"
    if st.startswith("not run"):
        return "–"
    if st.startswith("out of memory"):
        return f"OOM ({rec.get('mem_cap_gb', '?'):g} GB)"
    return st


def landsend_tables(path: Path, experiments: list[str] | None = None) -> None:
    """Markdown tables from a ``landsend-series`` JSON-lines file: search CPU seconds by QID size
    or by k (one column per algorithm), then the counters of every run."""
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if experiments:
        recs = [r for r in recs if r.get("experiment") in experiments]
    groups: dict[tuple, list[dict]] = {}
    for r in recs:
        groups.setdefault((r.get("experiment", ""), r["rows"]), []).append(r)
    for (exp, rows), rs in groups.items():
        algs = [a for a in SERIES_ALGORITHMS if any(r["algorithm"] == a for r in rs)]
        by_k = len({r["k"] for r in rs}) > 1
        axis = "k" if by_k else "qid_size"
        commits = sorted({r["src_commit"][:10] for r in rs if r.get("src_commit")})
        print(f"\n{exp}: {rows:,} rows, search CPU s (commit of src: {', '.join(commits)})\n")
        print(f"| {'k' if by_k else 'QIs'} | " + " | ".join(algs) + " |")
        print("|---:|" + "---:|" * len(algs))
        for v in sorted({r[axis] for r in rs}):
            cells = []
            for a in algs:
                m = [r for r in rs if r[axis] == v and r["algorithm"] == a]
                cells.append(_cell_text(m[-1]) if m else "")
            print(f"| {v} | " + " | ".join(cells) + " |")
        # counters: checks <= search space; baselines check full-lattice nodes only; the complete
        # algorithms (all but binary search) agree on the anonymous nodes
        problems = []
        for r in rs:
            if r.get("status") != "ok":
                continue
            if r["checks"] > r["search_space"] or r["full_lattice_checks"] > r["lattice_size"]:
                problems.append(f"{r['algorithm']} at {axis} {r[axis]}: checks beyond the search space")
            if r["algorithm"] not in INCOGNITO_VARIANTS and r["checks"] != r["full_lattice_checks"]:
                problems.append(f"{r['algorithm']} at {axis} {r[axis]}: subset-lattice checks")
        for v in {r[axis] for r in rs}:
            shas = {r["anonymous_sha1"] for r in rs if r[axis] == v and r.get("status") == "ok" and r["algorithm"] != "binary-search"}
            if len(shas) > 1:
                problems.append(f"{axis} {v}: the complete algorithms disagree on the anonymous nodes")
        print(f"\ncounters consistent: {'yes' if not problems else 'NO: ' + '; '.join(problems)}")
        print("\n| " + ("k" if by_k else "QIs") + " | algorithm | status | search CPU s | wall s | checks | full-lattice checks | "
              "search space | by projection | table scans | rollups | cube build CPU s | anonymous | minimal | peak RSS MB | load |")
        print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in sorted(rs, key=lambda r: (r[axis], SERIES_ALGORITHMS.index(r["algorithm"]))):
            g = r.get
            cb = g("cube_build_cpu_s")
            la = g("load_avg_start")
            print(f"| {r[axis]} | {r['algorithm']} | {r['status']} | {g('search_cpu_s', '') if g('search_cpu_s') is not None else ''} | "
                  f"{g('search_wall_s', '')} | {g('checks', '')} | {g('full_lattice_checks', '')} | {g('search_space', '')} | "
                  f"{g('by_projection', '')} | {g('table_scans', '')} | {g('rollups', '')} | {'' if cb is None else cb} | "
                  f"{g('anonymous', '')} | {g('minimal', '')} | {g('peak_rss_mb', '')} | {la[0] if la else ''} |")  # fmt: skip


def _int_range(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", choices=["adult", "adult45", "landsend", "landsend-series", "landsend-cell", "landsend-tables"])
    ap.add_argument("--k", default="2,5,10")
    ap.add_argument("--qis", default="3-9")
    ap.add_argument("--sup", default="0,0.02")
    ap.add_argument("--algorithms", default=None)
    ap.add_argument("--rows", default="4600000", help="landsend-series: a comma-separated list")
    ap.add_argument("--repeat", type=int, default=1, help="report the minimum CPU time of this many runs")
    ap.add_argument("--budget", type=float, default=600.0, help="landsend-series: CPU seconds per search (0: none)")
    ap.add_argument("--mem-gb", type=float, default=6.0, help="landsend-series: address-space cap per run (RLIMIT_AS)")
    ap.add_argument("--threads", type=int, default=1, help="landsend-series: Incognito's worker threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="landsend-series: JSON-lines file to append to")
    ap.add_argument("--experiment", default="", help="landsend-series: a label stored in every JSON line")
    a = ap.parse_args(argv)
    ks = [int(x) for x in a.k.split(",")]
    if a.dataset in ("adult", "adult45"):
        lo, _, hi = a.qis.partition("-")
        algs = (a.algorithms or ",".join(ALL)).split(",")
        bench_adult(ks, range(int(lo), int(hi or lo) + 1), algs, [float(s) for s in a.sup.split(",")], a.repeat, a.dataset)
    elif a.dataset == "landsend-series":
        algs = (a.algorithms or ",".join(SERIES_ALGORITHMS)).split(",")
        landsend_series([int(r) for r in a.rows.split(",")], _int_range(a.qis), ks, algs, a.budget, a.mem_gb, a.threads,
                        a.seed, a.out, a.experiment)  # fmt: skip
    elif a.dataset == "landsend-tables":
        landsend_tables(a.out or sorted(RESULTS.glob("incognito_landsend_*.jsonl"))[-1], a.experiment.split(",") if a.experiment else None)
    elif a.dataset == "landsend-cell":
        landsend_cell(a.algorithms, int(a.rows), int(a.qis), ks[0], a.seed, a.budget, a.threads)
    else:
        for alg in (a.algorithms or ",".join(ALL)).split(","):
            bench_landsend(int(a.rows), ks[0], alg)

if __name__ == "__main__":
    sys.exit(main())
