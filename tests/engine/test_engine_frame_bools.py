"""A DataFrame's boolean column released unchanged to a Parquet file is ``bool`` on every engine.

``kanonymize(df, engine=..., out="x.parquet")`` with a kept boolean column: the numpy path (pandas'
``to_parquet`` of the release) and Spark wrote ``bool``, DuckDB wrote text ``True`` / ``False`` (its
input view turns a boolean into that text, so hierarchies and checks see the numpy path's text). Now
DuckDB casts the view's text back to ``BOOLEAN`` for such a column (``DuckDBSource._bool_projection``);
the audit's row-by-row check reads the written ``bool`` as ``True`` / ``False``. A pandas nullable
``boolean`` with a missing value, an ``object`` column of Python bools with ``None`` and a
``bool[pyarrow]`` column are ``bool`` too, the missing cell null (never dropped, never ``False``): on
numpy and DuckDB before as after (DuckDB as text), on Spark they were text. A Parquet *input*'s
boolean stays text on every engine (docs/engines.md), as a boolean quasi-identifier's labels do.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempanon.errors import VerificationError
from tempanon.hierarchy import Hierarchy
from tempanon.kanon.api import kanonymize

BOOLS = ["b", "nb", "ob", "pab"]


def _frame() -> pd.DataFrame:
    flags = [True, None, False, True, False, True, None, False, True, False]
    return pd.DataFrame({
        "sex": list("FMFMFMFMFM"),
        "b": [i % 3 == 0 for i in range(10)],
        "nb": pd.array(flags, dtype="boolean"),
        "ob": pd.Series(flags, dtype=object),
        "pab": pd.Series(flags, dtype="bool[pyarrow]"),
        "n": range(10),
    })  # fmt: skip


HIER = {"sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}


def _release(df, eng, tmp_path, name="r.parquet"):
    out = tmp_path / eng / name
    out.parent.mkdir(exist_ok=True)
    (tmp_path / "steward").mkdir(exist_ok=True)  # (the audit is kept out of the release's folder)
    kw = {"audit": str(tmp_path / "steward" / f"{eng}-{name}.audit.csv")} if eng != "numpy" else {}
    kanonymize(df, ["sex"], HIER, 2, keep=[c for c in df.columns if c != "sex"], engine=eng, out=str(out), screen=False, **kw)
    parts = sorted(out.glob("part-*.parquet")) if out.is_dir() else [out]
    return pa.concat_tables([pq.read_table(p) for p in parts])


def _rows(tab):
    return sorted(map(repr, zip(*(tab.column(c).to_pylist() for c in tab.column_names))))


def test_dataframe_booleans_are_bool_in_a_parquet_release(tmp_path, engine):
    df = _frame()
    want, got = _release(df, "numpy", tmp_path), _release(df, engine, tmp_path)
    for c in BOOLS:
        assert want.schema.field(c).type == pa.bool_(), c
        assert got.schema.field(c).type == pa.bool_(), (engine, c, got.schema.field(c).type)
    assert _rows(got) == _rows(want)
    for tab in (want, got):  # the missing cells stay missing: null, not dropped, not False
        for c in ("nb", "ob", "pab"):
            values = tab.column(c).to_pylist()
            assert values.count(None) == 2 and values.count(False) == 4 and values.count(True) == 4, (c, values)
    assert got.schema.field("sex").type == pa.string()  # (a quasi-identifier's labels: text)


def test_a_csv_release_writes_the_booleans_as_numpy_does(tmp_path, engine):
    """The CSV release (unchanged by the fix): ``True`` / ``False``, a missing value an empty field."""
    df = _frame()
    texts = {}
    for eng in ("numpy", engine):
        out = tmp_path / eng / "r.csv"
        out.parent.mkdir()
        kanonymize(df, ["sex"], HIER, 2, keep=BOOLS, engine=eng, out=str(out), screen=False)
        parts = sorted(out.glob("part-*.csv")) if out.is_dir() else [out]
        texts[eng] = sorted(pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False) for p in parts]).itertuples(index=False))
    assert texts[engine] == texts["numpy"]
    assert {r[2] for r in texts["numpy"]} == {"True", "False", ""}


def test_a_negated_boolean_is_refused_on_duckdb(tmp_path, monkeypatch):
    """The written ``bool`` is checked (the audit's row-by-row check reads it as ``True`` / ``False``): a
    cast that negates it is refused, nothing written."""
    from tempanon.lattice.source_duckdb import DuckDBSource

    real = DuckDBSource._bool_projection

    def negated(self, query):
        return real(self, query).replace("THEN true", "THEN @").replace("THEN false", "THEN true").replace("THEN @", "THEN false")

    monkeypatch.setattr(DuckDBSource, "_bool_projection", negated)
    with pytest.raises(VerificationError):
        _release(_frame()[["sex", "nb"]], "duckdb", tmp_path)
    assert not list((tmp_path / "duckdb").iterdir()) and not list((tmp_path / "steward").iterdir())
