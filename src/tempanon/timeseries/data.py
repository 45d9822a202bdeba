"""Synthetic time series of the paper's experiments (Shou et al., TKDE, Section 7).

* :func:`random_walk` - the "Walk" recipe: ``n_series`` consecutive cuts of ``n_instants`` points
  from one Gaussian random walk, scaled to ``[0, 1]``, plus a sensitive value ``S`` (the next
  point of the walk).
* :func:`uniform` - the "Uniform" data: independent values uniform in ``[0, 1)``.

Both return a DataFrame with columns ``id``, ``A0..A{n-1}``, ``S`` and are deterministic per seed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _frame(X: np.ndarray, S: np.ndarray, prefix: str = "R") -> pd.DataFrame:
    cols = {"id": [f"{prefix}{i}" for i in range(X.shape[0])]}
    cols.update({f"A{j}": X[:, j] for j in range(X.shape[1])})
    cols["S"] = S
    return pd.DataFrame(cols)


def random_walk(n_series: int, n_instants: int = 10, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    walk = np.cumsum(rng.standard_normal(n_series * (n_instants + 1)))
    walk = (walk - walk.min()) / (walk.max() - walk.min())
    M = walk.reshape(n_series, n_instants + 1).round(6)
    return _frame(M[:, :n_instants], M[:, n_instants])


def uniform(n_series: int, n_instants: int = 10, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.random((n_series, n_instants))
    S = rng.integers(0, 100, n_series).astype(float)
    return _frame(X, S, prefix="U")
