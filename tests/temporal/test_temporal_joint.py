"""Joint generalization of time and other quasi-identifiers, against brute force over the product."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.errors import NoSolutionError
from tempanon.hierarchy import Hierarchy
from tempanon.temporal.api import anonymize_timestamped
from tempanon.temporal.joint import GranularityHierarchy
from tempanon.temporal.parse import parse_timestamps
from tempanon.temporal.relations import build_dag, span_of
from tempanon.temporal.granularity import parse_granularity

AGE_ROWS = [[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"] for a in range(20, 60)]
ZIP_ROWS = [[z, z[:2] + "*", "*"] for z in ("1301", "1302", "1401", "1402")]

PANDAS_LABEL = {
    "day": lambda t: t.dt.strftime("%Y-%m-%d"),
    "month": lambda t: t.dt.strftime("%Y-%m"),
    "year": lambda t: t.dt.strftime("%Y"),
    "quarter": lambda t: t.dt.year.astype(str) + "Q" + t.dt.quarter.astype(str),
    "week": lambda t: t.dt.isocalendar()["year"].astype(str) + "-W" + t.dt.isocalendar()["week"].map("{:02d}".format),
}


def test_granularity_hierarchy_is_a_dimension_of_the_dag():
    t = pd.Series(["2005-01-31", "2005-02-01", "2005-02-01", None, "2005-12-26"])
    inst, miss, _ = parse_timestamps(t)
    g0 = parse_granularity("day")
    dag = build_dag(g0, [parse_granularity(n) for n in ("week", "month", "quarter", "year")], span_of(inst[~miss]))
    dim, base = GranularityHierarchy(dag, inst, miss, g0.index(inst)).encode(t)
    assert dim.level_names == ("day", "week", "month", "quarter", "year")
    assert [sorted(dim.level_names[p] for p in ps) for ps in dim.parents] == [["month", "week"], [], ["quarter"],
                                                                               ["year"], []]  # fmt: skip
    assert base[1] == base[2] and base[3] == dim.n_base - 1  # missing is its own base value
    wk = dim.labels[1][dim.codes[1][base]]
    assert list(wk) == ["2005-W05", "2005-W05", "2005-W05", None, "2005-W52"]
    mo = dim.labels[2][dim.codes[2][base]]
    assert list(mo) == ["2005-01", "2005-02", "2005-02", None, "2005-12"]
    assert dim.up(2, 4) is not None  # month rolls up to year
    assert not dim.generalizes(1, 2)  # week does not generalize to month


def _oracle(df, k, names, max_sup):
    t = pd.to_datetime(df["T"])
    maps = {"AGE": {r[0]: r for r in AGE_ROWS}, "ZIP": {r[0]: r for r in ZIP_ROWS}}
    day = t.dt.strftime("%Y-%m-%d")
    out = {}
    for tname, a, z in itertools.product(["day", *names], range(3), range(3)):
        frame = pd.DataFrame({
            "T": PANDAS_LABEL[tname](t).to_numpy(),
            "AGE": df["AGE"].map(lambda v: maps["AGE"][v][a]).to_numpy(),
            "ZIP": df["ZIP"].map(lambda v: maps["ZIP"][v][z]).to_numpy(),
            "P": df["P"].to_numpy(), "D": day.to_numpy(),
        })  # fmt: skip
        grp = frame.groupby(["T", "AGE", "ZIP"])
        resp, size, nts = grp["P"].nunique(), grp.size(), grp["D"].nunique()
        small = resp < k
        kept = resp[~small]
        out[(tname, str(a), str(z))] = (int(size[small].sum()) <= max_sup, int(kept.min()) if len(kept) else 0,
                                        int(kept.sum()))  # fmt: skip
    return out


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 40),
    n_resp=st.integers(2, 8),
    k=st.integers(2, 3),
    supp=st.sampled_from([0.0, 0.15]),
    seed=st.integers(0, 2**31),
)
def test_joint_search_matches_brute_force_over_the_product(n, n_resp, k, supp, seed):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "P": rng.integers(0, n_resp, n).astype(str),
        "AGE": rng.integers(20, 60, n).astype(str),
        "ZIP": rng.choice(["1301", "1302", "1401", "1402"], n),
        "T": (pd.Timestamp("2005-01-01") + pd.to_timedelta(rng.integers(0, 500, n), unit="D")).strftime("%Y-%m-%d"),
    })  # fmt: skip
    names = ["week", "month", "quarter", "year"]
    hier = {"AGE": Hierarchy.from_rows("AGE", AGE_ROWS), "ZIP": Hierarchy.from_rows("ZIP", ZIP_ROWS)}
    every = _oracle(df, k, names, int(np.floor(supp * n + 1e-9)))
    truth = {x: v[1:] for x, v in every.items() if v[0]}
    try:
        res = anonymize_timestamped(df, time="T", qi=["AGE", "ZIP"], uid="P", k=k, granularities=names,
                                    hierarchies=hier, max_suppression=supp)  # fmt: skip
    except NoSolutionError:
        assert not truth
        return
    s = res.summary
    assert s["anonymous_nodes"] == len(truth)
    found = {(m["T"], m["AGE"], m["ZIP"]) for m in s["minimal_k_anonymous"]}
    levels = {"T": ["day", *names]}
    order_t = {"day": ["day", "week", "month", "quarter", "year"], "week": ["week"], "month": ["month", "quarter", "year"],
               "quarter": ["quarter", "year"], "year": ["year"]}  # fmt: skip
    coarser = lambda a, b: b[0] in order_t[a[0]] and int(a[1]) <= int(b[1]) and int(a[2]) <= int(b[2])  # noqa: E731
    minimal = {x for x in truth if not any(y != x and coarser(y, x) for y in truth)}
    assert found == minimal, levels
    for m in s["minimal_k_anonymous"]:
        assert (m["gen_m"], m["gen_s"]) == truth[(m["T"], m["AGE"], m["ZIP"])]
    c_key = lambda v: (v[0], -v[1])  # noqa: E731  (<=_c)
    pool = minimal if supp == 0 else set(truth)  # with suppression gen_c is not monotone: every anonymous node
    best = min((truth[x] for x in pool), key=c_key)
    chosen = (s["granularity"]["T"], s["granularity"]["AGE"], s["granularity"]["ZIP"])
    assert c_key(truth[chosen]) == c_key(best) and truth[chosen] == (s["gen_m"], s["gen_s"])
    assert "P" not in res.released.columns
    for c in s["candidates"]:  # time alone, AGE and ZIP unchanged
        assert (c["k_anonymous"], c["gen_m"], c["gen_s"]) == every[(c["granularity"], "0", "0")]


def test_time_granularities_encoder_in_the_incognito_engine():
    from tempanon.kanon import kanonymize
    from tempanon.temporal.joint import TimeGranularities

    df = pd.DataFrame({"P": list("abcdabcd"), "A": list("xxyyxxyy"),
                       "T": ["2005-01-03 10:00", "2005-01-04 11:00", "2005-01-05 10:00", "2005-01-06 09:00",
                             "2005-02-03 10:00", "2005-02-04 11:00", "2005-02-05 10:00", "2005-02-06 09:00"]})  # fmt: skip
    chain = TimeGranularities("hour,day,month,year")
    dim, base = chain.encode(df["T"].rename("T"))
    assert dim.is_chain and dim.level_names == ("hour", "day", "month", "year")  # data: full hours
    res = kanonymize(df, ["T", "A"], {"T": chain, "A": Hierarchy.from_rows("A", [["x", "*"], ["y", "*"]])}, k=2,
                     uid="P", criterion="height")  # fmt: skip
    assert res.level_names(res.selected_node) == {"T": "month", "A": "0"}
    assert sorted(set(res.table["T"])) == ["2005-01", "2005-02"]


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_config_dict_hierarchies_are_taken(engine):
    """anonymize_timestamped takes a hierarchy as a config dict, as kanonymize and job files do (it was an
    AttributeError, "'dict' object has no attribute 'encode'", on every engine); the same release on numpy
    and DuckDB, every released value a level of its hierarchy."""
    import pandas as pd

    from tempanon.temporal.api import anonymize_timestamped

    df = pd.DataFrame({"uid": [f"p{i % 5}" for i in range(40)], "t": [f"2023-0{1 + i % 3}-1{i % 9}" for i in range(40)],
                       "C": list("AB") * 20, "A": [str(20 + i % 30) for i in range(40)]})
    hier = {"C": {"type": "suppression"}, "A": {"type": "intervals", "widths": [10, 20]}}
    got = anonymize_timestamped(df, time="t", uid="uid", qi=["C", "A"], k=2, granularities=["month", "year"], engine=engine,
                                hierarchies=hier)
    want = anonymize_timestamped(df, time="t", uid="uid", qi=["C", "A"], k=2, granularities=["month", "year"],
                                 engine="numpy", hierarchies=hier)
    rows = lambda r: r.released.sort_values(list(r.released.columns)).reset_index(drop=True)  # noqa: E731 (shuffled)
    assert rows(got).equals(rows(want)) and got.chosen == want.chosen
    assert set(got.released["C"]) <= {"A", "B", "*"}
