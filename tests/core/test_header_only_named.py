"""A header-only input table is refused naming the file on every command and engine (stream, init and
hierarchy named it; kanon and timestamped said only 'the input table has no rows')."""
import pytest
from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_kanon_header_only_names_the_file(tmp_path, engine, fmt):
    import pandas as pd

    hdir = tmp_path / "h"
    hdir.mkdir()
    (hdir / "sex.csv").write_text("F;*\nM;*\n")
    data = tmp_path / f"empty.{fmt}"
    frame = pd.DataFrame({"sex": pd.Series([], dtype=str), "dx": pd.Series([], dtype=str)})
    frame.to_csv(data, index=False) if fmt == "csv" else frame.to_parquet(data, index=False)
    out = tmp_path / "o.csv"
    r = runner.invoke(app, ["kanon", str(data), "--qi", "sex", "--hierarchies", str(hdir), "--k", "2", "--out", str(out),
                            "--engine", engine])
    assert r.exit_code == 2, r.output
    assert "the input table has no rows" in r.output and str(data) in r.output.replace("\n", ""), r.output
    assert not out.exists()


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_timestamped_header_only_names_the_file(tmp_path, engine):
    data = tmp_path / "empty.csv"
    data.write_text("pid,when,zip\n")
    out = tmp_path / "o.csv"
    r = runner.invoke(app, ["timestamped", str(data), "--time", "when", "--uid", "pid", "--k", "2", "--out", str(out),
                            "--engine", engine])
    assert r.exit_code == 2, r.output
    assert "the input table has no rows" in r.output and str(data) in r.output.replace("\n", ""), r.output
    assert not out.exists()
