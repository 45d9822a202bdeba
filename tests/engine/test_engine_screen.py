"""Identifier screening on an engine (the distinct values and present counts the engine returns):
a missing value is not counted as a distinct present value, so the message never says more
distinct values than rows, and the near-unique rule counts as on the numpy path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tempanon.errors import InputError
from tempanon.kanon.api import _screen
from tempanon.lattice.source_duckdb import DuckDBSource


def test_near_unique_with_missing_values_counts_present_values(tmp_path):
    rng = np.random.default_rng(3)
    w = rng.random(200) * 100
    w[rng.random(200) < 0.1] = np.nan
    df = pd.DataFrame({"w": w, "g": rng.choice(["a", "b"], 200)})
    path = tmp_path / "t.parquet"
    df.to_parquet(path)
    present = int(df["w"].notna().sum())
    src = DuckDBSource(path)
    try:
        with pytest.raises(InputError) as err:
            _screen(src, ["w"], [], None)
        assert f"({present} distinct values in {present} rows)" in str(err.value)
        assert _screen(src, ["g"], [], None) == []
    finally:
        src.close()
