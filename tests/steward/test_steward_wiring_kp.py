"""`tempanon kp --report/--verbose` and the `kp` job model (issue 6 wiring)."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.report.kp import envelopes_consistent, kp_report, pattern_series, released_group_sizes
from tempanon.timeseries.api import kp_anonymize
from tempanon.timeseries.data import random_walk
from tempanon.timeseries.sax import MAX_LEVEL, paa, symbols_of
from tempanon.verify import check_kp_anonymity

from job_check import assert_job_error  # tests/job_check.py
from report_page import check_page  # tests/report_page.py

runner = CliRunner()
SECTIONS = ["inputs", "guarantee", "risk", "utility", "timeseries"]
# a report written by a command or job also says what was verified (issue 12), after the guarantee
WRITTEN_SECTIONS = [*SECTIONS[:2], "verification", *SECTIONS[2:]]
QI = [f"A{i}" for i in range(8)]


@pytest.fixture(scope="module")
def walk():
    return random_walk(60, 8, seed=4)


@pytest.fixture
def walk_csv(tmp_path, walk):
    p = tmp_path / "walk.csv"
    walk.to_csv(p, index=False)
    return p


def run(*args):
    return runner.invoke(app, ["kp", *map(str, args)])


def test_cli_report_end_to_end(walk_csv, walk, tmp_path):
    out, rep, summ = tmp_path / "o.csv", tmp_path / "r.html", tmp_path / "s.json"
    r = run(walk_csv, "--id", "id", "--qi", "A0:A7", "--sensitive", "S", "--k", 6, "--p", 3, "--out", out,
            "--report", rep, "--summary", summ, "--verbose")
    assert r.exit_code == 0, r.output
    assert "k-groups" in r.output and "build report" in r.output  # --verbose
    html = rep.read_text()
    p = check_page(html, WRITTEN_SECTIONS)
    assert p.figures == 5  # k-group and P-subgroup histograms, risk, loss per attribute, envelopes
    text = " ".join(p.text)
    assert hashlib.sha256(walk_csv.read_bytes()).hexdigest() in text
    assert "verified on the released table" in text
    assert "series id (removed; kept in the steward's audit)" in text and "sensitive (published as is)" in text
    rel = pd.read_csv(out)
    ks = rel.groupby("kgroup").size()
    ps = rel.groupby(["kgroup", "psubgroup"]).size()
    achieved = re.search(r"<td>k \(series per k-group\)</td><td class=\"num\">6</td><td class=\"num\">(\d+)</td>", html)
    assert int(achieved.group(1)) == ks.min() >= 6
    achieved = re.search(r"<td>P \(series per P-subgroup\)</td><td class=\"num\">3</td><td class=\"num\">(\d+)</td>", html)
    assert int(achieved.group(1)) == ps.min() >= 3
    # risk after: classes of the published columns are the P-subgroups
    risk = html.split('id="risk"')[1].split("</section>")[0]
    classes = re.search(r"<td>equivalence classes</td><td class=\"num\">(\d+)</td><td class=\"num\">(\d+)</td>", risk)
    assert int(classes.group(1)) == len(walk) and int(classes.group(2)) == len(ps)
    assert json.loads(summ.read_text())["report"] == str(rep)
    # drawn groups: at most 6 panels, titled with their k-group
    assert len(re.findall(r"k-group \d+: \d+ series", html.split('id="timeseries"')[1])) == min(6, len(ks))


@pytest.mark.parametrize(
    "args, code",
    [
        (["--k", 100, "--p", 3], 1),  # fewer series than k
        (["--k", 6, "--p", 8], 2),  # P > k
        (["--k", 6, "--p", 3, "--qi", "A0:A9"], 2),  # unknown column
    ],
)
def test_cli_no_report_when_the_run_fails(walk_csv, tmp_path, args, code):
    out, rep = tmp_path / "o.csv", tmp_path / "r.html"
    qi = [] if "--qi" in args else ["--qi", "A0:A7"]
    r = run(walk_csv, "--id", "id", *qi, *args, "--out", out, "--report", rep)
    assert r.exit_code == code, r.output
    assert not rep.exists() and not out.exists()


def test_cli_report_may_not_overwrite_the_output(walk_csv, tmp_path):
    out = tmp_path / "o.csv"
    r = run(walk_csv, "--id", "id", "--qi", "A0:A7", "--out", out, "--report", out)
    assert r.exit_code == 2 and "different files" in r.output
    assert not out.exists()


def test_report_group_counts_and_envelopes(walk):
    res = kp_anonymize(walk, id_col="id", qi=QI, k=5, P=2, sensitive=["S"])
    ks, ps = released_group_sizes(res.released)
    assert ks.sum() == ps.sum() == len(res.released)
    assert ks.min() >= 5 and ps.min() >= 2
    assert envelopes_consistent(res.released, QI)
    bad = res.released.copy()
    bad.loc[bad.index[0], "A0_lo"] -= 1.0  # one row of a k-group with another envelope
    assert not envelopes_consistent(bad, QI)
    # a release whose counts do not hold is reported as not verified
    html = kp_report(walk, res, id_col="id", qi=QI, sensitive=["S"], source="x", checksum=None).render()
    assert "NOT verified" not in html
    res.released = res.released.copy()
    res.released.loc[res.released.index[0], "kgroup"] = res.released["kgroup"].max() + 1  # a k-group of 1 series
    assert "NOT verified" in kp_report(walk, res, id_col="id", qi=QI, sensitive=["S"], source="x", checksum=None).render()


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 12),
    level=st.integers(1, MAX_LEVEL),
    segments=st.integers(1, 12),
)
def test_pattern_series_has_the_published_sax_word(seed, n, level, segments):
    """Oracle: re-normalizing a drawn pattern and taking its SAX word at the published level gives
    back the published word (medians lie inside their symbols' intervals)."""
    segments = min(segments, n)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(5, n)) * rng.uniform(0.1, 10, size=(5, 1)) + rng.normal(size=(5, 1))
    words = rng.integers(0, level, size=(5, segments)).astype(np.uint8)
    levels = np.full(5, level)
    pat = pattern_series(X, words, levels)
    assert pat.shape == X.shape
    std = X.std(axis=1, keepdims=True)
    z = (pat - X.mean(axis=1, keepdims=True)) / std
    assert (symbols_of(paa(z, segments), level) == words).all()
    # constant within each PAA segment (numpy.array_split boundaries)
    for chunk in np.array_split(np.arange(n), segments):
        assert np.allclose(pat[:, chunk], pat[:, chunk[:1]])


# ---- job model -------------------------------------------------------------------------------
JOB = """\
[input]
path = "walk.csv"

[columns]
uid = "id"
quasi_identifiers = ["A0:A7"]
sensitive = ["S"]

[model]
name = "kp"
k = 6
p = 3

[output]
table = "out/released.csv"
audit = "steward/audit.csv"
summary = "steward/summary.json"
report = "steward/report.html"
"""


def test_job_runs_and_output_is_independently_verified(walk_csv, walk, tmp_path, monkeypatch):
    job = tmp_path / "job.toml"
    job.write_text(JOB)
    monkeypatch.chdir("/")
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    assert "kp (kapra): k=6, P=3" in " ".join(r.output.split())
    rel = pd.read_csv(tmp_path / "out" / "released.csv")
    from tempanon.timeseries.api import AUDIT_HEADER

    # the audit says in the file itself that it is for the steward only, as the CLI's does
    assert (tmp_path / "steward" / "audit.csv").read_text().splitlines()[0] == AUDIT_HEADER
    audit = pd.read_csv(tmp_path / "steward" / "audit.csv", dtype={"id": str}, comment="#")
    audit["output_row"] = audit["output_row"].astype("Int64")
    check_kp_anonymity(walk, rel, audit, id_col="id", qi=QI, k=6, P=3, sensitive=["S"])  # re-read from disk
    check_page((tmp_path / "steward" / "report.html").read_text(), WRITTEN_SECTIONS)
    assert json.loads((tmp_path / "steward" / "summary.json").read_text())["k"] == 6


def test_job_audit_inside_the_release_folder_is_refused(walk_csv, tmp_path):
    job = tmp_path / "job.toml"
    job.write_text(JOB.replace('audit = "steward/audit.csv"', 'audit = "out/audit.csv"'))
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 2 and "inside the release's folder" in " ".join(r.output.split())
    assert not (tmp_path / "out").exists()


def test_job_customized_publishing(walk_csv, walk, tmp_path):
    job = tmp_path / "job.toml"
    job.write_text(JOB.replace("p = 3", 'p = 3\nalgorithm = "naive"\npublish_values = ["A0:A3"]\nmax_level = 4'))
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    rel = pd.read_csv(tmp_path / "out" / "released.csv")
    assert "A0_lo" in rel.columns and "A3_hi" in rel.columns and "A4_lo" not in rel.columns
    assert rel["pattern_level"].max() <= 4
    audit = pd.read_csv(tmp_path / "steward" / "audit.csv", dtype={"id": str}, comment="#")
    audit["output_row"] = audit["output_row"].astype("Int64")
    check_kp_anonymity(walk, rel, audit, id_col="id", qi=QI, k=6, P=3, sensitive=["S"], value_columns=QI[:4])


@pytest.mark.parametrize(
    "old, new, message, line",
    [
        ("p = 3", "p = 8", "key 'model.p': P must not exceed k (Definition 5 needs P <= k), got P=8 > k=6", 12),
        # (found by hand, session 27: k = 1, p = 1 and l_diversity = 1 passed the job's checks, then the
        # API refused them without the job file's key and line)
        ("k = 6", "k = 1", "key 'model.k': k must be at least 2, got 1", 11),
        ("p = 3", "p = 1", "key 'model.p': P must be at least 2, got 1", 12),
        ("p = 3", "p = 3\nl_diversity = 1\nepsilon = 0.1", "key 'model.l_diversity': l must be at least 2, got 1", 13),
        ("p = 3", 'p = "3"', "key 'model.p': expected integer, got a string ('3')", 12),
        ("p = 3", "p = 3\nP = 2", "key 'model.P': unknown key", 13),
        ("p = 3", 'p = 3\nalgorithm = "fast"', "key 'model.algorithm': unknown algorithm 'fast'", 13),
        ("p = 3", "p = 3\nmax_level = 30", "key 'model.max_level': must be in 1..26", 13),
        ("p = 3", "p = 3\nl_diversity = 2", "key 'model.l_diversity': l-diversity needs 'epsilon'", 13),
        ("p = 3", "p = 3\npaa = 20", "key 'model.paa': PAA segments must be in 1..8", 13),
        ("p = 3", 'p = 3\npublish_values = ["B1"]', "key 'model.publish_values'", 13),
        ('uid = "id"\n', "", "key 'columns': missing required key 'uid'", 4),
        ('quasi_identifiers = ["A0:A7"]', 'quasi_identifiers = ["A0:A9"]', "key 'columns.quasi_identifiers'", 6),
        ("[model]", '[hierarchies]\nA0 = { type = "suppression" }\n\n[model]', "key 'hierarchies': the kp model generalizes without hierarchies", 9),
    ],
)
def test_job_errors_name_key_and_line(walk_csv, tmp_path, old, new, message, line):
    assert_job_error(JOB, tmp_path, old, new, message, line)


def test_job_long_format(tmp_path, walk):
    """Issue 16: a kp job reads one row per (series, time) with [model] long_time / long_value."""
    rows = [(r.id, t, getattr(r, f"A{t}"), r.S) for r in walk.itertuples() for t in range(8)]
    pd.DataFrame(rows, columns=["sid", "t", "x", "S"]).sample(frac=1, random_state=1).to_csv(tmp_path / "long.csv", index=False)
    job = tmp_path / "job.toml"
    job.write_text(f"""
[input]
path = "long.csv"

[columns]
uid = "sid"
quasi_identifiers = ["0:7"]
sensitive = ["S"]

[model]
name = "kp"
k = 6
p = 3
long_time = "t"
long_value = "x"

[output]
table = "out/released.csv"
audit = "steward/audit.csv"
""")
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    rel = pd.read_csv(tmp_path / "out" / "released.csv")
    assert {"0_lo", "7_hi", "pattern", "S"} <= set(rel.columns) and "sid" not in rel.columns
    audit = pd.read_csv(tmp_path / "steward" / "audit.csv", dtype={"id": str}, comment="#")
    assert sorted(audit["id"]) == sorted(walk["id"])
    job.write_text(job.read_text().replace('long_value = "x"\n', ""))
    r = runner.invoke(app, ["run", str(job), "-q"])
    assert r.exit_code == 2 and "long_time and long_value" in r.output
