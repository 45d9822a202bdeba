"""Identifier screening: the one check, shared by every command, ``init`` and ``check``, that a
column about to be released *unchanged* does not look like a direct identifier.

A release carries a column unchanged when the user declared it insensitive (``--keep``), when a
quasi-identifier ends at generalization level 0, or when a stream publishes its quasi-identifiers
exactly in an Anatomy QI table. Such a column must not be a name, an id, an e-mail address, free
text, or a second exact timestamp beside the generalized one. :func:`screen_columns` lists what
looks identifying and why; :func:`refuse_identifiers` turns that into an :class:`InputError` (exit
status 2) unless the user overrode the column explicitly (``--allow-identifier COLS`` on every
command, ``allow_identifier = [...]`` in a job file).

Signals (any one flags a column; all computed with pandas string operations on the *distinct*
values, never a Python loop per row):

* **near-unique**: over at least ``min_rows`` non-empty rows, at least 90% of the values are
  distinct (per row); with a respondent column ``uid``, also when at least 90% of the respondents
  carry a value no other respondent has and those values cover at least 90% of the respondents
  (per respondent: a name repeated on each of a patient's rows);
* **name**: the column's name contains, as a whole token (any case, any separator, camelCase
  split), one of id, name, forename, surname, firstname, lastname, email, phone, address, ssn,
  mrn, ip, ... (``hadm_id``, ``row_id``, ``FirstName``, ``e-mail`` are flagged; ``paid``,
  ``width`` are not);
* **values**: at least half of the distinct values look like e-mail addresses, phone numbers,
  URLs or IP addresses; or at least a quarter are free text (6 words or 80 characters and more);
* **a second timestamp** (only when ``time`` is given, i.e. in the temporal commands): a column
  other than ``time`` that is a datetime column, or whose text values are dates/times, would give
  the generalized time back.

Heuristics both ways: a flagged column can be released with the override, and an unflagged one
is not thereby proven safe.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import pandas as pd

from tempanon.errors import InputError

__all__ = ["IdentifierFinding", "refuse_identifiers", "screen_columns", "identifier_name_token"]

#: whole tokens of a column name that mark a direct identifier
IDENTIFIER_TOKENS = frozenset(
    {
        "id", "ids", "uid", "uuid", "guid", "name", "names", "forename", "forenames", "surname",
        "surnames", "firstname", "lastname", "fullname", "givenname", "familyname", "middlename",
        "maidenname", "nickname", "username", "login", "email", "emails", "mail", "phone",
        "telephone", "tel", "mobile", "cellphone", "fax", "address", "addr", "street", "ssn",
        "mrn", "nhs", "passport", "ip", "ipaddress", "ipv4", "ipv6", "url", "iban",
    }
)  # fmt: skip

_TOKEN_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

_EMAIL = r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$"
_URL = r"^(?:(?:https?|ftp)://|www\.)\S+$"
_IPV4 = r"^(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?$"
_IPV6 = r"^(?=(?:[^:]*:){3})[0-9A-Fa-f:]{7,39}$"
_PHONE_SHAPE = r"^\+?[\d\s().\-/]{7,22}$"
_PLAIN_NUMBER = r"^[+-]?\d+(?:[.,]\d+)?(?:[eE][+-]?\d+)?$"
_DATE_LIKE = (
    r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.\-]\d{1,2}[/.\-]\d{2,4}|\d{4}/\d{1,2}/\d{1,2}"
    r"|\d{1,2}:\d{2}(?::\d{2})?"
    r"|(?i:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b)"
    r"|(?i:\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)"
)

_MAX_DISTINCT = 20_000  # value-shape signals look at this many distinct values at most


@dataclass(frozen=True)
class IdentifierFinding:
    """One column that looks like a direct identifier, and why (all reasons, ``"; "``-joined)."""

    column: str
    reason: str


def identifier_name_token(name: str) -> str | None:
    """The identifying token in a column name (``"hadm_id"`` -> ``"id"``), or ``None``.

    The name is split at every non-alphanumeric character and at camelCase boundaries, then
    lower-cased; single tokens and adjacent pairs (``e-mail`` -> ``email``, ``first_name`` ->
    ``firstname``) are matched against :data:`IDENTIFIER_TOKENS`.
    """
    tokens = [t.lower() for t in _TOKEN_RE.findall(str(name))]
    for t in tokens:
        if t in IDENTIFIER_TOKENS:
            return t
    for a, b in zip(tokens, tokens[1:]):
        if a + b in IDENTIFIER_TOKENS:
            return a + b
    return None


def _distinct_text(series: pd.Series) -> pd.Series:
    """The distinct non-empty values as stripped strings (at most ``_MAX_DISTINCT``, sampled
    deterministically)."""
    values = pd.Series(series.dropna().unique())
    if len(values) > _MAX_DISTINCT:
        values = values.sample(_MAX_DISTINCT, random_state=0)
    text = values.astype(str).str.strip()
    return text[text != ""]


def _share(mask: pd.Series) -> float:
    return float(mask.mean()) if len(mask) else 0.0


def _value_reasons(series: pd.Series) -> list[str]:
    if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        return []
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return []
    text = _distinct_text(series)
    if text.empty:
        return []
    reasons = []
    if _share(text.str.match(_EMAIL)) >= 0.5:
        reasons.append("its values look like e-mail addresses")
    if _share(text.str.match(_URL, case=False)) >= 0.5:
        reasons.append("its values look like URLs")
    if _share(text.str.match(_IPV4) | text.str.match(_IPV6)) >= 0.5:
        reasons.append("its values look like IP addresses")
    digits = text.str.count(r"\d")
    phone = (
        text.str.match(_PHONE_SHAPE)
        & ~text.str.match(_PLAIN_NUMBER)
        & ~text.str.contains(_DATE_LIKE, regex=True)
        & ~text.str.match(_IPV4)
        & (
            ((digits >= 10) & (digits <= 15))
            | ((digits >= 7) & (digits <= 15) & text.str.contains(r"^\+|[\s()]", regex=True))
        )
    )
    if _share(phone) >= 0.5:
        reasons.append("its values look like phone numbers")
    words = text.str.split().str.len()
    if _share((words >= 6) | (text.str.len() >= 80)) >= 0.25:
        reasons.append("its values look like free text")
    return reasons


def _looks_like_timestamp(series: pd.Series) -> bool:
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return True
    if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype):
        return False
    text = _distinct_text(series)
    if text.empty:
        return False
    sample = text.iloc[:500]
    if _share(sample.str.contains(_DATE_LIKE, regex=True)) < 0.9:
        return False
    from tempanon.temporal.parse import split_seconds_offsets  # (pandas parses no offset with seconds)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            parsed = pd.to_datetime(split_seconds_offsets(sample)[0], format="mixed", errors="coerce", utc=True)
        except (ValueError, TypeError, OverflowError):
            return False
    return _share(parsed.notna()) >= 0.9


def _near_unique_reasons(
    df: pd.DataFrame, column: str, uid: str | None, min_rows: int, *, uid_label: str | None = None
) -> list[str]:
    col = df[column]
    present = col.notna()
    n = int(present.sum())
    reasons = []
    if n >= min_rows:
        distinct = int(col[present].nunique())
        if distinct >= 0.9 * n:
            reasons.append(f"near-unique per row ({distinct} distinct values in {n} rows)")
    if uid is not None and uid != column and not reasons:
        pairs = df.loc[present, [uid, column]].drop_duplicates()
        n_resp = int(pairs[uid].nunique())
        if n_resp >= min_rows:
            holders = pairs.groupby(column, sort=False, dropna=True)[uid].transform("size")
            own = int(pairs.loc[holders.to_numpy() == 1, uid].nunique())
            distinct = int(pairs[column].nunique())
            if own >= 0.9 * n_resp and distinct >= 0.9 * n_resp:
                reasons.append(
                    f"near-unique per respondent ({own} of {n_resp} respondents ({uid_label!r}) "
                    "carry a value no other respondent has)"
                )
    return reasons


def screen_columns(
    df: pd.DataFrame,
    columns: Sequence[str],
    *,
    uid: str | None = None,
    time: str | None = None,
    min_rows: int = 20,
) -> list[IdentifierFinding]:
    """Screen ``columns`` of ``df`` for direct identifiers; one finding per flagged column, in
    the order of ``columns``. ``uid`` and ``time`` (the model's own columns) are never flagged
    themselves; ``uid`` enables the per-respondent uniqueness signal and ``time`` the
    second-timestamp signal. Unknown columns are ignored (the caller validates names)."""
    findings: list[IdentifierFinding] = []
    if uid is not None and uid not in df.columns:
        uid = None
    for column in dict.fromkeys(columns):
        if column not in df.columns or column in (uid, time):
            continue
        series = df[column]
        if isinstance(series, pd.DataFrame):  # duplicate header: refused elsewhere, screen the first
            series = series.iloc[:, 0]
        reasons: list[str] = []
        token = identifier_name_token(column)
        if token is not None:
            reasons.append(f"its name looks like an identifier (token {token!r})")
        frame = pd.DataFrame({"\x00value": series.to_numpy()})
        if uid is not None:
            frame["\x00uid"] = df[uid].to_numpy() if not isinstance(df[uid], pd.DataFrame) else df[uid].iloc[:, 0].to_numpy()
        reasons += _near_unique_reasons(frame, "\x00value", "\x00uid" if uid else None, min_rows, uid_label=uid)
        reasons += _value_reasons(series)
        if time is not None and _looks_like_timestamp(series):
            reasons.append(f"it holds timestamps, which would give the generalized time {time!r} back")
        if reasons:
            findings.append(IdentifierFinding(str(column), "; ".join(reasons)))
    return findings


def refuse_identifiers(
    df: pd.DataFrame,
    released_unchanged: Sequence[str],
    *,
    allow: Collection[str] = (),
    uid: str | None = None,
    time: str | None = None,
    min_rows: int = 20,
) -> list[IdentifierFinding]:
    """Screen the columns a release would carry unchanged; refuse (raise :class:`InputError`,
    exit status 2) if any looks like a direct identifier and is not in ``allow``.

    Call it before anything is written, on every column released unchanged: the declared
    insensitive ones (``--keep``), quasi-identifiers left at generalization level 0, and (stream,
    Anatomy publishing) the quasi-identifiers of the exact QI table. Returns the findings the user
    overrode with ``allow`` (``--allow-identifier``, job key ``allow_identifier``), so the command
    can report them next to the verified statement.
    """
    return refuse_findings(screen_columns(df, released_unchanged, uid=uid, time=time, min_rows=min_rows), allow=allow)


def refuse_findings(findings: Sequence[IdentifierFinding], *, allow: Collection[str] = ()) -> list[IdentifierFinding]:
    """The refusal of :func:`refuse_identifiers` for findings made elsewhere (an engine screening a
    table it does not hold in memory): raise :class:`InputError` for any finding not in ``allow``;
    return the allowed ones."""
    allowed = {str(a) for a in allow}
    refused = [f for f in findings if f.column not in allowed]
    if refused:
        lines = "; ".join(f"column {f.column!r}: {f.reason}" for f in refused)
        names = ",".join(f.column for f in refused)
        raise InputError(
            f"refusing to release column(s) unchanged that look like direct identifiers: {lines}. "
            f"Drop them (--drop {names}), give them another role, or, if they are safe to publish "
            f"as they are, override per column with --allow-identifier {names} "
            f"(job key allow_identifier = [...])"
        )
    return [f for f in findings if f.column in allowed]
