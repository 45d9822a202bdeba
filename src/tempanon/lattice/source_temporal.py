"""The time-granularity search served by DuckDB (issue 15; Mascetti et al., TIME 2006, Section 4).

Procedure 2 of the timestamped search (:func:`tempanon.temporal.least.check_granularity`) needs,
for one granularity ``H``, the frequency set of the relation generalized by ``H``: the classes
``(quasi-identifier values, granule of H)`` with their tuples and their *distinct respondents*
(Definition 2, respondent-level k). As in Incognito's DB2 implementation (LeFevre et al., SIGMOD
2005, Section 3: frequency sets as ``GROUP BY`` over dimension tables), time is a dimension:

* the engine holds the relation ``rel(i, q, ti, tpi, first)``: row number, quasi-identifier
  combination code, dense time index (NULL when missing), the time index of the same
  respondent's previous tuple with the same quasi-identifier values, and whether it is the first
  (one window ``lag`` when the relation is created: numpy's "previous tuple" link of
  :func:`~tempanon.temporal.least.prepare`);
* the driver computes each granularity's granule index of the *distinct* instants with the same
  numpy granularity code the numpy path uses (:meth:`Granularity.index`: calendars, time zones,
  holidays and business days stay identical) and ships it as the dimension table
  ``gdim(ti, g, s)`` (``s``: the time index of the granule's first instant);
* the engine computes the frequency set ``GROUP BY q, g`` with the distinct respondents of each
  class (a tuple is a new respondent of its class when its previous tuple lies before ``s``) and
  returns only the aggregates Procedure 2 needs (tuples below k, gen_m, gen_s, classes, smallest
  class, sum over all classes), so the driver never sorts the relation.

A missing timestamp has no granule (NULL), so the missing times of one quasi-identifier
combination form one class, as ``MISSING_KEY`` does in the numpy path. The release keeps the numpy
path's rows: the engine returns the row numbers of the suppressed tuples (at most the suppression
limit), the driver labels the kept rows and the independent verifier
(:func:`tempanon.verify.check_timestamped_release`) checks them as before. Results are identical
to the numpy path (tests/engine/test_engine_temporal.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tempanon.errors import InputError, VerificationError
from tempanon.lattice.freqset import FrequencySet
from tempanon.lattice.source import FrequencySource, NumpySource
from tempanon.lattice.source_duckdb import EngineFrequencySet
from tempanon.temporal.granularity import GAP, Granularity
from tempanon.temporal.least import Check


class DuckDBTimeSource:
    """The relation of a timestamped search held by DuckDB; :meth:`check` is Procedure 2.

    The relation is prepared once, as numpy's :func:`~tempanon.temporal.least.prepare` does with
    its two sorts: ``rel(i, q, ti, tpi, first)`` holds each tuple's row, quasi-identifier code,
    **dense time index** ``ti`` (position of its instant among the sorted distinct instants, NULL
    when missing), the time index ``tpi`` of the previous tuple of the same respondent with the
    same quasi-identifier values (``lag`` over ``PARTITION BY q, u ORDER BY ti NULLS FIRST``) and
    whether it is that respondent's first tuple there. Granule indexes are order-preserving
    (Section 3.2: granules are ordered), so for a granularity ``H`` a tuple adds its respondent to
    its class exactly when it is the first, or its time is present and the previous tuple lies
    before the first instant of its granule (``tpi < s(ti)``). Procedure 2 is then **one join**
    of the relation with ``gdim(ti, g, s)`` (granule and granule start of each distinct instant,
    computed by the numpy granularity code) and a ``GROUP BY q, g`` with few groups, instead of a
    ``GROUP BY q, g, u`` over nearly every tuple (issue 15: 5.4 -> 3.4 s CPU for the nine default
    granularities at 2M events, measured)."""

    engine = "duckdb"

    #: the relation's columns for Procedure 2, from ``rel0(i, q, ti, u)``
    PREPARE = ("SELECT i, q, ti, lag(ti) OVER w AS tpi, row_number() OVER w = 1 AS first FROM rel0 "
               "WINDOW w AS (PARTITION BY q, u ORDER BY ti NULLS FIRST)")  # fmt: skip

    def __init__(self, q: np.ndarray, instants: np.ndarray, missing: np.ndarray, uid: np.ndarray, *,
                 memory_limit: str | None = None, threads: int | None = None):  # fmt: skip
        from tempanon.lattice.source_duckdb import open_duckdb

        self.con, self._tmpdir = open_duckdb(memory_limit=memory_limit, threads=threads)
        self.memory_limit = memory_limit
        self._prepare(q, instants, missing, uid)

    def _prepare(self, q: np.ndarray, instants: np.ndarray, missing: np.ndarray, uid: np.ndarray) -> None:
        """The relation ``rel`` in the engine (:attr:`PREPARE` over the rows' codes)."""
        import pyarrow as pa

        self.q = np.ascontiguousarray(q, dtype=np.int64)
        self.instants = np.asarray(instants, dtype=np.int64)
        self.missing = np.asarray(missing, dtype=bool)
        n = len(self.q)
        self.n = n
        self._distinct, inv = np.unique(self.instants[~self.missing], return_inverse=True)  # one sort
        ti = np.zeros(n, dtype=np.int32)
        ti[~self.missing] = inv.ravel()
        self._register("rel0", pa.table({
            "i": pa.array(np.arange(n, dtype=np.int64)),
            "q": pa.array(self.q),
            "ti": pa.array(ti, mask=self.missing),
            "u": pa.array(np.ascontiguousarray(uid, dtype=np.int64)),
        }))  # fmt: skip
        self.engine_queries = 0
        self._materialize("rel", self.PREPARE)
        self._unregister("rel0")
        self._dim_of: str | None = None
        self._owns = True
        self._gap_error = None

    @classmethod
    def on_relation(cls, con, n: int, distinct_instants: np.ndarray, *, memory_limit: str | None = None,
                    gap_error=None) -> "DuckDBTimeSource":  # fmt: skip
        """A source over a relation ``rel(q, ti, tpi, first)`` already in ``con`` (the out-of-core
        path, :mod:`tempanon.temporal.outofcore`: built from a file read in place with
        :attr:`PREPARE`'s window); ``distinct_instants`` its sorted distinct non-missing instants
        (``ti`` indexes them); ``gap_error(g, instants)`` raises the error for instants in no
        granule of ``g``. The connection stays open on :meth:`close`."""
        self = cls.__new__(cls)
        self.con, self._tmpdir, self.memory_limit = con, None, memory_limit
        self.n = int(n)
        self.q = self.instants = self.missing = None
        self._distinct = np.asarray(distinct_instants, dtype=np.int64)
        self.engine_queries = 0
        self._dim_of = None
        self._owns = False
        self._gap_error = gap_error
        return self

    def distinct_instants(self) -> np.ndarray:
        """The sorted distinct non-missing instants (``ti`` indexes them)."""
        return self._distinct

    def _arrow(self, sql: str):
        from tempanon.lattice.source_duckdb import _query_arrow

        self.engine_queries += 1
        return _query_arrow(self.con, sql)

    def _exec(self, sql: str) -> None:
        self.engine_queries += 1
        self.con.execute(sql).fetchall()

    # the engine's dialect and tables (overridden by :class:`SparkTimeSource`)
    SEMI_JOIN = "SEMI JOIN"

    def _register(self, name: str, table) -> None:
        self.con.register(name, table)

    def _unregister(self, name: str) -> None:
        self.con.unregister(name)

    def _materialize(self, name: str, sql: str) -> None:
        self._exec(f"CREATE TEMP TABLE {name} AS {sql}")

    def _dimension(self, g: Granularity) -> None:
        """Register ``gdim(ti, g, s)``: the granule of ``g`` of every distinct instant and the
        time index of its granule's first distinct instant (driver numpy)."""
        import pyarrow as pa

        if self._dim_of == g.name:
            return
        t = self.distinct_instants()
        h = np.asarray(g.index(t), dtype=np.int64)
        bad = h == GAP
        if bad.any() and self._gap_error is not None:
            self._gap_error(g, t[bad])
        if bad.any():  # the numpy path's message: the first such tuple in (QI, time, row) order
            rows = np.flatnonzero(~self.missing & np.isin(self.instants, t[bad]))
            j = rows[np.lexsort((rows, self.instants[rows], self.q[rows]))[0]]
            raise InputError(f"timestamp on line {int(j) + 2} lies in no granule of {g.name}")
        if len(h) > 1 and not bool(np.all(h[1:] >= h[:-1])):  # Procedure 2's runs need ordered granules
            raise InputError(f"granularity {g.name}: its granule indexes are not ordered in time")
        first = np.r_[True, h[1:] != h[:-1]] if len(h) else np.zeros(0, dtype=bool)
        start = np.maximum.accumulate(np.where(first, np.arange(len(h)), 0)).astype(np.int32)
        self._dim = pa.table({"ti": pa.array(np.arange(len(t), dtype=np.int32)), "g": pa.array(h), "s": pa.array(start)})
        self._register("gdim", self._dim)
        self._dim_of = g.name

    #: one row per class ``(q, g)`` of the granularity in ``gdim``: tuples ``n``, respondents ``r``
    CLASSES = ("SELECT r.q, d.g, count(*) AS n, count(*) FILTER (WHERE r.first OR (r.ti IS NOT NULL AND "
               "(r.tpi IS NULL OR r.tpi < d.s))) AS r FROM rel r LEFT JOIN gdim d ON r.ti = d.ti GROUP BY r.q, d.g")  # fmt: skip

    def check(self, g: Granularity, k: int, max_suppressed: int = 0) -> Check:
        """Procedure 2 for ``g`` (same :class:`Check` as :func:`check_granularity`): one join and
        one ``GROUP BY`` in the engine, aggregates fetched."""
        if self.n == 0:
            return Check(g.name, True, 0, 0, 0, 0, 0)
        self._dimension(g)
        k = int(k)
        sql = (
            f"SELECT coalesce(sum(CASE WHEN r < {k} THEN n ELSE 0 END), 0) AS suppressed, "
            f"min(CASE WHEN r >= {k} THEN r END) AS gen_m, coalesce(sum(CASE WHEN r >= {k} THEN r ELSE 0 END), 0) AS gen_s, "
            f"count(*) AS classes, min(r) AS min_r, sum(r) AS all_r FROM ({self.CLASSES}) c"
        )
        row = self._arrow(sql).to_pylist()[0]
        suppressed = int(row["suppressed"])
        return Check(g.name, suppressed <= max_suppressed, suppressed, int(row["gen_m"] or 0), int(row["gen_s"]),
                     int(row["classes"]), int(row["min_r"]), self.n, int(row["all_r"]))  # fmt: skip

    def small_classes_sql(self, g: Granularity, k: int) -> str:
        """The classes ``(q, g)`` of ``g`` with fewer than ``k`` respondents (registers ``gdim``)."""
        self._dimension(g)
        return f"SELECT q, g FROM ({self.CLASSES}) c WHERE r < {int(k)}"

    def suppressed_rows(self, g: Granularity, k: int) -> np.ndarray:
        """Row numbers of the tuples in classes of ``g`` with fewer than ``k`` respondents."""
        sql = (
            f"WITH c AS ({self.small_classes_sql(g, k)}) "
            f"SELECT r.i FROM rel r LEFT JOIN gdim d ON r.ti = d.ti {self.SEMI_JOIN} c ON r.q = c.q AND d.g IS NOT DISTINCT FROM c.g"
        )
        return np.sort(self._arrow(sql).column("i").to_numpy().astype(np.int64))

    def granules(self, g: Granularity) -> np.ndarray:
        """Granule of ``g`` of every row (``MISSING_KEY`` where missing), by lookup of the
        distinct instants (no sort of the relation)."""
        from tempanon.temporal.least import MISSING_KEY

        self._dimension(g)
        t = self.distinct_instants()
        h = np.asarray(self._dim.column("g").to_numpy(), dtype=np.int64)
        pos = np.searchsorted(t, np.where(self.missing, t[0] if len(t) else 0, self.instants))
        return np.where(self.missing, MISSING_KEY, h[np.minimum(pos, max(len(t) - 1, 0))] if len(t) else MISSING_KEY)

    def describe(self) -> dict:
        return {"engine": self.engine, "path": "frequency sets in engine", "engine_queries": self.engine_queries,
                "distinct_instants": int(len(self._distinct)) if self._distinct is not None else None,
                **({"memory_limit": self.memory_limit} if self.memory_limit else {})}  # fmt: skip

    def close(self) -> None:
        from tempanon.lattice.source_duckdb import close_duckdb

        if getattr(self, "_owns", True):
            close_duckdb(getattr(self, "con", None), getattr(self, "_tmpdir", None))
        self.con = None


class DuckDBJointSource(NumpySource):
    """The joint search's frequency-set source on DuckDB (issue 15): time and the other
    quasi-identifiers generalized together (:mod:`tempanon.temporal.joint`).

    The hierarchies' base codes are computed on the driver exactly as :class:`NumpySource` does
    (the granularity DAG's codes come from ``up`` of every data granule, numpy granularity code),
    then the relation of base codes and respondent codes is held by DuckDB, which computes the
    **bottom frequency set** with one ``GROUP BY`` (distinct rows of base codes and respondent,
    with counts; LeFevre et al. SIGMOD 2005, Section 3). Every other frequency set is rolled up
    from it on the driver (Rollup Property), as for :class:`~tempanon.lattice.source_duckdb.DuckDBSource`
    when the bottom set fits the driver. The release is computed from the codes on the driver and
    verified independently by :func:`tempanon.verify.check_timestamped_release` (the joint
    search's own release, not :meth:`release`'s). Results are identical to the numpy source
    (tests/engine/test_engine_temporal.py)."""

    engine = "duckdb"
    path = "bottom frequency set in engine, rollups on driver"

    def __init__(self, data, *, memory_limit: str | None = None, threads: int | None = None):
        super().__init__(data)
        from tempanon.lattice.source_duckdb import open_duckdb

        self.con, self._tmpdir = open_duckdb(memory_limit=memory_limit, threads=threads)
        self.memory_limit = memory_limit
        self.engine_queries = 0

    def bottom(self, uid: str | None = None, sensitive: str | None = None):
        import pyarrow as pa

        from tempanon.lattice.freqset import Table, group_rows

        if sensitive is not None:  # not used by the joint search
            return super().bottom(uid=uid, sensitive=sensitive)
        cols = {f"c{j}": pa.array(np.ascontiguousarray(c, dtype=np.int64)) for j, c in enumerate(self.base_codes)}
        n_uid = 0
        if uid is not None:
            u = pd.factorize(self.data[uid])[0].astype(np.int64)  # missing ids were refused before
            n_uid = int(u.max()) + 1 if len(u) else 0
            cols["u"] = pa.array(u)
        self._register("joint_rel", pa.table(cols))
        keys = ", ".join(cols)
        tab = self._arrow(f"SELECT {keys}, count(*) AS n FROM joint_rel GROUP BY {keys}")
        self._unregister("joint_rel")
        codes = [tab.column(f"c{j}").to_numpy().astype(np.int64) for j in range(len(self.dims))]
        counts = tab.column("n").to_numpy().astype(np.int64)
        extra = tab.column("u").to_numpy().astype(np.int64) if uid is not None else None
        fs = group_rows(tuple(range(len(self.dims))), (0,) * len(self.dims), codes, [d.n_base for d in self.dims],
                        counts, extra, n_uid, False)  # fmt: skip
        self.table = Table([np.ascontiguousarray(c) for c in fs.cols], fs.counts, fs.uid, n_uid, len(self.data), False)
        return self.table

    # the engine's tables (overridden by :class:`~tempanon.lattice.source_temporal_spark.SparkJointSource`)
    def _register(self, name: str, table) -> None:
        self.con.register(name, table)

    def _unregister(self, name: str) -> None:
        self.con.unregister(name)

    def _arrow(self, sql: str):
        from tempanon.lattice.source_duckdb import _query_arrow

        self.engine_queries += 1
        return _query_arrow(self.con, sql)

    def release(self, node, k, *, uid, drop, out=None, verify=True, max_suppressed=0, l=None, sensitive=None):
        """The generalized DataFrame (numpy, from the codes); the joint search releases and
        verifies its own (:func:`tempanon.temporal.joint.joint_anonymize`)."""
        return NumpySource.release(self, node, k, uid=uid, drop=drop)

    def describe(self) -> dict:
        return {"engine": self.engine, "path": self.path, "engine_queries": self.engine_queries,
                **({"memory_limit": self.memory_limit} if self.memory_limit else {})}  # fmt: skip

    def close(self) -> None:
        from tempanon.lattice.source_duckdb import close_duckdb

        close_duckdb(getattr(self, "con", None), getattr(self, "_tmpdir", None))
        self.con = None


class DuckDBJointFileSource(FrequencySource):
    """The joint search's frequency sets computed **in DuckDB** for a file read in place (issue 15;
    the out-of-core joint path, :func:`tempanon.temporal.outofcore.anonymize_timestamped_file`
    with ``hierarchies``).

    The driver holds the dimensions only: the granularity DAG's dimension built from the distinct
    timestamps (:class:`~tempanon.temporal.joint.GranularityHierarchy`, the same numpy
    granularity code as in memory) and each quasi-identifier's hierarchy (or the unchanged value)
    built from its distinct values. Each attribute's distinct value -> base code table is joined to
    the file once, and the engine keeps the **bottom frequency set with the respondent digit**
    as a table ``jbot(c0, ..., cm, u, n)`` (distinct base-code rows x respondent, with tuple counts;
    LeFevre et al. SIGMOD 2005, Section 3: frequency sets as ``GROUP BY`` over dimension tables).

    * If ``jbot`` fits the driver (:func:`~tempanon.lattice.source.max_driver_rows`) it is fetched
      and the search rolls up from it as the numpy source does (path ``"bottom on driver"``);
      otherwise every frequency set the search asks for is a ``GROUP BY`` over ``jbot`` joined to
      the level maps ``lvl<j>(c, l0, l1, ...)`` (one ``GROUPING SETS`` job per Incognito
      iteration, :meth:`prepare_frequency_sets`; path ``"frequency sets in engine"``). A set of at
      most :meth:`fetch_limit` (class, respondent) rows is fetched and rolled up on the driver; a
      larger one stays in the engine as a table of (class codes, ``u``, ``n``) rows
      (:class:`JointEngineFrequencySet`): its check counts, in SQL, the classes with fewer than k
      distinct respondents and their tuples, and its rollups are ``GROUP BY``s over its rows joined
      to code maps, ``u`` kept, until one is small enough to fetch. The full-lattice nodes scored
      after the search (the result's loss and discernibility, selection by them) come back as
      their classes with their respondents (:class:`JointClassSet`), not as pairs.
    * :meth:`node_metrics` (the joint selection's gen_m, gen_s, suppressed tuples: Definitions 5-6
      over the joint classes) and :meth:`small_classes` (the classes the release suppresses) count
      **distinct respondents per class in SQL** when the bottom set stays in the engine.

    Respondent-level counts are Definition 2's: a class's size is its number of distinct ``u``;
    without a respondent column every row is a respondent (``u`` absent, sizes are tuple counts).
    Results are identical to the numpy joint search (tests/engine/test_engine_temporal.py)."""

    engine = "duckdb"
    path = "bottom on driver"
    #: on the engine path, a frequency set of more (class, respondent) rows than this stays in the
    #: engine (:class:`JointEngineFrequencySet`); None: :func:`~tempanon.lattice.source_duckdb.max_fetch_rows`
    max_fetch_rows: int | None = None

    def __init__(self, sq, dims: Sequence, keys: Sequence[str], key_tables: Sequence, *, uid: str | None,
                 max_driver_rows: int | None = None, memory_limit: str | None = None):  # fmt: skip
        """``sq``: the :class:`~tempanon.lattice.source_duckdb.DuckDBSource` reading the file (view
        ``src``); ``dims[j]`` the dimension of attribute ``j``; ``keys[j]`` the SQL expression of its
        value in ``src s`` and ``key_tables[j]`` an Arrow table ``(v, c)``: each distinct value of
        that expression and its base code (joined with ``IS NOT DISTINCT FROM``)."""
        import pyarrow as pa

        super().__init__()
        self.sq, self.con = sq, getattr(sq, "con", None)  # (Spark: none, the session is sq.spark)
        self.dims = list(dims)
        self.qi = [d.name for d in self.dims]
        self.uid = uid
        self.memory_limit = memory_limit
        self.max_driver_rows = max_driver_rows
        self.engine_queries = 0
        self._fs_cache: dict = {}
        self._batch: dict = {}
        self._batch_rows: dict = {}
        self._batch_table = None
        for j, (d, kt) in enumerate(zip(self.dims, key_tables)):
            sq._register(f"jkey{j}", kt)
            it = pa.int32() if d.n_base < 2**31 else pa.int64()
            sq._register(f"jlvl{j}", pa.table({"c": pa.array(np.arange(d.n_base), it),
                                               **{f"l{v}": pa.array(d.codes[v], it) for v in range(d.n_levels)}}))  # fmt: skip
        joins = " ".join(f"JOIN jkey{j} k{j} ON {e} IS NOT DISTINCT FROM k{j}.v" for j, e in enumerate(keys))
        cs = ", ".join(f"k{j}.c AS c{j}" for j in range(len(keys)))
        u = f", {sq.value_expr(uid)} AS u" if uid is not None else ""  # (numpy's respondents: value_expr)
        jbot = f"SELECT {cs}{u}, count(*) AS n FROM src s {joins} GROUP BY ALL"
        if sq.engine == "duckdb":
            self._exec(f"CREATE OR REPLACE TABLE jbot AS {jbot}")  # in the work database file: spills
        else:
            self.engine_queries += 1
            sq._materialize("jbot", jbot)
        self.bottom_rows, total = (int(x) for x in sq._rows("SELECT count(*) AS r, coalesce(sum(n), 0) AS n FROM jbot")[0])
        if total != sq.n_rows:  # every row has a code for every attribute (the key tables are the distinct values)
            raise VerificationError(f"internal: the bottom frequency set counts {total} rows, the input has {sq.n_rows}")
        self.n_uid = int(sq._rows("SELECT count(DISTINCT u) AS n FROM jbot")[0][0]) if uid is not None else sq.n_rows

    def _lock(self):
        """The lock serializing this source's engine queries (one connection, one query at a time)."""
        import threading

        return self.__dict__.setdefault("_fs_lock", threading.RLock())

    def _exec(self, sql: str) -> None:
        self.engine_queries += 1
        self.sq._exec(sql)

    def _arrow(self, sql: str):
        self.engine_queries += 1
        return self.sq._arrow(sql)

    def _rows(self, sql: str) -> list:
        self.engine_queries += 1
        return self.sq._rows(sql)

    # ---- the table (the file's) --------------------------------------------------------------------
    @property
    def columns(self) -> list[str]:
        return self.sq.columns

    @property
    def n_rows(self) -> int:
        return self.sq.n_rows

    def first_missing_row(self, column: str):
        return self.sq.first_missing_row(column)

    def count_present(self, column: str) -> int:
        return self.sq.count_present(column)

    def distinct_values(self, column: str) -> pd.Series:
        return self.sq.distinct_values(column)

    def encode(self, qi: Sequence[str], encoders) -> list:
        if list(qi) != self.qi:
            raise InputError(f"internal: the joint source encodes {self.qi}, not {list(qi)}")
        self.encoders = dict(encoders)
        return self.dims

    # ---- frequency sets ------------------------------------------------------------------------------
    def bottom(self, uid: str | None = None, sensitive: str | None = None):
        """The bottom frequency set: fetched when it fits the driver, else an
        :class:`~tempanon.lattice.freqset.EngineTable` (frequency sets in the engine)."""
        from tempanon.lattice.freqset import EngineTable, Table, group_rows
        from tempanon.lattice.source import max_driver_rows

        if sensitive is not None or uid != self.uid:
            raise InputError("internal: the joint source serves respondent-level counts of its own uid only")
        limit = self.max_driver_rows if self.max_driver_rows is not None else max_driver_rows()
        self.estimate = {"distinct_rows_estimate": self.bottom_rows, "method": "exact (engine table jbot)",
                         "driver_limit_rows": int(limit)}  # fmt: skip
        if self.bottom_rows > limit:
            self.path = "frequency sets in engine"
            self.table = EngineTable(self, self.n_rows, self.n_uid if uid is not None else 0, False, self.bottom_rows)
            return self.table
        m = len(self.dims)
        tab = self._arrow(f"SELECT {', '.join(f'c{j}' for j in range(m))}{', u' if uid is not None else ''}, n FROM jbot")
        cols = [tab.column(f"c{j}").to_numpy().astype(np.int64) for j in range(m)]
        counts = tab.column("n").to_numpy().astype(np.int64)
        ucodes, n_u = self._dense_u(tab)
        fs = group_rows(tuple(range(m)), (0,) * m, cols, [d.n_base for d in self.dims], counts, ucodes, n_u, False)
        self.table = Table([np.ascontiguousarray(c) for c in fs.cols], fs.counts, fs.uid, n_u, self.n_rows, False)
        return self.table

    @staticmethod
    def _dense_u(tab):
        if "u" not in tab.column_names:
            return None, 0
        import pyarrow.compute as pc

        enc = pc.dictionary_encode(tab.column("u").combine_chunks())
        return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), len(enc.dictionary)

    def _levels_sql(self, attrs, levels, *, uid: bool = True, prefix: str = "g") -> tuple[list[str], str]:
        sel = [f"m{j}.l{v} AS {prefix}{p}" for p, (j, v) in enumerate(zip(attrs, levels))]
        if uid and self.uid is not None:
            sel.append("b.u AS x")
        joins = " ".join(f"JOIN jlvl{j} m{j} ON b.c{j} = m{j}.c" for j in sorted(set(attrs)))
        return sel, joins

    def engine_frequency_set(self, attrs: tuple, levels: tuple):
        """The frequency set of the node (``attrs`` at ``levels``) as a ``GROUP BY`` over ``jbot``
        (or read from the iteration's ``GROUPING SETS`` result), respondents as the uid digit."""
        import threading

        with self.__dict__.setdefault("_fs_lock", threading.RLock()):
            return self._engine_frequency_set(tuple(attrs), tuple(levels))

    def _engine_frequency_set(self, attrs: tuple, levels: tuple):
        from tempanon.lattice.freqset import FrequencySet, group_rows

        key = (attrs, levels)
        if key in self._fs_cache:
            return self._fs_cache[key]
        gid = self._batch.pop(key, None)
        x = ["x"] if self.uid is not None else []
        if gid is not None:
            rows = self._batch_rows.get(gid, 0)
            if rows > self.fetch_limit():
                # more (class, respondent) rows than the driver should hold: the set stays in the
                # engine, which checks it and rolls it up (JointEngineFrequencySet)
                sel = [f"{self._batch_cols[(j, v)]} AS b{p}" for p, (j, v) in enumerate(zip(attrs, levels))]
                return self._engine_root(f"SELECT {', '.join([*sel, *(['x AS u'] if x else []), 'n'])} FROM "
                                         f"{self._batch_table} WHERE gid = {int(gid)}", attrs, levels, rows)  # fmt: skip
            sel = [f"{self._batch_cols[(j, v)]} AS g{p}" for p, (j, v) in enumerate(zip(attrs, levels))]
            sql = f"SELECT {', '.join([*sel, *x, 'n'])} FROM {self._batch_table} WHERE gid = {int(gid)}"
        else:
            sel, joins = self._levels_sql(attrs, levels)
            sql = (f"SELECT {', '.join(sel)}, CAST(sum(n) AS BIGINT) AS n FROM jbot b {joins} GROUP BY ALL" if sel
                   else "SELECT CAST(sum(n) AS BIGINT) AS n FROM jbot")  # fmt: skip
            if self.path == "frequency sets in engine" and len(attrs) == len(self.dims):
                # a node of the full lattice outside the iteration's job (the selection's and the
                # result's loss and discernibility): its classes with their respondents, not its pairs
                return self._cache_full(key, self._class_set(levels))
            if self.path == "frequency sets in engine" and attrs:
                # a set outside the iteration's job (e.g. selection by loss): counted in the engine
                # first, kept there when it is above the fetch limit
                self._n_roots = getattr(self, "_n_roots", 0) + 1
                name = f"jfs_one{self._n_roots}"
                self.engine_queries += 1
                self.sq._materialize(name, sql)
                rows = int(self._rows(f"SELECT count(*) AS c FROM {name}")[0][0])
                if rows > self.fetch_limit():
                    self.__dict__.setdefault("_root_tables", []).append(name)
                    self.engine_sets = getattr(self, "engine_sets", 0) + 1
                    gsel = [f"g{p} AS b{p}" for p in range(len(attrs))]
                    return JointEngineFrequencySet(self, name, levels, attrs, levels, self._cards(attrs, levels), rows,
                                                   columns=", ".join([*gsel, *(["x AS u"] if x else []), "n"]))  # fmt: skip
                try:
                    tab = self._arrow(f"SELECT * FROM {name}")
                finally:
                    self.sq._drop_materialized(name)
                self._note_fetch(tab.num_rows)
                return self._cache_full(key, self._frequency_set_of(tab, attrs, levels))
        tab = self._arrow(sql)
        self._note_fetch(tab.num_rows)
        return self._cache_full(key, self._frequency_set_of(tab, attrs, levels))

    def _class_set(self, levels: tuple) -> "JointClassSet":
        """The classes of the full-lattice node at ``levels`` (one row per class: codes, tuples,
        distinct respondents; counted in the engine, ordered as the driver's rows), as a
        :class:`JointClassSet`."""
        levels = tuple(int(v) for v in levels)
        attrs = tuple(range(len(self.dims)))
        gs = ", ".join(f"g{p}" for p in attrs)
        tab = self._arrow(f"SELECT {gs}, CAST(n AS BIGINT) AS n, CAST(r AS BIGINT) AS r FROM ({self._classes_sql(levels)}) c ORDER BY {gs}")
        self.class_sets = getattr(self, "class_sets", 0) + 1
        self.largest_class_set = max(getattr(self, "largest_class_set", 0), tab.num_rows)
        counts = tab.column("n").to_numpy().astype(np.int64)
        fs = JointClassSet(attrs, levels, self._cards(attrs, levels), counts, None)
        fs._cols = [tab.column(f"g{p}").to_numpy().astype(np.int64) for p in attrs]
        fs._sizes = (tab.column("r").to_numpy().astype(np.int64), counts, np.arange(len(counts)))
        fs.source = self
        return fs

    def _cards(self, attrs: tuple, levels: tuple) -> tuple:
        return tuple(max(int(self.dims[j].cardinality(v)), 1) for j, v in zip(attrs, levels))

    def _frequency_set_of(self, tab, attrs: tuple, levels: tuple):
        """A fetched set (columns ``g0..``, ``x`` the respondent when there is one, ``n``) on the driver."""
        from tempanon.lattice.freqset import FrequencySet, group_rows

        cards = list(self._cards(attrs, levels))
        cols = [tab.column(f"g{p}").to_numpy().astype(np.int64) for p in range(len(attrs))]
        counts = tab.column("n").to_numpy().astype(np.int64)
        if self.uid is None:
            fs = FrequencySet(attrs, levels, tuple(cards), counts, None)
            fs._cols = cols
        else:
            tab = tab.rename_columns([("u" if c == "x" else c) for c in tab.column_names])
            ucodes, n_u = self._dense_u(tab)
            fs = group_rows(attrs, levels, cols, cards, counts, ucodes, n_u, False)
        return fs

    def _cache_full(self, key, fs):
        attrs = key[0]
        if len(attrs) == len(self.dims):
            while len(self._fs_cache) >= 4:
                self._fs_cache.pop(next(iter(self._fs_cache)))
            self._fs_cache[key] = fs
        return fs

    def prepare_frequency_sets(self, nodes) -> None:
        """The frequency sets of one Incognito iteration in one engine job over ``jbot``: ``GROUP BY
        GROUPING SETS`` of the level codes (and the respondent), kept in the engine and read back
        node by node (as :meth:`~tempanon.lattice.source_duckdb.SQLSource.prepare_frequency_sets`
        does over the file)."""
        import threading

        with self.__dict__.setdefault("_fs_lock", threading.RLock()):
            self._finish_batch()
            todo = sorted({(tuple(a), tuple(v)) for a, v in nodes if a and (tuple(a), tuple(v)) not in self._fs_cache})
            if not todo:
                return
            pairs = list(dict.fromkeys((j, v) for a, lv in todo for j, v in zip(a, lv)))
            exprs = {jv: f"m{jv[0]}.l{jv[1]}" for jv in pairs}
            names = {jv: f"g_{jv[0]}_{jv[1]}" for jv in pairs}
            joins = " ".join(f"JOIN jlvl{j} m{j} ON b.c{j} = m{j}.c" for j in sorted({j for j, _ in pairs}))
            x = ["b.u"] if self.uid is not None else []
            sets = ", ".join("(" + ", ".join([*x, *(exprs[jv] for jv in zip(a, lv))]) + ")" for a, lv in todo)
            sel = [f"{exprs[jv]} AS {names[jv]}" for jv in pairs] + ([f"{x[0]} AS x"] if x else [])
            sel.append(f"{self.sq.grouping_fn}({', '.join([*x, *(exprs[jv] for jv in pairs)])}) AS gid")
            self.engine_queries += 1
            self.sq._materialize("jfs_batch", f"SELECT {', '.join(sel)}, CAST(sum(n) AS BIGINT) AS n FROM jbot b {joins} "
                                              f"GROUP BY GROUPING SETS ({sets})")  # fmt: skip
            width = len(pairs)
            self._batch = {(a, lv): sum(1 << (width - 1 - i) for i, jv in enumerate(pairs) if jv not in set(zip(a, lv)))
                           for a, lv in todo}  # fmt: skip
            self._batch_cols, self._batch_table = names, "jfs_batch"
            self.engine_jobs = getattr(self, "engine_jobs", 0) + 1
            # (class, respondent) rows of every prepared set: the size each set is fetched or kept
            # in the engine by (engine_frequency_set)
            counts = self._arrow("SELECT gid, count(*) AS n FROM jfs_batch GROUP BY gid")
            self._batch_rows = dict(zip(counts.column("gid").to_pylist(), counts.column("n").to_pylist()))

    def finish_frequency_sets(self) -> None:
        import threading

        with self.__dict__.setdefault("_fs_lock", threading.RLock()):
            self._finish_batch()

    def _finish_batch(self) -> None:
        for name in self.__dict__.get("_root_tables", []):  # before the batch (a Spark view reads it)
            self.sq._drop_materialized(name)
        if self._batch_table:
            self.sq._drop_materialized(self._batch_table)
        self._batch, self._batch_table, self._batch_rows, self._root_tables = {}, None, {}, []

    # ---- frequency sets kept in the engine ---------------------------------------------------------
    def fetch_limit(self) -> int:
        """(Class, respondent) rows above which a frequency set of the engine path stays in the
        engine (:func:`~tempanon.lattice.source_duckdb.max_fetch_rows`, ``TEMPANON_MAX_FETCH_ROWS``)."""
        from tempanon.lattice.source_duckdb import max_fetch_rows

        return self.max_fetch_rows if self.max_fetch_rows is not None else max_fetch_rows()

    def _note_fetch(self, rows: int) -> None:
        self.fetched_sets = getattr(self, "fetched_sets", 0) + 1
        self.largest_fetch = max(getattr(self, "largest_fetch", 0), int(rows))

    def _engine_root(self, sql: str, attrs: tuple, levels: tuple, rows: int) -> "JointEngineFrequencySet":
        """A prepared set too large for the driver, copied out of the iteration's job result into its
        own table ``(b0.., u, n)`` (its checks and rollups scan only its rows); dropped with the
        batch at the end of the iteration."""
        self._n_roots = getattr(self, "_n_roots", 0) + 1
        name = f"jfs_root{self._n_roots}"  # never reused by this source
        self.sq._materialize(name, sql)
        self.__dict__.setdefault("_root_tables", []).append(name)
        self.engine_sets = getattr(self, "engine_sets", 0) + 1
        return JointEngineFrequencySet(self, name, levels, attrs, levels, self._cards(attrs, levels), rows)

    def _up_map(self, j: int, old: int, new: int) -> str:
        """A registered table ``(c, u)`` mapping attribute ``j``'s codes at level ``old`` to ``new``."""
        import pyarrow as pa

        name = f"jup_{j}_{old}_{new}"
        done = self.__dict__.setdefault("_up_maps", set())
        if name not in done:
            up = np.asarray(self.dims[j].up(old, new), dtype=np.int64)
            it = pa.int32() if self.dims[j].n_base < 2**31 else pa.int64()
            self.sq._register(name, pa.table({"c": pa.array(np.arange(len(up)), it), "u": pa.array(up, it)}))
            done.add(name)
        return name

    def base_frequencies(self) -> list[np.ndarray]:
        """Tuples per base code of every attribute (selection by loss bounds its candidates with them)."""
        out = []
        for j, d in enumerate(self.dims):
            tab = self._arrow(f"SELECT c{j} AS c, CAST(sum(n) AS BIGINT) AS n FROM jbot GROUP BY ALL")
            out.append(np.bincount(tab.column("c").to_numpy().astype(np.int64), weights=tab.column("n").to_numpy(),
                                   minlength=d.n_base).astype(np.int64))  # fmt: skip
        return out

    # ---- the joint search's metrics and release -------------------------------------------------------
    def _classes_sql(self, node: Sequence[int]) -> str:
        """One row per joint class at ``node``: level codes ``g0..``, tuples ``n``, respondents ``r``."""
        attrs = tuple(range(len(self.dims)))
        sel, joins = self._levels_sql(attrs, tuple(node), uid=False)
        gs = ", ".join(f"g{p}" for p in attrs)
        if self.uid is None:
            return f"SELECT {', '.join(sel)}, sum(n) AS n, sum(n) AS r FROM jbot b {joins} GROUP BY ALL"
        return (f"SELECT {gs}, sum(n) AS n, count(*) AS r FROM (SELECT {', '.join(sel)}, b.u, sum(n) AS n FROM jbot b "
                f"{joins} GROUP BY ALL) x GROUP BY {gs}")  # fmt: skip

    def node_metrics(self, node: Sequence[int], k: int) -> dict:
        """:func:`tempanon.temporal.joint.node_metrics`' keys for the joint node: respondents per
        class (distinct ``u``), tuples below ``k``, gen_m / gen_s over the kept classes; by SQL when
        the bottom set stays in the engine, from its rollup on the driver otherwise."""
        from tempanon.lattice.freqset import EngineTable

        k = int(k)
        if not isinstance(self.table, EngineTable):
            _codes, resp, tuples = self.frequency_set(tuple(node)).classes()
            small = resp < k
            kept = resp[~small]
            return {"suppressed": int(tuples[small].sum()), "gen_m": int(kept.min()) if len(kept) else 0,
                    "gen_s": int(kept.sum()), "gen_s_all": int(resp.sum()),
                    "min_respondents": int(resp.min()) if len(resp) else 0, "classes": int(len(resp))}  # fmt: skip
        row = self._arrow(
            f"SELECT coalesce(sum(CASE WHEN r < {k} THEN n ELSE 0 END), 0) AS suppressed, "
            f"min(CASE WHEN r >= {k} THEN r END) AS gen_m, coalesce(sum(CASE WHEN r >= {k} THEN r ELSE 0 END), 0) AS gen_s, "
            f"coalesce(sum(r), 0) AS gen_s_all, min(r) AS min_r, count(*) AS classes FROM ({self._classes_sql(node)}) c"
        ).to_pylist()[0]  # fmt: skip
        return {"suppressed": int(row["suppressed"]), "gen_m": int(row["gen_m"] or 0), "gen_s": int(row["gen_s"]),
                "gen_s_all": int(row["gen_s_all"]), "min_respondents": int(row["min_r"] or 0),
                "classes": int(row["classes"])}  # fmt: skip

    def small_classes(self, node: Sequence[int], k: int) -> np.ndarray:
        """Level codes (one row per class, one column per attribute) of the classes at ``node``
        with fewer than ``k`` respondents: the classes the release suppresses."""
        from tempanon.lattice.freqset import EngineTable

        m = len(self.dims)
        if not isinstance(self.table, EngineTable):
            codes, resp, _t = self.frequency_set(tuple(node)).classes()
            return np.asarray(codes, dtype=np.int64)[resp < int(k)].reshape(-1, m)
        tab = self._arrow(f"SELECT {', '.join(f'g{p}' for p in range(m))} FROM ({self._classes_sql(node)}) c WHERE r < {int(k)}")
        return np.stack([tab.column(f"g{p}").to_numpy().astype(np.int64) for p in range(m)], axis=1).reshape(-1, m)

    def release(self, node, k, *, uid, drop, out=None, verify=True, max_suppressed=0, l=None, sensitive=None):
        """What :func:`tempanon.kanon.kanonymize` asks of a source after the search: the counts only
        (the joint path writes and verifies its own release, by DuckDB, from the file)."""
        from tempanon.lattice.source import Release

        m = self.node_metrics(node, k)
        return Release(rows_out=self.n_rows - m["suppressed"], min_class_size=m["gen_m"])

    def describe(self) -> dict:
        out = super().describe()
        out.update(engine_queries=self.engine_queries, bottom_rows=self.bottom_rows,
                   **({"grouping_sets_jobs": self.engine_jobs} if getattr(self, "engine_jobs", 0) else {}),
                   **({"memory_limit": self.memory_limit} if self.memory_limit else {}))  # fmt: skip
        if self.path == "frequency sets in engine":
            # sets fetched to the driver as (class, respondent) rows, and those above the fetch limit
            # that stayed in the engine (checked and rolled up there: engine_checks queries)
            # (the nodes scored after the search come back as their classes: class_sets_fetched)
            out.update(fetch_limit_rows=self.fetch_limit(), sets_fetched=getattr(self, "fetched_sets", 0),
                       largest_fetched_rows=getattr(self, "largest_fetch", 0),
                       sets_kept_in_engine=getattr(self, "engine_sets", 0),
                       engine_rollups=getattr(self, "engine_rollups", 0),
                       engine_checks=getattr(self, "engine_checks", 0),
                       class_sets_fetched=getattr(self, "class_sets", 0),
                       largest_class_set_rows=getattr(self, "largest_class_set", 0))  # fmt: skip
        return out

    def close(self) -> None:
        self._finish_batch()


class JointClassSet(FrequencySet):
    """The classes of a full-lattice node of the joint search, one row per class (codes, tuples
    ``counts``, distinct respondents as the class sizes), as the engine path serves the nodes the
    selection and the result score (loss, discernibility: functions of the classes only). Not
    (class, respondent) rows: a rollup asks the engine again (:meth:`engine_rollup`), never rolls
    these rows up, so respondents stay exact."""

    source = None

    def is_anonymous(self, k: int, max_suppressed: int = 0, l: int | None = None) -> bool:
        if l is not None:
            raise InputError("internal: the joint search has no l-diversity")
        sizes, rows, _ = self._classes()
        small = sizes < k
        return not small.any() or (max_suppressed > 0 and int(rows[small].sum()) <= max_suppressed)

    def engine_rollup(self, dims, levels):
        return self.source._class_set(tuple(levels))


class JointEngineFrequencySet(EngineFrequencySet):
    """A frequency set of the joint search too large for the driver, kept in the engine (the joint
    counterpart of :class:`~tempanon.lattice.source_duckdb.EngineFrequencySet`).

    Its rows are those of a table ``base`` (columns ``b0..``, ``u`` the respondent when there is one,
    ``n``): the (class, respondent) pairs of a frequency set of the same attributes at
    ``base_levels``, i.e. with the respondent digit kept. At ``levels`` (at least as general) it is
    that table rolled up in the engine (Rollup Property, Incognito Section 2): ``GROUP BY`` the codes
    mapped up the dimensions by join with small code tables **and** ``u``, so a class's distinct
    respondents stay exact at every level (Definition 2). The search's check asks the engine for the
    classes with fewer than k respondents and their tuples only (:meth:`is_anonymous`); a rollup is
    another engine set (:meth:`engine_rollup`) until one is small enough to fetch, when it is
    fetched once (as (class, respondent) rows) and rolled up on the driver. Anything else
    (``counts``, ``cols``, classes) fetches it."""

    def __init__(self, source: DuckDBJointFileSource, base: str, base_levels: tuple, attrs: tuple, levels: tuple,
                 cards: tuple, rows: int | None = None, columns: str | None = None):  # fmt: skip
        super().__init__(source, base, base_levels, attrs, levels, cards, rows)
        # (``_rows``: (class, respondent) rows at ``levels``; classes without a respondent column)
        # ``base`` as (b0.., u, n): a view of a table with other column names (a set outside a job)
        self._from = f"(SELECT {columns} FROM {base})" if columns else base

    def __repr__(self) -> str:
        return f"JointEngineFrequencySet(attrs={self.attrs}, levels={self.levels}, rows={self._rows}, base={self.base})"

    _sum = "CAST(sum(t.n) AS BIGINT)"

    def _extra_keys(self) -> list[tuple[str, str]]:
        """The respondent ``x`` grouped by too: the set's rows are (class, respondent) pairs."""
        return [("t.u AS x", "t.u")] if self.source.uid is not None else []

    def _small_classes(self, k: int) -> tuple[int, int]:
        """(classes with fewer than ``k`` respondents, their tuples), counted by the engine; sets the
        row count. Respondents of a class: its (class, respondent) rows; tuples: their ``n``."""
        k = int(k)
        if k not in self._small:
            gs = ", ".join(f"g{p}" for p in range(len(self.attrs)))
            if self.source.uid is None:
                classes = f"SELECT n AS r, n FROM ({self._grouped()}) y"
            elif gs:
                classes = f"SELECT count(*) AS r, sum(n) AS n FROM ({self._grouped()}) y GROUP BY {gs}"
            else:
                classes = f"SELECT count(*) AS r, sum(n) AS n FROM ({self._grouped()}) y"
            with self.source._lock():
                row = self.source._rows(
                    f"SELECT coalesce(sum(CASE WHEN r > 0 THEN 1 END), 0) AS c, coalesce(sum(r), 0) AS p, "
                    f"count(CASE WHEN r < {k} THEN 1 END) AS s, coalesce(sum(CASE WHEN r < {k} THEN n END), 0) AS t "
                    f"FROM ({classes}) x"
                )[0]  # fmt: skip
            self.source.engine_checks = getattr(self.source, "engine_checks", 0) + 1
            self._rows = int(row[0]) if self.source.uid is None else int(row[1])
            self._small[k] = (int(row[2]), int(row[3]))
        return self._small[k]

    def _rolled(self, levels: tuple, cards: tuple) -> "JointEngineFrequencySet":
        out = JointEngineFrequencySet(self.source, self.base, self.base_levels, self.attrs, levels, cards)
        out._from = self._from
        return out

    def _rows_of(self, tab, data) -> int:
        return tab.num_rows  # (class, respondent) rows

    @property
    def uid(self):  # type: ignore[override]
        return self.fetch().uid

    def classes(self):
        return self.fetch().classes()


def class_key(q: np.ndarray, h: np.ndarray) -> np.ndarray:
    """An int64 per row ordered like (q, h) lexicographically (the order of the numpy path's
    classes; equal exactly when both are): the within-class shuffle depends only on that order."""
    if len(q) == 0:
        return np.zeros(0, dtype=np.int64)
    from tempanon.temporal.least import MISSING_KEY

    miss = h == MISSING_KEY
    hv = h[~miss]
    hmin = int(hv.min()) if len(hv) else 0
    hh = np.where(miss, 0, h - hmin + 1)
    span = int(hh.max()) + 1
    qmin = int(q.min())
    if (int(q.max()) - qmin + 1) * span < 2**62:
        return (q - qmin) * span + hh
    return np.unique(np.stack([q, hh]), axis=1, return_inverse=True)[1].ravel().astype(np.int64)


def resolve_time_engine(engine: str, memory_limit: str | None = None, spark_master: str | None = None) -> str:
    """``engine`` for a timestamped search over an in-memory table: auto is numpy, or DuckDB when a
    ``memory_limit`` is given (checked against the engine: :mod:`tempanon.lattice.memory`). Every
    engine runs both searches, time only and joint (:class:`DuckDBJointSource`,
    :class:`~tempanon.lattice.source_temporal_spark.SparkJointSource`)."""
    from tempanon.lattice.memory import check_memory_limit
    from tempanon.lattice.source import ENGINES

    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    if engine == "auto":
        engine = "numpy" if memory_limit is None else "duckdb"
    check_memory_limit(engine, memory_limit, spark_master=spark_master)
    return engine


def time_source(engine: str, q: np.ndarray, instants: np.ndarray, missing: np.ndarray, uid: np.ndarray, *,
                memory_limit: str | None = None, spark_master: str | None = None):  # fmt: skip
    """Procedure 2's source for ``engine`` (``"duckdb"`` or ``"spark"``) over the rows' codes."""
    if engine == "spark":
        from tempanon.lattice.source_temporal_spark import SparkTimeSource

        return SparkTimeSource(q, instants, missing, uid, master=spark_master, memory_limit=memory_limit)
    return DuckDBTimeSource(q, instants, missing, uid, memory_limit=memory_limit)


def joint_source(engine: str, df: pd.DataFrame, *, memory_limit: str | None = None, spark_master: str | None = None):
    """The joint search's bottom-frequency-set source for ``engine`` (``"duckdb"`` or ``"spark"``)."""
    if engine == "spark":
        from tempanon.lattice.source_temporal_spark import SparkJointSource

        return SparkJointSource(df, master=spark_master, memory_limit=memory_limit)
    return DuckDBJointSource(df, memory_limit=memory_limit)


__all__: Sequence[str] = ["DuckDBJointFileSource", "DuckDBJointSource", "DuckDBTimeSource", "class_key", "joint_source",
                          "resolve_time_engine", "time_source"]
