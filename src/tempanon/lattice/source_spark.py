"""Spark frequency-set source (issue 15; optional extra ``pip install 'tempanon[spark]'``).

The same SQL as the DuckDB source (:class:`~tempanon.lattice.source_duckdb.SQLSource`: hierarchies
as dimension tables joined by value text, the bottom frequency set as one ``GROUP BY``, the release
written by the engine and verified by an independent query on what was written), run by Spark SQL
over a Spark DataFrame or a CSV/Parquet path. Results come to the driver as Arrow
(``DataFrame.toArrow``) and small tables go to Spark as Arrow (``createDataFrame`` of a
``pyarrow.Table``); no pandas conversion on this path.

Spark writes a **directory** of part files: the release is written to a temporary directory beside
the target, verified, and renamed to the target path (a directory named like the file).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd

from tempanon.errors import InputError
from tempanon.data.scratch import scratch_dir
from tempanon.lattice.source_duckdb import SQLSource, _is_parquet, check_header


def _jvm_bytes(text: str) -> int | None:
    """Bytes of a JVM memory setting such as ``"1g"`` or ``"4096m"`` (``None`` if unreadable)."""
    import re

    m = re.match(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", str(text).lower())
    if m is None:
        return None
    return int(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " ")


def local_session(master: str | None = None, memory_limit: str | None = None) -> Any:
    """A Spark session (``local[2]`` unless ``master`` is given), UI off, few shuffle partitions.
    ``memory_limit`` (``--memory-limit``, :mod:`tempanon.lattice.memory`): the local driver's heap
    (``spark.driver.memory``), refused with a cluster master and when a session of this process already
    runs with another heap (a JVM's heap is fixed when it starts)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise InputError("the spark engine needs pyspark: pip install 'tempanon[spark]'") from exc
    driver_memory = None
    if memory_limit is not None:
        from tempanon.lattice.memory import check_memory_limit, spark_driver_memory

        check_memory_limit("spark", memory_limit, spark_master=master)
        driver_memory = spark_driver_memory(memory_limit)
        from pyspark import SparkContext

        active = SparkContext._active_spark_context
        if active is not None:
            have = active.getConf().get("spark.driver.memory", "1g")
            if _jvm_bytes(have) != _jvm_bytes(driver_memory):
                raise InputError(f"--memory-limit {memory_limit}: this process already runs a Spark session whose driver "
                                 f"has {have} of heap, fixed when it started; run in a new process, or leave "
                                 "--memory-limit out")  # fmt: skip
    builder = (
        SparkSession.builder.master(master or "local[2]")
        .appName("tempanon")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        # a local driver that runs out of heap stops (the Python side gets an error) instead of
        # leaving the thread that serves a result dead and the caller waiting for ever
        .config("spark.driver.extraJavaOptions", "-XX:+ExitOnOutOfMemoryError")
    )
    if driver_memory is not None:
        builder = builder.config("spark.driver.memory", driver_memory)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class SparkSource(SQLSource):
    """A Spark DataFrame served by Spark SQL (see module doc)."""

    engine = "spark"
    text_type = "STRING"
    anti_join = "LEFT ANTI JOIN"
    temp_result = "CREATE OR REPLACE TEMP VIEW"
    row_number = "row_number() OVER (ORDER BY monotonically_increasing_id()) - 1"

    def __init__(self, df: Any, *, input_name: str = "Spark DataFrame"):
        super().__init__()
        self.spark = df.sparkSession
        self._tmpdir = scratch_dir("spark")
        self.input = input_name
        df.createOrReplaceTempView("tempanon_input")
        self._init_view("tempanon_input")

    @classmethod
    def from_path(cls, path: str | Path, *, master: str | None = None, delimiter: str | None = None, spark: Any = None,
                  memory_limit: str | None = None) -> SparkSource:
        path = Path(path)
        if not path.exists():
            raise InputError(f"input file not found: {path}")
        spark = spark or local_session(master, memory_limit)
        if _is_parquet(path):
            df = spark.read.parquet(str(path))
        else:
            from tempanon.data.io import _open_text, detect_delimiter

            with _open_text(path)() as fh:
                sample = fh.read(65536)
            if not sample.strip():
                raise InputError(f"input file is empty: {path}")
            sep = delimiter or detect_delimiter(sample)
            check_header(sample, sep, path)
            df = spark.read.csv(str(path), header=True, sep=sep, quote='"', escape='"', inferSchema=False, nullValue="")
        return cls(df, input_name=str(path))

    @classmethod
    def from_pandas(cls, data: pd.DataFrame, *, master: str | None = None, spark: Any = None,
                    memory_limit: str | None = None) -> SparkSource:
        """A pandas DataFrame handed to Spark as Arrow (every column as text, missing as null)."""
        import pyarrow as pa

        from tempanon.hierarchy.core import as_text

        spark = spark or local_session(master, memory_limit)
        cols = {}
        for c in data.columns:
            t = pd.Series(as_text(data[c]), dtype=object).where(data[c].notna().to_numpy(), None)
            cols[str(c)] = pa.array(t.tolist(), pa.string())
        return cls(spark.createDataFrame(pa.table(cols)), input_name="DataFrame")

    def q(self, name: str) -> str:
        return "`" + str(name).replace("`", "``") + "`"

    def _arrow(self, sql: str) -> Any:
        return self.spark.sql(sql).toArrow()

    def _exec(self, sql: str) -> None:
        self.spark.sql(sql)

    def _register(self, name: str, table: Any) -> None:
        self.spark.createDataFrame(table).createOrReplaceTempView(name)

    grouping_fn = "grouping_id"
    list_agg = "collect_list"

    def _materialize(self, name: str, query: str) -> None:
        # CACHE TABLE ... AS is eager: the GROUPING SETS job runs once, its rows stay cached
        self.spark.sql(f"CACHE TABLE {name} AS {query}")

    def _drop_materialized(self, name: str) -> None:
        self.spark.sql(f"UNCACHE TABLE IF EXISTS {name}")
        self.spark.catalog.dropTempView(name)

    def _copy(self, query: str, path: str, parquet: bool) -> None:
        w = self.spark.sql(query).write.mode("errorifexists")
        if parquet:
            w.parquet(path)
        else:
            w.csv(path, header=True, quote='"', escape='"', nullValue="", emptyValue="")

    def _read_written(self, path: str, parquet: bool) -> str:
        r = self.spark.read
        df = r.parquet(path) if parquet else r.csv(path, header=True, quote='"', escape='"', inferSchema=False, nullValue="")
        df.createOrReplaceTempView("tempanon_written")
        return "tempanon_written"

    def _read_back(self, path: str) -> pd.DataFrame:
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pandas()

    def close(self) -> None:
        try:
            self._finish_batch()
        except Exception:
            pass
        for v in ("tempanon_written", "v_expected", "v_released", "src", "tempanon_input"):
            try:
                self.spark.catalog.dropTempView(v)
            except Exception:
                pass
        shutil.rmtree(getattr(self, "_tmpdir", ""), ignore_errors=True)


__all__ = ["SparkSource", "local_session"]
