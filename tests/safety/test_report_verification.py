"""Issue 12: the HTML report, like the CLI's last line and the summary's ``verification``, says
exactly what was verified: the guarantee, the columns it was checked on, the columns released
unchanged only because they were declared insensitive, and the columns left out."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.samples import sample_dir

runner = CliRunner()


def _section(page: str) -> str:
    m = re.search(r'id="verification".*?</section>', page, flags=re.S)
    assert m, "the report has no 'What was verified' section"
    return html.unescape(re.sub(r"<[^>]+>", " ", m.group(0)))


def _check(tmp_path: Path, args: list[str], *, checked: list[str], kept: list[str], left_out: list[str]) -> None:
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    summ = json.loads((tmp_path / "steward" / "summary.json").read_text())
    v = summ["verification"]
    text = _section((tmp_path / "steward" / "report.html").read_text())
    assert v["guarantee"] in text
    for c in checked:
        assert c in v["checked_on"] and c in text
    assert v["released_unchanged_declared_insensitive"] == kept
    row = re.search(r"declared insensitive \(not verified\)\s+(.*?)\s+identifier screening", text, flags=re.S).group(1)
    assert row.split(", ") == (kept or ["none"])
    row = re.search(r"left out \(no role, not released\)\s+(.*?)\s+dropped", text, flags=re.S).group(1)
    assert sorted(row.split(", ")) == sorted(left_out or ["none"])
    # the rest of the page never calls a left-out column released
    page = html.unescape(re.sub(r"<[^>]+>", " ", (tmp_path / "steward" / "report.html").read_text()))
    for c in left_out:
        assert not re.search(re.escape(c) + r"\s+[^\n]{0,40}released unchanged", page), c
    for c in kept:
        if re.search(r"\b" + re.escape(c) + r"\s+(other|insensitive|left out)", page):
            assert re.search(re.escape(c) + r"\s+insensitive, declared \(released unchanged; not verified\)", page), c


def test_kanon_report_says_what_was_verified(tmp_path):
    a = sample_dir("adult")
    _check(tmp_path, ["kanon", str(a / "adult.csv.gz"), "--qi", "age,sex", "--hierarchies", str(a), "--k", "5",
                      "--keep", "salary-class", "--out", str(tmp_path / "release" / "r.csv"),
                      "--summary", str(tmp_path / "steward" / "summary.json"), "--report", str(tmp_path / "steward" / "report.html")],
           checked=["age", "sex"], kept=["salary-class"],
           left_out=["race", "marital-status", "education", "native-country", "workclass", "occupation"])


def test_timestamped_report_says_what_was_verified(tmp_path):
    src = sample_dir("timestamped") / "encounters.csv.gz"
    cols = list(pd.read_csv(src, nrows=1).columns)
    _check(tmp_path, ["timestamped", str(src), "--uid", "PATIENT", "--time", "START", "--qi", "ENCOUNTERCLASS",
                      "--granularities", "month,quarter,year", "--k", "2", "--max-suppression", "0.1",
                      "--out", str(tmp_path / "release" / "r.csv"), "--summary", str(tmp_path / "steward" / "summary.json"),
                      "--report", str(tmp_path / "steward" / "report.html")],
           checked=["ENCOUNTERCLASS", "START"], kept=[],
           left_out=[c for c in cols if c not in {"PATIENT", "START", "ENCOUNTERCLASS"}])


def test_kp_report_says_what_was_verified(tmp_path):
    src = sample_dir("timeseries") / "randomwalk_300.csv"
    _check(tmp_path, ["kp", str(src), "--id", "id", "--qi", "A0:A9", "--k", "10", "--p", "5",
                      "--out", str(tmp_path / "release" / "r.csv"), "--summary", str(tmp_path / "steward" / "summary.json"),
                      "--report", str(tmp_path / "steward" / "report.html")],
           checked=["A0", "A9"], kept=[], left_out=["S"])


def test_stream_report_says_what_was_verified(tmp_path):
    src = sample_dir("stream") / "use_of_force_sample.csv"
    _check(tmp_path, ["stream", str(src), "--time", "response_datetime", "--sensitive", "problem", "--qi", "race,sex",
                      "--l", "2", "--window", "1", "--out", str(tmp_path / "release"),
                      "--summary", str(tmp_path / "steward" / "summary.json"), "--report", str(tmp_path / "steward" / "report.html")],
           checked=["race", "sex", "problem"], kept=[], left_out=["age", "precinct"])


def test_job_report_says_what_was_verified(tmp_path):
    a = sample_dir("adult")
    job = tmp_path / "job.toml"
    job.write_text(f"""[input]
path = "{a / 'adult.csv.gz'}"
[columns]
quasi_identifiers = ["age", "sex"]
keep = ["salary-class"]
[hierarchies]
age = "{a / 'age.csv'}"
sex = "{a / 'sex.csv'}"
[model]
name = "kanon"
k = 5
[output]
table = "release/r.csv"
summary = "steward/summary.json"
report = "steward/report.html"
""")
    _check(tmp_path, ["run", str(job)], checked=["age", "sex"], kept=["salary-class"],
           left_out=["race", "marital-status", "education", "native-country", "workclass", "occupation"])
