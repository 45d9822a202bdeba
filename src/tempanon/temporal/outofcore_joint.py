"""Out-of-core joint search of time and quasi-identifiers on DuckDB (issue 15; the joint search of
:mod:`tempanon.temporal.joint`, Mascetti et al. TIME 2006 Section 6's future work, run as
Incognito over the product of the granularity DAG and the hierarchies).

:func:`run_joint` is the ``hierarchies`` branch of
:func:`tempanon.temporal.outofcore.anonymize_timestamped_file`: the file is read in place by
DuckDB, the driver holds per-distinct-value tables and dimensions only.

* Dimensions are built from **distinct values**: the granularity DAG's dimension from the distinct
  timestamps (already parsed per distinct value by the caller,
  :class:`~tempanon.temporal.joint.GranularityHierarchy`), each hierarchy from its column's
  distinct texts (a value missing from the hierarchy is named with its first file line), the
  quasi-identifiers without a hierarchy as they are (:class:`~tempanon.temporal.joint.Unchanged`).
* The frequency sets of the search, the selection's metrics (respondents per joint class, gen_m,
  gen_s, suppressed tuples) and the time-only candidates (nodes ``(v, 0, ..., 0)``) come from
  :class:`~tempanon.lattice.source_temporal.DuckDBJointFileSource` (``GROUP BY`` over the
  bottom set kept in DuckDB, fetched only when it fits the driver).
* The release is written by ``COPY`` to a temporary file beside the output (rows grouped by joint
  class, ordered within a class by a salted hash), verified by
  :func:`~tempanon.temporal.outofcore.verify_written` on the written file (time labels recomputed
  by pandas' calendar code, generalized quasi-identifiers by the hierarchy files' text mappings,
  respondents counted in SQL), then renamed into place.

Results (node, metrics, candidates, minimal nodes, released rows) are those of the in-memory numpy
joint search (tests/engine/test_engine_temporal.py).
"""

from __future__ import annotations

import os
import secrets
import time as _time
from pathlib import Path

import numpy as np
import pandas as pd

from tempanon.errors import InputError


def run_joint(sq, *, out, time, qi, uid, k, hierarchies, dag, vcol, values, instants, missing, z0, tinfo, metric,
              max_suppression, max_suppressed, time_limit, progress, announce, keep, drop, sensitive, left_out,
              release_cols, allow_identifier, overrides, memory_limit, shuffle_seed, timezone,
              max_driver_rows=None, audit=None, measures=False, before_release=None):  # fmt: skip
    import pyarrow as pa

    from tempanon.errors import HierarchyError
    from tempanon.hierarchy.builders import HierarchySpec
    from tempanon.hierarchy.core import Hierarchy
    from tempanon.kanon.api import _screen, kanonymize
    from tempanon.lattice.source_duckdb import _is_parquet
    from tempanon.lattice.source_temporal import DuckDBJointFileSource
    from tempanon.temporal.api import TimestampedResult
    from tempanon.temporal.joint import (INCOGNITO_CRITERIA, GranularityHierarchy, Unchanged, candidate_entries,
                                         joint_summary, select_joint)  # fmt: skip
    from tempanon.temporal.least import Check
    from tempanon.temporal.outofcore import finish_summary, verify_written, write_release

    t0 = _time.perf_counter()  # (the shuffle seed is checked by outofcore._run, before the timestamps)
    Q = sq.q  # the engine's identifier quoting
    eng = "DuckDB" if sq.engine == "duckdb" else "Spark"
    n = sq.n_rows
    encoders: dict = {}
    for q in qi:
        h = hierarchies.get(q, Unchanged())
        encoders[q] = Hierarchy.from_csv(h, name=q) if isinstance(h, (str, os.PathLike)) else h

    # ---- dimensions from distinct values ----------------------------------------------------------
    gh = GranularityHierarchy(dag, instants, missing, z0, name=time)
    tdim, tbase = gh.dimension_and_codes()
    dims = [tdim]
    stamps = sq._timestamp_kinds("src")  # the input's typed timestamp columns
    keys = [f"s.{Q(time)}"]
    key_tables = [pa.table({"v": vcol, "c": pa.array(tbase, pa.int64())})]
    for q in qi:
        enc = encoders[q]
        if isinstance(enc, Unchanged):  # the value as it is (a missing value is a value of its own)
            # sorted: the codes follow this order and are the release's class key (a plain DISTINCT comes
            # back in the order of the engine's threads: another file on every run with the same seed)
            col = sq._arrow(f"SELECT v FROM (SELECT DISTINCT s.{Q(q)} AS v FROM src s) x ORDER BY v").column("v").combine_chunks()
            d, c = enc.encode(col.to_pandas().rename(q))
            keys.append(f"s.{Q(q)}")
            key_tables.append(pa.table({"v": col, "c": pa.array(np.asarray(c, dtype=np.int64))}))
        else:  # hierarchies see the text, a missing value as "" (as Hierarchy.encode does in memory)
            # a typed timestamp's text comes from its map (SQLSource._timestamp_map: typed value v, text t, a
            # missing value's ""), computed once per distinct value; its rows are keyed by the typed value,
            # each distinct value given the code of its text, as text_join does
            mp = sq._timestamp_map(q) if q in stamps else None
            if mp is None:
                vals = sq.distinct_values(q).rename(q)
            else:  # (the texts and their order as distinct_values gives them)
                vals = pd.Series(sq._arrow(f"SELECT DISTINCT t FROM {mp} ORDER BY t").column("t").to_pylist(), dtype=object, name=q)
            try:
                if isinstance(enc, HierarchySpec):
                    # built here from the engine's texts, once: the release's labels and the verification's maps
                    # are the built hierarchy's (a spec has no mapping: its class was 'not the generalization of
                    # any input rows', exit 3, where numpy released)
                    enc = encoders[q] = sq._build_spec(q, enc, vals)
                d, c = enc.encode(vals)
            except HierarchyError:
                sq._raise_missing(q, encoders[q], vals)  # the values with the file lines of their first rows
                sq._raise_built(q, encoders[q])  # a hierarchy built from the data: its bad values in file order, as numpy
                raise
            codes = np.asarray(c, dtype=np.int64)
            if mp is None:
                keys.append(sq.text_expr(q))
                key_tables.append(pa.table({"v": pa.array(vals.tolist(), pa.string()), "c": pa.array(codes)}))
            else:
                code = dict(zip(vals.tolist(), codes.tolist()))
                tv = sq._arrow(f"SELECT v, t FROM {mp}")
                keys.append(f"s.{Q(q)}")
                key_tables.append(pa.table({"v": tv.column("v").combine_chunks(),
                                            "c": pa.array([code[t] for t in tv.column("t").to_pylist()], pa.int64())}))
        d.name = q
        dims.append(d)
    attrs = [time, *qi]
    encoders[time] = gh

    if announce is not None:
        announce(f"joint search: {len(dag.nodes)} time granularities x the hierarchies of {', '.join(hierarchies)} "
                 f"(Incognito, pruned by the generalization property) on {eng}, the file read in place"
                 f"{'; at most ' + format(time_limit, 'g') + ' s (--time-limit)' if time_limit else ''}")  # fmt: skip
    src = DuckDBJointFileSource(sq, dims, keys, key_tables, uid=uid, max_driver_rows=max_driver_rows,
                                memory_limit=memory_limit)  # fmt: skip
    try:
        engine_criterion = metric if metric in INCOGNITO_CRITERIA else "height"
        budget = {"time_limit": time_limit} if time_limit is not None else {}
        res = kanonymize(src, attrs, encoders, int(k), uid=uid, max_suppression=max_suppression, algorithm="incognito",
                         criterion=engine_criterion, progress=progress, notice=announce, screen=False, **budget)  # fmt: skip
        stopped = getattr(getattr(getattr(res, "search", None), "stats", None), "stopped", None)
        search_seconds = _time.perf_counter() - t0
        chosen, metrics, bounded = select_joint(res, dims, metric, int(k), max_suppressed,
                                                lambda nd: src.node_metrics(nd, k))  # fmt: skip
        m = src.node_metrics(chosen, k)
        if m["suppressed"] > max_suppressed:  # cannot happen: minimal nodes are anonymous within the limit
            raise InputError("internal: selected node exceeds the suppression limit")
        zero = (0,) * len(qi)
        checks = []
        for v, g in enumerate(dag.nodes):  # time alone, the other quasi-identifiers unchanged (Procedure 2)
            c = src.node_metrics((v, *zero), k)
            checks.append(Check(g.name, c["suppressed"] <= max_suppressed, c["suppressed"], c["gen_m"], c["gen_s"],
                                c["classes"], c["min_respondents"]))  # fmt: skip
        small = src.small_classes(chosen, k)
        plan = src.describe()
    finally:
        src.close()
    # quasi-identifiers with a hierarchy that the search left at level 0 are released unchanged: screened now
    overrides = list(overrides) + _screen(sq, [q for q, v in zip(qi, chosen[1:]) if v == 0 and q in hierarchies],
                                          allow_identifier, uid, time)  # fmt: skip

    # ---- the release, written by DuckDB -------------------------------------------------------------
    for j, (d, v, kt) in enumerate(zip(dims, chosen, key_tables)):
        base = kt.column("c").to_numpy().astype(np.int64)
        g = d.codes[v][base]
        lab = d.labels[v][g]
        sq._register(f"jrdim{j}", pa.table({"v": kt.column("v"), "g": pa.array(g, pa.int64()),
                                            "label": pa.array([None if x is None else str(x) for x in lab], pa.string())}))  # fmt: skip
    if len(small):
        sq._register("jsmall", pa.table({f"g{j}": pa.array(small[:, j], pa.int64()) for j in range(len(dims))}))
    out_cols = [c for c in sq.columns if c in set(release_cols)]
    pos = {a: j for j, a in enumerate(attrs)}
    generalized = {time} | {q for q in qi if not isinstance(encoders[q], Unchanged)}
    single_csv = len(out_cols) == 1 and not _is_parquet(Path(out))  # an empty line would be skipped by readers
    exprs = {c: (f"r{pos[c]}.label" if c in generalized else f"s.{Q(c)}") for c in out_cols}
    sel = [f"coalesce({e}, '') AS {Q(c)}" if single_csv and c in generalized else
           (f"{e} AS {Q(c)}" if c in generalized else e) for c, e in exprs.items()]  # fmt: skip
    joins = " ".join(f"JOIN jrdim{j} r{j} ON {e} IS NOT DISTINCT FROM r{j}.v" for j, e in enumerate(keys))
    anti = ""
    if len(small):
        anti = f" {sq.anti_join} jsmall m ON " + " AND ".join(f"r{j}.g = m.g{j}" for j in range(len(dims)))
    salt = secrets.randbelow(2**62) if shuffle_seed is None else int(shuffle_seed) % 2**62
    cards = [max(int(d.cardinality(v)), 1) for d, v in zip(dims, chosen)]
    if float(np.prod(np.asarray(cards, dtype=np.float64))) < 2**62:
        ck = "r0.g"
        for j in range(1, len(dims)):
            ck = f"({ck}) * {cards[j]} + r{j}.g"
        class_key = [f"CAST({ck} AS BIGINT)"]
    else:
        class_key = [f"r{j}.g" for j in range(len(dims))]
    texts = [f"CAST({e} AS {sq.text_type})" for e in exprs.values()]
    order = [*class_key, f"hash({', '.join([*texts, str(salt)])})"]
    qi_maps = {q: encoders[q].mapping(v) for q, v in zip(qi, chosen[1:]) if hasattr(encoders[q], "mapping")}

    def verify(tmp, parquet, audit_tmp):
        return verify_written(sq, tmp, parquet, time=time, qi=qi, uid=uid, k=int(k), out_cols=out_cols, values=values,
                              vcol=vcol, instants=instants, missing=missing, granularity=dag.nodes[chosen[0]],
                              timezone=timezone, n_input=n, max_suppressed=max_suppressed,
                              expected_rows=n - m["suppressed"], qi_maps=qi_maps, audit=audit_tmp,
                              measures=measures)  # fmt: skip

    report = write_release(sq, select=sel, body=f"FROM src s {joins}{anti}", order=order, out=out, verify=verify,
                           audit=audit, uid=uid, seed=salt, before_release=before_release,
                           materialize=True)  # fmt: skip
    measured = report.pop("measures", None)

    # ---- summary, as the in-memory joint search's ------------------------------------------------------
    summary = joint_summary(res, attrs, dims, dag, chosen, m, metrics, bounded, k=int(k), uid=uid, time=time, qi=qi,
                            metric=metric, max_suppression=max_suppression, max_sup=max_suppressed, n=n,
                            respondents=src.n_uid, released=n - m["suppressed"],
                            candidates=candidate_entries(dag, checks), tinfo=tinfo, search_seconds=search_seconds,
                            report=report, stopped=stopped)  # fmt: skip
    finish_summary(summary, report, k=k, uid=uid, time=time, qi=qi, keep=keep, sensitive=sensitive,
                   left_out=left_out, drop=drop, overrides=overrides, tinfo=tinfo, shuffle_seed=shuffle_seed,
                   audit=audit)  # fmt: skip
    summary["plan"] = {**plan, "engine": sq.engine,
                       "input": f"{sq.input} read in place by {eng}" + (" (out of core)" if eng == "DuckDB" else ""),
                       "release": (f"written by {eng} to a temporary " + ("file" if eng == "DuckDB" else "directory of part files")
                                   + ", verified by SQL on what was written, renamed into place")}  # fmt: skip
    return TimestampedResult(None, summary, dag, str(summary["granularity"]), measures=measured)  # type: ignore[arg-type]


__all__ = ["run_joint"]
