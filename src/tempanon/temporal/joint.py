"""Beyond the paper: generalizing time *together* with the other quasi-identifiers.

Mascetti et al. (TIME 2006, Section 6) generalize time alone and leave the joint generalization as
future work. The granularity DAG is a partial order with the same two properties Incognito relies
on (LeFevre et al. 2005, Section 3): *generalization* (if a node is k-anonymous, so is every node
above it: a coarser granularity merges classes, and respondent counts of merged classes can only
grow) and *subset* (if a node is k-anonymous, so is its projection on any subset of the
attributes). So the product of the granularity DAG and the other attributes' hierarchies can be
searched by Incognito with a-priori pruning and rollup: :class:`GranularityHierarchy` turns the
DAG into a :class:`tempanon.lattice.Dimension` (level 0 the data's granularity, edges the
directly-coarser relation, codes computed by ``up`` of each data granule) and
:func:`tempanon.kanon.kanonymize` does the respondent-level search (``uid``: distinct-respondent
frequency sets that roll up (class, respondent) pairs).

The released node is the least one among the minimal k-anonymous nodes by the paper's metrics
extended to joint classes (gen_m the fewest respondents in a released class, gen_s their sum over
the released classes, gen_c ordered by <=_c), ties by height then level vector; it is computed here from the codes,
released, and verified independently.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tempanon.errors import InputError
from tempanon.lattice.dimension import Dimension
from tempanon.temporal.granularity import GAP
from tempanon.temporal.relations import GranularityDAG


@dataclass(eq=False)
class GranularityHierarchy:
    """An Incognito encoder for a timestamp column over a granularity DAG.

    ``encode(series)`` returns a :class:`Dimension` whose level ``v`` is ``dag.nodes[v]`` (level 0
    the data's granularity), whose edges are the directly-coarser relation, and the int64 base codes
    of the column (one per distinct data granule; a missing timestamp is a base value of its own,
    missing at every level). ``instants``/``missing``/``z0`` are the parsed column (see
    :func:`tempanon.temporal.parse.parse_timestamps`) and its data granules.
    """

    dag: GranularityDAG
    instants: np.ndarray
    missing: np.ndarray
    z0: np.ndarray
    name: str = "time"

    def encode(self, series: pd.Series) -> tuple[Dimension, np.ndarray]:
        if len(series) != len(self.instants):
            raise InputError(f"time column {self.name!r}: {len(series)} values, expected {len(self.instants)}")
        if not hasattr(self, "_encoded"):
            self._encoded = self.dimension_and_codes()
        return self._encoded

    def dimension_and_codes(self) -> tuple[Dimension, np.ndarray]:
        nodes = self.dag.nodes
        g0 = nodes[0]
        z = np.where(self.missing, 0, self.z0)
        uz, inv = np.unique(z[~self.missing], return_inverse=True)
        has_missing = bool(self.missing.any())
        base = np.empty(len(z), dtype=np.int64)
        base[~self.missing] = inv
        if has_missing:
            base[self.missing] = len(uz)
        starts = g0.start(uz)
        lo, hi = (int(starts.min()), int(g0.end(uz).max())) if len(uz) else (0, 1)
        width = max(hi - lo, 1)
        codes, labels, loss = [], [], []
        for v, g in enumerate(nodes):
            idx = g.index(starts) if v else uz
            if bool(np.any(idx == GAP)):
                raise InputError(f"time granularity {g.name}: a data granule lies in no granule")
            ug, c = np.unique(idx, return_inverse=True)
            lab = g.label(ug).astype(object) if len(ug) else np.array([], dtype=object)
            dur = (g.end(ug) - g.start(ug)).astype(np.float64) if len(ug) else np.array([])
            g0dur = float(np.min(g0.end(uz) - g0.start(uz))) if len(uz) else 0.0
            ls = np.clip((dur - g0dur) / width, 0.0, 1.0) if v else np.zeros(len(ug))
            if has_missing:
                c = np.r_[c, len(ug)]
                lab = np.r_[lab, np.array([None], dtype=object)]
                ls = np.r_[ls, 0.0]
            codes.append(c.astype(np.int64))
            labels.append(lab)
            loss.append(ls)
        dim = Dimension(self.name, tuple(g.name for g in nodes), tuple(self.dag.parents), tuple(codes),
                        tuple(labels), tuple(loss))  # fmt: skip
        return dim, base


@dataclass(eq=False)
class TimeGranularities:
    """A self-contained encoder for any Incognito call: ``encode(series)`` parses the timestamps,
    infers (or takes) the data's granularity, computes the DAG over ``granularities`` and returns
    the :class:`GranularityHierarchy` dimension. With ``truncation_chain()`` names
    (``"minute,hour,day,month,year"``) the dimension is a chain (a classic hierarchy).

    >>> from tempanon.kanon import kanonymize                                 # doctest: +SKIP
    >>> kanonymize(df, ["TIME", "ZIP"], {"TIME": TimeGranularities("day,week,month,year"),
    ...                                  "ZIP": "zip.csv"}, k=5, uid="PATIENT")  # doctest: +SKIP
    """

    granularities: str | Sequence = "day,week,month,quarter,year"
    data_granularity: str | None = None
    country: str | None = None
    timezone: str | None = None  # calendar time zone (IANA), see tempanon.temporal.parse
    date_order: str = "auto"  # how numeric dates are read (tempanon.temporal.parse.day_month_order)

    def encode(self, series: pd.Series) -> tuple[Dimension, np.ndarray]:
        from tempanon.temporal.api import parse_granularities
        from tempanon.temporal.granularity import parse_granularity
        from tempanon.temporal.parse import infer_data_granularity, parse_timestamps
        from tempanon.temporal.relations import build_dag, span_of

        inst, miss, tinfo = parse_timestamps(series, str(series.name), self.timezone, date_order=self.date_order)
        if tinfo.get("date_order_note"):
            import warnings

            from tempanon.errors import TempanonWarning

            warnings.warn(TempanonWarning(tinfo["date_order_note"].replace("pass --date-order day", "give "
                                                                           "TimeGranularities(date_order=\"day\")")),
                          stacklevel=2)  # fmt: skip
        g0 = (infer_data_granularity(inst, miss) if self.data_granularity is None
              else parse_granularity(self.data_granularity, country=self.country, date_order=self.date_order))  # fmt: skip
        z0 = g0.index(inst)
        bad = (z0 == GAP) & ~miss
        if bad.any():
            row = int(np.nonzero(bad)[0][0])
            raise InputError(f"column {series.name!r}, line {row + 2}: not in a granule of {g0.name}")
        dag = build_dag(g0, parse_granularities(self.granularities, country=self.country, date_order=self.date_order), span_of(inst[~miss]))
        return GranularityHierarchy(dag, inst, miss, z0, name=str(series.name)).encode(series)


@dataclass(eq=False)
class Unchanged:
    """Encoder of a quasi-identifier published as it is (a single level)."""

    def encode(self, series: pd.Series) -> tuple[Dimension, np.ndarray]:
        col = series.astype(object).where(series.notna(), None)
        codes, uniq = pd.factorize(col, use_na_sentinel=False)
        labels = np.array(list(uniq), dtype=object)
        dim = Dimension(str(series.name), ("value",), ((),), (np.arange(len(uniq), dtype=np.int64),), (labels,),
                        (np.zeros(len(uniq)),))  # fmt: skip
        return dim, codes.astype(np.int64)


def load_hierarchies(directory: str | Path, qi: Sequence[str]) -> dict:
    """``DIR/<qi>.csv`` (ARX format) for each quasi-identifier that has one; the others are
    published unchanged. At least one file must exist."""
    from tempanon.hierarchy.core import Hierarchy

    d = Path(directory)
    if not d.is_dir():  # (a file was 'not found' too)
        raise InputError(f"--hierarchies {d} is a file, not a directory: give the directory that holds one <column>.csv "
                         "per quasi-identifier" if d.exists() else f"hierarchy directory not found: {d}")  # fmt: skip
    out = {q: Hierarchy.from_csv(d / f"{q}.csv", name=q) for q in qi if (d / f"{q}.csv").exists()}
    if not out:
        raise InputError(f"no hierarchy file <column>.csv in {d} for the quasi-identifiers {', '.join(qi) or '(none)'}")
    return out


def dense(a: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense codes ``0..m-1`` of ``a`` in sorted order, and ``m`` (one stable argsort)."""
    a = np.asarray(a, dtype=np.int64)
    if len(a) == 0:
        return a, 0
    order = np.argsort(a, kind="stable")
    s = a[order]
    new = np.empty(len(a), dtype=bool)
    new[0] = True
    np.not_equal(s[1:], s[:-1], out=new[1:])
    inv = np.empty(len(a), dtype=np.int64)
    inv[order] = np.cumsum(new) - 1
    return inv, int(new.sum())


def _distinct_sorted(a: np.ndarray) -> np.ndarray:
    s = np.sort(a)
    return s[np.r_[True, s[1:] != s[:-1]]] if len(s) else s


def node_classes(dims: Sequence[Dimension], cols: Sequence[np.ndarray], node: Sequence[int]) -> np.ndarray:
    """Dense equivalence-class id of every row at ``node`` (codes of every attribute combined)."""
    key = np.zeros(len(cols[0]), dtype=np.int64)
    radix = 1
    parts = []
    for d, v, c in zip(dims, node, cols):
        parts.append(d.codes[v][c])
        radix *= max(d.cardinality(v), 1)
    if radix < 2**62:
        for d, v, p in zip(dims, node, parts):
            key = key * max(d.cardinality(v), 1) + p
        return dense(key)[0]
    return np.unique(np.stack(parts, axis=1), axis=0, return_inverse=True)[1].ravel()


def node_metrics(cls: np.ndarray, uid: np.ndarray, z: np.ndarray, k: int) -> dict:
    """Respondent-level k and the metrics of the release with classes ``cls``: respondents per
    class, tuples below k, gen_m and gen_s over the kept classes (``z``: data granule, missing as
    its own value, as dense codes)."""
    n_cls = int(cls.max()) + 1 if len(cls) else 0
    sizes = np.bincount(cls, minlength=n_cls)
    u = _distinct_sorted(cls.astype(np.int64) * (int(uid.max()) + 1) + uid)
    resp = np.bincount(u // (int(uid.max()) + 1), minlength=n_cls)
    nz = int(z.max()) + 1 if len(z) else 1  # z: dense codes 0..nz-1
    zz = _distinct_sorted(cls.astype(np.int64) * nz + z)
    nts = np.bincount(zz // nz, minlength=n_cls)
    small = resp < k
    kept = resp[~small]  # gen_m, gen_s of Definitions 5-6 on the released joint classes
    return {"suppressed": int(sizes[small].sum()), "gen_m": int(kept.min()) if len(kept) else 0,
            "gen_s": int(kept.sum()), "gen_s_all": int(resp.sum()), "min_respondents": int(resp.min()) if n_cls else 0,
            "classes": n_cls, "small": small}  # fmt: skip


def node_key(dims: Sequence[Dimension], cols: Sequence[np.ndarray], node: Sequence[int]) -> np.ndarray | None:
    """Mixed-radix class key of every row at ``node``, or None if it would not fit in 2**40."""
    radix = 1
    for d, v in zip(dims, node):
        radix *= max(d.cardinality(v), 1)
    if radix >= 2**40:
        return None
    key = np.zeros(len(cols[0]), dtype=np.int64)
    for d, v, c in zip(dims, node, cols):
        key = key * max(d.cardinality(v), 1) + d.codes[v][c]
    return key


def node_metrics_sorted(key: np.ndarray, uid: np.ndarray, z: np.ndarray, k: int) -> dict:
    """:func:`node_metrics` from a class key with two sorts (no dense class ids): distinct
    (class, respondent) and distinct (class, timestamp) pairs, aligned by class."""
    nu = int(uid.max()) + 1
    nz = int(z.max()) + 1
    pu = np.sort(key * nu + uid)
    cls_u = pu // nu
    first = np.r_[True, cls_u[1:] != cls_u[:-1]]
    starts = np.flatnonzero(first)
    sizes = np.diff(np.r_[starts, len(pu)])
    newpair = np.r_[True, pu[1:] != pu[:-1]]
    resp = np.add.reduceat(newpair.astype(np.int64), starts)
    pz = np.sort(key * nz + z)
    newz = np.r_[True, pz[1:] != pz[:-1]]
    cls_z = pz // nz
    nts = np.add.reduceat(newz.astype(np.int64), np.flatnonzero(np.r_[True, cls_z[1:] != cls_z[:-1]]))
    small = resp < k
    kept = resp[~small]
    return {"suppressed": int(sizes[small].sum()), "gen_m": int(kept.min()) if len(kept) else 0,
            "gen_s": int(kept.sum()), "gen_s_all": int(resp.sum()), "min_respondents": int(resp.min()) if len(resp) else 0,
            "classes": int(len(starts))}  # fmt: skip


def _metrics(dims, cols, node, uid_codes, zkey, k) -> dict:
    key = node_key(dims, cols, node)
    if key is not None and len(key) and (int(key.max()) + 1) * max(int(uid_codes.max()) + 1, int(zkey.max()) + 1) < 2**62:
        return node_metrics_sorted(key, uid_codes, zkey, k)
    m = node_metrics(node_classes(dims, cols, node), uid_codes, zkey, k)
    m.pop("small")
    return m


def joint_anonymize(df: pd.DataFrame, *, time: str, qi: Sequence[str], k: int, uid: str | None,
                    dag: GranularityDAG, instants: np.ndarray, missing: np.ndarray, z0: np.ndarray,
                    hierarchies: Mapping, metric: str, criterion: str, max_suppression: float, tinfo: dict,
                    progress: Callable[[str, int, int], None] | None = None, algorithm: str = "incognito",
                    time_limit: float | None = None, notice: Callable[[str], None] | None = None,
                    engine: str = "numpy", memory_limit: str | None = None, spark_master: str | None = None):  # fmt: skip
    """Joint Incognito search over time granularities x the other quasi-identifiers' hierarchies
    (see the module docstring); returns a :class:`tempanon.temporal.api.TimestampedResult`.

    ``engine="duckdb"`` (issue 15): the bottom frequency set of the search and Procedure 2 of the
    time-only candidates are computed by DuckDB
    (:class:`tempanon.lattice.source_temporal.DuckDBJointSource`,
    :class:`~tempanon.lattice.source_temporal.DuckDBTimeSource`), rollups and the release on the
    driver; the result is identical to ``"numpy"``. ``engine="spark"``: the same queries in Spark SQL
    (:mod:`tempanon.lattice.source_temporal_spark`, ``spark_master``)."""
    from tempanon.kanon.api import kanonymize
    from tempanon.temporal.api import TimestampedResult, encode_uid
    from tempanon.verify import check_generalization, check_timestamped_release

    t0 = _time.perf_counter()
    unknown = [h for h in hierarchies if h not in qi]
    if unknown:
        raise InputError(f"hierarchy given for {', '.join(map(repr, unknown))}, which is not a quasi-identifier")
    gh = GranularityHierarchy(dag, instants, missing, z0, name=time)
    encoders = {time: gh, **{q: hierarchies.get(q, Unchanged()) for q in qi}}
    for q, h in list(encoders.items()):
        if isinstance(h, (str, Path)):
            from tempanon.hierarchy.core import Hierarchy

            encoders[q] = Hierarchy.from_csv(h, name=q)
    from tempanon.hierarchy.builders import HierarchySpec

    built = [q for q in qi if isinstance(encoders[q], HierarchySpec)]  # hierarchies built from the data
    if engine not in ("duckdb", "spark"):
        # built once, here: the search, the release's labels and the verification's maps use the same one
        # (each build gives the builder's warnings again: numpy gave them three times)
        for q in built:
            encoders[q] = encoders[q].build_for(df[q].rename(q))
    attrs = [time, *qi]
    engine_criterion = metric if metric in INCOGNITO_CRITERIA else "height"
    budget = {"time_limit": time_limit} if time_limit is not None else {}
    data, jsrc = df, None
    if engine in ("duckdb", "spark"):
        from tempanon.lattice.source_temporal import joint_source

        data = jsrc = joint_source(engine, df, memory_limit=memory_limit, spark_master=spark_master)
    try:
        res = kanonymize(data, attrs, encoders, int(k), uid=uid, max_suppression=max_suppression, algorithm=algorithm,
                         criterion=engine_criterion, progress=progress, notice=notice, screen=False, **budget)  # fmt: skip  # screened by the API
        plan = jsrc.describe() if jsrc is not None else None
    finally:
        if jsrc is not None:
            jsrc.close()
    stopped = getattr(getattr(res, "search", None), "stats", None)
    stopped = getattr(stopped, "stopped", None)
    search_seconds = _time.perf_counter() - t0
    if engine in ("duckdb", "spark") and built:
        import warnings

        from tempanon.errors import TempanonWarning

        # the engine built them for its search and gave the builder's warnings, with numpy's words; the
        # release's labels and maps are the hierarchy built here from the DataFrame, silently
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TempanonWarning)
            for q in built:
                encoders[q] = encoders[q].build_for(df[q].rename(q))
    dims, cols = [], []
    for a in attrs:
        d, c = encoders[a].encode(df[a].rename(a))
        dims.append(d)
        cols.append(np.asarray(c, dtype=np.int64))
    uid_codes = encode_uid(df, uid)
    n = len(df)
    max_sup = int(np.floor(max_suppression * n + 1e-9))
    zkey = dense(np.where(missing, np.iinfo(np.int64).min, z0))[0]
    chosen, metrics, bounded = select_joint(res, dims, metric, int(k), max_sup,
                                            lambda nd: _metrics(dims, cols, nd, uid_codes, zkey, int(k)))
    m = node_metrics(node_classes(dims, cols, chosen), uid_codes, zkey, int(k))
    if m["suppressed"] > max_sup:  # cannot happen: minimal nodes are anonymous within the limit
        raise InputError("internal: selected node exceeds the suppression limit")
    cls = node_classes(dims, cols, chosen)
    keep = ~m["small"][cls]
    out = df.loc[keep].copy()
    for a, d, v, c in zip(attrs, dims, chosen, cols):
        out[a] = pd.Series(d.labels[v][d.codes[v][c[keep]]], index=out.index, dtype=object)
    if uid is not None:
        out = out.drop(columns=[uid])
    otimes = pd.Series(pd.to_datetime(np.where(missing, 0, instants), unit="s"), index=df.index).where(~missing)
    gen_qi = [q for q in qi if q in hierarchies]
    report = check_timestamped_release(df, out, time=time, qi=list(qi), uid=uid, k=int(k),
                                       granularity=dims[0].level_names[chosen[0]], original_times=otimes,
                                       n_input=n, max_suppressed=max_sup, generalized_qi=gen_qi)  # fmt: skip
    mapping = {}
    for q, v in zip(attrs[1:], chosen[1:]):
        enc = encoders[q]
        if hasattr(enc, "mapping"):
            mapping[q] = enc.mapping(v)
    if mapping:
        # every distinct (original, released) pair checked once: identical pairs give identical results
        cols_m = list(mapping)
        pairs = pd.concat([df.loc[out.index, cols_m].add_prefix("o:"), out[cols_m].add_prefix("r:")], axis=1)
        first = ~pairs.astype(object).where(pairs.notna(), "\x00<NA>").duplicated()
        check_generalization(df, out.loc[first[first].index], mapping)
        report["qi_generalization"] = "checked against the hierarchy files"
    # the quasi-identifiers at level 0 of the joint lattice, as the search and the release see them
    # (a hierarchy reads a missing value as its text "": '' and a missing value are one base value)
    base = pd.DataFrame({q: c for q, c in zip(qi, cols[1:])}, index=df.index)
    candidates = _time_candidates(base, qi, dag, instants, missing, z0, uid_codes, int(k), max_sup, engine=engine,
                                  memory_limit=memory_limit, spark_master=spark_master)
    summary = joint_summary(res, attrs, dims, dag, chosen, m, metrics, bounded, k=int(k), uid=uid, time=time, qi=qi,
                            metric=metric, max_suppression=max_suppression, max_sup=max_sup, n=n,
                            respondents=int(np.count_nonzero(np.bincount(uid_codes))), released=int(keep.sum()),
                            candidates=candidates, tinfo=tinfo, search_seconds=search_seconds, report=report,
                            stopped=stopped, plan=plan)  # fmt: skip
    node_desc = summary["granularity"]
    result = TimestampedResult(out, summary, dag, str(node_desc))
    result._class_key = cls[keep]  # joint classes of the released rows, for the within-class shuffle
    return result


INCOGNITO_CRITERIA = ("height", "loss", "discernibility")


def select_joint(res, dims: Sequence[Dimension], metric: str, k: int, max_sup: int,
                 metrics_of: Callable[[tuple], dict]) -> tuple[tuple, dict, int]:  # fmt: skip
    """The released node of a joint search (see the module docstring) and the metrics computed on
    the way: ``(chosen, {node: metrics}, nodes skipped by the bound)``. ``metrics_of(node)`` gives
    :func:`node_metrics`' keys (the driver's codes in memory, the engine's ``GROUP BY`` out of
    core), so both paths visit and skip the same nodes."""
    from tempanon.temporal.least import sort_key

    metrics: dict = {}
    # Without suppression gen_c is monotone along the lattice (Theorem 4), so the least node is
    # minimal; with suppression it is not (gen_m counts the released classes only), so every
    # anonymous node is a candidate.
    pool = res.minimal_nodes if max_sup == 0 or metric in INCOGNITO_CRITERIA else res.anonymous_nodes
    height = lambda nd: sum(d.heights[v] for d, v in zip(dims, nd))  # noqa: E731
    order = metric if metric not in INCOGNITO_CRITERIA else "gen_c"  # the engine selects by the Incognito criteria

    def key(nd):
        m = metrics[nd]
        return (*sort_key(_Check(m), order, 0)[:-1], height(nd), tuple(nd))

    reach = [_reachability(d) for d in dims]
    bounded = 0
    best = None
    for node in sorted(map(tuple, pool), key=lambda nd: (height(nd), nd)):  # finer first
        if best is not None and max_sup > 0 and metric not in INCOGNITO_CRITERIA:  # (the bound is on gen_c's order)
            # a node cannot beat the best if gen_m >= k and gen_s <= the respondents of all classes of a
            # computed node below it (each of its classes is a union of theirs): skip it
            below = [metrics[a]["gen_s_all"] for a in metrics
                     if a != node and all(r[x, y] for r, x, y in zip(reach, a, node))]  # fmt: skip
            if below:
                ub = min(below)
                lb = (*sort_key(_Check({"gen_m": int(k), "gen_s": ub}), metric, 0)[:-1], height(node), node)
                if key(best) < lb:
                    bounded += 1
                    continue
        metrics[node] = metrics_of(node)
        if best is None or key(node) < key(best):
            best = node
    if metric in INCOGNITO_CRITERIA:  # the Incognito issue's criteria, selected by the engine
        chosen = tuple(res.selected_node)
        metrics[chosen] = metrics_of(chosen)
    else:
        chosen = min(metrics, key=key)
    return chosen, metrics, bounded


def candidate_entries(dag: GranularityDAG, checks: Sequence) -> list[dict]:
    """The summary's ``candidates`` of a joint search: every granularity of G with the other
    quasi-identifiers unchanged (``checks[v]``: Procedure 2's :class:`~tempanon.temporal.least.Check`
    of ``dag.nodes[v]``, or the metrics of the joint node ``(v, 0, ..., 0)``)."""
    out = []
    for v, g in enumerate(dag.nodes):
        c = checks[v]
        out.append({"granularity": g.name, "compatible": True, "k_anonymous": c.k_anonymous, "gen_m": c.gen_m,
                    "gen_s": c.gen_s, "suppressed": c.suppressed, "min_respondents": c.min_respondents,
                    "directly_coarser": [dag.nodes[p].name for p in dag.parents[v]],
                    "other_qi": "unchanged"})  # fmt: skip
    for name, why in dag.disregarded.items():
        out.append({"granularity": name, "compatible": False, "reason": why, "k_anonymous": None,
                    "gen_m": None, "gen_s": None})  # fmt: skip
    for name, same in dag.equivalent.items():
        out.append({"granularity": name, "compatible": True, "equivalent_to": same})
    return out


def joint_summary(res, attrs: Sequence[str], dims: Sequence[Dimension], dag: GranularityDAG, chosen: tuple, m: dict,
                  metrics: dict, bounded: int, *, k: int, uid: str | None, time: str, qi: Sequence[str], metric: str,
                  max_suppression: float, max_sup: int, n: int, respondents: int, released: int, candidates: list,
                  tinfo: dict, search_seconds: float, report: dict, stopped=None, plan: dict | None = None) -> dict:  # fmt: skip
    """The summary of a joint search (the in-memory and the out-of-core paths write the same keys)."""
    node_desc = {a: d.level_names[v] for a, d, v in zip(attrs, dims, chosen)}
    summary = {
        "k": int(k),
        "respondents": int(respondents),
        "tuples": int(n),
        "released_tuples": int(released),
        "uid": uid,
        "time": time,
        "qi": list(qi),
        "mode": "joint",
        "data_granularity": dag.nodes[0].name,
        "granularity": node_desc,
        "node": list(map(int, chosen)),
        "metric": metric,
        "gen_m": m["gen_m"],
        "gen_s": m["gen_s"],
        "gen_c": [m["gen_m"], m["gen_s"]],
        "suppressed": m["suppressed"],
        "max_suppression": float(max_suppression),
        "max_suppressed_tuples": int(max_sup),
        "lattice_size": res.lattice_size,
        "nodes_checked": res.nodes_checked,
        "anonymous_nodes": len(res.anonymous_nodes),
        "metrics_computed": len(metrics),
        "skipped_by_bound": bounded,  # anonymous nodes whose gen_c provably cannot beat the chosen one
        "minimal_k_anonymous": [
            {**{a: d.level_names[v] for a, d, v in zip(attrs, dims, nd)},
             "gen_m": metrics[tuple(nd)]["gen_m"], "gen_s": metrics[tuple(nd)]["gen_s"]}
            for nd in res.minimal_nodes
        ],  # fmt: skip
        "candidates": candidates,
        "messages": list(dag.messages),
        "timestamps": tinfo,
        "search_seconds": search_seconds,
        "verification": report,
    }
    if stopped:
        summary["budget"] = {"exhausted": True, "why": str(stopped),
                             "note": "the time limit stopped the joint search: the release is the best verified node "
                                     "among those proved anonymous, not necessarily the least"}  # fmt: skip
        summary["messages"].append(summary["budget"]["note"])
    if plan is not None:
        summary["plan"] = plan
    return summary


def _reachability(d: Dimension) -> np.ndarray:
    """``r[a, b]``: level ``b`` of the dimension is level ``a`` or above it (along ``parents``)."""
    n = len(d.parents)
    r = np.eye(n, dtype=bool)
    for a in range(n):
        stack = list(d.parents[a])
        while stack:
            b = stack.pop()
            if not r[a, b]:
                r[a, b] = True
                stack.extend(d.parents[b])
    return r


class _Check:
    def __init__(self, m):
        self.gen_m, self.gen_s = m["gen_m"], m["gen_s"]


def _time_candidates(df, qi, dag, instants, missing, z0, uid_codes, k, max_sup, *, engine: str = "numpy",
                     memory_limit: str | None = None, spark_master: str | None = None) -> list[dict]:  # fmt: skip
    """Every granularity of G with the other quasi-identifiers unchanged (Procedure 2 on each;
    ``engine="duckdb"``: as ``GROUP BY`` in DuckDB, :class:`~tempanon.lattice.source_temporal.DuckDBTimeSource`;
    ``"spark"``: the same in Spark SQL).
    ``df[qi]`` holds the quasi-identifiers' base codes of the joint lattice, i.e. the nodes
    ``(v, 0, ..., 0)``, as the out-of-core joint search computes them."""
    from tempanon.temporal.api import encode_columns
    from tempanon.temporal.least import check_granularity, prepare

    q = encode_columns(df, qi)
    if engine in ("duckdb", "spark"):
        from tempanon.lattice.source_temporal import time_source

        src = time_source(engine, q, instants, missing, uid_codes, memory_limit=memory_limit, spark_master=spark_master)
        try:
            checks = [src.check(g, k, max_sup) for g in dag.nodes]
        finally:
            src.close()
    else:
        prep = prepare(q, instants, missing, uid_codes, np.where(missing, 0, z0))
        checks = [check_granularity(prep, g, k, max_sup) for g in dag.nodes]
    return candidate_entries(dag, checks)
