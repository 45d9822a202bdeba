"""``tempanon kanon --engine duckdb --audit``: the steward's audit written by DuckDB (no pandas copy of
the table), checked row by row by SQL before the release and the audit are renamed into place.

Oracles: an independent pandas check (the input file read as text, the hierarchy files read as
text, every audit row's input line generalized at the released node must be the release row at
that position) and the numpy path's audit (the same map input line -> released row)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.kanon.command import AUDIT_HEADER
from tempanon.samples import ADULT_QI, adult_hierarchies_dir, adult_path

MISSING = ""


def _kanon(*args) -> object:
    return CliRunner().invoke(app, ["kanon", *map(str, args)])


def _read_release(path: Path) -> pd.DataFrame:
    """The release as text, rows in release order; a Spark release (a directory): its part files in
    name order, rows in file order inside each (what the Spark audit's release_row counts)."""
    if path.is_dir():
        parts = sorted(path.glob("part-*"))
        assert parts, f"no part file in {path}"
        return pd.concat([_read_release(p) for p in parts], ignore_index=True)
    if path.suffix == ".parquet":
        df = pd.read_parquet(path)
        return df.astype(object).where(df.notna(), MISSING).astype(str)
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _read_audit(path: Path) -> tuple[list[str], pd.DataFrame]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[:3], pd.read_csv(path, comment="#", dtype=np.int64)


def _by_line(release, audit) -> pd.DataFrame:
    """The release's rows indexed by their input lines (from the steward audit), in input order."""
    rel = _read_release(release)
    aud = _read_audit(audit)[1]
    assert aud["release_row"].tolist() == list(range(1, len(rel) + 1))
    rel.index = aud["input_line"].to_numpy()
    return rel.sort_index()


def _mapping(hfile: Path, level: int) -> dict[str, str]:
    """``{value: generalization at level}`` read from the ARX hierarchy file itself (``;``, text); a
    missing value stays missing below the top level and is the top value at the top (the convention
    of :mod:`tempanon.hierarchy.core`)."""
    h = pd.read_csv(hfile, sep=";", header=None, dtype=str, keep_default_na=False)
    out = dict(zip(h[0], h[level]))
    out.setdefault(MISSING, h.iloc[0, -1] if level == h.shape[1] - 1 else MISSING)
    return out


def _check_independently(inp: Path, hdir: Path, summ: dict, release: Path, audit: Path) -> pd.DataFrame:
    """Every release row is the generalization of the input line its audit row names (pandas, from
    the files); returns the released rows indexed by input line."""
    sep = ";" if inp.read_bytes()[:4096].count(b";") > inp.read_bytes()[:4096].count(b",") else ","
    data = pd.read_csv(inp, dtype=str, keep_default_na=False, sep=sep)
    rel = _read_release(release)
    head, aud = _read_audit(audit)
    assert head[0] == AUDIT_HEADER and head[1].startswith("# shuffle seed: ") and head[2] == "release_row,input_line"
    assert list(aud.columns) == ["release_row", "input_line"]
    assert aud["release_row"].tolist() == list(range(1, len(rel) + 1))
    assert aud["input_line"].is_unique and aud["input_line"].between(2, len(data) + 1).all()
    src = data.iloc[aud["input_line"].to_numpy() - 2].reset_index(drop=True)
    expected = pd.DataFrame(index=src.index)
    for c in rel.columns:
        if c in summ["selected_levels"]:
            mp = _mapping(hdir / f"{c}.csv", int(summ["selected_node"][summ["quasi_identifiers"].index(c)]))
            expected[c] = src[c].map(mp)
            assert expected[c].notna().all(), c
        else:
            expected[c] = src[c]
    pd.testing.assert_frame_equal(expected, rel.reset_index(drop=True), check_dtype=False)
    out = rel.copy()
    out.index = aud["input_line"].to_numpy()
    return out.sort_index()


def _numpy_and_duckdb(tmp_path: Path, inp: Path, hdir: Path, args: list, suffix: str = ".csv",
                      engines: tuple = ("numpy", "duckdb")) -> dict:
    """Run kanon with --audit on numpy and each engine of ``engines`` (numpy first); every audit
    checked independently; returns the released rows by input line per engine and the last
    engine's summary."""
    got = {}
    for eng in engines:
        out, audit, summary = tmp_path / eng / f"release{suffix}", tmp_path / "steward" / f"{eng}-audit.csv", tmp_path / "steward" / f"{eng}.json"
        r = _kanon(inp, "--hierarchies", hdir, *args, "--out", out, "--audit", audit, "--summary", summary, "--engine", eng, "-q")
        assert r.exit_code == 0, r.output
        summ = json.loads(summary.read_text())
        assert summ["engine"] == eng
        got[eng] = (_check_independently(inp, hdir, summ, out, audit), summ)
        assert sorted(p.name for p in (tmp_path / eng).iterdir()) == [out.name]  # no temporary file left
    a, sa = got[engines[0]]
    for eng in engines[1:]:
        b, sb = got[eng]
        assert sb["selected_node"] == sa["selected_node"]
        pd.testing.assert_frame_equal(b, a)  # the same input line -> released row as the numpy path's audit
        assert sb["audit"] == str(tmp_path / "steward" / f"{eng}-audit.csv")
        assert sb["verification"]["audit"] == "checked row by row against the written release and the input"
    return {**{eng: got[eng][0] for eng in engines}, "summary": got[engines[-1]][1]}


# ---- the bundled Adult sample ---------------------------------------------------------------------


def test_adult_audit_maps_every_release_row(tmp_path):
    inp = tmp_path / "adult.csv"  # the file the audit's lines count in (the sample is gzipped)
    import gzip

    inp.write_bytes(gzip.decompress(adult_path().read_bytes()) if adult_path().suffix == ".gz" else adult_path().read_bytes())
    got = _numpy_and_duckdb(tmp_path, inp, adult_hierarchies_dir(), ["--qi", ",".join(ADULT_QI), "--k", "5"])
    assert len(got["duckdb"]) == got["summary"]["rows_out"]
    # the row order is not input order (issue 12): the salted order differs from the file's
    aud = _read_audit(tmp_path / "steward" / "duckdb-audit.csv")[1]
    assert not aud["input_line"].is_monotonic_increasing


# ---- generated tables: missing values, respondents, suppression, Parquet ----------------------------


def _generated(tmp_path: Path, n_people: int = 150, seed: int = 3) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    people = pd.DataFrame({
        "person": [f"u{i:04d}" for i in range(n_people)],
        "age": rng.integers(20, 80, n_people).astype(str),
        "sex": rng.choice(["F", "M"], n_people),
        "zip": rng.choice(["02101", "02108", "02115", "01002", "01003"], n_people),
    })  # fmt: skip
    rows = people.loc[np.repeat(np.arange(n_people), rng.integers(1, 4, n_people))].reset_index(drop=True)
    rows["visit"] = rng.choice(["a", "b", "c", ""], len(rows))  # a kept column with missing values
    rows.loc[rng.random(len(rows)) < 0.05, "sex"] = ""  # missing quasi-identifier values
    rows.loc[rng.random(len(rows)) < 0.05, "zip"] = ""
    inp = tmp_path / "input.csv"
    rows.to_csv(inp, index=False)
    hdir = tmp_path / "h"
    hdir.mkdir()
    ages = [str(a) for a in range(20, 80)]
    (hdir / "age.csv").write_text("".join(f"{a};{int(a) // 10 * 10}-{int(a) // 10 * 10 + 9};*\n" for a in ages))
    (hdir / "sex.csv").write_text("F;*\nM;*\n")
    zips = ["02101", "02108", "02115", "01002", "01003"]
    (hdir / "zip.csv").write_text("".join(f"{z};{z[:4]}*;{z[:3]}**;*\n" for z in zips))
    return inp, hdir


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("extra", [["--uid", "person"], ["--uid", "person", "--max-suppression", "0.1"], ["--drop", "person"]])
def test_generated_missing_values_and_uid(tmp_path, suffix, extra):
    inp, hdir = _generated(tmp_path)
    got = _numpy_and_duckdb(tmp_path, inp, hdir, ["--qi", "age,sex,zip", "--k", "4", "--keep", "visit", *extra], suffix)
    rel = got["duckdb"]
    assert "person" not in rel.columns and list(rel.columns) == ["age", "sex", "zip", "visit"]
    assert (rel["visit"] == "").any()  # missing values went through


def test_api_audit(tmp_path):
    """kanonymize(path, engine="duckdb", out=, audit=): the same files as the command; refused on
    numpy and without out."""
    from tempanon.errors import InputError
    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize

    inp, hdir = _generated(tmp_path)
    hier = load_hierarchies(hdir, ["age", "sex", "zip"])
    (tmp_path / "rel").mkdir()
    res = kanonymize(str(inp), ["age", "sex", "zip"], hier, 3, uid="person", keep=["visit"], engine="duckdb",
                     out=str(tmp_path / "rel" / "r.csv"), audit=str(tmp_path / "a.csv"))  # fmt: skip
    assert res.engine_checks["audit"].startswith("checked row by row")
    summ = {"selected_levels": res.selected_levels, "selected_node": list(res.selected_node), "quasi_identifiers": res.quasi_identifiers}
    _check_independently(inp, hdir, summ, tmp_path / "rel" / "r.csv", tmp_path / "a.csv")
    with pytest.raises(InputError, match="numpy"):
        kanonymize(pd.read_csv(inp, dtype=str, keep_default_na=False), ["age", "sex", "zip"], hier, 3, engine="numpy",
                   audit=str(tmp_path / "b.csv"))  # fmt: skip
    with pytest.raises(InputError, match="out="):
        kanonymize(str(inp), ["age", "sex", "zip"], hier, 3, engine="duckdb", audit=str(tmp_path / "b.csv"))
    with pytest.raises(InputError, match="release's folder"):
        kanonymize(str(inp), ["age", "sex", "zip"], hier, 3, engine="duckdb", out=str(tmp_path / "rel" / "x.csv"),
                   audit=str(tmp_path / "rel" / "b.csv"))  # fmt: skip
    assert not (tmp_path / "b.csv").exists() and sorted(p.name for p in (tmp_path / "rel").iterdir()) == ["r.csv"]


# ---- a corrupted audit or release is refused, nothing left --------------------------------------


def _swap_lines(path: str, i: int, j: int) -> None:
    lines = Path(path).read_text(encoding="utf-8").splitlines(keepends=True)
    lines[i], lines[j] = lines[j], lines[i]
    Path(path).write_text("".join(lines), encoding="utf-8")


def _set_field(path: str, line: int, col: int, value: str) -> None:
    lines = Path(path).read_text(encoding="utf-8").splitlines(keepends=True)
    parts = lines[line].rstrip("\n").split(",")
    parts[col] = value
    lines[line] = ",".join(parts) + "\n"
    Path(path).write_text("".join(lines), encoding="utf-8")


def _corrupt(which: str, path: str, parquet: bool) -> None:
    """Change one row of what a COPY wrote (CSV): ``release`` swaps the first and last rows of the
    release (same classes and rows, wrong positions); ``audit-line`` swaps the input lines of the
    first and last audit rows; ``audit-duplicate`` names the second row's input line twice;
    ``audit-outside`` names an input line past the end of the input."""
    rows = path.endswith(".rows")
    if which == "release" and not rows:
        n = len(Path(path).read_text().splitlines())
        _swap_lines(path, 1, n - 1)
    elif which.startswith("audit") and rows:
        lines = Path(path).read_text().splitlines()
        first, second, last = (ln.split(",")[1] for ln in (lines[1], lines[2], lines[-1]))
        if which == "audit-line":
            _set_field(path, 1, 1, last)
            _set_field(path, len(lines) - 1, 1, first)
        elif which == "audit-duplicate":
            _set_field(path, 1, 1, second)
        else:
            _set_field(path, 1, 1, "99999999")


@pytest.mark.parametrize("which, message", [
    ("release", r"audit row for release row 1: column '\w+' of input line \d+ generalizes to '[^']*', the release row has"),
    ("audit-line", r"audit row for release row 1: column '\w+' of input line \d+ generalizes to"),
    ("audit-duplicate", r"the audit lists \d+ rows \(\d+ distinct release rows, \d+ distinct input lines\); the release has \d+"),
    ("audit-outside", r"the audit names 1 input line\(s\) that are not in the input"),
])  # fmt: skip
def test_corrupted_audit_or_release_refused(tmp_path, monkeypatch, which, message):
    from tempanon.lattice.source_duckdb import DuckDBSource

    inp, hdir = _generated(tmp_path)
    copy = DuckDBSource._copy

    def faulty(self, query, path, parquet):
        copy(self, query, path, parquet)
        _corrupt(which, path, parquet)

    monkeypatch.setattr(DuckDBSource, "_copy", faulty)
    assert_tampered_run_refused(tmp_path, inp, hdir, "duckdb", message)


def assert_tampered_run_refused(tmp_path, inp, hdir, engine, message):
    """``kanon --audit`` on ``engine`` whose written release or audit was tampered with (by the
    caller's patch of the engine's writer): exit 3 with ``message``, no traceback, nothing renamed
    into place."""
    import re

    (tmp_path / "rel").mkdir()
    (tmp_path / "steward").mkdir()
    r = _kanon(inp, "--hierarchies", hdir, "--qi", "age,sex,zip", "--k", "4", "--uid", "person", "--keep", "visit",
               "--out", tmp_path / "rel" / "r.csv", "--audit", tmp_path / "steward" / "a.csv",
               "--summary", tmp_path / "steward" / "s.json", "--engine", engine, "-q")  # fmt: skip
    assert r.exit_code == 3, r.output
    assert "Traceback" not in r.output
    assert re.search(message, " ".join(r.output.split())), r.output
    assert list((tmp_path / "rel").iterdir()) == [] and list((tmp_path / "steward").iterdir()) == []


# ---- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["duckdb", "numpy"])
def test_audit_in_release_folder_refused(tmp_path, engine):
    inp, hdir = _generated(tmp_path)
    (tmp_path / "rel").mkdir()
    r = _kanon(inp, "--hierarchies", hdir, "--qi", "age,sex,zip", "--k", "4", "--out", tmp_path / "rel" / "r.csv",
               "--audit", tmp_path / "rel" / "a.csv", "--engine", engine)  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "is in the release's folder" in " ".join(r.output.split())
    assert list((tmp_path / "rel").iterdir()) == []


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_job_engine_audit_maps_input_lines(tmp_path, request, engine):
    """A job with ``engine = "duckdb"`` (or ``"spark"``) and ``[output] audit`` (the table read into
    pandas, the release written and read back by the engine): the release keeps the input's row
    labels, so the audit maps every release row to its input line, as the numpy job's does."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp, hdir = _generated(tmp_path)
    got = {}
    for eng in ("numpy", engine):
        job = tmp_path / f"{eng}.toml"
        job.write_text(f"""[input]
path = "{inp}"

[columns]
quasi_identifiers = ["age", "sex", "zip"]
uid = "person"
keep = ["visit"]

[hierarchies]
age = "{hdir / 'age.csv'}"
sex = "{hdir / 'sex.csv'}"
zip = "{hdir / 'zip.csv'}"

[model]
name = "kanon"
k = 4
engine = "{eng}"

[output]
table = "{tmp_path / eng / 'r.csv'}"
summary = "{tmp_path / 'steward' / (eng + '.json')}"
audit = "{tmp_path / 'steward' / (eng + '-audit.csv')}"
""")
        r = CliRunner().invoke(app, ["run", str(job), "-q"])
        assert r.exit_code == 0, r.output
        summ = json.loads((tmp_path / "steward" / f"{eng}.json").read_text())
        got[eng] = _check_independently(inp, hdir, summ, tmp_path / eng / "r.csv", tmp_path / "steward" / f"{eng}-audit.csv")
    pd.testing.assert_frame_equal(got[engine], got["numpy"])


def typed_parquet_maps(tmp_path, suffix, engines, **parquet):
    """A typed Parquet input (a float quasi-identifier, a kept float column with missing values, an
    integer respondent id) through ``kanon --audit`` on each engine: per engine the release indexed
    by the input line its audit names (``parquet``: options of the input's ``to_parquet``)."""
    rng = np.random.default_rng(11)
    n = 600
    df = pd.DataFrame({"age": rng.integers(20, 60, n).astype(float), "sex": rng.choice(["F", "M"], n),
                       "w": rng.random(n) * 100, "pid": rng.integers(0, 200, n)})  # fmt: skip
    df.loc[rng.random(n) < 0.05, "w"] = np.nan
    inp = tmp_path / "in.parquet"
    df.to_parquet(inp, **parquet)
    hdir = tmp_path / "h"
    hdir.mkdir()
    (hdir / "age.csv").write_text("".join(f"{a}.0;{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 60)))
    (hdir / "sex.csv").write_text("F;*\nM;*\n")
    maps = {}
    for eng in engines:
        out, audit = tmp_path / eng / f"r{suffix}", tmp_path / "steward" / f"{eng}.csv"
        r = _kanon(inp, "--qi", "age,sex", "--hierarchies", hdir, "--k", "5", "--keep", "w", "--allow-identifier", "w",
                   "--uid", "pid", "--engine", eng, "--out", out, "--audit", audit, "-q")  # fmt: skip
        assert r.exit_code == 0, r.output
        rel = _read_release(out)
        aud = _read_audit(audit)[1]
        assert aud["release_row"].tolist() == list(range(1, len(rel) + 1))
        rel.index = aud["input_line"].to_numpy()
        maps[eng] = rel.sort_index()
    return maps


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_typed_parquet_input_float_columns(tmp_path, suffix):
    """A typed Parquet input (a float quasi-identifier, a kept float column with missing values, an
    integer respondent id): the DuckDB audit is written and checked, and maps every input line to
    the same released row as the numpy path's audit (the engines' text of a float agree)."""
    maps = typed_parquet_maps(tmp_path, suffix, ("numpy", "duckdb"))
    pd.testing.assert_frame_equal(maps["duckdb"], maps["numpy"])
    assert len(maps["duckdb"]) > 0
