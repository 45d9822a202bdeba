"""Granularities, their relations, the directly-coarser DAG and timestamp parsing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tempanon.errors import InputError
from tempanon.temporal.granularity import (
    GAP,
    Boundaries,
    BusinessDay,
    Format,
    PartsOfDay,
    Uniform,
    parse_granularity,
    truncation_chain,
)
from tempanon.temporal.parse import infer_data_granularity, parse_timestamps
from tempanon.temporal.relations import build_dag, covered_by, finer_than, groups_into, shift_equivalent, up

SPAN = (int(pd.Timestamp("2004-01-01").timestamp()), int(pd.Timestamp("2008-01-01").timestamp()))


def ts(s: str) -> int:
    return int(pd.Timestamp(s).timestamp())


G = {n: parse_granularity(n) for n in ("second", "minute", "hour", "part-of-day", "day", "business-day", "week",
                                       "month", "quarter", "semester", "year", "2weeks", "6hours", "3months@10")}  # fmt: skip

instants = st.integers(min_value=ts("1950-01-01"), max_value=ts("2060-01-01"))


@settings(max_examples=60, deadline=None)
@given(st.lists(instants, min_size=1, max_size=50))
def test_builtin_labels_match_pandas_calendar(values):
    t = np.array(values, dtype=np.int64)
    d = pd.Series(pd.to_datetime(t, unit="s"))
    iso = d.dt.isocalendar()
    expect = {
        "day": d.dt.strftime("%Y-%m-%d"),
        "hour": d.dt.strftime("%Y-%m-%dT%H"),
        "month": d.dt.strftime("%Y-%m"),
        "year": d.dt.strftime("%Y"),
        "quarter": d.dt.year.astype(str) + "Q" + d.dt.quarter.astype(str),
        "week": iso["year"].astype(str) + "-W" + iso["week"].map("{:02d}".format),
    }
    for name, e in expect.items():
        assert list(G[name].labels_of(t)) == list(e), name
    # the index is order preserving and constant within a granule: start <= t < end
    for g in G.values():
        i = g.index(t)
        ok = i != GAP
        assert np.all(g.start(i[ok]) <= t[ok]) and np.all(t[ok] < g.end(i[ok])), g.name
        assert np.all(np.diff(i[ok][np.argsort(t[ok], kind="stable")]) >= 0), g.name  # order preserving


def test_business_day_gaps_and_holidays():
    bd = BusinessDay(country="US")
    t = np.array([ts("2005-01-01"), ts("2005-01-03 10:00"), ts("2005-01-17 09:00"), ts("2005-01-18")])
    idx = bd.index(t)
    assert idx[0] == GAP  # Saturday
    assert idx[2] == GAP  # Martin Luther King Jr. Day 2005
    assert list(bd.labels_of(t[[1, 3]])) == ["2005-01-03", "2005-01-18"]
    assert BusinessDay().index(t[[2]])[0] != GAP  # no holidays without a country
    with pytest.raises(InputError, match="unknown holiday country"):
        BusinessDay(country="XX")


def test_parts_of_day_configurable_with_gap():
    p = PartsOfDay("shift", (("early", 6, 14), ("late", 14, 22)))
    t = np.array([ts("2005-03-01 05:59"), ts("2005-03-01 06:00"), ts("2005-03-01 21:59"), ts("2005-03-01 22:00")])
    i = p.index(t)
    assert i[0] == GAP and i[3] == GAP
    assert list(p.label(i[1:3])) == ["2005-03-01 early", "2005-03-01 late"]
    assert p.has_gaps
    with pytest.raises(InputError):
        PartsOfDay("bad", (("a", 0, 13), ("b", 12, 24)))


def test_finer_than_matrix_of_builtins():
    expect_true = [
        ("second", "minute"), ("minute", "hour"), ("hour", "part-of-day"), ("part-of-day", "day"),
        ("business-day", "day"), ("business-day", "week"), ("day", "week"), ("day", "month"),
        ("month", "quarter"), ("quarter", "semester"), ("semester", "year"), ("week", "2weeks"),
        ("hour", "6hours"), ("quarter", "3months@10"), ("month", "3months@10"),
    ]  # fmt: skip
    for a, b in expect_true:
        assert finer_than(G[a], G[b], SPAN), (a, b)
    expect_false = [("week", "month"), ("day", "business-day"), ("second", "business-day"), ("month", "week"),
                    ("semester", "3months@10"), ("day", "6hours"), ("year", "month")]  # fmt: skip
    for a, b in expect_false:
        r = finer_than(G[a], G[b], SPAN)
        assert not r and r.reason, (a, b)
    assert "spans the granules" in finer_than(G["week"], G["month"], SPAN).reason
    assert "lies in no granule of business-day" in finer_than(G["day"], G["business-day"], SPAN).reason


def test_groups_into_covers_shift_equivalence():
    # day groups into business-day but is not finer than it (the classic example)
    assert groups_into(G["day"], G["business-day"], SPAN)
    assert not finer_than(G["day"], G["business-day"], SPAN)
    assert groups_into(G["day"], G["week"], SPAN) and not groups_into(G["week"], G["month"], SPAN)
    assert not groups_into(G["business-day"], G["week"], SPAN)  # weekends of a week are no business days
    assert covered_by(G["business-day"], G["day"], SPAN)
    assert not covered_by(G["day"], G["business-day"], SPAN)
    assert shift_equivalent(G["6hours"], G["part-of-day"], SPAN)
    assert shift_equivalent(Format("m", "%Y-%m"), G["month"], SPAN)
    assert not shift_equivalent(G["month"], G["quarter"], SPAN)


def test_up_and_its_undefined_case():
    days = G["day"].index(np.array([ts("2005-01-01"), ts("2005-01-03"), ts("2005-01-31")]))
    bup = up(days, G["day"], G["business-day"])
    assert bup[0] == GAP and bup[1] != GAP  # Saturday has no business day above it
    wup = up(G["week"].index(np.array([ts("2005-01-31"), ts("2005-01-10")])), G["week"], G["month"])
    assert wup[0] == GAP  # week 2005-W05 spans January and February
    assert G["month"].label(wup[1:])[0] == "2005-01"
    mup = up(days, G["day"], G["month"])
    assert list(G["month"].label(mup)) == ["2005-01", "2005-01", "2005-01"]


def test_explicit_boundaries_and_groupings():
    terms = Boundaries("term", np.array([ts("2005-09-01"), ts("2006-01-10")]),
                       np.array([ts("2005-12-20"), ts("2006-05-31")]), np.array(["fall05", "spring06"]))  # fmt: skip
    t = np.array([ts("2005-10-01"), ts("2005-12-25"), ts("2006-02-02")])
    assert list(terms.labels_of(t)) == ["fall05", None, "spring06"]
    assert finer_than(G["day"], terms, SPAN).holds is False  # holidays between terms are gaps
    assert finer_than(terms, G["year"], SPAN)  # each term lies within one calendar year
    assert finer_than(terms, G["semester"], SPAN)
    assert not finer_than(terms, G["quarter"], SPAN)  # fall05 spans two quarters
    assert finer_than(terms, parse_granularity("12months@9"), SPAN)  # academic years from September
    with pytest.raises(InputError, match="overlap"):
        Boundaries("x", np.array([0, 5]), np.array([10, 20]), np.array(["a", "b"]))
    fq = parse_granularity("3months@10")
    assert list(fq.labels_of(np.array([ts("2005-10-05"), ts("2006-01-02")]))) == ["2005-10..2005-12", "2006-01..2006-03"]
    two = parse_granularity("2business-days")
    assert two.index(np.array([ts("2005-01-08")]))[0] == GAP


def test_format_truncation_chain_and_bad_formats():
    chain = truncation_chain()
    for a, b in zip(chain, chain[1:]):
        assert finer_than(a, b, SPAN) and not finer_than(b, a, SPAN)
    assert list(Format("f", "%d/%m/%Y").labels_of(np.array([ts("2005-03-04 10:00")]))) == ["04/03/2005"]
    with pytest.raises(InputError, match="interleave"):
        Format("f", "%m")
    with pytest.raises(InputError):
        parse_granularity("fortnightly")
    with pytest.raises(InputError):
        parse_granularity("0weeks")


def test_dag_is_computed_disregards_and_equivalences():
    cands = [parse_granularity(n) for n in ("hour", "business-day", "week", "month", "quarter", "year", "6hours",
                                            "part-of-day", "format:%Y-%m", "second")]  # fmt: skip
    dag = build_dag(G["minute"], cands, SPAN)
    names = dag.names
    par = {names[i]: sorted(names[p] for p in ps) for i, ps in enumerate(dag.parents)}
    assert par["minute"] == ["hour"]
    assert par["hour"] == ["6hours"]
    assert "day" not in par  # not requested
    assert par["6hours"] == ["month", "week"]  # directly coarser, computed (no day in G)
    assert par["month"] == ["quarter"] and par["quarter"] == ["year"] and par["week"] == []
    assert set(dag.disregarded) == {"business-day", "second"}
    assert "not finer than business-day" in dag.disregarded["business-day"]
    assert dag.equivalent == {"part-of-day": "6hours", "format:%Y-%m": "month"}
    assert any("shift-equivalent" in m for m in dag.messages)


def test_parse_timestamps_tz_naive_missing_and_errors():
    s = pd.Series(["2005-11-22T09:30", "", None, "2005-11-22 10:30:15"])
    t, miss, info = parse_timestamps(s, "T")
    assert list(miss) == [False, True, True, False]
    assert t[0] == ts("2005-11-22 09:30") and t[3] == ts("2005-11-22 10:30:15")
    assert info["timezone"].startswith("naive")
    tz = pd.Series(["2005-11-22T09:30:00+02:00", "2005-11-22T09:30:00Z"])
    t2, _, info2 = parse_timestamps(tz, "T")
    assert list(t2) == [ts("2005-11-22 07:30"), ts("2005-11-22 09:30")]
    assert "UTC" in info2["timezone"]
    aware = pd.Series(pd.to_datetime(["2005-01-01 12:00"]).tz_localize("Europe/Rome"))
    assert parse_timestamps(aware)[0][0] == ts("2005-01-01 11:00")
    with pytest.raises(InputError, match=r"column 'T', line 3: cannot parse timestamp 'yesterday'"):
        parse_timestamps(pd.Series(["2005-01-01", "yesterday"]), "T")
    assert infer_data_granularity(np.array([ts("2005-01-01"), ts("2005-01-02")])).name == "day"
    assert infer_data_granularity(np.array([ts("2005-01-01 10:30")])).name == "minute"
    assert infer_data_granularity(np.array([ts("2005-01-01 10:30:01")])).name == "second"


def test_explicit_boundaries_from_file_as_a_candidate(tmp_path):
    from tempanon.temporal.api import anonymize_timestamped

    f = tmp_path / "terms.csv"
    f.write_text("label,start,end\nwinter05,2004-12-01,2005-03-01\nrest05,2005-03-15,2005-12-01\n"
                 "winter06,2005-12-01,2006-03-01\nrest06,2006-03-01,2006-12-01\n")  # fmt: skip
    g = parse_granularity(f"file:{f}")
    assert list(g.labels_of(np.array([ts("2005-01-15"), ts("2005-07-01"), ts("2006-12-05")]))) == [
        "winter05", "rest05", None]  # fmt: skip
    df = pd.DataFrame({"P": list("abab"), "T": ["2005-01-03", "2005-02-10", "2005-04-01", "2005-11-30"]})
    # a break between the terms (2005-03-01..15): day is not finer than them -> disregarded with the reason
    res = anonymize_timestamped(df, time="T", uid="P", k=2, granularities=[g, parse_granularity("year")])
    assert "lies in no granule of file:terms" in res.summary["candidates"][-1]["reason"]
    f.write_text("label,start,end\nw,2004-12-01,2005-03-01\nr,2005-03-01,2005-12-01\nx,2005-12-01,2007-01-01\n")
    g2 = parse_granularity(f"file:{f}")
    res2 = anonymize_timestamped(df, time="T", uid="P", k=2, granularities=[g2, parse_granularity("year")])
    assert res2.summary["granularity"] == "file:terms" and list(res2.released.sort_index()["T"]) == ["w", "w", "r", "r"]
    bad = tmp_path / "bad.csv"
    bad.write_text("label,start,end\na,2005-01-01,2005-03-01\nb,2005-02-01,2005-04-01\n")
    with pytest.raises(InputError, match="overlap"):
        parse_granularity(f"file:{bad}")


# ---- relations against brute force over every minute of a short span -----------------------------

SPAN2 = (ts("2005-01-03"), ts("2005-01-17"))
MINUTES = np.arange(SPAN2[0], SPAN2[1], 60, dtype=np.int64)


@st.composite
def granularities(draw):
    kind = draw(st.sampled_from(["uniform", "boundaries", "parts", "named"]))
    if kind == "uniform":
        from tempanon.temporal.granularity import Uniform

        period = draw(st.sampled_from([1, 2, 3, 6, 12, 24, 48])) * 3600
        return Uniform(f"u{period}", period, draw(st.integers(0, period // 3600 - 1)) * 3600)
    if kind == "named":
        return parse_granularity(draw(st.sampled_from(["hour", "day", "business-day", "week", "2business-days"])))
    if kind == "parts":
        cuts = sorted(draw(st.sets(st.integers(0, 24), min_size=2, max_size=5)))
        return PartsOfDay("p", tuple((f"p{a}", a, b) for a, b in zip(cuts, cuts[1:])))
    cuts = sorted(draw(st.sets(st.integers(-24, 14 * 24 + 24), min_size=2, max_size=12)))
    starts, ends, labels = [], [], []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        if draw(st.booleans()) or i == 0:  # some intervals become gaps
            starts.append(SPAN2[0] + a * 3600)
            ends.append(SPAN2[0] + b * 3600)
            labels.append(f"b{i}")
    return Boundaries("b", np.array(starts), np.array(ends), np.array(labels))


# Two uniform granularities are related on all time (relations.finer_than's arithmetic, covered_by and
# groups_into follow it), not only on the span: their oracle looks at the minutes of a wider window that
# holds whole cycles of both (the least common multiple of the periods drawn is at most 14 days).
# Over the span alone a 2-day granule cut by the span's start looked finer than a week it straddles.
MINUTES_WIDE = np.arange(SPAN2[0] - 14 * 86400, SPAN2[1] + 14 * 86400, 60, dtype=np.int64)


def _oracle(g, h):
    minutes = MINUTES_WIDE if (g.uniform is not None and h.uniform is not None) else MINUTES
    gi, hi = g.index(minutes), h.index(minutes)
    inside = gi != GAP
    finer = bool(np.all(hi[inside] != GAP)) and all(
        len(set(hi[gi == z])) == 1 for z in np.unique(gi[inside]))  # fmt: skip
    covered = bool(np.all(hi[inside] != GAP))
    inh = hi != GAP
    touched = np.unique(gi[inh & inside])
    groups = bool(np.all(gi[inh] != GAP)) and all(len(set(hi[gi == z])) == 1 for z in touched)
    return finer, covered, groups


@settings(max_examples=150, deadline=None)
@given(granularities(), granularities())
@example(Uniform("u172800", 172800, 86400), parse_granularity("week"))  # found by a CI run: see MINUTES_WIDE
def test_relations_match_brute_force_over_minutes(g, h):
    finer, covered, groups = _oracle(g, h)
    assert bool(finer_than(g, h, SPAN2)) == finer
    assert bool(covered_by(g, h, SPAN2)) == covered
    assert bool(groups_into(g, h, SPAN2)) == groups
    gi = g.index(MINUTES)
    z = np.unique(gi[gi != GAP])
    z = z[(g.start(z) >= SPAN2[0]) & (g.end(z) <= SPAN2[1])]  # up is about whole granules
    if finer and len(z):
        u = up(z, g, h, SPAN2)
        assert np.all(u != GAP) and np.array_equal(u, h.index(g.start(z)))


# ---- Definition 9: contiguous index sets; format truncations; shift equivalence by granules -----
def test_business_day_indexes_are_contiguous_across_holidays():
    bd = BusinessDay(country="US")
    days = np.arange(np.datetime64("1968-06-01"), np.datetime64("2007-02-01")).astype(np.int64)
    idx = bd.index(days * 86_400)
    real = idx[idx != GAP]
    assert (np.diff(real) == 1).all()  # Definition 9 (2): no hole at a holiday
    assert (bd.start(real) // 86_400 == days[idx != GAP]).all()  # start() inverts index()
    # 2005-01-14 (Fri) and 2005-01-18 (Tue) are consecutive business days: MLK day 2005-01-17 between
    fri, tue = bd.index(np.array([ts("2005-01-14"), ts("2005-01-18")]))
    assert tue == fri + 1


def test_two_business_days_never_end_on_a_holiday():
    g = parse_granularity("2business-days", country="US")
    days = pd.date_range("2004-12-01", "2006-01-31", freq="D")
    t = days.to_numpy().astype("datetime64[s]").astype(np.int64)
    i = g.index(t)
    ok = i != GAP
    bd = BusinessDay(country="US")
    assert (bd.index(t) != GAP).tolist() == ok.tolist()
    sizes = pd.Series(i[ok]).value_counts()
    # every granule holds two business days (except possibly the cut ones at the ends of the range)
    inner = sizes.drop([i[ok][0], i[ok][-1]], errors="ignore")
    assert (inner == 2).all()
    hol = np.isin(days.strftime("%Y-%m-%d"), ["2005-01-17", "2005-02-21", "2005-05-30", "2005-07-04", "2005-12-26"])
    assert (i[hol] == GAP).all()
    ends = g.end(np.unique(i[ok])) - 86_400
    assert not np.isin(ends // 86_400, (t[hol] // 86_400)).any()  # no granule ends on a holiday


def test_format_iso_week_needs_the_iso_year():
    with pytest.raises(InputError, match="%V goes with the ISO year %G"):
        parse_granularity("format:%Y-W%V")
    with pytest.raises(InputError, match="%V goes with the ISO year %G"):
        parse_granularity("format:%G")
    g = parse_granularity("format:%G-W%V")
    t = np.array([ts("2005-01-01"), ts("2005-01-03")])
    assert list(g.labels_of(t)) == ["2004-W53", "2005-W01"]


def test_shift_equivalence_is_decided_on_granules_not_names():
    lo, hi = ts("2005-01-01"), ts("2006-01-01")
    cands = [parse_granularity(x) for x in ("24hours", "format:%Y-%m-%d", "week", "format:%G-W%V", "7days@0" if False else "month")]
    dag = build_dag(parse_granularity("day"), cands, (lo, hi))
    assert dag.names == ["day", "week", "month"]
    assert dag.equivalent == {"24hours": "day", "format:%Y-%m-%d": "day", "format:%G-W%V": "week"}
    # a differently named granularity with other granules is kept
    dag2 = build_dag(parse_granularity("day"), [parse_granularity("7days")], (lo, hi))
    assert dag2.names == ["day", "7days"] and not dag2.equivalent  # 7-day blocks from Thursday 1970-01-01
