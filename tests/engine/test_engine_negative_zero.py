"""``-0.0`` and ``0.0`` on every engine as on numpy, where values are compared as values (respondent
ids, sensitive values for l-diversity, identifier screening's counts).

A DataFrame's float column: numpy factorizes the floats, which compare equal, so ``-0.0`` and ``0.0``
are one respondent, one sensitive value, one distinct value. Before, DuckDB held such a column as
``DOUBLE`` and took a respondent or sensitive value by its Arrow encoding (two values; its verifier's
``count(DISTINCT)`` merged them: a VerificationError where numpy said the data cannot be anonymized), and
Spark held it as pandas' texts ``-0.0`` and ``0.0`` (two values: a release 3-diverse on Spark where numpy
finds 3-diversity impossible; the engine was more permissive than numpy). Identifier screening of a
kept float column counted its texts on DuckDB and Spark (two values where numpy's ``nunique`` counts one).

A file's cells are text on numpy (a CSV cell, and a Parquet double: ``parquet_as_text`` keeps ``-0.0``'s
own text), so there ``-0.0`` and ``0.0`` are two values on every engine. Before, DuckDB and Spark
searched a Parquet double respondent id as two values and verified it as one (SQL grouping of doubles
merges them): a VerificationError where numpy released.

The independent verifier (:mod:`tempanon.verify`) counts a float sensitive column's ``-0.0`` and
``0.0`` as one value, as a reader of the release reads the numbers (it compared the written texts:
a class the search did not make l-diverse passed). Found by the previous helper's open points
(session 25, engine parity of DataFrame float columns)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tempanon.errors import InputError, NoSolutionError
from tempanon.hierarchy import Hierarchy
from tempanon.kanon import kanonymize

from .test_engine_bool_text import _rows

SEX = {"sex": Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]])}


def _outcome(df, engine, tmp_path, **kw):
    """What ``kanonymize`` of ``df`` over ``sex`` did on ``engine``: the released rows (a sorted
    multiset) and node, or the error's class and its text from the first ':' on."""
    out = tmp_path / f"rel-{engine}.csv"
    try:
        res = kanonymize(df, ["sex"], SEX, kw.pop("k", 2), engine=engine, out=str(out), **{"screen": False, **kw})
    except (NoSolutionError, InputError) as exc:
        return type(exc).__name__, str(exc).split(":", 1)[0]
    return res.selected_node, _rows(out)


def _frame(n: int = 24) -> pd.DataFrame:
    return pd.DataFrame({
        "sex": ["M", "F"] * (n // 2),
        "uid": np.tile([0.0, -0.0, 1.0], n // 3),
        "dx": np.tile([0.0, -0.0, 0.0, -0.0, 2.0, 2.0], n // 6),
        "other": np.tile([5.0, 6.0, 7.0, 8.0], n // 4),
    })  # fmt: skip


def test_float_respondent_ids_count_negative_zero_as_zero(tmp_path, engine):
    """uid 0.0, -0.0, 1.0: two respondents on numpy; 3-anonymity is impossible on every engine
    (DuckDB searched three respondents and failed its verification instead; Spark counted three)."""
    df = _frame()
    want = _outcome(df, "numpy", tmp_path, k=3, uid="uid", keep=["dx"])
    assert want == ("NoSolutionError", "k=3 is impossible for this data")
    assert _outcome(df, engine, tmp_path, k=3, uid="uid", keep=["dx"]) == want
    # possible: the same release
    assert _outcome(df, engine, tmp_path, k=2, uid="uid", keep=["dx"]) == _outcome(df, "numpy", tmp_path, k=2, uid="uid", keep=["dx"])


def test_float_sensitive_values_count_negative_zero_as_zero(tmp_path, engine):
    """dx 0.0 / -0.0 / 2.0: two sensitive values; 3-diversity is impossible on every engine (Spark
    released a table it called 3-diverse; DuckDB failed its verification)."""
    df = _frame()
    with pytest.raises(NoSolutionError, match="3-diversity is impossible"):
        kanonymize(df, ["sex"], SEX, 2, sensitive="dx", l=3, engine="numpy")
    with pytest.raises(NoSolutionError, match="3-diversity is impossible"):
        kanonymize(df, ["sex"], SEX, 2, sensitive="dx", l=3, engine=engine)
    assert _outcome(df, engine, tmp_path, sensitive="dx", l=2) == _outcome(df, "numpy", tmp_path, sensitive="dx", l=2)


def test_release_is_l_diverse_as_its_reader_reads_the_numbers(tmp_path, backend):
    """Whatever an engine releases as 2-diverse is 2-diverse read back as numbers (pandas' reader:
    -0.0 == 0.0). dx: per sex, a class of 0.0 and -0.0 only unless generalized with the other sex."""
    df = pd.DataFrame({"sex": ["M"] * 6 + ["F"] * 6, "dx": [0.0, -0.0] * 3 + [1.0, 2.0] * 3})
    out = tmp_path / f"rel-{backend}.csv"
    res = kanonymize(df, ["sex"], SEX, 2, sensitive="dx", l=2, engine=backend, out=str(out), screen=False)
    files = sorted(out.glob("part-*.csv")) if out.is_dir() else [out]
    back = pd.concat([pd.read_csv(f) for f in files])
    top = back.groupby(["sex", "dx"]).size().groupby(level=0).max()
    assert (top * 2 <= back.groupby("sex").size()).all(), back
    assert res.selected_node == (1,)


def test_screening_counts_a_kept_floats_negative_zero_as_zero(tmp_path, engine):
    """A kept float column of 20 rows with 17 distinct values when -0.0 is 0.0 (18 by text): below
    the near-unique bound (18) on numpy; DuckDB and Spark counted 18 and refused the release."""
    score = [float(x) for x in range(1, 17)] + [0.0, -0.0, 1.0, 2.0]
    df = pd.DataFrame({"sex": ["M", "F"] * 10, "score": score})
    want = _outcome(df, "numpy", tmp_path, keep=["score"], screen=True)
    assert isinstance(want[1], list)  # released, not refused
    assert _outcome(df, engine, tmp_path, keep=["score"], screen=True) == want


def test_screening_counts_of_a_float_column_on_the_engine(backend):
    """The engine's screening counts (distinct values, per-respondent uniqueness, the id-like column
    warning's distinct count) of float columns holding -0.0 and 0.0: numpy's pandas counts."""
    from tempanon.lattice.source import open_source

    df = _frame()
    src = open_source(df, backend)
    try:
        distinct = [v for v in src.distinct_values("dx").tolist() if v not in ("", None)]
        assert len(distinct) == df["dx"].nunique() == 2
        if backend != "numpy":
            assert src.missing_and_distinct(["dx", "uid"])[1] == {"dx": (0, 2), "uid": (0, 2)}
            # pairs (uid, dx): (0,0) (0,2) (1,0) (1,2): two respondents, none with a value of its own, 2 values
            assert src.respondent_uniqueness("dx", "uid") == (2, 0, 2)
            assert src.respondent_uniqueness("other", "uid") == (2, 0, 4)
    finally:
        src.close()


def test_file_cells_negative_zero_is_its_own_text(tmp_path, backend):
    """A file's '-0.0' and '0.0' (CSV text, Parquet doubles) are two values on numpy (its cells are
    text): two respondents, two sensitive values, on every engine, and the same release. DuckDB and
    Spark searched a Parquet double uid as two respondents and verified it as one (VerificationError)."""
    n = 12
    df = pd.DataFrame({"sex": ["M", "F"] * (n // 2), "uid": [0.0, 0.0, -0.0, -0.0] * (n // 4),
                       "dx": [0.0, 0.0, -0.0, -0.0] * (n // 4)})  # fmt: skip
    for fmt in ("csv", "parquet"):
        path = tmp_path / f"in.{fmt}"
        if fmt == "csv":
            df.to_csv(path, index=False)
            assert "-0.0" in path.read_text()
        else:
            df.to_parquet(path, index=False)
        for role in ({"uid": "uid", "keep": ["dx"]}, {"sensitive": "dx", "l": 2}):
            out = {}
            for e in ("numpy", backend):
                o = tmp_path / f"rel-{fmt}-{e}-{len(role)}.csv"
                res = kanonymize(str(path), ["sex"], SEX, 2, engine=e, out=str(o), screen=False, **role)
                out[e] = (res.selected_node, _rows(o))
            assert out[backend] == out["numpy"], (fmt, role)
            assert out["numpy"][0] == (0,), (fmt, role)  # each sex: '0.0' and '-0.0', two values


def test_verifier_counts_negative_zero_as_zero():
    """tempanon.verify: a float sensitive column's -0.0 and 0.0 are one value (the numbers a reader
    reads); a file's texts '-0.0' and '0.0' stay two (the values the search counted)."""
    from tempanon import verify
    from tempanon.errors import VerificationError

    df = pd.DataFrame({"q": ["a"] * 4, "s": [0.0, -0.0, 0.0, -0.0]})
    with pytest.raises(VerificationError, match="not 2-diverse"):
        verify.check_l_diverse_classes(df, ["q"], "s", 2)
    with pytest.raises(VerificationError, match="distinct 2-diversity"):
        verify.check_l_diversity(df.astype({"s": object}), ["q"], "s", 2, "distinct")
    text = df.assign(s=["0.0", "-0.0", "0.0", "-0.0"])
    assert verify.check_l_diverse_classes(text, ["q"], "s", 2)["classes"] == 1


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
def test_one_zero_on_an_object_column(missing):
    """verify._one_zero on an object column (its fast path, no Python code per cell): Python floats and
    np.float64 with -0.0 as 0.0, missing cells missing (each as it was); a column with a cell that is not
    a float (a text '-0.0', an integer) as it is; a numpy float32 cell as it is (cell by cell, as before)."""
    from tempanon.verify import _as_text, _one_zero

    def texts(cells):
        col = pd.Series(cells, dtype=object, index=[7, 3, 5, 1, 9, 2][: len(cells)], name="s")
        out = _one_zero(col)
        assert out.index.equals(col.index) and out.name == "s"
        return list(_as_text(out))

    na = "\x00<NA>"
    assert texts([-0.0, 0.0, missing, 1.5, np.float64(-0.0), -2.0]) == ["0.0", "0.0", na, "1.5", "0.0", "-2.0"]
    assert texts([-0.0, missing]) == ["0.0", na]
    col = pd.Series([-0.0, 0.0, missing], dtype=object)
    _one_zero(col)
    assert str(col[0]) == "-0.0"  # (the column given is not changed)
    if missing is pd.NA:
        out = _one_zero(pd.Series([-0.0, missing, 2.0], dtype=object))
        assert out.dtype == object and out[1] is pd.NA and str(out[0]) == "0.0"
    else:
        assert _one_zero(pd.Series([-0.0, missing, 2.0], dtype=object)).dtype == np.float64
    assert texts(["-0.0", -0.0, missing, 0.0]) == ["-0.0", "-0.0", na, "0.0"]  # mixed: as it is
    assert texts([1, -0.0, missing]) == ["1", "-0.0", na]
    assert texts([np.float32(-0.0), -0.0, missing]) == ["-0.0", "0.0", na]


def test_respondents_and_sensitive_values_in_engine_kept_sets(tmp_path, engine, monkeypatch):
    """Respondents with the frequency sets kept in the engine (GROUPING SETS jobs and engine rollups,
    fetch limit 2 rows; l-diversity needs the bottom set on the driver): uid grouped as numpy tells
    its values apart."""
    from tempanon.lattice.source_duckdb import SQLSource

    monkeypatch.setattr(SQLSource, "max_driver_rows", 1)
    monkeypatch.setattr(SQLSource, "max_fetch_rows", 2)
    n = 48
    df = pd.DataFrame({"sex": ["M", "F"] * (n // 2), "age": np.repeat(["30", "40", "50", "60"], n // 4),
                       "uid": np.tile([0.0, -0.0, 1.0, 2.0, -0.0, 0.0], n // 6),
                       "dx": np.tile([0.0, -0.0, 0.0, 5.0], n // 4)})  # fmt: skip
    h = {**SEX, "age": Hierarchy.from_rows("age", [[a, "30-40" if a in ("30", "40") else "50-60", "*"] for a in ("30", "40", "50", "60")])}
    runs = {}
    for e in ("numpy", engine):
        got = []
        for kw in ({"k": 4, "uid": "uid"}, {"k": 3, "uid": "uid"}):
            kw = dict(kw)
            o = tmp_path / f"rel-{e}-{len(got)}.csv"
            try:
                res = kanonymize(df, ["sex", "age"], h, kw.pop("k"), engine=e, out=str(o), keep=["dx"], screen=False, **kw)
                got.append((res.selected_node, _rows(o)))
            except NoSolutionError as exc:
                got.append(str(exc).split(":", 1)[0])
        runs[e] = got
    assert runs[engine] == runs["numpy"]
    assert runs["numpy"][0] == "k=4 is impossible for this data"  # respondents 0, 1, 2: three
    assert runs["numpy"][1][0] == (1, 0)  # (classes of age: respondents 0, 1, 2 each; of sex and age: two)


def test_check_screens_a_float_column_counting_negative_zero_as_zero(engine):
    """``check``'s identifier screening on an engine: a float column of 20 rows with 17 distinct values
    when -0.0 is 0.0 (18 by text) is not near-unique, as on numpy; DuckDB and Spark counted 18 by text
    and reported "near-unique per row (18 distinct values in 20 rows)". Likewise per respondent, with a
    float respondent id holding -0.0 and 0.0. Found by the negzero helper (session 25)."""
    from tempanon.steward.check import check_table

    score = [float(x) for x in range(1, 17)] + [0.0, -0.0, 1.0, 2.0]
    df = pd.DataFrame({"sex": ["M", "F"] * 10, "score": score})
    want = check_table(df, ["sex"], engine="numpy").identifier_findings
    got = check_table(df, ["sex"], engine=engine).identifier_findings
    assert got == want
    assert not any("score" in str(f) for f in want)
    # per respondent: 20 respondents of two rows each (respondent 0 written 0.0 and -0.0), each with a value
    # of its own: 20 of 20 on numpy (the engines by text: 19 of 21)
    uid = [float(x) for x in range(20) for _ in range(2)]
    uid[1] = -0.0
    df2 = pd.DataFrame({"sex": ["M", "F"] * 20, "uid": uid, "v": [f"v{int(abs(u))}" for u in uid]})
    want2 = check_table(df2, ["sex"], uid="uid", engine="numpy").identifier_findings
    assert "20 of 20 respondents" in str(want2), want2
    assert check_table(df2, ["sex"], uid="uid", engine=engine).identifier_findings == want2


@pytest.mark.parametrize("joint", [False, True])
def test_timestamped_file_respondents_negative_zero_is_its_own_text(tmp_path, backend, joint):
    """The timestamped command on a Parquet file whose respondent column is a double holding 0.0 and
    -0.0: numpy reads the file's cells as text, so they are two respondents; the engines' file route
    counted one (SQL's grouping of doubles merges them: 3 respondents where numpy had 4, in the search,
    the verification and the summary). Time only and with a hierarchy (the joint search). Found by the
    lead (session 25, after the negzero helper's report)."""
    from typer.testing import CliRunner

    from tempanon.cli import app

    n = 48
    df = pd.DataFrame({"t": pd.date_range("2024-01-01", periods=n, freq="7h").astype(str),
                       "uid": np.tile([0.0, -0.0, 1.0, -1.0], n // 4), "q": np.tile(["a", "b"], n // 2)})  # fmt: skip
    src = tmp_path / "in.parquet"
    df.to_parquet(src, index=False)
    extra = []
    if joint:
        (tmp_path / "h").mkdir()
        (tmp_path / "h" / "q.csv").write_text("a;*\nb;*\n")
        extra = ["--hierarchies", str(tmp_path / "h")]
    got = {}
    for e in ("numpy", backend):
        (tmp_path / e).mkdir(exist_ok=True)
        out, summ = tmp_path / e / "o.csv", tmp_path / e / "s.json"
        r = CliRunner().invoke(app, ["timestamped", str(src), "--time", "t", "--uid", "uid", "--qi", "q", "--k", "2",
                                     "--out", str(out), "--summary", str(summ), "--engine", e, "-q", *extra])  # fmt: skip
        assert r.exit_code == 0, (e, r.output)
        import json

        s = json.loads(summ.read_text())
        got[e] = (s.get("granularity"), s.get("respondents"), s.get("suppressed"), _rows(out))
    assert got["numpy"][1] == 4
    assert got[backend] == got["numpy"]
