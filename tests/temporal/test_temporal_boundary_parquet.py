"""A Parquet boundary file (``--granularities file:terms.parquet``): its ``label``, ``start`` and ``end``
with a nested type (list, struct, map) are refused with exit 2 naming the file, the column and its type,
before any row is read (the numpy text of such a cell, ``[1 2]`` or ``{'a': 1}``, made an odd label or no
time); scalar columns work as a CSV's do, and a nested column that is none of the three is ignored."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempanon.errors import InputError
from tempanon.temporal.granularity import parse_granularity

LABELS = ["w", "r", "x"]
STARTS = ["2004-12-01", "2005-03-01", "2005-12-01"]
ENDS = ["2005-03-01", "2005-12-01", "2007-01-01"]


def _ts(values):
    return pa.array(pd.to_datetime(values).as_unit("us"), pa.timestamp("us"))


def _scalar() -> dict:
    return {"label": pa.array(LABELS), "start": _ts(STARTS), "end": _ts(ENDS)}


NESTED = {  # column -> (its nested array, the type as the message names it)
    "label": (pa.array([[x] for x in LABELS], pa.list_(pa.string())), "list<element: string>"),
    "start": (pa.array([{"t": s} for s in STARTS], pa.struct([("t", pa.string())])), "struct<t: string>"),
    "end": (pa.array([[("e", e)] for e in ENDS], pa.map_(pa.string(), pa.string())), "map<string, string>"),
}


def _write(path, cols: dict):
    pq.write_table(pa.table(cols), path)
    return path


def test_a_scalar_parquet_boundary_file_is_the_csv_one(tmp_path):
    csv = tmp_path / "terms.csv"
    csv.write_text("label,start,end\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(LABELS, STARTS, ENDS)))
    extra = pa.array([[1, 2], None, [3]], pa.list_(pa.int64()))  # a nested column that is none of the three
    parq = _write(tmp_path / "terms.parquet", {**_scalar(), "note": extra})
    t = np.array([pd.Timestamp(s).value // 10**9 for s in ("2005-01-15", "2005-07-01", "2006-06-05", "2007-02-01")])
    assert list(parse_granularity(f"file:{parq}").labels_of(t)) == list(parse_granularity(f"file:{csv}").labels_of(t)) \
        == ["w", "r", "x", None]  # fmt: skip


@pytest.mark.parametrize("column", list(NESTED))
def test_api_refuses_a_nested_boundary_column(tmp_path, column):
    from tempanon.temporal.api import anonymize_timestamped

    arr, kind = NESTED[column]
    path = _write(tmp_path / "terms.parquet", {**_scalar(), column: arr})
    want = f"boundary file {path}: column(s) with a nested Parquet type: {column!r} ({kind})"
    with pytest.raises(InputError) as exc:
        parse_granularity(f"file:{path}")
    assert want in str(exc.value) and "nothing was read" in str(exc.value), str(exc.value)
    df = pd.DataFrame({"P": list("abab"), "T": ["2005-01-03", "2005-02-10", "2005-04-01", "2005-11-30"]})
    with pytest.raises(InputError, match="nested Parquet type"):
        anonymize_timestamped(df, time="T", uid="P", k=2, granularities=[f"file:{path}", "year"])


def test_the_column_names_are_matched_as_the_file_reads_them(tmp_path):
    """``Label``/``START`` (any case, as the reader takes them): a nested one is named as the file spells it."""
    arr, kind = NESTED["label"]
    cols = _scalar()
    path = _write(tmp_path / "terms.parquet", {"Label": arr, "START": cols["start"], "end": cols["end"]})
    with pytest.raises(InputError, match=rf"'Label' \({kind}\)"):
        parse_granularity(f"file:{path}")


@pytest.mark.parametrize("column", list(NESTED))
def test_cli_refuses_a_nested_boundary_column(tmp_path, column):
    from typer.testing import CliRunner

    from tempanon.cli import app

    arr, kind = NESTED[column]
    terms = _write(tmp_path / "terms.parquet", {**_scalar(), column: arr})
    data = tmp_path / "in.csv"
    data.write_text("P,T,sex\na,2005-01-03,F\nb,2005-02-10,M\na,2005-04-01,F\nb,2005-11-30,M\n")
    out = tmp_path / "out"
    out.mkdir()
    r = CliRunner().invoke(app, ["timestamped", str(data), "--time", "T", "--uid", "P", "--k", "2", "--granularities",
                                 f"file:{terms},year", "--out", str(out / "o.csv"), "--summary", str(out / "s.json")])  # fmt: skip
    text = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    assert f"{column!r} ({kind})" in text and "boundary file" in text and "terms.parquet" in text, text
    assert list(out.iterdir()) == []
