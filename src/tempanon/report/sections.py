"""Report sections built from plain data, one function per kind of content.

Every capability assembles its report from these builders (k-anonymity in
:mod:`tempanon.report.kanon`; the timestamped, stream and time-series models call
:func:`granularity_section`, :func:`stream_section` and :func:`timeseries_section` with their
summaries). Each returns a :class:`~tempanon.report.html.Section` with a stable ``key``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tempanon.report import figures
from tempanon.report.html import MAX_TABLE_ROWS, Section

ROLE_TABLE_ROWS = 20
"""Columns listed one per row in "What went in"; wider tables get one row per role instead."""


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def frame_sha256(df: pd.DataFrame) -> str:
    """SHA-256 over the column names and pandas' per-row hashes of a table (for SQL sources)."""
    h = hashlib.sha256("\x1f".join(map(str, df.columns)).encode())
    h.update(pd.util.hash_pandas_object(df.astype(object), index=False).to_numpy().tobytes())
    return h.hexdigest()


def other_role(
    column: str, *, uid: str | None, identifying: Sequence[str], kept: Sequence[str] = (), sensitive: Sequence[str] = ()
) -> str:
    """The role text of an input column that is no quasi-identifier or time column of a release:
    the respondent id, a direct identifier, a sensitive column, a column declared insensitive
    (``kept``: released unchanged, not verified), or -- fail closed -- a column with no role, left
    out of the release."""
    if column == uid:
        return "respondent id (counts respondents; removed)"
    if column in identifying:
        return "direct identifier (removed)"
    if column in sensitive:
        return "sensitive (released as is)"
    if column in kept:
        return "insensitive, declared (released unchanged; not verified)"
    return "left out (no role; not released)"


def name_list(names: Sequence[Any], *, max_names: int = 8) -> str:
    """``a, b, c`` or, past ``max_names``, the first ones and ``... and N more``."""
    names = [str(n) for n in names]
    if len(names) <= max_names:
        return ", ".join(names)
    return ", ".join(names[: max_names - 1]) + f", ... and {len(names) - max_names + 1:,} more (last: {names[-1]})"


def role_groups(roles: Mapping[str, str], *, max_names: int = 8) -> list[tuple[str, str, int]]:
    """``(role, columns, count)`` per distinct role text, in order of first appearance: a table of
    one row per role instead of one per column (a wide input stays one screen)."""
    by: dict[str, list[str]] = {}
    for c, r in roles.items():
        by.setdefault(r, []).append(c)
    return [(r, name_list(cs, max_names=max_names), len(cs)) for r, cs in by.items()]


def inputs_section(
    *,
    source: str,
    rows: int,
    roles: Mapping[str, str],
    parameters: Mapping[str, Any],
    checksum: str | None,
    version: str | None = None,
    checksum_kind: str = "SHA-256 of the input file",
) -> Section:
    """What went in: source, rows, every column with its role, parameters, version, checksum."""
    if version is None:
        from tempanon import __version__ as version
    sec = Section("inputs", "What went in")
    sec.add_kv([("source", source), ("rows", rows), ("columns", len(roles)), ("tempanon version", version), (checksum_kind, checksum or "n/a")])
    sec.add_heading("Columns and their roles")
    if len(roles) <= ROLE_TABLE_ROWS:
        sec.add_table(["column", "role"], [(c, r) for c, r in roles.items()], max_rows=None)
    else:
        sec.add_table(["role", "columns", "count"], role_groups(roles), max_rows=None,
                      caption=f"{len(roles):,} columns, grouped by role")
    sec.add_heading("Parameters")
    sec.add_kv({k: v for k, v in parameters.items()})
    return sec


def guarantee_section(
    *,
    model: str,
    requested: Mapping[str, Any],
    achieved: Mapping[str, Any],
    verified: bool,
    class_sizes: Sequence[int] | np.ndarray,
    k: int | None,
    what: str = "records",
    checker: str = "tempanon.verify",
    class_counts: Sequence[int] | np.ndarray | None = None,
) -> Section:
    """The privacy guarantee as requested and as achieved, the verifier's verdict, and a histogram
    of class (or group) sizes with ``k`` marked (``class_counts``: classes per entry of
    ``class_sizes``, a histogram's counts; ``None``: one each)."""
    sec = Section("guarantee", "The guarantee, verified")
    sec.add_status(verified, f"{model}: {'verified' if verified else 'NOT verified'} on the released table by the independent checker ({checker}).")
    names = list(dict.fromkeys([*requested, *achieved]))
    sec.add_table(["measure", "requested", "achieved"], [(n, requested.get(n), achieved.get(n)) for n in names])
    sizes = np.asarray(class_sizes)
    n_classes = len(sizes) if class_counts is None else int(np.asarray(class_counts).sum())
    sec.add_figure(
        figures.class_size_histogram(sizes, k, what=what, counts=class_counts),
        f"Sizes of the {n_classes:,} released equivalence classes (in {what}); none may lie left of the dashed line.",
    )
    return sec


_RISK_ROWS = (
    ("k", "k (smallest class)"),
    ("respondent_k", "respondent-level k"),
    ("l_distinct", "distinct l"),
    ("l_frequency", "frequency l"),
    ("classes", "equivalence classes"),
    ("uniques", "unique records"),
    ("prosecutor_risk_max", "prosecutor risk, max"),
    ("prosecutor_risk_mean", "prosecutor risk, mean"),
    ("records_at_risk", "records at risk"),
)


def risk_section(before: Mapping[str, Any], after: Mapping[str, Any], *, threshold: float) -> Section:
    """Re-identification risk of the input and of the release (``RiskSummary.as_dict()`` shapes)."""
    sec = Section("risk", "Re-identification risk before and after")
    sec.add_text(
        f"Prosecutor risk of a record is 1 / (size of its equivalence class): the chance that an attacker who knows the "
        f"person is in the table and knows their quasi-identifiers picks the right record. 'Records at risk' are those "
        f"with a risk above {threshold:g}."
    )
    rows = [(label, before.get(key), after.get(key)) for key, label in _RISK_ROWS if before.get(key) is not None or after.get(key) is not None]
    sec.add_table(["measure", "input", "release"], rows)
    keys = {"prosecutor_risk_max": "max risk", "prosecutor_risk_mean": "mean risk", "records_at_risk": f"share > {threshold:g}"}
    uniq_b = before["uniques"] / before["rows"] if before.get("rows") else None
    uniq_a = after["uniques"] / after["rows"] if after.get("rows") else None
    sec.add_figure(
        figures.risk_comparison(
            {**{lab: before.get(k) for k, lab in keys.items()}, "share unique": uniq_b},
            {**{lab: after.get(k) for k, lab in keys.items()}, "share unique": uniq_a},
        ),
        "Prosecutor risk and uniqueness of the input (yellow) and of the release (blue).",
    )
    return sec


def utility_section(
    *,
    attributes: Sequence[tuple[str, Any, Any, float]],
    measures: Mapping[str, Any],
    suppressed_rows: int,
    rows_in: int,
    loss_caption: str | None = None,
) -> Section:
    """Per attribute ``(name, level, level label, loss)``, the run's loss measures, suppression. ``loss_caption``:
    what the attributes' loss is, under its figure (default: the hierarchy loss of full-domain generalization;
    the kp and stream reports measure another loss and said so only below a caption contradicting it)."""
    sec = Section("utility", "Utility: what the release keeps")
    sec.add_kv({"suppressed rows": f"{suppressed_rows:,} of {rows_in:,} ({(suppressed_rows / rows_in if rows_in else 0):.2%})", **measures})
    sec.add_table(["attribute", "level", "generalized to", "loss"], attributes, max_rows=MAX_TABLE_ROWS // 2,
                  rest="the figure below shows the loss of every attribute")
    sec.add_figure(
        figures.attribute_loss_bars([a[0] for a in attributes], [float(a[3]) for a in attributes], [str(a[1]) for a in attributes]),
        loss_caption or "Generalization loss per attribute: the mean over records of (c - 1) / (L - 1), c the hierarchy "
        "leaves the released value covers, L all leaves; suppressed records count 1.",
    )
    return sec


def lattice_section(
    *,
    names: Sequence[str],
    n_levels: Sequence[int],
    anonymous: Sequence[Sequence[int]],
    minimal: Sequence[Sequence[int]],
    selected: Sequence[int],
    level_labels: Mapping[str, str] | None = None,
    nodes_checked: int | None = None,
    parents: Sequence[Sequence[Sequence[int]]] | None = None,
    heights: Sequence[Sequence[int]] | None = None,
) -> Section:
    """The search lattice: anonymous (light green), minimal (dark green) and selected (red) nodes."""
    size = int(np.prod([int(n) for n in n_levels]))
    sec = Section("lattice", "The generalization lattice")
    sec.add_text(
        f"{size:,} full-domain generalizations (nodes); {len(anonymous):,} are anonymous, {len(minimal):,} of them minimal"
        + (f"; the search checked {nodes_checked:,}." if nodes_checked is not None else ".")
    )
    sec.add_figure(
        figures.lattice_diagram(n_levels, anonymous, minimal, selected, names=names, parents=parents, heights=heights),
        "Grey: not anonymous; light green: anonymous; dark green: minimal anonymous; red: the released node.",
    )
    rows = [("selected" if tuple(m) == tuple(selected) else "", *m) for m in minimal]
    rows.sort(key=lambda r: r[0] != "selected")  # the released node first, whatever the cap
    sec.add_table(["released?", *names], rows, caption="minimal anonymous nodes (levels per attribute)", max_rows=12)
    if level_labels:
        sec.add_kv({f"released level of {k}": v for k, v in level_labels.items()})
    return sec


def granularity_section(*, nodes: Sequence[str], edges: Sequence[tuple[str, str]], chosen: Sequence[str] | str, feasible: Sequence[str] = (), note: str | None = None) -> Section:
    """The time-granularity DAG (finer -> coarser edges) with the chosen granularity in red."""
    sec = Section("granularities", "Time granularities")
    chosen_list = [chosen] if isinstance(chosen, str) else list(chosen)
    sec.add_text(f"Chosen granularity: {', '.join(chosen_list)}." + (f" {note}" if note else ""))
    sec.add_figure(figures.dag_diagram(nodes, edges, chosen=chosen_list, feasible=feasible),
                   "Granularities ordered from finer (bottom) to coarser (top); red: chosen; green: also sufficient.")
    return sec


def stream_section(*, labels: Sequence[Any], sizes: Sequence[int], suppressed: Sequence[int], distances: Sequence[float] | None = None) -> Section:
    """Snapshot timeline: released and suppressed tuples per snapshot, reposition distances."""
    sec = Section("stream", "Snapshot timeline")
    tot_s = int(np.sum(suppressed))
    tot = int(np.sum(sizes)) + tot_s
    sec.add_kv({"snapshots": len(labels), "tuples": tot, "suppressed tuples": tot_s,
                **({"mean reposition distance": float(np.mean(distances)) if len(distances) else None} if distances is not None else {})})
    bins = len(figures.bin_edges(len(labels)))
    binned = (f" Bars are bins of {-(-len(labels) // bins):,} consecutive snapshots ({bins} bins; tuples summed, distances averaged)."
              if bins < len(labels) else "")
    sec.add_figure(figures.stream_timeline(labels, sizes, suppressed, distances),
                   "Per snapshot: released (blue) and suppressed (red) tuples" + ("; below, the reposition distance." if distances is not None else ".") + binned)
    return sec


def timeseries_section(*, groups: Sequence[Mapping[str, Any]], k: int | None = None, p: int | None = None, measures: Mapping[str, Any] | None = None) -> Section:
    """A few (k,P) groups drawn as envelopes with their members and reconstructed patterns."""
    sec = Section("timeseries", "Time-series groups")
    # a group's series: its "size" when given (a k-group drawn from the release has only its envelope's two
    # bounds as "members": the report said "smallest group drawn 2" for every (10,5) release)
    sizes = [int(g["size"]) if g.get("size") is not None else len(np.atleast_2d(np.asarray(g["members"]))) for g in groups]
    sec.add_kv({"k": k, "P": p, "groups drawn": min(len(groups), 6), "smallest group drawn": min(sizes) if sizes else None, **(measures or {})})
    sec.add_figure(figures.series_envelopes(groups),
                   "Each panel: one group's envelope (shaded), its members (blue) and their reconstructed patterns (red, dashed).")
    return sec


__all__ = [
    "MAX_TABLE_ROWS",
    "ROLE_TABLE_ROWS",
    "file_sha256",
    "name_list",
    "role_groups",
    "frame_sha256",
    "granularity_section",
    "guarantee_section",
    "inputs_section",
    "lattice_section",
    "risk_section",
    "stream_section",
    "timeseries_section",
    "utility_section",
]


def verification_section(statement: Mapping[str, Any]) -> Section:
    """What was verified, exactly (issue 12): the guarantee and the columns it was checked on, the
    columns released unchanged only because the user declared them insensitive (not verified), the
    identifier findings the user overrode, and the columns left out or dropped. ``statement`` is the
    summary's ``verification`` (:func:`tempanon.data.roles.verification_statement`)."""
    sec = Section("verification", "What was verified")
    sec.add_text(
        f"Verified: {statement['guarantee']}, on the columns {name_list(statement['checked_on']) or '(none)'}. "
        "Nothing else in the release was verified."
    )
    rows = [
        ("released unchanged, declared insensitive (not verified)", name_list(statement.get("released_unchanged_declared_insensitive") or []) or "none"),
        ("identifier screening overridden by the user",
         "; ".join(f"{o['column']} ({o['reason']})" for o in statement.get("identifier_overrides") or []) or "none"),
        ("left out (no role, not released)", name_list(statement.get("left_out") or []) or "none"),
        ("dropped as identifiers", name_list(statement.get("dropped") or []) or "none"),
    ]
    sec.add_table(["columns", "which"], rows)
    return sec


def add_verification(report: Any, statement: Mapping[str, Any] | None) -> None:
    """Put :func:`verification_section` right after the report's guarantee section (or first)."""
    if report is None or statement is None:
        return
    keys = report.section_keys()
    at = keys.index("guarantee") + 1 if "guarantee" in keys else 0
    report.sections.insert(at, verification_section(statement))
