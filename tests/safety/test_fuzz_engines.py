"""Differential fuzz of the engine paths (issue 15): random small tables and options run through
``tempanon kanon``, ``tempanon timestamped`` and ``tempanon run`` on the numpy path (the oracle) and
on an engine (DuckDB here; Spark behind the ``spark`` marker).

Whatever the input, both paths exit 0 or both fail, with a message (exit 1, 2, 3 or 4), never a
traceback. When both succeed they give the same release (same columns in the same order, the same
rows after sorting, the same text of every value), the same summary numbers (chosen node or
granularity, suppressed rows, k, respondents, candidates, the risk block), and with ``--audit``
the same input line -> released row (and respondent) mapping; every written release passes
``tempanon check`` re-run on it. With ``--report`` (drawn for every command, the job file's
``report`` too) the two HTML reports say the same: the page is read back into its structure
(:func:`report_content`: the sections of :mod:`tempanon.report.html` with their headings, texts,
key/value lists, table cells and figures, the inline SVG as written) and compared block by block
(:func:`report_differences`): the inputs and roles, the parameters, the guarantee requested and
achieved with its verdict, the class-size histogram, the risk before and after, the suppression,
the losses per attribute, the lattice or the granularity table, the "What was verified"
statement. A float printed with a decimal point may differ by one unit in its last printed digit
(a loss summed in another order, below); a count is exact.

Differences that are intended (and documented) are encoded in the oracle: the release's row
order (README "Large tables: engines": engine-written releases are ordered inside a class by a
salted hash), the summary's ``plan``/``engine``/``verification``/timings, floats to the last bits
(a loss summed in another order), l-diversity with suppression refused by the engines (exit 2,
README "Large tables: engines"), ``--memory-limit`` not given to Spark (the heap of a
running session is fixed: ``local_session``) and on Spark the release written as a directory of
part files (README, docs/temporal.md "Engines"; its audit numbers the rows over the part files in
name order, docs/engines.md, as :func:`_read_release` reads them). In the report: the checker
named in the guarantee's status line (``tempanon.verify`` on numpy, the engine's class counts of
the written release). ``kanon``'s utility table lists the examples of released values in the
hierarchy level's order on every path (session 15; numpy's followed the release's shuffled rows, so
a row cut off with ', ...' could not be compared between the reports): the rows are compared
exactly, and each report's examples also against its own release by the rule
(:func:`examples_by_rule`). The report has no timings, engine name or plan.

The default run draws 11 examples per command from a fixed seed (``TEMPANON_FUZZ_SEED``, 4). Four
draws in five are *valid* (:data:`VALID`, :func:`_valid`: no option refused whatever the data), so
most examples release and compare two releases: at the default seed 7 of 11 kanon, 8 of 11
timestamped and 7 of 11 job examples release (seeds 1 and 2: 10/8/10 and 7/8/8 of 11),
where the 13 examples of session 14 released 4, 4 and 6 (seeds 1 and 2:
3/5/8 and 6/3/2 of 13) and compared refusals otherwise (an unknown time zone in 3 of the 13
timestamped ones, a ';' in a hierarchy value in 3 of the kanon ones). Its CPU time, measured
side by side on the shared 2-core machine at load 11 (2026-11-26): 16.3 s against 12.1 s for the
13 examples of session 14 (12.6 s at load 9 then);
``TEMPANON_FUZZ_EXAMPLES=N`` draws N random ones per command (``TEMPANON_FUZZ_NO_SHRINK=1`` to
report a failure as drawn, ``TEMPANON_FUZZ_EVENTS=1`` with ``--hypothesis-show-statistics`` to see
the errors met, ``TEMPANON_FUZZ_REPORT=1`` to run every command with ``--report``: about 40% more
CPU). The Spark test (marker ``spark``) draws ``TEMPANON_FUZZ_SPARK_EXAMPLES`` (6; 2 before
session 14: 6 took 39 s more wall time than 2 on the 2-core machine at load 9.5) per command.
Bugs found so far: see the regression tests at the end of this file and
tests/engine/test_engine_screen.py. The report comparison (session 14, every command run with
``--report``: DuckDB 1,200 to 1,500 random examples per command, Spark 33 random and the 6 default
ones per command) found no number that differs between the two reports of a run; the header names
it then drew (``HEADER``) did find a bug: a column named like another but for case
(``age``/``AGE``), a column with no name, or in Parquet ``age`` beside `` age``, was read by
pandas as written ('Unnamed: 8' for the unnamed one) but renamed by DuckDB ('AGE_1',
'column8'/'C8') or refused by Spark with an engine error (exit 4), so the report's roles, the
summary's left-out columns (and with ``--qi AGE`` the run itself) differed. Such a header is now
refused on every path with one message (:func:`tempanon.data.io.check_column_names`), and numpy
strips a Parquet file's names as the engines do. Reading the reports' structure also showed that
``timestamped --drop`` called the dropped column "left out (no role)" in "What went in" (on
every path) while "What was verified" said it was dropped as an identifier; fixed. The fuzz's own hierarchy writer (:func:`_cell`) quotes a drawn value as the format
defines (session 15; before, a value holding ';' gave a ragged hierarchy row, and both paths
refused it: 3 of the 13 default kanon examples compared only that refusal); quoting showed
that the product's hierarchy reader stripped a quoted value's spaces (``" 7"`` read as ``7``)
and read ``"a"b`` as ``ab``: fixed, tests/core/test_hierarchy_quoting.py."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
from decimal import Decimal, InvalidOperation
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, currently_in_test_context, event, given, seed, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from hierarchy_strategies import bucket  # tests/hierarchy_strategies.py
from tempanon.cli import app
from tempanon.data.io import read_table

from engine.conftest import spark_session  # noqa: F401  (the engine suite's session-scoped local[2] session)

runner = CliRunner()

N_DUCKDB = int(os.environ.get("TEMPANON_FUZZ_EXAMPLES", "11"))  # per command
N_SPARK = int(os.environ.get("TEMPANON_FUZZ_SPARK_EXAMPLES", "6"))
RANDOM = "TEMPANON_FUZZ_EXAMPLES" in os.environ
REPORT_ALWAYS = bool(os.environ.get("TEMPANON_FUZZ_REPORT"))  # every run with --report (a hunt in the reports)
# TEMPANON_FUZZ_NO_SHRINK=1: report the first failing example as drawn (a long hunt, faster)
PHASES = [p for p in Phase if not (p == Phase.shrink and os.environ.get("TEMPANON_FUZZ_NO_SHRINK"))]

# odd cells (as in test_fuzz_commands.py): bad times, numbers as text, unicode, empty cells
VALUES = st.sampled_from(["1", "1.0", "", "x", "2020-01-01", "inf", "-3", "Ā", "a;b", "9" * 25, "2300-01-01", "NaN",
                          " 7", "é\u0301", "null", "0.1", "1e3", "2021-03-04T05:06:07", "M "])  # fmt: skip


@st.composite
def tables(draw) -> pd.DataFrame:
    """A small table: respondent ``pid``, time ``t``, a second timestamp ``t2``, a code ``code``
    unique per respondent, quasi-identifiers ``age``/``sex``, sensitive ``dx``, a float ``w`` and a
    column ``A1`` with no role (never released). With ``typed`` the
    columns keep their types (for Parquet: int, float, bool, timestamp (naive or aware; ``t2`` may be
    aware in UTC or New York time with milliseconds), text, with missing values); otherwise every
    cell is text."""
    # (the simplest draws, which a derandomized run makes first, are the ones likely to release)
    # (a tiny table, 1 to 7 rows: one draw in eight; no rows: fuzz_one. The size comes from the
    # drawn seed: drawn by hypothesis, a one_of of the two ranges made 14 of 39 fixed-seed tables
    # tiny and an integers(8, 70) half of them 8 rows, hypothesis favouring the small ends)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n = int(rng.integers(1, 8) if draw(st.sampled_from([False] * 7 + [True])) else rng.integers(8, 71))
    t = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 90 * 24, n), unit="h")
    pid = rng.integers(0, max(n // draw(st.sampled_from([2, 3])), 1), n)
    df = pd.DataFrame({
        "pid": pid,
        "t": t,
        "t2": t + pd.to_timedelta(rng.integers(0, 30, n), unit="D"),  # a second timestamp
        "code": np.char.add("c", pid.astype(str)),  # one value per respondent
        "age": rng.integers(18, 70, n),
        "sex": rng.choice(["F", "M"], n),
        "dx": rng.choice(["a", "b", "c", "d"], n),
        "w": rng.normal(size=n).round(2),
        "A1": rng.normal(size=n),
    })  # fmt: skip
    if draw(st.booleans()):  # typed columns with missing values
        df["pid"] = df["pid"].astype(draw(st.sampled_from(["int64", "Int64", "str", "float"])))
        df["age"] = df["age"].astype(draw(st.sampled_from(["int64", "Int64", "float", "str"])))
        kind = draw(st.sampled_from(["naive", "naive", "aware", "date", "text"]))
        if kind == "aware":
            df["t"] = df["t"].dt.tz_localize("UTC")
        elif kind == "date":
            df["t"] = df["t"].dt.date
        elif kind == "text":
            df["t"] = df["t"].dt.strftime("%Y-%m-%d %H:%M")
        if draw(st.booleans()):
            df["t2"] = df["t2"].dt.strftime("%Y-%m-%d")
        elif rng.random() < 0.5:  # (from the table's seed, after its columns: the drawn options stay as they were)
            # aware (UTC or New York time, across a DST change) with milliseconds: each engine's text of it is numpy's
            ms = pd.to_timedelta(rng.integers(0, 3, n) * 250, unit="ms")
            df["t2"] = (df["t2"] + pd.Timedelta(days=60) + ms).dt.tz_localize("UTC").dt.tz_convert(str(rng.choice(["UTC", "America/New_York"])))
        if draw(st.booleans()):
            df["dx"] = rng.random(n) < 0.5  # a boolean column
        for _ in range(draw(st.integers(0, 3))):
            if n:
                col = draw(st.sampled_from(["pid", "t", "age", "sex", "dx", "w"]))
                if df[col].dtype == "int64":
                    df[col] = df[col].astype("Int64")
                elif df[col].dtype == bool:
                    df[col] = df[col].astype("boolean")
                df.loc[draw(st.integers(0, n - 1)), col] = None
        return df
    df["t"] = df["t"].dt.strftime(draw(st.sampled_from(["%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S"])))
    df["t2"] = df["t2"].dt.strftime("%Y-%m-%d")
    df = df.astype(str)
    for _ in range(draw(st.integers(0, 3))):
        if n:
            col = draw(st.sampled_from(list(df.columns)))
            df.loc[draw(st.integers(0, n - 1)), col] = draw(VALUES)
    return df


FORMATS = st.sampled_from(["csv", "parquet", "csv", "parquet", "semicolon.csv", "csv.gz"])


def _write_input(df: pd.DataFrame, path: Path) -> None:
    """Parquet (typed columns kept), CSV with ',' or ';' (detected), or gzipped CSV."""
    if path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False, sep=";" if path.name.endswith("semicolon.csv") else ",")


def _cell(value: str, quote_all: bool = False) -> str:
    """One cell of a hierarchy file in the ARX format as README ("Full-domain k-anonymity") and
    :meth:`tempanon.hierarchy.Hierarchy.from_csv` define it: ``;``-separated; a value holding
    ``;``, a quote, a line break or outer spaces (which are layout around an unquoted value) is
    quoted with ``"``, a quote inside doubled. Written here, not with the product's writer, so the
    fuzz does not share its mistakes."""
    if quote_all or value != value.strip() or any(c in value for c in ';"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def _hierarchies(src: Path, hdir: Path, complete: bool, quote_all: bool = False) -> None:
    """``age`` and ``sex`` hierarchies over the values as the numpy path reads them (text), any
    drawn value quoted as the format needs (:func:`_cell`; every cell with ``quote_all``); with
    ``complete`` False one present value is left out (an error on both paths)."""
    hdir.mkdir()
    try:
        data = read_table(src, as_text=True)
    except Exception:  # an unreadable input: both paths refuse it
        data = pd.DataFrame({"age": ["20"], "sex": ["F"]})
    for col, rows in (("age", lambda v: [v, bucket(v, 10), bucket(v, 40), "*"]), ("sex", lambda v: [v, "*"])):
        vals = sorted({str(v) for v in data.get(col, pd.Series(dtype=object)).dropna()} | ({"F", "M"} if col == "sex" else {"20"}))
        if not complete and len(vals) > 1:
            vals = vals[1:]
        text = "".join(";".join(_cell(c, quote_all) for c in rows(v)) + "\n" for v in vals)
        (hdir / f"{col}.csv").write_bytes(text.encode("utf-8"))  # (bytes: a '\n' in a value is not translated)


def _args(opts: dict) -> list[str]:
    out: list[str] = []
    for k, v in opts.items():
        out += [k] if v is True else [k, str(v)]
    return out


def _run(args) -> object:
    r = runner.invoke(app, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), (args, repr(r.exception), r.output)
    assert r.exit_code in (0, 1, 2, 3, 4), (args, r.exit_code, r.output)
    assert "Traceback" not in r.output, (args, r.output)
    if r.exit_code:
        assert "error" in r.output.lower() and len(r.output.strip()) > 20, (args, r.exit_code, r.output)
    return r


def _text(df: pd.DataFrame) -> pd.DataFrame:
    return df.astype(object).where(df.notna(), "").astype(str)


def _read_release(path: Path) -> pd.DataFrame:
    """The written release as text (missing = ''); a directory of part files (Spark) read whole,
    parts in name order, rows in file order (the audit's numbering, docs/engines.md)."""
    if path.is_dir():
        parts = sorted(p for p in path.iterdir() if p.name.startswith("part-"))
        if path.suffix == ".parquet":
            return _text(pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True))
        frames = [pd.read_csv(p, dtype=str, keep_default_na=False) for p in parts if p.stat().st_size]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if path.suffix == ".parquet":
        return _text(pd.read_parquet(path))
    return pd.read_csv(path, dtype=str, keep_default_na=False)


# A typed Parquet column has the numpy path's text on every engine (docs/engines.md, "Typed columns of a
# Parquet input on every engine"): a boolean 'True'/'False', a timestamp Python's str ('2021-01-02 00:00:00+00:00';
# DuckDB wrote '... 00:00:00+00' and Spark's CSV writer ISO '2021-01-02T00:00:00.000Z' until 2026-11-26, which
# this fuzz mapped to Python's text). Compared as written, no mapping: another text is a difference.


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(list(df.columns)).reset_index(drop=True) if len(df.columns) else df


def _audit(path: Path, release: pd.DataFrame) -> pd.DataFrame:
    """The released rows indexed by input line (and the audit's respondent, when it has one)."""
    aud = pd.read_csv(path, comment="#", dtype=str, keep_default_na=False)
    assert aud["release_row"].astype(int).tolist() == list(range(1, len(release) + 1)), path
    out = release.copy()
    if "respondent" in aud.columns:
        out["__respondent"] = aud["respondent"].to_numpy()
    out.index = aud["input_line"].astype(int).to_numpy()
    assert out.index.is_unique
    return out.sort_index()


# summary keys that say how the run was done, not what it released (README "Large tables: engines")
RUN_KEYS = {"engine", "plan", "runtime_seconds", "search_seconds", "input", "output", "verification", "report", "audit",
            "row_order", "engine_path", "job", "table", "summary", "table_scans", "rollups", "checks", "nodes_checked", "checks_by_projection"}  # fmt: skip
COMMON_VERIFICATION = ("guarantee", "checked_on", "released_unchanged_declared_insensitive", "identifier_overrides",
                       "left_out", "dropped", "k", "classes", "min_class_size", "suppressed_rows", "respondents")  # fmt: skip


SCREENED = "refusing to release column(s) unchanged that look like direct identifiers"


def _same_exit(ra, rb, where) -> None:
    """The same exit status (0, or the same error class: 1 no solution, 2 bad input, 3
    verification, 4 engine). An identifier refusal on both says the same (one shared screening,
    on the engine from distinct values and counts)."""
    assert rb.exit_code == ra.exit_code, where
    if SCREENED in ra.output and SCREENED in rb.output:
        assert " ".join(ra.output.split()) == " ".join(rb.output.split()), where


def _eq(a, b) -> bool:
    """Equal, floats to 1e-9 relative (the engines sum a loss in another order: last-bit
    differences, as tests/engine/test_engine_backends.py compares ``loss``)."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_eq(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    return a == b


def _same_summary(a: dict, b: dict, where) -> None:
    for key in ("audit", "report"):  # paths (one per engine here): both name them or neither
        assert (key in a) == (key in b), (where, key)
    for key in sorted((set(a) | set(b)) - RUN_KEYS):
        assert _eq(a.get(key), b.get(key)), (where, key, a.get(key), b.get(key))
    va, vb = a.get("verification") or {}, b.get("verification") or {}
    for key in COMMON_VERIFICATION:
        if key in va and key in vb:
            assert _eq(va[key], vb[key]), (where, "verification", key, va[key], vb[key])


def _recheck(out: Path, qi: list[str], k: int, tmp: Path, extra=()) -> None:
    """``tempanon check`` on the written release (a directory of part files is joined first)."""
    if k < 2 or not out.exists():
        return
    if out.is_dir():
        joined = tmp / f"joined-{out.name}.csv"
        _read_release(out).to_csv(joined, index=False)
        out = joined
    r = _run(["check", out, "--qi", ",".join(qi), "--k", k, *extra])
    assert r.exit_code == 0, (out, r.output)


# ---- the HTML report, compared as structured content ------------------------------------------


class _ReportParser(HTMLParser):
    """A tempanon report page (:mod:`tempanon.report.html`: title, subtitle, sections of blocks) as
    structured content: ``{"_page": [...], section id: [blocks]}``, a block one of ``("title", text)``,
    ``("h3", text)``, ``("p", css class, text)``, ``("kv", [(key, value), ...])``,
    ``("table", caption, [[cell, ...], ...])`` (header row first) and ``("figure", svg, caption)``
    (the inline SVG as written)."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.out, self.key = {"_page": []}, "_page"
        self.text: list[str] | None = None
        self.kv: list | None = None
        self.table: list | None = None
        self.caption = None
        self.p_class = ""
        self.svgs = iter(re.findall(r"<svg.*?</svg>", html, flags=re.S))
        self.in_svg = False
        self.fig_svg = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.in_svg:
            return
        if tag == "svg":
            self.in_svg, self.fig_svg = True, next(self.svgs)
        elif tag == "section":
            self.key = a["id"]
            assert self.key not in self.out, self.key
            self.out[self.key] = []
        elif tag in ("h1", "h2", "h3", "p", "dt", "dd", "th", "td", "caption", "figcaption", "title"):
            self.text, self.p_class = [], a.get("class", "")
        elif tag == "dl":
            self.kv = []
        elif tag == "table":
            self.table, self.caption = [], None
        elif tag == "tr":
            self.table.append([])

    def handle_endtag(self, tag):
        if self.in_svg:
            self.in_svg = tag != "svg"
            return
        text = "".join(self.text or [])  # as written (the page puts no layout spaces inside an element)
        blocks = self.out[self.key]
        if tag in ("h1", "h2", "title"):
            blocks.append(("title", text))
        elif tag == "h3":
            blocks.append(("h3", text))
        elif tag == "p":
            blocks.append(("p", self.p_class, text))
        elif tag == "dt":
            self.kv.append([text])
        elif tag == "dd":
            self.kv[-1].append(text)
        elif tag == "dl":
            blocks.append(("kv", [tuple(x) for x in self.kv]))
        elif tag in ("th", "td"):
            self.table[-1].append(text)
        elif tag == "caption":
            self.caption = text
        elif tag == "table":
            blocks.append(("table", self.caption, self.table))
            self.table = None
        elif tag == "figcaption":
            blocks.append(("figure", self.fig_svg, text))
        if tag in ("h1", "h2", "h3", "p", "dt", "dd", "th", "td", "caption", "figcaption", "title"):
            self.text = None

    def handle_data(self, data):
        if not self.in_svg and self.text is not None:
            self.text.append(data)


def report_content(html: str) -> dict[str, list]:
    return _ReportParser(html).out


NUMBER = re.compile(r"[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?")


def _same_text(a: str, b: str) -> bool:
    """Equal text, except that a number with a decimal point may differ by one unit in its last
    printed digit: the report prints floats to 4 significant digits
    (:func:`tempanon.report.html._fmt`) and an SVG coordinate to a few decimals, and a loss summed
    in another order (last bits) can round the other way there. Integers (counts) are exact."""
    if a == b:
        return True
    pa, pb = NUMBER.split(a), NUMBER.split(b)
    na, nb = NUMBER.findall(a), NUMBER.findall(b)
    if pa != pb or len(na) != len(nb):
        return False
    for x, y in zip(na, nb):
        if x == y:
            continue
        if "." not in x or "." not in y:  # an integer (a count) is exact
            return False
        try:
            dx, dy = Decimal(x.replace(",", "")), Decimal(y.replace(",", ""))
        except InvalidOperation:
            return False
        if abs(dx - dy) > Decimal(1).scaleb(max(dx.as_tuple().exponent, dy.as_tuple().exponent)):
            return False
    return True


# the guarantee's status line names the checker, which differs by design (the numpy path re-checks
# the released table with tempanon.verify, an engine the class counts of the written release)
CHECKER = re.compile(r"by the independent checker \(.*\)\.$")


def report_differences(html_a: str, html_b: str, *, command: str) -> list:
    """Where the engine's report (``html_b``) says something else than numpy's (``html_a``): every
    section, heading, text, key/value, table cell and figure (inline SVG), numbers to the last
    printed digit (``kanon``'s examples of released values too: in the hierarchy level's order on
    every path since session 15). Intended difference: the checker named in the guarantee's status
    line."""
    a, b = report_content(html_a), report_content(html_b)
    if list(a) != list(b):
        return [("sections", list(a), list(b))]
    diffs = []
    for key in a:
        if len(a[key]) != len(b[key]):
            diffs.append((key, "blocks", [x[:2] for x in a[key]], [x[:2] for x in b[key]]))
            continue
        for x, y in zip(a[key], b[key]):
            if x[0] != y[0]:
                diffs.append((key, x[:2], y[:2]))
            elif x[0] == "figure":
                if not _same_text(x[1], y[1]) or x[2] != y[2]:
                    diffs.append((key, "figure", x[2], y[2]))
            elif x[0] == "p" and key == "guarantee" and x[1] in ("ok", "bad"):
                if x[1] != y[1] or CHECKER.sub("", x[2]) != CHECKER.sub("", y[2]):
                    diffs.append((key, x, y))
            elif x[0] == "kv":
                if len(x[1]) != len(y[1]) or not all(len(p) == len(q) and all(map(_same_text, p, q)) for p, q in zip(x[1], y[1])):
                    diffs.append((key, x, y))
            elif x[0] == "table":
                ra, rb = x[2], y[2]
                if x[1] != y[1] or len(ra) != len(rb):
                    diffs.append((key, x, y))
                    continue
                for r, s in zip(ra, rb):
                    if len(r) != len(s):
                        diffs.append((key, r, s))
                        continue
                    if not all(map(_same_text, r, s)):
                        diffs.append((key, r, s))
            elif not all(map(_same_text, x[1:], y[1:])):
                diffs.append((key, x, y))
    return diffs


UTILITY_HEADER = ["attribute", "level", "generalized to", "loss"]


def _level_order(hdir: Path, attribute: str, level: int) -> list[str]:
    """The labels of a hierarchy level in the order an engine's report lists them
    (:meth:`tempanon.hierarchy.Hierarchy.dimension`: first appearance down the file), read here
    with the csv module, not through the product (the fuzz's writer :func:`_cell` quotes every
    value with outer spaces, so no cell needs stripping)."""
    import csv
    import io

    rows = [r for r in csv.reader(io.StringIO((hdir / f"{attribute}.csv").read_bytes().decode("utf-8-sig")), delimiter=";")
            if any(c.strip() for c in r)]  # fmt: skip
    return list(dict.fromkeys([*(r[level] for r in rows), ""]))  # (the missing category last: Hierarchy.with_missing)


def examples_by_rule(html: str, release: pd.DataFrame, hdir: Path) -> list:
    """Where ``kanon``'s utility table (the "generalized to" examples of released values) is not
    what the product's rule gives on this path's own written release (:mod:`tempanon.report.kanon`):
    the distinct released values of the attribute (missing as ''), in the hierarchy level's order (a
    value not in the level first; on every path since session 15: numpy's followed the release's
    shuffled rows), the first four shown and ', ...' when there are more. Compared exactly on each
    side (and the two reports' rows are compared with each other as well)."""
    table = next((b for b in report_content(html).get("utility", []) if b[0] == "table" and b[2] and b[2][0] == UTILITY_HEADER), None)
    if table is None:
        return [("utility", "no table")]
    diffs = []
    for attribute, level, shown, *_ in table[2][1:]:
        values = list(dict.fromkeys(release[attribute].tolist())) if attribute in release.columns else []
        order = {v: i for i, v in enumerate(_level_order(hdir, attribute, int(level)))}
        values = sorted(values, key=lambda v: order.get(v, -1))
        want = ", ".join(values[:4]) + (", ..." if len(values) > 4 else "")
        if len(values) > 4 and currently_in_test_context():
            event("kanon report: a truncated examples row compared by the rule")
        if shown != want:
            diffs.append(("utility", attribute, "examples", shown, want))
    return diffs


def _compare(cmd: str, tmp: Path, engine: str, base: list, outs: dict, engine_opts: list, recheck, refused: str | None = None) -> None:
    """Run ``cmd base`` on numpy and on ``engine`` (``outs``: option -> file name; each engine's in
    its own folder, the audits in ``steward/``) and compare what they did and wrote. ``refused``:
    the engine refuses these options by design (exit 2 with this in its message)."""
    got = {}
    for eng in ("numpy", engine):
        paths = {opt: (tmp / "steward" / f"{eng}-{name}" if opt == "--audit" else tmp / eng / name) for opt, name in outs.items()}
        extra = engine_opts if eng != "numpy" else []
        r = _run([cmd, *base, *[x for opt, p in paths.items() for x in (opt, p)], "--engine", eng, "-q", *extra])
        got[eng] = (r, paths)
    (ra, pa), (rb, pb) = got["numpy"], got[engine]
    where = (cmd, base, outs, engine_opts, ra.output, rb.output)
    event(f"{cmd}: exit {ra.exit_code} / {rb.exit_code}" + (os.environ.get("TEMPANON_FUZZ_EVENTS") and ra.output.strip()[:int(os.environ.get("TEMPANON_FUZZ_EVENTS_WIDTH", "90"))] or ""))
    if refused is not None and rb.exit_code == 2 and refused in rb.output:
        return
    _same_exit(ra, rb, where)
    if ra.exit_code:
        return
    rel_a, rel_b = _read_release(pa["--out"]), _read_release(pb["--out"])
    assert list(rel_b.columns) == list(rel_a.columns), where
    pd.testing.assert_frame_equal(_sorted(rel_b), _sorted(rel_a), obj=str(where))
    sa, sb = json.loads(pa["--summary"].read_text()), json.loads(pb["--summary"].read_text())
    _same_summary(sa, sb, where)
    if "--audit" in pa:
        pd.testing.assert_frame_equal(_audit(pb["--audit"], rel_b), _audit(pa["--audit"], rel_a), obj=str(where))
    if "--report" in pa:
        assert pa["--report"].is_file() and pb["--report"].is_file(), where
        html_a, html_b = pa["--report"].read_text(encoding="utf-8"), pb["--report"].read_text(encoding="utf-8")
        diffs = report_differences(html_a, html_b, command=cmd)
        if cmd == "kanon":  # the examples of released values, each report against its own release and the rule
            hdir = Path(base[base.index("--hierarchies") + 1])
            diffs += examples_by_rule(html_a, rel_a, hdir) + examples_by_rule(html_b, rel_b, hdir)
        assert not diffs, (where, diffs[:6])
    for _, paths in got.values():
        recheck(paths, json.loads(paths["--summary"].read_text()))


KANON = st.fixed_dictionaries(
    {"--k": st.sampled_from([2, 2, 2, 3, 3, 5, 1]), "--max-suppression": st.sampled_from([0.2, 0.0, 0.1, 0.2, 0.2, 1.5])},
    optional={"--uid": st.just("pid"), "--keep": st.sampled_from(["dx", "w", "pid", "t", "nope", "dx,w", "code", "t2", "t,t2"]),
              "--allow-identifier": st.sampled_from(["code", "t2,code", "w"]),
              "--l": st.sampled_from([2, 3]), "--drop": st.just("A1"), "--algorithm": st.sampled_from(["exhaustive", "exhaustive", "super-roots", "nope"]),
              "--criterion": st.sampled_from(["height", "discernibility"])},
)  # fmt: skip
TIMESTAMPED = st.fixed_dictionaries(
    {"--k": st.sampled_from([2, 2, 2, 2, 3, 1]),
     "--granularities": st.sampled_from(["month,year", "week,month", "month,year", "quarter,year", "day", "bogus",
                                         "day,week,month,quarter,year", "hour,day,2weeks", "business-day,month", "part-of-day,day,month"]),
     "--max-suppression": st.sampled_from([0.3, 0.0, 0.1, 0.3, 0.5])},
    optional={"--uid": st.just("pid"), "--qi": st.sampled_from(["sex", "sex", "sex", "sex,age", "t", "nope"]),
              "--keep": st.sampled_from(["dx", "w", "w", "w", "age", "t2", "code", "dx,t2"]), "--sensitive": st.just("dx"),
              "--allow-identifier": st.sampled_from(["t2", "code,t2", "w"]),
              "--metric": st.sampled_from(["gen_m", "gen_s"]),
              "--timezone": st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Europe/Berlin", "Mars/Olympus"]),
              "--drop": st.sampled_from(["A1", "code"]), "--data-granularity": st.sampled_from(["day", "hour", "minute", "day", "month"]),
              "--country": st.sampled_from(["US", "US", "US", "XX"]),
              "--day-parts": st.sampled_from(["night=0-6,day=6-24", "am=0-12,pm=12-24", "night=0-6,day=6-24", "am=0-12,pm=12-24", "bad"])},
)  # fmt: skip


def _outputs(data, engine: str, cmd: str) -> dict:  # noqa: ARG001  (every engine writes every output)
    outs = {"--out": "o" + data.draw(st.sampled_from([".csv", ".parquet"])), "--summary": "s.json"}
    if data.draw(st.booleans()):
        outs["--audit"] = "audit.csv"
    if REPORT_ALWAYS or data.draw(st.booleans()):
        outs["--report"] = "r.html"
    return outs


# the name of the column with no role (``A1``) in the header: mostly itself; odd names (none, spaces,
# another column's name in other case, non-ASCII) that an engine could read otherwise than pandas
HEADER = st.sampled_from(["A1"] * 14 + ["", " A1 ", "AGE", "Sex", "é", "a b"])
REFUSED_HEADERS = {"", "AGE", "Sex"}  # refused on every path (tempanon.data.io.check_column_names)

# Most examples are drawn *valid* (VALID True): the options that are refused whatever the data (k = 1,
# a suppression of 1.5, an unknown column, algorithm, time zone, granularity, country or day part,
# a refused header, an incomplete hierarchy, a column kept with another role, l-diversity with
# respondents) are replaced by valid ones (:func:`_valid`), and a kept column that may look like an
# identifier is allowed, so that the run releases unless the data say otherwise and the two
# releases, summaries and reports are compared; one in five draws every option from the full pools
# (the refusals on purpose). Before (session 15), ~70% of the default examples compared two
# refusals (e.g. 3 of the 13 timestamped ones an unknown time zone).
VALID = st.sampled_from([True, True, True, True, False])
# the columns a release may carry unchanged that the identifier screening may flag (near-unique,
# a second timestamp): allowed in a valid draw
SCREENED_COLUMNS = {"pid", "code", "w", "t", "t2"}


def _valid(command: str, opts: dict, header: str) -> dict:
    """``opts`` with every option that is refused whatever the data replaced by a valid one."""
    o = dict(opts)
    if "--k" in o and int(o["--k"]) < 2:
        o["--k"] = 2
    if "--max-suppression" in o and float(o["--max-suppression"]) >= 1:
        o["--max-suppression"] = 0.2
    if o.get("--algorithm") == "nope":
        o["--algorithm"] = "exhaustive"
    if o.get("--drop") == "A1":  # the column with no role under the name drawn for it
        o["--drop"] = header.strip()
    if command == "kanon" and "--l" in o:
        o.pop("--uid", None)  # l-diversity counts rows: refused with respondents
        o["--max-suppression"] = 0.0  # with suppression the engines refuse it (by design)
    if command == "timestamped":
        o["--granularities"] = o["--granularities"].replace("bogus", "week,month")
        if o.get("--timezone") == "Mars/Olympus":
            o["--timezone"] = "Europe/Berlin"
        if o.get("--qi") in ("nope", "t"):  # (the time column is generalized by granularities, not a --qi)
            o["--qi"] = "sex"
        if "year" not in o["--granularities"] and "2weeks" not in o["--granularities"]:
            o["--granularities"] += ",year"  # a coarse level: a release unless the data say otherwise
        if o.get("--country") == "XX":
            o["--country"] = "US"
        if o.get("--day-parts") == "bad":
            o["--day-parts"] = "night=0-6,day=6-24"
    if "--keep" in o:
        roles = {*o.get("--qi", "age,sex").split(","), "t", "pid" if "--uid" in o else "", "dx" if "--sensitive" in o else "", o.get("--drop", "")}
        keep = [c for c in o["--keep"].split(",") if c != "nope" and c not in roles]
        if keep:
            o["--keep"] = ",".join(keep)
            allow = {*o.get("--allow-identifier", "").split(","), *(SCREENED_COLUMNS & set(keep))} - {""}
            if allow:
                o["--allow-identifier"] = ",".join(sorted(allow))
        else:
            del o["--keep"]
    return o


def fuzz_one(tmp: Path, df: pd.DataFrame, engine: str, command: str, fmt: str, data) -> None:
    valid = data.draw(VALID)
    header = data.draw(HEADER)
    if valid and header in REFUSED_HEADERS:
        header = "A1"
    df = df.rename(columns={"A1": header})
    if not valid and data.draw(st.sampled_from([False, False, False, True])):
        df = df.iloc[:0]  # a table with a header and no rows (refused on every path)
    src = tmp / f"in.{fmt}"
    _write_input(df, src)
    hdir = tmp / "h"
    complete = data.draw(st.sampled_from([True, True, True, False])) or valid
    _hierarchies(src, hdir, complete=complete, quote_all=data.draw(st.sampled_from([False, False, False, True])))
    # (Spark: the heap of this process's session is fixed when it starts; another limit is refused, documented)
    engine_opts = ["--memory-limit", "256MB"] if engine == "duckdb" and data.draw(st.booleans()) else []
    if command == "kanon":
        opts = data.draw(KANON)
        if valid:
            opts = _valid("kanon", opts, header)
        if "--l" in opts:
            opts["--sensitive"] = "dx"
        k = int(opts["--k"])

        def recheck(paths, summ):
            _recheck(paths["--out"], ["age", "sex"], k, tmp)

        # l-diversity with suppression is not monotone: the engines refuse it (src/tempanon/kanon/api.py,
        # README "Large tables: engines"); without suppression it is the same release
        refused = "is released by the numpy engine only" if "--l" in opts and float(opts["--max-suppression"]) > 0 else None
        _compare("kanon", tmp, engine, [src, "--qi", "age,sex", "--hierarchies", hdir, *_args(opts)], _outputs(data, engine, "kanon"),
                 engine_opts, recheck, refused)  # fmt: skip
    elif command == "timestamped":
        opts = data.draw(TIMESTAMPED)
        if data.draw(st.booleans()):  # joint search: time and the other quasi-identifiers' hierarchies
            opts["--qi"] = data.draw(st.sampled_from(["sex", "age,sex"]))
            opts["--hierarchies"] = hdir
            if data.draw(st.booleans()):
                opts["--metric"] = data.draw(st.sampled_from(["height", "loss", "discernibility"]))
        if valid:
            opts = _valid("timestamped", opts, header)
        k = int(opts["--k"])

        def recheck(paths, summ):
            qi = [q for q in opts.get("--qi", "").split(",") if q and q != "t"] + ["t"]
            extra = ["--uid", "pid", "--audit", paths["--audit"]] if "--uid" in opts and "--audit" in paths else []
            _recheck(paths["--out"], qi, k, tmp, extra)

        _compare("timestamped", tmp, engine, [src, "--time", "t", *_args(opts)], _outputs(data, engine, "timestamped"), engine_opts,
                 recheck)  # fmt: skip
    else:  # a job file with an engine
        _job(tmp, src, engine, data, valid)


def _job(tmp: Path, src: Path, engine: str, data, valid: bool = False) -> None:
    model = data.draw(st.sampled_from(["kanon", "timestamped"]))
    k = data.draw(st.sampled_from([2, 3]))
    sup = data.draw(st.sampled_from([0.0, 0.2]))
    uid = data.draw(st.sampled_from(["", 'uid = "pid"']))
    keep = data.draw(st.sampled_from(["", 'keep = ["dx"]', 'keep = ["w"]']))
    if valid and "w" in keep:  # near-unique: allowed in a valid draw (refused in the others)
        keep += '\nallow_identifier = ["w"]'
    if valid and model == "timestamped":  # (respondents' sets of (sex, year): a few need suppressing)
        sup = 0.3
    report = REPORT_ALWAYS or data.draw(st.booleans())
    if model == "kanon":
        cols, extra = 'quasi_identifiers = ["age", "sex"]', ""
        hier = '[hierarchies]\nage = "h/age.csv"\nsex = "h/sex.csv"\n'
    else:
        cols, extra = 'quasi_identifiers = ["sex"]\ntime = "t"', 'granularities = ["week", "month", "year"]\n'
        hier = ""
    got = {}
    for eng in ("numpy", engine):
        job = tmp / f"{eng}.toml"
        job.write_text(
            f'[input]\npath = "{src.name}"\n[columns]\n{cols}\n{uid}\n{keep}\n{hier}'
            f'[model]\nname = "{model}"\nk = {k}\nmax_suppression = {sup}\nengine = "{eng}"\n{extra}'
            f'[output]\ntable = "{eng}/o.csv"\nsummary = "{eng}/s.json"\n' + (f'report = "{eng}/r.html"\n' if report else "")
        )  # fmt: skip
        got[eng] = _run(["run", job, "-q"])
    ra, rb = got["numpy"], got[engine]
    where = ("run", model, k, sup, uid, keep, ra.output, rb.output)
    event(f"run {model}: exit {ra.exit_code} / {rb.exit_code}" + (os.environ.get("TEMPANON_FUZZ_EVENTS") and ra.output.strip()[:int(os.environ.get("TEMPANON_FUZZ_EVENTS_WIDTH", "90"))] or ""))
    _same_exit(ra, rb, where)
    if ra.exit_code:
        return
    rel_a, rel_b = _read_release(tmp / "numpy" / "o.csv"), _read_release(tmp / engine / "o.csv")
    assert list(rel_b.columns) == list(rel_a.columns), where
    pd.testing.assert_frame_equal(_sorted(rel_b), _sorted(rel_a), obj=str(where))
    _same_summary(json.loads((tmp / "numpy" / "s.json").read_text()), json.loads((tmp / engine / "s.json").read_text()), where)
    if report:
        html_a, html_b = (tmp / "numpy" / "r.html").read_text(encoding="utf-8"), (tmp / engine / "r.html").read_text(encoding="utf-8")
        diffs = report_differences(html_a, html_b, command=model)
        if model == "kanon":  # (the job runner releases in memory on every engine: kanon_report)
            diffs += examples_by_rule(html_a, rel_a, tmp / "h") + examples_by_rule(html_b, rel_b, tmp / "h")
        assert not diffs, (where, diffs[:6])
    _recheck(tmp / engine / "o.csv", ["age", "sex"] if model == "kanon" else ["sex", "t"], k, tmp)


# the default run: a fixed seed (reproducible; with VALID most examples release, some are refused on
# purpose: see the module's docstring); TEMPANON_FUZZ_EXAMPLES=N draws N random examples per command,
# from TEMPANON_FUZZ_SEED when it is given (reproducible: the same examples, no example database),
# else from a random seed (session 23: the seed was ignored with TEMPANON_FUZZ_EXAMPLES, so a run
# "at seed 25" could not be repeated)
SEED = int(os.environ["TEMPANON_FUZZ_SEED"]) if os.environ.get("TEMPANON_FUZZ_SEED") else (None if RANDOM else 4)
DATABASE = settings.default.database if SEED is None else None


@pytest.mark.parametrize("command", ["kanon", "timestamped", "run"])
@settings(max_examples=N_DUCKDB, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES,
          database=DATABASE)  # fmt: skip
@seed(SEED)
@given(df=tables(), fmt=FORMATS, data=st.data())
def test_fuzz_duckdb_against_numpy(tmp_path_factory, command, df, fmt, data):
    fuzz_one(tmp_path_factory.mktemp("fuzz"), df, "duckdb", command, fmt, data)


@pytest.mark.spark
@pytest.mark.parametrize("command", ["kanon", "timestamped", "run"])
@settings(max_examples=N_SPARK, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES,
          database=DATABASE)  # fmt: skip
@seed(SEED)
@given(df=tables(), fmt=FORMATS, data=st.data())
def test_fuzz_spark_against_numpy(spark_session, tmp_path_factory, command, df, fmt, data):
    fuzz_one(tmp_path_factory.mktemp("fuzz"), df, "spark", command, fmt, data)


# ---- regressions found by this fuzz ------------------------------------------------------------


def _both(tmp: Path, cmd: str, *args, engine: str = "duckdb") -> dict:
    """``cmd`` on numpy and on ``engine``; returns {engine: (result, summary or None)}."""
    got = {}
    for eng in ("numpy", engine):
        r = _run([cmd, *args, "--out", tmp / eng / "o.csv", "--summary", tmp / eng / "s.json", "--engine", eng, "-q"])
        got[eng] = (r, json.loads((tmp / eng / "s.json").read_text()) if r.exit_code == 0 else None)
    return got


def test_time_zone_aware_parquet_timestamps_read_as_on_numpy(tmp_path):
    """A time-zone-aware Parquet time column: the engine read it in its session's zone (DuckDB:
    'Etc/UTC') and said 'the timestamps carry time zone Etc/UTC', a zone the file never named,
    where numpy (the values' text, with offsets) says 'carry UTC offsets'; now both the same."""
    n = 40
    df = pd.DataFrame({"pid": np.arange(n) % 20, "sex": ["F", "M"] * (n // 2),
                       "t": pd.Timestamp("2021-01-01", tz="UTC") + pd.to_timedelta(np.arange(n) * 7, unit="h")})  # fmt: skip
    src = tmp_path / "in.parquet"
    df.to_parquet(src, index=False)
    got = _both(tmp_path, "timestamped", src, "--time", "t", "--uid", "pid", "--qi", "sex", "--k", "2",
                "--granularities", "week,month")  # fmt: skip
    (ra, sa), (rb, sb) = got["numpy"], got["duckdb"]
    assert ra.exit_code == rb.exit_code == 0, (ra.output, rb.output)
    assert sb["messages"] == sa["messages"] and any("carry UTC offsets" in m for m in sb["messages"])
    assert sb["timestamps"] == sa["timestamps"]
    _same_summary(sa, sb, "tz-aware")


def test_identifier_refused_before_the_search_on_numpy_as_on_the_engine(tmp_path):
    """timestamped with a kept identifier-looking column and no granularity that works: numpy ran
    the search first and said 'no granularity ...' (exit 1), the engine screened first and refused
    the column (exit 2); numpy now screens the columns released unchanged whatever the search
    finds before the search too (as kanon does), so both refuse with the same message."""
    n = 30
    df = pd.DataFrame({"pid": np.arange(n), "sex": ["F", "M"] * (n // 2), "code": [f"c{i}" for i in range(n)],
                       "t": (pd.Timestamp("2021-01-01") + pd.to_timedelta(np.arange(n) * 13, unit="h")).strftime("%Y-%m-%d %H:%M")})  # fmt: skip
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    got = _both(tmp_path, "timestamped", src, "--time", "t", "--uid", "pid", "--qi", "sex", "--k", "5",
                "--granularities", "hour", "--keep", "code")  # fmt: skip
    (ra, _), (rb, _) = got["numpy"], got["duckdb"]
    assert ra.exit_code == rb.exit_code == 2, (ra.output, rb.output)
    assert SCREENED in ra.output and " ".join(ra.output.split()) == " ".join(rb.output.split())


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_engine_text_of_an_aware_timestamp_is_utc_on_every_machine(tmp_path, engine):
    """A kept time-zone-aware Parquet column in a CSV release written by an engine was in the
    machine's local zone (TZ=America/New_York: DuckDB '2021-01-01 19:00:00-05', Spark
    '2021-01-01T19:00:00.000-05:00' for 2021-01-02 00:00 UTC), so the release (and the text a
    hierarchy must hold for such a quasi-identifier) changed with the machine; the engines'
    sessions are now in UTC, and both write numpy's text '2021-01-02 00:00:00+00:00' (before,
    DuckDB's CAST '2021-01-02 00:00:00+00', Spark's CSV writer '2021-01-02T00:00:00.000Z',
    docs/engines.md), whatever the machine's zone."""
    import subprocess
    import sys

    n = 24
    pd.DataFrame({"sex": ["F", "M"] * (n // 2), "age": ["30"] * n,
                  "t": pd.Timestamp("2021-01-02", tz="UTC") + pd.to_timedelta(np.arange(n) % 2, unit="D")}).to_parquet(tmp_path / "in.parquet")  # fmt: skip
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    (tmp_path / "h" / "age.csv").write_text("30;*\n")
    out = tmp_path / "r" / "o.csv"
    env = {**os.environ, "TZ": "America/New_York", "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    r = subprocess.run([sys.executable, "-m", "tempanon.cli", "kanon", str(tmp_path / "in.parquet"), "--qi", "age,sex",
                        "--hierarchies", str(tmp_path / "h"), "--k", "2", "--keep", "t", "--out", str(out),
                        "--engine", engine, "-q"], env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    texts = set(_read_release(out)["t"])
    assert texts == {"2021-01-02 00:00:00+00:00", "2021-01-03 00:00:00+00:00"}


def test_report_comparison_sees_what_a_steward_reads(tmp_path):
    """The fuzz's report comparison (:func:`report_differences`) is not blind: on one numpy
    report, a changed number in a table, a key/value, a figure or a caption, a missing row, a
    verdict turned to 'NOT verified', examples in another order are differences; the checker's name
    is not, nor a float rounded the other way in its last printed digit."""
    n = 40
    df = pd.DataFrame({"age": (np.arange(n) * 7) % 50 + 20, "sex": ["F", "M"] * (n // 2), "pid": np.arange(n) // 2})
    df.to_csv(tmp_path / "in.csv", index=False)
    _hierarchies(tmp_path / "in.csv", tmp_path / "h", complete=True)
    rep = tmp_path / "r.html"
    r = _run(["kanon", tmp_path / "in.csv", "--qi", "age,sex", "--hierarchies", tmp_path / "h", "--k", "3", "--uid", "pid",
              "--max-suppression", "0.1", "--out", tmp_path / "o.csv", "--report", rep, "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    html = rep.read_text(encoding="utf-8")
    assert report_differences(html, html, command="kanon") == []
    content = report_content(html)
    assert list(content) == ["_page", "inputs", "guarantee", "verification", "risk", "utility", "lattice"]
    risk = next(b for b in content["risk"] if b[0] == "table")[2]
    mean = next(row for row in risk if row[0] == "prosecutor risk, mean")[2]  # e.g. '0.1915'
    loss = next(b for b in content["utility"] if b[0] == "kv")[1][1][1]  # normalized loss, e.g. '0.1505'
    assert "." in mean and "." in loss, (mean, loss)
    examples = next(b for b in content["utility"] if b[0] == "table")[2][2][2]  # sex: 'F, M'
    assert examples == "F, M", examples

    def changed(old, new, count=1):
        assert html.count(old) >= count, old
        return report_differences(html, html.replace(old, new, count), command="kanon")

    up = str(Decimal(mean) + Decimal(1).scaleb(Decimal(mean).as_tuple().exponent))  # one unit in the last digit
    assert changed(f"<td class=\"num\">{mean}</td>", f"<td class=\"num\">{up}</td>") == []
    two = str(Decimal(mean) + 2 * Decimal(1).scaleb(Decimal(mean).as_tuple().exponent))
    assert changed(f"<td class=\"num\">{mean}</td>", f"<td class=\"num\">{two}</td>")
    assert changed(f"<dd>{loss}</dd>", f"<dd>{float(loss) * 2:.4g}</dd>")
    assert changed("<td>F, M</td>", "<td>M, F</td>")  # the hierarchy's order on every path: compared exactly
    assert changed("<td>F, M</td>", "<td>F, *</td>")
    assert changed("(tempanon.verify)", "(the duckdb engine's class counts of the written release)") == []
    assert changed("verified on the released table", "NOT verified on the released table")
    assert changed('class="ok"', 'class="bad"')
    assert changed("<td>suppressed rows</td>", "<td>suppressed tuples</td>")
    assert changed("</tr></tbody>", "</tr><tr><td>x</td></tr></tbody>")
    svg = re.search(r'<path d="M (\d+\.\d+) ', html).group(1)  # a coordinate in a figure
    assert changed(f'<path d="M {svg} ', f'<path d="M {float(svg) + 1:.6f} ')
    level = re.search(r'<td>selected</td><td class="num">(\d+)</td>', html).group(1)  # a level (an integer) is exact
    assert changed(f'<td>selected</td><td class="num">{level}</td>', f'<td>selected</td><td class="num">{int(level) + 1}</td>')
    assert changed("released equivalence classes", "released classes")
    assert report_differences(html, html.replace('<section id="lattice">', '<section id="lattice2">'), command="kanon")


def test_truncated_examples_are_compared_by_the_rule(tmp_path):
    """kanon's utility table cut off with ', ...' (more than four released values) is compared too:
    each report's examples against its own release by the product's rule
    (:func:`examples_by_rule`); a changed example in a truncated row, which
    :func:`report_differences` lets pass (the two reports show different values by design), is
    caught on either side."""
    n = 40
    df = pd.DataFrame({"age": 20 + np.arange(n) // 2, "sex": ["F", "M"] * (n // 2), "pid": np.arange(n)})  # 20 ages, each twice
    df.to_csv(tmp_path / "in.csv", index=False)
    _hierarchies(tmp_path / "in.csv", tmp_path / "h", complete=True)
    html, rel = {}, {}
    for eng in ("numpy", "duckdb"):
        r = _run(["kanon", tmp_path / "in.csv", "--qi", "age,sex", "--hierarchies", tmp_path / "h", "--k", "2", "--criterion", "height",
                  "--out", tmp_path / eng / "o.csv", "--report", tmp_path / eng / "r.html", "--engine", eng, "-q"])  # fmt: skip
        assert r.exit_code == 0, r.output
        html[eng], rel[eng] = (tmp_path / eng / "r.html").read_text(encoding="utf-8"), _read_release(tmp_path / eng / "o.csv")
    rows = {eng: next(b for b in report_content(html[eng])["utility"] if b[0] == "table")[2] for eng in html}
    shown = {eng: rows[eng][1][2] for eng in rows}  # age at level 0: 20 values, four shown
    assert rows["numpy"][1][:2] == ["age", "0"] and all(x.endswith(", ...") for x in shown.values()), shown
    assert report_differences(html["numpy"], html["duckdb"], command="kanon") == []
    assert examples_by_rule(html["numpy"], rel["numpy"], tmp_path / "h") == []
    assert examples_by_rule(html["duckdb"], rel["duckdb"], tmp_path / "h") == []
    assert shown["duckdb"] == shown["numpy"] == "20, 21, 22, 23, ..."  # the hierarchy's order (its rows sorted as text)
    for eng in html:
        first = shown[eng].split(", ")
        changed = ", ".join([*first[:2], "39", *first[3:]])  # another released value in the third place
        bad = html[eng].replace(f"<td>{shown[eng]}</td>", f"<td>{changed}</td>", 1)
        assert bad != html[eng]
        assert report_differences(html["numpy"], bad, command="kanon")  # the reports' rows compared exactly
        assert examples_by_rule(bad, rel[eng], tmp_path / "h"), eng
    # the examples do not follow the release's (secretly shuffled) row order: read backwards, the same
    assert examples_by_rule(html["numpy"], rel["numpy"].iloc[::-1], tmp_path / "h") == []


@pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("name", ["AGE", "", " age"])
def test_column_names_an_engine_would_rename_are_refused_on_every_path(tmp_path, request, engine, fmt, name):
    """A header with a column ``AGE`` beside ``age``, a column with no name, or (Parquet) `` age``
    beside ``age``: numpy read them as pandas does ('AGE', 'Unnamed: 3' in a CSV, '' in Parquet,
    ' age' unstripped) while DuckDB renamed them ('AGE_1', 'column3'/'C3', and took one of the two
    'age' silently) and Spark failed with an engine error (exit 4) or named the column '_c3', so
    the report's roles, the summary's left-out columns, or the released column itself differed. Now
    every path refuses such a header with the same message (exit 2); found by this fuzz's report
    comparison."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    if fmt == "csv" and name == " age":  # a CSV header's names are stripped and refused as duplicates already
        name = "Age"
    n = 24
    df = pd.DataFrame({"pid": np.arange(n), "age": [str(30 + i % 2) for i in range(n)], "sex": ["F", "M"] * (n // 2), "x": ["1"] * n})
    df.columns = ["pid", "age", "sex", name]
    src = tmp_path / f"in.{fmt}"
    _write_input(df, src)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "age.csv").write_text("30;*\n31;*\n")
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    got = {}
    for eng in ("numpy", engine):
        got[eng] = _run(["kanon", src, "--qi", "age,sex", "--hierarchies", tmp_path / "h", "--k", "2", "--out", tmp_path / eng / "o.csv",
                         "--report", tmp_path / eng / "r.html", "--engine", eng, "-q"])  # fmt: skip
    ra, rb = got["numpy"], got[engine]
    assert ra.exit_code == rb.exit_code == 2, (ra.output, rb.output)
    assert " ".join(ra.output.split()) == " ".join(rb.output.split())
    assert "every column needs a name of its own" in " ".join(ra.output.split())
    assert ("column 4 has no name" if not name else "differ only in case" if name != " age" else "duplicate column name(s) 'age' (columns 2 and 4)") in ra.output


def test_parquet_column_names_are_stripped_on_numpy_as_on_the_engines(tmp_path):
    """A Parquet column named `` dx `` kept by ``--keep dx``: the engines strip the names of a
    Parquet file as of a CSV header, numpy kept the spaces and refused 'dx' as unknown (exit 2
    where DuckDB released the column); now numpy strips them too and both release the same."""
    n = 24
    df = pd.DataFrame({"age": [str(30 + i % 2) for i in range(n)], "sex": ["F", "M"] * (n // 2), " dx ": ["a", "b", "c"] * (n // 3)})
    df.to_parquet(tmp_path / "in.parquet", index=False)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "age.csv").write_text("30;*\n31;*\n")
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    got = {}
    for eng in ("numpy", "duckdb"):
        got[eng] = _run(["kanon", tmp_path / "in.parquet", "--qi", "age,sex", "--hierarchies", tmp_path / "h", "--k", "2", "--keep", "dx",
                         "--out", tmp_path / eng / "o.csv", "--report", tmp_path / eng / "r.html", "--engine", eng, "-q"])  # fmt: skip
        assert got[eng].exit_code == 0, (eng, got[eng].output)
    rel_a, rel_b = _read_release(tmp_path / "numpy" / "o.csv"), _read_release(tmp_path / "duckdb" / "o.csv")
    assert list(rel_a.columns) == list(rel_b.columns) == ["age", "sex", "dx"]
    pd.testing.assert_frame_equal(_sorted(rel_b), _sorted(rel_a))
    assert report_differences((tmp_path / "numpy" / "r.html").read_text(encoding="utf-8"),
                              (tmp_path / "duckdb" / "r.html").read_text(encoding="utf-8"), command="kanon") == []  # fmt: skip


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_timestamped_report_names_a_dropped_column_a_direct_identifier(tmp_path, engine):
    """``timestamped --drop code --report``: the report's "What went in" called the dropped column
    "left out (no role; not released)" while its "What was verified" said "dropped as identifiers:
    code" (the command never told the report which columns it dropped; kanon's and the job
    runner's reports did); now "direct identifier (removed)" on every path."""
    n = 30
    pd.DataFrame({"pid": np.arange(n) // 2, "sex": ["F", "M"] * (n // 2), "code": [f"c{i}" for i in range(n)],
                  "t": (pd.Timestamp("2021-01-01") + pd.to_timedelta(np.arange(n) * 13, unit="h")).strftime("%Y-%m-%d %H:%M")}
                 ).to_csv(tmp_path / "in.csv", index=False)  # fmt: skip
    r = _run(["timestamped", tmp_path / "in.csv", "--time", "t", "--uid", "pid", "--qi", "sex", "--k", "2", "--granularities", "week,month",
              "--drop", "code", "--out", tmp_path / "o.csv", "--report", tmp_path / "r.html", "--engine", engine, "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    content = report_content((tmp_path / "r.html").read_text(encoding="utf-8"))
    roles = dict(map(tuple, next(b for b in content["inputs"] if b[0] == "table")[2][1:]))
    assert roles["code"] == "direct identifier (removed)", roles
    verified = dict(map(tuple, next(b for b in content["verification"] if b[0] == "table")[2][1:]))
    assert verified["dropped as identifiers"] == "code"


def test_fuzz_hierarchy_writer_quotes_any_drawn_value(tmp_path):
    """The fuzz's own hierarchy writer (:func:`_cell`) writes a drawn value holding ``;``, a quote,
    a line break or outer spaces so that the product reads it back as written (before, ``a;b`` gave
    a ragged row and `` 7`` was stripped: the example compared two refusals)."""
    from tempanon.hierarchy import load_hierarchies

    ages = ["a;b", " 7", "7", 'q"', "x\ny", "M ", "Ā", ""]
    pd.DataFrame({"age": ages, "sex": ["F", "M ", "a;b", "F", "M", "F", "M", "F"]}).to_csv(tmp_path / "in.csv", index=False)
    for quote_all in (False, True):
        hdir = tmp_path / f"h{quote_all}"
        _hierarchies(tmp_path / "in.csv", hdir, complete=True, quote_all=quote_all)
        h = load_hierarchies(hdir, ["age", "sex"])
        got = set(h["age"].values.tolist())
        assert {" 7", "7", "a;b", 'q"', "x\ny", "M ", "Ā"} <= got, got
        assert set(h["sex"].values.tolist()) == {"F", "M", "M ", "a;b"}
