"""Typed Parquet columns that pandas reads differently from SQL have the numpy path's values on every
engine: a float NaN is missing (pandas reads NaN as missing; DuckDB and Spark keep it as a value,
text 'nan' / 'NaN'), and an integer column holding a missing value is read as floats (pandas: 2 is
2.0). Before, kanon on DuckDB refused a hierarchy that numpy accepted ("column 'age': 1 value(s)
missing from the hierarchy: 'nan'", "column 'n': ... '1', '2'"), and check counted a NaN as its
own class."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tempanon.cli import app

from .conftest import BACKENDS
from .test_engine_bool_text import _rows

runner = CliRunner()


@pytest.fixture
def table(tmp_path):
    n = 60
    rng = np.random.default_rng(7)
    age = [float(x) for x in rng.choice([20.0, 30.0, 40.0], n)]
    for i in range(0, n, 7):
        age[i] = float("nan")  # a true NaN in the Parquet column (pyarrow keeps it apart from null)
    age_null = np.array([i % 11 == 0 for i in range(n)])
    visits = pa.array([int(x) for x in rng.choice([1, 2], n)], mask=np.array([i % 9 == 0 for i in range(n)]), type=pa.int64())
    t = pa.table({
        "age": pa.array(age, mask=age_null),
        "visits": visits,
        "sex": pa.array(list(rng.choice(["M", "F"], n))),
        "dx": pa.array(list(rng.choice(["a", "b"], n))),
    })
    p = tmp_path / "t.parquet"
    pq.write_table(t, p)
    h = tmp_path / "h"
    h.mkdir()
    (h / "age.csv").write_text("20.0;*\n30.0;*\n40.0;*\n;*\n")  # numpy's text of the values, missing = empty
    (h / "visits.csv").write_text("1.0;*\n2.0;*\n;*\n")
    (h / "sex.csv").write_text("M;*\nF;*\n")
    return p, h


@pytest.mark.parametrize("engine", BACKENDS)
def test_nan_and_integers_with_missing_values_as_numpy_reads_them(table, tmp_path, engine):
    p, h = table
    (tmp_path / "rel").mkdir()
    outs = {}
    for e in ("numpy", engine):
        out = tmp_path / "rel" / f"k-{e}.csv"
        r = runner.invoke(app, ["kanon", str(p), "--qi", "age,visits,sex", "--hierarchies", str(h), "--k", "2",
                                "--max-suppression", "0.5", "--keep", "dx", "--out", str(out), "--engine", e, "-q"])  # fmt: skip
        assert r.exit_code == 0, (e, r.output)
        outs[e] = _rows(out)
    assert outs[engine] == outs["numpy"]
    assert {row[0] for row in outs["numpy"]} <= {"20.0", "30.0", "40.0", "", "*"}
    checks = {}
    for e in ("numpy", engine):
        r = runner.invoke(app, ["check", str(p), "--qi", "age,visits,sex", "--json", "--engine", e])
        assert r.exit_code == 0, (e, r.output)
        checks[e] = r.output
    assert checks[engine] == checks["numpy"]


@pytest.mark.parametrize("engine", BACKENDS)
def test_nan_in_a_float_column_without_missing_values(tmp_path, engine):
    """A float column with NaNs and no null (as pyarrow, polars or DuckDB write a column of readings):
    the Parquet statistics, min and max without the NaNs, told DuckDB that no value is NaN, so it
    folded the view's isnan() to false: the NaN stayed a value 'nan' ("column 'age': 1 value(s) missing
    from the hierarchy: 'nan'", exit 2) where numpy reads it as missing (the fixture above has nulls
    beside the NaNs, and then the test was not folded). Found by hand (session 23: typed Parquet
    columns written with pyarrow)."""
    n = 40
    rng = np.random.default_rng(5)
    age = rng.choice([20.0, 30.0, 40.0], n)
    age[::7] = np.nan
    pq.write_table(pa.table({"age": pa.array(age), "sex": pa.array(list(rng.choice(["M", "F"], n)))}), tmp_path / "t.parquet")
    h = tmp_path / "h"
    h.mkdir()
    (h / "age.csv").write_text("20.0;*\n30.0;*\n40.0;*\n;*\n")
    (h / "sex.csv").write_text("M;*\nF;*\n")
    outs = {}
    for e in ("numpy", engine):
        out = tmp_path / f"k-{e}.csv"
        r = runner.invoke(app, ["kanon", str(tmp_path / "t.parquet"), "--qi", "age,sex", "--hierarchies", str(h), "--k", "2",
                                "--out", str(out), "--engine", e, "-q"])  # fmt: skip
        assert r.exit_code == 0, (e, r.output)
        outs[e] = _rows(out)
    assert outs[engine] == outs["numpy"]
    checks = {e: runner.invoke(app, ["check", str(tmp_path / "t.parquet"), "--qi", "age,sex", "--json", "--engine", e]).output
              for e in ("numpy", engine)}  # fmt: skip
    assert checks[engine] == checks["numpy"]


@pytest.mark.parametrize("engine", BACKENDS)
@pytest.mark.parametrize("source", ["pandas-parquet", "dataframe"])
def test_nullable_integers_keep_their_integer_text(tmp_path, engine, source):
    """An integer column with a missing value that pandas keeps integer: a DataFrame's nullable ``Int64``
    given to the API, and a Parquet file pandas wrote from one (its ``pandas`` metadata names ``Int64``,
    so pandas reads it back as such: text '18'). The engines' input view read such a column as floats
    (text '18.0', right only for a file without that metadata, test above), so kanon on DuckDB refused
    the hierarchy numpy accepted: "column 'age': 4 value(s) missing from the hierarchy: '21.0' ...".
    Found by the engine fuzz (seed 33, a typed ``Int64`` age column with a missing value)."""
    import pandas as pd

    from tempanon.hierarchy import Hierarchy
    from tempanon.kanon import kanonymize

    n = 40
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": pd.array(rng.integers(18, 22, n), dtype="Int64"), "sex": rng.choice(["F", "M"], n)})
    df.loc[[3, 17], "age"] = pd.NA
    H = {"age": Hierarchy.from_rows("age", [[str(v), "*"] for v in range(18, 22)]),
         "sex": Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]])}  # fmt: skip
    data = df
    if source == "pandas-parquet":
        data = tmp_path / "in.parquet"
        df.to_parquet(data, index=False)
        assert b'"Int64"' in pq.read_schema(data).metadata[b"pandas"]
    got = {}
    for e in ("numpy", engine):
        res = kanonymize(data, ["age", "sex"], H, k=2, max_suppression=0.2, engine=e)
        got[e] = res.table.astype(object).where(res.table.notna(), "").astype(str).values.tolist()
    assert got[engine] == got["numpy"]
    assert {row[0] for row in got["numpy"]} <= {"18", "19", "20", "21", "", "*"}


def _nan_roles(tmp_path):
    """``t.parquet``: ``dx`` a double whose most frequent category is NaN (16 of 48 rows, missing on
    numpy), ``uid`` a double id (4 respondents) and ``nid`` one holding NaN (missing ids); the
    hierarchy folder ``h`` for ``q``."""
    n = 48
    t = pa.table({"t": pa.array([f"2024-01-{1 + i // 4:02d} {i % 24:02d}:00" for i in range(n)]),
                  "uid": pa.array(np.tile([0.0, 5.0, 1.0, -1.0], n // 4)),
                  "nid": pa.array(np.tile([0.0, np.nan, 1.0, -1.0], n // 4)),
                  "q": pa.array(np.tile(["a", "b"], n // 2).tolist()),
                  "dx": pa.array(np.tile([0.0, np.nan, 1.0, 2.0, np.nan, 3.0], n // 6))})  # fmt: skip
    p = tmp_path / "t.parquet"
    pq.write_table(t, p)
    (tmp_path / "h").mkdir(exist_ok=True)
    (tmp_path / "h" / "q.csv").write_text("a;*\nb;*\n")
    return p, tmp_path / "h"


def test_nan_in_a_respondent_or_sensitive_double_is_the_missing_category(tmp_path, engine):
    """A Parquet double's NaN used as the sensitive or the respondent column is the missing category on
    every engine, as numpy reads it: the same releases, refusals and messages (kanon with l-diversity,
    kanon and timestamped with a respondent id holding NaN, timestamped with a sensitive column, check).
    And the messages name that category ``<missing>``: numpy said "value 'nan' of 'dx' holds 16 of 48
    rows" (pandas' text of a missing value, the text a cell holding 'nan' has), DuckDB and Spark "the
    most frequent value of 'dx' ..." (they named no value)."""
    from tempanon.errors import InputError
    from tempanon.steward.check import check_table

    p, h = _nan_roles(tmp_path)
    runs = {
        "l impossible": ["kanon", p, "--qi", "q", "--hierarchies", h, "--k", "2", "--sensitive", "dx", "--l", "4"],
        "l possible": ["kanon", p, "--qi", "q", "--hierarchies", h, "--k", "2", "--sensitive", "dx", "--l", "2"],
        "uid missing": ["kanon", p, "--qi", "q", "--hierarchies", h, "--k", "2", "--uid", "nid"],
        "ts uid missing": ["timestamped", p, "--time", "t", "--uid", "nid", "--qi", "q", "--k", "2"],
        "ts sensitive": ["timestamped", p, "--time", "t", "--uid", "uid", "--qi", "q", "--hierarchies", h, "--k", "2",
                         "--sensitive", "dx", "--drop", "nid"],
    }  # fmt: skip
    got = {}
    for e in ("numpy", engine):
        for name, args in runs.items():
            out = tmp_path / e / f"{name}.csv"
            r = runner.invoke(app, [*map(str, args), "--out", str(out), "--engine", e, "-q"])
            got[e, name] = (r.exit_code, _rows(out) if r.exit_code == 0 else " ".join(r.output.split()))
        with pytest.raises(InputError) as refused:  # (a missing respondent id, as kanon and timestamped; since 2026-11-28)
            check_table(str(p), ["q"], uid="nid", sensitive=["dx"], k=2, l=4, engine=e)
        res = check_table(str(p), ["q"], uid="uid", sensitive=["dx"], k=2, l=4, engine=e)
        got[e, "check"] = (str(refused.value), res.risk.as_dict(), res.failures)
    assert got["numpy", "l impossible"] == (1, "error: frequency 4-diversity is impossible for this data: value <missing> of "
                                               "'dx' holds 16 of 48 rows (33.3%); every class must have at most 1/4 = 25.0% of "
                                               "its rows with one value, the union of such classes too, and classes only "
                                               "merge under generalization, so no generalization can satisfy it")  # fmt: skip
    assert any(r == ("a", "") for r in got["numpy", "l possible"][1])  # (q, dx): a missing dx released as missing
    assert got["numpy", "uid missing"][0] == got["numpy", "ts uid missing"][0] == 2
    assert got["numpy", "ts sensitive"][0] == 0 and got["numpy", "l possible"][0] == 0
    for name in [*runs, "check"]:
        assert got[engine, name] == got["numpy", name], name


def test_the_value_named_among_equally_frequent_ones_is_the_same_on_every_engine(engine):
    """Two sensitive values with the most rows (and a missing one with as many): the message names the
    one with the smallest text, missing first, on every engine (numpy's codes are in file order, an
    engine's in its grouping's order)."""
    import pandas as pd

    from tempanon.errors import NoSolutionError
    from tempanon.hierarchy import Hierarchy
    from tempanon.kanon import kanonymize

    sex = {"sex": Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]])}
    aware = pd.to_datetime(["2021-01-02 00:00", "2021-01-03 00:00"] * 6).tz_localize("America/New_York")
    for dx, named in ((["b", "a", "c"] * 4, "value 'a'"), (["b", None, "a", "c"] * 3, "value <missing>"),
                      (aware, "value '2021-01-02 00:00:00-05:00'")):  # (an aware value in its zone, not in UTC)
        df = pd.DataFrame({"sex": ["M", "F"] * (len(dx) // 2), "dx": dx})
        said = []
        for e in ("numpy", engine):
            with pytest.raises(NoSolutionError) as exc:
                kanonymize(df, ["sex"], sex, 2, sensitive="dx", l=5, engine=e, screen=False)
            said.append(str(exc.value))
        assert f"{named} of 'dx' holds" in said[0], said[0]
        assert said[1] == said[0]


def test_verifier_counts_nan_and_null_as_one_missing_category():
    """tempanon.verify: a sensitive column's NaN and null (a Parquet release read back, a DataFrame) are
    one value, the missing category, apart from the text 'nan'; -0.0 stays 0.0."""
    import pandas as pd

    from tempanon import verify
    from tempanon.errors import VerificationError

    q = ["a"] * 4
    with pytest.raises(VerificationError, match="not 2-diverse"):  # NaN, None, NaN, 1.0: 3 of 4 missing
        verify.check_l_diverse_classes(pd.DataFrame({"q": q, "s": [np.nan, None, np.nan, 1.0]}), ["q"], "s", 2)
    assert verify.check_l_diverse_classes(pd.DataFrame({"q": q, "s": [np.nan, "nan", None, "x"]}, dtype=object), ["q"], "s", 2)
    with pytest.raises(VerificationError, match="distinct 3-diversity"):
        verify.check_l_diversity(pd.DataFrame({"q": q, "s": [np.nan, None, -0.0, 0.0]}), ["q"], "s", 3, "distinct")
