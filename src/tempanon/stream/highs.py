"""Small LPs solved by HiGHS with a warm start (the step problems of :mod:`tempanon.stream.window`).

The online steps solve many tiny LPs (tens of variables): the LP relaxation that certifies a step and
the nodes of the step's branch and bound (:func:`tempanon.stream.window.solve_step_bb`), whose nodes
differ from each other only in the bounds of a few variables. Through :func:`scipy.optimize.milp` each
LP costs ~2-3 ms, about 80% of it in scipy's argument checks and model conversion, and every node
starts from scratch. :class:`WarmLP` keeps one HiGHS instance per problem and changes only the bounds
between solves, so HiGHS's dual simplex starts from the previous basis: ~0.9-1.3 ms for building the
model and its first solve, ~0.3-0.4 ms per warm re-solve, Python bookkeeping included (measured on the
recorded branch-and-bound steps of daily use-of-force and stops, l = 3, w = 4, docs/benchmarks.md).

The instance comes from the HiGHS bindings that scipy (>= 1.15) ships as
``scipy.optimize._highspy._core`` — the same HiGHS that ``milp`` runs, so no new dependency — which
is not scipy's public API. Hence the fast path is *hidden and guarded*: it is used only when that
module imports and passes a self-test (a tiny LP solved, re-bounded and re-solved, with known
answers), and a status other than optimal or infeasible makes the caller fall back; otherwise
:func:`scipy.optimize.milp` solves each LP with the same bounds (:class:`_MilpLP`), same optimum. ``TEMPANON_HIGHS=milp`` in the environment forces the
fallback (the tests run both).
"""

from __future__ import annotations

import os

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

try:  # scipy >= 1.15 vendors HiGHS's own Python bindings (highspy) under this private name
    from scipy.optimize._highspy import _core as _hc
except Exception:  # pragma: no cover - depends on the installed scipy
    _hc = None

OPTIMAL, INFEASIBLE, OTHER = "optimal", "infeasible", "other"
_FAST: bool | None = None  # the self-test's verdict, once run


def fast_path_available() -> bool:
    """Whether :func:`make_lp` returns the warm-started HiGHS instance (else the ``milp`` fallback):
    the bindings are there and pass :func:`_self_test` (run once per process)."""
    global _FAST
    if os.environ.get("TEMPANON_HIGHS", "") == "milp":
        return False
    if _FAST is None:
        _FAST = _self_test()
    return _FAST


def _self_test() -> bool:
    """Solve a tiny LP through the private bindings, change bounds twice and re-solve: ``min x0 + 2 x1``
    s.t. ``x0 + x1 >= 1``, ``0 <= x <= 1`` (optimum 1 at x0 = 1); with ``x0 <= 0`` the optimum is 2;
    with ``x1 <= 0`` as well it is infeasible. Any exception or other answer disables the fast path."""
    if _hc is None:
        return False
    try:
        csc = (np.array([0, 1, 2]), np.array([0, 0]), np.array([1.0, 1.0]), 1)
        lp = WarmLP(np.array([1.0, 2.0]), csc, np.array([1.0]), np.array([np.inf]), np.zeros(2), np.ones(2))
        a = lp.solve()
        lp.set_bounds(np.array([0]), np.array([0.0]), np.array([0.0]))
        b = lp.solve()
        lp.set_bounds(np.array([1]), np.array([0.0]), np.array([0.0]))
        c = lp.solve()
        return (a[0] == OPTIMAL and abs(a[1] - 1.0) < 1e-9 and np.allclose(a[2], [1.0, 0.0])
                and b[0] == OPTIMAL and abs(b[1] - 2.0) < 1e-9 and c[0] == INFEASIBLE)
    except Exception:
        return False


def csc32(data, indices, indptr, shape) -> sparse.csc_array:
    """A column-wise matrix with 32-bit index arrays: scipy < 1.15's ``milp`` wrapper rejects 64-bit
    ones (``Buffer dtype mismatch``), which scipy's own conversions may produce."""
    return sparse.csc_array((np.asarray(data, float), np.asarray(indices, np.int32), np.asarray(indptr, np.int32)), shape=shape)


class _MilpLP:
    """The fallback: every solve is a fresh :func:`scipy.optimize.milp` LP (presolve off)."""

    def __init__(self, cost, csc, row_lo, row_hi, col_lo, col_hi):
        indptr, indices, data, n_rows = csc
        A = csc32(data, indices, indptr, (n_rows, len(cost)))
        self.cost = np.asarray(cost, float)
        self.constraints = LinearConstraint(A, row_lo, row_hi)
        self.col_lo = np.array(col_lo, float)
        self.col_hi = np.array(col_hi, float)

    def set_bounds(self, idx: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        self.col_lo[idx] = lo
        self.col_hi[idx] = hi

    def solve(self) -> tuple[str, float, np.ndarray | None]:
        res = milp(self.cost, constraints=self.constraints, bounds=Bounds(self.col_lo, self.col_hi), options={"presolve": False})
        if res.status == 0 and res.x is not None:
            return OPTIMAL, float(res.fun), np.asarray(res.x)
        return (INFEASIBLE if res.status == 2 else OTHER), np.inf, None


class WarmLP:
    """One HiGHS instance holding ``min cost @ x`` s.t. ``row_lo <= A x <= row_hi``,
    ``col_lo <= x <= col_hi`` (``A`` given column-wise as ``csc = (indptr, indices, data, n_rows)``); :meth:`set_bounds` changes column bounds, :meth:`solve` re-solves from
    the last basis. Presolve is off (on these LPs it costs more than it saves, and a warm start needs
    the original model)."""

    def __init__(self, cost, csc, row_lo, row_hi, col_lo, col_hi):
        indptr, indices, data, m = csc
        n = len(cost)
        h = _hc._Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("presolve", "off")
        lp = _hc.HighsLp()
        lp.num_col_, lp.num_row_ = n, m
        lp.col_cost_ = np.asarray(cost, float)
        lp.col_lower_ = np.asarray(col_lo, float)
        lp.col_upper_ = np.asarray(col_hi, float)
        lp.row_lower_ = np.asarray(row_lo, float)
        lp.row_upper_ = np.asarray(row_hi, float)
        lp.a_matrix_.format_ = _hc.MatrixFormat.kColwise
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
        lp.a_matrix_.start_ = np.asarray(indptr, dtype=np.int32)
        lp.a_matrix_.index_ = np.asarray(indices, dtype=np.int32)
        lp.a_matrix_.value_ = np.asarray(data, dtype=float)
        h.passModel(lp)
        self._h = h

    def set_bounds(self, idx: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        idx = np.asarray(idx, dtype=np.int32)
        self._h.changeColsBounds(len(idx), idx, np.asarray(lo, float), np.asarray(hi, float))

    def solve(self) -> tuple[str, float, np.ndarray | None]:
        h = self._h
        h.run()
        status = h.getModelStatus()
        if status == _hc.HighsModelStatus.kOptimal:
            return OPTIMAL, float(h.getInfo().objective_function_value), np.asarray(h.getSolution().col_value, float)
        if status == _hc.HighsModelStatus.kInfeasible:
            return INFEASIBLE, np.inf, None
        return OTHER, np.inf, None


def make_lp(cost, csc, row_lo, row_hi, col_lo, col_hi) -> WarmLP | _MilpLP:
    """A re-solvable LP (``csc = (indptr, indices, data, n_rows)``, the constraint matrix column-wise):
    the warm-started HiGHS instance when available, else the ``milp`` fallback."""
    if fast_path_available():
        return WarmLP(cost, csc, row_lo, row_hi, col_lo, col_hi)
    return _MilpLP(cost, csc, row_lo, row_hi, col_lo, col_hi)
