"""Least k-anonymous generalization of timestamps (Mascetti et al., TIME 2006, Section 4).

Respondent-level k-anonymity (Section 2, Definitions 1-4): the relation holds many tuples per
respondent (``uid``); an equivalence class (the tuples sharing the quasi-identifier values and the
generalized timestamp) is safe when it holds at least ``k`` *distinct respondents*.

Metrics (Definitions 5-8, as implemented here; see docs/temporal.md). Generalizing the relation
``V`` with granularity ``G`` replaces each timestamp by its granule of ``G``; for an equivalence
class ``c`` of the result let ``n(c)`` be the number of distinct original timestamps (granules of
the data's granularity) it merges.

* ``gen_m(V, G) = max_c n(c)``: the largest number of original timestamps made indistinguishable;
* ``gen_s(V, G) = sum_c (n(c) - 1)``: the total number of distinctions lost;
* ``gen_c(V, G) = (gen_m, gen_s)``, and ``G1 <=_c G2`` iff ``gen_c(G1)`` is lexicographically at
  most ``gen_c(G2)`` (ties broken by the order of the granularities in G, making it a total order).

With suppression (``max_suppression``), the tuples of classes with fewer than ``k`` respondents are
removed if they are at most that fraction of the relation; the metrics count released classes.
All three metrics are monotone along finer-than (a coarser granularity merges classes), so the
least generalization is among the *minimal* anonymous granularities, which is what Procedure 1
collects.

Algorithm 1 (:func:`least_generalization`) calls Procedure 1 (:func:`_descend`, recursive descent
over the directly-coarser DAG from the data's granularity, not visiting a granularity coarser than
one already found anonymous) and Procedure 2 (:func:`check_granularity`, one pass over the relation
sorted once by quasi-identifiers and time). Procedure 2 is vectorized: the relation is sorted
once (:func:`prepare`); for a granularity ``H`` the granule of each tuple is ``up`` of its data
granule, which for a data granularity finer than ``H`` is ``H.index`` of its instant; granule
indexes are order-preserving, so classes are runs of the sorted relation and respondent counts
come from a precomputed "previous tuple of the same respondent and QI values" link, with no sort
per granularity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from tempanon.errors import InputError, NoSolutionError
from tempanon.temporal.granularity import GAP, Granularity
from tempanon.temporal.relations import GranularityDAG

MISSING_KEY = np.int64(np.iinfo(np.int64).min + 1)  # class key of a missing timestamp

METRICS = ("gen_c", "gen_m", "gen_s")


@dataclass
class Prepared:
    """The relation sorted once by (quasi-identifier code, time)."""

    order: np.ndarray  # sorted position -> original row
    q: np.ndarray  # QI combination code (sorted)
    t: np.ndarray  # instants (sorted; 0 where missing)
    missing: np.ndarray  # missing timestamp (sorted)
    prev: np.ndarray  # previous sorted position with the same (q, uid), -1 if none
    n_respondents: int
    z: np.ndarray  # granule of the data's granularity (the "original timestamp"), sorted

    @property
    def n(self) -> int:
        return len(self.order)


def _sort_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Stable argsort by (a, b): one int64 key argsort when the pair fits, else lexsort."""
    if len(a) == 0:
        return np.arange(0, dtype=np.int64)
    amin, bmin = int(a.min()), int(b.min())
    arange, brange = int(a.max()) - amin + 1, int(b.max()) - bmin + 1
    if arange * brange < 2**62:
        return np.argsort((a - amin) * brange + (b - bmin), kind="stable")
    return np.lexsort((b, a))


def prepare(q: np.ndarray, instants: np.ndarray, missing: np.ndarray, uid: np.ndarray,
            z: np.ndarray | None = None) -> Prepared:
    """Sort the relation by (QI code, time) and link each tuple to the previous tuple of the same
    respondent with the same QI values (two sorts, done once for all granularities)."""
    q = np.asarray(q, dtype=np.int64)
    uid = np.asarray(uid, dtype=np.int64)
    missing = np.asarray(missing, dtype=bool)
    lowest = int(instants[~missing].min()) - 1 if (~missing).any() else 0
    tkey = np.where(missing, lowest, instants)  # missing times first within their QI values
    order = _sort_pairs(q, tkey)
    qs, us = q[order], uid[order]
    o2 = _sort_pairs(qs, us)  # stable: ties keep the sorted position order
    same = np.r_[False, (qs[o2][1:] == qs[o2][:-1]) & (us[o2][1:] == us[o2][:-1])]
    prev = np.full(len(order), -1, dtype=np.int64)
    prev[o2[same]] = o2[np.nonzero(same)[0] - 1]
    ts = np.asarray(instants, np.int64)[order]
    zs = ts if z is None else np.asarray(z, np.int64)[order]
    return Prepared(order, qs, ts, np.asarray(missing, bool)[order], prev, int(np.count_nonzero(np.bincount(uid - uid.min()))) if len(uid) else 0, zs)


@dataclass
class Check:
    """Outcome of Procedure 2 for one granularity."""

    name: str
    k_anonymous: bool
    suppressed: int  # tuples removed (classes below k)
    gen_m: int
    gen_s: int
    classes: int
    min_respondents: int  # smallest respondent count over all classes (before suppression)
    granule: np.ndarray | None = field(default=None, repr=False)  # class key per sorted tuple
    keep: np.ndarray | None = field(default=None, repr=False)  # kept per sorted tuple

    @property
    def gen_c(self) -> tuple[int, int]:
        return (self.gen_m, self.gen_s)


def granule_keys(prep: Prepared, g: Granularity) -> np.ndarray:
    """Granule index of every sorted tuple under ``g`` (``MISSING_KEY`` for missing times)."""
    h = g.index(prep.t)
    if bool(np.any((h == GAP) & ~prep.missing)):
        j = int(np.nonzero((h == GAP) & ~prep.missing)[0][0])
        raise InputError(f"timestamp of row {int(prep.order[j]) + 1} lies in no granule of {g.name}")
    return np.where(prep.missing, MISSING_KEY, h)


def check_granularity(prep: Prepared, g: Granularity, k: int, max_suppressed: int = 0,
                      *, keep_arrays: bool = False) -> Check:  # fmt: skip
    """Procedure 2: respondent-level k-anonymity of the relation generalized by ``g`` and its
    metrics, in one vectorized pass over the sorted relation."""
    n = prep.n
    if n == 0:
        return Check(g.name, True, 0, 0, 0, 0, 0)
    h = granule_keys(prep, g)
    q = prep.q
    new_class = np.empty(n, dtype=bool)
    new_class[0] = True
    np.not_equal(q[1:], q[:-1], out=new_class[1:])
    new_class[1:] |= h[1:] != h[:-1]
    starts = np.flatnonzero(new_class)
    sizes = np.diff(np.r_[starts, n])
    prev = prep.prev
    new_resp = (prev < 0) | (h[np.maximum(prev, 0)] != h)
    resp = np.add.reduceat(new_resp.astype(np.int64), starts)
    new_ts = new_class.copy()
    z = prep.z
    new_ts[1:] |= z[1:] != z[:-1]
    nts = np.add.reduceat(new_ts.astype(np.int64), starts)
    small = resp < k
    suppressed = int(sizes[small].sum())
    ok = suppressed <= max_suppressed
    kept_nts = nts[~small]
    gen_m = int(kept_nts.max()) if len(kept_nts) else 0
    gen_s = int((kept_nts - 1).sum())
    c = Check(g.name, ok, suppressed, gen_m, gen_s, int(len(starts)), int(resp.min()))
    if keep_arrays:
        c.granule = h
        c.keep = np.repeat(~small, sizes)
    return c


def sort_key(c: Check, metric: str, position: int) -> tuple:
    """The total order used to pick the least generalization: ``<=_c`` for gen_c (gen_m then
    gen_s), or one metric alone; ties go to the granularity listed first."""
    if metric == "gen_c":
        return (c.gen_m, c.gen_s, position)
    if metric == "gen_m":
        return (c.gen_m, position)
    if metric == "gen_s":
        return (c.gen_s, position)
    raise InputError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")


@dataclass
class LeastResult:
    """Result of Algorithm 1."""

    chosen: int  # node of the DAG
    checks: dict[int, Check]  # nodes evaluated by Procedure 2
    minimal: list[int]  # minimal k-anonymous nodes
    pruned: dict[int, int]  # node -> anonymous node it is coarser than (not evaluated)
    metric: str


def least_generalization(prep: Prepared, dag: GranularityDAG, k: int, *, metric: str = "gen_c",
                         max_suppressed: int = 0,
                         progress: Callable[[str, int, int], None] | None = None) -> LeastResult:  # fmt: skip
    """Algorithm 1 (leastGeneralization): find the minimal respondent-level k-anonymous
    granularities of the DAG by Procedure 1 and return the least one by ``metric``."""
    if k < 1:
        raise InputError(f"k must be at least 1 (got {k})")
    sort_key(Check("", True, 0, 0, 0, 0, 0), metric, 0)
    checks: dict[int, Check] = {}
    anonymous: list[int] = []
    pruned: dict[int, int] = {}
    total = len(dag.nodes)

    def descend(v: int) -> None:  # Procedure 1
        if v in checks or v in pruned:
            return
        finer_anon = next((a for a in anonymous if dag.finer[a, v]), None)
        if finer_anon is not None:
            pruned[v] = finer_anon
            return
        c = check_granularity(prep, dag.nodes[v], k, max_suppressed)
        checks[v] = c
        if progress is not None:
            progress("granularities", len(checks) + len(pruned), total)
        if c.k_anonymous:
            anonymous.append(v)
            return
        for p in dag.parents[v]:
            descend(p)

    descend(0)
    for v in range(total):  # not reached: above an anonymous granularity (generalization property)
        if v not in checks and v not in pruned:
            pruned[v] = next(a for a in anonymous if dag.finer[a, v])
    minimal = [v for v in anonymous if not any(a != v and dag.finer[a, v] for a in anonymous)]
    if not minimal:
        tried = ", ".join(f"{dag.nodes[v].name} (smallest class {c.min_respondents} respondents, "
                          f"{c.suppressed} tuples below k)" for v, c in checks.items())  # fmt: skip
        raise NoSolutionError(
            f"no granularity makes the relation {k}-anonymous at the respondent level"
            f"{' within the suppression limit' if max_suppressed else ''}; tried {tried}. "
            f"Add coarser granularities (e.g. year), allow suppression, or lower k."
        )
    chosen = min(minimal, key=lambda v: sort_key(checks[v], metric, v))
    return LeastResult(chosen, checks, minimal, pruned, metric)


def brute_force(prep: Prepared, granularities: Sequence[Granularity], k: int, *, metric: str = "gen_c",
                max_suppressed: int = 0) -> tuple[int | None, list[Check]]:  # fmt: skip
    """Check every granularity directly; return the best anonymous one's position and all checks."""
    checks = [check_granularity(prep, g, k, max_suppressed) for g in granularities]
    ok = [i for i, c in enumerate(checks) if c.k_anonymous]
    if not ok:
        return None, checks
    return min(ok, key=lambda i: sort_key(checks[i], metric, i)), checks
