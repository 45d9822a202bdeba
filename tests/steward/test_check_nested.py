"""``tempanon check`` on a Parquet file with a nested column (list, struct, map) that has no role: the
check runs, and says the column is nested and can take no role, is never released and is not screened
for identifiers (as ``init`` gives it no role and does not profile it), on every engine alike. Before,
its engine-specific text was screened like any column (``note: column 'tags' looks like a direct
identifier: near-unique per row``). A nested column given a role is still refused (exit 2)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from engine.test_engine_nested_types import NESTED, _table_file
from engine.test_engine_temporal import _cli

def _json(output: str) -> dict:
    """The ``--json`` line (the first Spark start in a process may print a library's warning after it)."""
    return json.loads(next(line for line in reversed(output.splitlines()) if line.startswith("{")))


ENGINES = ["numpy", "duckdb", pytest.param("spark", marks=pytest.mark.spark)]


@pytest.mark.parametrize("engine", ENGINES)
def test_check_lists_nested_columns_and_does_not_screen_them(tmp_path, engine):
    path = _table_file(tmp_path)
    r = _cli(["check", str(path), "--qi", "sex", "--uid", "pid", "--sensitive", "dx", "--engine", engine, "--json"])
    assert r.exit_code == 0, r.output
    got = _json(r.output)
    assert got["rows"] == 40 and got["respondent_k"] == 5
    assert got["nested_columns"] == [{"column": c, "type": t} for c, t in NESTED.items()]
    flagged = {f["column"] for f in got["identifier_findings"]}
    assert not flagged & set(NESTED), flagged
    assert "t" in flagged  # the scalar columns with no role are screened as before
    # the text output: one note per nested column, saying what it is and what follows
    r = _cli(["check", str(path), "--qi", "sex", "--uid", "pid", "--engine", engine])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    for c, t in NESTED.items():
        assert (f"note: column {c!r} has a nested Parquet type ({t}): it can take no role and is never released") in text, text
        assert f"column {c!r} looks like a direct identifier" not in text, text
    assert "column 't' looks like a direct identifier" in text


@pytest.mark.parametrize("engine", ENGINES)
def test_check_json_is_the_same_on_every_engine(tmp_path, engine):
    path = _table_file(tmp_path)
    got = {}
    for eng in dict.fromkeys(["numpy", engine]):
        r = _cli(["check", str(path), "--qi", "sex", "--uid", "pid", "--sensitive", "dx", "--k", "2", "--engine", eng, "--json"])
        assert r.exit_code == 0, r.output
        got[eng] = _json(r.output)
    assert got[engine] == got["numpy"]


def test_init_and_check_agree(tmp_path):
    """``init`` proposes no role for a nested column; ``check`` lists the same columns as nested."""
    path = _table_file(tmp_path)
    job = tmp_path / "job.toml"
    r = _cli(["init", str(path), "--out", str(job), "-q"])
    assert r.exit_code == 0, r.output
    import tomllib

    cols = tomllib.loads(job.read_text())["columns"]
    named = {c for v in cols.values() for c in (v if isinstance(v, list) else [v])}
    assert not named & set(NESTED), cols
    r = _cli(["check", str(path), "--qi", "sex", "--json"])
    assert {n["column"] for n in _json(r.output)["nested_columns"]} == set(NESTED)


def test_check_table_api(tmp_path):
    from tempanon.steward.check import check_table

    path = _table_file(tmp_path)
    res = check_table(path, ["sex"], uid="pid", engine="numpy")
    assert res.nested_columns == NESTED
    assert not {f.column for f in res.identifier_findings} & set(NESTED)
    # a DataFrame with list and dict cells (what a nested column reads as) without a role: the same
    df = pd.DataFrame({"sex": ["M", "F"] * 20, "tags": [[i, i + 1] for i in range(40)], "p": ["a", "b", "c", "d"] * 10})
    res = check_table(df, ["sex"])
    assert list(res.nested_columns) == ["tags"] and res.nested_columns["tags"].startswith("list cells")
    assert "tags" not in {f.column for f in res.identifier_findings}
    # CSV input: nothing nested, the key empty
    csv = tmp_path / "in.csv"
    df.drop(columns=["tags"]).to_csv(csv, index=False)
    assert check_table(csv, ["sex"], engine="numpy").as_dict()["nested_columns"] == []
