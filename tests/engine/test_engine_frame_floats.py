"""A pandas DataFrame with float cells releases the same rows on every engine as on numpy: a float64
column, or an ``object`` column of Python floats, is looked up by a hierarchy by its hierarchy text
(``as_text``: ``1.0`` -> ``"1"``) and, kept or sensitive, released as the numpy path writes it
(``1.0``, ``2.5``, ``1e+20``). Before, DuckDB registered every float64 column as its hierarchy text, so
a kept ``1.0`` was written ``1``, and took an object column of floats as ``DOUBLE``, whose text ``1.0``
the hierarchy did not hold (HierarchyError "'1.0' (line 2), '2.0' (line 3)" where numpy found ``1``);
Spark handed every column over as its hierarchy text (kept ``1.0`` written ``1``). Found by hand
(session 25: engine parity of DataFrame inputs)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tempanon.errors import HierarchyError, InputError
from tempanon.hierarchy import Hierarchy
from tempanon.kanon import kanonymize

from .test_engine_bool_text import _rows


def _frame(n: int = 24) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    score = rng.permutation(np.resize([1.0, 2.5, 3.0, 1e20, 1e-05, 0.1 + 0.2], n))
    score[::7] = np.nan  # missing: an empty cell
    obj = pd.Series([float(x) for x in rng.choice([1.0, 2.0], n)], dtype=object)
    obj[5] = None
    return pd.DataFrame({
        "sex": rng.choice(["M", "F"], n),
        "score": score,
        "obj": obj,
        "dx": rng.choice(["a", "b"], n),
    })


def _hierarchies():
    return {
        "sex": Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]]),
        "obj": Hierarchy.from_rows("obj", [["1", "*"], ["2", "*"], ["", "*"]]),
        "score": Hierarchy.from_rows("score", [["1", "*"], ["2.5", "*"], ["3", "*"], ["100000000000000000000", "*"],
                                               ["1e-05", "*"], ["0.30000000000000004", "*"], ["", "*"]]),  # fmt: skip
    }


def _released(tmp_path, df, engine, qi, **kw):
    """The released rows (a sorted multiset: rows are shuffled within classes) of ``kanonymize`` on
    ``engine``, each column's released texts, and the result."""
    out = tmp_path / f"rel-{engine}-{'-'.join(qi)}.csv"
    h = _hierarchies()
    res = kanonymize(df, qi, {q: h[q] for q in qi}, 2, engine=engine, out=str(out), **kw)
    files = sorted(out.glob("part-*.csv")) if out.is_dir() else [out]
    frame = pd.concat([pd.read_csv(f, dtype=str, keep_default_na=False) for f in files])
    return _rows(out), {c: set(frame[c]) for c in frame.columns}, res


def test_kept_floats_are_released_as_numpy_writes_them(tmp_path, engine):
    df = _frame()
    want, texts, _ = _released(tmp_path, df, "numpy", ["sex"], keep=["score", "obj"])
    got, _, _ = _released(tmp_path, df, engine, ["sex"], keep=["score", "obj"])
    assert got == want
    assert texts["score"] == {"1.0", "2.5", "3.0", "1e+20", "1e-05", "0.30000000000000004", ""}  # (pandas' text)
    assert texts["obj"] == {"1.0", "2.0", ""}


def test_float_quasi_identifiers_are_looked_up_by_their_hierarchy_text(tmp_path, engine):
    df = _frame()
    want, texts, a = _released(tmp_path, df, "numpy", ["sex", "obj", "score"], keep=["dx"])
    got, _, b = _released(tmp_path, df, engine, ["sex", "obj", "score"], keep=["dx"])
    assert got == want
    assert a.selected_node == b.selected_node
    # (at level 0 a released value is the hierarchy's text, "1", not "1.0")
    assert texts["obj"] | texts["score"] <= {"1", "2", "2.5", "3", "100000000000000000000", "1e-05", "0.30000000000000004", "", "*"}


def test_an_object_float_missing_from_the_hierarchy_is_named_by_its_hierarchy_text(engine):
    df = _frame()
    df.loc[3, "obj"] = 7.0
    h = {"obj": Hierarchy.from_rows("obj", [["1", "*"], ["2", "*"], ["", "*"]])}
    messages = {}
    for e in ("numpy", engine):
        with pytest.raises(HierarchyError) as err:
            kanonymize(df, ["obj"], h, 2, engine=e)
        messages[e] = str(err.value)
    assert messages[engine] == messages["numpy"]
    assert "'7' (line 5)" in messages["numpy"]


def test_a_float_sensitive_column_is_released_as_numpy_writes_it(tmp_path, engine):
    df = _frame(40)
    df["score"] = np.tile([1.0, 2.5, 3.0, 4.0], 10)
    want, texts, a = _released(tmp_path, df, "numpy", ["sex"], sensitive="score", l=2, keep=["dx"])
    got, _, b = _released(tmp_path, df, engine, ["sex"], sensitive="score", l=2, keep=["dx"])
    assert got == want
    assert a.selected_node == b.selected_node
    assert texts["score"] == {"1.0", "2.5", "3.0", "4.0"}


def test_a_near_unique_kept_float_is_screened_alike_and_released_alike(tmp_path, engine):
    """Identifier screening of a kept float column: the same refusal on every engine; allowed, the same rows."""
    n = 40
    df = pd.DataFrame({"sex": ["M", "F"] * (n // 2), "score": np.arange(1, n + 1, dtype=np.float64)})
    h = _hierarchies()
    messages = {}
    for e in ("numpy", engine):
        with pytest.raises(InputError) as err:
            kanonymize(df, ["sex"], {"sex": h["sex"]}, 2, keep=["score"], engine=e)
        messages[e] = str(err.value)
    assert messages[engine] == messages["numpy"]
    assert "near-unique per row (40 distinct values in 40 rows)" in messages["numpy"]
    want, texts, _ = _released(tmp_path, df, "numpy", ["sex"], keep=["score"], allow_identifier=["score"])
    got, _, _ = _released(tmp_path, df, engine, ["sex"], keep=["score"], allow_identifier=["score"])
    assert got == want
    assert "1.0" in texts["score"]


def test_distinct_values_of_mixed_cells_are_their_released_texts(engine):
    """``distinct_values`` (identifier screening on an engine) of an object column holding 1, True, 1.0, 0,
    False: five values, one per released text, on numpy as on the engines (numpy's merged 1, True and 1.0,
    which compare equal)."""
    from tempanon.lattice.source import open_source

    df = pd.DataFrame({"o": pd.Series([1, True, 1.0, None, 0, False, 1, 2.5], dtype=object)})
    texts = {}
    for e in ("numpy", engine):
        src = open_source(df, e)
        try:
            values = src.distinct_values("o")
        finally:
            src.close()
        texts[e] = sorted(str(v) for v in values if v is not None and v != "")
    assert texts["numpy"] == texts[engine] == ["0", "1", "1.0", "2.5", "False", "True"]


def test_a_kept_float_keeps_its_type_in_a_parquet_release(tmp_path):
    """DuckDB: a Parquet release holds a kept float column as doubles, as numpy's does (was text, '1')."""
    df = _frame()
    h = _hierarchies()
    frames = {}
    for e in ("numpy", "duckdb"):
        out = tmp_path / f"rel-{e}.parquet"
        kanonymize(df, ["sex"], {"sex": h["sex"]}, 2, keep=["score", "obj"], engine=e, out=str(out))
        frames[e] = pd.read_parquet(out)
    for e, f in frames.items():
        assert f["score"].dtype == np.float64 and f["obj"].dtype == np.float64, (e, f.dtypes)
    key = ["sex", "score", "obj"]
    a, b = (f[key].sort_values(key, na_position="first").reset_index(drop=True) for f in (frames["numpy"], frames["duckdb"]))
    pd.testing.assert_frame_equal(a, b)


def test_check_measures_float_columns_as_numpy(engine):
    """``check_table`` of a DataFrame with float quasi-identifiers and a float sensitive column: the numpy
    path's measures and messages (classes by the hierarchy text, 0.0 and -0.0 one value; an example
    class shows the value as released, ``score=1.0``: DuckDB showed ``1``)."""
    from tempanon.steward.check import check_table

    rng = np.random.default_rng(3)
    n = 60
    df = pd.DataFrame({
        "sex": rng.choice(["M", "F"], n),
        "score": rng.choice([1.0, 2.5, -0.0, 0.0, 1e20], n),
        "obj": pd.Series([float(x) for x in rng.choice([1.0, 2.0], n)], dtype=object),
        "dx": rng.choice([1.5, 2.0, 3.0], n),
    })
    df.loc[4, "score"] = np.nan
    got = {}
    for e in ("numpy", engine):
        d = check_table(df, ["sex", "score", "obj"], sensitive=["dx"], k=2, l=2, engine=e).as_dict()
        d.pop("engine", None)
        got[e] = d
    assert got[engine] == got["numpy"]
    assert got["numpy"]["classes"] == 16 and "score=1.0" in " ".join(got["numpy"]["failures"])
