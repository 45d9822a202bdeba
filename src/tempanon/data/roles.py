"""Column roles (identifying, quasi-identifier, sensitive, insensitive) and column validation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tempanon.errors import InputError

if TYPE_CHECKING:  # pandas is not imported by `tempanon --help` (the CLI's modules import this one)
    import pandas as pd


def delimiter_hint(columns: Iterable[object]) -> str:
    """A hint for an unknown-column message when the table was read with the wrong delimiter: it
    has a single column whose name holds another usual delimiter (``sex;age;race`` read with
    ``--delimiter ,``); else ``""``."""
    cols = [str(c) for c in columns]
    if len(cols) != 1:
        return ""
    d = next((d for d in ";,\t|" if d in cols[0]), None)
    if d is None:
        return ""
    shown = "tab" if d == "\t" else d
    return (f" (a single column whose name holds {shown!r}: the file looks {shown!r}-separated; give the delimiter "
            f"{shown!r}, or leave it out to have it detected)")


def require_columns(df: pd.DataFrame, columns: Iterable[str], *, role: str = "column") -> None:
    """Raise :class:`InputError` naming every column of ``columns`` missing from ``df``."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        available = ", ".join(map(str, df.columns))
        raise InputError(
            f"unknown {role} {', '.join(repr(m) for m in missing)}; the input has columns: {available}{delimiter_hint(df.columns)}"
        )


def column_names(value: object, what: str) -> list:
    """The Python API's list of column names ``value`` (a list, tuple or other iterable), a single name given
    as a string taken as that one column (``qi="age"`` is ``["age"]``, not the columns ``a``, ``g``, ``e``
    that ``list("age")`` gave: 'unknown quasi-identifier 'a', 'g', 'e'' or 'listed twice'); anything else is
    an :class:`InputError` naming ``what`` (e.g. ``qi``)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (bytes, Mapping)) or not isinstance(value, Iterable):
        raise InputError(f"{what} must be a list of column names, got {type(value).__name__} {value!r}")
    return list(value)


def parse_column_list(spec: str | Sequence[str] | None, columns: Sequence[str] | None = None) -> list[str]:
    """Parse ``"a,b,c"`` or a range ``"A0:A9"`` (inclusive, in table order) into column names.

    Ranges need ``columns`` (the table's columns, in order). Mixed lists work: ``"id,A0:A3,S"``.
    """
    if spec is None:
        return []
    if not isinstance(spec, str) and not isinstance(spec, Iterable):  # (qi=5 was a TypeError, a traceback)
        raise InputError(f"a list of columns must be text such as 'a,b' or a list of names, got {type(spec).__name__} {spec!r}")
    parts = [p.strip() for p in spec.split(",")] if isinstance(spec, str) else [str(p) for p in spec]
    out: list[str] = []
    for part in parts:
        if not part:
            continue
        if ":" in part and columns is not None and part not in columns:
            lo, hi = (s.strip() for s in part.split(":", 1))
            cols = list(columns)
            for end in (lo, hi):
                if end not in cols:
                    raise InputError(f"column range {part!r}: unknown column {end!r}")
            i, j = cols.index(lo), cols.index(hi)
            if i > j:
                raise InputError(f"column range {part!r}: {lo!r} comes after {hi!r} in the table")
            out.extend(cols[i : j + 1])
        else:
            out.append(part)
    dupes = sorted({c for c in out if out.count(c) > 1})
    if dupes:
        raise InputError(f"column listed twice: {', '.join(dupes)}")
    return out


@dataclass
class ColumnRoles:
    """Which columns play which role. Fail closed: a column reaches a release only with a role
    that releases it.

    * ``identifying``: direct identifiers (names, ids); dropped from every release (``--drop``).
    * ``quasi_identifiers``: generalized until the privacy model holds.
    * ``sensitive``: released as they are (protected by l-diversity where requested).
    * ``insensitive``: declared safe to release unchanged (``--keep``, job key ``keep``); they are
      still screened for direct identifiers (:mod:`tempanon.data.screen`).
    * ``model``: the model's own columns (uid, time, series id), handled by the model.
    * any other column has no role and is *left out* of the release (the command says so).
    """

    quasi_identifiers: list[str]
    identifying: list[str] = field(default_factory=list)
    sensitive: list[str] = field(default_factory=list)
    insensitive: list[str] = field(default_factory=list)
    model: list[str] = field(default_factory=list)

    def validate(self, df: pd.DataFrame) -> None:
        if not self.quasi_identifiers:
            raise InputError("no quasi-identifier given")
        require_columns(df, self.quasi_identifiers, role="quasi-identifier")
        require_columns(df, self.identifying, role="identifying column")
        require_columns(df, self.sensitive, role="sensitive column")
        require_columns(df, self.insensitive, role="insensitive (--keep) column")
        seen: dict[str, str] = {}
        for role, cols in (
            ("quasi-identifier", self.quasi_identifiers),
            ("identifying", self.identifying),
            ("sensitive", self.sensitive),
            ("insensitive (--keep)", self.insensitive),
            ("model column", self.model),
        ):
            for c in cols:
                if c in seen and seen[c] != role:
                    raise InputError(f"column {c!r} is given two roles: {seen[c]} and {role}")
                seen[c] = role

    def left_out(self, columns: Iterable[str]) -> list[str]:
        """The columns of ``columns`` with no role: not released, reported as ``left_out``."""
        roled = {*self.quasi_identifiers, *self.identifying, *self.sensitive, *self.insensitive, *self.model}
        return [c for c in columns if c not in roled]


def plan_release(
    columns: Sequence[str],
    *,
    released: Sequence[str],
    keep: Sequence[str] = (),
    drop: Sequence[str] = (),
    consumed: Sequence[str] = (),
) -> tuple[list[str], list[str]]:
    """Fail-closed column plan: ``(release_columns, left_out)`` in table order.

    ``released`` are the model's released columns (quasi-identifiers, sensitive, time), ``keep`` the
    declared insensitive ones; ``drop`` (identifiers) and ``consumed`` (uid, series id) are accounted
    for but not released. Every other column is left out. Raises :class:`InputError` for unknown
    ``keep``/``drop`` columns and for a column given two of these roles.
    """
    require_columns_list(columns, keep, role="--keep column")
    require_columns_list(columns, drop, role="--drop column")
    model = set(released) | set(consumed)
    for c in keep:
        if c in model:
            raise InputError(f"column {c!r} already has a role in the model; do not list it in --keep")
        if c in drop:
            raise InputError(f"column {c!r} is listed in both --keep and --drop")
    for c in drop:
        if c in set(released):
            raise InputError(f"column {c!r} is released by the model; it cannot also be dropped (--drop)")
    out = set(released) | set(keep)
    accounted = out | set(drop) | set(consumed)
    return [c for c in columns if c in out], [c for c in columns if c not in accounted]


def require_columns_list(columns: Sequence[str], wanted: Iterable[str], *, role: str) -> None:
    """Like :func:`require_columns` for a plain list of column names."""
    cols = list(columns)
    missing = [c for c in wanted if c not in cols]
    if missing:
        raise InputError(
            f"unknown {role} {', '.join(repr(m) for m in missing)}; the input has columns: {', '.join(map(str, cols))}"
            + delimiter_hint(cols)
        )


def verification_statement(
    guarantee: str,
    checked_on: Sequence[str],
    *,
    insensitive: Sequence[str] = (),
    overrides: Sequence = (),
    left_out: Sequence[str] = (),
    dropped: Sequence[str] = (),
) -> dict:
    """What was verified, exactly (summary key ``verification``, the report, the CLI's last line):
    the guarantee, the columns it was checked on, the columns released unchanged only because the
    user declared them insensitive, and the identifier findings the user overrode."""
    return {
        "guarantee": guarantee,
        "checked_on": list(checked_on),
        "released_unchanged_declared_insensitive": list(insensitive),
        "identifier_overrides": [{"column": f.column, "reason": f.reason} for f in overrides],
        "left_out": list(left_out),
        "dropped": list(dropped),
    }


def statement_line(v: Mapping) -> str:
    """The one-line verified statement, e.g. ``verified: 5-anonymity on age, sex; released
    unchanged as declared insensitive (not verified): dx``."""
    line = f"verified: {v['guarantee']} on {', '.join(v['checked_on']) or '(no column)'}"
    if v.get("released_unchanged_declared_insensitive"):
        line += "; released unchanged as declared insensitive (not verified): " + ", ".join(
            v["released_unchanged_declared_insensitive"]
        )
    if v.get("identifier_overrides"):
        line += "; identifier screening overridden for: " + ", ".join(o["column"] for o in v["identifier_overrides"])
    return line


def left_out_line(left_out: Sequence[str], job: bool = False) -> str | None:
    """The stderr line naming the columns left out of the release (no role), or ``None``; ``job``: the
    run came from a job file, so the advice names its ``[columns]`` keys instead of the options."""
    if not left_out:
        return None
    how = ("give them a role in the job file's [columns] (quasi_identifiers, sensitive, keep: released "
           "unchanged, or identifying)") if job else (
        "declare them with --qi, --sensitive, --keep (released unchanged) or --drop")  # fmt: skip
    return f"left out (no role, not released): {', '.join(left_out)}; {how}"
