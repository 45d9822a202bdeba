"""Privacy and re-identification risk measures of a table as it is.

All measures are computed on *equivalence classes*: the groups of records sharing the same values
of the quasi-identifiers (Sweeney 2002; Incognito Section 2). Values are compared as text
(:func:`tempanon.hierarchy.as_text`), and a missing value is its own category (the empty string),
never dropped. Everything is vectorized over integer class codes (one ``np.unique``/``bincount``
per measure, no Python loop over records).

Definitions (``E`` a class, ``|E|`` its number of records):

* ``k`` -- ``min |E|`` (k-anonymity).
* ``respondent_k`` -- with a respondent id column: ``min`` over classes of the number of distinct
  respondents in ``E`` (respondent-level k-anonymity, Mascetti et al. 2006, Section 3).
* ``l_distinct`` -- ``min`` over classes of the number of distinct sensitive values in ``E``
  (distinct l-diversity, Machanavajjhala et al. 2007).
* ``l_frequency`` -- ``min`` over classes of ``floor(|E| / max_s count(E, s))``: the largest ``l``
  such that every class is *l-eligible* in the sense of Xiao and Tao's Anatomy (and of the
  reposition model for snapshot streams, Wang et al. ICDM 2010, Definition 2): no sensitive value
  occurs in more than ``|E| / l`` of the class's records. Always ``<= l_distinct``.
* ``l_entropy`` -- ``floor(exp(min_E H(E)))`` with ``H`` the Shannon entropy (natural log) of the
  sensitive values in ``E`` (entropy l-diversity, reported as an integer like pycanon does).
* prosecutor risk of a record -- ``1 / |E|`` of its class (El Emam 2008; ARX's "prosecutor
  risk"); with a respondent id the class size counts distinct respondents. ``max`` = ``1 / k``,
  ``mean`` = mean over records = (number of classes) / (number of records) without uid.
* ``uniques`` -- records alone in their class (``|E| = 1``; with uid: the only respondent).
* ``records_at_risk`` -- share of records whose prosecutor risk exceeds a threshold.

For several sensitive columns each l is the minimum over the columns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from tempanon.data.roles import require_columns
from tempanon.errors import InputError


def _text_codes(series: pd.Series) -> np.ndarray:
    """Dense integer codes of a column compared as text (missing = its own code)."""
    from tempanon.hierarchy.core import as_text

    codes, _ = pd.factorize(pd.Series(as_text(series), dtype=object))
    return codes.astype(np.int64)


def class_codes(df: pd.DataFrame, qi: Sequence[str]) -> tuple[np.ndarray, int]:
    """``(cls, n_classes)``: the equivalence class (``0..n_classes-1``) of every record over ``qi``."""
    if len(df) == 0:
        return np.zeros(0, dtype=np.int64), 0
    if not qi:
        return np.zeros(len(df), dtype=np.int64), 1
    key = np.zeros(len(df), dtype=np.int64)
    for col in qi:
        c = _text_codes(df[col])
        card = int(c.max()) + 1
        key = key * card + c
        # keep the key small: re-densify after each column so the product never overflows
        _, key = np.unique(key, return_inverse=True)
        key = key.astype(np.int64)
    n = int(key.max()) + 1
    return key, n


def class_sizes(cls: np.ndarray, n_classes: int) -> np.ndarray:
    """Number of records of each class."""
    return np.bincount(cls, minlength=n_classes)


def distinct_per_class(cls: np.ndarray, n_classes: int, values: np.ndarray) -> np.ndarray:
    """Number of distinct ``values`` (integer codes) in each class."""
    if len(cls) == 0:
        return np.zeros(n_classes, dtype=np.int64)
    m = int(values.max()) + 1
    pairs = np.unique(cls * m + values)
    return np.bincount(pairs // m, minlength=n_classes)


def value_counts_per_class(cls: np.ndarray, n_classes: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(class_of_pair, count_of_pair)`` for every (class, value) pair present."""
    m = int(values.max()) + 1
    pairs, counts = np.unique(cls * m + values, return_counts=True)
    return pairs // m, counts


@dataclass
class RiskSummary:
    """The measures of one table (module doc). ``None`` where not applicable."""

    rows: int
    classes: int
    k: int | None
    respondent_k: int | None
    l_distinct: int | None
    l_frequency: int | None
    l_entropy: int | None
    uniques: int
    prosecutor_risk_max: float | None
    prosecutor_risk_mean: float | None
    records_at_risk: float | None
    risk_threshold: float
    respondents: int | None = None
    class_sizes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    #: how many classes each entry of ``class_sizes`` stands for (``None``: one each), when the
    #: measures came from a histogram of class sizes (:class:`ClassAggregates` ``classes``)
    class_counts: np.ndarray | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("class_sizes")
        d.pop("class_counts")
        return d


@dataclass
class ClassAggregates:
    """A table reduced to what the measures need (module doc): one entry per equivalence class,
    never one per record. This is all an engine has to return (:meth:`SQLSource.class_aggregates
    <tempanon.lattice.source_duckdb.SQLSource.class_aggregates>`); :func:`measure` computes the same
    aggregates in numpy.

    * ``sizes`` -- records of each class (every entry ``>= 1``; classes in any order);
    * ``respondents_per_class`` -- with a respondent id: distinct respondents of each class,
      aligned with ``sizes``;
    * ``respondents`` -- with a respondent id: distinct respondents of the whole table;
    * ``sensitive`` -- per sensitive column ``(pair_class, pair_count)``: for every (class,
      sensitive value) pair present, its class (``0..classes-1``, numbered in any order, not
      necessarily that of ``sizes``) and its number of records.
    * ``classes`` -- how many classes each entry stands for (``None``: one each): a *histogram* of
      (records, respondents) over the classes, which is all the measures without ``sensitive``
      need; an engine returns it for tables of nearly one class per record, where one row per
      class would be one row per record (not with ``sensitive``).
    """

    sizes: np.ndarray
    respondents_per_class: np.ndarray | None = None
    respondents: int | None = None
    sensitive: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    classes: np.ndarray | None = None

    @property
    def rows(self) -> int:
        """Records of the table (every class's ``sizes`` times the classes it stands for)."""
        w = 1 if self.classes is None else np.asarray(self.classes, dtype=np.int64)
        return int((np.asarray(self.sizes, dtype=np.int64) * w).sum())

    @property
    def n_classes(self) -> int:
        """Equivalence classes of the table."""
        return len(self.sizes) if self.classes is None else int(np.asarray(self.classes, dtype=np.int64).sum())

    def risk(self, threshold: float = 0.2) -> RiskSummary:
        return risk_from_aggregates(self.sizes, respondents_per_class=self.respondents_per_class,
                                    respondents=self.respondents, sensitive=self.sensitive, threshold=threshold,
                                    classes=self.classes)  # fmt: skip


def l_from_pairs(pair_class: np.ndarray, pair_count: np.ndarray) -> tuple[int, int, int]:
    """``(l_distinct, l_frequency, l_entropy)`` of one sensitive column from its (class, value)
    pair counts (classes numbered ``0..C-1`` in any order). A class's size is the sum of its pairs.

    The entropy of a class is summed over its pairs in increasing count order, so it depends on the
    multiset of counts only, not on how the caller numbered classes or values (the engine and the
    numpy path give the same float)."""
    distinct, l_freq, ent = _l_per_class(pair_class, pair_count)
    # tolerate rounding: exp(ln l) may land a hair below l
    l_ent = int(math.floor(math.exp(float(ent.min())) + 1e-9))
    return int(distinct.min()), int(l_freq.min()), l_ent


def _l_per_class(pair_class: np.ndarray, pair_count: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per class: distinct values, frequency l (``|E| // max count``) and the entropy (nats) of one
    sensitive column's (class, value) pair counts (see :func:`l_from_pairs`)."""
    pc = np.asarray(pair_class, dtype=np.int64)
    cnt = np.asarray(pair_count, dtype=np.int64)
    order = np.lexsort((cnt, pc))
    pc, cnt = pc[order], cnt[order]
    nc = int(pc.max()) + 1
    sizes = np.zeros(nc, dtype=np.int64)
    np.add.at(sizes, pc, cnt)
    distinct = np.bincount(pc, minlength=nc)
    maxfreq = np.zeros(nc, dtype=np.int64)
    np.maximum.at(maxfreq, pc, cnt)
    p = cnt / sizes[pc]
    ent = np.bincount(pc, weights=-p * np.log(p), minlength=nc)  # summed in array order
    return distinct, sizes // maxfreq, ent


def l_of_classes(df: pd.DataFrame, qi: Sequence[str], sensitive: Sequence[str], model: str) -> tuple[np.ndarray, np.ndarray]:
    """``(cls, l)``: each row's class code (:func:`class_codes` over ``qi``) and each class's l under
    ``model`` (``distinct``, ``frequency`` or ``entropy``), the smallest over the ``sensitive`` columns:
    which classes make a table's l (:func:`measure` reports the minimum)."""
    cls, nc = class_codes(df, qi)
    out = np.full(nc, np.iinfo(np.int64).max, dtype=np.int64)
    for s in sensitive:
        distinct, l_freq, ent = _l_per_class(*value_counts_per_class(cls, nc, _text_codes(df[s])))
        per = {"distinct": distinct, "frequency": l_freq,
               "entropy": np.floor(np.exp(ent) + 1e-9).astype(np.int64)}[model]  # fmt: skip
        np.minimum(out, per, out=out)
    return cls, out


def l_measures(cls: np.ndarray, n_classes: int, sensitive: np.ndarray) -> tuple[int, int, int]:
    """``(l_distinct, l_frequency, l_entropy)`` of one sensitive column (codes) over the classes."""
    pc, cnt = value_counts_per_class(cls, n_classes, sensitive)
    return l_from_pairs(pc, cnt)


def _check_threshold(threshold: float) -> None:
    if not (0 < threshold <= 1) or math.isnan(threshold):
        raise InputError(f"risk threshold must be in (0, 1], got {threshold}")


def risk_from_aggregates(
    sizes: np.ndarray,
    *,
    respondents_per_class: np.ndarray | None = None,
    respondents: int | None = None,
    sensitive: Sequence[tuple[np.ndarray, np.ndarray]] = (),
    threshold: float = 0.2,
    classes: np.ndarray | None = None,
) -> RiskSummary:
    """The :class:`RiskSummary` of a table given by its class aggregates (:class:`ClassAggregates`;
    the one definition of the measures: :func:`measure` calls it). ``classes``: how many classes
    each entry stands for (a histogram; ``None``: one each).

    Record-level means are computed per class (a class of ``|E|`` records at risk ``1 / r``
    contributes ``|E| / r``), summed exactly rounded (``math.fsum``) over the distinct values of
    ``r``: the result does not depend on the order of the classes, so an engine returning them in
    another order gives the same floats. Without a respondent id the mean prosecutor risk is
    exactly ``classes / rows``.
    """
    _check_threshold(threshold)
    sizes = np.asarray(sizes, dtype=np.int64)
    uid = respondents_per_class is not None
    if len(sizes) and int(sizes.min()) < 1:
        raise ValueError("class aggregates: every class has at least one record")
    if classes is not None:
        w = np.asarray(classes, dtype=np.int64)
        if w.shape != sizes.shape or (len(w) and int(w.min()) < 1):
            raise ValueError("class aggregates: classes must be aligned with sizes, each at least 1")
        if len(sensitive):
            raise ValueError("class aggregates: sensitive pairs need one entry per class, not a histogram")
    else:
        w = np.ones(len(sizes), dtype=np.int64)
    n = int((sizes * w).sum())
    if n == 0:
        return RiskSummary(0, 0, None, None, None, None, None, 0, None, None, None, threshold, (respondents or 0) if uid else None)
    nc = int(w.sum())
    k = int(sizes.min())
    resp_k = None
    risk_size = sizes
    if uid:
        risk_size = np.asarray(respondents_per_class, dtype=np.int64)
        if risk_size.shape != sizes.shape:
            raise ValueError("class aggregates: respondents_per_class must be aligned with sizes")
        resp_k = int(risk_size.min())
        if respondents is None:
            raise ValueError("class aggregates: respondents (the table's total) is needed with respondents_per_class")
    # records per distinct risk size r: the classes' contributions |E| / r, exactly rounded
    r_vals, inv = np.unique(risk_size, return_inverse=True)
    recs = np.zeros(len(r_vals), dtype=np.int64)
    np.add.at(recs, inv.ravel(), sizes * w)
    mean = math.fsum(int(c) / int(r) for c, r in zip(recs, r_vals)) / n
    at_risk = int(recs[1.0 / r_vals > threshold].sum())
    l_d = l_f = l_e = None
    for pc, cnt in sensitive:
        pc = np.asarray(pc, dtype=np.int64)
        cnt = np.asarray(cnt, dtype=np.int64)
        if int(cnt.sum()) != n or (len(pc) and int(pc.max()) + 1 != nc):
            raise ValueError("class aggregates: the sensitive pairs do not cover the same classes and records as sizes")
        d, f, e = l_from_pairs(pc, cnt)
        l_d = d if l_d is None else min(l_d, d)
        l_f = f if l_f is None else min(l_f, f)
        l_e = e if l_e is None else min(l_e, e)
    return RiskSummary(
        rows=n,
        classes=nc,
        k=k,
        respondent_k=resp_k,
        l_distinct=l_d,
        l_frequency=l_f,
        l_entropy=l_e,
        uniques=int(recs[r_vals == 1].sum()),
        prosecutor_risk_max=1.0 / float(r_vals[0]),
        prosecutor_risk_mean=float(mean),
        records_at_risk=at_risk / n,
        risk_threshold=float(threshold),
        respondents=int(respondents) if uid else None,
        class_sizes=risk_size,
        class_counts=None if classes is None else w,
    )


def measure(
    df: pd.DataFrame,
    qi: Sequence[str],
    *,
    uid: str | None = None,
    sensitive: Sequence[str] = (),
    threshold: float = 0.2,
) -> RiskSummary:
    """Measure k, respondent-level k, l (distinct/frequency/entropy), uniques and prosecutor risk.

    The table is reduced to its class aggregates (:class:`ClassAggregates`: numpy on integer class
    codes) and measured by :func:`risk_from_aggregates`, the same function the engines' aggregates
    go through.

    Raises :class:`InputError` for unknown columns, a column given two roles, or a threshold
    outside ``(0, 1]``.
    """
    qi = list(qi)
    sensitive = list(sensitive)
    if not qi:
        raise InputError("no quasi-identifier given")
    require_columns(df, qi, role="quasi-identifier")
    require_columns(df, sensitive, role="sensitive column")
    if uid is not None:
        require_columns(df, [uid], role="respondent id (uid) column")
        if uid in qi or uid in sensitive:
            raise InputError(f"the respondent id {uid!r} cannot also be a quasi-identifier or sensitive column")
    both = sorted(set(qi) & set(sensitive))
    if both:
        raise InputError(f"column(s) {', '.join(map(repr, both))} given as both quasi-identifier and sensitive")
    _check_threshold(threshold)
    return aggregates_of(df, qi, uid=uid, sensitive=sensitive).risk(threshold)


def aggregates_of(df: pd.DataFrame, qi: Sequence[str], *, uid: str | None = None, sensitive: Sequence[str] = ()) -> ClassAggregates:
    """The :class:`ClassAggregates` of an in-memory table (values compared as text, missing its own
    category)."""
    if len(df) == 0:
        return ClassAggregates(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64) if uid else None, 0 if uid else None)
    cls, nc = class_codes(df, qi)
    agg = ClassAggregates(class_sizes(cls, nc))
    if uid is not None:
        u = _text_codes(df[uid])
        agg.respondents_per_class = distinct_per_class(cls, nc, u)
        agg.respondents = int(u.max()) + 1
    agg.sensitive = [value_counts_per_class(cls, nc, _text_codes(df[s])) for s in sensitive]
    return agg


__all__ = ["ClassAggregates", "RiskSummary", "aggregates_of", "class_codes", "class_sizes", "distinct_per_class", "l_from_pairs",
           "l_measures", "l_of_classes", "measure", "risk_from_aggregates"]
