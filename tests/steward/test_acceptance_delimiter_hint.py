"""Acceptance audit: a ';'-separated file read with ``--delimiter ,`` (or a job's ``delimiter``)
failed with ``unknown quasi-identifier 'age', 'sex'; the input has columns: sex;age;race`` and no
word on why. The message now says the file looks ';'-separated (numpy and DuckDB readers, job)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.data.roles import delimiter_hint

runner = CliRunner()


def test_delimiter_hint():
    assert delimiter_hint(["sex;age;race"]).startswith(" (a single column whose name holds ';'")
    assert delimiter_hint(["sex\tage"]) and "'tab'" in delimiter_hint(["sex\tage"])
    assert delimiter_hint(["sex", "age"]) == "" and delimiter_hint(["sexage"]) == ""


@pytest.fixture
def semi(tmp_path):
    rows = [f"{'MF'[i % 2]};{20 + i % 3};p{i % 7}" for i in range(30)]
    p = tmp_path / "s.csv"
    p.write_text("sex;age;pid\n" + "\n".join(rows) + "\n")
    return p


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_check_wrong_delimiter_hint(semi, engine):
    r = runner.invoke(app, ["check", str(semi), "--qi", "age,sex", "--delimiter", ",", "--engine", engine])
    assert r.exit_code == 2
    assert "the file looks ';'-separated" in r.output


def test_job_wrong_delimiter_hint(semi, tmp_path):
    (tmp_path / "j.toml").write_text(f"""
[input]
path = "{semi.name}"
delimiter = ","
[columns]
time = "visit"
uid = "pid"
[model]
name = "timestamped"
k = 2
[output]
table = "o.csv"
""")
    r = runner.invoke(app, ["run", str(tmp_path / "j.toml")])
    assert r.exit_code == 2
    assert "the file looks ';'-separated" in r.output and not (tmp_path / "o.csv").exists()
