"""A pandas DataFrame's Parquet release on Spark: ``kanonymize(df, engine="spark", out="x.parquet")`` on
``--rows`` rows (``sex`` generalized; int64, float64, bool, naive timestamp, ``Int64`` with missing values
and a string kept). Prints the CPU seconds of the call (this process and the Spark JVM, from ``/proc``),
its wall time and the written part's column types. docs/engines.md, "A DataFrame's Parquet release on
Spark". Usage: ``PYTHONPATH=src python benchmarks/bench_spark_frame_parquet.py [--rows 1000000]``."""

from __future__ import annotations

import argparse
import glob
import os
import resource
import tempfile
import time

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from bench_engine import descendants_cpu_and_peak

from tempanon.hierarchy import Hierarchy
from tempanon.kanon.api import kanonymize
from tempanon.lattice.source_spark import local_session


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    n = ap.parse_args().rows
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
    hier = {"sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}
    local_session()  # (started before the clock)

    def cpu() -> tuple[float, float]:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime, descendants_cpu_and_peak()[0]

    out = os.path.join(tempfile.mkdtemp(), "r.parquet")
    (p0, j0), w0 = cpu(), time.time()
    kanonymize(df, ["sex"], hier, 2, keep=["i64", "f64", "b", "ts", "nint", "s"], engine="spark", out=out, screen=False)
    (p1, j1), w1 = cpu(), time.time()
    types = [str(f.type) for f in pq.read_schema(sorted(glob.glob(out + "/part-*"))[0])]
    print(f"{n} rows: python {p1 - p0:.2f} s, jvm {j1 - j0:.2f} s, total {p1 - p0 + j1 - j0:.2f} CPU s, wall {w1 - w0:.1f} s; "
          f"types {types}; load {os.getloadavg()[0]:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
