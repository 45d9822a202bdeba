"""Spark frequency-set source (issue 15; optional extra ``pip install 'tempanon[spark]'``).

The same SQL as the DuckDB source (:class:`~tempanon.lattice.source_duckdb.SQLSource`: hierarchies
as dimension tables joined by value text, the bottom frequency set as one ``GROUP BY``, the release
written by the engine and verified by an independent query on what was written), run by Spark SQL
over a Spark DataFrame or a CSV/Parquet path. Results come to the driver as Arrow
(``DataFrame.toArrow``) and small tables go to Spark as Arrow (``createDataFrame`` of a
``pyarrow.Table``); no pandas conversion on this path.

Spark writes a **directory** of part files: the release is written to a temporary directory beside
the target, verified, and renamed to the target path (a directory named like the file).

**The steward audit** (``--audit``, :meth:`SQLSource.release`) has the numpy/DuckDB format (two
comment lines, ``release_row,input_line``). Spark does not read a multi-part directory back in
part order (its reader orders file splits by size, largest first), so ``release_row`` does not rely
on read-back order: it is the row's position **over the part files in name order, rows in file
order inside each part** (as ``pyarrow``/``pandas.read_parquet`` of the directory, or
``part-*`` concatenated, list them). Why that position is defined and checked, not assumed:

* written: the release is one global ``ORDER BY`` (total: the input row number is the last key);
  Spark writes its range partitions in order as ``part-00000``, ``part-00001``, ...;
* the audit: a second ``ORDER BY`` of the same total order writes the input lines as part files;
  the driver numbers their rows over the parts in name order (:meth:`SparkSource._write_audit`);
* verified: :meth:`SQLSource._verify_audit` numbers the **written** release in the order of
  ``input_file_name(), monotonically_increasing_id()`` (:meth:`SparkSource._numbered`): within
  one file Spark reads its splits in offset order (a file's splits all have the maximum split size
  but the last, and the reader's stable sort by size keeps them in order), and
  ``monotonically_increasing_id`` grows with the partition and the row within it; that claim and the
  write-side one are tested with small split sizes forcing many splits per file
  (``tests/engine/test_engine_audit_spark.py``), and a release whose parts were not in order fails
  the row-by-row check (nothing is renamed);
* the input's line numbers come from the same reader claim on one input file (the same numbering).

Cost on a cluster: no step runs in one task over all rows. The numberings (the input's, the
written release's) are two parallel scans each: rows counted per (file, read partition), a small
table of offsets broadcast back (:meth:`SparkSource._numbered`, instead of ``row_number()`` over all
rows, which Spark runs in one task); the release and the audit are parallel sorts written as part
files; the driver reads the audit's parts (one integer a row) and writes the audit file.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd

from tempanon.errors import InputError
from tempanon.data.scratch import scratch_dir
from tempanon.lattice.source_duckdb import AUDIT_RN, SQLSource, _is_parquet, check_header, check_parquet_names


def _jvm_bytes(text: str) -> int | None:
    """Bytes of a JVM memory setting such as ``"1g"`` or ``"4096m"`` (``None`` if unreadable)."""
    import re

    m = re.match(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", str(text).lower())
    if m is None:
        return None
    return int(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " ")


def local_session(master: str | None = None, memory_limit: str | None = None) -> Any:
    """A Spark session (``local[2]`` unless ``master`` is given), UI off, few shuffle partitions,
    session time zone UTC.
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
        # the text of a time-zone-aware timestamp (a kept column in a CSV release, a hierarchy's
        # key) is UTC's on every machine, not the local zone's (TZ), as on DuckDB (open_duckdb)
        .config("spark.sql.session.timeZone", "UTC")
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
            check_parquet_names(path)  # (Spark refuses names differing only in case with an engine error)
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

    def _numbered(self, rel: str, cols) -> str:
        """``rel`` with every row's number (0-based, column ``AUDIT_RN``) in the order ``ORDER BY
        input_file_name(), monotonically_increasing_id()`` gives (module doc: part files in name order,
        rows in file order in each; the input file in file order), **without a window over all rows**
        (which Spark runs in one task): the rows are counted per (file, read partition) — a small
        table, numbered by a window over its few rows and broadcast — and each row's number is its
        group's offset plus its place in the group (a group's ids are consecutive: a partition reads
        a file's rows in one run). Two scans of ``rel``, both parallel."""
        f, m = f"{AUDIT_RN}_f", f"{AUDIT_RN}_m"
        tag = f"input_file_name() AS {f}, monotonically_increasing_id() AS {m}"
        groups = (f"(SELECT {f}, shiftright({m}, 33) AS p, min({m}) AS m0, count(*) AS c "
                  f"FROM (SELECT {tag} FROM {rel}) t GROUP BY {f}, shiftright({m}, 33))")  # fmt: skip
        offsets = f"(SELECT {f}, p, m0, sum(c) OVER (ORDER BY {f}, p) - c AS off FROM {groups} g)"
        keep = ", ".join(f"x.{self.q(c)}" for c in cols)
        return (f"(SELECT /*+ BROADCAST(o) */ {keep}, o.off + x.{m} - o.m0 AS {AUDIT_RN} "
                f"FROM (SELECT *, {tag} FROM {rel}) x JOIN {offsets} o ON x.{f} = o.{f} AND shiftright(x.{m}, 33) = o.p)")

    def _write_audit(self, path: str, order: str, body: str, salt: int) -> None:
        """The steward's audit (as :meth:`SQLSource._write_audit`, without a window over all rows):
        the input line of every release row, written by a second ``ORDER BY`` of the same total
        order as CSV part files (in parallel, like the release); the driver then reads the parts in
        name order and numbers their rows 1..N as ``release_row`` (vectorized, part by part), behind
        the two comment lines and the header. That numbering is the order the release's parts define
        (module doc); it is not trusted: :meth:`SQLSource._verify_audit` checks it row by row
        against the written release."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.csv as pcsv

        from tempanon.kanon.command import AUDIT_HEADER

        rows = path + ".rows"
        self._copy(f"SELECT s.{AUDIT_RN} + 2 AS input_line {body} ORDER BY {order}", rows, False)
        n = 0
        opts = pcsv.WriteOptions(include_header=False)
        with open(path, "wb") as fh:
            fh.write(f"{AUDIT_HEADER}\n# shuffle seed: {salt}\nrelease_row,input_line\n".encode("utf-8"))
            for part in sorted(Path(rows).glob("part-*")):
                if part.stat().st_size == 0:
                    continue
                lines = pcsv.read_csv(part, convert_options=pcsv.ConvertOptions(column_types={"input_line": pa.int64()}))
                k = lines.num_rows
                if k:
                    pcsv.write_csv(pa.table({"release_row": pa.array(np.arange(n + 1, n + k + 1, dtype=np.int64)),
                                             "input_line": lines.column("input_line")}), fh, opts)  # fmt: skip
                    n += k
        shutil.rmtree(rows)

    def _write_numbered(self, path: str, head: str, query: str, cols) -> None:
        """An audit with text columns (the timestamped audit's respondent): ``query`` (``cols``, in
        the release's total order) written as sorted CSV part files, read back by Spark and numbered
        over the parts in name order (:meth:`_numbered`, parallel), written again with that number
        first as ``release_row`` in its order, and the parts concatenated by the driver (bytes, each
        part's header line dropped) behind ``head`` and one header line. Spark's CSV writer quotes a
        value only when needed, as the in-memory path's (pandas) does."""
        rows, numbered = path + ".rows", path + ".numbered"
        self._copy(query, rows, False)
        schema = ", ".join(f"{self.q(c)} STRING" for c in cols)
        self.spark.read.csv(rows, header=True, schema=schema, quote='"', escape='"', nullValue="").createOrReplaceTempView(
            "tempanon_audit_rows")  # fmt: skip
        names = ", ".join(f"n.{self.q(c)}" for c in cols)
        self._copy(f"SELECT n.{AUDIT_RN} + 1 AS release_row, {names} FROM {self._numbered('tempanon_audit_rows', cols)} n "
                   "ORDER BY release_row", numbered, False)  # fmt: skip
        self.spark.catalog.dropTempView("tempanon_audit_rows")
        with open(path, "wb") as fh:
            fh.write((head + ",".join(["release_row", *cols]) + "\n").encode("utf-8"))
            for part in sorted(Path(numbered).glob("part-*")):
                with open(part, "rb") as src:
                    src.readline()  # the part's header line
                    shutil.copyfileobj(src, fh, 1 << 20)
        shutil.rmtree(rows)
        shutil.rmtree(numbered)

    def _new_audit_temp(self, target: Path) -> str:
        # Spark's reader skips a file whose name starts with "." (the hidden temporary name): the audit
        # is written to a plain name inside a hidden temporary folder beside the target, checked there
        # by Spark, renamed into place and the folder removed (SQLSource.release)
        holder = self._new_temp_path(target)
        os.mkdir(holder)
        return os.path.join(holder, target.name)

    def _audit_relation(self, audit: str) -> str:
        df = self.spark.read.csv(audit, header=True, comment="#", quote='"', escape='"', inferSchema=False)
        df.createOrReplaceTempView("tempanon_audit")
        return "tempanon_audit"

    def _read_back(self, path: str) -> pd.DataFrame:
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pandas()

    def close(self) -> None:
        try:
            self._finish_batch()
        except Exception:
            pass
        for v in ("tempanon_written", "tempanon_audit", "v_expected", "v_released", "src", "tempanon_input"):
            try:
                self.spark.catalog.dropTempView(v)
            except Exception:
                pass
        shutil.rmtree(getattr(self, "_tmpdir", ""), ignore_errors=True)


__all__ = ["SparkSource", "local_session"]
