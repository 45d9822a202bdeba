"""Benchmark of snapshot-stream publishing (issue 4; Wang, Xu, Wong, Fu, ICDM 2010).

For each dataset, snapshot unit (day, week), l and w: suppression rate, total and mean reposition
distance, information loss (IL, Eq. 2), the offline ILP lower bound (HiGHS dual bound within
--offline-limit seconds) and the ratio IL / bound, the mean relative error of a window-query workload,
and throughput (records per second of the whole API call: snapshots, online steps, Anatomy, independent
verification; wall clock and CPU time of the process, since the machine may be shared). Prints a table and appends one JSON line per run to --jsonl.

    python benchmarks/bench_stream.py --dataset uof --jsonl /tmp/stream_uof.jsonl
    python benchmarks/bench_stream.py --dataset stops --l 2,5 --w 0,4 --units day
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import pandas as pd
from _common import emit

from tempanon.errors import NoSolutionError
from tempanon.stream.api import anonymize_stream
from tempanon.stream.offline import offline_lower_bound
from tempanon.stream.queries import answer_workload, generate_workload

# the shared data beside the repository (a clone's parent, or a worktree's grandparent)
DATA = next(
    (d for d in (Path(__file__).resolve().parents[k] / "shared" / "data" / "snapshots" for k in (2, 3)) if d.exists()),
    Path(__file__).resolve().parents[2] / "shared" / "data" / "snapshots",
)
DATASETS = {
    "uof": ("mn_police_use_of_force.csv", "response_datetime", "problem", ["race", "sex", "age", "precinct", "neighborhood"]),
    "stops": ("mpls_stops.csv", "date", "race", ["gender", "policePrecinct", "neighborhood", "problem"]),
}


def markdown(paths: list[Path]) -> str:
    """A Markdown table of the JSON lines written by earlier runs (``--markdown a.jsonl b.jsonl``)."""
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line.strip()]
    out = [
        "| data | unit | l | w | suppressed % | repositioned | total dist | mean dist | IL | offline LB | IL/LB | query RE | rec/s (wall) | rec/CPU-s | steps comb. / ILP (ILP = comb.) |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        lb = f"{r['offline_lower_bound']:.0f}{'' if r['offline_optimal'] else ' (bound)'}"
        d = r.get("defer")
        # JSON lines before 2026-11-22 carry a boolean (false = the paper's pricing, true = defer 1)
        name = r["dataset"] + ((" +defer" if d else "") if isinstance(d, bool) or d is None else f" defer {d:.2f}")
        out.append(
            f"| {name} | {r['unit']} | {r['l']} | {r['w']} | {100 * r['suppression_rate']:.2f} | {r['repositioned']} | "
            f"{r['total_distance']} | {r['mean_distance']:.2f} | {r['information_loss']:.0f} | {lb} | {ratio} | "
            f"{r['query_mean_relative_error']:.3f} | {r['records_per_second']:.0f} | {r['records_per_cpu_second']:.0f} | "
            f"{r.get('combinatorial_steps', '-')} / {r['ilp_steps']} ({r.get('ilp_confirmed_combinatorial', '-')}) |"
        )
    return "\n".join(out)


# issue 14's targets for the fast step: on daily use-of-force, l in {2,3,5,10}, w in {1,2,4,8}, >= 100,000
# step records per CPU-second and total IL within 2% of the exact step's
TARGET_RATE = 100_000
TARGET_IL = 1.02


def _in_scope(key) -> bool:
    dataset, unit, _cost, l, w = key
    return dataset == "uof" and unit == "day" and l in (2, 3, 5, 10) and w in (1, 2, 4, 8)


def compare(paths: list[Path]) -> str:
    """A Markdown table of the steps side by side (``--compare a.jsonl b.jsonl ...``): per dataset, unit,
    cost, l and w, each step's IL, IL / offline bound (the bound of any run of the cell: it depends on
    the data, l, w, mu and beta only), suppressed, repositioned, and records per CPU-second of the online
    steps and of the whole API call. The fast step also gets IL / exact IL and, in issue 14's cells
    (daily use-of-force, l in {2,3,5,10}, w in {1,2,4,8}), whether its targets are met: ``rate`` (>= 100,000
    step records per CPU-second), ``IL`` (within 2% of the exact step's IL)."""
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line.strip()]
    cells: dict = {}
    for r in rows:
        key = (r["dataset"], r["unit"], r.get("cost") or "linear", r["l"], r["w"])
        cells.setdefault(key, {})[r.get("step") or "exact"] = r
    present = {st for c in cells.values() for st in c}
    steps = [st for st in ("paper", "exact", "fast") if st in present]
    head = ["data", "unit", "mu", "l", "w", "offline LB"]
    for st in steps:
        head += [f"{st} IL", f"{st} IL/LB", f"{st} supp.", f"{st} repos.", f"{st} step rec/CPU-s", f"{st} e2e rec/CPU-s"]
        if st == "fast":
            head += ["fast IL/exact IL", "issue 14 targets"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * 5 + "--:|" * (len(head) - 6) + "---|"]
    order = {"uof": 0, "stops": 1}
    for key in sorted(cells, key=lambda k: (order.get(k[0], 9), k[1], k[2], k[3], k[4])):
        c = cells[key]
        lbs = [r["offline_lower_bound"] for r in c.values() if r.get("offline_lower_bound") == r.get("offline_lower_bound")]
        lb = max(lbs) if lbs else None
        opt = any(r.get("offline_optimal") for r in c.values())
        line = [*map(str, key), "-" if lb is None else f"{lb:.0f}{'*' if opt else ''}"]
        for st in steps:
            r = c.get(st)
            if r is None:
                line += ["-"] * (8 if st == "fast" else 6)
                continue
            il = r["information_loss"]
            ratio = "-" if lb is None else (f"{il / lb:.3f}" if lb > 0 else ("1.000" if il == 0 else "-"))
            srate = r.get("step_records_per_cpu_second")
            line += [f"{il:.0f}", ratio, str(round(r["suppression_rate"] * r["records"])), str(r["repositioned"]),
                     "-" if not srate else f"{srate:,.0f}", f"{r['records_per_cpu_second']:,.0f}"]
            if st == "fast":
                ex = c.get("exact")
                rel = None if ex is None else (il / ex["information_loss"] if ex["information_loss"] > 0 else (1.0 if il == 0 else None))
                line.append("-" if rel is None else f"{rel:.3f}")
                if _in_scope(key) and rel is not None:
                    ok_rate = bool(srate and srate >= TARGET_RATE)
                    ok_il = rel <= TARGET_IL
                    line.append(f"rate {'met' if ok_rate else 'NOT met'}, IL {'met' if ok_il else 'NOT met'}")
                else:
                    line.append("-")
        out.append("| " + " | ".join(line) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", choices=sorted(DATASETS), default="uof")
    ap.add_argument("--l", default="2,3,5,10")
    ap.add_argument("--w", default="0,1,2,4,8")
    ap.add_argument("--runs", default=None, help="explicit unit:l:w triples, e.g. 'day:2:4,week:5:1' (overrides --units/--l/--w)")
    ap.add_argument("--units", default="day,week")
    ap.add_argument("--offline-limit", type=float, default=20.0)
    ap.add_argument("--offline-form", choices=["direct", "caps"], default="direct",
                    help="offline ILP form: direct (default) or caps (better offline solutions within the limit)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rows", type=int, default=None, help="use only the first ROWS records")
    ap.add_argument("--jsonl", type=Path, default=None)
    ap.add_argument("--defer", type=float, default=None,
                    help="pricing of suppressions a later step can still recycle, 0 (the paper) .. 1; default: the library's (docs/stream.md)")
    ap.add_argument("--step", default="exact", help="the online step: paper, exact or fast (docs/stream.md)")
    ap.add_argument("--cost", default="linear", help="reposition cost: linear or quadratic")
    ap.add_argument("--no-offline", action="store_true", help="skip the offline lower bound")
    ap.add_argument("--compare", nargs="+", type=Path, default=None, help="print the steps side by side (JSON-lines results) and exit")
    ap.add_argument("--markdown", nargs="+", type=Path, default=None, help="print a Markdown table of JSON-lines results and exit")
    args = ap.parse_args(argv)
    if args.compare:
        print(compare(args.compare))
        return 0
    if args.markdown:
        print(markdown(args.markdown))
        return 0
    name, time_col, sens, qi = DATASETS[args.dataset]
    path = DATA / name
    if not path.exists():
        print(f"data not found: {path}", file=sys.stderr)
        return 1
    df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    if args.rows:
        df = df.iloc[: args.rows]
    header = f"{'data':6} {'unit':4} {'l':>2} {'w':>2} {'supp%':>6} {'moved':>6} {'dist':>6} {'mean d':>6} {'IL':>9} {'LB':>9} {'IL/LB':>6} {'qRE':>6} {'rec/s':>8} {'rec/cpu-s':>9} {'ilp':>5} {'comb':>5}"
    print(header)
    if args.runs:
        runs = [(u, int(a), int(b)) for u, a, b in (x.split(":") for x in args.runs.split(","))]
    else:
        runs = [(u, l, w) for u in args.units.split(",") for l in map(int, args.l.split(",")) for w in map(int, args.w.split(","))]
    for unit, l, w in runs:
        t0, c0 = time.perf_counter(), time.process_time()
        kw = {} if args.defer is None else {"defer": args.defer}
        try:
            r = anonymize_stream(df, time=time_col, sensitive=sens, qi=qi, l=l, w=w, snapshot=unit, step=args.step, cost=args.cost, **kw)
        except NoSolutionError as e:  # l above the distinct sensitive values (stops at l = 10): refused
            print(f"{args.dataset:6} {unit:4} {l:>2} {w:>2} refused: {e}")
            continue
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        s = r.summary
        tab = r.publisher.record_table()
        if args.no_offline:
            off = argparse.Namespace(lower_bound=float("nan"), optimal=False, best_il=None)
        else:
            off = offline_lower_bound(
                tab["home"].to_numpy(), tab["code"].to_numpy(), l, r.publisher.mu,
                r.publisher.cost.beta_array(r.publisher.values), n_snapshots=len(r.labels),
                time_limit=args.offline_limit, form=args.offline_form,
            )
        if args.queries:
            qs = generate_workload(df, r.row_snapshot, qi, sens, n_queries=args.queries, qd=2,
                                   span=7 if unit == "day" else 2, n_snapshots=len(r.labels), seed=l * 100 + w)
            qre = answer_workload(qs, df, r.row_snapshot, sens, r.qit, r.st, r.labels).summary()["mean_relative_error"]
        else:
            qre = float("nan")
        n = s["records"]
        row = {
            "dataset": args.dataset, "defer": s.get("defer"), "unit": unit, "l": l, "w": w, "records": n, "snapshots": s["snapshots"],
            "suppression_rate": s["suppressed"] / n, "repositioned": s["repositioned"],
            "total_distance": s["total_reposition_distance"],
            "mean_distance": s["total_reposition_distance"] / s["repositioned"] if s["repositioned"] else 0.0,
            "information_loss": s["information_loss"], "offline_lower_bound": off.lower_bound,
            "offline_optimal": off.optimal, "offline_best": off.best_il, "offline_form": args.offline_form,
            "ratio": s["information_loss"] / off.lower_bound if off.lower_bound > 0 and not args.no_offline else (1.0 if s["information_loss"] == 0 else None),
            "query_mean_relative_error": qre,
            "seconds": secs, "cpu_seconds": cpu, "records_per_second": n / secs,
            "records_per_cpu_second": n / cpu if cpu > 0 else None, "ilp_steps": s["steps_solved_by_ilp"],
            "combinatorial_steps": s.get("steps_solved_combinatorially"),
            "ilp_confirmed_combinatorial": s.get("steps_ilp_confirmed_combinatorial"),
            "certificates": s.get("step_certificates"), "ilp_step_solvers": s.get("ilp_step_solvers"),
            "loadavg": os.getloadavg()[0], "step": s.get("step"), "cost": s.get("cost"),
            "step_cpu_seconds": s.get("step_cpu_seconds"),
            # the fast step's kernel compile / cache load (in cpu_seconds, not in step_cpu_seconds; once per process)
            "jit_compile_cpu_seconds": s.get("jit_compile_cpu_seconds"),
            "step_records_per_cpu_second": n / s["step_cpu_seconds"] if s.get("step_cpu_seconds") else None,
        }
        ratio = f"{row['ratio']:.3f}" if row["ratio"] is not None else "-"
        emit(
            f"{args.dataset:6} {unit:4} {l:>2} {w:>2} {100 * row['suppression_rate']:6.2f} {row['repositioned']:6d} "
            f"{row['total_distance']:6d} {row['mean_distance']:6.2f} {row['information_loss']:9.0f} "
            f"{off.lower_bound:9.0f}{'*' if off.optimal else ' '}{ratio:>6} {row['query_mean_relative_error']:6.3f} "
            f"{row['records_per_second']:8.0f} {row['records_per_cpu_second']:9.0f} {row['ilp_steps']:5d} {row['combinatorial_steps']:5d}",
            row, args.jsonl,
        )
    print("LB*: offline ILP solved to optimality; otherwise HiGHS's proven dual bound after the time limit.")
    print("ilp: steps solved by the step ILP; comb: steps proven optimal without it (see docs/stream.md).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
