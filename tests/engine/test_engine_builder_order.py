"""A hierarchy built from the data (a job's ``[hierarchies]`` of type ``intervals`` or ``dates``) that
the builder refuses names the bad values in the same order on every engine: numpy's, the order of
their first rows in the file (the builder is handed ``pd.unique`` of the column). DuckDB and Spark
handed it their distinct texts sorted, so the same file was refused naming other values ("could not
convert string to float: '1b'" where numpy said ``'zz'``; "unparsable date/time value(s): 'aaa',
'bbb', 'mmm'" where numpy said ``'zzz', 'aaa', 'mmm'``). kanon and timestamped jobs (the timestamped
file route's joint search), a CSV and a Parquet input. Found by the last session's parity review."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import TempanonWarning

from .test_engine_bool_text import _rows

ROWS = 12
AGE = ["30", "zz", "41", "abc", "nan", "inf", "5", "1b", "30", "41", "5", "30"]  # first bad: 'zz' (sorted: '1b')
WHEN = ["2021-01-02", "zzz", "2021-03-04", "aaa", "2021-01-02", "mmm", "bbb", "2021-01-02", "x", "y", "q", "2021-01-02"]
SCORE = ["30", "nan", "41", "inf", "5", "-inf", "5", "30", "30", "41", "5", "30"]  # finite? no: 'nan', 'inf', '-inf'


def _run(tmp_path, engine, model, fmt, column, spec, data=None, released=False):
    """Exit code and the message of ``tempanon run`` of a job building ``column``'s hierarchy from ``spec``
    (and with ``released`` the released rows, a sorted multiset)."""
    df = pd.DataFrame({"age": AGE, "d": WHEN, "score": SCORE, "sex": ["M", "F"] * (ROWS // 2),
                       "uid": [f"p{i % 4}" for i in range(ROWS)],
                       "t": [f"2023-0{1 + i % 3}-0{1 + i % 7} 10:00" for i in range(ROWS)]})  # fmt: skip
    for c, v in (data or {}).items():
        df[c] = v
    src = tmp_path / f"in.{fmt}"
    if not src.exists():
        df.to_csv(src, index=False) if fmt == "csv" else df.to_parquet(src, index=False)
    cols = f'quasi_identifiers = ["{column}"]\n'
    if model == "kanon":
        body = f'[columns]\n{cols}\n[model]\nname = "kanon"\nk = 2\n'
    else:
        allow = f'allow_identifier = ["{column}"]\n' if column == "d" else ""  # (a date column beside the time)
        body = f'[columns]\n{cols}{allow}uid = "uid"\ntime = "t"\n\n[model]\nname = "timestamped"\nk = 2\ngranularities = ["month", "year"]\n'
    out = tmp_path / f"out-{engine}"
    job = tmp_path / f"{engine}-{model}-{fmt}-{column}.toml"
    job.write_text(f'[input]\npath = "{src.name}"\n\n[hierarchies]\n{column} = {spec}\n\n{body}engine = "{engine}"\n\n'
                   f'[output]\ntable = "{out.name}/r.csv"\n')  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = CliRunner().invoke(app, ["run", str(job), "-q"])
    if released:
        said = sorted(str(w.message) for w in caught if issubclass(w.category, TempanonWarning))  # every one given
        # (not the distinct ones: a hierarchy is built once, and its builder's warning is given once)
        return r.exit_code, " ".join(r.output.split()), said, _rows(out / "r.csv") if r.exit_code == 0 else None
    assert not out.exists() or not any(out.iterdir()), "nothing is written"
    return r.exit_code, " ".join(r.output.split())


@pytest.mark.parametrize("model,fmt,column,spec,named", [
    ("kanon", "csv", "age", '{ type = "intervals", widths = [10, 20] }', "could not convert string to float: 'zz'"),
    ("kanon", "parquet", "score", '{ type = "intervals", widths = [10, 20] }', "needs finite numbers, got 'nan', 'inf', '-inf'"),
    ("kanon", "parquet", "d", '{ type = "dates" }', "unparsable date/time value(s): 'zzz', 'aaa', 'mmm', 'bbb', 'x'"),
    ("timestamped", "csv", "d", '{ type = "dates" }', "unparsable date/time value(s): 'zzz', 'aaa', 'mmm', 'bbb', 'x'"),
    ("timestamped", "parquet", "age", '{ type = "intervals", widths = [10, 20] }', "could not convert string to float: 'zz'"),
], ids=["kanon-csv-intervals", "kanon-parquet-nonfinite", "kanon-parquet-dates", "ts-csv-dates", "ts-parquet-intervals"])  # fmt: skip
def test_a_built_hierarchy_names_bad_values_in_file_order(tmp_path, engine, model, fmt, column, spec, named):
    want = _run(tmp_path, "numpy", model, fmt, column, spec)
    assert want[0] == 2 and named in want[1], want
    assert _run(tmp_path, engine, model, fmt, column, spec) == want


AMBIGUOUS = ["05/03/2023", "01/02/2023", "05/03/2023", "01/02/2023"] * 3  # day or month first: undecided
NUMBERS = [str(20 + 7 * i % 30) for i in range(ROWS)]


@pytest.mark.parametrize("model", ["kanon", "timestamped"])
def test_a_built_hierarchy_releases_and_warns_as_on_numpy(tmp_path, engine, model):
    """A job whose hierarchies are built from the data and accepted: the same release and the same
    warnings as numpy. A dates hierarchy of dates that read day or month first warns naming an example,
    the first date numpy's builder meets (file order: '05/03/2023'); the engines named the first of
    their sorted texts ('01/02/2023'). The timestamped file route did not release at all with a built
    hierarchy: the spec has no mapping for the verification, so its class was "not the generalization of
    any input rows" (exit 3, nothing written) where numpy released."""
    data = {"d": AMBIGUOUS, "age": NUMBERS}
    for column, spec in (("age", '{ type = "intervals", widths = [10, 20] }'), ("d", '{ type = "dates" }')):
        want = _run(tmp_path, "numpy", model, "csv", column, spec, data, released=True)
        assert want[0] == 0 and want[3], want
        if column == "d":
            ambiguous = [w for w in want[2] if "read month first, '05/03/2023' as 3 May" in w]
            assert len(ambiguous) == 1 and want[2] == ambiguous, want[2]  # once: built once (numpy built it 2-3 times)
        got = _run(tmp_path, engine, model, "csv", column, spec, data, released=True)
        assert got == want, column


def test_a_built_hierarchy_warns_once_in_memory(engine):
    """The API on a DataFrame (kanonymize, anonymize_timestamped's joint search): a hierarchy built from
    the data is built once, so its builder's warning is given once, on numpy and on the engine. numpy built
    it for the search, again for the verification (and, timestamped, for the release's labels); the
    timestamped joint search on an engine built it in the engine and again on the DataFrame."""
    from tempanon.hierarchy.builders import HierarchySpec
    from tempanon.kanon import kanonymize
    from tempanon.temporal.api import anonymize_timestamped

    df = pd.DataFrame({"d": AMBIGUOUS, "uid": [f"p{i % 4}" for i in range(ROWS)],
                       "t": [f"2023-0{1 + i % 3}-0{1 + i % 7} 10:00" for i in range(ROWS)]})  # fmt: skip
    runs = {
        "kanon": lambda eng: kanonymize(df, ["d"], {"d": HierarchySpec("dates")}, 2, engine=eng).table,
        "timestamped": lambda eng: anonymize_timestamped(
            df, time="t", qi=["d"], uid="uid", k=2, hierarchies={"d": HierarchySpec("dates")}, engine=eng,
            granularities=["month", "year"], allow_identifier=["d"]).released,
    }  # fmt: skip
    for model, run in runs.items():
        said = {}
        for eng in ("numpy", engine):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                table = run(eng)
            words = [str(w.message) for w in caught if issubclass(w.category, TempanonWarning)]
            assert len(words) == 1 and "read month first, '05/03/2023' as 3 May" in words[0], (model, eng, words)
            said[eng] = (words, table.sort_values(list(table.columns)).reset_index(drop=True))
        assert said[engine][0] == said["numpy"][0], model
        pd.testing.assert_frame_equal(said[engine][1], said["numpy"][1], check_dtype=False)  # (a kanon table's text
        # column: string on DuckDB, object on numpy)
