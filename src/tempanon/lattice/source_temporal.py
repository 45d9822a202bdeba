"""The time-granularity search served by DuckDB (issue 15; Mascetti et al., TIME 2006, Section 4).

Procedure 2 of the timestamped search (:func:`tempanon.temporal.least.check_granularity`) needs,
for one granularity ``H``, the frequency set of the relation generalized by ``H``: the classes
``(quasi-identifier values, granule of H)`` with their tuples and their *distinct respondents*
(Definition 2, respondent-level k). As in Incognito's DB2 implementation (LeFevre et al., SIGMOD
2005, Section 3: frequency sets as ``GROUP BY`` over dimension tables), time is a dimension:

* the engine holds the relation ``rel(i, q, t, u)``: row number, quasi-identifier combination code,
  instant (int64 seconds, NULL when missing) and respondent code;
* the driver asks the engine for the **distinct instants** once, computes each granularity's
  granule index of those distinct values with the same numpy granularity code the numpy path uses
  (:meth:`Granularity.index`: calendars, time zones, holidays and business days stay identical),
  and ships them as the dimension table ``tdim(t, g)``;
* the engine computes the frequency set ``GROUP BY q, g`` with the distinct respondents of each
  class (``GROUP BY q, g, u`` then ``count(*)``) and returns only the aggregates Procedure 2 needs
  (tuples below k, gen_m, gen_s, classes, smallest class, sum over all classes), so the driver
  never sorts the relation (the numpy path sorts it twice, :func:`~tempanon.temporal.least.prepare`).

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

from tempanon.errors import InputError
from tempanon.lattice.source import NumpySource
from tempanon.temporal.granularity import GAP, Granularity
from tempanon.temporal.least import Check


class DuckDBTimeSource:
    """The relation of a timestamped search held by DuckDB; :meth:`check` is Procedure 2."""

    engine = "duckdb"

    def __init__(self, q: np.ndarray, instants: np.ndarray, missing: np.ndarray, uid: np.ndarray, *,
                 memory_limit: str | None = None, threads: int | None = None):  # fmt: skip
        import pyarrow as pa

        from tempanon.lattice.source_duckdb import open_duckdb

        self.con, self._tmpdir = open_duckdb(memory_limit=memory_limit, threads=threads)
        self.memory_limit = memory_limit
        self.q = np.ascontiguousarray(q, dtype=np.int64)
        self.instants = np.asarray(instants, dtype=np.int64)
        self.missing = np.asarray(missing, dtype=bool)
        n = len(self.q)
        self.n = n
        self._rel = pa.table({
            "i": pa.array(np.arange(n, dtype=np.int64)),
            "q": pa.array(self.q),
            "t": pa.array(self.instants, mask=self.missing),
            "u": pa.array(np.ascontiguousarray(uid, dtype=np.int64)),
        })  # fmt: skip
        self.con.register("rel", self._rel)
        self._distinct: np.ndarray | None = None
        self.engine_queries = 0
        self._dim_of: str | None = None
        self._owns = True
        self._gap_error = None

    @classmethod
    def on_relation(cls, con, n: int, distinct_instants: np.ndarray, *, memory_limit: str | None = None,
                    gap_error=None) -> "DuckDBTimeSource":  # fmt: skip
        """A source over a relation ``rel(q, t, u)`` already in ``con`` (the out-of-core path,
        :mod:`tempanon.temporal.outofcore`: built from a file read in place); ``distinct_instants``
        its sorted distinct non-missing ``t``; ``gap_error(g, instants)`` raises the error for
        instants in no granule of ``g``. The connection stays open on :meth:`close`."""
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
        """The distinct non-missing instants, computed by the engine (once)."""
        if self._distinct is None:
            tab = self._arrow("SELECT DISTINCT t FROM rel WHERE t IS NOT NULL")
            self._distinct = np.sort(tab.column("t").to_numpy().astype(np.int64))
        return self._distinct

    def _arrow(self, sql: str):
        from tempanon.lattice.source_duckdb import _query_arrow

        self.engine_queries += 1
        return _query_arrow(self.con, sql)

    def _dimension(self, g: Granularity) -> None:
        """Register ``tdim(t, g)``: the granule of ``g`` of every distinct instant (driver numpy)."""
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
        self._dim = pa.table({"t": pa.array(t), "g": pa.array(h)})
        self.con.register("tdim", self._dim)
        self._dim_of = g.name

    _CLASSES = ("SELECT r.q, d.g, r.u, count(*) AS n FROM rel r LEFT JOIN tdim d ON r.t = d.t "
                "GROUP BY r.q, d.g, r.u")  # fmt: skip

    def check(self, g: Granularity, k: int, max_suppressed: int = 0) -> Check:
        """Procedure 2 for ``g`` (same :class:`Check` as :func:`check_granularity`): one
        ``GROUP BY`` in the engine, aggregates fetched."""
        if self.n == 0:
            return Check(g.name, True, 0, 0, 0, 0, 0)
        self._dimension(g)
        k = int(k)
        sql = (
            f"SELECT coalesce(sum(CASE WHEN r < {k} THEN n ELSE 0 END), 0) AS suppressed, "
            f"min(CASE WHEN r >= {k} THEN r END) AS gen_m, coalesce(sum(CASE WHEN r >= {k} THEN r ELSE 0 END), 0) AS gen_s, "
            f"count(*) AS classes, min(r) AS min_r, sum(r) AS all_r "
            f"FROM (SELECT q, g, sum(n) AS n, count(*) AS r FROM ({self._CLASSES}) x GROUP BY q, g) c"
        )
        row = self._arrow(sql).to_pylist()[0]
        suppressed = int(row["suppressed"])
        return Check(g.name, suppressed <= max_suppressed, suppressed, int(row["gen_m"] or 0), int(row["gen_s"]),
                     int(row["classes"]), int(row["min_r"]), self.n, int(row["all_r"]))  # fmt: skip

    def suppressed_rows(self, g: Granularity, k: int) -> np.ndarray:
        """Row numbers of the tuples in classes of ``g`` with fewer than ``k`` respondents."""
        self._dimension(g)
        sql = (
            f"WITH c AS (SELECT q, g FROM ({self._CLASSES}) x GROUP BY q, g HAVING count(*) < {int(k)}) "
            "SELECT r.i FROM rel r LEFT JOIN tdim d ON r.t = d.t SEMI JOIN c ON r.q = c.q AND d.g IS NOT DISTINCT FROM c.g"
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
        from tempanon.lattice.source_duckdb import _query_arrow

        if sensitive is not None:  # not used by the joint search
            return super().bottom(uid=uid, sensitive=sensitive)
        cols = {f"c{j}": pa.array(np.ascontiguousarray(c, dtype=np.int64)) for j, c in enumerate(self.base_codes)}
        n_uid = 0
        if uid is not None:
            u = pd.factorize(self.data[uid])[0].astype(np.int64)  # missing ids were refused before
            n_uid = int(u.max()) + 1 if len(u) else 0
            cols["u"] = pa.array(u)
        self.con.register("joint_rel", pa.table(cols))
        keys = ", ".join(cols)
        tab = _query_arrow(self.con, f"SELECT {keys}, count(*) AS n FROM joint_rel GROUP BY {keys}")
        self.con.unregister("joint_rel")
        self.engine_queries += 1
        codes = [tab.column(f"c{j}").to_numpy().astype(np.int64) for j in range(len(self.dims))]
        counts = tab.column("n").to_numpy().astype(np.int64)
        extra = tab.column("u").to_numpy().astype(np.int64) if uid is not None else None
        fs = group_rows(tuple(range(len(self.dims))), (0,) * len(self.dims), codes, [d.n_base for d in self.dims],
                        counts, extra, n_uid, False)  # fmt: skip
        self.table = Table([np.ascontiguousarray(c) for c in fs.cols], fs.counts, fs.uid, n_uid, len(self.data), False)
        return self.table

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


def resolve_time_engine(engine: str, *, joint: bool) -> str:
    """``engine`` for a timestamped search over an in-memory table: auto is numpy; spark is
    refused (not supported for timestamped yet). ``joint`` (time with hierarchies) runs on both
    numpy and DuckDB (:class:`DuckDBJointSource`)."""
    from tempanon.lattice.source import ENGINES

    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")
    if engine == "spark":
        raise InputError("--engine spark is not supported for timestamped data yet; use --engine duckdb or numpy")
    return "numpy" if engine == "auto" else engine


__all__: Sequence[str] = ["DuckDBJointSource", "DuckDBTimeSource", "class_key", "resolve_time_engine"]
