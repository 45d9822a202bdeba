"""``stream`` reads numeric dates in one day/month order as ``timestamped`` does (``--date-order``,
API ``date_order``, job files ``date_order``): a file's column by its values; standard input value
by value, holding the order of the first value that decides it and refusing a later value in the
other order (a record may be published already: never two readings in one stream)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import InputError
from tempanon.stream.api import anonymize_stream, stream_json_lines

from job_check import stream_job  # tests/job_check.py

runner = CliRunner()

UK = ["13/03/2023 09:00", "13/03/2023 10:00", "05/04/2023 09:00", "05/04/2023 10:00", "02.05.2023 09:00", "02.05.2023 10:00"]
UK_DAYS = ["2023-03-13"] * 2 + ["2023-04-05"] * 2 + ["2023-05-02"] * 2
DX = ["a", "b", "a", "b", "a", "b"]


def _df(times=UK):
    return pd.DataFrame({"when": times, "dx": DX[: len(times)], "zip": ["1"] * len(times)})


def _snapshots(res) -> list:
    return res.audit.sort_values("row")["snapshot"].tolist()


def test_file_column_read_day_first_on_evidence():
    res = anonymize_stream(_df(), time="when", sensitive="dx", l=2, w=0, qi=["zip"])
    assert _snapshots(res) == UK_DAYS
    assert res.summary["date_order"] == "day first"


def test_explicit_order_and_contradiction():
    amb = _df(["05/03/2023", "05/03/2023", "01/04/2023", "01/04/2023"])
    res = anonymize_stream(amb, time="when", sensitive="dx", l=2, w=0, qi=["zip"], date_order="day")
    assert _snapshots(res) == ["2023-03-05"] * 2 + ["2023-04-01"] * 2 and not res.summary["warnings"]
    with pytest.raises(InputError, match=r"column 'when', line 2: date '13/03/2023 09:00' cannot be month first"):
        anonymize_stream(_df(), time="when", sensitive="dx", l=2, w=0, qi=["zip"], date_order="month")


def test_undecided_file_column_warns():
    amb = _df(["05/03/2023", "05/03/2023", "01/04/2023", "01/04/2023"])
    with pytest.warns(UserWarning, match=r"column 'when': every numeric date could be day or month first: read month "
                                         r"first, line 2 \('05/03/2023'\) as 3 May; pass --date-order day"):
        res = anonymize_stream(amb, time="when", sensitive="dx", l=2, w=0, qi=["zip"])
    assert _snapshots(res) == ["2023-05-03"] * 2 + ["2023-01-04"] * 2
    assert res.summary["date_order"] == "month first"


def _lines(times):
    return [json.dumps({"when": t, "dx": d, "zip": "1"}) + "\n" for t, d in zip(times, DX)]


def test_stdin_holds_the_first_deciding_order():
    res = stream_json_lines(_lines(UK), time="when", sensitive="dx", l=2, w=0, qi=["zip"])
    assert _snapshots(res) == UK_DAYS and res.summary["date_order"] == "day first"
    # 05/03 before any evidence: read month first (a note), and a later day-first value is refused
    with pytest.raises(InputError, match=r"standard input, line 3: date '13/03/2023 09:00' is day first, but "
                                         r"'05/03/2023 09:00' on line 1 was read month first"):
        stream_json_lines(_lines(["05/03/2023 09:00", "05/03/2023 10:00", "13/03/2023 09:00"]), time="when",
                          sensitive="dx", l=2, w=0, qi=["zip"])  # fmt: skip
    # (a file of the same values is read day first: it is seen whole; standard input needs the order given)
    res = stream_json_lines(_lines(["05/03/2023 09:00", "05/03/2023 10:00", "13/03/2023 09:00", "13/03/2023 10:00"]),
                            time="when", sensitive="dx", l=2, w=0, qi=["zip"], date_order="day")  # fmt: skip
    assert _snapshots(res) == ["2023-03-05"] * 2 + ["2023-03-13"] * 2
    with pytest.raises(InputError, match=r"line 3: date '12/25/2023' is month first, but '13/03/2023' on line 1 is day"):
        stream_json_lines(_lines(["13/03/2023", "13/03/2023", "12/25/2023"]), time="when", sensitive="dx", l=2, w=0,
                          qi=["zip"])  # fmt: skip
    res = stream_json_lines(_lines(["05/03/2023", "05/03/2023", "01/04/2023", "01/04/2023"]), time="when",
                            sensitive="dx", l=2, w=0, qi=["zip"], date_order="day")  # fmt: skip
    assert _snapshots(res) == ["2023-03-05"] * 2 + ["2023-04-01"] * 2


def test_cli_file_and_stdin_agree(tmp_path):
    p = tmp_path / "s.csv"
    _df().to_csv(p, index=False)
    opts = ["--time", "when", "--sensitive", "dx", "--qi", "zip", "--l", "2", "--window", "0", "-q"]
    r1 = runner.invoke(app, ["stream", str(p), *opts, "--out", str(tmp_path / "f"), "--audit", str(tmp_path / "f.csv")])
    r2 = runner.invoke(app, ["stream", "-", *opts, "--out", str(tmp_path / "i"), "--audit", str(tmp_path / "i.csv")],
                       input="".join(_lines(UK)))  # fmt: skip
    assert r1.exit_code == 0 and r2.exit_code == 0, r1.output + r2.output
    assert (tmp_path / "f.csv").read_text() == (tmp_path / "i.csv").read_text()
    assert sorted(f.name for f in (tmp_path / "f").iterdir())[0] == "2023-03-13.qit.csv"
    assert pd.read_csv(tmp_path / "f.csv")["snapshot"].tolist() == UK_DAYS
    r = runner.invoke(app, ["stream", str(p), *opts, "--date-order", "month", "--out", str(tmp_path / "m")])
    assert r.exit_code == 2 and "line 2: date '13/03/2023 09:00' cannot be month first" in " ".join(r.output.split())


def test_job_date_order(tmp_path):
    p = tmp_path / "s.csv"
    _df(["05/03/2023", "05/03/2023", "01/04/2023", "01/04/2023"]).to_csv(p, index=False)
    job = tmp_path / "job.toml"
    text = stream_job(p, tmp_path / "out", l=2, window=0, model='date_order = "day"\n',
                      output=f'audit = "{tmp_path / "audit.csv"}"\n')  # fmt: skip
    job.write_text(text)
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    assert pd.read_csv(tmp_path / "audit.csv")["snapshot"].tolist() == ["2023-03-05"] * 2 + ["2023-04-01"] * 2
    job.write_text(text.replace('"day"', '"ymd"'))
    r = runner.invoke(app, ["run", str(job)])
    msg = " ".join(r.output.split())
    assert r.exit_code == 2 and "line 11: key 'model.date_order'" in msg and "unknown date order" in msg, msg
