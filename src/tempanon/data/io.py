"""Reading and writing tables: CSV (delimiter detected), Parquet, SQL through DuckDB.

Every write is atomic: the data goes to a temporary file in the target's directory, which is then
renamed over the target (:func:`os.replace`), so a reader never sees a half-written file and a
failed run leaves no file behind.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from tempanon.errors import InputError

_DELIMITERS = ";,\t|"


def detect_delimiter(sample: str) -> str:
    """Guess the delimiter of a CSV sample among ``; , TAB |``.

    Uses :class:`csv.Sniffer`; when it cannot decide, the candidate occurring most consistently in
    the first lines wins (``,`` when nothing else occurs).
    """
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        lines = [ln for ln in sample.splitlines()[:20] if ln.strip()]
        best, best_score = ",", 0
        for d in _DELIMITERS:
            counts = [ln.count(d) for ln in lines]
            if counts and min(counts) > 0 and min(counts) > best_score:
                best, best_score = d, min(counts)
        return best


def read_table(
    source: str | os.PathLike | pd.DataFrame,
    *,
    delimiter: str | None = None,
    as_text: bool = False,
    sql: str | None = None,
    postgres: str | None = None,
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
    """
    if isinstance(source, pd.DataFrame):
        return source.copy()
    if postgres is not None:
        if sql is None:
            raise InputError("a PostgreSQL source needs a SQL query")
        return _read_sql(None, sql, postgres=postgres)
    if sql is not None:
        return _read_sql(source, sql)
    path = Path(source)
    if not path.exists():
        raise InputError(f"input file not found: {path}")
    if path.is_dir():
        raise InputError(f"input is a directory, not a table file: {path}")
    suffixes = "".join(path.suffixes).lower()
    from tempanon.data.excel import is_spreadsheet, read_excel  # .xlsx with tempanon[excel]; others refused clearly

    if is_spreadsheet(path):
        return read_excel(path, as_text=as_text)
    try:
        if suffixes.endswith(".parquet") or suffixes.endswith(".pq"):
            df = pd.read_parquet(path)
            if as_text:
                df = df.astype(object).where(df.notna(), None)
                df = df.map(lambda v: None if v is None else str(v))
            return df
        opener = _open_text(path)
        with opener() as fh:
            sample = fh.read(65536)
        if not sample.strip():
            raise InputError(f"input file is empty: {path}")
        sep = delimiter or detect_delimiter(sample)
        kwargs: dict[str, Any] = {"sep": sep}
        if as_text:
            kwargs.update(dtype=str, keep_default_na=False, na_values=[""])
        df = pd.read_csv(path, **kwargs)
    except InputError:
        raise
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, OSError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    if df.shape[1] == 0:
        raise InputError(f"input file has no columns: {path}")
    df.columns = [str(c).strip() for c in df.columns]
    return df


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
            con.execute(f"ATTACH '{path}' AS src (READ_ONLY)")
        return con.execute(sql).df()
    except duckdb.Error as exc:
        raise InputError(f"SQL query failed: {exc}") from exc
    finally:
        con.close()


def _read_sqlite(path: Path, sql: str) -> pd.DataFrame:
    """SQLite files are read with the standard library (read-only), no DuckDB extension download;
    the database is attached as ``src`` like DuckDB files, so ``FROM src.table`` works too."""
    import sqlite3

    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        con.execute(f"ATTACH DATABASE 'file:{path}?mode=ro' AS src")
        return pd.read_sql_query(sql, con)
    except (sqlite3.Error, pd.errors.DatabaseError) as exc:
        raise InputError(f"SQL query failed: {exc}") from exc
    finally:
        con.close()


def atomic_write(path: str | os.PathLike, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp_path)`` and rename the temporary file over ``path``.

    The temporary file lives in the target's directory (created if needed) so the rename is atomic
    on POSIX file systems. On any exception the temporary file is removed and ``path`` untouched.
    """
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


def write_table(df: pd.DataFrame, path: str | os.PathLike, *, delimiter: str = ",") -> Path:
    """Write ``df`` atomically as CSV (default) or Parquet (``.parquet`` suffix)."""
    target = Path(path)
    if target.suffix.lower() in {".parquet", ".pq"}:
        return atomic_write(target, lambda p: df.to_parquet(p, index=False))
    return atomic_write(target, lambda p: df.to_csv(p, index=False, sep=delimiter))


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
