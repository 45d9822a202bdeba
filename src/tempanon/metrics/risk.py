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

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("class_sizes")
        return d


def l_measures(cls: np.ndarray, n_classes: int, sensitive: np.ndarray) -> tuple[int, int, int]:
    """``(l_distinct, l_frequency, l_entropy)`` of one sensitive column (codes) over the classes."""
    sizes = class_sizes(cls, n_classes)
    pc, cnt = value_counts_per_class(cls, n_classes, sensitive)
    distinct = np.bincount(pc, minlength=n_classes)
    maxfreq = np.zeros(n_classes, dtype=np.int64)
    np.maximum.at(maxfreq, pc, cnt)
    p = cnt / sizes[pc]
    ent = np.zeros(n_classes, dtype=np.float64)
    np.add.at(ent, pc, -p * np.log(p))
    l_freq = int((sizes // maxfreq).min())
    # tolerate rounding: exp(ln l) may land a hair below l
    l_ent = int(math.floor(math.exp(float(ent.min())) + 1e-9))
    return int(distinct.min()), l_freq, l_ent


def measure(
    df: pd.DataFrame,
    qi: Sequence[str],
    *,
    uid: str | None = None,
    sensitive: Sequence[str] = (),
    threshold: float = 0.2,
) -> RiskSummary:
    """Measure k, respondent-level k, l (distinct/frequency/entropy), uniques and prosecutor risk.

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
    if not (0 < threshold <= 1) or math.isnan(threshold):
        raise InputError(f"risk threshold must be in (0, 1], got {threshold}")
    n = len(df)
    if n == 0:
        return RiskSummary(0, 0, None, None, None, None, None, 0, None, None, None, threshold, 0 if uid else None)
    cls, nc = class_codes(df, qi)
    sizes = class_sizes(cls, nc)
    k = int(sizes.min())
    resp_k = respondents = None
    risk_size = sizes
    if uid is not None:
        u = _text_codes(df[uid])
        rsizes = distinct_per_class(cls, nc, u)
        resp_k = int(rsizes.min())
        respondents = int(u.max()) + 1
        risk_size = rsizes
    rec_risk = 1.0 / risk_size[cls]
    l_d = l_f = l_e = None
    for s in sensitive:
        d, f, e = l_measures(cls, nc, _text_codes(df[s]))
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
        uniques=int((risk_size[cls] == 1).sum()),
        prosecutor_risk_max=float(rec_risk.max()),
        prosecutor_risk_mean=float(rec_risk.mean()),
        records_at_risk=float((rec_risk > threshold).mean()),
        risk_threshold=float(threshold),
        respondents=respondents,
        class_sizes=risk_size,
    )


__all__ = ["RiskSummary", "class_codes", "class_sizes", "distinct_per_class", "l_measures", "measure"]
