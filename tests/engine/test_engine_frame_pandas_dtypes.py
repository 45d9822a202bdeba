"""A DataFrame holding a pandas dtype DuckDB does not take (``period``, ``interval``, sparse) anonymizes on
DuckDB as on numpy. DuckDB's ``register`` failed on the whole frame ("Not implemented Error: Data type
'period[M]' not recognized", a traceback), even when that column had no role and would be left out,
where numpy released (found in the uatd acceptance pass, 2026-11-28). Such a column is registered as
the text the numpy release writes of each cell (a sparse one dense)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tempanon.hierarchy import Hierarchy
from tempanon.kanon.api import kanonymize

HIER = {"g": Hierarchy.from_rows("g", [["a", "*"], ["b", "*"]])}


def _frame() -> pd.DataFrame:
    n = 12
    return pd.DataFrame({
        "g": ["a", "b"] * (n // 2),
        "p": pd.period_range("2020-01", periods=n, freq="M"),
        "iv": pd.interval_range(0, n),
        "sp": pd.arrays.SparseArray(np.arange(n) % 3),
        "other": pd.period_range("2021-01-01", periods=n, freq="D"),  # (no role: left out)
    })  # fmt: skip


def test_period_interval_and_sparse_columns_release_as_on_numpy(tmp_path):
    df = _frame()
    lines = {}
    for engine in ("numpy", "duckdb"):
        out = tmp_path / f"{engine}.csv"
        res = kanonymize(df, ["g"], HIER, 2, engine=engine, keep=["p", "iv", "sp"], allow_identifier=["p", "iv", "sp"],
                         out=str(out))  # fmt: skip
        assert res.verification is not None
        text = out.read_text().splitlines()
        lines[engine] = (text[0], sorted(text[1:]))
    assert lines["duckdb"] == lines["numpy"]
    assert '"(0, 1]"' in "\n".join(lines["numpy"][1]) and "2020-01" in "\n".join(lines["numpy"][1])
    # in memory too: the same cells' text
    tables = {e: kanonymize(df, ["g"], HIER, 2, engine=e, keep=["p", "iv"], allow_identifier=["p", "iv"]).table
              for e in ("numpy", "duckdb")}  # fmt: skip
    as_text = {e: sorted(map(tuple, t.astype(str).to_numpy().tolist())) for e, t in tables.items()}
    assert as_text["duckdb"] == as_text["numpy"]
