"""``tempanon check --engine duckdb|spark``: the file is read in place (never loaded into pandas) and
the verdict, the measures, the failure messages (with the example class and its file line) and the
identifier findings are the numpy path's. The oracle is the numpy path (``check_table`` on the file
read by pandas, itself tested against brute force in tests/steward/test_steward_risk.py). Spark under
the ``spark`` marker (few tests: Spark is slow)."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import InputError
from tempanon.steward.check import check_table

ENGINES = ["duckdb", pytest.param("spark", marks=pytest.mark.spark)]
runner = CliRunner()


@pytest.fixture(scope="module")
def spark_ready():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        pytest.skip("pyspark is not installed")
    java = shutil.which("java")
    if java is None or subprocess.run([java, "-version"], capture_output=True, timeout=30).returncode:
        pytest.skip("no Java runtime (Spark needs Java 17)")


@pytest.fixture(params=ENGINES)
def engine(request):
    if request.param == "spark":
        request.getfixturevalue("spark_ready")
    return request.param


def _table(seed: int, n: int | None = None) -> pd.DataFrame:
    """A random small table of text: two quasi-identifiers of few values, missing both as None and (in
    Parquet) as the empty string, a respondent id, two sensitive columns, and columns that the identifier
    screening flags or nearly flags (a near-unique code, half e-mail addresses)."""
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(1, 60))

    def col(values, p_missing=0.15):
        v = rng.choice(np.array(values, dtype=object), size=n)
        v[rng.random(n) < p_missing] = None
        return v

    mails = np.where(rng.random(n) < 0.5, [f"p{i}@x.org" for i in range(n)], [f"w{i % 7}" for i in range(n)])
    return pd.DataFrame({
        "q1": col(["a", "b", "c"]),
        "q2": col(["1", "2", "", "3"], 0.1),
        "u": col([str(i) for i in range(8)], 0.0),  # (a missing respondent id is refused: test_a_missing_respondent_id_is_refused)
        "s": col(["x", "y", "z", "w"], 0.1),
        "t": col(["0", "1"], 0.2),
        "code": pd.Series([f"C{i:05d}" if i % 9 else "C00000" for i in rng.permutation(n)], dtype=object),
        "contact": pd.Series(mails, dtype=object),
    })  # fmt: skip


def _write(df: pd.DataFrame, path, fmt: str):
    if fmt == "csv":
        p = path / "t.csv"
        df.to_csv(p, index=False)  # None and "" both an empty cell: a CSV has one missing value
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        p = path / "t.parquet"
        pq.write_table(pa.table({c: pa.array([None if pd.isna(v) else v for v in df[c].tolist()], pa.string()) for c in df.columns}), p)
    return p


REQUESTS = [
    dict(qi=["q1", "q2"], k=2),
    dict(qi=["q1", "q2"], uid="u", k=2),
    dict(qi=["q1"], sensitive=["s"], l=2, l_model="distinct"),
    dict(qi=["q1", "q2"], sensitive=["s", "t"], l=2, l_model="frequency", k=3),
    dict(qi=["q2"], uid="u", sensitive=["s"], l=2, l_model="entropy", k=1, threshold=0.5),
]


def _same(path, engine: str, **kw):
    from tempanon.errors import InputError

    try:
        want = check_table(path, engine="numpy", **kw)
    except InputError as exc:  # (a missing respondent id, since 2026-11-28): refused alike by the engine
        with pytest.raises(InputError) as got_exc:
            check_table(path, engine=engine, **kw)
        assert str(got_exc.value) == str(exc)
        return None
    got = check_table(path, engine=engine, **kw)
    assert got.as_dict() == want.as_dict()  # measures, verdict, failure messages, identifier findings
    assert [(f.column, f.reason) for f in got.identifier_findings] == [(f.column, f.reason) for f in want.identifier_findings]
    return want


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("seed", range(8))
def test_random_tables_same_result_duckdb(tmp_path, seed, fmt, monkeypatch):
    """Random tables, every kind of request: the DuckDB result equals the numpy result exactly. The
    screening looks at 5 distinct values at most here, so its sample (same positions of the values in
    order of first appearance) decides the e-mail share of ``contact``."""
    import tempanon.data.screen as screen

    monkeypatch.setattr(screen, "_MAX_DISTINCT", 5)
    path = _write(_table(seed), tmp_path, fmt)
    for req in REQUESTS:
        _same(path, "duckdb", **req)


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_random_table_same_result_spark(tmp_path, fmt, spark_ready, monkeypatch):
    import tempanon.data.screen as screen

    monkeypatch.setattr(screen, "_MAX_DISTINCT", 5)
    path = _write(_table(3, 40), tmp_path, fmt)
    for req in REQUESTS:
        _same(path, "spark", **req)


def test_failing_and_passing(tmp_path, engine):
    """A table failing k and l (messages with the example class and its line), and one meeting both."""
    df = pd.DataFrame({"zip": ["1", "1", "1", "2", "2", "3"], "sex": ["F", "F", "F", "M", "M", "F"],
                       "dx": ["a", "b", "b", "a", "a", "c"]})  # fmt: skip
    p = _write(df, tmp_path, "csv")
    res = _same(p, engine, qi=["zip", "sex"], sensitive=["dx"], k=2, l=2, l_model="distinct")
    assert not res.ok and res.risk.k == 1 and res.risk.l_distinct == 1
    assert res.failures == [
        "k is 1, below the requested 2: 1 of 3 classes have fewer than 2 records; the smallest, with 1, is zip=3, sex=F (line 7)",
        "distinct l-diversity of dx is 1, below the requested 2: 2 of 3 classes have l below 2; the least diverse, with l = 1, "
        "is zip=2, sex=M (line 5)",
    ]
    if engine == "spark":  # a Spark DataFrame as data (rows numbered in its order, as a DataFrame's index)
        from tempanon.lattice.source_spark import local_session

        sdf = local_session().createDataFrame(df)
        got = check_table(sdf, ["zip", "sex"], sensitive=["dx"], k=2, l=2, l_model="distinct")
        assert got.as_dict() == check_table(df, ["zip", "sex"], sensitive=["dx"], k=2, l=2,
                                            l_model="distinct").as_dict() == res.as_dict()  # fmt: skip
    good = pd.DataFrame({"zip": ["1", "1", "2", "2"], "sex": ["F", "F", "M", "M"], "dx": ["a", "b", "a", "b"]})
    p = _write(good, tmp_path, "parquet")
    res = _same(p, engine, qi=["zip", "sex"], sensitive=["dx"], k=2, l=2)
    assert res.ok and res.risk.k == 2 and res.risk.l_distinct == 2


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_missing_is_a_category(tmp_path, fmt):
    """A missing value is its own category on every engine (Parquet's null and empty string are the same
    one, as in memory): the smallest class is that of the missing zip, shown as <missing>."""
    df = pd.DataFrame({"zip": ["1", "1", None, "2", "2", "" if fmt == "parquet" else None, "1", "2"],
                       "sex": ["F"] * 8})  # fmt: skip
    p = _write(df, tmp_path, fmt)
    res = _same(p, "duckdb", qi=["zip", "sex"], k=3)
    assert res.risk.classes == 3 and res.risk.k == 2
    assert res.failures[0].endswith("the smallest, with 2, is zip=<missing>, sex=F (line 4)")


def test_duckdb_does_not_read_into_pandas(tmp_path, monkeypatch):
    """The DuckDB path never loads the table into pandas: pandas' readers and tempanon's read_table raise."""
    df = _table(5, 50)
    paths = [_write(df, tmp_path, "csv"), _write(df, tmp_path, "parquet")]
    want = [check_table(p, engine="numpy", qi=["q1", "q2"], uid="u", sensitive=["s"], k=3, l=2).as_dict() for p in paths]

    def refuse(*a, **kw):
        raise AssertionError("the table was read into pandas")

    import tempanon.data.io

    for name in ("read_csv", "read_parquet", "read_table"):
        monkeypatch.setattr(pd, name, refuse)
    monkeypatch.setattr(tempanon.data.io, "read_table", refuse)
    for p, w in zip(paths, want):
        assert check_table(p, engine="duckdb", qi=["q1", "q2"], uid="u", sensitive=["s"], k=3, l=2).as_dict() == w
        r = runner.invoke(app, ["check", str(p), "--qi", "q1,q2", "--engine", "duckdb", "--json"])
        assert r.exit_code == 0 and json.loads(r.stdout)["k"] == w["k"]


def test_screening_sample_of_many_values(tmp_path):
    """More distinct values than the screening looks at (20,000): the same sample, the same findings."""
    n = 24_000
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"q": rng.choice(["a", "b"], n).astype(object),
                       "contact": np.where(rng.random(n) < 0.5, [f"p{i}@x.org" for i in range(n)],
                                           [f"w{i}" for i in range(n)]).astype(object)})  # fmt: skip
    res = _same(_write(df, tmp_path, "csv"), "duckdb", qi=["q"], k=2)
    assert [f.column for f in res.identifier_findings] == ["contact"]


def _cli(path, engine, *args):
    import warnings

    with warnings.catch_warnings():  # as tempanon.cli.main does (the runner calls the app without it)
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
        return runner.invoke(app, ["check", str(path), *args, "--engine", engine])


def test_cli_same_output(tmp_path, engine):
    """The command prints the same table (or JSON), notes and failures, and exits with the same status."""
    p = _write(_table(2, 40), tmp_path, "csv")
    for args in (["--qi", "q1,q2", "--k", "2", "--sensitive", "s", "--l", "2"],
                 ["--qi", "q1:q2", "--uid", "u", "--k", "2", "--json"],
                 ["--qi", "q1,q2", "--k", "1"]):  # fmt: skip
        want, got = _cli(p, "numpy", *args), _cli(p, engine, *args)
        assert (got.exit_code, got.stdout, got.stderr) == (want.exit_code, want.stdout, want.stderr)
        assert want.exit_code in (0, 1)


@pytest.mark.parametrize("args", [
    ["--qi", "q1,nope", "--k", "2"],                        # unknown quasi-identifier
    ["--qi", "q1", "--sensitive", "zz", "--l", "2"],        # unknown sensitive column
    ["--qi", "q1", "--uid", "nope", "--k", "2"],            # unknown uid
    ["--qi", "q1", "--sensitive", "q1", "--l", "2"],        # two roles
    ["--qi", "q1", "--l", "2"],                             # --l without --sensitive
    ["--qi", "q1", "--k", "0"],                             # bad k
    ["--qi", "q1", "--sensitive", "s", "--l", "2", "--l-model", "recursive"],
    ["--qi", "q1", "--threshold", "2"],
    ["--qi", "q0:q2", "--k", "2"],                          # bad range
])  # fmt: skip
def test_bad_input_same_error(tmp_path, args):
    """Bad requests: the same message and exit status 2 on both engines."""
    p = _write(_table(2, 10), tmp_path, "csv")
    want, got = _cli(p, "numpy", *args), _cli(p, "duckdb", *args)
    assert want.exit_code == 2 and want.stderr.startswith("error: ")
    assert (got.exit_code, got.stdout, got.stderr) == (want.exit_code, want.stdout, want.stderr)


def test_engine_options(tmp_path):
    p = _write(_table(2, 10), tmp_path, "csv")
    r = runner.invoke(app, ["check", str(p), "--qi", "q1", "--engine", "numpy", "--memory-limit", "1GB"])
    assert r.exit_code == 2 and "numpy engine holds the table in memory" in r.stderr
    r = runner.invoke(app, ["check", str(p), "--qi", "q1", "--engine", "polars"])
    assert r.exit_code == 2 and "unknown engine 'polars'" in r.stderr
    r = runner.invoke(app, ["check", str(p), "--qi", "q1", "--engine", "duckdb", "--memory-limit", "lots"])
    assert r.exit_code == 2 and "--memory-limit 'lots'" in r.stderr
    x = tmp_path / "book.xlsx"
    x.write_bytes(b"PK\x03\x04")
    r = runner.invoke(app, ["check", str(x), "--qi", "q1", "--engine", "duckdb"])
    assert r.exit_code == 2 and "--engine numpy" in r.stderr
    # a memory limit alone picks DuckDB (auto), as for kanon
    r = runner.invoke(app, ["check", str(p), "--qi", "q1", "--memory-limit", "1GB", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout) == json.loads(_cli(p, "numpy", "--qi", "q1", "--json").stdout)
    with pytest.raises(InputError, match="not found"):
        check_table(tmp_path / "missing.csv", ["q1"], engine="duckdb")


def test_empty_table_and_dataframe(tmp_path):
    """A header-only file, and a DataFrame handed to the DuckDB engine: the numpy result."""
    p = tmp_path / "e.csv"
    p.write_text("q1,q2\n")
    _same(p, "duckdb", qi=["q1"], k=2)
    df = _table(4, 30)
    want = check_table(df, ["q1", "q2"], uid="u", k=2, engine="numpy")
    assert check_table(df, ["q1", "q2"], uid="u", k=2, engine="duckdb").as_dict() == want.as_dict()


def test_typed_parquet(tmp_path, engine):
    """A Parquet file's typed columns: a float NaN is missing (as pandas reads it), an integer column with
    a missing value has pandas' float text (``2.0``), booleans are True/False. A time-zone-aware
    timestamp is shown in numpy's text on every engine (DuckDB showed ``+00`` for ``+00:00`` before
    2026-11-26, docs/engines.md)."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    utc = dt.timezone.utc
    p = tmp_path / "typed.parquet"
    pq.write_table(pa.table({
        "i": pa.array([1, 1, 2, None, 2, 1], pa.int64()),
        "f": pa.array([1.5, 1.5, 2.0, None, float("nan"), 2.0], pa.float64()),
        "b": pa.array([True, True, False, None, False, True]),
        "n": pa.array([7, 8, 9, 7, 8, 9], pa.int32()),
        "ts": pa.array([dt.datetime(2021, 1, 2, tzinfo=utc)] * 2 + [dt.datetime(2021, 1, 3, 0, 0, 1, 5, tzinfo=utc)] * 4,
                       pa.timestamp("us", tz="UTC")),
    }), p)  # fmt: skip
    for qi in (["i", "f", "b"], ["f"], ["n", "b"]):
        res = _same(p, engine, qi=qi, sensitive=["i"] if "i" not in qi else [], k=3)
        assert not res.ok
    assert _same(p, engine, qi=["i", "f", "b"], k=3).failures[0].endswith("i=2.0, f=2.0, b=False (line 4)")
    assert _same(p, engine, qi=["f"], uid="n", k=2).risk.classes == 3  # NaN and null: one class
    want = check_table(p, engine="numpy", qi=["ts"], k=3)
    got = check_table(p, engine=engine, qi=["ts"], k=3)
    assert want.failures[0].endswith("ts=2021-01-02 00:00:00+00:00 (line 2)")
    assert got.as_dict() == want.as_dict()


def test_screening_per_respondent(tmp_path, engine):
    """A column unique per respondent but repeated on each of their rows (near-unique per respondent,
    not per row), a float column with NaN beside it: the same findings as in memory."""
    n = 30
    df = pd.DataFrame({"pid": [f"P{i}" for i in range(n) for _ in range(3)],
                       "nick": [f"nick{i}" for i in range(n) for _ in range(3)],
                       "q": ["a", "b", "a"] * n,
                       "w": [0.5, float("nan"), 1.0] * n})  # fmt: skip
    p = tmp_path / "r.parquet"
    df.to_parquet(p)
    res = _same(p, engine, qi=["q"], uid="pid", k=2)
    assert [f.column for f in res.identifier_findings] == ["nick"]
    assert "near-unique per respondent (30 of 30 respondents ('pid')" in res.identifier_findings[0].reason


def test_audit_of_a_timestamped_release(tmp_path, engine):
    """``check --audit`` (respondent-level k of a timestamped release through the steward's audit): the
    respondents are joined by row number in the engine; the same output, and the same errors for an
    audit that is not the release's, not an audit, or a --uid that is missing or already a column."""
    from tempanon.temporal.generator import hospital_exams

    p = tmp_path / "exams.csv"
    hospital_exams(120, seed=3).to_csv(p, index=False)
    (tmp_path / "release").mkdir()
    (tmp_path / "steward").mkdir()
    out, audit = tmp_path / "release" / "o.csv", tmp_path / "steward" / "audit.csv"
    r = runner.invoke(app, ["timestamped", str(p), "--uid", "PATIENT", "--time", "TIME", "--qi", "GENDER", "--k", "2",
                            "--granularities", "week,month,quarter,year", "--max-suppression", "0.2",
                            "--out", str(out), "--audit", str(audit), "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    lines = audit.read_text().splitlines()
    short = tmp_path / "steward" / "short.csv"
    short.write_text("\n".join(lines[:5]) + "\n")
    swapped = tmp_path / "steward" / "swapped.csv"
    swapped.write_text("\n".join(lines[:3] + [lines[4], lines[3]] + lines[5:]) + "\n")
    plain = tmp_path / "steward" / "plain.csv"
    plain.write_text("release_row,input_line,respondent\n1,2,x\n")
    for args in (["--qi", "GENDER,TIME", "--uid", "P", "--audit", str(audit), "--k", "2", "--json"],
                 ["--qi", "GENDER,TIME", "--uid", "P", "--audit", str(audit), "--k", "30"],
                 ["--qi", "GENDER,TIME", "--audit", str(audit)],
                 ["--qi", "GENDER", "--uid", "TIME", "--audit", str(audit)],
                 ["--qi", "GENDER,TIME", "--uid", "P", "--audit", str(short)],
                 ["--qi", "GENDER,TIME", "--uid", "P", "--audit", str(swapped)],
                 ["--qi", "GENDER,TIME", "--uid", "P", "--audit", str(plain)],
                 ["--qi", "GENDER,P", "--uid", "P", "--audit", str(audit)]):  # fmt: skip
        want, got = _cli(out, "numpy", *args), _cli(out, engine, *args)
        assert (got.exit_code, got.stdout, got.stderr) == (want.exit_code, want.stdout, want.stderr), args
    assert json.loads(_cli(out, engine, "--qi", "GENDER,TIME", "--uid", "P", "--audit", str(audit), "--json").stdout)["respondent_k"] >= 2


def test_a_missing_respondent_id_is_refused(tmp_path, engine):
    """check --uid counted a missing respondent id as one more respondent, so a class of rows of one person
    and a row without an id passed k = 2, where kanon --uid and timestamped refuse the table (found by the
    acceptance pass uatc). Refused alike on every engine, naming the line."""
    from typer.testing import CliRunner

    from tempanon.cli import app
    from tempanon.errors import InputError

    df = pd.DataFrame({"id": ["1", None, "2", "3", "4"], "q": ["a", "a", "a", "b", "b"]})
    for eng in ("numpy", engine):
        for fmt in ("csv", "parquet"):
            p = _write(df, tmp_path, fmt)
            with pytest.raises(InputError, match="respondent id column 'id' has a missing value at line 3"):
                check_table(p, engine=eng, qi=["q"], uid="id", k=2)
        r = CliRunner().invoke(app, ["check", str(tmp_path / "t.csv"), "--qi", "q", "--uid", "id", "--k", "2", "--engine", eng])
        assert r.exit_code == 2 and "respondent id column 'id' has a missing value at line 3" in r.output, r.output
        assert check_table(tmp_path / "t.csv", engine=eng, qi=["q"], k=2).ok  # without --uid: rows are counted
