"""Excel workbooks as input (issue 16): ``.xlsx``/``.xlsm`` read with openpyxl when it is installed
(the optional extra ``pip install 'tempanon[excel]'``), otherwise refused with a message naming
the format and the install command; older or other spreadsheet formats (``.xls``, ``.ods``,
``.numbers``) and workbooks hiding behind another suffix are refused with what to do instead.

The first sheet is read; its first row is the header. With ``as_text`` every cell becomes text
the way Excel's own CSV export writes it for integers (``53715``, not ``53715.0``), dates as
ISO ``2020-01-31`` (``2020-01-31 08:15:00`` with a time of day); empty cells are missing.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pandas as pd

from tempanon.errors import InputError

EXCEL_SUFFIXES = (".xlsx", ".xlsm")
"""Workbooks read with openpyxl."""
OTHER_SPREADSHEETS = {".xls": "Excel 97-2003 workbook", ".ods": "OpenDocument spreadsheet", ".numbers": "Apple Numbers spreadsheet",
                      ".xlsb": "Excel binary workbook"}
INSTALL = "pip install 'tempanon[excel]'"


def is_spreadsheet(path: Path) -> bool:
    """True for a file this module reads or refuses (by suffix, or a ZIP workbook under another name)."""
    suffix = path.suffix.lower()
    return suffix in EXCEL_SUFFIXES or suffix in OTHER_SPREADSHEETS or _zip_workbook(path)


def _zip_workbook(path: Path) -> bool:
    """An OOXML workbook (a ZIP archive holding ``xl/workbook.xml``) whatever its suffix."""
    try:
        with open(path, "rb") as fh:
            if fh.read(4) != b"PK\x03\x04":
                return False
        import zipfile

        with zipfile.ZipFile(path) as z:
            return any(n.startswith("xl/workbook") for n in z.namelist())
    except Exception:  # noqa: BLE001 - an unreadable or broken archive is not a workbook
        return False


def _has_formulas(path: Path) -> bool:
    """Does a worksheet of the workbook hold a formula (an ``<f>`` element of its XML)? A streamed scan
    of the sheets' XML, so a workbook without formulas is read once."""
    import re
    import zipfile

    pat = re.compile(rb"<(?:\w+:)?f[\s/>]")
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.startswith("xl/worksheets/") and name.endswith(".xml"):
                with z.open(name) as fh:
                    tail = b""
                    while chunk := fh.read(1 << 20):
                        if pat.search(tail + chunk):
                            return True
                        tail = chunk[-16:]
    return False


def _uncomputed_formula(path: Path, openpyxl) -> tuple[int, int, str] | None:
    """The first cell (sheet line, column index, formula) of the first sheet that holds a formula
    without a computed value. A program that writes workbooks without a spreadsheet engine (openpyxl,
    many exporters) saves formulas without values; read for their values (``data_only``) such cells
    are empty, and would be missing values that the sheet does not hold. A formula computed to an
    empty text (saved with type ``str``) is an empty cell, read as missing like any empty cell."""
    forms = openpyxl.load_workbook(path, read_only=True, data_only=False)
    vals = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        pairs = zip(forms.worksheets[0].iter_rows(values_only=True), vals.worksheets[0].iter_rows(), strict=False)
        for i, (frow, vrow) in enumerate(pairs, start=1):
            for j, f in enumerate(frow):
                if not ((isinstance(f, str) and f.startswith("=")) or type(f).__name__ in ("ArrayFormula", "DataTableFormula")):
                    continue
                cell = vrow[j] if j < len(vrow) else None
                if getattr(cell, "value", None) is None and getattr(cell, "data_type", "n") != "str":
                    return i, j, str(getattr(f, "text", f))
    finally:
        forms.close()
        vals.close()
    return None


def _column_letter(j: int) -> str:
    s = ""
    j += 1
    while j:
        j, r = divmod(j - 1, 26)
        s = chr(65 + r) + s
    return s


def _cell_text(v: object) -> str | None:
    if v is None or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    if isinstance(v, _dt.datetime):
        return v.strftime("%Y-%m-%d") if v.time() == _dt.time(0) else v.isoformat(sep=" ")
    if isinstance(v, _dt.date):
        return v.isoformat()
    text = str(v)
    return None if text == "" else text


def read_excel(path: str | Path, *, as_text: bool = False) -> pd.DataFrame:
    """The first sheet of an ``.xlsx``/``.xlsm`` workbook as a table (header = first row)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in OTHER_SPREADSHEETS:
        raise InputError(f"{path} is an {OTHER_SPREADSHEETS[suffix]} ({suffix}), which tempanon does not read: save it as .xlsx "
                         f"(then {INSTALL}) or as CSV")
    if suffix not in EXCEL_SUFFIXES:
        raise InputError(f"{path} is an Excel workbook (xlsx) although its name ends in {suffix or 'nothing'!r}: rename it to "
                         f"{path.stem}.xlsx (tempanon reads .xlsx after {INSTALL}) or save it as CSV")
    try:
        import openpyxl
    except ImportError:
        raise InputError(f"{path} is an Excel workbook (.xlsx); reading it needs the optional package openpyxl: {INSTALL} "
                         "(or save the sheet as CSV)") from None
    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many kinds for a damaged file
        raise InputError(f"cannot read the Excel workbook {path}: {exc}") from None
    try:
        ws = wb.worksheets[0]
        if len(wb.worksheets) > 1:
            import warnings

            from tempanon.errors import TempanonWarning

            others = ", ".join(repr(s.title) for s in wb.worksheets[1:])
            warnings.warn(TempanonWarning(f"{path} has {len(wb.worksheets)} sheets; tempanon reads the first, {ws.title!r}, and "
                                          f"not {others}: to use another, save it as a workbook of its own or as CSV"),
                          stacklevel=2)  # fmt: skip
        rows = list(ws.iter_rows(values_only=True))
        header = rows[0] if rows else None
        if header is None or all(h is None for h in header):
            raise InputError(f"the first sheet of {path} ({ws.title!r}) is empty: tempanon reads the first sheet, header in row 1")
        body = [r for r in rows[1:] if any(v is not None for v in r)]
    finally:
        wb.close()
    if _has_formulas(path):
        bad = _uncomputed_formula(path, openpyxl)
        if bad is not None:
            line, j, formula = bad
            raise InputError(f"{path}: sheet {ws.title!r}, cell {_column_letter(j)}{line} (line {line}): the formula {formula} has no "
                             "computed value (the workbook was saved by a program that does not calculate formulas), so it would "
                             "be read as a missing value; open and save the workbook in Excel or LibreOffice, or save the sheet as CSV")
    width = len(header)
    while width and header[width - 1] is None:
        width -= 1
    cols = []
    for j, h in enumerate(header[:width]):
        if h is None:
            raise InputError(f"{path}: sheet {ws.title!r}, line 1: column {j + 1} has no header")
        cols.append(str(_cell_text(h)).strip())
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        from tempanon.data.io import column_numbers

        named = ", ".join(f"{c!r} (columns {column_numbers([j + 1 for j, x in enumerate(cols) if x == c])})" for c in dup)
        raise InputError(f"{path}: sheet {ws.title!r}, line 1: duplicate column name(s) {named}; rename them")
    data = [list(r[:width]) + [None] * (width - len(r)) for r in body]
    if as_text:
        data = [[_cell_text(v) for v in r] for r in data]
        return pd.DataFrame(data, columns=cols, dtype=object)
    return pd.DataFrame(data, columns=cols)


__all__ = ["EXCEL_SUFFIXES", "INSTALL", "is_spreadsheet", "read_excel"]
