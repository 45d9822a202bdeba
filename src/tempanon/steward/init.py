"""``tempanon init``: profile a table and write a starter job file that explains each proposal.

Profiling is per column on its distinct values (type, distinct count, missing cells, uniqueness =
distinct / non-missing rows). The proposal is *safe first* (issue 12: a column reaches the release
only with a declared role) and *small* (issue 16: a handful of quasi-identifiers, not every
column):

1. **respondent id** (``uid``): an id-like name (``id``, ``*_id``, patient, person, user, ...)
   whose values repeat (several rows per person; k then counts respondents). It is removed from
   the release.
2. **identifiers** (removed: job key ``identifying``, or ``drop`` where the runner has it): every
   other column flagged by the shared identifier screening
   (:func:`tempanon.data.screen.screen_columns`: identifying names, near-unique values, e-mail
   addresses, phone numbers, URLs, IP addresses, free text, and, next to the time, a second
   timestamp), with the screening's reason as the comment. A demographic or the time that is only
   near-unique (exact ages, birth dates) is not dropped: it is a quasi-identifier and generalized.
3. **quasi-identifiers**: what an attacker can know about a person, i.e. **demographics** (age,
   birth date, sex/gender, place such as zip code, city or country, race/ethnicity, marital
   status, nationality, education, occupation; recognized by whole tokens of the column name) and
   **one time** (the first date/time column whose name reads like an event time, else the first
   date/time column), at most :data:`MAX_QI`, each with a hierarchy: dates by truncation,
   fixed-length digit codes by masking, numbers by intervals of nice widths w, 2w, 4w, other
   columns by suppression (``value -> *``). Other date columns are **flagged** and dropped
   (released exactly, they give the generalized time back). When no column looks like a
   demographic or a time, up to :data:`FALLBACK_QI` generalizable columns are proposed and the
   comment says they are guesses.
4. **everything else is left out**, each with a comment (not an identifier, no role proposed;
   move it to ``keep`` to release it unchanged, to ``sensitive`` if the release is about it, or
   to ``quasi_identifiers``): a job runner that fails closed leaves it out and says so; with one
   that does not (no ``keep`` key yet) it is listed with the removed columns. Nothing is proposed
   as released unchanged (``keep``).

The size of the proposal's generalization lattice (the product of the hierarchies' level counts)
is written next to ``quasi_identifiers``; from :data:`LARGE_LATTICE` nodes on the comment and the
command say so. Nothing here is a decision: the job file is a proposal the steward edits.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

_IDLIKE = re.compile(r"(^id$|^id[^a-z]|[^a-z]id$|uuid|guid|patient|person|user|customer|member|respondent|subject)", re.I)
_CODE = re.compile(r"(zip|postal|postcode|plz)", re.I)

MAX_QI = 6
"""Most quasi-identifiers proposed (demographics by priority, plus one time)."""
FALLBACK_QI = 4
"""Quasi-identifiers guessed when no column looks like a demographic or a time."""
LARGE_LATTICE = 1_000_000
"""A proposal whose lattice has this many nodes or more says so (comment and stderr)."""

# demographic name tokens, by priority (a lower group is proposed first)
_DEMOGRAPHICS: tuple[tuple[str, frozenset[str]], ...] = (
    ("age or birth", frozenset({"age", "birth", "birthdate", "birthday", "birthyear", "dob", "yob", "born"})),
    ("sex or gender", frozenset({"sex", "gender"})),
    ("place", frozenset({"zip", "zipcode", "postcode", "postal", "plz", "city", "town", "county", "state", "region",
                         "district", "province", "municipality", "borough", "neighbourhood", "neighborhood", "ward",
                         "country", "residence"})),
    ("race or ethnicity", frozenset({"race", "ethnicity", "ethnic"})),
    ("marital status", frozenset({"marital", "married"})),
    ("nationality", frozenset({"nationality", "citizenship", "native"})),
    ("education", frozenset({"education", "degree", "schooling"})),
    ("occupation", frozenset({"occupation", "job", "profession", "workclass", "employment"})),
)
_EVENT_TIME = frozenset({"date", "time", "datetime", "timestamp", "when", "admit", "admission", "admittime", "visit",
                         "event", "start", "occurred", "incident", "reported", "day", "dt"})
_TOKEN_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _tokens(name: str) -> list[str]:
    toks = [t.lower() for t in _TOKEN_RE.findall(str(name))]
    return toks + [a + b for a, b in zip(toks, toks[1:])]


def demographic_kind(name: str) -> tuple[int, str] | None:
    """``(priority, kind)`` when a column name reads like a demographic (whole tokens), else None."""
    toks = set(_tokens(name))
    for i, (kind, words) in enumerate(_DEMOGRAPHICS):
        if toks & words:
            return i, kind
    return None


@dataclass
class ColumnProfile:
    name: str
    kind: str  # integer | number | date | text
    distinct: int
    missing: int
    uniqueness: float
    examples: list[str]
    role: str = "other"  # identifying | uid | qi | other (left out)
    hierarchy: dict | None = None
    reason: str = ""
    extra: dict = field(default_factory=dict)
    levels: int = 1  # levels of the proposed hierarchy (lattice size factor)
    candidate: bool = False  # could be generalized (has a hierarchy proposal)
    demographic: str | None = None


def _nice(x: float) -> float:
    """A 1-2-5 number near ``x``."""
    if x <= 0:
        return 1.0
    e = math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if m * 10**e >= x:
            return float(m * 10**e)
    return float(10 ** (e + 1))


def _kind(values: list[str]) -> tuple[str, Any]:
    if not values:
        return "text", None
    nums = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
    if not nums.isna().any():
        arr = nums.to_numpy(dtype=float)
        return ("integer" if np.all(np.mod(arr, 1) == 0) else "number"), arr
    looks_date = all(re.search(r"\d{1,4}[-/.]\d{1,2}", v) for v in values[:200])
    if looks_date:
        from tempanon.errors import InputError
        from tempanon.hierarchy.builders import parse_wall_clock
        from tempanon.temporal.parse import day_month_order

        try:  # numeric dates: the order the run reads them in (tempanon.temporal.parse.day_month_order, auto)
            order, note = day_month_order(pd.Series(values, dtype=object), "", None)
            problem = None
        except InputError as exc:
            order, note, problem = None, None, str(exc).split(": ", 1)[-1]
        parsed = parse_wall_clock(values, day_first=order == "day")  # (several UTC offsets: each at its wall clock)
        if not parsed.isna().any():
            parsed.attrs.update(date_order=order, undecided=note is not None, date_order_problem=problem)
            return "date", parsed
    return "text", None


def profile_columns(df: pd.DataFrame, nested: Mapping[str, str] | None = None) -> list[ColumnProfile]:
    """Profile every column and propose its role (module doc). ``nested``: the columns of a Parquet input
    with a nested type (name -> type, :func:`tempanon.data.io.nested_parquet_columns`): never given a role
    (a run refuses them with one), only listed as left out."""
    from tempanon.data.screen import screen_columns
    from tempanon.data.io import parquet_type_phrase, parquet_type_way_out
    from tempanon.hierarchy.core import MISSING, as_text

    out: list[ColumnProfile] = []
    parsed_by: dict[str, Any] = {}
    nested = dict(nested or {})
    for col in df.columns:
        if str(col) in nested:  # (a list, struct or map: not profiled, no role)
            out.append(ColumnProfile(str(col), f"nested ({nested[str(col)]})", 0, 0, 0.0, [],
                                     reason=f"{parquet_type_phrase(nested[str(col)])} ({nested[str(col)]}): tempanon compares and releases "
                                            "text, numbers, dates and times only (the engines would write it as other text), so it gets no "
                                            f"role and is left out; {parquet_type_way_out(nested[str(col)]).removesuffix(' first')} to use it"))  # fmt: skip
            continue
        text = as_text(df[col])
        present = text[text != MISSING]
        distinct_vals = list(pd.unique(present))
        n_present = len(present)
        distinct = len(distinct_vals)
        uniq = distinct / n_present if n_present else 0.0
        kind, parsed = _kind(distinct_vals)
        p = ColumnProfile(str(col), kind, distinct, int(len(text) - n_present), uniq, [str(v) for v in distinct_vals[:3]])
        dem = demographic_kind(p.name)
        p.demographic = dem[1] if dem else None
        _hierarchy_proposal(p, parsed, distinct_vals)
        parsed_by[p.name] = parsed
        out.append(p)

    # 1. the respondent id: the first id-like column whose values repeat
    for p in out:
        if p.name in nested:
            continue
        if reads_like_respondent_id(p.name, p.distinct, len(df), p.missing):
            p.role = "uid"
            p.reason = (f"respondent id: its name reads like an id and its {p.distinct:,} values repeat over {len(df) - p.missing:,} rows "
                        "(several rows per person), so k counts distinct respondents (respondent-level k-anonymity); "
                        "removed from the release")
            break
    uid = next((p.name for p in out if p.role == "uid"), None)

    # 3a. the time: the first date column named like an event time, else the first date column
    dates = [p for p in out if p.kind == "date" and p.role != "uid" and p.candidate and not p.demographic]
    time = next((p for p in dates if set(_tokens(p.name)) & _EVENT_TIME), dates[0] if dates else None)

    # 2. identifiers by the shared screening (the time is screened as the model's own column)
    findings = {f.column: f.reason for f in screen_columns(df, [p.name for p in out if p.role != "uid" and p.name not in nested], uid=uid,
                                                             time=time.name if time else None)}
    for p in out:
        if p.role == "uid" or p.name not in findings:
            continue
        reason = findings[p.name]
        # a demographic or the time is generalized, never released exactly: being near-unique as it is (or, for a
        # birth date, being a date beside the time) does not make it an identifier; a name or value shape does
        benign = all(r.strip().startswith("near-unique") or (p.kind == "date" and "holds timestamps" in r) for r in reason.split(";"))
        if (p.demographic or p is time) and benign and p.candidate:
            p.extra["screening"] = reason  # generalized as a quasi-identifier, never released exactly
            continue
        p.role = "identifying"
        if time is not None and "timestamps" in reason:
            p.reason = f"another date/time beside {time.name!r}: {reason}; drop it, or make it the time instead"
        else:
            p.reason = f"identifier: {reason}"

    # 3b. quasi-identifiers: demographics by priority, then the time
    dem = sorted((p for p in out if p.role == "other" and p.demographic and p.candidate),
                 key=lambda p: demographic_kind(p.name)[0])
    chosen = dem[: MAX_QI - (1 if time is not None and time.role == "other" else 0)]
    if time is not None and time.role == "other":
        chosen.append(time)
    guessed = False
    if not chosen:
        chosen = [p for p in out if p.role == "other" and p.candidate][:FALLBACK_QI]
        guessed = True
    for p in chosen:
        p.role = "qi"
        if guessed:
            why = "a guess: no column looks like a demographic or a time, and this one can be generalized; replace it by what an attacker could know"
        elif p is time:
            why = "the time of the event: an attacker may know when it happened"
        else:
            why = f"a demographic ({p.demographic}): an attacker may know it about a person"
        if "screening" in p.extra:
            why += f" (as it is: {p.extra['screening']}; so it is generalized, never released exactly)"
        p.reason = f"{why}; {p.reason}"

    # 4. the rest is left out
    for p in out:
        if p.role != "other" or p.name in nested:
            continue
        if p.kind == "date" and time is not None:
            p.reason = f"another date/time beside {time.name!r}: released exactly it would give the generalized time back; left out"
        elif p.demographic and p.candidate:
            p.reason = f"also a demographic ({p.demographic}), left out to keep the proposal at {MAX_QI} quasi-identifiers; add it if an attacker could know it"
        elif p.distinct <= 1:
            p.reason = "a single value, it tells nothing about anyone; left out (move it to keep to release it)"
        else:
            p.reason = (f"{p.distinct:,} distinct values, not a demographic or a time; left out of the release: move it to keep to "
                        "release it unchanged, to sensitive if the release is about it, or to quasi_identifiers if an attacker could know it")
    return out


def _hierarchy_proposal(p: ColumnProfile, parsed: Any, distinct_vals: list[str]) -> None:
    """The hierarchy a column would get as a quasi-identifier (``p.hierarchy``, ``p.levels``,
    ``p.candidate``, ``p.reason`` the hierarchy's description); none for a single value."""
    if p.distinct <= 1:
        return
    p.candidate = True
    if p.kind == "date":
        has_time = bool(((parsed.dt.hour != 0) | (parsed.dt.minute != 0)).any())
        formats = ["%Y-%m-%d %H:00", "%Y-%m-%d", "%Y-%m", "%Y"] if has_time else ["%Y-%m", "%Y"]
        p.hierarchy, p.levels = {"type": "dates", "formats": formats}, len(formats) + 2
        p.reason = "generalized by truncation (" + " -> ".join(formats) + " -> *)"
        order = parsed.attrs.get("date_order")
        if order == "day":  # said in the file: the run would decide the same from the values
            p.hierarchy["date_order"] = "day"
            p.extra["date_order"] = "day"
            p.reason += "; its numeric dates are day first (some first part > 12, or dots): date_order = \"day\""
        elif parsed.attrs.get("undecided"):
            p.reason += ("; every numeric date could be day or month first: read month first; if they are day first, "
                         "add date_order = \"day\" to its hierarchy")
        elif parsed.attrs.get("date_order_problem"):
            p.reason += f"; {parsed.attrs['date_order_problem']}"
        return
    lengths = {len(v) for v in distinct_vals}
    codelike = len(lengths) == 1 and all(v.isdigit() for v in distinct_vals[:500]) and p.distinct > 10
    if p.kind in ("integer", "text") and codelike and (next(iter(lengths)) >= 5 or _CODE.search(p.name)):
        n = next(iter(lengths))
        p.hierarchy, p.levels = {"type": "masking", "levels": n - 1}, n + 1
        p.reason = f"a {n}-digit code: generalized by masking digits from the right"
        return
    finite = np.asarray(parsed, dtype=float) if p.kind in ("integer", "number") else np.zeros(0)
    finite = finite[np.isfinite(finite)]
    if p.kind in ("integer", "number") and p.distinct > 10 and len(finite):
        lo, hi = float(np.min(finite)), float(np.max(finite))
        w = _nice((hi - lo) / 10 if hi > lo else 1)
        if p.kind == "integer":
            w = max(1.0, round(w))
        start = math.floor(lo / w) * w
        widths = [w, 2 * w, 4 * w]
        fmt = (lambda x: int(x)) if float(w).is_integer() and float(start).is_integer() else float
        p.hierarchy, p.levels = {"type": "intervals", "widths": [fmt(x) for x in widths], "start": fmt(start)}, 5
        p.reason = f"a number with {p.distinct:,} values ({lo:g}..{hi:g}): generalized to intervals of width {widths[0]:g}, {widths[1]:g}, {widths[2]:g}"
        return
    if p.distinct <= 50:
        p.hierarchy, p.levels = {"type": "suppression"}, 2
        p.reason = (f"a category with {p.distinct} values: generalized by suppression (value -> *); a taxonomy "
                    "(`tempanon hierarchy --type taxonomy`) gives finer levels")
        return
    p.candidate = False


def reads_like_respondent_id(name: str, distinct: int, rows: int, missing: int) -> bool:
    """``init``'s respondent-id rule: an id-like name, no missing cell, values that repeat (more than
    one, fewer than the rows)."""
    return bool(_IDLIKE.search(name)) and missing == 0 and 1 < distinct < rows


def respondent_id_warning(df: pd.DataFrame, exclude: Iterable[str], option: str = "--uid",
                          path: str | os.PathLike | None = None) -> str | None:
    """The warning for a run without a respondent id whose table has a column that reads like one
    (``init``'s rule: an id-like name, no missing cell, values that repeat): without ``--uid`` every
    row counts as a respondent, so a person with several rows counts several times towards k. The
    first such column not in ``exclude`` (the columns given a model role), else ``None``.

    ``df`` read from the Parquet file ``path`` with only its role columns (:func:`tempanon.data.io.read_table`,
    ``roles``): the file's id-like columns that were left out (no role) are read alone
    (:func:`tempanon.data.io.read_parquet_columns`) and counted by the same rule, in the file's column
    order, so that the warning is the engines' (:func:`respondent_id_warning_engine`, which see every
    column); no other column is read."""
    from tempanon.data.io import read_parquet_columns, table_columns

    skip = {str(c) for c in exclude}
    n = len(df)
    columns = table_columns(df)  # the file's, when only the role columns were read
    left = [str(c) for c in columns if c not in df.columns and str(c) not in skip and _IDLIKE.search(str(c))]
    extra = read_parquet_columns(path, left) if left and path is not None else None
    for col in columns:
        name = str(col)
        if name in skip or not _IDLIKE.search(name):  # the name first: no column is counted for nothing
            continue
        if col in df.columns:
            s = df[col]
        elif extra is not None:
            s = extra[name]
        else:
            continue
        missing = int(s.isna().sum())
        distinct = int(s.astype(str).nunique()) if missing == 0 else 0
        if reads_like_respondent_id(name, distinct, n, missing):
            return _respondent_id_text(name, distinct, n, option)
    return None


def respondent_id_warning_engine(src, exclude: Iterable[str], option: str = "--uid") -> str | None:
    """:func:`respondent_id_warning` for a table an engine holds (a DuckDB or Spark
    :class:`~tempanon.lattice.source_duckdb.SQLSource`: ``kanon`` and ``timestamped`` with ``--engine
    duckdb|spark``): the id-like names first, then their missing cells and distinct values counted by
    the engine in one query (:meth:`~tempanon.lattice.source_duckdb.SQLSource.missing_and_distinct`);
    no row reaches pandas. The same rule and text."""
    skip = {str(c) for c in exclude}
    names = [str(c) for c in src.columns if str(c) not in skip and _IDLIKE.search(str(c))]
    if not names:
        return None
    n, counts = src.missing_and_distinct(names)
    for name in names:
        missing, distinct = counts[name]
        if reads_like_respondent_id(name, distinct if missing == 0 else 0, n, missing):
            return _respondent_id_text(name, distinct, n, option)
    return None


def _respondent_id_text(name: str, distinct: int, n: int, option: str) -> str:
    return (f"column {name!r} reads like a respondent id ({distinct:,} values repeat over {n:,} rows) but is not "
            f"{option}: every row counts as a respondent, so k counts rows, not people; give {option} {name} "
            "for respondent-level k")


def lattice_size(profiles: list[ColumnProfile]) -> int:
    """Nodes of the generalization lattice of the proposed quasi-identifiers (product of levels)."""
    return math.prod(p.levels for p in profiles if p.role == "qi")


# the characters TOML allows neither in a comment nor raw in a string: the control characters but tab
_TOML_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _escaped(m: re.Match) -> str:
    return "\\u007f" if m.group() == "\x7f" else json.dumps(m.group())[1:-1]


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _toml_line(line: str) -> str:
    """One line of the job file with any control character (a column's name or example value holding a
    line break, a NUL, ...) written as its escape (JSON's, which are TOML's; also a DEL, which
    :func:`_q` leaves raw in a string): raw, it ended a comment or made the file invalid TOML."""
    return _TOML_CONTROL.sub(_escaped, line)


def _key(s: str) -> str:
    return s if re.fullmatch(r"[A-Za-z0-9_\-]+", s) else _q(s)


def _inline(d: dict) -> str:
    parts = []
    for k, v in d.items():
        if isinstance(v, str):
            val = _q(v)
        elif isinstance(v, list):
            val = "[" + ", ".join(_q(x) if isinstance(x, str) else repr(x) for x in v) + "]"
        else:
            val = repr(v)
        parts.append(f"{k} = {val}")
    return "{ " + ", ".join(parts) + " }"


def _drop_key() -> str:
    """The job-file key of removed columns: ``drop`` where the job runner has it, else ``identifying``."""
    from tempanon.steward.job import COLUMNS_SCHEMA

    return "drop" if "drop" in COLUMNS_SCHEMA else "identifying"


def _fails_closed() -> bool:
    """True when the job runner leaves out every column without a role (issue 12: it has ``keep``);
    before that, a column not named anywhere was released unchanged, so ``init`` lists the
    left-out columns with the removed ones."""
    from tempanon.steward.job import COLUMNS_SCHEMA

    return "keep" in COLUMNS_SCHEMA


def lattice_lines(profiles: list[ColumnProfile]) -> list[str]:
    """Comment lines on the size of the proposal's lattice (and a warning from :data:`LARGE_LATTICE`)."""
    qi = [p for p in profiles if p.role == "qi"]
    size = lattice_size(profiles)
    lines = [f"# The search lattice of these {len(qi)} quasi-identifiers has {' x '.join(str(p.levels) for p in qi) or '1'} = {size:,} "
             "nodes (full-domain generalizations; the product of the hierarchies' level counts)."]
    if size >= LARGE_LATTICE:
        lines.append(f"# WARNING: {size:,} nodes is millions: the search may run for hours and need much memory. Keep only what an "
                     "attacker could know, or use hierarchies with fewer levels.")
    return lines


def starter_job(input_path: str | os.PathLike, job_path: str | os.PathLike, df: pd.DataFrame, profiles: list[ColumnProfile], *, k: int = 5) -> str:
    """The text of a starter job file (TOML with one explanatory comment per proposal)."""
    job_dir = Path(job_path).resolve().parent
    rel = os.path.relpath(Path(input_path).resolve(), job_dir)
    stem = Path(input_path).name.split(".")[0]
    qi = [p for p in profiles if p.role == "qi"]
    ident = [p for p in profiles if p.role == "identifying"]
    left = [p for p in profiles if p.role == "other"]
    uid = next((p for p in profiles if p.role == "uid"), None)
    lines = [
        f"# tempanon job file, proposed by `tempanon init` for {Path(input_path).name} ({len(df):,} rows, {df.shape[1]} columns).",
        "# Every proposal below is a guess from the data: read the comments, edit, then run `tempanon run THIS_FILE`.",
        "# Only the quasi-identifiers are released (generalized); every other column is removed unless you give it a role.",
        "# Relative paths are resolved against the directory of this file.",
        "",
        "# Column profile (type, distinct values, missing cells, uniqueness = distinct / non-missing rows):",
    ]
    from tempanon.data.io import parquet_type_phrase

    for p in profiles:
        if p.kind.startswith("nested"):
            lines.append(f"#   {p.name}: {p.kind[len('nested ('):-1]}, {parquet_type_phrase(p.kind[len('nested ('):-1])} (not profiled)")
            continue
        lines.append(f"#   {p.name}: {p.kind}, {p.distinct} distinct, {p.missing} missing, uniqueness {p.uniqueness:.2f}, e.g. {', '.join(p.examples)}")
    lines += ["", "[input]", f"path = {_q(rel)}", "", "[columns]"]
    if uid is not None:
        lines.append(f"# {uid.name}: {uid.reason}.")
        lines.append(f"uid = {_q(uid.name)}")
    for p in qi:
        lines.append(f"# {p.name}: {p.reason}.")
    if not qi:
        lines.append("# No column can be proposed as a quasi-identifier (all are identifiers, single values or unsuitable): "
                     "list what an attacker could know, with a hierarchy each.")
    lines += lattice_lines(profiles)
    lines.append("quasi_identifiers = [" + ", ".join(_q(p.name) for p in qi) + "]")
    closed = _fails_closed()
    if ident:
        lines.append("# Identifiers, removed from the release:")
    for p in ident:
        lines.append(f"# {p.name}: {p.reason}.")
    if left:
        lines.append("# No role, so not released" + (" (the run lists them as left out):" if closed else " (listed for removal below):"))
    for p in left:
        lines.append(f"# {p.name}: {p.reason}.")
    lines.append(f"{_drop_key()} = [" + ", ".join(_q(p.name) for p in ident + ([] if closed else left)) + "]")
    lines.append("# sensitive = []  # what the release is about; check l-diversity with `tempanon check --sensitive`")
    lines.append("# keep = []  # released unchanged: only columns that are neither identifying nor known to an attacker")
    lines.append("# allow_identifier = []  # columns the identifier screening flags that you decide are safe to release as they are")
    lines += ["", "[hierarchies]"]
    for p in qi:
        lines.append(f"{_key(p.name)} = {_inline(p.hierarchy or {'type': 'suppression'})}")
    lines += [
        "",
        "[model]",
        'name = "kanon"  # full-domain k-anonymity (Incognito)',
        f"k = {k}  # every released combination of quasi-identifiers is shared by at least k " + ("respondents" if uid else "rows"),
        "max_suppression = 0.02  # up to 2% of the rows may be removed instead of generalizing everything further",
        'criterion = "loss"  # pick the anonymous generalization that loses the least information',
    ]
    dates = [p for p in qi if p.kind == "date" and not p.demographic]
    if uid is not None and dates:  # many rows per respondent with a time: the timestamped model fits
        d = dates[0].name
        lines += [
            f"# Alternative: several rows per respondent ({uid.name}) with a date/time ({d}): generalize the time over",
            "# calendar granularities (day, week, month, ...; Mascetti et al. 2006) instead of truncation. To use it, move",
            f"# {d} out of quasi_identifiers and [hierarchies], add  time = {_q(d)}  to [columns], and use",
            '#   name = "timestamped"',
            f"#   k = {k}",
            '#   granularities = ["day", "week", "month", "quarter", "year"]',
            "#   max_suppression = 0.02",
            *(['#   date_order = "day"  # its numeric dates are day first'] if dates[0].extra.get("date_order") == "day" else []),
            "# (the other quasi-identifiers keep their hierarchies and are generalized jointly with time).",
        ]
    lines += [
        "",
        "[output]",
        f"table = {_q(stem + '-anonymized.csv')}",
        f"summary = {_q(stem + '-summary.json')}",
        f"report = {_q(stem + '-report.html')}",
        "",
    ]
    return "\n".join(_toml_line(x) for x in lines)


__all__ = ["FALLBACK_QI", "LARGE_LATTICE", "MAX_QI", "ColumnProfile", "demographic_kind", "lattice_lines", "lattice_size", "profile_columns", "starter_job"]
