"""Acceptance audit: ``kanon``, ``check``, ``init`` and ``hierarchy`` take ``--delimiter`` (and job
files ``[input] delimiter`` for every model), but ``timestamped``, ``kp`` and ``stream`` did not: a
file the detection cannot read (here ':'-separated) could not be given its delimiter. They take it
now (``timestamped`` on numpy and DuckDB)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_timestamped_delimiter(tmp_path, engine):
    rows = [f"p{i % 12}:{'MF'[i % 2]}:2023-0{1 + i % 3}-0{1 + i % 7}" for i in range(60)]
    src = tmp_path / "v.txt.csv"
    src.write_text("pid:sex:visit\n" + "\n".join(rows) + "\n")
    out = tmp_path / "o.csv"
    r = runner.invoke(app, ["timestamped", str(src), "--uid", "pid", "--time", "visit", "--qi", "sex", "--k", "2",
                            "--granularities", "month,year", "--delimiter", ":", "--engine", engine, "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text().splitlines()[0] in ("sex,visit", "visit,sex")


def test_kp_delimiter(tmp_path):
    rows = [f"s{i}:" + ":".join(str((i * 7 + j * 3) % 11) for j in range(4)) for i in range(20)]
    src = tmp_path / "ts.csv"
    src.write_text("id:A0:A1:A2:A3\n" + "\n".join(rows) + "\n")
    r = runner.invoke(app, ["kp", str(src), "--id", "id", "--qi", "A0:A3", "--k", "4", "--p", "2", "--delimiter", ":",
                            "--out", str(tmp_path / "o.csv")])
    assert r.exit_code == 0, r.output


def test_stream_delimiter(tmp_path):
    rows = [f"2023-01-0{1 + i % 5} 10:00#{'abc'[i % 3]}#{'xyz'[i % 3]}" for i in range(30)]
    src = tmp_path / "s.csv"
    src.write_text("t#race#problem\n" + "\n".join(rows) + "\n")
    r = runner.invoke(app, ["stream", str(src), "--time", "t", "--sensitive", "problem", "--qi", "race", "--l", "2",
                            "--window", "1", "--delimiter", "#", "--out", str(tmp_path / "rel")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["stream", "-", "--time", "t", "--sensitive", "problem", "--qi", "race", "--l", "2",
                            "--window", "1", "--delimiter", "#", "--out", str(tmp_path / "rel2")], input="")
    assert r.exit_code == 2 and "--delimiter applies to a CSV file input" in r.output
