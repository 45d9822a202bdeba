"""Risk and privacy measures (tempanon.metrics.risk, tempanon check) against a brute-force oracle
and against pycanon."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import InputError
from tempanon.metrics import measure
from tempanon.steward import check_table

runner = CliRunner()


def oracle(df, qi, uid=None, sens=(), threshold=0.2):
    """Plain-Python definitions (docs of tempanon.metrics.risk), one dict per class."""
    def norm(v):
        return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)

    classes = defaultdict(list)
    for i in range(len(df)):
        classes[tuple(norm(df[q].iloc[i]) for q in qi)].append(i)
    size = {}
    for key, rows in classes.items():
        size[key] = len({norm(df[uid].iloc[r]) for r in rows}) if uid else len(rows)
    out = {"k": min(len(r) for r in classes.values()), "classes": len(classes)}
    out["respondent_k"] = min(size.values()) if uid else None
    risks = [1 / size[key] for key, rows in classes.items() for _ in rows]
    out["prosecutor_risk_max"] = max(risks)
    out["prosecutor_risk_mean"] = sum(risks) / len(risks)
    out["records_at_risk"] = sum(r > threshold for r in risks) / len(risks)
    out["uniques"] = sum(len(rows) for key, rows in classes.items() if size[key] == 1)
    ld = lf = le = None
    for s in sens:
        for rows in classes.values():
            c = Counter(norm(df[s].iloc[r]) for r in rows)
            d = len(c)
            f = len(rows) // max(c.values())
            h = -sum(v / len(rows) * math.log(v / len(rows)) for v in c.values())
            e = math.floor(math.exp(h) + 1e-9)
            ld = d if ld is None else min(ld, d)
            lf = f if lf is None else min(lf, f)
            le = e if le is None else min(le, e)
    out.update(l_distinct=ld, l_frequency=lf, l_entropy=le)
    return out


values = st.one_of(st.sampled_from(["a", "b", "c"]), st.none())


@st.composite
def tables(draw):
    n = draw(st.integers(1, 40))
    cols = {c: draw(st.lists(values, min_size=n, max_size=n)) for c in ("q1", "q2", "s")}
    cols["u"] = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    return pd.DataFrame(cols, dtype=object)


@settings(max_examples=60, deadline=None)
@given(tables(), st.booleans())
def test_measures_match_brute_force(df, with_uid):
    uid = "u" if with_uid else None
    got = measure(df, ["q1", "q2"], uid=uid, sensitive=["s"]).as_dict()
    want = oracle(df, ["q1", "q2"], uid=uid, sens=["s"])
    for key, val in want.items():
        if isinstance(val, float):
            assert got[key] == pytest.approx(val), key
        else:
            assert got[key] == val, key
    assert got["l_frequency"] <= got["l_distinct"]


@settings(max_examples=40, deadline=None)
@given(tables(), st.sampled_from(["distinct", "frequency", "entropy"]), st.integers(2, 3))
def test_check_names_the_least_diverse_class(df, model, l):
    """A failed l check says how many classes are below l and shows a least diverse one: brute force
    per class (the oracle's definitions) over two sensitive columns, the smallest of the two."""
    df = df.assign(t=df["q2"])
    qi, sens = ["q1"], ["s", "t"]
    per = {}
    for i in range(len(df)):
        key = "" if df["q1"].iloc[i] is None else df["q1"].iloc[i]
        per.setdefault(key, []).append(i)
    lvals = {key: min(oracle(df.iloc[rows], qi, sens=[c])[f"l_{model}"] for c in sens) for key, rows in per.items()}
    worst = min(lvals.values())
    res = check_table(df, qi, sensitive=sens, l=l, l_model=model)
    if worst >= l:
        assert res.failures == []
        return
    msg = res.failures[0]
    below = sum(v < l for v in lvals.values())
    assert f"is {worst}, below the requested {l}: {below} of {len(per)} classes have l below {l}" in msg
    line = int(msg.rsplit("(line ", 1)[1].rstrip(")"))
    first = df["q1"].iloc[line - 2]
    assert lvals["" if first is None else first] == worst
    assert min(i for key, rows in per.items() if lvals[key] == worst for i in rows) == line - 2  # the first such row


def test_missing_values_are_a_category():
    df = pd.DataFrame({"a": ["x", None, None, "x"], "s": ["p", "q", "p", None]}, dtype=object)
    r = measure(df, ["a"], sensitive=["s"])
    assert (r.k, r.classes, r.l_distinct) == (2, 2, 2)


def test_several_sensitive_columns_take_the_minimum():
    df = pd.DataFrame({"a": list("xxxx"), "s": list("pqrs"), "t": list("ppqq")})
    r = measure(df, ["a"], sensitive=["s", "t"])
    assert (r.l_distinct, r.l_frequency) == (2, 2)


def test_cross_check_with_pycanon():
    anonymity = pytest.importorskip("pycanon.anonymity")
    rng = np.random.default_rng(7)
    for trial in range(8):
        n = int(rng.integers(20, 300))
        df = pd.DataFrame({
            "age": rng.integers(20, 20 + int(rng.integers(2, 8)), n).astype(str),
            "sex": rng.choice(["M", "F"], n),
            "zip": rng.choice(["1", "2", "3"], n),
            "dx": rng.choice(["flu", "cold", "hiv", "ulcer"], n, p=[0.5, 0.3, 0.1, 0.1]),
        }).astype(object)
        qi = ["age", "sex", "zip"]
        r = measure(df, qi, sensitive=["dx"])
        assert r.k == anonymity.k_anonymity(df, qi), trial
        assert r.l_distinct == anonymity.l_diversity(df, qi, ["dx"]), trial
        assert r.l_entropy == anonymity.entropy_l_diversity(df, qi, ["dx"]), trial
        alpha, k2 = anonymity.alpha_k_anonymity(df, qi, ["dx"])
        assert k2 == r.k
        # l_frequency = min floor(|E| / maxfreq) = floor(1 / alpha), alpha = max relative frequency
        assert r.l_frequency == math.floor(1 / alpha + 1e-9), trial


def test_api_errors():
    df = pd.DataFrame({"a": [1, 2], "s": [1, 2], "u": [1, 1]})
    with pytest.raises(InputError, match="unknown quasi-identifier 'b'"):
        measure(df, ["b"])
    with pytest.raises(InputError, match="both quasi-identifier and sensitive"):
        measure(df, ["a"], sensitive=["a"])
    with pytest.raises(InputError, match="cannot also be"):
        measure(df, ["a"], uid="a")
    with pytest.raises(InputError, match="threshold"):
        measure(df, ["a"], threshold=0)
    with pytest.raises(InputError, match="needs a sensitive column"):
        check_table(df, ["a"], l=2)
    with pytest.raises(InputError, match="l-diversity model"):
        check_table(df, ["a"], sensitive=["s"], l=2, l_model="recursive")


# ---- the CLI ----------------------------------------------------------------------------------
@pytest.fixture
def table(tmp_path):
    df = pd.DataFrame({
        "pid": [1, 1, 2, 3, 4, 5, 6, 6],
        "age": ["30", "30", "30", "30", "40", "40", "40", "40"],
        "sex": list("MMMMFFFF"),
        "dx": ["flu", "flu", "hiv", "cold", "flu", "flu", "flu", "cold"],
    })
    p = tmp_path / "t.csv"
    df.to_csv(p, sep=";", index=False)
    return p


def test_check_json_keys_and_values(table):
    r = runner.invoke(app, ["check", str(table), "--qi", "age,sex", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    for key in ("k", "respondent_k", "l_distinct", "l_frequency", "uniques", "prosecutor_risk_max", "prosecutor_risk_mean"):
        assert key in d
    assert d["k"] == 4 and d["respondent_k"] is None and d["l_distinct"] is None and d["l_frequency"] is None
    assert d["prosecutor_risk_max"] == pytest.approx(0.25) and d["uniques"] == 0
    r = runner.invoke(app, ["check", str(table), "--qi", "age,sex", "--uid", "pid", "--sensitive", "dx", "--json"])
    d = json.loads(r.stdout)
    assert (d["respondent_k"], d["l_distinct"], d["l_frequency"]) == (3, 2, 1)
    assert d["prosecutor_risk_max"] == pytest.approx(1 / 3)


def test_check_gates_on_requested_levels(table):
    ok = runner.invoke(app, ["check", str(table), "--qi", "age,sex", "--k", "4", "--sensitive", "dx", "--l", "2",
                             "--l-model", "distinct", "-q"])  # fmt: skip
    assert ok.exit_code == 0, ok.output
    bad_k = runner.invoke(app, ["check", str(table), "--qi", "age,sex", "--uid", "pid", "--k", "4"])
    assert bad_k.exit_code == 1
    assert "respondent-level k is 3, below the requested 4" in bad_k.output and "age=" in bad_k.output
    bad_l = runner.invoke(app, ["check", str(table), "--qi", "age,sex", "--sensitive", "dx", "--l", "2"])  # (frequency: the default)
    assert bad_l.exit_code == 1 and "frequency l-diversity of dx is 1" in bad_l.output
    assert "1 of 2 classes have l below 2; the least diverse, with l = 1, is age=40, sex=F (line 6)" in bad_l.output
    quiet = runner.invoke(app, ["check", str(table), "--qi", "age,sex", "--k", "5", "-q"])
    assert quiet.exit_code == 1 and quiet.output == ""


@pytest.mark.parametrize(
    "args, message",
    [
        (["--qi", "age,height"], "unknown quasi-identifier 'height'"),
        (["--qi", "age", "--l", "2"], "needs a sensitive column"),
        (["--qi", "age", "--sensitive", "dx", "--l", "2", "--l-model", "x"], "l-diversity model"),
        (["--qi", "age", "--uid", "nobody"], "unknown respondent id"),
        (["--qi", "age", "--k", "0"], "positive integer"),
    ],
)
def test_check_bad_input_exit_2(table, args, message):
    r = runner.invoke(app, ["check", str(table), *args])
    assert r.exit_code == 2
    assert message in r.output


def test_check_missing_file(tmp_path):
    r = runner.invoke(app, ["check", str(tmp_path / "nope.csv"), "--qi", "a"])
    assert r.exit_code == 2 and "input file not found" in r.output


def test_check_empty_table(tmp_path):
    p = tmp_path / "e.csv"
    p.write_text("age;sex\n")
    r = runner.invoke(app, ["check", str(p), "--qi", "age,sex", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["k"] is None
    r = runner.invoke(app, ["check", str(p), "--qi", "age,sex", "--k", "2"])
    assert r.exit_code == 1 and "no rows" in r.output
