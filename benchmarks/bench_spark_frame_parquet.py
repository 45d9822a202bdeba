"""A pandas DataFrame's Parquet release on Spark: ``kanonymize(df, engine="spark", out="x.parquet")`` on
``--rows`` rows (``sex`` generalized; int64, float64, bool, naive timestamp, ``Int64`` with missing values
and a string kept; with ``--more``, ``uint64`` above int64's range and ``ns`` timestamps too). Prints the
CPU seconds of the call (this process and the Spark JVM, from ``/proc``), its wall time, the CPU seconds of
the check of the typed columns on the written file (``tempanon.data.io.check_typed_texts``, run without an
audit on the text columns written beside them, in the part files' rewrite: Python's CPU only) and the written
part's column types; ``--repeat N`` runs it N times in the same session, alternating with ``--off`` runs (no
text columns written, no check: ``SparkSource._check_texts`` off) when ``--ab`` is given.
docs/engines.md, "A DataFrame's Parquet release on Spark". Usage: ``PYTHONPATH=src python
benchmarks/bench_spark_frame_parquet.py [--rows 1000000] [--more] [--repeat 3 --ab]``."""

from __future__ import annotations

import argparse
import glob
import os
import resource
import shutil
import tempfile
import time

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from bench_engine import descendants_cpu_and_peak

import tempanon.data.io as tio
from tempanon.hierarchy import Hierarchy
from tempanon.kanon.api import kanonymize
from tempanon.lattice.source_spark import SparkSource, local_session


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--more", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--ab", action="store_true")
    args = ap.parse_args()
    n = args.rows
    rng = np.random.default_rng(0)
    i = np.arange(n)
    df = pd.DataFrame({
        "sex": np.where(i % 2 == 0, "F", "M"),
        "i64": rng.integers(0, 10**12, n),
        "f64": rng.random(n) * 1000,
        "b": i % 3 == 0,
        "ts": pd.Timestamp("2021-01-02") + pd.to_timedelta(rng.integers(0, 10**13, n), unit="us"),
        "nint": pd.array(np.where(i % 10 == 0, None, i), dtype="Int64"),
        "s": pd.Series([f"s{x % 500}" for x in i], dtype="str"),
    })  # fmt: skip
    if args.more:
        df["u64"] = np.where(i % 2 == 0, np.uint64(2**64 - 1) - i.astype(np.uint64), i.astype(np.uint64))
        df["ns"] = pd.Timestamp("2021-01-02") + pd.to_timedelta(rng.integers(0, 10**16, n), unit="ns")
    hier = {"sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}
    local_session()  # (started before the clock)

    def cpu() -> tuple[float, float]:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime, descendants_cpu_and_peak()[0]

    real_check, spent = tio.check_typed_texts, []

    def timed_check(*a, **kw):
        c0 = cpu()
        try:
            return real_check(*a, **kw)
        finally:
            c1 = cpu()
            spent.append(c1[0] - c0[0] + c1[1] - c0[1])

    tio.check_typed_texts = timed_check

    for run in range(args.repeat * (2 if args.ab else 1)):
        off = args.ab and run % 2 == 1
        SparkSource._check_texts = not off
        spent.clear()
        out = os.path.join(tempfile.mkdtemp(), "r.parquet")
        (p0, j0), w0 = cpu(), time.time()
        kanonymize(df, ["sex"], hier, 2, keep=[c for c in df.columns if c != "sex"], engine="spark", out=out, screen=False)
        (p1, j1), w1 = cpu(), time.time()
        types = [str(f.type) for f in pq.read_schema(sorted(glob.glob(out + "/part-*"))[0])]
        print(f"{n} rows, check {'off' if off else 'on'}: python {p1 - p0:.2f} s, jvm {j1 - j0:.2f} s, total {p1 - p0 + j1 - j0:.2f} CPU s, "
              f"wall {w1 - w0:.1f} s; the check {sum(spent):.2f} CPU s; types {types}; load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
        shutil.rmtree(os.path.dirname(out), ignore_errors=True)


if __name__ == "__main__":
    main()
