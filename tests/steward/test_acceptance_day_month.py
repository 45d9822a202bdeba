"""Acceptance audit: a date column mixing day/month orders. pandas' ``format="mixed"`` parses each
value on its own, month first unless impossible, so in a column holding ``13/05/2023`` (day first)
``05/03/2023`` became May 3 and ``02.03.2023`` (dots: day first) February 3, silently, in
``timestamped`` (numpy and DuckDB), ``stream`` and the ``dates`` hierarchy builder. Now refused
with the line and value; consistent columns still parse as before. Since --date-order (2026-11-27):
a column whose day-first evidence is not contradicted is read day first, every value; one showing
both orders is still refused (tests/temporal/test_date_order.py)."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import HierarchyError, InputError
from tempanon.hierarchy.builders import build_dates
from tempanon.temporal.parse import parse_timestamps

runner = CliRunner()


def _days(values):
    inst, _, _ = parse_timestamps(pd.Series(values), "visit")
    return list(pd.to_datetime(inst, unit="s").strftime("%Y-%m-%d"))


def test_consistent_columns_parse_as_before():
    assert _days(["2023-01-02", "2023-12-31"]) == ["2023-01-02", "2023-12-31"]
    assert _days(["1/21/76", "4/13/86"]) == ["1976-01-21", "1986-04-13"]  # month first, evidently
    assert _days(["21/01/1976", "13/04/1986"]) == ["1976-01-21", "1986-04-13"]  # day first, evidently
    assert _days(["1/2/2017", "3/4/2017"]) == ["2017-01-02", "2017-03-04"]  # all ambiguous: month first, as before
    assert _days(["2023-01-02", "31.12.2023"]) == ["2023-01-02", "2023-12-31"]


def test_day_first_evidence_reads_the_column_day_first():
    assert _days(["2023-01-02 10:00", "13/05/2023 10:00", "05/03/2023 10:00"]) == ["2023-01-02", "2023-05-13", "2023-03-05"]
    assert _days(["2023-01-02", "02.03.2023", "04/01/2023"]) == ["2023-01-02", "2023-03-02", "2023-01-04"]


@pytest.mark.parametrize("values, line, needle", [
    (["13/05/2023", "12/25/2023"], "line 2", "two day/month orders"),
    (["2023-01-02", "02.03.2023", "01/13/2023"], "line 4", "two day/month orders"),
])
def test_mixed_orders_refused(values, line, needle):
    with pytest.raises(InputError) as e:
        parse_timestamps(pd.Series(values), "visit")
    assert line in str(e.value) and needle in str(e.value) and "YYYY-MM-DD" in str(e.value)


def test_dates_builder_refuses_mixed_orders():
    with pytest.raises(HierarchyError, match="attribute 'visit': numeric dates in two day/month orders: '13/05/2023' is "
                                             "day first, '05/13/2023' month first"):
        build_dates("visit", ["13/05/2023", "05/13/2023"])
    h = build_dates("visit", ["13/05/2023", "05/03/2023"], ["%Y-%m-%d"])  # day first on evidence
    assert sorted(str(v) for v in h.table[:, 1]) == ["2023-03-05", "2023-05-13"]
    h = build_dates("visit", ["13/05/2023", "14/03/2023"], ["%Y-%m"])
    assert sorted(str(v) for v in h.table[:, 1]) == ["2023-03", "2023-05"]


@pytest.fixture
def mixed_csv(tmp_path):
    rows = [f"p{i % 6},{'MF'[i % 2]},{'ab'[i % 2] if i % 3 else 'c'},2023-0{1 + i % 9}-1{i % 10} 10:00" for i in range(40)]
    rows[20] = "p2,F,a,13/05/2023 10:00"
    rows[30] = "p0,M,b,05/13/2023 10:00"  # line 32: month first
    p = tmp_path / "v.csv"
    p.write_text("pid,sex,dx,visit\n" + "\n".join(rows) + "\n")
    return p


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_timestamped_cli_refuses(mixed_csv, tmp_path, engine):
    out = tmp_path / "o.csv"
    r = runner.invoke(app, ["timestamped", str(mixed_csv), "--uid", "pid", "--time", "visit", "--qi", "sex", "--k", "2",
                            "--granularities", "month,year", "--engine", engine, "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert "line 22 ('13/05/2023 10:00') is day first, line 32 ('05/13/2023 10:00') month first" in r.output
    assert not out.exists()


def test_stream_cli_refuses(mixed_csv, tmp_path):
    out = tmp_path / "snap"
    r = runner.invoke(app, ["stream", str(mixed_csv), "--time", "visit", "--sensitive", "dx", "--qi", "sex", "--l", "2",
                            "--window", "1", "--snapshot", "month", "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert "line 22 ('13/05/2023 10:00') is day first, line 32 ('05/13/2023 10:00') month first" in r.output
    assert not out.exists() or not any(out.iterdir())
