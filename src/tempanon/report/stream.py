"""The report of a snapshot-stream run (:func:`tempanon.stream.api.anonymize_stream`).

Wang, Xu, Wong, Fu (ICDM 2010), "Anonymizing temporal data" (snapshot streams with bounded
delay): every published snapshot is an Anatomy release (quasi-identifier table QIT and sensitive
table ST) whose groups are l-eligible (no sensitive value on more than 1/l of a group,
Definition 2); records may be repositioned up to ``w`` snapshots later or suppressed, at minimum
information loss IL (Equation 2). The picture is the snapshot timeline: released and suppressed
records per snapshot and the reposition distances. Sections come from the shared builders of
:mod:`tempanon.report.sections`.

The guarantee is re-counted here on the released STs (per snapshot and group: size, largest
count, so the achieved l of every published snapshot), independently of the publisher; the
verdict of :func:`tempanon.verify.check_anatomy` (run by the API before anything is returned) is
shown next to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tempanon.metrics.risk import measure
from tempanon.report import figures
from tempanon.report.html import Report
from tempanon.report.sections import guarantee_section, inputs_section, risk_section, stream_section, utility_section


def group_table(st: pd.DataFrame, sensitive: str) -> pd.DataFrame:
    """Per released (snapshot, group): ``size``, ``largest`` (count of its most frequent sensitive
    value), ``distinct`` values and ``l`` = ``floor(size / largest)`` (frequency l, Anatomy)."""
    if len(st) == 0:
        return pd.DataFrame(columns=["snapshot", "group", "size", "largest", "distinct", "l"])
    g = st.groupby(["snapshot", "group"], sort=False)["count"]
    out = pd.DataFrame({"size": g.sum(), "largest": g.max(), "distinct": g.size()}).reset_index()
    out["l"] = out["size"] // out["largest"]
    return out


def l_per_snapshot(groups: pd.DataFrame, labels: Sequence[str]) -> np.ndarray:
    """Achieved frequency l of each snapshot in ``labels`` (its smallest group l; 0 for a snapshot
    published empty)."""
    by = groups.groupby("snapshot", sort=False)["l"].min() if len(groups) else pd.Series(dtype=np.int64)
    return by.reindex(list(labels)).fillna(0).to_numpy(dtype=np.int64)


def _l_figure(labels: Sequence[str], ls: np.ndarray, l: int) -> str:
    fig, axes = figures.new_figure(10, 2.4)
    ax = axes[0, 0]
    starts = figures.bin_edges(len(labels))  # many snapshots: bins of consecutive ones, their smallest l
    ls, labels = figures.reduce_bins(ls, starts, "min"), figures.bin_labels(labels, starts)
    x = np.arange(len(labels))
    ax.bar(x, ls, color=figures.COLORS["after"], label="achieved l (smallest group)")
    ax.axhline(l, color=figures.COLORS["selected"], ls="--", lw=1.2, label=f"requested l = {l}")
    ax.set_ylabel("l")
    figures.sparse_ticks(ax, x, labels)
    ax.legend(frameon=False, fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    return figures.to_svg(fig)


def _largest_share(df: pd.DataFrame, keys: Sequence[str], sensitive: str, counts: str | None = None) -> float | None:
    """Largest share of one sensitive value among records equal on ``keys`` (missing = a value)."""
    if len(df) == 0:
        return None
    d = df[[*keys, sensitive] + ([counts] if counts else [])].astype({c: object for c in [*keys, sensitive]})
    d = d.fillna({c: "\x00<NA>" for c in [*keys, sensitive]})
    w = d[counts] if counts else pd.Series(1, index=d.index)
    per_value = w.groupby([d[c] for c in [*keys, sensitive]], sort=False).sum()
    per_class = per_value.groupby(level=list(range(len(keys))), sort=False)
    return float((per_class.max() / per_class.sum()).max())


def stream_report(
    data: pd.DataFrame,
    result: Any,
    *,
    source: str,
    checksum: str | None,
    checksum_kind: str = "SHA-256 of the input file",
    parameters: Mapping[str, Any] | None = None,
    threshold: float = 0.2,
) -> Report:
    """Build the report of ``result`` (a :class:`~tempanon.stream.api.StreamResult` with its
    ``qit``/``st`` tables, i.e. from :func:`~tempanon.stream.api.anonymize_stream`) on ``data``."""
    data = data.reset_index(drop=True)
    s = result.summary
    time, sens, qi = s["time"], s["sensitive"], list(s["qi"])
    l, w = int(s["l"]), int(s["window"])
    n = len(data)
    qit, st = result.qit, result.st
    if qit is None or st is None:
        raise ValueError("the stream report needs the release tables (anonymize_stream, not the JSON-lines stream)")
    per = s["per_snapshot"]
    labels = [p["snapshot"] for p in per]
    published = [p["snapshot"] for p in per if p["published"]]

    roles = {}
    for c in data.columns:
        if c == time:
            roles[c] = f"time (cut into snapshots by {s['snapshot_unit']}; not published)"
        elif c == sens:
            roles[c] = "sensitive (published per Anatomy group in the ST)"
        elif c in qi:
            roles[c] = "quasi-identifier (published unchanged in the QIT)"
        else:
            roles[c] = "other (not published)"
    params = {
        "model": "l-diversity of a snapshot stream with bounded delay (Anatomy per snapshot)",
        "l": l,
        "window w (largest delay, snapshots)": w,
        "snapshot unit": s["snapshot_unit"],
        "reposition cost": s["cost"],
        **(parameters or {}),
    }
    rep = Report(
        "tempanon report: l-diverse snapshot stream",
        f"{source}: {n:,} records in {s['snapshots']:,} snapshots; l = {l}, window {w}; "
        f"{s['suppressed']:,} suppressed, {s['repositioned']:,} repositioned",
    )
    rep.add(inputs_section(source=source, rows=n, roles=roles, parameters=params, checksum=checksum, checksum_kind=checksum_kind))

    # ---- guarantee: re-counted on the released sensitive tables -----------------------------------
    groups = group_table(st, sens)
    ls = l_per_snapshot(groups, published)
    nonempty = ls[ls > 0]
    achieved_l = int(nonempty.min()) if len(nonempty) else None
    released = int(groups["size"].sum()) if len(groups) else 0
    sizes_match = released == len(qit) == n - int(s["suppressed"])
    verified = (achieved_l is None or achieved_l >= l) and sizes_match
    sec = guarantee_section(
        model="l-diversity of every published snapshot (Anatomy, Wang et al. Definition 2)",
        requested={"l (every group of every snapshot)": l, "largest delay (snapshots)": f"<= {w}"},
        achieved={"l (every group of every snapshot)": achieved_l, "largest delay (snapshots)": s["max_reposition_distance"],
                  "published snapshots": len(published), "groups": len(groups),
                  "records in QIT = records in ST": sizes_match},
        verified=verified,
        class_sizes=groups["size"].to_numpy(dtype=np.int64),
        k=l,
        what="records per Anatomy group",
        checker="tempanon.verify.check_anatomy, re-counted on the released tables",
    )
    sec.add_figure(_l_figure(published, ls, l), "Achieved l of each published snapshot (its smallest group); none may lie below the dashed line."
                   + (" Bars are bins of consecutive snapshots (the smallest l of the bin)." if len(figures.bin_edges(len(published))) < len(published) else ""))
    rep.add(sec)

    # ---- risk ---------------------------------------------------------------------------------
    before = measure(data, qi, sensitive=[sens], threshold=threshold)
    expanded = pd.DataFrame({
        "snapshot": np.repeat(st["snapshot"].to_numpy(dtype=object), st["count"].to_numpy(dtype=np.int64)),
        "group": np.repeat(st["group"].to_numpy(), st["count"].to_numpy(dtype=np.int64)),
        sens: np.repeat(st[sens].to_numpy(dtype=object), st["count"].to_numpy(dtype=np.int64)),
    })
    after = measure(expanded, ["snapshot", "group"], sensitive=[sens], threshold=threshold)
    risk = risk_section(before.as_dict(), after.as_dict(), threshold=threshold)
    risk.add_text(
        "Anatomy publishes the quasi-identifiers unchanged (QIT) and the sensitive values per group (ST): an attacker "
        "can still find a person's row, but learns only the values of its group. So the input's classes are records "
        "equal on the quasi-identifiers, and the release's classes are the Anatomy groups (of one snapshot).",
        css="note",
    )
    risk.add_kv({
        "largest share of one sensitive value in a class, input": _largest_share(data, qi, sens),
        "largest share of one sensitive value in a group, release": _largest_share(st, ["snapshot", "group"], sens, counts="count"),
        "bound of the model": f"1/l = {1 / l:.4g}",
    })
    rep.add(risk)

    # ---- utility --------------------------------------------------------------------------------
    audit = result.audit
    dist = pd.to_numeric(audit["distance"], errors="coerce").to_numpy(dtype=float)
    sup = np.isnan(dist)
    time_loss = (float((dist[~sup] / w).sum()) if w else 0.0) + float(sup.sum())
    attrs = [(time, f"snapshot ({s['snapshot_unit']}), delay <= {w}", ", ".join(map(str, labels[:3])) + (", ..." if len(labels) > 3 else ""),
              time_loss / n if n else 0.0)]
    for c in qi:
        attrs.append((c, "unchanged (QIT)", ", ".join(map(str, pd.unique(qit[c].astype(object).where(qit[c].notna(), "(missing)"))[:3])), float(sup.sum()) / n if n else 0.0))
    util = utility_section(
        attributes=attrs,
        measures={
            "information loss IL (Equation 2)": s["information_loss"],
            "repositioned records": s["repositioned"],
            "total / largest reposition distance (snapshots)": f"{s['total_reposition_distance']} / {s['max_reposition_distance']}",
            "window steps solved by the ILP": s["steps_solved_by_ilp"],
        },
        suppressed_rows=int(s["suppressed"]),
        rows_in=n,
    )
    util.add_text(
        "Loss of an attribute here: for the time, the mean over input records of (reposition distance / w), a suppressed "
        "record counting 1; the quasi-identifiers are published unchanged, so only suppression loses them.",
        css="note",
    )
    rep.add(util)

    # ---- picture: the timeline -----------------------------------------------------------------------
    pub_label = audit["published"].astype(object).to_numpy()
    mean_dist = np.zeros(len(labels))
    if (~sup).any():
        by = pd.Series(dist[~sup]).groupby(pub_label[~sup], sort=False).mean()
        mean_dist = by.reindex(labels).fillna(0.0).to_numpy()
    tl = stream_section(
        labels=labels,
        sizes=[p["published_size"] for p in per],
        suppressed=[p["suppressed"] for p in per],
        distances=mean_dist,
    )
    tl.add_text("Released: records published in the snapshot (its own and repositioned ones); suppressed: records of the "
                "snapshot never published; reposition distance: mean over the records published in the snapshot of how "
                "many snapshots late they are (its mean over snapshots is the figure above).", css="note")
    rep.add(tl)
    return rep


__all__ = ["group_table", "l_per_snapshot", "stream_report"]
