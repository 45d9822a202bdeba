"""Benchmark of timestamped-data anonymization (Mascetti et al., TIME 2006) and the joint search.

Usage::

    python benchmarks/bench_temporal.py [--tuples 1000000] [--respondents 100000] [--k 5] [--skip-joint]

Prints one table per scenario: the stages of the time-only algorithm (Algorithm 1 with
Procedures 1-2) on a generated hospital-exam relation with 12 granularities, the joint Incognito
search of time with 3 more quasi-identifiers, and both on the shared Synthea encounters
(``../shared/data/timestamped``) when present. Times are wall-clock seconds on this machine.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd

from tempanon.hierarchy import build_intervals, build_masking, build_suppression
from tempanon.temporal.api import anonymize_timestamped, encode_columns, encode_uid, parse_granularities
from tempanon.temporal.generator import hospital_exams
from tempanon.temporal.least import check_granularity, least_generalization, prepare
from tempanon.temporal.parse import infer_data_granularity, parse_timestamps
from tempanon.temporal.relations import build_dag, span_of

G12 = ("hour,part-of-day,8hours,day,week,2weeks,month,2months,quarter,3months@2,semester,year")
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "timestamped"


def timed(label, fn, rows):
    t = time.perf_counter()
    out = fn()
    rows.append((label, time.perf_counter() - t))
    return out


def print_table(title, rows, extra=()):
    print(f"\n### {title}\n")
    print("| stage | seconds |\n|---|---:|")
    for label, s in rows:
        print(f"| {label} | {s:.3f} |")
    for line in extra:
        print(line)


def time_only(df, time_col, qi, uid, k, grans, max_supp, title):
    rows = []
    inst, miss, _ = timed("parse timestamps", lambda: parse_timestamps(df[time_col], time_col), rows)
    g0 = infer_data_granularity(inst, miss)
    cands = parse_granularities(grans)
    dag = timed("granularity DAG (finer-than, shift-equivalence)",
                lambda: build_dag(g0, cands, span_of(inst[~miss])), rows)  # fmt: skip
    q = encode_columns(df, qi)
    u = encode_uid(df, uid)
    prep = timed("sort once (prepare)", lambda: prepare(q, inst, miss, u, np.where(miss, 0, g0.index(inst))), rows)
    ms = int(np.floor(max_supp * len(df)))
    res = timed("Algorithm 1 (Procedures 1+2)", lambda: least_generalization(prep, dag, k, max_suppressed=ms), rows)
    core = sum(s for _, s in rows)
    rows.append(("**core total (parse + DAG + sort + Algorithm 1)**", core))
    timed(f"Procedure 2 on all {len(dag.nodes)} nodes (brute force, for comparison)",
          lambda: [check_granularity(prep, g, k, ms) for g in dag.nodes], rows)  # fmt: skip
    api = timed("full API call (incl. release, labels, summary, verification)",
                lambda: anonymize_timestamped(df, time=time_col, qi=qi, uid=uid, k=k, granularities=grans,
                                              max_suppression=max_supp), rows)  # fmt: skip
    s = api.summary
    extra = [
        "",
        f"{len(df):,} tuples, {s['respondents']:,} respondents, QI {', '.join(qi)}, k={k}, "
        f"max suppression {max_supp}; data granularity {s['data_granularity']}; DAG nodes {len(dag.nodes)} "
        f"(disregarded: {', '.join(dag.disregarded) or 'none'}; shift-equivalent merged: "
        f"{', '.join(dag.equivalent) or 'none'}); Procedure 2 ran on {len(res.checks)} node(s); chosen "
        f"**{s['granularity']}** (gen_m {s['gen_m']}, gen_s {s['gen_s']}, suppressed {s['suppressed']}).",
    ]
    print_table(title, rows, extra)


def joint(df, time_col, qi, uid, k, grans, hier, max_supp, title):
    rows = []
    res = timed("full API call (joint Incognito search, selection by gen_c, release, verification)",
                lambda: anonymize_timestamped(df, time=time_col, qi=qi, uid=uid, k=k, granularities=grans,
                                              hierarchies=hier, max_suppression=max_supp), rows)  # fmt: skip
    s = res.summary
    rows.append(("of which the engine's search (kanonymize)", s["search_seconds"]))
    extra = [
        "",
        f"{len(df):,} tuples, {s['respondents']:,} respondents, time x {', '.join(qi)}, k={k}, max suppression "
        f"{max_supp}; lattice {s['lattice_size']} nodes, {s['nodes_checked']} checked, {s['anonymous_nodes']} "
        f"anonymous, {len(s['minimal_k_anonymous'])} minimal; chosen {s['granularity']} (gen_m {s['gen_m']}, "
        f"gen_s {s['gen_s']}, suppressed {s['suppressed']}).",
    ]
    print_table(title, rows, extra)


def _old_metrics(prep, g, k, max_supp):
    """The metrics tempanon used before issue 13 (max / sum-1 of distinct data granules per
    released class), to measure how often the paper's metrics choose differently."""
    h = g.index(prep.t)
    fr = pd.DataFrame({"q": prep.q, "h": h, "z": prep.z, "u": prep.prev})
    fr["uid"] = _uids(prep)
    grp = fr.groupby(["q", "h"], sort=False)
    resp, nts, size = grp["uid"].nunique(), grp["z"].nunique(), grp.size()
    small = resp < k
    kept = nts[~small]
    return (int(kept.max()) if len(kept) else 0, int((kept - 1).sum()))


def _uids(prep):
    # respondent of each sorted tuple: follow the prev links to the first tuple of (q, uid)
    root = np.arange(prep.n)
    prev = prep.prev
    has = prev >= 0
    root[has] = prev[has]
    while True:
        nxt = np.where(prev[root] >= 0, prev[root], root)
        if (nxt == root).all():
            return root
        root = nxt


def fidelity(df, time_col, qi_sets, uid, grans, ks, supps, title, tz=None):
    """Over a grid of settings: the paper's gen_c choice against (a) the choice among the minimal
    anonymous granularities only (Procedure 1's pruning applied under suppression) and (b) the
    metrics tempanon used before (max and sum-1 of merged timestamps, ascending)."""
    from tempanon.temporal.least import sort_key

    inst, miss, _ = parse_timestamps(df[time_col], time_col, tz)
    g0 = infer_data_granularity(inst, miss)
    dag = build_dag(g0, parse_granularities(grans), span_of(inst[~miss]))
    u = encode_uid(df, uid)
    n_set = differ_prune = differ_old = 0
    extra_evals = []
    examples = []
    for qi in qi_sets:
        prep = prepare(encode_columns(df, qi), inst, miss, u, np.where(miss, 0, g0.index(inst)))
        for k in ks:
            for sp in supps:
                ms = int(np.floor(sp * len(df) + 1e-9))
                checks = [check_granularity(prep, g, k, ms) for g in dag.nodes]
                anon = [v for v, c in enumerate(checks) if c.k_anonymous]
                if not anon:
                    continue
                n_set += 1
                minimal = [v for v in anon if not any(a != v and dag.finer[a, v] for a in anon)]
                best = min(anon, key=lambda v: sort_key(checks[v], "gen_c", v))
                pruned_pick = min(minimal, key=lambda v: sort_key(checks[v], "gen_c", v))
                if ms > 0:
                    res = least_generalization(prep, dag, k, max_suppressed=ms)
                    extra_evals.append(len(res.checks))
                if pruned_pick != best:
                    differ_prune += 1
                    examples.append(f"QI {','.join(qi) or '-'} k={k} supp={sp}: sound search {dag.nodes[best].name} "
                                    f"{checks[best].gen_c}, pruned {dag.nodes[pruned_pick].name} "
                                    f"{checks[pruned_pick].gen_c}")  # fmt: skip
                old = {v: _old_metrics(prep, dag.nodes[v], k, ms) for v in minimal}
                old_pick = min(minimal, key=lambda v: (*old[v], v))
                if old_pick != best:
                    differ_old += 1
    print(f"\n### {title}\n")
    print(f"{len(dag.nodes)} granularities (data {g0.name}); {n_set} settings with a k-anonymous granularity.")
    print(f"- choice differs from the pre-issue-13 metrics (max/sum-1 of merged timestamps): {differ_old} of {n_set}")
    print(f"- choice differs when pruning under suppression (minimal granularities only): {differ_prune} of {n_set}")
    for e in examples[:5]:
        print(f"  - {e}")
    if extra_evals:
        print(f"- with suppression the sound search evaluates {min(extra_evals)}-{max(extra_evals)} of {len(dag.nodes)} "
              f"granularities (no pruning; skipped only by the bound on gen_c)")


def example3():
    """Example 3 of the paper on Table 3, verbatim."""
    from tempanon.temporal.generator import paper_table3

    df = paper_table3()
    t0 = time.process_time()
    res = anonymize_timestamped(df, time="T", qi=["Q"], uid="UID", k=2, granularities="week,month")
    cpu = time.process_time() - t0
    c = {x["granularity"]: x for x in res.summary["candidates"]}
    print("\n### Example 3 (Table 3, k = 2, G = {week, month})\n")
    print("| | paper | tempanon |\n|---|---|---|")
    print(f"| R (day) 2-anonymous | no (Example 1) | {'yes' if c['day']['k_anonymous'] else 'no'} |")
    print(f"| gen_m(R_week), gen_m(R_month) | 2, 2 | {c['week']['gen_m']}, {c['month']['gen_m']} |")
    print(f"| gen_s(R_week), gen_s(R_month) | 6, 5 | {c['week']['gen_s']}, {c['month']['gen_s']} |")
    print(f"| least generalization (<=_c) | week | {res.summary['granularity']} |")
    print(f"\nCPU {cpu * 1000:.1f} ms for the whole call (parse, DAG, search, release, verification).")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fidelity", action="store_true", help="Example 3 and the fidelity grids, not the timings")
    ap.add_argument("--tuples", type=int, default=1_000_000)
    ap.add_argument("--respondents", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-suppression", type=float, default=0.01)
    ap.add_argument("--skip-joint", action="store_true")
    a = ap.parse_args()
    if a.fidelity:
        example3()
        ks, supps = (2, 3, 5, 10, 20), (0.0, 0.01, 0.05)
        sample = Path(__file__).resolve().parents[1] / "src" / "tempanon" / "samples" / "timestamped" / "encounters.csv.gz"
        enc = pd.read_csv(sample, dtype=str)
        fidelity(enc, "START", [[], ["ENCOUNTERCLASS"]], "PATIENT", G12, ks, supps,
                 "Synthea encounters (bundled sample), 12 granularities, calendar America/New_York",
                 tz="America/New_York")  # fmt: skip
        for seed in (0, 1):
            ex = hospital_exams(1000, (2, 6), seed=seed, n_addresses=300, n_zips=10)
            fidelity(ex, "TIME", [["GENDER"], ["ZIP"], ["GENDER", "ZIP"]], "PATIENT", G12, ks, supps,
                     f"generated exams (1,000 patients, seed {seed}), 12 granularities")  # fmt: skip
        return
    print(f"python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, "
          f"{platform.machine()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")  # fmt: skip
    per = a.tuples / a.respondents
    t = time.perf_counter()
    df = hospital_exams(a.respondents, (int(per), int(per)) if per == int(per) else per, seed=0,
                        n_addresses=a.respondents // 2, n_zips=40)  # fmt: skip
    print(f"generated {len(df):,} tuples in {time.perf_counter() - t:.2f} s")
    time_only(df, "TIME", ["GENDER"], "PATIENT", a.k, G12, a.max_suppression,
              f"Time only: generated exams, 12 granularities")  # fmt: skip
    if not a.skip_joint:
        hier = {
            "GENDER": build_suppression("GENDER", df["GENDER"]),
            "AGE": build_intervals("AGE", df["AGE"], [5, 10, 20]),
            "ZIP": build_masking("ZIP", df["ZIP"], 3),
        }
        joint(df, "TIME", ["GENDER", "AGE", "ZIP"], "PATIENT", a.k, G12, hier, a.max_suppression,
              "Joint: time x GENDER x AGE x ZIP, generated exams, 12 granularities")  # fmt: skip
    if (SHARED / "encounters.csv").exists():
        enc = pd.read_csv(SHARED / "encounters.csv", usecols=["PATIENT", "START"], dtype=str)
        pat = pd.read_csv(SHARED / "patients.csv", usecols=["Id", "GENDER", "RACE", "BIRTHDATE"], dtype=str)
        sy = enc.merge(pat, left_on="PATIENT", right_on="Id").drop(columns="Id")
        sy["BIRTHYEAR"] = sy["BIRTHDATE"].str[:4]
        time_only(sy, "START", ["GENDER", "RACE"], "PATIENT", a.k, G12, 0.05,
                  "Time only: Synthea encounters (PATIENT, START), QI GENDER, RACE")  # fmt: skip
        if not a.skip_joint:
            hier = {"GENDER": build_suppression("GENDER", sy["GENDER"]), "RACE": build_suppression("RACE", sy["RACE"]),
                    "BIRTHYEAR": build_intervals("BIRTHYEAR", sy["BIRTHYEAR"].astype(int), [10, 20, 40])}  # fmt: skip
            sy["BIRTHYEAR"] = sy["BIRTHYEAR"].astype(int)
            joint(sy, "START", ["GENDER", "RACE", "BIRTHYEAR"], "PATIENT", a.k, G12, hier, 0.05,
                  "Joint: Synthea encounters, time x GENDER x RACE x BIRTHYEAR")  # fmt: skip
    else:
        print(f"\n(shared Synthea data not found at {SHARED}; skipped)")


if __name__ == "__main__":
    main()
