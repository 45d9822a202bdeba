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

from tempanon.data.io import check_frame
from tempanon.data.roles import require_columns
from tempanon.errors import InputError, NoSolutionError
from tempanon.timeseries.algorithms import kapra, naive
from tempanon.timeseries.ldiversity import perturb_l_diverse
from tempanon.timeseries.model import Grouping, breach_probabilities, instant_value_loss, pattern_loss
from tempanon.timeseries.partition import envelopes
from tempanon.timeseries.sax import MAX_LEVEL, expand_paa, reconstruct, words_to_strings, znormalize

ALGORITHMS = {"kapra": kapra, "naive": naive}
#: readings at least this large (in absolute value) are refused: the grouping and the loss measures square
#: differences of readings and sum them, which overflows to infinity from about 1e154 (a loss of inf, a
#: summary that is no JSON, a traceback in the report)
MAX_READING = 1e100


@dataclass
class KPResult:
    """A verified release: ``released`` (no id), ``audit`` (``id``, ``output_row``), ``summary``
    (JSON-ready dict), ``grouping`` (per input series, in input order)."""

    released: pd.DataFrame
    audit: pd.DataFrame
    summary: dict
    grouping: Grouping
    data: pd.DataFrame | None = None  # the table anonymized (after missing-value handling)


def _show(value) -> str:
    """``repr`` of a cell without numpy's type wrapper (``inf``, not ``np.float64(inf)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _where(df: pd.DataFrame, id_col: str | None, i: int) -> str:
    ident = f" (id {_show(df[id_col].iloc[i])})" if id_col is not None and id_col in df.columns else ""
    lab = df.index[i]
    pos = int(lab) if isinstance(lab, (int, np.integer)) else i  # rows dropped for missing readings keep their line
    return f"line {pos + 2}{ident}"  # the file line (header = line 1; tempanon.data.lines)


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
                f"complete series ({int(miss.sum())} missing value(s) in this column): leave incomplete series out "
                "with --missing drop, or impute them first; sentinels such as -1 become missing with --na-values")
        kind = _time_kind(col)
        if kind is not None:
            raise InputError(f"quasi-identifier {c!r} holds {kind} ({col.dtype}), not numeric readings (as numbers they would "
                             "be counts of the column's storage unit, e.g. microseconds since 1970 in one file and "
                             "nanoseconds in another); convert them to numbers first, e.g. seconds since a reference time")  # fmt: skip
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
        big = np.abs(vals) >= MAX_READING
        if big.any():
            i = int(np.flatnonzero(big)[0])
            raise InputError(f"quasi-identifier {c!r}, {_where(df, id_col, i)}: value {_show(col.iloc[i])} is too large: readings must "
                             f"be below {MAX_READING:g} in size (the loss measures square differences of readings, which overflow "
                             "near 1e154); rescale the series, e.g. to other units")  # fmt: skip
        X[:, j] = vals
    return X


def _time_kind(col: pd.Series) -> str | None:
    """``"timestamps"``, ``"durations"`` or ``"periods"`` for a column of that dtype (pandas turns them into
    integers of their storage unit with ``to_numeric``), else ``None``."""
    t = col.dtype
    if pd.api.types.is_datetime64_any_dtype(t):
        return "timestamps"
    if pd.api.types.is_timedelta64_dtype(t):
        return "durations"
    if isinstance(t, pd.PeriodDtype):
        return "periods"
    return None


def _check_ids(df: pd.DataFrame, id_col: str) -> None:
    require_columns(df, [id_col], role="id column")
    ids = df[id_col]
    miss = ids.isna().to_numpy()
    if miss.any():
        raise InputError(f"id column {id_col!r}, line {int(np.flatnonzero(miss)[0]) + 2}: missing id")
    text = ids.astype(str)
    dup = text.duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)
        first = text.iloc[rows[0]]
        where = ", ".join(str(i + 2) for i in np.flatnonzero((text == first).to_numpy())[:5])
        raise InputError(f"id column {id_col!r}: id {_show(first)} occurs more than once (lines {where})")


def _check_params(n_qi: int, k, P, algorithm, max_level, paa_segments, l_diversity, epsilon, shuffle_seed=None) -> None:
    for name, v in (("k", k), ("P", P), ("max level", max_level)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise InputError(f"{name} must be an integer, got {v!r}")
    if paa_segments is not None and (isinstance(paa_segments, bool) or not isinstance(paa_segments, (int, np.integer))):
        raise InputError(f"PAA segments must be an integer, got {paa_segments!r}")
    if shuffle_seed is not None and (isinstance(shuffle_seed, bool) or not isinstance(shuffle_seed, (int, np.integer))
                                     or shuffle_seed < 0):
        raise InputError(f"the shuffle seed must be a non-negative integer (got {shuffle_seed!r})")
    if not isinstance(algorithm, str):
        raise InputError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    if k < 2:
        raise InputError(f"k must be at least 2, got {k} (k = 1 publishes every series' exact values)")
    if P < 2:
        raise InputError(f"P must be at least 2, got {P} (P = 1 publishes each series' own pattern; "
                         "Section 4.2.1 needs P > 1/thr > 1)")
    if P > k:
        raise InputError(f"P must not exceed k (Definition 5 needs P <= k), got P={P} > k={k}")
    if not 1 <= max_level <= MAX_LEVEL:
        raise InputError(f"max level must be in 1..{MAX_LEVEL} (one letter per symbol), got {max_level}")
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    if paa_segments is not None and not 1 <= paa_segments <= n_qi:
        raise InputError(f"PAA segments must be in 1..{n_qi} (the number of quasi-identifiers), got {paa_segments}")
    if l_diversity is None and epsilon is not None:  # (was ignored without a word, as kanon refuses --c without recursive)
        raise InputError(f"epsilon ({epsilon!r}) is the largest change of a sensitive value perturbed for l-diversity: give it "
                         "with l_diversity (--l-diversity L), or leave it out")  # fmt: skip
    if l_diversity is not None:
        if isinstance(l_diversity, bool) or not isinstance(l_diversity, (int, np.integer)):
            raise InputError(f"l must be an integer, got {l_diversity!r}")
        if l_diversity < 2:
            raise InputError(f"l must be at least 2, got {l_diversity} (l = 1 changes nothing)")
        if l_diversity > P:
            raise InputError(f"l-diversity needs l <= P (each P-subgroup must hold l values), got l={l_diversity} > P={P}")
        if (epsilon is None or isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.integer, np.floating))
                or not np.isfinite(epsilon) or epsilon <= 0):
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
    shuffle_seed: int | None = None,
    numeric_sensitive: bool = False,
    na_values: Sequence[str] | str | None = None,
    missing: str = "refuse",
    progress=None,
    keep: Sequence[str] = (),
    drop: Sequence[str] = (),
    allow_identifier: Sequence[str] = (),
) -> KPResult:
    """(k,P)-anonymize the series of ``df`` (one per row). See the module doc and docs/timeseries.md.

    ``pattern_features`` (a function ``(m, w) -> (m, F)``) replaces the default feature vector
    (all pairwise differences) of the pattern loss in the summary.

    ``paa_segments``: the SAX word length; ``None`` chooses it with :func:`default_paa_segments`
    (one symbol per value up to 10 values); the number of quasi-identifiers means no PAA.

    ``na_values``: missing-value sentinels of the quasi-identifiers (e.g. ``["-1"]``); ``missing``:
    ``"refuse"`` (default) a series with a missing reading, or ``"drop"`` it from the input (not
    published, not in the audit, counted in ``dropped_incomplete``); see
    :mod:`tempanon.timeseries.longformat`.

    ``numeric_sensitive``: with l-diversity, a sensitive column of at most 20 distinct whole
    numbers is taken for categorical codes and refused (perturbation would publish non-codes)
    unless this says it is a numeric measurement.

    Release rows are grouped by k-group and P-subgroup, but k-groups, P-subgroups inside a
    k-group and rows inside a P-subgroup come in a random order drawn from ``shuffle_seed``
    (default: a fresh secret from :mod:`secrets`), so the row order says nothing about the input
    order (ids). The seed is recorded only in the steward's audit (column ``shuffle_seed``).

    Raises :class:`InputError` on bad input or parameters, :class:`NoSolutionError` when fewer
    than ``k`` series can be published, :class:`VerificationError` if the independent check fails.

    Fail closed: the release holds the published envelopes and patterns, ``sensitive`` and
    ``keep`` (declared insensitive, released unchanged after identifier screening, see
    :func:`tempanon.data.screen.refuse_identifiers`; ``allow_identifier`` overrides); ``drop`` are
    identifiers; every other column is left out (``summary["left_out"]``).
    """
    t0 = time.perf_counter()
    from tempanon.data.roles import column_names

    if not isinstance(df, pd.DataFrame):
        raise InputError(f"df must be a pandas DataFrame, got {type(df).__name__} (read a file with "
                         "tempanon.data.io.read_table)")  # fmt: skip
    qi = column_names(qi, "qi")
    sensitive = column_names(sensitive, "sensitive")
    keep, drop, allow_identifier = (column_names(v, n) for v, n in ((keep, "keep"), (drop, "drop"),
                                                                    (allow_identifier, "allow_identifier")))  # fmt: skip
    publish_values = None if publish_values is None else column_names(publish_values, "publish_values")
    publish_patterns = None if publish_patterns is None else column_names(publish_patterns, "publish_patterns")
    if not qi:
        raise InputError("no quasi-identifier column given (--qi)")
    if len(set(qi)) != len(qi):
        raise InputError("a quasi-identifier is listed twice")
    _check_params(len(qi), k, P, algorithm, max_level, paa_segments, l_diversity, epsilon, shuffle_seed)
    check_frame(df)
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

    from tempanon.data.io import table_columns

    keep = list(keep)
    columns = table_columns(df)  # (a Parquet file read with only its role columns: every column of the file)
    _kept_cols, left_out = plan_release(columns, released=[*qi, *sensitive], keep=keep, drop=list(drop),
                                        consumed=[id_col])  # fmt: skip
    require_columns_list(columns, allow_identifier, role="--allow-identifier column")
    from tempanon.data.io import refuse_nested_columns

    refuse_nested_columns(df, {"id": [id_col], "qi": qi, "sensitive": sensitive, "keep": keep,
                               "allow_identifier": list(allow_identifier)})  # fmt: skip
    from tempanon.data.cells import text_mixed_columns

    df = text_mixed_columns(df, [id_col, *sensitive, *keep])  # one value per released text (data/cells.py)
    overrides = refuse_identifiers(df, keep, allow=allow_identifier, uid=None)
    _check_ids(df, id_col)
    if len(df) == 0:
        raise InputError("the input has no series")
    from tempanon.timeseries.longformat import mark_missing, parse_na_values

    if missing not in ("refuse", "drop"):
        raise InputError(f"missing must be 'refuse' or 'drop', got {missing!r}")
    df, marked = mark_missing(df, qi, parse_na_values(na_values))
    dropped = 0
    if missing == "drop":
        incomplete = df[qi].isna().any(axis=1).to_numpy()
        dropped = int(incomplete.sum())
        if dropped:
            df = df.loc[~incomplete]
        if len(df) == 0:
            raise NoSolutionError(f"every one of the {dropped} series has a missing reading (missing='drop')")
    vcols = _subset("--publish-values", publish_values, qi)
    pcols = _subset("--publish-patterns", publish_patterns, qi)
    if not set(vcols) & set(pcols):
        raise InputError(
            "customized publishing: the value columns and the pattern columns are disjoint; only the "
            "Overlap case (Section 6.4, at least one column in both) is supported, the Disjoint case "
            "leaves no column to relate values and patterns")
    if paa_segments is not None and paa_segments != len(qi) and pcols != qi:
        raise InputError("--paa cannot be combined with --publish-patterns (PAA symbols span several columns)")
    paa_rule = "given" if paa_segments is not None else "default"
    if paa_segments is None:
        paa_segments = default_paa_segments(len(qi), len(df), P) if pcols == qi else len(qi)
    if paa_segments == len(qi):
        paa_segments = None  # one symbol per quasi-identifier
    if l_diversity is not None:
        if len(sensitive) != 1:
            raise InputError(f"l-diversity needs exactly one sensitive column, got {len(sensitive)}")
        s = sensitive[0]
        kind = _time_kind(df[s])
        if kind is not None:
            raise InputError(f"sensitive column {s!r} holds {kind} ({df[s].dtype}), not numbers; perturbation for "
                             "l-diversity needs numeric values")  # fmt: skip
        sv = pd.to_numeric(df[s], errors="coerce")
        bad = (sv.isna() & df[s].notna()).to_numpy() | df[s].isna().to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"sensitive column {s!r}, {_where(df, id_col, i)}: value {_show(df[s].iloc[i])} is not a "
                             "number; perturbation for l-diversity needs numeric values")
        if not numeric_sensitive:
            vals = sv.to_numpy(dtype=float)
            distinct = np.unique(vals)
            if np.all(vals == np.round(vals)) and distinct.size <= CATEGORICAL_MAX_DISTINCT:
                shown = ", ".join(str(int(v)) for v in distinct[:6])
                raise InputError(
                    f"sensitive column {s!r} looks categorical ({distinct.size} distinct whole numbers: {shown}"
                    f"{', ...' if distinct.size > 6 else ''}); l-diversity by perturbation (Section 5.4) would publish "
                    "values such as 1.25 that are no category. It is for numeric measurements only: if the column "
                    "is one, say so (numeric_sensitive=True, --sensitive-numeric)")
    X = series_matrix(df, qi, id_col)
    n = X.shape[0]
    if n < k:
        raise NoSolutionError(f"the input has {n} series, fewer than k={k}")
    g = ALGORITHMS[algorithm](X, k, P, max_level, paa_segments, progress=progress)

    pub = np.flatnonzero(g.kgroup >= 0)
    if shuffle_seed is None:
        import secrets

        shuffle_seed = secrets.randbits(63)
    order = shuffled_release_order(pub, g.kgroup[pub], g.psubgroup[pub], int(shuffle_seed))
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
                          "output_row": pd.array(np.where(out_row >= 0, out_row, 0), dtype="Int64"),
                          "shuffle_seed": np.full(n, int(shuffle_seed), dtype=np.int64)})
    audit.loc[out_row < 0, "output_row"] = pd.NA

    vjs = [qi.index(c) for c in vcols]
    vl = instant_value_loss(lo[kg][:, vjs], hi[kg][:, vjs])
    # PL (Eq. 3, Section 7.1): the original normalized series against the series reconstructed
    # from the published word, both at full length (with PAA each symbol covers its segment)
    Zr = expand_paa(reconstruct(g.words[order], g.level[order]), len(qi))
    pl = pattern_loss(znormalize(Xp), Zr, features=pattern_features)

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
    warnings = []
    level1 = float((g.level[order] == 1).mean()) if order.size else 0.0
    if order.size and level1 > 0.5 and len(qi) > 1:
        w_now = paa_segments or len(qi)
        w_try = default_paa_segments(len(qi), n, P)
        w_try = w_try if w_try < w_now else max(2, w_now // 2)
        warnings.append(
            f"{level1:.0%} of the published patterns are at level 1 ('{'a' * min(w_now, 8)}...', a flat line: no "
            f"pattern is preserved); fewer PAA segments (now {w_now}; e.g. --paa {w_try}) or a smaller P "
            "let more series share a word at a higher level")
    summary = {
        "k": int(k),
        "P": int(P),
        "algorithm": algorithm,
        "max_level": int(max_level),
        "paa_segments": paa_segments,
        "word_length": int(paa_segments or len(qi)),
        "paa_rule": paa_rule,
        "level1_share": level1,
        "warnings": warnings,
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
        "missing_values_marked": marked,
        "missing": missing,
        "dropped_incomplete": dropped,
        "verified": True,
        "steward_only": "this summary counts the original series (series, suppressed, dropped_incomplete): "
                        "for the data steward, not for release",
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
    return KPResult(released=released, audit=audit, summary=summary, grouping=g, data=df)


def shuffled_release_order(rows: np.ndarray, kgroup: np.ndarray, psubgroup: np.ndarray, seed: int) -> np.ndarray:
    """``rows`` ordered by k-group and P-subgroup, with the k-groups, the P-subgroups inside each
    k-group and the rows inside each P-subgroup in a random order drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    kr = rng.permutation(int(kgroup.max()) + 1 if kgroup.size else 0)
    pr = rng.permutation(int(psubgroup.max()) + 1 if psubgroup.size else 0)
    rr = rng.permutation(rows.size)
    return rows[np.lexsort((rr, pr[psubgroup], kr[kgroup]))]


CATEGORICAL_MAX_DISTINCT = 20


def default_paa_segments(n_instants: int, n_series: int, P: int) -> int:
    """Default SAX word length (PAA segments) for series of ``n_instants`` values.

    Up to 10 values: one symbol per value (the paper's setting, Section 7.1: 10 QI attributes).
    Longer series: ``w = floor(log(n_series / P) / log(2.5))`` clipped to ``[4, 10]`` (and to
    ``n_instants``): about ``n_series / P`` series can then share one word when each symbol
    takes 2-3 values, so P-subgroups form above level 1. Measured (k=10, P=5): one symbol per value
    left 97.5-100% of the patterns at level 1 on a 150-point GunPoint-like set, a 144-point walk
    and the 52-week Sales data; the rule's 4-5 segments leave 0-3% there (docs/timeseries.md).
    """
    if n_instants <= 10:
        return n_instants
    m = max(n_series / max(P, 1), 1.0)
    w = int(np.floor(np.log(m) / np.log(2.5))) if m > 1 else 4
    return int(min(n_instants, max(4, min(10, w))))


def _first_seen(labels: np.ndarray) -> np.ndarray:
    """Renumber labels ``0, 1, ...`` in order of first appearance."""
    u, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(u), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(u))
    return rank[inv]


AUDIT_HEADER = ("# STEWARD ONLY - DO NOT RELEASE. tempanon kp audit: links each input series id to its release "
                "row (empty: suppressed) and holds the secret shuffle seed of the release's row order.")


def write_kp_audit(result: KPResult, path) -> None:
    """Write the steward's audit atomically: CSV with a first comment line saying it is steward-only
    (read it back with ``pandas.read_csv(path, comment="#")``); Parquet (by suffix) with the same
    text in the file's metadata."""
    from pathlib import Path

    from tempanon.data.io import atomic_write, csv_text

    if Path(path).suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(result.audit, preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"tempanon": AUDIT_HEADER.encode()})
        atomic_write(path, lambda p: pq.write_table(table, p))
        return
    text = AUDIT_HEADER + "\n" + csv_text(result.audit)
    atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def released_source_rows(audit: pd.DataFrame) -> np.ndarray:
    """Input row position of every released row, in output-row order (from the steward's audit)."""
    rows = pd.to_numeric(audit["output_row"], errors="coerce").to_numpy(dtype=float)
    pub = np.flatnonzero(~np.isnan(rows))
    return pub[np.argsort(rows[pub], kind="stable")]
