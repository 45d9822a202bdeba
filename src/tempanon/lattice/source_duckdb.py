"""DuckDB frequency-set source: CSV or Parquet read in place, out of core (issue 15).

The table stays in DuckDB; the driver holds only hierarchies and frequency sets. As in Incognito's
DB2 implementation (LeFevre et al., SIGMOD 2005, Section 3) every quasi-identifier's hierarchy is a
**dimension table** (value text -> base code, and at release time -> code and label at the chosen
level) joined to the data by the value, and a frequency set is ``SELECT ..., count(*) GROUP BY``.

* values are compared as text: ``coalesce(CAST(col AS VARCHAR), '')`` (CSV is read with every
  column as text, empty cells missing, so this is the text the numpy path sees; a missing value is
  the empty string, :data:`tempanon.hierarchy.core.MISSING`);
* :meth:`DuckDBSource.bottom` runs one ``GROUP BY`` over the joined base codes (and the
  respondent or sensitive column) and fetches the result as Arrow;
* :meth:`DuckDBSource.release` writes the generalized table with ``COPY`` to a temporary file
  beside the target (Parquet or CSV by the target's suffix), verifies the **written file** with an
  independent query (:meth:`DuckDBSource.verify_file`) and renames it into place; with ``audit``
  the steward's audit (release row -> input line) is written by a second ``COPY`` of the same rows,
  checked row by row by SQL with the release and renamed into place first (on Spark, whose release
  is a directory of part files, ``release_row`` counts the rows over the part files in name order:
  :class:`~tempanon.lattice.source_spark.SparkSource`);
* ``memory_limit`` (e.g. ``"4GB"``) sets DuckDB's ``memory_limit``; operators beyond it spill to a
  private ``temp_directory`` removed on :meth:`close`.

When the bottom set does not fit the driver the engine computes the frequency sets the search asks
for (one ``GROUPING SETS`` job per Incognito iteration); a set of more rows than
:meth:`SQLSource.fetch_limit` is then not fetched either: it stays in the engine as an
:class:`EngineFrequencySet`, whose check asks the engine for the classes smaller than k and their
tuples only, and whose rollups run in the engine until one is small enough to fetch.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tempanon.data.scratch import scratch_dir
from tempanon.errors import HierarchyError, InputError, TempanonError, VerificationError
from tempanon.lattice.dimension import Dimension
from tempanon.lattice.freqset import FrequencySet, Table, group_rows, table_frequency_set
from tempanon.lattice.source import BYTES_PER_DRIVER_ROW, FrequencySource, Release, rows_in_memory


AUDIT_RN = "__tempanon_rn"
"""The input row number (0-based, file order) the steward audit numbers the source with."""

_CACHE_ROWS = 1 << 22
"""Engine frequency sets of at most this many rows are kept for a second request (see
:meth:`SQLSource._engine_frequency_set`)."""


def qident(name: str) -> str:
    """A SQL identifier for a column name (double quotes doubled)."""
    return '"' + str(name).replace('"', '""') + '"'


def qstr(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


#: the end of the engine's failure to make or open its files in the temporary folder (its spill folder, the
#: work database of ``timestamped --engine duckdb``): exit 4, the input is not at fault
TEMP_FOLDER_HINT = ("; nothing was written (the temporary folder is TMPDIR's, else the system's: give TMPDIR a folder "
                    "it can write, with room for the work database and DuckDB's spill)")


MAX_THREADS = 1024
"""The most DuckDB worker threads :func:`open_duckdb` sets (``threads=``): more is a mistake, not a machine."""


def open_duckdb(*, memory_limit: str | None = None, threads: int | None = None, connection: Any = None) -> tuple[Any, str]:
    """A DuckDB connection (``connection`` or a new in-memory one) spilling to a private temporary
    directory, with ``memory_limit`` and ``threads`` set; returns ``(connection, directory)``. A bad
    setting closes both and raises :class:`InputError`. The session's time zone is UTC: the text of
    a time-zone-aware timestamp (a kept column, a hierarchy's key) is then the same on every machine,
    not the local zone's (``TZ``)."""
    import duckdb

    if threads is not None:  # checked first: threads=2.7 was truncated to 2, 0 said only 'bad setting', and 100000
        # started 100,000 threads (the machine's load above 7,000) before the work began
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= MAX_THREADS:
            if connection is not None:
                close_duckdb(connection)
            raise InputError(f"threads must be an integer from 1 to {MAX_THREADS} (DuckDB's worker threads), got {threads!r}")
    try:
        tmpdir = scratch_dir("duckdb")
    except OSError as exc:  # the temporary folder full, not writable, gone: the engine's own files, not the input
        if connection is not None:
            close_duckdb(connection)
        raise EngineFailure(f"the DuckDB engine failed (an engine failure, not the input): cannot make its spill folder in "
                            f"the temporary folder {tempfile.gettempdir()}: {exc}{TEMP_FOLDER_HINT}") from exc  # fmt: skip
    con = connection if connection is not None else duckdb.connect(":memory:")
    try:
        con.execute(f"SET temp_directory = {qstr(tmpdir)}")
        con.execute("SET TimeZone = 'UTC'")
        if memory_limit is not None:
            con.execute(f"SET memory_limit = {qstr(memory_limit)}")
        if threads is not None:
            con.execute(f"SET threads = {int(threads)}")
    except duckdb.Error as exc:
        close_duckdb(con, tmpdir)
        raise InputError(f"DuckDB engine: bad setting ({exc})") from exc
    return con, tmpdir


def close_duckdb(con: Any, tmpdir: str | None = None) -> None:
    """Close a connection from :func:`open_duckdb` (errors ignored) and remove its spill directory."""
    if con is not None:
        try:
            con.close()
        except Exception:
            pass
    if tmpdir:
        shutil.rmtree(tmpdir, ignore_errors=True)


def check_header(sample: str, sep: str, path: Any) -> list[str]:
    """The names of a CSV file's header (its first line that is not blank, as pandas and DuckDB take it),
    refused with the numpy path's reader's checks and messages (:func:`tempanon.data.io.read_table`) when
    it names a column twice (an engine would rename one silently): "duplicate column name(s) 'q' (columns 1
    and 3); every column needs a name of its own" (:func:`~tempanon.data.io.check_column_names`)."""
    import csv
    import io

    from tempanon.data.io import check_column_names

    # (newline="": a header ending in a lone carriage return, old Mac line ends, is a line as for pandas and
    # DuckDB; the csv module refused it with a traceback)
    sample = sample[1:] if sample.startswith("\ufeff") else sample  # (a byte order mark: not part of the first name)
    header = next((row for row in csv.reader(io.StringIO(sample, newline=""), delimiter=sep) if row), [])
    check_column_names(header, path)
    return header


def check_parquet_names(path: str | os.PathLike) -> None:
    """The column names of a Parquet file as written in it (:func:`tempanon.data.io.check_column_names`):
    DuckDB renames an unnamed column and one differing from another only in case, Spark refuses the
    latter (``COLUMN_ALREADY_EXISTS``), before ``SQLSource`` sees the names. A file that cannot be
    read here is left to the engine to refuse."""
    from tempanon.data.io import check_column_names

    try:
        import pyarrow.parquet as pq

        names = pq.read_schema(str(path)).names
    except Exception:  # not a readable Parquet file (or a directory of parts): the engine says so
        return
    check_column_names(names, path)


def parquet_zones(path: str | os.PathLike) -> dict[str, str]:
    """The time zone of every time-zone-aware timestamp column of a Parquet input, as its Arrow schema
    names it (what pandas, so the numpy path, reads it in): column name (stripped) -> zone."""
    try:
        import pyarrow as pa
        import pyarrow.dataset as ds

        schema = ds.dataset(str(path), format="parquet").schema
    except Exception:  # unreadable here: the engine's reading reports it
        return {}
    return {f.name.strip(): str(f.type.tz) for f in schema if pa.types.is_timestamp(f.type) and f.type.tz}


def frame_zones(data: pd.DataFrame) -> dict[str, str]:
    """:func:`parquet_zones` of a pandas DataFrame: column (its exact name, :func:`_column_name`) -> the
    zone of its aware dtype."""
    return {_column_name(c): str(t.tz) for c, t in data.dtypes.items() if isinstance(t, pd.DatetimeTZDtype)}


def _spaced_header(path: str) -> list[str] | None:
    """The header names of the CSV file ``path`` (written by the engine: ``,``-separated, ``"``-quoted)
    when one has spaces around it, else ``None``."""
    import csv

    with open(path, encoding="utf-8", newline="") as fh:
        names = next(csv.reader(fh, delimiter=",", quotechar='"', doublequote=True), [])
    return names if any(n != n.strip() for n in names) else None


def _header_name(name: Any) -> str:
    """A file's column name as every engine takes it: a CSV header's (or a Parquet file's) name with the
    spaces around it stripped, as :func:`tempanon.data.io.read_table` reads it (`` age `` is ``age``)."""
    return str(name).strip()


def _column_name(name: Any) -> str:
    """A DataFrame's column name as every engine takes it: exactly as given (`` age `` stays `` age ``),
    as the numpy path keeps it; the roles name it so, and the release's header writes it so. (Two names
    that are one once stripped are refused: :func:`tempanon.data.io.check_column_names`.)"""
    return str(name)


_FIXED_OFFSET = re.compile(r"^([+-])(\d\d):(\d\d)$")
_UTC_NAMES = {"UTC", "Etc/UTC", "utc", "Z", "+00:00", "-00:00"}


def duckdb_timestamp_text(expr: str, kind: str, zone: str | None = None,
                          fixes: Sequence[tuple[int, int, int]] = ()) -> str:
    """DuckDB SQL giving a typed timestamp ``expr`` the text Python (the numpy path) gives it,
    ``str(pandas.Timestamp)``, as :func:`tempanon.lattice.source_spark.python_timestamp_text` does on
    Spark: ``2021-01-02 00:00:00``, ``2021-01-02 00:00:01.234000`` (six digits when the microseconds
    are not zero; nine, ``.234567891``, when a ``TIMESTAMP_NS`` value has nanoseconds), and for a
    time-zone-aware value (``kind == "timestamp"``) the wall clock in ``zone`` (its Parquet column's,
    default UTC) with its offset, ``+00:00``, ``-04:00`` (``+HH:MM:SS`` for an offset with seconds,
    e.g. a zone's local mean time before 1900). DuckDB's ``CAST`` gives ``... 00:00:00+00`` and trims
    trailing zeros (``00:00:01.234``). NULL stays NULL.

    ``fixes`` (:func:`zone_offset_fixes`): the intervals ``[start, end)`` (epoch seconds) where DuckDB's
    zone data (ICU) gives ``zone`` another offset than Python's; there the wall clock is the UTC one plus
    Python's offset (e.g. Europe/Amsterdam's ``+00:19:32`` of 1930, which ICU, linking Amsterdam to
    Brussels, gives as ``+00:00``)."""
    wall, off = expr, ""
    if kind == "timestamp":
        m = _FIXED_OFFSET.match(zone or "")
        if zone is None or zone in _UTC_NAMES:
            wall, off = f"timezone('UTC', {expr})", "'+00:00'"
        elif m:  # a fixed offset (pyarrow's '+05:30'): ICU has no such zone name
            secs = (1 if m.group(1) == "+" else -1) * (int(m.group(2)) * 3600 + int(m.group(3)) * 60)
            wall, off = f"(timezone('UTC', {expr}) + INTERVAL ({secs}) SECOND)", qstr(zone)
        else:
            wall = f"timezone({qstr(zone)}, {expr})"
            if fixes:
                def at(sec: int) -> str:
                    return f"TIMESTAMPTZ {qstr(_utc_text(sec))}"

                cases = " ".join(f"WHEN {expr} >= {at(a)} AND {expr} < {at(b)} THEN (timezone('UTC', {expr}) + INTERVAL ({o}) SECOND)"
                                 for a, b, o in fixes)  # fmt: skip
                wall = (f"(CASE WHEN {expr} < {at(fixes[0][0])} OR {expr} >= {at(fixes[-1][1])} THEN {wall} "
                        f"{cases} ELSE {wall} END)")  # fmt: skip
            d = f"((epoch_us(CAST({wall} AS TIMESTAMP)) - epoch_us(CAST({expr} AS TIMESTAMPTZ))) // 1000000)"  # (exact: whole seconds)
            a = f"abs({d})"
            off = (f"(CASE WHEN {d} < 0 THEN '-' ELSE '+' END || lpad(CAST({a} // 3600 AS VARCHAR), 2, '0') || ':' || "
                   f"lpad(CAST(({a} % 3600) // 60 AS VARCHAR), 2, '0') || "
                   f"CASE WHEN {a} % 60 = 0 THEN '' ELSE ':' || lpad(CAST({a} % 60 AS VARCHAR), 2, '0') END)")  # fmt: skip
    n = f"strftime({wall}, '%n')"
    frac = f"(CASE WHEN {n} = '000000000' THEN '' WHEN right({n}, 3) = '000' THEN '.' || left({n}, 6) ELSE '.' || {n} END)"
    # (|| keeps NULL NULL; concat() would make it the empty string)
    return f"(strftime({wall}, '%Y-%m-%d %H:%M:%S') || {frac}" + (f" || {off})" if off else ")")


def _utc_text(sec: int) -> str:
    """Epoch seconds as a UTC timestamp's text for a DuckDB ``TIMESTAMPTZ`` literal."""
    import datetime as _dt

    t = _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=int(sec))
    return f"{t.year:04d}-{t:%m-%d %H:%M:%S}+00"


_PY_SECONDS = (-62135596800 + 86400, 253402300799 - 86400)
"""The epoch seconds Python's ``datetime`` holds (years 1 to 9999), a day inside."""

ZONE_GRID_SECONDS = 6 * 3600
"""The step of the grid on which :func:`zone_offset_fixes` compares the zone data's offsets before it
finds each change to the second: of two changes of one zone data's offset within one step only one
would be found (no zone's rules have such a pair)."""


def icu_offsets(con: Any, zone: str) -> Any:
    """:func:`zone_offset_fixes`' ``engine_offsets`` of DuckDB (its ICU zone data) on the connection
    ``con``: an array of epoch seconds -> the UTC offsets (seconds) of the named ``zone`` there."""
    import pyarrow as pa

    def offsets(secs: np.ndarray) -> np.ndarray:
        name = f"tempanon_zone_grid_{secrets.token_hex(4)}"
        con.register(name, pa.table({"s": pa.array(secs, pa.int64())}))
        try:
            rows = con.execute(f"SELECT s, epoch_us(CAST(timezone({qstr(zone)}, make_timestamptz(s * 1000000)) AS TIMESTAMP)) "
                               f"// 1000000 - s FROM {name}").fetchall()  # fmt: skip
        finally:
            con.unregister(name)
        got = dict(rows)
        return np.array([got[int(x)] for x in secs], dtype=np.int64)

    return offsets


def zone_offset_fixes(zone: str, lo: int, hi: int, engine_offsets: Any, step: int = ZONE_GRID_SECONDS,
                      cells: Any = None) -> list[tuple[int, int, int]]:  # fmt: skip
    """The intervals ``(start, end, offset)`` (epoch seconds, ``[start, end)``; the offset in seconds)
    within ``[lo, hi]`` where an engine's zone data (``engine_offsets``: epoch seconds -> UTC offsets in
    seconds, an array of each; DuckDB: :func:`icu_offsets`, ICU; Spark: Java's,
    :func:`tempanon.lattice.source_spark.java_offsets`) gives the named zone ``zone`` another UTC offset
    than Python's (``zoneinfo`` as pandas, so the numpy path, converts an aware Parquet column), with
    Python's offset; ``[]`` when they agree throughout. ICU's and Java's data merge zones that agree
    since 1970 (Europe/Amsterdam is Brussels', Oslo and Stockholm Berlin's, Atlantic/Reykjavik
    Abidjan's), Debian's (Python's) keeps each zone's own history, so before then the offsets can be
    another zone's; another release of a zone data can differ on any date. Both offsets are compared on
    a grid of ``step`` seconds over ``[lo, hi]`` and every change of either is found to the second
    (bisection), so the intervals are exact unless one zone data changes its offset twice within one
    step (no zone's rules do). ``cells`` (the indices ``epoch seconds // step`` of the steps that hold a
    value): the grid is only their bounds, so a range with few values (a sentinel ``9999-12-31``) costs
    no more than its values; between those steps, where no value lies, the intervals are not exact.
    ``[]`` for a zone Python does not know (no reference text)."""
    import zoneinfo

    lo, hi = max(int(lo), _PY_SECONDS[0]), min(int(hi), _PY_SECONDS[1])
    if hi < lo:
        return []
    try:
        zi = zoneinfo.ZoneInfo(zone)
    except Exception:  # (pandas does not read such a column either)
        return []

    def py(secs: Sequence[int]) -> np.ndarray:  # (pandas' conversion: the numpy path's text is pandas')
        utc = pd.DatetimeIndex(np.asarray(secs, dtype=np.int64).astype("datetime64[s]")).tz_localize("UTC")
        return utc.tz_convert(zi).tz_localize(None).asi8 - utc.tz_localize(None).asi8

    def engine(secs: Sequence[int]) -> np.ndarray:
        return np.asarray(engine_offsets(np.asarray(secs, dtype=np.int64)), dtype=np.int64)

    if cells is None:
        grid = np.arange(lo, hi + 1, step, dtype=np.int64)
    else:
        c = np.asarray(cells, dtype=np.int64)
        grid = np.unique(np.clip(np.concatenate([c * step, (c + 1) * step]), lo, hi))
    grid = np.unique(np.concatenate([grid, [lo, hi]]))
    changes: set[int] = set()
    for offsets in (py, engine):
        o = offsets(grid)
        cells = np.nonzero(o[1:] != o[:-1])[0]
        a, b = grid[cells], grid[cells + 1]  # offset(a) != offset(b): a change in (a, b]
        left = o[cells]
        while len(a) and (b - a > 1).any():
            mid = (a + b) // 2
            same = offsets(mid) == left
            a, b = np.where(same, mid, a), np.where(same, b, mid)
        changes.update(int(x) for x in b)
    starts = np.array(sorted({lo, *changes}), dtype=np.int64)
    ends = np.append(starts[1:], hi + 1)
    p, c = py(starts), engine(starts)
    fixes: list[tuple[int, int, int]] = []
    for a, b, po, co in zip(starts, ends, p, c):
        if po == co:
            continue
        if fixes and fixes[-1][1] == a and fixes[-1][2] == po:
            fixes[-1] = (fixes[-1][0], int(b), int(po))
        else:
            fixes.append((int(a), int(b), int(po)))
    return fixes


def timestamp_kind(arrow_type: Any) -> str | None:
    """``"timestamp"`` (aware), ``"timestamp_ntz"`` (naive) or None for an Arrow type."""
    import pyarrow as pa

    if not pa.types.is_timestamp(arrow_type):
        return None
    return "timestamp" if arrow_type.tz else "timestamp_ntz"


def _duckdb_timestamp_kind(type_name: str) -> str | None:
    """:func:`timestamp_kind` of a DuckDB type's name (``TIMESTAMP WITH TIME ZONE``, ``TIMESTAMPTZ_NS``,
    ``TIMESTAMP``, ``TIMESTAMP_NS``, ``TIMESTAMP_MS``, ``TIMESTAMP_S``)."""
    t = type_name.upper()
    if t.startswith("TIMESTAMP WITH TIME ZONE") or t.startswith("TIMESTAMPTZ"):
        return "timestamp"
    return "timestamp_ntz" if t.startswith("TIMESTAMP") else None


def _is_parquet(path: str | os.PathLike) -> bool:
    suf = "".join(Path(path).suffixes).lower()
    return suf.endswith(".parquet") or suf.endswith(".pq")


def audit_holder(atmp: str, audit: str | os.PathLike) -> bool:
    """Does the temporary audit ``atmp`` sit in a folder of its own (Spark: a hidden folder holding the
    audit under a plain name, removed once the audit is renamed into place)? Compared as absolute
    paths: the temporary names are absolute, and a relative ``--audit``'s folder is no holder (taken
    for one, the steward's folder was removed with everything in it)."""
    return os.path.abspath(Path(atmp).parent) != os.path.abspath(Path(audit).parent)


class SQLSource(FrequencySource):
    """The frequency-set source of a SQL engine: the input is the view ``src``; subclasses give the
    dialect (identifier quoting, text type, anti join, temporary results) and the plumbing (run a
    query to Arrow, register an Arrow table as a view, write a query's result to a file)."""

    text_type = "VARCHAR"
    #: bottom frequency sets above this many rows stay in the engine (None: from the machine's memory)
    max_driver_rows: int | None = None
    #: above :attr:`max_driver_rows`: compute the searches' frequency sets in the engine (else refuse)
    engine_frequency_sets = True
    #: on that path, a frequency set of more than this many rows is not fetched to the driver: the
    #: engine checks it and rolls it up itself (:class:`EngineFrequencySet`); None: from the
    #: machine's memory (:func:`max_fetch_rows`), ``TEMPANON_MAX_FETCH_ROWS`` overrides
    max_fetch_rows: int | None = None
    anti_join = "ANTI JOIN"
    temp_result = "CREATE OR REPLACE TEMP TABLE"
    row_number = "row_number() OVER () - 1"

    def q(self, name: str) -> str:
        return qident(name)

    def __init__(self) -> None:
        super().__init__()
        self._zones: dict[str, str] = {}  # aware timestamp column -> its zone (a Parquet input's Arrow schema)
        self._zone_fixes: dict[str, list[tuple[int, int, int]]] = {}  # zone -> zone_offset_fixes (DuckDB)
        self._kinds: dict[str, dict[str, str]] = {}  # relation -> its typed timestamp columns' kinds
        # a DataFrame input's float columns (:meth:`_float_map`): held as the release writes them, looked up by
        # a hierarchy by their hierarchy text (as_text: 39.0 -> '39'), through a map of their distinct values
        self._float_cols: set[str] = set()
        self._float_pairs: dict[str, Any] = {}  # float column -> its map's rows (v, t), when made by the caller
        self._fmaps: dict[str, str] = {}
        # a DataFrame input's boolean columns (DuckDB): held as text True / False by the view (_init_view), written
        # BOOLEAN where released unchanged to a Parquet file (out=), as the numpy path writes them (DuckDBSource._copy)
        self._frame_bools: set[str] = set()
        self._typed_out = False  # set by DuckDBSource.release: the release is written to a Parquet file (out=) or read back
        self._frame_dtypes: dict[str, Any] = {}  # a DataFrame input's column -> its dtype (DuckDBSource)
        self._frame_cells: dict[str, Any] = {}  # ... -> numpy's Parquet type taken from its cells (_frame_cell_arrow)
        self._file_out = False  # set by DuckDBSource.release: the release is written to a Parquet file (out=)

    def text_expr(self, col: str, alias: str = "s", rel: str = "src") -> str:
        """The text of a value of column ``col`` of the relation ``rel`` (the input view ``src``, or a
        written release read back), its row named ``alias``, as hierarchies see it: missing is the
        empty string; ``CAST`` to text, but a typed timestamp has the numpy path's text (Python's
        ``str``: :meth:`timestamp_text`), so a hierarchy keyed by it matches on every engine."""
        kind = self._timestamp_kinds(rel).get(col)
        if kind is not None:
            return f"coalesce({self.timestamp_text(f'{alias}.{self.q(col)}', kind, self._zones.get(col))}, '')"
        return f"coalesce(CAST({alias}.{self.q(col)} AS {self.text_type}), '')"

    def text_join(self, col: str, table: str, alias: str, how: str = "JOIN") -> str:
        """``{how} table alias`` on the text of the input's column ``col`` (row ``s`` of ``src``) equal to
        ``alias.t``: ``ON`` :meth:`text_expr` ``= alias.t``. A typed timestamp column goes through its
        map of distinct values to their text (:meth:`_timestamp_map`, joined by the typed value), so
        its text is computed once per distinct value, not once per row and query (measured at 1M
        rows with one aware quasi-identifier on DuckDB: 1.3 s CPU per join query by the text
        expression, 0.13 s through the map)."""
        if col in self._float_cols:
            m = self._float_map(col)
        elif self._timestamp_kinds("src").get(col) is None:
            return f"{how} {table} {alias} ON {self.text_expr(col)} = {alias}.t"
        else:
            m = self._timestamp_map(col)
        return f"JOIN {m} {alias}_m ON s.{self.q(col)} IS NOT DISTINCT FROM {alias}_m.v {how} {table} {alias} ON {alias}_m.t = {alias}.t"

    def value_expr(self, col: str, alias: str = "s") -> str:
        """The value of the input's column ``col`` (row ``alias`` of ``src``) as the numpy path tells
        values apart where it compares them as values, not through a hierarchy (respondent ids, sensitive
        values, identifier screening's distinct counts): a DataFrame's float column (:attr:`_float_cols`)
        with ``-0.0`` and ``0.0`` one value (numpy factorizes the floats, which compare equal; DuckDB holds
        them as ``DOUBLE``, whose Arrow encoding and text split them, Spark as pandas' texts ``-0.0`` and
        ``0.0``); a file's float column (a Parquet double) by its text, ``-0.0`` apart from ``0.0`` (numpy
        reads a file's cells as their text, :func:`tempanon.data.io.parquet_as_text`; the engines' SQL
        grouping of doubles merges them); any other column as it is. Missing stays NULL."""
        e = f"{alias}.{self.q(col)}"
        if col in self._float_cols:
            t = f"CAST({e} AS {self.text_type})"
            return f"CASE WHEN {t} = '-0.0' THEN '0.0' ELSE {t} END"
        if col in self._float_typed():
            return f"CAST({e} AS {self.text_type})"
        return e

    def _float_typed(self) -> set[str]:
        """The input's columns of a floating type (``src``'s Arrow schema), found once."""
        if getattr(self, "_float_typed_cols", None) is None:
            import pyarrow as pa

            schema = self._arrow("SELECT * FROM src LIMIT 0").schema
            self._float_typed_cols = {f.name for f in schema if pa.types.is_floating(f.type)}
        return self._float_typed_cols

    def _timestamp_map(self, col: str) -> str:
        """The name of a table of the distinct values ``v`` of the input's typed timestamp column ``col``
        (a missing value too) and their text ``t`` (:meth:`text_expr`), made in the engine on first use."""
        maps = self._tmaps
        if col not in maps:
            name = f"tmap{self.columns.index(col)}"
            kind = self._timestamp_kinds("src")[col]
            text = f"coalesce({self.timestamp_text('x.v', kind, self._zones.get(col))}, '')"
            self._drop_materialized(name)  # (a map of that name another source left in the session is replaced)
            self._materialize(name, f"SELECT x.v AS v, {text} AS t FROM (SELECT DISTINCT s.{self.q(col)} AS v FROM src s) x")
            maps[col] = name
        return maps[col]

    def _float_map(self, col: str) -> str:
        """The name of a table of the distinct values ``v`` of the DataFrame input's float column ``col``
        (:attr:`_float_cols`; a missing value too) and their hierarchy text ``t``, made on first use. The
        engine holds such a column as the numpy path releases it (DuckDB: ``DOUBLE``, whose text is
        pandas'; Spark: pandas' text of each cell, ``39.0``, ``1e+20``), so a kept or sensitive float is
        released as numpy writes it; a hierarchy looks it up, as on the numpy path, by
        :func:`~tempanon.hierarchy.core.as_text` (``39.0`` -> ``"39"``, missing ``""``), computed here
        in Python once per distinct value the engine holds (one ``DISTINCT`` query)."""
        if col not in self._fmaps:
            import pyarrow as pa

            from tempanon.hierarchy.core import as_text

            name = f"fmap{self.columns.index(col)}"
            pairs = self._float_pairs.get(col)  # (Spark: made from the DataFrame's cells, from_pandas)
            if pairs is None:
                v = self._arrow(f"SELECT DISTINCT s.{self.q(col)} AS v FROM src s").column("v")
                # (a float32 column as float32, as the numpy path's as_text takes it)
                t = as_text(pd.Series(v.to_numpy(zero_copy_only=False)))
                pairs = pa.table({"v": v, "t": pa.array(t.tolist(), pa.string())})
            self._register(name, pairs)
            self._fmaps[col] = name
        return self._fmaps[col]

    UNMAPPED = "'<not an input value>'"
    """The text :meth:`mapped_text` gives a typed timestamp that is not in its column's map (no input row
    has it): no timestamp's text, so it differs from every expected one."""

    def mapped_text(self, alias: str, col: str, rel: str, tag: str) -> tuple[str, str] | None:
        """``(join, text)``: the text of the typed timestamp column ``col`` of the relation ``rel`` (its row
        named ``alias``) as :meth:`released_text` gives it, taken from the map of the input column's distinct
        values to their text (:meth:`_timestamp_map`) by a ``LEFT JOIN`` on the typed value (alias ``tag``),
        once per distinct value instead of per row; a value the map does not hold gets :data:`UNMAPPED`.
        None when ``col`` is not a typed timestamp of the same kind in the input and in ``rel`` (then
        :meth:`released_text` per row)."""
        kind = self._timestamp_kinds("src").get(col)
        if kind is None or self._timestamp_kinds(rel).get(col) != kind:
            return None
        join = f" LEFT JOIN {self._timestamp_map(col)} {tag} ON {alias}.{self.q(col)} IS NOT DISTINCT FROM {tag}.v"
        return join, f"coalesce({tag}.t, {self.UNMAPPED})"

    def released_text(self, alias: str, col: str, rel: str = "src") -> str:
        """The text of column ``col`` of the relation ``rel`` (a view: ``src``, or the written release
        read back), its row named ``alias``, as a release writes it and the checks compare a column
        released unchanged with it: :meth:`text_expr` (a typed timestamp in the numpy path's text, the
        text a CSV release writes it with, :meth:`_copy`)."""
        return self.text_expr(col, alias, rel)

    def timestamp_text(self, expr: str, kind: str, zone: str | None) -> str:
        """The engine's SQL giving the typed timestamp ``expr`` (``kind``: ``"timestamp"`` aware,
        ``"timestamp_ntz"`` naive) Python's text, an aware one in ``zone``; NULL stays NULL
        (DuckDB: :func:`duckdb_timestamp_text`, in Python's offsets where ICU's differ for the input's
        values: :meth:`DuckDBSource._find_zone_fixes`)."""
        return duckdb_timestamp_text(expr, kind, zone, self._zone_fixes.get(zone or "", ()))

    def _engine_zone_offsets(self, zone: str, lo: int, hi: int) -> Any:
        """:func:`zone_offset_fixes`' ``engine_offsets`` of this engine's zone data for values in ``[lo,
        hi]`` (epoch seconds; DuckDB: ICU, :func:`icu_offsets`)."""
        return icu_offsets(self.con, zone)

    def _epoch_us(self, expr: str) -> str:
        """SQL: the microseconds since the epoch of the aware timestamp ``expr``."""
        return f"epoch_us(CAST({expr} AS TIMESTAMPTZ))"

    def _find_zone_fixes(self) -> None:
        """:func:`zone_offset_fixes` of each named zone of the input's aware columns over the range of
        their values (one ``min``/``max`` query; the grid only on the steps that hold a value, one
        ``DISTINCT`` query per zone), so that :meth:`timestamp_text` gives every value
        Python's text: an engine takes a zone's rules from its own zone data (DuckDB ICU, Spark Java),
        the numpy path from Python's, and they differ before 1970 for zones the engine's data merges
        into others (Europe/Amsterdam in 1930: ``+00:19:32`` in Python, ``+00:00`` in ICU and Java).
        Nothing changes where they agree (then no interval)."""
        named = {c: z for c, z in self._zones.items() if z not in _UTC_NAMES and not _FIXED_OFFSET.match(z) and c in self.columns}
        if not named:
            return
        cols = list(named)
        sel = ", ".join(f"{self._epoch_us(f'min({self.q(c)})')}, {self._epoch_us(f'max({self.q(c)})')}" for c in cols)
        row = self._rows(f"SELECT {sel} FROM src")[0]
        ranges: dict[str, tuple[int, int]] = {}
        for i, c in enumerate(cols):
            lo, hi = row[2 * i], row[2 * i + 1]
            if lo is None:
                continue
            lo, hi = int(lo) // 1_000_000, -(-int(hi) // 1_000_000)
            a, b = ranges.get(named[c], (lo, hi))
            ranges[named[c]] = (min(a, lo), max(b, hi))
        step = ZONE_GRID_SECONDS
        for z, (lo, hi) in ranges.items():
            # the steps holding a value (and their neighbours: the engine's integer division may truncate)
            parts = " UNION ALL ".join(f"SELECT {self._int_div(self._epoch_us(self.q(c)), step * 1_000_000)} AS k FROM src"
                                       for c in cols if named[c] == z)  # fmt: skip
            ks = np.array([r[0] for r in self._rows(f"SELECT DISTINCT k FROM ({parts}) x WHERE k IS NOT NULL")], dtype=np.int64)
            cells = np.unique(np.concatenate([ks - 1, ks, ks + 1]))
            fixes = zone_offset_fixes(z, lo, hi, self._engine_zone_offsets(z, lo, hi), step, cells)
            if fixes:
                self._zone_fixes[z] = fixes

    def _int_div(self, a: str, b: int) -> str:
        """SQL: the integer quotient of ``a`` by ``b`` (DuckDB ``//``; Spark ``DIV``)."""
        return f"(({a}) // {b})"

    def _timestamp_kinds(self, rel: str) -> dict[str, str]:
        """Column -> ``"timestamp"``/``"timestamp_ntz"`` of the typed timestamp columns of the relation
        ``rel`` (the input's cached; a written release's read each time: it is made again for every
        release)."""
        if rel in self._kinds:
            return self._kinds[rel]
        kinds = {name: k for name, k in self._column_kinds(f"SELECT * FROM {rel}") if k is not None}
        if rel == "src":
            self._kinds[rel] = kinds
        return kinds

    def _column_kinds(self, query: str) -> list[tuple[str, str | None]]:
        """The columns of ``query`` with their :func:`timestamp_kind` (None for any other type)."""
        schema = self._arrow(f"SELECT * FROM ({query}) q LIMIT 0").schema
        return [(f.name, timestamp_kind(f.type)) for f in schema]

    def merge_hint(self, *aliases: str) -> str:
        """A hint (put after ``SELECT``) that the joins of the relations named ``aliases`` run as
        sort-merge joins, not one side broadcast: none here (Spark: :meth:`SparkSource.merge_hint`)."""
        return ""

    # plumbing (subclasses)
    def _arrow(self, sql: str) -> Any:
        raise NotImplementedError

    def _rows(self, sql: str) -> list:
        return [tuple(r.values()) for r in self._arrow(sql).to_pylist()]

    def _exec(self, sql: str) -> None:
        raise NotImplementedError

    def _register(self, name: str, table: Any) -> None:
        raise NotImplementedError

    def _copy(self, query: str, path: str, parquet: bool) -> None:
        raise NotImplementedError

    def _read_written(self, path: str, parquet: bool) -> str:
        raise NotImplementedError

    def _new_temp_path(self, target: Path) -> str:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        os.unlink(tmp)
        return tmp

    def _read_back(self, path: str) -> pd.DataFrame:
        return pd.read_parquet(path)

    def _unlink(self, path: str) -> None:
        p = Path(path)
        if p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)

    def _is_nan(self, value: str) -> str:
        """SQL that is true when the float ``value`` is NaN."""
        return f"isnan({value})"

    def _init_view(self, scan: str) -> None:
        import pyarrow as pa

        from tempanon.data.io import check_column_names

        schema = self._arrow(f"SELECT * FROM {scan} LIMIT 0").schema
        names = [f.name for f in schema]
        check_column_names(names, self.input)  # (Spark keeps a Parquet file's names; DuckDB's are checked in from_path)
        name = _column_name if self.input in ("DataFrame", "Spark DataFrame") else _header_name

        # integer columns holding a missing value: pandas reads them as floats (2 is 2.0), so the view
        # does too (one count over those columns, from the Parquet statistics where the engine has them)
        # Not so where pandas keeps them integers: a DataFrame's nullable integers (Int64: 2 stays 2) and a
        # Parquet column pandas wrote from one (its ``pandas`` metadata names the nullable dtype)
        keep = _nullable_int_columns(self.input)  # (None: every integer column)
        ints = [] if keep is None else [f.name for f in schema if pa.types.is_integer(f.type) and f.name not in keep]
        int_missing: set[str] = set()
        if ints:
            row = self._rows("SELECT " + ", ".join(f"count(*) - count({self.q(c)}) AS m{i}" for i, c in enumerate(ints))
                             + f" FROM {scan}")[0]  # fmt: skip
            int_missing = {c for c, m in zip(ints, row) if m}

        def column(f: Any) -> str:
            n, alias = self.q(f.name), self.q(name(f.name))
            if pa.types.is_boolean(f.type):
                # a boolean's text as the numpy path has it (Python's str, pandas' CSV writer): True / False,
                # not SQL's true / false, so hierarchies, releases and checks see the same values on every engine
                return f"CASE WHEN {n} THEN 'True' WHEN NOT {n} THEN 'False' END AS {alias}"
            if pa.types.is_floating(f.type):
                # a float NaN is missing, as pandas reads it (SQL keeps it as a value, text 'nan' / 'NaN')
                return f"CASE WHEN {self._is_nan(n)} THEN NULL ELSE {n} END AS {alias}"
            if f.name in int_missing:
                return f"CAST({n} AS DOUBLE) AS {alias}"
            return f"{n} AS {alias}"

        cols = ", ".join(column(f) for f in schema)
        self._exec(f"CREATE OR REPLACE TEMP VIEW src AS SELECT {cols} FROM {scan}")
        self._columns = [name(n) for n in names]
        self._kinds, self._tmaps, self._fmaps = {}, {}, {}
        self._n_rows = None
        self._texts = []
        self._codes = []

    # ---- the table -------------------------------------------------------------------------------
    @property
    def columns(self) -> list[str]:
        return list(self._columns)

    @property
    def n_rows(self) -> int:
        if self._n_rows is None:
            self._n_rows = int(self._rows("SELECT count(*) AS n FROM src")[0][0])
        return self._n_rows

    def _first_rows(self, column: str, where: str) -> pd.Series:
        """First row number (0-based, file order) of each distinct text of ``column`` matching ``where``
        (a DataFrame's float column by its hierarchy text: :meth:`_float_map`)."""
        if column in self._float_cols:
            text = (f"SELECT m.t AS t, x.rn AS rn FROM (SELECT s.{self.q(column)} AS v, {self.row_number} AS rn FROM src s) x "
                    f"JOIN {self._float_map(column)} m ON x.v IS NOT DISTINCT FROM m.v")  # fmt: skip
        else:
            text = f"SELECT {self.text_expr(column)} AS t, {self.row_number} AS rn FROM src s"
        sql = f"SELECT t, min(rn) AS r FROM ({text}) x WHERE {where} GROUP BY t ORDER BY r"
        tab = self._arrow((sql))
        return pd.Series(tab.column("t").to_pylist(), index=tab.column("r").to_pylist(), dtype=object)

    def first_missing_row(self, column: str) -> Any | None:
        n = self._rows(f"SELECT count(*) AS n FROM src WHERE {self.q(column)} IS NULL")[0][0]
        if not n:
            return None
        return int(self._rows(
            f"SELECT min(rn) AS r FROM (SELECT {self.q(column)} AS v, {self.row_number} AS rn FROM src) t WHERE v IS NULL"
        )[0][0])  # fmt: skip

    def count_present(self, column: str) -> int:
        """Rows where ``column`` is not missing (identifier screening's near-unique signal)."""
        return int(self._rows(f"SELECT count(s.{self.q(column)}) AS n FROM src s")[0][0])

    def missing_and_distinct(self, columns: Sequence[str]) -> tuple[int, dict[str, tuple[int, int]]]:
        """The rows, and each column's missing cells and distinct present values, in one query (the
        warning of an id-like column without ``--uid``:
        :func:`tempanon.steward.init.respondent_id_warning_engine`)."""
        cols = list(columns)
        aggs = ", ".join(f"count(s.{self.q(c)}) AS p{j}, count(DISTINCT {self.value_expr(c)}) AS d{j}" for j, c in enumerate(cols))
        row = self._rows(f"SELECT count(*) AS n{', ' + aggs if aggs else ''} FROM src s")[0]
        n = int(row[0])
        return n, {c: (n - int(row[1 + 2 * j]), int(row[2 + 2 * j])) for j, c in enumerate(cols)}

    def respondent_uniqueness(self, column: str, uid: str) -> tuple[int, int, int]:
        """Identifier screening's per-respondent signal (:func:`tempanon.data.screen._near_unique_reasons`)
        over the distinct (respondent, present value) pairs: the respondents, those holding a value
        no other respondent has, and the distinct values."""
        v, u = self.value_expr(column), self.value_expr(uid)  # (-0.0 and 0.0 as numpy tells them apart)
        row = self._rows(
            f"WITH p AS (SELECT DISTINCT {u} AS u, {v} AS v FROM src s WHERE s.{self.q(column)} IS NOT NULL), "
            "h AS (SELECT v, count(*) AS c FROM p GROUP BY v) "
            "SELECT count(DISTINCT p.u) AS n, count(DISTINCT CASE WHEN h.c = 1 THEN p.u END) AS own, "
            "count(DISTINCT p.v) AS d FROM p JOIN h ON p.v = h.v"
        )[0]  # fmt: skip
        return int(row[0]), int(row[1]), int(row[2])

    def distinct_values(self, column: str) -> pd.Series:
        if column in self._float_cols and (column in self.qi or column in self._fmaps):
            # a DataFrame's float quasi-identifier: its hierarchy text (:meth:`_float_map`); else, as a kept
            # column, the text its release writes (below)
            tab = self._arrow(f"SELECT DISTINCT t FROM {self._float_map(column)} ORDER BY t")
            return pd.Series(tab.column("t").to_pylist(), dtype=object)
        if column in self._float_cols:  # (kept: its released text, -0.0 and 0.0 one value as numpy's screening counts them)
            tab = self._arrow(f"SELECT DISTINCT coalesce({self.value_expr(column)}, '') AS t FROM src s ORDER BY t")
            return pd.Series(tab.column("t").to_pylist(), dtype=object)
        kind = self._timestamp_kinds("src").get(column)
        if kind and (column in self.qi or column in self._tmaps):  # (its map, made once: text_join)
            tab = self._arrow(f"SELECT DISTINCT t FROM {self._timestamp_map(column)} ORDER BY t")
            return pd.Series(tab.column("t").to_pylist(), dtype=object)
        if kind:  # a typed timestamp's text once per distinct value, not per row (identifier screening)
            text = f"coalesce({self.timestamp_text('x.v', kind, self._zones.get(column))}, '')"
            tab = self._arrow(f"SELECT DISTINCT {text} AS t FROM (SELECT DISTINCT s.{self.q(column)} AS v FROM src s) x ORDER BY t")
            return pd.Series(tab.column("t").to_pylist(), dtype=object)
        tab = self._arrow((f"SELECT DISTINCT {self.text_expr(column)} AS t FROM src s ORDER BY t"))
        return pd.Series(tab.column("t").to_pylist(), dtype=object)

    # ---- encoding and the bottom frequency set ---------------------------------------------------
    def encode(self, qi: Sequence[str], encoders: Mapping[str, Any]) -> list[Dimension]:
        import pyarrow as pa

        from tempanon.hierarchy.builders import HierarchySpec

        self.qi, self.encoders = list(qi), dict(encoders)
        dims, texts = [], []
        self._codes: list[np.ndarray] = []
        for i, q in enumerate(qi):
            values = self.distinct_values(q).rename(q)
            try:
                enc = encoders[q]
                if isinstance(enc, HierarchySpec):  # built once here, from the engine's texts (_build_spec), and
                    # kept for the release and the verification (a second build gave its warnings twice)
                    enc = self.encoders[q] = self._build_spec(q, enc, values)
                d, c = enc.encode(values)
            except HierarchyError:
                self._raise_missing(q, encoders[q], values)
                self._raise_built(q, encoders[q])
                raise
            if d.name != q:
                d.name = q
            dims.append(d)
            texts.append(values.to_numpy(dtype=object))
            self._codes.append(np.asarray(c, dtype=np.int64))
            cc = np.asarray(c, dtype=np.int64)
            it = pa.int32() if d.n_base < 2**31 else pa.int64()  # INTEGER codes: a narrower GROUP BY and fetch
            levels = {f"l{v}": pa.array(d.codes[v][cc], it) for v in range(d.n_levels)}
            self._register(f"dim{i}", pa.table({"t": pa.array(values.tolist(), pa.string()), "c": pa.array(cc, it), **levels}))
        self.dims, self._texts = dims, texts
        return dims

    def _raise_missing(self, q: str, encoder: Any, values: pd.Series) -> None:
        """The error a row-by-row encoding gives (same text as :meth:`Hierarchy.encode`): the
        values missing from the hierarchy, each with the file line of its first row."""
        from tempanon.data.lines import at_line
        from tempanon.hierarchy.core import Hierarchy

        if not isinstance(encoder, Hierarchy):
            return
        known = set(encoder.with_missing().table[:, 0].tolist())
        bad = [v for v in values.tolist() if v not in known]
        if not bad:
            return
        where = "t IN (" + ", ".join(qstr(v) for v in bad) + ")"
        first = self._first_rows(q, where)  # index: 0-based row, ordered by row
        vals, rows = first.tolist(), list(first.index)
        shown = ", ".join(f"{v!r} ({at_line(r)})" for v, r in zip(vals[:5], rows[:5]))
        more = f" and {len(vals) - 5} more" if len(vals) > 5 else ""
        raise HierarchyError(f"column {encoder.name!r}: {len(vals)} value(s) missing from the hierarchy ({encoder.source}): {shown}{more}")

    def _build_spec(self, q: str, spec: Any, values: pd.Series) -> Any:
        """The hierarchy ``spec`` (:class:`~tempanon.hierarchy.builders.HierarchySpec`) builds from the
        column's distinct texts ``values`` (sorted), with the numpy path's warnings: a builder's warning
        names an example of the values (a dates hierarchy whose numeric dates could be day or month first:
        "read month first, '05/03/2023' as 3 May"), the first it meets; the numpy path hands it the texts
        in file order. So when the build warns, the warnings given are those of a build on the texts in file
        order (their first rows, :meth:`_first_rows`: one query, run only then). A refusal raises as the
        build does (:meth:`_raise_built` names the values as numpy)."""
        import warnings

        from tempanon.errors import TempanonWarning

        texts = values.tolist()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            h = spec.build(q, texts)
        if any(issubclass(w.category, TempanonWarning) for w in caught):
            ordered = self._first_rows(q, "TRUE").tolist()
            if ordered != texts:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    spec.build(q, ordered)
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
        return h

    def _raise_built(self, q: str, encoder: Any) -> None:
        """The error of a hierarchy built from the data (:class:`~tempanon.hierarchy.builders.HierarchySpec`:
        intervals, dates, ...) as the numpy path gives it: the builder refused the column's distinct texts,
        which the engine lists sorted; the numpy path hands it them in file order (``pd.unique``), and the
        builder names the bad values in the order it meets them ("unparsable date/time value(s): 'zzz',
        'aaa'"). So on a refusal the builder runs again on the texts in file order (the first row of each,
        :meth:`_first_rows`; run only then), which raises numpy's error."""
        from tempanon.hierarchy.builders import HierarchySpec

        if not isinstance(encoder, HierarchySpec):
            return
        ordered = self._first_rows(q, "TRUE")
        encoder.encode(pd.Series(ordered.tolist(), dtype=object, name=q))

    def _joins(self, prefix: str = "dim") -> str:
        return " ".join(self.text_join(q, f"{prefix}{i}", f"d{i}") for i, q in enumerate(self.qi))

    def bottom(self, uid: str | None = None, sensitive: str | None = None) -> Table:
        import pyarrow.compute as pc

        extra = uid if uid is not None else sensitive
        self._extra, self._sensitive = extra, sensitive is not None
        self._fs_cache: dict = {}
        if not self.check_fits_driver(extra):
            # the bottom set stays in the engine: frequency sets are asked of it (engine_frequency_set)
            from tempanon.lattice.freqset import EngineTable

            n_uid = 0
            if extra is not None:
                n_uid = int(self._rows(f"SELECT count(DISTINCT {self.value_expr(extra)}) AS n FROM src s")[0][0])
                if self._rows(f"SELECT count(*) AS n FROM src s WHERE s.{self.q(extra)} IS NULL")[0][0]:
                    n_uid += 1  # a missing sensitive value is a value
            self.path = "frequency sets in engine"
            self.table = EngineTable(self, self.n_rows, n_uid, sensitive is not None, int(self.estimate["distinct_rows_estimate"]))
            return self.table
        sel = [f"d{i}.c AS c{i}" for i in range(len(self.qi))]
        if extra is not None:
            sel.append(f"{self.value_expr(extra)} AS x")  # (-0.0 and 0.0 as numpy tells them apart)
        sql = f"SELECT {', '.join(sel)}, count(*) AS n FROM src s {self._joins()} GROUP BY ALL"
        tab = self._arrow((sql))
        cols = [_codes_array(tab.column(f"c{i}"), d.n_base) for i, d in enumerate(self.dims)]
        counts = tab.column("n").to_numpy().astype(np.int64)
        if extra is None:
            # GROUP BY over every quasi-identifier: the rows are already distinct, and a Table's row
            # order does not matter -- no second grouping on the driver (at 10M near-unique rows
            # that regrouping cost more CPU than the engine's GROUP BY)
            del tab
            # in code order (as the driver's own grouping left them): the search's bincounts then
            # sweep their count arrays nearly in order instead of at random (measured at 10M
            # rows: the search took 2.4x the wall time on the engine's hash order)
            radix = [max(int(d.n_base), 1) for d in self.dims]
            if math.prod(radix) < 2**63:
                key = np.zeros(len(counts), dtype=np.int64)
                for c, r in zip(cols, radix):
                    key *= r
                    key += c
                order = np.argsort(key)
                del key
            else:
                order = np.lexsort(cols[::-1])
            for i in range(len(cols)):  # one column at a time: the old one is freed before the next
                cols[i] = cols[i][order]
            counts = counts[order]
            del order
            self.table = Table(cols, counts, None, 0, self.n_rows, False)
            return self.table
        extra_codes, n_extra = None, 0
        if extra is not None:
            enc = pc.dictionary_encode(tab.column("x").combine_chunks(), null_encoding="encode")
            extra_codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            n_extra = len(enc.dictionary)
            # the sensitive values of the codes (missing: None), named by l-diversity's messages as on numpy
            self.extra_labels = enc.dictionary.to_pylist() if sensitive is not None else None
            zone = self._zones.get(extra) if sensitive is not None else None
            if zone is not None:  # an aware timestamp: its text in its column's zone, as numpy's (not the session's UTC)
                stamps = [None if v is None else pd.Timestamp(v) for v in self.extra_labels]
                self.extra_labels = [None if t is None else str((t.tz_localize("UTC") if t.tzinfo is None else t).tz_convert(zone))
                                     for t in stamps]  # fmt: skip
        fs = group_rows(
            tuple(range(len(self.dims))), (0,) * len(self.dims), cols, [d.n_base for d in self.dims],
            counts, extra_codes, n_extra, sensitive is not None,
        )  # fmt: skip
        self.table = Table([np.ascontiguousarray(c) for c in fs.cols], fs.counts, fs.uid, n_extra, self.n_rows, sensitive is not None)
        return self.table

    def check_fits_driver(self, extra: str | None) -> dict:
        """Estimate the bottom frequency set's rows **before fetching it** and refuse (exit 2) when
        it would not fit the driver (:attr:`max_driver_rows`).

        The estimate is the free bound ``min(rows, product of the columns' distinct values)``;
        when that bound is above the limit, one ``approx_count_distinct`` of the rows' hash
        (HyperLogLog) decides. ``self.estimate`` (in the summary's ``plan``) says which."""
        from tempanon.lattice.source import max_driver_rows

        limit = self.max_driver_rows if self.max_driver_rows is not None else max_driver_rows()
        bound = self.n_rows
        prod = 1
        for t in self._texts:
            prod *= max(len(t), 1)
        if extra is None and prod < bound:
            bound = prod
        est = {"distinct_rows_estimate": int(bound), "method": "bound", "driver_limit_rows": int(limit)}
        if bound > limit:
            cols = ", ".join(f"s.{self.q(c)}" for c in [*self.qi, *([extra] if extra else [])])
            approx = int(self._rows(f"SELECT approx_count_distinct(hash({cols})) AS n FROM src s")[0][0])
            est.update(distinct_rows_estimate=approx, method="approx_count_distinct")
        self.estimate = est
        if est["distinct_rows_estimate"] > limit and self.engine_frequency_sets:
            return False
        if est["distinct_rows_estimate"] > limit:
            raise InputError(
                f"the bottom frequency set has about {est['distinct_rows_estimate']:,} distinct rows, above what the driver "
                f"holds ({limit:,} rows, about {BYTES_PER_DRIVER_ROW} bytes each during the search) and frequency sets "
                "in the engine are switched off: use fewer or coarser quasi-identifiers "
                "(e.g. pre-generalize a column), or a machine with more memory"
            )
        return True

    def engine_frequency_set(self, attrs: tuple, levels: tuple) -> Any:
        """The frequency set of the node (``attrs`` at ``levels``) computed by the engine: one
        ``GROUP BY`` over the level codes of the dimension tables (plus the respondent or
        sensitive column), fetched as Arrow; identical to the driver's (tests/engine)."""
        with self._lock():  # the search may run families on threads; one connection serves one query at a time
            return self._engine_frequency_set(attrs, levels)

    def _lock(self) -> Any:
        """The lock serializing this source's engine queries (one connection, one query at a time)."""
        import threading

        return self.__dict__.setdefault("_fs_lock", threading.RLock())

    def _engine_frequency_set(self, attrs: tuple, levels: tuple) -> Any:
        key = (attrs, levels)
        fs = self._fs_cache.get(key)
        if fs is not None:
            return fs
        import pyarrow.compute as pc

        gid = self.__dict__.get("_batch", {}).pop(key, None)
        if gid is not None and self._extra is None:
            rows = self._batch_rows.get(gid, 0)
            if rows > self.fetch_limit():
                # too large for the driver: it stays in the engine, which checks it and rolls it up
                self.batch_fetches = getattr(self, "batch_fetches", 0) + 1
                return self._engine_root(gid, attrs, levels, rows)
        if gid is not None:
            # computed by the iteration's GROUPING SETS job (prepare_frequency_sets): read its rows
            sel = [f"{self._batch_cols[(j, v)]} AS g{p}" for p, (j, v) in enumerate(zip(attrs, levels))]
            if self._extra is not None:
                sel.append("x")
            sql = f"SELECT {', '.join([*sel, 'n'])} FROM {self._batch_table} WHERE gid = {int(gid)}"
            self.batch_fetches = getattr(self, "batch_fetches", 0) + 1
        else:
            sel = [f"d{j}.l{v} AS g{p}" for p, (j, v) in enumerate(zip(attrs, levels))]
            joins = " ".join(self.text_join(self.qi[j], f"dim{j}", f"d{j}") for j in attrs)
            if self._extra is not None:
                sel.append(f"{self.value_expr(self._extra)} AS x")
            sql = f"SELECT {', '.join(sel)}, count(*) AS n FROM src s {joins} GROUP BY ALL" if sel else "SELECT count(*) AS n FROM src s"
            self.engine_queries = getattr(self, "engine_queries", 0) + 1
        tab = self._arrow(sql)
        self._note_fetch(tab.num_rows)
        cols = [_codes_array(tab.column(f"g{p}"), self.dims[j].cardinality(v)) for p, (j, v) in enumerate(zip(attrs, levels))]
        counts = tab.column("n").to_numpy().astype(np.int64)
        extra_codes, n_extra = None, 0
        if self._extra is not None:
            enc = pc.dictionary_encode(tab.column("x").combine_chunks(), null_encoding="encode")
            extra_codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            n_extra = len(enc.dictionary)
        del tab
        cards = [self.dims[j].cardinality(v) for j, v in zip(attrs, levels)]
        if self._extra is None:
            # rows of a GROUP BY over the node's codes are its classes: no regrouping on the driver
            fs = FrequencySet(tuple(attrs), tuple(levels), tuple(max(int(c), 1) for c in cards), counts, None)
            fs._cols = cols
        else:
            fs = group_rows(attrs, levels, cols, cards, counts, extra_codes, n_extra, self._sensitive)
        if len(attrs) == len(self.dims) and len(fs) <= _CACHE_ROWS:
            # only nodes of the full lattice are asked again (selection, then the release); the
            # search's own frequency sets are dropped by the search when no child needs them, and
            # keeping them here would hold every root of a near-unique table on the driver
            while len(self._fs_cache) >= 4:
                self._fs_cache.pop(next(iter(self._fs_cache)))
            self._fs_cache[key] = fs
        return fs

    #: the engine's name for GROUPING SETS' set identifier (``GROUPING(...)`` in DuckDB)
    grouping_fn = "GROUPING"

    def prepare_frequency_sets(self, nodes: Sequence[tuple[tuple, tuple]]) -> None:
        """Compute the frequency sets of many nodes in **one engine job** (one scan of the table):
        ``GROUP BY GROUPING SETS`` over the level codes of the dimension tables, one grouping set
        per node, with ``GROUPING(...)`` naming the set of every result row. The result stays in the
        engine as a temporary table (spilled under ``memory_limit``); :meth:`engine_frequency_set`
        then reads each node's rows from it once (Incognito Section 3: frequency sets as
        ``GROUP BY`` queries; here the table scans of one Incognito iteration share one job).
        Nodes not prepared are computed by their own ``GROUP BY`` as before.
        """
        with self._lock():
            self._finish_batch()
            todo = sorted({(tuple(a), tuple(v)) for a, v in nodes if a and (tuple(a), tuple(v)) not in self._fs_cache})
            if not todo:
                return
            # grouping columns in order of first appearance in the sets (Spark's grouping_id must
            # list them in that order); the respondent or sensitive column first in every set
            pairs = list(dict.fromkeys((j, v) for a, lv in todo for j, v in zip(a, lv)))
            exprs = {jv: f"d{jv[0]}.l{jv[1]}" for jv in pairs}
            names = {jv: f"g_{jv[0]}_{jv[1]}" for jv in pairs}
            attrs_used = sorted({j for j, _ in pairs})
            joins = " ".join(self.text_join(self.qi[j], f"dim{j}", f"d{j}") for j in attrs_used)
            x = [self.value_expr(self._extra)] if self._extra is not None else []
            sets = ", ".join("(" + ", ".join([*x, *(exprs[jv] for jv in zip(a, lv))]) + ")" for a, lv in todo)
            all_exprs = [*x, *(exprs[jv] for jv in pairs)]  # x is grouped in every set: its bit is 0
            sel = [f"{exprs[jv]} AS {names[jv]}" for jv in pairs] + ([f"{x[0]} AS x"] if x else [])
            sel.append(f"{self.grouping_fn}({', '.join(all_exprs)}) AS gid")
            table = "tempanon_fs_batch"
            self._materialize(table, f"SELECT {', '.join(sel)}, count(*) AS n FROM src s {joins} GROUP BY GROUPING SETS ({sets})")
            width = len(pairs)
            batch = {}
            for a, lv in todo:
                in_set = set(zip(a, lv))
                # GROUPING(e1..eL): bit L-1-i set when e_i is not grouped in the row's set
                batch[(a, lv)] = sum(1 << (width - 1 - i) for i, jv in enumerate(pairs) if jv not in in_set)
            self._batch, self._batch_cols, self._batch_table = batch, names, table
            # rows of every prepared set (one pass over the job's result): the size each set is
            # fetched or left in the engine by (engine_frequency_set)
            counts = self._arrow(f"SELECT gid, count(*) AS n FROM {table} GROUP BY gid")
            self._batch_rows = dict(zip(counts.column("gid").to_pylist(), counts.column("n").to_pylist()))
            self.engine_jobs = getattr(self, "engine_jobs", 0) + 1
            self.batched_sets = getattr(self, "batched_sets", 0) + len(todo)

    def base_frequencies(self) -> list[np.ndarray]:
        """Tuples per base code of every quasi-identifier (the bottom set's marginals), in one
        ``GROUP BY GROUPING SETS`` job: what selection by loss bounds its candidates with
        (:func:`tempanon.kanon.select._loss_lower_bounds`) without a frequency set per node."""
        cached = self.__dict__.get("_base_freq")
        if cached is not None:
            return cached
        q = len(self.qi)
        sets = ", ".join(f"(d{i}.c)" for i in range(q))
        sel = [f"d{i}.c AS m{i}" for i in range(q)] + [f"{self.grouping_fn}({', '.join(f'd{i}.c' for i in range(q))}) AS gid"]
        tab = self._arrow(f"SELECT {', '.join(sel)}, count(*) AS n FROM src s {self._joins()} GROUP BY GROUPING SETS ({sets})")
        self.marginal_jobs = getattr(self, "marginal_jobs", 0) + 1
        gid = tab.column("gid").to_numpy()
        n = tab.column("n").to_numpy().astype(np.int64)
        out = []
        for i, d in enumerate(self.dims):
            pick = gid == sum(1 << (q - 1 - t) for t in range(q) if t != i)
            codes = tab.column(f"m{i}").to_numpy(zero_copy_only=False)[pick].astype(np.int64)
            out.append(np.bincount(codes, weights=n[pick], minlength=d.n_base).astype(np.int64))
        self._base_freq = out
        return out

    def finish_frequency_sets(self) -> None:
        """Drop the temporary result of :meth:`prepare_frequency_sets` (end of an iteration)."""
        with self._lock():
            self._finish_batch()

    def _finish_batch(self) -> None:
        for name in self.__dict__.get("_root_tables", []):  # before the batch (a Spark view reads it)
            self._drop_materialized(name)
        if getattr(self, "_batch_table", None):
            self._drop_materialized(self._batch_table)
        self._batch, self._batch_table, self._batch_rows, self._root_tables = {}, None, {}, []

    # ---- frequency sets left in the engine -------------------------------------------------------
    def fetch_limit(self) -> int:
        """Rows above which a frequency set of the engine path stays in the engine."""
        return self.max_fetch_rows if self.max_fetch_rows is not None else max_fetch_rows()

    def _note_fetch(self, rows: int) -> None:
        self.fetched_sets = getattr(self, "fetched_sets", 0) + 1
        self.largest_fetch = max(getattr(self, "largest_fetch", 0), int(rows))

    def _engine_root(self, gid: int, attrs: tuple, levels: tuple, rows: int) -> EngineFrequencySet:
        """A prepared set too large for the driver, copied out of the iteration's job result into its
        own temporary table (its later checks and rollups scan only its rows); dropped with the
        batch at the end of the iteration."""
        roots = self.__dict__.setdefault("_root_tables", [])
        self._n_roots = getattr(self, "_n_roots", 0) + 1
        name = f"tempanon_fs_root{self._n_roots}"  # never reused by this source
        sel = ", ".join(f"{self._batch_cols[(j, v)]} AS b{p}" for p, (j, v) in enumerate(zip(attrs, levels)))
        self._materialize(name, f"SELECT {sel}, n FROM {self._batch_table} WHERE gid = {int(gid)}")
        roots.append(name)
        self.engine_sets = getattr(self, "engine_sets", 0) + 1
        cards = tuple(max(int(self.dims[j].cardinality(v)), 1) for j, v in zip(attrs, levels))
        return EngineFrequencySet(self, name, levels, attrs, levels, cards, rows)

    def _up_map(self, j: int, old: int, new: int) -> str:
        """A registered table mapping attribute ``j``'s codes at level ``old`` to level ``new``."""
        import pyarrow as pa

        name = f"tempanon_up_{j}_{old}_{new}"
        done = self.__dict__.setdefault("_up_maps", set())
        if name not in done:
            up = np.asarray(self.dims[j].up(old, new), dtype=np.int64)
            it = pa.int32() if self.dims[j].n_base < 2**31 else pa.int64()
            self._register(name, pa.table({"c": pa.array(np.arange(len(up)), it), "u": pa.array(up, it)}))
            done.add(name)
        return name

    def _frequency_set_of(self, tab: Any, attrs: tuple, levels: tuple) -> FrequencySet:
        """A fetched ``GROUP BY`` result (columns ``g0..``, ``n``; no extra column) as a frequency set."""
        cols = [_codes_array(tab.column(f"g{p}"), self.dims[j].cardinality(v)) for p, (j, v) in enumerate(zip(attrs, levels))]
        counts = tab.column("n").to_numpy().astype(np.int64)
        cards = tuple(max(int(self.dims[j].cardinality(v)), 1) for j, v in zip(attrs, levels))
        fs = FrequencySet(tuple(attrs), tuple(levels), cards, counts, None)
        fs._cols = cols
        return fs

    def _materialize(self, name: str, query: str) -> None:
        self._exec(f"CREATE OR REPLACE TEMP TABLE {name} AS {query}")

    def _drop_materialized(self, name: str) -> None:
        self._exec(f"DROP TABLE IF EXISTS {name}")

    def describe(self) -> dict:
        out = super().describe()
        if self.path == "frequency sets in engine":
            jobs, single = getattr(self, "engine_jobs", 0), getattr(self, "engine_queries", 0)
            marg = getattr(self, "marginal_jobs", 0)
            # engine_queries: jobs that scan the table (the searches' GROUPING SETS jobs, the
            # selection's one job of value frequencies, single GROUP BYs)
            out.update(engine_queries=jobs + single + marg, grouping_sets_jobs=jobs, marginal_jobs=marg, grouping_sets=getattr(self, "batched_sets", 0),
                       grouping_sets_read=getattr(self, "batch_fetches", 0), single_group_bys=single)  # fmt: skip
            # frequency sets fetched to the driver, and those too large for it that stayed in the
            # engine (checked and rolled up there: engine_checks queries over their rows)
            out.update(fetch_limit_rows=self.fetch_limit(), sets_fetched=getattr(self, "fetched_sets", 0),
                       largest_fetched_rows=getattr(self, "largest_fetch", 0), sets_kept_in_engine=getattr(self, "engine_sets", 0),
                       engine_rollups=getattr(self, "engine_rollups", 0), engine_checks=getattr(self, "engine_checks", 0))  # fmt: skip
        return out

    # ---- release and verification ----------------------------------------------------------------
    def release(
        self,
        node: Sequence[int],
        k: int,
        *,
        uid: str | None,
        drop: Sequence[str],
        out: str | os.PathLike | None = None,
        verify: bool = True,
        max_suppressed: int = 0,
        l: int | None = None,
        sensitive: str | None = None,
        audit: str | os.PathLike | None = None,
    ) -> Release:
        """Write the generalized table at ``node`` (classes smaller than ``k`` removed) with
        ``COPY``, verify the written file, rename it to ``out``. Without ``out`` the verified
        release is read back as a DataFrame.

        ``audit`` (with ``out`` and ``verify``): the steward's audit, release row ->
        input line, as the numpy path writes it (:func:`tempanon.kanon.command.audit_text`: a
        steward-only comment line, ``# shuffle seed: <salt of the row order>``, then
        ``release_row,input_line``). As in :func:`tempanon.temporal.outofcore.write_release` the
        source is numbered in file order, that number is the order's last key (the order is total,
        so the release and the audit list the rows in the same order), and the audit is written by a
        second ``COPY`` of the same rows; :meth:`verify_file` checks it row by row against the
        written release and the input; both are then renamed into place, the audit first. On any
        failure neither file (nor a temporary file) is left. On Spark the release is a directory of
        part files and ``release_row`` counts its rows over the part files in name order
        (:class:`~tempanon.lattice.source_spark.SparkSource`, :meth:`_numbered`)."""
        import pyarrow as pa

        assert self.table is not None, "bottom() first"
        if audit is not None:
            if out is None:
                raise InputError("a steward audit needs the release written to a file (out=)")
            if not verify:
                raise InputError("a steward audit is checked by the release's verification: it cannot be written with verify=False")
        # without out the release read back as a DataFrame keeps the input's row labels (the row number
        # in the source's order), as the numpy path's does: what a job's audit maps release rows by
        carry = out is None
        if (audit is not None or carry) and AUDIT_RN in self.columns:
            raise InputError(f"the input has a column named {AUDIT_RN!r}, which the release numbers rows with; rename it")
        node = tuple(int(v) for v in node)
        fs = table_frequency_set(self.table, self.dims, tuple(range(len(self.dims))), node)
        codes, sizes, tuples = fs.classes()
        small = sizes < k
        rows_out = int(self.n_rows - tuples[small].sum())
        min_size = int(sizes[~small].min()) if (~small).any() else 0
        for i, (q, d, v) in enumerate(zip(self.qi, self.dims, node)):
            g = d.codes[v]  # base code -> code at level v
            self._register(f"rdim{i}", pa.table({
                "t": pa.array(self._texts[i].tolist(), pa.string()),
                "g": pa.array(g[np.asarray(self._base_codes_of(i))], pa.int64()),
                "label": pa.array([str(x) for x in d.labels[v][g[np.asarray(self._base_codes_of(i))]]], pa.string()),
            }))  # fmt: skip
        anti = ""
        if small.any():
            self._register("small_classes", pa.table({f"g{i}": pa.array(codes[small, i], pa.int64()) for i in range(len(self.qi))}))
            on = " AND ".join(f"r{i}.g = m.g{i}" for i in range(len(self.qi)))
            anti = f" {self.anti_join} small_classes m ON {on}"
        dropped = set(drop) | ({uid} if uid else set())
        pos = {q: i for i, q in enumerate(self.qi)}
        exprs = {c: f"r{pos[c]}.label" if c in pos else f"s.{self.q(c)}" for c in self.columns if c not in dropped}
        select = [e if e.startswith("s.") else f"{e} AS {self.q(c)}" for c, e in exprs.items()]
        joins = " ".join(self.text_join(q, f"rdim{i}", f"r{i}") for i, q in enumerate(self.qi))
        # Row order must not leak what the model hides (issue 12): rows grouped by class and, inside a
        # class, ordered by a hash of the released row salted with a fresh secret seed (recorded in the
        # steward's audit only, when one is asked for), never in input order.
        # One sort key per class (the class codes packed in mixed radix) and, inside it, a salted hash
        # of the released columns other than the quasi-identifiers (constant within a class): a
        # two-BIGINT sort instead of one over every code and label (half the COPY's CPU at 10M rows).
        salt = secrets.randbelow(2**31 - 1)
        cards = [max(int(d.cardinality(v)), 1) for d, v in zip(self.dims, node)]
        others = [e for c, e in exprs.items() if c not in pos]
        if math.prod(cards) < 2**62:
            ck = "r0.g"
            for i in range(1, len(self.qi)):
                ck = f"({ck}) * {cards[i]} + r{i}.g"
            class_key = [f"CAST({ck} AS BIGINT)"]
        else:
            class_key = [f"r{i}.g" for i in range(len(self.qi))]
        order_keys = [*class_key, f"hash({', '.join([*others, str(salt)])})"]
        body = f"FROM src s {joins}{anti}"
        if audit is not None or carry:  # numbered in file order; the number is the last key: the order is total
            body = f"FROM {self._numbered('src', self.columns)} s {joins}{anti}"
            order_keys.append(f"s.{AUDIT_RN}")
        if carry:
            select = [*select, f"s.{AUDIT_RN}"]
        order = ", ".join(order_keys)
        query = f"SELECT {', '.join(select)} {body} ORDER BY {order}"
        parquet = out is None or _is_parquet(out)
        if out is None:
            target = Path(self._tmpdir) / "release.parquet"
            tmps = [self._new_temp_path(target)]
        else:
            target = Path(out)
            try:  # (a read-only folder, a parent that is a file: a message, as for the audit, not a traceback)
                target.parent.mkdir(parents=True, exist_ok=True)
                tmps = [self._new_temp_path(target)]
            except OSError as exc:
                from tempanon.data.io import write_error

                raise write_error(out, exc) from exc
        tmp, atmp, holder = tmps[0], None, False
        try:
            if audit is not None:
                atarget = Path(audit)
                try:
                    atarget.parent.mkdir(parents=True, exist_ok=True)
                    atmp = self._new_audit_temp(atarget)
                except OSError as exc:
                    from tempanon.data.io import write_error

                    raise write_error(audit, exc) from exc
                holder = audit_holder(atmp, atarget)
                tmps += [atmp, atmp + ".rows", *([str(Path(atmp).parent)] if holder else [])]
            self._copy(query, tmp, parquet)
            if atmp is not None:
                self._write_audit(atmp, order, body, salt)
            checks = {}
            if verify:
                checks = self.verify_file(tmp, parquet, k, uid=uid, dropped=dropped, max_suppressed=max_suppressed, node=node,
                                          l=l, sensitive=sensitive, audit=atmp)  # fmt: skip
            if out is None:
                table = self._read_back(tmp)
                self._unlink(tmp)
                if carry:
                    rn = table.pop(AUDIT_RN).to_numpy(dtype=np.int64)
                    labels = getattr(self, "_frame_index", None)
                    table.index = labels[rn] if labels is not None else pd.Index(rn)
                return Release(rows_out=rows_out, min_class_size=min_size, table=table, checks=checks)
            from tempanon.data.io import replace_path

            for t, dest in ((atmp, audit), (tmp, target)):  # the audit first: a release is never left without it
                if t is None:
                    continue
                if not Path(t).is_dir():
                    os.chmod(t, 0o666 & ~_umask())
                replace_path(t, dest)  # an earlier Spark release of that name (a directory) is replaced
            if atmp is not None and holder:
                Path(atmp).parent.rmdir()  # the audit's temporary folder (Spark), now empty
        except BaseException:
            for t in tmps:
                self._unlink(t)
            raise
        return Release(rows_out=rows_out, min_class_size=min_size, path=str(target), checks=checks)

    def _numbered(self, rel: str, cols: Sequence[str]) -> str:
        """``rel`` (the input ``src``, or a written release) with every row's number, 0-based, as
        column :data:`AUDIT_RN`: file order (the order ``input_line`` and ``release_row`` count; on
        Spark, part files in name order). ``cols``: the columns of ``rel`` kept beside it."""
        return f"(SELECT *, {self.row_number} AS {AUDIT_RN} FROM {rel})"

    def _new_audit_temp(self, target: Path) -> str:
        """The temporary path the audit is written to and checked at, beside ``target``."""
        return self._new_temp_path(target)

    def _write_audit(self, path: str, order: str, body: str, salt: int) -> None:
        """The steward's audit of the release ``SELECT ... {body} ORDER BY {order}``: a second
        ``COPY`` of the same rows (their position in that total order, their input line), then the
        two comment lines of :func:`tempanon.kanon.command.audit_text` in front."""
        from tempanon.kanon.command import AUDIT_HEADER

        rows = path + ".rows"
        self._copy(f"SELECT row_number() OVER (ORDER BY {order}) AS release_row, s.{AUDIT_RN} + 2 AS input_line "
                   f"{body} ORDER BY release_row", rows, False)  # fmt: skip
        with open(path, "w", encoding="utf-8") as fh, open(rows, encoding="utf-8") as src:
            fh.write(f"{AUDIT_HEADER}\n# shuffle seed: {salt}\n")
            shutil.copyfileobj(src, fh, 1 << 20)
        Path(rows).unlink()

    def _base_codes_of(self, i: int) -> np.ndarray:
        """Base code of every distinct text of attribute ``i`` (the dimension table's ``c``)."""
        return self._codes[i]

    def verify_file(
        self,
        path: str,
        parquet: bool,
        k: int,
        *,
        uid: str | None,
        dropped: set,
        max_suppressed: int,
        node: Sequence[int],
        l: int | None = None,
        sensitive: str | None = None,
        audit: str | None = None,
    ) -> dict:
        """Independent check of the written release, by queries on the file and the input.

        Uses neither the dimension codes nor the frequency sets: the expected generalized value of
        every input row comes from the hierarchy itself (:meth:`Hierarchy.mapping`, text to text);
        the classes of the input under that mapping are counted in DuckDB and compared with the
        classes counted in the written file. Checks: the file has no dropped column; every
        released class holds exactly the input rows that generalize to it (whole classes kept,
        values generalized as the hierarchy says), with at least ``k`` rows (``k`` distinct
        respondents with ``uid``) and l-diverse when asked; at most ``max_suppressed`` rows are
        missing. ``audit`` (a written steward audit, :meth:`release`): its rows are the release's
        rows 1..N, each naming a distinct input line whose row, generalized as above, is exactly the
        release's row at that position (:meth:`_verify_audit`). Raises
        :class:`~tempanon.errors.VerificationError`."""
        import pyarrow as pa

        from tempanon.hierarchy.builders import HierarchySpec
        from tempanon.hierarchy.core import Hierarchy

        read = self._read_written(path, parquet)
        out_cols = [f.name for f in self._arrow(f"SELECT * FROM {read} LIMIT 0").schema]
        leaked = sorted(set(out_cols) & set(dropped))
        if leaked:
            raise VerificationError(f"output still has dropped column(s): {', '.join(leaked)}")
        missing = [q for q in self.qi if q not in out_cols]
        if missing:
            raise VerificationError(f"output lacks quasi-identifier column(s): {', '.join(missing)}")
        labels = []
        for i, (q, v) in enumerate(zip(self.qi, node)):
            enc = self.encoders.get(q)
            if isinstance(enc, HierarchySpec):
                enc = self._build_spec(q, enc, pd.Series(self._texts[i], dtype=object))
            if isinstance(enc, Hierarchy):
                mp = enc.mapping(v)
                self._register(f"vmap{i}", pa.table({"t": pa.array(list(mp), pa.string()), "label": pa.array(list(mp.values()), pa.string())}))
                labels.append(f"vm{i}.label")
            else:  # no hierarchy text to check against: classes by the engine's labels
                labels.append(None)
        joins, sel = [], []
        for i, q in enumerate(self.qi):
            if labels[i] is None:
                joins.append(self.text_join(q, f"rdim{i}", f"vm{i}"))
            else:
                joins.append(self.text_join(q, f"vmap{i}", f"vm{i}", "LEFT JOIN"))
            sel.append(f"vm{i}.label AS l{i}")
        size = f"count(DISTINCT {self.value_expr(uid)})" if uid else "count(*)"  # (-0.0 and 0.0 as numpy tells them apart)
        self._exec(
            f"{self.temp_result} v_expected AS SELECT {', '.join(sel)}, count(*) AS n, {size} AS sz "
            f"FROM src s {' '.join(joins)} GROUP BY ALL"
        )
        nulls = " OR ".join(f"l{i} IS NULL" for i in range(len(self.qi)))
        bad = _first(self._rows(f"SELECT * FROM v_expected WHERE {nulls} LIMIT 1"))
        if bad is not None:
            q = self.qi[[x is None for x in bad[: len(self.qi)]].index(True)]
            raise VerificationError(f"column {q!r}: an input value has no generalization in its hierarchy")
        rsel = ", ".join(f"coalesce(CAST({self.q(q)} AS {self.text_type}), '') AS l{i}" for i, q in enumerate(self.qi))
        self._exec(f"{self.temp_result} v_released AS SELECT {rsel}, count(*) AS n FROM {read} GROUP BY ALL")
        keys = [f"l{i}" for i in range(len(self.qi))]
        on = " AND ".join(f"r.{c} = e.{c}" for c in keys)
        row = _first(self._rows(
            f"SELECT {', '.join('r.' + c for c in keys)}, r.n AS rn, e.n AS en, e.sz AS esz FROM v_released r LEFT JOIN v_expected e ON {on} "
            f"WHERE e.n IS NULL OR e.n <> r.n OR e.sz < {int(k)} LIMIT 1"
        ))  # fmt: skip
        if row is not None:
            cls = dict(zip(self.qi, row[: len(self.qi)]))
            rn, en, sz = row[len(self.qi):]
            if en is None:
                raise VerificationError(f"released class {cls} is not the generalization of any input row")
            if en != rn:
                raise VerificationError(f"released class {cls} has {rn} rows; the input has {en} rows generalizing to it")
            what = "respondents" if uid else "rows"
            raise VerificationError(f"output is not {k}-anonymous: class {cls} has {sz} {what}")
        rows_out, classes, min_size = self._rows(
            f"SELECT coalesce(sum(r.n), 0) AS n, count(*) AS c, min(e.sz) AS m FROM v_released r JOIN v_expected e ON {on}"
        )[0]
        suppressed = self.n_rows - int(rows_out)
        if suppressed > max_suppressed:
            raise VerificationError(f"output suppresses {suppressed} rows, more than the allowed {max_suppressed}")
        if l is not None and sensitive is not None:
            worst = _first(self._rows(
                f"SELECT {', '.join(keys)}, max(c) AS top, sum(c) AS n FROM (SELECT {', '.join(sel)}, {self.value_expr(sensitive)} AS x, "
                f"count(*) AS c FROM src s {' '.join(joins)} GROUP BY ALL) t GROUP BY ALL HAVING max(c) * {int(l)} > sum(c) LIMIT 1"
            ))  # fmt: skip
            if worst is not None:
                raise VerificationError(f"class {dict(zip(self.qi, worst))} is not {l}-diverse")
        extra = {}
        if audit is not None:
            self._verify_audit(audit, read, int(rows_out), out_cols=out_cols, joins=" ".join(joins))
            extra["audit"] = "checked row by row against the written release and the input"
        return {"rows_out": int(rows_out), "classes": int(classes), "min_class_size": None if min_size is None else int(min_size),
                "suppressed_rows": suppressed, "verified_file": True, **extra}  # fmt: skip

    def _audit_with_columns(self, audit: str) -> str:
        """The audit as a relation, refused unless its columns are ``release_row, input_line``."""
        a = self._audit_relation(audit)
        names = [f.name for f in self._arrow(f"SELECT * FROM {a} LIMIT 0").schema]
        if names != ["release_row", "input_line"]:
            raise VerificationError(f"the audit's columns are {names}, not release_row, input_line")
        return a

    def _audit_counts(self, a: str, rows_out: int) -> None:
        """The audit ``a`` lists ``rows_out`` rows, the release rows 1..N once each, each naming a
        distinct input line (the count query; refused naming the counts)."""
        n, lo, hi, rows, lines = self._rows(
            "SELECT count(*) AS n, min(TRY_CAST(release_row AS BIGINT)) AS lo, max(TRY_CAST(release_row AS BIGINT)) AS hi, "
            "count(DISTINCT TRY_CAST(release_row AS BIGINT)) AS r, count(DISTINCT TRY_CAST(input_line AS BIGINT)) AS li "
            f"FROM {a}"
        )[0]  # fmt: skip
        if not (n == rows == lines == rows_out and (n == 0 or (lo, hi) == (1, rows_out))):
            raise VerificationError(f"the audit lists {n} rows ({rows} distinct release rows, {lines} distinct input lines); "
                                    f"the release has {rows_out}")  # fmt: skip

    def _audit_comparison(self, out_cols: Sequence[str], read: str) -> tuple[dict, list[str], list[str], str, str]:
        """What the row-by-row audit check compares: (quasi-identifier -> index, the expected text of
        every released column from the input row ``s`` and the mappings ``vm<i>``, the written text
        from the release row ``f`` of ``read``, the SQL condition "some column differs", the joins the
        texts need after ``s`` and ``f``: a typed timestamp released unchanged takes its text on both sides
        from its map by the typed value, :meth:`mapped_text`)."""
        pos = {q: i for i, q in enumerate(self.qi)}
        unknown = [c for c in out_cols if c not in pos and c not in self.columns]
        if unknown:
            raise VerificationError(f"released column(s) {', '.join(map(repr, unknown))} are not input columns")
        exp, got, joins = [], [], ""
        for j, c in enumerate(out_cols):
            if c in pos:
                exp.append(f"coalesce(vm{pos[c]}.label, '')")
            else:
                m = self.mapped_text("s", c, "src", f"tme{j}")
                joins += m[0] if m else ""
                exp.append(m[1] if m else self.released_text("s", c))
            m = self.mapped_text("f", c, read, f"tmg{j}")
            joins += m[0] if m else ""
            got.append(m[1] if m else self.released_text("f", c, read))
        return pos, exp, got, " OR ".join(f"{e} <> {g}" for e, g in zip(exp, got)) or "false", joins

    def _verify_audit(self, audit: str, read: str, rows_out: int, *, out_cols: Sequence[str], joins: str) -> None:
        """The steward's audit against the written release (``read``) and the input, by SQL (as
        :func:`tempanon.temporal.outofcore._verify_audit`): its columns are ``release_row,
        input_line``; it lists ``rows_out`` rows, the release rows 1..N once each, each naming a
        distinct input line of the input; and every column of the release row at that position is
        the input line's value generalized as :meth:`verify_file` expects it (``joins``: its joins
        of the hierarchy mappings ``vm<i>``), compared as text. Raises
        :class:`~tempanon.errors.VerificationError` naming the release row, input line, column and
        values of the first mismatch."""
        a = self._audit_with_columns(audit)
        self._audit_counts(a, rows_out)
        pos, exp, got, differs, mjoins = self._audit_comparison(out_cols, read)
        rn = AUDIT_RN
        bad = _first(self._rows(
            f"SELECT TRY_CAST(x.release_row AS BIGINT) AS rr, TRY_CAST(x.input_line AS BIGINT) AS il, "
            + ", ".join(f"{e} AS e{j}, {g} AS g{j}" for j, (e, g) in enumerate(zip(exp, got)))
            + f" FROM {a} x JOIN {self._numbered(read, out_cols)} f ON TRY_CAST(x.release_row AS BIGINT) = f.{rn} + 1 "
            f"JOIN {self._numbered('src', self.columns)} s ON TRY_CAST(x.input_line AS BIGINT) - 2 = s.{rn} {joins}{mjoins} "
            f"WHERE {differs} ORDER BY rr LIMIT 1"
        ))  # fmt: skip
        if bad is not None:
            rr, il, vals = bad[0], bad[1], bad[2:]
            j = next(j for j in range(len(out_cols)) if vals[2 * j] != vals[2 * j + 1])
            raise VerificationError(f"audit row for release row {rr}: column {out_cols[j]!r} of input line {il} generalizes "
                                    f"to {vals[2 * j]!r}, the release row has {vals[2 * j + 1]!r}")  # fmt: skip
        matched = self._rows(f"SELECT count(*) AS n FROM {a} x JOIN {self._numbered('src', self.columns)} s "
                             f"ON TRY_CAST(x.input_line AS BIGINT) - 2 = s.{rn}")[0][0]  # fmt: skip
        if matched != rows_out:
            raise VerificationError(f"the audit names {rows_out - matched} input line(s) that are not in the input")

    def _audit_relation(self, audit: str) -> str:
        """The written audit as a relation of text columns (its two comment lines skipped)."""
        return (f"read_csv({qstr(audit)}, skip = 2, header = true, all_varchar = true, delim = ',', quote = '\"', "
                "escape = '\"', nullstr = '')")  # fmt: skip

    # ---- class aggregates for the risk measures and the report ---------------------------------
    list_agg = "list"
    """The dialect's aggregate collecting a group's values into a list (Spark: ``collect_list``)."""

    def _aggregates(self, inner: str, nq: int, *, uid: bool, n_sensitive: int, classes: bool = True) -> Any:
        """:class:`~tempanon.metrics.risk.ClassAggregates` of ``inner``, a query with the class key
        columns ``k0..`` (text, never NULL), ``u`` (respondent text) with ``uid`` and ``x0..`` (one
        per sensitive column, text): ``GROUP BY`` in the engine; without sensitive columns a
        histogram of (records, respondents) over the classes is fetched (``classes``), with them one
        row per class (per class and sensitive value). ``classes=False``: the sensitive pairs only
        (``sizes`` left empty)."""
        import pyarrow.compute as pc

        from tempanon.metrics.risk import ClassAggregates

        keys = ", ".join(f"k{i}" for i in range(nq))
        r = ", count(DISTINCT u) AS r" if uid else ""
        agg = ClassAggregates(np.zeros(0, dtype=np.int64))
        if classes and n_sensitive == 0:
            # a histogram of (records, respondents) over the classes: all the measures need, and a
            # few rows even where nearly every record is its own class (one row per class would be
            # one row per record there: the driver would hold the whole table's worth)
            tab = self._arrow(f"SELECT n{', r' if uid else ''}, count(*) AS c FROM (SELECT count(*) AS n{r} FROM ({inner}) t "
                              f"GROUP BY {keys}) h GROUP BY n{', r' if uid else ''}")  # fmt: skip
            agg.sizes = np.asarray(tab.column("n").to_numpy(), dtype=np.int64)
            agg.classes = np.asarray(tab.column("c").to_numpy(), dtype=np.int64)
        elif classes:
            tab = self._arrow(f"SELECT count(*) AS n{r} FROM ({inner}) t GROUP BY {keys}")
            agg.sizes = np.asarray(tab.column("n").to_numpy(), dtype=np.int64)
        if uid and classes:
            agg.respondents_per_class = np.asarray(tab.column("r").to_numpy(), dtype=np.int64)
            agg.respondents = int(self._rows(f"SELECT count(DISTINCT u) AS r FROM ({inner}) t")[0][0])
        for j in range(n_sensitive):
            lists = self._arrow(
                f"SELECT {self.list_agg}(c) AS cs FROM (SELECT {keys}, x{j}, count(*) AS c FROM ({inner}) t "
                f"GROUP BY {keys}, x{j}) p GROUP BY {keys}"
            ).column("cs")
            lengths = np.asarray(pc.list_value_length(lists).to_numpy(zero_copy_only=False), dtype=np.int64)
            counts = np.asarray(pc.list_flatten(lists).to_numpy(zero_copy_only=False), dtype=np.int64)
            agg.sensitive.append((np.repeat(np.arange(len(lengths), dtype=np.int64), lengths), counts))
        return agg

    def input_aggregates(self, qi: Sequence[str], *, uid: str | None = None, sensitive: Sequence[str] = ()) -> Any:
        """Class aggregates of the input over ``qi`` (:class:`~tempanon.metrics.risk.ClassAggregates`).

        Values are compared as text and a missing value is its own category, the empty string, as
        :func:`tempanon.metrics.risk.measure` does in memory (:func:`~tempanon.hierarchy.core.as_text`):
        ``coalesce(CAST(col AS text), '')``, so NULL and the empty string are one category."""
        # (a typed timestamp quasi-identifier is grouped by its value: the same classes as by its text, which
        # is one text per value and '' for the missing one only, without computing the text for every row)
        # (a DataFrame's float column by its hierarchy text, as numpy measures it, 0.0 and -0.0 one: :meth:`_float_map`)
        joins: list[str] = []

        def text(c: str, timestamp_by_value: bool = False) -> str:
            if c in self._float_cols:
                joins.append(f" JOIN {self._float_map(c)} fk{len(joins)} ON s.{self.q(c)} IS NOT DISTINCT FROM fk{len(joins)}.v")
                return f"fk{len(joins) - 1}.t"
            return f"s.{self.q(c)}" if timestamp_by_value and self._timestamp_kinds("src").get(c) else self.text_expr(c)

        cols = [f"{text(q, True)} AS k{i}" for i, q in enumerate(qi)]
        if uid is not None:
            cols.append(f"{text(uid)} AS u")
        cols += [f"{text(c)} AS x{j}" for j, c in enumerate(sensitive)]
        return self._aggregates(f"SELECT {', '.join(cols)} FROM src s{''.join(joins)}", len(qi), uid=uid is not None,
                                n_sensitive=len(sensitive))  # fmt: skip

    def release_aggregates(
        self, path: str | os.PathLike, *, uid: str | None = None, sensitive: Sequence[str] = ()
    ) -> tuple[Any, list[tuple[np.ndarray, np.ndarray]]]:
        """Class aggregates of the release **as written** at ``path`` (read back by the engine as
        :meth:`verify_file` reads it), and per quasi-identifier its released values with their
        record counts ``(labels, counts)`` (one ``GROUPING SETS`` query).

        The written release has no respondent id; with ``uid`` the respondents of a released class
        are those of the input rows that generalize to it (the dimension tables of the release,
        ``rdim``), which the verification of the written file proved to be exactly its rows. Call
        after :meth:`release` wrote ``path``."""
        import pyarrow.compute as pc

        path = str(path)
        read = self._read_written(path, _is_parquet(path))
        nq = len(self.qi)
        keys = [f"k{i}" for i in range(nq)]
        cols = [f"{self.text_expr(q, 'w', read)} AS k{i}" for i, q in enumerate(self.qi)]
        cols += [f"{self.text_expr(c, 'w', read)} AS x{j}" for j, c in enumerate(sensitive)]
        inner = f"SELECT {', '.join(cols)} FROM {read} w"
        agg = self._aggregates(inner, nq, uid=False, n_sensitive=len(sensitive), classes=uid is None)
        if uid is not None:
            joins = " ".join(self.text_join(q, f"rdim{i}", f"r{i}") for i, q in enumerate(self.qi))
            ksel = ", ".join(f"r{i}.label AS k{i}" for i in range(nq))
            on = " AND ".join(f"c.{k} = e.{k}" for k in keys)
            with_ = (f"WITH c AS (SELECT {', '.join(keys)}, count(*) AS n FROM ({inner}) t GROUP BY {', '.join(keys)}), "
                     f"i AS (SELECT {ksel}, {self.text_expr(uid)} AS u FROM src s {joins})")  # fmt: skip
            tab = self._arrow(
                f"{with_} SELECT c.n AS n, e.r AS r FROM c LEFT JOIN (SELECT {', '.join(keys)}, count(DISTINCT u) AS r "
                f"FROM i GROUP BY {', '.join(keys)}) e ON {on}"
            )  # fmt: skip
            r = tab.column("r")
            if r.null_count:
                raise VerificationError("a released class is not the generalization of any input row (release aggregates)")
            # the order of the classes may differ from the query in _aggregates: sizes taken from here
            agg.sizes = np.asarray(tab.column("n").to_numpy(), dtype=np.int64)
            agg.respondents_per_class = np.asarray(r.to_numpy(), dtype=np.int64)
            # grouped before the join: the (class, respondent) pairs are a barrier the optimizer does not
            # join through (joined to the dimension tables first, the released classes match every
            # text of their labels: a product of the hierarchies' fan-outs, measured 50 GB of spill
            # for 200,000 Lands-End rows)
            on_g = " AND ".join(f"c.{k} = g.{k}" for k in keys)
            agg.respondents = int(self._rows(
                f"{with_} SELECT count(DISTINCT g.u) AS r FROM (SELECT {', '.join(keys)}, u FROM i GROUP BY {', '.join(keys)}, u) g "
                f"JOIN c ON {on_g}"
            )[0][0])  # fmt: skip
        sets = ", ".join(f"({k})" for k in keys)
        tab = self._arrow(f"SELECT {', '.join(keys)}, count(*) AS n FROM ({inner}) t GROUP BY GROUPING SETS ({sets})")
        n = np.asarray(tab.column("n").to_numpy(), dtype=np.int64)
        values = []
        for i in range(nq):
            col = tab.column(f"k{i}")
            mask = np.asarray(pc.is_valid(col).to_numpy(zero_copy_only=False), dtype=bool)  # grouped by k_i (texts are never NULL)
            labels = np.array(col.to_pylist(), dtype=object)[mask]
            values.append((labels, n[mask]))
        return agg, values

    def close(self) -> None:
        shutil.rmtree(getattr(self, "_tmpdir", ""), ignore_errors=True)


def max_fetch_rows() -> int:
    """Rows of one frequency set the engine path fetches to the driver: a sixteenth of physical
    memory at :data:`~tempanon.lattice.source.BYTES_PER_DRIVER_ROW` a row (the driver holds a few
    such sets and their rollups at once; 4.7M rows on a 24 GB machine); ``TEMPANON_MAX_FETCH_ROWS``
    overrides. (Not derived from ``TEMPANON_MAX_DRIVER_ROWS``, which only decides the path.)"""
    return max(rows_in_memory("TEMPANON_MAX_FETCH_ROWS", 1 / 16), 1)


class EngineFrequencySet(FrequencySet):
    """A frequency set too large for the driver, kept in the engine (issue 15).

    Its rows are those of a temporary table ``base`` (columns ``b0..``, ``n``: a frequency set of the
    same attributes at ``base_levels``); at ``levels`` (at least as general) it is that table rolled
    up in the engine (Rollup Property, Incognito Section 2): ``GROUP BY`` the codes mapped up the
    hierarchies by join with small code tables. The search's check asks the engine for the number of
    classes smaller than k and their tuples only (:meth:`is_anonymous`); a rollup of it is another
    engine set (:meth:`engine_rollup`) unless the set is small enough to fetch, when it is fetched
    once and rolled up on the driver. Anything else (``counts``, ``cols``, classes) fetches it."""

    def __init__(self, source: SQLSource, base: str, base_levels: tuple, attrs: tuple, levels: tuple, cards: tuple,
                 rows: int | None = None):  # fmt: skip
        self.source, self.base, self.base_levels = source, base, tuple(base_levels)
        self.attrs, self.levels, self.cards = tuple(attrs), tuple(levels), tuple(cards)
        self.keys, self.n_uid, self.sensitive = None, 0, False
        self._cols = self._uid = self._sizes = self._src = None
        self._rows = rows
        self._small: dict[int, tuple[int, int]] = {}
        self._data: FrequencySet | None = None
        self._from = base  # the rows' table (a subclass may read a view of it)

    def __repr__(self) -> str:
        return f"EngineFrequencySet(attrs={self.attrs}, levels={self.levels}, rows={self._rows}, base={self.base})"

    #: the rolled-up count's SQL (a subclass may cast it)
    _sum = "sum(t.n)"

    def _extra_keys(self) -> list[tuple[str, str]]:
        """(select, group key) pairs grouped by after the codes (none here; the joint set's respondent)."""
        return []

    def _grouped(self) -> str:
        """SQL of the set's rows (columns ``g0..``, then :meth:`_extra_keys`, ``n``) over ``_from``."""
        sel, joins, keys = [], [], []
        for p, (j, b, v) in enumerate(zip(self.attrs, self.base_levels, self.levels)):
            if v == b:
                sel.append(f"t.b{p} AS g{p}")
                keys.append(f"t.b{p}")
            else:
                joins.append(f"JOIN {self.source._up_map(j, b, v)} u{p} ON t.b{p} = u{p}.c")
                sel.append(f"u{p}.u AS g{p}")
                keys.append(f"u{p}.u")
        for s_, k_ in self._extra_keys():
            sel.append(s_)
            keys.append(k_)
        if not joins:
            return f"SELECT {', '.join(sel)}, t.n AS n FROM {self._from} t"
        return f"SELECT {', '.join(sel)}, {self._sum} AS n FROM {self._from} t {' '.join(joins)} GROUP BY {', '.join(keys)}"

    def _small_classes(self, k: int) -> tuple[int, int]:
        """(classes smaller than ``k``, their tuples), counted by the engine; sets the row count."""
        k = int(k)
        if k not in self._small:
            with self.source._lock():
                row = self.source._rows(
                    f"SELECT count(*) AS c, count(CASE WHEN n < {k} THEN 1 END) AS s, "
                    f"coalesce(sum(CASE WHEN n < {k} THEN n END), 0) AS t FROM ({self._grouped()}) x"
                )[0]  # fmt: skip
            self.source.engine_checks = getattr(self.source, "engine_checks", 0) + 1
            self._rows = int(row[0])
            self._small[k] = (int(row[1]), int(row[2]))
        return self._small[k]

    def __len__(self) -> int:
        if self._rows is None:
            with self.source._lock():
                self._rows = int(self.source._rows(f"SELECT count(*) AS c FROM ({self._grouped()}) x")[0][0])
        return self._rows

    def is_anonymous(self, k: int, max_suppressed: int = 0, l: int | None = None) -> bool:
        if l is not None:
            return self.fetch().is_anonymous(k, max_suppressed, l)
        small, tuples = self._small_classes(k)
        return small == 0 or (max_suppressed > 0 and tuples <= max_suppressed)

    def suppressed_tuples(self, k: int) -> int:
        return self._small_classes(k)[1]

    def engine_rollup(self, dims: Sequence[Dimension], levels: Sequence[int]) -> FrequencySet:
        """The frequency set at ``levels``: on the driver from this set once it is small enough to
        fetch, else another set in the engine over the same base rows."""
        from tempanon.lattice.freqset import rollup

        levels = tuple(int(v) for v in levels)
        if levels == self.levels:
            return self
        if self._data is not None or len(self) <= self.source.fetch_limit():
            return rollup(self.fetch(), dims, levels)
        self.source.engine_rollups = getattr(self.source, "engine_rollups", 0) + 1
        cards = tuple(max(int(dims[j].cardinality(v)), 1) for j, v in zip(self.attrs, levels))
        return self._rolled(levels, cards)

    def _rolled(self, levels: tuple, cards: tuple) -> EngineFrequencySet:
        """The set of the same base rows at ``levels`` (kept in the engine)."""
        return EngineFrequencySet(self.source, self.base, self.base_levels, self.attrs, levels, cards)

    def _rows_of(self, tab, data: FrequencySet) -> int:
        """The set's number of rows once fetched (``tab`` the engine's rows, ``data`` the set made of them)."""
        return len(data)

    def fetch(self) -> FrequencySet:
        """The set on the driver (fetched once, kept)."""
        if self._data is None:
            with self.source._lock():
                tab = self.source._arrow(self._grouped())
            self.source._note_fetch(tab.num_rows)
            self._data = self.source._frequency_set_of(tab, self.attrs, self.levels)
            self._rows = self._rows_of(tab, self._data)
        return self._data

    @property
    def counts(self) -> np.ndarray:  # type: ignore[override]
        return self.fetch().counts

    @property
    def cols(self) -> list[np.ndarray]:  # type: ignore[override]
        return self.fetch().cols

    def _classes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.fetch()._classes()


class DuckDBSource(SQLSource):
    """A CSV/Parquet file (or a DataFrame) served by DuckDB; see the module doc."""

    engine = "duckdb"

    def _is_nan(self, value: str) -> str:
        # not isnan(): DuckDB folds it to false from a Parquet column's statistics when they say no value is
        # missing, and its min and max leave the NaNs out (pyarrow's, polars'...): the NaN stayed a value 'nan'
        # (session 23, DuckDB 2.0.1). Neither isfinite nor isinf is folded so; neither holds for a NaN only
        return f"(NOT isfinite({value}) AND NOT isinf({value}))"

    def __init__(
        self,
        data: Any,
        *,
        memory_limit: str | None = None,
        delimiter: str | None = None,
        threads: int | None = None,
        connection: Any = None,
    ):
        super().__init__()
        import duckdb

        self.con, self._tmpdir = open_duckdb(memory_limit=memory_limit, threads=threads, connection=connection)
        self.memory_limit = memory_limit
        if isinstance(data, pd.DataFrame):
            self._frame_index = data.index  # the release read back keeps these row labels (release)
            self._frame_dtypes = {_column_name(c): d for c, d in data.dtypes.items()}
            self._frame_cells = {_column_name(c): t for j, c in enumerate(data.columns)
                                 if (t := _frame_cell_arrow(data.iloc[:, j])) is not None}  # fmt: skip
            self.con.register("tempanon_input_df", _registered_frame(data.reset_index(drop=True)))
            zones = frame_zones(data)
            scan = "tempanon_input_df"
            self.input = "DataFrame"
        header = None  # (a CSV file's header names, check_header)
        if not isinstance(data, pd.DataFrame):
            from tempanon.data.io import check_input_file

            try:
                path = check_input_file(data, delimiter=delimiter)
            except InputError:
                self.close()
                raise
            self.input = str(path)
            zones = {}
            if _is_parquet(path):
                scan = f"read_parquet({qstr(str(path))})"
                try:
                    check_parquet_names(path)
                except InputError:
                    self.close()
                    raise
                zones = parquet_zones(path)
            else:
                from tempanon.data.io import _open_text, detect_delimiter

                try:
                    with _open_text(path)() as fh:
                        sample = fh.read(65536)
                except UnicodeDecodeError:
                    self.close()
                    from tempanon.data.io import not_utf8_message

                    raise InputError(not_utf8_message(path)) from None
                except (OSError, EOFError) as exc:  # (a .gz file that is not gzip, or cut short: as read_table says it)
                    self.close()
                    raise InputError(f"cannot read {path}: {exc}") from None
                if not sample.lstrip("\ufeff").strip():  # (a byte order mark alone: empty too)
                    self.close()
                    raise InputError(f"input file is empty: {path}")
                sep = delimiter or detect_delimiter(sample)
                self._sep = sep
                try:
                    header = check_header(sample, sep, path)
                except InputError:
                    self.close()
                    raise
                scan = (
                    f"read_csv({qstr(str(path))}, all_varchar = true, header = true, delim = {qstr(sep)}, "
                    "quote = '\"', escape = '\"', nullstr = '')"
                )
        try:
            self._init_view(scan)
        except duckdb.Error as exc:
            if isinstance(exc, duckdb.OutOfMemoryException):  # (the engine's, exit 4: not a bad input)
                self.close()
                raise engine_error(self.input, exc) from None
            message = input_error_message(self.input, exc)
            if message is None and "sniffing" in str(exc) and getattr(self, "_sep", None) is not None:
                # the sniffer only says that no dialect fits its sample (20 lines of 'Possible fixes'): the line
                message = csv_line_error(self.input, self._sep) or nul_byte_error(self.input)
            self.close()
            raise InputError(message or f"cannot read {self.input}: {_first_line(exc)}") from None
        if header is not None and [c.strip() for c in header] != self._columns:
            # DuckDB's sniffer skipped the header: every line of its sample had a field more than the header,
            # so it took the first data line for the header (columns 'a', '1', '3' for 'q,dx'). The numpy path
            # and Spark refuse the first line with a field too many; so does this reader
            message = csv_line_error(self.input, self._sep)
            self.close()
            raise InputError(message or f"{self.input}: DuckDB does not read the first line as its header "
                             f"({', '.join(map(repr, header))}; nothing was written)")
        if isinstance(data, pd.DataFrame):  # its float columns: released as numpy writes them, looked up by as_text (_float_map)
            import pyarrow as pa

            self._float_cols = {f.name for f in self._arrow("SELECT * FROM src LIMIT 0").schema if pa.types.is_floating(f.type)}
            # its boolean columns (numpy bool, pandas' nullable boolean, bool[pyarrow], object of Python bools: DuckDB
            # reads each as BOOLEAN, pandas' to_parquet writes each as bool)
            self._frame_bools = {_column_name(f.name) for f in self._arrow("SELECT * FROM tempanon_input_df LIMIT 0").schema
                                 if pa.types.is_boolean(f.type)}  # fmt: skip
        self._zones = zones
        for col, zone in zones.items():  # an aware column's text is its wall clock in its zone (duckdb_timestamp_text)
            try:
                self._rows(f"SELECT {duckdb_timestamp_text('TIMESTAMPTZ ' + qstr('2000-01-01 00:00:00+00'), 'timestamp', zone)}")
            except duckdb.Error:
                self.close()
                raise InputError(f"{self.input}: column {col!r} is in time zone {zone!r}, which DuckDB does not know; "
                                 "convert it to UTC or to a named zone (e.g. America/New_York)") from None
        try:
            self._find_zone_fixes()
        except BaseException:
            self.close()
            raise

    def _arrow(self, sql: str) -> Any:
        with self._input_errors():
            return _query_arrow(self.con, sql)

    def _exec(self, sql: str) -> None:
        with self._input_errors():
            self.con.execute(sql).fetchall()

    @contextlib.contextmanager
    def _input_errors(self):
        """DuckDB reads a CSV input lazily, so a bad line past the sniffer's sample (a byte that is not
        UTF-8, a line with more fields) fails a query in the middle of the work: that is an input error
        (exit 2) naming the file and line, not an engine failure or a traceback."""
        import duckdb

        try:
            yield
        except duckdb.Error as exc:
            message = input_error_message(getattr(self, "input", None), exc)
            if message is None:
                # a file DuckDB cannot read that is not the input (the release read back by the verification):
                # the engine's failure (exit 4), said plainly
                which = _failed_file(getattr(self, "input", None) or "", exc)
                if _looks_damaged(exc) and which != "input" and not isinstance(exc, duckdb.OutOfMemoryException):
                    what = "a file it wrote" if which is None else which
                    raise EngineFailure(f"the DuckDB engine failed: cannot read {what} (not the input): {_first_line(exc)}; "
                                        "nothing was written") from exc  # fmt: skip
                raise
            raise InputError(message) from None

    def _register(self, name: str, table: Any) -> None:
        self.con.register(name, table)

    def _column_types(self, query: str) -> list[tuple[str, str]]:
        """The query's columns and DuckDB type names, from the bound query without running it (a
        ``LIMIT 0`` over a release's ``ORDER BY`` ran half of it)."""
        with self._input_errors():
            rel = self.con.sql(query)
            return [(n, str(t)) for n, t in zip(rel.columns, rel.types)]

    def _column_kinds(self, query: str) -> list[tuple[str, str | None]]:
        """:meth:`SQLSource._column_kinds` from the bound query's types (:meth:`_column_types`)."""
        return [(n, _duckdb_timestamp_kind(t)) for n, t in self._column_types(query)]

    def release(self, node, k, **kwargs):
        """:meth:`SQLSource.release`; a DataFrame's boolean column released unchanged to a Parquet file the
        caller named (``out=``), or read back as a DataFrame (no ``out``), is written BOOLEAN
        (:meth:`_bool_projection`), its timestamps in seconds or milliseconds in ``ms``
        (:meth:`_frame_units`), as the numpy path's Parquet release; read back, those columns are given
        the input's dtypes (:meth:`_frame_dtypes_back`), as the numpy path returns them."""
        out = kwargs.get("out")
        self._typed_out = out is None or _is_parquet(out)
        self._file_out = out is not None and _is_parquet(out)
        try:
            rel = super().release(node, k, **kwargs)
        finally:
            self._typed_out = self._file_out = False
        if rel.table is not None and self._frame_dtypes:
            rel.table = self._frame_dtypes_back(rel.table)
        return rel

    def _frame_units(self, query: str) -> dict[str, Any]:
        """A DataFrame's timestamp columns released unchanged in ``query`` whose dtype is in seconds or
        milliseconds (``datetime64[s]``, ``[ms]``, naive or aware) -> ``timestamp[ms]`` (in its zone), the
        type pandas' ``to_parquet`` (the numpy path) writes them with (Parquet has no seconds). DuckDB reads
        ``[s]`` as ``TIMESTAMP_S`` and an aware ``[ms]``/``[s]`` as ``TIMESTAMPTZ`` (microseconds) and
        wrote them ``timestamp[us]``; :func:`~tempanon.data.io.zone_written_parquet` casts them (pyarrow's
        safe cast: a value a millisecond would truncate is an error, not a changed value). In a Parquet file
        (``out=``, not the release read back) also the columns whose type numpy takes from their cells or
        categories (:func:`_frame_cell_arrow`): an ``object`` column of ints DuckDB wrote ``int32`` (values
        that fit) or as text (a missing cell: its view holds the text), a categorical DuckDB wrote as text
        (``ENUM``): numpy's ``int64``, ``dictionary<string>``, ``date32``."""
        import pyarrow as pa

        qi, out = set(self.qi), {}
        for n, _ in self._column_types(query):
            d = self._frame_dtypes.get(n)
            if n in qi or d is None:
                continue
            if self._file_out and n in self._frame_cells:
                out[n] = self._frame_cells[n]
                continue
            if isinstance(d, pd.DatetimeTZDtype):
                unit, tz = d.unit, str(d.tz)
            elif not isinstance(d, pd.api.extensions.ExtensionDtype) and np.dtype(d).kind == "M":
                unit, tz = np.datetime_data(d)[0], None
            else:
                continue
            if unit in ("s", "ms"):
                out[n] = pa.timestamp("ms", tz=tz)
        return out

    def _frame_dtypes_back(self, table: pd.DataFrame) -> pd.DataFrame:
        """The release read back (its verified Parquet file) with a DataFrame input's boolean and
        timestamp columns released unchanged in the input's dtypes (``bool``, ``boolean``,
        ``bool[pyarrow]``, an ``object`` column of Python bools; ``datetime64`` in its unit and zone), as
        the numpy path returns them; before, a boolean came back as text ``'True'`` / ``'False'`` and a
        timestamp in ``s`` or ``ms`` as ``us``. Fail closed: a column is given its dtype only where every
        value and every missing cell stays what was verified (VerificationError naming the column)."""
        from tempanon.errors import VerificationError

        qi = set(self.qi)
        for c in table.columns:
            d = self._frame_dtypes.get(c)
            col = table[c]
            if c in qi or d is None or col.dtype == d:
                continue
            if c in self._frame_bools:
                if d == object:
                    conv = pd.Series([None if v is None else bool(v) for v in col.astype(object)], index=col.index, dtype=object)
                else:
                    conv = col.astype(d)
                same = col.isna().to_numpy().tolist() == conv.isna().to_numpy().tolist() and \
                    col[col.notna()].astype(bool).tolist() == conv[conv.notna()].astype(bool).tolist()  # fmt: skip
            elif pd.api.types.is_datetime64_any_dtype(d) and pd.api.types.is_datetime64_any_dtype(col.dtype):
                conv = col.astype(d)
                back = conv.astype(col.dtype)
                same = bool(((back == col) | (back.isna() & col.isna())).all())
            else:
                continue
            if not same:
                raise VerificationError(f"the release read back: column {c!r} does not hold its values in the input's "
                                        f"dtype {d} (its verified values are {col.dtype}); nothing was returned")  # fmt: skip
            table[c] = conv
        return table

    def _copy(self, query: str, path: str, parquet: bool) -> None:
        if not parquet:
            self._exec(f"COPY ({self._csv_projection(query)}) TO {qstr(path)} (FORMAT csv, HEADER true, DELIMITER ',')")
            return
        from tempanon.data.io import zone_written_parquet

        if self._typed_out:
            query = self._bool_projection(query)
        query = self._nullable_projection(query)
        units = self._frame_units(query) if self._typed_out else {}
        self._exec(f"COPY ({query}) TO {qstr(path)} (FORMAT parquet{self._zone_metadata(query)})")
        # the written schema checked (its footer): rewritten only if it is not numpy's (docs/engines.md,
        # "Types of a Parquet release"; a DataFrame's s/ms timestamps in ms), before the release is verified on the file
        zone_written_parquet(path, self._zones, units)

    def _zone_metadata(self, query: str) -> str:
        """``, KV_METADATA {'ARROW:schema': ...}`` for ``COPY ... (FORMAT parquet ...)`` of ``query`` when
        it has an aware timestamp column whose input zone is not the ``UTC`` DuckDB's file reads back in
        (America/New_York): the Arrow schema pyarrow reads DuckDB's Parquet types as (from a ``COPY`` of
        no rows of the same query, its footer), those columns in their zones
        (:func:`~tempanon.data.io.zoned_schema`), serialized as pyarrow stores it (base64 of the IPC
        schema). pyarrow (pandas) then reads the same instants in the input's zone, as in the numpy
        path's file, without a second pass over the rows; DuckDB reads the file as without it. ``""``
        when no column needs it."""
        if not self._zones:
            return ""
        import base64

        import pyarrow.parquet as pq

        from tempanon.data.io import zoned_schema

        empty = Path(self._tmpdir) / f"schema-{secrets.token_hex(6)}.parquet"
        try:
            self._exec(f"COPY (SELECT * FROM ({query}) q WHERE false) TO {qstr(str(empty))} (FORMAT parquet)")
            schema = pq.read_schema(empty).remove_metadata()
        finally:
            empty.unlink(missing_ok=True)
        want = zoned_schema(schema, self._zones)
        if [f.type for f in want] == [f.type for f in schema]:
            return ""
        text = base64.b64encode(want.serialize().to_pybytes()).decode("ascii")
        return f", KV_METADATA {{'ARROW:schema': {qstr(text)}}}"

    def _bool_projection(self, query: str) -> str:
        """``query`` with a DataFrame's boolean column released unchanged (:attr:`_frame_bools`, not a
        quasi-identifier, whose labels are text) written BOOLEAN, as the numpy path's release (pandas'
        ``to_parquet``) writes it, missing as null: the view's text ``True`` / ``False`` cast back (any other
        text would be NULL, which the audit's check of the written file refuses, :meth:`released_text`).
        Before, DuckDB wrote it as that text where numpy and Spark wrote ``bool`` (a Parquet input's
        boolean stays text on every engine: docs/engines.md). A projection of the ordered rows."""
        qi = set(self.qi)
        cols = self._column_types(query)
        bools = {n for n, t in cols if n in self._frame_bools and n not in qi and t == "VARCHAR"}
        if not bools:
            return query
        sel = ", ".join(f"CASE WHEN q.{self.q(n)} = 'True' THEN true WHEN q.{self.q(n)} = 'False' THEN false END AS {self.q(n)}"
                        if n in bools else f"q.{self.q(n)}" for n, _ in cols)  # fmt: skip
        return f"SELECT {sel} FROM ({query}) q"

    def released_text(self, alias: str, col: str, rel: str = "src") -> str:
        """:meth:`SQLSource.released_text`; a written release's boolean column typed from a DataFrame's
        (:meth:`_bool_projection`) as the numpy path's text, ``True`` / ``False`` (DuckDB's ``CAST`` gives
        ``true``), missing as the empty string."""
        if rel != "src" and col in self._frame_bools and dict(self._column_types(f"SELECT * FROM {rel}")).get(col) == "BOOLEAN":
            e = f"{alias}.{self.q(col)}"
            return f"CASE WHEN {e} THEN 'True' WHEN NOT {e} THEN 'False' ELSE '' END"
        return super().released_text(alias, col, rel)

    def _nullable_projection(self, query: str) -> str:
        """``query`` with every column nullable in DuckDB's Parquet writer, as the numpy path (pandas,
        pyarrow) writes every field: DuckDB 2 writes a column ``REQUIRED`` (pyarrow: ``not null``) where
        its statistics show no missing value (a column of a Parquet input without one), so the same
        release's schema differed by its values. ``CASE WHEN c IS NULL THEN NULL ELSE c END`` is ``c``
        with statistics that allow a missing value (measured: ``nullif(c, NULL)`` and ``coalesce(c,
        NULL)`` are folded away); a projection of the ordered rows (DuckDB keeps their order, as in
        :meth:`_csv_projection`). Should a DuckDB version fold it too, :func:`zone_written_parquet`
        rewrites the file nullable (it checks the written schema)."""
        cols = [self.q(n) for n, _ in self._column_types(query)]
        sel = ", ".join(f"CASE WHEN q.{c} IS NULL THEN NULL ELSE q.{c} END AS {c}" for c in cols)
        return f"SELECT {sel} FROM ({query}) q"

    def _csv_projection(self, query: str) -> str:
        """``query`` with its cells as the numpy path writes them to CSV (pandas' ``to_csv``): a typed
        timestamp in Python's text (:meth:`timestamp_text`; DuckDB's CSV writer: ``... 00:00:00+00``,
        trailing zeros trimmed), an empty string as an empty field, as a missing value is written
        (DuckDB's CSV writer quotes it, ``""``, to tell it from NULL; a missing quasi-identifier is the
        empty string in the engines' release, the hierarchies' text). But in a release of one column
        an empty field would be a blank line, which readers skip: pandas writes ``""`` there, for a
        missing value too, and so does this (NULL as the empty string). A projection of the ordered
        rows (DuckDB keeps their order: the release's and the audit's verification check it row by
        row); ``query`` itself when no column needs it."""
        cols = self._column_types(query)
        sel, changed, one = [], False, len(cols) == 1
        for n, t in cols:
            c, kind = f"q.{self.q(n)}", _duckdb_timestamp_kind(t)
            if kind is not None:
                c = self.timestamp_text(c, kind, self._zones.get(n))
                c = f"coalesce({c}, '')" if one else c
            elif t == "VARCHAR":
                c = f"coalesce({c}, '')" if one else f"nullif({c}, '')"
            else:
                sel.append(c)
                continue
            sel.append(f"{c} AS {self.q(n)}")
            changed = True
        return f"SELECT {', '.join(sel)} FROM ({query}) q" if changed else query

    def _read_written(self, path: str, parquet: bool) -> str:
        if parquet:
            return f"read_parquet({qstr(path)})"
        # DuckDB's CSV reader strips the spaces around a header's names; a DataFrame's columns keep theirs
        # (' age ', _column_name), so such a written header is read with its names as the file has them
        names = _spaced_header(path)
        named = f", names = [{', '.join(qstr(n) for n in names)}]" if names else ""
        return f"read_csv({qstr(path)}, all_varchar = true, header = true, delim = ',', quote = '\"', escape = '\"', nullstr = ''{named})"

    def close(self) -> None:
        close_duckdb(getattr(self, "con", None))
        self.con = None
        super().close()


_NULLABLE_INTS = {"Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64"}


def _nullable_int_columns(source: Any) -> set[str] | frozenset[str] | None:
    """Integer columns whose text pandas keeps integer with a missing value: every one of a DataFrame
    (None: its integer columns can hold a missing value only as a nullable dtype, text ``2``), and of a
    Parquet file the columns its ``pandas`` metadata gives a nullable integer dtype (``Int64``: pandas
    reads them back as such, where an integer column of another writer with a missing value becomes
    floats, text ``2.0``)."""
    if source in ("DataFrame", "Spark DataFrame"):
        return None
    try:
        import json

        import pyarrow.parquet as pq

        path = Path(str(source))
        if not path.is_file() or not _is_parquet(path):
            return frozenset()
        meta = (pq.read_schema(path).metadata or {}).get(b"pandas")
        cols = json.loads(meta).get("columns", []) if meta else []
        return {str(c.get("name")) for c in cols if c.get("numpy_type") in _NULLABLE_INTS}
    except Exception:  # (no readable metadata: pandas reads it without, as floats)
        return frozenset()


def _frame_cell_type(col: pd.Series) -> tuple[str | None, Any | None]:
    """For a DataFrame column whose dtype alone does not say its Parquet type (:func:`_frame_sql_type`):
    the Spark type it is written with when released unchanged in a Parquet release and the Arrow type
    its part files then give it (``None`` where Spark's is already pandas'), as pandas' ``to_parquet``
    (the numpy path) writes it, or ``(None, None)`` to write it as text. An ``object`` column of Python
    integers (missing cells allowed) whose values fit ``int64``: ``BIGINT`` (numpy ``int64``); of
    ``datetime.date``: ``DATE`` (``date32``); of Python floats: ``DOUBLE``. A categorical of strings: its text, given
    ``dictionary<string>`` with pandas' code width and order (numpy's type); of integers, booleans or
    ``datetime.date``: as a column of its categories' type. Other categoricals (floats, timestamps) and
    other ``object`` columns stay text. Used by Spark (``SparkSource.from_pandas``) and, through
    :func:`_frame_cell_arrow`, by DuckDB."""
    import pyarrow as pa
    from pandas.api.types import infer_dtype

    from tempanon.lattice.source_spark import _frame_arrow_type, _frame_sql_type

    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = col.cat.categories
        kind = infer_dtype(cats, skipna=True)
        if kind == "string":
            return "STRING", pa.dictionary(pa.from_numpy_dtype(col.cat.codes.dtype), pa.string(), ordered=bool(col.cat.ordered))
        if kind == "date":
            return "DATE", None
        if kind in ("integer", "boolean") and not isinstance(cats.dtype, pd.api.extensions.ExtensionDtype) and cats.dtype.kind in "iub":
            return _frame_sql_type(cats.dtype), _frame_arrow_type(cats.dtype)
        return None, None
    if col.dtype != object:
        return None, None
    kind = infer_dtype(col, skipna=True)
    if kind == "date":
        return "DATE", None
    if kind == "floating":  # (held as pandas' text of the float64 it is, with its map: from_pandas)
        return "DOUBLE", None
    if kind == "integer":
        try:
            np.asarray(col.dropna().tolist(), dtype=np.int64)
        except (OverflowError, TypeError, ValueError):  # (beyond int64: numpy's to_parquet cannot write it either)
            return None, None
        return "BIGINT", None
    return None, None


_SQL_ARROW = {"BIGINT": "int64", "INT": "int32", "SMALLINT": "int16", "TINYINT": "int8", "DOUBLE": "float64",
              "FLOAT": "float32", "BOOLEAN": "bool_", "DATE": "date32"}


def _frame_cell_arrow(col: pd.Series) -> Any | None:
    """The Arrow type pandas' ``to_parquet`` (the numpy path) writes the DataFrame column ``col`` with, for
    the columns :func:`_frame_cell_type` types from their cells or categories (``None`` for the others)."""
    import pyarrow as pa

    sql, arrow = _frame_cell_type(col)
    if arrow is not None or sql is None:
        return arrow
    name = _SQL_ARROW.get(sql)
    return getattr(pa, name)() if name else None


def _registered_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A DataFrame input as DuckDB is given it. A float column stays ``DOUBLE`` (DuckDB's text of a
    double, in ``CAST`` and its CSV writer, is pandas'; a Parquet release keeps the type, as numpy's),
    and so does an ``object`` column of Python floats (made ``float64``; missing cells NaN, read as
    missing): kept or sensitive, such a column is released as the numpy path writes it (``1.0``), and a
    hierarchy looks it up by its hierarchy text (``39.0`` -> ``"39"``) through
    :meth:`SQLSource._float_map`. Before, every float column was registered as that hierarchy text, so a
    kept ``1.0`` was written ``1``, and an object column of floats was looked up as ``"1.0"``. An object
    column as the numpy engine takes it (:mod:`tempanon.data.cells`): of mixed Python types
    (``1``, ``True``, ``1.0``) as the text the release writes of each cell (one value per text; DuckDB
    itself read ``1``/``True`` without text as one type and failed on the other), of Python
    integers with a missing cell as their text (DuckDB read it as
    INTEGER, then cast it to DOUBLE as a file's integer column with missing cells: ``1.0``, a text
    neither the hierarchy nor the numpy engine has)."""
    from tempanon.data.cells import MIXED_KINDS, released_text

    out = df.copy()
    for j, c in enumerate(df.columns):
        col = df.iloc[:, j]
        if isinstance(col.dtype, pd.DatetimeTZDtype) and col.dtype.unit == "ns":
            # as Arrow's timestamp[ns, tz]: DuckDB reads that as TIMESTAMPTZ_NS, as it reads a Parquet file's
            # aware ns column; pandas' own dtype it reads as TIMESTAMPTZ (microseconds), so a kept or sensitive
            # 00:00:00.000000001+01:00 was released as 00:00:00+01:00 (CSV and Parquet, with or without an audit)
            import pyarrow as pa

            out[c] = col.astype(pd.ArrowDtype(pa.timestamp("ns", tz=str(col.dtype.tz))))
            continue
        if isinstance(col.dtype, pd.SparseDtype):
            col = out[c] = col.sparse.to_dense()
        if isinstance(col.dtype, (pd.PeriodDtype, pd.IntervalDtype)):
            # DuckDB takes neither dtype ("Data type 'period[M]' not recognized"), so a frame holding one,
            # even in a column with no role, failed on DuckDB with that error where numpy released it: the
            # text the numpy release writes of each cell (2020-01, (0, 1]), missing cells missing
            out[c] = released_text(col)
            continue
        kind = pd.api.types.infer_dtype(col, skipna=True) if col.dtype == object else None
        if kind in MIXED_KINDS or (kind == "integer" and col.isna().any()):
            out[c] = released_text(col)
        elif kind == "floating":
            out[c] = pd.to_numeric(col.where(col.notna(), np.nan)).astype(np.float64)
    return out


def _codes_array(col: Any, n_codes: int) -> np.ndarray:
    """An Arrow column of codes as a contiguous numpy array, int32 when the codes fit (half the
    driver memory of int64; the searches index and pack either)."""
    a = col.to_numpy()
    return np.ascontiguousarray(a, dtype=np.int32 if n_codes < 2**31 else np.int64)


def _first(rows: list) -> Any:
    return rows[0] if rows else None


def _names(con: Any, sql: str) -> list[str]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    cur.fetchall()
    return names


def csv_error_message(path: str | None, exc: Exception) -> str | None:
    """The message of DuckDB's error on reading the CSV input ``path`` (``None`` if ``exc`` is not
    one): its line, what is wrong there, and what to do."""
    text = str(exc)
    m = re.search(r"CSV Error on Line: (\d+)", text)
    if m is None or path in (None, "DataFrame"):
        return None
    if "Invalid unicode" in text or "not utf-8" in text.lower():
        from tempanon.data.io import not_utf8_message

        return not_utf8_message(path)
    # DuckDB's text: "CSV Error on Line: N", "Original Line: ...", the problem, "Possible Solution: ...",
    # then the reader's settings ("key = value")
    # (the original line may span many lines: a quote left open); the problem is the line before the
    # fixes
    lines = [ln.strip() for ln in text[m.end():].splitlines() if ln.strip()]
    fixes = next((i for i, ln in enumerate(lines) if ln.startswith(("Possible fixes", "Possible Solution"))), None)
    what = lines[fixes - 1] if fixes and not lines[fixes - 1].startswith("Original Line") else ""
    what = what or next((ln for ln in lines if not ln.startswith(("Original Line", "Possible Solution")) and " = " not in ln), "")
    return f"{path}, line {m.group(1)}: {what or 'cannot be read as CSV'} (nothing was written)"


def nul_byte_error(path: str | os.PathLike) -> str | None:
    """The line of the first NUL byte of the CSV file ``path`` (``None`` if it has none): DuckDB's
    sniffer refuses such a file with no line ("Error when sniffing file"; numpy reads it). Run only
    after the sniffer failed and :func:`csv_line_error` found no bad line; a line is counted by its
    line end (the header being line 1)."""
    from tempanon.data.io import _open_bytes

    with _open_bytes(Path(path))() as fh:
        for number, raw in enumerate(fh, 1):
            at = raw.find(b"\0")
            if at >= 0:
                return (f"{path}, line {number}: a NUL byte (0x00, byte {at + 1} of the line), which DuckDB's CSV reader "
                        "does not read: remove it, or run with --engine numpy (nothing was written)")  # fmt: skip
    return None


def csv_line_error(path: str | os.PathLike, sep: str) -> str | None:
    """The first line of the CSV file ``path`` that DuckDB's strict reader refuses (a line with
    more or fewer fields than the header, a quote left open, a byte that is not UTF-8), read with
    the dialect tempanon reads it in (``sep``, ``"`` quoting and escaping) and the header's names as
    columns (``auto_detect = false``): :func:`csv_error_message` of that line, or ``None`` when every
    line reads. Run once a read has failed without naming the line (DuckDB's sniffer, Spark's
    ``FAILFAST`` reader), and by the numpy path's reader when the last column has a missing value
    (pandas fills a short line with missing values: :func:`tempanon.data.io.read_table`)."""
    import csv
    import io

    import duckdb

    from tempanon.data.io import _open_text

    try:
        with _open_text(Path(path))() as fh:
            sample = fh.read(65536)
        header = next((row for row in csv.reader(io.StringIO(sample, newline=""), delimiter=sep) if row), [])  # (as check_header)
        cols = ", ".join(f"{qstr(c)}: 'VARCHAR'" for c in header)
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SELECT count(*) FROM read_csv({qstr(str(path))}, auto_detect = false, columns = {{{cols}}}, "
                        f"header = true, delim = {qstr(sep)}, quote = '\"', escape = '\"', nullstr = '')").fetchall()  # fmt: skip
        finally:
            con.close()
    except UnicodeDecodeError:
        from tempanon.data.io import not_utf8_message

        return not_utf8_message(path)
    except duckdb.Error as exc:
        return csv_error_message(str(path), exc)
    except Exception:  # the probe is only for the message
        return None
    return None


def _error_head(exc: Exception) -> str:
    """DuckDB's error text without the query it echoes (``LINE 1: SELECT ... read_parquet('in.parquet')
    ...``): a file the query names is not the file that failed."""
    return re.split(r"\n\s*LINE \d+:", str(exc), maxsplit=1)[0]


_QUOTED = re.compile(r"""['"]([^'"\n]+)['"]|\bfile\s*=\s*(\S+)""")


def _same_file(a: str, b: str | os.PathLike) -> bool:
    try:
        return os.path.abspath(a) == os.path.abspath(str(b)) or (os.path.exists(a) and os.path.samefile(a, b))
    except OSError:
        return False


def _failed_file(path: str | os.PathLike, exc: Exception) -> str | None:
    """Which file DuckDB's error ``exc`` says it failed to read: ``"input"`` when its text (without
    the echoed query) names the input ``path``, another file's name when it names only another file
    (the release read back by the verification, an audit), None when it names none (a bare
    ``duckdb.Error`` of its Parquet reader: "TProtocolException: Exceeded size limit", "don't know
    what type")."""
    head = _error_head(exc)
    named = [m.group(1) or m.group(2) for m in _QUOTED.finditer(head)]
    files = [n for n in named if n == str(path) or n == Path(path).name or os.path.sep in n or _is_parquet(n)
             or n.lower().endswith((".csv", ".tsv", ".txt", ".gz"))]  # fmt: skip
    if not files:
        return "input" if str(path) in head else None
    if any(_same_file(f, path) or f == Path(path).name for f in files):
        return "input"
    return files[0]


def _input_reads(path: str | os.PathLike) -> bool:
    """True when DuckDB reads every column of the Parquet file ``path`` through (a fresh connection;
    every value hashed, so every page is decoded): run only after a query failed without naming the
    file it could not read, to tell a damaged input from another failure."""
    import duckdb

    try:
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SELECT max(hash(COLUMNS(*))) FROM read_parquet({qstr(str(path))})").fetchall()
        finally:
            con.close()
    except duckdb.OutOfMemoryException:
        return True  # (not a damaged file)
    except duckdb.Error:
        return False
    return True


class EngineFailure(TempanonError):
    """DuckDB could not read a file it wrote itself (the release read back for the verification, an
    audit): the engine's failure, not the input's (exit 4, as a failed Spark job)."""

    exit_code = 4


def engine_error(path: str | os.PathLike | None, exc: Exception) -> TempanonError:
    """The tempanon error of a DuckDB error ``exc`` that reached a command (``timestamped``, ``kanon``
    with ``--engine duckdb``) without being classified on its way (:meth:`DuckDBSource._input_errors`):
    the input's (exit 2) when it is about the input ``path`` -- a file DuckDB cannot read that is the
    input (:func:`input_error_message`), a value that does not convert (``ConversionException``,
    ``OutOfRangeException``), a column the query cannot bind (``BinderException``), an invalid input
    (``InvalidInputException``), an I/O error naming the input; else the engine's failure (exit 4, "an
    engine failure, not the input"): out of memory, an internal or fatal error, an interrupted query,
    an I/O error on its own files (its spill directory, a full disk)."""
    import duckdb

    first = _first_line(exc)
    if isinstance(exc, duckdb.OutOfMemoryException):
        return EngineFailure(f"the DuckDB engine failed (an engine failure, not the input): {first}; "
                             "nothing was written (give it more with --memory-limit, e.g. 80%, or free memory: DuckDB "
                             "spills to disk beyond the limit)")  # fmt: skip
    message = input_error_message(None if path is None else str(path), exc)
    if message is not None:
        return InputError(message)
    about_input = isinstance(exc, (duckdb.ConversionException, duckdb.OutOfRangeException, duckdb.BinderException,
                                   duckdb.InvalidInputException))  # fmt: skip
    if isinstance(exc, duckdb.IOException) and path is not None:
        about_input = _failed_file(path, exc) == "input"
    if about_input:
        return InputError(f"DuckDB engine: {first}" + (f" (reading {path})" if path is not None else ""))
    return EngineFailure(f"the DuckDB engine failed (an engine failure, not the input): {type(exc).__name__}: {first}; "
                         "nothing was written")  # fmt: skip


def _looks_damaged(exc: Exception) -> bool:
    """DuckDB's error ``exc`` is one of a Parquet file it cannot read (a damaged page, a truncated
    file, no magic bytes)."""
    import duckdb

    text = _error_head(exc).lower()
    return type(exc) is duckdb.Error or any(w in text for w in ("thrift", "tprotocol", "decompress", "corrupt", "magic bytes"))


def input_error_message(path: str | None, exc: Exception) -> str | None:
    """The message of DuckDB's error on reading the input file ``path`` (``None`` if ``exc`` is not
    one, or the input is a DataFrame): a CSV line (:func:`csv_error_message`), or a Parquet file it
    cannot read (a corrupt page, a truncated file: DuckDB reads only the columns a query needs, so a
    damaged column can fail a query in the middle of the work). The input is blamed only when the
    failing file is the input (as :func:`tempanon.lattice.source_spark.spark_input_error` does on
    Spark): an error naming another file (the release the verification reads back) is not the
    input's, and a bare one naming no file is the input's only if the input itself does not read
    through (:func:`_input_reads`)."""
    import duckdb

    if path in (None, "DataFrame") or isinstance(exc, duckdb.OutOfMemoryException):
        return None
    which = _failed_file(path, exc)
    if which not in (None, "input"):
        return None
    message = csv_error_message(path, exc)
    if message is None and _is_parquet(path) and (which == "input" or _looks_damaged(exc)):
        if which is None and _input_reads(path):
            return None
        message = f"cannot read {path}: {_first_line(exc)} (a damaged Parquet file?; nothing was written)"
    return message


def _first_line(exc: Exception) -> str:
    """The first line of an engine's error, without DuckDB's ``Invalid Input Error: `` prefix."""
    line = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
    return re.sub(r"^(Invalid Input|IO|Binder|Parser|Conversion) Error: ", "", line)


def _query_arrow(con: Any, sql: str) -> Any:
    """The result of ``sql`` as an Arrow table (``to_arrow_table`` in DuckDB 2, ``arrow`` before)."""
    rel = con.sql(sql)
    fetch = getattr(rel, "to_arrow_table", None) or getattr(rel, "arrow")
    return fetch()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["DuckDBSource"]
