"""The report of a (k,P)-anonymity run on time series (:func:`tempanon.timeseries.api.kp_anonymize`).

Shou, Shang, Chen, Chen, Liu (TKDE), "Supporting pattern-preserving anonymization for time-series
data": the guarantee is (k,P)-anonymity (Definition 5: k-groups of at least k series sharing a
value envelope, P-subgroups of at least P series sharing a SAX pattern); the utility measures are
the value loss VL (Eq. 2) and the pattern loss PL (Section 7.1); the picture is a few k-groups
drawn from the release only (published envelope bounds and published patterns; no member series).
The report states in its title that it is for the data steward: its input, risk and utility
sections describe the original data. Sections come from the
shared builders of :mod:`tempanon.report.sections`.

The group sizes, envelopes and risk are re-measured here on the released table (k-group and
P-subgroup sizes counted from the published columns, envelopes checked constant per k-group),
independently of the algorithm; the verdict of :func:`tempanon.verify.check_kp_anonymity` (run by
the API before anything is returned) is shown next to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tempanon.metrics.risk import measure
from tempanon.report import figures
from tempanon.report.html import Report
from tempanon.report.sections import guarantee_section, inputs_section, risk_section, timeseries_section, utility_section


def pattern_series(X: np.ndarray, words: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Each row's SAX pattern reconstructed in the row's own units: the probabilistic median of
    every symbol (:func:`tempanon.timeseries.sax.reconstruct`), spread over its PAA segment
    (``numpy.array_split`` boundaries, as :func:`tempanon.timeseries.sax.paa`), scaled back by the
    row's mean and standard deviation (a constant row is its mean)."""
    from tempanon.timeseries.sax import reconstruct

    X = np.atleast_2d(np.asarray(X, dtype=float))
    z = reconstruct(np.atleast_2d(words), levels)
    n = X.shape[1]
    lengths = np.array([len(c) for c in np.array_split(np.arange(n), z.shape[1])])
    zz = np.repeat(z, lengths, axis=1)
    return X.mean(axis=1, keepdims=True) + X.std(axis=1, keepdims=True) * zz


def released_group_sizes(released: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(k-group sizes, P-subgroup sizes)`` counted on the released table."""
    if len(released) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    kg = released["kgroup"].value_counts(sort=False).to_numpy()
    ps = released.groupby(["kgroup", "psubgroup"], sort=False).size().to_numpy()
    return kg.astype(np.int64), ps.astype(np.int64)


def envelopes_consistent(released: pd.DataFrame, value_columns: Sequence[str]) -> bool:
    """Every k-group publishes one envelope (the same ``<col>_lo``/``<col>_hi`` on all its rows)."""
    bounds = [f"{c}_{s}" for c in value_columns for s in ("lo", "hi")]
    if not bounds or len(released) == 0:
        return True
    return bool((released.groupby("kgroup")[bounds].nunique(dropna=False) <= 1).all().all())


def kp_report(
    data: pd.DataFrame,
    result: Any,
    *,
    id_col: str,
    qi: Sequence[str],
    sensitive: Sequence[str] = (),
    source: str,
    checksum: str | None,
    checksum_kind: str = "SHA-256 of the input file",
    parameters: Mapping[str, Any] | None = None,
    threshold: float = 0.2,
    max_groups: int = 6,
) -> Report:
    """Build the report of ``result`` (a :class:`~tempanon.timeseries.api.KPResult`) on ``data``."""
    from tempanon.timeseries.api import released_source_rows, series_matrix

    from tempanon.data.io import table_columns

    columns = table_columns(data)  # (a Parquet file read with only its role columns: every column of the file)
    data = data.reset_index(drop=True)
    qi, sensitive = list(qi), list(sensitive)
    s = result.summary
    k, P = int(s["k"]), int(s["P"])
    vcols, pcols = list(s["publish_values"]), list(s["publish_patterns"])
    released = result.released
    n = len(data)

    roles = {}
    for c in columns:
        if c == id_col:
            roles[c] = "series id (removed; kept in the steward's audit)"
        elif c in qi:
            parts = (["value range of its k-group"] if c in vcols else []) + (["SAX pattern of its P-subgroup"] if c in pcols else [])
            roles[c] = "quasi-identifier (" + " + ".join(parts) + ")"
        elif c in sensitive:
            roles[c] = "sensitive (published" + (f", perturbed for l-diversity l = {s['l_diversity']})" if s.get("l_diversity") else " as is)")
        else:
            roles[c] = "other (not released)"
    params = {
        "model": "(k,P)-anonymity of time series",
        "k": k,
        "P": P,
        "algorithm": s["algorithm"],
        "max level (SAX alphabet)": s["max_level"],
        "PAA segments": s["paa_segments"] if s["paa_segments"] is not None else f"{len(qi)} (one per quasi-identifier)",
        "l-diversity": s.get("l_diversity"),
        "epsilon": s.get("epsilon"),
        **(parameters or {}),
    }
    rep = Report(
        "tempanon report: (k,P)-anonymity of time series (FOR THE DATA STEWARD ONLY)",
        f"STEWARD ONLY - do not publish with the release: this report holds statistics of the original data "
        f"(input counts, checksum, risk and loss measured on the input). {source}: {n:,} series of {len(qi)} values in, "
        f"{len(released):,} published; k = {k}, P = {P}; {s['algorithm']}",
    )
    rep.add(inputs_section(source=source, rows=n, roles=roles, parameters=params, checksum=checksum, checksum_kind=checksum_kind))

    # ---- guarantee, re-counted on the released table -------------------------------------------
    ksizes, psizes = released_group_sizes(released)
    k_got = int(ksizes.min()) if len(ksizes) else None
    p_got = int(psizes.min()) if len(psizes) else None
    consistent = envelopes_consistent(released, vcols)
    suppressed = n - len(released)
    verified = bool(s.get("verified")) and k_got is not None and k_got >= k and p_got >= P and consistent and suppressed < P
    sec = guarantee_section(
        model="(k,P)-anonymity (Shou et al., Definition 5)",
        requested={"k (series per k-group)": k, "P (series per P-subgroup)": P, "suppressed series": f"< {P}"},
        achieved={"k (series per k-group)": k_got, "P (series per P-subgroup)": p_got, "suppressed series": suppressed,
                  "k-groups": len(ksizes), "P-subgroups": len(psizes), "one envelope per k-group": consistent},
        verified=verified,
        class_sizes=ksizes,
        k=k,
        what="series",
        checker="tempanon.verify.check_kp_anonymity, re-counted on the released table",
    )
    sec.add_figure(figures.class_size_histogram(psizes, P, what="series"),
                   f"Sizes of the {len(psizes):,} P-subgroups (series sharing one pattern); none may lie left of the dashed line (P = {P}).")
    rep.add(sec)

    # ---- risk: input rows are classes of their raw values; release classes of published columns --
    after_cols = ["kgroup", "psubgroup", *[f"{c}_{e}" for c in vcols for e in ("lo", "hi")], "pattern", "pattern_level"]
    before = measure(data, qi, threshold=threshold)
    after = measure(released, after_cols, threshold=threshold) if len(released) else measure(released.head(0), after_cols, threshold=threshold)
    rep.add(risk_section(before.as_dict(), after.as_dict(), threshold=threshold))

    # ---- utility -----------------------------------------------------------------------------
    X = series_matrix(data, qi, id_col)
    src = released_source_rows(result.audit)
    rng = X.max(axis=0) - X.min(axis=0)
    attrs = []
    for j, c in enumerate(qi):
        if c in vcols and len(released):
            width = (released[f"{c}_hi"].to_numpy(float) - released[f"{c}_lo"].to_numpy(float))
            norm = width / rng[j] if rng[j] > 0 else np.zeros(len(width))
            loss = (float(norm.sum()) + suppressed) / n
            ex = released[[f"{c}_lo", f"{c}_hi"]].drop_duplicates().head(3)
            examples = ", ".join(f"[{lo:.4g}, {hi:.4g}]" for lo, hi in ex.to_numpy()) + (", ..." if len(ksizes) > 3 else "")
        else:
            loss, examples = 1.0, "range not published"
        level = ("range" if c in vcols else "") + (" + pattern" if c in pcols else "")
        attrs.append((c, level.strip(" +") if c in vcols else "pattern only", examples, loss))
    measures = {
        "value loss VL (sum over series)": s["value_loss"],
        "pattern loss PL (sum over series)": s["pattern_loss"],
        "VL per published series": s["value_loss_mean"],
        "PL per published series": s["pattern_loss_mean"],
        "mean pattern level (SAX alphabet size)": s["mean_level"],
        "max breach probability by value / by pattern": f"{s['breach_value_max']:.4g} / {s['breach_pattern_max']:.4g}",
    }
    if s.get("l_diversity"):
        measures["sensitive values perturbed"] = s["perturbed"]
    util = utility_section(attributes=attrs, measures=measures, suppressed_rows=suppressed, rows_in=n,
                           loss_caption="Loss per attribute: the mean over input series of the width of the published value "
                                        "range divided by the attribute's range in the input; a suppressed series, or an "
                                        "attribute whose range is not published, counts 1.")  # fmt: skip
    rep.add(util)

    # ---- picture: a few k-groups, drawn from the release only ----------------------------------
    if len(released):
        ts = published_groups_section(released, vcols, draw_patterns=(vcols == qi and pcols == qi), k=k, P=P,
                                      max_groups=max_groups,
                                      measures={"k-groups": len(ksizes), "P-subgroups": len(psizes)})
        if ts is not None:
            rep.add(ts)
    return rep


def published_pattern_curves(lo: np.ndarray, hi: np.ndarray, patterns: Sequence[str], levels: Sequence[int]) -> np.ndarray:
    """Each published pattern drawn inside its k-group's envelope ``[lo, hi]`` (published): the
    reconstruction at the probabilistic medians (normalized units, one value per symbol, spread
    over its PAA segment) mapped linearly so that ``[-2, 2]`` covers the envelope's mean band. The
    release has no per-series scale, so only the shape is meaningful; nothing original is used."""
    from tempanon.timeseries.sax import reconstruct, strings_to_words

    n = lo.shape[0]
    pats = [str(p) for p in patterns]
    width = max(len(p) for p in pats)
    z = reconstruct(strings_to_words(pats, width), np.asarray(levels))
    lengths = np.array([len(c) for c in np.array_split(np.arange(n), z.shape[1])])
    zz = np.repeat(z, lengths, axis=1)
    mid = float(np.mean((lo + hi) / 2))
    half = float(np.mean(hi - lo)) / 2
    return mid + zz * (half / 2)


def published_groups_section(released: pd.DataFrame, value_columns: Sequence[str], *, draw_patterns: bool = True,
                             k: int, P: int, max_groups: int = 6, measures: Mapping[str, Any] | None = None):
    """A few k-groups drawn from the released table only: the published envelope (its bounds as
    the two solid lines) and the k-group's distinct published patterns (dashed). No original
    series is drawn (issue 12: 72 of 72 polylines were affine images of input series)."""
    vcols = list(value_columns)
    if not vcols:
        return None
    kg = released["kgroup"].to_numpy()
    lo_all = released[[f"{c}_lo" for c in vcols]].to_numpy(dtype=float)
    hi_all = released[[f"{c}_hi" for c in vcols]].to_numpy(dtype=float)
    groups_all, first = np.unique(kg, return_index=True)
    widths = (hi_all[first] - lo_all[first]).mean(axis=1)
    order = np.argsort(widths, kind="stable")
    pick = order[np.unique(np.linspace(0, len(order) - 1, min(max_groups, len(order))).round().astype(int))]
    groups = []
    for i in pick:
        q = groups_all[i]
        rows = np.flatnonzero(kg == q)
        lo, hi = lo_all[first[i]], hi_all[first[i]]
        pats = released.iloc[rows][["pattern", "pattern_level"]].drop_duplicates()
        curves = None
        if draw_patterns:  # patterns span the same columns as the envelope (customized publishing: not drawn)
            curves = published_pattern_curves(lo, hi, pats["pattern"].tolist(), pats["pattern_level"].to_numpy())
        groups.append({"members": np.vstack([lo, hi]), "patterns": curves, "size": len(rows),
                       "label": f"k-group {int(q)}: {len(rows)} series, {len(pats)} published pattern(s)"})
    ts = timeseries_section(groups=groups, k=k, p=P, measures=measures)
    ts.add_text(f"Drawn from the release only: {len(groups)} of {len(groups_all)} k-groups, from the tightest to "
                "the widest envelope. The solid lines are the published lower and upper bounds of the k-group's "
                "envelope (not member series); the dashed lines are its distinct published SAX patterns, "
                "reconstructed at the probabilistic medians and drawn inside the envelope (the release has no "
                "per-series scale, so only their shape is meaningful).", css="note")
    return ts


__all__ = ["envelopes_consistent", "kp_report", "pattern_series", "published_groups_section", "published_pattern_curves",
           "released_group_sizes"]
