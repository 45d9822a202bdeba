"""Excel input (issue 16): .xlsx read with the optional openpyxl (``tempanon[excel]``), otherwise and
for other spreadsheet formats a clear refusal naming the format and what to do (exit 2)."""

from __future__ import annotations

import datetime as dt
import sys

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.data.io import read_table
from tempanon.errors import InputError

runner = CliRunner()


def workbook(path, rows, header=("zip", "age", "sex", "when", "note"), extra_sheet=False):
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "data"
    ws.append(list(header))
    for r in rows:
        ws.append(list(r))
    if extra_sheet:
        wb.create_sheet("other").append(["not", "read"])
    wb.save(path)
    return path


ROWS = [
    ("05371", 34, "F", dt.datetime(2020, 1, 31, 8, 15), "first"),
    ("05372", 41.0, "M", dt.datetime(2020, 2, 1), None),
    ("05371", 2.5, "F", dt.date(2021, 3, 4), "third"),
]


def test_xlsx_is_read_as_text_like_a_csv_export(tmp_path):
    p = workbook(tmp_path / "t.xlsx", ROWS, extra_sheet=True)
    from tempanon.errors import TempanonWarning

    with pytest.warns(TempanonWarning, match="has 2 sheets; tempanon reads the first, 'data', and not 'other'"):
        df = read_table(p, as_text=True)
    assert list(df.columns) == ["zip", "age", "sex", "when", "note"]
    assert df["zip"].tolist() == ["05371", "05372", "05371"]  # text cells keep leading zeros
    assert df["age"].tolist() == ["34", "41", "2.5"]  # integers as Excel's CSV export writes them
    assert df["when"].tolist() == ["2020-01-31 08:15:00", "2020-02-01", "2021-03-04"]
    assert pd.isna(df.loc[1, "note"]) and df.loc[2, "note"] == "third"  # empty cell = missing
    with pytest.warns(TempanonWarning, match="2 sheets"):
        typed = read_table(p)
    assert typed["age"].tolist() == [34, 41, 2.5]


def test_the_cli_says_which_sheet_it_reads(tmp_path):
    """A workbook with several sheets: the command line prints a plain 'warning:' line naming the sheet
    read and the others (Python's default display would print a file, a line number and the class)."""
    import subprocess

    rows = [(f"0537{i % 3}", 30, "F", dt.date(2020, 1, 1), "x") for i in range(6)]
    p = workbook(tmp_path / "t.xlsx", rows, extra_sheet=True)
    code = "import sys; from tempanon.cli import main; sys.argv[0] = 'tempanon'; main()"
    r = subprocess.run([sys.executable, "-c", code, "check", str(p), "--qi", "zip"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "warning: " + str(p) + " has 2 sheets; tempanon reads the first, 'data', and not 'other'" in " ".join(r.stderr.split())
    assert "TempanonWarning" not in r.stderr


def test_xlsx_through_the_cli(tmp_path):
    rows = [(f"0537{i % 3}", 30 + i % 2, "F" if i % 2 else "M", dt.date(2020, 1, 1 + i % 5), "x") for i in range(40)]
    p = workbook(tmp_path / "t.xlsx", rows)
    r = runner.invoke(app, ["check", str(p), "--qi", "zip,sex", "--json"])
    assert r.exit_code == 0, r.output
    import json

    assert json.loads(r.stdout)["k"] == 6  # classes of (zip, sex) = i mod 6 over 40 rows: the smallest has 6


def test_bad_workbooks_are_refused_with_the_line(tmp_path):
    p = workbook(tmp_path / "dup.xlsx", ROWS, header=("zip", "age", "zip", "when", "note"))
    with pytest.raises(InputError, match=r"sheet 'data', line 1: duplicate column name\(s\) 'zip' \(columns 1 and 3\); rename them"):
        read_table(p)
    p = workbook(tmp_path / "gap.xlsx", ROWS, header=("zip", None, "sex", "when", "note"))
    with pytest.raises(InputError, match="line 1: column 2 has no header"):
        read_table(p)
    p = workbook(tmp_path / "empty.xlsx", [], header=())
    with pytest.raises(InputError, match="is empty: tempanon reads the first sheet"):
        read_table(p)


def test_without_openpyxl_the_message_names_the_format_and_the_install(tmp_path, monkeypatch):
    p = workbook(tmp_path / "t.xlsx", ROWS)
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # import openpyxl now fails as if not installed
    r = runner.invoke(app, ["check", str(p), "--qi", "zip"])
    assert r.exit_code == 2
    msg = " ".join(r.output.split())
    assert "is an Excel workbook (.xlsx)" in msg and "pip install 'tempanon[excel]'" in msg and "Traceback" not in msg


@pytest.mark.parametrize("suffix, name", [(".xls", "Excel 97-2003 workbook"), (".ods", "OpenDocument spreadsheet")])
def test_other_spreadsheets_are_refused_by_name(tmp_path, suffix, name):
    p = tmp_path / f"t{suffix}"
    p.write_bytes(b"\xd0\xcf\x11\xe0 not really a workbook")
    r = runner.invoke(app, ["check", str(p), "--qi", "zip"])
    assert r.exit_code == 2
    msg = " ".join(r.output.split())
    assert name in msg and "save it as .xlsx" in msg and "or as CSV" in msg


def test_a_workbook_named_csv_is_recognized(tmp_path):
    p = workbook(tmp_path / "t.xlsx", ROWS)
    q = tmp_path / "t.csv"
    p.rename(q)
    with pytest.raises(InputError, match=r"is an Excel workbook \(xlsx\) although its name ends in '.csv': rename it to t.xlsx"):
        read_table(q)
    # an ordinary CSV is not mistaken for one
    (tmp_path / "ok.csv").write_text("a,b\n1,2\n")
    assert read_table(tmp_path / "ok.csv").shape == (1, 2)


def test_init_and_run_on_a_workbook(tmp_path):
    rows = [(f"0537{i % 4}", 20 + i % 50, "F" if i % 3 else "M", dt.date(2020, 1 + i % 12, 1 + i % 27), f"note {i}") for i in range(200)]
    p = workbook(tmp_path / "v.xlsx", rows, header=("zip", "age", "sex", "visit_date", "note"))
    r = runner.invoke(app, ["init", str(p), "-q"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["run", str(tmp_path / "v.job.toml"), "-q"])
    assert r.exit_code == 0, r.output
    out = pd.read_csv(tmp_path / "v-anonymized.csv", dtype=str)
    assert "note" not in out.columns and {"zip", "age", "sex"} <= set(out.columns)


def _set_cell_xml(path, old: bytes, new: bytes, out):
    """Rewrite one cell of the first sheet's XML (what Excel saves that openpyxl cannot write)."""
    import zipfile

    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "xl/worksheets/sheet1.xml":
                assert old in data, data[-600:]
                data = data.replace(old, new)
            dst.writestr(name, data)
    return out


def test_a_formula_without_a_computed_value_is_refused_not_read_as_missing(tmp_path):
    # openpyxl (like many exporters) saves formulas without their values: read for values, the cell is
    # empty; before, the age of the second row silently became a missing value
    rows = [("05371", 34, "F", dt.date(2020, 1, 1), "a"), ("05372", "=B2+1", "M", dt.date(2020, 1, 2), "b")]
    p = workbook(tmp_path / "f.xlsx", rows)
    with pytest.raises(InputError, match=r"sheet 'data', cell B3 \(line 3\): the formula =B2\+1 has no computed value"):
        read_table(p, as_text=True)
    r = runner.invoke(app, ["check", str(p), "--qi", "zip,age"])
    assert r.exit_code == 2 and "cell B3" in r.output and "Traceback" not in r.output
    # the same cell as Excel saves it (with its value), and a formula computed to an empty text (an
    # empty cell: missing, as any empty cell is)
    done = _set_cell_xml(p, b'<c r="B3"><f>B2+1</f><v /></c>', b'<c r="B3"><f>B2+1</f><v>35</v></c>', tmp_path / "done.xlsx")
    assert read_table(done, as_text=True)["age"].tolist() == ["34", "35"]
    blank = _set_cell_xml(p, b'<c r="B3"><f>B2+1</f><v /></c>', b'<c r="B3" t="str"><f>IF(B2,"","x")</f><v></v></c>',
                          tmp_path / "blank.xlsx")
    assert read_table(blank, as_text=True)["age"].isna().tolist() == [False, True]


def test_formulas_are_looked_for_only_in_workbooks_that_have_them(tmp_path):
    from tempanon.data.excel import _has_formulas

    assert not _has_formulas(workbook(tmp_path / "plain.xlsx", ROWS))
    assert _has_formulas(workbook(tmp_path / "f.xlsx", [("05371", "=1+1", "F", None, None)]))
