"""The ``tempanon timestamped`` command: files, summary, exit codes and error messages."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from shared_data import shared_data  # tests/shared_data.py
from tempanon.cli import app

from tempanon.temporal.generator import example_exams as table3

runner = CliRunner()
SHARED = shared_data("timestamped") or Path("/nonexistent")


@pytest.fixture
def exams(tmp_path):
    p = tmp_path / "exams.csv"
    table3().to_csv(p, index=False, sep=";")
    return p


def run(*args):
    return runner.invoke(app, ["timestamped", *map(str, args)])


def test_cli_time_only_writes_release_and_summary(exams, tmp_path):
    out, summ = tmp_path / "out.csv", tmp_path / "s.json"
    r = run(exams, "--uid", "Patient", "--time", "Date", "--qi", "Address", "--allow-identifier", "Address", "--sensitive", "Exam", "--granularities", "week,quarter,business-day",
            "--k", "2", "--out", out, "--summary", summ)  # fmt: skip
    assert r.exit_code == 0, r.output
    rel = pd.read_csv(out, dtype=str)
    assert list(rel.columns) == ["Address", "Date", "Exam"] and len(rel) == 32
    assert rel["Date"].str.match(r"^\d{4}-W\d\d$").all()
    s = json.loads(summ.read_text())
    for key in ("k", "respondents", "granularity", "gen_m", "gen_s", "candidates"):
        assert key in s
    assert s["k"] == 2 and s["respondents"] == 6 and s["granularity"] == "week" and s["gen_s"] == 22
    cand = {c["granularity"]: c for c in s["candidates"]}
    assert cand["business-day"]["compatible"] is False and "not finer than" in cand["business-day"]["reason"]
    assert cand["quarter"] == {**cand["quarter"], "compatible": True, "k_anonymous": True, "gen_m": 2, "gen_s": 12}
    assert "business-day disregarded" in r.output


def test_cli_metric_and_quiet(exams, tmp_path):
    out = tmp_path / "o.csv"
    r = run(exams, "--uid", "Patient", "--time", "Date", "--qi", "Address", "--allow-identifier", "Address", "--sensitive", "Exam", "--granularities", "week,month",
            "--k", "2", "--metric", "gen_s", "--out", out, "--quiet")  # fmt: skip
    assert r.exit_code == 0 and r.output.strip() == ""
    assert pd.read_csv(out, dtype=str)["Date"].iloc[0] == "2005-01"


def test_cli_no_solution_exits_1_and_writes_nothing(exams, tmp_path):
    out, summ = tmp_path / "o.csv", tmp_path / "s.json"
    r = run(exams, "--uid", "Patient", "--time", "Date", "--qi", "Address", "--allow-identifier", "Address", "--sensitive", "Exam", "--granularities", "week",
            "--k", "3", "--out", out, "--summary", summ)  # fmt: skip
    assert r.exit_code == 1 and "no granularity" in r.output
    assert not out.exists() and not summ.exists()


def test_k_above_the_respondents_says_so(exams, tmp_path):
    """k above the number of respondents: exit 1 saying that (as kanon does), not a list of every
    granularity tried with the advice to generalize more (found by hand, session 27: k=500 on the
    111 patients of the Synthea sample advised --hierarchies); the joint search (kanon's search) said
    it already. Every route: numpy and DuckDB, time alone and jointly."""
    out = tmp_path / "o.csv"
    h = tmp_path / "h"
    h.mkdir()
    (h / "Address.csv").write_text("".join(f"{a};*\n" for a in pd.read_csv(exams, sep=";")["Address"].unique()))
    for extra in ([], ["--hierarchies", h], ["--engine", "duckdb"], ["--engine", "duckdb", "--hierarchies", h]):
        r = run(exams, "--uid", "Patient", "--time", "Date", "--qi", "Address", "--allow-identifier", "Address",
                "--granularities", "week,year", "--k", "7", "--out", out, *extra)  # fmt: skip
        flat = " ".join(r.output.split())
        assert r.exit_code == 1, r.output
        assert "k=7 is impossible for this data: the whole table has only 6 distinct respondents, fewer than k" in flat
        assert not out.exists()


@pytest.mark.parametrize(
    "change, args, message",
    [
        (None, ["--time", "When"], "unknown time column 'When'"),
        (None, ["--qi", "Adress"], "unknown quasi-identifier 'Adress'"),
        (None, ["--uid", "Nobody"], "unknown respondent identifier column"),
        (None, ["--granularities", "week,fortnight"], "unknown granularity 'fortnight'"),
        (None, ["--metric", "gen_z"], "unknown metric 'gen_z'"),
        (None, ["--k", "0"], "k must be an integer of at least 2"),
        (None, ["--k", "1"], "k = 1 would publish the original timestamps"),
        (None, ["--shuffle-seed", "-5"], "the shuffle seed must be a non-negative integer"),
        (None, ["--timezone", "Europe/Nowhere"], "unknown time zone 'Europe/Nowhere'"),
        (None, ["--time-limit", "0"], "time limit must be a positive number"),
        (None, ["--granularities", "week,format:%Y-W%V"], "%V goes with the ISO year %G"),
        (None, ["--max-suppression", "1.5"], "max-suppression must be in"),
        (None, ["--granularities", "format:%m"], "is not a granularity"),
        ((4, "Date", "2005-13-45"), [], "line 6: cannot parse timestamp '2005-13-45'"),
        ((7, "Patient", ""), [], "line 9: the respondent identifier is missing"),
    ],
)
def test_cli_bad_input_exit_2(exams, tmp_path, change, args, message):
    src = exams
    if change is not None:
        df = table3().astype(object)
        df.loc[change[0], change[1]] = change[2]
        src = tmp_path / "bad.csv"
        df.to_csv(src, index=False)
    base = {"--uid": "Patient", "--time": "Date", "--qi": "Address", "--granularities": "week,month", "--k": "2",
            "--metric": "gen_c"}  # fmt: skip
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    extra = [x for kv in base.items() for x in kv]
    if args and args[0] == "--max-suppression":
        extra += args
    out = tmp_path / "o.csv"
    r = run(src, *extra, "--out", out)
    assert r.exit_code == 2, r.output
    assert message in " ".join(r.output.split()), r.output
    assert not out.exists()


def test_cli_day_parts(tmp_path):
    df = pd.DataFrame({"P": ["a", "b", "a", "b"], "T": ["2005-03-01 07:10", "2005-03-01 08:20",
                                                       "2005-03-01 14:00", "2005-03-01 15:30"]})  # fmt: skip
    src, out = tmp_path / "in.csv", tmp_path / "o.csv"
    df.to_csv(src, index=False)
    r = run(src, "--uid", "P", "--time", "T", "--granularities", "part-of-day,day", "--day-parts",
            "early=0-14,late=14-24", "--k", "2", "--out", out)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert list(pd.read_csv(out, dtype=str)["T"]) == ["2005-03-01 early"] * 2 + ["2005-03-01 late"] * 2
    bad = run(src, "--uid", "P", "--time", "T", "--day-parts", "early=6-14,late=13-22", "--k", "2", "--out", out)
    assert bad.exit_code == 2 and "without overlap" in bad.output


def test_cli_missing_input_file(tmp_path):
    r = run(tmp_path / "nope.csv", "--time", "T", "--k", "2", "--out", tmp_path / "o.csv")
    assert r.exit_code == 2 and "not found" in r.output


def test_cli_joint_with_hierarchies(tmp_path):
    df = table3()
    df["Age"] = ["34", "35", "51", "52"] * 8
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    hdir = tmp_path / "h"
    hdir.mkdir()
    (hdir / "Age.csv").write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(30, 60)))
    out, summ = tmp_path / "o.csv", tmp_path / "s.json"
    r = run(src, "--uid", "Patient", "--time", "Date", "--qi", "Address,Age", "--allow-identifier", "Address", "--granularities", "week,month,year",
            "--hierarchies", hdir, "--k", "2", "--out", out, "--summary", summ)  # fmt: skip
    assert r.exit_code == 0, r.output
    s = json.loads(summ.read_text())
    assert s["mode"] == "joint" and set(s["granularity"]) == {"Date", "Address", "Age"}
    assert s["verification"]["qi_generalization"].startswith("checked")
    rel = pd.read_csv(out, dtype=str)
    assert "Patient" not in rel.columns and len(rel) == 32 - s["suppressed"]
    g = s["granularity"]  # the status line names the node in words (it printed the summary's dict)
    said = f"with time as {g['Date']} (Address at level {g['Address']}, Age at level {g['Age']})"
    assert said in " ".join(r.output.split()) and "{" not in r.output


@pytest.mark.skipif(not (SHARED / "encounters.csv").exists(), reason="shared Synthea data not present")
def test_cli_on_synthea_encounters(tmp_path):
    enc = pd.read_csv(SHARED / "encounters.csv", usecols=["PATIENT", "START", "ENCOUNTERCLASS"], dtype=str)
    pat = pd.read_csv(SHARED / "patients.csv", usecols=["Id", "GENDER", "RACE"], dtype=str)
    df = enc.merge(pat, left_on="PATIENT", right_on="Id").drop(columns="Id")
    src = tmp_path / "enc.csv"
    df.to_csv(src, index=False)
    out, summ = tmp_path / "o.csv", tmp_path / "s.json"
    r = run(src, "--uid", "PATIENT", "--time", "START", "--qi", "GENDER,RACE", "--k", "5", "--max-suppression",
            "0.05", "--granularities", "hour,day,week,month,quarter,year", "--out", out, "--summary", summ)  # fmt: skip
    assert r.exit_code == 0, r.output
    s = json.loads(summ.read_text())
    assert s["respondents"] == df["PATIENT"].nunique() and s["timestamps"]["timezone"] == "converted to UTC"
    assert s["suppressed"] <= 0.05 * len(df)
    rel = pd.read_csv(out, dtype=str)
    assert "PATIENT" not in rel.columns
