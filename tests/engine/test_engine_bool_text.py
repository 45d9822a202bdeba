"""A boolean column (Parquet, or a pandas bool column) has the same text on every engine: True / False,
as the numpy path (Python's str, pandas' CSV writer) has it. DuckDB and Spark cast it to 'true' /
'false': a hierarchy keyed True/False matched on numpy and was refused on the engines ('2 value(s)
missing from the hierarchy: 'true', 'false''), and a kept boolean was released as true/false."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app

from .conftest import BACKENDS

runner = CliRunner()


@pytest.fixture
def table(tmp_path):
    df = pd.DataFrame({
        "pid": [1, 1, 2, 3, 4, 5, 6, 7],
        "age": ["30", "30", "30", "30", "40", "40", "40", "40"],
        "flag": [True, True, False, False, True, True, None, None],
        "ok": [True, False, True, False, True, True, True, False],
        "t": pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-03", "2020-01-04"] * 2),
    })
    df["flag"] = df["flag"].astype("boolean")  # with missing values
    p = tmp_path / "b.parquet"
    df.to_parquet(p)
    h = tmp_path / "h"
    h.mkdir()
    (h / "age.csv").write_text("30;*\n40;*\n")
    (h / "flag.csv").write_text("True;*\nFalse;*\n")
    return p, h


def _rows(path):
    files = sorted(path.glob("part-*.csv")) if path.is_dir() else [path]
    return sorted(map(tuple, pd.concat([pd.read_csv(f, dtype=str, keep_default_na=False) for f in files]).to_numpy().tolist()))


@pytest.mark.parametrize("engine", BACKENDS)
def test_boolean_text_is_the_same_on_every_engine(table, tmp_path, engine):
    p, h = table
    (tmp_path / "rel").mkdir()
    (tmp_path / "stw").mkdir()
    outs = {}
    for e in ("numpy", engine):
        out = tmp_path / "rel" / f"k-{e}.csv"
        r = runner.invoke(app, ["kanon", str(p), "--qi", "age,flag", "--hierarchies", str(h), "--k", "2", "--keep", "ok",
                                "--out", str(out), "--audit", str(tmp_path / "stw" / f"k-{e}.audit"), "--engine", e, "-q"])  # fmt: skip
        assert r.exit_code == 0, (e, r.output)
        outs[e] = _rows(out)
    assert outs[engine] == outs["numpy"]
    assert {row[2] for row in outs["numpy"]} == {"True", "False"}  # the kept boolean, as Python writes it
    t_outs = {}
    for e in ("numpy", engine):
        out = tmp_path / "rel" / f"t-{e}.csv"
        r = runner.invoke(app, ["timestamped", str(p), "--uid", "pid", "--time", "t", "--qi", "flag", "--keep", "ok", "--k", "2",
                                "--granularities", "month,year", "--out", str(out), "--engine", e, "-q"])  # fmt: skip
        assert r.exit_code == 0, (e, r.output)
        t_outs[e] = _rows(out)
    assert t_outs[engine] == t_outs["numpy"]
    assert {row[0] for row in t_outs["numpy"]} == {"True", "False", ""}  # the quasi-identifier; missing stays missing
    assert {row[1] for row in t_outs["numpy"]} == {"True", "False"}  # kept
