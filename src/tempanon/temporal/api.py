"""Python API of timestamped-data anonymization (Mascetti, Bettini, Wang, Jajodia, TIME 2006).

:func:`anonymize_timestamped` takes a DataFrame with many tuples per respondent, finds the least
respondent-level k-anonymous generalization of the timestamp over a set of granularities
(Algorithm 1, :mod:`tempanon.temporal.least`), or, with ``hierarchies``, the joint generalization
of time and the other quasi-identifiers (:mod:`tempanon.temporal.joint`), verifies the release
independently (:func:`tempanon.verify.check_timestamped_release`) and returns it with a summary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tempanon.data.roles import require_columns
from tempanon.errors import InputError
from tempanon.temporal.granularity import GAP, Granularity, parse_granularity
from tempanon.temporal.least import METRICS, check_granularity, least_generalization, prepare
from tempanon.temporal.parse import infer_data_granularity, parse_timestamps
from tempanon.temporal.relations import GranularityDAG, build_dag, span_of

DEFAULT_GRANULARITIES = ("hour", "part-of-day", "day", "business-day", "week", "month", "quarter",
                         "semester", "year")  # fmt: skip


@dataclass
class TimestampedResult:
    released: pd.DataFrame  # original row labels as index, UID dropped, time as granule labels
    summary: dict
    dag: GranularityDAG = field(repr=False)
    chosen: str = ""


def encode_columns(df: pd.DataFrame, cols: Sequence[str]) -> np.ndarray:
    """One int64 code per distinct combination of ``cols`` (missing values are a category)."""
    if not cols:
        return np.zeros(len(df), dtype=np.int64)
    codes = []
    for c in cols:
        col = df[c].astype(object).where(df[c].notna(), "\x00<NA>")
        codes.append(pd.factorize(col)[0].astype(np.int64))
    if len(codes) == 1:
        return codes[0]
    from tempanon.temporal.joint import dense

    key = codes[0]
    for c in codes[1:]:
        card = int(c.max()) + 1
        if int(key.max()) + 1 > (2**62) // card:  # re-densify before the key would overflow
            key = dense(key)[0]
        key = key * card + c
    return dense(key)[0]


def encode_uid(df: pd.DataFrame, uid: str | None) -> np.ndarray:
    if uid is None:
        return np.arange(len(df), dtype=np.int64)
    col = df[uid]
    miss = col.isna().to_numpy()
    if miss.any():
        row = int(np.nonzero(miss)[0][0]) + 1
        raise InputError(f"column {uid!r}, row {row}: the respondent identifier is missing")
    return pd.factorize(col)[0].astype(np.int64)


def parse_granularities(specs: str | Sequence[str | Granularity] | None, *, country: str | None = None,
                        parts=None) -> list[Granularity]:  # fmt: skip
    if specs is None:
        specs = DEFAULT_GRANULARITIES
    if isinstance(specs, str):
        specs = [s for s in specs.split(",") if s.strip()]
    out = [s if isinstance(s, Granularity) else parse_granularity(s, country=country, parts=parts) for s in specs]
    if not out:
        raise InputError("no granularity given")
    names = [g.name for g in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"granularity listed twice: {', '.join(dupes)}")
    return out


def _validate(df, time, qi, uid, k, metric, max_suppression, joint=False):
    require_columns(df, [time], role="time column")
    require_columns(df, qi, role="quasi-identifier")
    if uid is not None:
        require_columns(df, [uid], role="respondent identifier column")
        if uid in qi or uid == time:
            raise InputError(f"the respondent identifier {uid!r} cannot also be a quasi-identifier or the time")
    if time in qi:
        raise InputError(f"the time column {time!r} is generalized by granularities; do not list it in --qi")
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be a positive integer (got {k!r})")
    if metric not in METRICS and not (joint and metric in ("height", "loss", "discernibility")):
        extra = " (height, loss, discernibility with --hierarchies)"
        raise InputError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}{extra}")
    if not 0.0 <= float(max_suppression) < 1.0:
        raise InputError(f"max-suppression must be in [0, 1) (got {max_suppression})")
    if len(df) == 0:
        raise InputError("the input table has no rows")


def anonymize_timestamped(
    df: pd.DataFrame,
    *,
    time: str,
    qi: Sequence[str] = (),
    k: int,
    uid: str | None = None,
    granularities: str | Sequence[str | Granularity] | None = None,
    metric: str = "gen_c",
    max_suppression: float = 0.0,
    data_granularity: str | Granularity | None = None,
    country: str | None = None,
    parts=None,
    hierarchies: dict | None = None,
    criterion: str = "gen_c",
    progress: Callable[[str, int, int], None] | None = None,
    keep: Sequence[str] = (),
    drop: Sequence[str] = (),
    allow_identifier: Sequence[str] = (),
    sensitive: Sequence[str] = (),
) -> TimestampedResult:
    """Least respondent-level k-anonymous generalization of ``time`` (Section 4, Algorithm 1).

    ``qi`` are the other quasi-identifiers, published unchanged unless ``hierarchies`` maps some of
    them to generalization hierarchies: then time and those attributes are generalized jointly
    (an Incognito search over the product of the granularity DAG and the hierarchies, see
    :mod:`tempanon.temporal.joint`). ``uid`` identifies respondents (each row is one when None).
    ``max_suppression`` is the fraction of tuples that may be removed. Raises
    :class:`~tempanon.errors.NoSolutionError` when no granularity works.

    Fail closed: the release holds only ``time``, ``qi``, ``sensitive`` (released as they are) and
    ``keep`` (declared insensitive, released unchanged); ``drop`` are identifiers, and every other column is left out
    (``summary["left_out"]``). Columns released unchanged (``keep``, quasi-identifiers not
    generalized) are screened for direct identifiers and second timestamps
    (:func:`tempanon.data.screen.refuse_identifiers`) unless listed in ``allow_identifier``;
    ``summary["verification"]`` says what was verified on which columns.
    """
    qi = list(qi)
    _validate(df, time, qi, uid, k, metric, max_suppression, bool(hierarchies))
    from tempanon.data.roles import plan_release, require_columns_list

    keep, drop = list(keep), list(drop)
    sensitive = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    require_columns_list(list(df.columns), sensitive, role="sensitive column")
    for c in sensitive:
        if c in qi or c in (time, uid):
            raise InputError(f"column {c!r} cannot be both sensitive and a quasi-identifier, the time or the uid")
    release_cols, left_out = plan_release(list(df.columns), released=[*qi, time, *sensitive], keep=keep, drop=drop,
                                          consumed=[uid] if uid else [])  # fmt: skip
    require_columns_list(list(df.columns), allow_identifier, role="--allow-identifier column")
    roles = {"release": set(release_cols), "keep": keep, "drop": drop, "left_out": left_out,
             "allow": list(allow_identifier), "sensitive": sensitive}  # fmt: skip
    df = df.reset_index(drop=True)
    instants, missing, tinfo = parse_timestamps(df[time], time)
    if data_granularity is None:
        g0 = infer_data_granularity(instants, missing)
    elif isinstance(data_granularity, Granularity):
        g0 = data_granularity
    else:
        g0 = parse_granularity(data_granularity, country=country, parts=parts)
    z0 = g0.index(instants)
    bad = (z0 == GAP) & ~missing
    if bad.any():
        row = int(np.nonzero(bad)[0][0])
        raise InputError(f"column {time!r}, row {row + 1}: {df[time].iloc[row]!r} lies in no granule of the "
                         f"data granularity {g0.name}")  # fmt: skip
    cands = parse_granularities(granularities, country=country, parts=parts)
    span = span_of(instants[~missing])
    dag = build_dag(g0, cands, span)
    uid_codes = encode_uid(df, uid)
    n = len(df)
    max_suppressed = int(np.floor(float(max_suppression) * n + 1e-9))
    if hierarchies:
        from tempanon.temporal.joint import joint_anonymize

        return _apply_roles(df, joint_anonymize(df, time=time, qi=qi, k=k, uid=uid, dag=dag, instants=instants, missing=missing,
                               z0=z0, hierarchies=hierarchies, metric=metric, criterion=criterion,
                               max_suppression=float(max_suppression), tinfo=tinfo, progress=progress),
                            roles)  # fmt: skip
    q = encode_columns(df, qi)
    prep = prepare(q, instants, missing, uid_codes, np.where(missing, 0, z0))
    res = least_generalization(prep, dag, k, metric=metric, max_suppressed=max_suppressed, progress=progress)
    chosen = dag.nodes[res.chosen]
    final = check_granularity(prep, chosen, k, max_suppressed, keep_arrays=True)
    keep_sorted = final.keep
    keep = np.zeros(n, dtype=bool)
    keep[prep.order] = keep_sorted
    labels = np.empty(n, dtype=object)
    labels[~missing] = chosen.labels_of(instants[~missing])
    labels[missing] = None
    released = df.loc[keep].copy()
    released[time] = pd.Series(labels[keep], index=released.index, dtype=object)
    if uid is not None:
        released = released.drop(columns=[uid])
    # Candidates for the summary: every granularity checked directly (Procedure 2 on each).
    all_checks = [res.checks[v] if v in res.checks else check_granularity(prep, g, k, max_suppressed)
                  for v, g in enumerate(dag.nodes)]  # fmt: skip
    from tempanon.verify import check_timestamped_release

    otimes = pd.Series(pd.to_datetime(np.where(missing, 0, instants), unit="s"), index=df.index).where(~missing)
    report = check_timestamped_release(df, released, time=time, qi=qi, uid=uid, k=k, granularity=chosen.name,
                                       original_times=otimes, n_input=n, max_suppressed=max_suppressed)  # fmt: skip
    summary = _summary(df, dag, res, all_checks, final, k=k, uid=uid, time=time, qi=qi, metric=metric,
                       max_suppression=max_suppression, max_suppressed=max_suppressed, tinfo=tinfo,
                       respondents=prep.n_respondents, report=report)  # fmt: skip
    return _apply_roles(df, TimestampedResult(released, summary, dag, chosen.name), roles)


def _apply_roles(df: pd.DataFrame, res: TimestampedResult, roles: dict) -> TimestampedResult:
    """Project the verified release on its declared columns, screen those released unchanged,
    and add ``left_out`` and the verified statement to the summary (see :mod:`tempanon.data.roles`)."""
    from tempanon.data.roles import verification_statement
    from tempanon.data.screen import refuse_identifiers

    s = res.summary
    qi, time = list(s["qi"]), s["time"]
    node = s.get("node")
    generalized = {q for i, q in enumerate(qi) if node is not None and int(node[1 + i]) > 0}
    unchanged = [*roles["keep"], *(q for q in qi if q not in generalized)]
    overrides = refuse_identifiers(df, unchanged, allow=roles["allow"], uid=s["uid"], time=time)
    res.released = res.released[[c for c in res.released.columns if c in roles["release"]]]
    uid = s["uid"]
    g = f"respondent-level {s['k']}-anonymity" + (f" ({uid!r})" if uid else "")
    statement = verification_statement(g, [*qi, time], insensitive=roles["keep"], overrides=overrides,
                                       left_out=roles["left_out"], dropped=roles["drop"])  # fmt: skip
    s["verification"] = {**(s.get("verification") or {}), **statement}
    s["keep"] = list(roles["keep"])
    s["sensitive"] = list(roles["sensitive"])
    s["left_out"] = list(roles["left_out"])
    return res


def _summary(df, dag, res, all_checks, final, *, k, uid, time, qi, metric, max_suppression, max_suppressed, tinfo,
             respondents, report) -> dict:  # fmt: skip
    candidates = []
    idx = {g.name: i for i, g in enumerate(dag.nodes)}
    names = [dag.nodes[0].name] + [n for n in list(idx)[1:]] + list(dag.disregarded) + [
        n for n in dag.equivalent if n not in idx]  # fmt: skip
    for name in names:
        entry: dict = {"granularity": name}
        if name in dag.disregarded:
            entry.update(compatible=False, reason=dag.disregarded[name], k_anonymous=None, gen_m=None, gen_s=None)
        else:
            i = idx.get(name, idx.get(dag.equivalent.get(name, ""), 0))
            c = all_checks[i]
            entry.update(compatible=True, k_anonymous=bool(c.k_anonymous), gen_m=c.gen_m, gen_s=c.gen_s,
                         suppressed=c.suppressed, classes=c.classes, min_respondents=c.min_respondents,
                         directly_coarser=[dag.nodes[p].name for p in dag.parents[i]],
                         evaluated_by_algorithm=i in res.checks, minimal=i in res.minimal)  # fmt: skip
            if i in res.pruned:
                entry["pruned_coarser_than"] = dag.nodes[res.pruned[i]].name
            if name in dag.equivalent:
                entry["equivalent_to"] = dag.equivalent[name]
            if i == 0:
                entry["data_granularity"] = True
        candidates.append(entry)
    return {
        "k": int(k),
        "respondents": int(respondents),
        "tuples": int(len(df)),
        "released_tuples": int(len(df) - final.suppressed),
        "uid": uid,
        "time": time,
        "qi": list(qi),
        "data_granularity": dag.nodes[0].name,
        "granularity": dag.nodes[res.chosen].name,
        "metric": metric,
        "gen_m": final.gen_m,
        "gen_s": final.gen_s,
        "gen_c": list(final.gen_c),
        "suppressed": final.suppressed,
        "max_suppression": float(max_suppression),
        "max_suppressed_tuples": int(max_suppressed),
        "minimal_k_anonymous": [dag.nodes[v].name for v in res.minimal],
        "candidates": candidates,
        "messages": list(dag.messages),
        "timestamps": tinfo,
        "verification": report,
    }
