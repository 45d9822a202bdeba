"""A Parquet input column with a nested type (``list``, ``large_list``, ``fixed_size_list``, ``struct``,
``map``) given any role is refused with exit 2 by every command on every engine, before any row is
read and before any engine starts (:func:`tempanon.data.io.refuse_nested_columns`): the message names
the column, its type and the ways out, and nothing is written. On main each engine made its own text
of such a cell (numpy ``[8 9]`` and ``{'a': 4, 'b': 'z'}``, DuckDB ``[8, 9]`` and ``{'a': 4, 'b': z}``;
a Parquet release: text on numpy, typed on DuckDB), so hierarchy keys, identifier screening, classes
and releases differed by engine. A nested column with no role is fine: the run succeeds and the column
is not in the release."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempanon.errors import InputError

from .test_engine_temporal import _cli

ENGINES = ["numpy", "duckdb", pytest.param("spark", marks=pytest.mark.spark)]
NESTED = {  # column -> its type as the message names it
    "tags": "list<element: int64>",
    "st": "struct<a: int64, b: string>",
    "mp": "map<string, int64>",
    "ll": "large_list<element: string>",
    "fx": "fixed_size_list<element: double>[2]",
}


def _nested_arrays(n: int) -> dict:
    return {
        "tags": pa.array([None if i % 7 == 0 else [i, i + 1] for i in range(n)], pa.list_(pa.int64())),
        "st": pa.array([{"a": i % 5, "b": "xyz"[i % 3]} for i in range(n)], pa.struct([("a", pa.int64()), ("b", pa.string())])),
        "mp": pa.array([[("k", i)] for i in range(n)], pa.map_(pa.string(), pa.int64())),
        "ll": pa.array([["u", str(i % 4)] for i in range(n)], pa.large_list(pa.string())),
        "fx": pa.array([[float(i), 0.5] for i in range(n)], pa.list_(pa.float64(), 2)),
    }


def _table_file(tmp_path):
    """Rows for kanon, timestamped, check and job files: 10 respondents, 4 rows each."""
    n = 40
    rng = np.random.default_rng(7)
    t = pd.Timestamp("2021-03-01") + pd.to_timedelta(rng.integers(0, 20 * 24 * 60, n), unit="min")
    cols = {"pid": pa.array([f"p{i % 10}" for i in range(n)]), "sex": pa.array(["F", "M"] * (n // 2)),
            "t": pa.array(pd.Series(t).dt.floor("us"), pa.timestamp("us")),
            "dx": pa.array([["flu", "cold", "ulcer", "hiv"][i % 4] for i in range(n)])}  # fmt: skip
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({**cols, **_nested_arrays(n)}), path)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    return path


def _series_file(tmp_path):
    """One series per row for ``kp``: id, readings A0, A1, the nested ``tags``, A2, A3 (a range A0:A3
    covers tags), a sensitive value."""
    n = 30
    rng = np.random.default_rng(3)
    nested = _nested_arrays(n)
    cols = {"id": pa.array([f"s{i}" for i in range(n)]), "A0": pa.array(rng.normal(size=n)),
            "A1": pa.array(rng.normal(size=n)), "tags": nested["tags"], "A2": pa.array(rng.normal(size=n)),
            "A3": pa.array(rng.normal(size=n)), "S": pa.array([["a", "b", "c"][i % 3] for i in range(n)]),
            "st": nested["st"], "mp": nested["mp"]}  # fmt: skip
    path = tmp_path / "series.parquet"
    pq.write_table(pa.table(cols), path)
    return path


def _long_file(tmp_path):
    """Long format for ``kp --long``: entity, time, value, one row per entity and time."""
    n, times = 12, 4
    nested = _nested_arrays(n * times)
    cols = {"e": pa.array([f"e{i // times}" for i in range(n * times)]), "tm": pa.array([i % times for i in range(n * times)]),
            "v": pa.array(np.random.default_rng(1).normal(size=n * times)), "tags": nested["tags"], "st": nested["st"]}  # fmt: skip
    path = tmp_path / "long.parquet"
    pq.write_table(pa.table(cols), path)
    return path


@pytest.fixture
def nothing_starts(monkeypatch):
    """Fail the test if any row is read or an engine starts: pandas' and pyarrow's Parquet readers,
    DuckDB's connection and Spark's session raise (only the schema may be read)."""
    import duckdb

    import tempanon.lattice.source_spark as ss

    def forbidden(what):
        def f(*a, **kw):
            raise AssertionError(f"{what} was called for an input refused for its nested columns")

        return f

    monkeypatch.setattr(pd, "read_parquet", forbidden("pandas.read_parquet"))
    monkeypatch.setattr(pq, "read_table", forbidden("pyarrow.parquet.read_table"))
    monkeypatch.setattr(duckdb, "connect", forbidden("duckdb.connect"))
    monkeypatch.setattr(ss, "local_session", forbidden("Spark's local_session"))


def _refused(r, out, expect: dict[str, str]):
    """Exit 2, the message naming each column, its type and role, and the ways out; nothing written."""
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    assert "nested Parquet type" in text, text
    for col, role in expect.items():
        assert f"{col!r} ({NESTED[col]}) given the role {role}" in text, (col, role, text)
    assert "leave such a column without a role" in text and "flatten it into scalar columns" in text, text
    assert "Traceback" not in r.output
    assert not out.exists() and list(out.parent.iterdir()) == [], list(out.parent.iterdir())


def _outdir(tmp_path, tag):
    d = tmp_path / tag
    d.mkdir()
    return d


# ---- kanon -----------------------------------------------------------------------------------------
KANON_ROLES = [
    (["--qi", "sex,tags"], {"tags": "--qi"}),
    (["--qi", "sex", "--uid", "st"], {"st": "--uid"}),
    (["--qi", "sex", "--sensitive", "mp", "--l", "2"], {"mp": "--sensitive"}),
    (["--qi", "sex", "--keep", "tags,st,dx"], {"tags": "--keep", "st": "--keep"}),
    (["--qi", "sex", "--keep", "dx", "--allow-identifier", "ll"], {"ll": "--allow-identifier"}),
    (["--qi", "sex", "--keep", "fx"], {"fx": "--keep"}),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("args,expect", KANON_ROLES, ids=[str(i) for i in range(len(KANON_ROLES))])
def test_kanon_refuses_a_nested_column_with_a_role(tmp_path, engine, args, expect, nothing_starts):
    path = _table_file(tmp_path)
    for suffix in ("csv", "parquet"):
        out = _outdir(tmp_path, f"{suffix}-out") / f"o.{suffix}"
        r = _cli(["kanon", str(path), *args, "--hierarchies", str(tmp_path / "h"), "--k", "2", "--out", str(out),
                  "--summary", str(out.parent / "s.json"), "--engine", engine, "-q"])  # fmt: skip
        _refused(r, out, expect)


def _release_columns(out) -> list[str]:
    if out.is_dir():  # Spark: a directory of part files
        part = sorted(p for p in out.iterdir() if p.name.startswith("part-"))[0]
        return pq.read_schema(part).names if out.suffix == ".parquet" else list(pd.read_csv(part, nrows=0).columns)
    return pq.read_schema(out).names if out.suffix == ".parquet" else list(pd.read_csv(out, nrows=0).columns)


@pytest.mark.parametrize("engine", ENGINES)
def test_kanon_runs_with_nested_columns_without_a_role(tmp_path, engine):
    path = _table_file(tmp_path)
    for suffix in ("csv", "parquet"):
        out = _outdir(tmp_path, suffix) / f"o.{suffix}"
        r = _cli(["kanon", str(path), "--qi", "sex", "--uid", "pid", "--keep", "dx", "--hierarchies", str(tmp_path / "h"),
                  "--k", "2", "--out", str(out), "--summary", str(out.parent / "s.json"), "--engine", engine, "-q"])  # fmt: skip
        assert r.exit_code == 0, r.output
        assert sorted(_release_columns(out)) == ["dx", "sex"]
        assert set(NESTED) <= set(json.loads((out.parent / "s.json").read_text())["left_out"])


# ---- timestamped -----------------------------------------------------------------------------------
TS_BASE = {"--time": "t", "--uid": "pid", "--qi": "sex"}
TS_ROLES = [
    ({"--time": "tags"}, {"tags": "--time"}),
    ({"--uid": "st"}, {"st": "--uid"}),
    ({"--qi": "sex,mp"}, {"mp": "--qi"}),
    ({"--sensitive": "ll"}, {"ll": "--sensitive"}),
    ({"--keep": "dx,tags"}, {"tags": "--keep"}),
    ({"--keep": "dx", "--allow-identifier": "fx"}, {"fx": "--allow-identifier"}),
]


def _ts_args(path, opts, out, engine):
    args = ["timestamped", str(path)]
    for key, value in {**TS_BASE, **opts}.items():
        args += [key, value]
    return args + ["--k", "2", "--granularities", "day,week,month", "--out", str(out), "--summary", str(out.parent / "s.json"),
                   "--engine", engine, "-q"]  # fmt: skip


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("opts,expect", TS_ROLES, ids=[str(i) for i in range(len(TS_ROLES))])
def test_timestamped_refuses_a_nested_column_with_a_role(tmp_path, engine, opts, expect, nothing_starts):
    path = _table_file(tmp_path)
    out = _outdir(tmp_path, "out") / "o.csv"
    _refused(_cli(_ts_args(path, opts, out, engine)), out, expect)


@pytest.mark.parametrize("engine", ENGINES)
def test_timestamped_runs_with_nested_columns_without_a_role(tmp_path, engine):
    path = _table_file(tmp_path)
    for suffix in ("csv", "parquet"):
        out = _outdir(tmp_path, suffix) / f"o.{suffix}"
        r = _cli(_ts_args(path, {"--keep": "dx"}, out, engine))
        assert r.exit_code == 0, r.output
        assert sorted(_release_columns(out)) == ["dx", "sex", "t"]


# ---- check -----------------------------------------------------------------------------------------
CHECK_ROLES = [
    (["--qi", "sex,tags"], {"tags": "--qi"}),
    (["--qi", "sex", "--uid", "st"], {"st": "--uid"}),
    (["--qi", "sex", "--sensitive", "dx,mp"], {"mp": "--sensitive"}),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("args,expect", CHECK_ROLES, ids=[str(i) for i in range(len(CHECK_ROLES))])
def test_check_refuses_a_nested_column_with_a_role(tmp_path, engine, args, expect, nothing_starts):
    path = _table_file(tmp_path)
    r = _cli(["check", str(path), *args, "--engine", engine, "--json"])
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    for col, role in expect.items():
        assert f"{col!r} ({NESTED[col]}) given the role {role}" in text, text


@pytest.mark.parametrize("engine", ENGINES)
def test_check_runs_with_nested_columns_without_a_role(tmp_path, engine):
    path = _table_file(tmp_path)
    got = {}
    for eng in dict.fromkeys(["numpy", engine]):
        r = _cli(["check", str(path), "--qi", "sex", "--uid", "pid", "--sensitive", "dx", "--engine", eng, "--json"])
        assert r.exit_code == 0, r.output
        got[eng] = json.loads(next(ln for ln in reversed(r.output.splitlines()) if ln.startswith("{")))  # (Spark may warn after it)
        assert got[eng]["rows"] == 40 and got[eng]["respondent_k"] == 5
    # the identifier notes on the columns without a role (nested ones too) are the same on every engine
    assert got[engine]["identifier_findings"] == got["numpy"]["identifier_findings"]


# ---- stream (numpy) --------------------------------------------------------------------------------
STREAM_ROLES = [
    ({"--time": "tags"}, {"tags": "--time"}),
    ({"--sensitive": "st"}, {"st": "--sensitive"}),
    ({"--qi": "sex,mp"}, {"mp": "--qi"}),
    ({"--allow-identifier": "ll"}, {"ll": "--allow-identifier"}),
]


def _stream_args(path, opts, out):
    args = ["stream", str(path)]
    for key, value in {"--time": "t", "--sensitive": "dx", "--qi": "sex", **opts}.items():
        args += [key, value]
    return args + ["--l", "2", "--window", "1", "--snapshot", "week", "--out", str(out), "--summary",
                   str(out.parent / "s.json"), "-q"]  # fmt: skip


@pytest.mark.parametrize("opts,expect", STREAM_ROLES, ids=[str(i) for i in range(len(STREAM_ROLES))])
def test_stream_refuses_a_nested_column_with_a_role(tmp_path, opts, expect, nothing_starts):
    path = _table_file(tmp_path)
    out = _outdir(tmp_path, "out") / "release"
    _refused(_cli(_stream_args(path, opts, out)), out, expect)


def test_stream_runs_with_nested_columns_without_a_role(tmp_path):
    path = _table_file(tmp_path)
    out = _outdir(tmp_path, "out") / "release"
    r = _cli(_stream_args(path, {}, out))
    assert r.exit_code == 0, r.output
    files = sorted(out.iterdir())
    assert files
    for f in files:
        cols = set(pd.read_csv(f, nrows=0).columns)
        assert not cols & set(NESTED), (f, cols)


# ---- kp (numpy) ------------------------------------------------------------------------------------
KP_ROLES = [
    (["--id", "tags", "--qi", "A0:A1"], {"tags": "--id"}),
    (["--id", "id", "--qi", "A0,tags"], {"tags": "--qi"}),
    (["--id", "id", "--qi", "A0:A3"], {"tags": "--qi"}),  # a range over the nested column
    (["--id", "id", "--qi", "A0:A1", "--sensitive", "st"], {"st": "--sensitive"}),
    (["--id", "id", "--qi", "A0:A1", "--keep", "mp"], {"mp": "--keep"}),
    (["--id", "id", "--qi", "A0:A1", "--keep", "S", "--allow-identifier", "st"], {"st": "--allow-identifier"}),
]


@pytest.mark.parametrize("args,expect", KP_ROLES, ids=[str(i) for i in range(len(KP_ROLES))])
def test_kp_refuses_a_nested_column_with_a_role(tmp_path, args, expect, nothing_starts):
    path = _series_file(tmp_path)
    out = _outdir(tmp_path, "out") / "o.csv"
    r = _cli(["kp", str(path), *args, "--k", "3", "--p", "2", "--out", str(out), "--summary", str(out.parent / "s.json"), "-q"])
    _refused(r, out, expect)


KP_LONG_ROLES = [
    (["--entity", "st", "--time", "tm", "--value", "v"], {"st": "--entity"}),
    (["--entity", "e", "--time", "tags", "--value", "v"], {"tags": "--time"}),
    (["--entity", "e", "--time", "tm", "--value", "st"], {"st": "--value"}),
]


@pytest.mark.parametrize("args,expect", KP_LONG_ROLES, ids=[str(i) for i in range(len(KP_LONG_ROLES))])
def test_kp_long_refuses_a_nested_column_with_a_role(tmp_path, args, expect, nothing_starts):
    path = _long_file(tmp_path)
    out = _outdir(tmp_path, "out") / "o.csv"
    r = _cli(["kp", str(path), "--long", *args, "--k", "3", "--p", "2", "--out", str(out), "-q"])
    _refused(r, out, expect)


def test_kp_runs_with_nested_columns_without_a_role(tmp_path):
    for path, args in ((_series_file(tmp_path), ["--id", "id", "--qi", "A0:A1", "--sensitive", "S"]),
                       (_long_file(tmp_path), ["--long", "--entity", "e", "--time", "tm", "--value", "v"])):  # fmt: skip
        out = _outdir(tmp_path, path.stem) / "o.csv"
        r = _cli(["kp", str(path), *args, "--k", "3", "--p", "2", "--out", str(out), "-q"])
        assert r.exit_code == 0, r.output
        assert not set(_release_columns(out)) & set(NESTED)


# ---- hierarchy --data ------------------------------------------------------------------------------
def test_hierarchy_refuses_a_nested_column(tmp_path, nothing_starts):
    path = _table_file(tmp_path)
    out = _outdir(tmp_path, "out") / "tags.csv"
    r = _cli(["hierarchy", "--data", str(path), "--column", "tags", "--type", "suppression", "--out", str(out), "-q"])
    _refused(r, out, {"tags": "--column"})


# ---- job files (tempanon run) ----------------------------------------------------------------------
KANON_JOB = """\
[input]
path = "in.parquet"

[columns]
quasi_identifiers = QI
COLUMNS

[hierarchies]
sex = "h/sex.csv"
HIER

[model]
name = "kanon"
k = 2
ENGINE

[output]
table = "out/o.csv"
summary = "out/s.json"
"""

TS_JOB = """\
[input]
path = "in.parquet"

[columns]
time = "TIME"
uid = "UID"
quasi_identifiers = ["sex"]
COLUMNS

[model]
name = "timestamped"
k = 2
granularities = ["day", "week", "month"]
ENGINE

[output]
table = "out/o.csv"
"""

JOB_ROLES = [  # (template, {placeholder: text}, expected {column: role})
    (KANON_JOB, {"QI": '["sex", "tags"]', "HIER": 'tags = { type = "suppression" }'}, {"tags": "[columns] quasi_identifiers"}),
    (KANON_JOB, {"COLUMNS": 'uid = "st"'}, {"st": "[columns] uid"}),
    (KANON_JOB, {"COLUMNS": 'keep = ["dx", "mp"]'}, {"mp": "[columns] keep"}),
    (KANON_JOB, {"COLUMNS": 'keep = ["dx"]\nallow_identifier = ["ll"]'}, {"ll": "[columns] allow_identifier"}),
    (KANON_JOB, {"COLUMNS": 'sensitive = ["fx"]', "ENGINE": "l = 2"}, {"fx": "[columns] sensitive"}),
    (TS_JOB, {"TIME": "tags"}, {"tags": "[columns] time"}),
    (TS_JOB, {"UID": "st"}, {"st": "[columns] uid"}),
]


def _job(tmp_path, template, subs, engine):
    text = template
    subs = {"QI": '["sex"]', "HIER": "", "COLUMNS": "", "TIME": "t", "UID": "pid", **subs}
    subs["ENGINE"] = "\n".join(x for x in (subs.get("ENGINE", ""), f'engine = "{engine}"') if x)
    for key, value in subs.items():
        text = text.replace(key, value)
    (tmp_path / "out").mkdir()
    job = tmp_path / "job.toml"
    job.write_text(text)
    return job


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("template,subs,expect", JOB_ROLES, ids=[str(i) for i in range(len(JOB_ROLES))])
def test_job_refuses_a_nested_column_with_a_role(tmp_path, engine, template, subs, expect, nothing_starts):
    _table_file(tmp_path)
    job = _job(tmp_path, template, subs, engine)
    r = _cli(["run", str(job), "-q"])
    _refused(r, tmp_path / "out" / "o.csv", expect)
    assert str(job) in " ".join(r.output.split())  # (where: the job file's [columns])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("template", [KANON_JOB, TS_JOB], ids=["kanon", "timestamped"])
def test_job_runs_with_nested_columns_without_a_role(tmp_path, engine, template):
    _table_file(tmp_path)
    job = _job(tmp_path, template, {"COLUMNS": 'keep = ["dx"]'}, engine)
    r = _cli(["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
    assert not set(_release_columns(tmp_path / "out" / "o.csv")) & set(NESTED)


# ---- the Python API --------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_api_refuses_a_nested_column_with_a_role(tmp_path, engine, nothing_starts):
    from tempanon.hierarchy import Hierarchy
    from tempanon.kanon import kanonymize
    from tempanon.steward.check import check_table
    from tempanon.temporal.outofcore import anonymize_timestamped_file

    path = _table_file(tmp_path)
    hier = {"sex": Hierarchy.from_csv(tmp_path / "h" / "sex.csv")}
    out = _outdir(tmp_path, "out") / "o.csv"
    with pytest.raises(InputError, match=r"'tags' \(list<element: int64>\) given the role qi"):
        kanonymize(path, ["sex", "tags"], hier, 2, engine=engine, out=None if engine == "numpy" else str(out))
    with pytest.raises(InputError, match=r"'st' \(struct<a: int64, b: string>\) given the role keep"):
        kanonymize(str(path), ["sex"], hier, 2, keep=["dx", "st"], engine=engine)
    with pytest.raises(InputError, match=r"'mp' \(map<string, int64>\) given the role uid"):
        check_table(path, ["sex"], uid="mp", engine=engine)
    if engine != "numpy":
        with pytest.raises(InputError, match=r"'tags' \(list<element: int64>\) given the role time"):
            anonymize_timestamped_file(path, out=out, time="tags", uid="pid", k=2, engine=engine)
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_api_runs_with_nested_columns_without_a_role(tmp_path, engine):
    from tempanon.hierarchy import Hierarchy
    from tempanon.kanon import kanonymize
    from tempanon.steward.check import check_table

    path = _table_file(tmp_path)
    hier = {"sex": Hierarchy.from_csv(tmp_path / "h" / "sex.csv")}
    out = tmp_path / "o.parquet"
    res = kanonymize(path, ["sex"], hier, 2, uid="pid", keep=["dx"], engine=engine, out=str(out))
    assert sorted(_release_columns(out)) == ["dx", "sex"]
    assert set(NESTED) <= set(res.summary()["left_out"])
    assert check_table(path, ["sex"], uid="pid", engine=engine).risk.rows == 40


# ---- init ------------------------------------------------------------------------------------------
def test_init_gives_a_nested_column_no_role(tmp_path):
    """``tempanon init`` proposes no role for a nested column, however its name or values look (a list
    named like a zip code, a struct named like a respondent id): the job it writes runs. On main it
    proposed ``zipcode`` as a quasi-identifier and ``patient_id`` as the respondent id."""
    n = 60
    rng = np.random.default_rng(5)
    pq.write_table(pa.table({
        "sex": pa.array(rng.choice(["F", "M"], n)), "age": pa.array(rng.integers(20, 60, n)),
        "zipcode": pa.array([[f"0{i % 3}"] for i in range(n)], pa.list_(pa.string())),
        "patient_id": pa.array([{"id": i % 20} for i in range(n)], pa.struct([("id", pa.int64())])),
    }), tmp_path / "p.parquet")  # fmt: skip
    job = tmp_path / "p.job.toml"
    r = _cli(["init", str(tmp_path / "p.parquet"), "--out", str(job), "--k", "2"])
    assert r.exit_code == 0, r.output
    import tomllib

    cols = tomllib.loads(job.read_text())["columns"]
    roles = {c for v in cols.values() for c in ([v] if isinstance(v, str) else v)}
    assert "zipcode" not in roles and "patient_id" not in roles, cols
    assert "a nested Parquet type (list<element: string>)" in job.read_text()
    r = _cli(["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
