"""Query workloads and evaluators on released data (Shou et al., TKDE, Section 7).

All evaluators compare the answer on the original series ``X`` (in output-row order, e.g.
``X[audit_order]``) with the answer computed from the release alone.

* **range count query** ``{A_j in [a_j, b_j]}``: the true count vs. the estimate that spreads each
  released series uniformly over its envelope (the fraction of ``[lo, hi]`` inside ``[a, b]``,
  multiplied over the queried instants; a point envelope counts 1 inside, 0 outside). Error:
  relative error ``|est - act| / act`` (workloads only produce queries with ``act >= 1``).
* **pattern similarity query (PSQ)** ``(q, tau)``: the series whose normalized values lie within
  Euclidean distance ``tau`` of the normalized query ``q``; on the release the reconstruction of
  the published pattern (probabilistic medians) stands in for the normalized values. Quality:
  precision ``|R_pub & R_orig| / |R_pub|`` (and recall).
* **pattern range query (PRQ)** ``{z_j in [zl_j, zh_j]}`` on the normalized values of chosen
  instants (a shape condition independent of scale); on the release the reconstructed values are
  tested. Quality: precision.
* **complex query**: a range count query and a PSQ together (count of series satisfying both);
  the estimate sums the envelope fractions of the rows passing the pattern test. Error: relative.

Workload generators centre every query on a randomly chosen original series, so no query is empty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tempanon.timeseries.sax import paa as _paa
from tempanon.timeseries.sax import reconstruct, strings_to_words, znormalize


@dataclass
class RangeQuery:
    cols: np.ndarray  # instant indices
    lo: np.ndarray
    hi: np.ndarray


@dataclass
class PatternQuery:
    shape: np.ndarray  # normalized query, length = pattern width
    tau: float


@dataclass
class PatternRangeQuery:
    cols: np.ndarray
    zlo: np.ndarray
    zhi: np.ndarray


def released_arrays(released: pd.DataFrame, value_cols: list[str]):
    """Envelope bounds ``(m, n)`` and reconstructed patterns ``(m, w)`` of a release."""
    lo = released[[f"{c}_lo" for c in value_cols]].to_numpy(dtype=float)
    hi = released[[f"{c}_hi" for c in value_cols]].to_numpy(dtype=float)
    pats = released["pattern"].astype(str)
    width = int(pats.str.len().max())
    words = strings_to_words(pats, width)
    rec = reconstruct(words, released["pattern_level"].to_numpy())
    return lo, hi, rec


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


def psq_answer(Zn, q: PatternQuery) -> np.ndarray:
    return np.flatnonzero(np.sqrt(((Zn - q.shape) ** 2).sum(axis=1)) <= q.tau)


def prq_answer(Zn, q: PatternRangeQuery) -> np.ndarray:
    sel = Zn[:, q.cols]
    return np.flatnonzero(((sel >= q.zlo) & (sel <= q.zhi)).all(axis=1))


def precision_recall(pub: np.ndarray, orig: np.ndarray) -> tuple[float, float]:
    inter = np.intersect1d(pub, orig).size
    prec = inter / pub.size if pub.size else (1.0 if orig.size == 0 else 0.0)
    rec = inter / orig.size if orig.size else 1.0
    return prec, rec


def range_workload(X, n_queries: int, n_cols: int, width: float, seed: int = 0) -> list[RangeQuery]:
    """Queries on ``n_cols`` random instants, each ``[x - w/2, x + w/2]`` around a random series,
    ``w = width * (column range)``."""
    rng = np.random.default_rng(seed)
    span = X.max(axis=0) - X.min(axis=0)
    out = []
    for _ in range(n_queries):
        cols = np.sort(rng.choice(X.shape[1], size=min(n_cols, X.shape[1]), replace=False))
        c = X[rng.integers(X.shape[0]), cols]
        half = width * span[cols] / 2
        out.append(RangeQuery(cols, c - half, c + half))
    return out


def pattern_workload(X, n_queries: int, tau: float, seed: int = 0, paa_segments=None) -> list[PatternQuery]:
    rng = np.random.default_rng(seed)
    Zn = _paa(znormalize(X), paa_segments)
    return [PatternQuery(Zn[rng.integers(X.shape[0])].copy(), tau) for _ in range(n_queries)]


def pattern_range_workload(X, n_queries: int, n_cols: int, width: float, seed: int = 0) -> list[PatternRangeQuery]:
    rng = np.random.default_rng(seed)
    Zn = znormalize(X)
    out = []
    for _ in range(n_queries):
        cols = np.sort(rng.choice(X.shape[1], size=min(n_cols, X.shape[1]), replace=False))
        c = Zn[rng.integers(X.shape[0]), cols]
        out.append(PatternRangeQuery(cols, c - width / 2, c + width / 2))
    return out


def evaluate(X: np.ndarray, released: pd.DataFrame, value_cols: list[str], *, n_queries: int = 100,
             seed: int = 0, range_cols: int = 3, range_width: float = 0.2, tau: float = 1.5,
             prq_cols: int = 2, prq_width: float = 1.0, paa_segments=None) -> dict:
    """Run the four workloads; ``X`` holds the original series in the release's row order.
    Returns mean relative errors and mean precisions (and recalls)."""
    lo, hi, rec = released_arrays(released, value_cols)
    Zn = _paa(znormalize(X), paa_segments)
    rq = range_workload(X, n_queries, range_cols, range_width, seed)
    rel_err = [abs(range_count_estimate(lo, hi, q) - range_count(X, q)) / max(range_count(X, q), 1) for q in rq]
    pq = pattern_workload(X, n_queries, tau, seed + 1, paa_segments)
    psq = [precision_recall(psq_answer(rec, q), psq_answer(Zn, q)) for q in pq]
    out = {
        "range_relative_error": float(np.mean(rel_err)),
        "psq_precision": float(np.mean([p for p, _ in psq])),
        "psq_recall": float(np.mean([r for _, r in psq])),
    }
    if paa_segments is None:
        prq = [precision_recall(prq_answer(rec, q), prq_answer(Zn, q))
               for q in pattern_range_workload(X, n_queries, prq_cols, prq_width, seed + 2)]
        out["prq_precision"] = float(np.mean([p for p, _ in prq]))
        out["prq_recall"] = float(np.mean([r for _, r in prq]))
        cx = []
        for q, p in zip(rq, pq):
            act = int(np.intersect1d(psq_answer(Zn, p), np.flatnonzero(
                ((X[:, q.cols] >= q.lo) & (X[:, q.cols] <= q.hi)).all(axis=1))).size)
            rows = psq_answer(rec, p)
            est = float(_fraction(lo[rows][:, q.cols], hi[rows][:, q.cols], q.lo, q.hi).prod(axis=1).sum())
            cx.append(abs(est - act) / max(act, 1))
        out["complex_relative_error"] = float(np.mean(cx))
    return out
