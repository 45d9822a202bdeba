"""The (k,P)-anonymity model and its loss measures (Shou et al., TKDE, Sections 3-4).

A released series carries the *value envelope* ``[r_i^-, r_i^+]`` of its k-group at every instant
and the *pattern representation* (SAX word and level) of its P-subgroup.

* instant value loss (Eq. 2): ``VL(r) = sqrt( sum_i (r_i^+ - r_i^-)^2 / n )``; ``VL(T)`` sums it over
  the published series.
* pattern loss (Eq. 3): ``PL(r) = 1 - cos(f(z), f(z'))`` with ``z`` the normalized series, ``z'``
  its reconstruction from the published pattern, and ``f`` a feature vector; distance 0 between two
  zero vectors and 1 between a zero and a non-zero vector. ``PL(T)`` sums it. The default ``f``
  (Section 7.1) is the vector of all pairwise differences ``z_j - z_i`` (``i < j``); its inner
  products are computed in O(n) with ``sum_{i<j}(x_j-x_i)(y_j-y_i) = n x.y - (sum x)(sum y)``.
* breach probabilities (Eq. 1): an attacker who knows a victim's values can narrow it to its
  k-group (``1/|G|``); one who also knows its pattern narrows it to the series of that k-group with
  the same published pattern (``1/|{r in G : pattern(r) = pattern(victim)}|``, at most ``1/P``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

FeatureFn = Callable[[np.ndarray], np.ndarray]


def instant_value_loss(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``VL(r)`` of each row (Eq. 2) from its envelope bounds ``(m, n)``."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    if lo.shape[1] == 0:
        return np.zeros(lo.shape[0])
    return np.sqrt(np.mean((hi - lo) ** 2, axis=1))


def pairwise_difference_features(Z: np.ndarray) -> np.ndarray:
    """All pairwise differences ``z_j - z_i`` (``i < j``) of each row (Section 7.1). Quadratic in
    ``n``; :func:`pattern_loss` uses an O(n) identity instead when no features are given."""
    i, j = np.triu_indices(Z.shape[1], k=1)
    return Z[:, j] - Z[:, i]


def _cosine_distance(dot: np.ndarray, na2: np.ndarray, nb2: np.ndarray) -> np.ndarray:
    scale = np.maximum(np.maximum(na2, nb2), 1e-300)
    za = na2 <= 1e-24 * scale
    zb = nb2 <= 1e-24 * scale
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = dot / np.sqrt(na2 * nb2)
    out = 1.0 - np.clip(cos, -1.0, 1.0)
    out = np.where(za & zb, 0.0, np.where(za | zb, 1.0, out))
    return out


def pattern_loss(Z: np.ndarray, Zr: np.ndarray, features: FeatureFn | None = None) -> np.ndarray:
    """``PL(r)`` of each row (Eq. 3): cosine distance between the feature vectors of the normalized
    series ``Z`` and of its reconstruction ``Zr``."""
    Z = np.asarray(Z, dtype=float)
    Zr = np.asarray(Zr, dtype=float)
    if features is None:
        n = Z.shape[1]
        sa, sb = Z.sum(axis=1), Zr.sum(axis=1)
        dot = n * np.einsum("ij,ij->i", Z, Zr) - sa * sb
        na2 = np.maximum(n * np.einsum("ij,ij->i", Z, Z) - sa * sa, 0.0)
        nb2 = np.maximum(n * np.einsum("ij,ij->i", Zr, Zr) - sb * sb, 0.0)
    else:
        fa = np.asarray(features(Z), dtype=float)
        fb = np.asarray(features(Zr), dtype=float)
        dot = np.einsum("ij,ij->i", fa, fb)
        na2 = np.einsum("ij,ij->i", fa, fa)
        nb2 = np.einsum("ij,ij->i", fb, fb)
    return _cosine_distance(dot, na2, nb2)


def breach_probabilities(released: pd.DataFrame) -> pd.DataFrame:
    """Eq. 1 on a released table: per row ``p_value = 1/|k-group|`` and
    ``p_pattern = 1/#(rows of the k-group with the same pattern and level)``."""
    size_g = released.groupby("kgroup")["kgroup"].transform("size")
    size_p = released.groupby(["kgroup", "pattern", "pattern_level"])["kgroup"].transform("size")
    return pd.DataFrame({"p_value": 1.0 / size_g.to_numpy(), "p_pattern": 1.0 / size_p.to_numpy()},
                        index=released.index)


@dataclass
class Grouping:
    """Result of an algorithm on the series matrix: one entry per input series.

    ``kgroup`` and ``psubgroup`` are -1 for a suppressed series; ``level`` is the published SAX level
    (alphabet size) and ``words`` the published SAX word (row of the P-subgroup pattern).
    """

    kgroup: np.ndarray
    psubgroup: np.ndarray
    level: np.ndarray
    words: np.ndarray
    stats: dict = field(default_factory=dict)

    @property
    def suppressed(self) -> np.ndarray:
        return self.kgroup < 0
