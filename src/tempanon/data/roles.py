"""Column roles (identifying, quasi-identifier, sensitive, insensitive) and column validation."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from tempanon.errors import InputError


def require_columns(df: pd.DataFrame, columns: Iterable[str], *, role: str = "column") -> None:
    """Raise :class:`InputError` naming every column of ``columns`` missing from ``df``."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        available = ", ".join(map(str, df.columns))
        raise InputError(
            f"unknown {role} {', '.join(repr(m) for m in missing)}; the input has columns: {available}"
        )


def parse_column_list(spec: str | Sequence[str] | None, columns: Sequence[str] | None = None) -> list[str]:
    """Parse ``"a,b,c"`` or a range ``"A0:A9"`` (inclusive, in table order) into column names.

    Ranges need ``columns`` (the table's columns, in order). Mixed lists work: ``"id,A0:A3,S"``.
    """
    if spec is None:
        return []
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
    """Which columns play which role.

    * ``identifying``: direct identifiers (names, ids); dropped from every release.
    * ``quasi_identifiers``: generalized until the privacy model holds.
    * ``sensitive``: released as they are (protected by l-diversity where requested).
    * every other column is insensitive and released unchanged.
    """

    quasi_identifiers: list[str]
    identifying: list[str] = field(default_factory=list)
    sensitive: list[str] = field(default_factory=list)

    def validate(self, df: pd.DataFrame) -> None:
        if not self.quasi_identifiers:
            raise InputError("no quasi-identifier given")
        require_columns(df, self.quasi_identifiers, role="quasi-identifier")
        require_columns(df, self.identifying, role="identifying column")
        require_columns(df, self.sensitive, role="sensitive column")
        seen: dict[str, str] = {}
        for role, cols in (("quasi-identifier", self.quasi_identifiers), ("identifying", self.identifying), ("sensitive", self.sensitive)):
            for c in cols:
                if c in seen and seen[c] != role:
                    raise InputError(f"column {c!r} is given two roles: {seen[c]} and {role}")
                seen[c] = role
