"""Numeric dates written day first (UK/European registers: ``13/05/2023``, ``05/03/2023``,
``02.03.2023``). Before, a column with day-first evidence and an ambiguous value was refused ("write
the dates as YYYY-MM-DD"), and an all-ambiguous column was read month first silently. Now
``--date-order auto|day|month`` (API ``date_order``, job files ``date_order``): ``auto`` reads a
column day first when some value can only be day first and none only month first, refuses a column
showing both (line and values), and reads an undecided column month first with a note; an explicit
order a value contradicts is refused naming column, line and value."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import InputError
from tempanon.temporal.api import anonymize_timestamped
from tempanon.temporal.parse import parse_timestamps

runner = CliRunner()

UK = ["13/05/2023", "13/05/2023", "05/03/2023", "05/03/2023", "02.03.2023", "02.03.2023", "01/02/2023 10:30",
      "01/02/2023 11:00"]  # fmt: skip
UK_DAYS = ["2023-05-13", "2023-05-13", "2023-03-05", "2023-03-05", "2023-03-02", "2023-03-02", "2023-02-01", "2023-02-01"]
AMBIGUOUS = ["05/03/2023", "05/03/2023", "01/02/2023", "01/02/2023", "07/07/2023", "07/07/2023"]


def _days(values, order="auto"):
    inst, _, info = parse_timestamps(pd.Series(values), "visit", date_order=order)
    return list(pd.to_datetime(inst, unit="s").strftime("%Y-%m-%d")), info


def _csv(tmp_path, values, name="v.csv"):
    p = tmp_path / name
    p.write_text("pid,visit\n" + "".join(f"p{i},{v}\n" for i, v in enumerate(values)))
    return p


def test_day_first_evidence_reads_every_value_day_first():
    days, info = _days(UK)
    assert days == UK_DAYS and info["date_order"] == "day" and "date_order_note" not in info
    # two-digit years and times of day are read as before, only the order changes
    inst, _, _ = parse_timestamps(pd.Series(["25/12/23 08:15", "5/3/23 23:59:59"]), "t")
    assert [str(t) for t in pd.to_datetime(inst, unit="s")] == ["2023-12-25 08:15:00", "2023-03-05 23:59:59"]


def test_explicit_orders():
    assert _days(AMBIGUOUS[:4], "day")[0] == ["2023-03-05", "2023-03-05", "2023-02-01", "2023-02-01"]
    assert _days(AMBIGUOUS[:4], "month")[0] == ["2023-05-03", "2023-05-03", "2023-01-02", "2023-01-02"]
    assert _days(["2023-03-05T10:00"], "day")[0] == ["2023-03-05"]  # ISO dates are not touched by the order
    with pytest.raises(InputError, match=r"column 'visit', line 3: date '13/05/2023' cannot be month first"):
        _days(["05/03/2023", "13/05/2023"], "month")
    with pytest.raises(InputError, match=r"column 'visit', line 2: date '12/25/2023' cannot be day first"):
        _days(["12/25/2023"], "day")
    with pytest.raises(InputError, match="unknown date order 'dmy'"):
        _days(["12/25/2023"], "dmy")


def test_both_kinds_of_evidence_refused_with_lines():
    with pytest.raises(InputError) as e:
        _days(["2023-01-02", "13/05/2023", "05/03/2023", "12/25/2023"])
    msg = str(e.value)
    assert "line 3 ('13/05/2023') is day first" in msg and "line 5 ('12/25/2023') month first" in msg


def test_undecided_column_read_month_first_with_a_note():
    days, info = _days(AMBIGUOUS)
    assert days[:3] == ["2023-05-03", "2023-05-03", "2023-01-02"] and info["date_order"] == "month"
    assert info["date_order_note"] == ("column 'visit': every numeric date could be day or month first: read month "
                                       "first, line 2 ('05/03/2023') as 3 May; pass --date-order day if it is 5 March")
    assert "date_order_note" not in _days(["07/07/2023", "2023-01-02"])[1]  # the same day in either order


def _timestamped(tmp_path, values, *extra, engine="numpy"):
    out, summ = tmp_path / f"o-{engine}.csv", tmp_path / f"s-{engine}.json"
    r = runner.invoke(app, ["timestamped", str(_csv(tmp_path, values)), "--uid", "pid", "--time", "visit", "--k", "2",
                            "--granularities", "day,month", "--engine", engine, "--out", str(out), "--summary", str(summ),
                            *extra])  # fmt: skip
    return r, out, summ


def test_cli_releases_a_day_first_column_with_the_right_days(tmp_path):
    r, out, summ = _timestamped(tmp_path, UK)
    assert r.exit_code == 0, r.output
    assert sorted(pd.read_csv(out, dtype=str)["visit"]) == sorted(UK_DAYS)  # 05/03/2023 -> 2023-03-05
    assert json.loads(summ.read_text())["date_order"] == "day first"


def test_cli_explicit_order_contradicted_is_refused(tmp_path):
    r, out, _ = _timestamped(tmp_path, UK, "--date-order", "month")
    assert r.exit_code == 2, r.output
    assert "column 'visit', line 2: date '13/05/2023' cannot be month first" in r.output
    assert not out.exists()


def test_cli_explicit_day_order_on_an_undecided_column(tmp_path):
    r, out, _ = _timestamped(tmp_path, AMBIGUOUS, "--date-order", "day")
    assert r.exit_code == 0, r.output
    assert sorted(pd.read_csv(out, dtype=str)["visit"]) == ["2023-02-01"] * 2 + ["2023-03-05"] * 2 + ["2023-07-07"] * 2
    assert "could be day or month first" not in r.output


def test_cli_undecided_column_says_it_read_month_first(tmp_path):
    r, out, _ = _timestamped(tmp_path, AMBIGUOUS)
    assert r.exit_code == 0, r.output
    assert sorted(pd.read_csv(out, dtype=str)["visit"])[:2] == ["2023-01-02"] * 2
    note = [line for line in r.output.splitlines() if "could be day or month first" in line]
    assert len(note) == 1 and "'05/03/2023'" in note[0] and "read month first" in note[0]
    assert "--date-order day" in note[0] and "'visit'" in note[0]


def test_cli_mixed_column_refused_with_lines(tmp_path):
    r, out, _ = _timestamped(tmp_path, ["13/05/2023", "13/05/2023", "12/25/2023", "12/25/2023"])
    assert r.exit_code == 2, r.output
    assert "line 2 ('13/05/2023') is day first, line 4 ('12/25/2023') month first" in r.output
    assert not out.exists()


def test_api_keyword_matches_the_option():
    df = pd.DataFrame({"pid": [f"p{i}" for i in range(6)], "visit": AMBIGUOUS})
    res = anonymize_timestamped(df, time="visit", uid="pid", k=2, granularities="day,month", date_order="day")
    assert sorted(res.released["visit"]) == ["2023-02-01"] * 2 + ["2023-03-05"] * 2 + ["2023-07-07"] * 2
    with pytest.raises(InputError, match="unknown date order"):
        anonymize_timestamped(df, time="visit", uid="pid", k=2, date_order="ymd")
    import inspect

    from tempanon.temporal.command import timestamped

    assert inspect.signature(anonymize_timestamped).parameters["date_order"].default == "auto"
    assert inspect.signature(timestamped).parameters["date_order"].default == "auto"


def test_job_file_date_order_key(tmp_path):
    _csv(tmp_path, AMBIGUOUS)
    job = tmp_path / "job.toml"
    job.write_text('[input]\npath = "v.csv"\n\n[columns]\nuid = "pid"\ntime = "visit"\n\n'
                   '[model]\nname = "timestamped"\nk = 2\ngranularities = ["day", "month"]\ndate_order = "day"\n\n'
                   '[output]\ntable = "out.csv"\n')  # fmt: skip
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    assert sorted(pd.read_csv(tmp_path / "out.csv", dtype=str)["visit"]) == (["2023-02-01"] * 2 + ["2023-03-05"] * 2
                                                                            + ["2023-07-07"] * 2)  # fmt: skip
    job.write_text(job.read_text().replace('date_order = "day"', 'date_order = "dmy"'))
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 2 and "line 12: key 'model.date_order'" in r.output and "unknown date order" in r.output
    # without the key, the undecided column is read month first and the run says so
    job.write_text(job.read_text().replace('date_order = "dmy"\n', ""))
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    assert "could be day or month first" in r.output and 'date_order = "day"' in r.output
