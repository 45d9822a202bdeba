"""Least k-anonymous generalization of timestamps (Mascetti et al., TIME 2006, Section 4).

Respondent-level k-anonymity (Section 2, Definitions 1-4): the relation holds many tuples per
respondent (``uid``); an equivalence class (the tuples sharing the quasi-identifier values and the
generalized timestamp) is safe when its frequency set f (Definition 2: the number of *distinct
respondents*) is at least ``k``.

Metrics, exactly as the paper (Section 4.1). For the relation ``R_H`` generalized by ``H``:

* ``gen_m(R_H) = min_c f(c)`` (Definition 5): the largest k for which ``R_H`` is k-anonymous,
  ordered by ``<=`` (smaller is less general, Theorem 2);
* ``gen_s(R_H) = sum_c f(c)`` over the classes, as Procedure 2 computes it and Example 3 counts
  it (week 2+2+2 = 6, month 3+2 = 5), ordered by ``>=`` (larger is less general, Theorem 3);
* ``gen_c = <gen_m, gen_s>`` (Definition 7) with ``<a,b> <=_c <a',b'>`` iff ``a < a'`` or
  ``a = a'`` and ``b >= b'``.

The least generalization (Definition 8) is the minimum of the k-anonymous granularities under the
chosen order; ties (the paper allows several least ones) go to the granularity listed first.

Suppression (``max_suppressed``, beyond the paper): the tuples of classes with fewer than ``k``
respondents are removed if they are at most that many; the metrics are computed on the *released*
classes (the view ``V_a`` of Definition 4). Anonymity within the limit stays monotone along
finer-than (a coarser class is a union of finer ones, so it suppresses no more tuples), but the
metric does not: day may release one class of 3 respondents (gen_c <3,3>) where week releases
classes of 2 and 3 (<2,5>), and week is then less general although coarser. So Procedure 1's
pruning (do not visit a granularity coarser than an anonymous one) is used only without
suppression, where Theorems 2-4 justify it; with suppression every granularity coarser than an
anonymous one is known anonymous but still evaluated for its metric, unless a bound shows it cannot
beat the best one found (gen_m >= k, and gen_s is at most the sum of respondents of all classes of
any evaluated finer granularity, since each of its classes is a union of theirs).

Algorithm 1 (:func:`least_generalization`) calls Procedure 1 (recursive descent over the
directly-coarser DAG from the data's granularity) and Procedure 2 (:func:`check_granularity`,
one pass over the relation sorted once by quasi-identifiers and time). Procedure 2 as printed
starts with ``U = {}`` and never adds the first tuple's respondent (a typo: the first class
would be counted one short, week 1+2+2 = 5 in Example 3); every tuple is counted here. Procedure 2
is vectorized: the relation is sorted once (:func:`prepare`); for a granularity ``H`` the granule
of each tuple is ``up`` of its data granule, which for a data granularity finer than ``H`` is
``H.index`` of its instant; granule indexes are order-preserving, so classes are runs of the
sorted relation and respondent counts come from a precomputed "previous tuple of the same
respondent and QI values" link, with no sort per granularity.
"""

from __future__ import annotations

import math
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
    n_tuples: int = 0  # tuples of the relation
    gen_s_all: int = 0  # sum of the respondents of all classes, suppressed ones included (a bound)
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
        raise InputError(f"timestamp on line {int(prep.order[j]) + 2} lies in no granule of {g.name}")
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
    small = resp < k
    suppressed = int(sizes[small].sum())
    ok = suppressed <= max_suppressed
    kept = resp[~small]
    gen_m = int(kept.min()) if len(kept) else 0  # Definition 5 on the released classes
    gen_s = int(kept.sum())  # Procedure 2 / Example 3: sum of the classes' frequency sets
    c = Check(g.name, ok, suppressed, gen_m, gen_s, int(len(starts)), int(resp.min()), n, int(resp.sum()))
    if keep_arrays:
        c.granule = h
        c.keep = np.repeat(~small, sizes)
    return c


def sort_key(c: Check, metric: str, position: int) -> tuple:
    """The total order used to pick the least generalization (Definition 8), smallest first:
    ``<=_c`` for gen_c (gen_m ascending, then gen_s descending), gen_m by ``<=``, gen_s by ``>=``
    (Theorems 2-4); ties go to the granularity listed first."""
    if metric == "gen_c":
        return (c.gen_m, -c.gen_s, position)
    if metric == "gen_m":
        return (c.gen_m, position)
    if metric == "gen_s":
        return (-c.gen_s, position)
    raise InputError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")


def leq_c(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """``<a1,b1> <=_c <a2,b2>`` iff ``a1 < a2`` or ``a1 = a2`` and ``b1 >= b2`` (Section 4.1)."""
    return a[0] < b[0] or (a[0] == b[0] and a[1] >= b[1])


@dataclass
class LeastResult:
    """Result of Algorithm 1."""

    chosen: int  # node of the DAG
    checks: dict[int, Check]  # nodes evaluated by Procedure 2
    minimal: list[int]  # minimal k-anonymous nodes (among those evaluated)
    pruned: dict[int, int]  # node -> anonymous node it is coarser than (not evaluated)
    metric: str
    budget_exhausted: bool = False  # the time limit stopped the search: best of those evaluated
    not_reached: list[int] = field(default_factory=list)  # nodes neither evaluated nor pruned
    bounded: dict[int, str] = field(default_factory=dict)  # with suppression: cannot beat the best (why)


COARSE_HINTS = ("month", "quarter", "semester", "year")


def no_solution_message(dag: GranularityDAG, checks: dict[int, Check], k: int, max_suppressed: int,
                        budget: bool = False) -> str:  # fmt: skip
    """Why nothing was found, and hints that do not repeat what was already tried: coarser
    built-ins only beyond the coarsest one listed (a finer one cannot help: anonymity is monotone
    along finer-than), the suppression the closest granularity would need, the largest k reached."""
    tried = ", ".join(f"{dag.nodes[v].name} (smallest class {c.min_respondents} respondents, "
                      f"{c.suppressed} tuples below k)" for v, c in checks.items())  # fmt: skip
    listed = {g.name for g in dag.nodes} | set(dag.disregarded) | set(dag.equivalent)
    hints = []
    done = [i for i, g in enumerate(COARSE_HINTS) if g in listed]
    missing = [g for i, g in enumerate(COARSE_HINTS) if g not in listed and (not done or i > max(done))]
    if missing:
        hints.append(f"add coarser granularities ({', '.join(missing)})")
    if checks:
        n = _n_tuples(checks)
        fewest = min(checks.values(), key=lambda c: c.suppressed)
        top_k = max(checks.values(), key=lambda c: c.min_respondents)
        if fewest.suppressed < n:
            hints.append(f"allow suppression of at least {fewest.suppressed} of {n:,} tuples (max_suppression "
                         f"{_fraction_for(fewest.suppressed, n)}; the fewest below k, at {fewest.name})")  # fmt: skip
        else:
            hints.append("generalize the other quasi-identifiers too (--hierarchies): in every granularity tried, "
                         "every class has fewer than k respondents")
        hints.append(f"or lower k (the largest k reached without suppression is {top_k.min_respondents}, at {top_k.name})")
    if budget:
        hints.insert(0, "raise --time-limit (the search stopped before every granularity was checked)")
    return (f"no granularity makes the relation {k}-anonymous at the respondent level"
            f"{' within the suppression limit' if max_suppressed else ''}; tried {tried or 'none'}. "
            + "; ".join(hints) + ".")


def _fraction_for(count: int, n: int) -> str:
    """The shortest decimal ``f`` (up to 6 places, rounded up) with ``floor(f * n) >= count``: the
    ``max_suppression`` that allows ``count`` of ``n`` suppressed tuples (the API's conversion)."""
    for places in range(2, 7):
        f = math.ceil(count / n * 10**places) / 10**places
        if int(math.floor(f * n + 1e-9)) >= count and f < 1:
            return f"{f:.{places}f}"
    return f"{count / n:.6f}"


def _n_tuples(checks: dict[int, Check]) -> int:
    return max((c.n_tuples for c in checks.values()), default=0)


def least_generalization(prep: Prepared, dag: GranularityDAG, k: int, *, metric: str = "gen_c",
                         max_suppressed: int = 0, time_limit: float | None = None,
                         progress: Callable[[str, int, int], None] | None = None,
                         check: Callable[[Granularity, int, int], Check] | None = None) -> LeastResult:  # fmt: skip
    """Algorithm 1 (leastGeneralization): evaluate the granularities of the DAG by Procedure 1
    and return the least k-anonymous one by ``metric`` (Definition 8).

    Without suppression an anonymous granularity stops the descent (its coarser granularities are
    anonymous and no less general by Theorems 2-4). With suppression the metric is not monotone
    (see the module docstring), so a granularity is skipped only when a bound shows it cannot beat
    the best anonymous one found (gen_m >= k; gen_s at most the respondents of all classes of an
    evaluated finer granularity; ``bounded``). ``time_limit`` (seconds)
    stops the search before the next evaluation once exceeded; the result is then the best
    anonymous granularity among those evaluated (``budget_exhausted``); when none of them is, the
    coarsest granularities (no directly coarser one) are checked before giving up. ``check``
    replaces Procedure 2 on ``prep`` (an engine's, e.g.
    :meth:`tempanon.lattice.source_temporal.DuckDBTimeSource.check`; ``prep`` may then be None)."""
    import time as _time

    if check is None:
        def check(g: Granularity, k: int, max_suppressed: int) -> Check:
            return check_granularity(prep, g, k, max_suppressed)

    if k < 1:
        raise InputError(f"k must be at least 1 (got {k})")
    sort_key(Check("", True, 0, 0, 0, 0, 0), metric, 0)
    checks: dict[int, Check] = {}
    anonymous: list[int] = []
    pruned: dict[int, int] = {}
    total = len(dag.nodes)
    prune = max_suppressed == 0
    deadline = None if time_limit is None else _time.monotonic() + float(time_limit)
    stopped = False
    bounded: dict[int, str] = {}

    def best_possible(v: int) -> tuple | None:
        """A lower bound of ``sort_key`` for node ``v`` with suppression: its released classes hold
        at least k respondents each (gen_m >= k), and its gen_s is at most the sum of respondents
        of all classes of any evaluated finer granularity (a class of v is a union of theirs)."""
        ub = [checks[a].gen_s_all for a in checks if dag.finer[a, v] and a != v]
        if not ub:
            return None
        ub_s = min(ub)
        return {"gen_c": (k, -ub_s, v), "gen_m": (k, v), "gen_s": (-ub_s, v)}[metric], ub_s

    def descend(v: int) -> None:  # Procedure 1
        nonlocal stopped
        if v in checks or v in pruned or v in bounded or stopped:
            return
        if prune:
            finer_anon = next((a for a in anonymous if dag.finer[a, v]), None)
            if finer_anon is not None:
                pruned[v] = finer_anon
                return
        elif anonymous:  # suppression: skip v only if even its best possible metric loses
            b = min(anonymous, key=lambda a: sort_key(checks[a], metric, a))
            lb = best_possible(v)
            if lb is not None and sort_key(checks[b], metric, b) < lb[0]:
                bounded[v] = (f"bounded: cannot beat {dag.nodes[b].name} {checks[b].gen_c} (its gen_m >= {k}, its "
                              f"gen_s <= {lb[1]}, the respondents of the classes of a finer granularity)")
                for p in dag.parents[v]:
                    descend(p)
                return
        if deadline is not None and checks and _time.monotonic() > deadline:
            stopped = True
            return
        c = check(dag.nodes[v], k, max_suppressed)
        checks[v] = c
        if progress is not None:
            progress("granularities", len(checks) + len(pruned), total)
        if c.k_anonymous:
            anonymous.append(v)
            if prune:
                return
        for p in dag.parents[v]:
            descend(p)

    descend(0)
    if stopped and not anonymous:  # like kanon: before giving up, check the coarsest granularities
        for v in range(total):
            if not dag.parents[v] and v not in checks:
                c = check(dag.nodes[v], k, max_suppressed)
                checks[v] = c
                if c.k_anonymous:
                    anonymous.append(v)
    not_reached = []
    for v in range(total):  # not reached: above an anonymous granularity (generalization property)
        if v not in checks and v not in pruned and v not in bounded:
            a = next((a for a in anonymous if dag.finer[a, v]), None) if prune else None
            if a is not None:
                pruned[v] = a
            else:
                not_reached.append(v)
    minimal = [v for v in anonymous if not any(a != v and dag.finer[a, v] for a in anonymous)]
    if not minimal:
        raise NoSolutionError(no_solution_message(dag, checks, k, max_suppressed, stopped))
    pool = minimal if prune else anonymous
    chosen = min(pool, key=lambda v: sort_key(checks[v], metric, v))
    return LeastResult(chosen, checks, minimal, pruned, metric, stopped, not_reached, bounded)


def brute_force(prep: Prepared, granularities: Sequence[Granularity], k: int, *, metric: str = "gen_c",
                max_suppressed: int = 0) -> tuple[int | None, list[Check]]:  # fmt: skip
    """Check every granularity directly; return the best anonymous one's position and all checks."""
    checks = [check_granularity(prep, g, k, max_suppressed) for g in granularities]
    ok = [i for i, c in enumerate(checks) if c.k_anonymous]
    if not ok:
        return None, checks
    return min(ok, key=lambda i: sort_key(checks[i], metric, i)), checks
