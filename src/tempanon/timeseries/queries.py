"""Query workloads and measures of Section 7.1 (Shou et al., TKDE), on a release.

Every evaluator compares the answer on the original series ``X`` (in release-row order, e.g.
``X[released_source_rows(audit)]``) with the answer computed from the release alone. The pattern
of a series is the paper's feature vector ``p(r)``: all pairwise differences ``z_j - z_i``
(``i < j``) of its z-normalized values (Section 7.1); on the release, ``p*(r)`` is the same vector
of the series ``r'`` reconstructed from the published SAX word (probabilistic medians, Section
5.1; with PAA each symbol spread over its segment). Suppressed series (fewer than P) are in
neither answer.

* **PSQ** (pattern similarity query, Section 3.2): ``{r : D(p(r), p(q)) <= delta}``, the query
  series ``q`` drawn from the database, ``delta = lambda * mean_r D(p(r), p*(r))`` with ``lambda``
  uniform in ``[1, 10]`` (Section 7.1). ``D`` is the cosine distance of the pattern loss (Section
  4.2.3: the paper's one named distance of pattern vectors, so the tolerance unit "average
  distance between the pattern vectors extracted from the original and reconstructed series" is
  ``PL(T) / |T|``); ``distance="euclidean"`` uses the Euclidean distance in the feature space. Original answer ``A`` from ``p(r)``, published
  answer ``E`` from ``p*(r)``; measure ``precision = |A & E| / |E|``.
* **PRQ** (pattern range query, Section 3.2): ``{r : f_w(r) in [v_w^-, v_w^+]}`` on a random set of
  ``w`` components of ``p(.)`` (pairs ``i < j``: ``f = z_j - z_i``). The ranges: the paper takes
  them "using the method described in [11]" (Li, Tao, Xiao, SIGMOD 2008), which is not in our
  texts; we use selectivity-controlled ranges as those workloads do: each predicate covers a
  random interval of the feature's original distribution holding a fraction ``s**(1/w)`` of the
  series (expected selectivity ``s``). Precision as for PSQ.
* **Range query**: ``select count(*) where A_1 in range_1 and ... A_w in range_w`` on ``w`` random
  quasi-identifiers, ranges generated the same way on the attribute values. The count on the
  release spreads every series uniformly over its envelope (the usual estimate on generalized
  data: the fraction of ``[lo, hi]`` inside the range, multiplied over the predicates; a point
  envelope counts 1 inside, 0 outside). Measure ``|act - est| / act``.
* **Complex query**: a count with pattern predicates (one similarity predicate or a few PRQ
  predicates, alternately) and range predicates together; the estimate sums the envelope
  fractions of the published series whose ``p*`` satisfies the pattern predicates. Relative error.

A query whose precision or relative error is undefined (``E`` empty; ``act = 0``) is left out of the
mean and counted in ``*_undefined``; each workload draws exactly ``n_queries`` queries.

The paper reports the *average* relative error (Section 7.3: "the average precision or relative
error" of 10,000 queries), which :func:`evaluate` returns as ``range_relative_error`` and
``complex_relative_error``. A mean of ratios is dominated by the queries with a small ``act`` (an
estimate of 20 against an answer of 2 weighs as much as 2,000 against 200), so the evaluators also
return the median over the defined queries (``*_relative_error_median``) and the ratio of the summed
estimates to the summed answers (``*_est_over_act``: 1 when the estimates are unbiased in total).
These are diagnostics beyond the paper.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tempanon.timeseries.sax import expand_paa, reconstruct, strings_to_words, znormalize


@dataclass
class RangeQuery:
    cols: np.ndarray  # instant indices
    lo: np.ndarray
    hi: np.ndarray


@dataclass
class PatternQuery:
    """PSQ: the query's normalized series and the tolerance ``delta`` in the feature space."""

    shape: np.ndarray
    tau: float


@dataclass
class PatternRangeQuery:
    """PRQ: predicates ``z_j - z_i in [lo, hi]`` for feature pairs ``(i, j)``."""

    i: np.ndarray
    j: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def released_arrays(released: pd.DataFrame, value_cols: list[str], n_instants: int | None = None):
    """Envelope bounds ``(m, len(value_cols))`` and the reconstructed normalized series
    ``(m, n_instants)`` of a release (PAA symbols spread over their segments)."""
    lo = released[[f"{c}_lo" for c in value_cols]].to_numpy(dtype=float)
    hi = released[[f"{c}_hi" for c in value_cols]].to_numpy(dtype=float)
    pats = released["pattern"].astype(str)
    width = int(pats.str.len().max()) if len(pats) else 0
    words = strings_to_words(pats, width)
    rec = reconstruct(words, released["pattern_level"].to_numpy())
    return lo, hi, expand_paa(rec, n_instants or len(value_cols))


def feature_distance(Z: np.ndarray, q: np.ndarray, distance: str = "cosine") -> np.ndarray:
    """``D(p(Z_r), p(q))`` for every row, ``p`` = all pairwise differences (computed in O(n):
    ``||p(x)||^2 = n ||x||^2 - (sum x)^2`` and ``<p(x), p(y)> = n x.y - sum x sum y``)."""
    Z = np.asarray(Z, dtype=float)
    n = Z.shape[1]
    if distance == "euclidean":
        d = Z - q
        return np.sqrt(np.maximum(n * np.einsum("ij,ij->i", d, d) - d.sum(axis=1) ** 2, 0.0))
    if distance == "cosine":
        from tempanon.timeseries.model import pattern_loss

        return pattern_loss(Z, np.broadcast_to(q, Z.shape))
    raise ValueError(f"unknown distance {distance!r}; use 'euclidean' or 'cosine'")


def paired_feature_distance(Z: np.ndarray, Zr: np.ndarray, distance: str = "cosine") -> np.ndarray:
    """``D(p(Z_r), p(Zr_r))`` row by row."""
    if distance == "cosine":
        from tempanon.timeseries.model import pattern_loss

        return pattern_loss(Z, Zr)
    n = Z.shape[1]
    d = np.asarray(Z, float) - np.asarray(Zr, float)
    return np.sqrt(np.maximum(n * np.einsum("ij,ij->i", d, d) - d.sum(axis=1) ** 2, 0.0))


def _fraction(lo, hi, a, b):
    width = hi - lo
    inter = np.clip(np.minimum(hi, b) - np.maximum(lo, a), 0, None)
    point = width <= 0
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(point, ((lo >= a) & (lo <= b)).astype(float), inter / np.where(point, 1, width))
    return frac


def range_count(X, q: RangeQuery) -> int:
    sel = X[:, q.cols]
    return int(((sel >= q.lo) & (sel <= q.hi)).all(axis=1).sum())


def range_count_estimate(lo, hi, q: RangeQuery) -> float:
    return float(_fraction(lo[:, q.cols], hi[:, q.cols], q.lo, q.hi).prod(axis=1).sum())


def psq_answer(Zn, q: PatternQuery, distance: str = "cosine") -> np.ndarray:
    return np.flatnonzero(feature_distance(Zn, q.shape, distance) <= q.tau)


def prq_answer(Zn, q: PatternRangeQuery) -> np.ndarray:
    f = Zn[:, q.j] - Zn[:, q.i]
    return np.flatnonzero(((f >= q.lo) & (f <= q.hi)).all(axis=1))


def precision_recall(pub: np.ndarray, orig: np.ndarray) -> tuple[float, float]:
    """``(|A & E| / |E|, |A & E| / |A|)`` with ``E = pub``, ``A = orig`` (1.0 for an empty
    denominator when both are empty, else 0.0 for the empty side)."""
    inter = np.intersect1d(pub, orig).size
    prec = inter / pub.size if pub.size else (1.0 if orig.size == 0 else 0.0)
    rec = inter / orig.size if orig.size else 1.0
    return prec, rec


def _selective_range(values: np.ndarray, frac: float, rng) -> tuple[float, float]:
    """An interval between two order statistics of ``values`` holding a fraction ``frac`` of them,
    at a uniformly random position."""
    v = np.sort(values)
    m = v.size
    width = max(int(round(frac * m)), 1)
    start = int(rng.integers(0, m - width + 1))
    return float(v[start]), float(v[start + width - 1])


def range_workload(X, n_queries: int, n_cols: int, selectivity: float = 0.1, seed: int = 0,
                   must=None) -> list[RangeQuery]:
    """Range queries on ``n_cols`` random quasi-identifiers, each predicate covering a random
    interval holding a fraction ``selectivity**(1/n_cols)`` of the original values. ``must``:
    instants every query includes (the others drawn at random)."""
    rng = np.random.default_rng(seed)
    must = np.asarray([] if must is None else must, dtype=np.int64)
    w = max(min(n_cols, X.shape[1]), must.size)
    frac = selectivity ** (1.0 / w)
    out = []
    others = np.setdiff1d(np.arange(X.shape[1]), must)
    for _ in range(n_queries):
        cols = np.sort(np.r_[must, rng.choice(others, size=w - must.size, replace=False)]).astype(np.int64)
        b = [_selective_range(X[:, c], frac, rng) for c in cols]
        out.append(RangeQuery(cols, np.array([x[0] for x in b]), np.array([x[1] for x in b])))
    return out


def pattern_workload(X, n_queries: int, avg_distance: float, seed: int = 0,
                     lam: tuple[float, float] = (1.0, 10.0)) -> list[PatternQuery]:
    """PSQs: the query a random series of the database (normalized), ``delta = lambda *
    avg_distance`` with ``lambda`` uniform in ``lam`` (Section 7.1: ``[1, 10]``)."""
    rng = np.random.default_rng(seed)
    Zn = znormalize(X)
    return [PatternQuery(Zn[rng.integers(X.shape[0])].copy(), float(rng.uniform(*lam) * avg_distance))
            for _ in range(n_queries)]


def pattern_range_workload(X, n_queries: int, n_features: int, selectivity: float = 0.1,
                           seed: int = 0) -> list[PatternRangeQuery]:
    """PRQs on ``n_features`` random components ``z_j - z_i`` of ``p(.)``, selectivity-controlled
    ranges as :func:`range_workload`."""
    rng = np.random.default_rng(seed)
    Zn = znormalize(X)
    n = X.shape[1]
    I, J = np.triu_indices(n, k=1)
    w = min(n_features, I.size)
    frac = selectivity ** (1.0 / w) if w else 1.0
    out = []
    for _ in range(n_queries):
        pick = rng.choice(I.size, size=w, replace=False)
        b = [_selective_range(Zn[:, J[p]] - Zn[:, I[p]], frac, rng) for p in pick]
        out.append(PatternRangeQuery(I[pick], J[pick], np.array([x[0] for x in b]), np.array([x[1] for x in b])))
    return out


def evaluate(X: np.ndarray, released: pd.DataFrame, value_cols: list[str], *, n_queries: int = 100,
             seed: int = 0, range_cols: int = 3, selectivity: float = 0.1, prq_features: int = 2,
             distance: str = "cosine", psq_avg_distance: float | None = None) -> dict:
    """Run the four workloads of Section 7.1; ``X`` holds the original series in the release's
    row order (all quasi-identifiers; ``value_cols`` must be all of them). Returns the mean
    precisions (PSQ, PRQ; recalls too), the mean relative errors (range, complex) with their
    medians and summed-estimate ratios (module doc), the PSQ tolerance unit ``psq_avg_distance``
    and the number of undefined queries per workload.

    ``psq_avg_distance``: the unit of the PSQ tolerance; by default this release's own mean
    ``D(p(r), p*(r))``. To compare schemes on one workload, pass one scheme's unit to all (a
    release of flat level-1 patterns has a large unit, and its own tolerances then accept
    nearly every series, which makes its precision look high)."""
    X = np.asarray(X, dtype=float)
    lo, hi, rec = released_arrays(released, value_cols, X.shape[1])
    return evaluate_arrays(X, lo, hi, rec, n_queries=n_queries, seed=seed, range_cols=range_cols,
                           selectivity=selectivity, prq_features=prq_features, distance=distance,
                           psq_avg_distance=psq_avg_distance)


def evaluate_arrays(X: np.ndarray, lo: np.ndarray, hi: np.ndarray, rec: np.ndarray, *, n_queries: int = 100,
                    seed: int = 0, range_cols: int = 3, selectivity: float = 0.1, prq_features: int = 2,
                    distance: str = "cosine", psq_avg_distance: float | None = None,
                    range_must: np.ndarray | None = None) -> dict:
    """:func:`evaluate` on arrays: envelopes ``lo``/``hi`` and reconstructed normalized series
    ``rec`` per release row (e.g. completed by the Section 6 estimates). ``range_must``: instants
    every range query must contain (Section 7.4: the missing attributes)."""
    X = np.asarray(X, dtype=float)
    Zn = znormalize(X)
    avg = float(paired_feature_distance(Zn, rec, distance).mean()) if len(Zn) else 0.0
    if psq_avg_distance is not None:
        avg = float(psq_avg_distance)
    out: dict = {"psq_avg_distance": avg, "distance": distance}

    def mean_defined(vals, key):
        ok = [v for v in vals if v is not None]
        out[key] = float(np.mean(ok)) if ok else float("nan")
        out[key.rsplit("_", 2)[0] + "_undefined"] = len(vals) - len(ok)

    def spread(pairs, key):
        """Median relative error and summed estimate over summed answer of the defined queries."""
        a = np.array([p[0] for p in pairs if p[0]], dtype=float)
        e = np.array([p[1] for p in pairs if p[0]], dtype=float)
        out[key + "_relative_error_median"] = float(np.median(np.abs(e - a) / a)) if a.size else float("nan")
        out[key + "_est_over_act"] = float(e.sum() / a.sum()) if a.size else float("nan")

    rq = range_workload(X, n_queries, range_cols, selectivity, seed, must=range_must)
    errs, pairs = [], []
    for q in rq:
        act = range_count(X, q)
        est = range_count_estimate(lo, hi, q)
        pairs.append((act, est))
        errs.append(abs(est - act) / act if act else None)
    mean_defined(errs, "range_relative_error")
    spread(pairs, "range")

    pq = pattern_workload(X, n_queries, avg, seed + 1)
    prec, recl = [], []
    for q in pq:
        E, A = psq_answer(rec, q, distance), psq_answer(Zn, q, distance)
        p, r = precision_recall(E, A)
        prec.append(p if E.size else None)
        recl.append(r)
    mean_defined(prec, "psq_precision")
    out["psq_recall"] = float(np.mean(recl))

    prq = pattern_range_workload(X, n_queries, prq_features, selectivity, seed + 2)
    prec, recl = [], []
    for q in prq:
        E, A = prq_answer(rec, q), prq_answer(Zn, q)
        p, r = precision_recall(E, A)
        prec.append(p if E.size else None)
        recl.append(r)
    mean_defined(prec, "prq_precision")
    out["prq_recall"] = float(np.mean(recl))

    cx, pairs = [], []
    for t, (q, p_sim, p_rng) in enumerate(zip(rq, pq, prq)):
        if t % 2 == 0:  # one similarity predicate
            pat_orig, pat_pub = psq_answer(Zn, p_sim, distance), psq_answer(rec, p_sim, distance)
        else:  # a few pattern range predicates
            pat_orig, pat_pub = prq_answer(Zn, p_rng), prq_answer(rec, p_rng)
        in_range = ((X[pat_orig][:, q.cols] >= q.lo) & (X[pat_orig][:, q.cols] <= q.hi)).all(axis=1)
        act = int(in_range.sum())
        est = float(_fraction(lo[pat_pub][:, q.cols], hi[pat_pub][:, q.cols], q.lo, q.hi).prod(axis=1).sum())
        pairs.append((act, est))
        cx.append(abs(est - act) / act if act else None)
    mean_defined(cx, "complex_relative_error")
    spread(pairs, "complex")
    return out
