"""A DataFrame's zoned timestamp with nanoseconds, released unchanged, keeps its nanoseconds on DuckDB.

DuckDB reads pandas' ``datetime64[ns, tz]`` as ``TIMESTAMPTZ`` (microseconds): a kept or sensitive
``00:00:00.000000001+01:00`` was released as ``00:00:00+01:00`` in a CSV and a Parquet release, with
or without an audit (found by helper sparkty, 2026-11-27), where numpy released it whole and DuckDB's
own file route (a Parquet file's aware ``ns`` column, ``TIMESTAMPTZ_NS``) did too. The DataFrame's
column now reaches DuckDB as Arrow's ``timestamp[ns, tz]``, which it reads as ``TIMESTAMPTZ_NS``.
Spark: its own test (``test_engine_parquet_types``, nanoseconds as integers)."""

from __future__ import annotations

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tempanon.hierarchy import Hierarchy
from tempanon.kanon.api import kanonymize

HIER = {"sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}


def _frame() -> pd.DataFrame:
    ns = pd.to_datetime([f"2020-03-29 00:59:59.99999999{i}" for i in range(8)]).tz_localize("UTC")
    return pd.DataFrame({
        "pid": [f"p{i}" for i in range(8)],
        "sex": list("FMFMFMFM"),
        "t": pd.to_datetime([f"2020-01-0{1 + i % 4} 10:00" for i in range(8)]),
        "berlin": ns.tz_convert("Europe/Berlin"),  # (the night the clocks change: 01:59:59 +01:00 .. )
        "utc": ns,
        "naive": ns.tz_localize(None),
    })  # fmt: skip


KEEP = ["berlin", "utc", "naive"]


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
@pytest.mark.parametrize("audit", [False, True])
def test_zoned_nanoseconds_released_as_on_numpy(tmp_path, suffix, audit):
    """``kanonymize(DataFrame, keep=..., out=...)`` on DuckDB writes numpy's values (the time of the
    timestamped search is built on the driver from the DataFrame: not affected)."""
    df = _frame()
    got = {}
    for eng in ("numpy", "duckdb"):
        out = tmp_path / eng / f"r.{suffix}"
        out.parent.mkdir()
        kw = {"audit": str(tmp_path / f"{eng}-audit.csv")} if audit and eng != "numpy" else {}
        kanonymize(df, ["sex"], HIER, 2, keep=KEEP, engine=eng, out=str(out), screen=False, **kw)
        if suffix == "csv":
            got[eng] = sorted(out.read_text().splitlines())
        else:
            tab = pq.read_table(out)
            got[eng] = (str(tab.schema.field("berlin").type),
                        sorted(map(str, tab.column("berlin").cast("int64").to_pylist())),
                        sorted(map(str, tab.column("utc").cast("int64").to_pylist())))
    assert got["duckdb"] == got["numpy"]
    if suffix == "csv":
        assert any("01:59:59.999999997+01:00" in line for line in got["duckdb"])
    else:
        assert got["duckdb"][0] == "timestamp[ns, tz=Europe/Berlin]"
        assert str(1585443599999999997) in got["duckdb"][1]
