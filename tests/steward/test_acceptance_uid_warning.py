"""Acceptance audit: ``timestamped`` or ``kanon`` run without ``--uid`` on a table with a
``patient_id`` column whose values repeat counted every row as a respondent (k counts rows, not
people) and said nothing but ``left out: patient_id``. It now warns, naming the column and the
option; with ``--uid`` given, or without an id-like repeating column, no warning."""

from __future__ import annotations

import pandas as pd
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.steward.init import respondent_id_warning

runner = CliRunner()


def _visits(tmp_path):
    rows = [f"p{i % 12},{'MF'[i % 2]},2023-0{1 + i % 3}-0{1 + i % 7} 10:00,{'ab'[i % 2]}" for i in range(60)]
    (tmp_path / "v.csv").write_text("patient_id,sex,visit,dx\n" + "\n".join(rows) + "\n")
    return tmp_path / "v.csv"


def test_respondent_id_warning_rule():
    df = pd.DataFrame({"Id": [f"r{i}" for i in range(6)], "PATIENT": list("aabbcc"), "sex": list("MFMFMF")})
    w = respondent_id_warning(df, ["sex"])
    assert w is not None and "'PATIENT'" in w and "--uid PATIENT" in w  # Id is unique per row: a row id
    assert respondent_id_warning(df, ["sex", "PATIENT"]) is None
    assert respondent_id_warning(df.assign(PATIENT=[None, "a", "b", "b", "c", "c"]), ["sex"]) is None


def test_timestamped_without_uid_warns(tmp_path):
    v = _visits(tmp_path)
    args = ["timestamped", str(v), "--time", "visit", "--qi", "sex", "--k", "2", "--granularities", "month,year"]
    r = runner.invoke(app, args + ["--out", str(tmp_path / "a.csv")])
    assert r.exit_code == 0, r.output
    assert "warning: column 'patient_id' reads like a respondent id" in r.output and "--uid patient_id" in r.output
    r = runner.invoke(app, args + ["--uid", "patient_id", "--out", str(tmp_path / "b.csv")])
    assert r.exit_code == 0, r.output
    assert "reads like a respondent id" not in r.output


def test_kanon_without_uid_warns(tmp_path):
    v = _visits(tmp_path)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("M;*\nF;*\n")
    args = ["kanon", str(v), "--qi", "sex", "--hierarchies", str(tmp_path / "h"), "--k", "2"]
    r = runner.invoke(app, args + ["--out", str(tmp_path / "a.csv")])
    assert r.exit_code == 0, r.output
    assert "warning: column 'patient_id' reads like a respondent id" in r.output
    r = runner.invoke(app, args + ["--uid", "patient_id", "--out", str(tmp_path / "b.csv")])
    assert r.exit_code == 0, r.output
    assert "reads like a respondent id" not in r.output
