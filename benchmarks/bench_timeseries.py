"""Benchmark and paper experiments of (k,P)-anonymity for time series (Shou et al., TKDE).

Prints Markdown tables (times are CPU seconds, ``time.process_time``, of the whole
``kp_anonymize`` call: SAX, algorithm, release, independent verification; every output passed
``check_kp_anonymity``):

* ``--million``: KAPRA on 1,000,000 generated Walk series of 10 values, k=10, P=5 (target < 60 s
  CPU), repeated ``--repeat`` times, with the time of group formation (Algorithm 3) alone;
* ``--scaling``: KAPRA at 100k/200k/500k Walk and 100k Uniform (growth exponent of Algorithm 3);
* ``--figures``: Figures 4-5 (VL and PL of Naive and KAPRA, varying P at k=10 and k at P=5) on
  Walk (the shared 10k file), Motion (the shared CMU file), Sales and Italy power (default word
  length);
* ``--table4``: Table 4 (suppressed series of KAPRA with and without recycling, P = 2..100);
* ``--cdp``: Section 7.4 (Figures 12(a), 13) on a Walk subset;
* ``--queries``: Figures 6-10 (PL, PSQ and PRQ precision, range and complex relative error with
  k = P) on Walk, and the same measures at k=10, P=5 on Sales, Italy power and Motion;
* ``--compare``: Figures 6-10 with the four schemes of Section 7.3 (``--algorithms``, default
  ``naive,kapra,tga,bfp2ka``; k = P): Naive, KAPRA and TGA on Walk and Motion, Naive, KAPRA and
  BFP2KA on String (Motion's SAX words at level 20);
  ``--compare-data`` picks the data (``walk01``: each Walk series scaled to [0, 1] on its own);
* ``--walk-envelopes``: why KAPRA's range and complex errors on Walk differ from Naive's and TGA's
  (k-group envelope widths, the share of the series' level the k-groups keep, median and summed
  errors, complex-query errors split into pattern and envelope parts);
  ``--complex-split walk01,motion`` prints the complex-query split on other data,
  ``--kapra-presplit`` the level KAPRA's P-subgroups keep before and after Algorithm 3's
  preprocessing, ``--range-estimators`` the range errors under three readings of the estimate,
  ``--maximize-reading`` KAPRA's PL under two readings of Algorithm 1's maximize-level;
* ``--tga-motion``: Figure 6's TGA-on-Motion hypothesis (TGA's envelope width relative to a
  series' own range and its PL, keeping every m-th Motion frame; ``motion01``: every channel
  scaled to [0, 1]);
* ``--scalability``: Figure 11 (CPU s of the four algorithms, k = P = 10) on Uniform and on
  generated Walk series standing in for Motion, 10k-100k series;
* ``--cdp-scale``: Figure 12(b) (CPU s of the Section 6 estimation) at the same sizes.

    python benchmarks/bench_timeseries.py --million --repeat 2
    python benchmarks/bench_timeseries.py --figures --table4 --queries
    python benchmarks/bench_timeseries.py --compare --scalability --cdp-scale
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

from tempanon.timeseries import algorithms as alg
from tempanon.timeseries import baselines as bl
from tempanon.timeseries.api import kp_anonymize, released_source_rows
from tempanon.timeseries.data import random_walk, uniform
from tempanon.timeseries.queries import evaluate

DATA = next((p / "shared" / "data" / "timeseries" for p in Path(__file__).resolve().parents
             if (p / "shared" / "data" / "timeseries").is_dir()), Path("../shared/data/timeseries"))
QI = [f"A{i}" for i in range(10)]


def load(name: str):
    """``(frame, id column, quasi-identifiers, sensitive)`` of a data set, or ``None``."""
    if name == "walk":
        p = DATA / "randomwalk_10k_float.csv"
        return (pd.read_csv(p), "id", QI, ["S"]) if p.exists() else None
    if name == "motion":  # the paper: 10 random channels as QI, one sensitive
        p = DATA / "cmu_mocap6_sensor_data_per_tstep.csv"
        if not p.exists():
            return None
        df = pd.read_csv(p)
        ch = [c for c in df.columns if c not in ("seq_id", "tstep_id")]
        pick = list(np.random.default_rng(0).permutation(ch))
        df.insert(0, "id", [f"f{i}" for i in range(len(df))])
        return df, "id", sorted(pick[:10], key=ch.index), [pick[10]]
    if name == "walk01":  # the Walk file with every series scaled to [0, 1] on its own
        d = load("walk")
        if d is None:
            return None
        df = d[0].copy()
        X = df[QI].to_numpy(dtype=float)
        mn, mx = X.min(axis=1, keepdims=True), X.max(axis=1, keepdims=True)
        df[QI] = (X - mn) / np.where(mx > mn, mx - mn, 1.0)
        return df, "id", QI, ["S"]
    if name == "motion01":  # Motion with every channel (column) scaled to [0, 1]
        d = load("motion")
        if d is None:
            return None
        df, idc, qi, sens = d
        df = df.copy()
        X = df[qi].to_numpy(dtype=float)
        mn, mx = X.min(axis=0), X.max(axis=0)
        df[qi] = (X - mn) / np.where(mx > mn, mx - mn, 1.0)
        return df, idc, qi, sens
    if name == "sales":
        p = DATA / "sales_transactions_dataset_weekly.csv"
        return (pd.read_csv(p), "Product_Code", [f"W{i}" for i in range(52)], []) if p.exists() else None
    if name == "italy":
        p = DATA / "italy_power_demand.csv"
        return (pd.read_csv(p), "id", [f"t{i}" for i in range(24)], []) if p.exists() else None
    raise ValueError(name)


def run(df, id_col, qi, sens, algorithm="kapra", k=10, P=5, **kw):
    cpu0 = time.process_time()
    r = kp_anonymize(df, id_col=id_col, qi=qi, sensitive=sens, k=k, P=P, algorithm=algorithm, shuffle_seed=0, **kw)
    return r, time.process_time() - cpu0


def timed_group_formation():
    """Wrap Algorithm 3 to measure its CPU time inside a KAPRA run."""
    box = {"cpu": 0.0}
    orig = alg.group_formation

    def wrapped(*a, **kw):
        t = time.process_time()
        try:
            return orig(*a, **kw)
        finally:
            box["cpu"] += time.process_time() - t

    alg.group_formation = wrapped
    return box, lambda: setattr(alg, "group_formation", orig)


def load_avg() -> str:
    try:
        return ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def million(repeat: int, n: int = 1_000_000):
    print(f"### KAPRA on {n:,} Walk series x 10 values (k=10, P=5, max level 5)\n")
    df = random_walk(n, seed=1)
    print("| run | CPU s (whole kp_anonymize) | CPU s Algorithm 3 | wall s | load before | VL(T) | PL(T) | k-groups | suppressed |")
    print("|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for i in range(repeat):
        box, undo = timed_group_formation()
        la = load_avg()
        w0 = time.perf_counter()
        r, cpu = run(df, "id", QI, ["S"])
        undo()
        s = r.summary
        print(f"| {i + 1} | {cpu:.1f} | {box['cpu']:.1f} | {time.perf_counter() - w0:.1f} | {la} | {s['value_loss']:.0f} | "
              f"{s['pattern_loss']:.0f} | {s['kgroups']} | {s['suppressed']} |")
        sys.stdout.flush()


def scaling():
    print("### Scaling of KAPRA (k=10, P=5): CPU s of the run and of Algorithm 3\n")
    print("| data | series | CPU s | CPU s Algorithm 3 | load before |")
    print("|---|---:|---:|---:|---|")
    for name, n in [("walk", 100_000), ("walk", 200_000), ("walk", 500_000), ("uniform", 100_000)]:
        df = random_walk(n, seed=n) if name == "walk" else uniform(n, seed=1)
        box, undo = timed_group_formation()
        la = load_avg()
        _, cpu = run(df, "id", QI, ["S"])
        undo()
        print(f"| {name} | {n:,} | {cpu:.1f} | {box['cpu']:.1f} | {la} |")
        sys.stdout.flush()


def figures(names=("walk", "motion", "sales", "italy")):
    for name in names:
        d = load(name)
        if d is None:
            continue
        df, idc, qi, sens = d
        print(f"\n### Figures 4-5 on {name} ({len(df):,} series): VL(T) and PL(T)\n")
        print("| vary | k | P | Naive VL | KAPRA VL | Naive PL | KAPRA PL | KAPRA suppressed | KAPRA CPU s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for vary, k, P in [("P", 10, p) for p in (2, 3, 4, 5, 6, 8, 10)] + [("k", k, 5) for k in (5, 10, 20, 30, 40, 50)]:
            a, _ = run(df, idc, qi, sens, "naive", k, P)
            b, cpu = run(df, idc, qi, sens, "kapra", k, P)
            print(f"| {vary} | {k} | {P} | {a.summary['value_loss']:.1f} | {b.summary['value_loss']:.1f} | "
                  f"{a.summary['pattern_loss']:.1f} | {b.summary['pattern_loss']:.1f} | {b.summary['suppressed']} | {cpu:.2f} |")
            sys.stdout.flush()


def table4():
    print("\n### Table 4: series suppressed by KAPRA, with and without (NR) recycling of bad leaves (k = max(P, 10))\n")
    Ps = (2, 5, 10, 20, 30, 40, 50, 100)
    print("| data | " + " | ".join(f"P={p}" for p in Ps) + " |")
    print("|---|" + "---:|" * len(Ps))
    for name in ("motion", "walk"):
        d = load(name)
        if d is None:
            continue
        df, idc, qi, sens = d
        X = df[qi].to_numpy(dtype=float)
        for recycle in (True, False):
            cells = []
            for P in Ps:
                g = alg.kapra(X, max(P, 10), P, 5, recycle=recycle)
                cells.append(str(int(g.suppressed.sum())))
            print(f"| {name}{'' if recycle else ' (NR)'} ({len(df):,}) | " + " | ".join(cells) + " |")
            sys.stdout.flush()


def queries(n_queries: int):
    d = load("walk")
    print(f"\n### Figures 6-10 on walk (k = P, {n_queries} queries per workload and point)\n")
    print("PSQ tolerance unit: KAPRA's mean PL at the same k = P, used for both schemes (one workload).\n")
    print("| k = P | scheme | PL(T) | PSQ precision | PRQ precision | range rel. error | complex rel. error | undefined (PSQ/PRQ/range/complex) |")
    print("|---:|---|---:|---:|---:|---:|---:|---|")
    if d is not None:
        df, idc, qi, sens = d
        for kp in (2, 5, 10, 20):
            unit = None
            for scheme in ("kapra", "naive"):
                r, _ = run(df, idc, qi, sens, scheme, kp, kp)
                X = df[qi].to_numpy(dtype=float)[released_source_rows(r.audit)]
                q = evaluate(X, r.released, qi, n_queries=n_queries, seed=0, psq_avg_distance=unit)
                unit = q["psq_avg_distance"] if unit is None else unit
                print(f"| {kp} | {scheme} | {r.summary['pattern_loss']:.0f} | {q['psq_precision']:.3f} | {q['prq_precision']:.3f} | "
                      f"{q['range_relative_error']:.3f} | {q['complex_relative_error']:.3f} | {q['psq_undefined']}/"
                      f"{q['prq_undefined']}/{q['range_undefined']}/{q['complex_undefined']} |")
                sys.stdout.flush()
    print(f"\n### The same measures on the other data (k=10, P=5, default word length, {n_queries} queries)\n")
    print("| data | series x values | word length | scheme | mean level | level-1 share | PL per series | PSQ precision | PRQ precision | range rel. error | complex rel. error |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in ("sales", "italy", "motion"):
        d = load(name)
        if d is None:
            continue
        df, idc, qi, sens = d
        unit = None
        for scheme in ("kapra", "naive"):
            r, _ = run(df, idc, qi, sens, scheme)
            X = df[qi].to_numpy(dtype=float)[released_source_rows(r.audit)]
            q = evaluate(X, r.released, qi, n_queries=n_queries, seed=0, psq_avg_distance=unit)
            unit = q["psq_avg_distance"] if unit is None else unit
            s = r.summary
            print(f"| {name} | {len(df):,} x {len(qi)} | {s['word_length']} | {scheme} | {s['mean_level']:.2f} | {s['level1_share']:.2f} | "
                  f"{s['pattern_loss_mean']:.3f} | {q['psq_precision']:.3f} | {q['prq_precision']:.3f} | "
                  f"{q['range_relative_error']:.3f} | {q['complex_relative_error']:.3f} |")
            sys.stdout.flush()


def cdp(n_series: int, reps: int, n_queries: int):
    """Section 7.4 (Figures 12(a), 13): customized publishing on the first ``n_series`` Walk series,
    KAPRA k=10, P=3; for each overlap op, ``reps`` random choices of the overlapped attributes, the
    rest split evenly between QI_ae-only and QI_pr-only. Estimation CPU time (ranges by Lemma 1 +
    LP, symbols by LP feasibility), PSQ/PRQ precision with the estimated symbols filled in, and
    range-query relative error with the estimated ranges filled in (every range query contains the
    attributes whose range was estimated); FDP (everything published) as the reference."""
    from tempanon.timeseries.publish import estimate_ranges, estimate_symbols
    from tempanon.timeseries.queries import evaluate_arrays, released_arrays
    from tempanon.timeseries.sax import expand_paa, reconstruct, strings_to_words

    d = load("walk")
    if d is None:
        return
    df = d[0].head(n_series).reset_index(drop=True)
    X0 = df[QI].to_numpy(dtype=float)
    print(f"\n### Section 7.4 (Figures 12(a), 13): customized publishing, Walk first {n_series:,} series, k=10, P=3, "
          f"{reps} attribute choices per overlap, {n_queries} queries\n")
    print("| op | estimation CPU s (mean) | PSQ precision | PRQ precision | range rel. error (missing ranges in every query) |")
    print("|---:|---:|---:|---:|---:|")
    full = kp_anonymize(df, id_col="id", qi=QI, k=10, P=3, shuffle_seed=0)
    X = X0[released_source_rows(full.audit)]
    lo, hi, rec = released_arrays(full.released, QI, 10)
    ref = evaluate_arrays(X, lo, hi, rec, n_queries=n_queries, seed=0, range_cols=4)
    print(f"| FDP | 0 | {ref['psq_precision']:.3f} | {ref['prq_precision']:.3f} | {ref['range_relative_error']:.3f} |")
    rng = np.random.default_rng(0)
    for op in (0.2, 0.4, 0.6, 0.8):
        rows = []
        for _ in range(reps):
            perm = [QI[i] for i in rng.permutation(10)]
            n_ov = int(round(op * 10))
            ov, rest = perm[:n_ov], perm[n_ov:]
            ae, pr = ov + rest[: len(rest) // 2], ov + rest[len(rest) // 2:]
            r = kp_anonymize(df, id_col="id", qi=QI, k=10, P=3, publish_values=ae, publish_patterns=pr, shuffle_seed=0)
            rel = r.released
            X = X0[released_source_rows(r.audit)]
            t0 = time.process_time()
            est_r = estimate_ranges(rel, QI, ae, pr, domain=(0.0, 1.0))
            est_s = estimate_symbols(rel, QI, ae, pr, domain=(0.0, 1.0))
            cost = time.process_time() - t0
            lo = np.column_stack([rel[f"{c}_lo"] if c in ae else est_r[f"{c}_lo"] for c in QI]).astype(float)
            hi = np.column_stack([rel[f"{c}_hi"] if c in ae else est_r[f"{c}_hi"] for c in QI]).astype(float)
            pub = [c for c in QI if c in pr]
            letters = []
            for i in range(len(rel)):
                word = dict(zip(pub, rel["pattern"].iloc[i]))
                letters.append("".join(word[c] if c in word else est_s[f"{c}_symbol"].iloc[i] for c in QI))
            rec = expand_paa(reconstruct(strings_to_words(letters, 10), rel["pattern_level"].to_numpy()), 10)
            must = np.array([QI.index(c) for c in QI if c not in ae])
            q = evaluate_arrays(X, lo, hi, rec, n_queries=n_queries, seed=0, range_cols=max(4, must.size),
                                range_must=must, psq_avg_distance=ref["psq_avg_distance"])
            rows.append((cost, q["psq_precision"], q["prq_precision"], q["range_relative_error"]))
        m = np.mean(rows, axis=0)
        print(f"| {op:.0%} | {m[0]:.1f} | {m[1]:.3f} | {m[2]:.3f} | {m[3]:.3f} |")
        sys.stdout.flush()


ALL_SCHEMES = ("naive", "kapra", "tga", "bfp2ka")


def release_arrays(scheme, df, idc, qi, sens, k, P):
    """A verified Naive, KAPRA or TGA release of ``df`` as arrays: original series ``X`` in release
    order, envelopes ``lo``/``hi``, reconstructed normalized series ``rec``, the k-group of every
    row, CPU s of the verified run, ``PL`` and ``VL`` (sums)."""
    from tempanon.timeseries.queries import released_arrays
    from tempanon.timeseries.sax import znormalize

    X0 = df[qi].to_numpy(dtype=float)
    cpu0 = time.process_time()
    if scheme in ("naive", "kapra"):
        r = kp_anonymize(df, id_col=idc, qi=qi, sensitive=sens, k=k, P=P, algorithm=scheme, shuffle_seed=0)
        cpu = time.process_time() - cpu0
        lo, hi, rec = released_arrays(r.released, qi, len(qi))
    elif scheme == "tga":
        r = bl.tga_release(df, id_col=idc, qi=qi, k=k, sensitive=sens, seed=0, shuffle_seed=0)
        cpu = time.process_time() - cpu0
        lo = r.released[[f"{c}_lo" for c in qi]].to_numpy(dtype=float)
        hi = r.released[[f"{c}_hi" for c in qi]].to_numpy(dtype=float)
        rec = znormalize(r.released[[f"{c}_rec" for c in qi]].to_numpy(dtype=float))
    else:
        raise ValueError(scheme)
    return {"X": X0[released_source_rows(r.audit)], "lo": lo, "hi": hi, "rec": rec, "cpu": cpu,
            "kgroup": r.released["kgroup"].to_numpy(), "PL": r.summary["pattern_loss"], "VL": r.summary["value_loss"]}


def _scheme_run(scheme, df, idc, qi, sens, k, P, unit=None, n_queries=1000, string_levels=None):
    """One scheme on one data set at (k, P): the verified output and the Section 7.1 measures.
    Returns ``(row dict, psq unit)``. ``string_levels``: alphabet size when ``df`` holds String codes."""
    from tempanon.timeseries.model import pattern_loss, instant_value_loss
    from tempanon.timeseries.queries import evaluate_arrays, released_arrays
    from tempanon.timeseries.sax import znormalize

    X0 = df[qi].to_numpy(dtype=float)
    cpu0 = time.process_time()
    if scheme in ("naive", "kapra", "tga"):
        rel = release_arrays(scheme, df, idc, qi, sens, k, P)
        X, lo, hi, rec, cpu, pl, vl = rel["X"], rel["lo"], rel["hi"], rel["rec"], rel["cpu"], rel["PL"], rel["VL"]
    elif scheme == "bfp2ka":
        if string_levels is None:
            return None, unit
        S = X0.astype(np.int64)
        b = bl.bfp2ka(S, k)
        bl.check_sequence_k_anonymity(S, b.published, b.length, k)
        cpu = time.process_time() - cpu0
        X = X0
        lo, hi, rec = bl.bfp2ka_arrays(b.published, b.length, string_levels)
        pl = float(pattern_loss(znormalize(X), rec).sum())
        vl = float(instant_value_loss(lo, hi).sum())
    else:
        raise ValueError(scheme)
    q = evaluate_arrays(X, lo, hi, rec, n_queries=n_queries, seed=0, psq_avg_distance=unit)
    unit = q["psq_avg_distance"] if unit is None else unit
    row = {"scheme": scheme, "VL": vl, "PL": pl, "PLm": pl / len(X), "psq": q["psq_precision"], "prq": q["prq_precision"],
           "range": q["range_relative_error"], "complex": q["complex_relative_error"], "cpu": cpu,
           "range_med": q["range_relative_error_median"], "complex_med": q["complex_relative_error_median"],
           "undef": f"{q['psq_undefined']}/{q['prq_undefined']}/{q['range_undefined']}/{q['complex_undefined']}"}
    return row, unit


def string_frame(d):
    """*String* (Section 7.1): the SAX words at level 20 of a data set's series, as integer codes
    0..19 in the quasi-identifier columns (same ids and sensitive column)."""
    df, idc, qi, sens = d
    S = bl.string_dataset(df[qi].to_numpy(dtype=float))
    out = df[[idc, *sens]].copy()
    for j, c in enumerate(qi):
        out[c] = S[:, j].astype(float)
    return out, idc, qi, sens


def compare(n_queries: int, schemes, kps=(2, 5, 10, 20), data=("walk", "motion", "string")):
    """Figures 6-10 with the four schemes of Section 7.3, k = P. ``data``: any of walk, walk01
    (each Walk series scaled to [0, 1] on its own), motion, string."""
    sets = []
    for name in data:
        if name == "string":
            continue
        d = load(name)
        if d is not None:
            sets.append((name, d, None, [s for s in schemes if s in ("naive", "kapra", "tga")]))
    d = load("motion") if "string" in data else None
    if d is not None:
        sets.append(("string (motion, SAX level 20)", string_frame(d), bl.STRING_LEVEL,
                     [s for s in schemes if s in ("naive", "kapra", "bfp2ka")]))
    for name, (df, idc, qi, sens), lv, sch in sets:
        print(f"\n### Figures 6-10 with {', '.join(sch)} on {name} ({len(df):,} series, k = P, {n_queries} queries)\n")
        print("| k = P | scheme | VL(T) | PL(T) | PL per series | PSQ precision | PRQ precision | range rel. error | "
              "(median) | complex rel. error | (median) | CPU s | undefined (PSQ/PRQ/range/complex) |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for kp in kps:
            unit = None
            order = (["kapra"] if "kapra" in sch else []) + [s for s in sch if s != "kapra"]
            for scheme in order:
                row, unit = _scheme_run(scheme, df, idc, qi, sens, kp, kp, unit, n_queries, lv)
                if row is None:
                    continue
                print(f"| {kp} | {scheme} | {row['VL']:.0f} | {row['PL']:.0f} | {row['PLm']:.3f} | {row['psq']:.3f} | "
                      f"{row['prq']:.3f} | {row['range']:.3f} | {row['range_med']:.3f} | {row['complex']:.3f} | "
                      f"{row['complex_med']:.3f} | {row['cpu']:.2f} | {row['undef']} |")
                sys.stdout.flush()


def _kgroup_first_rows(kgroup):
    return np.unique(kgroup, return_index=True)[1]


def level_share(X, kgroup):
    """R^2 of the series' mean level explained by their k-group (1: the k-groups separate levels,
    0: they ignore them)."""
    lev = X.mean(axis=1)
    g = np.unique(kgroup, return_inverse=True)[1]
    gm = np.bincount(g, lev) / np.bincount(g)
    return 1.0 - float(((lev - gm[g]) ** 2).sum() / ((lev - lev.mean()) ** 2).sum())


def complex_parts(X, lo, hi, rec, n_queries, unit, seed=0):
    """The complex-query workload of ``queries.evaluate_arrays`` (same seeds), split by the kind of
    pattern predicate (even queries: one similarity predicate, odd: PRQ predicates), with two
    partial estimates beside the full one: *pattern only* counts the series whose published
    pattern satisfies the pattern predicates and whose true values satisfy the ranges; *envelope
    only* sums the envelope fractions of the series whose true pattern satisfies them. Returns
    ``{kind: (n defined, mean rel. error full, pattern only, envelope only, sum est / sum act,
    pattern-only sum / sum act)}``."""
    from tempanon.timeseries import queries as Q
    from tempanon.timeseries.sax import znormalize

    Zn = znormalize(X)
    rq = Q.range_workload(X, n_queries, 3, 0.1, seed)
    pq = Q.pattern_workload(X, n_queries, unit, seed + 1)
    prq = Q.pattern_range_workload(X, n_queries, 2, 0.1, seed + 2)
    rows = {"similarity": [], "PRQ": []}
    for t, (q, ps, pr) in enumerate(zip(rq, pq, prq)):
        if t % 2 == 0:
            kind, po, pp = "similarity", Q.psq_answer(Zn, ps), Q.psq_answer(rec, ps)
        else:
            kind, po, pp = "PRQ", Q.prq_answer(Zn, pr), Q.prq_answer(rec, pr)
        inr = ((X[:, q.cols] >= q.lo) & (X[:, q.cols] <= q.hi)).all(axis=1)
        act = int(inr[po].sum())
        if not act:
            continue
        full = Q._fraction(lo[pp][:, q.cols], hi[pp][:, q.cols], q.lo, q.hi).prod(axis=1).sum()
        env = Q._fraction(lo[po][:, q.cols], hi[po][:, q.cols], q.lo, q.hi).prod(axis=1).sum()
        rows[kind].append((act, full, float(inr[pp].sum()), env))
    out = {}
    for kind, v in rows.items():
        v = np.array(v, dtype=float)
        a = v[:, 0]
        rel = [float(np.mean(np.abs(v[:, j] - a) / a)) for j in (1, 2, 3)]
        out[kind] = (len(v), *rel, float(v[:, 1].sum() / a.sum()), float(v[:, 2].sum() / a.sum()))
    return out


def walk_envelopes(n_queries: int, kps=(2, 5, 10, 20)):
    """Why KAPRA's range and complex errors on Walk are far above Naive's and TGA's (Figures 9-10):
    the k-group envelopes, the share of the series' level they keep, the spread of the relative
    errors, and the complex-query error split into its pattern and envelope parts."""
    from tempanon.timeseries.queries import evaluate_arrays

    print("\n### The data: within-series range against the spread of the series' levels\n")
    print("| data | series | mean within-series range (max - min) | std of the series' means | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name in ("walk", "walk01", "motion", "motion01"):
        d = load(name)
        if d is None:
            continue
        X = d[0][d[2]].to_numpy(dtype=float)
        w, sd = float((X.max(1) - X.min(1)).mean()), float(X.mean(1).std())
        print(f"| {name} | {len(X):,} | {w:.4f} | {sd:.4f} | {sd / w:.1f} |")
    d = load("walk")
    if d is None:
        return
    df, idc, qi, sens = d
    print(f"\n### Walk: k-group envelopes and relative errors (k = P, {n_queries} queries, the --compare workload)\n")
    print("| k = P | scheme | k-groups | mean envelope width per k-group | x Naive | level R^2 | "
          "range rel. error mean | median | sum est / sum act | complex rel. error mean | median | sum est / sum act |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    parts = []
    for kp in kps:
        unit, lines = None, {}
        for scheme in ("kapra", "naive", "tga"):
            r = release_arrays(scheme, df, idc, qi, sens, kp, kp)
            X, lo, hi, rec, kg = r["X"], r["lo"], r["hi"], r["rec"], r["kgroup"]
            q = evaluate_arrays(X, lo, hi, rec, n_queries=n_queries, seed=0, psq_avg_distance=unit)
            unit = q["psq_avg_distance"] if unit is None else unit
            f = _kgroup_first_rows(kg)
            width = float((hi[f] - lo[f]).mean())
            if scheme == "kapra":
                kap = r
            parts.append((kp, scheme, complex_parts(X, lo, hi, rec, n_queries, unit)))
            lines[scheme] = (width, lambda base, scheme=scheme, f=f, width=width, q=q, X=X, kg=kg: (
                f"| {kp} | {scheme} | {f.size:,} | {width:.4f} | {width / base:.1f} | {level_share(X, kg):.3f} | "
                f"{q['range_relative_error']:.3f} | {q['range_relative_error_median']:.3f} | {q['range_est_over_act']:.3f} | "
                f"{q['complex_relative_error']:.3f} | {q['complex_relative_error_median']:.3f} | {q['complex_est_over_act']:.3f} |"))
        base = lines["naive"][0]
        for scheme in ("kapra", "naive", "tga"):
            print(lines[scheme][1](base))
        sys.stdout.flush()
        # KAPRA's k-group sizes filled with random series: what grouping that ignores the level gives
        sizes = np.bincount(np.unique(kap["kgroup"], return_inverse=True)[1])
        perm = np.random.default_rng(kp).permutation(len(kap["X"]))
        glo, ghi = envelopes_of(kap["X"][perm], np.repeat(np.arange(sizes.size), sizes))
        print(f"| {kp} | random groups of KAPRA's sizes | {sizes.size:,} | {float((ghi - glo).mean()):.4f} | "
              f"{float((ghi - glo).mean()) / base:.1f} | | | | | | | |")
    print("\n### Walk: complex queries split by pattern predicate (mean relative errors; estimates with the "
          "published pattern and true values, or true pattern and published envelope)\n")
    print("| k = P | scheme | predicate | queries | full | pattern only | envelope only | sum est / sum act | pattern only: sum est / sum act |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for kp, scheme, cp in parts:
        for kind, (n, full, pat, env, ratio, pratio) in cp.items():
            print(f"| {kp} | {scheme} | {kind} | {n} | {full:.3f} | {pat:.3f} | {env:.3f} | {ratio:.3f} | {pratio:.3f} |")


def complex_split(n_queries: int, data=("walk01", "motion"), kps=(2, 5, 10, 20)):
    """The complex-query split of :func:`walk_envelopes` on other data (KAPRA, Naive, TGA)."""
    for name in data:
        d = load(name)
        if d is None:
            continue
        df, idc, qi, sens = d
        print(f"\n### {name}: complex queries split by pattern predicate (k = P, {n_queries} queries)\n")
        print("| k = P | scheme | predicate | queries | full | pattern only | envelope only | sum est / sum act | pattern only: sum est / sum act |")
        print("|---:|---|---|---:|---:|---:|---:|---:|---:|")
        for kp in kps:
            unit = None
            for scheme in ("kapra", "naive", "tga"):
                r = release_arrays(scheme, df, idc, qi, sens, kp, kp)
                if unit is None:
                    from tempanon.timeseries.queries import paired_feature_distance
                    from tempanon.timeseries.sax import znormalize

                    unit = float(paired_feature_distance(znormalize(r["X"]), r["rec"]).mean())
                cp = complex_parts(r["X"], r["lo"], r["hi"], r["rec"], n_queries, unit)
                for kind, (n, full, pat, env, ratio, pratio) in cp.items():
                    print(f"| {kp} | {scheme} | {kind} | {n} | {full:.3f} | {pat:.3f} | {env:.3f} | {ratio:.3f} | {pratio:.3f} |")
                sys.stdout.flush()


def kapra_presplit(kps=(2, 5, 10, 20)):
    """Walk, KAPRA with k = P: how much of the series' level its P-subgroups keep before and after
    Algorithm 3's preprocessing (top-down splitting of P-subgroups of >= 2P series by value)."""
    d = load("walk")
    if d is None:
        return
    df, idc, qi, sens = d
    X = df[qi].to_numpy(dtype=float)
    box, orig = {}, alg.top_down_partition

    def spy(Xs, labels, m):
        box["X"], box["labels"] = Xs.copy(), labels.copy()
        return orig(Xs, labels, m)

    print("\n### Walk, KAPRA (k = P): the level kept by P-subgroups before and after Algorithm 3's preprocessing\n")
    print("| k = P | P-subgroups from create-tree + recycling | share of series in P-subgroups of >= 2P | level R^2 before | level R^2 after (the k-groups) |")
    print("|---:|---:|---:|---:|---:|")
    alg.top_down_partition = spy
    try:
        for kp in kps:
            g = alg.kapra(X, kp, kp, 5)
            lab = np.unique(box["labels"], return_inverse=True)[1]
            sizes = np.bincount(lab)
            pub = g.kgroup >= 0
            print(f"| {kp} | {sizes.size:,} | {float((sizes[lab] >= 2 * kp).mean()):.3f} | "
                  f"{level_share(box['X'], lab):.3f} | {level_share(X[pub], g.kgroup[pub]):.3f} |")
    finally:
        alg.top_down_partition = orig


def range_estimators(n_queries: int, kps=(2, 5, 10, 20)):
    """Walk: the range-query relative error (mean / median) of KAPRA, Naive and TGA under three
    readings of the estimate from envelopes (Section 7.1 does not say): uniform spread (tempanon's),
    count the envelopes contained in the query, count the envelopes intersecting it."""
    from tempanon.timeseries import queries as Q

    d = load("walk")
    if d is None:
        return
    df, idc, qi, sens = d
    print(f"\n### Walk: range-query relative error under three estimates (mean / median, {n_queries} queries)\n")
    print("| k = P | scheme | uniform spread | contained | intersecting |")
    print("|---:|---|---:|---:|---:|")
    for kp in kps:
        for scheme in ("kapra", "naive", "tga"):
            r = release_arrays(scheme, df, idc, qi, sens, kp, kp)
            X, lo, hi = r["X"], r["lo"], r["hi"]
            errs = {"uniform": [], "contained": [], "intersecting": []}
            for q in Q.range_workload(X, n_queries, 3, 0.1, 0):
                act = Q.range_count(X, q)
                if not act:
                    continue
                L, H = lo[:, q.cols], hi[:, q.cols]
                for key, est in (("uniform", Q.range_count_estimate(lo, hi, q)),
                                 ("contained", float(((L >= q.lo) & (H <= q.hi)).all(axis=1).sum())),
                                 ("intersecting", float(((H >= q.lo) & (L <= q.hi)).all(axis=1).sum()))):
                    errs[key].append(abs(est - act) / act)
            cells = " | ".join(f"{np.mean(v):.3f} / {np.median(v):.3f}" for v in errs.values())
            print(f"| {kp} | {scheme} | {cells} |")
            sys.stdout.flush()


def _maximize_first_failure(pid, members, group, level, max_level):
    """Algorithm 1's maximize-level read as "raise the level while all members share a word": stop
    at the first level where they differ (tempanon takes the highest level where they agree)."""
    out = np.asarray(level, dtype=np.int64).copy()
    if members.size == 0:
        return out
    order = np.argsort(group, kind="stable")
    g, m = group[order], members[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    gid = g[starts]
    active = np.ones(len(gid), dtype=bool)
    for L in range(2, max_level + 1):
        ids = pid[L][m]
        same = np.minimum.reduceat(ids, starts) == np.maximum.reduceat(ids, starts)
        step = active & (L == out[gid] + 1)
        out[gid[step & same]] = L
        active &= ~(step & ~same)
    return out


def maximize_reading(kps=((10, 2), (10, 5))):
    """KAPRA's PL(T) and mean level with the two readings of Algorithm 1's maximize-level."""
    from tempanon.timeseries import tree
    from tempanon.timeseries.model import pattern_loss
    from tempanon.timeseries.sax import reconstruct, znormalize

    print("\n### Algorithm 1's maximize-level: highest common level (tempanon) vs stop at the first difference\n")
    print("| data | k | P | PL(T) highest | PL(T) first difference | mean level highest | mean level first difference |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    orig = tree.maximize_level
    for name in ("walk", "motion"):
        d = load(name)
        if d is None:
            continue
        X = d[0][d[2]].to_numpy(dtype=float)
        Z = znormalize(X)
        for k, P in kps:
            res = []
            for f in (orig, _maximize_first_failure):
                tree.maximize_level = f
                try:
                    g = alg.kapra(X, k, P, 5)
                finally:
                    tree.maximize_level = orig
                pub = g.kgroup >= 0
                res.append((float(pattern_loss(Z[pub], reconstruct(g.words[pub], g.level[pub])).sum()),
                            float(g.level[pub].mean())))
            print(f"| {name} | {k} | {P} | {res[0][0]:.1f} | {res[1][0]:.1f} | {res[0][1]:.3f} | {res[1][1]:.3f} |")


def envelopes_of(X, labels):
    from tempanon.timeseries.partition import envelopes

    return envelopes(X, labels)


def tga_motion(kps=(2, 5), steps=(1, 2, 4, 8)):
    """Figure 6 on Motion: tempanon's TGA has a lower PL than KAPRA there. Hypothesis: consecutive
    frames are near copies, so TGA's k nearest neighbours give envelopes much narrower than a
    series' own range and a random series inside keeps the shape. Test: keep every ``m``-th frame
    (fewer near copies) and watch TGA's relative envelope width and PL against KAPRA's."""
    print("\n### Figure 6 on Motion: TGA's envelopes relative to the series' own range (every m-th frame kept)\n")
    print("| data | m | series | k = P | TGA envelope width / own range | TGA PL per series | KAPRA PL per series | Naive PL per series |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in ("motion", "motion01", "walk"):
        d = load(name)
        if d is None:
            continue
        df0, idc, qi, sens = d
        for m in (steps if name == "motion" else (1,)):
            df = df0.iloc[::m].reset_index(drop=True)
            for kp in kps:
                pl = {}
                for scheme in ("tga", "kapra", "naive"):
                    r = release_arrays(scheme, df, idc, qi, sens, kp, kp)
                    pl[scheme] = r["PL"] / len(r["X"])
                    if scheme == "tga":
                        own = r["X"].max(1) - r["X"].min(1)
                        relw = float(np.median((r["hi"] - r["lo"]).mean(1) / np.maximum(own, 1e-12)))
                print(f"| {name} | {m} | {len(df):,} | {kp} | {relw:.3f} | {pl['tga']:.3f} | {pl['kapra']:.3f} | {pl['naive']:.3f} |")
                sys.stdout.flush()


def scalability(schemes, sizes=(10_000, 20_352, 50_000, 100_000), k=10, P=10):
    """Figure 11: CPU s of each algorithm alone (no release building, no verification), k = P = 10,
    on Uniform and on generated Walk series standing in for Motion at the paper's sizes; BFP2KA on
    the SAX words at level 20 (the transform included in its time)."""
    print(f"\n### Figure 11: CPU s of the algorithms (k = P = {k}, max level 5; BFP2KA on SAX level 20)\n")
    print("| data | series | " + " | ".join(f"{s} CPU s" for s in schemes) + " | load before |")
    print("|---|---:|" + "---:|" * len(schemes) + "---|")
    for name in ("walk (Motion sizes)", "uniform"):
        for n in sizes:
            df = random_walk(n, seed=n) if name.startswith("walk") else uniform(n, seed=n)
            X = df[QI].to_numpy(dtype=float)
            la = load_avg()
            cells = []
            for s in schemes:
                t = time.process_time()
                if s == "naive":
                    alg.naive(X, k, P, 5)
                elif s == "kapra":
                    alg.kapra(X, k, P, 5)
                elif s == "tga":
                    bl.tga(X, k, seed=0)
                elif s == "bfp2ka":
                    bl.bfp2ka(bl.string_dataset(X), k)
                cells.append(f"{time.process_time() - t:.2f}")
            print(f"| {name} | {n:,} | " + " | ".join(cells) + f" | {la} |")
            sys.stdout.flush()


def cdp_scale(sizes=(10_000, 20_352, 50_000, 100_000), op=0.6, k=10, P=3):
    """Figure 12(b): CPU s of the Section 6 estimation (missing ranges by Lemma 1 + LP, missing
    symbols by LP feasibility) on KAPRA releases of generated Walk series at Figure 11's sizes,
    one random choice of the overlapped attributes (``op``) per size."""
    from tempanon.timeseries.publish import estimate_ranges, estimate_symbols

    print(f"\n### Figure 12(b): estimation cost, KAPRA k={k}, P={P}, op = {op:.0%} (one attribute choice per size)\n")
    print("| series | P-subgroups | missing ranges + symbols | estimation CPU s | ranges CPU s | symbols CPU s | load before |")
    print("|---:|---:|---|---:|---:|---:|---|")
    rng = np.random.default_rng(0)
    perm = [QI[i] for i in rng.permutation(10)]
    n_ov = int(round(op * 10))
    ov, rest = perm[:n_ov], perm[n_ov:]
    ae, pr = ov + rest[: len(rest) // 2], ov + rest[len(rest) // 2:]
    for n in sizes:
        df = random_walk(n, seed=n)
        r = kp_anonymize(df, id_col="id", qi=QI, k=k, P=P, publish_values=ae, publish_patterns=pr, shuffle_seed=0)
        la = load_avg()
        t0 = time.process_time()
        estimate_ranges(r.released, QI, ae, pr, domain=(0.0, 1.0))
        t1 = time.process_time()
        estimate_symbols(r.released, QI, ae, pr, domain=(0.0, 1.0))
        t2 = time.process_time()
        print(f"| {n:,} | {r.summary['psubgroups']:,} | {10 - len(ae)} + {10 - len(pr)} | {t2 - t0:.1f} | {t1 - t0:.1f} | "
              f"{t2 - t1:.1f} | {la} |")
        sys.stdout.flush()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--million", action="store_true")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--scaling", action="store_true")
    ap.add_argument("--figures", action="store_true")
    ap.add_argument("--table4", action="store_true")
    ap.add_argument("--queries", action="store_true")
    ap.add_argument("--n-queries", type=int, default=1000)
    ap.add_argument("--cdp", action="store_true", help="Section 7.4 customized publishing")
    ap.add_argument("--cdp-series", type=int, default=1000)
    ap.add_argument("--cdp-reps", type=int, default=2)
    ap.add_argument("--figure-data", default="walk,motion,sales,italy", help="data sets of --figures")
    ap.add_argument("--compare", action="store_true", help="Figures 6-10 with Naive, KAPRA, TGA, BFP2KA")
    ap.add_argument("--compare-data", default="walk,motion,string",
                    help="data of --compare: walk, walk01 (each series scaled to [0,1]), motion, string")
    ap.add_argument("--walk-envelopes", action="store_true",
                    help="Figures 9-10 on Walk: k-group envelopes, error spread, complex-query parts")
    ap.add_argument("--complex-split", default="",
                    help="data (e.g. walk01,motion) for the complex-query split of --walk-envelopes")
    ap.add_argument("--kapra-presplit", action="store_true",
                    help="Walk: level kept by KAPRA's P-subgroups before/after Algorithm 3's preprocessing")
    ap.add_argument("--range-estimators", action="store_true",
                    help="Walk: range-query errors under uniform / contained / intersecting estimates")
    ap.add_argument("--maximize-reading", action="store_true",
                    help="KAPRA PL with the two readings of Algorithm 1's maximize-level")
    ap.add_argument("--tga-motion", action="store_true", help="Figure 6: TGA's PL on thinned Motion")
    ap.add_argument("--scalability", action="store_true", help="Figure 11")
    ap.add_argument("--cdp-scale", action="store_true", help="Figure 12(b)")
    ap.add_argument("--algorithms", default=",".join(ALL_SCHEMES),
                    help="schemes of --compare and --scalability (naive,kapra,tga,bfp2ka)")
    ap.add_argument("--sizes", default="10000,20352,50000,100000", help="series counts of --scalability, --cdp-scale")
    args = ap.parse_args(argv)
    schemes = tuple(a for a in args.algorithms.split(",") if a)
    unknown = [a for a in schemes if a not in ALL_SCHEMES]
    if unknown:
        ap.error(f"unknown algorithm(s) {unknown}; choose from {', '.join(ALL_SCHEMES)}")
    sizes = tuple(int(x) for x in args.sizes.split(","))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"numpy {np.__version__}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load {load_avg()}\n")
    if args.million:
        million(args.repeat)
    if args.scaling:
        scaling()
    if args.figures:
        figures(tuple(args.figure_data.split(",")))
    if args.table4:
        table4()
    if args.queries:
        queries(args.n_queries)
    if args.cdp:
        cdp(args.cdp_series, args.cdp_reps, args.n_queries)
    if args.compare:
        compare(args.n_queries, schemes, data=tuple(args.compare_data.split(",")))
    if args.walk_envelopes:
        walk_envelopes(args.n_queries)
    if args.complex_split:
        complex_split(args.n_queries, tuple(args.complex_split.split(",")))
    if args.kapra_presplit:
        kapra_presplit()
    if args.range_estimators:
        range_estimators(args.n_queries)
    if args.maximize_reading:
        maximize_reading()
    if args.tga_motion:
        tga_motion()
    if args.scalability:
        scalability(schemes, sizes)
    if args.cdp_scale:
        cdp_scale(sizes)


if __name__ == "__main__":
    main()
