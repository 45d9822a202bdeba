"""The `tempanon kanon` and `tempanon demo` commands end to end."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.verify import check_k_anonymity

runner = CliRunner()


@pytest.fixture
def setup(tmp_path, patients, patients_h):
    data = tmp_path / "patients.csv"
    patients.to_csv(data, sep=";", index=False)
    hdir = tmp_path / "h"
    for name, h in patients_h.items():
        h.to_csv(hdir / f"{name}.csv")
    return tmp_path, data, hdir


def _args(data, hdir, out, *extra):
    return ["kanon", str(data), "--qi", "Birthdate,Sex,Zipcode", "--hierarchies", str(hdir), "--out", str(out), *extra]


def test_kanon_writes_verified_output_and_summary(setup):
    tmp, data, hdir = setup
    out, summ = tmp / "out.csv", tmp / "s.json"
    r = runner.invoke(app, _args(data, hdir, out, "--k", "2", "--summary", str(summ), "--criterion", "height", "--quiet", "--keep", "Disease"))
    assert r.exit_code == 0, r.output
    rel = pd.read_csv(out, dtype=str)
    check_k_anonymity(rel, ["Birthdate", "Sex", "Zipcode"], 2)
    s = json.loads(summ.read_text())
    for key in ("k", "quasi_identifiers", "algorithm", "lattice_size", "nodes_checked", "anonymous_nodes", "minimal_nodes",
                "selected_node", "criterion", "suppressed_rows", "min_class_size", "loss", "runtime_seconds"):
        assert key in s
    assert s["quasi_identifiers"] == ["Birthdate", "Sex", "Zipcode"]
    assert s["selected_node"] == [1, 1, 0]
    assert sorted(map(tuple, s["minimal_nodes"])) == [(0, 1, 2), (1, 0, 2), (1, 1, 0)]
    # Zipcode stays at level 0; Disease is declared insensitive: the (Zipcode, Disease) pairs are the input's
    # (rows are shuffled within classes, so compared as a multiset)
    inp = pd.read_csv(data, sep=";", dtype=str)
    assert sorted(zip(rel["Zipcode"], rel["Disease"])) == sorted(zip(inp["Zipcode"], inp["Disease"]))
    assert s["verification"]["released_unchanged_declared_insensitive"] == ["Disease"]
    assert s["left_out"] == []
    # re-identification risk before and after, recounted here from the files
    risk = s["risk"]
    orig = pd.read_csv(data, sep=";", dtype=str)
    before_sizes = orig.groupby(["Birthdate", "Sex", "Zipcode"]).size()
    after_sizes = rel.groupby(["Birthdate", "Sex", "Zipcode"]).size()
    assert risk["before"]["k"] == before_sizes.min() and risk["after"]["k"] == after_sizes.min() >= 2
    assert risk["before"]["uniques"] == int((before_sizes == 1).sum()) and risk["after"]["uniques"] == 0
    assert risk["after"]["prosecutor_risk_max"] == pytest.approx(1 / after_sizes.min())
    assert risk["before"]["prosecutor_risk_max"] == 1.0


@pytest.mark.parametrize("algorithm", ["incognito", "super-roots", "cube", "binary-search", "bottom-up", "bottom-up-rollup", "exhaustive"])
def test_every_algorithm_from_the_cli(setup, algorithm):
    tmp, data, hdir = setup
    out = tmp / f"{algorithm}.csv"
    r = runner.invoke(app, _args(data, hdir, out, "--k", "2", "--algorithm", algorithm, "-q"))
    assert r.exit_code == 0, r.output
    check_k_anonymity(pd.read_csv(out, dtype=str), ["Birthdate", "Sex", "Zipcode"], 2)


def test_suppression_and_weights(setup):
    tmp, data, hdir = setup
    out, summ = tmp / "o.csv", tmp / "s.json"
    r = runner.invoke(app, _args(data, hdir, out, "--k", "2", "--criterion", "weighted-height",
                                 "--weights", "Birthdate=10,Sex=1,Zipcode=1", "--summary", str(summ), "-q"))
    assert r.exit_code == 0, r.output
    # by plain height <B1,S1,Z0> (height 2) wins; weighting Birthdate 10x picks <B0,S1,Z2> (3 < 11)
    assert json.loads(summ.read_text())["selected_node"] == [0, 1, 2]
    # k=3 with up to 3 of 6 rows suppressed: <B1,S1,Z1> is accepted by suppressing the two 5371*
    # rows; with Zipcode weighted 10x it beats <B1,S0,Z2> (12 < 21)
    r = runner.invoke(app, _args(data, hdir, out, "--k", "3", "--max-suppression", "0.5", "--criterion", "weighted-height",
                                 "--weights", "Zipcode=10", "--summary", str(summ), "-q"))
    assert r.exit_code == 0, r.output
    s = json.loads(summ.read_text())
    assert s["selected_node"] == [1, 1, 1]
    assert s["suppressed_rows"] == 2 and s["max_suppressed_rows"] == 3
    rel = pd.read_csv(out, dtype=str)
    assert len(rel) == 6 - s["suppressed_rows"]
    check_k_anonymity(rel, ["Birthdate", "Sex", "Zipcode"], 3)


def test_no_solution_exits_1_and_writes_nothing(setup):
    tmp, data, hdir = setup
    out = tmp / "none.csv"
    r = runner.invoke(app, _args(data, hdir, out, "--k", "7"))
    assert r.exit_code == 1
    assert "k=7 is impossible for this data" in r.output and "only 6 rows" in r.output
    assert not out.exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--k", "1"], "k must be at least 2"),
        (["--k", "2", "--algorithm", "nope"], "unknown algorithm"),
        (["--k", "2", "--max-suppression", "1.5"], "max_suppression"),
        (["--k", "2", "--weights", "Sex"], "expected name=number"),
    ],
)
def test_bad_usage_exits_2(setup, extra, message):
    tmp, data, hdir = setup
    out = tmp / "bad.csv"
    r = runner.invoke(app, _args(data, hdir, out, *extra))
    assert r.exit_code == 2
    assert message in r.output
    assert not out.exists()


def test_unknown_column_and_missing_file_exit_2(setup):
    tmp, data, hdir = setup
    r = runner.invoke(app, ["kanon", str(data), "--qi", "Age", "--hierarchies", str(hdir), "--k", "2", "--out", str(tmp / "x.csv")])
    assert r.exit_code == 2 and "unknown quasi-identifier 'Age'" in r.output
    r = runner.invoke(app, ["kanon", str(tmp / "nope.csv"), "--qi", "Sex", "--hierarchies", str(hdir), "--k", "2", "--out", str(tmp / "x.csv")])
    assert r.exit_code == 2 and "not found" in r.output


def test_demo_runs_on_bundled_adult(tmp_path):
    r = runner.invoke(app, ["demo", "--out-dir", str(tmp_path), "--quiet"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "adult-anonymized.csv"
    s = json.loads((tmp_path / "adult-summary.json").read_text())
    assert s["rows_in"] == 30162 and s["lattice_size"] == 12960
    rel = pd.read_csv(out, dtype=str, keep_default_na=False)
    check_k_anonymity(rel, s["quasi_identifiers"], 5)
    assert str(out) in r.output.replace("\n", "")
    levels = ", ".join(f"{q}={v}" for q, v in s["selected_levels"].items())
    assert f"Selected (min. loss {s['loss']:.4f}): {levels}" in r.output


def test_l_diversity_from_the_cli(setup):
    tmp, data, hdir = setup
    out, summ = tmp / "l.csv", tmp / "l.json"
    r = runner.invoke(app, _args(data, hdir, out, "--k", "2", "--sensitive", "Disease", "--l", "2", "--summary", str(summ), "-q"))
    assert r.exit_code == 0, r.output
    from tempanon.verify import check_l_diverse_classes

    check_l_diverse_classes(pd.read_csv(out, dtype=str), ["Birthdate", "Sex", "Zipcode"], "Disease", 2)
    assert json.loads(summ.read_text())["l"] == 2
    r = runner.invoke(app, _args(data, hdir, out, "--k", "2", "--l", "2"))
    assert r.exit_code == 2 and "needs a sensitive column" in " ".join(r.output.split())


def test_l_diversity_variants_budget_and_lattice_limit_on_the_cli(setup):
    """--l-diversity/--c reach the API and the summary; --max-nodes stops with a verified release and
    says so on stderr and in the summary; --max-lattice refuses with exit 2; the plan is printed."""
    tmp, data, hdir = setup
    out, summ = tmp / "l.csv", tmp / "l.json"
    r = runner.invoke(app, _args(data, hdir, out, "--k", "2", "--sensitive", "Disease", "--l", "2", "--l-diversity", "recursive",
                                 "--c", "2", "--max-suppression", "0.34", "--summary", str(summ)))
    assert r.exit_code == 0, r.output
    assert "search plan: lattice of 12 nodes" in r.output
    s = json.loads(summ.read_text())
    assert s["l_diversity"] == {"variant": "recursive", "l": 2, "c": 2.0}
    assert s["checks"]["search_space"] == 3 * 3 * 4 - 1 and s["checks"]["total"] <= s["checks"]["search_space"]
    out2, summ2 = tmp / "b.csv", tmp / "b.json"
    r = runner.invoke(app, _args(data, hdir, out2, "--k", "2", "--max-nodes", "2", "--summary", str(summ2)))
    assert r.exit_code == 0, r.output
    assert "stopped early (--max-nodes 2 reached)" in r.output and "best verified result" in r.output
    s2 = json.loads(summ2.read_text())
    assert s2["stopped_early"] == "--max-nodes 2 reached" and s2["complete"] is False
    check_k_anonymity(pd.read_csv(out2, dtype=str), ["Birthdate", "Sex", "Zipcode"], 2)
    out3 = tmp / "c.csv"
    r = runner.invoke(app, _args(data, hdir, out3, "--k", "2", "--max-lattice", "5"))
    assert r.exit_code == 2 and "lattice has 12 nodes" in r.output and "--max-lattice" in r.output
    assert not out3.exists()
    r = runner.invoke(app, _args(data, hdir, out3, "--k", "2", "--sensitive", "Disease", "--l", "2", "--l-diversity", "shannon"))
    assert r.exit_code == 2 and "unknown l-diversity variant" in r.output
