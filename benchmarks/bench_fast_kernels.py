"""The fast step's kernel against another version of it, side by side in one process (issue 14).

Both kernels are loaded in one process (this tree's ``tempanon.stream._fastkernel`` and a copy of
another version's ``_fastkernel.py``, e.g. main's before a change), and every cell of daily (or weekly)
use-of-force is run ``--reps`` times per kernel in turn, so that both see the same load; per kernel
the IL, an md5 of the placements (``placed`` per record: equal when the two kernels place every record
the same) and the best ``step_cpu_seconds`` of the runs, as step records per CPU-second.

    git show main:src/tempanon/stream/_fastkernel.py > /tmp/kernel_main.py
    python benchmarks/bench_fast_kernels.py --base /tmp/kernel_main.py --w 4,8 --reps 3 --jsonl /tmp/k.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _common import emit
from bench_stream import DATA, DATASETS

from tempanon.stream import fast
from tempanon.stream.api import anonymize_stream


def _load(path: Path):
    # registered in sys.modules before it runs: numba's on-disk cache records the module of each
    # compiled function and imports it by name when a later run loads the cache (without this, the
    # second run with the same --base file failed: "No module named '<dynamic>'")
    spec = importlib.util.spec_from_file_location("_fastkernel_other", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="the other version's _fastkernel.py")
    ap.add_argument("--unit", default="day")
    ap.add_argument("--l", default="2,3,5,10")
    ap.add_argument("--w", default="1,2,4,8")
    ap.add_argument("--cost", default="linear,quadratic")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--jsonl", type=Path, default=None)
    args = ap.parse_args(argv)
    name, time_col, sens, qi = DATASETS["uof"]
    df = pd.read_csv(DATA / name, dtype=str, keep_default_na=False, na_values=[""])
    c0 = time.process_time()
    kernels = {"base": _load(args.base), "this": fast.kernel()}

    def run(kname, l, w, cost):
        fast._kernel = kernels[kname]
        r = anonymize_stream(df, time=time_col, sensitive=sens, qi=qi, l=l, w=w, snapshot=args.unit, step="fast", cost=cost)
        placed = np.ascontiguousarray(r.publisher.record_table()["placed"].to_numpy(), dtype=np.int64)
        s = r.summary
        return s["information_loss"], s["step_cpu_seconds"], s["records"], hashlib.md5(placed.tobytes()).hexdigest()[:10]

    for kname in kernels:  # compile / load from the cache, and warm up
        run(kname, 2, 1, "linear")
    print(f"kernels loaded and warmed up: {time.process_time() - c0:.1f} CPU-s; load {os.getloadavg()[0]:.1f}", flush=True)
    try:
        for cost in args.cost.split(","):
            for w in map(int, args.w.split(",")):
                for l in map(int, args.l.split(",")):
                    res = {k: [] for k in kernels}
                    for _ in range(args.reps):
                        for kname in kernels:
                            res[kname].append(run(kname, l, w, cost))
                    row = {"unit": args.unit, "cost": cost, "l": l, "w": w, "loadavg": os.getloadavg()[0]}
                    line = f"{cost:9} l={l:2} w={w}"
                    for kname, rs in res.items():
                        best = min(x[1] for x in rs)
                        row[kname] = {"il": sorted({x[0] for x in rs}), "placements_md5": sorted({x[3] for x in rs}),
                                      "step_cpu_seconds": [x[1] for x in rs], "step_records_per_cpu_second": rs[0][2] / best}
                        line += f" | {kname}: IL {row[kname]['il']} md5 {row[kname]['placements_md5']} {rs[0][2] / best:9,.0f} rec/CPU-s"
                    row["same_placements"] = row["base"]["placements_md5"] == row["this"]["placements_md5"]
                    emit(line, row, args.jsonl)
    finally:
        fast._kernel = None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
