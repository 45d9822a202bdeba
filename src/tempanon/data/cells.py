"""One value, one text: the cells of a DataFrame column holding values of several Python types.

Python takes ``1``, ``True`` and ``1.0`` (and ``0`` and ``False``, ``Decimal('1.0')`` and
``Decimal('1.00')``) for one value: they compare and hash equal, so ``pd.factorize``, dict keys and
group-bys merge them. A release writes them as different texts (``1``, ``True``, ``1.0``: the CSV
writer writes ``str`` of an object cell) and the DuckDB engine reads such a column as those texts,
so they are different values there. The rule of tempanon: **two cells are the same value iff the
release writes them as the same text.**

A column whose cells could merge that way (an ``object`` column pandas' type inference calls
``mixed``, ``mixed-integer``, ``mixed-integer-float`` or ``decimal``) is therefore taken as the text
of its cells (:func:`released_text`: ``str`` of each cell, a missing cell (``None``, ``NaN``,
``pd.NA``, ``NaT``) stays missing: its own category, as everywhere) by every entry point of the
Python API, for the columns given a role (:func:`text_mixed_columns`), before any engine encodes
or registers it; hierarchies look such a column up by the same text
(:func:`tempanon.hierarchy.core.as_text`), the DuckDB engine registers it as that text, and the
verifier (:mod:`tempanon.verify`) groups it by that text. Columns of a plain dtype (numbers,
booleans, text, dates) and object columns of one kind (all text, all integers, all booleans, all
floats, dates or times) are not touched: no per-cell work on the usual path.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

MIXED_KINDS = frozenset({"mixed", "mixed-integer", "mixed-integer-float", "decimal"})
"""What :func:`pandas.api.types.infer_dtype` (``skipna=True``) calls an object column whose cells may
compare equal while their texts differ (``1``/``True``/``1.0``, ``Decimal('1.0')``/``Decimal('1.00')``)."""


def is_mixed(series: pd.Series) -> bool:
    """Whether ``series`` is an ``object`` column of :data:`MIXED_KINDS` (one C pass of pandas' type
    inference; ``False`` at once for any other dtype)."""
    return series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) in MIXED_KINDS


def released_text(series: pd.Series) -> pd.Series:
    """``series`` as the text the release writes of each cell (``str``), a missing cell as ``None``
    (same index and name). Per cell: only for the columns of :func:`is_mixed`."""
    values = series.to_numpy(dtype=object)
    missing = pd.isna(values)
    out = np.empty(len(values), dtype=object)
    out[~missing] = [str(v) for v in values[~missing]]
    out[missing] = None
    return pd.Series(out, index=series.index, name=series.name, dtype=object)


def value_codes(values) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(values, use_na_sentinel=False)`` with one code per released text: a column of
    :func:`is_mixed` is factorized by its :func:`released_text` (missing: one code of its own)."""
    s = pd.Series(np.asarray(values, dtype=object), dtype=object)
    if is_mixed(s):
        s = released_text(s)
    codes, uniq = pd.factorize(s, use_na_sentinel=False)
    return np.asarray(codes), np.asarray(uniq, dtype=object)


def text_mixed_columns(df: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """``df`` with each of ``columns`` (those it has, once) that :func:`is_mixed` replaced by its
    :func:`released_text`; ``df`` itself (not a copy) when there is none. A column name the frame
    has twice is left as it is (refused later, with its own message, by ``check_frame``)."""
    if not isinstance(df, pd.DataFrame):
        return df
    wanted = set(c for c in columns if c is not None)
    cols = list(df.columns)
    # by position; a name given twice is left to check_frame, which refuses it with its message
    mixed = [j for j, c in enumerate(cols) if c in wanted and cols.count(c) == 1 and is_mixed(df.iloc[:, j])]
    if not mixed:
        return df
    out = df.copy(deep=False)
    for j in mixed:
        out[cols[j]] = released_text(df.iloc[:, j])
    return out
