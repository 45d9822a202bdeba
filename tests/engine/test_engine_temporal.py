"""The time-granularity search (Mascetti et al., TIME 2006, Algorithm 1) on DuckDB against numpy:
the same least granularity, the same gen_m/gen_s of every candidate, the same released rows in
the same (shuffled) order, the same errors (tempanon.lattice.source_temporal)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempanon.errors import InputError, NoSolutionError
from tempanon.temporal.api import anonymize_timestamped

SAMPLE = Path(__file__).resolve().parents[2] / "src" / "tempanon" / "samples" / "timestamped" / "encounters.csv.gz"


def _run(df, engine, **kw):
    try:
        return anonymize_timestamped(df, engine=engine, shuffle_seed=7, **kw)
    except NoSolutionError as exc:
        return exc


def _both(df, wall_time=False, engine="duckdb", **kw):
    """numpy and ``engine`` (DuckDB or Spark) runs of the same search; None when both find no solution
    (same message), else the two results, their summaries compared equal (without the plan, and without
    the search's wall time when ``wall_time``)."""
    a, b = _run(df, "numpy", **kw), _run(df, engine, **kw)
    if isinstance(a, NoSolutionError) or isinstance(b, NoSolutionError):
        assert type(a) is type(b), (a, b)
        assert str(a) == str(b)
        return None
    sa, sb = dict(a.summary), dict(b.summary)
    plan = sb.pop("plan")
    assert plan["engine"] == engine and plan["engine_queries"] >= 1
    assert "plan" not in sa
    if wall_time:
        sa.pop("search_seconds"), sb.pop("search_seconds")
    assert sa == sb  # least granularity (or node), gen_m, gen_s, suppressed, every candidate's metrics
    return a, b


def _same(df, **kw):
    ab = _both(df, **kw)
    if ab is None:
        return None
    a, b = ab
    pd.testing.assert_frame_equal(a.released, b.released)  # same rows, labels, order (same seed)
    pd.testing.assert_frame_equal(a.audit, b.audit)
    return a


@pytest.fixture(scope="module")
def encounters():
    return pd.read_csv(SAMPLE, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("qi", [[], ["ENCOUNTERCLASS"]])
@pytest.mark.parametrize("k,ms", [(3, 0.01), (2, 0.05), (3, 0.2), (5, 0.0)])
def test_sample_encounters_same_as_numpy(encounters, qi, k, ms):
    res = _same(encounters, time="START", qi=qi, k=k, uid="PATIENT", max_suppression=ms)
    if (k, ms) == (3, 0.01) and not qi:
        assert res is not None and res.summary["granularity"] == "semester"
        assert (res.summary["gen_m"], res.summary["gen_s"], res.summary["suppressed"]) == (3, 2968, 63)


def test_sample_custom_granularities_and_timezone(encounters):
    _same(encounters, time="START", qi=[], k=2, uid="PATIENT", max_suppression=0.1,
          granularities="day,business-day,week,2weeks,month,quarter", timezone="America/New_York", country="US")


def test_unknown_engine_refused(encounters):
    with pytest.raises(InputError, match="unknown engine"):
        anonymize_timestamped(encounters, time="START", k=2, uid="PATIENT", engine="polars")


@st.composite
def relations(draw):
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
    return pd.DataFrame({
        "uid": [f"u{x}" for x in draw(st.lists(st.integers(0, n_uid - 1), min_size=n, max_size=n))],
        "sex": draw(st.lists(st.sampled_from(["F", "M"]), min_size=n, max_size=n)),
        "t": times,
    })  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=relations(), k=st.integers(2, 4), ms=st.sampled_from([0.0, 0.1, 0.4]),
       with_uid=st.booleans(), with_qi=st.booleans(), metric=st.sampled_from(["gen_c", "gen_m", "gen_s"]),
       grans=st.sampled_from([None, "hour,day,week,month,year", "day,business-day,month"]))  # fmt: skip
def test_random_relations_same_as_numpy(df, k, ms, with_uid, with_qi, metric, grans):
    _same(df, time="t", qi=["sex"] if with_qi else [], k=k, uid="uid" if with_uid else None, max_suppression=ms,
          metric=metric, granularities=grans)  # fmt: skip


def test_class_key_orders_like_pairs():
    from tempanon.lattice.source_temporal import class_key
    from tempanon.temporal.least import MISSING_KEY

    rng = np.random.default_rng(3)
    q = rng.integers(0, 4, 200)
    h = rng.integers(-5, 5, 200)
    h[rng.random(200) < 0.2] = MISSING_KEY
    key = class_key(q, h)
    pairs = np.lexsort((h, q))
    assert np.all(np.diff(key[pairs]) >= 0)
    same = (q[:, None] == q[None, :]) & (h[:, None] == h[None, :])
    assert np.array_equal(same, key[:, None] == key[None, :])


def _cli(args):
    from typer.testing import CliRunner

    from tempanon.cli import app

    return CliRunner().invoke(app, args)


def test_cli_engine_duckdb_same_files(tmp_path):
    """``timestamped --engine duckdb --memory-limit``: the same release file and summary numbers."""
    import json

    outs = {}
    for eng in ("numpy", "duckdb"):
        args = ["timestamped", str(SAMPLE), "--time", "START", "--uid", "PATIENT", "--k", "3", "--max-suppression", "0.06",
                "--qi", "ENCOUNTERCLASS", "--out", str(tmp_path / f"{eng}.csv"), "--summary", str(tmp_path / f"{eng}.json"),
                "--shuffle-seed", "11", "-q", "--engine", eng]  # fmt: skip
        if eng == "duckdb":
            args += ["--memory-limit", "1GB"]
        r = _cli(args)
        assert r.exit_code == 0, r.output
        outs[eng] = ((tmp_path / f"{eng}.csv").read_text(), json.loads((tmp_path / f"{eng}.json").read_text()))
    sn, sd = outs["numpy"][1], outs["duckdb"][1]
    plan = sd.pop("plan")
    assert plan["memory_limit"] == "1GB" and "out of core" in plan["input"]  # the file read in place
    assert _sorted_text(outs["numpy"][0]).equals(_sorted_text(outs["duckdb"][0]))
    for key in ("verification", "row_order"):  # the file path's own verifier and row order
        sn.pop(key), sd.pop(key)
    assert sn == sd


def _sorted_text(text):
    import io

    t = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    return t.sort_values(list(t.columns)).reset_index(drop=True)


@pytest.mark.parametrize("extra,msg", [
    (["--spark-master", "local[2]"], "--spark-master needs --engine spark"),
    (["--engine", "oracle"], "unknown engine"),
    (["--engine", "duckdb", "--memory-limit", "lots"], "--memory-limit 'lots': expected a number and a unit"),
    (["--engine", "numpy", "--memory-limit", "1GB"], "the numpy engine holds the table in memory"),
])  # fmt: skip
def test_cli_engine_refused_exit_2(tmp_path, extra, msg):
    r = _cli(["timestamped", str(SAMPLE), "--time", "START", "--uid", "PATIENT", "--k", "3", "--max-suppression", "0.1",
              "--out", str(tmp_path / "o.csv"), "-q", *extra])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert msg in " ".join(r.output.split())
    assert not (tmp_path / "o.csv").exists()


# ---- joint search (time and hierarchies together) on DuckDB -------------------------------------
ENC_ROWS = [["wellness", "preventive", "*"], ["ambulatory", "visit", "*"], ["outpatient", "visit", "*"],
            ["urgentcare", "acute", "*"], ["emergency", "acute", "*"], ["inpatient", "stay", "*"],
            ["snf", "stay", "*"], ["hospice", "stay", "*"], ["virtual", "visit", "*"]]  # fmt: skip


def _same_joint(df, **kw):
    """numpy and DuckDB (or ``engine=``) joint searches: same node, metrics, candidates, minimal nodes
    and rows."""
    ab = _both(df, wall_time=True, **kw)
    if ab is None:
        return None
    a, b = ab
    key = lambda r: r.astype(str).sort_values(list(r.columns)).reset_index(drop=True)  # noqa: E731
    pd.testing.assert_frame_equal(key(a.released), key(b.released))
    pd.testing.assert_frame_equal(a.released, b.released)  # same seed, same classes: same order too
    return a


@pytest.mark.parametrize("k,ms,metric", [(3, 0.01, "gen_c"), (5, 0.05, "gen_c"), (2, 0.0, "gen_m"), (2, 0.05, "loss"), (3, 0.02, "height")])
def test_joint_sample_encounters_same_as_numpy(encounters, k, ms, metric):
    from tempanon.hierarchy import Hierarchy

    hier = {"ENCOUNTERCLASS": Hierarchy.from_rows("ENCOUNTERCLASS", ENC_ROWS)}
    res = _same_joint(encounters, time="START", qi=["ENCOUNTERCLASS"], k=k, uid="PATIENT", max_suppression=ms,
                      hierarchies=hier, metric=metric, granularities="day,week,month,quarter,year")  # fmt: skip
    if ms > 0:  # without suppression no node is anonymous here (both engines say so, same message)
        assert res is not None and res.summary["mode"] == "joint"


AGE_ROWS = [[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"] for a in range(20, 60)]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=relations(), k=st.integers(2, 4), ms=st.sampled_from([0.0, 0.1, 0.4]), with_uid=st.booleans(),
       metric=st.sampled_from(["gen_c", "gen_m", "height"]), seed=st.integers(0, 2**16),
       grans=st.sampled_from(["hour,day,week,month,year", "day,business-day,month"]))  # fmt: skip
def test_joint_random_relations_same_as_numpy(df, k, ms, with_uid, metric, seed, grans):
    from tempanon.hierarchy import Hierarchy

    rng = np.random.default_rng(seed)
    df = df.assign(age=rng.integers(20, 60, len(df)).astype(str))
    hier = {"age": Hierarchy.from_rows("age", AGE_ROWS)}
    _same_joint(df, time="t", qi=["sex", "age"], k=k, uid="uid" if with_uid else None, max_suppression=ms,
                metric=metric, granularities=grans, hierarchies=hier)  # fmt: skip


def test_cli_engine_duckdb_joint_same_files(tmp_path):
    """``timestamped --hierarchies --engine duckdb`` runs out of core (the joint search's frequency
    sets in DuckDB): the same released rows and summary as numpy."""
    import json

    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "ENCOUNTERCLASS.csv").write_text("\n".join(";".join(r) for r in ENC_ROWS) + "\n")
    outs = {}
    for eng in ("numpy", "duckdb"):
        r = _cli(["timestamped", str(SAMPLE), "--time", "START", "--uid", "PATIENT", "--k", "3", "--qi", "ENCOUNTERCLASS",
                  "--hierarchies", str(tmp_path / "h"), "--granularities", "day,week,month,year", "--max-suppression",
                  "0.02", "--out", str(tmp_path / f"{eng}.csv"), "--summary", str(tmp_path / f"{eng}.json"),
                  "--shuffle-seed", "5", "-q", "--engine", eng])  # fmt: skip
        assert r.exit_code == 0, r.output
        outs[eng] = ((tmp_path / f"{eng}.csv").read_text(), json.loads((tmp_path / f"{eng}.json").read_text()))
    pd.testing.assert_frame_equal(_sorted_text(outs["numpy"][0]), _sorted_text(outs["duckdb"][0]))  # same rows
    sn, sd = outs["numpy"][1], outs["duckdb"][1]
    plan = sd.pop("plan")
    assert plan["engine"] == "duckdb" and "out of core" in plan["input"]  # the file read in place
    for key in ("search_seconds", "row_order"):
        sn.pop(key), sd.pop(key)
    vn, vd = sn.pop("verification"), sd.pop("verification")
    assert vd["verified_file"] and vd["classes"] == vn["classes"] and vd["qi_generalization"] == vn["qi_generalization"]
    assert sn == sd


JOB = """\
[input]
path = "SAMPLE"

[columns]
time = "START"
uid = "PATIENT"
quasi_identifiers = ["ENCOUNTERCLASS"]
keep = ["DESCRIPTION"]

[model]
name = "timestamped"
k = 3
max_suppression = 0.06
ENGINE

[output]
table = "out-NAME/t-anon.csv"
summary = "out-NAME/summary.json"
"""


def test_job_engine_key_timestamped(tmp_path):
    outs = {}
    for eng in ("numpy", "duckdb"):
        job = tmp_path / f"{eng}.toml"
        job.write_text(JOB.replace("SAMPLE", str(SAMPLE)).replace("ENGINE", f'engine = "{eng}"').replace("NAME", eng))
        r = _cli(["run", str(job), "-q"])
        assert r.exit_code == 0, r.output
        t = pd.read_csv(tmp_path / f"out-{eng}" / "t-anon.csv", dtype=str, keep_default_na=False)
        outs[eng] = t.sort_values(list(t.columns)).reset_index(drop=True)
    pd.testing.assert_frame_equal(outs["duckdb"], outs["numpy"])
    job = tmp_path / "bad.toml"
    job.write_text(JOB.replace("SAMPLE", str(SAMPLE)).replace("ENGINE", 'engine = "polars"').replace("NAME", "bad"))
    r = _cli(["run", str(job), "-q"])
    assert r.exit_code == 2, r.output
    assert "unknown engine" in " ".join(r.output.split())


# ---- out of core: the file read in place by DuckDB, the release written and verified by SQL ----------
def _read_release(out, suffix):
    """A written release: a file (DuckDB) or a directory of part files (Spark)."""
    if out.is_dir() and suffix != ".parquet":
        parts = sorted(out.glob("part-*"))
        return pd.concat([pd.read_csv(p, dtype=str, keep_default_na=False) for p in parts], ignore_index=True)
    return pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out, dtype=str, keep_default_na=False)


def _same_file(df_or_path, tmp_path, suffix=".csv", _numpy_drop=(), engine="duckdb", **kw):
    """The out-of-core file path against the in-memory numpy path: same summary (but its plan,
    verifier report and row order) and the same released rows after sorting."""
    from tempanon.data.io import read_table
    from tempanon.temporal.outofcore import anonymize_timestamped_file

    if isinstance(df_or_path, pd.DataFrame):
        path = tmp_path / ("in.parquet" if suffix == ".parquet" else "in.csv")
        df_or_path.to_parquet(path, index=False) if suffix == ".parquet" else df_or_path.to_csv(path, index=False)
    else:
        path = df_or_path
    out = tmp_path / f"out{suffix}"
    out.unlink(missing_ok=True)
    df = read_table(path, as_text=True)
    eng = {} if engine == "duckdb" else {"engine": engine}
    try:
        a = anonymize_timestamped(df, engine="numpy", shuffle_seed=1, **{x: v for x, v in kw.items() if x not in _numpy_drop})
    except (NoSolutionError, InputError) as exc:
        with pytest.raises(type(exc)) as info:
            anonymize_timestamped_file(path, out=out, **eng, **kw)
        assert str(info.value) == str(exc)
        assert not out.exists()
        return None
    b = anonymize_timestamped_file(path, out=out, **eng, **kw)
    sa, sb = dict(a.summary), dict(b.summary)
    assert sb.pop("plan")["engine"] == engine
    va, vb = sa.pop("verification"), sb.pop("verification")
    assert vb["verified_file"] and vb["rows_out"] == sa["released_tuples"] and vb["classes"] == va["classes"]
    sa.pop("row_order"), sb.pop("row_order")
    sa.pop("search_seconds", None), sb.pop("search_seconds", None)  # (joint search: wall time)
    assert sa == sb
    got = _read_release(out, suffix)
    got = got.astype(object).where(got.notna(), "").astype(str)
    exp = a.released.astype(object).where(a.released.notna(), "").astype(str)
    key = lambda t: t.sort_values(list(t.columns)).reset_index(drop=True)  # noqa: E731
    pd.testing.assert_frame_equal(key(got), key(exp.reset_index(drop=True)))
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    return b


@pytest.mark.parametrize("qi,k,ms", [([], 3, 0.01), (["ENCOUNTERCLASS"], 5, 0.2)])
def test_file_sample_same_as_numpy(tmp_path, qi, k, ms):
    res = _same_file(SAMPLE, tmp_path, time="START", qi=qi, k=k, uid="PATIENT", max_suppression=ms, keep=["DESCRIPTION"])
    if (qi, k, ms) == ([], 3, 0.01):
        assert res.summary["granularity"] == "semester"
        assert (res.summary["gen_m"], res.summary["gen_s"], res.summary["suppressed"]) == (3, 2968, 63)


def test_file_parquet_and_timezone(tmp_path, encounters):
    _same_file(encounters, tmp_path, suffix=".parquet", time="START", qi=["ENCOUNTERCLASS"], k=2, uid="PATIENT",
               max_suppression=0.1, granularities="day,business-day,week,2weeks,month,quarter",
               timezone="America/New_York", country="US")  # fmt: skip


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(df=relations(), k=st.integers(2, 4), ms=st.sampled_from([0.0, 0.1, 0.4]), with_uid=st.booleans(),
       with_qi=st.booleans(), metric=st.sampled_from(["gen_c", "gen_m", "gen_s"]),
       grans=st.sampled_from([None, "hour,day,week,month,year", "day,business-day,month"]))  # fmt: skip
def test_file_random_relations_same_as_numpy(tmp_path, df, k, ms, with_uid, with_qi, metric, grans):
    _same_file(df, tmp_path, time="t", qi=["sex"] if with_qi else [], k=k, uid="uid" if with_uid else None,
               max_suppression=ms, metric=metric, granularities=grans)  # fmt: skip


def test_file_errors_name_the_line(tmp_path):
    df = pd.DataFrame({"uid": ["a", "b", "a", "c", "b"], "t": ["2023-01-01 10:00", "2023-01-02 11:00", "2023-01-03",
                                                              "not a time", "2023-01-05"]})  # fmt: skip
    _same_file(df, tmp_path, time="t", uid="uid", k=2)  # same InputError text as numpy: line 5, the value
    df2 = df.assign(t=["2023-01-01", "2023-01-02", "2023-01-03+02:00", "2023-01-04", "2023-01-05"])
    _same_file(df2, tmp_path, time="t", uid="uid", k=2)  # mixed naive and aware: line 4
    df3 = df.assign(t="2023-01-01", uid=["a", None, "b", "c", "d"])
    _same_file(df3, tmp_path, time="t", uid="uid", k=2)  # missing respondent id: line 3


def _small_csv(tmp_path):
    """200 events of 20 respondents over two months, with a column released unchanged (note)."""
    rng = np.random.default_rng(4)
    t = pd.Timestamp("2023-01-01") + pd.to_timedelta(rng.integers(0, 60 * 24, 200), unit="h")
    df = pd.DataFrame({"PATIENT": [f"p{i}" for i in rng.integers(0, 20, 200)], "CLS": rng.choice(["a", "b"], 200),
                       "START": t.strftime("%Y-%m-%d %H:%M:%S"), "NOTE": rng.choice(["x1", "x2", "x3"], 200)})  # fmt: skip
    path = tmp_path / "small.csv"
    df.to_csv(path, index=False)
    return path


def test_file_verification_refuses_a_corrupted_release(tmp_path, monkeypatch):
    """A writer that changes one released row: the independent check of the written file refuses,
    nothing is written (no output, no temporary file), exit 3 in the command."""
    import tempanon.temporal.outofcore as ooc
    from tempanon.errors import VerificationError

    orig = ooc._write
    small = _small_csv(tmp_path)
    kw = dict(time="START", qi=["CLS"], k=3, uid="PATIENT", max_suppression=0.06)

    def corrupt_label(sq, query, path, parquet):  # one row's time label moved to another granule
        orig(sq, f"SELECT * REPLACE (CASE WHEN row_number() OVER () = 5 THEN '1999S1' ELSE START END AS START) "
                 f"FROM ({query})", path, parquet)

    def corrupt_value(sq, query, path, parquet):  # one row's class kept whole, another column changed
        orig(sq, f"SELECT * REPLACE (CASE WHEN row_number() OVER () = 5 THEN 'changed' ELSE NOTE END AS NOTE) "
                 f"FROM ({query})", path, parquet)

    def drop_row(sq, query, path, parquet):  # a class released without one of its rows
        orig(sq, f"SELECT * FROM ({query}) LIMIT (SELECT count(*) - 1 FROM ({query}))", path, parquet)

    out = tmp_path / "rel" / "out.csv"
    for bad, msg in ((corrupt_label, "not the generalization|rows generalizing"), (corrupt_value, "a value was changed"),
                     (drop_row, "rows generalizing to it|not the generalization")):  # fmt: skip
        monkeypatch.setattr(ooc, "_write", bad)
        with pytest.raises(VerificationError, match=msg):
            ooc.anonymize_timestamped_file(small, out=out, keep=["NOTE"], **kw)
        assert not out.exists() and list(out.parent.iterdir()) == []
    args = ["timestamped", str(small), "--time", "START", "--uid", "PATIENT", "--k", "3", "--qi", "CLS",
            "--max-suppression", "0.06", "--out", str(out), "--summary", str(tmp_path / "s.json"), "-q", "--engine", "duckdb"]
    monkeypatch.setattr(ooc, "_write", corrupt_label)
    r = _cli(args)
    assert r.exit_code == 3, r.output
    assert not out.exists() and not (tmp_path / "s.json").exists() and list(out.parent.iterdir()) == []
    monkeypatch.setattr(ooc, "_write", orig)
    r = _cli(args)
    assert r.exit_code == 0, r.output
    assert out.exists() and (tmp_path / "s.json").exists()


def _audited(release_text, audit_path):
    """Released rows keyed by their input line, from a release and its steward audit."""
    import io

    from tempanon.temporal.api import read_audit

    rel = pd.read_csv(io.StringIO(release_text), dtype=str, keep_default_na=False)
    aud = read_audit(audit_path)
    assert list(aud["release_row"]) == [str(i) for i in range(1, len(rel) + 1)]
    rel.index = pd.MultiIndex.from_arrays([aud["input_line"], aud["respondent"]])
    return rel.sort_index()


@pytest.mark.parametrize("joint", [False, True])
def test_cli_engine_duckdb_audit_out_of_core(tmp_path, joint):
    """--audit with --engine duckdb: written by DuckDB beside the out-of-core release, and checked
    row by row; each input line is released as the same row, for the same respondent, as numpy's."""
    if joint:
        (tmp_path / "h").mkdir()
        (tmp_path / "h" / "ENCOUNTERCLASS.csv").write_text("\n".join(";".join(r) for r in ENC_ROWS) + "\n")
    outs = {}
    for eng in ("numpy", "duckdb"):
        (tmp_path / eng).mkdir()
        r = _cli(["timestamped", str(SAMPLE), "--time", "START", "--uid", "PATIENT", "--k", "3", "--max-suppression", "0.06",
                  "--qi", "ENCOUNTERCLASS", "--out", str(tmp_path / eng / "o.csv"), "--audit", str(tmp_path / f"{eng}-audit.csv"),
                  "--engine", eng, "--summary", str(tmp_path / f"{eng}.json"),
                  *(["--hierarchies", str(tmp_path / "h"), "--granularities", "day,week,month,year"] if joint else [])])  # fmt: skip
        assert r.exit_code == 0, r.output
        assert "into memory" not in " ".join(r.output.split())
        outs[eng] = _audited((tmp_path / eng / "o.csv").read_text(), tmp_path / f"{eng}-audit.csv")
    pd.testing.assert_frame_equal(outs["numpy"], outs["duckdb"])
    import json

    s = json.loads((tmp_path / "duckdb.json").read_text())
    assert "out of core" in s["plan"]["input"] and s["verification"]["audit"].startswith("checked row by row")
    assert "recorded in the steward audit only" in s["row_order"]


def test_file_audit_refused_when_it_does_not_match_the_release(tmp_path, monkeypatch):
    """A release written in another order than the audit's (classes intact, so the class check
    passes): the row-by-row audit check refuses, and neither the release nor the audit is written."""
    import tempanon.temporal.outofcore as ooc
    from tempanon.errors import VerificationError

    orig = ooc._write

    def reversed_rows(sq, query, path, parquet):
        orig(sq, f"SELECT * EXCLUDE (z) FROM (SELECT *, row_number() OVER () AS z FROM ({query})) ORDER BY z DESC",
             path, parquet)  # fmt: skip

    monkeypatch.setattr(ooc, "_write", reversed_rows)
    small = _small_csv(tmp_path)
    (tmp_path / "rel").mkdir()
    (tmp_path / "st").mkdir()
    with pytest.raises(VerificationError, match="audit row"):
        ooc.anonymize_timestamped_file(small, out=tmp_path / "rel" / "o.csv", audit=tmp_path / "st" / "a.csv",
                                       time="START", qi=["CLS"], k=3, uid="PATIENT", max_suppression=0.06)  # fmt: skip
    assert list((tmp_path / "rel").iterdir()) == [] and list((tmp_path / "st").iterdir()) == []
    with pytest.raises(InputError, match="inside the release's folder"):
        ooc.anonymize_timestamped_file(small, out=tmp_path / "rel" / "o.csv", audit=tmp_path / "rel" / "a.csv",
                                       time="START", k=3, uid="PATIENT")  # fmt: skip


def test_file_shuffle_seed_reproducible(tmp_path):
    from tempanon.temporal.outofcore import anonymize_timestamped_file

    kw = dict(time="START", qi=["CLS"], k=3, uid="PATIENT", max_suppression=0.06, keep=["NOTE"])
    small = _small_csv(tmp_path)
    texts = []
    for name in ("a.csv", "b.csv"):
        anonymize_timestamped_file(small, out=tmp_path / name, shuffle_seed=9, **kw)
        texts.append((tmp_path / name).read_text())
    assert texts[0] == texts[1]
    t = pd.read_csv(tmp_path / "a.csv", dtype=str, keep_default_na=False)
    # rows grouped by class: each (ENCOUNTERCLASS, START) class is one contiguous block
    key = t["CLS"] + "|" + t["START"]
    assert int(key.ne(key.shift()).sum()) == key.nunique()


def test_file_refuses_to_overwrite_its_input(tmp_path):
    from tempanon.temporal.outofcore import anonymize_timestamped_file

    small = _small_csv(tmp_path)
    before = small.read_text()
    with pytest.raises(InputError, match="is the input"):
        anonymize_timestamped_file(small, out=small, time="START", uid="PATIENT", k=3)
    link = tmp_path / "hardlink.csv"  # the input under another name
    os.link(small, link)
    with pytest.raises(InputError, match="is the input"):
        anonymize_timestamped_file(small, out=link, time="START", uid="PATIENT", k=3)
    assert small.read_text() == before


# ---- joint search out of core: frequency sets, metrics and the release from DuckDB ----------------------
@pytest.mark.parametrize("max_driver_rows", [None, 0])  # bottom set fetched / frequency sets in the engine
@pytest.mark.parametrize("k,ms,metric", [(3, 0.02, "gen_c"), (5, 0.05, "gen_m"), (2, 0.05, "loss"), (3, 0.02, "height"),
                                         (3, 0.0, "gen_c")])
def test_file_joint_sample_same_as_numpy(tmp_path, k, ms, metric, max_driver_rows):
    from tempanon.hierarchy import Hierarchy

    hier = {"ENCOUNTERCLASS": Hierarchy.from_rows("ENCOUNTERCLASS", ENC_ROWS)}
    res = _same_file(SAMPLE, tmp_path, time="START", qi=["ENCOUNTERCLASS"], k=k, uid="PATIENT", max_suppression=ms,
                     hierarchies=hier, metric=metric, granularities="day,week,month,quarter,year", keep=["DESCRIPTION"],
                     max_driver_rows=max_driver_rows, _numpy_drop=("max_driver_rows",))  # fmt: skip
    if ms > 0:
        plan = res.summary["plan"]
        assert res.summary["mode"] == "joint"
        assert plan["path"] == ("frequency sets in engine" if max_driver_rows == 0 else "bottom on driver")
        assert (plan.get("grouping_sets_jobs", 0) > 0) == (max_driver_rows == 0)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(df=relations(), k=st.integers(2, 4), ms=st.sampled_from([0.0, 0.1, 0.4]), with_uid=st.booleans(),
       metric=st.sampled_from(["gen_c", "gen_m", "height", "discernibility"]), seed=st.integers(0, 2**16),
       grans=st.sampled_from(["hour,day,week,month,year", "day,business-day,month"]),
       max_driver_rows=st.sampled_from([None, 0]), missing_age=st.booleans())  # fmt: skip
def test_file_joint_random_relations_same_as_numpy(tmp_path, df, k, ms, with_uid, metric, seed, grans, max_driver_rows,
                                                   missing_age):  # fmt: skip
    from tempanon.hierarchy import Hierarchy

    rng = np.random.default_rng(seed)
    age = rng.integers(20, 60, len(df)).astype(str).astype(object)
    if missing_age:
        age[rng.random(len(df)) < 0.2] = None
    df = df.assign(age=age)
    hier = {"age": Hierarchy.from_rows("age", AGE_ROWS)}
    _same_file(df, tmp_path, time="t", qi=["sex", "age"], k=k, uid="uid" if with_uid else None, max_suppression=ms,
               metric=metric, granularities=grans, hierarchies=hier, max_driver_rows=max_driver_rows,
               _numpy_drop=("max_driver_rows",))  # fmt: skip


def test_file_joint_value_missing_from_hierarchy_names_the_line(tmp_path):
    from tempanon.errors import HierarchyError
    from tempanon.hierarchy import Hierarchy
    from tempanon.temporal.outofcore import anonymize_timestamped_file

    df = pd.DataFrame({"uid": ["a", "b", "c", "d"], "t": ["2023-01-01"] * 4, "age": ["20", "21", "99", "22"]})
    df.to_csv(tmp_path / "in.csv", index=False)
    with pytest.raises(HierarchyError, match=r"'99' \(line 4\)"):
        anonymize_timestamped_file(tmp_path / "in.csv", out=tmp_path / "o.csv", time="t", qi=["age"], uid="uid", k=2,
                                   hierarchies={"age": Hierarchy.from_rows("age", AGE_ROWS)})  # fmt: skip
    assert not (tmp_path / "o.csv").exists()


def test_file_joint_verification_refuses_a_wrong_generalization(tmp_path, monkeypatch):
    """A writer that releases one row's generalized quasi-identifier at another level: the check of
    the written file against the hierarchy's mapping refuses; nothing is written."""
    import tempanon.temporal.outofcore as ooc
    from tempanon.errors import VerificationError
    from tempanon.hierarchy import Hierarchy

    orig = ooc._write
    small = _small_csv(tmp_path)
    hier = {"CLS": Hierarchy.from_rows("CLS", [["a", "*"], ["b", "*"]])}

    def relabel(sq, query, path, parquet):
        orig(sq, f"SELECT * REPLACE (CASE WHEN row_number() OVER () = 3 THEN 'a' ELSE CLS END AS CLS) FROM ({query})",
             path, parquet)  # fmt: skip

    monkeypatch.setattr(ooc, "_write", relabel)
    out = tmp_path / "rel" / "out.csv"
    with pytest.raises(VerificationError, match="not the generalization|rows generalizing"):
        ooc.anonymize_timestamped_file(small, out=out, time="START", qi=["CLS"], k=6, uid="PATIENT",
                                       max_suppression=0.05, hierarchies=hier, granularities="day,week,month")  # fmt: skip
    assert not out.exists() and list(out.parent.iterdir()) == []


def test_procedure2_previous_tuple_link_matches_numpy():
    """DuckDB's Procedure 2 by the previous-tuple link (lag over respondent and QI values, a new
    respondent of a class when the previous tuple lies before the granule's first instant):
    duplicates, missing times between present ones, one respondent in many classes."""
    from tempanon.lattice.source_temporal import DuckDBTimeSource
    from tempanon.temporal.granularity import parse_granularity
    from tempanon.temporal.least import check_granularity, prepare

    rng = np.random.default_rng(11)
    n = 3000
    t = (pd.Timestamp("2023-01-01").value // 10**9 + rng.integers(0, 90 * 86400 // 3600, n) * 3600).astype(np.int64)
    t[::7] = t[::7][0]  # many duplicates of one instant
    miss = rng.random(n) < 0.1
    q, u = rng.integers(0, 3, n), rng.integers(0, 40, n)
    prep = prepare(q, t, miss, u)
    src = DuckDBTimeSource(q, t, miss, u)
    try:
        for name in ("hour", "day", "week", "month", "quarter"):
            g = parse_granularity(name)
            for k, ms in ((2, 0), (5, 50), (12, 400)):
                a, b = check_granularity(prep, g, k, ms), src.check(g, k, ms)
                assert (a.k_anonymous, a.suppressed, a.gen_m, a.gen_s, a.classes, a.min_respondents, a.gen_s_all) == \
                       (b.k_anonymous, b.suppressed, b.gen_m, b.gen_s, b.classes, b.min_respondents, b.gen_s_all), (name, k)
    finally:
        src.close()


@pytest.mark.parametrize("max_driver_rows", [None, 0])
def test_file_joint_empty_text_and_missing_are_one_hierarchy_value(tmp_path, max_driver_rows):
    """A Parquet hierarchy column holding both '' and a missing value: the hierarchy reads both as
    the text '' (one base value), so the time-only candidates (nodes ``(v, 0, ..)``) count them as
    one class on both paths; in memory they were counted apart from the search's own level 0."""
    from tempanon.hierarchy import Hierarchy

    rng = np.random.default_rng(0)
    n = 48
    cls = rng.choice(np.array(["a", "b", "", None], dtype=object), n)
    df = pd.DataFrame({"uid": [f"u{i}" for i in rng.integers(0, 20, n)],
                       "t": pd.to_datetime(1672531200 + rng.integers(0, 86400 * 20, n), unit="s").astype(str),
                       "cls": cls})  # fmt: skip
    hier = {"cls": Hierarchy.from_rows("cls", [["", "blank", "*"], ["a", "ab", "*"], ["b", "ab", "*"]])}
    res = _same_file(df, tmp_path, suffix=".parquet", time="t", qi=["cls"], uid="uid", k=2, max_suppression=0.1,
                     hierarchies=hier, granularities="hour,day,week,month", max_driver_rows=max_driver_rows,
                     _numpy_drop=("max_driver_rows",))  # fmt: skip
    day = next(c for c in res.summary["candidates"] if c["granularity"] == "day")
    codes = np.where(pd.isna(cls), "", cls)  # '' and missing: one value
    t = pd.to_datetime(df["t"]).dt.floor("D")
    resp = pd.DataFrame({"c": codes, "t": t, "u": df["uid"]}).groupby(["c", "t"])["u"].nunique()
    assert day["suppressed"] == int(pd.DataFrame({"c": codes, "t": t}).merge(
        resp[resp < 2].rename("r").reset_index(), on=["c", "t"]).shape[0])  # brute force: tuples in small classes


# ---- Spark (marker ``spark``): the same queries in Spark SQL, rows encoded on the driver ------------------
@pytest.mark.spark
@pytest.mark.parametrize("qi,k,ms", [([], 3, 0.01), (["ENCOUNTERCLASS"], 5, 0.2)])
def test_spark_sample_encounters_same_as_numpy(spark_session, encounters, qi, k, ms):
    res = _same(encounters, engine="spark", time="START", qi=qi, k=k, uid="PATIENT", max_suppression=ms)
    assert res is not None
    if not qi:
        assert (res.summary["granularity"], res.summary["suppressed"]) == ("semester", 63)


@pytest.mark.spark
@pytest.mark.parametrize("k,ms,metric", [(3, 0.01, "gen_c"), (2, 0.05, "loss")])
def test_spark_joint_sample_encounters_same_as_numpy(spark_session, encounters, k, ms, metric):
    from tempanon.hierarchy import Hierarchy

    hier = {"ENCOUNTERCLASS": Hierarchy.from_rows("ENCOUNTERCLASS", ENC_ROWS)}
    res = _same_joint(encounters, engine="spark", time="START", qi=["ENCOUNTERCLASS"], k=k, uid="PATIENT",
                      max_suppression=ms, hierarchies=hier, metric=metric, granularities="day,week,month,quarter,year")  # fmt: skip
    assert res is not None and res.summary["mode"] == "joint"


@pytest.mark.spark
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(df=relations(), k=st.integers(2, 4), ms=st.sampled_from([0.0, 0.1, 0.4]), with_uid=st.booleans(),
       with_qi=st.booleans(), joint=st.booleans(), grans=st.sampled_from(["hour,day,week,month,year", "day,business-day,month"]))  # fmt: skip
def test_spark_random_relations_same_as_numpy(spark_session, df, k, ms, with_uid, with_qi, joint, grans):
    kw = dict(time="t", k=k, uid="uid" if with_uid else None, max_suppression=ms, granularities=grans)
    if joint:
        from tempanon.hierarchy import Hierarchy

        df = df.assign(age=[str(20 + (i * 7) % 40) for i in range(len(df))])
        _same_joint(df, engine="spark", qi=["sex", "age"], hierarchies={"age": Hierarchy.from_rows("age", AGE_ROWS)}, **kw)
    else:
        _same(df, engine="spark", qi=["sex"] if with_qi else [], **kw)


@pytest.mark.spark
def test_cli_and_job_engine_spark_same_files(spark_session, tmp_path):
    """``timestamped --engine spark --spark-master local[2]`` (the file read and the release written by
    Spark) and a job with ``engine = "spark"`` (since session 24 the same file route: the release a
    directory of part files): the same release as numpy's, the summary's plan names Spark."""
    import json

    outs = {}
    for name, extra in (("numpy", ["--engine", "numpy"]), ("spark", ["--engine", "spark", "--spark-master", "local[2]"])):
        r = _cli(["timestamped", str(SAMPLE), "--time", "START", "--uid", "PATIENT", "--qi", "ENCOUNTERCLASS", "--k", "3",
                  "--max-suppression", "0.06", "--keep", "DESCRIPTION", "--out", str(tmp_path / f"{name}.csv"),
                  "--summary", str(tmp_path / f"{name}.json"), "-q", *extra])  # fmt: skip
        assert r.exit_code == 0, r.output
        t = _read_release(tmp_path / f"{name}.csv", ".csv")  # (Spark: a directory of part files)
        outs[name] = t.sort_values(list(t.columns)).reset_index(drop=True)
    assert (tmp_path / "spark.csv").is_dir()
    pd.testing.assert_frame_equal(outs["spark"], outs["numpy"])
    plan = json.loads((tmp_path / "spark.json").read_text())["plan"]
    assert plan["engine"] == "spark" and plan["engine_queries"] >= 2 and "read in place by Spark" in plan["input"]
    job = tmp_path / "spark.toml"
    job.write_text(JOB.replace("SAMPLE", str(SAMPLE)).replace("ENGINE", 'engine = "spark"').replace("NAME", "job"))
    r = _cli(["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out-job" / "t-anon.csv").is_dir()
    t = _read_release(tmp_path / "out-job" / "t-anon.csv", ".csv")
    pd.testing.assert_frame_equal(t.sort_values(list(t.columns)).reset_index(drop=True), outs["numpy"])


@pytest.mark.spark
@pytest.mark.parametrize("qi,k,ms,suffix", [([], 3, 0.01, ".csv"), (["ENCOUNTERCLASS"], 5, 0.2, ".parquet")])
def test_spark_file_sample_same_as_numpy(spark_session, tmp_path, qi, k, ms, suffix):
    """The file read by Spark, the release written by Spark (a directory of part files) and verified
    by SQL on it: the same summary and rows as numpy."""
    res = _same_file(SAMPLE, tmp_path, suffix=suffix, engine="spark", time="START", qi=qi, k=k, uid="PATIENT",
                     max_suppression=ms, keep=["DESCRIPTION"])  # fmt: skip
    assert (tmp_path / f"out{suffix}").is_dir()
    if not qi:
        assert (res.summary["granularity"], res.summary["suppressed"]) == ("semester", 63)


@pytest.mark.spark
def test_spark_file_verification_refuses_a_corrupted_release(spark_session, tmp_path, monkeypatch):
    """A release changed after Spark wrote it (one row's time label moved to another granule) is refused
    by the check of the written files; nothing is left."""
    import tempanon.temporal.outofcore as ooc
    from tempanon.errors import VerificationError

    orig = ooc._write

    def corrupt(sq, query, path, parquet):
        orig(sq, query, path, parquet)
        part = next(p for p in sorted(Path(path).glob("part-*")) if len(p.read_text().splitlines()) > 2)
        lines = part.read_text().splitlines()
        head, row = lines[0].split(","), lines[1].split(",")
        row[head.index("START")] = "1999S1"
        part.write_text("\n".join([lines[0], ",".join(row), *lines[2:]]) + "\n")
        (part.parent / f".{part.name}.crc").unlink(missing_ok=True)  # (a writer's wrong rows, not a damaged file)

    monkeypatch.setattr(ooc, "_write", corrupt)
    out = tmp_path / "rel" / "out.csv"
    with pytest.raises(VerificationError, match="not the generalization|rows generalizing"):
        ooc.anonymize_timestamped_file(SAMPLE, out=out, engine="spark", time="START", uid="PATIENT", k=3,
                                       max_suppression=0.01)  # fmt: skip
    assert not out.exists() and list(out.parent.iterdir()) == []


def test_spark_file_refusals_before_anything_is_read(tmp_path):
    """The Spark file path replaces only an earlier release (a file, or a directory holding nothing
    but a Spark release: tests/engine/test_engine_spark_rerun.py); a directory holding anything else is
    refused before Spark starts (no pyspark needed). (It writes the steward audit:
    ``tests/engine/test_engine_audit_spark.py``.)"""
    from tempanon.temporal.outofcore import anonymize_timestamped_file

    kw = dict(time="START", uid="PATIENT", k=3, engine="spark")
    (tmp_path / "old.csv").mkdir()
    (tmp_path / "old.csv" / "notes.txt").write_text("x\n")
    with pytest.raises(InputError, match="does not hold an earlier Spark release"):
        anonymize_timestamped_file(SAMPLE, out=tmp_path / "old.csv", **kw)
    assert (tmp_path / "old.csv" / "notes.txt").read_text() == "x\n"
    with pytest.raises(InputError, match="unknown engine 'polars'"):
        anonymize_timestamped_file(SAMPLE, out=tmp_path / "a.csv", **{**kw, "engine": "polars"})


@pytest.mark.spark
@pytest.mark.parametrize("max_driver_rows,suffix", [(None, ".parquet"), (0, ".csv")])  # bottom set fetched / in the engine
def test_spark_file_joint_sample_same_as_numpy(spark_session, tmp_path, max_driver_rows, suffix):
    """The joint search on the Spark file path (the bottom set ``jbot`` cached in Spark; with
    ``max_driver_rows=0`` every frequency set a ``GROUPING SETS`` job in Spark): the same node,
    metrics and rows as numpy."""
    from tempanon.hierarchy import Hierarchy

    hier = {"ENCOUNTERCLASS": Hierarchy.from_rows("ENCOUNTERCLASS", ENC_ROWS)}
    res = _same_file(SAMPLE, tmp_path, suffix=suffix, engine="spark", _numpy_drop=("max_driver_rows",), time="START",
                     qi=["ENCOUNTERCLASS"], k=3, uid="PATIENT", max_suppression=0.02, hierarchies=hier,
                     granularities="day,week,month,quarter,year", max_driver_rows=max_driver_rows)  # fmt: skip
    assert res is not None and res.summary["mode"] == "joint"
    assert res.summary["plan"]["path"] == ("bottom on driver" if max_driver_rows is None else "frequency sets in engine")
