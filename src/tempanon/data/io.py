"""Reading and writing tables: CSV (delimiter detected), Parquet, SQL through DuckDB.

Every write is atomic: the data goes to a temporary file in the target's directory, which is then
renamed over the target (:func:`os.replace`), so a reader never sees a half-written file and a
failed run leaves no file behind.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tempanon.errors import InputError

_DELIMITERS = ";,\t|"
# names a shell user types for a delimiter that is awkward to write (``--delimiter tab``, ``'\t'``)
_DELIMITER_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|", "space": " "}


def normalize_delimiter(delimiter: str | None) -> str | None:
    """The CSV delimiter a user gave (``--delimiter``, a job's ``delimiter``, ``delimiter=``): one
    character, or a name (``tab`` or ``\\t``, ``comma``, ``semicolon``, ``pipe``, ``space``);
    ``None`` or empty: detect it. Anything else is an :class:`InputError` (before it reached the
    CSV readers, which took a longer string as a regular expression or failed with a traceback)."""
    if delimiter is None or delimiter == "":
        return None
    d = _DELIMITER_NAMES.get(delimiter.lower(), delimiter) if isinstance(delimiter, str) else delimiter
    if not isinstance(d, str) or len(d) != 1 or d in '"\r\n':
        raise InputError(f"the CSV delimiter must be one character other than a quote or a line break, e.g. ';', ',', "
                         f"'|' or 'tab' (or leave it out to detect it), got {delimiter!r}")
    return d


def detect_delimiter(sample: str) -> str:
    """Guess the delimiter of a CSV sample among ``; , TAB |``.

    Uses :class:`csv.Sniffer`; when it cannot decide (a quoted field holding a line break, as in
    a CSV saved with Windows line ends), the one candidate that splits the first records (parsed
    with quotes) into the header's number of fields (more than one); failing that, the candidate
    occurring most consistently in the first lines (``,`` when nothing else occurs).
    """
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        # records parsed with quotes (a quoted field may hold a line break or a delimiter, where the
        # sniffer gives up): the one candidate whose first records all have the header's field count
        import io as _io

        fits = []
        for d in _DELIMITERS:
            try:
                rows = [r for r in csv.reader(_io.StringIO(sample, newline=""), delimiter=d, strict=True)][:51]
            except csv.Error:
                continue
            rows = [r for r in rows[:-1] if r] if len(rows) > 1 else rows  # the last may be cut by the sample
            if rows and len(rows[0]) > 1 and all(len(r) == len(rows[0]) for r in rows):
                fits.append(d)
        if len(fits) == 1:
            return fits[0]
        lines = [ln for ln in sample.splitlines()[:20] if ln.strip()]
        best, best_score = ",", 0
        for d in _DELIMITERS:
            counts = [ln.count(d) for ln in lines]
            if counts and min(counts) > 0 and min(counts) > best_score:
                best, best_score = d, min(counts)
        return best


def check_input_file(path: str | os.PathLike, *, label: str = "input", directory: bool = False,
                     delimiter: str | None = None) -> Path:
    """``path`` as a :class:`~pathlib.Path` once it is an input tempanon can read more than once, else
    :class:`InputError` (exit 2): "<label> file not found: P", "<label> is a directory, not a table file:
    P", or :func:`refuse_pipe`'s message for a pipe, a socket or a device. The one check of an input
    file's path used by every entry point: :func:`read_table`, ``tempanon.steward.check``'s engine
    route, ``tempanon.temporal.outofcore`` and the frequency-set sources (``lattice.source.open_source``,
    ``DuckDBSource``, ``SparkSource.from_path``). A ``delimiter`` given for a Parquet file is refused.
    ``directory=True`` lets a directory pass, for the
    callers that passed one on before: ``open_source``, ``SparkSource.from_path`` (Spark reads a folder
    ``d.parquet/`` of part files) and the time-only out-of-core path, which leave it to the engine."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{label} file not found: {p}")
    if not directory and p.is_dir():
        raise InputError(f"{label} is a directory, not a table file: {p}")
    refuse_pipe(p, label=label)
    if delimiter is not None and _is_parquet_name(p):  # (it was ignored without a word)
        raise InputError(f"--delimiter applies to a CSV input; {p} is a Parquet file (its columns need no delimiter): "
                         "leave --delimiter out")  # fmt: skip
    return p


def refuse_pipe(path: str | os.PathLike, *, label: str = "input") -> None:
    """Refuse (:class:`InputError`, exit 2) an input that is a pipe, a socket or a device rather than a file
    (``--data <(zcat t.csv.gz)``, ``/dev/stdin``): every route reads its input more than once (the
    delimiter and header are checked before the table is read; the engines and the verification read it
    again), and a pipe gives its lines only to the first reader, so the second saw a cut table and said
    so in a misleading way ("its lines have more fields than the header"). A missing path and a
    directory pass: :func:`check_input_file`, which calls this, refuses them."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    kind = "a pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    raise InputError(f"{label} {path} is {kind}, not a file: tempanon reads its input more than once (the header and "
                     "lines are checked before the table is read, and the release is checked against it), which a "
                     "pipe cannot give; write it to a file first (a .csv.gz file is read as it is; tempanon stream "
                     "reads standard input given as -)")  # fmt: skip


def read_table(
    source: str | os.PathLike | pd.DataFrame,
    *,
    delimiter: str | None = None,
    as_text: bool = False,
    sql: str | None = None,
    postgres: str | None = None,
    roles: Mapping[str, str | Iterable[str] | None] | None = None,
) -> pd.DataFrame:
    """Load a table.

    Parameters
    ----------
    source:
        A :class:`pandas.DataFrame` (returned as a copy), a ``.csv``/``.csv.gz``/``.txt`` file
        (delimiter detected unless given), a ``.parquet`` file, or a DuckDB/SQLite database file
        when ``sql`` is given.
    as_text:
        Read every CSV cell as text (``str``), so that codes such as zip ``05371`` keep their
        leading zeros. Only empty cells become missing values (``NaN``); the strings ``NA`` or
        ``?`` stay ordinary values.
    sql:
        A query run by DuckDB; ``source`` is then attached as database ``src`` when it is a file,
        so the query can say ``FROM src.table``. Without a file source the query runs in an
        in-memory DuckDB (``read_csv``/``read_parquet`` and other table functions work there).
    postgres:
        A PostgreSQL connection string; the database is attached read-only as ``src`` through
        DuckDB's postgres extension (which DuckDB installs on first use) and ``sql`` runs there.
    roles:
        For a Parquet file: the columns the caller needs, role label -> column names, as
        :func:`refuse_nested_columns` takes them (the command's text ``"a,b"`` with ranges ``A0:A9``
        resolved against the file's columns; a list or tuple: names taken literally). Only those
        columns are read (pyarrow's ``columns=``); the file's other columns (no role: never released)
        are neither read nor converted, and :func:`table_columns` of the result still gives every
        column of the file in its order (the release plan's left-out columns, the report's roles).
        The whole file is read, as without ``roles``, when a role does not resolve to columns of the
        file (an unknown name, a bad range: the caller's check reports it as before) or names them all.
    """
    if isinstance(source, pd.DataFrame):
        return source.copy()
    if postgres is not None:
        if sql is None:
            raise InputError("a PostgreSQL source needs a SQL query")
        return _read_sql(None, sql, postgres=postgres)
    if sql is not None:
        return _read_sql(source, sql)
    path = check_input_file(source, delimiter=delimiter)
    suffixes = "".join(path.suffixes).lower()
    from tempanon.data.excel import is_spreadsheet, read_excel  # .xlsx with tempanon[excel]; others refused clearly

    if is_spreadsheet(path):
        return read_excel(path, as_text=as_text)
    try:
        if suffixes.endswith(".parquet") or suffixes.endswith(".pq"):
            df, names = (None, None) if roles is None else _read_parquet_roles(path, roles)
            if df is None:  # every column
                df = pd.read_parquet(path)
                check_column_names(list(df.columns), path)
            df.columns = [str(c).strip() for c in df.columns]  # as a CSV header's (and as the engines read it)
            out = parquet_as_text(df) if as_text else df
            if names is not None:
                _remember_columns(out, names)
            return out
        opener = _open_text(path)
        with opener() as fh:
            sample = fh.read(65536)
        if not sample.lstrip("\ufeff").strip():  # (a byte order mark alone: empty too)
            raise InputError(f"input file is empty: {path}")
        sep = normalize_delimiter(delimiter) or detect_delimiter(sample)
        kwargs: dict[str, Any] = {"sep": sep}
        if as_text:
            kwargs.update(dtype=str, keep_default_na=False, na_values=[""])
        header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False)
        check_column_names(header.iloc[0].tolist() if len(header) else [], path)  # (names twice first, then no name, case)
        df = pd.read_csv(path, **kwargs)
    except InputError:
        raise
    except UnicodeDecodeError as exc:
        raise InputError(not_utf8_message(path, exc)) from None
    except (pd.errors.ParserError, ValueError, OSError, EOFError) as exc:  # (EOFError: a .gz file cut short)
        if isinstance(exc, pd.errors.ParserError):
            # a line with more fields than the header (a quote left open): the line as the engines name it,
            # "t.csv, line 3: Expected Number of Columns: 2 Found: 3 (nothing was written)", as for a short
            # line below, not pandas' "Error tokenizing data. C error: Expected 2 fields in line 3, saw 3"
            from tempanon.lattice.source_duckdb import csv_line_error

            line = csv_line_error(path, sep)
            if line is not None:
                raise InputError(line) from None
        raise InputError(f"cannot read {path}: {exc}") from exc
    if df.shape[1] == 0:
        raise InputError(f"input file has no columns: {path}")
    if not isinstance(df.index, pd.RangeIndex):
        # every data line up to the first that differs has one field more than the header: pandas took the
        # first column for the index (silently: each value then sat under the next column's name); the
        # engines refuse the first such line, so does this reader
        from tempanon.lattice.source_duckdb import csv_line_error

        line = csv_line_error(path, sep)
        raise InputError(line or f"{path}: its lines have more fields than the header (nothing was written)")
    if df.shape[1] > 1 and len(df) and df.iloc[:, -1].isna().any():
        # pandas fills a line with fewer fields than the header with missing values (it refuses one with
        # more); DuckDB and Spark refuse both. A short line leaves the last column missing, so only then
        # are the lines checked (DuckDB's strict reader, one pass: csv_line_error)
        from tempanon.lattice.source_duckdb import csv_line_error

        short = csv_line_error(path, sep)
        if short is not None:
            raise InputError(short)
    df.columns = [str(c).strip() for c in df.columns]
    _refuse_duplicates(list(df.columns), path)
    return df


# frames read with only some of a Parquet file's columns: id(frame) -> (a weak reference to it, every column
# of the file, the columns read). Not DataFrame.attrs: pandas copies those into every derived frame (a
# release) and writes them into a Parquet file (PANDAS_ATTRS), which would carry the names of the input's
# columns with no role into a release's metadata
_READ_COLUMNS: dict[int, tuple[Any, list[str], list[str]]] = {}


def _remember_columns(df: pd.DataFrame, names: list[str]) -> None:
    import weakref

    key = id(df)
    _READ_COLUMNS[key] = (weakref.ref(df, lambda _ref, key=key: _READ_COLUMNS.pop(key, None)), list(names), list(df.columns))


def table_columns(df: pd.DataFrame) -> list[str]:
    """The columns of the table ``df`` holds, in table order: those of the file when ``df`` is the frame
    :func:`read_table` returned having read only some of a Parquet file's columns (``roles``: the columns
    with no role were not read; or a frame given them by :func:`keep_table_columns`), else ``df``'s own.
    Used where the columns with no role are listed (the release plan's ``left_out``, the reports'
    roles), so that they are the same whether or not those columns were read. Any other frame (a copy,
    a derived table) has its own columns, as has that frame once its columns changed."""
    got = _READ_COLUMNS.get(id(df))
    if got is not None and got[0]() is df and list(df.columns) == got[2]:
        return list(got[1])
    return list(df.columns)


def keep_table_columns(df: pd.DataFrame, like: pd.DataFrame) -> pd.DataFrame:
    """``df`` (the same rows and columns as ``like``, e.g. ``like.reset_index(drop=True)``), whose
    :func:`table_columns` are ``like``'s from now on; returned for chaining."""
    names = table_columns(like)
    if names != list(like.columns) and list(df.columns) == list(like.columns):
        _remember_columns(df, names)
    return df


def _parquet_labels(path: Path) -> list[Any] | None:
    """The column labels :func:`pandas.read_parquet` would give the Parquet file ``path``, from its schema
    alone (no row is read or converted): the field names, less the index columns pandas' metadata
    names, as pyarrow's ``to_pandas`` labels them (an empty table with null columns: a column pandas
    cannot convert, e.g. a time zone it does not know, does not stop it). ``None`` if that fails."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pq.read_schema(str(path))
        if not schema.metadata or b"pandas" not in schema.metadata:
            return list(schema.names)
        nulls = pa.schema([pa.field(f.name, pa.null()) for f in schema], metadata=schema.metadata)
        return list(nulls.empty_table().to_pandas().columns)
    except Exception:  # (read in full: pandas' reading reports the problem as before)
        return None


def _read_parquet_roles(path: Path, roles: Mapping[str, str | Iterable[str] | None]) -> tuple[pd.DataFrame | None, list[str] | None]:
    """:func:`read_table`'s Parquet file ``path``, only the columns ``roles`` names (in file order), and every
    column of the file (stripped: :func:`table_columns`); ``(None, None)`` to read it all: a role
    that does not resolve to columns of the file (unknown, a bad range, nothing given), a file whose
    schema cannot be read here. The column names are checked first, on the file's whole header, as
    when it is read in full (:func:`check_column_names`)."""
    from tempanon.data.roles import parse_column_list

    labels = _parquet_labels(path)
    if labels is None:
        return None, None
    check_column_names(labels, path)  # (the same message as after a full read: the same labels)
    names = [str(c).strip() for c in labels]
    wanted: set[str] = set()
    for spec in roles.values():
        if spec is None or (not isinstance(spec, str) and not spec):
            continue
        if isinstance(spec, str):
            try:
                cols = parse_column_list(spec, names)
            except InputError:
                return None, None
        else:
            cols = [str(c) for c in spec]
        if any(c not in names for c in cols):
            return None, None
        wanted.update(cols)
    if not wanted or len(wanted) == len(names):
        return None, None
    raw = dict(zip(names, labels))
    return pd.read_parquet(path, columns=[raw[c] for c in names if c in wanted]), names


def read_parquet_columns(path: str | os.PathLike, names: Sequence[str]) -> pd.DataFrame:
    """Only the columns ``names`` (stripped, as :func:`table_columns` names them) of the Parquet file
    ``path`` (``pyarrow``'s ``columns=``: no other column is read), as :func:`read_table` with ``as_text``
    gives them (:func:`parquet_as_text`). For a check that needs a column with no role, which a
    Parquet input read with ``roles`` left out."""
    labels = _parquet_labels(Path(path)) or []
    raw = {str(c).strip(): c for c in labels}
    df = pd.read_parquet(path, columns=[raw.get(c, c) for c in names])
    df.columns = list(names)
    return parquet_as_text(df)


def column_numbers(positions: Sequence[int]) -> str:
    """``[2, 3]`` -> ``"2 and 3"``, ``[1, 3, 6]`` -> ``"1, 3 and 6"`` (a duplicate name's columns, 1-based)."""
    return ", ".join(map(str, positions[:-1])) + f" and {positions[-1]}"


def _refuse_duplicates(columns: list[str], where: object, written: list[Any] | None = None) -> None:
    """Duplicate column names are refused: pandas would rename the second ``age`` to ``age.1``
    and a release could carry the raw copy next to the generalized one. ``written``: the names as
    given, when ``columns`` are them stripped; names that are one only once stripped (a DataFrame's
    ``age`` and `` age``, whose names are exact on every engine) are named as given, with the reason."""
    at: dict[str, list[int]] = {}
    for i, c in enumerate(columns):
        if c != "":  # (no name: check_column_names says "column N has no name")
            at.setdefault(c, []).append(i + 1)
    dup = {c: pos for c, pos in at.items() if len(pos) > 1}
    if dup:
        named = ", ".join(f"{c!r} (columns {column_numbers(pos)})" for c, pos in dup.items())
        spaced = [" and ".join(repr(str(written[i - 1])) for i in pos) for pos in dup.values()
                  if written is not None and len({str(written[i - 1]) for i in pos}) > 1]  # fmt: skip
        why = (f" ({'; '.join(spaced)} differ only in the spaces around them, which a CSV header's names lose: "
               "a release written as CSV would name two columns alike; rename one)") if spaced else ""  # fmt: skip
        raise InputError(f"{where}: duplicate column name(s) {named}; every column needs a name of its own{why}")


def check_column_names(columns: Iterable[Any], where: object) -> None:
    """Refuse a column with no name (empty after stripping spaces) and two names that differ only
    in case: an engine would rename one silently (DuckDB calls an unnamed column ``column8`` in a
    CSV and ``C8`` in Parquet and the second of ``age``/``AGE`` ``AGE_1``; Spark ``_c8``, and
    compares names ignoring case), where pandas calls the unnamed one ``Unnamed: 8``, so the same
    file would have other columns (roles, a left-out list, a report) on another engine. Used by
    :func:`read_table`, by the APIs for a DataFrame (:func:`check_frame`) and by the engines' readers
    (:func:`tempanon.lattice.source_duckdb.check_header`, ``SQLSource``), as is a name that
    appears twice once spaces are stripped (``age`` and `` age`` in a Parquet file)."""
    columns = list(columns)
    for i, c in enumerate(columns):  # a DataFrame's names may be numbers; roles name columns by text
        if not isinstance(c, str):
            raise InputError(f"{where}: column {i + 1} is named {c!r} ({type(c).__name__}); column names must be text: "
                             "rename the columns, e.g. df.columns = df.columns.astype(str)")  # fmt: skip
    names = [str(c).strip() for c in columns]
    _refuse_duplicates(names, where, columns)  # (every column of each name that appears twice, as a file's header is refused)
    seen: dict[str, str] = {}
    for i, name in enumerate(names):
        if not name:
            hint = " (a table saved by pandas with its index has an unnamed first column: save it with index=False)" if i == 0 else ""
            raise InputError(f"{where}: column {i + 1} has no name in the header{hint}; every column needs a name of its own")
        other = seen.setdefault(name.lower(), name)
        if other != name:
            raise InputError(f"{where}: columns {other!r} and {name!r} differ only in case; the engines compare column names "
                             "ignoring case: every column needs a name of its own")  # fmt: skip


def check_frame(df: pd.DataFrame) -> None:
    """:func:`check_column_names` for a DataFrame given to the Python API (a file's names are
    checked when it is read): names that are not text (``pd.DataFrame(array)`` numbers its columns),
    missing, twice, or differing only in case are refused as they are in a file."""
    check_column_names(df.columns, "the DataFrame")


def _value_type(t: Any) -> Any:
    """The Arrow type ``t``'s values: the storage type of an extension type, the value type of a
    dictionary (both unwrapped as often as they nest), else ``t``."""
    import pyarrow as pa

    while True:
        if isinstance(t, pa.ExtensionType):
            t = t.storage_type
        elif pa.types.is_dictionary(t):
            t = t.value_type
        else:
            return t


def _nested_type(t: Any) -> bool:
    """Is the Arrow type ``t`` nested (list, large/fixed-size list, list view, struct, map, union), or a
    dictionary or extension type whose values are?"""
    import pyarrow as pa

    return pa.types.is_nested(_value_type(t))


def _bytes_or_duration(t: Any) -> str | None:
    """``"binary"`` for an Arrow binary type (``binary``, ``large_binary``, ``fixed_size_binary``,
    ``binary_view``), ``"duration"`` for a duration, a dictionary or extension type of those; else ``None``.
    No role may take them: each engine made its own text of such a cell (numpy ``b'M'`` and
    ``0 days 00:00:48``, DuckDB and Spark ``M`` and ``00:00:48``, and DuckDB and Spark each their own for
    bytes that are not UTF-8), so classes and releases differed by engine."""
    import pyarrow as pa

    t = _value_type(t)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or str(t) == "binary_view":
        return "binary"
    if pa.types.is_duration(t):
        return "duration"
    return None


def parquet_type_phrase(type_text: str) -> str:
    """How a message names a column type of :func:`nested_parquet_columns`: ``a nested Parquet type``,
    ``a binary Parquet type`` or ``a duration Parquet type`` (by the type's text)."""
    t = type_text.removeprefix("dictionary<values=")
    if re.match(r"(large_|fixed_size_)?binary|binary_view", t):
        return "a binary Parquet type"
    if t.startswith("duration["):
        return "a duration Parquet type"
    return "a nested Parquet type"


def parquet_type_way_out(type_text: str) -> str:
    """What to do with a column of :func:`nested_parquet_columns` to give it a role."""
    phrase = parquet_type_phrase(type_text)
    if "binary" in phrase:
        return "decode it into a text (string) column first"
    if "duration" in phrase:
        return "convert it to a number of seconds (an integer or float column) first"
    return "flatten it into scalar columns first (one column per struct field or list element, or the value as text)"


def _parquet_schema(path: Any) -> Any | None:
    """The Arrow schema of the Parquet input ``path`` (:func:`pyarrow.parquet.read_schema`; a directory of
    part files: its first part), or ``None``: a DataFrame, a CSV file, a file that cannot be read here
    (its reading reports it)."""
    if path is None or not isinstance(path, (str, bytes, os.PathLike)):
        return None
    p = Path(os.fsdecode(path))
    suffixes = "".join(p.suffixes).lower()
    if not (suffixes.endswith(".parquet") or suffixes.endswith(".pq")):
        return None
    try:
        import pyarrow.parquet as pq

        if p.is_dir():  # (Spark and DuckDB read a directory of part files)
            parts = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith(("_", ".")))
            if not parts:
                return None
            p = parts[0]
        return pq.read_schema(str(p))
    except Exception:  # not a readable Parquet file: the reading (pandas, the engine) reports it
        return None


def nested_parquet_columns(path: Any, schema: Any = None) -> dict[str, str]:
    """The columns of the Parquet input ``path`` (or of its ``schema``) with a nested type
    (:func:`_nested_type`): name (stripped, as :func:`read_table` and the engines read it) -> the type
    as text, e.g. ``list<element: int64>``. Only the schema is read; empty for a DataFrame, a CSV file or
    a file that cannot be read here."""
    schema = _parquet_schema(path) if schema is None else schema
    if schema is None:
        return {}
    import pyarrow as pa

    def text(t: Any) -> str:  # (pyarrow names a map read from Parquet map<string, int64 ('mp')>)
        return f"map<{t.key_type}, {t.item_type}>" if isinstance(t, pa.MapType) else str(t)

    return {str(f.name).strip(): text(f.type) for f in schema if _nested_type(f.type) or _bytes_or_duration(f.type)}


_SCALAR_KINDS = frozenset({"string", "empty", "integer", "floating", "mixed-integer-float", "decimal", "boolean",
                           "datetime64", "datetime", "date", "time"})
"""What :func:`pandas.api.types.infer_dtype` calls an object column of scalar cells only (text,
numbers, booleans, dates, times, missing values): passed without a look at its cells."""


def _cell_kind(t: type) -> str | None:
    """The kind of a cell of Python type ``t`` that no role may take: ``"nested"`` (list, tuple, dict,
    set, array), ``"binary"`` (bytes), ``"duration"`` (a timedelta), ``"other"`` (any other object that
    is not text, a number, a boolean, a date, a time or missing), else ``None``."""
    import datetime as dt
    import decimal

    if issubclass(t, (list, tuple, dict, set, frozenset, np.ndarray)):
        return "nested"
    if issubclass(t, (bytes, bytearray, memoryview)):
        return "binary"
    if issubclass(t, (dt.timedelta, np.timedelta64)):  # (before the numbers: numpy's timedelta64 is an integer type)
        return "duration"
    if issubclass(t, (str, int, float, decimal.Decimal, np.integer, np.floating, np.bool_, dt.date, dt.time,
                      np.datetime64, type(None), type(pd.NA), type(pd.NaT))):  # fmt: skip
        return None
    return "other"


def _dtype_kind(dtype: Any) -> str | None:
    """:func:`_cell_kind` for a column of a dtype that is not ``object``: a timedelta64 or complex
    column, an Arrow-backed one of a binary, duration or nested Arrow type (:func:`_bytes_or_duration`,
    :func:`_nested_type`); ``None`` for every other dtype (its cells are scalars; a categorical column
    is looked at through its categories by the caller)."""
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "duration"
    if pd.api.types.is_complex_dtype(dtype):
        return "other"
    if isinstance(dtype, pd.ArrowDtype):
        t = dtype.pyarrow_dtype
        return _bytes_or_duration(t) or ("nested" if _nested_type(t) else None)
    return None


def frame_unreleasable_columns(df: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """The columns of the DataFrame ``df`` with a cell no role may take (what a Parquet column of a
    nested, binary or duration type reads as, or another object): name (as given: a DataFrame's names are
    exact, `` x `` is not ``x``) -> ``(kind, what)``,
    ``kind`` of :func:`_cell_kind` (of the first such cell), ``what`` e.g. ``bytes cells (line 3: b'M')``
    (the row as every message names it, :mod:`tempanon.data.lines`; with its index label when the frame
    is not numbered 0, 1, ...). By dtype first: a timedelta64, complex or Arrow binary/duration/nested
    column is refused by its dtype, a categorical one by its categories, any other dtype that is not
    ``object`` passes. An object column pandas' type inference calls text, numbers, booleans, dates or
    times (C, no Python loop per cell) passes; only one it calls mixed (or bytes, timedelta, ...) is
    looked at cell by cell, by the type of each cell (each distinct type judged once). The numpy path
    failed on a list cell ("unhashable type: 'list'", a traceback) where DuckDB took it as a typed list;
    bytes, timedelta and other objects were released as the objects themselves on numpy, and DuckDB
    released a timedelta as raw bytes."""
    from tempanon.data.lines import at_line

    index = df.index
    numbered = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1

    def where(i: int) -> str:
        label = index[i].item() if isinstance(index[i], np.generic) else index[i]  # (3, not np.int64(3))
        return at_line(i) if numbered else f"{at_line(i)}, index {label!r}"

    out: dict[str, tuple[str, str]] = {}
    for j, c in enumerate(df.columns):
        s = df.iloc[:, j]  # (by position: a name given twice is refused by check_frame, not here)
        kind, first = _dtype_kind(s.dtype), None
        if kind is not None:
            present = np.flatnonzero(s.notna().to_numpy(dtype=bool))
            first = int(present[0]) if len(present) else 0
            label = f"{s.dtype} dtype"
        else:
            if isinstance(s.dtype, pd.CategoricalDtype):
                cats = s.cat.categories
                if cats.dtype != object and _dtype_kind(cats.dtype) is None:
                    continue
                values = pd.Series(cats, dtype=cats.dtype)
            elif s.dtype == object:
                values = s
            else:
                continue
            kind_of = _dtype_kind(values.dtype)
            if kind_of is not None:  # (categories of a timedelta64 or complex dtype)
                bad = np.ones(len(values), dtype=bool)
            elif pd.api.types.infer_dtype(values, skipna=True) in _SCALAR_KINDS:
                continue
            else:
                types = values.map(type).to_numpy()
                kinds = {t: _cell_kind(t) for t in pd.unique(types)}
                refused = [t for t, k in kinds.items() if k is not None]
                if not refused:
                    continue
                bad = np.isin(types, np.array(refused, dtype=object))
            if isinstance(s.dtype, pd.CategoricalDtype):  # the first row of a refused category
                codes = s.cat.codes.to_numpy()
                rows = np.flatnonzero(np.isin(codes, np.flatnonzero(bad)))
                if not len(rows):
                    continue  # (an unused category)
                first = int(rows[0])
            else:
                first = int(np.flatnonzero(bad)[0])
            kind = kind_of or _cell_kind(type(s.iloc[first]))
            label = f"{type(s.iloc[first]).__name__} cells"
        out[str(c)] = (kind, f"{label} ({where(first)}: {str(s.iloc[first])[:40]})")
    return out


def frame_nested_columns(df: pd.DataFrame) -> dict[str, str]:
    """The columns of :func:`frame_unreleasable_columns`: name -> what, e.g. ``list cells (line 3: [1, 2])``
    (``check`` lists a DataFrame's such columns without a role, as a Parquet file's of a nested, binary
    or duration type)."""
    return {c: what for c, (_kind, what) in frame_unreleasable_columns(df).items()}


_FRAME_WAY_OUT = {
    "nested": "flatten a list, tuple, dict, set or array column into scalar columns first (one column per field or "
              "element, or the value as text)",
    "binary": "decode a bytes column into a text (str) column first (df[c].str.decode('utf-8'))",
    "duration": "convert a timedelta column to a number of seconds first (pd.to_timedelta(df[c]).dt.total_seconds())",
    "other": "convert a column of other objects to text first (df[c].astype(str)) if that text is what should be "
             "released",
}  # fmt: skip
"""What to do with a DataFrame column of :func:`frame_unreleasable_columns`, by kind."""


def refuse_nested_columns(path: Any, roles: Mapping[str, str | Iterable[str] | None]) -> None:
    """Refuse (:class:`InputError`, exit 2) a Parquet input ``path`` in which a column given a role has a
    nested type (``list``, ``large_list``, ``fixed_size_list``, ``struct``, ``map``, ``union``, a
    dictionary of those: :func:`nested_parquet_columns`). tempanon compares and releases scalar values
    only; each engine turned such a cell into other text (numpy's ``[8 9]`` and ``{'a': 4, 'b': 'z'}``,
    DuckDB's ``[8, 9]`` and ``{'a': 4, 'b': z}``; Spark cannot write it as CSV), so hierarchy keys,
    identifier screening, classes and releases would differ by engine. Called by every command and API
    entry point that reads a Parquet path, where the roles are known and **before any row is read or
    any engine starts**: only the schema is read.

    ``roles``: role label (as the caller's user names it: ``--qi``, ``[columns] keep``, ``qi``) ->
    column names, a list or the command's text (``"a,b"``, ranges ``A0:A9``, parsed against the file's
    columns). A column with no role is fine: it is not released and no engine compares it. A name the
    file does not have, a spec that does not parse, a path that is not a Parquet file or cannot be read
    here are left to the later checks (unknown column, the engine's reading).

    ``path`` may be a pandas DataFrame given to an API (``kanonymize``, ``anonymize_timestamped``,
    ``anonymize_stream``, ``kp_anonymize``, ``check_table``): then its columns given a role are refused
    when they hold a cell no role may take (:func:`frame_unreleasable_columns`: a list, tuple, dict, set
    or array; bytes; a timedelta, or a timedelta64 column; any other object that is not text, a number,
    a boolean, a date, a time or missing), naming the column, the first such cell's line and type, and
    what to do. Before, numpy released bytes, timedeltas and other objects as they were (``b'M'``,
    ``Timedelta('0 days 00:00:48')``) and DuckDB released a timedelta as raw bytes."""
    frame = isinstance(path, pd.DataFrame)
    if frame:  # (a DataFrame's names are exact, as the roles give them: ' x ' is not 'x')
        names = [str(c) for c in path.columns]
    else:
        schema = _parquet_schema(path)
        nested = nested_parquet_columns(path, schema)
        if not nested:
            return
        names = [str(name).strip() for name in schema.names]
    from tempanon.data.roles import parse_column_list

    given: dict[str, list[str]] = {}  # column -> the roles it is given
    for label, spec in roles.items():
        if spec is None or (not isinstance(spec, str) and not spec):
            continue
        try:  # (ranges A0:A9 against the columns)
            cols = parse_column_list(spec if isinstance(spec, str) else [str(c) for c in spec], list(dict.fromkeys(names)))
        except InputError:  # (refused with its own message where the caller parses it)
            continue
        for c in cols:
            given.setdefault(c, []).append(label)
    if frame:  # a DataFrame given to an API: its role columns with cells no role may take
        picked = [j for j, c in enumerate(names) if c in given]
        cells = frame_unreleasable_columns(path.iloc[:, picked]) if picked else {}
        nested = {c: what for c, (_kind, what) in cells.items()}
    found = {c: labels for c, labels in given.items() if c in nested}
    if not found:
        return
    what = "; ".join(f"{c!r} ({nested[c]}) given the role {' and '.join(labels)}" for c, labels in found.items())
    kinds = {cells[c][0] for c in found} if frame else {parquet_type_phrase(nested[c]) for c in found}
    if kinds <= {"nested", "a nested Parquet type"}:
        raise InputError(
            f"{'the DataFrame' if frame else path}: column(s) with a nested {'value' if frame else 'Parquet type'}: {what}. tempanon compares and releases scalar values only "
            "(text, numbers, dates, times): leave such a column without a role (a column with no role is not released) "
            "or flatten it into scalar columns first (one column per struct field or list element, or the value as text); "
            + ("nothing was written" if frame else "nothing was read or written")
        )
    if frame:
        ways = "; ".join(dict.fromkeys(_FRAME_WAY_OUT[cells[c][0]] for c in found))
        raise InputError(
            f"the DataFrame: column(s) with a value tempanon cannot give a role: {what}. tempanon compares and releases "
            "text, numbers, booleans, dates and times only, and the engines would release such a cell each its own way "
            "(numpy the object itself, DuckDB its own text or raw bytes): leave such a column "
            f"without a role (a column with no role is not released), or {ways}; nothing was written"
        )
    ways = "; ".join(dict.fromkeys(f"{parquet_type_phrase(nested[c])}: {parquet_type_way_out(nested[c])}" for c in found))
    raise InputError(
        f"{path}: column(s) of a Parquet type tempanon cannot give a role: {what}. tempanon compares and releases text, "
        "numbers, dates and times, and each engine would write a binary or duration cell as other text (b'M' or M, "
        "0 days 00:00:48 or 00:00:48): leave such a column without a role (a column with no role is not released), or "
        f"{ways}; nothing was read or written"
    )


def not_utf8_message(path: str | os.PathLike, exc: UnicodeDecodeError | None = None) -> str:
    """Where a text file stops being UTF-8: its line (the header being line 1) and the byte, found by
    decoding the file line by line (a UTF-8 character never holds the newline byte; run only once a
    read has failed), and what to do."""
    path = Path(path)
    opener = _open_bytes(path)
    try:
        with opener() as fh:
            for number, raw in enumerate(fh, 1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as bad:
                    return (f"{path}, line {number}: not UTF-8 (byte {bad.start + 1} of the line is 0x{raw[bad.start]:02x}); "
                            "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8, or 'CSV UTF-8' in a "
                            "spreadsheet), the encoding tempanon reads data and hierarchies in")  # fmt: skip
    except OSError:
        pass
    return f"cannot read {path}: not UTF-8 ({exc}); save the file as UTF-8"


def check_utf8(path: str | os.PathLike, chunk: int = 1 << 24) -> None:
    """Refuse (:class:`InputError`, :func:`not_utf8_message`) a text file that is not UTF-8. For
    readers that do not refuse it themselves: Spark reads such a byte as U+FFFD, and would release a
    kept column's 'K\xf6ln' as 'K\ufffdln'. Decoded in chunks cut at a line end (a UTF-8 character
    never holds the newline byte): about a second per gigabyte."""
    path = Path(path)
    opener = _open_bytes(path)
    rest = b""
    with opener() as fh:
        while True:
            data = fh.read(chunk)
            buf = rest + data
            if not data:
                cut = len(buf)
            else:
                cut = buf.rfind(b"\n") + 1
            try:
                buf[:cut].decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(not_utf8_message(path)) from None
            rest = buf[cut:]
            if not data:
                return


def _open_bytes(path: Path) -> Callable[[], Any]:
    """:func:`_open_text`'s file in binary (a ``.gz`` file decompressed)."""
    if path.suffix.lower() == ".gz":
        import gzip

        return lambda: gzip.open(path, "rb")
    return lambda: open(path, "rb")


def _open_text(path: Path) -> Callable[[], Any]:
    if path.suffix.lower() == ".gz":
        import gzip

        return lambda: gzip.open(path, "rt", encoding="utf-8", newline="")
    return lambda: open(path, encoding="utf-8", newline="")


def _read_sql(source: str | os.PathLike | None, sql: str, *, postgres: str | None = None) -> pd.DataFrame:
    import duckdb

    con = duckdb.connect()
    try:
        if postgres is not None:
            con.execute("INSTALL postgres; LOAD postgres;")
            quoted = postgres.replace("'", "''")
            con.execute(f"ATTACH '{quoted}' AS src (TYPE postgres, READ_ONLY)")
        elif source not in (None, "", "-"):
            path = Path(source)
            if not path.exists():
                raise InputError(f"database file not found: {path}")
            if path.suffix.lower() in {".sqlite", ".sqlite3", ".db"}:
                return _read_sqlite(path, sql)
            quoted = str(path).replace("'", "''")
            con.execute(f"ATTACH '{quoted}' AS src (READ_ONLY)")
        # The query may only read: exactly one SELECT; with a database file no file access at all
        # (COPY ... TO, read_csv, ATTACH of other files) and no configuration change afterwards.
        types = [st.type for st in con.extract_statements(sql)]
        if len(types) != 1 or types[0] != duckdb.StatementType.SELECT:
            raise InputError(
                "the SQL source must be exactly one SELECT query (got "
                + (", ".join(t.name for t in types) or "nothing") + "); sources are opened read-only"
            )
        if source not in (None, "", "-") or postgres is not None:
            con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        df = con.execute(sql).df()
        _refuse_duplicates([str(c) for c in df.columns], "the SQL query result")
        return df
    except duckdb.Error as exc:
        raise InputError(f"SQL query failed: {exc}") from exc
    finally:
        con.close()


def _read_sqlite(path: Path, sql: str) -> pd.DataFrame:
    """SQLite files are read with the standard library (read-only), no DuckDB extension download;
    the database is attached as ``src`` like DuckDB files, so ``FROM src.table`` works too."""
    import sqlite3

    from urllib.parse import quote

    uri = f"file:{quote(str(Path(path).resolve()), safe='/')}?mode=ro"  # '#', '?', '%' cannot end the path
    con = sqlite3.connect(uri, uri=True)
    try:
        con.execute("ATTACH DATABASE ? AS src", (uri,))
        con.execute("PRAGMA query_only = ON")
        allowed = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
        con.set_authorizer(lambda action, *_: sqlite3.SQLITE_OK if action in allowed else sqlite3.SQLITE_DENY)
        try:
            df = pd.read_sql_query(sql, con)
        except TypeError as exc:  # a statement without a result set
            raise InputError("the SQL source must be one SELECT query; sources are opened read-only") from exc
        _refuse_duplicates([str(c) for c in df.columns], "the SQL query result")
        return df
    except (sqlite3.Error, pd.errors.DatabaseError) as exc:
        raise InputError(f"SQL query failed: {exc}") from exc
    finally:
        con.close()


def refuse_special_output(path: str | os.PathLike, label: str = "output") -> None:
    """Refuse an output path that is (or links to) something other than a regular file or a directory: a
    device, a named pipe or a socket. An output is written to a temporary file renamed over its path, so
    ``--out /dev/null`` replaced the system's ``/dev/null`` with a regular file (run as root, exit 0: every
    program on the machine then wrote into that file), and ``/dev/stdout`` (a link to ``/proc/self/fd/1``,
    a regular file when stdout is redirected) was replaced by a file: a path in or linked into ``/dev``,
    ``/proc`` or ``/sys`` is refused too.
    ``-`` (standard output for many tools) is refused too: it was written as a file named ``-``."""
    import stat

    if str(path) == "-":
        raise InputError(f"{label} -: tempanon does not write to standard output; give a file name")
    system = ("/dev/", "/proc/", "/sys/")
    cur = os.path.abspath(path)
    for _ in range(40):  # the path and every link on the way (/dev/stdout -> /proc/self/fd/1 -> the shell's own file)
        if (cur + "/").startswith(system):
            raise InputError(f"{label} {path} is a system path ({cur}): an output is written to a temporary file renamed "
                             "over its path, which would replace it; give a file name (nothing was read or written)")  # fmt: skip
        if not os.path.islink(cur):
            break
        cur = os.path.abspath(os.path.join(os.path.dirname(cur), os.readlink(cur)))
    try:
        mode = os.stat(os.path.realpath(path)).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    kind = ("a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")  # fmt: skip
    raise InputError(f"{label} {path} is {kind}, not a file: an output is written to a temporary file renamed over its "
                     "path, which would replace it; give a file name (nothing was read or written)")  # fmt: skip


def atomic_write(path: str | os.PathLike, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp_path)`` and rename the temporary file over ``path``.

    The temporary file lives in the target's directory (created if needed) so the rename is atomic
    on POSIX file systems. On any exception the temporary file is removed and ``path`` untouched.
    A device, pipe or socket ``path`` is refused (:func:`refuse_special_output`).
    """
    refuse_special_output(path)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        write(tmp_path)
        os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode of a new file
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def csv_text(df: pd.DataFrame, *, delimiter: str = ",") -> str:
    """``df.to_csv(index=False)`` as text, except that a table with a carriage return in a cell has
    every field quoted: pandas (Python's ``csv`` writer with ``\n`` line ends) leaves a lone ``\r``
    unquoted, and every CSV reader, tempanon's too, takes it for a line end, so the file would not read
    back as the table that was verified. Quoted, it does (an empty field is ``""``, read as missing, as
    an empty field is)."""
    text = df.to_csv(index=False, sep=delimiter)
    if "\r" in text:
        text = df.to_csv(index=False, sep=delimiter, quoting=csv.QUOTE_ALL)
    return text


def _holds_cr(path: Path) -> bool:
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 24):
            if b"\r" in chunk:
                return True
    return False


def write_csv(df: pd.DataFrame, path: str | os.PathLike, *, delimiter: str = ",") -> None:
    """``df.to_csv(path, index=False)`` with :func:`csv_text`'s rule: written again with every field
    quoted when the file holds a carriage return (a scan of its bytes; rare)."""
    df.to_csv(path, index=False, sep=delimiter)
    if _holds_cr(Path(path)):
        df.to_csv(path, index=False, sep=delimiter, quoting=csv.QUOTE_ALL)


def parquet_as_text(df: pd.DataFrame) -> pd.DataFrame:
    """Every column of a frame read from Parquet as its values' text (``str`` of each value as pandas
    gives it; missing stays missing): the text of each *distinct* value, taken by the column's codes, not
    a Python call per row. Float columns are told apart by their bits (``-0.0`` keeps its own text);
    an ``object`` column that holds anything but strings (decimals, dates, bytes, lists) is converted
    value by value, where equal values may have different texts (``Decimal('1.0')``, ``Decimal('1.00')``)."""
    out: dict[str, Any] = {}
    for name in df.columns:
        col = df[name]
        if isinstance(col.dtype, (pd.DatetimeTZDtype, np.dtype)) and col.dtype.kind == "M":
            vals = timestamp_texts(col)
            if vals is not None:
                out[name] = vals
                continue
        if pd.api.types.is_float_dtype(col.dtype):
            arr = col.to_numpy(dtype=np.float64, na_value=np.nan)
            codes, uniq = pd.factorize(arr.view(np.int64))
            codes[np.isnan(arr)] = -1
            texts = [str(float(x)) for x in uniq.view(np.float64)]
        elif col.dtype != object or pd.api.types.infer_dtype(col, skipna=True) in ("string", "empty"):
            try:
                codes, uniq = pd.factorize(col, use_na_sentinel=True)
            except TypeError:  # unhashable values
                codes = None
            else:
                texts = [str(v) for v in np.asarray(uniq, dtype=object)]
        else:
            codes = None
        if codes is None:
            obj = col.astype(object).where(col.notna(), None)
            vals = np.array([None if v is None else str(v) for v in obj], dtype=object)
        else:
            table = np.array(texts + [None], dtype=object)
            vals = table[codes]  # -1 (missing) takes the last entry, None
        out[name] = vals
    return pd.DataFrame(out, index=df.index, columns=df.columns)


def _digits(x: np.ndarray, width: int) -> np.ndarray:
    """Whole numbers ``0 <= x < 10**width`` as text of ``width`` digits (leading zeros)."""
    if len(x) == 0:
        return np.zeros(0, dtype=f"<U{width}")
    return np.char.zfill(x.astype(f"<U{width}"), width)


_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def timestamp_texts(col: pd.Series) -> np.ndarray | None:
    """``str`` of every value of a datetime column as pandas prints a ``Timestamp`` (missing: ``None``),
    computed on whole arrays: ``YYYY-MM-DD HH:MM:SS``, then ``.ffffff`` when the value has microseconds
    and ``.fffffffff`` when it has nanoseconds, then, for an aware column, the offset of its zone at that
    instant (``+HH:MM``, ``+HH:MM:SS`` when it has seconds). ``None`` when a value is outside the years
    1-9999 or an offset has a fraction of a second (the caller converts value by value then)."""
    unit = np.datetime_data(col.dtype.base if isinstance(col.dtype, np.dtype) else np.dtype(f"M8[{col.dtype.unit}]"))[0]
    if unit not in _PER_SECOND:
        return None
    per = _PER_SECOND[unit]
    tz = getattr(col.dtype, "tz", None)
    missing = col.isna().to_numpy()
    if tz is not None:
        wall = col.dt.tz_localize(None).to_numpy()
        utc = col.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
        off_units = wall.view(np.int64) - utc.view(np.int64)
        if np.any(off_units[~missing] % per):
            return None
        off = off_units // per
    else:
        wall = col.to_numpy()
        off = None
    v = wall.view(np.int64)
    v = np.where(missing, 0, v)
    secs = np.floor_divide(v, per)
    frac = v - secs * per  # 0 <= frac < per
    stamp = secs.astype("datetime64[s]")
    lo, hi = np.datetime64("0001-01-01T00:00:00", "s"), np.datetime64("9999-12-31T23:59:59", "s")
    if np.any((stamp < lo) | (stamp > hi)):
        return None
    text = np.datetime_as_string(stamp, unit="s")  # YYYY-MM-DDTHH:MM:SS
    chars = text.view(np.uint32).reshape(len(text), -1).copy()
    chars[:, 10] = ord(" ")
    text = chars.view(f"<U{chars.shape[1]}").ravel()
    ns = frac * (1_000_000_000 // per)
    micro = ns // 1000
    has_ns = ns % 1000 != 0
    has_us = (ns != 0) & ~has_ns
    if has_ns.any() or has_us.any():
        frac_text = np.full(len(text), "", dtype="<U10")
        frac_text[has_us] = np.char.add(".", _digits(micro[has_us], 6))
        frac_text[has_ns] = np.char.add(".", _digits(ns[has_ns], 9))
        text = np.char.add(text, frac_text)
    if off is not None:
        a = np.abs(off)
        hh, mm, ss = a // 3600, a // 60 % 60, a % 60
        sign = np.where(off < 0, "-", "+")
        otext = np.char.add(np.char.add(np.char.add(sign, _digits(hh, 2)), ":"), _digits(mm, 2))
        if np.any(ss != 0):
            with_s = ss != 0
            otext = otext.astype("<U9")
            otext[with_s] = np.char.add(np.char.add(otext[with_s], ":"), _digits(ss[with_s], 2))
        text = np.char.add(text, otext)
    out = text.astype(object)
    out[missing] = None
    return out


def write_table(df: pd.DataFrame, path: str | os.PathLike, *, delimiter: str = ",",
                like: str | os.PathLike | None = None, unchanged: Iterable[str] = (),
                input_text: pd.DataFrame | None = None) -> Path:
    """Write ``df`` atomically as CSV (default; :func:`write_csv`) or Parquet (``.parquet`` suffix).

    ``like`` (the input file) and ``unchanged`` (the columns released unchanged: ``--keep``, ...): a
    Parquet release of a Parquet input writes those columns with the input's types
    (:func:`typed_release`; ``input_text``, optional: the input as ``read_table(like, as_text=True)``
    read it); otherwise, and always in a CSV, every column as it is in ``df``."""
    target = Path(path)
    if _is_parquet_name(target):
        table = typed_release(df, like, unchanged, input_text=input_text)  # (before anything is written)
        if table is None:
            return atomic_write(target, lambda p: df.to_parquet(p, index=False))
        return atomic_write(target, lambda p: _write_arrow(table, p))
    return atomic_write(target, lambda p: write_csv(df, p, delimiter=delimiter))


def _is_parquet_name(path: str | os.PathLike) -> bool:
    return Path(path).suffix.lower() in {".parquet", ".pq"}


#: suffixes of other formats: a release so named was written as CSV text under it (released.xlsx: a CSV file
#: Excel refuses to open as a workbook; released.json: CSV, not JSON)
OTHER_FORMATS = frozenset({".xlsx", ".xlsm", ".xls", ".ods", ".json", ".jsonl", ".ndjson", ".html", ".htm", ".xml",
                           ".feather", ".arrow", ".ipc", ".orc", ".avro", ".sqlite", ".db", ".duckdb", ".pdf",
                           ".toml", ".yaml", ".yml", ".zip", ".pkl", ".pickle"})  # fmt: skip


def refuse_table_format(path: str | os.PathLike, label: str) -> None:
    """Refuse a release table named like another format (:data:`OTHER_FORMATS`): tempanon writes a release
    as Parquet (``.parquet``) or CSV (any other name)."""
    suffix = Path(path).suffix.lower()
    if suffix in OTHER_FORMATS:
        raise InputError(f"{label} {path}: a release is written as CSV, or as Parquet when its name ends in .parquet; "
                         f"a name ending in {suffix} would hold CSV text: name it .csv or .parquet (nothing was read or "
                         "written)")  # fmt: skip


def _write_arrow(table: Any, path: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, path)


def zoned_schema(schema: Any, zones: Mapping[str, str], types: Mapping[str, Any] | None = None) -> Any:
    """The Arrow schema the numpy path writes (:func:`typed_release`) for a Parquet file an engine wrote
    with ``schema`` (as pyarrow reads it): an aware timestamp column named in ``zones`` (the input's
    columns as the engine names them, ``parquet_zones``, ``frame_zones``; else by its stripped name) in
    that zone, its unit kept, and every field nullable, as pandas and pyarrow write. Parquet stores an aware value as an instant adjusted to UTC; the zone's name is
    Arrow's, kept in the file's ``ARROW:schema`` metadata, which neither DuckDB nor Spark writes (both
    read back ``tz=UTC``). The schema's own metadata is kept. ``types``: a column (by its name as written)
    -> the Arrow type to give it instead (Spark's release of a DataFrame: an unsigned integer, a ``ms`` or
    ``ns`` timestamp, which Spark's types cannot hold as pandas writes them, ``SparkSource._copy``)."""
    import pyarrow as pa

    fields = []
    for f in schema:
        t, zone = (types or {}).get(f.name, f.type), zones.get(f.name, zones.get(str(f.name).strip()))
        if zone is not None and pa.types.is_timestamp(t) and t.tz is not None and t.tz != zone:
            t = pa.timestamp(t.unit, tz=zone)
        fields.append(pa.field(f.name, t, nullable=True, metadata=f.metadata))
    return pa.schema(fields, metadata=schema.metadata)


def zone_written_parquet(path: str | os.PathLike, zones: Mapping[str, str], types: Mapping[str, Any] | None = None,
                         texts: Mapping[str, str] | None = None, first_row: int = 0) -> bool:
    """Give a Parquet file an engine wrote (DuckDB's ``COPY``, one of Spark's part files) the schema
    :func:`zoned_schema` says, the same values. Its footer is read first; only when its schema differs
    is it rewritten with pyarrow, row group by row group (the same row groups, rows and order; a
    metadata-only cast of each; memory bounded by one row group), to a hidden file beside it renamed
    over ``path``; its own key-value metadata is kept. Returns whether it was rewritten. The caller
    verifies the file afterwards, as it would have the engine's. ``types``: :func:`zoned_schema`'s; their
    casts are pyarrow's safe ones (a value out of the type's range, or a timestamp that a coarser unit
    would truncate, raises: nothing is changed silently). ``texts``: a text column written beside a typed
    one -> that typed column's name (``SparkSource._copy``): every row group's typed values, as cast, are
    compared with their texts (:func:`check_typed_texts`, pyarrow's parse, not the engine's), then the text
    columns are left out of the rewritten file; ``first_row``: the file's first row's number in the release
    (0-based), for the error."""
    import pyarrow.parquet as pq

    path = Path(path)
    with pq.ParquetFile(path) as pf:
        schema = pf.schema_arrow
        texts = dict(texts or {})
        if texts:
            from tempanon.errors import VerificationError

            missing = [t for t in texts if t not in schema.names]
            if missing:
                raise VerificationError(f"the Parquet part {path.name} lacks the text column(s) {missing} of its typed columns")
            schema = pa_schema_without(schema, texts)
        want = zoned_schema(schema, zones, types)
        if not texts and want.equals(schema) and all(f.nullable for f in schema):
            return False
        tmp = path.with_name(f".{path.name}.zone")
        try:
            with pq.ParquetWriter(tmp, want, compression="snappy") as writer:
                row = first_row
                for i in range(pf.num_row_groups):
                    group = pf.read_row_group(i)
                    if texts:
                        text_cols = {c: group.column(t) for t, c in texts.items()}
                        group = group.select(schema.names).cast(want)
                        check_typed_texts(group, text_cols, row)
                    else:
                        group = group.cast(want)
                    row += group.num_rows
                    writer.write_table(group, row_group_size=max(group.num_rows, 1))
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    os.replace(tmp, path)
    return True


def pa_schema_without(schema: Any, names: Iterable[str]) -> Any:
    """``schema`` without the fields ``names`` (its metadata kept)."""
    import pyarrow as pa

    drop = set(names)
    return pa.schema([f for f in schema if f.name not in drop], metadata=schema.metadata)


# The text Python and pandas write for an aware timestamp (``str(pandas.Timestamp)``: the wall clock, then
# ``+HH:MM``, or ``+HH:MM:SS`` for an offset with seconds such as Amsterdam's ``+00:19:32`` of 1930), split
# into the wall clock and the offset so that :func:`_text_values` turns a verified text into its instant.
# It reads tempanon's own output only, so it is strict: the whole value, a colon, no ``Z``.
# Not to be merged with ``tempanon.stream.snapshots._OFFSET``, which finds an offset at the end of a time
# *as people write it* in a stream's input (``Z``, ``+hhmm``, ``+hh:mm``, ``+hh`` after a time; no
# seconds, which pandas does not parse) and is matched on a value's last characters only
# (``utc_offsets``); each is exact for its own texts and wrong for the other's.
_OFFSET_TEXT = r"^(?P<local>.*?)(?P<sign>[+-])(?P<h>[0-9]{2}):(?P<m>[0-9]{2})(?::(?P<s>[0-9]{2}))?$"


def _text_values(text: Any, t: Any) -> Any:
    """The texts ``text`` (pandas' text of a DataFrame's cells, ``SparkSource.from_pandas``; null where
    missing) parsed by pyarrow, independently of the engine that wrote the typed column, as values
    comparable with a typed column of Arrow type ``t`` as :func:`_typed_values` gives them: integers as
    ``t``, text as itself, a dictionary (a categorical) as its values' type, dates (``date32``) from ISO
    ``YYYY-MM-DD``, floats as their bits (``int64``/``int32``: ``-0.0`` apart from ``0.0``; a NaN by its own
    text), booleans from ``True``/``False`` only, timestamps as ``int64`` in ``us`` (``ns`` for a ``ns``
    column) since the epoch, an aware one's text ``... +HH:MM[:SS]`` (Python's offsets, seconds
    included) as its instant. A text that does not parse raises ``pyarrow.ArrowInvalid``."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as pt

    if pt.is_dictionary(t):  # (a categorical: its values' text)
        return _text_values(text, t.value_type)
    if pt.is_string(t) or pt.is_large_string(t):
        return text.cast(t)
    if pt.is_date32(t):  # (pandas' text of a datetime.date: ISO, YYYY-MM-DD)
        return pc.cast(text, t)
    if pt.is_boolean(t):
        ok = pc.or_(pc.equal(text, "True"), pc.equal(text, "False"))
        if pc.any(pc.invert(pc.fill_null(ok, True))).as_py():
            raise pa.ArrowInvalid("a boolean's text is neither True nor False")
        return pc.equal(text, "True")
    if pt.is_integer(t):
        return pc.cast(text, t)
    if pt.is_floating(t):
        return _float_bits(pc.cast(text, t))
    if pt.is_timestamp(t):
        unit = "ns" if t.unit == "ns" else "us"
        if t.tz is None:
            return pc.cast(pc.cast(text, pa.timestamp(unit)), pa.int64())
        parts = pc.extract_regex(text, _OFFSET_TEXT)
        if parts.null_count != text.null_count:
            raise pa.ArrowInvalid("an aware timestamp's text without its offset")
        parts = parts.combine_chunks() if isinstance(parts, pa.ChunkedArray) else parts
        f = dict(zip((x.name for x in parts.type), parts.flatten()))  # (null where the text is)
        local = pc.cast(pc.cast(f["local"], pa.timestamp(unit)), pa.int64())
        secs = pc.add(pc.add(pc.multiply(pc.cast(f["h"], pa.int64()), 3600), pc.multiply(pc.cast(f["m"], pa.int64()), 60)),
                      pc.cast(pc.if_else(pc.equal(f["s"], ""), "0", f["s"]), pa.int64()))  # fmt: skip
        secs = pc.if_else(pc.equal(f["sign"], "-"), pc.negate(secs), secs)
        return pc.subtract_checked(local, pc.multiply(secs, 1_000_000_000 if unit == "ns" else 1_000_000))
    raise pa.ArrowInvalid(f"no text check for the type {t}")


def _float_bits(a: Any) -> Any:
    import pyarrow as pa

    a = a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
    width = pa.int64() if a.type.bit_width == 64 else pa.int32()
    values = a.to_numpy(zero_copy_only=False) if a.null_count == 0 else a.fill_null(0).to_numpy(zero_copy_only=False)
    bits = values.view(np.int64 if width == pa.int64() else np.int32).copy()
    bits[np.isnan(values)] = -1  # any NaN (its payload aside)
    return pa.array(bits, width, mask=a.is_null().to_numpy(zero_copy_only=False) if a.null_count else None)


def _typed_values(col: Any) -> Any:
    """A typed column as :func:`_text_values` parses its texts."""
    import pyarrow as pa
    import pyarrow.types as pt

    t = col.type
    if pt.is_dictionary(t):
        return _typed_values(col.dictionary_decode())
    if pt.is_floating(t):
        return _float_bits(col)
    if pt.is_timestamp(t):
        return col.cast(pa.timestamp("ns" if t.unit == "ns" else "us", tz=t.tz)).cast(pa.int64())
    return col


def check_typed_texts(group: Any, texts: Mapping[str, Any], first_row: int = 0) -> None:
    """Every row of the Arrow table ``group`` holds, in each typed column ``c`` of ``texts``, the value its
    text ``texts[c]`` (the release's text of that row, written beside it) says, parsed by pyarrow
    (:func:`_text_values`): equal, both missing, or neither; a text pyarrow cannot parse refused.
    Raises :class:`~tempanon.errors.VerificationError` naming the release row (``first_row`` + its
    place, 1-based), the column, the typed value and the text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from tempanon.errors import VerificationError

    for c, text in texts.items():
        col = group.column(c).combine_chunks()
        text = text.combine_chunks() if isinstance(text, pa.ChunkedArray) else text
        try:
            got, exp = _typed_values(col), _text_values(text, col.type)
            same = pc.fill_null(pc.equal(got, exp), False)
            same = pc.or_(same, pc.and_(pc.is_null(got), pc.is_null(exp)))
            bad = pc.index(same, False).as_py()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            bad = None
            for j in range(len(text)):  # (the row pyarrow cannot parse, or compare)
                try:
                    g, e = _typed_values(col.slice(j, 1)), _text_values(text.slice(j, 1), col.type)
                    if not (g[0].as_py() == e[0].as_py()):
                        bad = j
                        break
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    bad = j
                    break
            if bad is None:
                raise
        if bad is not None and bad >= 0:
            raise VerificationError(f"Parquet release row {first_row + bad + 1}, column {c!r}: the typed value written reads "
                                    f"back as {col[bad].as_py()!r}, the released value is {text[bad].as_py()!r}")  # fmt: skip


def _typed_kind(t: Any) -> Any | None:
    """The Arrow type a column of input type ``t`` is released with when released unchanged (as DuckDB's
    release writes it), or ``None`` to release it as text: integers, ``float``/``double``, ``decimal128``,
    dates, ``time64``, ``binary``, strings (``large_string`` and a dictionary of strings as ``string``)
    and timestamps (``ms`` as ``us``: DuckDB's units are ``us`` and ``ns``; the input's zone kept).
    Booleans are text on every engine (``True``/``False``); nested and other types stay text."""
    import pyarrow as pa
    import pyarrow.types as pt

    if pt.is_dictionary(t):
        t = t.value_type
    if pt.is_integer(t) or pt.is_float32(t) or pt.is_float64(t) or pt.is_decimal128(t) or pt.is_date32(t) \
            or pt.is_time64(t) or pt.is_binary(t) or pt.is_string(t):  # fmt: skip
        return t
    if pt.is_large_string(t):
        return pa.string()
    if pt.is_timestamp(t):
        return pa.timestamp("ns" if t.unit == "ns" else "us", tz=t.tz)
    return None


def parquet_value_map(path: str | os.PathLike, field: str, text: pd.Series | None = None,
                      column: Any | None = None) -> tuple[list[str], Any, Any]:
    """The distinct values of the Parquet column ``field`` of ``path``: ``(texts, rows, column)`` where
    ``texts[i]`` is the text the numpy path reads a value as (:func:`read_table` with ``as_text``,
    :func:`parquet_as_text`: ``str`` of the value as pandas reads it; missing values have none) and
    ``column[rows[i]]`` is that value as Arrow reads it (its first row), as pandas reads it where that
    differs in type (an integer column holding a missing value: floats, ``2.0``, as the engines' views).
    ``text``: that column as :func:`read_table` read it (same rows), else computed here (within a column
    the text is a bijection of the value). ``column``: that column as Arrow read it, if the caller has it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if column is None:
        column = pq.read_table(path, columns=[field]).column(0)
    values = pd.read_parquet(path, columns=[field])[field]
    if pa.types.is_integer(column.type) and values.dtype.kind == "f":
        column = column.cast(pa.float64(), safe=False)
    if text is None or len(text) != len(column):
        text = parquet_as_text(values.to_frame(name="v"))["v"]
    codes, uniques = pd.factorize(text)
    return [str(v) for v in uniques.tolist()], _first_rows(np.asarray(codes, dtype=np.int64)), column


def _first_rows(codes: Any) -> Any:
    """The first row of every code ``0..max`` of ``codes`` (``-1``: missing, no code)."""
    first = np.full(int(codes.max(initial=-1)) + 1, -1, dtype=np.int64)
    present = np.flatnonzero(codes >= 0)
    first[codes[present[::-1]]] = present[::-1]
    return first


def typed_release(df: pd.DataFrame, like: str | os.PathLike | None, unchanged: Iterable[str], *,
                  input_text: pd.DataFrame | None = None) -> Any | None:
    """The Arrow table of a Parquet release whose columns released unchanged (``unchanged``) have the
    types of the Parquet input ``like``; ``None`` when there is none to type (not a Parquet input, no
    such column): the release is then written by pandas as before (every column text).

    ``df`` is the verified release (text, as :func:`read_table` with ``as_text`` reads the input). A
    column is typed through the map of its distinct input values (:func:`parquet_value_map`: text ->
    typed value; the texts are those of ``input_text``, the input as :func:`read_table` read it, when
    given), not a call per row; integers holding a missing value are ``double`` (pandas reads them
    as floats, ``2.0``, and so do the engines' views); a column whose type has no typed release
    (:func:`_typed_kind`: booleans, nested types) stays text. Fail closed: every distinct released text
    must be a value of the input column, and the typed column's text (as the numpy path reads it) must be
    the verified text at every distinct value, missing exactly where it was; else
    :class:`~tempanon.errors.VerificationError` (nothing is written)."""
    if like is None or isinstance(like, pd.DataFrame) or not isinstance(like, (str, os.PathLike)):
        return None
    suffixes = "".join(Path(like).suffixes).lower()
    if not (suffixes.endswith(".parquet") or suffixes.endswith(".pq")):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from tempanon.errors import VerificationError

    schema = pq.read_schema(like)
    names: dict[str, str] = {}
    for f in schema:
        names.setdefault(str(f.name).strip(), f.name)  # the names as read_table gives them
    todo, text = {}, []
    for c in df.columns:
        if c in set(unchanged) and c in names:
            t = schema.field(names[c]).type
            kind = _typed_kind(t)
            if kind is not None:
                todo[c] = kind
            elif pa.types.is_boolean(t):
                text.append(c)  # True / False on every engine, a string column as theirs
    if not todo and not text:
        return None
    # the text columns as pandas would write them; the typed ones are put in their places below (not
    # converted to Arrow text first: that conversion of every row is most of a large release's cost)
    table = pa.Table.from_pandas(df.drop(columns=list(todo)), preserve_index=False)
    done: dict[str, Any] = {}
    for c in text:
        i = table.schema.get_field_index(c)
        table = table.set_column(i, pa.field(c, pa.string()), table.column(i).cast(pa.string()))
    for c, kind in todo.items():
        column = pq.read_table(like, columns=[names[c]]).column(0)  # (read once: by row, else the map)
        typed = _typed_by_row(df, c, kind, column, input_text)
        if typed is not None:
            done[c] = typed
            continue
        texts, rows, column = parquet_value_map(
            like, names[c], input_text[c] if input_text is not None and c in input_text.columns else None, column)
        codes, released = pd.factorize(df[c])
        codes = np.asarray(codes, dtype=np.int64)
        released = np.asarray(released, dtype=object)
        try:  # the row of every distinct released text among the input's (a hash lookup in Arrow)
            at = pc.index_in(pa.array(released, pa.string()), value_set=pa.array(texts, pa.string()))
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # a released value that is not text
            at = pa.nulls(len(released), pa.int32())
        bad = np.flatnonzero(np.asarray(at.is_null().to_numpy(zero_copy_only=False)))
        if len(bad):
            raise VerificationError(f"the Parquet release's column {c!r} (released unchanged) holds {released[bad[0]]!r}, "
                                    f"which is no value of the input's column {names[c]!r}: nothing was written")  # fmt: skip
        values = column.take(pa.array(np.asarray(rows)[at.to_numpy()], pa.int64()))
        if pa.types.is_dictionary(values.type):
            values = values.cast(values.type.value_type)
        if pa.types.is_floating(values.type) and pa.types.is_integer(kind):
            kind = values.type  # (parquet_value_map: integers with a missing value as pandas reads them)
        values = values.cast(kind, safe=False)
        typed = values.take(pa.array(codes, pa.int64(), mask=codes < 0))
        # the check: the typed column's text is the verified text at one row of every distinct value,
        # and it is missing exactly where the verified release is
        back = typed.take(pa.array(_first_rows(codes), pa.int64())).to_pandas()  # as pandas reads it back
        got = parquet_as_text(back.to_frame(name="v"))["v"].to_numpy(dtype=object)
        differ = np.flatnonzero(got != released)
        if len(differ):
            want, was = released[differ[0]], got[differ[0]]
            raise VerificationError(f"the Parquet release's column {c!r}: the typed value written for {want!r} "
                                    f"reads back as {was!r}; nothing was written")  # fmt: skip
        if not np.array_equal(np.asarray(typed.is_null().to_numpy(zero_copy_only=False)), codes < 0):
            raise VerificationError(f"the Parquet release's column {c!r}: the typed column's missing values are not "
                                    "the release's; nothing was written")  # fmt: skip
        done[c] = typed
    columns = [done[c] if c in done else table.column(c) for c in df.columns]
    fields = [pa.field(c, done[c].type) if c in done else table.schema.field(c) for c in df.columns]
    return pa.table(columns, schema=pa.schema(fields))  # (no pandas metadata: it would name the text dtypes)


def _typed_by_row(df: pd.DataFrame, c: str, kind: Any, column: Any, input_text: pd.DataFrame | None) -> Any | None:
    """:func:`typed_release`'s column ``c`` taken by row, where that is exact and cheap: the release's
    index labels are the input's rows (``input_text``, the input as :func:`read_table` read it, indexed
    0..n-1), every released text is the input's text at its row (missing exactly where the input's is),
    and the input column is read with the released type itself (no cast, no dictionary, no integers
    read as floats by pandas). The typed column is then the input's values at those rows, whose text
    is the verified text by that check. ``None`` otherwise (the map of distinct values decides).
    ``column``: the input's column as Arrow reads it."""
    import pyarrow as pa

    if input_text is None or c not in input_text.columns:
        return None
    idx = input_text.index
    if not (isinstance(idx, pd.RangeIndex) and idx.start == 0 and idx.step == 1):
        return None
    if not pd.api.types.is_integer_dtype(df.index.dtype):
        return None
    pos = np.asarray(df.index, dtype=np.int64)
    n = len(idx)
    if len(pos) and (pos.min() < 0 or pos.max() >= n):
        return None
    if len(column) != n or column.type != kind or (pa.types.is_integer(kind) and column.null_count):
        return None  # (integers with a missing value: floats, as pandas and the engines read them)
    import pyarrow.compute as pc

    try:  # (in Arrow: no Python object per row)
        expected = pa.array(input_text[c], from_pandas=True).cast(pa.large_string()).take(pa.array(pos, pa.int64()))
        got = pa.array(df[c], from_pandas=True).cast(pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    if not pc.all(pc.equal(expected.is_null(), got.is_null())).as_py():
        return None
    if not pc.all(pc.fill_null(pc.equal(expected, got), True)).as_py():
        return None  # (the map's check names the value)
    typed = column.take(pa.array(pos, pa.int64()))
    return typed.combine_chunks() if hasattr(typed, "combine_chunks") else typed


_ROW_MARK = "\x1e"
"""Marks the start of every row in :func:`csv_texts_by`'s single formatting pass (ASCII record
separator; a table holding it in a cell is written part by part instead)."""


def _cellwise(dtype) -> bool:
    """Is ``to_csv``'s text of a cell of this dtype a function of the cell alone? Objects, strings,
    integers, booleans and floats (shortest repr) are; datetimes are not (a column of midnights is
    written as dates), nor categoricals of them: those go part by part."""
    import numpy as np

    return (isinstance(dtype, np.dtype) and dtype.kind in "OUiubf") or isinstance(dtype, pd.StringDtype)


def csv_texts_by(df: pd.DataFrame, by: str, columns: list[str], *, delimiter: str = ",") -> dict[Any, str]:
    """The CSV text of every part of ``df[columns]`` that shares one value of ``df[by]``, keyed by that
    value in order of first appearance: for each key the same text as :func:`csv_text` of ``df.loc[df[by]
    == key, columns]``, from one pandas formatting pass over the whole
    table instead of one per part (the stream command writes one pair of files per snapshot; with
    ``to_csv`` per file, ~2 ms each, writing took most of a run).

    The pass writes every row behind a marker column (:data:`_ROW_MARK`), so the text is cut into rows
    at the markers, not at line ends (a quoted cell may hold a newline), and each row keeps exactly the
    bytes pandas wrote for it. Tables whose text of a cell depends on its column (datetimes), that hold
    the marker, or a carriage return (:func:`csv_text`) are written part by part."""
    import numpy as np

    sub = df[columns]
    keys, first = pd.factorize(df[by], sort=False, use_na_sentinel=False)
    texts = [c for c in columns if sub[c].dtype.kind in "OU" or isinstance(sub[c].dtype, pd.StringDtype)]
    text = None
    if (all(_cellwise(dt) for dt in sub.dtypes) and _ROW_MARK not in columns
            and not any(sub[c].astype(str).str.contains(_ROW_MARK, regex=False).any() for c in texts)):
        marked = sub.set_axis(range(len(sub))).assign(**{_ROW_MARK: _ROW_MARK})[[_ROW_MARK, *columns]]
        text = marked.to_csv(index=False, header=False, sep=delimiter)
    header = sub.iloc[:0].to_csv(index=False, sep=delimiter)
    if text is None or "\r" in text or "\r" in header:  # part by part (a carriage return: csv_text's rule per part)
        return {k: csv_text(df.loc[keys == i, columns], delimiter=delimiter) for i, k in enumerate(first)}
    rows = text.split(_ROW_MARK + delimiter)[1:]
    if len(rows) != len(sub):  # cannot happen (the marker is in no cell); said, not written wrong
        raise RuntimeError(f"csv_texts_by: {len(rows)} rows cut from a table of {len(sub)}")
    if len(columns) == 1:  # the csv writer quotes a row's only field when empty ('""'), not one of two
        rows = ['""\n' if r == "\n" else r for r in rows]
    order = np.argsort(keys, kind="stable").tolist()
    cuts = np.concatenate([[0], np.cumsum(np.bincount(keys, minlength=len(first)))]).tolist()
    return {k: header + "".join(rows[j] for j in order[cuts[i] : cuts[i + 1]]) for i, k in enumerate(first)}


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def write_json(obj: Any, path: str | os.PathLike) -> Path:
    """Write ``obj`` atomically as indented JSON (numpy scalars and arrays converted)."""
    text = json.dumps(obj, indent=2, default=_json_default, allow_nan=False)
    return atomic_write(path, lambda p: p.write_text(text + "\n", encoding="utf-8"))


# --- output sets: no overwrites, outputs of one run committed together ------------------------


def _identity(path: Path) -> tuple[str, tuple[int, int] | None]:
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
        return real, (st.st_dev, st.st_ino)
    except OSError:
        return real, None


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Are ``a`` and ``b`` one file: the same real path (symlinks resolved) or, both existing, the same
    inode (hard links)?"""
    (ra, ia), (rb, ib) = _identity(Path(a)), _identity(Path(b))
    return ra == rb or (ia is not None and ia == ib)


def write_error(path: str | os.PathLike, exc: OSError) -> InputError:
    """An :class:`InputError` (exit 2) for a failed write: full disk, read-only or missing
    permissions, an output that is a directory."""
    import errno

    why = {
        errno.ENOSPC: "no space left on the device",
        errno.EDQUOT: "disk quota exceeded",
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
        errno.EROFS: "read-only file system",
        errno.EISDIR: "it is a directory",
        errno.ENOTDIR: "a parent of it is not a directory",
        errno.ENAMETOOLONG: "the name is too long",
    }.get(exc.errno or -1, exc.strerror or str(exc))
    if exc.errno == errno.EEXIST and any(p.is_file() for p in Path(path).parents):  # (mkdir of a folder that is a file)
        why = "a parent of it is not a directory"
    return InputError(f"cannot write {path}: {why}; nothing of this run was written")


_SPARK_RELEASE_FILE = re.compile(r"^(?:part-.+|_SUCCESS|\..+\.crc|_committed_.+|_started_.+)$")


def is_spark_release_dir(path: str | os.PathLike) -> bool:
    """Does the directory ``path`` hold only what Spark writes for a release (``part-*`` files,
    ``_SUCCESS``, their ``.crc`` checksums, commit markers) and nothing else, no folder? Only such a
    directory is replaced by a new Spark release of the same name."""
    try:
        entries = list(os.scandir(path))
    except OSError:
        return False
    return all(e.is_file(follow_symlinks=False) and _SPARK_RELEASE_FILE.match(e.name) for e in entries)


def replace_path(tmp: str | os.PathLike, target: str | os.PathLike) -> None:
    """Rename ``tmp`` onto ``target`` (:func:`os.replace`), also when one of them is a directory (a
    Spark release is a directory of part files): an existing ``target`` that ``os.replace`` cannot
    overwrite (a directory, or a file where a directory goes) is first renamed aside beside it, then
    removed once ``tmp`` is in place, and put back if that rename fails. A directory ``target`` must
    hold an earlier Spark release (:func:`is_spark_release_dir`)."""
    tmp, target = Path(tmp), Path(target)
    if not os.path.lexists(target) or not (tmp.is_dir() or target.is_dir()):
        os.replace(tmp, target)
        return
    if target.is_dir() and not is_spark_release_dir(target):
        raise InputError(f"{target} is a directory that does not hold an earlier Spark release; nothing was replaced")
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    aside.rmdir()  # a free name beside the target
    os.replace(target, aside)
    try:
        os.replace(tmp, target)
    except OSError:
        os.replace(aside, target)
        raise
    if aside.is_dir():
        shutil.rmtree(aside, ignore_errors=True)
    else:
        aside.unlink(missing_ok=True)


class OutputSet:
    """The outputs of one run: checked before anything is read, staged as temporary files, and
    committed together at the end.

    * :meth:`__init__` refuses (:class:`InputError`, exit 2) an output that resolves to an input
      (same real path, or same file through a hard link: same device and inode), an output
      inside an input directory that names an existing file there, two outputs that resolve to
      the same file, and an output that is an existing directory (or a directory output that is
      an existing file). Call it first, before reading anything.
    * :meth:`stage` writes one output to a temporary file beside its target (``.name.XXXX.tmp``);
      write errors (full disk, read-only directory, ...) become :class:`InputError` naming the path.
    * :meth:`commit` moves every staged file into place in one loop. First each existing target is
      renamed aside (``.name.XXXX.old``), then every temporary file is renamed onto its target,
      then the old versions are deleted. A run killed during :meth:`commit` therefore never leaves
      a new output next to a previous run's output: each target is either this run's version or
      absent (its previous version kept as the hidden ``.old`` file). Renames are atomic on POSIX
      file systems; the set as a whole is not (no file system offers that), this is as close as
      renames get. Without :meth:`commit` (an exception, a verifier rejection) the temporary files
      are removed and nothing changes: use the set as a context manager.

    For outputs known only later (a stream's per-snapshot files), :meth:`add` checks a path
    against the inputs and earlier outputs at that point; :meth:`stage` calls it.
    """

    def __init__(
        self,
        inputs: Iterable[str | os.PathLike | tuple[str, str | os.PathLike | None] | None] = (),
        outputs: Mapping[str, str | os.PathLike | None] | None = None,
        *,
        directories: Mapping[str, str | os.PathLike | None] | None = None,
        spark_releases: Iterable[str] = (),
        tables: Iterable[str] = (),
    ) -> None:
        """``inputs``: paths, or ``(label, path)`` pairs (``("--hierarchies", h)``) that the refusals name
        ("--out . is the --hierarchies directory ."; an unlabelled input is "the input").
        ``spark_releases``: labels of outputs that Spark writes as a directory of part files; such a
        target may be an existing directory when it holds an earlier Spark release
        (:func:`is_spark_release_dir`), which the new release replaces (``SQLSource.release``).
        ``tables``: labels of release tables (written as CSV, or Parquet by suffix), whose names must not be
        another format's (:func:`refuse_table_format`)."""
        self._spark_releases = set(spark_releases)
        self._tables = set(tables)
        self._inputs: list[tuple[str, Path, str, tuple[int, int] | None]] = []
        self._input_labels: dict[str, tuple[str | None, str]] = {}  # given path -> (label or None, "file" / "directory")
        for p in inputs:
            label = None
            if isinstance(p, tuple):
                label, p = p
            if p is None or str(p) in ("", "-") or isinstance(p, pd.DataFrame):
                continue
            real, ino = _identity(Path(p))
            self._inputs.append((str(p), Path(p), real, ino))
            self._input_labels.setdefault(str(p), (label, "directory" if os.path.isdir(real) else "file"))
        self._outputs: dict[str, tuple[str, str]] = {}  # real path -> (label, given path)
        self._staged: list[tuple[Path, Path]] = []  # (tmp, target)
        self._removals: list[Path] = []  # earlier outputs this set replaces (see remove)
        self._dirs: dict[str, str] = {}
        for label, p in (directories or {}).items():
            if p is not None:
                self.add_directory(p, label)
        for label, p in (outputs or {}).items():
            if p is not None:
                self.add(p, label)

    def _input_phrase(self, given: str, *, inside: bool = False) -> str:
        """How the refusals name input ``given``: "the input" ("the input directory" for a file
        ``inside`` it), or with its label "the --hierarchies directory" / "the --data file"."""
        label, what = self._input_labels[given]
        if label is None:
            return "the input directory" if inside else "the input"
        return f"the {label} {what}"

    def _check_against_inputs(self, path: Path, label: str, real: str, ino: tuple[int, int] | None) -> None:
        for given, ipath, ireal, iino in self._inputs:
            if real == ireal or (ino is not None and ino == iino):
                raise InputError(
                    f"{label} {path} is {self._input_phrase(given)} {given}: refusing to overwrite an input (nothing was read or written)"
                )
            if os.path.isdir(ireal) and ino is not None and real.startswith(ireal.rstrip(os.sep) + os.sep):
                raise InputError(
                    f"{label} {path} is a file of {self._input_phrase(given, inside=True)} {given}: refusing to overwrite an input"
                )

    def add(self, path: str | os.PathLike, label: str = "output", *, staging: bool = False) -> Path:
        """Register one output file (checked against the inputs and the other outputs)."""
        target = Path(path)
        refuse_special_output(path, label)  # (a device, pipe or socket would be replaced by the rename)
        if label in self._tables:
            refuse_table_format(path, label)
        real, ino = _identity(target)
        self._check_against_inputs(target, label, real, ino)
        if real in self._outputs:
            other, given = self._outputs[real]
            if staging and given == str(path) and not any(t == target for _tmp, t in self._staged):
                return target  # registered up front, staged now
            raise InputError(f"{label} must be a file of its own (outputs must be different files): {path} is also {other} {given}")
        if os.path.isdir(real):
            if label in self._spark_releases:
                if not is_spark_release_dir(real):
                    raise InputError(f"{label} {path} is a directory that does not hold an earlier Spark release (only "
                                     "part files, _SUCCESS and their .crc files): give a new name, or remove it")  # fmt: skip
            else:
                raise InputError(f"{label} {path} is a directory; give a file name")
        for d, dlabel in self._dirs.items():
            if real == d:
                raise InputError(f"{label} {path} is the {dlabel} directory")
        self._outputs[real] = (label, str(path))
        return target

    def add_directory(self, path: str | os.PathLike, label: str = "output directory") -> Path:
        """Register an output directory: not an input, not an input's directory, not a file."""
        target = Path(path)
        real, ino = _identity(target)
        if os.path.exists(real) and not os.path.isdir(real):
            raise InputError(f"{label} {path} exists and is not a directory")
        for given, _ipath, ireal, iino in self._inputs:
            if real == ireal or (ino is not None and ino == iino):
                raise InputError(f"{label} {path} is {self._input_phrase(given)} {given}: refusing to write into an input")
        if real in self._outputs:
            other, given = self._outputs[real]
            raise InputError(f"{label} {path} is also {other} {given}")
        self._dirs[real] = label
        return target

    def stage(self, path: str | os.PathLike, write: Callable[[Path], Any], label: str = "output") -> Path:
        """Write one output to a temporary file beside ``path`` (``write(tmp_path)``)."""
        target = self.add(path, label, staging=True)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            # the temporary name ends like the target (".tmp.parquet"): writers choosing the format by suffix work
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp" + "".join(target.suffixes[-2:]),
                                       dir=target.parent)  # fmt: skip
            os.close(fd)
        except OSError as exc:
            raise write_error(path, exc) from exc
        tmp_path = Path(tmp)
        self._staged.append((tmp_path, target))
        try:
            write(tmp_path)
            os.chmod(tmp_path, 0o666 & ~_umask())
        except OSError as exc:
            raise write_error(path, exc) from exc
        return target

    def table(self, df: pd.DataFrame, path: str | os.PathLike, label: str = "output", *, delimiter: str = ",",
              like: str | os.PathLike | None = None, unchanged: Iterable[str] = (),
              input_text: pd.DataFrame | None = None) -> Path:
        """Stage a table (CSV, or Parquet by suffix; ``like``, ``unchanged`` and ``input_text``: a Parquet
        release of a Parquet input writes the columns released unchanged with the input's types,
        :func:`typed_release`)."""
        if _is_parquet_name(path):
            table = typed_release(df, like, unchanged, input_text=input_text)  # (before staging: a refusal leaves no file)
            if table is None:
                return self.stage(path, lambda p: df.to_parquet(p, index=False), label)
            return self.stage(path, lambda p: _write_arrow(table, p), label)
        return self.stage(path, lambda p: write_csv(df, p, delimiter=delimiter), label)

    def text(self, text: str, path: str | os.PathLike, label: str = "output") -> Path:
        """Stage a file of ready text (UTF-8, written as is: no newline translation)."""
        return self.stage(path, lambda p: p.write_bytes(text.encode("utf-8")), label)

    def json(self, obj: Any, path: str | os.PathLike, label: str = "summary") -> Path:
        """Stage an indented JSON file (numpy scalars and arrays converted)."""
        text = json.dumps(obj, indent=2, default=_json_default, allow_nan=False)
        return self.stage(path, lambda p: p.write_text(text + "\n", encoding="utf-8"), label)

    def remove(self, path: str | os.PathLike, label: str = "earlier output") -> None:
        """Stage the removal of an earlier run's output that this set replaces (a stream release's
        snapshot file that the new release does not have): at :meth:`commit` it is moved aside with the
        targets' previous versions, and deleted only after every staged file is in place (put back if
        the commit fails). Never an input or one of this set's outputs."""
        target = Path(path)
        real, ino = _identity(target)
        self._check_against_inputs(target, label, real, ino)
        if real in self._outputs:
            raise InputError(f"{label} {path} is also {self._outputs[real][0]} {self._outputs[real][1]}")
        self._removals.append(target)

    def commit(self) -> list[Path]:
        """Move every staged output into place (see the class docstring; staged removals, :meth:`remove`,
        go with the previous versions); returns the targets."""
        moved_aside: list[tuple[Path, Path]] = []
        failed = None  # the target being moved when an error struck (named in the error)
        try:
            for failed in [*(t for _tmp, t in self._staged), *self._removals]:
                if os.path.lexists(failed):
                    fd, old = tempfile.mkstemp(prefix=f".{failed.name}.", suffix=".old", dir=failed.parent)
                    os.close(fd)
                    os.replace(failed, old)
                    moved_aside.append((Path(old), failed))
            for tmp, failed in self._staged:
                os.replace(tmp, failed)
        except OSError as exc:
            for old, target in moved_aside:  # put the previous versions back where still possible
                if not os.path.lexists(target):
                    with contextlib.suppress(OSError):
                        os.replace(old, target)
            self.discard()
            raise write_error(failed, exc) from exc
        for old, _target in moved_aside:
            with contextlib.suppress(OSError):
                os.unlink(old)
        done = [t for _tmp, t in self._staged]
        self._staged = []
        self._removals = []
        return done

    def discard(self) -> None:
        """Remove every staged temporary file (nothing is committed)."""
        for tmp, _target in self._staged:
            with contextlib.suppress(OSError):
                tmp.unlink()
        self._staged = []
        self._removals = []

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.discard()
