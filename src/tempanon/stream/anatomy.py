"""Anatomy (Xiao and Tao, "Anatomy: Simple and Effective Privacy Preservation", VLDB 2006, Section 5).

Anatomy publishes an l-eligible table as two tables: the *quasi-identifier table* (QIT: the
quasi-identifiers of each record and its group id) and the *sensitive table* (ST: ``group``, sensitive
value, ``count``). Every group holds at least ``l`` records with pairwise distinct sensitive values, so an
adversary who links a person to a group learns her value with probability at most ``1 / l``.

Anatomy's group-creation phase hashes the records into buckets by sensitive value and repeatedly forms a
group from one record of each of the ``l`` largest buckets; at most ``l - 1`` *residue* records remain,
each in a different bucket, and each is added to a distinct group that does not yet contain its value.
Here the same partition is built without a loop per group: the records are sorted by sensitive value
(random order within a value: by a uniform random key per record) and record ``i`` of that order goes
to group ``i mod G`` with
``G = floor(N / l)``. The first ``G * l`` records fill ``l`` complete rounds (every group gets ``l``
records) and the remaining ``N - G * l < l`` residue records go one per group. Because the table is
l-eligible, every value has at most ``N / l`` records, hence at most ``G`` (an integer), so its records
form a contiguous run of length ``<= G`` in the sorted order and land in ``G``-wise distinct groups:
no group repeats a value, every group has ``>= l`` records, exactly Anatomy's guarantees
(Xiao & Tao, Theorem 2: an l-eligible table always has such a partition).

Random draws: a snapshot of ``n`` records takes ``n`` uniform keys for the order within a value, then
``n`` for the QIT row order (:func:`qit_order`). :func:`anatomy_segments` draws the keys of many
snapshots in one call in the same sequence, so publishing snapshot by snapshot and in bulk from the
same generator gives the same groups and rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tempanon.errors import InputError


#: the published tables' own columns: QIT = quasi-identifiers + ``group``, ST = ``group``, sensitive value,
#: ``count``; the tables of every snapshot together (``StreamResult.qit``/``st``, a release folder read
#: back) start with ``snapshot``
QIT_COLUMNS = ("snapshot", "group")
ST_COLUMNS = ("snapshot", "group", "count")


def check_release_names(qi: list[str] | None, sensitive: str) -> None:
    """Refuse (:class:`InputError`) a quasi-identifier or sensitive column named like a column the
    published tables add (:data:`QIT_COLUMNS`, :data:`ST_COLUMNS`; compared ignoring case, as the
    engines and ``tempanon check`` compare a release's names): it would be overwritten (a
    quasi-identifier ``group`` released as the group numbers), taken for the counts or give a table
    with the name twice."""
    named = [("quasi-identifier", c, QIT_COLUMNS) for c in (qi or [])] + [("sensitive column", sensitive, ST_COLUMNS)]
    for role, col, taken in named:
        if str(col).strip().lower() in taken:
            raise InputError(f"{role} {col!r}: the published tables have a column {col.strip().lower()!r} of their own "
                             f"(QIT: quasi-identifiers, group; ST: group, the sensitive value, count; with snapshot when "
                             f"read together); rename the column {col!r} in the input")  # fmt: skip


class NotEligibleError(InputError):
    """A snapshot given to Anatomy is not l-eligible; ``segment``: which one (0 for one snapshot), so a
    caller that produced the snapshots itself can name it (the stream publisher turns this into a
    verification failure: its step must never produce one)."""

    def __init__(self, message: str, segment: int = 0):
        super().__init__(message)
        self.segment = segment


def anatomy_groups(codes: np.ndarray, l: int, rng: np.random.Generator) -> np.ndarray:
    """1-based Anatomy group of each record of one l-eligible snapshot (see the module doc)."""
    codes = np.asarray(codes, dtype=np.int64)
    n = len(codes)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    counts = np.bincount(codes)
    G = n // l
    if G == 0 or counts.max() > G:
        raise NotEligibleError(f"snapshot of {n} records is not {l}-eligible (a value occurs {int(counts.max())} times)")
    order = np.lexsort((rng.random(n), codes))
    group = np.empty(n, dtype=np.int64)
    group[order] = np.arange(n) % G + 1
    return group


def qit_order(group: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row order of the QIT: by group, random inside a group (the row order reveals nothing)."""
    return np.lexsort((rng.random(len(group)), group))


def anatomy_segments(codes: np.ndarray, seg: np.ndarray, n_seg: int, l: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """:func:`anatomy_groups` and :func:`qit_order` of many snapshots at once: record ``i`` belongs to
    snapshot ``seg[i]`` (``seg`` non-decreasing). Inside each snapshot the partition is the one of the
    module doc (records sorted by value, random order within a value, record ``i`` of that order to
    group ``i mod G + 1``) and the QIT order is by group, random inside a group: the same distribution
    as one call per snapshot, and the same random keys as :func:`anatomy_groups` then :func:`qit_order`
    called snapshot after snapshot with ``rng`` (so the same result). Returns ``group`` (1-based, per
    snapshot) and ``order``: the records in QIT order, snapshot after snapshot."""
    codes = np.asarray(codes, dtype=np.int64)
    seg = np.asarray(seg, dtype=np.int64)
    n = len(codes)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    size = np.bincount(seg, minlength=n_seg)
    G = size // l
    m = int(codes.max()) + 1
    uk, cnt = np.unique(seg * m + codes, return_counts=True)
    top = np.zeros(n_seg, dtype=np.int64)  # the largest count of a value per snapshot
    np.maximum.at(top, uk // m, cnt)
    bad = np.flatnonzero((size > 0) & ((G == 0) | (top > G)))
    if len(bad):
        k = int(bad[0])
        raise NotEligibleError(f"snapshot of {int(size[k])} records is not {l}-eligible (a value occurs {int(top[k])} "
                               "times)", k)
    start = np.cumsum(size) - size
    # snapshot k draws its n_k keys for the value order, then n_k for the QIT order
    keys = rng.random(2 * n)
    pos = np.arange(n) + start[seg]  # record i's first key (2 * start + position in its snapshot)
    order = np.lexsort((keys[pos], seg * m + codes))
    group = np.empty(n, dtype=np.int64)
    group[order] = (np.arange(n) - start[seg[order]]) % G[seg[order]] + 1
    qit = np.lexsort((keys[pos + size[seg]], seg * (int(G.max()) + 1) + group))
    return group, qit


def sensitive_table(group: np.ndarray, codes: np.ndarray, values: np.ndarray, sensitive: str, extra: dict | None = None) -> pd.DataFrame:
    """The ST rows ``(group, value, count)`` of records with ``group`` and value ``codes``/``values``;
    ``extra`` columns (arrays per record, constant inside a group, e.g. the snapshot) go first."""
    n = len(group)
    extra_cols = list(extra.values()) if extra else []
    # sort by (extra..., group, code); np.lexsort takes the primary key last
    key_order = np.lexsort([codes, group, *reversed(extra_cols)])
    first = np.ones(n, dtype=bool)
    if n:
        changed = np.zeros(n - 1, dtype=bool)
        for k in [codes, group, *extra_cols]:
            ks = np.asarray(k)[key_order]
            changed |= ks[1:] != ks[:-1]
        first[1:] = changed
    starts = np.nonzero(first)[0] if n else np.zeros(0, dtype=np.int64)
    cnt = np.diff(np.append(starts, n)).astype(np.int64)
    cols = {}
    if extra:
        for name, v in extra.items():
            cols[name] = np.asarray(v)[key_order][starts]
    cols["group"] = group[key_order][starts]
    cols[sensitive] = np.asarray(values, dtype=object)[key_order][starts]
    cols["count"] = cnt
    return pd.DataFrame(cols)


def anatomize(
    qi: pd.DataFrame,
    values: pd.Series | np.ndarray,
    codes: np.ndarray,
    l: int,
    *,
    sensitive: str = "sensitive",
    rng: np.random.Generator | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Partition the records of one l-eligible snapshot into Anatomy groups.

    ``qi`` holds the quasi-identifiers of the ``N`` records, ``values`` their sensitive values (any
    hashable, missing allowed: it is its own category) and ``codes`` integer codes of those values.
    Returns ``(qit, st)``: ``qit`` = ``qi`` columns + ``group`` (1-based, rows shuffled inside each group so
    that the row order reveals nothing), ``st`` = ``group``, ``sensitive``, ``count``.
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    codes = np.asarray(codes, dtype=np.int64)
    values = np.asarray(values, dtype=object)
    group = anatomy_groups(codes, l, rng)
    perm = qit_order(group, rng)
    qit = qi.iloc[perm].reset_index(drop=True).copy()
    qit["group"] = group[perm]
    return qit, sensitive_table(group, codes, values, sensitive)
