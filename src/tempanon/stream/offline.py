"""The offline lower bound: the window ILP over a whole (short) stream at once.

An online publisher decides each snapshot without seeing the future; the offline program knows every
snapshot in advance and places every record of ``D[h]`` in some ``D'[j]``, ``h <= j <= h + w`` (``j`` not
beyond the last snapshot), or suppresses it, at minimum information loss (Equation 2) with every
``D'[j]`` l-eligible. Its optimum is a lower bound on the information loss of any online method; on a
long stream HiGHS may stop at ``time_limit``, and the *proven* dual bound is still a valid lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tempanon.stream.window import WindowProblem, solve_window_caps, solve_window_ilp


@dataclass
class OfflineBound:
    lower_bound: float  # proven lower bound on the offline optimum (= optimum when optimal)
    best_il: float  # information loss of the best offline solution found
    optimal: bool
    records: int
    snapshots: int


def offline_lower_bound(
    snapshot: np.ndarray,
    codes: np.ndarray,
    l: int,
    mu: np.ndarray,
    beta: np.ndarray,
    *,
    n_snapshots: int | None = None,
    time_limit: float | None = 60.0,
    form: str = "direct",
) -> OfflineBound:
    """Offline ILP over the records with home ``snapshot[i]`` and value code ``codes[i]``. ``form``:
    ``"direct"`` (:func:`~tempanon.stream.window.solve_window_ilp`) or ``"caps"``
    (:func:`~tempanon.stream.window.solve_window_caps`, which finds much better offline solutions
    within a time limit; both bounds are proven lower bounds)."""
    snapshot = np.asarray(snapshot, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64)
    T = int(n_snapshots if n_snapshots is not None else (snapshot.max() + 1 if len(snapshot) else 0))
    w = len(mu) - 1
    if len(snapshot) == 0:
        return OfflineBound(0.0, 0.0, True, 0, T)
    m = int(codes.max()) + 1
    key, count = np.unique(snapshot * m + codes, return_counts=True)
    home, code = key // m, key % m
    p = WindowProblem(home, code, count, home, np.minimum(home + w, T - 1), l, np.asarray(mu, float), np.asarray(beta, float))
    if form not in ("direct", "caps"):
        raise ValueError(f"unknown offline form {form!r}")
    sol = solve_window_caps(p, time_limit=time_limit) if form == "caps" else solve_window_ilp(p, time_limit=time_limit)
    return OfflineBound(sol.bound, sol.il, sol.optimal, int(len(snapshot)), T)
