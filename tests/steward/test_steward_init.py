"""`tempanon init` (issue 16 and issue 12): a small quasi-identifier set of demographics and time, each
choice explained; the lattice size stated (and flagged from millions of nodes); identifiers found by
the shared screening dropped with its reason; other date columns flagged; nothing released
unchanged without a role."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.data.screen import screen_columns
from tempanon.steward.init import FALLBACK_QI, LARGE_LATTICE, MAX_QI, lattice_size, profile_columns
from tempanon.steward.job import load_job

runner = CliRunner()


def admissions(n=400, seed=0):
    """An admissions table of the kind issue 16 describes (15 columns, several dates, ids)."""
    rng = np.random.default_rng(seed)
    admit = pd.Timestamp("2130-01-01") + pd.to_timedelta(rng.integers(0, 365 * 24 * 60, n), unit="min")
    first = rng.choice(["Ann", "Bob", "Cleo", "Dan", "Eve", "Finn", "Gus", "Hana"], n)
    return pd.DataFrame({
        "row_id": np.arange(n).astype(str),
        "subject_id": rng.integers(0, n // 3, n).astype(str),
        "hadm_id": (100000 + rng.permutation(n)).astype(str),
        "forename": [f"{f}{i}" for i, f in enumerate(first)],
        "email": [f"p{i}@mail.example.org" for i in range(n)],
        "admittime": admit.strftime("%Y-%m-%d %H:%M"),
        "dischtime": (admit + pd.to_timedelta(rng.integers(1, 20 * 24 * 60, n), unit="min")).strftime("%Y-%m-%d %H:%M"),
        "edregtime": (admit - pd.to_timedelta(rng.integers(10, 600, n), unit="min")).strftime("%Y-%m-%d %H:%M"),
        "age": rng.integers(18, 95, n).astype(str),
        "gender": rng.choice(["M", "F"], n),
        "insurance": rng.choice(["Medicare", "Private", "Medicaid"], n),
        "marital_status": rng.choice(["MARRIED", "SINGLE", "WIDOWED"], n),
        "ethnicity": rng.choice(["WHITE", "BLACK", "ASIAN", "HISPANIC"], n),
        "diagnosis": rng.choice(["SEPSIS", "PNEUMONIA", "CHEST PAIN", "STROKE"], n),
        "notes": [f"patient arrived by ambulance with complaint number {i} and was admitted" for i in range(n)],
    })


def drop_key(text):
    m = re.search(r"^(drop|identifying) = \[(.*)\]$", text, re.M)
    return [x.strip().strip('"') for x in m.group(2).split(",") if x.strip()]


def comment(text, col):
    return re.search(rf"^# {re.escape(col)}: (.*)$", text, re.M).group(1)


def test_admissions_get_a_small_safe_proposal_and_it_runs(tmp_path):
    df = admissions()
    data = tmp_path / "admissions.csv"
    df.to_csv(data, index=False)
    r = runner.invoke(app, ["init", str(data)])
    assert r.exit_code == 0, r.output
    job = tmp_path / "admissions.job.toml"
    text = job.read_text()
    j = load_job(job)
    # a small set of demographics and the time, not every column
    assert j.quasi_identifiers == ["admittime", "age", "gender", "marital_status", "ethnicity"]  # in column order
    assert len(j.quasi_identifiers) <= MAX_QI and j.uid == "subject_id"
    for q in j.quasi_identifiers:
        assert re.match(r"(a demographic \(|the time of the event)", comment(text, q)), comment(text, q)
    # identifiers of the shared screening are dropped, each with the screening's reason
    dropped = drop_key(text)
    found = {f.column: f.reason for f in screen_columns(df.astype(str), list(df.columns), uid="subject_id", time="admittime")}
    for col in ("row_id", "hadm_id", "forename", "email", "notes"):
        assert col in dropped and found[col] in comment(text, col), (col, comment(text, col))
    # the other dates are flagged as giving the time back
    for col in ("dischtime", "edregtime"):
        assert col in dropped and "another date/time beside 'admittime'" in comment(text, col)
    # the rest is left out, each with a comment, and nothing is released unchanged without a role
    left = [c for c in df.columns if re.search(r"left out", comment(text, c))]
    assert set(left) == {"insurance", "diagnosis"}
    assert not re.search(r"^keep\s*=", text, re.M) and re.search(r"^# keep = \[\]", text, re.M)
    assert set(dropped) | set(left) == set(df.columns) - {j.uid, *j.quasi_identifiers}  # every column has a role or is left out
    assert not set(dropped) & set(j.quasi_identifiers)
    # the lattice size is stated and is the product of the built hierarchies' level counts
    want = math.prod(j.hierarchies[q].build(q, df[q].astype(str)).height + 1 for q in j.quasi_identifiers)
    assert f"= {want:,} nodes" in text and f"{want:,} nodes" in r.output
    assert "WARNING" not in text
    assert "forename: remove (identifier)" in " ".join(r.output.split()) and "insurance: left out (no role)" in r.output
    # the starter job runs; the release holds the quasi-identifiers and nothing else
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    out = pd.read_csv(tmp_path / "admissions-anonymized.csv", dtype=str, keep_default_na=False)
    assert set(out.columns) <= set(j.quasi_identifiers) | {"__shuffle__"} and set(out.columns) >= set(j.quasi_identifiers)


def test_a_proposal_of_millions_of_nodes_says_so(tmp_path):
    rng = np.random.default_rng(1)
    n = 300
    cols = ["zip", "postcode", "county_code", "city_code", "state_code", "region_code"]
    df = pd.DataFrame({c: rng.choice([f"{rng.integers(10**9, 10**10)}" for _ in range(30)], n) for c in cols})
    data = tmp_path / "codes.csv"
    df.to_csv(data, index=False)
    r = runner.invoke(app, ["init", str(data)])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "codes.job.toml").read_text()
    j = load_job(tmp_path / "codes.job.toml")
    assert j.quasi_identifiers == cols
    size = math.prod(j.hierarchies[q].build(q, df[q].astype(str)).height + 1 for q in cols)
    assert size == 11**6 >= LARGE_LATTICE
    assert f"WARNING: {size:,} nodes is millions" in text
    assert "millions" in r.output and f"{size:,} nodes" in r.output


def test_without_demographics_a_few_guesses_are_marked_as_such():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({c: rng.choice(list("abcdef"), 200) for c in "ABCDEFG"}).astype(object)
    ps = profile_columns(df)
    qi = [p for p in ps if p.role == "qi"]
    assert [p.name for p in qi] == list("ABCD")[:FALLBACK_QI]
    assert all(p.reason.startswith("a guess: no column looks like a demographic or a time") for p in qi)
    assert all(p.role == "other" for p in ps if p not in qi)
    assert lattice_size(ps) == 2**FALLBACK_QI


def test_many_demographics_are_capped_by_priority():
    rng = np.random.default_rng(3)
    names = ["occupation", "education", "native_country", "race", "marital_status", "zip", "sex", "age", "visit_date"]
    df = pd.DataFrame({c: rng.choice([f"{c}{i}" for i in range(5)], 300) for c in names}).astype(object)
    df["age"] = rng.integers(18, 90, 300).astype(str)
    df["zip"] = rng.choice([f"537{i:02d}" for i in range(20)], 300)
    df["visit_date"] = pd.date_range("2020-01-01", periods=300, freq="D").strftime("%Y-%m-%d")
    ps = {p.name: p for p in profile_columns(df)}
    qi = [n for n, p in ps.items() if p.role == "qi"]
    assert len(qi) == MAX_QI and "visit_date" in qi
    assert set(qi) == {"age", "sex", "zip", "native_country", "race", "visit_date"}  # priority: age, sex, place, race, ...
    assert "left out to keep the proposal at" in ps["occupation"].reason


def test_infinite_and_missing_numbers_do_not_break_init(tmp_path):
    df = pd.DataFrame({"age": [str(x) for x in range(20, 60)] + ["inf", "-inf", "", "nan"], "sex": ["M", "F"] * 22})
    data = tmp_path / "inf.csv"
    df.to_csv(data, index=False)
    r = runner.invoke(app, ["init", str(data)])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    load_job(tmp_path / "inf.job.toml")


@pytest.mark.parametrize("col, values", [("when_seen", "dates"), ("visit", "dates")])
def test_the_time_is_the_event_time_and_other_dates_are_flagged(col, values):
    n = 120
    days = pd.date_range("2021-01-01", periods=n, freq="13h")
    df = pd.DataFrame({"birth_date": pd.date_range("1950-01-01", periods=n, freq="97D").strftime("%Y-%m-%d"),
                       "updated": (days + pd.Timedelta("3D")).strftime("%Y-%m-%d %H:%M"),
                       col: days.strftime("%Y-%m-%d %H:%M"), "sex": ["M", "F"] * (n // 2)}).astype(object)
    ps = {p.name: p for p in profile_columns(df)}
    # a birth date is a demographic (generalized even though near-unique), the event time is the time
    assert ps["birth_date"].role == "qi" and ps["birth_date"].reason.startswith("a demographic (age or birth)")
    assert "never released exactly" in ps["birth_date"].reason
    assert ps[col].role == "qi" and ps[col].reason.startswith("the time of the event")
    assert ps["updated"].role == "identifying" and f"another date/time beside {col!r}" in ps["updated"].reason


def test_left_out_columns_are_listed_for_removal_only_when_the_runner_does_not_fail_closed(monkeypatch, tmp_path):
    from tempanon.steward import job
    from tempanon.steward.init import starter_job

    df = admissions(80).astype(object)
    ps = profile_columns(df)
    monkeypatch.setitem(job.COLUMNS_SCHEMA, "keep", "list of strings")
    closed = starter_job(tmp_path / "a.csv", tmp_path / "a.job.toml", df, ps)
    monkeypatch.delitem(job.COLUMNS_SCHEMA, "keep")
    listed = starter_job(tmp_path / "a.csv", tmp_path / "a.job.toml", df, ps)
    for text in (closed, listed):
        assert {"forename", "email", "dischtime"} <= set(drop_key(text))
        assert "left out of the release" in comment(text, "insurance")
    assert "insurance" not in drop_key(closed) and "(the run lists them as left out)" in closed
    assert "insurance" in drop_key(listed) and "(listed for removal below)" in listed


@pytest.mark.parametrize("odd", ["a\nb", "a\r\nb", "a\x00b", "a\x1bb", "a\x7fb"])
@pytest.mark.parametrize("where", ["value", "name"])
def test_a_line_break_or_control_character_in_the_data_gives_a_valid_job_file(tmp_path, odd, where):
    """The job file's comments show column names and example values, written raw: a value or name
    holding a line break ended the comment (the rest of it was read as TOML), a NUL, ESC or DEL is not
    allowed in TOML at all, so ``tempanon run`` refused the file init had just written ('not valid
    TOML', exit 2). Found by hand (session 23: a CSV with a quoted line break, NUL in a value)."""
    rng = np.random.default_rng(0)
    n = 60
    df = pd.DataFrame({"age": rng.integers(18, 70, n).astype(str), "sex": rng.choice(["F", "M"], n),
                       "note": rng.choice(["x", "y", odd], n)})  # fmt: skip
    if where == "name":
        df = df.rename(columns={"age": f"age {odd}"})
    src = tmp_path / "in.parquet"  # (any text, as it is, in a Parquet file)
    df.to_parquet(src, index=False)
    r = runner.invoke(app, ["init", str(src), "--out", str(tmp_path / "job.toml"), "-q"])
    assert r.exit_code == 0, r.output
    job = load_job(tmp_path / "job.toml")  # (raised 'not valid TOML' before)
    if where == "name":
        assert f"age {odd}" in job.quasi_identifiers
    r = runner.invoke(app, ["run", str(tmp_path / "job.toml"), "-q"])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink", "directory"])
def test_init_never_writes_over_its_input(tmp_path, how):
    """``--out`` naming the input (or a link to it) with ``--force`` replaced the table by the job file
    (exit 0: the data were gone). Found by hand (session 23: output paths equal to the input). Now
    refused, exit 2, the input unchanged, as every other command refuses it (OutputSet)."""
    src = tmp_path / "in.csv"
    pd.DataFrame({"age": [str(20 + i % 30) for i in range(40)], "sex": ["F", "M"] * 20}).to_csv(src, index=False)
    before = src.read_bytes()
    out = {"same": src, "symlink": tmp_path / "link.csv", "hardlink": tmp_path / "hard.csv", "directory": tmp_path}[how]
    if how == "symlink":
        out.symlink_to(src)
    elif how == "hardlink":
        out.hardlink_to(src)
    r = runner.invoke(app, ["init", str(src), "--out", str(out), "--force", "-q"])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert src.read_bytes() == before
    assert ("the input" if how != "directory" else "is a directory") in r.output, r.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary file left
