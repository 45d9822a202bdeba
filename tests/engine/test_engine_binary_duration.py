"""A Parquet input column of a binary type (``binary``, ``large_binary``, ``fixed_size_binary``) or a
duration type given any role is refused with exit 2 by every engine, before any row is read and
before any engine starts (:func:`tempanon.data.io.refuse_nested_columns`): the message names the
column, its type and role, and the way out (decode to text; convert to a number of seconds). On main
each engine made its own text of such a cell: numpy released ``b'M'`` and ``0 days 00:00:48``, DuckDB
``M`` and ``00:00:48`` (and DuckDB and Spark differed on bytes that are not UTF-8), so the same input
gave a different release by engine. Such a column with no role is never read and the run is the same
on every engine; ``check`` notes it, ``init`` gives it no role."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from .test_engine_nested_types import _release_columns, nothing_starts  # noqa: F401 (a fixture)
from .test_engine_temporal import _cli

ENGINES = ["numpy", "duckdb", pytest.param("spark", marks=pytest.mark.spark)]
N = 40


def _file(tmp_path):
    cols = {
        "sex": pa.array(["F", "M"] * (N // 2)),
        "sexb": pa.array([b"M", b"F"] * (N // 2), pa.binary()),
        "lb": pa.array([b"x", b"y"] * (N // 2), pa.large_binary()),
        "fb": pa.array([b"ab", b"cd"] * (N // 2), pa.binary(2)),
        "blob": pa.array([b"\xff\xfe"] * N, pa.binary()),  # (not UTF-8)
        "dur": pa.array([48 * (i % 4) for i in range(N)], pa.duration("s")),
        "dx": pa.array([["flu", "cold", "ulcer", "hiv"][i % 4] for i in range(N)]),
    }
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table(cols), path)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    (tmp_path / "h" / "sexb.csv").write_text("F;*\nM;*\n")
    return path


ROLES = [
    (["--qi", "sexb", "--keep", "dur"], {"sexb": ("binary", "--qi"), "dur": ("duration[s]", "--keep")}),
    (["--qi", "sex", "--keep", "lb,dx"], {"lb": ("large_binary", "--keep")}),
    (["--qi", "sex", "--keep", "fb"], {"fb": ("fixed_size_binary[2]", "--keep")}),
    (["--qi", "sex", "--sensitive", "blob", "--l", "2"], {"blob": ("binary", "--sensitive")}),
    (["--qi", "sex", "--uid", "dur"], {"dur": ("duration[s]", "--uid")}),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("args,expect", ROLES, ids=[str(i) for i in range(len(ROLES))])
def test_kanon_refuses_a_binary_or_duration_column_with_a_role(tmp_path, engine, args, expect, nothing_starts):  # noqa: F811
    path = _file(tmp_path)
    for suffix in ("csv", "parquet"):
        out = tmp_path / suffix / f"o.{suffix}"
        out.parent.mkdir()
        r = _cli(["kanon", str(path), *args, "--hierarchies", str(tmp_path / "h"), "--k", "2", "--out", str(out),
                  "--summary", str(out.parent / "s.json"), "--engine", engine, "-q"])  # fmt: skip
        assert r.exit_code == 2, r.output
        text = " ".join(r.output.split())
        assert "Parquet type tempanon cannot give a role" in text, text
        for col, (typ, role) in expect.items():
            assert f"{col!r} ({typ}) given the role {role}" in text, (col, text)
        if any("binary" in t for t, _ in expect.values()):
            assert "decode it into a text (string) column first" in text, text
        if any(t.startswith("duration") for t, _ in expect.values()):
            assert "convert it to a number of seconds" in text, text
        assert "Traceback" not in r.output
        assert list(out.parent.iterdir()) == []


def test_kanon_same_refusal_on_numpy_and_duckdb(tmp_path):
    """The brief's case: a binary QI and a duration kept column give the same exit-2 message on numpy
    and DuckDB (on main: numpy released b'M' and '0 days 00:00:48', DuckDB 'M' and '00:00:48')."""
    path = _file(tmp_path)
    msgs = {}
    for engine in ("numpy", "duckdb"):
        out = tmp_path / engine / "o.csv"
        out.parent.mkdir()
        r = _cli(["kanon", str(path), "--qi", "sexb", "--keep", "dur", "--hierarchies", str(tmp_path / "h"), "--k", "2",
                  "--out", str(out), "--engine", engine, "-q"])  # fmt: skip
        assert r.exit_code == 2, r.output
        assert not out.exists()
        msgs[engine] = " ".join(r.output.split())
    assert msgs["numpy"] == msgs["duckdb"]
    assert "'sexb' (binary) given the role --qi; 'dur' (duration[s]) given the role --keep" in msgs["numpy"], msgs


@pytest.mark.parametrize("engine", ENGINES)
def test_kanon_runs_with_binary_and_duration_columns_without_a_role(tmp_path, engine):
    path = _file(tmp_path)
    out = tmp_path / "out" / "o.csv"
    out.parent.mkdir()
    r = _cli(["kanon", str(path), "--qi", "sex", "--keep", "dx", "--hierarchies", str(tmp_path / "h"), "--k", "2",
              "--out", str(out), "--summary", str(out.parent / "s.json"), "--engine", engine, "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert sorted(_release_columns(out)) == ["dx", "sex"]
    assert {"sexb", "lb", "fb", "blob", "dur"} <= set(json.loads((out.parent / "s.json").read_text())["left_out"])


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_check_notes_and_refuses(tmp_path, engine):
    path = _file(tmp_path)
    r = _cli(["check", str(path), "--qi", "sex", "--k", "2", "--engine", engine])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "note: column 'sexb' has a binary Parquet type (binary): it can take no role" in text, text
    assert "note: column 'dur' has a duration Parquet type (duration[s]): it can take no role" in text, text
    r = _cli(["check", str(path), "--qi", "sex,dur", "--k", "2", "--engine", engine])
    assert r.exit_code == 2, r.output
    assert "'dur' (duration[s]) given the role" in " ".join(r.output.split())


def test_init_gives_binary_and_duration_columns_no_role(tmp_path):
    """``init`` proposed ``sexb`` (two values, like sex) as a quasi-identifier on main; the job then
    released b'M'. Now: no role, a comment saying why, and the job runs."""
    path = _file(tmp_path)
    job = tmp_path / "in.job.toml"
    r = _cli(["init", str(path), "--out", str(job), "--k", "2"])
    assert r.exit_code == 0, r.output
    import tomllib

    cols = tomllib.loads(job.read_text())["columns"]
    roles = {c for v in cols.values() for c in ([v] if isinstance(v, str) else v)}
    assert not roles & {"sexb", "lb", "fb", "blob", "dur"}, cols
    assert "# dur: a duration Parquet type (duration[s])" in job.read_text()
    assert "# sexb: a binary Parquet type (binary)" in job.read_text()
    r = _cli(["run", str(job), "-q"])
    assert r.exit_code == 0, r.output
