"""A DataFrame given to the Python API with list, dict, set or array cells in a column that has a role
is refused (InputError, the CLI's exit 2), as a nested Parquet column is (tests/engine/
test_engine_nested_types.py): tempanon compares and releases scalar values only. Before (main at
506e145): ``kanonymize`` and ``anonymize_timestamped`` on numpy failed with "TypeError: unhashable
type: 'list'" (a traceback), while DuckDB took the column as a typed list and released it; the stream
published list cells as quasi-identifiers. A column with no role is not looked at."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tempanon.data.io import frame_nested_columns
from tempanon.errors import InputError
from tempanon.hierarchy import Hierarchy
from tempanon.kanon.api import kanonymize
from tempanon.steward.check import check_table
from tempanon.stream.api import anonymize_stream
from tempanon.temporal.api import anonymize_timestamped
from tempanon.timeseries.api import kp_anonymize


def _frame(n=40):
    return pd.DataFrame({
        "t": [f"2021-01-{1 + i % 9:02d}" for i in range(n)],
        "sex": ["M", "F"] * (n // 2),
        "tags": [[1, 2], [3]] * (n // 2),
        "prefs": [None if i % 3 else {"a": i} for i in range(n)],
        "p": ["a", "b", "c", "d"] * (n // 4),
    })  # fmt: skip


def _sex():
    return {"sex": Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]])}


def test_frame_nested_columns_finds_cells_of_every_kind():
    df = pd.DataFrame({"a": ["x", None, {"k": 1}], "b": [1, 2, 3], "c": ["x", 2, "y"], "d": [np.array([1]), None, None],
                       "e": [(1,), "x", "y"], "f": ["x", "y", {1}], "g": ["x", "y", "z"]})  # fmt: skip
    assert frame_nested_columns(df) == {"a": "dict cells (line 4: {'k': 1})", "d": "ndarray cells (line 2: [1])",
                                        "e": "tuple cells (line 2: (1,))", "f": "set cells (line 4: {1})"}  # fmt: skip


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
@pytest.mark.parametrize("role", ["keep", "qi", "sensitive"])
def test_kanonymize_refuses_a_nested_column_with_a_role(engine, role):
    df = _frame()
    kw = {"keep": ["tags"]} if role == "keep" else {"sensitive": "tags", "l": 1} if role == "sensitive" else {}
    qi = ["sex", "tags"] if role == "qi" else ["sex"]
    with pytest.raises(InputError, match=r"the DataFrame: column\(s\) with a nested value: 'tags' \(list cells \(line 2: \[1, 2\]\)\) "
                                         rf"given the role {role}"):  # fmt: skip
        kanonymize(df, qi=qi, hierarchies=_sex(), k=2, engine=engine, **kw)


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_kanonymize_leaves_a_nested_column_without_a_role_out(engine):
    r = kanonymize(_frame(), qi=["sex"], hierarchies=_sex(), k=2, engine=engine)
    assert "tags" not in r.table.columns and "prefs" not in r.table.columns


def test_the_other_apis_refuse_it_too():
    df = _frame()
    with pytest.raises(InputError, match=r"'tags' \(list cells .*\) given the role keep"):
        anonymize_timestamped(df, time="t", k=2, keep=["tags"])
    with pytest.raises(InputError, match=r"'prefs' \(dict cells \(line 2: \{'a': 0\}\)\) given the role qi"):
        anonymize_stream(df, time="t", sensitive="p", l=2, w=1, qi=["sex", "prefs"])
    with pytest.raises(InputError, match=r"'tags' \(list cells .*\) given the role qi"):
        check_table(df, qi=["sex", "tags"])
    ts = pd.DataFrame({"id": [f"s{i}" for i in range(6)], "a": [1.0, 2, 3, 4, 5, 6], "b": [2.0, 1, 2, 1, 2, 1],
                       "d": [["x"]] * 6})  # fmt: skip
    with pytest.raises(InputError, match=r"'d' \(list cells .*\) given the role sensitive"):
        kp_anonymize(ts, id_col="id", qi=["a", "b"], k=2, P=2, sensitive=["d"])
    # without a role: released without them
    assert "tags" not in anonymize_timestamped(df, time="t", k=2).released.columns
