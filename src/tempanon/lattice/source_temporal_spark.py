"""The time-granularity search served by Spark (issue 15; optional extra ``pip install 'tempanon[spark]'``).

The same SQL as the DuckDB sources of :mod:`tempanon.lattice.source_temporal`, run by Spark SQL
(Mascetti et al., TIME 2006, Section 4; frequency sets as ``GROUP BY`` over dimension tables as in
LeFevre et al., SIGMOD 2005, Section 3):

* :class:`SparkTimeSource`: Procedure 2 of every granularity as one join of the relation
  ``rel(i, q, ti, tpi, first)`` with the granule dimension ``gdim(ti, g, s)`` and a ``GROUP BY q, g``
  counting distinct respondents per class (Definition 2); only aggregates come back to the driver.
* :class:`SparkJointSource`: the joint search's bottom frequency set (distinct rows of base codes and
  respondent, with counts) as one ``GROUP BY`` in Spark; rollups, the release and its verification on
  the driver, as for DuckDB.

The rows are parsed and encoded on the driver (timestamps, calendars and time zones by the same numpy
code as the other engines, so the granules are identical; the session's own time zone plays no part:
every Spark call runs in UTC, the session's value restored after,
:func:`~tempanon.lattice.source_spark.utc_session`); the relation of codes goes to Spark as
Arrow (``createDataFrame`` of a ``pyarrow.Table``) and results come back as Arrow (``toArrow``), no
pandas conversion. Results are identical to the numpy path (tests/engine/test_engine_temporal.py,
``spark`` marker).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from tempanon.lattice.source import NumpySource
from tempanon.lattice.source_temporal import DuckDBJointSource, DuckDBTimeSource

PATH = "rows encoded on the driver, frequency sets in engine"


class _SparkTables:
    """Spark's side of the sources' engine hooks (temporary views in one session)."""

    spark: Any
    engine_queries: int

    def _utc(self):
        """Every Spark call runs in UTC on the session, the caller's value restored after
        (:func:`~tempanon.lattice.source_spark.utc_session`)."""
        from tempanon.lattice.source_spark import utc_session

        return utc_session(self.spark)

    def _arrow(self, sql: str):
        self.engine_queries += 1
        with self._utc():
            return self.spark.sql(sql).toArrow()

    def _exec(self, sql: str) -> None:
        self.engine_queries += 1
        with self._utc():
            self.spark.sql(sql)

    def _register(self, name: str, table) -> None:
        with self._utc():
            self.spark.createDataFrame(table).createOrReplaceTempView(name)
        self._views = [*getattr(self, "_views", []), name]

    def _unregister(self, name: str) -> None:
        with self._utc():
            self.spark.catalog.dropTempView(name)

    def _drop_views(self) -> None:
        for name in reversed(getattr(self, "_views", [])):  # a view before the views it reads
            try:
                with self._utc():
                    self.spark.sql(f"UNCACHE TABLE IF EXISTS {name}")
                    self.spark.catalog.dropTempView(name)
            except Exception:  # pragma: no cover - a stopped session: nothing left to drop
                pass
        self._views = []

    def close(self) -> None:
        """Drop this source's views and cached tables (the session stays: it may be the caller's)."""
        self._drop_views()


def _session(spark: Any, master: str | None, memory_limit: str | None = None) -> Any:
    from tempanon.lattice.source_spark import local_session

    return spark if spark is not None else local_session(master, memory_limit)


class SparkTimeSource(_SparkTables, DuckDBTimeSource):
    """Procedure 2 in Spark SQL (see the module doc and :class:`DuckDBTimeSource`, whose queries it
    runs); ``master`` a Spark master URL (default ``local[2]``) or ``spark`` an existing session."""

    engine = "spark"
    SEMI_JOIN = "LEFT SEMI JOIN"

    def __init__(self, q, instants, missing, uid, *, master: str | None = None, spark: Any = None,
                 memory_limit: str | None = None):
        self.spark = _session(spark, master, memory_limit)
        self.con, self._tmpdir, self.memory_limit = None, None, None
        self._gap_error = None
        self._owns = True
        self._prepare(q, instants, missing, uid)

    @classmethod
    def on_relation(cls, spark: Any, n: int, distinct_instants, *, gap_error=None) -> "SparkTimeSource":
        """A source over a relation ``rel(q, ti, tpi, first)`` already in the ``spark`` session (the
        file path, :func:`tempanon.temporal.outofcore.anonymize_timestamped_file` with
        ``engine="spark"``); ``rel`` stays (its owner drops it)."""
        self = super().on_relation(None, n, distinct_instants, gap_error=gap_error)
        self.spark = spark
        self._views = []
        return self

    def _materialize(self, name: str, sql: str) -> None:
        # CACHE TABLE ... AS is eager: the window (lag, row_number) runs once, its rows stay cached
        self._exec(f"CACHE TABLE {name} AS {sql}")
        self._views.append(name)

    def _unregister(self, name: str) -> None:
        pass  # the cached ``rel`` is a view over ``rel0`` (re-analysed by name): both dropped on close

    def describe(self) -> dict:
        return {**super().describe(), "path": PATH}


class SparkJointSource(_SparkTables, DuckDBJointSource):
    """The joint search's bottom frequency set as one ``GROUP BY`` in Spark SQL (see
    :class:`DuckDBJointSource`); ``master`` a Spark master URL (default ``local[2]``) or ``spark`` an
    existing session."""

    engine = "spark"
    path = "bottom frequency set in engine, rollups on driver (rows encoded on the driver)"

    def __init__(self, data: pd.DataFrame, *, master: str | None = None, spark: Any = None,
                 memory_limit: str | None = None):
        NumpySource.__init__(self, data)
        self.spark = _session(spark, master, memory_limit)
        self.con, self._tmpdir, self.memory_limit = None, None, None
        self.engine_queries = 0


__all__ = ["SparkJointSource", "SparkTimeSource"]
