"""The report of a full-domain k-anonymity run (:func:`tempanon.kanon.kanonymize`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tempanon.hierarchy.core import as_text
from tempanon.metrics.risk import measure
from tempanon.report.html import Report
from tempanon.report.sections import guarantee_section, inputs_section, lattice_section, other_role, risk_section, utility_section


def attribute_losses(result: Any) -> list[tuple[str, int, str, float]]:
    """Per quasi-identifier ``(name, level, examples of released values, loss)``.

    The loss of an attribute is the mean over *input* records of the released cell's normalized
    loss (the hierarchy's ``(c - 1) / (L - 1)``), a suppressed record counting 1; their mean over
    the attributes is the run's normalized loss ``result.loss``.
    """
    out = []
    n = result.rows_in
    for q, d, v in zip(result.quasi_identifiers, result.dimensions, result.selected_node):
        text = as_text(result.table[q])
        idx = pd.Index(list(d.labels[v])).get_indexer(text)
        if (idx < 0).any():
            bad = text[np.flatnonzero(idx < 0)[0]]
            raise ValueError(f"released value {bad!r} of {q!r} is not a label of level {v}")
        total = float(d.loss[v][idx].sum()) + (n - len(result.table))
        shown = list(pd.unique(text))[:4]
        examples = ", ".join(map(str, shown)) + (", ..." if len(pd.unique(text)) > 4 else "")
        out.append((q, int(v), examples, total / n if n else 0.0))
    return out


def kanon_report(
    data: pd.DataFrame,
    result: Any,
    *,
    source: str,
    checksum: str | None,
    checksum_kind: str = "SHA-256 of the input file",
    parameters: Mapping[str, Any] | None = None,
    identifying: list[str] | None = None,
    threshold: float = 0.2,
) -> Report:
    """Build the report of ``result`` (a :class:`~tempanon.kanon.KAnonResult`) on input ``data``.

    The guarantee is re-checked here on the released table by
    :func:`tempanon.verify.check_k_anonymity` (independent of the search); risk measures come from
    :func:`tempanon.metrics.measure` on the input and on the release.
    """
    from tempanon import verify
    from tempanon.errors import VerificationError

    qi, uid = result.quasi_identifiers, result.uid
    identifying = list(identifying or [])
    roles = {}
    for c in data.columns:
        if c in qi:
            roles[c] = f"quasi-identifier (generalized, level {result.selected_levels[c]})"
        else:
            roles[c] = other_role(c, uid=uid, identifying=identifying, kept=getattr(result, "keep", ()),
                                  sensitive=[result.sensitive] if getattr(result, "sensitive", None) else [])
    params = {
        "model": "k-anonymity" + (" (respondent level)" if uid else ""),
        "k": result.k,
        "max_suppression": result.max_suppression,
        "algorithm": result.algorithm,
        "criterion": result.criterion,
        **(parameters or {}),
    }
    rep = Report(
        "tempanon report: full-domain k-anonymity",
        f"{source}: {result.rows_in:,} rows in, {len(result.table):,} released; k = {result.k}; {result.algorithm}",
    )
    rep.add(inputs_section(source=source, rows=result.rows_in, roles=roles, parameters=params, checksum=checksum, checksum_kind=checksum_kind))

    released = result.table
    check = released
    if uid is not None:
        check = released.assign(__uid__=data.loc[released.index, uid].to_numpy())
    try:
        verdict = verify.check_k_anonymity(check, qi, result.k, uid="__uid__" if uid else None, n_input=result.rows_in,
                                           max_suppressed=result.max_suppressed_rows)
        verified = True
    except VerificationError:
        verdict, verified = {}, False
    before = measure(data, qi, uid=uid, threshold=threshold)
    after = measure(check, qi, uid="__uid__" if uid else None, threshold=threshold)
    achieved = {"k": after.k, "suppressed rows": result.suppressed_rows}
    requested = {"k": result.k, "suppressed rows": f"<= {result.max_suppressed_rows}"}
    if uid:
        achieved["respondent-level k"] = after.respondent_k
        requested["respondent-level k"] = result.k
        requested["k"] = None
    achieved["classes"] = verdict.get("classes", after.classes)
    rep.add(guarantee_section(model="k-anonymity" + (" (respondent level)" if uid else ""), requested=requested, achieved=achieved,
                              verified=verified, class_sizes=after.class_sizes if len(released) else [], k=result.k,
                              what="respondents" if uid else "records"))
    rep.add(risk_section(before.as_dict(), after.as_dict(), threshold=threshold))
    rep.add(utility_section(
        attributes=attribute_losses(result),
        measures={"normalized loss": result.loss, "discernibility": result.discernibility, "selection criterion": f"{result.criterion} = {result.criterion_value:.6g}"},
        suppressed_rows=result.suppressed_rows,
        rows_in=result.rows_in,
    ))
    dims = result.dimensions
    rep.add(lattice_section(
        names=qi,
        n_levels=[d.n_levels for d in dims],
        anonymous=result.anonymous_nodes,
        minimal=result.minimal_nodes,
        selected=result.selected_node,
        nodes_checked=result.nodes_checked,
        parents=[d.parents for d in dims],
        heights=[d.heights for d in dims],
    ))
    return rep


__all__ = ["attribute_losses", "kanon_report"]
