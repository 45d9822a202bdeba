"""The reposition model of Wang, Xu, Wong and Fu, "Anonymizing Temporal Data" (ICDM 2010), Section II.

A stream of snapshots ``D[1], D[2], ...`` arrives; every record ``r`` has a *home* snapshot ``h(r)`` and a
sensitive value ``r.s``. The publisher releases ``D'[j]`` for every ``j``; a record of ``D[h]`` is either
published in some ``D'[j]`` with ``h <= j <= h + w`` (repositioned forward by ``d = j - h`` snapshots,
``w`` the maximum publication delay) or suppressed (it then belongs to its home suppressed set ``S_h``).

* **l-diversity / l-eligibility (Definition 1).** A table ``T`` is *l-eligible* when the most frequent
  sensitive value occurs at most ``|T| / l`` times (``l * max_s n_s <= |T|``); an l-eligible table can be
  published l-diverse by Anatomy (every group of ``l`` distinct values). The empty table is l-eligible.
* **Costs.** Repositioning by ``d`` costs ``mu(d)`` with (C1) ``mu(0) = 0``, (C2) ``mu`` increasing and
  (C3) ``mu`` convex; suppressing a record of value ``s`` costs ``beta_s``.
* **Information loss (Equations 1 and 2).** ``IL(D'[j]) = sum_{r in D'[j]} mu(j - h(r))`` (Eq. 1) and
  ``IL = sum_j IL(D'[j]) + sum_i sum_{r in S_i} beta_{r.s}`` (Eq. 2).

Everything here works on integer codes: sensitive values are coded ``0..m-1``; ``mu`` is tabulated as an
array ``mu[0..w]``; ``beta`` as an array over codes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from tempanon.errors import InputError


def is_l_eligible(counts: np.ndarray, l: int) -> bool:
    """Definition 1: ``l * max(counts) <= sum(counts)`` (the empty table is l-eligible)."""
    counts = np.asarray(counts)
    if counts.size == 0:
        return True
    return bool(l * int(counts.max()) <= int(counts.sum()))


def eligible_cap(counts: np.ndarray, l: int) -> int:
    """The *initial solution* of a new snapshot (Section IV): suppress records of the most frequent
    value, one at a time, until the snapshot is l-eligible.

    The process ends with every count capped at the largest level ``m`` with
    ``l * m <= sum_s min(c_s, m)`` (an intermediate state with maximum ``m + 1`` has fewer records than
    the cap at ``m + 1``, so it cannot be eligible when that cap is not). Returns ``m``. The cap is also
    the cheapest suppression for *any* costs ``beta``: a feasible table with maximum ``m`` keeps at most
    ``min(c_s, m)`` of each value, and keeping more never hurts, so its cost is at least that of the cap
    at ``m``, which decreases in ``m``.
    """
    c = np.asarray(counts, dtype=np.int64)
    if c.size == 0 or c.max() == 0:
        return 0
    levels = np.arange(int(c.max()) + 1)
    sorted_c = np.sort(c)
    # sum_s min(c_s, m) for every m, via the sorted counts
    below = np.searchsorted(sorted_c, levels, side="left")  # number of counts < m
    prefix = np.concatenate(([0], np.cumsum(sorted_c)))
    capped = prefix[below] + (c.size - below) * levels
    ok = np.nonzero(l * levels <= capped)[0]
    return int(ok.max())


def initial_suppression(counts: np.ndarray, l: int) -> np.ndarray:
    """Per-value number of records the initial solution suppresses (``max(c_s - m, 0)``)."""
    c = np.asarray(counts, dtype=np.int64)
    m = eligible_cap(c, l)
    return np.maximum(c - m, 0)


def initial_suppression_segments(codes: np.ndarray, seg: np.ndarray, n_seg: int, l: int) -> tuple[np.ndarray, np.ndarray]:
    """The initial solution (Section IV) of many snapshots at once: records ``i`` of snapshot
    ``seg[i]`` (``seg`` non-decreasing, records of a snapshot in their order) with value ``codes[i]``.

    Returns ``drop`` (per record: suppressed by the initial solution, i.e. the latest records of each
    value above the snapshot's cap, as in :meth:`StreamPublisher._initial`) and the number suppressed
    per snapshot. The cap of each snapshot is :func:`eligible_cap`, computed for all snapshots with
    segment operations: ``f(m) = sum_s min(c_s, m) - l * m`` is concave and piecewise linear with
    ``f(0) = 0``; with the counts sorted decreasingly, ``c_(1) >= c_(2) >= ...``, on the piece
    ``[c_(i+1), c_(i)]`` it equals ``T_i + (i - l) * m`` (``T_i`` the sum of the counts after the
    ``i``-th), so the largest feasible ``m`` of the piece is ``c_(i)`` when ``i >= l`` and
    ``min(c_(i), floor(T_i / (l - i)))`` otherwise, if that is ``>= c_(i+1)``; the cap is the
    largest over the pieces (or 0)."""
    codes = np.asarray(codes, dtype=np.int64)
    seg = np.asarray(seg, dtype=np.int64)
    N = len(codes)
    drop = np.zeros(N, dtype=bool)
    if N == 0:
        return drop, np.zeros(n_seg, dtype=np.int64)
    m = int(codes.max()) + 1
    key = seg * m + codes
    order = np.argsort(key, kind="stable")  # by snapshot, value, then position
    skey = key[order]
    starts = np.flatnonzero(np.r_[True, skey[1:] != skey[:-1]])
    cnt = np.diff(np.r_[starts, N])
    rseg = skey[starts] // m
    size = np.bincount(seg, minlength=n_seg)
    top = np.zeros(n_seg, dtype=np.int64)
    np.maximum.at(top, rseg, cnt)
    bad_seg = l * top > size
    if not bad_seg.any():
        return drop, np.zeros(n_seg, dtype=np.int64)
    runs = np.flatnonzero(bad_seg[rseg])  # the value runs of snapshots that are not l-eligible
    c, s = cnt[runs], rseg[runs]
    o = np.lexsort((-c, s))
    c, s = c[o], s[o]
    first = np.r_[True, s[1:] != s[:-1]]
    seg_start = np.maximum.accumulate(np.where(first, np.arange(len(s)), 0))
    i = np.arange(len(s)) - seg_start + 1  # rank of the count inside its snapshot (1-based)
    csum = np.cumsum(c)
    prefix = csum - np.where(seg_start > 0, csum[seg_start - 1], 0)
    T = size[s] - prefix
    last = np.r_[s[1:] != s[:-1], True]
    c_next = np.where(last, 0, np.r_[c[1:], 0])
    cand = np.where(i >= l, c, np.minimum(c, T // np.maximum(l - i, 1)))
    cap = np.zeros(n_seg, dtype=np.int64)
    valid = cand >= c_next
    np.maximum.at(cap, s[valid], cand[valid])
    # suppress the latest records of each value above the cap
    keep = np.where(bad_seg[rseg], np.minimum(cnt, cap[rseg]), cnt)
    rank = np.arange(N) - np.repeat(starts, cnt)
    drop[order] = rank >= np.repeat(keep, cnt)
    return drop, np.bincount(seg[drop], minlength=n_seg)


@dataclass(frozen=True)
class CostModel:
    """Reposition cost ``mu`` tabulated on ``0..w`` and suppression cost ``beta``.

    Build one with :meth:`linear`, :meth:`quadratic` or :meth:`from_function`; ``beta`` is a number
    (uniform) or a mapping ``{sensitive value: cost}`` with ``default`` for the values not listed.
    """

    mu: np.ndarray
    beta_default: float = 10.0
    beta_by_value: Mapping[object, float] = field(default_factory=dict)
    name: str = "custom"

    @property
    def window(self) -> int:
        return len(self.mu) - 1

    @staticmethod
    def linear(w: int, c: float = 1.0, beta: float | Mapping[object, float] = 10.0) -> "CostModel":
        """``mu(d) = c * d`` (``c > 0``)."""
        return CostModel.from_function(lambda d: c * d, w, beta, name=f"linear({c:g})")

    @staticmethod
    def quadratic(w: int, beta: float | Mapping[object, float] = 10.0) -> "CostModel":
        """``mu(d) = d ** 2``."""
        return CostModel.from_function(lambda d: float(d) ** 2, w, beta, name="quadratic")

    @staticmethod
    def from_function(
        mu: Callable[[int], float] | Sequence[float],
        w: int,
        beta: float | Mapping[object, float] = 10.0,
        *,
        name: str = "custom",
    ) -> "CostModel":
        """Tabulate ``mu`` on ``0..w`` (a function, or a sequence of at least ``w + 1`` values) and
        validate (C1)-(C3) and the suppression costs; raise :class:`InputError` naming what breaks."""
        w = validate_window(w)
        if callable(mu):
            try:
                table = np.array([float(mu(d)) for d in range(w + 1)], dtype=float)
            except Exception as exc:  # a user function that fails is bad input
                raise InputError(f"reposition cost function failed: {exc}") from exc
        else:
            values = list(mu)
            if len(values) < w + 1:
                raise InputError(
                    f"reposition cost table has {len(values)} values; it needs mu(0)..mu({w}), {w + 1} values"
                )
            try:
                table = np.array([float(v) for v in values[: w + 1]], dtype=float)
            except (TypeError, ValueError) as exc:
                raise InputError(f"reposition cost table: not a number: {exc}") from exc
        validate_mu(table)
        default, by_value = _parse_beta(beta)
        return CostModel(mu=table, beta_default=default, beta_by_value=by_value, name=name)

    def beta_array(self, values: Sequence[object]) -> np.ndarray:
        """``beta`` for each sensitive value of ``values`` (in code order)."""
        return np.array([float(self.beta_by_value.get(v, self.beta_default)) for v in values], dtype=float)


def validate_window(w: object) -> int:
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)):
        raise InputError(f"window w must be an integer >= 0, got {w!r}")
    if w < 0:
        raise InputError(f"window w must be >= 0 (the maximum publication delay), got {w}")
    return int(w)


def validate_l(l: object) -> int:
    if isinstance(l, bool) or not isinstance(l, (int, np.integer)):
        raise InputError(f"l must be an integer >= 2, got {l!r}")
    if l < 2:
        raise InputError(f"l must be >= 2 (l-diversity), got {l}")
    if l > MAX_L:
        raise InputError(f"l must be at most {MAX_L:,} (no snapshot holds more distinct values), got {l}")
    return int(l)


MAX_L = 2**31 - 1  # the largest l a step's integer arrays hold; far above any snapshot's distinct values


def validate_mu(mu: np.ndarray) -> None:
    """Check (C1) ``mu(0) = 0``, (C2) strictly increasing, (C3) convex on ``0..w``."""
    if not np.all(np.isfinite(mu)):
        raise InputError(f"reposition cost must be finite on 0..{len(mu) - 1}, got {mu.tolist()}")
    if mu[0] != 0:
        raise InputError(f"reposition cost breaks (C1) mu(0) = 0: mu(0) = {mu[0]:g}")
    diff = np.diff(mu)
    bad = np.nonzero(diff <= 0)[0]
    if bad.size:
        d = int(bad[0])
        raise InputError(
            f"reposition cost breaks (C2) increasing: mu({d + 1}) = {mu[d + 1]:g} <= mu({d}) = {mu[d]:g}"
        )
    curv = np.diff(diff)
    bad = np.nonzero(curv < -1e-9 * np.maximum(1.0, np.abs(diff[1:])))[0]
    if bad.size:
        d = int(bad[0]) + 1
        raise InputError(
            f"reposition cost breaks (C3) convex: mu({d + 1}) - mu({d}) = {diff[d]:g} < "
            f"mu({d}) - mu({d - 1}) = {diff[d - 1]:g}"
        )


def _parse_beta(beta: float | Mapping[object, float]) -> tuple[float, dict]:
    if isinstance(beta, Mapping):
        by_value = dict(beta)
        default = float(by_value.pop("default", 10.0))
    else:
        by_value, default = {}, beta
    for key, val in [("default", default), *by_value.items()]:
        try:
            v = float(val)
        except (TypeError, ValueError) as exc:
            raise InputError(f"suppression cost of {key!r} is not a number: {val!r}") from exc
        if not np.isfinite(v) or v <= 0:
            raise InputError(f"suppression cost of {key!r} must be a positive number, got {val!r}")
    return float(default), {k: float(v) for k, v in by_value.items()}


DEFAULT_DEFER = 2.0 / 3.0
"""The default ``defer`` (see :func:`deferred_suppression_cost`): chosen by measurement, docs/stream.md."""


STEPS = ("fast", "exact", "paper")
DEFAULT_STEP = "fast"
"""The online step: ``fast`` (the default: tempanon's own compiled local search for the broader step
problem, :mod:`tempanon.stream.fast`, not proven optimal), ``exact`` (the same step problem solved
exactly, :mod:`tempanon.stream.reposition`) or ``paper`` (the paper's Definition 2, recycle-reposition,
:mod:`tempanon.stream.recycle`); docs/stream.md."""


def validate_step(step: object) -> str:
    if step not in STEPS:
        raise InputError(f"step {step!r}: expected one of {', '.join(STEPS)}")
    return str(step)


def validate_defer(defer: object) -> float:
    """``defer`` as a number in ``[0, 1]``; ``True`` means 1 (full deferral), ``False`` 0 (the paper's
    pricing)."""
    if isinstance(defer, bool):
        return 1.0 if defer else 0.0
    try:
        d = float(defer)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"defer must be a number between 0 and 1, got {defer!r}") from None
    if not (0.0 <= d <= 1.0):
        raise InputError(f"defer must be between 0 (the paper's pricing) and 1 (full deferral), got {defer!r}")
    return d


def surplus_values(seen: np.ndarray, l: int) -> np.ndarray:
    """Values in *surplus* in the stream so far: ``seen[s]`` records of value ``s`` have arrived, and
    even if all of them formed one table, Definition 1 would cap every value at
    :func:`eligible_cap` ``(seen, l)`` records. A value above that cap cannot be published in full in
    the long run: some of its records must be suppressed whatever the placement."""
    seen = np.asarray(seen, dtype=np.int64)
    if seen.size == 0:
        return np.zeros(0, dtype=bool)
    return seen > eligible_cap(seen, l)


def deferred_suppression_cost(
    beta: np.ndarray, home: np.ndarray, t: int, mu: np.ndarray, defer: float, surplus: np.ndarray | None = None
) -> np.ndarray:
    """The price of suppressing a record (home ``home``, suppression cost ``beta``) inside step ``t``
    (extension, not in the paper).

    A record with ``h + w > t`` is not lost when it is suppressed now: a later step may still *recycle*
    it into ``D'[t + 1]`` or later, at best for ``mu(t + 1 - h)``. The paper's step charges ``beta``
    anyway (``defer = 0``); full deferral charges the cheapest recycling ``min(beta, mu(t + 1 - h))``
    (``defer = 1``). In between, the price is ``beta - defer * max(beta - mu(t + 1 - h), 0)``: ``1 - defer``
    is the share of the saving a later step is not expected to realize. When every ``mu`` and ``beta``
    is an integer the price is rounded to an integer, so that every step IL stays an integer (the LP
    certificate of :mod:`tempanon.stream.reposition` rounds its bound up). Records with ``h + w <= t``
    (their last chance) always cost ``beta``, and so do records whose value is in *surplus*
    (``surplus``, per record: see :func:`surplus_values`): such a value cannot be published in full in
    the long run, so deferring its suppression only moves the loss forward (measured: on the stops
    data at l = 5, where 4 of 9 values are in surplus, deferring them too cost +9-10% IL against the
    paper's pricing; with this rule +0.2-0.4%). The final IL is always Equation (2)."""
    beta = np.asarray(beta, dtype=float)
    home = np.asarray(home, dtype=np.int64)
    w = len(mu) - 1
    if defer <= 0.0 or w == 0:
        return beta
    can_wait = home + w > t
    if surplus is not None:
        can_wait &= ~np.asarray(surplus, dtype=bool)
    recycle = np.asarray(mu, dtype=float)[np.clip(t + 1 - home, 0, w)]
    price = beta - defer * np.maximum(beta - recycle, 0.0)
    if np.all(mu == np.round(mu)) and np.all(beta == np.round(beta)):
        price = np.round(price)
    return np.where(can_wait, price, beta)


def information_loss(distance: np.ndarray, suppressed: np.ndarray, codes: np.ndarray, mu: np.ndarray, beta: np.ndarray) -> float:
    """Equation (2) over records: ``sum mu(distance)`` of the published ones (Eq. 1 summed over
    snapshots) plus ``sum beta[code]`` of the suppressed ones. ``distance`` is ignored where suppressed."""
    distance = np.asarray(distance)
    suppressed = np.asarray(suppressed, dtype=bool)
    pub = ~suppressed
    return float(mu[distance[pub]].sum() + beta[np.asarray(codes)[suppressed]].sum())
