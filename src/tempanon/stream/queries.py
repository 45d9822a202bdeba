"""Window queries on published snapshots (Wang et al., ICDM 2010, Section VI; Xiao & Tao, VLDB 2006).

A window query ``Q AND [a, b]`` counts the records whose quasi-identifiers satisfy a predicate ``Q``
(a conjunction of equalities ``A = x``), whose sensitive value is ``v`` and whose snapshot lies in
``[a, b]``. On the original stream a record counts in its own snapshot; on the release it counts in the
snapshot it was published in, and Anatomy's estimate (Xiao & Tao, Section 3) replaces the unknown
value by its share in the record's group: ``sum over matching QIT rows r of c(G(r), v) / |G(r)|``.
The relative error is ``|estimate - actual| / actual``; the generator draws every query around a real
record so ``actual >= 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tempanon.errors import InputError

_NA = "\x00<NA>"


def _text(col: pd.Series) -> np.ndarray:
    obj = col.astype(object)
    return obj.where(obj.notna(), _NA).astype(str).to_numpy()


@dataclass(frozen=True)
class WindowQuery:
    """``predicate`` maps QI columns to required values (text); ``value`` the sensitive value;
    ``a``, ``b`` the first and last snapshot index (inclusive)."""

    predicate: tuple[tuple[str, str], ...]
    value: str
    a: int
    b: int


def _check_inputs(df: pd.DataFrame, row_snapshot, columns: list[str]) -> np.ndarray:
    """The stream's table and its rows' snapshots as the query functions need them (a traceback before:
    an IndexError, a KeyError or a broadcast error)."""
    from tempanon.data.roles import require_columns

    if not isinstance(df, pd.DataFrame):
        raise InputError(f"the stream's table must be a DataFrame, got {type(df).__name__}")
    require_columns(df, columns, role="column")
    row_snapshot = np.asarray(row_snapshot)
    if row_snapshot.ndim != 1 or len(row_snapshot) != len(df):
        raise InputError(f"row_snapshot has {row_snapshot.size} entries, the table {len(df)} rows: give the snapshot of "
                         "every row of the table, in its order (StreamResult.row_snapshot)")
    return row_snapshot


def generate_workload(
    df: pd.DataFrame,
    row_snapshot: np.ndarray,
    qi: list[str],
    sensitive: str,
    *,
    n_queries: int = 200,
    qd: int = 2,
    span: int = 7,
    n_snapshots: int | None = None,
    seed: int = 0,
) -> list[WindowQuery]:
    """Random window queries: each picks a random record, ``qd`` random QI attributes with that record's
    values, its sensitive value, and a window of ``span`` snapshots containing its snapshot."""
    from tempanon.data.roles import parse_column_list

    qi = parse_column_list(qi)
    row_snapshot = _check_inputs(df, row_snapshot, [*qi, sensitive])
    for name, value in (("qd", qd), ("span", span), ("n_queries", n_queries)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise InputError(f"{name} must be an integer, got {value!r}")
    if qd < 0 or qd > len(qi):
        raise InputError(f"qd must be between 0 and the number of quasi-identifiers ({len(qi)}), got {qd}")
    if span < 1:
        raise InputError(f"span must be >= 1, got {span}")
    if len(df) == 0:
        return []
    rng = np.random.default_rng(seed)
    T = int(n_snapshots if n_snapshots is not None else row_snapshot.max() + 1)
    text = {c: _text(df[c]) for c in [*qi, sensitive]}
    out = []
    for _ in range(n_queries):
        r = int(rng.integers(len(df)))
        attrs = sorted(rng.choice(len(qi), size=qd, replace=False).tolist())
        pred = tuple((qi[i], str(text[qi[i]][r])) for i in attrs)
        s = int(row_snapshot[r])
        a = int(rng.integers(max(0, s - span + 1), s + 1))
        b = min(T - 1, a + span - 1)
        out.append(WindowQuery(pred, str(text[sensitive][r]), a, b))
    return out


@dataclass
class QueryAnswers:
    actual: np.ndarray
    estimate: np.ndarray

    @property
    def relative_error(self) -> np.ndarray:
        return np.abs(self.estimate - self.actual) / np.maximum(self.actual, 1)

    def summary(self) -> dict:
        re = self.relative_error
        return {
            "queries": int(len(re)),
            "mean_relative_error": float(re.mean()) if len(re) else None,
            "median_relative_error": float(np.median(re)) if len(re) else None,
        }


def answer_workload(
    queries: list[WindowQuery],
    df: pd.DataFrame,
    row_snapshot: np.ndarray,
    sensitive: str,
    qit: pd.DataFrame,
    st: pd.DataFrame,
    labels: list[str],
) -> QueryAnswers:
    """Answer every query on the original table (``df`` with ``row_snapshot``) and on the release
    (``qit``/``st`` with a ``snapshot`` label column, as built by
    :func:`tempanon.stream.api.release_tables`)."""
    row_snapshot = _check_inputs(df, row_snapshot, [sensitive, *{c for q in queries for c, _ in q.predicate}])
    for name, table, need in (("qit", qit, ["snapshot", "group", *{c for q in queries for c, _ in q.predicate}]),
                              ("st", st, ["snapshot", "group", sensitive, "count"])):  # fmt: skip
        missing = [c for c in need if c not in table.columns]
        if missing:
            raise InputError(f"the release's {name} has no column(s) {', '.join(map(repr, missing))}")
    pos = {lab: i for i, lab in enumerate(labels)}
    q_snap = qit["snapshot"].map(pos)
    s_snap = st["snapshot"].map(pos)
    if q_snap.isna().any() or s_snap.isna().any():
        raise InputError("release has a snapshot label that is not in the stream")
    q_snap, s_snap = q_snap.to_numpy(dtype=np.int64), s_snap.to_numpy(dtype=np.int64)
    width = int(qit["group"].max() if len(qit) else 0) + 1
    q_key = q_snap * width + qit["group"].to_numpy(dtype=np.int64)
    s_key = s_snap * width + st["group"].to_numpy(dtype=np.int64)
    keys, q_gid = np.unique(q_key, return_inverse=True)
    s_gid = np.searchsorted(keys, s_key)
    size = np.bincount(q_gid, minlength=len(keys)).astype(float)
    s_val = _text(st[sensitive])
    s_cnt = st["count"].to_numpy(dtype=float)
    o_val = _text(df[sensitive])
    orig_text: dict = {}
    rel_text: dict = {}
    actual = np.zeros(len(queries))
    estimate = np.zeros(len(queries))
    for k, q in enumerate(queries):
        om = (row_snapshot >= q.a) & (row_snapshot <= q.b) & (o_val == q.value)
        rm = (q_snap >= q.a) & (q_snap <= q.b)
        for col, val in q.predicate:
            if col not in orig_text:
                orig_text[col] = _text(df[col])
                rel_text[col] = _text(qit[col])
            om &= orig_text[col] == val
            rm &= rel_text[col] == val
        actual[k] = om.sum()
        share = np.zeros(len(keys))
        sel = s_val == q.value
        np.add.at(share, s_gid[sel], s_cnt[sel])
        share /= np.maximum(size, 1)
        estimate[k] = share[q_gid[rm]].sum()
    return QueryAnswers(actual, estimate)
