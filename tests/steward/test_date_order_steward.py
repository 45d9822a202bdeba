"""The day/month order of numeric dates on the steward's paths: the ``dates`` hierarchy builder
(``tempanon hierarchy --date-order``, a job file's ``date_order`` in a dates hierarchy), ``init``
(which proposes ``date_order = "day"`` when the values show day first), boundary files of
``file:`` granularities and kp's long-format times, all by the rule of ``timestamped``
(:func:`tempanon.temporal.parse.day_month_order`)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import HierarchyError, InputError, TempanonWarning
from tempanon.hierarchy.builders import build_dates

runner = CliRunner()


def _level1(h) -> dict:
    return {str(a): str(b) for a, b in h.table[:, :2]}


def test_dates_builder_orders():
    assert _level1(build_dates("d", ["13/05/2023", "05/03/2023"], ["%Y-%m-%d"])) == {
        "13/05/2023": "2023-05-13", "05/03/2023": "2023-03-05"}
    assert _level1(build_dates("d", ["05/03/2023", "01/02/2023"], ["%Y-%m-%d"], date_order="day")) == {
        "05/03/2023": "2023-03-05", "01/02/2023": "2023-02-01"}
    with pytest.raises(HierarchyError, match="attribute 'd': date '13/05/2023' cannot be month first"):
        build_dates("d", ["13/05/2023"], date_order="month")
    with pytest.warns(TempanonWarning, match="dates hierarchy of column 'd': every numeric date could be day or month "
                                             "first: read month first, '05/03/2023' as 3 May"):
        h = build_dates("d", ["05/03/2023", "01/02/2023"], ["%Y-%m-%d"])
    assert _level1(h)["05/03/2023"] == "2023-05-03"


def test_hierarchy_command_date_order(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("visit\n05/03/2023\n01/02/2023\n")
    out = tmp_path / "h.csv"
    r = runner.invoke(app, ["hierarchy", "--data", str(data), "--column", "visit", "--type", "dates", "--formats",
                            "%Y-%m-%d", "--date-order", "day", "--out", str(out), "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert out.read_text().splitlines()[0] == "05/03/2023;2023-03-05;*"
    r = runner.invoke(app, ["hierarchy", "--data", str(data), "--column", "visit", "--type", "masking", "--date-order",
                            "day", "--out", str(tmp_path / "m.csv")])  # fmt: skip
    assert r.exit_code == 2 and "--date-order is for --type dates" in r.output


def test_init_proposes_the_day_first_order_and_the_job_runs(tmp_path):
    rows = [f"p{i % 15},{'FM'[i % 2]},{1 + i % 28:02d}/{1 + (i * 5) % 12:02d}/2023" for i in range(90)]
    data = tmp_path / "uk.csv"
    data.write_text("pid,sex,visit\n" + "\n".join(rows) + "\n")
    job = tmp_path / "uk.job.toml"
    r = runner.invoke(app, ["init", str(data), "--out", str(job), "-q"])
    assert r.exit_code == 0, r.output
    text = job.read_text()
    assert 'visit = { type = "dates", formats = ["%Y-%m", "%Y"], date_order = "day" }' in text
    assert "its numeric dates are day first" in text
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    # released at the month level, each row in the month of its second part (01/06/2023 is June)
    from collections import Counter

    released = pd.read_csv(tmp_path / "uk-anonymized.csv", dtype=str)
    assert Counter(zip(released["sex"], released["visit"])) == Counter(
        ("FM"[i % 2], f"2023-{1 + (i * 5) % 12:02d}") for i in range(90))
    job.write_text(text.replace('date_order = "day"', 'date_order = "dmy"'))
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 2 and "unknown date order 'dmy'" in r.output


def test_init_says_when_the_order_is_undecided(tmp_path):
    data = tmp_path / "amb.csv"
    data.write_text("sex,visit\n" + "\n".join(f"{'FM'[i % 2]},{1 + i % 12:02d}/{1 + (i * 5) % 12:02d}/2023"
                                              for i in range(40)) + "\n")  # fmt: skip
    job = tmp_path / "amb.job.toml"
    assert runner.invoke(app, ["init", str(data), "--out", str(job), "-q"]).exit_code == 0
    text = job.read_text()
    assert "every numeric date could be day or month first: read month first" in text and "date_order" in text
    assert 'date_order = "day" }' not in text


def test_boundary_file_reads_start_and_end_in_one_order(tmp_path):
    from tempanon.temporal.granularity import parse_granularity

    f = tmp_path / "terms.csv"
    f.write_text("label,start,end\nT1,01/02/2023,13/02/2023\nT2,13/02/2023,05/03/2023\n")
    g = parse_granularity(f"file:{f}")
    days = [str(pd.Timestamp(s, unit="s").date()) for s in g.starts]  # type: ignore[attr-defined]
    assert days == ["2023-02-01", "2023-02-13"]
    f.write_text("label,start,end\nT1,01/02/2023,03/02/2023\n")
    with pytest.warns(TempanonWarning, match="as 2 January; if it is 1 February, pass --date-order day"):
        parse_granularity(f"file:{f}")
    f.write_text("label,start,end\nT1,13/02/2023,12/25/2023\n")
    with pytest.raises(InputError, match="two day/month orders"):
        parse_granularity(f"file:{f}")


def test_kp_long_format_orders_day_first_times():
    from tempanon.timeseries.longformat import long_to_wide

    df = pd.DataFrame({"id": ["a"] * 3 + ["b"] * 3, "t": ["13/01/2023", "05/02/2023", "02/03/2023"] * 2,
                       "v": [1, 2, 3, 4, 5, 6]})  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wide, cols = long_to_wide(df, entity="id", time="t", value="v")
    assert cols == ["13/01/2023", "05/02/2023", "02/03/2023"]  # January, February, March: not 02/03 (Feb 3) first
