"""Quoted values in a hierarchy file (the ARX format, README "Full-domain k-anonymity").

A value holding the separator ``;``, a quote, a line break or outer spaces is quoted with ``"``
(a quote inside doubled), as :meth:`Hierarchy.to_csv` writes it. Before, the reader stripped the
spaces of a quoted value too (``" 7"`` was read as ``7``, so a data column holding `` 7`` beside
``7`` could not be generalized at all and ``to_csv`` then ``from_csv`` lost the spaces), and read
the ambiguous ``"a"b`` silently as ``ab``; found by the engine fuzz once its hierarchy writer quoted
the drawn values (tests/safety/test_fuzz_engines.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import HierarchyError
from tempanon.hierarchy import Hierarchy


def _read(tmp_path, text: str) -> Hierarchy:
    p = tmp_path / "age.csv"
    p.write_bytes(text.encode("utf-8"))
    return Hierarchy.from_csv(p)


def test_quoted_values_are_read_as_written(tmp_path):
    h = _read(tmp_path, '" 7";"0-9";*\n7 ; 0-9 ;*\n"a;b";other;*\n"q""";other;*\n"x\ny";other;*\n5\'11";other;*\n')
    assert h.table.tolist() == [
        [" 7", "0-9", "*"],  # quoted: the spaces are the value's
        ["7", "0-9", "*"],  # unquoted: the spaces around are layout
        ["a;b", "other", "*"],
        ['q"', "other", "*"],
        ["x\ny", "other", "*"],
        ["5'11\"", "other", "*"],  # a quote inside an unquoted value is literal
    ]
    assert h.lines == [1, 2, 3, 4, 5, 7]  # the physical line a row starts on


def test_without_quotes_the_cells_are_stripped_as_before(tmp_path):
    h = _read(tmp_path, " 30 ;  *\n\n31;*\r\n")
    assert h.table.tolist() == [["30", "*"], ["31", "*"]] and h.lines == [1, 3]


@pytest.mark.parametrize(
    ("text", "message"),
    [('30;*\n"a"b;*\n', r"line 2: text after the closing quote of a quoted value \('\"a\"b;\*'\)"),
     ('30;*\n31;*\n"a;*\n', r"line 3: a quoted value is never closed")],
)  # fmt: skip
def test_an_ambiguous_quote_is_refused_with_its_line(tmp_path, text, message):
    with pytest.raises(HierarchyError, match=message):
        _read(tmp_path, text)


TEXT = st.text(st.sampled_from(list(' ;"\r\na\t7é*')), max_size=6)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(values=st.lists(TEXT, min_size=1, max_size=5, unique=True))
def test_written_hierarchy_reads_back_the_same(tmp_path_factory, values):
    """Whatever the values (separator, quotes, line breaks, outer spaces), ``to_csv`` then
    ``from_csv`` gives the same table (a row of only blank cells is not written: one non-blank
    generalization per value)."""
    table = np.array([[v, f"g{i % 2}", "*"] for i, v in enumerate(values)], dtype=object)
    h = Hierarchy("x", table)
    p = h.to_csv(tmp_path_factory.mktemp("h") / "x.csv")
    assert Hierarchy.from_csv(p).table.tolist() == table.tolist()


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_a_value_with_spaces_or_the_separator_is_generalized(tmp_path, engine):
    """A data column holding `` 7`` beside ``7`` and ``a;b``: the quoted hierarchy rows are found
    (before, `` 7`` was read as ``7``: 'listed twice'), and both engines release the same."""
    n = 24
    pd.DataFrame({"age": [" 7", "7", "a;b", "30"] * (n // 4), "sex": ["F", "M"] * (n // 2)}).to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "age.csv").write_text('" 7";0-9;*\n7;0-9;*\n"a;b";other;*\n30;30-39;*\n')
    (tmp_path / "h" / "sex.csv").write_text("F;*\nM;*\n")
    r = CliRunner().invoke(app, ["kanon", str(tmp_path / "in.csv"), "--qi", "age,sex", "--hierarchies", str(tmp_path / "h"), "--k", "3",
                                 "--out", str(tmp_path / "o.csv"), "--engine", engine, "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    out = pd.read_csv(tmp_path / "o.csv", dtype=str, keep_default_na=False)
    assert sorted(set(out["age"])) == [" 7", "30", "7", "a;b"]


@pytest.mark.parametrize("quoted", [False, True])
def test_a_hierarchy_file_with_old_mac_line_ends_reads_as_with_newlines(tmp_path, quoted):
    """A hierarchy file whose lines end in a lone carriage return (old Mac editors) ended in a
    traceback when it held no quote (the csv module: 'new-line character seen in unquoted field');
    the quoted path already took a lone \\r as a line end. Found by hand (session 23: line ends of every
    input). Both paths now read it as the same file with \\n, line numbers included."""
    q = '"' if quoted else ""
    text = "".join(f"{q}{v}{q};{v[0]}0s;*\n" for v in ("20", "21", "35", "21"))
    (tmp_path / "lf.csv").write_text(text, newline="")
    (tmp_path / "cr.csv").write_text(text.replace("\n", "\r"), newline="")
    for f in ("lf.csv", "cr.csv"):
        with pytest.raises(HierarchyError, match=r"value '21' is listed twice \(.* line 2 and line 4\)"):
            Hierarchy.from_csv(tmp_path / f, "age")
    good = text.rsplit(f"{q}21{q}", 1)[0]
    (tmp_path / "lf.csv").write_text(good, newline="")
    (tmp_path / "cr.csv").write_text(good.replace("\n", "\r"), newline="")
    a, b = Hierarchy.from_csv(tmp_path / "lf.csv", "age"), Hierarchy.from_csv(tmp_path / "cr.csv", "age")
    assert a.table.tolist() == b.table.tolist() == [["20", "20s", "*"], ["21", "20s", "*"], ["35", "30s", "*"]]
