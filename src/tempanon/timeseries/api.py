"""Python API of (k,P)-anonymity for time series (Shou et al., TKDE).

:func:`kp_anonymize` takes a DataFrame with one series per row (an id column, the quasi-identifier
values ``A_1..A_n`` at ``n`` instants, sensitive columns), runs Naive or KAPRA, optionally makes
the sensitive attribute l-diverse (Section 5.4) and restricts the release to chosen value and
pattern columns (customized publishing, Section 6), checks the release with the independent
:func:`tempanon.verify.check_kp_anonymity` and returns it with the steward's audit table.

Missing or non-numeric quasi-identifier values are rejected with an :class:`InputError` naming
the column, row and value (the steward imputes or drops such series first); missing sensitive
values are a category of their own and are published as they are.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tempanon.data.roles import require_columns
from tempanon.errors import InputError, NoSolutionError
from tempanon.timeseries.algorithms import kapra, naive
from tempanon.timeseries.ldiversity import perturb_l_diverse
from tempanon.timeseries.model import Grouping, breach_probabilities, instant_value_loss, pattern_loss
from tempanon.timeseries.partition import envelopes
from tempanon.timeseries.sax import MAX_LEVEL, paa, reconstruct, words_to_strings, znormalize

ALGORITHMS = {"kapra": kapra, "naive": naive}


@dataclass
class KPResult:
    """A verified release: ``released`` (no id), ``audit`` (``id``, ``output_row``), ``summary``
    (JSON-ready dict), ``grouping`` (per input series, in input order)."""

    released: pd.DataFrame
    audit: pd.DataFrame
    summary: dict
    grouping: Grouping


def _show(value) -> str:
    """``repr`` of a cell without numpy's type wrapper (``inf``, not ``np.float64(inf)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _where(df: pd.DataFrame, id_col: str | None, i: int) -> str:
    ident = f" (id {_show(df[id_col].iloc[i])})" if id_col is not None and id_col in df.columns else ""
    return f"row {i}{ident}"


def series_matrix(df: pd.DataFrame, qi: Sequence[str], id_col: str | None = None) -> np.ndarray:
    """The quasi-identifier values as a float matrix, or an :class:`InputError` naming the first
    missing, non-numeric or infinite value (column, row, value)."""
    require_columns(df, qi, role="quasi-identifier")
    X = np.empty((len(df), len(qi)), dtype=float)
    for j, c in enumerate(qi):
        col = df[c]
        if isinstance(col, pd.DataFrame):
            raise InputError(f"quasi-identifier {c!r} names several columns of the input")
        miss = col.isna().to_numpy()
        if miss.any():
            i = int(np.flatnonzero(miss)[0])
            raise InputError(
                f"quasi-identifier {c!r}, {_where(df, id_col, i)}: missing value; (k,P)-anonymity needs "
                f"complete series (impute or drop the {int(miss.sum())} incomplete value(s) first)")
        if col.dtype == bool:
            num = col.astype(float)
        else:
            num = pd.to_numeric(col, errors="coerce")
        bad = num.isna().to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"quasi-identifier {c!r}, {_where(df, id_col, i)}: value {_show(col.iloc[i])} is not a number")
        vals = num.to_numpy(dtype=float)
        inf = ~np.isfinite(vals)
        if inf.any():
            i = int(np.flatnonzero(inf)[0])
            raise InputError(f"quasi-identifier {c!r}, {_where(df, id_col, i)}: value {_show(col.iloc[i])} is not finite")
        X[:, j] = vals
    return X


def _check_ids(df: pd.DataFrame, id_col: str) -> None:
    require_columns(df, [id_col], role="id column")
    ids = df[id_col]
    miss = ids.isna().to_numpy()
    if miss.any():
        raise InputError(f"id column {id_col!r}, row {int(np.flatnonzero(miss)[0])}: missing id")
    text = ids.astype(str)
    dup = text.duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)
        first = text.iloc[rows[0]]
        where = np.flatnonzero((text == first).to_numpy())[:5].tolist()
        raise InputError(f"id column {id_col!r}: id {_show(first)} occurs more than once (rows {where})")


def _check_params(n_qi: int, k, P, algorithm, max_level, paa_segments, l_diversity, epsilon) -> None:
    for name, v in (("k", k), ("P", P), ("max level", max_level)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise InputError(f"{name} must be an integer, got {v!r}")
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if P < 1:
        raise InputError(f"P must be at least 1, got {P}")
    if P > k:
        raise InputError(f"P must not exceed k (Definition 5 needs P <= k), got P={P} > k={k}")
    if not 1 <= max_level <= MAX_LEVEL:
        raise InputError(f"max level must be in 1..{MAX_LEVEL} (one letter per symbol), got {max_level}")
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    if paa_segments is not None and not 1 <= paa_segments <= n_qi:
        raise InputError(f"PAA segments must be in 1..{n_qi} (the number of quasi-identifiers), got {paa_segments}")
    if l_diversity is not None:
        if l_diversity < 1:
            raise InputError(f"l must be at least 1, got {l_diversity}")
        if l_diversity > P:
            raise InputError(f"l-diversity needs l <= P (each P-subgroup must hold l values), got l={l_diversity} > P={P}")
        if epsilon is None or not np.isfinite(epsilon) or epsilon <= 0:
            raise InputError(f"l-diversity needs a positive epsilon (--epsilon), got {epsilon!r}")


def _subset(name: str, cols, qi: list[str]) -> list[str]:
    if cols is None:
        return list(qi)
    cols = list(cols)
    if not cols:
        raise InputError(f"{name} is empty")
    unknown = [c for c in cols if c not in qi]
    if unknown:
        raise InputError(f"{name}: {', '.join(map(repr, unknown))} is not a quasi-identifier (given: {', '.join(qi)})")
    return [c for c in qi if c in cols]


def kp_anonymize(
    df: pd.DataFrame,
    *,
    id_col: str,
    qi: Sequence[str],
    k: int,
    P: int,
    sensitive: Sequence[str] = (),
    algorithm: str = "kapra",
    max_level: int = 5,
    paa_segments: int | None = None,
    l_diversity: int | None = None,
    epsilon: float | None = None,
    publish_values: Sequence[str] | None = None,
    publish_patterns: Sequence[str] | None = None,
    pattern_features=None,
    progress=None,
    keep: Sequence[str] = (),
    drop: Sequence[str] = (),
    allow_identifier: Sequence[str] = (),
) -> KPResult:
    """(k,P)-anonymize the series of ``df`` (one per row). See the module doc and docs/timeseries.md.

    ``pattern_features`` (a function ``(m, w) -> (m, F)``) replaces the default feature vector
    (all pairwise differences) of the pattern loss in the summary.

    Raises :class:`InputError` on bad input or parameters, :class:`NoSolutionError` when fewer
    than ``k`` series can be published, :class:`VerificationError` if the independent check fails.

    Fail closed: the release holds the published envelopes and patterns, ``sensitive`` and
    ``keep`` (declared insensitive, released unchanged after identifier screening, see
    :func:`tempanon.data.screen.refuse_identifiers`; ``allow_identifier`` overrides); ``drop`` are
    identifiers; every other column is left out (``summary["left_out"]``).
    """
    t0 = time.perf_counter()
    qi = list(qi)
    sensitive = list(sensitive)
    if not qi:
        raise InputError("no quasi-identifier column given (--qi)")
    if len(set(qi)) != len(qi):
        raise InputError("a quasi-identifier is listed twice")
    _check_params(len(qi), k, P, algorithm, max_level, paa_segments, l_diversity, epsilon)
    require_columns(df, sensitive, role="sensitive column")
    roles = {id_col: "id"}
    for c in qi:
        if c in roles:
            raise InputError(f"column {c!r} is given two roles: {roles[c]} and quasi-identifier")
        roles[c] = "quasi-identifier"
    for c in sensitive:
        if c in roles:
            raise InputError(f"column {c!r} is given two roles: {roles[c]} and sensitive")
        roles[c] = "sensitive"
    from tempanon.data.roles import plan_release, require_columns_list
    from tempanon.data.screen import refuse_identifiers

    keep = list(keep)
    _kept_cols, left_out = plan_release(list(df.columns), released=[*qi, *sensitive], keep=keep, drop=list(drop),
                                        consumed=[id_col])  # fmt: skip
    require_columns_list(list(df.columns), allow_identifier, role="--allow-identifier column")
    overrides = refuse_identifiers(df, keep, allow=allow_identifier, uid=None)
    _check_ids(df, id_col)
    if len(df) == 0:
        raise InputError("the input has no series")
    vcols = _subset("--publish-values", publish_values, qi)
    pcols = _subset("--publish-patterns", publish_patterns, qi)
    if not set(vcols) & set(pcols):
        raise InputError(
            "customized publishing: the value columns and the pattern columns are disjoint; only the "
            "Overlap case (Section 6.4, at least one column in both) is supported, the Disjoint case "
            "leaves no column to relate values and patterns")
    if paa_segments is not None and pcols != qi:
        raise InputError("--paa cannot be combined with --publish-patterns (PAA symbols span several columns)")
    if l_diversity is not None:
        if len(sensitive) != 1:
            raise InputError(f"l-diversity needs exactly one sensitive column, got {len(sensitive)}")
        s = sensitive[0]
        sv = pd.to_numeric(df[s], errors="coerce")
        bad = (sv.isna() & df[s].notna()).to_numpy() | df[s].isna().to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"sensitive column {s!r}, {_where(df, id_col, i)}: value {_show(df[s].iloc[i])} is not a "
                             "number; perturbation for l-diversity needs numeric values")
    X = series_matrix(df, qi, id_col)
    n = X.shape[0]
    if n < k:
        raise NoSolutionError(f"the input has {n} series, fewer than k={k}")
    g = ALGORITHMS[algorithm](X, k, P, max_level, paa_segments, progress=progress)

    pub = np.flatnonzero(g.kgroup >= 0)
    order = pub[np.lexsort((pub, g.psubgroup[pub], g.kgroup[pub]))]
    kg = np.unique(g.kgroup[order], return_inverse=True)[1]
    ps = np.unique(g.psubgroup[order], return_inverse=True)[1]
    # renumber in output order so ids carry no information beyond the grouping
    kg = _first_seen(kg)
    ps = _first_seen(ps)
    Xp = X[order]
    lo, hi = envelopes(Xp, kg)
    cols: dict[str, np.ndarray] = {"kgroup": kg, "psubgroup": ps}
    for c in vcols:
        j = qi.index(c)
        cols[f"{c}_lo"] = lo[kg, j]
        cols[f"{c}_hi"] = hi[kg, j]
    words = g.words[order]
    if pcols != qi:
        words = words[:, [qi.index(c) for c in pcols]]
    cols["pattern"] = words_to_strings(words)
    cols["pattern_level"] = g.level[order].astype(np.int64)
    released = pd.DataFrame(cols)
    for s in sensitive:
        released[s] = df[s].to_numpy()[order]
    for c in keep:  # declared insensitive: released unchanged, row-aligned with the series
        released[c] = df[c].to_numpy()[order]
    perturbed = 0
    if l_diversity is not None:
        s = sensitive[0]
        orig = pd.to_numeric(df[s]).to_numpy(dtype=float)[order]
        new = perturb_l_diverse(orig, ps, l_diversity, float(epsilon))
        perturbed = int((new != orig).sum())
        released[s] = new
    out_row = np.full(n, -1, dtype=np.int64)
    out_row[order] = np.arange(order.size)
    audit = pd.DataFrame({"id": df[id_col].to_numpy(),
                          "output_row": pd.array(np.where(out_row >= 0, out_row, 0), dtype="Int64")})
    audit.loc[out_row < 0, "output_row"] = pd.NA

    vjs = [qi.index(c) for c in vcols]
    vl = instant_value_loss(lo[kg][:, vjs], hi[kg][:, vjs])
    Zp = paa(znormalize(Xp), paa_segments)
    pl = pattern_loss(Zp, reconstruct(g.words[order], g.level[order]), features=pattern_features)

    from tempanon.verify import check_kp_anonymity

    original = pd.DataFrame(X, columns=qi)
    original.insert(0, id_col, df[id_col].to_numpy())
    for s in sensitive:
        original[s] = df[s].to_numpy()
    report = check_kp_anonymity(
        original, released, audit, id_col=id_col, qi=qi, k=k, P=P, value_columns=vcols,
        pattern_columns=pcols, sensitive=sensitive, l_diversity=l_diversity, epsilon=epsilon,
        paa_segments=paa_segments)
    breach = breach_probabilities(released)
    summary = {
        "k": int(k),
        "P": int(P),
        "algorithm": algorithm,
        "max_level": int(max_level),
        "paa_segments": paa_segments,
        "series": int(n),
        "published": int(order.size),
        "kgroups": report["kgroups"],
        "psubgroups": report["psubgroups"],
        "suppressed": report["suppressed"],
        "value_loss": float(vl.sum()),
        "pattern_loss": float(pl.sum()),
        "value_loss_mean": float(vl.mean()) if vl.size else 0.0,
        "pattern_loss_mean": float(pl.mean()) if pl.size else 0.0,
        "mean_level": float(g.level[order].mean()) if order.size else 0.0,
        "breach_value_max": float(breach["p_value"].max()),
        "breach_pattern_max": float(breach["p_pattern"].max()),
        "l_diversity": l_diversity,
        "epsilon": epsilon,
        "perturbed": perturbed,
        "publish_values": vcols,
        "publish_patterns": pcols,
        "verified": True,
        "runtime_seconds": round(time.perf_counter() - t0, 4),
        "keep": keep,
        "left_out": left_out,
    }
    from tempanon.data.roles import verification_statement

    g_ = f"({k},{P})-anonymity" + (f" and {l_diversity}-diversity of {sensitive[0]!r} (perturbed by at most {epsilon})"
                                   if l_diversity is not None else "")  # fmt: skip
    summary["verification"] = verification_statement(
        g_, [*vcols, *(c for c in pcols if c not in vcols)], insensitive=keep, overrides=overrides,
        left_out=left_out, dropped=[c for c in drop if c in df.columns])
    return KPResult(released=released, audit=audit, summary=summary, grouping=g)


def _first_seen(labels: np.ndarray) -> np.ndarray:
    """Renumber labels ``0, 1, ...`` in order of first appearance."""
    u, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(u), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(u))
    return rank[inv]


def released_source_rows(audit: pd.DataFrame) -> np.ndarray:
    """Input row position of every released row, in output-row order (from the steward's audit)."""
    rows = pd.to_numeric(audit["output_row"], errors="coerce").to_numpy(dtype=float)
    pub = np.flatnonzero(~np.isnan(rows))
    return pub[np.argsort(rows[pub], kind="stable")]
