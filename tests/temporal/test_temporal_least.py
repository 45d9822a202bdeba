"""Algorithm 1 (least generalization), the metrics, respondent-level k, against brute force."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.errors import InputError, NoSolutionError, VerificationError
from tempanon.temporal.api import anonymize_timestamped
from tempanon.temporal.api import encode_columns, encode_uid
from tempanon.temporal.generator import example_exams, hospital_exams, paper_table3
from tempanon.temporal.granularity import GAP, parse_granularity
from tempanon.temporal.least import Check, check_granularity, leq_c, prepare, sort_key
from tempanon.temporal.parse import parse_timestamps
from tempanon.verify import check_timestamped_release


def table3() -> pd.DataFrame:
    """The Example 3 relation (see :func:`tempanon.temporal.generator.example_exams`)."""
    return example_exams()


def _by_name(summary):
    return {c["granularity"]: c for c in summary["candidates"]}


# ---- the paper's Tables 3, 4, 5 verbatim (Examples 1-3) ----------------------------------------
TABLE4_T = ["2006-W01", "2006-W01", "2006-W02", "2006-W02", "2006-W06", "2006-W06"]  # "2006-week 1, 1, 2, 2, 6, 6"
TABLE5_T = ["2006-01", "2006-01", "2006-01", "2006-01", "2006-02", "2006-02"]  # "2006-month 1, 1, 1, 1, 2, 2"


def test_paper_example_1_table3_is_not_2_anonymous():
    df = paper_table3()
    prep = prepare(encode_columns(df, ["Q"]), *parse_timestamps(df["T"])[:2], encode_uid(df, "UID"))
    day = check_granularity(prep, parse_granularity("day"), 2)
    assert not day.k_anonymous and day.min_respondents == 1  # f(q1, 2006-01-11) = 1
    whole = check_granularity(prep, parse_granularity("day"), 1)  # no class suppressed: R itself
    assert whole.k_anonymous and (whole.gen_m, whole.gen_s) == (1, 2 + 1 + 1 + 1 + 1)


def test_paper_example_2_and_3_tables_4_and_5():
    df = paper_table3()
    res = anonymize_timestamped(df, time="T", qi=["Q"], sensitive=["data"], uid="UID", k=2, granularities="week,month")
    s = res.summary
    cand = _by_name(s)
    assert s["data_granularity"] == "day" and cand["day"]["k_anonymous"] is False
    # Table 4 (Example 2): week, 2-anonymous; Table 5: month, 2-anonymous
    assert cand["week"]["k_anonymous"] and cand["month"]["k_anonymous"]
    # Example 3: gen_m(week) = gen_m(month) = 2; gen_s(week) = 2+2+2 = 6, gen_s(month) = 3+2 = 5
    assert (cand["week"]["gen_m"], cand["week"]["gen_s"]) == (2, 6)
    assert (cand["month"]["gen_m"], cand["month"]["gen_s"]) == (2, 5)
    assert leq_c((2, 6), (2, 5)) and not leq_c((2, 5), (2, 6))  # gen_c(R_week) <=_c gen_c(R_month)
    assert s["granularity"] == "week" and s["gen_c"] == [2, 6]  # the least generalization
    rel = res.released.sort_index()  # released rows are shuffled within classes; the index is the input row
    assert list(rel.columns) == ["Q", "T", "data"] and list(rel["T"]) == TABLE4_T
    assert list(rel["data"]) == ["d0", "d1", "d2", "d3", "d4", "d5"]
    # each metric alone: gen_m ties (first listed wins), gen_s (>=) prefers week too
    assert anonymize_timestamped(df, time="T", qi=["Q"], sensitive=["data"], uid="UID", k=2, granularities="week,month",
                                 metric="gen_s").summary["granularity"] == "week"  # fmt: skip
    month = anonymize_timestamped(df, time="T", qi=["Q"], sensitive=["data"], uid="UID", k=2, granularities="month,week", metric="gen_m")
    assert month.summary["granularity"] == "month" and list(month.released.sort_index()["T"]) == TABLE5_T


def test_paper_procedure_2_counts_the_first_tuple():
    # As printed, Procedure 2 starts with U = {} and never adds the first tuple's respondent:
    # the first week class {u1, u2} would count 1 and gen_s(week) would be 5, not Example 3's 6.
    df = paper_table3()
    prep = prepare(encode_columns(df, ["Q"]), *parse_timestamps(df["T"])[:2], encode_uid(df, "UID"))
    week = check_granularity(prep, parse_granularity("week"), 2)
    assert (week.gen_m, week.gen_s, week.classes) == (2, 6, 3)


def test_leq_c_is_the_papers_total_order():
    assert leq_c((1, 0), (2, 100)) and not leq_c((2, 100), (1, 0))  # a < a'
    assert leq_c((2, 6), (2, 6)) and leq_c((2, 7), (2, 6)) and not leq_c((2, 5), (2, 6))  # a = a', b >= b'
    pairs = [(a, b) for a in range(4) for b in range(4)]
    for x in pairs:  # total and consistent with sort_key
        for y in pairs:
            assert leq_c(x, y) or leq_c(y, x)
            kx = sort_key(Check("", True, 0, x[0], x[1], 0, 0), "gen_c", 0)
            ky = sort_key(Check("", True, 0, y[0], y[1], 0, 0), "gen_c", 0)
            assert leq_c(x, y) == (kx <= ky)


def test_example_exams_month_wins_when_timestamps_share_weeks_not_months():
    # the remark after Example 3: gen_c(R_month) <=_c gen_c(R_week) for some R
    df = example_exams()
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2, granularities="week,month")
    cand = _by_name(res.summary)
    assert (cand["week"]["gen_m"], cand["week"]["gen_s"]) == (2, 22)
    assert (cand["month"]["gen_m"], cand["month"]["gen_s"]) == (2, 24)
    assert res.summary["granularity"] == "month"
    assert list(res.released.loc[[0, 2, 20], "Date"]) == ["2005-01", "2005-02", "2005-12"]
    wq = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2, granularities="week,quarter")
    assert wq.summary["granularity"] == "week" and wq.summary["gen_s"] == 22
    assert list(wq.released.loc[[0, 2, 20, 30], "Date"]) == ["2005-W05", "2005-W05", "2005-W48", "2005-W49"]


def test_suppression_does_not_prune_what_the_metric_may_prefer():
    # day releases one class of 3 respondents (the others suppressed): gen_c <3,3>; week keeps every
    # class, <2,5>. Week is coarser, yet less general by <=_c: pruning it would pick day.
    rows = [("a", "2006-01-02"), ("b", "2006-01-02"), ("c", "2006-01-02"),
            ("d", "2006-01-03"), ("e", "2006-01-04")]
    df = pd.DataFrame(rows, columns=["P", "T"])
    res = anonymize_timestamped(df, time="T", uid="P", k=2, granularities="week", max_suppression=0.4)
    c = _by_name(res.summary)
    assert (c["day"]["gen_m"], c["day"]["gen_s"], c["day"]["suppressed"]) == (3, 3, 2)
    assert (c["week"]["gen_m"], c["week"]["gen_s"], c["week"]["suppressed"]) == (5, 5, 0)
    rows2 = rows + [("f", "2006-01-09"), ("g", "2006-01-10")]
    df2 = pd.DataFrame(rows2, columns=["P", "T"])
    res2 = anonymize_timestamped(df2, time="T", uid="P", k=2, granularities="week", max_suppression=0.6)
    c2 = _by_name(res2.summary)
    assert (c2["day"]["gen_m"], c2["day"]["gen_s"]) == (3, 3) and c2["day"]["k_anonymous"]
    assert (c2["week"]["gen_m"], c2["week"]["gen_s"]) == (2, 7) and c2["week"]["evaluated_by_algorithm"]
    assert res2.summary["granularity"] == "week"
    # a bound, not pruning: with week <2,7> found, month (gen_s <= 7 respondents of day's classes,
    # gen_m >= 2) cannot beat it and is skipped; the summary says why
    res4 = anonymize_timestamped(df2, time="T", uid="P", k=2, granularities="week,month", max_suppression=0.6)
    m = _by_name(res4.summary)["month"]
    assert res4.summary["granularity"] == "week"
    assert not m["evaluated_by_algorithm"] and m["not_checked"].startswith("bounded: cannot beat week")
    assert m["k_anonymous"] is True  # implied by day, anonymous within the limit
    # without suppression the pruning is sound and used
    res3 = anonymize_timestamped(df2, time="T", uid="P", k=2, granularities="week,2weeks")
    assert _by_name(res3.summary)["2weeks"]["evaluated_by_algorithm"] is False


def test_respondent_level_differs_from_tuple_level():
    # p5 has two exams on 2005-12-06: two tuples, one respondent.
    df = pd.DataFrame({"P": ["p5", "p5", "p6", "p6"], "A": ["x"] * 4,
                       "T": ["2005-12-06", "2005-12-06", "2005-12-13", "2005-12-13"]})  # fmt: skip
    tuple_level = anonymize_timestamped(df, time="T", qi=["A"], k=2, granularities="week,month")
    assert tuple_level.summary["granularity"] == "day"  # 2 tuples per day
    resp = anonymize_timestamped(df, time="T", qi=["A"], uid="P", k=2, granularities="week,month")
    assert resp.summary["granularity"] == "month"  # the two weeks hold one patient each
    assert _by_name(resp.summary)["week"]["k_anonymous"] is False


def test_pruning_skips_granularities_coarser_than_an_anonymous_one():
    df = table3()
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2,
                                granularities="week,2weeks,month,quarter,year")  # fmt: skip
    c = _by_name(res.summary)
    assert c["2weeks"]["evaluated_by_algorithm"] is False and c["2weeks"]["pruned_coarser_than"] == "week"
    assert c["2weeks"]["k_anonymous"] and c["2weeks"]["gen_m"] is None  # implied, not re-checked
    assert "pruned: coarser than week" in c["2weeks"]["not_checked"]
    assert res.summary["granularity"] == "month"


def test_suppression_and_no_solution():
    df = table3()
    with pytest.raises(NoSolutionError, match="no granularity"):
        anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=3, granularities="week,month")
    # allowing Addr3's two tuples to go (2 of 32 tuples)
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2,
                                granularities="week,month", max_suppression=0.07)  # fmt: skip
    assert res.summary["granularity"] == "day" and res.summary["suppressed"] == 2
    assert "Addr3" not in set(res.released["Address"])


def test_missing_time_is_a_category_and_bad_input():
    df = table3()
    df.loc[len(df)] = ["p1", "Addr1", None, "Ex9"]
    df.loc[len(df)] = ["p2", "Addr1", "", "Ex9"]
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2, granularities="week,month")
    assert res.released["Date"].isna().sum() == 2
    with pytest.raises(InputError, match="line 34"):
        bad = table3()
        bad.loc[32] = ["p1", "Addr1", "31/02/2005x", "Ex1"]
        anonymize_timestamped(bad, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2)
    with pytest.raises(InputError, match="unknown quasi-identifier"):
        anonymize_timestamped(df, time="Date", qi=["Nope"], uid="Patient", k=2)
    with pytest.raises(InputError, match="respondent identifier is missing"):
        d2 = table3()
        d2.loc[3, "Patient"] = None
        anonymize_timestamped(d2, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2)
    with pytest.raises(InputError, match="metric"):
        anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2, metric="gen_x")


def test_verifier_rejects_wrong_releases():
    df = table3()
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2, granularities="week,quarter")
    times = pd.to_datetime(df["Date"])
    kw = dict(time="Date", qi=["Address"], uid="Patient", k=2, granularity="week", original_times=times,
              n_input=len(df))  # fmt: skip
    check_timestamped_release(df, res.released, **kw)
    wrong = res.released.copy()
    wrong.loc[0, "Date"] = "2005-W06"
    with pytest.raises(VerificationError):
        check_timestamped_release(df, wrong, **kw)
    with pytest.raises(VerificationError, match="respondent identifier"):
        check_timestamped_release(df, res.released.assign(Patient=df["Patient"]), **kw)
    with pytest.raises(VerificationError, match="not 3-anonymous"):
        check_timestamped_release(df, res.released, **{**kw, "k": 3})
    tampered = res.released.copy()
    tampered.loc[0, "Exam"] = "ExZ"
    with pytest.raises(VerificationError, match="Exam"):
        check_timestamped_release(df, tampered, **kw)


# ---- brute force on random data ------------------------------------------------------------------

NAMES = ["hour", "part-of-day", "day", "business-day", "week", "2weeks", "month", "quarter", "3months@10", "year"]


def oracle(df, k, names, max_supp, data_g):
    """Every granularity checked directly with pandas group-bys on the labels."""
    t = pd.to_datetime(df["T"])
    secs = (t - pd.Timestamp(0)) // pd.Timedelta(seconds=1)
    z = parse_granularity(data_g).index(secs.to_numpy())
    out = {}
    for name in [data_g] + names:
        g = parse_granularity(name)
        lab = g.labels_of(secs.to_numpy())
        if (g.index(secs.to_numpy()) == GAP).any():
            continue
        frame = pd.DataFrame({"A": df["A"], "L": lab, "P": df["P"], "Z": z})
        grp = frame.groupby(["A", "L"])
        resp, size, nts = grp["P"].nunique(), grp.size(), grp["Z"].nunique()
        small = resp < k
        sup = int(size[small].sum())
        kept = resp[~small]  # Definitions 5-6 on the released classes: min and sum of frequency sets
        out[name] = (sup <= max_supp, int(kept.min()) if len(kept) else 0, int(kept.sum()))
    return out


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(1, 40),
    n_resp=st.integers(1, 6),
    n_a=st.integers(1, 3),
    k=st.integers(2, 3),
    supp=st.sampled_from([0.0, 0.1, 0.3]),
    hours=st.booleans(),
    seed=st.integers(0, 2**31),
    metric=st.sampled_from(["gen_c", "gen_m", "gen_s"]),
)
def test_least_generalization_matches_brute_force(n, n_resp, n_a, k, supp, hours, seed, metric):
    rng = np.random.default_rng(seed)
    base = pd.Timestamp("1969-09-01") if seed % 2 else pd.Timestamp("2005-01-01")  # negative indexes too
    unit = pd.Timedelta(hours=1) if hours else pd.Timedelta(days=1)
    span = 24 * 200 if hours else 200
    times = pd.DatetimeIndex(base + unit * rng.integers(0, span, n))
    df = pd.DataFrame({"P": rng.integers(0, n_resp, n), "A": rng.integers(0, n_a, n).astype(str),
                       "T": times.strftime("%Y-%m-%d %H:%M:%S")})  # fmt: skip
    names = list(rng.permutation(NAMES)[: rng.integers(1, len(NAMES) + 1)])
    data_g = "hour" if hours else "day"
    if hours and (times.hour == 0).all():
        data_g = "day"
    truth = oracle(df, k, [x for x in names if x != data_g], int(np.floor(supp * n + 1e-9)), data_g)
    anon = {g: v for g, v in truth.items() if v[0]}
    # <=_c: gen_m ascending then gen_s descending; gen_m by <=, gen_s by >= (Section 4.1)
    key = {"gen_c": lambda v: (v[1], -v[2]), "gen_m": lambda v: v[1], "gen_s": lambda v: -v[2]}[metric]
    try:
        res = anonymize_timestamped(df, time="T", qi=["A"], uid="P", k=k, granularities=names,
                                    max_suppression=supp, metric=metric)  # fmt: skip
    except NoSolutionError:
        assert not anon
        return
    s = res.summary
    assert s["data_granularity"] == data_g
    for c in s["candidates"]:
        if c["compatible"] and c["granularity"] in truth and "equivalent_to" not in c:
            if c["evaluated_by_algorithm"]:
                assert (c["k_anonymous"], c["gen_m"], c["gen_s"]) == truth[c["granularity"]], c["granularity"]
            elif int(np.floor(supp * n + 1e-9)) == 0:  # pruned: anonymous, no less general than its finer one
                assert c["k_anonymous"] and truth[c["granularity"]][0]
                assert key(truth[c["granularity"]]) >= key(truth[c["pruned_coarser_than"]])
            else:  # suppression: skipped only by the bound, so it cannot beat the chosen one
                assert c["not_checked"].startswith("bounded")
                g = c["granularity"]
                assert not truth[g][0] or key(truth[g]) >= key(truth[s["granularity"]])
                if c["k_anonymous"]:
                    assert truth[g][0]
    best = min(key(v) for v in anon.values())
    assert key(truth[s["granularity"]]) == best
    assert s["granularity"] in anon


def test_generator_controls_tuples_per_respondent():
    df = hospital_exams(200, (3, 3), seed=1)
    assert len(df) == 600 and df["PATIENT"].nunique() == 200
    assert (df.groupby("PATIENT").size() == 3).all()
    assert df.groupby("PATIENT")[["ADDRESS", "GENDER", "AGE", "ZIP"]].nunique().max().max() == 1
    t = pd.to_datetime(df["TIME"])
    assert (t >= "2005-01-01").all() and (t < "2007-01-01").all() and (t.dt.second == 0).all()
    assert ((t.dt.day_of_week < 5) & (t.dt.hour.between(8, 17))).mean() > 0.8
    df2 = hospital_exams(1000, 4.0, seed=2)
    assert 3.5 < len(df2) / 1000 < 4.5
    res = anonymize_timestamped(df2, time="TIME", qi=["GENDER"], uid="PATIENT", k=5, max_suppression=0.02)
    assert res.summary["data_granularity"] == "minute"


def test_distinct_respondents_are_not_summed_over_merged_granules():
    # p1 on Monday and Tuesday of ISO week 2005-W05, p2 on Monday: summing the per-day respondent
    # counts over the week would give 3, but the week holds only 2 distinct respondents.
    df = pd.DataFrame({"P": ["p1", "p1", "p2"], "A": ["x"] * 3, "T": ["2005-01-31", "2005-02-01", "2005-01-31"]})
    res = anonymize_timestamped(df, time="T", qi=["A"], uid="P", k=2, granularities="week,year")
    week = _by_name(res.summary)["week"]
    assert week["min_respondents"] == 2 and week["k_anonymous"]
    with pytest.raises(NoSolutionError):
        anonymize_timestamped(df, time="T", qi=["A"], uid="P", k=3, granularities="week,month,year")


def test_declared_data_granularity_business_day_with_holidays():
    df = pd.DataFrame({"P": ["a", "b", "a", "b"], "A": ["x"] * 4,
                       "T": ["2005-01-03", "2005-01-04", "2005-01-10", "2005-01-11"]})  # fmt: skip
    res = anonymize_timestamped(df, time="T", qi=["A"], uid="P", k=2, granularities="2business-days,week,month",
                                data_granularity="business-day", country="US")  # fmt: skip
    cand = _by_name(res.summary)
    assert res.summary["data_granularity"] == "business-day"
    # groups of two business days are counted from the epoch: in 2005 they pair Friday+Monday and
    # Tuesday+Wednesday, so Monday and Tuesday fall apart and only the week is 2-anonymous
    assert cand["2business-days"]["compatible"] and not cand["2business-days"]["k_anonymous"]
    assert res.summary["granularity"] == "week"
    assert list(res.released["T"]) == ["2005-W01"] * 2 + ["2005-W02"] * 2
    bad = df.assign(T=["2005-01-03", "2005-01-17", "2005-01-10", "2005-01-11"])  # 2005-01-17: MLK Day
    with pytest.raises(InputError, match="line 3: .2005-01-17. lies in no granule of the data granularity"):
        anonymize_timestamped(bad, time="T", qi=["A"], uid="P", k=2, data_granularity="business-day", country="US")


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 40), n_resp=st.integers(1, 6), k=st.integers(2, 4), seed=st.integers(0, 2**31))
def test_theorems_2_to_4_and_property_2_without_suppression(n, n_resp, k, seed):
    """Along finer-than (H finer than H'): gen_m(R_H) <= gen_m(R_H') (Theorem 2), gen_s(R_H) >=
    gen_s(R_H') (Theorem 3), gen_c(R_H) <=_c gen_c(R_H') (Theorem 4); gen_m(R) >= k iff R is
    k-anonymous (Definition 5 / Property 2). No suppression: every class is released."""
    from tempanon.temporal.relations import build_dag, span_of

    rng = np.random.default_rng(seed)
    t = pd.Timestamp("2005-01-01") + pd.to_timedelta(rng.integers(0, 400 * 24, n), unit="h")
    df = pd.DataFrame({"P": rng.integers(0, n_resp, n), "A": rng.integers(0, 2, n).astype(str),
                       "T": t.strftime("%Y-%m-%d %H:%M")})  # fmt: skip
    inst, miss, _ = parse_timestamps(df["T"])
    g0 = parse_granularity("hour")
    dag = build_dag(g0, [parse_granularity(x) for x in NAMES if x != "hour"], span_of(inst))
    prep = prepare(encode_columns(df, ["A"]), inst, miss, encode_uid(df, "P"), g0.index(inst))
    checks = [check_granularity(prep, g, 1) for g in dag.nodes]  # k = 1: nothing suppressed, R_H itself
    for i in range(len(dag.nodes)):
        assert (checks[i].gen_m >= k) == check_granularity(prep, dag.nodes[i], k).k_anonymous
        for j in range(len(dag.nodes)):
            if i != j and dag.finer[i, j]:
                a, b = checks[i], checks[j]
                assert a.gen_m <= b.gen_m and a.gen_s >= b.gen_s and leq_c(a.gen_c, b.gen_c)
