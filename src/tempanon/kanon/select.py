"""Choosing one node among the k-anonymous ones (Incognito Section 2.1, "flexibility").

Criteria (lower is better):

* ``height`` -- sum of the levels' heights (minimal full-domain generalization by height).
* ``weighted-height`` -- sum of ``weight[attribute] * height`` (user weights per attribute).
* ``discernibility`` -- sum over released classes of ``|E|^2`` plus ``n`` for every suppressed
  tuple (Bayardo and Agrawal's discernibility metric).
* ``loss`` -- normalized generalization loss: the mean over all quasi-identifier cells of the
  input of ``(c - 1) / (L - 1)``, where the released value covers ``c`` of the attribute's ``L``
  hierarchy leaves (0 = unchanged, 1 = ``*``); a suppressed tuple's cells count 1.
* a callable ``f(node, fs) -> float`` evaluated on every anonymous node.

Which nodes are compared: all four named criteria are monotone along generalization when nothing
is suppressed (a generalization merges classes and widens every value), so the optimum is then a
*minimal* node and only minimal nodes are evaluated. With a suppression threshold discernibility
and loss are not monotone (a generalization can suppress fewer tuples), so every anonymous node is
evaluated. Ties are broken by lower height, then by the lexicographically smallest level vector
(levels in quasi-identifier order): the result is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from tempanon.errors import InputError
from tempanon.lattice.dimension import Dimension
from tempanon.lattice.freqset import EngineTable, FrequencySet, Table, rollup, table_frequency_set
from tempanon.lattice.lattice import Lattice, Node

CRITERIA = ("height", "weighted-height", "discernibility", "loss")

Criterion = str | Callable[[Node, FrequencySet], float]


def _kept_classes(fs: FrequencySet, k: int, ldiv=None) -> np.ndarray:
    """Per class: is it released (size >= k, and l-diverse when ``ldiv`` asks it)?"""
    sizes = fs._classes()[0]
    kept = sizes >= k
    if ldiv is not None:
        kept &= ldiv.holds(fs)
    return kept


def discernibility(fs: FrequencySet, k: int, n_rows: int, ldiv=None) -> float:
    """Discernibility of the release at this node: kept classes ``|E|^2`` + ``n`` per suppressed
    tuple (with ``ldiv`` and suppression, classes that are not l-diverse are suppressed too)."""
    _sizes, rows, _ = fs._classes()
    kept = _kept_classes(fs, k, ldiv)
    return float((rows[kept].astype(np.float64) ** 2).sum() + rows[~kept].sum() * float(n_rows))


def generalization_loss(fs: FrequencySet, dims: Sequence[Dimension], k: int, n_rows: int, ldiv=None) -> float:
    """Normalized generalization loss (module doc) of the release at this node, in [0, 1]."""
    q = len(fs.attrs)
    if n_rows == 0 or q == 0:
        return 0.0
    _sizes, _, cls = fs._classes()
    kept_row = _kept_classes(fs, k, ldiv)[cls]
    cell = np.zeros(len(fs), dtype=np.float64)
    for c, j, lv in zip(fs.cols, fs.attrs, fs.levels):
        cell += dims[j].loss[lv][c]
    total = float((cell[kept_row] * fs.counts[kept_row]).sum() + fs.counts[~kept_row].sum() * q)
    return total / (n_rows * q)


def _weights(dims: Sequence[Dimension], weights: Mapping[str, float] | None) -> list[float]:
    names = [d.name for d in dims]
    w = dict.fromkeys(names, 1.0)
    for key, val in (weights or {}).items():
        if key not in w:
            raise InputError(f"weight given for {key!r}, which is not a quasi-identifier ({', '.join(names)})")
        if isinstance(val, bool) or not isinstance(val, (int, float, np.integer, np.floating)) or not np.isfinite(val) or val < 0:
            raise InputError(f"weight of {key!r} must be a non-negative number, got {val}")
        w[key] = float(val)
    return [w[n] for n in names]


def select_node(
    anonymous: Sequence[Node],
    minimal: Sequence[Node],
    dims: Sequence[Dimension],
    table: Table,
    k: int,
    criterion: Criterion = "loss",
    *,
    weights: Mapping[str, float] | None = None,
    suppression: bool = False,
    ldiv=None,
) -> tuple[Node, float]:
    """Pick the best node by ``criterion`` (see module doc); returns (node, criterion value)."""
    if not anonymous:
        raise InputError("no anonymous node to select from")
    lat = Lattice(dims)
    w = _weights(dims, weights)
    if callable(criterion):
        pool, name = list(anonymous), "custom"
    elif criterion in ("height", "weighted-height"):
        pool, name = list(minimal) or list(anonymous), criterion
    elif criterion in ("discernibility", "loss"):
        pool, name = (list(anonymous) if suppression else list(minimal) or list(anonymous)), criterion
    else:
        raise InputError(f"unknown criterion {criterion!r}; expected one of {', '.join(CRITERIA)}")

    if name == "loss" and len(pool) > 1:
        bounds = _loss_lower_bounds(pool, dims, table)
        if bounds is not None:
            return _best_by_loss(pool, bounds, dims, table, k, lat, ldiv)
    if name == "height":
        scores = [float(lat.height(n)) for n in pool]
    elif name == "weighted-height":
        scores = [float(sum(wj * d.heights[v] for wj, d, v in zip(w, dims, n))) for n in pool]
    else:
        fss = _frequency_sets(pool, dims, table)
        if name == "discernibility":
            scores = [discernibility(fss[n], k, table.n_rows, ldiv) for n in pool]
        elif name == "loss":
            scores = [generalization_loss(fss[n], dims, k, table.n_rows, ldiv) for n in pool]
        else:
            scores = [float(criterion(n, fss[n])) for n in pool]  # type: ignore[operator]
    tol = _LOSS_TOL if name == "loss" else 0.0
    best = _least(list(zip(scores, (lat.height(n) for n in pool), map(tuple, pool))), tol)
    return best[2], best[0]


def _least(keys: list[tuple], tol: float) -> tuple:
    """The least ``(score, height, node)``, scores within ``tol`` of the least score counting as
    equal (then lower height, then smaller levels): a loss summed in another row order (an engine's
    GROUP BY returns rows in no fixed order) differs in its last bits, which must not decide."""
    low = min(k[0] for k in keys)
    return min((k for k in keys if k[0] <= low + tol), key=lambda k: (k[1], k[2]))


_LOSS_TOL = 1e-9  # far above the rounding of either sum (losses are in [0, 1])


def _loss_lower_bounds(pool: Sequence[Node], dims: Sequence[Dimension], table: Table) -> np.ndarray | None:
    """A lower bound of :func:`generalization_loss` for every node of ``pool``, from the
    attributes' value frequencies alone (no frequency set of any node).

    The loss's numerator is ``sum over kept rows of count * cell + q * suppressed tuples`` where
    ``cell`` (the row's summed per-attribute losses) is at most ``q`` when every loss value is at
    most 1. So it is at least ``sum over all rows of count * cell``, which is a sum over
    attributes of ``sum_b f_j(b) * loss_j[level](code of b)`` -- one number per (attribute,
    level). ``None`` when the bound does not apply (an engine table without rows on the driver,
    loss values outside [0, 1])."""
    q = len(dims)
    if table.n_rows == 0 or q == 0:
        return None
    if isinstance(table, EngineTable):
        # the value frequencies from the engine (one GROUPING SETS job), when it offers them
        freq = getattr(table.source, "base_frequencies", None)
        if freq is None:
            return None
    elif len(table.columns) != q:
        return None
    per = []
    for j, d in enumerate(dims):
        if any(len(lv) and not (np.isfinite(lv).all() and lv.min() >= 0 and lv.max() <= 1) for lv in map(np.asarray, d.loss)):
            return None
    freqs = freq() if isinstance(table, EngineTable) else None
    if freqs is None:
        # tuple counts: rows counted without weights, plus the extra tuples of the rows that repeat
        # (few on a near-unique table); else one float conversion for every attribute (the sums
        # are integers either way, exact in float64)
        w = table.counts
        rows = np.flatnonzero(w != 1)
        few = 16 * len(rows) <= len(w)
        extra = (w[rows] - 1).astype(np.float64) if few else None
        wf = None if few else w.astype(np.float64)
    for j, d in enumerate(dims):
        if freqs is not None:
            f = np.asarray(freqs[j], dtype=np.float64)
        elif few:
            f = np.bincount(table.columns[j], minlength=d.n_base).astype(np.float64)
            if len(rows):
                f += np.bincount(table.columns[j][rows], weights=extra, minlength=d.n_base)
        else:
            f = np.bincount(table.columns[j], weights=wf, minlength=d.n_base)
        per.append(np.array([float(f @ np.asarray(d.loss[v], dtype=np.float64)[d.codes[v]]) for v in range(d.n_levels)]))
    nodes = np.asarray(pool, dtype=np.intp).reshape(len(pool), q)
    total = np.zeros(len(pool), dtype=np.float64)
    for j in range(q):
        total += per[j][nodes[:, j]]
    return total / (table.n_rows * q)


def _best_by_loss(pool, bounds, dims, table, k, lat, ldiv) -> tuple[Node, float]:
    """The node of least loss (ties: lower height, then smaller levels), visiting ``pool`` by
    increasing lower bound and stopping once the bound exceeds the best loss found: a node left
    out has a loss above the best one, so the choice and its value are those of scoring every
    node (tests/kanon/test_kanon_select_bound.py checks this against scoring all nodes).
    The frequency set of a visited node is computed from T (few nodes are visited)."""
    attrs = tuple(range(len(dims)))
    low: float | None = None
    seen = []
    for i in np.argsort(bounds, kind="stable").tolist():
        if low is not None and bounds[i] > low + _LOSS_TOL:
            break  # every node within the tolerance of the least loss has its bound below this one
        node = pool[i]
        score = generalization_loss(table_frequency_set(table, dims, attrs, node), dims, k, table.n_rows, ldiv)
        seen.append((score, lat.height(node), tuple(node)))
        low = score if low is None else min(low, score)
    best = _least(seen, _LOSS_TOL)
    return best[2], best[0]


def _frequency_sets(nodes: Sequence[Node], dims: Sequence[Dimension], table: Table) -> dict[Node, FrequencySet]:
    """Frequency sets of ``nodes``: rolled up from a direct specialization in the set when there is
    one (visiting by height), else computed from T."""
    lat = Lattice(dims)
    order = sorted(nodes, key=lambda n: (lat.height(n), n))
    out: dict[Node, FrequencySet] = {}
    attrs = tuple(range(len(dims)))
    for n in order:
        specs = [s for s in lat.direct_specializations(n) if s in out]
        if specs:
            out[n] = rollup(min((out[s] for s in specs), key=len), dims, n)
        else:
            out[n] = table_frequency_set(table, dims, attrs, n)
    return out
