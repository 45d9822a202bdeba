"""Customized data publishing and its estimation (Shou et al., TKDE, Section 6).

The steward publishes value envelopes only for ``QI_ae`` (``value_columns``) and pattern symbols
only for ``QI_pr`` (``pattern_columns``); :func:`tempanon.timeseries.api.kp_anonymize` does that
with ``publish_values`` / ``publish_patterns``. A recipient estimates what was left out:

* **missing ranges** (Sections 6.1-6.2) of a column ``c`` with a published symbol ``s_c``:
  ``LB``/``UB`` (Lemma 1): z-normalization is increasing, so within one series a smaller symbol
  means a smaller value: ``LB_c = max{lo_a : a in QI_ae & QI_pr, s_a < s_c}``,
  ``UB_c = min{hi_a : s_a > s_c}`` (the domain bound when the set is empty). The linear program
  of Section 6.2 (scipy's HiGHS) tightens them: variables ``x_1..x_n``, ``mu`` and ``sigma >= 0``;
  ``mu = mean(x)``; ``lo_a <= x_a <= hi_a`` on ``QI_ae``; for every published symbol ``s`` of
  column ``b`` at level ``L``: ``mu + beta_s sigma <= x_b <= mu + beta_{s+1} sigma`` (the symbol's
  breakpoints; linear because ``sigma`` is a variable); the valid cut
  ``sum_i |x_i - mu| >= sqrt(n) sigma`` (Cauchy-Schwarz on ``sum_i (x_i - mu)^2 = n sigma^2``), made
  linear with the signs the symbols fix and ``|x_i - mu| <= b_i sigma`` for the others; all
  values inside the domain. ``sigma`` is not tied to the standard deviation otherwise, so this is
  a relaxation and its bounds stay sound. ``min x_c`` and ``max x_c`` give the tightened range.
  (A series that counts as constant for SAX, std <= 1e-9 max(1, max|x|), may fall outside.)
* **missing symbols** (Section 6.3) of a column ``c`` with a published range only: every symbol
  whose constraint keeps the same linear program feasible is possible; the estimate is the middle
  one of the possible symbols.
* The **Overlap** case (Section 6.4, ``QI_ae & QI_pr`` not empty) links values and symbols through
  the shared columns. The **Disjoint** case is refused with :class:`InputError`.

The domain defaults to the smallest published lower bound and the largest published upper bound.
One linear program set is solved per distinct (k-group, P-subgroup) pair.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.optimize import linprog

from tempanon.errors import InputError
from tempanon.timeseries.sax import breakpoints


def _check_overlap(value_columns, pattern_columns):
    if not set(value_columns) & set(pattern_columns):
        raise InputError("customized publishing: value and pattern columns are disjoint; the Disjoint case "
                         "(Section 6.4) cannot be estimated, publish at least one column in both")


class _Record:
    """The published knowledge about one (k-group, P-subgroup)."""

    def __init__(self, qi, vcols, pcols, lo, hi, pattern, level, domain):
        self.qi, self.n = list(qi), len(qi)
        self.dom = domain
        self.bounds = [domain] * self.n
        for c, a, b in zip(vcols, lo, hi):
            self.bounds[self.qi.index(c)] = (max(a, domain[0]), min(b, domain[1]))
        self.sym = {qi.index(c): ord(ch) - 97 for c, ch in zip(pcols, pattern)}
        self.level = int(level)

    def lemma1(self, j: int):
        s = self.sym[j]
        known = [(i, self.sym[i]) for i in self.sym if i != j and self.bounds[i] != self.dom]
        lb = max([self.bounds[i][0] for i, t in known if t < s], default=self.dom[0])
        ub = min([self.bounds[i][1] for i, t in known if t > s], default=self.dom[1])
        return lb, ub

    def _rows(self, extra: dict[int, int]):
        bp = breakpoints(self.level)
        A, b = [], []
        syms = dict(self.sym)
        syms.update(extra)
        for j, s in syms.items():
            if s > 0:  # mu + beta_s sigma - x_j <= 0
                row = np.zeros(self.n + 2)
                row[j], row[self.n], row[self.n + 1] = -1.0, 1.0, bp[s - 1]
                A.append(row), b.append(0.0)
            if s < self.level - 1:  # x_j - mu - beta_{s+1} sigma <= 0
                row = np.zeros(self.n + 2)
                row[j], row[self.n], row[self.n + 1] = 1.0, -1.0, -bp[s]
                A.append(row), b.append(0.0)
        # valid cut from Cauchy-Schwarz: sum_i |x_i - mu| >= sqrt(n) sigma, where |x_i - mu| is
        # -(x_i - mu) or (x_i - mu) when the symbol fixes the sign, else at most bound_i * sigma
        # (the symbol's wider breakpoint, or sqrt(n-1), the largest |z| of a z-normalized series)
        cap = np.sqrt(max(self.n - 1, 0))
        row = np.zeros(self.n + 2)
        slack = 0.0
        for j in range(self.n):
            s = syms.get(j)
            low = -np.inf if s is None or s == 0 else bp[s - 1]
            up = np.inf if s is None or s == self.level - 1 else bp[s]
            if up <= 0:
                row[j] += 1.0
                row[self.n] -= 1.0
            elif low >= 0:
                row[j] -= 1.0
                row[self.n] += 1.0
            else:
                slack += min(max(abs(low), abs(up)), cap)
        row[self.n + 1] = np.sqrt(self.n) - slack
        A.append(row), b.append(0.0)
        return np.array(A), np.array(b)

    def _solve(self, c_vec, extra=None):
        A, b = self._rows(extra or {})
        eq = np.r_[np.full(self.n, 1.0 / self.n), -1.0, 0.0][None]
        bounds = list(self.bounds) + [self.dom, (0.0, self.dom[1] - self.dom[0])]
        return linprog(c_vec, A_ub=A, b_ub=b, A_eq=eq, b_eq=[0.0], bounds=bounds, method="highs")

    def lp_range(self, j: int):
        c = np.zeros(self.n + 2)
        c[j] = 1.0
        lo, hi = self._solve(c), self._solve(-c)
        if lo.status != 0 or hi.status != 0:
            return self.lemma1(j)
        return float(lo.fun), float(-hi.fun)

    def possible_symbols(self, j: int) -> list[int]:
        c = np.zeros(self.n + 2)
        return [s for s in range(self.level) if self._solve(c, {j: s}).status == 0]


def _records(released, qi, vcols, pcols, domain):
    keys = released[["kgroup", "psubgroup"]].drop_duplicates()
    first = released.loc[keys.index]
    if domain is None:
        domain = (float(released[[f"{c}_lo" for c in vcols]].min().min()),
                  float(released[[f"{c}_hi" for c in vcols]].max().max()))
    recs = []
    for _, row in first.iterrows():
        recs.append(_Record(qi, vcols, pcols, [row[f"{c}_lo"] for c in vcols], [row[f"{c}_hi"] for c in vcols],
                            row["pattern"], row["pattern_level"], domain))
    return keys, recs


def estimate_ranges(released: pd.DataFrame, qi: Sequence[str], value_columns: Sequence[str],
                    pattern_columns: Sequence[str], *, domain: tuple[float, float] | None = None,
                    lp: bool = True) -> pd.DataFrame:
    """Estimated ``<col>_lo``/``<col>_hi`` for every column of ``pattern_columns`` without a
    published range: Lemma 1's ``LB``/``UB`` and, with ``lp``, the Section 6.2 LP tightening.
    Returns one row per released row (same index)."""
    qi, vcols, pcols = list(qi), list(value_columns), list(pattern_columns)
    _check_overlap(vcols, pcols)
    missing = [c for c in pcols if c not in vcols]
    keys, recs = _records(released, qi, vcols, pcols, domain)
    est = {}
    for c in missing:
        j = qi.index(c)
        vals = [(r.lp_range(j) if lp else r.lemma1(j)) for r in recs]
        est[f"{c}_lo"] = [v[0] for v in vals]
        est[f"{c}_hi"] = [v[1] for v in vals]
    table = keys.reset_index(drop=True).assign(**est)
    out = released[["kgroup", "psubgroup"]].merge(table, on=["kgroup", "psubgroup"], how="left")
    out.index = released.index
    return out.drop(columns=["kgroup", "psubgroup"])


def estimate_symbols(released: pd.DataFrame, qi: Sequence[str], value_columns: Sequence[str],
                     pattern_columns: Sequence[str], *, domain: tuple[float, float] | None = None) -> pd.DataFrame:
    """For each column of ``value_columns`` without a published symbol (Section 6.3): the possible
    symbols (``<col>_symbols``, letters) and the estimate (``<col>_symbol``, the middle one)."""
    qi, vcols, pcols = list(qi), list(value_columns), list(pattern_columns)
    _check_overlap(vcols, pcols)
    missing = [c for c in vcols if c not in pcols]
    keys, recs = _records(released, qi, vcols, pcols, domain)
    est = {}
    for c in missing:
        j = qi.index(c)
        poss = [r.possible_symbols(j) for r in recs]
        est[f"{c}_symbols"] = ["".join(chr(97 + s) for s in p) for p in poss]
        est[f"{c}_symbol"] = [chr(97 + p[(len(p) - 1) // 2]) if p else "" for p in poss]
    table = keys.reset_index(drop=True).assign(**est)
    out = released[["kgroup", "psubgroup"]].merge(table, on=["kgroup", "psubgroup"], how="left")
    out.index = released.index
    return out.drop(columns=["kgroup", "psubgroup"])
