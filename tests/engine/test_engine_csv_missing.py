"""A missing value is written as an empty field in a CSV release on every engine, as numpy writes it.

The numpy path writes its CSV releases with pandas, which writes a missing value and an empty string
alike as an empty field. DuckDB's CSV writer told them apart: NULL as an empty field, an empty string
as ``""``; and the engines' release holds an empty string where a quasi-identifier is missing (a
hierarchy reads a cell as text: missing is the value ``''``, its label at level 0 too). So
``kanon --engine duckdb`` and ``timestamped --engine duckdb --hierarchies`` wrote ``30,"",b`` where numpy
wrote ``30,,b`` (both read back as missing; the files differed byte for byte). The oracle here is the
numpy path's release file: every released row's line of text, byte for byte, keyed by its input line
through the steward's audit (the row order inside a class is a salted hash, different per engine), and
the header line. Missing values stay a category of their own: their rows are released, not dropped.
"""

from __future__ import annotations

import pandas as pd
import pytest

from .test_engine_temporal import _cli

ENGINES = ["duckdb", pytest.param("spark", marks=pytest.mark.spark)]

ROWS = [  # pid, t, age, sex, zip, dx
    ("1", "2021-01-01 10:00", "30", "M", "1", "a"),
    ("1", "2021-01-02 10:00", "30", "M", "1", None),
    ("2", "2021-01-01 11:00", "30", "M", "1", "b"),
    ("2", "2021-01-02 12:00", "30", None, "1", "c"),
    ("3", "2021-01-05 10:00", "30", None, "1", "d"),
    ("3", "2021-01-05 11:00", "40", "F", None, "e"),
    ("4", "2021-01-05 12:00", "40", "F", None, ""),
    ("4", "2021-01-06 12:00", "40", "F", None, "f"),
    ("5", "2021-01-06 13:00", "30", None, "1", "g"),
    ("5", "2021-01-07 13:00", "40", "F", None, "h"),
]
COLS = ["pid", "t", "age", "sex", "zip", "dx"]


def _input(tmp_path, suffix: str, empty_zip: slice = slice(5, 6)):
    """The rows as a CSV file (missing: an empty field) or a Parquet file (missing: None in ``sex``,
    ``zip`` and ``dx``, an empty string in ``dx`` and in the rows ``empty_zip`` of ``zip``), and ARX
    hierarchies in ``h/``: ``zip``'s lists the empty value, ``sex``'s does not (missing stays missing
    below the top)."""
    df = pd.DataFrame(ROWS, columns=COLS)
    path = tmp_path / f"in{suffix}"
    if suffix == ".parquet":
        # an empty string beside missing values: the same value to a hierarchy (not without one)
        df.loc[df.index[empty_zip][df["zip"].iloc[empty_zip].isna()], "zip"] = ""
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    h = tmp_path / "h"
    h.mkdir(exist_ok=True)
    (h / "age.csv").write_text("30;*\n40;*\n")
    (h / "sex.csv").write_text("M;*\nF;*\n")
    (h / "zip.csv").write_text("1;*\n;*\n")
    (tmp_path / "steward").mkdir(exist_ok=True)
    return path, h


def _lines(out, audit) -> tuple[str, dict[str, str]]:
    """The release's header line and each released row's line of text (bytes as written, no line
    end) keyed by its input line, from the steward's audit. A Spark release is a directory of part
    files: their rows in name order (what ``release_row`` counts), one header."""
    if out.is_dir():
        parts = [p.read_bytes().decode("utf-8").split("\n") for p in sorted(out.glob("part-*.csv"))]
        header = parts[0][0]
        rows = [line for p in parts for line in p[1:] if line]
    else:
        header, *rows = [line for line in out.read_bytes().decode("utf-8").split("\n") if line]
    body = [line for line in audit.read_text().split("\n") if line and not line.startswith("#")]
    cols = body[0].split(",")
    assert cols[:2] == ["release_row", "input_line"], cols
    by_line = {}
    for n, line in enumerate(body[1:], start=1):
        rel, inp = line.split(",")[:2]
        assert int(rel) == n
        by_line[inp] = rows[n - 1]
    assert len(by_line) == len(rows)
    return header, by_line


def _release(cmd, inp, h, tmp_path, eng, tag, extra, keep=("--keep", "dx")):
    """Run ``cmd`` (kanon or timestamped) on ``eng`` with ``keep`` and a steward audit; the
    release's lines (:func:`_lines`). ``h``: the hierarchies' folder, or None."""
    (tmp_path / eng).mkdir(exist_ok=True)
    out, audit = tmp_path / eng / f"{tag}.csv", tmp_path / "steward" / f"{eng}-{tag}.csv"
    hier = ["--hierarchies", str(h)] if h is not None else []
    r = _cli([cmd, str(inp), *extra, *hier, "--k", "2", *keep, "--out", str(out), "--audit", str(audit),
              "--engine", eng, "-q"])  # fmt: skip
    assert r.exit_code == 0, (eng, r.output)
    return _lines(out, audit)


def _check(got, engine, missing_rows: int) -> None:
    header, rows = got[engine]
    assert header == got["numpy"][0]
    assert rows == got["numpy"][1]  # every row's text, byte for byte, by input line
    assert sum(',,' in line or line.endswith(",") for line in rows.values()) >= missing_rows  # not dropped
    assert not any('""' in line for line in rows.values())


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("engine", ENGINES)
def test_kanon_missing_at_level_zero_written_as_numpy(tmp_path, engine, suffix, request):
    """``kanon`` at level 0 (k = 2 holds there) with missing quasi-identifier values (a hierarchy
    listing the empty value and one that does not) and missing/empty kept values: the CSV release's
    lines are numpy's."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp, h = _input(tmp_path, suffix)
    got = {eng: _release("kanon", inp, h, tmp_path, eng, "k", ["--qi", "age,sex,zip", "--uid", "pid"])
           for eng in ("numpy", engine)}  # fmt: skip
    assert got["numpy"][0] == "age,sex,zip,dx"
    assert got["numpy"][1]["5"] == "30,,1,c"  # released at level 0, missing kept
    _check(got, engine, 7)


@pytest.mark.parametrize("joint", [True, False])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("engine", ENGINES)
def test_timestamped_missing_written_as_numpy(tmp_path, engine, suffix, joint, request):
    """``timestamped --hierarchies`` (the joint search: the quasi-identifiers through their
    hierarchies' labels, missing ones at level 0) and the time-only search (quasi-identifiers
    released as read), missing/empty kept values: the CSV release's lines are numpy's."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp, h = _input(tmp_path, suffix, slice(5, 6) if joint else slice(None))
    extra = ["--time", "t", "--uid", "pid", "--qi", "sex,zip", "--granularities", "day,week,month", "--shuffle-seed", "3"]
    got = {eng: _release("timestamped", inp, h if joint else None, tmp_path, eng, "ts", extra) for eng in ("numpy", engine)}
    assert got["numpy"][0] == "t,sex,zip,dx"
    assert got["numpy"][1]["5"] == "2021-01,,1,c", got["numpy"][1]  # missing kept at level 0
    _check(got, engine, 7)


@pytest.mark.parametrize("engine", ENGINES)
def test_one_column_release_missing_written_as_numpy(tmp_path, engine, request):
    """A release of one column: pandas writes a missing value as ``""`` there (an empty field would be
    a blank line, which readers skip); so does every engine (kanon of one quasi-identifier with
    missing values; timestamped with only the time column, a missing time among them)."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    inp, h = _input(tmp_path, ".csv")
    got = {eng: _release("kanon", inp, h, tmp_path, eng, "k1", ["--qi", "sex"], keep=()) for eng in ("numpy", engine)}
    assert got["numpy"][0] == "sex"
    assert got["numpy"][1]["5"] == '""'  # released at level 0
    assert got[engine] == got["numpy"]
    rows = [(r[0], "" if i in (3, 4) else r[1], *r[2:]) for i, r in enumerate(ROWS)]  # two respondents' missing times
    pd.DataFrame(rows, columns=COLS).to_csv(tmp_path / "t.csv", index=False)
    for eng in ("numpy", engine):
        (tmp_path / eng).mkdir(exist_ok=True)
        out, audit = tmp_path / eng / "t1.csv", tmp_path / "steward" / f"{eng}-t1.csv"
        r = _cli(["timestamped", str(tmp_path / "t.csv"), "--time", "t", "--uid", "pid", "--k", "2", "--granularities",
                  "day,week,month", "--max-suppression", "0.2", "--out", str(out), "--audit", str(audit), "--engine", eng, "-q"])  # fmt: skip
        assert r.exit_code == 0, (eng, r.output)
        got[eng, "t"] = _lines(out, audit)
    assert got["numpy", "t"][0] == "t"
    assert got["numpy", "t"][1]["5"] == got["numpy", "t"][1]["6"] == '""'  # the missing times, not a blank line
    assert got[engine, "t"] == got["numpy", "t"]
