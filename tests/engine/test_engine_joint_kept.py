"""The joint out-of-core search with frequency sets kept in the engine: a joint frequency set with more
(class, respondent) rows than the fetch limit (``TEMPANON_MAX_FETCH_ROWS``) is not fetched; it stays
in DuckDB as a table of (class codes, respondent, tuples) rows
(:class:`~tempanon.lattice.source_temporal.JointEngineFrequencySet`), checked there (classes with
fewer than k distinct respondents and their tuples) and rolled up there with the respondent kept.

Forced here by ``TEMPANON_MAX_DRIVER_ROWS=0`` (frequency sets in the engine) and a tiny
``TEMPANON_MAX_FETCH_ROWS``: the results (chosen node, metrics, candidates, minimal nodes, released
rows) are those of the in-memory numpy joint search and of the path that fetches every set."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempanon.errors import InputError, NoSolutionError
from tempanon.hierarchy import Hierarchy
from tempanon.temporal.api import anonymize_timestamped

SAMPLE = Path(__file__).resolve().parents[2] / "src" / "tempanon" / "samples" / "timestamped" / "encounters.csv.gz"
ENC_ROWS = [["wellness", "preventive", "*"], ["ambulatory", "visit", "*"], ["outpatient", "visit", "*"],
            ["urgentcare", "acute", "*"], ["emergency", "acute", "*"], ["inpatient", "stay", "*"],
            ["snf", "stay", "*"], ["hospice", "stay", "*"], ["virtual", "visit", "*"]]  # fmt: skip
AGE_ROWS = [[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"] for a in range(20, 60)]


def _summary(res):
    s = dict(res.summary)
    plan = s.pop("plan", None)
    for key in ("verification", "row_order", "search_seconds"):
        s.pop(key, None)
    return s, plan


def _file(path, out, monkeypatch, fetch, engine="duckdb", **kw):
    """The out-of-core joint run with the bottom set in the engine and ``fetch`` as the fetch limit
    (None: the machine's, i.e. every set of these small inputs is fetched)."""
    from tempanon.temporal.outofcore import anonymize_timestamped_file

    monkeypatch.setenv("TEMPANON_MAX_DRIVER_ROWS", "0")
    if fetch is None:
        monkeypatch.delenv("TEMPANON_MAX_FETCH_ROWS", raising=False)
    else:
        monkeypatch.setenv("TEMPANON_MAX_FETCH_ROWS", str(fetch))
    Path(out).unlink(missing_ok=True)
    return anonymize_timestamped_file(path, out=out, **({} if engine == "duckdb" else {"engine": engine}), **kw)


def _read(out):
    """A written CSV release: a file (DuckDB) or a directory of part files in name order (Spark)."""
    if out.is_dir():
        parts = sorted(out.glob("part-*"))
        return pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False) for p in parts], ignore_index=True)
    return pd.read_csv(out, dtype=str, keep_default_na=False)


def _same_three(df_or_path, tmp_path, monkeypatch, fetch=3, engine="duckdb", **kw):
    """numpy in memory, the engine path fetching every set, the engine path keeping sets above
    ``fetch`` rows in the engine: same summaries (but the plan) and released rows; returns the kept
    run's plan (None when there is no solution, the same message on all three)."""
    from tempanon.data.io import read_table

    if isinstance(df_or_path, pd.DataFrame):
        path = tmp_path / "in.csv"
        df_or_path.to_csv(path, index=False)
    else:
        path = df_or_path
    df = read_table(path, as_text=True)
    try:
        a = anonymize_timestamped(df, engine="numpy", **kw)
    except (NoSolutionError, InputError) as exc:
        for f in (None, fetch):
            with pytest.raises(type(exc)) as info:
                _file(path, tmp_path / "out.csv", monkeypatch, f, engine, **kw)
            assert str(info.value) == str(exc)
        return None
    b = _file(path, tmp_path / "fetched.csv", monkeypatch, None, engine, **kw)
    c = _file(path, tmp_path / "kept.csv", monkeypatch, fetch, engine, **kw)
    sa, _ = _summary(a)
    sb, pb = _summary(b)
    sc, pc = _summary(c)
    assert pb["path"] == pc["path"] == "frequency sets in engine"
    assert sa == sb == sc  # node, metrics, candidates, minimal nodes, suppressed, released tuples
    key = lambda t: t.sort_values(list(t.columns)).reset_index(drop=True)  # noqa: E731
    exp = a.released.astype(object).where(a.released.notna(), "").astype(str).reset_index(drop=True)
    for name in ("fetched.csv", "kept.csv"):
        got = _read(tmp_path / name)
        pd.testing.assert_frame_equal(key(got), key(exp))
    # the same (seed, classes): the same rows in the same order, whichever way the sets were computed
    pd.testing.assert_frame_equal(_read(tmp_path / "fetched.csv"), _read(tmp_path / "kept.csv"))
    assert pb["sets_kept_in_engine"] == 0 and pb["engine_rollups"] == 0
    assert pc["fetch_limit_rows"] == fetch and pc["largest_fetched_rows"] <= fetch
    return pc


@pytest.mark.parametrize("uid", ["PATIENT", None])
@pytest.mark.parametrize("k,ms,metric", [(3, 0.02, "gen_c"), (5, 0.05, "gen_m"), (2, 0.05, "loss"), (3, 0.02, "height"),
                                         (3, 0.0, "gen_s"), (4, 0.05, "discernibility")])
def test_sample_kept_in_engine_same_as_numpy(tmp_path, monkeypatch, uid, k, ms, metric):
    hier = {"ENCOUNTERCLASS": Hierarchy.from_rows("ENCOUNTERCLASS", ENC_ROWS)}
    plan = _same_three(SAMPLE, tmp_path, monkeypatch, time="START", qi=["ENCOUNTERCLASS"], k=k, uid=uid,
                       max_suppression=ms, hierarchies=hier, metric=metric, granularities="day,week,month,quarter,year",
                       keep=["DESCRIPTION"], shuffle_seed=1)  # fmt: skip
    if plan is not None:
        assert plan["sets_kept_in_engine"] > 0 and plan["engine_checks"] > 0
        assert plan["engine_rollups"] > 0  # the search rolled kept sets up in the engine


@st.composite
def relations(draw):
    """Small timestamped relations: respondents, a sex, an age (missing for some rows), times with
    missing values, over spans from two days to two years."""
    n = draw(st.integers(1, 60))
    n_uid = draw(st.integers(1, 12))
    base = pd.Timestamp("2023-01-01")
    span_h = draw(st.sampled_from([48, 24 * 40, 24 * 800]))
    hours = draw(st.lists(st.integers(0, span_h), min_size=n, max_size=n))
    minutes = draw(st.lists(st.integers(0, 59), min_size=n, max_size=n))
    miss = draw(st.lists(st.booleans() if draw(st.booleans()) else st.just(False), min_size=n, max_size=n))
    times = [None if m else (base + pd.Timedelta(hours=h, minutes=mi)).strftime("%Y-%m-%d %H:%M:%S")
             for h, mi, m in zip(hours, minutes, miss)]  # fmt: skip
    if all(t is None for t in times):
        times[0] = "2023-01-01 00:00:00"
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 60, n).astype(str).astype(object)
    age[rng.random(n) < draw(st.sampled_from([0.0, 0.2]))] = None
    return pd.DataFrame({"uid": [f"u{draw(st.integers(0, n_uid - 1))}" for _ in range(n)], "t": times,
                         "sex": draw(st.lists(st.sampled_from(["F", "M", None]), min_size=n, max_size=n)),
                         "age": age})  # fmt: skip


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(df=relations(), k=st.integers(2, 4), ms=st.sampled_from([0.0, 0.1, 0.4]), with_uid=st.booleans(),
       metric=st.sampled_from(["gen_c", "gen_m", "gen_s", "height", "discernibility", "loss"]),
       grans=st.sampled_from(["hour,day,week,month,year", "day,business-day,month"]), fetch=st.sampled_from([1, 2, 5]))  # fmt: skip
def test_random_relations_kept_in_engine_same_as_numpy(tmp_path, monkeypatch, df, k, ms, with_uid, metric, grans, fetch):
    """With and without a respondent column, missing times, sexes and ages (a hierarchy value '')."""
    rows = [*AGE_ROWS, ["", "unknown", "*"]]
    hier = {"age": Hierarchy.from_rows("age", rows)}
    _same_three(df, tmp_path, monkeypatch, fetch, time="t", qi=["sex", "age"], k=k, uid="uid" if with_uid else None,
                max_suppression=ms, metric=metric, granularities=grans, hierarchies=hier, shuffle_seed=3)  # fmt: skip


@pytest.mark.parametrize("uid", ["PATIENT", None])
@pytest.mark.parametrize("metric", ["gen_c", "height", "loss", "discernibility"])
def test_no_fetch_above_the_limit(tmp_path, monkeypatch, uid, metric):
    """No query of the joint source returns a frequency set of more rows than the fetch limit: the
    search's sets come back only when that small, the kept ones answer aggregates (one row). The only
    larger results are named here and bounded by what they are: the row counts of the iteration's
    sets (one row per set), the chosen node's suppressed classes (at most the suppression limit's
    tuples), the scored nodes' classes (one row per class, fewer than its (class, respondent) rows)
    and the per-value tuple counts selection by loss bounds its candidates with."""
    from tempanon.lattice import source_temporal as stm

    fetch = 4
    seen = []
    orig_arrow, orig_rows = stm.DuckDBJointFileSource._arrow, stm.DuckDBJointFileSource._rows
    orig_class_set = stm.DuckDBJointFileSource._class_set

    def arrow(self, sql):
        tab = orig_arrow(self, sql)
        seen.append((sql, tab.num_rows))
        return tab

    def rows(self, sql):
        out = orig_rows(self, sql)
        seen.append((sql, len(out)))
        return out

    classes = []

    def class_set(self, levels):
        fs = orig_class_set(self, levels)
        classes.append((len(fs), int(fs._sizes[0].sum())))  # classes, their (class, respondent) rows
        return fs

    monkeypatch.setattr(stm.DuckDBJointFileSource, "_arrow", arrow)
    monkeypatch.setattr(stm.DuckDBJointFileSource, "_rows", rows)
    monkeypatch.setattr(stm.DuckDBJointFileSource, "_class_set", class_set)
    hier = {"ENCOUNTERCLASS": Hierarchy.from_rows("ENCOUNTERCLASS", ENC_ROWS)}
    res = _file(SAMPLE, tmp_path / "o.csv", monkeypatch, fetch, time="START", qi=["ENCOUNTERCLASS"], k=3, uid=uid,
                max_suppression=0.02, hierarchies=hier, metric=metric, granularities="day,week,month,quarter,year",
                shuffle_seed=1)  # fmt: skip
    plan = res.summary["plan"]
    assert plan["sets_kept_in_engine"] > 0 and plan["largest_fetched_rows"] <= fetch
    assert plan["bottom_rows"] > 100 * fetch  # the bottom set itself is far above the limit
    max_sup = int(res.summary["max_suppressed_tuples"])
    big = []
    for sql, n in seen:
        if n <= fetch:
            continue
        if sql.startswith("SELECT gid, count(*)"):
            continue  # rows per prepared set
        if "WHERE r <" in sql:
            assert n <= max_sup, (sql, n)  # the chosen node's suppressed classes
        elif "ORDER BY" in sql:
            pass  # a scored node's classes (below)
        elif metric == "loss" and " AS c, CAST(sum(n) AS BIGINT) AS n FROM jbot GROUP BY ALL" in sql:
            pass  # tuples per base value of one attribute
        else:
            big.append((sql, n))
    assert big == [], big
    assert classes
    if uid is not None:
        assert all(n < pairs for n, pairs in classes), classes


def test_describe_counts_kept_sets(tmp_path, monkeypatch):
    """The summary's plan says how many sets stayed in the engine, how many were rolled up and
    checked there, and the largest set fetched (as the kanon engine path does)."""
    hier = {"ENCOUNTERCLASS": Hierarchy.from_rows("ENCOUNTERCLASS", ENC_ROWS)}
    kw = dict(time="START", qi=["ENCOUNTERCLASS"], k=3, uid="PATIENT", max_suppression=0.02, hierarchies=hier,
              granularities="day,week,month,quarter,year", shuffle_seed=1)  # fmt: skip
    big = _file(SAMPLE, tmp_path / "a.csv", monkeypatch, None, **kw).summary["plan"]
    small = _file(SAMPLE, tmp_path / "b.csv", monkeypatch, 10, **kw).summary["plan"]
    for key in ("fetch_limit_rows", "sets_fetched", "largest_fetched_rows", "sets_kept_in_engine", "engine_rollups",
                "engine_checks", "class_sets_fetched"):  # fmt: skip
        assert key in big and key in small
    assert big["sets_kept_in_engine"] == 0 and big["sets_fetched"] > 0
    assert small["sets_kept_in_engine"] > 0 and small["largest_fetched_rows"] <= 10
    assert small["largest_fetched_rows"] < big["largest_fetched_rows"]


@pytest.mark.spark
@pytest.mark.parametrize("uid,metric", [("PATIENT", "gen_c"), (None, "loss"), ("PATIENT", "discernibility")])
def test_spark_kept_in_engine_same_as_numpy(spark_session, tmp_path, monkeypatch, uid, metric):
    """The same on the Spark file path: the kept sets are cached Spark tables, checked and rolled up
    by Spark SQL."""
    hier = {"ENCOUNTERCLASS": Hierarchy.from_rows("ENCOUNTERCLASS", ENC_ROWS)}
    plan = _same_three(SAMPLE, tmp_path, monkeypatch, 3, "spark", time="START", qi=["ENCOUNTERCLASS"], k=3, uid=uid,
                       max_suppression=0.02, hierarchies=hier, metric=metric, granularities="day,week,month,quarter,year",
                       shuffle_seed=1)  # fmt: skip
    assert plan is not None and plan["engine"] == "spark"
    assert plan["sets_kept_in_engine"] > 0 and plan["engine_rollups"] > 0 and plan["largest_fetched_rows"] <= 3


@pytest.mark.spark
def test_spark_random_relations_kept_in_engine(spark_session, tmp_path, monkeypatch):
    """Missing times, sexes and ages, with and without a respondent column, on Spark."""
    rng = np.random.default_rng(11)
    n = 80
    t = np.array(pd.to_datetime(1672531200 + rng.integers(0, 86400 * 60, n), unit="s").astype(str), dtype=object)
    t[rng.random(n) < 0.1] = None
    age = rng.integers(20, 60, n).astype(str).astype(object)
    age[rng.random(n) < 0.2] = None
    df = pd.DataFrame({"uid": [f"u{i}" for i in rng.integers(0, 25, n)], "t": t,
                       "sex": rng.choice(np.array(["F", "M", None], dtype=object), n), "age": age})  # fmt: skip
    hier = {"age": Hierarchy.from_rows("age", [*AGE_ROWS, ["", "unknown", "*"]])}
    for uid in ("uid", None):
        out = tmp_path / (uid or "none")
        out.mkdir()
        plan = _same_three(df, out, monkeypatch, 2, "spark", time="t", qi=["sex", "age"], k=2, uid=uid, max_suppression=0.3,
                           metric="gen_m", granularities="hour,day,week,month,year", hierarchies=hier, shuffle_seed=3)  # fmt: skip
        assert plan is not None and plan["sets_kept_in_engine"] > 0
