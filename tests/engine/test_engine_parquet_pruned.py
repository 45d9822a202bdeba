"""The numpy path reads only the columns a command gives a role from a Parquet input
(:func:`tempanon.data.io.read_table` with ``roles``: pyarrow's ``columns=``). A column with no role is
never released (fail closed); it used to be read and converted all the same (slow and memory-hungry on
wide files, a failure on a column pandas cannot convert). Every command's outputs stay byte for byte
what reading the whole file gives (the release, the summary with its ``left_out`` list, the report,
what the command prints), the columns requested are the role columns only, and a role naming a column
the file does not have gets the same message as before."""

from __future__ import annotations

import json
import re
import secrets

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tempanon.data.io as tio

from .test_engine_temporal import _cli

N = 40
# no-role extras: text, floats, a nested list, and (the file "bad") a timestamp in a zone pandas cannot
# convert (reading the whole file fails: "The zoneinfo module or pytz package must be installed")
EXTRAS = ["note", "f0", "tags", "f1"]


def _base(n: int = N) -> dict:
    rng = np.random.default_rng(7)
    t = pd.Timestamp("2021-03-01") + pd.to_timedelta(rng.integers(0, 20 * 24 * 60, n), unit="min")
    return {"pid": pa.array([f"p{i % 10}" for i in range(n)]), "sex": pa.array(["F", "M"] * (n // 2)),
            "zip": pa.array([["z1", "z2", "z3", "z4"][(i // 10) % 4] for i in range(n)]),
            "t": pa.array(pd.Series(t).dt.floor("us"), pa.timestamp("us")),
            "dx": pa.array([["flu", "cold", "ulcer", "hiv"][i % 4] for i in range(n)])}  # fmt: skip


def _extras(n: int = N, bad: bool = False) -> dict:
    rng = np.random.default_rng(11)
    cols = {"note": pa.array([f"free text {i}" if i % 5 else None for i in range(n)]),
            "f0": pa.array(rng.normal(size=n)),
            "tags": pa.array([None if i % 7 == 0 else [i, i + 1] for i in range(n)], pa.list_(pa.int64())),
            "f1": pa.array(rng.normal(size=n))}  # fmt: skip
    if bad:
        cols["mars"] = pa.array(np.arange(n, dtype=np.int64), pa.timestamp("s", tz="Mars/Base"))
    return cols


def _interleave(base: dict, extras: dict) -> dict:
    """The extras between the role columns (not all at the end): ``pid, note, sex, zip, f0, tags, t, f1, dx, ...``."""
    names = list(extras)
    order = ["pid", names[0], "sex", "zip", names[1], names[2], "t", names[3], "dx", *names[4:]]
    both = {**base, **extras}
    return {c: both[c] for c in order}


def _files(tmp_path) -> dict:
    """``base`` (role columns only), ``wide`` (with the extras), ``bad`` (also the zone pandas cannot convert)."""
    paths = {"base": _base(), "wide": _interleave(_base(), _extras()), "bad": _interleave(_base(), _extras(bad=True))}
    out = {}
    for name, cols in paths.items():
        d = tmp_path / name
        d.mkdir()
        out[name] = d / "in.parquet"
        pq.write_table(pa.table(cols), out[name])
        (d / "h").mkdir()
        (d / "h" / "sex.csv").write_text("F;*\nM;*\n")
        (d / "h" / "zip.csv").write_text("z1;z1-2;*\nz2;z1-2;*\nz3;z3-4;*\nz4;z3-4;*\n")
    return out


def _series_files(tmp_path) -> dict:
    n = 30
    rng = np.random.default_rng(3)
    base = {"id": pa.array([f"s{i}" for i in range(n)]), **{f"A{j}": pa.array(rng.normal(size=n)) for j in range(4)},
            "S": pa.array([["a", "b", "c"][i % 3] for i in range(n)])}  # fmt: skip
    ex = _extras(n)
    wide = {"id": base["id"], "note": ex["note"], "A0": base["A0"], "A1": base["A1"], "A2": base["A2"], "A3": base["A3"],
            "f0": ex["f0"], "tags": ex["tags"], "S": base["S"], "f1": ex["f1"]}  # fmt: skip
    bad = {**wide, "mars": _extras(n, bad=True)["mars"]}
    out = {}
    for name, cols in {"base": base, "wide": wide, "bad": bad}.items():
        d = tmp_path / f"series-{name}"
        d.mkdir()
        out[name] = d / "series.parquet"
        pq.write_table(pa.table(cols), out[name])
    return out


KANON_JOB = """\
[input]
path = "in.parquet"

[columns]
quasi_identifiers = ["sex", "zip"]
uid = "pid"
keep = ["dx"]

[hierarchies]
sex = "h/sex.csv"
zip = "h/zip.csv"

[model]
name = "kanon"
k = 2

[output]
table = "out/o.parquet"
summary = "out/s.json"
report = "out/r.html"
"""


STREAM_JOB = """\
[input]
path = "in.parquet"

[columns]
time = "t"
sensitive = ["dx"]
quasi_identifiers = ["sex", "zip"]
identifying = ["pid"]

[model]
name = "stream"
l = 2
window = 1
snapshot = "week"

[output]
directory = "out/release"
summary = "out/s.json"
report = "out/r.html"
"""


def _command(name: str, path, out) -> list[str]:
    """The command line of ``name`` on ``path``, writing into the folder ``out`` (release, summary, report)."""
    d = path.parent
    if name == "kanon":  # a range over two role columns, a uid, a kept column; a Parquet release (typed)
        return ["kanon", str(path), "--qi", "sex:zip", "--uid", "pid", "--keep", "dx", "--hierarchies", str(d / "h"),
                "--k", "2", "--out", str(out / "o.parquet"), "--summary", str(out / "s.json"), "--report", str(out / "r.html"),
                "--engine", "numpy"]  # fmt: skip
    if name == "kanon-plain":  # every quasi-identifier generalized, nothing typed: pandas writes the Parquet release
        return ["kanon", str(path), "--qi", "zip", "--drop", "pid", "--hierarchies", str(d / "h"), "--k", "20",
                "--out", str(out / "o.parquet"), "--summary", str(out / "s.json"), "--engine", "numpy"]  # fmt: skip
    if name == "kanon-csv":
        return ["kanon", str(path), "--qi", "sex", "--keep", "dx", "--drop", "pid", "--hierarchies", str(d / "h"), "--k", "2",
                "--out", str(out / "o.csv"), "--summary", str(out / "s.json"), "--engine", "numpy"]  # fmt: skip
    if name == "timestamped":
        return ["timestamped", str(path), "--time", "t", "--uid", "pid", "--qi", "sex", "--keep", "dx", "--k", "2",
                "--granularities", "day,week,month", "--out", str(out / "o.parquet"), "--summary", str(out / "s.json"),
                "--report", str(out / "r.html"), "--engine", "numpy"]  # fmt: skip
    if name == "stream":
        return ["stream", str(path), "--time", "t", "--sensitive", "dx", "--qi", "sex,zip", "--drop", "pid", "--l", "2",
                "--window", "1", "--snapshot", "week", "--out", str(out / "release"), "--summary", str(out / "s.json"),
                "--report", str(out / "r.html")]  # fmt: skip
    if name == "kp":
        return ["kp", str(path), "--id", "id", "--qi", "A0:A3", "--sensitive", "S", "--k", "3", "--p", "2",
                "--out", str(out / "o.csv"), "--summary", str(out / "s.json"), "--report", str(out / "r.html")]  # fmt: skip
    if name == "run":
        job = path.parent / "job.toml"
        job.write_text(KANON_JOB.replace('"out/', f'"{out.name}/'))
        return ["run", str(job)]
    if name == "run-stream":
        job = path.parent / "stream.toml"
        job.write_text(STREAM_JOB.replace('"out/', f'"{out.name}/'))
        return ["run", str(job)]
    raise AssertionError(name)


COMMANDS = ["kanon", "kanon-plain", "kanon-csv", "timestamped", "stream", "kp", "run", "run-stream"]
_TIMING = re.compile(r"\d+(\.\d+)?(e-?\d+)? ?(s|ms|seconds|CPU-s)\b")


def _scrub(value):
    """A summary without its clocks (``*_seconds``, ``phases``, ...), which differ from run to run."""
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if not re.search(r"seconds|second\b|phases|elapsed|cpu|per_second", k)}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _outputs(out) -> dict:
    """Every file the run wrote, as bytes (the summary parsed and scrubbed of clocks, the report's clocks and
    ids masked)."""
    got = {}
    for f in sorted(p for p in out.rglob("*") if p.is_file()):
        key = str(f.relative_to(out))
        if f.name == "s.json":
            got[key] = _scrub(json.loads(f.read_text()))
        elif f.suffix == ".html":
            got[key] = _TIMING.sub("T", f.read_text())
        else:
            got[key] = f.read_bytes()
    return got


def _run(monkeypatch, name, path, out, *, full: bool = False):
    """Run command ``name`` with a fixed shuffle seed; ``full``: read the whole file, as before (the old path)."""
    monkeypatch.setattr(secrets, "randbits", lambda k: 1234567)
    monkeypatch.setattr(secrets, "randbelow", lambda k: 12345 % k)
    # no plain progress lines ("[ 10 s] ...", "finished in"): a run slower than their interval (the kernel's
    # compile under load) printed one that the other run did not
    monkeypatch.setenv("TEMPANON_PROGRESS_INTERVAL", "1e9")
    if full:
        monkeypatch.setattr(tio, "_read_parquet_roles", lambda *a, **kw: (None, None))
    out.mkdir()
    r = _cli(_command(name, path, out))
    monkeypatch.undo()
    return r


def _unwrap(output: str, folder: str) -> str:
    """What a command printed, its lines joined (rich wraps long paths) and its output folder named ``D``
    (without the note of the first stream run in a process: numba compiles its kernel)."""
    output = re.sub(r"preparing the fast step's compiled kernel \(.*?from the cache\)", "", " ".join(output.split()))
    return " ".join(output.split()).replace(" ".join(folder.split()), "D").replace(folder, "D")


def _paths(tmp_path, name):
    return _series_files(tmp_path) if name == "kp" else _files(tmp_path)


@pytest.mark.parametrize("name", COMMANDS)
def test_the_same_outputs_as_reading_the_whole_file(tmp_path, monkeypatch, name):
    """Extra no-role columns (text, floats, a nested list) between the role columns: the release, the
    summary (its ``left_out`` naming them), the report and the printed lines are those of the whole read."""
    path = _paths(tmp_path, name)["wide"]
    pruned = _run(monkeypatch, name, path, path.parent / "pruned")
    whole = _run(monkeypatch, name, path, path.parent / "whole", full=True)
    assert pruned.exit_code == 0, pruned.output
    assert whole.exit_code == 0, whole.output
    da, db = str(path.parent / "pruned"), str(path.parent / "whole")
    assert _TIMING.sub("T", _unwrap(pruned.output, da)) == _TIMING.sub("T", _unwrap(whole.output, db))
    a, b = _outputs(path.parent / "pruned"), _outputs(path.parent / "whole")
    assert a.keys() == b.keys() and len(a) >= 2, (a.keys(), b.keys())
    for key in a:
        if isinstance(a[key], (dict, str)):  # (the summary and report name their own files)
            a[key] = json.loads(json.dumps(a[key]).replace(da, "D"))
            b[key] = json.loads(json.dumps(b[key]).replace(db, "D"))
        assert a[key] == b[key], key
    summary = a["s.json"]
    left = summary.get("left_out", summary.get("verification", {}).get("left_out"))
    assert set(EXTRAS) <= set(left), left
    for f in (path.parent / "pruned").rglob("*.parquet"):  # no column name of the input travels in its metadata
        assert b"note" not in f.read_bytes() and b"tags" not in f.read_bytes(), f


@pytest.mark.parametrize("name", COMMANDS)
def test_a_column_pandas_cannot_convert_is_not_read(tmp_path, monkeypatch, name):
    """A no-role timestamp in a zone pandas does not know: reading the whole file fails (as every command
    did before, exit 2), reading the role columns does not; the release is the one of the file without
    the extra columns, and the summary lists them as left out, in the file's order."""
    paths = _paths(tmp_path, name)
    whole = _run(monkeypatch, name, paths["bad"], paths["bad"].parent / "whole", full=True)
    assert whole.exit_code == 2 and "cannot read" in whole.output, whole.output
    pruned = _run(monkeypatch, name, paths["bad"], paths["bad"].parent / "pruned")
    assert pruned.exit_code == 0, pruned.output
    base = _run(monkeypatch, name, paths["base"], paths["base"].parent / "pruned")
    assert base.exit_code == 0, base.output
    a, b = _outputs(paths["bad"].parent / "pruned"), _outputs(paths["base"].parent / "pruned")
    assert a.keys() == b.keys()
    for key in a:
        if not isinstance(a[key], (dict, str)):
            assert a[key] == b[key], key  # the release, byte for byte
    sa, sb = a["s.json"], b["s.json"]
    extra = [*EXTRAS, "mars"]
    for s, want in ((sa, extra), (sb, [])):
        left = s.get("left_out", s.get("verification", {}).get("left_out"))
        assert [c for c in left if c in extra] == want, left
    strip = lambda s: {k: v for k, v in s.items() if k not in ("left_out", "verification", "input", "output", "report", "summary")}  # noqa: E731
    assert json.loads(json.dumps(strip(sa)).replace(str(paths["bad"].parent), "D")) == \
        json.loads(json.dumps(strip(sb)).replace(str(paths["base"].parent), "D"))  # fmt: skip


def _spy(monkeypatch, path):
    """Record the ``columns=`` of every pyarrow read of ``path`` (pandas' ``read_parquet`` calls it too)."""
    calls = []
    real = pq.read_table

    def read_table(source, *a, columns=None, **kw):
        if str(source) == str(path):
            calls.append(None if columns is None else list(columns))
        return real(source, *a, columns=columns, **kw)

    monkeypatch.setattr(pq, "read_table", read_table)
    return calls


ROLE_COLUMNS = {"kanon": {"pid", "sex", "zip", "dx"}, "kanon-plain": {"pid", "zip"}, "kanon-csv": {"pid", "sex", "dx"}, "timestamped": {"pid", "sex", "t", "dx"},
                "stream": {"t", "dx", "sex", "zip", "pid"}, "kp": {"id", "A0", "A1", "A2", "A3", "S"},
                "run": {"pid", "sex", "zip", "dx"}, "run-stream": {"t", "dx", "sex", "zip", "pid"}}  # fmt: skip


@pytest.mark.parametrize("name", COMMANDS)
def test_only_the_role_columns_are_read(tmp_path, monkeypatch, name):
    path = _paths(tmp_path, name)["wide"]
    calls = _spy(monkeypatch, path)
    monkeypatch.setattr(secrets, "randbits", lambda k: 1234567)
    (path.parent / "o").mkdir()
    r = _cli(_command(name, path, path.parent / "o"))
    assert r.exit_code == 0, r.output
    assert calls, "the input was not read through pyarrow"
    assert None not in calls, calls  # never the whole file
    read = set().union(*map(set, calls))
    assert read == ROLE_COLUMNS[name], calls
    # the first read is the table: every role column, in the file's order
    names = pq.read_schema(path).names
    assert calls[0] == [c for c in names if c in ROLE_COLUMNS[name]], calls


BAD_ROLES = [
    ["--qi", "sex", "--keep", "nosuch"],  # an unknown column
    ["--qi", "sex:nosuch"],  # a range with an unknown end
    ["--qi", "zip:sex"],  # a range the wrong way round
    ["--qi", "sex", "--uid", "nosuch"],
    ["--qi", "sex", "--drop", "pid,nosuch"],
    ["--qi", "sex,sex"],  # listed twice
]


@pytest.mark.parametrize("args", BAD_ROLES, ids=[str(i) for i in range(len(BAD_ROLES))])
def test_a_role_naming_no_column_has_the_same_message(tmp_path, monkeypatch, args):
    path = _files(tmp_path)["wide"]
    out = {}
    for mode in ("pruned", "whole"):
        if mode == "whole":
            monkeypatch.setattr(tio, "_read_parquet_roles", lambda *a, **kw: (None, None))
        d = path.parent / mode
        d.mkdir()
        r = _cli(["kanon", str(path), *args, "--hierarchies", str(path.parent / "h"), "--k", "2", "--out", str(d / "o.csv"),
                  "--engine", "numpy"])  # fmt: skip
        assert r.exit_code == 2, r.output
        assert "Traceback" not in r.output
        out[mode] = _unwrap(r.output, str(d))
    assert out["pruned"] == out["whole"]
    if "nosuch" in " ".join(args) and ":" not in args[1]:  # the message lists every column of the file
        assert "note" in out["pruned"] and "f1" in out["pruned"], out["pruned"]


def test_read_table_roles(tmp_path, monkeypatch):
    """``read_table(roles=...)``: ranges resolved against the whole header, lists taken literally, names with
    spaces stripped, a pandas index kept; :func:`table_columns` gives every column of the file."""
    from tempanon.data.io import read_table, table_columns

    df = pd.DataFrame({" a ": ["1", "2"], "b": [1.5, 2.5], "c": ["x", "y"], "d": [[1], [2]], "e": ["u", "v"]},
                      index=pd.Index([7, 9], name="ix"))  # fmt: skip
    path = tmp_path / "t.parquet"
    df.to_parquet(path)
    whole = read_table(path, as_text=True)
    got = read_table(path, as_text=True, roles={"x": "a:c", "y": ["e"], "z": None})
    assert list(got.columns) == ["a", "b", "c", "e"]
    assert table_columns(got) == table_columns(whole) == ["a", "b", "c", "d", "e"]
    pd.testing.assert_frame_equal(got, whole[["a", "b", "c", "e"]])
    assert list(got.index) == [7, 9]
    # any other frame (a copy, a derived table) has its own columns, unless given them (keep_table_columns)
    assert table_columns(got[["a"]]) == ["a"]
    assert table_columns(got.reset_index(drop=True)) == ["a", "b", "c", "e"]
    assert table_columns(tio.keep_table_columns(got.reset_index(drop=True), got)) == ["a", "b", "c", "d", "e"]
    # nothing of the file's other columns travels with the frame (pandas writes DataFrame.attrs into a Parquet file)
    assert got.attrs == {} and got[["a"]].attrs == {}
    got.columns = ["a", "b", "c", "x"]
    assert table_columns(got) == ["a", "b", "c", "x"]
    # a list is literal: "a:c" is no column -> the whole file (the caller reports the unknown name)
    assert list(read_table(path, as_text=True, roles={"x": ["a:c"]}).columns) == ["a", "b", "c", "d", "e"]
    # every column named, an unknown one, a bad range: the whole file
    for roles in ({"x": "a:e"}, {"x": "a,zz"}, {"x": "c:a"}, {"x": None}):
        r = read_table(path, as_text=True, roles=roles)
        assert list(r.columns) == ["a", "b", "c", "d", "e"], roles
        assert table_columns(r) == list(r.columns)
    # the header's names are checked on the whole header, with the message of a whole read
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"a": [1], "A": [2], "b": [3]}), bad)
    msgs = []
    for roles in (None, {"x": "b"}):
        with pytest.raises(tio.InputError) as exc:
            read_table(bad, roles=roles)
        msgs.append(str(exc.value))
    assert msgs[0] == msgs[1] and "differ only in case" in msgs[0]


def test_kanonymize_api_reads_only_the_role_columns(tmp_path, monkeypatch):
    from tempanon.hierarchy import Hierarchy
    from tempanon.kanon import kanonymize

    path = _files(tmp_path)["bad"]  # (the whole file cannot be read by pandas)
    calls = _spy(monkeypatch, path)
    hier = {"sex": Hierarchy.from_csv(path.parent / "h" / "sex.csv")}
    res = kanonymize(path, ["sex"], hier, 2, uid="pid", keep=["dx"], engine="numpy", seed=1)
    assert calls == [["pid", "sex", "dx"]], calls
    assert res.left_out == ["note", "zip", "f0", "tags", "t", "f1", "mars"]
    assert sorted(res.table.columns) == ["dx", "sex"]


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_a_job_on_an_engine_lists_the_columns_it_did_not_read(tmp_path, engine, request):
    """A kanon job file with ``engine = duckdb`` (or spark) reads the Parquet file's role columns into a
    frame and hands it to the engine: the summary's ``left_out`` still lists every other column of the
    file, as numpy's does (found by the engine fuzzer, seed 24: DuckDB's summary said ``[]``)."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    path = _files(tmp_path)["wide"]
    got = {}
    for eng in ("numpy", engine):
        job = path.parent / f"{eng}.toml"
        job.write_text(KANON_JOB.replace('"out/', f'"{eng}/').replace('name = "kanon"', f'name = "kanon"\nengine = "{eng}"', 1))
        r = _cli(["run", str(job), "-q"])
        assert r.exit_code == 0, (eng, r.output)
        got[eng] = json.loads((path.parent / eng / "s.json").read_text())["left_out"]
    assert got[engine] == got["numpy"]
    assert set(EXTRAS) <= set(got["numpy"])
