"""``tempanon kp`` through Typer's CliRunner: outputs, audit, summary, exit codes, bad input."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from shared_data import shared_data  # tests/shared_data.py
from tempanon.cli import app
from tempanon.timeseries.data import random_walk
from tempanon.verify import check_kp_anonymity

SAMPLE = Path(__file__).resolve().parents[2] / "src" / "tempanon" / "samples" / "timeseries" / "randomwalk_300.csv"
SHARED = shared_data("timeseries") or Path("/nonexistent")
QI = [f"A{i}" for i in range(10)]
runner = CliRunner()


def run(*args):
    return runner.invoke(app, ["kp", *map(str, args)])


def test_sample_end_to_end(tmp_path):
    (tmp_path / "release").mkdir()
    (tmp_path / "steward").mkdir()
    out, summ, aud = tmp_path / "release" / "out.csv", tmp_path / "steward" / "s.json", tmp_path / "steward" / "audit.csv"
    res = run(SAMPLE, "--id", "id", "--qi", "A0:A9", "--sensitive", "S", "--k", 10, "--p", 5,
              "--out", out, "--summary", summ, "--audit", aud, "--quiet")
    assert res.exit_code == 0, res.output
    rel = pd.read_csv(out)
    assert aud.read_text().startswith("# STEWARD ONLY - DO NOT RELEASE")
    audit = pd.read_csv(aud, dtype={"id": str}, comment="#")
    s = json.loads(summ.read_text())
    assert "id" not in rel.columns
    assert list(rel.columns[:4]) == ["kgroup", "psubgroup", "A0_lo", "A0_hi"]
    assert {"pattern", "pattern_level", "S"} <= set(rel.columns)
    assert rel["pattern"].str.fullmatch("[a-e]{10}").all()
    assert list(audit.columns) == ["id", "output_row", "shuffle_seed"] and len(audit) == 300
    assert audit["shuffle_seed"].nunique() == 1
    for key in ("k", "P", "algorithm", "kgroups", "psubgroups", "suppressed", "value_loss", "pattern_loss",
                "mean_level", "runtime_seconds"):
        assert key in s
    assert s["k"] == 10 and s["P"] == 5 and s["algorithm"] == "kapra"
    df = pd.read_csv(SAMPLE)
    audit["output_row"] = audit["output_row"].astype("Int64")
    check_kp_anonymity(df, rel, audit, id_col="id", qi=QI, k=10, P=5, sensitive=["S"])  # re-read from disk


def test_naive_and_options(tmp_path):
    out = tmp_path / "o.csv"
    res = run(SAMPLE, "--id", "id", "--qi", ",".join(QI), "--sensitive", "S", "--k", 6, "--p", 3,
              "--algorithm", "naive", "--max-level", 4, "--l-diversity", 2, "--epsilon", 0.01,
              "--publish-values", "A0:A4", "--publish-patterns", "A3:A9", "--out", out)
    assert res.exit_code == 0, res.output
    rel = pd.read_csv(out)
    assert "A5_lo" not in rel.columns and rel["pattern"].str.len().eq(7).all()
    assert rel["pattern_level"].max() <= 4


def test_parquet_output(tmp_path):
    out = tmp_path / "o.parquet"
    res = run(SAMPLE, "--id", "id", "--qi", "A0:A9", "--k", 5, "--p", 2, "--out", out, "--quiet")
    assert res.exit_code == 0 and len(pd.read_parquet(out)) == 300


def _bad_table(tmp_path, mutate):
    df = random_walk(30, seed=1)
    mutate(df)
    p = tmp_path / "in.csv"
    df.to_csv(p, index=False)
    return p


@pytest.mark.parametrize("mutate, args, message", [
    (lambda d: None, ["--qi", "A0:A99"], "unknown column 'A99'"),
    (lambda d: None, ["--qi", "A0:A9", "--id", "nope"], "unknown id column 'nope'"),
    (lambda d: d.__setitem__("A3", d["A3"].astype(object).where(d.index != 7, "abc")), [], "'A3', line 9 (id 'R7'): value 'abc' is not a number"),
    (lambda d: d.__setitem__("A4", d["A4"].where(d.index != 2)), [], "'A4', line 4 (id 'R2'): missing value"),
    (lambda d: d.__setitem__("id", ["R0"] + list(d["id"][1:-1]) + ["R0"]), [], "id 'R0' occurs more than once"),
    (lambda d: None, ["--k", 3, "--p", 4], "P must not exceed k"),
    (lambda d: None, ["--algorithm", "mondrian"], "unknown algorithm 'mondrian'"),
    (lambda d: None, ["--max-level", 27], "max level must be in 1..26"),
    (lambda d: None, ["--l-diversity", 3, "--p", 2], "l <= P"),
    (lambda d: None, ["--l-diversity", 2], "positive epsilon"),
    (lambda d: None, ["--publish-values", "A0,A1", "--publish-patterns", "A2,A3"], "Disjoint"),
    (lambda d: None, ["--publish-values", "S"], "not a quasi-identifier"),
    (lambda d: None, ["--paa", 11], "PAA segments"),
    (lambda d: None, ["--qi", "A0,A1,S", "--sensitive", "S"], "two roles"),
    (lambda d: d.__setitem__("S", d["S"].astype(object).where(d.index != 4, "high")), ["--l-diversity", 2, "--epsilon", 1], "'S', line 6 (id 'R4'): value 'high' is not a number"),
    (lambda d: d.__setitem__("A5", d["A5"].where(d.index != 9, np.inf)), [], "'A5', line 11 (id 'R9'): value 'inf' is not finite"),
    # a reading near the float limit: the loss overflowed to inf, --summary/--report ended in a traceback
    # (found by hand, session 23)
    (lambda d: d.__setitem__("A5", d["A5"].where(d.index != 9, -1e308)), [], "'A5', line 11 (id 'R9'): value '-1e+308' is too large"),
    (lambda d: d.__setitem__("A5", d["A5"].where(d.index != 9, 1e100)), ["--report", "REPORT"], "value '1e+100' is too large"),
    (lambda d: d.__setitem__("id", d["id"].where(d.index != 6)), [], "id column 'id', line 8: missing id"),
    (lambda d: None, ["--k", 0, "--p", 0], "k must be at least 2"),
    (lambda d: None, ["--p", 0], "P must be at least 2"),
    # degenerate parameters that would publish raw data or change nothing (issue 12)
    (lambda d: None, ["--k", 1, "--p", 1], "k must be at least 2"),
    (lambda d: None, ["--k", 5, "--p", 1], "P must be at least 2"),
    (lambda d: None, ["--l-diversity", 1, "--epsilon", 0.1, "--sensitive", "S"], "l must be at least 2"),
    (lambda d: None, ["--paa", 5, "--publish-patterns", "A0:A4"], "--paa cannot be combined"),
    (lambda d: d.__setitem__("T", 1.0), ["--sensitive", "S,T", "--l-diversity", 2, "--epsilon", 1], "exactly one sensitive column"),
    (lambda d: None, ["--publish-values", ","], "--publish-values is empty"),
    (lambda d: None, ["--sensitive", "nope"], "unknown sensitive column 'nope'"),
])
def test_bad_input_exit_2_nothing_written(tmp_path, mutate, args, message):
    p = _bad_table(tmp_path, mutate)
    out = tmp_path / "out.csv"
    base = {"--id": "id", "--qi": "A0:A9", "--k": "4", "--p": "2", "--sensitive": "S"}
    extra = list(map(str, args))
    for i in range(0, len(extra), 2):
        base[extra[i]] = extra[i + 1]
    flat = [str(tmp_path / "r.html") if x == "REPORT" else x for kv in base.items() for x in kv]
    res = run(p, *flat, "--out", out, "--summary", tmp_path / "s.json")
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.split())
    assert not out.exists() and not (tmp_path / "s.json").exists()
    assert [f.name for f in tmp_path.iterdir()] == ["in.csv"]


def test_header_only_input(tmp_path):
    p = tmp_path / "in.csv"
    p.write_text("id,A0,A1\n")
    res = run(p, "--id", "id", "--qi", "A0:A1", "--k", 2, "--p", 2, "--out", tmp_path / "o.csv")
    assert res.exit_code == 2 and "no series" in res.output


def test_missing_input_file(tmp_path):
    res = run(tmp_path / "none.csv", "--id", "id", "--qi", "A0", "--out", tmp_path / "o.csv")
    assert res.exit_code == 2 and "not found" in res.output


def test_same_output_and_input_refused(tmp_path):
    p = _bad_table(tmp_path, lambda d: None)
    res = run(p, "--id", "id", "--qi", "A0:A9", "--k", 4, "--p", 2, "--out", p)
    assert res.exit_code == 2 and "refusing to overwrite an input" in res.output


def test_too_few_series_exit_1(tmp_path):
    p = _bad_table(tmp_path, lambda d: None)
    out = tmp_path / "o.csv"
    res = run(p, "--id", "id", "--qi", "A0:A9", "--k", 31, "--p", 2, "--out", out)
    assert res.exit_code == 1 and "fewer than k=31" in " ".join(res.output.split())
    assert not out.exists()


def test_verification_failure_writes_nothing(tmp_path, monkeypatch):
    from tempanon.errors import VerificationError
    import tempanon.verify as verify

    def broken(*a, **kw):
        raise VerificationError("simulated checker rejection")

    monkeypatch.setattr(verify, "check_kp_anonymity", broken)
    (tmp_path / "r").mkdir()
    out = tmp_path / "r" / "o.csv"
    res = run(SAMPLE, "--id", "id", "--qi", "A0:A9", "--k", 5, "--p", 2, "--out", out, "--audit", tmp_path / "a.csv")
    assert res.exit_code == 3 and "simulated" in res.output
    assert list(tmp_path.iterdir()) == [tmp_path / "r"] and list((tmp_path / "r").iterdir()) == []


def test_suppressed_series_have_empty_output_row(tmp_path):
    # 7 distinct shapes of 1 series + a block of identical shapes: with P=4 a few get suppressed
    rng = np.random.default_rng(0)
    rows = [rng.permutation(6).astype(float) for _ in range(3)] + [np.arange(6.0) + i for i in range(20)]
    df = pd.DataFrame(rows, columns=[f"A{j}" for j in range(6)])
    df.insert(0, "id", [f"x{i}" for i in range(len(rows))])
    p = tmp_path / "in.csv"
    df.to_csv(p, index=False)
    (tmp_path / "r").mkdir()
    aud, out = tmp_path / "a.csv", tmp_path / "r" / "o.csv"
    res = run(p, "--id", "id", "--qi", "A0:A5", "--k", 8, "--p", 4, "--max-level", 6, "--out", out, "--audit", aud,
              "--summary", tmp_path / "s.json")
    assert res.exit_code == 0, res.output
    audit = pd.read_csv(aud, comment="#")
    s = json.loads((tmp_path / "s.json").read_text())
    assert audit["output_row"].isna().sum() == s["suppressed"] < 4
    assert sorted(audit["output_row"].dropna().astype(int)) == list(range(len(pd.read_csv(out))))


@pytest.mark.skipif(not (SHARED / "randomwalk_10k_float.csv").exists(), reason="../shared/data/timeseries absent")
def test_shared_walk_10k(tmp_path):
    out = tmp_path / "o.csv"
    res = run(SHARED / "randomwalk_10k_float.csv", "--id", "id", "--qi", "A0:A9", "--sensitive", "S",
              "--k", 10, "--p", 5, "--out", out, "--summary", tmp_path / "s.json", "--quiet")
    assert res.exit_code == 0, res.output
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["published"] + s["suppressed"] == 10000 and s["suppressed"] < 5


@pytest.mark.skipif(not (SHARED / "italy_power_demand.csv").exists(), reason="../shared/data/timeseries absent")
def test_shared_italy_power(tmp_path):
    out = tmp_path / "o.csv"
    res = run(SHARED / "italy_power_demand.csv", "--id", "id", "--qi", "t0:t23", "--sensitive", "label",
              "--k", 8, "--p", 4, "--algorithm", "naive", "--out", out, "--quiet")
    assert res.exit_code == 0, res.output
    assert len(pd.read_csv(out)) == 1096


@pytest.mark.parametrize("where", ["same", "below"])
def test_audit_inside_the_release_folder_is_refused(tmp_path, where):
    """Issue 12: the audit (id -> release row) may not be written inside the release folder."""
    out = tmp_path / "o.csv"
    aud = tmp_path / "a.csv" if where == "same" else tmp_path / "sub" / "a.csv"
    res = run(SAMPLE, "--id", "id", "--qi", "A0:A9", "--k", 5, "--p", 2, "--out", out, "--audit", aud)
    assert res.exit_code == 2 and "inside the release folder" in " ".join(res.output.split())
    assert list(tmp_path.iterdir()) == []


def test_shuffle_seed_reproduces_the_release(tmp_path):
    (tmp_path / "r").mkdir()
    outs = []
    for i in range(2):
        out = tmp_path / "r" / f"o{i}.csv"
        res = run(SAMPLE, "--id", "id", "--qi", "A0:A9", "--k", 5, "--p", 2, "--out", out, "--shuffle-seed", 7,
                  "--audit", tmp_path / f"a{i}.csv", "--quiet")
        assert res.exit_code == 0, res.output
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    assert pd.read_csv(tmp_path / "a0.csv", comment="#")["shuffle_seed"].iloc[0] == 7
