"""``data.io.csv_texts_by``: one formatting pass over a table gives, for every key, the same text as
``csv_text`` (``to_csv``) of that key's rows (the stream command writes its snapshot files with it);
``csv_text`` / ``write_csv``: a cell with a carriage return is quoted, so every CSV tempanon writes reads
back as the table that was verified."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tempanon.data.io import csv_text, csv_texts_by, read_table, write_table

CELLS = st.one_of(
    st.text(alphabet=st.sampled_from(list('ab ,;"\'\n\r\tĀ€\\\x1e')), max_size=6),  # \x1e: csv_texts_by's row mark
    st.none(),
    st.just(""),
)


def _reference(df, by, columns, sep=","):
    keys = pd.unique(df[by])
    return {k: csv_text(df.loc[(df[by] == k) if not pd.isna(k) else df[by].isna(), columns], delimiter=sep) for k in keys}


@st.composite
def frames(draw):
    n = draw(st.integers(0, 25))
    keys = draw(st.lists(st.sampled_from(["2016-01-01", "2016-01-02", "x,y", 'q"', "d"]), min_size=n, max_size=n))
    data = {
        "snapshot": keys,
        "qi": draw(st.lists(CELLS, min_size=n, max_size=n)),
        "group": draw(st.lists(st.integers(-3, 10**12), min_size=n, max_size=n)),
    }
    df = pd.DataFrame(data)
    kind = draw(st.sampled_from(["float", "bool", "object-mixed", "none"]))
    if kind == "float":
        df["f"] = draw(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(1e-7), st.just(0.1)), min_size=n, max_size=n))
    elif kind == "bool":
        df["b"] = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    elif kind == "object-mixed":
        df["m"] = pd.Series(draw(st.lists(st.one_of(st.integers(-5, 5), st.floats(-2, 2), CELLS), min_size=n, max_size=n)), dtype=object)
    return df


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(df=frames(), sep=st.sampled_from([",", ";", "\t"]))
@example(df=pd.DataFrame({"snapshot": ["a", "b", "a"], "qi": ["x\ny", "", '"'], "group": [1, 2, 3]}), sep=",")
@example(df=pd.DataFrame({"snapshot": ["a"], "qi": [""], "group": [1]})[["snapshot", "qi"]], sep=",")
def test_same_text_as_to_csv_per_key(df, sep):
    columns = [c for c in df.columns if c != "snapshot"]
    got = csv_texts_by(df, "snapshot", columns, delimiter=sep)
    ref = _reference(df, "snapshot", columns, sep)
    assert list(got) == list(ref)  # keys in order of first appearance
    for k in ref:
        assert got[k] == ref[k], (k, got[k], ref[k])


def test_datetime_columns_are_formatted_per_part():
    # a column of midnights is written as dates by to_csv: only when every value of the part is one
    df = pd.DataFrame({"snapshot": ["a", "a", "b"], "t": pd.to_datetime(["2020-01-01 00:00", "2020-01-02 00:00", "2020-01-03 10:00"])})
    got = csv_texts_by(df, "snapshot", ["t"])
    assert got == {"a": "t\n2020-01-01\n2020-01-02\n", "b": "t\n2020-01-03 10:00:00\n"}
    assert got["a"] == df.iloc[:2][["t"]].to_csv(index=False)


def test_rows_of_a_key_keep_their_order_when_keys_interleave():
    df = pd.DataFrame({"snapshot": ["a", "b", "a", "b", "a"], "v": np.arange(5)})
    assert csv_texts_by(df, "snapshot", ["v"]) == {"a": "v\n0\n2\n4\n", "b": "v\n1\n3\n"}


def test_csv_text_is_to_csv_without_a_carriage_return():
    df = pd.DataFrame({"a": ["x", None, 'q"', "y\nz"], "b": [1, 2, 3, 4]})
    assert csv_text(df) == df.to_csv(index=False)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(df=frames(), suffix=st.sampled_from(["csv", "tsv"]))
@example(df=pd.DataFrame({"snapshot": ["a", "b"], "qi": ["F\rX", None], "group": [1, 2]}), suffix="csv")
def test_written_csv_reads_back_as_the_table(tmp_path_factory, df, suffix):
    # pandas alone writes 'F\rX' unquoted: read back, the row splits in two ('F' and 'X')
    path = tmp_path_factory.mktemp("rt") / f"t.{suffix}"
    sep = "\t" if suffix == "tsv" else ","
    write_table(df, path, delimiter=sep)
    back = read_table(path, as_text=True, delimiter=sep)
    assert list(back.columns) == list(df.columns)
    assert len(back) == len(df)
    for c in ["snapshot", "qi"]:
        want = [None if (pd.isna(v) or v == "") else v for v in df[c]]  # an empty cell is read as missing
        got = [None if pd.isna(v) else v for v in back[c]]
        assert got == want, c


def test_a_carriage_return_in_a_column_name_is_quoted_too():
    df = pd.DataFrame({"snapshot": ["a", "b", "a"], "x\ry": ["1", "2", "3"]})
    got = csv_texts_by(df, "snapshot", ["x\ry"])
    assert got == {"a": csv_text(df.iloc[[0, 2]][["x\ry"]]), "b": csv_text(df.iloc[[1]][["x\ry"]])}
    assert got["b"] == '"x\ry"\n"2"\n'


def test_duplicate_column_names_are_named_with_their_columns(tmp_path):
    """A header (or a DataFrame) naming columns twice is refused with each name's column numbers, so a
    wide file can be mended without counting: 'a' at columns 1, 3 and 6, 'b' at 2 and 5."""
    import re

    import pytest

    from tempanon.errors import InputError
    from tempanon.kanon import kanonymize

    p = tmp_path / "dup.csv"
    p.write_text("a,b,a,c,b,a\n1,2,3,4,5,6\n")
    said = "duplicate column name(s) 'a' (columns 1, 3 and 6), 'b' (columns 2 and 5); every column needs a name of its own"
    with pytest.raises(InputError) as err:
        read_table(p)
    assert str(err.value) == f"{p}: {said}"
    df = pd.DataFrame([[1, 2, 3, 4, 5, 6]], columns=["a", "b", "a", "c", "b", "a"])
    with pytest.raises(InputError, match=re.escape(said)):
        kanonymize(df, ["c"], {}, 2)
