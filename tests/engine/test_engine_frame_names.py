"""A DataFrame's column names are exact on every engine: `` sex `` stays `` sex ``.

A CSV header's names (and a Parquet file's) lose the spaces around them on every engine, on purpose
(layout, as pandas' and DuckDB's readers take them). A DataFrame's names are the user's exact names,
which the roles refer to: the numpy path kept them, DuckDB and Spark stripped them in their input view,
so ``kanonymize(df, [" sex "], ...)`` ran on numpy and was refused on the engines ("unknown
quasi-identifier ' sex '; the input has columns: sex, ..."), and the roles ``["sex"]`` were refused on
numpy and (for the quasi-identifier) taken by the engines. Now every engine keeps them: the same
roles run, the same roles are refused with the same message, and the release's header (CSV, Parquet,
in memory) has the names as given (Spark's CSV writer stripped the spaces around every field,
names and values: it now writes them as pandas does). Two names that are one once stripped (``sex`` and `` sex``) are
refused on every engine, naming both as given (a CSV release would name two columns alike).
"""

from __future__ import annotations

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tempanon.errors import InputError
from tempanon.hierarchy import Hierarchy
from tempanon.kanon.api import kanonymize


def _frame() -> pd.DataFrame:
    # (a kept value with spaces around it too: Spark's CSV writer stripped them, as it did the header's names)
    return pd.DataFrame({" sex ": list("FMFMFMFM"), "age ": [" 30", "40 "] * 4, " n": range(8)})


def _hier(name):
    return {name: Hierarchy.from_rows(name, [["F", "*"], ["M", "*"]])}


def _parts(out):
    return sorted(out.glob("part-*")) if out.is_dir() else [out]


def _run(df, backend, tmp_path, suffix, qi=" sex ", keep=("age ", " n")):
    out = tmp_path / backend / f"r{suffix}"
    out.parent.mkdir(exist_ok=True)
    kanonymize(df, [qi], _hier(qi), 2, keep=list(keep), engine=backend, out=str(out), screen=False)
    return _parts(out)


def test_dataframe_names_are_kept_in_every_release(tmp_path, backend):
    df = _frame()
    names = [" sex ", "age ", " n"]
    for p in _run(df, backend, tmp_path, ".parquet"):
        assert pq.read_schema(p).names == names, backend
    parts = _run(df, backend, tmp_path, ".csv")
    for p in parts:
        assert p.read_text().splitlines()[0] == " sex ,age , n", backend  # (as pandas' to_csv writes it)
    rows = pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False) for p in parts])
    assert sorted(map(tuple, rows.to_numpy().tolist())) == sorted(zip(df[" sex "], df["age "], map(str, df[" n"])))  # (level 0)
    if backend != "spark":  # (in memory: the release as a DataFrame)
        res = kanonymize(df, [" sex "], _hier(" sex "), 2, keep=["age ", " n"], engine=backend, screen=False)
        assert list(res.table.columns) == names


@pytest.mark.parametrize("qi, keep, said", [
    ("sex", ("age ", " n"), "unknown quasi-identifier 'sex'; the input has columns:  sex , age ,  n"),
    (" sex ", ("age", " n"), "unknown --keep column 'age'; the input has columns:  sex , age ,  n"),
])  # fmt: skip
def test_stripped_roles_are_refused_alike(tmp_path, backend, qi, keep, said):
    with pytest.raises(InputError) as exc:
        _run(_frame(), backend, tmp_path, ".csv", qi=qi, keep=keep)
    assert said in str(exc.value), (backend, str(exc.value))
    assert not (tmp_path / backend / "r.csv").exists()


def test_names_alike_once_stripped_are_refused(tmp_path, backend):
    df = pd.DataFrame({"sex": list("FMFMFMFM"), " sex": list("FMFMFMFM"), "n": range(8)})
    with pytest.raises(InputError) as exc:
        kanonymize(df, ["sex"], _hier("sex"), 2, keep=[" sex", "n"], engine=backend, out=str(tmp_path / "r.csv"), screen=False)
    said = str(exc.value)
    assert "the DataFrame: duplicate column name(s) 'sex' (columns 1 and 2)" in said, said
    assert "'sex' and ' sex' differ only in the spaces around them" in said, said
    assert not (tmp_path / "r.csv").exists()


def test_a_spaced_column_with_cells_no_role_takes_is_refused(tmp_path, backend):
    """The refusal of a role column holding bytes (``refuse_nested_columns``) looked the DataFrame's
    columns up by their stripped names, so a kept `` x `` of bytes was released on numpy (``b'a'``)
    and failed with ``KeyError: ' x '`` on DuckDB; now it is refused on every engine, naming `` x ``."""
    df = pd.DataFrame({"sex": list("FMFMFMFM"), " x ": [b"a", b"b"] * 4})
    with pytest.raises(InputError) as exc:
        kanonymize(df, ["sex"], _hier("sex"), 2, keep=[" x "], engine=backend, out=str(tmp_path / "r.csv"), screen=False)
    assert "the DataFrame: column(s) with a value tempanon cannot give a role: ' x ' (bytes cells (line 2: b'a')) given the role keep" \
        in str(exc.value), str(exc.value)  # fmt: skip
    assert not (tmp_path / "r.csv").exists()
