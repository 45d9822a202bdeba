"""The report of a snapshot-stream run (:func:`tempanon.stream.api.anonymize_stream`).

Wang, Xu, Wong, Fu (ICDM 2010), "Anonymizing temporal data" (snapshot streams with bounded
delay): every published snapshot is an Anatomy release (quasi-identifier table QIT and sensitive
table ST) whose groups are l-eligible (no sensitive value on more than 1/l of a group,
Definition 1); records may be repositioned up to ``w`` snapshots later or suppressed, at minimum
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

from tempanon.report import figures
from tempanon.report.html import Report, Section
from tempanon.report.sections import guarantee_section, inputs_section, stream_section, utility_section


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


def generalized_tables(generalized: Sequence[Any], qi: Sequence[str], sensitive: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """QIT/ST-shaped tables of snapshots published by generalization (``GeneralizedSnapshot``): each
    equivalence class (records equal on the generalized quasi-identifiers) of a snapshot is a group."""
    qits, sts = [], []
    qi = list(qi)
    for g in generalized:
        t = g.table
        if not len(t):
            continue
        keys = t[qi].astype(object).fillna("\x00<NA>")
        grp = keys.groupby(qi, sort=False, dropna=False).ngroup().to_numpy()
        q = t[qi].reset_index(drop=True).copy()
        q.insert(0, "snapshot", g.label)
        q["group"] = grp
        qits.append(q)
        sv = t[sensitive].astype(object).to_numpy()
        st = (pd.DataFrame({"snapshot": g.label, "group": grp, sensitive: sv})
              .groupby(["snapshot", "group", sensitive], sort=False, dropna=False).size().rename("count").reset_index())
        sts.append(st)
    if not qits:
        return (pd.DataFrame(columns=["snapshot", *qi, "group"]), pd.DataFrame(columns=["snapshot", "group", sensitive, "count"]))
    return pd.concat(qits, ignore_index=True), pd.concat(sts, ignore_index=True)


def _shares(df: pd.DataFrame, keys: Sequence[str], sensitive: str, counts: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per class of records equal on ``keys``: the largest share of one sensitive value (missing = a
    value) and the class size (weighted by ``counts``)."""
    if len(df) == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    d = df[[*keys, sensitive]].astype(object).fillna("\x00<NA>")
    wts = df[counts].to_numpy(dtype=np.int64) if counts else np.ones(len(df), dtype=np.int64)
    per_value = pd.Series(wts).groupby([d[c].to_numpy() for c in [*keys, sensitive]], sort=False).sum()
    per_class = per_value.groupby(level=list(range(len(keys))), sort=False)
    size = per_class.sum()
    return (per_class.max() / size).to_numpy(dtype=float), size.to_numpy(dtype=np.int64)


def _share_figure(share_in: tuple, share_out: tuple, l: int) -> str:
    fig, axes = figures.new_figure(7, 2.6)
    ax = axes[0, 0]
    bins = np.linspace(0, 1, 21)
    for (share, size), name, key in ((share_in, "input (classes)", "before"), (share_out, "release (groups)", "after")):
        if len(share):
            ax.hist(share, bins=bins, weights=size, alpha=0.6, color=figures.COLORS[key], label=name)
    ax.axvline(1 / l, color=figures.COLORS["selected"], ls="--", lw=1.2, label=f"1/l (l = {l})")
    ax.set_xlabel("probability of inferring the sensitive value")
    ax.set_ylabel("records")
    ax.legend(frameon=False, fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    return figures.to_svg(fig)


def stream_report(
    data: pd.DataFrame,
    result: Any,
    *,
    source: str,
    checksum: str | None,
    checksum_kind: str = "SHA-256 of the input file",
    parameters: Mapping[str, Any] | None = None,
    threshold: float = 0.2,
    generalized: Sequence[Any] | None = None,
) -> Report:
    """Build the report of ``result`` (a :class:`~tempanon.stream.api.StreamResult` with its
    ``qit``/``st`` tables, i.e. from :func:`~tempanon.stream.api.anonymize_stream`) on ``data``."""
    from tempanon.data.io import table_columns

    columns = table_columns(data)  # (a Parquet file read with only its role columns: every column of the file)
    data = data.reset_index(drop=True)
    s = result.summary
    time, sens, qi = s["time"], s["sensitive"], list(s["qi"])
    l, w = int(s["l"]), int(s["window"])
    n = len(data)
    qit, st = result.qit, result.st
    if generalized is not None:  # --publish generalization: the equivalence classes play the groups' part
        qit, st = generalized_tables(generalized, qi, sens)
    how = "generalized (per snapshot)" if generalized is not None else "unchanged (QIT)"
    if qit is None or st is None:
        raise ValueError("the stream report needs the release tables (anonymize_stream, not the JSON-lines stream)")
    per = s["per_snapshot"]
    labels = [p["snapshot"] for p in per]
    published = [p["snapshot"] for p in per if p["published"]]

    roles = {}
    for c in columns:
        if c == time:
            roles[c] = f"time (cut into snapshots by {s['snapshot_unit']}; not published)"
        elif c == sens:
            roles[c] = ("sensitive (published per Anatomy group in the ST)" if generalized is None
                        else "sensitive (published with the generalized quasi-identifiers)")
        elif c in qi:
            roles[c] = f"quasi-identifier (published {how})"
        else:
            roles[c] = "other (not published)"
    params = {
        "model": "l-diversity of a snapshot stream with bounded delay ("
        + ("Anatomy" if generalized is None else "full-domain generalization") + " per snapshot)",
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
        model="l-diversity of every published snapshot (" + ("Anatomy groups" if generalized is None else "equivalence classes of the generalized tables") + ", Wang et al. Definition 1)",
        requested={"l (every group of every snapshot)": l, "largest delay (snapshots)": f"<= {w}"},
        achieved={"l (every group of every snapshot)": achieved_l, "largest delay (snapshots)": s["max_reposition_distance"],
                  "published snapshots": len(published), "groups": len(groups),
                  "records in QIT = records in ST": sizes_match},
        verified=verified,
        class_sizes=groups["size"].to_numpy(dtype=np.int64),
        k=None,  # an Anatomy group needs >= l records; its l is drawn in the next figure
        what="records per Anatomy group",
        checker=("tempanon.verify.check_anatomy" if generalized is None else "tempanon.verify.check_l_diverse_classes") + ", re-counted on the released tables",
    )
    sec.add_figure(_l_figure(published, ls, l), "Achieved l of each published snapshot (its smallest group); none may lie below the dashed line."
                   + (" Bars are bins of consecutive snapshots (the smallest l of the bin)." if len(figures.bin_edges(len(published))) < len(published) else ""))
    rep.add(sec)

    # ---- risk: the model's own measure (attribute disclosure from a group, <= 1/l) --------------------
    # Anatomy publishes the quasi-identifiers exactly by design, so re-identification (prosecutor) risk is
    # not what the model bounds; it bounds the probability of inferring a record's sensitive value from
    # its group: the largest share of one value in a group, at most 1/l.
    share_in = _shares(data, qi, sens)
    share_out = _shares(st, ["snapshot", "group"], sens, counts="count")
    risk = Section("risk", "Inferring a sensitive value: before and after")
    risk.add_text(
        "What l-diversity bounds: the probability that an attacker who finds a person's row learns their sensitive value. "
        + ("Anatomy publishes the quasi-identifiers unchanged (QIT) and the sensitive values per group (ST), so a row can be "
           "found, but its value is only known to be one of its group's: "
           if generalized is None else
           "Generalization publishes each record with generalized quasi-identifiers, so a person is only known to be in "
           "an equivalence class (a group here), whose values they may have: ")
        + f"at most 1/l = 1/{l} = {1 / l:.3g} for any value. "
        "Before: the largest share of one value among input records equal on the quasi-identifiers (what the raw table "
        "would give away); after: the largest share of one value in a released group.",
        css="note",
    )
    records_in = int(share_in[1].sum()) if len(share_in[0]) else 0
    risk.add_table(
        ["measure", "input", "release"],
        [
            ("largest probability of inferring a sensitive value (largest share in a class / group)",
             float(share_in[0].max()) if len(share_in[0]) else None, float(share_out[0].max()) if len(share_out[0]) else None),
            ("records whose value is inferred with probability > 1/l", int(share_in[1][share_in[0] > 1 / l + 1e-12].sum()) if records_in else 0,
             int(share_out[1][share_out[0] > 1 / l + 1e-12].sum()) if len(share_out[0]) else 0),
            ("bound of the model", "none", f"1/l = {1 / l:.4g} (l = {l})"),
        ],
    )
    risk.add_figure(_share_figure(share_in, share_out, l),
                    "Records by the probability of inferring their sensitive value from their class (input) or group (release); "
                    "none of the release may lie right of the dashed line 1/l.")
    rep.add(risk)

    # ---- utility --------------------------------------------------------------------------------
    audit = result.audit
    dist = pd.to_numeric(audit["distance"], errors="coerce").to_numpy(dtype=float)
    sup = np.isnan(dist)
    time_loss = (float((dist[~sup] / w).sum()) if w else 0.0) + float(sup.sum())
    attrs = [(time, f"snapshot ({s['snapshot_unit']}), delay <= {w}", ", ".join(map(str, labels[:3])) + (", ..." if len(labels) > 3 else ""),
              time_loss / n if n else 0.0)]
    for c in qi:
        attrs.append((c, how, ", ".join(map(str, pd.unique(qit[c].astype(object).where(qit[c].notna(), "(missing)"))[:3])), float(sup.sum()) / n if n else 0.0))
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
        loss_caption="Loss per attribute: for the time, the mean over input records of (reposition distance / w), a "
                     "suppressed record counting 1; the quasi-identifiers are published unchanged, so only suppression "
                     "loses them.",
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


__all__ = ["generalized_tables", "group_table", "l_per_snapshot", "stream_report"]
