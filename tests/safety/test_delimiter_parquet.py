"""--delimiter with a Parquet input is refused (exit 2) on every command and engine: it was ignored
without a word (found by helper uatc: 'tempanon check x.parquet --qi q --delimiter ";"' exited 0)."""
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


@pytest.fixture
def parquet(tmp_path):
    p = tmp_path / "x.parquet"
    pd.DataFrame({"uid": [f"p{i % 5}" for i in range(20)], "t": [f"2023-0{1 + i % 3}-1{i % 9}" for i in range(20)],
                  "q": ["a", "b"] * 10, "s": ["x", "y", "z", "w"] * 5}).to_parquet(p, index=False)
    h = tmp_path / "h"
    h.mkdir()
    (h / "q.csv").write_text("a;*\nb;*\n")
    return p


CASES = {
    "check": lambda p, e: ["check", str(p), "--qi", "q", "--k", "2", "--engine", e],
    "kanon": lambda p, e: ["kanon", str(p), "--qi", "q", "--hierarchies", str(p.parent / "h"), "--k", "2",
                           "--out", str(p.parent / "o.csv"), "--engine", e],
    "timestamped": lambda p, e: ["timestamped", str(p), "--time", "t", "--uid", "uid", "--k", "2",
                                 "--out", str(p.parent / "o.csv"), "--engine", e],
    "stream": lambda p, e: ["stream", str(p), "--time", "t", "--sensitive", "s", "--qi", "q", "--l", "2", "--window", "1",
                            "--out", str(p.parent / "o")],
}


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
@pytest.mark.parametrize("command", list(CASES))
def test_delimiter_with_parquet_is_refused(parquet, command, engine):
    if command == "stream" and engine != "numpy":
        pytest.skip("stream has no --engine")
    r = runner.invoke(app, [*CASES[command](parquet, engine), "--delimiter", ";"])
    assert r.exit_code == 2, r.output
    assert "--delimiter applies to a CSV input" in r.output and "x.parquet" in r.output, r.output
    assert not (parquet.parent / "o.csv").exists() and not (parquet.parent / "o").exists()
    ok = runner.invoke(app, CASES[command](parquet, engine))  # the same without --delimiter runs
    assert ok.exit_code in (0, 1), ok.output
