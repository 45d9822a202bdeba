"""``tempanon init``: profile a table and write a starter job file that explains each proposal.

Profiling is per column on its distinct values (type, distinct count, missing cells, uniqueness =
distinct / non-missing rows). Proposed roles, in this order:

1. a name that looks like a person's identity (name, email, phone, address, ssn, ...):
   *direct identifier*, removed from the release;
2. a name that looks like an id (``id``, ``*_id``, patient, person, user, customer, uuid): when its
   values repeat, the *respondent id* (``uid``: k counts distinct respondents); when every value
   is unique, a direct identifier;
3. any other text column whose values are almost all distinct (uniqueness >= 0.9, more than 20
   values): a direct identifier (free text or a key);
4. dates and timestamps: a *time* quasi-identifier with a date-truncation hierarchy;
5. digit codes of one fixed length (5 digits or more, or a name like zip/postal): a
   quasi-identifier with digit masking;
6. numbers with more than 10 distinct values: a quasi-identifier with interval hierarchies
   (widths w, 2w, 4w, w a "nice" tenth of the range);
7. other columns with at most 50 distinct values: a quasi-identifier with a suppression hierarchy
   (``value -> *``); the comment says to move it to ``sensitive`` if it is what the release is for;
8. the rest: released unchanged.

Nothing here is a decision: the job file is a proposal the steward edits.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

_PERSONAL = re.compile(r"(^|[^a-z])(name|first|last|surname|fullname|email|e_?mail|phone|mobile|tel|ssn|passport|address|street)([^a-z]|$)", re.I)
_CODE = re.compile(r"(zip|postal|postcode|plz)", re.I)
_IDLIKE = re.compile(r"(^id$|^id[^a-z]|[^a-z]id$|uuid|guid|patient|person|user|customer|member|respondent|subject)", re.I)


@dataclass
class ColumnProfile:
    name: str
    kind: str  # integer | number | date | text
    distinct: int
    missing: int
    uniqueness: float
    examples: list[str]
    role: str = "other"  # identifying | uid | qi | other
    hierarchy: dict | None = None
    reason: str = ""
    extra: dict = field(default_factory=dict)


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
        parsed = pd.to_datetime(pd.Series(values, dtype=object), errors="coerce", format="mixed")
        if not parsed.isna().any():
            return "date", parsed
    return "text", None


def profile_columns(df: pd.DataFrame) -> list[ColumnProfile]:
    """Profile every column and propose its role (module doc)."""
    from tempanon.hierarchy.core import MISSING, as_text

    out = []
    for col in df.columns:
        text = as_text(df[col])
        present = text[text != MISSING]
        distinct_vals = list(pd.unique(present))
        n_present = len(present)
        distinct = len(distinct_vals)
        uniq = distinct / n_present if n_present else 0.0
        kind, parsed = _kind(distinct_vals)
        p = ColumnProfile(str(col), kind, distinct, int(len(text) - n_present), uniq, [str(v) for v in distinct_vals[:3]])
        _propose(p, parsed, distinct_vals, n_present)
        out.append(p)
    # at most one respondent id: keep the first, the other id-like repeated columns become identifiers
    seen_uid = False
    for p in out:
        if p.role == "uid":
            if seen_uid:
                p.role, p.reason = "identifying", p.reason + "; another column was already proposed as respondent id"
            seen_uid = True
    return out


def _propose(p: ColumnProfile, parsed: Any, distinct_vals: list[str], n_present: int) -> None:
    if _PERSONAL.search(p.name):
        p.role, p.reason = "identifying", "its name suggests personal identity (name, contact or document number): remove it"
        return
    if _IDLIKE.search(p.name):
        if p.distinct < n_present:
            p.role = "uid"
            p.reason = (f"its name suggests an id and its {p.distinct} values repeat over {n_present} rows: several rows per "
                        "person, so k should count distinct respondents (respondent-level k-anonymity)")
        else:
            p.role, p.reason = "identifying", "its name suggests an id and every value is unique: a direct identifier, remove it"
        return
    if p.kind == "text" and p.uniqueness >= 0.9 and p.distinct > 20:
        p.role, p.reason = "identifying", f"{p.uniqueness:.0%} of its values are distinct (free text or a key): remove it"
        return
    if p.distinct <= 1:
        p.role, p.reason = "other", "a single value: it tells nothing about anyone"
        return
    if p.kind == "date":
        has_time = bool(((parsed.dt.hour != 0) | (parsed.dt.minute != 0)).any())
        formats = ["%Y-%m-%d %H:00", "%Y-%m-%d", "%Y-%m", "%Y"] if has_time else ["%Y-%m", "%Y"]
        p.role, p.hierarchy = "qi", {"type": "dates", "formats": formats}
        p.reason = "a date/time: an attacker may know when something happened; generalized by truncation (" + " -> ".join(formats) + " -> *)"
        return
    lengths = {len(v) for v in distinct_vals}
    codelike = len(lengths) == 1 and all(v.isdigit() for v in distinct_vals[:500]) and p.distinct > 10
    if p.kind in ("integer", "text") and codelike and (next(iter(lengths)) >= 5 or _CODE.search(p.name)):
        n = next(iter(lengths))
        p.role, p.hierarchy = "qi", {"type": "masking", "levels": n - 1}
        p.reason = f"a {n}-digit code (like a zip code): generalized by masking digits from the right"
        return
    if p.kind in ("integer", "number") and p.distinct > 10:
        lo, hi = float(np.min(parsed)), float(np.max(parsed))
        w = _nice((hi - lo) / 10 if hi > lo else 1)
        if p.kind == "integer":
            w = max(1.0, round(w))
        start = math.floor(lo / w) * w
        widths = [w, 2 * w, 4 * w]
        fmt = (lambda x: int(x)) if float(w).is_integer() and float(start).is_integer() else float
        p.role, p.hierarchy = "qi", {"type": "intervals", "widths": [fmt(x) for x in widths], "start": fmt(start)}
        p.reason = f"a number with {p.distinct} values ({lo:g}..{hi:g}): generalized to intervals of width {widths[0]:g}, {widths[1]:g}, {widths[2]:g}"
        return
    if p.distinct <= 50:
        p.role, p.hierarchy = "qi", {"type": "suppression"}
        p.reason = (f"a category with {p.distinct} values: generalized by suppression (value -> *). Replace by a taxonomy "
                    "(`tempanon hierarchy --type taxonomy`) for finer levels, or move it to 'sensitive' if it is what the release is about")
        return
    p.reason = f"{p.distinct} distinct values, not recognized as a quasi-identifier: released unchanged"


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


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


def starter_job(input_path: str | os.PathLike, job_path: str | os.PathLike, df: pd.DataFrame, profiles: list[ColumnProfile], *, k: int = 5) -> str:
    """The text of a starter job file (TOML with one explanatory comment per proposal)."""
    job_dir = Path(job_path).resolve().parent
    rel = os.path.relpath(Path(input_path).resolve(), job_dir)
    stem = Path(input_path).name.split(".")[0]
    qi = [p for p in profiles if p.role == "qi"]
    ident = [p for p in profiles if p.role == "identifying"]
    uid = next((p for p in profiles if p.role == "uid"), None)
    lines = [
        f"# tempanon job file, proposed by `tempanon init` for {Path(input_path).name} ({len(df):,} rows, {df.shape[1]} columns).",
        "# Every proposal below is a guess from the data: read the comments, edit, then run `tempanon run THIS_FILE`.",
        "# Relative paths are resolved against the directory of this file.",
        "",
        "# Column profile (type, distinct values, missing cells, uniqueness = distinct / non-missing rows):",
    ]
    for p in profiles:
        lines.append(f"#   {p.name}: {p.kind}, {p.distinct} distinct, {p.missing} missing, uniqueness {p.uniqueness:.2f}, e.g. {', '.join(p.examples)}")
    lines += ["", "[input]", f"path = {_q(rel)}", "", "[columns]"]
    for p in ident:
        lines.append(f"# {p.name}: {p.reason}.")
    lines.append("identifying = [" + ", ".join(_q(p.name) for p in ident) + "]")
    if uid is not None:
        lines.append(f"# {uid.name}: {uid.reason}.")
        lines.append(f"uid = {_q(uid.name)}")
    for p in profiles:
        if p.role == "other":
            lines.append(f"# {p.name}: {p.reason}.")
    if len(qi) > 8:
        lines.append(f"# {len(qi)} quasi-identifiers: the search space is the product of the hierarchy heights; keep only what an attacker could know.")
    lines.append("quasi_identifiers = [" + ", ".join(_q(p.name) for p in qi) + "]")
    lines.append("# sensitive = []  # what the release is about; check l-diversity with `tempanon check --sensitive`")
    lines += ["", "[hierarchies]"]
    for p in qi:
        lines.append(f"# {p.name}: {p.reason}.")
        lines.append(f"{_key(p.name)} = {_inline(p.hierarchy or {'type': 'suppression'})}")
    lines += [
        "",
        "[model]",
        'name = "kanon"  # full-domain k-anonymity (Incognito)',
        f"k = {k}  # every released combination of quasi-identifiers is shared by at least k " + ("respondents" if uid else "rows"),
        "max_suppression = 0.02  # up to 2% of the rows may be removed instead of generalizing everything further",
        'criterion = "loss"  # pick the anonymous generalization that loses the least information',
    ]
    dates = [p for p in qi if p.kind == "date"]
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
    return "\n".join(lines)


__all__ = ["ColumnProfile", "profile_columns", "starter_job"]
