"""Spark frequency-set source (issue 15; optional extra ``pip install 'tempanon[spark]'``).

The same SQL as the DuckDB source (:class:`~tempanon.lattice.source_duckdb.SQLSource`: hierarchies
as dimension tables joined by value text, the bottom frequency set as one ``GROUP BY``, the release
written by the engine and verified by an independent query on what was written), run by Spark SQL
over a Spark DataFrame or a CSV/Parquet path. Results come to the driver as Arrow
(``DataFrame.toArrow``) and small tables go to Spark as Arrow (``createDataFrame`` of a
``pyarrow.Table``); no pandas conversion on this path.

Spark writes a **directory** of part files: the release is written to a temporary directory beside
the target, verified, and renamed to the target path (a directory named like the file).

**The session's time zone.** Spark gives a time-zone-aware timestamp's text (``CAST`` to text, its
CSV writer) in the session's zone (``spark.sql.session.timeZone``): a kept column of a CSV release,
a hierarchy's key, the checks' comparisons and the timestamped release's row hash read it. The
sessions :func:`local_session` starts are in UTC; a caller's session (a Spark DataFrame, ``spark=``,
or the running session ``local_session`` returns as it is) may not be. Every Spark call of this
module's and :mod:`~tempanon.lattice.source_temporal_spark`'s runs inside :func:`utc_session`: UTC
for the call, the caller's value restored after it, also on an error; nothing lazy is handed back
and :meth:`SparkSource.close` drops the views it made (``docs/engines.md``, "The session time zone
on Spark").

**The steward audit** (``--audit``, :meth:`SQLSource.release`) has the numpy/DuckDB format (two
comment lines, ``release_row,input_line``). Spark does not read a multi-part directory back in
part order (its reader orders file splits by size, largest first), so ``release_row`` does not rely
on read-back order: it is the row's position **over the part files in name order, rows in file
order inside each part** (as ``pyarrow``/``pandas.read_parquet`` of the directory, or
``part-*`` concatenated, list them). Why that position is defined and checked, not assumed:

* written: the release is one global ``ORDER BY`` (total: the input row number is the last key);
  Spark writes its range partitions in order as ``part-00000``, ``part-00001``, ...;
* the audit: the release's sorted rows are persisted with their input row number while the
  release is written, and the input lines are written from them as part files, partition ``i`` of
  the release as part ``i`` of the audit (no second sort, :meth:`SparkSource._sorted_once`); the
  driver numbers their rows over the parts in name order (:meth:`SparkSource._write_audit`);
* verified: :meth:`SparkSource._verify_audit` (:meth:`SQLSource._verify_audit`'s checks) numbers the
  **written** release in the order of
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
rows, which Spark runs in one task); the release is a parallel sort written as part files, persisted
(memory and disk) until the audit's input lines are written from it; the driver reads the audit's
parts (one integer a row) and writes the audit file, then streams it once more for the audit's
counts (a bitmap of one bit per input row); the row-by-row check is one parallel join.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tempanon.errors import InputError, VerificationError
from tempanon.data.scratch import scratch_dir
from tempanon.lattice.source_duckdb import (AUDIT_RN, SQLSource, _column_name, _frame_cell_type, _is_parquet, check_header,
                                            check_parquet_names, frame_zones, parquet_zones)


def _jvm_bytes(text: str) -> int | None:
    """Bytes of a JVM memory setting such as ``"1g"`` or ``"4096m"`` (``None`` if unreadable)."""
    import re

    m = re.match(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", str(text).lower())
    if m is None:
        return None
    return int(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " ")


SESSION_TIME_ZONE = "spark.sql.session.timeZone"
PARQUET_TIMESTAMP_TYPE = "spark.sql.parquet.outputTimestampType"
#: the session settings every Spark call of tempanon's runs with (:func:`utc_session`), the caller's
#: values restored after: text of an aware timestamp in UTC; an aware timestamp written to Parquet as
#: ``TIMESTAMP_MICROS`` (UTC-adjusted INT64, what pandas/pyarrow write for ``datetime64[us, UTC]``),
#: not Spark's default INT96 (deprecated in Parquet, read back naive by pyarrow)
CSV_COLUMN_PRUNING = "spark.sql.csv.parser.columnPruning.enabled"
SESSION_SETTINGS = {SESSION_TIME_ZONE: "UTC", PARQUET_TIMESTAMP_TYPE: "TIMESTAMP_MICROS", CSV_COLUMN_PRUNING: "false"}
"""The settings every Spark call of tempanon's runs with (:func:`utc_session`). Column pruning of the CSV
parser off: with it, Spark parses only the columns a query reads, so its ``FAILFAST`` mode never saw a
line with a field too many or too few when the run does not read every column (a column left out of
the release), and the table was released where numpy and DuckDB refuse the file."""

_utc_lock = threading.Lock()
_utc_held: dict[int, list] = {}  # id(session) -> [session, users inside, the caller's values ({key: None}: not set)]


@contextmanager
def utc_session(spark: Any) -> Iterator[Any]:
    """Run the block with ``spark``'s session time zone (``spark.sql.session.timeZone``) set to UTC,
    then give the session back its own value (unset again if it was not set), also when the block
    raises. Every Spark call of tempanon's (:class:`SparkSource`'s and
    :mod:`~tempanon.lattice.source_temporal_spark`'s hooks) runs inside it, so the text of a
    time-zone-aware timestamp (``CAST`` to text: a hierarchy's key, the verification's and the
    audit check's comparisons, the timestamped release's row hash; Spark's CSV writer: a kept column
    in a CSV release) is UTC's whatever zone a caller's session is in, as in the sessions
    :func:`local_session` starts and on numpy and DuckDB (``docs/engines.md``). The block also runs
    with ``spark.sql.parquet.outputTimestampType`` set to ``TIMESTAMP_MICROS`` (an aware timestamp
    in a Parquet release as pandas writes it, not INT96), the caller's value restored the same way
    (:data:`SESSION_SETTINGS`), and so is the CSV parser's column pruning (off: every line is checked
    whole, whatever columns a query reads).

    Nested and concurrent uses on one session (the search's threads) count their users: the first
    one in sets UTC and keeps the caller's value, the last one out restores it, so a restore never
    happens while another of tempanon's queries runs. Between tempanon's calls the session is the
    caller's; during one, a query the caller runs on the same session from another thread sees UTC
    (one setting per session: run tempanon on a session of its own, ``spark.newSession()``, to avoid
    that). A restore that fails while an error is already on its way (a stopped session) does not
    hide that error."""
    key = id(spark)
    with _utc_lock:
        held = _utc_held.get(key)
        if held is None:
            old = {}
            try:
                for name, value in SESSION_SETTINGS.items():
                    old[name] = spark.conf.get(name, None)
                    if old[name] != value:
                        spark.conf.set(name, value)
            except BaseException:
                with suppress(Exception):  # a stopped session: the original error is what counts
                    _restore(spark, old)
                raise
            held = _utc_held[key] = [spark, 0, old]
        held[1] += 1
    try:
        yield spark
    except BaseException:
        with suppress(Exception):  # a stopped session: the original error is what counts
            _utc_leave(key, held)
        raise
    _utc_leave(key, held)


def _java_lines(exc: BaseException) -> list[str]:
    """The lines of ``exc`` and of the exceptions it was raised from or while handling (a
    ``Py4JJavaError``'s text holds the Java exception, its stack and its causes)."""
    lines, e, n = [], exc, 0
    while e is not None and n < 10:
        lines += [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        e, n = e.__cause__ or e.__context__, n + 1
    return [ln for ln in lines if not ln.startswith(("at ", "..."))]


def quoted_line_break(path: str | Path, chunk_size: int = 1 << 23) -> bool:
    """True when the CSV file ``path`` may hold a line break inside a quoted value, so that Spark must
    read it with ``multiLine`` (a record over several lines; the file then read in one split, as a
    compressed file always is): a ``.gz`` file; else one pass over the bytes, quote parity carried over
    the chunks (``""`` inside a value toggles twice), stopping at the first line break inside quotes. A
    chunk without a quote is skipped at ``memchr`` speed when outside quotes."""
    import numpy as np

    path = Path(path)
    if path.suffix.lower() == ".gz":
        return True
    inside = False
    with open(path, "rb") as fh:
        while chunk := fh.read(chunk_size):
            if b'"' not in chunk:
                if inside and (b"\n" in chunk or b"\r" in chunk):
                    return True
                continue
            a = np.frombuffer(chunk, dtype=np.uint8)
            quotes = np.flatnonzero(a == 34)
            breaks = np.flatnonzero((a == 10) | (a == 13))
            # a line break is inside quotes when an odd number of quotes (with the chunk's start) precede it
            if np.any((np.searchsorted(quotes, breaks) + inside) & 1):
                return True
            inside = bool((len(quotes) + inside) & 1)
    return False


def spark_input_error(exc: BaseException, path: str | None, sep: str | None = None) -> str | None:
    """The message of a Spark job that failed on reading the input file ``path`` (``None`` when
    ``exc`` is not such a failure): a malformed CSV record (``FAILFAST``), with the line found by
    :func:`~tempanon.lattice.source_duckdb.csv_line_error`; a file Spark cannot read
    (``FAILED_READ_FILE``: a damaged Parquet page, a truncated file), with its cause."""
    if path in (None, "DataFrame", "Spark DataFrame"):
        return None
    lines = _java_lines(exc)
    text = "\n".join(lines)
    reading = re.search(r"Encountered error while reading file (\S+?)\.?(\s|$)", text)
    if reading and not reading.group(1).endswith("/" + Path(path).name):
        return None  # (another file: the release read back, a part file; not the input's fault)
    if "MALFORMED_RECORD" in text or "Malformed records are detected" in text:
        from tempanon.lattice.source_duckdb import csv_line_error

        found = csv_line_error(path, sep) if sep is not None else None
        if found:
            return found
        record = re.search(r"record parsing: (.*?)\.?\s*(?:Parse Mode|$)", text, re.M)
        return (f"{path}: a line with more or fewer fields than the header"
                f"{': ' + record.group(1)[:200] if record else ''} (nothing was written)")  # fmt: skip
    if "FAILED_READ_FILE" in text or "Encountered error while reading file" in text:
        at = next((i for i, ln in enumerate(lines) if "FAILED_READ_FILE" in ln or "Encountered error while reading" in ln), 0)
        cause = next((ln[len("Caused by: "):] for ln in lines[at + 1:] if ln.startswith("Caused by: ")), "")
        cause = re.sub(r"^[\w.$]+(Exception|Error): ", "", cause)
        return f"cannot read {path}: {cause or 'Spark could not read the file'} (nothing was written)"
    return None


def spark_failure_line(exc: BaseException) -> str | None:
    """The Java exception behind a failed Spark call, as one line (``None`` if there is none):
    py4j's own first line ('An error occurred while calling o72.getResult.') names no cause. The
    innermost Spark error with an error class (``[CLASS] message``), else the first Java exception."""
    lines = _java_lines(exc)
    classed = [ln for ln in lines if re.search(r"Exception: \[[A-Z_.]+\]", ln)]
    java = classed or [ln for ln in lines if re.match(r"^(: |Caused by: )?[\w.$]+(Exception|Error): ", ln)]
    if not java:
        return None
    line = re.sub(r"^(: |Caused by: )", "", java[-1] if classed else java[0])
    return re.sub(r"^[\w.$]+\.(\w+(Exception|Error)): ", r"\1: ", line)


def _utc_leave(key: int, held: list) -> None:
    with _utc_lock:
        held[1] -= 1
        if held[1]:
            return
        del _utc_held[key]
        _restore(held[0], held[2])


def _restore(spark: Any, old: dict) -> None:
    """Give ``spark`` back the values ``old`` of the settings :func:`utc_session` changed (unset the
    ones that were not set); every one is tried, the first failure raised after."""
    failed = None
    for name, value in old.items():
        try:
            if value is None:
                spark.conf.unset(name)
            elif value != SESSION_SETTINGS[name]:
                spark.conf.set(name, value)
        except Exception as exc:  # pragma: no cover - a stopped session
            failed = failed or exc
    if failed is not None:
        raise failed


def local_session(master: str | None = None, memory_limit: str | None = None) -> Any:
    """A Spark session (``local[2]`` unless ``master`` is given), UI off, few shuffle partitions,
    session time zone UTC. When this process already runs a session (the caller's, which
    ``getOrCreate`` would return with these options set on it for good) that session is returned as
    it is: tempanon's queries run in UTC on it all the same (:func:`utc_session`).
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
    running = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    if running is not None and running._sc._jsc is not None:
        return running  # the caller's session: its settings stay its own
    _start_quiet_context(builder._options)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


LOG4J2_PROPERTIES = Path(__file__).with_name("spark-log4j2.properties")

#: lines the JVM and Spark print at start-up whatever the logging configuration says: the JVM's own
#: notice of the incubator module Spark 4 adds (``--add-modules=jdk.incubator.vector``), and Spark's
#: lines about its default logging profile, should the configuration not be read
_START_NOISE = re.compile(rb"^(WARNING: Using incubator modules: |Using Spark's default log4j profile: |"
                          rb"Setting default log level to |To adjust logging level use sc\.setLogLevel)")  # fmt: skip


def _start_quiet_context(options: dict) -> None:
    """Start the driver of a session tempanon makes itself (no SparkContext runs in this process)
    with its logging at ERROR from the first line (:data:`LOG4J2_PROPERTIES` passed as
    ``-Dlog4j2.configurationFile`` in ``spark.driver.extraJavaOptions``: no "Using Spark's default
    log4j profile", no hostname/loopback or native-hadoop warnings, no "Setting default log level"),
    and the JVM's standard error read by a thread that drops the start-up lines of
    :data:`_START_NOISE` (the JVM's "WARNING: Using incubator modules", which no option turns off)
    and passes every other line on to this process's standard error. ``getOrCreate`` then returns a
    session on this context. (``--quiet`` runs print nothing but errors; a caller's session, or
    one already running, is left as it is.)"""
    from subprocess import PIPE

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._active_spark_context is not None:
        return
    conf = SparkConf()
    for key, value in options.items():
        conf.set(key, value)
    java = conf.get("spark.driver.extraJavaOptions", "") or ""
    conf.set("spark.driver.extraJavaOptions", f"{java} -Dlog4j2.configurationFile={LOG4J2_PROPERTIES.as_uri()}".strip())
    gateway = launch_gateway(conf, popen_kwargs={"stderr": PIPE})
    proc = getattr(gateway, "proc", None)
    if proc is not None and proc.stderr is not None:
        threading.Thread(target=_pass_on_errors, args=(proc.stderr,), name="tempanon-spark-stderr", daemon=True).start()
    SparkContext(conf=conf, gateway=gateway)


def _pass_on_errors(stream: Any) -> None:
    """Copy the JVM's standard error to this process's (file descriptor 2) line by line, without the
    start-up lines of :data:`_START_NOISE`."""
    try:
        for line in iter(stream.readline, b""):
            if not _START_NOISE.match(line):
                os.write(2, line)
    except (OSError, ValueError):  # pragma: no cover - the process is ending
        pass


def java_offsets(spark: Any, zone: str, lo: int, hi: int) -> Any:
    """:func:`~tempanon.lattice.source_duckdb.zone_offset_fixes`' ``engine_offsets`` of Spark: the UTC
    offsets (seconds) of the named ``zone`` by Java's zone data (``java.time``, which Spark's
    ``from_utc_timestamp`` reads), from its transitions within ``[lo, hi]`` (epoch seconds) read once
    through the driver's JVM (``ZoneRules.nextTransition``: no Spark job), for an array of epoch
    seconds in that range."""
    jvm = spark.sparkContext._jvm
    rules = jvm.java.time.ZoneId.of(zone).getRules()
    start = jvm.java.time.Instant.ofEpochSecond(int(lo))
    offsets, at = [int(rules.getOffset(start).getTotalSeconds())], []
    t = rules.nextTransition(start)
    while t is not None and int(t.toEpochSecond()) <= hi:
        at.append(int(t.toEpochSecond()))
        offsets.append(int(t.getOffsetAfter().getTotalSeconds()))
        t = rules.nextTransition(t.getInstant())
    at_, offsets_ = np.array(at, dtype=np.int64), np.array(offsets, dtype=np.int64)
    return lambda secs: offsets_[np.searchsorted(at_, np.asarray(secs, dtype=np.int64), side="right")]


def python_timestamp_text(expr: str, kind: str, zone: str | None = None, fixes: Sequence[tuple[int, int, int]] = (),
                          nanos: str | None = None) -> str:
    """Spark SQL giving a typed timestamp ``expr`` the text Python (the numpy path's release) gives it,
    ``str(pandas.Timestamp)``: ``2021-01-02 00:00:00``, ``2021-01-02 00:00:00.123456`` (the six digits
    of the microseconds only when they are not all zero), and for a time-zone-aware value
    (``kind == "timestamp"``; run in a UTC session, :func:`utc_session`) the wall clock in ``zone``
    (default UTC) with its offset, ``+00:00``, ``-05:00`` (``+HH:MM:SS`` for an offset with seconds).
    ``kind == "timestamp_ntz"``: a naive value, no offset. NULL stays NULL. (Spark's CSV writer writes
    ``2021-01-02T00:00:00.000Z``, milliseconds only; ``CAST`` to text ``2021-01-02 00:00:00``.)
    ``fixes`` (:func:`~tempanon.lattice.source_duckdb.zone_offset_fixes`): the intervals where Java's
    zone data gives ``zone`` another offset than Python's, with Python's (there the wall clock is the
    UTC one plus that offset). ``nanos``: an expression of the value's nanoseconds beyond its
    microseconds (0-999; a ``ns`` value of a DataFrame, :meth:`SparkSource.released_text`), printed as
    pandas prints them: the nine digits of the fraction when they are not 0."""
    wall, off = expr, ""
    if kind == "timestamp":
        if zone in (None, "UTC", "Etc/UTC", "+00:00"):
            off = "'+00:00'"
        else:
            z = "'" + str(zone).replace("'", "''") + "'"
            wall = f"from_utc_timestamp({expr}, {z})"
            if fixes:
                from tempanon.lattice.source_duckdb import _utc_text

                def at(sec: int) -> str:
                    return f"TIMESTAMP '{_utc_text(sec)[:-3]}'"  # (the session is in UTC: utc_session)

                cases = " ".join(f"WHEN {expr} >= {at(a)} AND {expr} < {at(b)} THEN {expr} + make_dt_interval(0, 0, 0, {o})"
                                 for a, b, o in fixes)  # fmt: skip
                wall = f"(CASE WHEN {expr} < {at(fixes[0][0])} OR {expr} >= {at(fixes[-1][1])} THEN {wall} {cases} ELSE {wall} END)"
            d = f"(unix_seconds({wall}) - unix_seconds({expr}))"
            a = f"abs({d})"
            off = (f"concat(CASE WHEN {d} < 0 THEN '-' ELSE '+' END, lpad(CAST({a} DIV 3600 AS STRING), 2, '0'), ':', "
                   f"lpad(CAST(({a} % 3600) DIV 60 AS STRING), 2, '0'), "
                   f"CASE WHEN {a} % 60 = 0 THEN '' ELSE concat(':', lpad(CAST({a} % 60 AS STRING), 2, '0')) END)")  # fmt: skip
    frac = f"date_format({wall}, 'SSSSSS')"
    fraction = f"CASE WHEN {frac} = '000000' THEN '' ELSE concat('.', {frac}) END"
    if nanos is not None:
        fraction = f"CASE WHEN {nanos} = 0 THEN {fraction} ELSE concat('.', {frac}, lpad(CAST({nanos} AS STRING), 3, '0')) END"
    parts = [f"date_format({wall}, 'yyyy-MM-dd HH:mm:ss')", fraction]
    return f"concat({', '.join([*parts, *([off] if off else [])])})"


def _timestamp_kind(dtype: Any) -> str | None:
    """``"timestamp"`` (aware), ``"timestamp_ntz"`` (naive) or None for a Spark data type."""
    name = type(dtype).__name__
    return {"TimestampType": "timestamp", "TimestampNTZType": "timestamp_ntz"}.get(name)


TYPED_ID = f"{AUDIT_RN}_typed"  # prefix of the text columns written beside a release's typed ones and checked (_copy)


def _frame_sql_type(dtype: Any) -> str | None:
    """The Spark type a DataFrame column of ``dtype`` is written with when released unchanged in a
    Parquet release, so that it holds the values pandas' ``to_parquet`` (the numpy path) writes:
    signed integers (numpy's and pandas' nullable ``Int8``-``Int64``); unsigned ones (``uint8``-``uint64``,
    ``UInt8``-``UInt64``) in the next wider type (``uint64`` as ``DECIMAL(20,0)``: Spark has no unsigned
    type); ``float32``/``float64`` and ``Float32``/``Float64``; ``bool``, ``boolean`` and ``bool[pyarrow]`` (an ``object``
    column of Python bools too: :meth:`SparkSource.from_pandas`); timestamps in
    ``us``, ``ms`` or ``s`` (naive, or aware: written as instants, given the column's zone after the
    write); in ``ns`` as ``"NANOS"``, the nanoseconds since the epoch as a ``BIGINT`` (a Spark timestamp
    holds microseconds only). :func:`_frame_arrow_type` says which of them the part files are then given
    pandas' Parquet type for (:meth:`SparkSource._zone_parts`). Anything else (text, ``object``, ...)
    stays text: ``None``."""
    ints = {1: "TINYINT", 2: "SMALLINT", 4: "INT", 8: "BIGINT"}
    uints = {1: "SMALLINT", 2: "INT", 4: "BIGINT", 8: "DECIMAL(20,0)"}
    if isinstance(dtype, pd.DatetimeTZDtype):
        return "NANOS" if dtype.unit == "ns" else "TIMESTAMP"
    if isinstance(dtype, pd.api.extensions.ExtensionDtype):
        if isinstance(dtype, (pd.core.arrays.integer.IntegerDtype, pd.core.arrays.floating.FloatingDtype)):
            dtype = dtype.numpy_dtype
        elif pd.api.types.is_bool_dtype(dtype):  # pandas' nullable boolean, bool[pyarrow]: bool, missing as null
            return "BOOLEAN"
        else:
            return None
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return (ints if dtype.kind == "i" else uints).get(dtype.itemsize)
    if dtype.kind == "f" and dtype.itemsize in (4, 8):
        return "FLOAT" if dtype.itemsize == 4 else "DOUBLE"
    if dtype.kind == "b":
        return "BOOLEAN"
    if dtype.kind == "M":
        unit = np.datetime_data(dtype)[0]
        return "NANOS" if unit == "ns" else "TIMESTAMP_NTZ" if unit in ("us", "ms", "s") else None
    return None


def _frame_arrow_type(dtype: Any) -> Any | None:
    """The Arrow type a DataFrame column of ``dtype`` written by Spark as :func:`_frame_sql_type` says is
    given in the part files (a cast, pyarrow's safe one: :func:`~tempanon.data.io.zone_written_parquet`)
    so that its Parquet type is the one pandas' ``to_parquet`` writes: unsigned integers ``uint8``-``uint64``,
    timestamps in ``ms`` (from ``ms`` and ``s``: Parquet has no seconds) and ``ns``, an aware one in its
    zone. ``None`` where Spark's own type is already pandas'."""
    import pyarrow as pa

    tz = str(dtype.tz) if isinstance(dtype, pd.DatetimeTZDtype) else None
    if isinstance(dtype, pd.DatetimeTZDtype) or (not isinstance(dtype, pd.api.extensions.ExtensionDtype) and np.dtype(dtype).kind == "M"):
        unit = dtype.unit if tz else np.datetime_data(dtype)[0]
        return pa.timestamp("ms" if unit in ("ms", "s") else "ns", tz=tz) if unit in ("ms", "s", "ns") else None
    if isinstance(dtype, pd.core.arrays.integer.IntegerDtype):
        dtype = dtype.numpy_dtype
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) or np.dtype(dtype).kind != "u":
        return None
    return pa.from_numpy_dtype(np.dtype(dtype))


def _plain_audit(path: str, names: list[str], rows_out: int, n_input: int, block: int = 1 << 22) -> bool:
    """True when the audit file at ``path`` is plainly right: two comment lines, the header ``names``
    (``release_row,input_line``), then ``rows_out`` rows whose ``release_row`` is exactly 1, 2, ...,
    ``rows_out`` in order and whose ``input_line`` values are distinct integers from 2 to
    ``n_input + 1`` (lines of the input). Streamed with pyarrow's CSV reader, the input lines marked
    in a bitmap of one bit per input row (``n_input / 8`` bytes). False on anything else (a text
    that is not an integer, a row out of order, a repeated or impossible line, another count):
    :meth:`SparkSource._verify_audit` then runs the general count query, which names the fault.
    What True implies is what that query checks (the count, the range 1..N, distinct release rows
    and input lines), so both accept the same audits."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv

    bits = np.zeros((max(int(n_input), 0) + 7) // 8, dtype=np.uint8)
    n = 0
    try:
        with open(path, "rb") as fh:
            if not (fh.readline().startswith(b"#") and fh.readline().startswith(b"#")):
                return False
            if fh.readline().rstrip(b"\r\n") != ",".join(names).encode("utf-8"):
                return False
            reader = pcsv.open_csv(fh, read_options=pcsv.ReadOptions(column_names=list(names), block_size=block),
                                   convert_options=pcsv.ConvertOptions(column_types={c: pa.int64() for c in names}))  # fmt: skip
            for batch in reader:
                rr, il = batch.column(0), batch.column(1)
                k = batch.num_rows
                if rr.null_count or il.null_count:
                    return False
                if not np.array_equal(rr.to_numpy(), np.arange(n + 1, n + k + 1, dtype=np.int64)):
                    return False
                idx = np.sort(il.to_numpy() - 2)
                if k and (idx[0] < 0 or idx[-1] >= n_input or (idx[1:] == idx[:-1]).any()):
                    return False
                byte, mask = idx >> 3, np.left_shift(np.uint8(1), (idx & 7).astype(np.uint8))
                if (bits[byte] & mask).any():
                    return False
                np.bitwise_or.at(bits, byte, mask)
                n += k
    except (OSError, pa.ArrowException):
        return False
    return n == rows_out


def check_spark_parquet_types(path: str | os.PathLike) -> None:
    """Refuse, before Spark starts, a Parquet input with a column Spark cannot read: a timestamp in
    nanoseconds (``TIMESTAMP(NANOS)``; Spark keeps microseconds and fails the whole read with
    ``PARQUET_TYPE_ILLEGAL``) or a time of day (``TIME``, ``UNSUPPORTED_TIME_TYPE``). Spark reads every
    column's type, so such a column fails the run whatever its role: the error names them all and the
    ways out (another engine, or the column written in microseconds / as text). A file that cannot be
    read here is left to Spark to refuse."""
    try:
        import pyarrow as pa
        import pyarrow.dataset as ds

        schema = ds.dataset(str(path), format="parquet").schema
    except Exception:  # unreadable here: the engine's reading reports it
        return
    bad = []
    for f in schema:
        t = f.type
        if pa.types.is_timestamp(t) and t.unit == "ns":
            bad.append(f"{f.name!r} (timestamp in nanoseconds)")
        elif pa.types.is_time(t):
            bad.append(f"{f.name!r} (time of day, {t})")
    if bad:
        raise InputError(
            f"{path}: Spark cannot read column(s) {', '.join(bad)}: it reads timestamps in microseconds and no "
            "time-of-day type. Run with --engine duckdb or the default engine (they read them), or write those "
            "columns as microsecond timestamps or as text"
        )


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
        self._views: list[str] = []  # the temporary views this source made in the session (dropped by close)
        self._tmpdir = scratch_dir("spark")
        self.input = input_name
        with self._utc():
            df.createOrReplaceTempView("tempanon_input")
            self._views.append("tempanon_input")
            self._init_view("tempanon_input")

    @contextmanager
    def _utc(self) -> Iterator[None]:
        """Every Spark call of this source runs in UTC on the session, the caller's value restored after
        (:func:`utc_session`). Spark reads its input lazily, so a bad input (a malformed CSV line, a
        damaged Parquet file) fails whichever job first reads it: an :class:`InputError` naming the
        file (and line: :func:`spark_input_error`), not an engine failure."""
        with utc_session(self.spark):
            try:
                yield
            except Exception as exc:
                message = spark_input_error(exc, self.input, getattr(self, "_sep", None))
                if message is None:
                    raise
                raise InputError(message) from None

    @classmethod
    def from_path(cls, path: str | Path, *, master: str | None = None, delimiter: str | None = None, spark: Any = None,
                  memory_limit: str | None = None) -> SparkSource:
        from tempanon.data.io import check_input_file

        # a folder of Parquet part files (d.parquet/) Spark reads; any other folder is refused as on numpy and DuckDB
        # (a CSV one was read as a file: IsADirectoryError, a traceback and exit 1)
        path = check_input_file(path, directory=_is_parquet(path), delimiter=delimiter)
        sep = None  # (the input is checked before Spark starts)
        if _is_parquet(path):
            check_parquet_names(path)  # (Spark refuses names differing only in case with an engine error)
            check_spark_parquet_types(path)
        else:
            from tempanon.data.io import _open_text, detect_delimiter

            with _open_text(path)() as fh:
                sample = fh.read(65536)
            if not sample.lstrip("\ufeff").strip():  # (a byte order mark alone: empty too)
                raise InputError(f"input file is empty: {path}")
            sep = delimiter or detect_delimiter(sample)
            check_header(sample, sep, path)
        spark = spark or local_session(master, memory_limit)
        with utc_session(spark):
            if sep is None:
                df = spark.read.parquet(str(path))
            else:
                # FAILFAST: a line with more or fewer fields than the header (or a quote left open) is an
                # error, as on numpy and DuckDB; Spark's default (PERMISSIVE) dropped the extra fields and
                # released the rest of the line
                # multiLine only for a file with a line break inside a quoted value (Spark splits a file only
                # without it; with it a value's line break is read as a record's end and the file was refused,
                # "a line with more or fewer fields than the header: [empty row]", where numpy and DuckDB read it)
                df = spark.read.csv(str(path), header=True, sep=sep, quote='"', escape='"', inferSchema=False, nullValue="",
                                    mode="FAILFAST", multiLine=quoted_line_break(path))  # fmt: skip
            source = cls(df, input_name=str(path))
            source._sep = sep
        if sep is None:
            source._zones = parquet_zones(path)
            try:
                source._find_zone_fixes()  # (Java's zone data against Python's: docs/engines.md)
            except BaseException:
                source.close()
                raise
        return source

    @classmethod
    def from_pandas(cls, data: pd.DataFrame, *, master: str | None = None, spark: Any = None,
                    memory_limit: str | None = None) -> SparkSource:
        """A pandas DataFrame handed to Spark as Arrow (every column as text, missing as null). A float
        column (a float dtype, or ``object`` of Python floats) as the text the numpy path releases it
        with (pandas' ``1.0``, ``1e+20``; Spark's own text of a double is Java's, ``1.0E20``), looked up
        by a hierarchy by its hierarchy text (``39.0`` -> ``"39"``) through
        :meth:`~tempanon.lattice.source_duckdb.SQLSource._float_map`; any other column as that text
        (:func:`~tempanon.hierarchy.core.as_text`). Before, a float column was its hierarchy text
        throughout, so a kept ``1.0`` was written ``1``. A column with a type pandas writes (integers,
        floats, booleans, timestamps: :func:`_frame_sql_type`) released unchanged to a Parquet file is
        written with the type the numpy path writes it with (:meth:`_copy`), and so is an ``object`` column
        of Python integers or of dates and a categorical (:func:`_frame_cell_type`)."""
        import pyarrow as pa
        from pandas.api.types import infer_dtype

        from tempanon.hierarchy.core import as_text

        spark = spark or local_session(master, memory_limit)
        cols, floats, bools = {}, {}, set()
        for j, c in enumerate(data.columns):
            col = data.iloc[:, j]
            present = col.notna().to_numpy()
            inferred = infer_dtype(col, skipna=True) if col.dtype == object else None
            if inferred == "boolean":  # an object column of Python bools (and missing): bool, as pandas writes it
                bools.add(_column_name(c))
            if pd.api.types.is_float_dtype(col.dtype) or inferred == "floating":
                kind = np.float64 if col.dtype == object else getattr(col.dtype, "numpy_dtype", col.dtype)  # (float32: its text)
                t = pd.Series(col.to_numpy(dtype=kind, na_value=np.nan).astype(str), dtype=object)  # (pandas' CSV text)
                t = t.where(present, None)
                # each text's hierarchy text, from the cells themselves (a float32's 0.1 is 0.10000000149011612 there);
                # one row a text, so that joining the map keeps the rows
                pairs = pd.DataFrame({"v": t, "t": as_text(col)}).drop_duplicates("v")
                floats[_column_name(c)] = pa.table({"v": pa.array(pairs["v"].tolist(), pa.string()),
                                                   "t": pa.array(pairs["t"].tolist(), pa.string())})  # fmt: skip
            else:
                t = pd.Series(as_text(col), dtype=object).where(present, None)
            cols[str(c)] = pa.array(t.tolist(), pa.string())
        with utc_session(spark):
            source = cls(spark.createDataFrame(pa.table(cols)), input_name="DataFrame")
        source._float_cols, source._float_pairs = set(floats), floats
        source._frame_types = {_column_name(c): t for c, d in data.dtypes.items() if (t := _frame_sql_type(d)) is not None}
        source._frame_types.update(dict.fromkeys(bools, "BOOLEAN"))
        source._frame_arrow = {_column_name(c): t for c, d in data.dtypes.items() if (t := _frame_arrow_type(d)) is not None}
        for j, c in enumerate(data.columns):  # object columns of ints or dates, categoricals (_frame_cell_type)
            if _column_name(c) not in source._frame_types:
                sql, arrow = _frame_cell_type(data.iloc[:, j])
                if sql is not None:
                    source._frame_types[_column_name(c)] = sql
                if arrow is not None:
                    source._frame_arrow[_column_name(c)] = arrow
        source._zones = {c: z for c, z in frame_zones(data).items() if c in source._frame_types}
        return source

    def q(self, name: str) -> str:
        return "`" + str(name).replace("`", "``") + "`"

    def _arrow(self, sql: str) -> Any:
        with self._utc():
            return self.spark.sql(sql).toArrow()

    _MADE_VIEW = re.compile(r"^\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?TEMP(?:ORARY)?\s+VIEW|CACHE\s+TABLE)\s+(\w+)", re.I)

    def _made(self, name: str, cached: bool = False) -> None:
        if name not in self._views:
            self._views.append(name)
        if cached:
            self._cached = {*getattr(self, "_cached", ()), name}

    def _exec(self, sql: str) -> None:
        m = self._MADE_VIEW.match(sql)
        if m:
            self._made(m.group(1), cached=sql.lstrip()[:5].upper() == "CACHE")
        with self._utc():
            self.spark.sql(sql)

    def _register(self, name: str, table: Any) -> None:
        self._made(name)
        with self._utc():
            self.spark.createDataFrame(table).createOrReplaceTempView(name)

    grouping_fn = "grouping_id"
    list_agg = "collect_list"

    def _materialize(self, name: str, query: str) -> None:
        # CACHE TABLE ... AS is eager: the GROUPING SETS job runs once, its rows stay cached
        self._made(name, cached=True)
        with self._utc():
            self.spark.sql(f"CACHE TABLE {name} AS {query}")

    def _drop_materialized(self, name: str) -> None:
        with self._utc():
            self.spark.sql(f"UNCACHE TABLE IF EXISTS {name}")
            self.spark.catalog.dropTempView(name)

    def timestamp_text(self, expr: str, kind: str, zone: str | None) -> str:
        """:meth:`SQLSource.timestamp_text`: :func:`python_timestamp_text` (a typed timestamp's text in
        hierarchies' keys, the checks and a CSV release, :meth:`_copy`)."""
        return python_timestamp_text(expr, kind, zone, self._zone_fixes.get(zone or "", ()))

    def _engine_zone_offsets(self, zone: str, lo: int, hi: int) -> Any:
        """Java's offsets of ``zone`` (:func:`java_offsets`) over the input's range of values."""
        return java_offsets(self.spark, zone, lo, hi)

    def _epoch_us(self, expr: str) -> str:
        return f"unix_micros({expr})"

    def _int_div(self, a: str, b: int) -> str:
        return f"(({a}) DIV {b})"

    def merge_hint(self, *aliases: str) -> str:
        """``/*+ MERGE(f), MERGE(s) */``: the row-by-row audit checks join the audit with the numbered
        written release ``f`` and the numbered input ``s`` as sort-merge joins. Without it Spark
        broadcast the written release (its size estimated from the compressed Parquet file: a few MB
        for a million rows, hundreds of MB once decoded and built into a hash table), which ran the
        default 1 GB driver heap out of memory at 1M rows (``docs/benchmarks.md``, "Spark audit
        within the default heap")."""
        return "/*+ " + ", ".join(f"MERGE({a})" for a in aliases) + " */ "

    def _timestamp_kinds(self, rel: str) -> dict[str, str]:
        """Column -> ``"timestamp"``/``"timestamp_ntz"`` of the typed timestamp columns of the view ``rel``
        (the input's cached; a written release's read each time: it is made again for every release)."""
        if rel in self._kinds:
            return self._kinds[rel]
        with self._utc():
            fields = self.spark.table(rel).schema.fields
        kinds = {f.name: k for f in fields if (k := _timestamp_kind(f.dataType)) is not None}
        if rel == "src":
            self._kinds[rel] = kinds
        return kinds

    def _copy(self, query: str, path: str, parquet: bool) -> None:
        with self._utc():  # (Spark's CSV writer writes a timestamp in the session's zone)
            df = self._sorted_once(query)
            if not parquet:
                # a typed timestamp as the numpy path writes it (Spark's CSV writer: ISO, milliseconds only):
                # a projection over the sorted rows (same partitions, same order)
                kinds = [_timestamp_kind(f.dataType) for f in df.schema.fields]
                if any(kinds):
                    from pyspark.sql import functions as F

                    df = df.select(*(F.expr(self.timestamp_text(self.q(f.name), k, self._zones.get(f.name))).alias(f.name)
                                     if k else F.col(self.q(f.name)) for f, k in zip(df.schema.fields, kinds)))  # fmt: skip
            typed = self._typed_columns(df) if parquet and self._typed_out else {}
            texts: dict[str, str] = {}
            if typed:
                # a DataFrame's column released unchanged written with its type, as the numpy path's release
                # (pandas' to_parquet) writes it: the text held in Spark (from_pandas) cast back, over the
                # sorted rows (same partitions, same order). Checked on the written file: row by row against
                # the input with an audit (_verify_audit), else against these texts, written beside the typed
                # columns in the same rows and compared by pyarrow in the part files' rewrite, which then
                # leaves them out (_zone_parts, check_typed_texts)
                from pyspark.sql import functions as F

                cols = [f.name for f in df.schema.fields]
                if any(c.startswith(TYPED_ID) for c in cols):
                    raise InputError(f"the input has a column named {next(c for c in cols if c.startswith(TYPED_ID))!r}, "
                                     f"which is the prefix of the release's own text columns ({TYPED_ID!r}); rename it")  # fmt: skip
                if not self._audit_pending and self._check_texts:
                    texts = {f"{TYPED_ID}{j}": c for j, c in enumerate(typed)}
                df = df.select(*(F.expr(self._typed_expr(self.q(c), typed[c])).alias(c) if c in typed else F.col(self.q(c))
                                 for c in cols), *(F.col(self.q(c)).alias(t) for t, c in texts.items()))  # fmt: skip
            one = not parquet and len(df.schema.fields) == 1 and df.schema.fields[0].dataType.typeName() == "string"
            if one:
                # one column: an empty field would be an empty line, which Spark's CSV writer leaves out
                # (a missing value) and readers skip (an empty string; the verification then refused the
                # run). pandas writes "" there, for a missing value too: so does this
                from pyspark.sql import functions as F

                name = df.schema.fields[0].name
                df = df.select(F.coalesce(F.col(self.q(name)), F.lit("")).alias(name))
            w = df.write.mode("errorifexists")
            # Spark's CSV writer strips the spaces around every field by default, the header's names too: a
            # DataFrame's ' sex ' was written 'sex' (its names are exact on every engine), a kept ' x ' 'x' (the
            # audit's check refused the run); pandas writes both as they are, and so does this
            spaces = {"ignoreLeadingWhiteSpace": False, "ignoreTrailingWhiteSpace": False}
            if parquet:
                w.parquet(path)
                self._zone_parts(path, {c: self._frame_arrow[c] for c in typed if c in self._frame_arrow}, texts)
            elif one:
                w.csv(path, header=True, quote='"', escape='"', nullValue="", emptyValue='""', **spaces)
            else:
                w.csv(path, header=True, quote='"', escape='"', nullValue="", emptyValue="", **spaces)

    # ---- a DataFrame's kept columns typed in a Parquet release (docs/engines.md, "Types of a Parquet release")
    _frame_types: dict[str, str] = {}  # a DataFrame's column -> the Spark type its release writes it with (from_pandas)
    _frame_arrow: dict[str, Any] = {}  # ... -> the Arrow type its part files then give it (_frame_arrow_type)
    _typed_out = False  # set by release(): the release is written to a Parquet file the caller named (out=)
    _check_texts = True  # without an audit, the typed columns are checked against their texts (_copy; off: benchmarks only)

    def _typed_columns(self, df: Any) -> dict[str, str]:
        """The columns of the release ``df`` to write typed: a DataFrame's columns with a type
        (:attr:`_frame_types`) released unchanged (not a quasi-identifier, whose labels are text), held
        as text."""
        qi = set(self.qi)
        return {f.name: self._frame_types[f.name] for f in df.schema.fields
                if f.name in self._frame_types and f.name not in qi and f.dataType.typeName() == "string"}  # fmt: skip

    @staticmethod
    def _typed_expr(e: str, typ: str) -> str:
        """SQL: the text ``e`` (pandas' text of the DataFrame's cell, :meth:`from_pandas`) as a value of
        ``typ``. A boolean only from ``True`` / ``False`` (any other text is NULL, which the check of the
        written file then refuses)."""
        if typ == "BOOLEAN":
            return f"CASE WHEN {e} = 'True' THEN true WHEN {e} = 'False' THEN false END"
        if typ == "NANOS":  # (the session is in UTC: a naive text reads as its wall clock; an aware one has its offset)
            return (f"unix_micros(CAST({e} AS TIMESTAMP)) * 1000 + "
                    f"coalesce(CAST(nullif(regexp_extract({e}, '[.][0-9]{{6}}([0-9]{{3}})', 1), '') AS BIGINT), 0)")
        return f"CAST({e} AS {typ})"

    def released_text(self, alias: str, col: str, rel: str = "src") -> str:
        """:meth:`SQLSource.released_text`; a written release's boolean column typed from a DataFrame's
        (:meth:`_copy`) as the numpy path's text, ``True`` / ``False`` (Spark's ``CAST`` gives ``true``)."""
        e = f"{alias}.{self.q(col)}"
        if rel != "src" and self._frame_types.get(col) == "BOOLEAN" and self._written_type(rel, col) == "boolean":
            return f"CASE WHEN {e} THEN 'True' WHEN NOT {e} THEN 'False' ELSE '' END"
        if rel != "src" and self._frame_types.get(col) == "NANOS" and col not in self._zones and self._written_type(rel, col) == "long":
            # a naive ns value (read as its nanoseconds, _read_written) in pandas' text, from the number itself
            us = f"(({e} - pmod({e}, 1000)) DIV 1000)"
            return f"coalesce({python_timestamp_text(f'timestamp_micros({us})', 'timestamp_ntz', nanos=f'pmod({e}, 1000)')}, '')"
        return super().released_text(alias, col, rel)

    def mapped_text(self, alias: str, col: str, rel: str, tag: str) -> tuple[str, str] | None:
        """:meth:`SQLSource.mapped_text`; a written release's float column typed from a DataFrame's
        (:meth:`_copy`) gets pandas' text of its value (Spark's is Java's, ``1.0E20``) from the column's
        map of the DataFrame's texts (:meth:`from_pandas`), joined by Spark's text of the value they
        parse to (distinct for distinct values, ``-0.0`` apart from ``0.0``); a value not in it gets
        :data:`UNMAPPED`, and the check refuses the row."""
        typ = self._frame_types.get(col)
        e = f"{alias}.{self.q(col)}"
        if rel != "src" and typ in ("DOUBLE", "FLOAT") and self._written_type(rel, col) in ("double", "float"):
            join = f" LEFT JOIN {self._float_text_view(col, typ)} {tag} ON CAST({e} AS STRING) = {tag}.k"
        elif rel != "src" and typ == "TIMESTAMP" and self._written_type(rel, col) == "timestamp":
            # an aware value by its instant: Python's text of it in the zone (the DataFrame's) is not Java's
            # where their zone data differ (Amsterdam 1930: +00:19:32 in Python, +00:00 in Java)
            join = f" LEFT JOIN {self._instant_text_view(col)} {tag} ON {e} = {tag}.k"
        elif rel != "src" and typ == "NANOS" and col in self._zones and self._written_type(rel, col) == "long":
            # an aware ns value (its nanoseconds since the epoch, _read_written) the same way, by its instant
            join = f" LEFT JOIN {self._instant_text_view(col, nanos=True)} {tag} ON {e} = {tag}.k"
        else:
            return super().mapped_text(alias, col, rel, tag)
        return join, f"CASE WHEN {e} IS NULL THEN '' ELSE coalesce({tag}.v, {self.UNMAPPED}) END"

    def _instant_text_view(self, col: str, nanos: bool = False) -> str:
        """A view of the DataFrame's aware timestamp column ``col``'s distinct texts ``v`` (pandas', with
        their offset) keyed by ``k``, the instant each reads as (``nanos``: its nanoseconds since the
        epoch, :meth:`_typed_expr`) (made once)."""
        name = f"twtext{self.columns.index(col)}"
        if name not in self._views:
            k = self._typed_expr("v", "NANOS") if nanos else "CAST(v AS TIMESTAMP)"
            self._exec(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT {k} AS k, v FROM "
                       f"(SELECT DISTINCT {self.q(col)} AS v FROM src WHERE {self.q(col)} IS NOT NULL) t")  # fmt: skip
        return name

    def _written_type(self, rel: str, col: str) -> str | None:
        with self._utc():
            for f in self.spark.table(rel).schema.fields:
                if f.name == col:
                    return f.dataType.typeName()
        return None

    def _float_text_view(self, col: str, typ: str) -> str:
        """A view of the DataFrame's float column ``col``'s texts ``v`` (pandas') keyed by ``k``, Spark's
        text of the ``typ`` value each parses to (made once)."""
        name = f"fwtext{self.columns.index(col)}"
        if name not in self._views:
            self._register(f"{name}_raw", self._float_pairs[col].select(["v"]))
            self._exec(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT DISTINCT CAST(CAST(v AS {typ}) AS STRING) AS k, v "
                       f"FROM {name}_raw WHERE v IS NOT NULL")  # fmt: skip
        return name

    def _zone_parts(self, path: str, types: dict | None = None, texts: dict | None = None) -> None:
        """Every part file of the Parquet release directory ``path`` Spark wrote, given the schema the
        numpy path writes (:func:`~tempanon.data.io.zone_written_parquet`: an aware timestamp column in
        its input's zone, where Spark writes the instants, read back ``tz=UTC``; every field nullable):
        each part that differs is rewritten in place inside the temporary directory (renamed into place
        as a whole afterwards, once verified), the others only have their footer read. A rewritten
        part's checksum file (``.part-....crc``, Hadoop's local file system, which checks a file it
        reads against it) is removed: it describes the bytes Spark wrote; without one the part is read
        unchecked, as any file. ``types``: a typed column -> its Arrow type (:func:`_frame_arrow_type`:
        unsigned integers, ``ms`` and ``ns`` timestamps, which Spark writes in a wider type), by a safe
        cast: a value the type cannot hold is refused, naming the column. ``texts``: a text column Spark
        wrote beside a typed one -> the typed column (:meth:`_copy`, without an audit): each part's typed
        values, as cast, are compared row by row with the release's texts, parsed by pyarrow
        (:func:`~tempanon.data.io.check_typed_texts`: a mismatch is a :class:`VerificationError` naming the
        release row, numbered over the parts in name order, the column and both values), and the text
        columns are left out of the rewritten part; every part is then rewritten."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from tempanon.data.io import zone_written_parquet

        row = 0
        for part in sorted(Path(path).glob("part-*")):
            try:
                rewritten = part.is_file() and zone_written_parquet(part, self._zones, types, texts, row)
            except pa.ArrowInvalid as exc:
                raise VerificationError(f"the Parquet release's typed column(s) {', '.join(map(repr, types or {}))} cannot be given "
                                        f"the type the numpy path writes: {exc}") from None  # fmt: skip
            if rewritten:
                part.with_name(f".{part.name}.crc").unlink(missing_ok=True)
            if texts and part.is_file():
                with pq.ParquetFile(part) as pf:
                    row += pf.metadata.num_rows

    # ---- kanon's audited release: its rows sorted once (docs/engines.md, "What it costs") ----------
    _audit_pending = False
    _sorted: tuple | None = None

    def release(self, node, k, *, audit=None, **kwargs):
        """:meth:`SQLSource.release`; with ``audit`` the release's sorted rows are kept (persisted,
        memory and disk) with their input row number while the release is written, and the audit's
        input lines are written from them (:meth:`_sorted_once`), then dropped."""
        self._audit_pending = audit is not None
        out = kwargs.get("out")
        self._typed_out = out is not None and _is_parquet(out)
        try:
            return super().release(node, k, audit=audit, **kwargs)
        finally:
            self._audit_pending = self._typed_out = False
            self._drop_sorted()

    def _drop_sorted(self) -> None:
        if self._sorted is not None:
            df, self._sorted = self._sorted[0], None
            with suppress(Exception), self._utc():  # a stopped session: nothing cached any more
                df.unpersist()

    def _sorted_once(self, query: str) -> Any:
        """The DataFrame :meth:`_copy` writes for ``query``. The audited release's query
        (``SELECT <release columns> <body> ORDER BY <order>, s.__tempanon_rn``, while
        :meth:`release` runs with an audit) is run once with the input row number as one more
        column, persisted, and written without it; the audit's query
        (``SELECT s.__tempanon_rn + 2 AS input_line <body> ORDER BY <order>``, the same body and
        order) is then that persisted result's row number + 2, **in its partitions**: no second
        sort, and the audit's part ``i`` holds the input lines of the release's part ``i`` in its
        row order (the numbering over the parts in name order is the one the audit check verifies
        row by row against the written release, :meth:`SQLSource._verify_audit`). Any other query
        is run as it is. (Were a persisted partition lost and recomputed with other range
        boundaries, the check would refuse the run: nothing is trusted.)"""
        rn, prefix = f"s.{AUDIT_RN}", "SELECT "
        if self._sorted is not None:
            head = f"SELECT {rn} + 2 AS input_line "
            full, release_query = self._sorted
            tail = query[len(head) - 1:] if query.startswith(head) else None
            if tail and release_query.endswith(tail) and release_query[: -len(tail)].startswith(prefix):
                from pyspark.sql import functions as F

                return full.select((F.col(AUDIT_RN) + 2).alias("input_line"))
        if (self._audit_pending and self._sorted is None and query.startswith(prefix)
                and not query.startswith(prefix + "DISTINCT") and query.endswith(f", {rn}")):  # fmt: skip
            full = self._persisted(self.spark.sql(f"SELECT {rn} AS {AUDIT_RN}, {query[len(prefix):]}"))
            self._sorted = (full, query)
            return full.drop(AUDIT_RN)
        return self.spark.sql(query)

    def _persisted(self, df: Any, disk: bool = False) -> Any:
        """``df`` persisted (memory and disk; ``disk``: on disk only, out of the driver's heap), partitioned
        as it would be without (adaptive execution coalescing a small release's shuffle partitions; Spark
        runs a persisted plan without it unless this is set when the plan is persisted)."""
        from pyspark import StorageLevel

        key = "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning"
        old = self.spark.conf.get(key, None)
        self.spark.conf.set(key, "true")
        try:
            return df.persist(StorageLevel.DISK_ONLY if disk else StorageLevel.MEMORY_AND_DISK)
        finally:
            if old is None:
                self.spark.conf.unset(key)
            else:
                self.spark.conf.set(key, old)

    def _read_written(self, path: str, parquet: bool) -> str:
        self._made("tempanon_written")
        # a DataFrame's ns timestamp column (_copy) read as its nanoseconds: Spark's timestamps hold microseconds
        nanos = parquet and "NANOS" in self._frame_types.values()
        key = "spark.sql.legacy.parquet.nanosAsLong"
        with self._utc():
            old = self.spark.conf.get(key, None) if nanos else None
            if nanos:
                self.spark.conf.set(key, "true")
            try:
                r = self.spark.read
                # multiLine when a written part holds a line break inside a quoted value (a kept 'a\nb', which
                # Spark's writer quotes): without it such a record was read back as two and the release refused
                # (exit 3); each part file is then read in one split, in file order
                multi = not parquet and any(map(quoted_line_break, sorted(Path(path).glob("part-*")) or [path]))
                df = r.parquet(path) if parquet else r.csv(path, header=True, quote='"', escape='"', inferSchema=False, nullValue="",
                                                           multiLine=multi)  # fmt: skip
            finally:
                if nanos:
                    self.spark.conf.unset(key) if old is None else self.spark.conf.set(key, old)
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
        # (written from the release's persisted sorted rows, in its partitions: _sorted_once; then dropped)
        self._copy(f"SELECT s.{AUDIT_RN} + 2 AS input_line {body} ORDER BY {order}", rows, False)
        self._drop_sorted()
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
        the release's total order, ``ORDER BY``) run once and persisted with each row's
        ``monotonically_increasing_id`` **after the sort** (the sort's output partition ``p`` in its
        upper bits, the row's place in that partition, a range of the total order, in its lower
        bits); the rows are counted per partition (a small table), and each row's ``release_row``
        is its partition's offset plus its place + 1: its position over the partitions in order,
        i.e. over the part files in name order, as the release's rows are numbered. The rows are
        then written with that number first as CSV part files (from the persisted rows, in their
        partitions: no second sort), and the parts concatenated by the driver (bytes, each part's
        header line dropped) behind ``head`` and one header line. Spark's CSV writer quotes a value
        only when needed, as the in-memory path's (pandas) does. The numbers are not trusted:
        :func:`tempanon.temporal.outofcore._verify_audit` checks every audit row against the written
        release. (Before, the rows were written, read back, numbered and sorted again.)"""
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        numbered, m = path + ".numbered", f"{AUDIT_RN}_m"
        with self._utc():
            tagged = self.spark.sql(query).select("*", F.monotonically_increasing_id().alias(m))
            tagged = tagged.persist(StorageLevel.MEMORY_AND_DISK)
            try:
                groups = tagged.groupBy(F.shiftright(F.col(m), 33).alias("p")).agg(
                    F.count(F.lit(1)).alias("c"), F.min(m).alias("m0")).toArrow().to_pylist()  # fmt: skip
                groups.sort(key=lambda g: g["p"])
                if groups:
                    off, whens = 0, []
                    for g in groups:
                        whens.append(f"WHEN {int(g['p'])} THEN {off + 1 - int(g['m0'])}")
                        off += int(g["c"])
                    number = F.expr(f"CASE shiftright({m}, 33) {' '.join(whens)} END + {m}").alias("release_row")
                    self._made("tempanon_audit_numbered")
                    tagged.select(number, *(F.col(self.q(c)) for c in cols)).createOrReplaceTempView("tempanon_audit_numbered")
                    self._copy("SELECT * FROM tempanon_audit_numbered", numbered, False)
                    self.spark.catalog.dropTempView("tempanon_audit_numbered")
            finally:
                tagged.unpersist()
        with open(path, "wb") as fh:
            fh.write((head + ",".join(["release_row", *cols]) + "\n").encode("utf-8"))
            for part in sorted(Path(numbered).glob("part-*")) if Path(numbered).exists() else []:
                with open(part, "rb") as src:
                    src.readline()  # the part's header line
                    shutil.copyfileobj(src, fh, 1 << 20)
        shutil.rmtree(numbered, ignore_errors=True)

    def _new_audit_temp(self, target: Path) -> str:
        # Spark's reader skips a file whose name starts with "." (the hidden temporary name): the audit
        # is written to a plain name inside a hidden temporary folder beside the target, checked there
        # by Spark, renamed into place and the folder removed (SQLSource.release)
        holder = self._new_temp_path(target)
        os.mkdir(holder)
        return os.path.join(holder, target.name)

    def _verify_audit(self, audit: str, read: str, rows_out: int, *, out_cols, joins: str) -> None:
        """:meth:`SQLSource._verify_audit`'s checks, the same refusals and messages, at a lower cost on
        Spark: (1) the audit's row counts (``rows_out`` rows, release rows 1..N once each, distinct
        input lines): first by the driver, streaming the written audit file (:func:`_plain_audit`:
        release rows exactly 1..N in order, input lines distinct integers inside the input, a bitmap
        of one bit per input row); only when that fast check does not pass, the general count query
        (two ``count(DISTINCT)``), which decides and names the fault; (2) every audit row against
        the written release and the input: one join (audit, the numbered written release, the
        numbered input ``LEFT JOIN``-ed) that counts the audit rows whose input line exists and
        finds the first release row whose values differ, instead of the mismatch query and a second
        join for the existence count; the first mismatch's values are fetched only on refusal."""
        from tempanon.lattice.source_duckdb import _first

        a = self._audit_with_columns(audit)
        if not _plain_audit(audit, ["release_row", "input_line"], rows_out, self.n_rows):
            self._audit_counts(a, rows_out)
        pos, exp, got, differs, mjoins = self._audit_comparison(out_cols, read)
        rn, rr, il = AUDIT_RN, "TRY_CAST(x.release_row AS BIGINT)", "TRY_CAST(x.input_line AS BIGINT)"
        # the input's columns the comparison reads (its quasi-identifiers, the released ones)
        need = [c for c in self.columns if c in pos or c in out_cols]
        joined = (f"FROM {a} x JOIN {self._numbered(read, out_cols)} f ON {rr} = f.{rn} + 1 "
                  f"LEFT JOIN {self._numbered('src', need)} s ON {il} - 2 = s.{rn} {joins}{mjoins}")  # fmt: skip
        matched, first_bad = self._rows(f"SELECT {self.merge_hint('f', 's')}count(s.{rn}) AS matched, "
                                        f"min(CASE WHEN s.{rn} IS NOT NULL AND ({differs}) THEN {rr} END) AS bad {joined}")[0]  # fmt: skip
        if first_bad is not None:
            bad = _first(self._rows(
                f"SELECT {self.merge_hint('f', 's')}{rr} AS rr, {il} AS il, " + ", ".join(f"{e} AS e{j}, {g} AS g{j}" for j, (e, g) in enumerate(zip(exp, got)))
                + f" {joined} WHERE s.{rn} IS NOT NULL AND {rr} = {int(first_bad)}"
            ))  # fmt: skip
            rr_, il_, vals = bad[0], bad[1], bad[2:]
            j = next(j for j in range(len(out_cols)) if vals[2 * j] != vals[2 * j + 1])
            raise VerificationError(f"audit row for release row {rr_}: column {out_cols[j]!r} of input line {il_} generalizes "
                                    f"to {vals[2 * j]!r}, the release row has {vals[2 * j + 1]!r}")  # fmt: skip
        if matched != rows_out:
            raise VerificationError(f"the audit names {rows_out - matched} input line(s) that are not in the input")

    def _audit_relation(self, audit: str) -> str:
        self._made("tempanon_audit")
        with self._utc():
            df = self.spark.read.csv(audit, header=True, comment="#", quote='"', escape='"', inferSchema=False)
            df.createOrReplaceTempView("tempanon_audit")
        return "tempanon_audit"

    def _read_back(self, path: str) -> pd.DataFrame:
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pandas()

    def close(self) -> None:
        """Drop the cached tables and every temporary view this source made in the session (the
        session stays: it may be the caller's), the newest first (a view before the views it reads)."""
        try:
            self._finish_batch()
        except Exception:
            pass
        made, cached = getattr(self, "_views", []), getattr(self, "_cached", set())
        for v in [*reversed(made), *(v for v in ("tempanon_written", "tempanon_audit", "v_expected", "v_released", "src",
                                                 "tempanon_input") if v not in made)]:  # fmt: skip
            try:
                with self._utc():
                    if v in cached:  # (only a cached one: a plain view whose own views are gone fails to resolve)
                        try:
                            self.spark.sql(f"UNCACHE TABLE IF EXISTS {self.q(v)}")
                        except Exception:  # pragma: no cover
                            pass
                    self.spark.catalog.dropTempView(v)
            except Exception:  # pragma: no cover - a stopped session: nothing left to drop
                pass
        self._views, self._cached = [], set()
        self._drop_sorted()
        shutil.rmtree(getattr(self, "_tmpdir", ""), ignore_errors=True)


__all__ = ["SparkSource", "local_session", "utc_session"]
