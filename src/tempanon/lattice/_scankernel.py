"""Compiled counting kernels of large frequency sets (see :func:`tempanon.lattice.freqset.group_rows`).

Imported only for tables of at least ``freqset._KERNEL_MIN_ROWS`` rows, because importing it imports
numba (which compiles each kernel once per argument types, or loads it from numba's cache). A table
scan in numpy packs the codes into a key array (one pass per column, each writing a fresh array of
the table's length) and ``bincount`` reads it twice more; here one pass reads each row's codes and
increments its class's count -- 5-6x less CPU on 10M rows (docs/benchmarks.md, Engines).

Columns come as a homogeneous tuple of 1-D arrays (``cols[j][i]``: row ``i``'s code of the node's
``j``-th attribute); keys are the mixed-radix packing ``((c_0 * card_1 + c_1) * card_2 + c_2) ...``
of :func:`~tempanon.lattice.freqset.group_rows`, so the counts come out indexed by the same keys.
"""

import numpy as np
from numba import njit


def _jit(fn):
    return njit(cache=True, nogil=True)(fn)


@_jit
def count_rows(cols, cards, cnt):
    """``cnt[key(i)] += 1`` for every row."""
    n = len(cols)
    for i in range(cols[0].shape[0]):
        key = 0
        for j in range(n):
            key = key * cards[j] + cols[j][i]
        cnt[key] += 1


@_jit
def count_weighted(cols, cards, weights, cnt):
    """``cnt[key(i)] += weights[i]`` for every row."""
    n = len(cols)
    for i in range(cols[0].shape[0]):
        key = 0
        for j in range(n):
            key = key * cards[j] + cols[j][i]
        cnt[key] += weights[i]


@_jit
def add_rows(cols, cards, rows, extra, cnt):
    """``cnt[key(rows[t])] += extra[t]`` (the extra tuples of a near-unique table's repeated rows)."""
    n = len(cols)
    for t in range(rows.shape[0]):
        i = rows[t]
        key = 0
        for j in range(n):
            key = key * cards[j] + cols[j][i]
        cnt[key] += extra[t]


@_jit
def count_mapped(cols, maps, cards, weights, cnt):
    """A rollup: ``cnt[key'(i)] += weights[i]`` where ``key'`` packs ``maps[j][cols[j][i]]`` (each
    code taken to the coarser level)."""
    n = len(cols)
    for i in range(cols[0].shape[0]):
        key = 0
        for j in range(n):
            key = key * cards[j] + maps[j][cols[j][i]]
        cnt[key] += weights[i]


@_jit
def decode(keys, cards, out):
    """``out[j, r]``: the ``j``-th code of packed key ``keys[r]`` (the inverse of the packing)."""
    n = cards.shape[0]
    for r in range(keys.shape[0]):
        rest = keys[r]
        for j in range(n - 1, 0, -1):
            q = rest // cards[j]
            out[j, r] = rest - q * cards[j]
            rest = q
        out[0, r] = rest


@_jit
def gather(table, index, out):
    """``out[i] = table[index[i]]`` (a level column from the base codes)."""
    for i in range(index.shape[0]):
        out[i] = table[index[i]]


@_jit
def compact(cnt):
    """The non-zero cells of ``cnt``: (their indexes, their counts as int64), in index order."""
    n = 0
    for i in range(cnt.shape[0]):
        if cnt[i] != 0:
            n += 1
    keys = np.empty(n, dtype=np.int64)
    counts = np.empty(n, dtype=np.int64)
    t = 0
    for i in range(cnt.shape[0]):
        if cnt[i] != 0:
            keys[t] = i
            counts[t] = cnt[i]
            t += 1
    return keys, counts
