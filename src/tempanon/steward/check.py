"""``check``: the k, respondent-level k, l, uniques and prosecutor risk of a table as it is, and
whether it meets requested levels (to gate a release in a pipeline).

The measures are defined in :mod:`tempanon.metrics.risk`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tempanon.errors import InputError
from tempanon.metrics.risk import RiskSummary, class_codes, measure

L_MODELS = ("distinct", "frequency", "entropy")

JSON_KEYS = ("k", "respondent_k", "l_distinct", "l_frequency", "uniques", "prosecutor_risk_max", "prosecutor_risk_mean")


@dataclass
class CheckResult:
    """Measures of a table and the requested levels it misses (``failures``, in user terms)."""

    risk: RiskSummary
    quasi_identifiers: list[str]
    uid: str | None
    sensitive: list[str]
    k_requested: int | None
    l_requested: int | None
    l_model: str
    failures: list[str] = field(default_factory=list)
    identifier_findings: list = field(default_factory=list)  # other columns that look like direct identifiers

    @property
    def ok(self) -> bool:
        return not self.failures

    def as_dict(self) -> dict:
        """The ``--json`` object: the keys of :data:`JSON_KEYS` first, then the details."""
        r = self.risk.as_dict()
        out = {key: r[key] for key in JSON_KEYS}
        out.update(
            {
                "l_entropy": r["l_entropy"],
                "rows": r["rows"],
                "classes": r["classes"],
                "respondents": r["respondents"],
                "records_at_risk": r["records_at_risk"],
                "risk_threshold": r["risk_threshold"],
                "quasi_identifiers": self.quasi_identifiers,
                "uid": self.uid,
                "sensitive": self.sensitive,
                "k_requested": self.k_requested,
                "l_requested": self.l_requested,
                "l_model": self.l_model,
                "ok": self.ok,
                "failures": self.failures,
                "identifier_findings": [{"column": f.column, "reason": f.reason} for f in self.identifier_findings],
            }
        )
        return out


def _example_class(df: pd.DataFrame, qi: Sequence[str], sizes_per_record: np.ndarray, target: int) -> str:
    """Values of the first record whose class has the failing size, e.g. ``age=39, sex=M``."""
    i = int(np.flatnonzero(sizes_per_record == target)[0])
    row = df.iloc[i]
    parts = []
    for q in qi:
        v = row[q]
        parts.append(f"{q}={'<missing>' if pd.isna(v) else v}")
    return ", ".join(parts) + f" (line {i + 2})"  # the file line (header = line 1)


def check_table(
    df: pd.DataFrame,
    qi: Sequence[str],
    *,
    uid: str | None = None,
    sensitive: Sequence[str] = (),
    k: int | None = None,
    l: int | None = None,
    l_model: str = "distinct",
    threshold: float = 0.2,
) -> CheckResult:
    """Measure ``df`` (see :func:`tempanon.metrics.measure`) and compare with the requested levels.

    With ``uid`` the requested ``k`` is checked against the respondent-level k (distinct
    respondents per class), as ``tempanon kanon --uid`` guarantees it; ``l`` is checked against
    the l of ``l_model`` (``distinct``, ``frequency`` or ``entropy``) and needs ``sensitive``.
    """
    if k is not None and (isinstance(k, bool) or int(k) < 1):
        raise InputError(f"--k must be a positive integer, got {k}")
    if l is not None and (isinstance(l, bool) or int(l) < 1):
        raise InputError(f"--l must be a positive integer, got {l}")
    if l_model not in L_MODELS:
        raise InputError(f"unknown l-diversity model {l_model!r}; expected one of {', '.join(L_MODELS)}")
    if l is not None and not sensitive:
        raise InputError("--l needs a sensitive column (--sensitive)")
    risk = measure(df, qi, uid=uid, sensitive=sensitive, threshold=threshold)
    res = CheckResult(risk, list(qi), uid, list(sensitive), k, l, l_model)
    from tempanon.data.screen import screen_columns

    # the same identifier screening as every command: columns beside the measured ones that look identifying
    others = [c for c in df.columns if c not in {*qi, *sensitive, uid}]
    res.identifier_findings = screen_columns(df, others, uid=uid)
    if risk.rows == 0:
        if k is not None or l is not None:
            res.failures.append("the table has no rows, so no level can be checked")
        return res
    if k is not None:
        got = risk.respondent_k if uid else risk.k
        if got < k:
            what = "respondents" if uid else "records"
            small = int((risk.class_sizes < k).sum())
            cls, _ = class_codes(df, qi)
            per_record = risk.class_sizes[cls]
            res.failures.append(
                f"{'respondent-level ' if uid else ''}k is {got}, below the requested {k}: {small} of {risk.classes} "
                f"classes have fewer than {k} {what}; the smallest, with {got}, is "
                f"{_example_class(df, qi, per_record, got)}"
            )
    if l is not None:
        got_l = {"distinct": risk.l_distinct, "frequency": risk.l_frequency, "entropy": risk.l_entropy}[l_model]
        if got_l < l:
            from tempanon.metrics.risk import l_of_classes

            cls, per_class = l_of_classes(df, qi, sensitive, l_model)
            res.failures.append(
                f"{l_model} l-diversity of {', '.join(sensitive)} is {got_l}, below the requested {l}: "
                f"{int((per_class < l).sum())} of {risk.classes} classes have l below {l}; the least diverse, "
                f"with l = {got_l}, is {_example_class(df, qi, per_class[cls], got_l)}"
            )
    return res


def attach_audit(df: pd.DataFrame, audit: str, uid: str | None) -> pd.DataFrame:
    """The release ``df`` with column ``uid`` holding each row's respondent, taken from the
    steward-only audit of ``tempanon timestamped --audit`` (release_row is the 1-based data row),
    so that respondent-level k can be re-checked on a release that does not carry the uid."""
    from tempanon.temporal.api import read_audit

    if uid is None:
        raise InputError("--audit gives the respondents of each release row: name their column with --uid")
    if uid in df.columns:
        raise InputError(f"--uid {uid!r} is already a column of the table; with --audit name a new column")
    a = read_audit(audit)
    rows = pd.to_numeric(a["release_row"], errors="coerce")
    if len(a) != len(df) or rows.isna().any() or not (rows.to_numpy() == np.arange(1, len(df) + 1)).all():
        raise InputError(f"the audit {audit} lists {len(a)} release rows, the table has {len(df)}: "
                         f"it is not this release's audit")
    out = df.copy()
    out[uid] = a["respondent"].to_numpy()
    return out


__all__ = ["CheckResult", "JSON_KEYS", "L_MODELS", "attach_audit", "check_table"]
