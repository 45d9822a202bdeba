"""``tempanon kanon --engine duckdb|spark --report`` and the summary's ``risk`` without pandas
(the rows stay in the engine): the measures and the report come from class aggregates the engine
computes by GROUP BY on the input and on the release as written. The oracle is the numpy path
(``measure`` on DataFrames, itself tested against brute force in tests/steward/test_steward_risk.py):
same summary ``risk``, same report numbers and figures. Spark under the ``spark`` marker."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.hierarchy import build_intervals, build_masking, build_suppression
from tempanon.metrics.risk import measure, risk_from_aggregates
from tempanon.samples import ADULT_QI, adult_hierarchies_dir, adult_path

ENGINES = ["duckdb", pytest.param("spark", marks=pytest.mark.spark)]


# ---- the measures from aggregates: one definition ------------------------------------------------


@st.composite
def small_tables(draw):
    """Small tables of text with missing values both as None and as the empty string."""
    n = draw(st.integers(1, 30))
    vals = st.sampled_from(["a", "b", "c", "", None])
    cols = {c: draw(st.lists(vals, min_size=n, max_size=n)) for c in ("q1", "q2", "s", "t")}
    cols["u"] = draw(st.lists(st.sampled_from(["1", "2", "3", "4", None]), min_size=n, max_size=n))
    return pd.DataFrame(cols, dtype=object)


def pandas_aggregates(df: pd.DataFrame, qi, uid=None, sensitive=()):
    """The class aggregates by pandas group-bys (independent of tempanon's numpy codes): missing
    is the empty string, compared as text."""
    t = df.astype(object).where(df.notna(), "").astype(str)
    g = t.groupby(list(qi), sort=True)
    sizes = g.size().to_numpy()
    kw = {}
    if uid is not None:
        kw["respondents_per_class"] = g[uid].nunique().to_numpy()
        kw["respondents"] = int(t[uid].nunique())
    pairs = []
    for s in sensitive:
        c = t.groupby([*qi, s], sort=False).size().reset_index(name="n")
        cls = c.groupby(list(qi), sort=False).ngroup().to_numpy()  # another class numbering than sizes'
        pairs.append((cls, c["n"].to_numpy()))
    return sizes, kw, pairs


@settings(max_examples=80, deadline=None)
@given(small_tables(), st.booleans(), st.sampled_from([(), ("s",), ("s", "t")]), st.sampled_from([0.2, 0.5, 1.0]))
def test_measure_is_the_aggregate_function_of_pandas_group_bys(df, with_uid, sens, threshold):
    uid = "u" if with_uid else None
    want = measure(df, ["q1", "q2"], uid=uid, sensitive=list(sens), threshold=threshold)
    sizes, kw, pairs = pandas_aggregates(df, ["q1", "q2"], uid, sens)
    got = risk_from_aggregates(sizes, sensitive=pairs, threshold=threshold, **kw)
    assert got.as_dict() == want.as_dict()  # exactly: the sums do not depend on the classes' order
    assert sorted(got.class_sizes) == sorted(want.class_sizes)


def test_aggregates_refuse_inconsistent_input():
    with pytest.raises(ValueError, match="at least one record"):
        risk_from_aggregates(np.array([2, 0]))
    with pytest.raises(ValueError, match="aligned"):
        risk_from_aggregates(np.array([2, 3]), respondents_per_class=np.array([1]), respondents=1)
    with pytest.raises(ValueError, match="same classes"):
        risk_from_aggregates(np.array([2, 3]), sensitive=[(np.array([0, 1]), np.array([2, 2]))])


def _source(engine: str, df: pd.DataFrame, tmp_path: Path, as_file: bool):
    from tempanon.lattice.source import open_source

    if as_file:  # CSV: an empty cell is read as missing by both pandas and the engine
        p = tmp_path / "in.csv"
        df.to_csv(p, index=False)
        return open_source(p, engine)
    return open_source(df, engine)


def _engine_tables():
    rng = np.random.default_rng(11)
    out = []
    for n in (1, 7, 60):
        df = pd.DataFrame({c: rng.choice(np.array(["a", "b", "", None], dtype=object), n) for c in ("q1", "q2", "s")})
        df["u"] = rng.choice(np.array(["1", "2", "3", None], dtype=object), n)
        out.append(df)
    return out


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("as_file", [False, True])
def test_input_aggregates_match_measure_null_and_empty_are_one_category(engine, as_file, tmp_path, request):
    """The engine's GROUP BY compares values as text with NULL and '' one category (coalesce to
    ''), as ``measure`` does with ``as_text``: same measures, uid and sensitive columns included."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    for i, df in enumerate(_engine_tables()):
        src = _source(engine, df, tmp_path, as_file)
        try:
            for uid, sens in ((None, []), ("u", ["s"]), (None, ["s", "u"])):
                got = src.input_aggregates(["q1", "q2"], uid=uid, sensitive=sens).risk(0.5)
                want = measure(df, ["q1", "q2"], uid=uid, sensitive=sens, threshold=0.5)
                assert got.as_dict() == want.as_dict(), (i, uid, sens)
                per_class = got.class_sizes if got.class_counts is None else np.repeat(got.class_sizes, got.class_counts)
                assert sorted(per_class) == sorted(want.class_sizes)
                assert (got.class_counts is not None) == (not sens)  # a histogram without sensitive columns
        finally:
            src.close()
    # the two spellings of missing are one class (and not dropped)
    df = pd.DataFrame({"q1": ["", None, "", None, "x"], "q2": ["a"] * 5}, dtype=object)
    src = _source(engine, df, tmp_path, as_file)
    try:
        r = src.input_aggregates(["q1", "q2"]).risk()
    finally:
        src.close()
    assert (r.rows, r.classes, r.k) == (5, 2, 1)


# ---- the CLI: engine path against the numpy path ----------------------------------------------------


def generated(tmp_path: Path, seed: int = 5, n_people: int = 150) -> tuple[Path, Path]:
    """A table of visits (several rows per person ``pid``) with missing values in two
    quasi-identifiers, a sensitive diagnosis, and its hierarchies as CSV files in ``h/``."""
    rng = np.random.default_rng(seed)
    people = pd.DataFrame({
        "pid": [f"p{i:04d}" for i in range(n_people)],
        "age": rng.integers(18, 90, n_people).astype(str),
        "sex": rng.choice(["F", "M"], n_people),
        "zip": rng.choice(["53711", "53715", "53703", "53706", "54001", "54002"], n_people),
        "race": rng.choice(["white", "black", "asian", "other"], n_people, p=[0.6, 0.2, 0.1, 0.1]),
    })  # fmt: skip
    df = people.loc[np.repeat(np.arange(n_people), rng.integers(1, 4, n_people))].reset_index(drop=True)
    df["dx"] = rng.choice(["flu", "cold", "asthma", "ulcer", "hiv"], len(df))
    df.loc[rng.random(len(df)) < 0.05, "race"] = np.nan  # missing values are a category
    df.loc[rng.random(len(df)) < 0.03, "sex"] = np.nan
    path = tmp_path / "visits.csv"
    df.to_csv(path, index=False)
    hdir = tmp_path / "h"
    hdir.mkdir()
    hier = {
        "age": build_intervals("age", df["age"], [5, 10, 20, 40]),
        "sex": build_suppression("sex", df["sex"].dropna()),
        "zip": build_masking("zip", df["zip"]),
        "race": build_suppression("race", df["race"].dropna()),
    }
    for q, h in hier.items():
        h.to_csv(hdir / f"{q}.csv")
    return path, hdir


def _run(tmp_path: Path, engine: str, args: list[str], suffix: str = ".csv") -> tuple[dict, str, Path]:
    d = tmp_path / engine
    d.mkdir(exist_ok=True)
    out, summ, rep = d / f"out{suffix}", d / "summary.json", d / "report.html"
    r = CliRunner().invoke(app, ["kanon", *args, "--out", str(out), "--summary", str(summ), "--report", str(rep),
                                 "--engine", engine, "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    return json.loads(summ.read_text()), rep.read_text(encoding="utf-8"), out


def sections(html: str) -> dict[str, dict]:
    """Per report section: its tables (rows of cell texts), figures (inline SVG) and status lines."""
    out = {}
    for key, body in re.findall(r'<section id="([^"]+)".*?>(.*?)</section>', html, flags=re.S):
        tables = [[re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, flags=re.S) for row in re.findall(r"<tr.*?</tr>", t, flags=re.S)]
                  for t in re.findall(r"<table.*?</table>", body, flags=re.S)]  # fmt: skip
        rest = re.sub(r"<table.*?</table>|<svg.*?</svg>|<p class=\"(?:ok|bad)\">.*?</p>", "", body, flags=re.S)
        out[key] = {"tables": tables, "figures": re.findall(r"<svg.*?</svg>", body, flags=re.S),
                    "status": re.findall(r'<p class="(?:ok|bad)">(.*?)</p>', body, flags=re.S),
                    "text": " ".join(re.sub(r"<[^>]+>", " ", rest).split())}  # fmt: skip
    return out


def assert_same_report(numpy_html: str, engine_html: str) -> None:
    """Same sections, tables, figures (class sizes, risk, losses, lattice) and verdict; the utility
    table's examples of released values in the same (hierarchy) order. One thing differs by design:
    the checker named in the guarantee's status line."""
    a, b = sections(numpy_html), sections(engine_html)
    assert list(a) == list(b)
    for key in a:
        assert b[key]["figures"] == a[key]["figures"], key
        assert b[key]["text"] == a[key]["text"], key  # key/value lists (losses, suppression), captions
        assert b[key]["tables"] == a[key]["tables"], key
        if key == "guarantee":
            assert len(a[key]["status"]) == len(b[key]["status"]) == 1
            assert "k-anonymity" in b[key]["status"][0] and "NOT verified" not in b[key]["status"][0]
            assert "written release" in b[key]["status"][0]
        else:
            assert b[key]["status"] == a[key]["status"], key


def _compare(tmp_path, engine, args, suffix=".csv"):
    sn, hn, _ = _run(tmp_path, "numpy", args, suffix)
    se, he, out = _run(tmp_path, engine, args, suffix)
    assert se["engine"] == engine
    assert se["risk"] == sn["risk"]  # exactly: same aggregates, same functions
    assert se["report"].endswith("report.html")
    assert_same_report(hn, he)
    return sn, se, out


@pytest.mark.parametrize("engine", ENGINES)
def test_cli_report_adult_sample(engine, tmp_path, request):
    if engine == "spark":
        request.getfixturevalue("spark_session")
    args = [str(adult_path()), "--qi", ",".join(ADULT_QI[:6]), "--hierarchies", str(adult_hierarchies_dir()), "--k", "10",
            "--max-suppression", "0.01"]  # fmt: skip
    sn, se, _ = _compare(tmp_path, engine, args)
    assert se["risk"]["after"]["k"] >= 10 and se["risk"]["before"]["uniques"] > 0


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", ["missing", "uid", "sensitive"])
def test_cli_report_generated(engine, case, tmp_path, request):
    if engine == "spark":
        request.getfixturevalue("spark_session")
    path, hdir = generated(tmp_path)
    args = [str(path), "--qi", "age,sex,zip,race", "--hierarchies", str(hdir), "--k", "4"]
    suffix = ".csv"
    if case == "missing":
        args += ["--max-suppression", "0.02", "--keep", "dx", "--drop", "pid"]
    elif case == "uid":
        args += ["--uid", "pid", "--max-suppression", "0.05"]
        suffix = ".parquet"
    else:
        args += ["--sensitive", "dx", "--l", "2", "--drop", "pid"]
    sn, se, out = _compare(tmp_path, engine, args, suffix)
    if case == "uid":
        after = se["risk"]["after"]
        assert after["respondent_k"] is not None and after["respondent_k"] >= 4
        assert se["risk"]["before"]["respondent_k"] is not None


def test_cli_report_failure_leaves_no_report_and_says_so(tmp_path, monkeypatch):
    """A report that cannot be built: exit 4, a plain message (no traceback), the verified release
    stays, no report (nor partial or temporary file) and no summary."""
    import tempanon.report.kanon as rk
    from tempanon.report.html import Report

    path, hdir = generated(tmp_path)
    args = ["kanon", str(path), "--qi", "age,sex,zip,race", "--hierarchies", str(hdir), "--k", "4", "--drop", "pid",
            "--engine", "duckdb"]  # fmt: skip

    def boom(*a, **k):
        raise RuntimeError("boom")

    for target, name in ((rk, "kanon_report_from_aggregates"), (Report, "render")):
        d = tmp_path / f"o-{name}"
        with monkeypatch.context() as m:
            m.setattr(target, name, boom)
            r = CliRunner().invoke(app, [*args, "--out", str(d / "out.csv"), "--report", str(d / "r.html"),
                                         "--summary", str(d / "s.json")])  # fmt: skip
        assert r.exit_code == 4, r.output
        assert isinstance(r.exception, SystemExit)
        text = " ".join(r.output.split())
        assert "written and verified" in text and "RuntimeError: boom" in text and "no report or summary was written" in text
        assert sorted(p.name for p in d.iterdir()) == ["out.csv"]


def test_cli_report_refused_output_clash_before_reading(tmp_path):
    """--report naming the input: refused before anything is read or written (OutputSet)."""
    path, hdir = generated(tmp_path)
    r = CliRunner().invoke(app, ["kanon", str(path), "--qi", "age,sex,zip,race", "--hierarchies", str(hdir), "--k", "4",
                                 "--out", str(tmp_path / "o.csv"), "--report", str(path), "--engine", "duckdb"])  # fmt: skip
    assert r.exit_code == 2 and "refusing to overwrite an input" in " ".join(r.output.split())
    assert not (tmp_path / "o.csv").exists()


def test_release_respondents_do_not_fan_out_through_the_dimension_tables(tmp_path):
    """Regression: the release's respondent total once joined the released classes to the dimension
    tables (every text of a label: a product of the hierarchies' fan-outs; 50 GB of DuckDB spill at
    200,000 rows). Under a small memory and spill budget the aggregates finish and equal the numpy
    path's measures of the release (the old query, on this Parquet input, ran out of the spill budget
    in 1.5 s; on the same table as CSV DuckDB ordered the joins well and it passed)."""
    from tempanon.kanon import kanonymize
    from tempanon.lattice.source_duckdb import DuckDBSource

    rng = np.random.default_rng(2)
    n = 5_000
    df = pd.DataFrame({  # Lands-End-shaped (bench_incognito.py): several wide hierarchies, unique order ids
        "zip": [f"{v:05d}" for v in rng.integers(1000, 99999, n)],
        "day": [f"2003{v:04d}" for v in rng.integers(0, 320, n)],
        "gender": rng.choice(["F", "M"], n),
        "style": [f"s{v}" for v in rng.integers(0, 1500, n)],
        "price": [f"{v:04d}" for v in rng.integers(1, 9999, n)],
        "quantity": ["1"] * n,
        "cost": [f"{v:04d}" for v in rng.integers(1, 9999, n)],
        "ship": rng.choice(["a", "b"], n),
    })  # fmt: skip
    qi = list(df.columns)
    df["pid"] = [f"o{i}" for i in range(n)]
    hier = {q: (build_masking(q, df[q], len(df[q].iloc[0])) if q in ("zip", "day", "price", "cost") else build_suppression(q, df[q]))
            for q in qi}  # fmt: skip
    path = tmp_path / "t.parquet"
    df.to_parquet(path, index=False)
    src = DuckDBSource(path, memory_limit="512MB")
    try:
        src.con.execute("SET max_temp_directory_size = '256MB'")
        res = kanonymize(src, qi, hier, 5, uid="pid", out=str(tmp_path / "o.parquet"))
        after, _ = src.release_aggregates(res.output, uid="pid")
    finally:
        src.close()
    mem = kanonymize(df, qi, hier, 5, uid="pid", engine="numpy")
    check = mem.table.assign(__uid__=df.loc[mem.table.index, "pid"].to_numpy())
    assert after.risk().as_dict() == measure(check, qi, uid="__uid__").as_dict()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.integers(1, 12)), min_size=1, max_size=40), st.booleans(),
       st.sampled_from([0.05, 0.2, 0.5, 1.0]))  # fmt: skip
def test_histogram_of_classes_gives_the_same_measures(pairs, uid, threshold):
    """A histogram of (records, respondents) over the classes (``classes``: how many classes each
    entry stands for) gives exactly the measures of one entry per class: what the engines fetch for
    tables of nearly one class per record."""
    from tempanon.metrics.risk import ClassAggregates

    n = np.array([max(a, b) for a, b in pairs], dtype=np.int64)  # records >= respondents
    r = np.array([min(a, b) for a, b in pairs], dtype=np.int64)
    total = int(r.sum())
    per_class = ClassAggregates(n, r if uid else None, total if uid else None)
    keys, counts = np.unique(np.stack([n, r]), axis=1, return_counts=True)
    hist = ClassAggregates(keys[0], keys[1] if uid else None, total if uid else None, classes=counts)
    a, b = per_class.risk(threshold), hist.risk(threshold)
    assert a.as_dict() == b.as_dict()
    assert (hist.rows, hist.n_classes) == (int(n.sum()), len(n))
    assert sorted(np.repeat(b.class_sizes, b.class_counts)) == sorted(a.class_sizes)
