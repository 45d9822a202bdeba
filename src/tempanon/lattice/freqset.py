"""Frequency sets and rollup (Incognito Section 2, "Rollup Property").

The frequency set of a table T with respect to a node (a set of attributes, each at a
generalization level) maps every combination of generalized values to the number of tuples of T
that carry it. Here it is held as numpy arrays: a code matrix (one row per combination, one column
per attribute of the node) and the tuple counts. Grouping packs the codes into one int64 key per
row (mixed radix over the node's cardinalities) and counts with ``bincount`` when that key space
is small, with a sort otherwise. From :data:`_KERNEL_MIN_ROWS` rows on, dense key spaces are
counted by compiled kernels (:mod:`tempanon.lattice._scankernel`, numba): one pass over the rows
per table scan or rollup, with the same keys and counts.

Respondent-level k-anonymity (Mascetti et al., Definitions 1-3)
-----------------------------------------------------------------
With a respondent id (``uid``) a class's size is its number of **distinct respondents**, which
does not roll up by summing (one respondent can sit in two classes that a generalization merges).
Rows of the frequency set are then the distinct (class, respondent) pairs, and rollup
de-duplicates pairs. Class sizes are the run lengths of the classes in the sorted rows.

Backends
--------
:func:`table_frequency_set` (the only place that reads the table) and :func:`rollup` are the single
frequency-set computation every algorithm uses. They take and return plain arrays, so an
out-of-core backend (DuckDB, Spark) can serve them with ``GROUP BY`` later.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tempanon.lattice.dimension import Dimension

_MAX_KEY = 2**62
_HASH_MIN_ROWS = 32_768  # from this many input rows a hash group-by beats sorting them all
_INTP_MIN_ROWS = 1 << 20  # from this many input rows dense keys are packed in intp (see group_rows)
_KERNEL_MIN_ROWS = 1 << 20
"""From this many input rows, dense frequency sets are counted by the compiled kernels of
:mod:`tempanon.lattice._scankernel` (one pass per scan instead of numpy's pack-and-bincount; below
it numba's import and dispatch would cost more than they save)."""
_KERNEL_DENSE = 8  # compiled counting stays dense (no hashing) up to this many key cells per input row
_kernels_mod = None


def _kernels():
    """The compiled kernels module, or ``None`` when numba is not importable."""
    global _kernels_mod
    if _kernels_mod is None:
        try:
            from tempanon.lattice import _scankernel
        except ImportError:  # pragma: no cover - numba is a dependency
            _scankernel = False
        _kernels_mod = _scankernel
    return _kernels_mod or None


def _same_dtype(cols: Sequence[np.ndarray]) -> tuple:
    """The columns as one tuple of a single dtype (the kernels take homogeneous tuples)."""
    cols = [np.asarray(c) for c in cols]
    dt = cols[0].dtype
    if any(c.dtype != dt for c in cols):
        dt = np.result_type(*[c.dtype for c in cols])
        cols = [c.astype(dt, copy=False) for c in cols]
    return tuple(np.ascontiguousarray(c) for c in cols)


def _dense_cells_fit(size: int, m: int, bound: int) -> bool:
    """Whether ``size`` count cells for ``m`` input rows (``bound`` tuples in all) take at most the
    memory of numpy's dense path (``4 m`` 8-byte cells): int32 cells up to ``8 m``, int64 up to ``4 m``
    (the count array must not outgrow what the hashed path would hold, e.g. for the engine path's
    root frequency sets of tens of millions of rows)."""
    return size <= (_KERNEL_DENSE if bound < 2**31 else 4) * m + 4096


def _counts_array(size: int, bound: int) -> np.ndarray:
    """Zeroed count cells, int32 when every count stays below 2**31 (half the memory to fault in)."""
    return np.zeros(size, dtype=np.int32 if bound < 2**31 else np.int64)


def _compiled_frequency_set(attrs, levels, cards, cnt: np.ndarray, sensitive: bool = False) -> FrequencySet:
    keys, counts = _kernels().compact(cnt)
    return FrequencySet(tuple(attrs), tuple(levels), cards, counts, keys, 0, sensitive)


@dataclass(eq=False)
class FrequencySet:
    """The frequency set of T w.r.t. the node (``attrs``, ``levels``).

    Row ``r`` is one combination of codes at the node's levels with ``counts[r]`` tuples. Without
    respondent ids rows are distinct combinations (equivalence classes). With ids rows are the
    distinct (class, respondent) pairs, sorted so that each class's rows are contiguous.

    Rows are held as sorted int64 ``keys`` (mixed radix over ``cards``, then the uid digit) and
    decoded to code columns only when asked (:attr:`cols`, :attr:`codes`, :attr:`uid`).
    """

    attrs: tuple[int, ...]
    levels: tuple[int, ...]
    cards: tuple[int, ...]
    counts: np.ndarray
    keys: np.ndarray | None
    n_uid: int = 0
    sensitive: bool = False
    _cols: list | None = field(default=None, repr=False)
    _uid: np.ndarray | None = field(default=None, repr=False)
    _sizes: tuple | None = field(default=None, repr=False)
    # lazy decoding: the input columns and how to find one input row per output row
    _src: tuple | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def n_tuples(self) -> int:
        return int(self.counts.sum())

    @property
    def cols(self) -> list[np.ndarray]:
        """One code array per attribute of the node.

        Gathered from one input row per group when the grouping kept that information (cheaper
        than decoding the keys by integer division), decoded from the keys otherwise."""
        if self._cols is None:
            if self._src is not None:
                src_cols, rows = self._src
                if callable(rows):
                    rows = rows()
                self._cols = [c[rows] for c in src_cols]
                self._src = None
            elif not self.n_uid and len(self.cards) > 1 and len(self.keys) >= _KERNEL_MIN_ROWS // 4 and _kernels() is not None:
                top = max(self.cards)
                out = np.empty((len(self.cards), len(self.keys)), dtype=np.uint16 if top <= 2**16 else np.int64)
                _kernels().decode(self.keys, np.asarray(self.cards, dtype=np.int64), out)
                self._cols = list(out)
            else:
                rest = self.keys // self.n_uid if self.n_uid else self.keys
                cols: list = [None] * len(self.cards)
                for j in range(len(self.cards) - 1, 0, -1):
                    rest, cols[j] = np.divmod(rest, self.cards[j])
                if self.cards:
                    cols[0] = rest
                self._cols = cols
        return self._cols

    @property
    def codes(self) -> np.ndarray:
        """``(rows, len(attrs))`` code matrix (columns in ``attrs`` order)."""
        if not self.cards:
            return np.zeros((len(self.counts), 0), dtype=np.int64)
        return np.stack(self.cols, axis=1)

    @property
    def uid(self) -> np.ndarray | None:
        """Respondent code of every row (``None`` without respondents)."""
        if self.n_uid and self._uid is None:
            self._uid = self.keys % self.n_uid
        return self._uid

    def _classes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(class sizes, class tuple counts, class index of every row)."""
        if self._sizes is None:
            if self.sensitive:
                starts = self._class_starts()
                m = len(self.counts)
                rows = np.add.reduceat(self.counts, starts) if m else np.zeros(0, dtype=np.int64)
                self._sizes = (rows, rows, np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, m])))
            elif not self.n_uid:
                self._sizes = (self.counts, self.counts, np.arange(len(self.counts)))
            else:
                m = len(self.counts)
                starts = self._class_starts()
                sizes = np.diff(np.r_[starts, m]).astype(np.int64)
                rows = np.add.reduceat(self.counts, starts) if m else np.zeros(0, dtype=np.int64)
                self._sizes = (sizes, rows, np.repeat(np.arange(len(starts)), sizes))
        return self._sizes

    def _class_starts(self) -> np.ndarray:
        """First row of every class (rows are sorted by class, then the extra digit)."""
        m = len(self.counts)
        if m == 0:
            return np.zeros(0, dtype=np.int64)
        new = np.empty(m, dtype=bool)
        new[0] = True
        if self.keys is not None:
            ck = self.keys // self.n_uid
            np.not_equal(ck[1:], ck[:-1], out=new[1:])
        elif self.cards:
            new[1:] = (self.codes[1:] != self.codes[:-1]).any(axis=1)
        else:
            new[1:] = False
        return np.flatnonzero(new)

    def max_sensitive_frequency(self) -> np.ndarray:
        """Per class: tuples of its most frequent sensitive value (needs the sensitive digit)."""
        if not self.sensitive:
            raise ValueError("this frequency set carries no sensitive attribute")
        starts = self._class_starts()
        return np.maximum.reduceat(self.counts, starts) if len(self.counts) else np.zeros(0, dtype=np.int64)

    def is_l_diverse(self, l: int) -> np.ndarray:
        """Per class: the most frequent sensitive value has at most |E|/l tuples (l-eligible classes,
        Definition 1 of Wang et al., ICDM 2010)."""
        return self.max_sensitive_frequency() * l <= self.class_tuples()

    def class_sizes(self) -> np.ndarray:
        """Size of every equivalence class: distinct respondents with a uid, else tuples."""
        return self._classes()[0]

    def class_tuples(self) -> np.ndarray:
        """Number of tuples in every equivalence class."""
        return self._classes()[1]

    def class_index(self) -> np.ndarray:
        """Class number of every row."""
        return self._classes()[2]

    def classes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Equivalence classes: ``(codes, sizes, tuples)`` with one row per class; ``sizes``
        counts respondents with a uid, tuples otherwise."""
        sizes, rows, idx = self._classes()
        if len(idx) == 0:
            return self.codes, sizes, rows
        first = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
        return self.codes[first], sizes, rows

    def suppressed_tuples(self, k: int) -> int:
        """Tuples in classes smaller than ``k`` (those a suppression threshold would remove)."""
        sizes, rows, _ = self._classes()
        return int(rows[sizes < k].sum())

    def is_anonymous(self, k: int, max_suppressed: int = 0, l: int | None = None) -> bool:
        """k-anonymous with at most ``max_suppressed`` tuples suppressed (Section 2.1); with ``l``
        every class must also be l-diverse (no suppression then: see :func:`tempanon.kanon.kanonymize`)."""
        if l is not None:
            sizes, rows, _ = self._classes()
            return bool((sizes >= k).all() and self.is_l_diverse(l).all())
        if not self.n_uid:
            small = self.counts < k
            if not small.any():
                return True
            return max_suppressed > 0 and int(self.counts[small].sum()) <= max_suppressed
        sizes, rows, _ = self._classes()
        small = sizes < k
        if not small.any():
            return True
        return max_suppressed > 0 and int(rows[small].sum()) <= max_suppressed


def group_rows(
    attrs: Sequence[int],
    levels: Sequence[int],
    cols: Sequence[np.ndarray],
    cards: Sequence[int],
    weights: np.ndarray | None,
    uid: np.ndarray | None = None,
    n_uid: int = 0,
    sensitive: bool = False,
    multi: tuple[np.ndarray, np.ndarray] | None = None,
) -> FrequencySet:
    """GROUP BY the code columns (and uid) into a :class:`FrequencySet`.

    ``multi`` = ``(rows, extra)``: instead of ``weights``, every row counts one tuple except
    ``rows``, which count ``1 + extra`` (a near-unique bottom set: unweighted integer counting
    plus a few corrections, instead of float weights over every row).

    ``weights`` are the tuple counts of the input rows (``None``: one each). ``uid`` is the extra
    least-significant digit: respondent codes, or sensitive-value codes when
    ``sensitive`` is set (then rows are distinct (class, sensitive value) pairs).

    The codes are packed into one int64 key per row (mixed radix over ``cards``, then the uid).
    Dense counting (``bincount``) is used when that key space is small next to the input, a sort
    otherwise. Keys that would overflow 64 bits are compressed column by column (then the
    columns are gathered instead of decoded).
    """
    m = len(weights) if weights is not None else (len(cols[0]) if cols else len(uid))
    if multi is not None and weights is not None:
        raise ValueError("give weights or multi, not both")
    cards = tuple(max(int(c), 1) for c in cards)
    n_uid = int(n_uid) if uid is not None else 0
    size = 1
    for c in cards:
        size *= c
    size_u = size * max(n_uid, 1)
    if m >= _KERNEL_MIN_ROWS and not n_uid and cols and size_u <= _KERNEL_DENSE * m + 4096 and _kernels() is not None:
        extra = None if multi is None else np.asarray(multi[1], dtype=np.int64)
        w = None
        if weights is not None:
            w = np.asarray(weights)
            if w.dtype != np.int64:
                w = w.astype(np.int64)  # tuple counts (float64 for bincount), integral
        bound = (m + (0 if extra is None else int(extra.sum()))) if w is None else int(w.sum())
        if _dense_cells_fit(size_u, m, bound):
            kern = _kernels()
            tup, radix = _same_dtype(cols), np.asarray(cards, dtype=np.int64)
            cnt = _counts_array(size_u, bound)
            if w is None:
                kern.count_rows(tup, radix, cnt)
                if extra is not None:
                    kern.add_rows(tup, radix, np.asarray(multi[0], dtype=np.int64), extra, cnt)
            else:
                kern.count_weighted(tup, radix, w, cnt)
            return _compiled_frequency_set(attrs, levels, cards, cnt, sensitive)
    if size_u < _MAX_KEY:
        dense = size_u <= 4 * m + 4096
        if multi is not None and not dense and m < _HASH_MIN_ROWS:
            weights = np.ones(m, dtype=np.float64)  # the sort path sums weights
            weights[multi[0]] += multi[1]
            multi = None
        # a dense key space below 2**31 is packed in int32 (about 3x faster than int64 on the
        # cached level columns); such keys only index the bincount -- except over millions of rows,
        # where bincount's own cast of int32 keys to intp costs more than packing in intp
        kd = np.int32 if dense and size_u < 2**31 and m < _INTP_MIN_ROWS else np.int64
        if cols:
            key = np.array(cols[0], dtype=kd)
            for c, card in zip(cols[1:], cards[1:]):
                key *= card
                key += c
        else:
            key = np.zeros(m, dtype=kd)
        if n_uid:
            key *= n_uid
            key += uid
        if dense:
            cnt = np.bincount(key, weights=weights, minlength=size_u)
            if multi is not None:
                np.add.at(cnt, key[multi[0]], multi[1])
            nz = np.flatnonzero(cnt != 0)  # on a bool array: several times faster than on counts
            counts = cnt[nz] if weights is None else cnt[nz].astype(np.int64)
            fs = FrequencySet(tuple(attrs), tuple(levels), cards, counts, nz, n_uid, sensitive)
            if 8 * len(nz) > m:  # few groups: decoding their keys is cheaper than scattering m rows
                fs._src = (cols, lambda: _representatives(key, size_u, nz))
            return fs
        if m >= _HASH_MIN_ROWS:
            # hash GROUP BY in O(m), then sort only the distinct keys
            inv, uniq = pd.factorize(key)
            order = np.argsort(uniq)
            cnt = np.bincount(inv, weights=weights, minlength=len(uniq))
            if multi is not None:
                np.add.at(cnt, inv[multi[0]], multi[1])
            counts = cnt[order] if weights is None else cnt[order].astype(np.int64)
            fs = FrequencySet(tuple(attrs), tuple(levels), cards, counts, uniq[order], n_uid, sensitive)
            fs._src = (cols, lambda: _representatives(inv, len(uniq), order))
            return fs
        # any row of a group represents it (equal keys, equal codes): no stable sort needed (5x faster)
        order = np.argsort(key)
        sk = key[order]
        flag = np.empty(m, dtype=bool)
        if m:
            flag[0] = True
            np.not_equal(sk[1:], sk[:-1], out=flag[1:])
        starts = np.flatnonzero(flag)
        if weights is None:
            counts = np.diff(np.r_[starts, m]).astype(np.int64)
        else:
            counts = np.add.reduceat(weights[order], starts).astype(np.int64) if m else np.zeros(0, dtype=np.int64)
        fs = FrequencySet(tuple(attrs), tuple(levels), cards, counts, sk[starts], n_uid, sensitive)
        fs._src = (cols, order[starts])
        return fs
    # overflow: compress progressively, gather the columns of the first row of each group
    if multi is not None:
        weights = np.ones(m, dtype=np.float64)
        weights[multi[0]] += multi[1]
    key = np.zeros(m, dtype=np.int64)
    acc = 1
    for c, card in zip(list(cols) + ([uid] if n_uid else []), list(cards) + ([n_uid] if n_uid else [])):
        if acc * card >= _MAX_KEY:
            uniq, key = np.unique(key, return_inverse=True)
            acc = len(uniq)
        key = key * card + c
        acc *= card
    order = np.argsort(key)  # any row of a group represents it
    sk = key[order]
    flag = np.ones(m, dtype=bool)
    if m:
        np.not_equal(sk[1:], sk[:-1], out=flag[1:])
    starts = np.flatnonzero(flag)
    rows = order[starts]
    if weights is None:
        counts = np.diff(np.r_[starts, m]).astype(np.int64)
    else:
        counts = np.add.reduceat(weights[order], starts).astype(np.int64) if m else np.zeros(0, dtype=np.int64)
    fs = FrequencySet(tuple(attrs), tuple(levels), cards, counts, None, n_uid, sensitive)
    fs._cols = [np.asarray(c)[rows] for c in cols]
    if n_uid:
        fs._uid = np.asarray(uid)[rows]
    return fs


def _representatives(key: np.ndarray, size: int, picks: np.ndarray) -> np.ndarray:
    """An input row for each group: scatter row numbers by key, read them at ``picks``."""
    idx = np.empty(size, dtype=np.intp)
    idx[key] = np.arange(len(key))
    return idx[picks]


def _code_dtype(cardinality: int) -> type:
    """The narrowest integer type for codes ``0 .. cardinality - 1``."""
    if cardinality <= 2**8:
        return np.uint8
    if cardinality <= 2**16:
        return np.uint16
    return np.int32 if cardinality < 2**31 else np.int64


@dataclass
class Table:
    """The table T as seen by the searches: its distinct (quasi-identifier codes, respondent) rows
    with multiplicities -- a lossless compression of T for every frequency set. ``columns[j]`` are
    attribute ``j``'s base codes; ``uid`` dense respondent codes (``None`` without respondents)."""

    columns: list[np.ndarray]
    counts: np.ndarray
    uid: np.ndarray | None
    n_uid: int
    n_rows: int
    sensitive: bool = False
    _level_cols: dict = field(default_factory=dict, repr=False)

    @property
    def weights(self) -> np.ndarray | None:
        """Tuple counts of the distinct rows, ``None`` when every row occurs once."""
        if not hasattr(self, "_unit"):
            self._unit = bool((self.counts == 1).all())
        return None if self._unit else self.counts

    def drop_caches(self) -> None:
        """Free the cached level columns (after the search: at 10M rows they are ~0.5 GB that the
        release would otherwise carry)."""
        self._level_cols.clear()

    def level_column(self, dims: Sequence[Dimension], j: int, level: int) -> np.ndarray:
        """Attribute ``j``'s codes at ``level`` for every row of T, computed once and cached
        (a table scan then only packs and counts)."""
        col = self._level_cols.get((j, level))
        if col is None:
            # the narrowest unsigned type holding the level's codes (uint16 for every Lands End
            # attribute: a quarter of the int64 column, half of int32, and fewer bytes to pack);
            # the code map is narrowed first so no int64 column is ever built
            base = self.columns[j]
            if len(base) >= _KERNEL_MIN_ROWS and _kernels() is not None:
                # one dtype for every attribute (the compiled scans take homogeneous tuples)
                top = max(d.cardinality(0) for d in dims)
                dt = np.uint16 if top <= 2**16 else (np.int32 if top < 2**31 else np.int64)
                col = np.empty(len(base), dtype=dt)
                _kernels().gather(dims[j].codes[level].astype(dt), base, col)
            else:
                col = dims[j].codes[level].astype(_code_dtype(dims[j].cardinality(level)))[base]
            self._level_cols[(j, level)] = col
        return col


class EngineTable(Table):
    """T when its bottom frequency set stays in the engine: no rows on the driver, only the
    counts the searches read (``n_rows``, ``n_uid``); :func:`table_frequency_set` asks
    ``source.engine_frequency_set``. Rollups of what the engine returns stay on the driver."""

    def __init__(self, source, n_rows: int, n_uid: int, sensitive: bool, distinct_rows: int):
        super().__init__([], np.zeros(0, dtype=np.int64), None, n_uid, n_rows, sensitive)
        self.source = source
        self.distinct_rows = distinct_rows

    @property
    def weights(self) -> np.ndarray | None:
        raise TypeError("an EngineTable has no rows on the driver")


def encode_table(
    dims: Sequence[Dimension],
    columns: Sequence[np.ndarray],
    uid: np.ndarray | None = None,
    *,
    sensitive: np.ndarray | None = None,
) -> Table:
    """Build :class:`Table` from the base codes of every attribute, and either respondent ids
    (respondent-level k) or sensitive values (l-diversity checks) -- not both."""
    if uid is not None and sensitive is not None:
        raise ValueError("a table carries respondent ids or a sensitive attribute, not both")
    extra = uid if uid is not None else sensitive
    n = len(columns[0]) if columns else (0 if extra is None else len(extra))
    extra_codes, n_extra = (None, 0) if extra is None else _dense(extra)
    cards = [d.n_base for d in dims]
    attrs = tuple(range(len(dims)))
    fs = group_rows(
        attrs, (0,) * len(dims), [np.asarray(c, dtype=np.int64) for c in columns], cards,
        np.ones(n, dtype=np.int64), extra_codes, n_extra, sensitive is not None,
    )
    return Table([np.ascontiguousarray(c) for c in fs.cols], fs.counts, fs.uid, n_extra, n, sensitive is not None)


def _dense(values: np.ndarray) -> tuple[np.ndarray, int]:
    from tempanon.data.cells import value_codes

    codes, uniq = value_codes(values)  # (1, True, 1.0: one hash key, three released texts, three values)
    return codes.astype(np.int64), len(uniq)


def table_frequency_set(
    table: Table, dims: Sequence[Dimension], attrs: Sequence[int], levels: Sequence[int]
) -> FrequencySet:
    """Frequency set of T w.r.t. the node (attrs, levels), computed from T (a table scan).

    When T stays in an engine (:class:`EngineTable`: its bottom set did not fit the driver) the
    engine computes it with a ``GROUP BY`` (Incognito Section 3)."""
    if isinstance(table, EngineTable):
        return table.source.engine_frequency_set(tuple(attrs), tuple(levels))
    cols = [table.level_column(dims, j, lv) for j, lv in zip(attrs, levels)]
    cards = [dims[j].cardinality(lv) for j, lv in zip(attrs, levels)]
    w = table.weights
    multi = None
    if w is not None:
        if "multi" not in table._level_cols:
            rows = np.flatnonzero(w != 1)
            # few rows of T repeat (a near-unique table): count rows, then add their extra tuples
            table._level_cols["multi"] = (rows, (w[rows] - 1).astype(np.int64)) if 16 * len(rows) <= len(w) else None
        multi = table._level_cols["multi"]
        if multi is not None:
            w = None
        elif len(w) >= _KERNEL_MIN_ROWS and _kernels() is not None:
            pass  # the compiled scans count int64 tuple counts as they are
        else:  # bincount counts in float64: convert the tuple counts once per table, not per scan
            wf = table._level_cols.get("float weights")
            if wf is None:
                wf = table._level_cols["float weights"] = w.astype(np.float64)
            w = wf
    return group_rows(attrs, levels, cols, cards, w, table.uid, table.n_uid, table.sensitive, multi=multi)


def rollup(fs: FrequencySet, dims: Sequence[Dimension], levels: Sequence[int]) -> FrequencySet:
    """Frequency set of a more general node (same attributes, ``levels`` at least as general),
    computed from ``fs`` and not from the data (Rollup Property, Section 2)."""
    if tuple(levels) == fs.levels:
        return fs
    engine = getattr(fs, "engine_rollup", None)
    if engine is not None:  # a set too large for the driver, rolled up in its engine (source_duckdb)
        return engine(dims, levels)
    cards = [dims[j].cardinality(lv) for j, lv in zip(fs.attrs, levels)]
    m = len(fs)
    if m >= _KERNEL_MIN_ROWS and not fs.n_uid and fs.attrs and _kernels() is not None:
        size = 1
        for c in cards:
            size *= max(int(c), 1)
        bound = int(fs.counts.sum()) if size <= _KERNEL_DENSE * m + 4096 else 0
        if size <= _KERNEL_DENSE * m + 4096 and _dense_cells_fit(size, m, bound):
            # the maps to the coarser levels are applied inside the counting pass (no mapped copies)
            maps = tuple(dims[j].up(old, new) for j, old, new in zip(fs.attrs, fs.levels, levels))
            cnt = _counts_array(size, bound)
            radix = np.asarray([max(int(c), 1) for c in cards], dtype=np.int64)
            _kernels().count_mapped(_same_dtype(fs.cols), maps, radix, np.asarray(fs.counts, dtype=np.int64), cnt)
            return _compiled_frequency_set(fs.attrs, levels, tuple(int(x) for x in radix), cnt, fs.sensitive)
    cols = [c if old == new else dims[j].up(old, new)[c] for c, j, old, new in zip(fs.cols, fs.attrs, fs.levels, levels)]
    return group_rows(fs.attrs, levels, cols, cards, fs.counts, fs.uid, fs.n_uid, fs.sensitive)


def small_class_tuples(fs: FrequencySet, dims: Sequence[Dimension], nodes: Sequence[Sequence[int]], k: int) -> np.ndarray:
    """For every node (levels over ``fs.attrs``, each at least as general as ``fs.levels``): the
    tuples in its classes smaller than ``k`` -- what a k-anonymity check with a suppression
    threshold needs -- rolled up from ``fs`` for all nodes in one pass (Rollup Property).

    A batched rollup: each attribute's codes are mapped once per distinct target level, the keys
    of all nodes are packed into one ``(nodes, rows)`` array over fixed radices, and the classes of
    every node are counted at once (one ``bincount`` over a small key space, else one row-wise
    sort). The per-node work is a few array cells, not a few array *calls*; this is what makes
    checking the many roots of Incognito's candidate graphs cheap. Tuple-level counts only (no
    respondent ids, no sensitive digit)."""
    if fs.n_uid or fs.sensitive:
        raise ValueError("small_class_tuples counts tuples: no respondent ids or sensitive digit")
    nodes_arr = np.asarray(nodes, dtype=np.int64).reshape(len(nodes), len(fs.attrs))
    R, m = len(nodes_arr), len(fs)
    if R == 0 or m == 0:
        return np.zeros(R, dtype=np.int64)
    cols = fs.cols
    base = np.zeros(m, dtype=np.int64)  # digits of attributes whose level is the same for all nodes
    varying = []
    space = 1
    for p, j in enumerate(fs.attrs):
        lv = nodes_arr[:, p]
        first = int(lv[0])
        if (lv == first).all():
            card = max(int(dims[j].cardinality(first)), 1)
            base *= card
            base += dims[j].up(fs.levels[p], first)[np.asarray(cols[p], dtype=np.intp)]
            space *= card
        else:
            varying.append(p)
    key: np.ndarray = base
    for p in varying:
        j = fs.attrs[p]
        lvls, pick = np.unique(nodes_arr[:, p], return_inverse=True)
        card = max(int(dims[j].cardinality(int(v))) for v in lvls)
        c = np.asarray(cols[p], dtype=np.intp)
        mapped = np.stack([dims[j].up(fs.levels[p], int(v))[c] for v in lvls])  # (levels, m)
        key = key * card + mapped[pick]
        space *= card
    if key.ndim == 1:
        key = np.broadcast_to(key, (R, m))
    weights = fs.counts
    total = R * space
    if total <= 4 * R * m + 4096:
        flat = (key + (np.arange(R, dtype=np.int64) * space)[:, None]).ravel()
        cnt = np.bincount(flat, weights=np.tile(weights, R), minlength=total).reshape(R, space)
        small = (cnt > 0) & (cnt < k)
        return (cnt * small).sum(axis=1).astype(np.int64)
    order = np.argsort(key, axis=1)
    sk = np.take_along_axis(key, order, axis=1)
    new = np.empty((R, m), dtype=bool)
    new[:, 0] = True
    np.not_equal(sk[:, 1:], sk[:, :-1], out=new[:, 1:])
    starts = np.flatnonzero(new.ravel())
    class_tuples = np.add.reduceat(weights[order].ravel(), starts)
    small = class_tuples < k
    return np.bincount(starts[small] // m, weights=class_tuples[small], minlength=R).astype(np.int64)


def project(fs: FrequencySet, dims: Sequence[Dimension], attrs: Sequence[int]) -> FrequencySet:
    """Frequency set over a subset of ``fs``'s attributes (a data-cube roll-up, Section 3.3.2)."""
    pos = {j: i for i, j in enumerate(fs.attrs)}
    cols = [fs.cols[pos[j]] for j in attrs]
    lv = [fs.levels[pos[j]] for j in attrs]
    cards = [dims[j].cardinality(v) for j, v in zip(attrs, lv)]
    return group_rows(attrs, lv, cols, cards, fs.counts, fs.uid, fs.n_uid, fs.sensitive)


def table_as_frequency_set(table: Table) -> FrequencySet:
    """T's zero-generalization frequency set over all its attributes."""
    q = len(table.columns)
    fs = FrequencySet(tuple(range(q)), (0,) * q, tuple(int(c.max(initial=0)) + 1 for c in table.columns), table.counts, None, table.n_uid, table.sensitive)
    fs._cols = list(table.columns)
    fs._uid = table.uid
    return fs
