"""`tempanon timestamped --report/--verbose` and the `timestamped` job model (issue 6 wiring)."""

from __future__ import annotations

import hashlib
import json
import re
import textwrap

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.report.timestamped import observed_losses, timestamped_report
from tempanon.temporal.api import anonymize_timestamped
from tempanon.temporal.generator import example_exams

from job_check import assert_job_error  # tests/job_check.py
from report_page import check_page  # tests/report_page.py

runner = CliRunner()
SECTIONS = ["inputs", "guarantee", "risk", "utility", "granularities"]
# a report written by a command or job also says what was verified (issue 12), after the guarantee
WRITTEN_SECTIONS = [*SECTIONS[:2], "verification", *SECTIONS[2:]]


@pytest.fixture
def exams(tmp_path):
    p = tmp_path / "exams.csv"
    example_exams().to_csv(p, index=False, sep=";")
    return p


def run(*args):
    return runner.invoke(app, ["timestamped", *map(str, args)])


def test_cli_report_end_to_end(exams, tmp_path):
    out, rep, summ = tmp_path / "o.csv", tmp_path / "r.html", tmp_path / "s.json"
    r = run(exams, "--uid", "Patient", "--time", "Date", "--qi", "Address", "--allow-identifier", "Address", "--sensitive", "Exam", "--granularities", "week,quarter,business-day",
            "--k", "2", "--out", out, "--report", rep, "--summary", summ, "--verbose")  # fmt: skip
    assert r.exit_code == 0, r.output
    html = rep.read_text()
    p = check_page(html, WRITTEN_SECTIONS)
    assert p.figures == 4  # group-size histogram, risk, loss per attribute, granularity DAG
    text = " ".join(p.text)
    assert hashlib.sha256(exams.read_bytes()).hexdigest() in text
    assert "Chosen granularity: week." in text and "verified on the released table" in text
    assert "business-day (the data granularity day is not finer" in text  # disregarded granularity explained
    assert "respondent id (counts respondents; removed)" in text
    # chosen node drawn red in the DAG figure: its label is in the SVG with the selected colour
    assert "#cf222e" in html.split('id="granularities"')[1]
    assert json.loads(summ.read_text())["report"] == str(rep)
    # --verbose shows the search and the phases
    assert "granularities checked (day, week, quarter)" in r.output and "build report" in r.output


def test_cli_report_numbers_are_the_released_tables(exams, tmp_path):
    out, rep, audit = tmp_path / "release" / "o.csv", tmp_path / "r.html", tmp_path / "steward" / "a.csv"
    r = run(exams, "--uid", "Patient", "--time", "Date", "--qi", "Address", "--allow-identifier", "Address", "--sensitive", "Exam", "--granularities", "week,month",
            "--k", "2", "--out", out, "--report", rep, "--audit", audit, "-q")  # fmt: skip
    assert r.exit_code == 0 and r.output.strip() == ""
    rel = pd.read_csv(out, dtype=str)
    df = example_exams()
    from tempanon.temporal.api import read_audit

    rel["Patient"] = read_audit(audit)["respondent"].to_numpy()  # release rows are shuffled: the audit maps them
    resp = rel.groupby(["Address", "Date"])["Patient"].nunique()
    html = rep.read_text()
    row = re.search(r"<td>respondent-level k</td><td class=\"num\">2</td><td class=\"num\">(\d+)</td>", html)
    assert row and int(row.group(1)) == resp.min() >= 2
    risk = html.split('id="risk"')[1].split("</section>")[0]
    classes = re.search(r"<td>equivalence classes</td><td class=\"num\">(\d+)</td><td class=\"num\">(\d+)</td>", risk)
    assert int(classes.group(2)) == len(resp)
    assert int(classes.group(1)) == len(df.groupby(["Date", "Address"]))


@pytest.mark.parametrize(
    "args, code",
    [
        (["--granularities", "week", "--k", "3"], 1),  # no granularity is 3-anonymous
        (["--granularities", "week", "--k", "2", "--metric", "best"], 2),
        (["--granularities", "fortnight", "--k", "2"], 2),
    ],
)
def test_cli_no_report_when_the_run_fails(exams, tmp_path, args, code):
    out, rep = tmp_path / "o.csv", tmp_path / "r.html"
    r = run(exams, "--uid", "Patient", "--time", "Date", "--qi", "Address", "--allow-identifier", "Address", "--sensitive", "Exam", *args, "--out", out, "--report", rep)
    assert r.exit_code == code, r.output
    assert not rep.exists() and not out.exists()


def test_cli_report_may_not_overwrite_the_output(exams, tmp_path):
    out = tmp_path / "o.csv"
    r = run(exams, "--uid", "Patient", "--time", "Date", "--granularities", "week", "--k", "2", "--out", out, "--report", out)
    assert r.exit_code == 2 and "--report must be a file of its own" in r.output
    assert not out.exists()


def test_cli_joint_report(exams, tmp_path):
    hier = tmp_path / "h"
    hier.mkdir()
    (hier / "Address.csv").write_text("Addr1;*\nAddr2;*\nAddr3;*\n")
    out, rep = tmp_path / "o.csv", tmp_path / "r.html"
    r = run(exams, "--uid", "Patient", "--time", "Date", "--qi", "Address", "--allow-identifier", "Address", "--sensitive", "Exam", "--granularities", "week,month,year",
            "--hierarchies", hier, "--k", "3", "--out", out, "--report", rep, "-v")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "joint search:" in r.output
    p = check_page(rep.read_text(), WRITTEN_SECTIONS)
    text = " ".join(p.text)
    assert "Time was generalized jointly" in text
    released = pd.read_csv(out, dtype=str)
    lvl = "quasi-identifier (generalized, level" if (released["Address"] == "*").all() else "quasi-identifier (unchanged)"
    assert lvl in text


def brute_losses(data, released, cols):
    """Definition of observed_losses, one row and one value at a time."""
    out = {}
    n = len(data)
    for c in cols:
        orig = [str(v) for v in data[c]]
        L = len(set(orig))
        total = 0.0
        for i in range(n):
            if i not in released.index:
                total += 1
                continue
            r = str(released.at[i, c])
            covered = {orig[j] for j in released.index if str(released.at[j, c]) == r}
            total += (len(covered) - 1) / (L - 1) if L > 1 else 0.0
        out[c] = total / n
    return out


@pytest.mark.parametrize("gran, k, sup", [("week,month", 2, 0.0), ("month,year", 2, 0.0), ("week", 2, 0.3), ("day", 2, 0.5)])
def test_observed_losses_match_brute_force(gran, k, sup):
    df = example_exams()
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], k=k, uid="Patient", granularities=gran, max_suppression=sup)
    got = {c: loss for c, _, _, loss in observed_losses(df, res.released, ["Date", "Address"], {})}
    want = brute_losses(df, res.released, ["Date", "Address"])
    assert got == pytest.approx(want)
    assert got["Address"] == pytest.approx((len(df) - len(res.released)) / len(df))  # unchanged: only suppression


def test_report_flags_a_release_that_is_not_k_anonymous():
    df = example_exams()
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], k=2, uid="Patient", granularities="week,month")
    ok = timestamped_report(df, res, source="x", checksum=None).render()
    assert "verified on the released table" in ok and "NOT verified" not in ok
    # tamper: keep only one respondent of the first class -> that class has 1 < k respondents
    first = res.released.iloc[0]
    same = (res.released["Address"] == first["Address"]) & (res.released["Date"] == first["Date"])
    keep_uid = df.loc[res.released.index[same][0], "Patient"]
    drop = res.released.index[same & (df.loc[res.released.index, "Patient"] != keep_uid).to_numpy()]
    res.released = res.released.drop(index=drop)
    assert "NOT verified" in timestamped_report(df, res, source="x", checksum=None).render()


# ---- job model -------------------------------------------------------------------------------
JOB = """\
[input]
path = "exams.csv"

[columns]
time = "Date"
uid = "Patient"
quasi_identifiers = ["Address"]
sensitive = ["Exam"]
allow_identifier = ["Address"]

[model]
name = "timestamped"
k = 2
granularities = ["week", "quarter"]

[output]
table = "out/released.csv"
summary = "out/summary.json"
report = "out/report.html"
"""


def test_job_runs_and_output_is_independently_verified(exams, tmp_path, monkeypatch):
    job = tmp_path / "job.toml"
    job.write_text(JOB)
    monkeypatch.chdir("/")
    r = runner.invoke(app, ["run", str(job), "--verbose"])
    assert r.exit_code == 0, r.output
    assert "time as week" in r.output and "granularities checked" in r.output
    rel = pd.read_csv(tmp_path / "out" / "released.csv", dtype=str)
    df = example_exams()
    assert "Patient" not in rel.columns and len(rel) == len(df)
    # independent check: ISO week of every original date, >= 2 distinct patients per class
    week = pd.to_datetime(df["Date"]).dt.strftime("%G-W%V")
    assert (rel["Date"].to_numpy() == week.to_numpy()).all()
    assert (rel["Address"].to_numpy() == df["Address"].to_numpy()).all()
    assert rel.assign(P=df["Patient"].to_numpy()).groupby(["Address", "Date"])["P"].nunique().min() >= 2
    check_page((tmp_path / "out" / "report.html").read_text(), WRITTEN_SECTIONS)
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["granularity"] == "week"


def test_job_writes_the_steward_audit_outside_the_release_folder(exams, tmp_path):
    job = tmp_path / "job.toml"
    job.write_text(JOB.replace('report = "out/report.html"', 'audit = "steward/audit.csv"\ntimezone_unused = 0').replace(
        "\ntimezone_unused = 0", "").replace("k = 2", 'k = 2\ntimezone = "Europe/Rome"'))
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    from tempanon.temporal.api import read_audit

    a = read_audit(tmp_path / "steward" / "audit.csv")
    rel = pd.read_csv(tmp_path / "out" / "released.csv", dtype=str)
    df = example_exams()
    assert len(a) == len(rel) and (df["Patient"].to_numpy()[a["input_line"].astype(int) - 2] == a["respondent"]).all()
    summ = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summ["timezone"] == "Europe/Rome"
    job.write_text(JOB.replace('report = "out/report.html"', 'audit = "out/audit.csv"'))
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 2 and "inside the release's folder" in " ".join(r.output.split())
    assert not (tmp_path / "out" / "audit.csv").exists()


def test_job_with_hierarchies_generalizes_jointly(exams, tmp_path):
    text = JOB.replace("[model]", '[hierarchies]\nAddress = { type = "suppression" }\n\n[model]').replace("k = 2", "k = 3").replace(
        '["week", "quarter"]', '["week", "quarter", "year"]')
    job = tmp_path / "job.toml"
    job.write_text(text)
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    rel = pd.read_csv(tmp_path / "out" / "released.csv", dtype=str)
    df = example_exams()
    assert len(rel) == len(df)  # no suppression allowed: rows in input order
    assert rel.assign(P=df["Patient"].to_numpy()).groupby(["Address", "Date"])["P"].nunique().min() >= 3
    assert set(rel["Address"]) <= {"*", "Addr1", "Addr2", "Addr3"}


@pytest.mark.parametrize(
    "old, new, message, line",
    [
        ("k = 2", 'k = "2"', "key 'model.k': expected integer, got a string ('2')", 13),
        ("k = 2", "k = 1", "key 'model.k': k must be at least 2", 13),
        ('granularities = ["week", "quarter"]', 'granularity = ["week"]', "key 'model.granularity': unknown key", 14),
        ('granularities = ["week", "quarter"]', 'granularities = ["week", "fortnight"]', "key 'model.granularities'", 14),
        ('granularities = ["week", "quarter"]', 'metric = "best"', "key 'model.metric': unknown metric 'best'", 14),
        ('granularities = ["week", "quarter"]', 'day_parts = "morning=6-x"', "key 'model.day_parts'", 14),
        ('granularities = ["week", "quarter"]', 'metric = "loss"', "key 'model.metric': metric 'loss' needs hierarchies", 14),
        ('time = "Date"', 'time = "Date"\nlabel = "x"', "key 'columns.label': unknown key", 6),
        ('time = "Date"\n', "", "key 'columns': missing required key 'time'", 4),
        ('time = "Date"', 'time = "When"', "key 'columns.time': unknown column 'When'", 5),
        ('quasi_identifiers = ["Address"]', 'quasi_identifiers = ["Address", "Date"]', "key 'columns.time': the time column 'Date'", 5),
        ('table = "out/released.csv"', 'table = "out/released.csv"\naudits = "a.csv"', "key 'output.audits': unknown key", 18),
    ],
)
def test_job_errors_name_key_and_line(exams, tmp_path, old, new, message, line):
    assert_job_error(JOB, tmp_path, old, new, message, line)


def test_kanon_job_rejects_a_time_column(exams, tmp_path):
    text = textwrap.dedent("""\
        [input]
        path = "exams.csv"
        [columns]
        quasi_identifiers = ["Address"]
        time = "Date"
        [hierarchies]
        Address = { type = "suppression" }
        [model]
        name = "kanon"
        k = 2
        [output]
        table = "o.csv"
        """)
    job = tmp_path / "job.toml"
    job.write_text(text)
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 2
    assert "line 5: key 'columns.time': unknown key" in " ".join(r.output.split())


# ---- init: the timestamped alternative ----------------------------------------------------------
def test_init_proposes_the_timestamped_model_and_following_it_works(tmp_path):
    rng = np.random.default_rng(1)
    n = 240
    df = pd.DataFrame({
        "name": [f"Person {i}" for i in range(n)],
        "patient_id": rng.integers(0, 60, n).astype(str),
        "sex": rng.choice(["M", "F"], n),
        "visit": pd.date_range("2020-01-01", periods=n, freq="37h").strftime("%Y-%m-%d %H:%M"),
    })
    data = tmp_path / "v.csv"
    df.to_csv(data, index=False)
    r = runner.invoke(app, ["init", str(data), "-q"])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "v.job.toml").read_text()
    assert '#   name = "timestamped"' in text and 'add  time = "visit"' in text
    # follow the comment: move visit out of the quasi-identifiers and hierarchies, switch the model
    lines = []
    for line in text.splitlines():
        if line.startswith("quasi_identifiers"):
            line = 'quasi_identifiers = ["sex"]\ntime = "visit"'
        elif line.startswith("visit = ") or line.startswith(("k = ", "criterion = ", "name = ")):
            continue
        elif line.startswith("max_suppression"):
            line = 'name = "timestamped"\nk = 5\ngranularities = ["day", "week", "month", "quarter", "year"]\nmax_suppression = 0.02'
        lines.append(line)
    (tmp_path / "v.job.toml").write_text("\n".join(lines) + "\n")
    r = runner.invoke(app, ["run", str(tmp_path / "v.job.toml"), "-q"])
    assert r.exit_code == 0, r.output
    rel = pd.read_csv(tmp_path / "v-anonymized.csv", dtype=str)
    summ = json.loads((tmp_path / "v-summary.json").read_text())
    assert "patient_id" not in rel.columns and "name" not in rel.columns
    assert summ["granularity"]["visit"] in ("day", "week", "month", "quarter", "year")
    assert summ["suppressed"] <= int(0.02 * n) and len(rel) == n - summ["suppressed"]
