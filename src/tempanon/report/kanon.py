"""The report of a full-domain k-anonymity run (:func:`tempanon.kanon.kanonymize`).

Every number in the report comes from aggregates of the input and of the release: class
aggregates (:class:`~tempanon.metrics.risk.ClassAggregates`: records, respondents and sensitive
value counts per equivalence class) for the guarantee's re-check and the risk measures, and the
record count of every released value of each quasi-identifier for the attribute losses. With the
table in memory (:func:`kanon_report`) they are computed in numpy from the DataFrames; when the rows
stay in an engine (:func:`kanon_report_from_aggregates`, ``tempanon kanon --engine duckdb|spark
--report``) the engine computes them by ``GROUP BY`` on the input and on the release as written
(:meth:`~tempanon.lattice.source_duckdb.SQLSource.input_aggregates`,
:meth:`~tempanon.lattice.source_duckdb.SQLSource.release_aggregates`). Both go through the same
functions, so the same run gives the same numbers on either path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tempanon.hierarchy.core import as_text
from tempanon.metrics.risk import ClassAggregates, RiskSummary, measure
from tempanon.report.html import Report
from tempanon.report.sections import guarantee_section, inputs_section, lattice_section, other_role, risk_section, utility_section


def attribute_loss(result: Any, i: int, labels: Sequence[Any], counts: Sequence[int]) -> float:
    """The loss of quasi-identifier ``i`` from its released values ``labels`` (text) and their
    record counts: the mean over *input* records of the released cell's normalized loss (the
    hierarchy's ``(c - 1) / (L - 1)``), a suppressed record counting 1. Summed per released value,
    exactly rounded (``math.fsum``): the same float whatever the order of the values."""
    q, d, v = result.quasi_identifiers[i], result.dimensions[i], result.selected_node[i]
    n = result.rows_in
    labels = np.asarray(labels, dtype=object)
    idx = pd.Index([str(x) for x in d.labels[v]]).get_indexer(labels)
    if (idx < 0).any():
        bad = labels[np.flatnonzero(idx < 0)[0]]
        raise ValueError(f"released value {bad!r} of {q!r} is not a label of level {v}")
    counts = np.asarray(counts, dtype=np.int64)
    rows_out = int(counts.sum())
    total = math.fsum(float(x) * int(c) for x, c in zip(d.loss[v][idx], counts)) + (n - rows_out)
    return total / n if n else 0.0


def _examples(d: Any, v: int, labels: Sequence[Any]) -> str:
    """The released values ``labels`` of dimension ``d`` at level ``v`` in the hierarchy level's order
    (a value not in the level, such as missing, first), the first four shown: the same on every
    engine and every run (in the release's order they followed the secret shuffle of its rows)."""
    order = pd.Index([str(x) for x in d.labels[v]]).get_indexer(np.asarray(labels, dtype=object))
    shown = [labels[j] for j in np.argsort(order, kind="stable")]
    return ", ".join(map(str, shown[:4])) + (", ..." if len(shown) > 4 else "")


def attribute_losses(result: Any) -> list[tuple[str, int, str, float]]:
    """Per quasi-identifier ``(name, level, examples of released values, loss)`` of an in-memory
    release (``result.table``; examples in the hierarchy level's order, :func:`_examples`). The loss is
    :func:`attribute_loss`; their mean over the attributes is the run's normalized loss
    ``result.loss``."""
    out = []
    for i, (q, d, v) in enumerate(zip(result.quasi_identifiers, result.dimensions, result.selected_node)):
        codes, uniq = pd.factorize(pd.Series(as_text(result.table[q]), dtype=object))
        counts = np.bincount(codes, minlength=len(uniq)) if len(codes) else np.zeros(0, dtype=np.int64)
        loss = attribute_loss(result, i, np.asarray(uniq, dtype=object), counts)
        out.append((q, int(v), _examples(d, v, list(uniq)), loss))
    return out


def attribute_losses_from_counts(result: Any, values: Sequence[tuple[Sequence[Any], Sequence[int]]]) -> list[tuple[str, int, str, float]]:
    """:func:`attribute_losses` from each quasi-identifier's released values and their record
    counts (``values[i] = (labels, counts)``, any order), as an engine returns them; examples in
    the hierarchy level's order."""
    out = []
    for i, (q, d, v) in enumerate(zip(result.quasi_identifiers, result.dimensions, result.selected_node)):
        labels, counts = values[i]
        loss = attribute_loss(result, i, labels, counts)
        out.append((q, int(v), _examples(d, v, list(labels)), loss))
    return out


def _roles(columns: Sequence[str], result: Any, identifying: list[str]) -> dict[str, str]:
    qi, uid = result.quasi_identifiers, result.uid
    roles = {}
    for c in columns:
        if c in qi:
            roles[c] = f"quasi-identifier (generalized, level {result.selected_levels[c]})"
        else:
            roles[c] = other_role(c, uid=uid, identifying=identifying, kept=getattr(result, "keep", ()),
                                  sensitive=[result.sensitive] if getattr(result, "sensitive", None) else [])
    return roles


def _assemble(
    result: Any,
    *,
    columns: Sequence[str],
    rows_out: int,
    before: RiskSummary,
    after: RiskSummary,
    verdict: Mapping[str, Any],
    verified: bool,
    losses: list[tuple[str, int, str, float]],
    source: str,
    checksum: str | None,
    checksum_kind: str,
    parameters: Mapping[str, Any] | None,
    identifying: list[str],
    threshold: float,
    checker: str = "tempanon.verify",
) -> Report:
    qi, uid = result.quasi_identifiers, result.uid
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
        f"{source}: {result.rows_in:,} rows in, {rows_out:,} released; k = {result.k}; {result.algorithm}",
    )
    rep.add(inputs_section(source=source, rows=result.rows_in, roles=_roles(columns, result, identifying), parameters=params,
                           checksum=checksum, checksum_kind=checksum_kind))  # fmt: skip
    achieved = {"k": after.k, "suppressed rows": result.suppressed_rows}
    requested = {"k": result.k, "suppressed rows": f"<= {result.max_suppressed_rows}"}
    if uid:
        achieved["respondent-level k"] = after.respondent_k
        requested["respondent-level k"] = result.k
        requested["k"] = None
    achieved["classes"] = verdict.get("classes", after.classes)
    rep.add(guarantee_section(model="k-anonymity" + (" (respondent level)" if uid else ""), requested=requested, achieved=achieved,
                              verified=verified, class_counts=after.class_counts, class_sizes=after.class_sizes if rows_out else [], k=result.k,
                              what="respondents" if uid else "records", checker=checker))  # fmt: skip
    rep.add(risk_section(before.as_dict(), after.as_dict(), threshold=threshold))
    rep.add(utility_section(
        attributes=losses,
        measures={"normalized loss": result.loss, "discernibility": result.discernibility, "selection criterion": f"{result.criterion} = {result.criterion_value:.6g}"},
        suppressed_rows=result.suppressed_rows,
        rows_in=result.rows_in,
    ))  # fmt: skip
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
    ))  # fmt: skip
    return rep


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
    released = result.table
    check = released
    if uid is not None:
        check = released.assign(__uid__=data.loc[released.index, uid].to_numpy())
    try:
        verdict = verify.check_k_anonymity(check, qi, result.k, uid="__uid__" if uid else None, n_input=result.rows_in,
                                           max_suppressed=result.max_suppressed_rows)  # fmt: skip
        verified = True
    except VerificationError:
        verdict, verified = {}, False
    before = measure(data, qi, uid=uid, threshold=threshold)
    after = measure(check, qi, uid="__uid__" if uid else None, threshold=threshold)
    from tempanon.data.io import table_columns

    return _assemble(result, columns=table_columns(data), rows_out=len(released), before=before, after=after, verdict=verdict,
                     verified=verified, losses=attribute_losses(result), source=source, checksum=checksum,
                     checksum_kind=checksum_kind, parameters=parameters, identifying=list(identifying or []), threshold=threshold)  # fmt: skip


def recheck_k(after: ClassAggregates, result: Any) -> dict:
    """The guarantee re-checked on the release's class aggregates (what
    :func:`tempanon.verify.check_k_anonymity` checks on a table): every class has at least ``k``
    records (``k`` distinct respondents with a respondent id), and at most the allowed number of
    input rows is missing. Raises :class:`~tempanon.errors.VerificationError`."""
    from tempanon.errors import VerificationError

    sizes = np.asarray(after.sizes if after.respondents_per_class is None else after.respondents_per_class, dtype=np.int64)
    per = np.ones(len(sizes), dtype=np.int64) if after.classes is None else np.asarray(after.classes, dtype=np.int64)
    if len(sizes) and int(sizes.min()) < result.k:
        what = "respondents" if after.respondents_per_class is not None else "rows"
        raise VerificationError(f"output is not {result.k}-anonymous: {int(per[sizes < result.k].sum())} equivalence class(es) have "
                                f"fewer than {result.k} {what}")  # fmt: skip
    rows_out = after.rows
    suppressed = result.rows_in - rows_out
    if suppressed < 0:
        raise VerificationError(f"output has {rows_out} rows, more than the {result.rows_in} input rows")
    if suppressed > result.max_suppressed_rows:
        raise VerificationError(f"output suppresses {suppressed} rows, more than the allowed {result.max_suppressed_rows}")
    return {"k": result.k, "classes": after.n_classes, "min_class_size": int(sizes.min()) if len(sizes) else None,
            "suppressed_rows": suppressed}  # fmt: skip


def kanon_report_from_aggregates(
    result: Any,
    *,
    columns: Sequence[str],
    before: ClassAggregates,
    after: ClassAggregates,
    values: Sequence[tuple[Sequence[Any], Sequence[int]]],
    source: str,
    checksum: str | None,
    checksum_kind: str = "SHA-256 of the input file",
    parameters: Mapping[str, Any] | None = None,
    identifying: list[str] | None = None,
    threshold: float = 0.2,
    checker: str = "class counts of the written release",
) -> Report:
    """The report of ``result`` when the rows stayed in an engine: from the class aggregates of the
    input (``before``) and of the release as written (``after``), and each quasi-identifier's
    released values with their record counts (``values``), all computed by the engine
    (:meth:`~tempanon.lattice.source_duckdb.SQLSource.input_aggregates`,
    :meth:`~tempanon.lattice.source_duckdb.SQLSource.release_aggregates`). ``columns`` are the
    input's columns. The guarantee is re-checked on ``after`` by :func:`recheck_k`. Same sections
    and numbers as :func:`kanon_report` on the same run (the examples of released values in the
    hierarchy level's order on both)."""
    from tempanon.errors import VerificationError

    try:
        verdict, verified = recheck_k(after, result), True
    except VerificationError:
        verdict, verified = {}, False
    return _assemble(result, columns=list(columns), rows_out=after.rows, before=before.risk(threshold),
                     after=after.risk(threshold), verdict=verdict, verified=verified, losses=attribute_losses_from_counts(result, values),
                     source=source, checksum=checksum, checksum_kind=checksum_kind, parameters=parameters,
                     identifying=list(identifying or []), threshold=threshold, checker=checker)  # fmt: skip


__all__ = ["attribute_loss", "attribute_losses", "attribute_losses_from_counts", "kanon_report", "kanon_report_from_aggregates", "recheck_k"]
