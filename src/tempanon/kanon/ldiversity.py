"""l-diversity of equivalence classes for full-domain generalization (kanon).

A class E is the set of rows sharing one combination of generalized quasi-identifier values; its
sensitive values have counts ``r_1 >= r_2 >= ... >= r_m`` (``m`` distinct values, ``|E| = sum r_i``).
The variants, as ARX defines them (Machanavajjhala et al., "l-Diversity: Privacy Beyond
k-Anonymity", ICDE 2006 / TKDD 2007, Section 4):

* ``distinct``: at least ``l`` distinct sensitive values (``m >= l``).
* ``entropy``: ``-sum_i (r_i/|E|) log(r_i/|E|) >= log(l)`` (natural log; a class of exactly
  ``l`` equally frequent values has entropy ``log l`` and passes -- the comparison allows a
  relative rounding error of 1e-12).
* ``recursive`` (c,l): ``r_1 < c * (r_l + r_{l+1} + ... + r_m)`` (fails when ``m < l``).
* ``frequency``: the most frequent value has at most ``|E| / l`` rows (``r_1 * l <= |E|``):
  tempanon's original l, the l-eligibility of Wang et al. (ICDM 2010, Definition 1), also
  known as "probabilistic" l-diversity (an attacker's belief in any value is at most 1/l).

All four are **monotone**: if two classes are each l-diverse, so is their union (distinct: the
union has at least as many values; entropy: it is concave; recursive and frequency: Machanavajjhala
et al. Theorem 5.1 / a sum of inequalities). So without suppression the generalization and subset
properties of Incognito (Section 3) hold for "k-anonymous and l-diverse", and every search may
use them. With a suppression threshold they do not (merging an l-diverse class with a suppressed
one can make a larger class that fails), so :func:`tempanon.kanon.search.run_search` then checks
l on every k-anonymous node found by the monotone k-search instead of pruning with it.

A class that fails k or l is suppressed (ARX's semantics); a node is accepted when the rows so
suppressed number at most the threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tempanon.errors import InputError
from tempanon.lattice.freqset import FrequencySet

VARIANTS = ("frequency", "distinct", "entropy", "recursive")
ENTROPY_RTOL = 1e-12


@dataclass(frozen=True)
class LDiversity:
    """An l-diversity requirement: ``variant`` in :data:`VARIANTS`, ``l >= 2``, ``c > 0`` for
    ``recursive``."""

    l: int
    variant: str = "frequency"
    c: float | None = None

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise InputError(f"unknown l-diversity variant {self.variant!r}; expected one of {', '.join(VARIANTS)}")
        if isinstance(self.l, bool) or not isinstance(self.l, (int, np.integer)) or self.l < 2:
            raise InputError(f"l must be an integer of at least 2, got {self.l!r}")
        if self.variant == "recursive":
            if self.c is None or isinstance(self.c, bool) or not isinstance(self.c, (int, float, np.number)):
                raise InputError("recursive (c,l)-diversity needs c (a positive number), e.g. --c 3")
            if not (math.isfinite(float(self.c)) and float(self.c) > 0):
                raise InputError(f"c must be a positive finite number, got {self.c!r}")
        elif self.c is not None:
            raise InputError(f"c is a parameter of recursive (c,l)-diversity only, not of {self.variant!r}")

    def describe(self) -> str:
        if self.variant == "recursive":
            return f"recursive ({self.c:g},{self.l})-diversity"
        return f"{self.variant} {self.l}-diversity"

    def as_dict(self) -> dict:
        return {"variant": self.variant, "l": int(self.l), "c": None if self.c is None else float(self.c)}

    def holds(self, fs: FrequencySet) -> np.ndarray:
        """Per class of ``fs`` (a frequency set carrying the sensitive digit): is it l-diverse?"""
        if not fs.sensitive:
            raise ValueError("this frequency set carries no sensitive attribute")
        m = len(fs.counts)
        if m == 0:
            return np.zeros(0, dtype=bool)
        starts = fs._class_starts()
        tuples = fs.class_tuples()
        counts = fs.counts.astype(np.int64)
        if self.variant == "frequency":
            return np.maximum.reduceat(counts, starts) * self.l <= tuples
        if self.variant == "distinct":
            return np.diff(np.r_[starts, m]) >= self.l
        cls = fs.class_index()
        if self.variant == "entropy":
            p = counts / tuples[cls]
            h = -np.add.reduceat(p * np.log(p), starts)
            return h >= math.log(self.l) * (1 - ENTROPY_RTOL)
        # recursive (c,l): rank the values of each class by count, descending
        order = np.lexsort((-counts, cls))
        rank = np.arange(m) - starts[cls[order]]
        sc = counts[order]
        r1 = np.maximum.reduceat(counts, starts)
        tail = np.bincount(cls[order][rank >= self.l - 1], weights=sc[rank >= self.l - 1], minlength=len(starts))
        return r1 < float(self.c) * tail

    def impossible_reason(self, counts: np.ndarray, labels, max_suppressed: int, sensitive: str) -> str | None:
        """A proof that no generalization can satisfy this requirement, or ``None``. ``counts``
        are the rows of each sensitive value, ``labels`` their values (or ``None``).

        Classes only merge under generalization and the union of l-diverse classes is l-diverse,
        so the rows a release keeps, taken together, must be l-diverse. Without suppression that
        is the whole table. With up to ``max_suppressed`` rows suppressed the test is exact for
        ``frequency`` (the best rows to remove are counted, :func:`_frequency_possible`) and
        ``distinct`` (removing rows never adds values); for ``entropy`` and ``recursive`` no proof
        is attempted with suppression (``None``)."""
        counts = np.asarray(counts, dtype=np.int64)
        order = _by_count(counts, labels)
        counts = counts[order]
        counts = counts[counts > 0]
        n = int(counts.sum())
        if n == 0:
            return None
        name = value_name(labels, order[0])
        top = f"{name} of {sensitive!r} holds {counts[0]:,} of {n:,} rows ({100 * counts[0] / n:.1f}%)"
        sup = (
            f" (suppressing up to {max_suppressed:,} rows cannot change that)" if max_suppressed else ""
        )
        if self.variant == "distinct":
            if len(counts) < self.l:
                return (
                    f"{self.describe()} is impossible for this data: {sensitive!r} has only {len(counts)} distinct "
                    f"value(s) in the whole table, and a class needs {self.l}{sup}"
                )
            return None
        total = int(counts.sum())
        if self.variant == "frequency":
            if not _frequency_possible(counts, self.l, max_suppressed):
                return (
                    f"{self.describe()} is impossible for this data: {top}; every class must have at most 1/{self.l} "
                    f"= {100 / self.l:.1f}% of its rows with one value, the union of such classes too, and classes "
                    f"only merge under generalization, so no generalization can satisfy it{sup}"
                )
            return None
        if self.variant == "entropy":
            p = counts / total
            h = float(-(p * np.log(p)).sum())
            if h < math.log(self.l) * (1 - ENTROPY_RTOL) and max_suppressed == 0:
                return (
                    f"{self.describe()} is impossible for this data: the entropy of {sensitive!r} over the whole table "
                    f"is {h:.3f} < log({self.l}) = {math.log(self.l):.3f} ({top}); the union of entropy {self.l}-diverse "
                    "classes is entropy l-diverse (entropy is concave) and classes only merge under generalization, so "
                    "no generalization can satisfy it"
                )
            return None
        srt = counts
        tail = float(srt[self.l - 1 :].sum()) if len(srt) >= self.l else 0.0
        if not srt[0] < float(self.c) * tail and max_suppressed == 0:
            return (
                f"{self.describe()} is impossible for this data: over the whole table the most frequent value has "
                f"{int(srt[0]):,} rows, not fewer than c = {self.c:g} times the {tail:,.0f} rows of the values ranked "
                f"{self.l} and below ({top}); the union of recursive (c,l)-diverse classes is one, so no "
                "generalization can satisfy it"
            )
        return None


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _by_count(counts: np.ndarray, labels) -> np.ndarray:
    """The sensitive values' indices, most rows first; the first of the values with the most rows is
    the one with the smallest text (a missing value first), so the value a message names is the same
    on every engine (numpy's codes are in file order, an engine's in its grouping's order)."""
    order = np.argsort(-counts, kind="stable")
    if labels is not None and len(order) > 1 and counts[order[1]] == counts[order[0]]:
        tied = order[counts[order] == counts[order[0]]]
        first = min(tied.tolist(), key=lambda i: "" if _missing(labels[i]) else "\x01" + str(labels[i]))
        order = np.r_[first, order[order != first]]
    return order


def value_name(labels, i: int) -> str:
    """How a message names sensitive value ``i``: ``value 'flu'``; a missing value (an empty cell, a
    Parquet null or float NaN: one category of its own) ``value <missing>``, not pandas' text ``'nan'``
    (which a cell holding the text ``nan`` has); without labels "the most frequent value"."""
    if labels is None:
        return "the most frequent value"
    v = labels[i]
    if isinstance(v, float) and v == 0:
        v = 0.0  # (a DataFrame's float -0.0 is the value 0.0, as the engines name it)
    return "value <missing>" if _missing(v) else f"value {str(v)!r}"


def table_summary(counts: np.ndarray, labels, sensitive: str) -> str:
    """One line on the sensitive column over the whole table: values, the top share, entropy."""
    counts = np.asarray(counts, dtype=np.int64)
    order = _by_count(counts, labels)
    c = counts[order][counts[order] > 0]
    n = int(c.sum())
    if n == 0:
        return ""
    p = c / n
    name = value_name(labels, order[0])
    return (
        f"over the whole table {sensitive!r} has {len(c)} distinct values, {name} holds {100 * p[0]:.1f}% of the rows, "
        f"entropy {float(-(p * np.log(p)).sum()):.3f}"
    )


def _frequency_possible(counts: np.ndarray, l: int, budget: int) -> bool:
    """Can removing at most ``budget`` rows leave rows whose most frequent value has at most 1/l
    of them? (``counts`` descending.) Keep at most M rows of each value: that removes
    ``sum(max(c - M, 0))`` rows and needs ``M * l <= kept``; the slack is convex in M and
    smallest at the (l+1)-th largest count, or at the smallest M the budget allows."""
    c = counts.astype(np.int64)
    n = int(c.sum())

    def removed(m: int) -> int:
        return int(np.maximum(c - m, 0).sum())

    lo, hi = 0, int(c[0])
    while lo < hi:  # smallest M whose removal fits the budget
        mid = (lo + hi) // 2
        if removed(mid) <= budget:
            hi = mid
        else:
            lo = mid + 1
    m = max(lo, 1, int(c[l]) if len(c) > l else 0)  # keep at least one row
    return m * l <= n - removed(m) and n - removed(m) > 0


def as_ldiversity(l: LDiversity | int | None) -> LDiversity | None:
    """``None``, an :class:`LDiversity`, or a bare int (frequency l-diversity, the historical l)."""
    if l is None or isinstance(l, LDiversity):
        return l
    return LDiversity(int(l) if not isinstance(l, bool) else l)
