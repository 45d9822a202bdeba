"""Frequency-set sources: where the rows live and who groups them (issue 15).

Every full-domain search in tempanon works on one object, the **bottom frequency set** of T: its
distinct rows of base codes with their counts, optionally with a respondent or sensitive digit
(:class:`~tempanon.lattice.freqset.Table`). Only four steps touch the rows themselves: the
distinct values of each column (to build the hierarchies' codes and to find values missing from a
hierarchy), the one ``GROUP BY`` that produces the bottom frequency set, the release and its
verification. A :class:`FrequencySource` serves exactly those steps, so the same search runs on a
pandas DataFrame (:class:`NumpySource`), on a CSV or Parquet file read by DuckDB out of core
(:class:`~tempanon.lattice.source_duckdb.DuckDBSource`) or on a Spark DataFrame
(:class:`~tempanon.lattice.source_spark.SparkSource`).

This is how LeFevre, DeWitt and Ramakrishnan ran Incognito (SIGMOD 2005, Section 3, "frequency
sets as GROUP BY queries"): the table is a star schema, each quasi-identifier's hierarchy a
dimension table joined by its value, and a frequency set ``SELECT COUNT(*) ... GROUP BY`` over the
generalized columns. Rollups of frequency sets (Section 2, Rollup Property) never need the rows,
so they stay on the driver in numpy.

Interface (all sources):

* :meth:`FrequencySource.distinct_values` -- the distinct values of a column, each with the label
  of the first row that holds it (error messages name that row);
* :meth:`FrequencySource.encode` -- hierarchies' dimensions from the distinct values (the
  missing-from-hierarchy check happens here);
* :meth:`FrequencySource.bottom` -- the bottom frequency set as a :class:`Table`;
* :meth:`FrequencySource.frequency_set` / :meth:`FrequencySource.small_class_counts` -- the
  frequency set of a node and the small-class tuple counts of many nodes (computed from the bottom
  set on the driver by default; an engine may compute them itself when the bottom set is too large
  to fetch);
* :meth:`FrequencySource.release` and :meth:`FrequencySource.verify` -- the generalized table at
  the selected node and its independent check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tempanon.errors import InputError
from tempanon.lattice.dimension import Dimension
from tempanon.lattice.freqset import FrequencySet, Table, encode_table, small_class_tuples, table_as_frequency_set, table_frequency_set

ENGINES = ("auto", "numpy", "duckdb", "spark")
AUTO_DUCKDB_BYTES = 256 * 2**20
"""``engine="auto"``: input files at least this large are read by DuckDB, smaller ones by pandas."""


BYTES_PER_DRIVER_ROW = 320
"""Driver memory per row of the bottom frequency set, end to end, measured: a 10M-row
Lands-End-shaped table (9,999,560 distinct rows, 8 quasi-identifiers, DuckDB engine) peaked at
3.1 GB (2026-11-25; 7.8 GB before the bottom set was fetched as int32 codes without regrouping and
the level columns narrowed)."""


def max_driver_rows(fraction: float = 0.5) -> int:
    """Rows of a bottom frequency set the driver can hold: ``fraction`` of physical memory over
    :data:`BYTES_PER_DRIVER_ROW` (``TEMPANON_MAX_DRIVER_ROWS`` overrides)."""
    return rows_in_memory("TEMPANON_MAX_DRIVER_ROWS", fraction)


def rows_in_memory(env_var: str, fraction: float) -> int:
    """Rows at :data:`BYTES_PER_DRIVER_ROW` a row in ``fraction`` of physical memory (8 GiB where
    the platform does not say), unless the environment variable ``env_var`` gives the number."""
    import os

    env = os.environ.get(env_var, "").strip()
    if env:
        try:
            rows = int(env)
        except ValueError:
            raise InputError(f"environment variable {env_var}={env!r}: expected a whole number of rows") from None
        if rows < 0:
            raise InputError(f"environment variable {env_var}={env!r}: expected a whole number of rows >= 0")
        return rows
    try:
        mem = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        mem = 8 * 2**30
    return int(mem * fraction / BYTES_PER_DRIVER_ROW)


@dataclass
class Release:
    """What :meth:`FrequencySource.release` produced.

    ``table`` is the released DataFrame (numpy source, or an engine asked for no file); ``path`` the
    file an engine wrote (already verified and renamed into place); ``kept`` the kept-row mask of
    an in-memory release."""

    rows_out: int
    min_class_size: int
    table: pd.DataFrame | None = None
    kept: np.ndarray | None = None
    path: str | None = None
    checks: dict = field(default_factory=dict)
    codes: list | None = None
    """Per quasi-identifier, the released level code of every released row (in-memory release:
    what orders rows by class without re-reading the released text)."""


def encode_distinct(encoder: Any, series: pd.Series) -> tuple[Dimension, np.ndarray]:
    """``encoder.encode(series)``, but the encoder sees each distinct value once.

    For hierarchies (:class:`~tempanon.hierarchy.Hierarchy` and data-built
    :class:`~tempanon.hierarchy.builders.HierarchySpec`) the codes depend on the value only, so the
    column is factorized, the first row of every distinct value encoded, and the codes spread back
    by the factor codes. When values are missing from the hierarchy the whole column is encoded
    again, so the error names the same rows as a row-by-row encoding. Other encoders (time
    granularities) see the whole column. Measured 3.5x faster than row-by-row on 10M rows."""
    from tempanon.hierarchy.builders import HierarchySpec
    from tempanon.hierarchy.core import Hierarchy

    from tempanon.data.cells import is_mixed

    # (a column of mixed Python types: 1, True and 1.0 are one hash key but three texts; the encoder
    # sees every cell by its text, tempanon.data.cells)
    if not isinstance(encoder, (Hierarchy, HierarchySpec)) or len(series) < 64 or is_mixed(series):
        return encoder.encode(series)
    codes, uniq = pd.factorize(series, use_na_sentinel=False)
    if 2 * len(uniq) > len(series):
        return encoder.encode(series)
    codes = np.asarray(codes, dtype=np.int64)
    running = np.maximum.accumulate(codes)  # factor codes are numbered by first appearance
    first = np.flatnonzero(np.diff(running, prepend=-1) > 0)
    from tempanon.errors import HierarchyError

    try:
        d, c = encoder.encode(series.iloc[first])
    except HierarchyError:
        return encoder.encode(series)  # the error names rows by position in the whole column
    return d, np.asarray(c, dtype=np.int64)[codes]


class FrequencySource:
    """Serves the frequency sets of one table to the searches (see module doc)."""

    engine = "abstract"
    #: which path computed the frequency sets: ``"bottom on driver"`` (the bottom set was fetched,
    #: every other set rolled up from it) or ``"frequency sets in engine"``
    path = "bottom on driver"

    def describe(self) -> dict:
        """Engine, path and the bottom set's size estimate (for the summary's ``plan``)."""
        return {"engine": self.engine, "path": self.path, **(getattr(self, "estimate", None) or {})}

    def __init__(self) -> None:
        self.dims: list[Dimension] = []
        self.qi: list[str] = []
        self.encoders: dict[str, Any] = {}
        self.table: Table | None = None

    # ---- the table -------------------------------------------------------------------------------
    @property
    def columns(self) -> list[str]:
        raise NotImplementedError

    @property
    def n_rows(self) -> int:
        raise NotImplementedError

    def require_columns(self, cols: Sequence[str], role: str) -> None:
        have = set(self.columns)
        missing = [c for c in cols if c not in have]
        if missing:
            from tempanon.data.roles import delimiter_hint

            raise InputError(
                f"unknown {role} {', '.join(repr(c) for c in missing)}; the input has columns: "
                + ", ".join(map(str, self.columns)) + delimiter_hint(self.columns)
            )

    def first_missing_row(self, column: str) -> Any | None:
        """Label of the first row whose ``column`` is missing (``None`` if no value is missing)."""
        raise NotImplementedError

    def distinct_values(self, column: str) -> pd.Series:
        """The distinct values of ``column`` (missing included), indexed by the label of the first
        row holding each, in order of first appearance where the engine knows it."""
        raise NotImplementedError

    def count_present(self, column: str) -> int:
        """Rows where ``column`` is not missing (identifier screening's near-unique signal)."""
        raise NotImplementedError

    # ---- encoding and the bottom frequency set ---------------------------------------------------
    def encode(self, qi: Sequence[str], encoders: Mapping[str, Any]) -> list[Dimension]:
        """Dimensions of the quasi-identifiers, built from their distinct values; raises
        :class:`~tempanon.errors.HierarchyError` naming values missing from a hierarchy."""
        raise NotImplementedError

    def bottom(self, uid: str | None = None, sensitive: str | None = None) -> Table:
        """The bottom frequency set (base codes of every quasi-identifier, counts, and the dense
        codes of ``uid`` or ``sensitive``) as a :class:`Table`."""
        raise NotImplementedError

    def frequency_set(self, node: Sequence[int], attrs: Sequence[int] | None = None) -> FrequencySet:
        """Frequency set of the node (``attrs`` at ``node``'s levels; all attributes by default)."""
        assert self.table is not None, "bottom() first"
        attrs = tuple(range(len(self.dims))) if attrs is None else tuple(attrs)
        return table_frequency_set(self.table, self.dims, attrs, tuple(node))

    def small_class_counts(self, nodes: Sequence[Sequence[int]], k: int) -> np.ndarray:
        """For many nodes over all attributes: tuples in classes smaller than ``k`` (one batched
        rollup of the bottom set, :func:`~tempanon.lattice.freqset.small_class_tuples`)."""
        assert self.table is not None, "bottom() first"
        from tempanon.lattice.freqset import EngineTable

        if isinstance(self.table, EngineTable):
            return np.array([self.frequency_set(n).suppressed_tuples(k) for n in nodes], dtype=np.int64)
        return small_class_tuples(table_as_frequency_set(self.table), self.dims, nodes, k)

    # ---- release and verification ----------------------------------------------------------------
    def release(
        self, node: Sequence[int], k: int, *, uid: str | None, drop: Sequence[str], out: str | None = None
    ) -> Release:
        raise NotImplementedError

    def close(self) -> None:
        """Release engine resources (connections, spill directories)."""


class NumpySource(FrequencySource):
    """A pandas DataFrame in memory: today's path (encoding per distinct value, grouping and rollup
    in numpy, the release as a DataFrame keeping the input's row labels)."""

    engine = "numpy"

    def __init__(self, data: pd.DataFrame):
        super().__init__()
        if not isinstance(data, pd.DataFrame):
            raise InputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
        self.data = data
        self.base_codes: list[np.ndarray] = []

    @property
    def columns(self) -> list[str]:
        return list(self.data.columns)

    @property
    def n_rows(self) -> int:
        return len(self.data)

    def first_missing_row(self, column: str) -> Any | None:
        na = self.data[column].isna().to_numpy()
        return self.data.index[int(np.argmax(na))] if na.any() else None

    def count_present(self, column: str) -> int:
        return int(self.data[column].notna().sum())

    def distinct_values(self, column: str) -> pd.Series:
        """The distinct values of ``column`` in first-row order, a missing one too. A column of mixed
        Python types (:func:`~tempanon.data.cells.is_mixed`) as the text the release writes of each cell:
        ``1``, ``True`` and ``1.0`` are three values, as on the other engines (``pd.factorize`` merged them:
        they compare equal)."""
        from tempanon.data.cells import is_mixed, released_text

        s = self.data[column]
        if is_mixed(s):
            s = released_text(s)
        codes, _ = pd.factorize(s, use_na_sentinel=False)
        running = np.maximum.accumulate(np.asarray(codes, dtype=np.int64)) if len(s) else np.zeros(0, dtype=np.int64)
        return s.iloc[np.flatnonzero(np.diff(running, prepend=-1) > 0)]

    def encode(self, qi: Sequence[str], encoders: Mapping[str, Any]) -> list[Dimension]:
        """As the engines: a hierarchy built from the data (a ``HierarchySpec``) is built here once, from
        the column, and kept in ``self.encoders`` for the release and the verification (a second build
        gave the builder's warnings twice)."""
        from tempanon.hierarchy.builders import HierarchySpec

        self.qi, self.encoders = list(qi), dict(encoders)
        dims, cols = [], []
        for q in qi:
            column = self.data[q].rename(q)
            if isinstance(encoders[q], HierarchySpec):
                self.encoders[q] = encoders[q].build_for(column)
            d, c = encode_distinct(self.encoders[q], column)
            if d.name != q:
                d.name = q
            dims.append(d)
            cols.append(c)
        self.dims, self.base_codes = dims, cols
        return dims

    def bottom(self, uid: str | None = None, sensitive: str | None = None) -> Table:
        uid_values = self.data[uid].to_numpy(dtype=object) if uid is not None else None
        sens_values = self.data[sensitive].to_numpy(dtype=object) if sensitive is not None else None
        self.table = encode_table(self.dims, self.base_codes, uid_values, sensitive=sens_values)
        return self.table

    def release(
        self, node: Sequence[int], k: int, *, uid: str | None, drop: Sequence[str], out: str | None = None
    ) -> Release:
        """The generalized DataFrame at ``node`` (row labels kept), classes smaller than ``k``
        removed. Writing is left to the caller (after verification)."""
        data, dims = self.data, self.dims
        level_codes = [d.codes[v][c] for d, v, c in zip(dims, node, self.base_codes)]
        key = np.zeros(len(data), dtype=np.int64)
        space = 1
        for d, v, c in zip(dims, node, level_codes):
            key = key * d.cardinality(v) + c
            space *= max(d.cardinality(v), 1)
        if uid is None:
            # class sizes without sorting the rows: counted by class key (dense) or hashed
            if space <= 4 * len(key) + 4096:
                inv = key
            else:
                inv, uniq = pd.factorize(key)
                space = len(uniq)
            sizes = np.bincount(inv, minlength=space)
        else:
            cls, inv = np.unique(key, return_inverse=True)
            from tempanon.data.cells import value_codes

            u = value_codes(data[uid].to_numpy(dtype=object))[0].astype(np.int64)  # (respondents by their text)
            pairs = np.unique(inv.astype(np.int64) * (int(u.max()) + 1) + u)
            sizes = np.bincount(pairs // (int(u.max()) + 1), minlength=len(cls))
        kept = sizes[inv] >= k
        out_df = data.drop(columns=[c for c in [*drop, *([uid] if uid else [])] if c in data.columns])
        for q, d, v, c in zip(self.qi, dims, node, level_codes):
            out_df[q] = pd.Series(d.labels[v][c], index=data.index, dtype=object)
        every = bool(kept.all())
        released = out_df if every else out_df.loc[kept]
        big = sizes[sizes >= k]  # (empty cells of a dense count are below k)
        min_size = int(big.min()) if len(big) else 0
        return Release(rows_out=int(kept.sum()), min_class_size=min_size, table=released, kept=kept,
                       codes=level_codes if every else [c[kept] for c in level_codes])  # fmt: skip


def file_size(path: Any) -> int | None:
    try:
        import os

        return os.path.getsize(path)
    except (OSError, TypeError):
        return None


def resolve_engine(data: Any, engine: str = "auto", memory_limit: str | None = None) -> str:
    """The engine ``engine`` means for ``data``: ``auto`` is numpy for DataFrames and files smaller
    than :data:`AUTO_DUCKDB_BYTES`, DuckDB for larger files, spark for Spark DataFrames; with a
    ``memory_limit`` ``auto`` is DuckDB (a limit asks for bounded memory: :mod:`tempanon.lattice.memory`)."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    if engine != "auto":
        return engine
    if isinstance(data, FrequencySource):
        return data.engine
    if type(data).__module__.startswith("pyspark"):
        return "spark"
    if memory_limit is not None:
        return "duckdb"
    if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__"):
        return "duckdb" if (file_size(data) or 0) >= AUTO_DUCKDB_BYTES else "numpy"
    return "numpy"


def spark_input_checks(path) -> None:
    """What Spark's reader does not refuse itself, refused before it reads ``path``: a CSV file that is
    not UTF-8 (Spark reads such a byte as U+FFFD and would release 'K\ufffdln' for a Latin-1 'Köln';
    numpy and DuckDB refuse it: :func:`tempanon.data.io.check_utf8`, about a second per gigabyte)."""
    from pathlib import Path

    from tempanon.data.io import check_utf8
    from tempanon.lattice.source_duckdb import _is_parquet

    p = Path(path)
    if p.is_file() and not _is_parquet(p):
        check_utf8(p)


def open_source(
    data: Any,
    engine: str = "auto",
    *,
    memory_limit: str | None = None,
    delimiter: str | None = None,
    spark_master: str | None = None,
    roles: Any = None,
) -> FrequencySource:
    """A :class:`FrequencySource` for ``data``: a source as is, a pandas DataFrame (numpy), a
    Spark DataFrame (spark), or a CSV/Parquet path (``auto``: DuckDB from
    :data:`AUTO_DUCKDB_BYTES` on, else pandas). ``roles``: the columns the caller needs
    (:func:`tempanon.data.io.read_table`'s ``roles``): the numpy engine reads only those of a Parquet
    file (DuckDB and Spark read only the columns they query anyway)."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    if isinstance(data, FrequencySource):
        if memory_limit is not None:
            raise InputError("memory_limit applies when tempanon opens the engine; this frequency source is already open")
        return data
    if type(data).__module__.startswith("pyspark"):
        if engine not in ("auto", "spark"):
            raise InputError(f"a Spark DataFrame is served by the spark engine, not {engine!r}")
        if memory_limit is not None:
            raise InputError("memory_limit sets the heap of a Spark driver tempanon starts; this Spark DataFrame's session "
                             "is already running (set spark.driver.memory when you create it)")  # fmt: skip
        from tempanon.lattice.source_spark import SparkSource

        return SparkSource(data)
    from tempanon.lattice.memory import check_memory_limit

    if isinstance(data, pd.DataFrame):
        from tempanon.data.io import check_frame

        check_frame(data)
        engine = resolve_engine(data, engine, memory_limit)
        check_memory_limit(engine, memory_limit, spark_master=spark_master)
        if engine == "numpy":
            return NumpySource(data)
        if engine == "duckdb":
            from tempanon.lattice.source_duckdb import DuckDBSource

            return DuckDBSource(data, memory_limit=memory_limit)
        from tempanon.lattice.source_spark import SparkSource

        return SparkSource.from_pandas(data, master=spark_master, memory_limit=memory_limit)
    if isinstance(data, (str, bytes)) or hasattr(data, "__fspath__"):
        from tempanon.data.io import check_input_file, normalize_delimiter

        path = check_input_file(data, directory=True, delimiter=delimiter)
        delimiter = normalize_delimiter(delimiter)  # one character (or 'tab', ...) for every engine's reader
        engine = resolve_engine(path, engine, memory_limit)
        check_memory_limit(engine, memory_limit, spark_master=spark_master)
        if engine == "numpy":
            from tempanon.data.io import read_table

            return NumpySource(read_table(path, as_text=True, delimiter=delimiter, roles=roles))
        if engine == "duckdb":
            from tempanon.lattice.source_duckdb import DuckDBSource

            return DuckDBSource(path, memory_limit=memory_limit, delimiter=delimiter)
        from tempanon.lattice.source_spark import SparkSource

        spark_input_checks(path)
        return SparkSource.from_path(path, master=spark_master, delimiter=delimiter, memory_limit=memory_limit)
    raise InputError(f"data must be a pandas DataFrame, a file path or a frequency source, got {type(data).__name__}")


__all__ = ["AUTO_DUCKDB_BYTES", "ENGINES", "FrequencySource", "NumpySource", "Release", "encode_distinct", "open_source", "resolve_engine"]
