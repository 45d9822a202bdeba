"""Boundary files (``file:<path>`` granularities) read their numeric dates in the timestamped
command's ``--date-order`` (API ``date_order``, a job's ``[model] date_order``), the order of the
data's time column: before, a boundary file always decided by itself, so a day-first time column
(decided by 13/01/2023) beside a boundary file whose values could be either was cut by terms read
month first. ``auto`` still decides per file (with a note when undecided); ``day`` / ``month`` read
every value so and refuse one that cannot be read so, naming the file, column, line and value."""

from __future__ import annotations

import json
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import InputError, TempanonWarning
from tempanon.temporal.api import anonymize_timestamped
from tempanon.temporal.granularity import boundaries_from_file, parse_granularity
from tempanon.temporal.parse import parse_timestamps

runner = CliRunner()

# 06/02/2023 could be day or month first (01/01 is the same day either way): day first T1 = [1 Jan, 6 Feb),
# T2 = [6 Feb, 1 Jan 2024); month first T1 = [1 Jan, 2 Jun), T2 = [2 Jun, 1 Jan 2024)
TERMS = "label,start,end\nT1,01/01/2023,06/02/2023\nT2,06/02/2023,01/01/2024\n"
VISITS = ["2023-01-10", "2023-01-20", "2023-01-30", "2023-03-01", "2023-04-01", "2023-05-01", "2023-07-01",
          "2023-08-01", "2023-09-01"]  # fmt: skip
TERM_OF = {"day": Counter({"T1": 3, "T2": 6}), "month": Counter({"T1": 6, "T2": 3})}
TERM_OF["auto"] = TERM_OF["month"]  # undecided: month first, with a note


def _terms(tmp_path, text: str = TERMS) -> str:
    p = tmp_path / "terms.csv"
    p.write_text(text)
    return str(p)


def _data(tmp_path, visits=VISITS) -> str:
    p = tmp_path / "visits.csv"
    p.write_text("pid,visit\n" + "".join(f"p{i},{v}\n" for i, v in enumerate(visits)))
    return str(p)


def _days(instants) -> list[str]:
    return list(pd.to_datetime(np.asarray(instants), unit="s").strftime("%Y-%m-%d"))


@pytest.mark.parametrize("order", ["auto", "day", "month"])
def test_boundaries_read_in_the_order_given_as_timestamped_reads_them(tmp_path, order):
    path = _terms(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TempanonWarning)
        g = boundaries_from_file(path, date_order=order)
    expect = {"day": ["2023-01-01", "2023-02-06"], "month": ["2023-01-01", "2023-06-02"]}
    assert _days(g.starts) == expect["month" if order == "auto" else order]
    # the same instants as timestamped's reading of the same texts in that order
    for col, got in (("start", g.starts), ("end", g.ends)):
        texts = pd.read_csv(path, dtype=str)[col]
        assert np.array_equal(parse_timestamps(texts, col, date_order=order)[0], got)
    notes = [str(w.message) for w in caught if "could be day or month first" in str(w.message)]
    if order == "auto":
        assert len(notes) == 1 and notes[0].startswith(f"boundary file {path}: column 'start/end'")
        assert "read month first, line 3 ('06/02/2023') as 2 June; if it is 6 February, pass --date-order day" in notes[0]
    else:
        assert not notes
    with warnings.catch_warnings():  # parse_granularity passes it on
        warnings.simplefilter("ignore", TempanonWarning)
        assert np.array_equal(parse_granularity(f"file:{path}", date_order=order).starts, g.starts)


@pytest.mark.parametrize("order", ["day", "month", "auto"])
def test_cli_api_and_job_give_the_same_release(tmp_path, order):
    terms, data = _terms(tmp_path), _data(tmp_path)
    df = pd.read_csv(data, dtype=str)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TempanonWarning)
        api = anonymize_timestamped(df, time="visit", uid="pid", k=3, granularities=f"file:{terms}", date_order=order)
    out, summ = tmp_path / "cli.csv", tmp_path / "cli.json"
    out_dk = tmp_path / "duckdb.csv"
    job = tmp_path / "job.toml"
    job.write_text(f'[input]\npath = "visits.csv"\n\n[columns]\nuid = "pid"\ntime = "visit"\n\n[model]\nname = "timestamped"\n'
                   f'k = 3\ngranularities = ["file:{terms}"]\ndate_order = "{order}"\n\n[output]\ntable = "job.csv"\n')  # fmt: skip
    runs = {
        "cli": ["timestamped", data, "--uid", "pid", "--time", "visit", "--k", "3", "--granularities", f"file:{terms}",
                "--date-order", order, "--out", str(out), "--summary", str(summ)],
        "duckdb": ["timestamped", data, "--uid", "pid", "--time", "visit", "--k", "3", "--granularities", f"file:{terms}",
                   "--date-order", order, "--engine", "duckdb", "--out", str(out_dk)],
        "job": ["run", str(job)],
    }  # fmt: skip
    for name, args in runs.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TempanonWarning)
            r = runner.invoke(app, args)
        assert r.exit_code == 0, (name, r.output)
        # auto: the undecided file said once, as a note of the run (in its summary too), not warned (the job's
        # check of its granularities before the run says nothing)
        assert not [w for w in caught if str(w.message).startswith(f"boundary file {terms}")], name
        said = " ".join(r.output.split()).count(f"note: boundary file {terms}: column 'start/end'")
        assert said == (order == "auto"), (name, r.output)
    released = [Counter(api.released["visit"])] + [Counter(pd.read_csv(p, dtype=str)["visit"])
                                                    for p in (out, out_dk, tmp_path / "job.csv")]  # fmt: skip
    assert released == [TERM_OF[order]] * 4
    assert json.loads(summ.read_text())["granularity"] == "file:terms"


def test_day_first_time_column_and_boundaries_in_one_order(tmp_path):
    """The case that needed the option: the time column is day first (20/01/2023), the boundary file
    could be either. ``auto`` reads the file month first, and says so; ``--date-order day`` reads both
    day first: the terms the data steward meant."""
    terms = _terms(tmp_path)
    data = _data(tmp_path, [pd.Timestamp(v).strftime("%d/%m/%Y") for v in VISITS])
    out = tmp_path / "o.csv"
    base = ["timestamped", data, "--uid", "pid", "--time", "visit", "--k", "3", "--granularities", f"file:{terms}",
            "--out", str(out)]  # fmt: skip
    for extra, terms_read in (([], "month"), (["--date-order", "day"], "day")):
        r = runner.invoke(app, [*base, *extra])
        assert r.exit_code == 0, r.output
        assert Counter(pd.read_csv(out, dtype=str)["visit"]) == TERM_OF[terms_read]
        notes = [n for n in " ".join(r.output.split()).split("note: ")[1:] if "could be day or month first" in n]
        # (the time column itself is decided, day first: the only note is the boundary file's)
        assert len(notes) == (not extra) and all(n.startswith(f"boundary file {terms}") for n in notes), r.output


UNREADABLE = [
    # (the file, the order, the error after "boundary file <path>: ")
    ("label,start,end\nT1,01/01/2023,13/02/2023\nT2,01/03/2023,12/11/2023\n", "month",
     "column 'end', line 2: date '13/02/2023' cannot be month first (first part 13 is not a month)"),
    ("label,start,end\nT1,01/01/2023,02/06/2023\nT2,02/06/2023,11/13/2023\n", "day",
     "column 'end', line 3: date '11/13/2023' cannot be day first (second part 13 is not a month)"),
    ("label,start,end\nT1,01/01/2023,31/02/2023\nT2,03/03/2023,12/11/2023\n", "day",
     "column 'end', line 2: cannot parse timestamp '31/02/2023'"),
]


@pytest.mark.parametrize("text, order, message", UNREADABLE)
def test_unreadable_boundary_named_on_api_cli_and_job(tmp_path, text, order, message):
    terms, data = _terms(tmp_path, text), _data(tmp_path)
    message = f"boundary file {terms}: {message}"
    with pytest.raises(InputError) as e:
        boundaries_from_file(terms, date_order=order)
    assert message in str(e.value)
    df = pd.read_csv(data, dtype=str)
    with pytest.raises(InputError) as e:
        anonymize_timestamped(df, time="visit", uid="pid", k=3, granularities=f"file:{terms}", date_order=order)
    assert message in str(e.value)
    out = tmp_path / "o.csv"
    r = runner.invoke(app, ["timestamped", data, "--uid", "pid", "--time", "visit", "--k", "3", "--granularities",
                            f"file:{terms}", "--date-order", order, "--out", str(out)])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert message in " ".join(r.output.split()) and "Traceback" not in r.output and not out.exists()
    job = tmp_path / "job.toml"
    job.write_text(f'[input]\npath = "visits.csv"\n\n[columns]\nuid = "pid"\ntime = "visit"\n\n[model]\nname = "timestamped"\n'
                   f'k = 3\ngranularities = ["file:{terms}"]\ndate_order = "{order}"\n\n[output]\ntable = "job.csv"\n')  # fmt: skip
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 2, r.output
    flat = " ".join(r.output.split())
    assert "key 'model.granularities'" in flat and message in flat and not (tmp_path / "job.csv").exists()


def test_data_granularity_file_and_time_granularities_take_the_order(tmp_path):
    """A boundary file as the data granularity, and the kanon encoder :class:`TimeGranularities`, read it
    in the order given too."""
    from tempanon.temporal.joint import TimeGranularities
    from tempanon.temporal.parse import data_granularity_of

    terms = _terms(tmp_path)
    for order, first_end in (("day", "2023-02-06"), ("month", "2023-06-02")):
        g = data_granularity_of(f"file:{terms}", np.zeros(1, dtype=np.int64), np.zeros(1, dtype=bool), date_order=order)
        assert _days(g.ends)[0] == first_end
    bad = _terms(tmp_path, UNREADABLE[0][0])  # 13/02/2023: day first only
    series = pd.Series(VISITS, name="visit")
    TimeGranularities(f"file:{bad}").encode(series)  # auto: read day first
    with pytest.raises(InputError, match=f"boundary file {bad}: column 'end', line 2: date '13/02/2023' cannot be month"):
        TimeGranularities(f"file:{bad}", date_order="month").encode(series)
