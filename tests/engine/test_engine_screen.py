"""Identifier screening on an engine (the distinct values and present counts the engine returns):
a missing value is not counted as a distinct present value, so the message never says more
distinct values than rows, and the near-unique rule counts as on the numpy path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tempanon.errors import InputError
from tempanon.kanon.api import _screen
from tempanon.lattice.source_duckdb import DuckDBSource


def test_near_unique_with_missing_values_counts_present_values(tmp_path):
    rng = np.random.default_rng(3)
    w = rng.random(200) * 100
    w[rng.random(200) < 0.1] = np.nan
    df = pd.DataFrame({"w": w, "g": rng.choice(["a", "b"], 200)})
    path = tmp_path / "t.parquet"
    df.to_parquet(path)
    present = int(df["w"].notna().sum())
    src = DuckDBSource(path)
    try:
        with pytest.raises(InputError) as err:
            _screen(src, ["w"], [], None)
        assert f"({present} distinct values in {present} rows)" in str(err.value)
        assert _screen(src, ["g"], [], None) == []
    finally:
        src.close()


# ---- the signals the engines missed (found by tests/safety/test_fuzz_engines.py) --------------------


def _table(tmp_path, suffix: str):
    """30 respondents over 80 rows; ``code`` is one value per respondent (near-unique per respondent,
    not per row), ``t2`` a second timestamp."""
    from tempanon.hierarchy import build_intervals

    rng = np.random.default_rng(3)
    n = 80
    pid = rng.integers(0, 30, n)
    df = pd.DataFrame({"pid": pid, "age": rng.integers(18, 70, n), "sex": rng.choice(["F", "M"], n),
                       "t": (pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 60, n), unit="D")).strftime("%Y-%m-%d"),
                       "code": [f"c{p}" for p in pid],
                       "t2": (pd.Timestamp("2021-03-01") + pd.to_timedelta(rng.integers(0, 60, n), unit="D"))})  # fmt: skip
    path = tmp_path / f"in{suffix}"
    df.to_parquet(path, index=False) if suffix == ".parquet" else df.to_csv(path, index=False)
    hdir = tmp_path / "h"
    hdir.mkdir()
    build_intervals("age", df["age"].unique(), [10, 40]).to_csv(hdir / "age.csv")
    (hdir / "sex.csv").write_text("F;*\nM;*\n")
    return path, hdir


def _refusal(backend, args) -> str:
    from typer.testing import CliRunner

    from tempanon.cli import app

    r = CliRunner().invoke(app, [*map(str, args), "--engine", backend, "-q"])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert r.exit_code == 2, r.output
    return " ".join(r.output.split())


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_kept_code_unique_per_respondent_refused_on_every_engine(backend, tmp_path, suffix):
    """A kept column with one value per respondent (repeated on each of the respondent's rows): the
    engines screened it per row only and released it where numpy refuses it (README: near-unique
    'per respondent with --uid')."""
    path, hdir = _table(tmp_path, suffix)
    msg = "column 'code': near-unique per respondent (27 of 27 respondents ('pid') carry a value no other respondent has)"
    out = tmp_path / backend / "o.csv"
    assert msg in _refusal(backend, ["kanon", path, "--qi", "age,sex", "--hierarchies", hdir, "--k", "2", "--uid", "pid",
                                     "--max-suppression", "0.3", "--keep", "code", "--out", out])  # fmt: skip
    assert msg in _refusal(backend, ["timestamped", path, "--time", "t", "--qi", "sex", "--k", "2", "--uid", "pid",
                                     "--granularities", "month,year", "--keep", "code", "--out", out])  # fmt: skip
    assert not out.exists()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_second_timestamp_refused_on_every_engine(backend, tmp_path, suffix):
    """``timestamped --keep t2`` with ``t2`` another timestamp column (text in CSV, typed in Parquet):
    the engines released it unchanged, giving the generalized time back (README: 'in timestamped any
    other timestamp column' is refused)."""
    path, hdir = _table(tmp_path, suffix)
    msg = "column 't2': it holds timestamps, which would give the generalized time 't' back"
    out = tmp_path / backend / "o.csv"
    assert msg in _refusal(backend, ["timestamped", path, "--time", "t", "--qi", "sex", "--k", "2", "--uid", "pid",
                                     "--granularities", "month,year", "--keep", "t2", "--out", out])  # fmt: skip
    assert not out.exists()
