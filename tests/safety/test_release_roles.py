"""Issue 12: a release carries only declared columns; identifiers are refused unless overridden
(and then reported); no output may overwrite an input; regressions found by fuzzing."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.hierarchy import build_intervals, build_suppression

from engine.conftest import spark_session  # noqa: F401  (the engine suite's local[2] session, for the spark marker)

runner = CliRunner()
IDENTIFYING = ["forename", "row_id", "email", "note", "admitted"]


def _cli(*args, input=None):
    return runner.invoke(app, [str(a) for a in args], input=input)


def _sha(p):
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture
def people(tmp_path):
    rng = np.random.default_rng(1)
    n = 60
    pid = np.repeat(np.arange(20), 3)
    df = pd.DataFrame({
        "pid": [f"p{i}" for i in pid],
        "forename": [f"Name{i}" for i in pid],
        "row_id": np.arange(n) + 1000,
        "email": [f"user{i}@example.org" for i in pid],
        "note": [f"patient {i} said the pain in the left arm got worse overnight" for i in range(n)],
        "admitted": (pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="h")).strftime("%Y-%m-%d %H:%M"),
        "t": (pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 60, n), unit="D")).strftime("%Y-%m-%d"),
        "age": rng.integers(20, 60, n),
        "sex": rng.choice(["F", "M"], n),
        "dx": rng.choice(["a", "b", "c"], n),
    })  # fmt: skip
    p = tmp_path / "people.csv"
    df.to_csv(p, index=False)
    h = tmp_path / "h"
    h.mkdir()
    build_intervals("age", df.age, [10, 20, 40]).to_csv(h / "age.csv")
    build_suppression("sex", df.sex).to_csv(h / "sex.csv")
    return p, h, df


def _kanon(p, h, out, *extra):
    return _cli("kanon", p, "--qi", "age,sex", "--hierarchies", h, "--k", 2, "--out", out, *extra)


def _timestamped(p, out, *extra):
    return _cli("timestamped", p, "--time", "t", "--uid", "pid", "--qi", "sex", "--k", 2, "--granularities", "month,year",
                "--out", out, *extra)  # fmt: skip


def _released_columns(out):
    return list(pd.read_csv(out, dtype=str).columns)


# ---- roles: unnamed columns are left out; identifiers kept are refused; overrides are reported ----------


def test_kanon_leaves_unnamed_columns_out_and_refuses_identifiers(people, tmp_path):
    p, h, _ = people
    out, summ = tmp_path / "o.csv", tmp_path / "s.json"
    r = _kanon(p, h, out, "--uid", "pid", "--summary", summ)
    assert r.exit_code == 0, r.output
    assert _released_columns(out) == ["age", "sex"]
    s = json.loads(summ.read_text())
    assert set(IDENTIFYING + ["t", "dx"]) <= set(s["left_out"])
    assert "for the data steward, not for release" in s["steward_only"]  # it counts the input's rows
    assert "left out (no role, not released)" in r.output and "forename" in r.output
    assert "declare them with --qi, --sensitive, --keep" in r.output and "[columns]" not in r.output
    last = r.output.strip().splitlines()[-1]
    assert last.startswith("verified: respondent-level 2-anonymity") and "forename" not in last
    for col in IDENTIFYING:
        out2 = tmp_path / f"k-{col}.csv"
        r = _kanon(p, h, out2, "--uid", "pid", "--keep", col)
        assert r.exit_code == 2 and repr(col) in r.output and "--allow-identifier" in r.output, (col, r.output)
        assert not out2.exists()
    # the override works and is reported (stderr note, summary, last line)
    r = _kanon(p, h, out, "--uid", "pid", "--keep", "dx,forename", "--allow-identifier", "forename", "--summary", summ)
    assert r.exit_code == 0, r.output
    assert set(_released_columns(out)) == {"age", "sex", "dx", "forename"}
    v = json.loads(summ.read_text())["verification"]
    assert v["released_unchanged_declared_insensitive"] == ["dx", "forename"]
    assert [o["column"] for o in v["identifier_overrides"]] == ["forename"]
    assert "identifier screening overridden for: forename" in r.output


def test_timestamped_refuses_a_second_timestamp_and_identifiers(people, tmp_path):
    p, _, _ = people
    out, summ = tmp_path / "o.csv", tmp_path / "s.json"
    r = _timestamped(p, out, "--summary", summ)
    assert r.exit_code == 0, r.output
    assert _released_columns(out) == ["t", "sex"] or set(_released_columns(out)) == {"t", "sex"}
    assert set(IDENTIFYING) <= set(json.loads(summ.read_text())["left_out"])
    assert "for the data steward, not for release" in json.loads(summ.read_text())["steward_only"]  # it counts the input
    for col in IDENTIFYING:
        r = _timestamped(p, tmp_path / f"t-{col}.csv", "--keep", col)
        assert r.exit_code == 2 and repr(col) in r.output, (col, r.output)
    r = _timestamped(p, tmp_path / "a.csv", "--keep", "admitted")
    assert "timestamps" in r.output
    r = _timestamped(p, out, "--keep", "admitted", "--allow-identifier", "admitted", "--summary", summ)
    assert r.exit_code == 0, r.output
    assert "admitted" in _released_columns(out)
    assert json.loads(summ.read_text())["verification"]["identifier_overrides"][0]["column"] == "admitted"


def test_kp_leaves_out_and_refuses(tmp_path):
    rng = np.random.default_rng(2)
    n = 30
    df = pd.DataFrame(rng.normal(size=(n, 6)).round(3), columns=[f"A{i}" for i in range(6)])
    df.insert(0, "id", [f"s{i}" for i in range(n)])
    df["forename"] = [f"Name{i}" for i in range(n)]
    df["email"] = [f"u{i}@example.org" for i in range(n)]
    df["grp"] = rng.choice(["x", "y"], n)
    p = tmp_path / "series.csv"
    df.to_csv(p, index=False)
    out, summ = tmp_path / "o.csv", tmp_path / "s.json"
    base = ["kp", p, "--id", "id", "--qi", "A0:A5", "--k", 4, "--p", 2, "--out", out, "--summary", summ]
    r = _cli(*base)
    assert r.exit_code == 0, r.output
    cols = _released_columns(out)
    assert not {"forename", "email", "grp", "id"} & set(cols)
    assert json.loads(summ.read_text())["left_out"] == ["forename", "email", "grp"]
    for col in ("forename", "email"):
        r = _cli(*base, "--keep", col)
        assert r.exit_code == 2 and repr(col) in r.output
    r = _cli(*base, "--keep", "grp,email", "--allow-identifier", "email")
    assert r.exit_code == 0 and {"grp", "email"} <= set(_released_columns(out))
    assert json.loads(summ.read_text())["verification"]["identifier_overrides"][0]["column"] == "email"


def test_stream_needs_qi_and_screens_anatomy_qis(people, tmp_path):
    p, _, _ = people
    base = ["stream", p, "--time", "t", "--sensitive", "dx", "--l", 2, "--window", 1]
    r = _cli(*base, "--out", tmp_path / "o")
    assert r.exit_code == 2 and "--qi" in r.output
    r = _cli(*base, "--qi", "sex,forename", "--out", tmp_path / "o2")
    assert r.exit_code == 2 and "'forename'" in r.output and not (tmp_path / "o2").exists()
    summ = tmp_path / "s.json"
    r = _cli(*base, "--qi", "sex", "--out", tmp_path / "o3", "--summary", summ)
    assert r.exit_code == 0, r.output
    s = json.loads(summ.read_text())
    assert set(IDENTIFYING) <= set(s["left_out"]) and s["verification"]["checked_on"] == ["sex", "dx"]
    for f in (tmp_path / "o3").glob("*.qit.csv"):
        assert not set(IDENTIFYING) & set(pd.read_csv(f).columns)


def test_stream_api_screens_anatomy_qis_as_the_command_does(people):
    """The Python API publishes the quasi-identifiers exactly (QIT), as the command does, so it screens
    them too: an explicit identifier QI and the default (every other column) are refused unless
    allowed, and an override is reported in the summary's verification."""
    from tempanon.errors import InputError
    from tempanon.stream import anonymize_stream

    _, _, df = people
    df = df.astype({"age": str})
    base = {"time": "t", "sensitive": "dx", "l": 2, "w": 1}
    with pytest.raises(InputError, match="'forename'"):
        anonymize_stream(df, qi=["sex", "forename"], **base)
    with pytest.raises(InputError, match="'email'"):
        anonymize_stream(df, **base)  # qi defaults to every other column: forename, email, ... included
    res = anonymize_stream(df, qi=["sex", "forename"], allow_identifier=["forename"], **base)
    assert "forename" in res.qit.columns
    v = res.summary["verification"]
    assert v["checked_on"] == ["sex", "forename", "dx"] and v["identifier_overrides"][0]["column"] == "forename"
    assert anonymize_stream(df, qi=["sex"], **base).summary["verification"]["identifier_overrides"] == []


def test_job_run_fails_closed(people, tmp_path):
    p, h, _ = people
    job = tmp_path / "job.toml"
    text = f"""[input]
path = "{p.name}"
[columns]
quasi_identifiers = ["age", "sex"]
uid = "pid"
KEEP
[hierarchies]
age = "h/age.csv"
sex = "h/sex.csv"
[model]
name = "kanon"
k = 2
[output]
table = "out/o.csv"
summary = "out/s.json"
"""
    job.write_text(text.replace("KEEP", ""))
    r = _cli("run", job)
    assert r.exit_code == 0, r.output
    assert _released_columns(tmp_path / "out" / "o.csv") == ["age", "sex"]
    assert set(IDENTIFYING) <= set(json.loads((tmp_path / "out" / "s.json").read_text())["left_out"])
    job.write_text(text.replace("KEEP", 'keep = ["email"]'))
    r = _cli("run", job)
    assert r.exit_code == 2 and "'email'" in r.output
    job.write_text(text.replace("KEEP", 'keep = ["email"]\nallow_identifier = ["email"]'))
    r = _cli("run", job)
    assert r.exit_code == 0, r.output
    s = json.loads((tmp_path / "out" / "s.json").read_text())
    assert s["verification"]["identifier_overrides"][0]["column"] == "email"


# ---- no overwrites: every output option pointing at an input is refused, the input untouched ----------


def test_no_output_may_overwrite_an_input(people, tmp_path):
    p, h, _ = people
    before = _sha(p)
    hfile = h / "age.csv"
    hbefore = _sha(hfile)
    out = tmp_path / "o.csv"
    cases = []
    for opt in ("--out", "--summary", "--report"):
        args = {"--out": out, opt: p}
        cases.append(["kanon", p, "--qi", "age,sex", "--hierarchies", h, "--k", 2, *sum(([k, v] for k, v in args.items()), [])])
        cases.append(["timestamped", p, "--time", "t", "--uid", "pid", "--k", 2, *sum(([k, v] for k, v in args.items()), [])])
    cases.append(["kanon", p, "--qi", "age,sex", "--hierarchies", h, "--k", 2, "--out", hfile])
    cases.append(["kanon", p, "--qi", "age,sex", "--hierarchies", h, "--k", 2, "--out", out, "--summary", out])
    link = tmp_path / "hard.csv"
    link.hardlink_to(p)
    cases.append(["kanon", p, "--qi", "age,sex", "--hierarchies", h, "--k", 2, "--out", link])
    for opt in ("--summary", "--audit", "--report"):
        cases.append(["stream", p, "--time", "t", "--sensitive", "dx", "--qi", "sex", "--l", 2, "--window", 1,
                      "--out", tmp_path / "so", opt, p])  # fmt: skip
    cases.append(["stream", p, "--time", "t", "--sensitive", "dx", "--qi", "sex", "--l", 2, "--window", 1, "--out", p])
    for c in cases:
        r = _cli(*c)
        assert r.exit_code == 2, (c, r.output)
        assert _sha(p) == before and _sha(hfile) == hbefore, c
    # kp: every output option
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(12, 4)).round(2), columns=list("ABCD"))
    df.insert(0, "id", range(12))
    s = tmp_path / "series.csv"
    df.to_csv(s, index=False)
    sb = _sha(s)
    for opt in ("--out", "--summary", "--audit", "--report"):
        args = {"--out": tmp_path / "kp.csv", opt: s}
        r = _cli("kp", s, "--id", "id", "--qi", "A:D", "--k", 3, "--p", 2, *sum(([k, v] for k, v in args.items()), []))
        assert r.exit_code == 2 and _sha(s) == sb, (opt, r.output)


def test_job_outputs_may_not_overwrite_inputs(people, tmp_path):
    p, h, _ = people
    before, jb = _sha(p), None
    for key, value in (("table", p.name), ("summary", p.name), ("table", "job.toml"), ("summary", "h/age.csv")):
        job = tmp_path / "job.toml"
        outs = {"table": "out/o.csv", "summary": "out/s.json", key: value}
        job.write_text(f"""[input]\npath = "{p.name}"\n[columns]\nquasi_identifiers = ["age", "sex"]\n[hierarchies]
age = "h/age.csv"\nsex = "h/sex.csv"\n[model]\nname = "kanon"\nk = 2\n[output]
table = "{outs['table']}"\nsummary = "{outs['summary']}"\n""")
        jb = _sha(job)
        r = _cli("run", job)
        assert r.exit_code == 2, (key, value, r.output)
        assert _sha(p) == before and _sha(job) == jb


def test_write_errors_are_exit_2_not_tracebacks(people, tmp_path):
    p, h, _ = people
    d = tmp_path / "adir"
    d.mkdir()
    r = _kanon(p, h, d)
    assert r.exit_code == 2 and "directory" in r.output
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        import os

        if os.access(ro, os.W_OK):  # running as root: permissions are not enforced
            pytest.skip("permissions are not enforced for this user")
        r = _kanon(p, h, ro / "o.csv")
        assert r.exit_code == 2 and "cannot write" in r.output
    finally:
        ro.chmod(0o700)


def test_output_set_commits_together_and_discards_on_error(tmp_path):
    from tempanon.data.io import OutputSet
    from tempanon.errors import InputError

    a, b = tmp_path / "a.csv", tmp_path / "b.json"
    a.write_text("old\n")
    b.write_text("old\n")
    with OutputSet([], {"a": a, "b": b}) as outs:
        outs.stage(a, lambda p: p.write_text("new\n"))
        assert a.read_text() == "old\n"  # nothing visible before commit
        outs.json({"x": 1}, b, "b")
        outs.commit()
    assert a.read_text() == "new\n" and json.loads(b.read_text()) == {"x": 1}
    with pytest.raises(RuntimeError):
        with OutputSet([], {"a": a}) as outs:
            outs.stage(a, lambda p: p.write_text("newer\n"))
            raise RuntimeError("verifier said no")
    assert a.read_text() == "new\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a.csv", "b.json"]  # no temp files left
    with pytest.raises(InputError, match="refusing to overwrite an input"):
        OutputSet([a], {"--out": a})


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_an_output_over_the_hierarchies_names_them(tmp_path, engine):
    """``kanon --hierarchies H --out H`` (or a file in H): the refusal names the ``--hierarchies`` directory,
    not "the input" (found by helper uat, session 27: ``--out . is the input .`` where ``.`` was the
    hierarchies' folder); nothing is written, the hierarchy files unchanged."""
    from tempanon.data.io import OutputSet
    from tempanon.errors import InputError
    from tempanon.samples import sample_dir

    src = sample_dir("adult")
    h = tmp_path / "h"
    h.mkdir()
    (h / "sex.csv").write_text((src / "sex.csv").read_text())
    before = (h / "sex.csv").read_bytes()
    for out, said in ((h, f"--out {h} is the --hierarchies directory {h}: refusing to overwrite an input"),
                      (h / "sex.csv", f"--out {h / 'sex.csv'} is a file of the --hierarchies directory {h}: refusing")):
        r = CliRunner().invoke(app, ["kanon", str(src / "adult.csv.gz"), "--qi", "sex", "--hierarchies", str(h), "--k", "2",
                                     "--out", str(out), "--engine", engine])  # fmt: skip
        assert r.exit_code == 2, r.output
        assert said in " ".join(r.output.split()), r.output
    assert (h / "sex.csv").read_bytes() == before and sorted(p.name for p in h.iterdir()) == ["sex.csv"]
    with pytest.raises(InputError, match=r"--out .* is the input .*: refusing to overwrite an input"):
        OutputSet([h / "sex.csv"], {"--out": h / "sex.csv"})  # (an input without a label: "the input", as before)


@pytest.mark.parametrize("engine", ["numpy", "duckdb", pytest.param("spark", marks=pytest.mark.spark)])
@pytest.mark.parametrize("command", ["kanon", "timestamped"])
@pytest.mark.parametrize("where", ["out", "audit"])
def test_an_output_under_a_file_is_exit_2_on_every_engine(people, tmp_path, request, engine, command, where):
    """``--out a.txt/o.csv`` (a parent that is a file: it cannot be made a folder; root-proof, unlike a
    read-only folder, whose test above is skipped for root): ``kanon --engine duckdb`` ended in a
    traceback (FileExistsError from the release's mkdir; a read-only folder: PermissionError), the
    other paths said 'cannot write ...: File exists'. Found by hand (session 23: unwritable output
    paths, run as an unprivileged user). Now every path: exit 2, 'a parent of it is not a
    directory', nothing written."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    p, h, _ = people
    blocker = tmp_path / "a.txt"
    blocker.write_text("not a folder\n")
    outs = {"out": tmp_path / "rel" / "o.csv", "audit": tmp_path / "steward" / "audit.csv", where: blocker / "x.csv"}
    extra = ["--engine", engine, "--audit", outs["audit"], "--quiet"]
    r = _kanon(p, h, outs["out"], *extra) if command == "kanon" else _timestamped(p, outs["out"], *extra)
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert f"cannot write {blocker / 'x.csv'}: a parent of it is not a directory" in r.output, r.output
    assert blocker.read_text() == "not a folder\n"
    assert not (tmp_path / "rel").exists() or list((tmp_path / "rel").iterdir()) == []
    assert not (tmp_path / "steward").exists() or list((tmp_path / "steward").iterdir()) == []


# ---- regressions found by fuzzing -------------------------------------------------------------------


def test_verification_counts_classes_on_the_written_text():
    from tempanon.errors import VerificationError
    from tempanon.verify import check_k_anonymity

    rel = pd.DataFrame({"q": [1, 1.0], "u": ["a", "b"]}, dtype=object)
    with pytest.raises(VerificationError):  # "1" and "1.0" are two classes once written
        check_k_anonymity(rel, ["q"], 2)
    check_k_anonymity(pd.DataFrame({"q": ["1", "1"]}), ["q"], 2)


def test_duplicate_headers_are_refused(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("age,sex,age\n1,F,2\n3,M,4\n")
    r = _cli("check", p, "--qi", "sex")
    assert r.exit_code == 2 and "duplicate column" in r.output


def test_sql_sources_are_read_only(tmp_path):
    import duckdb

    from tempanon.data.io import read_table
    from tempanon.errors import InputError

    db = tmp_path / "a#b.sqlite"
    con = sqlite3.connect(db)
    con.execute("create table t(x)")
    con.executemany("insert into t values (?)", [(1,), (2,)])
    con.commit()
    con.close()
    assert read_table(db, sql="select * from src.t")["x"].tolist() == [1, 2]  # '#' in the path opens this file
    for q in ("delete from src.t", "attach 'other.db' as o", "pragma writable_schema = 1"):
        with pytest.raises(InputError):
            read_table(db, sql=q)
    assert sqlite3.connect(db).execute("select count(*) from t").fetchone() == (2,)
    ddb = tmp_path / "x.duckdb"
    c = duckdb.connect(str(ddb))
    c.execute("create table t as select 1 as x")
    c.close()
    for q in (f"copy src.t to '{tmp_path}/leak.csv'", "select * from read_csv('/etc/hostname')", "delete from src.t"):
        with pytest.raises(InputError):
            read_table(ddb, sql=q)
    assert not (tmp_path / "leak.csv").exists() and not (tmp_path / "other.db").exists()


def test_kanon_rows_are_shuffled_within_classes(people):
    from tempanon.kanon import kanonymize

    _, h, df = people
    hier = {"age": h / "age.csv", "sex": h / "sex.csv"}
    a = kanonymize(df, ["age", "sex"], hier, 2, seed=1)
    b = kanonymize(df, ["age", "sex"], hier, 2, seed=2)
    assert sorted(a.table.index) == sorted(b.table.index) == list(df.index)
    assert list(a.table.index) != list(b.table.index)  # the order depends on the secret seed only
    keys = a.table["age"].astype(str) + "|" + a.table["sex"].astype(str)
    assert (keys != keys.shift()).sum() == keys.nunique()  # classes are contiguous
    assert a.shuffle_seed == 1 and "shuffle_seed" not in a.summary()


def test_check_reports_identifier_columns(people):
    p, _, _ = people
    r = _cli("check", p, "--qi", "age,sex", "--uid", "pid", "--json")
    assert r.exit_code == 0, r.output
    found = {f["column"] for f in json.loads(r.output)["identifier_findings"]}
    assert set(IDENTIFYING) <= found and not {"age", "sex", "dx"} & found


def test_untyped_sqlite_values_are_classes_as_written(tmp_path):
    """Fuzz finding: a job reading an untyped SQLite column holding 1 and 1.0 verified them as one
    class while the CSV writer printed two classes of size 1. Search and verifier now both count
    the written text, so the release holds k on its text (re-checked by ``tempanon check``)."""
    db = tmp_path / "d.sqlite"
    con = sqlite3.connect(db)
    con.execute("create table v(pid, t, q)")
    qs = [1, 1, 1.0, 1.0, "x", "x", "x"]  # an untyped column: int, real and text cells
    con.executemany("insert into v values (?, ?, ?)", [(f"p{i}", "2021-01-01", q) for i, q in enumerate(qs)])
    con.commit()
    con.close()
    job = tmp_path / "job.toml"
    text = ('[input]\ndatabase = "d.sqlite"\nsql = "SELECT * FROM src.v"\n[columns]\ntime = "t"\nuid = "pid"\n'
            'quasi_identifiers = ["q"]\n[model]\nname = "timestamped"\nk = 3\ngranularities = ["day", "month"]\nSUP\n'
            '[output]\ntable = "out/o.csv"\n')  # fmt: skip
    job.write_text(text.replace("SUP", ""))
    r = _cli("run", job)  # 1 and 1.0 are written as two classes of 2 respondents: no granularity helps
    assert r.exit_code == 1, r.output
    assert not (tmp_path / "out" / "o.csv").exists()
    job.write_text(text.replace("SUP", "max_suppression = 0.6"))
    r = _cli("run", job)
    assert r.exit_code == 0, r.output
    rel = pd.read_csv(tmp_path / "out" / "o.csv", dtype=str)
    assert rel["q"].tolist() == ["x", "x", "x"]
    c = _cli("check", tmp_path / "out" / "o.csv", "--qi", "q,t", "--k", 3)
    assert c.exit_code == 0, c.output


def test_kanon_audit_holds_the_row_map_and_seed_outside_the_release(people, tmp_path):
    p, h, df = people
    out, audit = tmp_path / "rel" / "o.csv", tmp_path / "steward" / "a.csv"
    r = _kanon(p, h, out, "--keep", "dx", "--audit", audit)
    assert r.exit_code == 0, r.output
    lines = audit.read_text().splitlines()
    assert lines[0].startswith("# tempanon kanon audit: for the data steward only") and lines[1].startswith("# shuffle seed: ")
    a = pd.read_csv(audit, comment="#")
    rel = pd.read_csv(out, dtype=str)
    src = pd.read_csv(p, dtype=str)
    assert len(a) == len(rel) and sorted(a["input_line"]) == list(range(2, len(df) + 2))
    assert (src.loc[a["input_line"] - 2, "dx"].to_numpy() == rel["dx"].to_numpy()).all()  # the map is right
    r = _kanon(p, h, out, "--audit", tmp_path / "rel" / "a.csv")
    assert r.exit_code == 2 and "release's folder" in r.output


def test_init_then_run_releases_no_identifier(people, tmp_path):
    p, _, _ = people
    r = _cli("init", p)
    assert r.exit_code == 0, r.output
    job = p.with_suffix(".job.toml")
    text = job.read_text()
    r = _cli("run", job)
    assert r.exit_code in (0, 1), r.output
    released = [f for f in tmp_path.rglob("*.csv") if f != p and f.parent != p.parent / "h"]
    assert released or r.exit_code == 1
    for f in released:
        assert not set(IDENTIFYING[:4]) & set(pd.read_csv(f, dtype=str).columns), (f, text)
    assert "identifying = [" in text and "forename" in text.split("identifying = [")[1].split("]")[0]
