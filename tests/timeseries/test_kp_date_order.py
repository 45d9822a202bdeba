"""``--date-order auto|day|month`` for kp's long format (``tempanon kp --long --date-order``,
``long_to_wide(date_order=)``, a kp job's ``[model] date_order``): the ``--time`` values' numeric dates
are read as ``timestamped`` reads them (:func:`tempanon.temporal.parse.day_month_order`). Before, the
long format always decided by itself (``auto``) and an undecided column was read month first with a
warning that could only say "write the times as YYYY-MM-DD"."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import InputError, TempanonWarning
from tempanon.temporal.parse import parse_timestamps
from tempanon.timeseries.api import kp_anonymize
from tempanon.timeseries.data import random_walk
from tempanon.timeseries.longformat import long_to_wide

runner = CliRunner()

# every value could be day or month first, and the two readings order them differently
TIMES = ["01/02/2023", "02/01/2023", "03/02/2023", "02/03/2023", "05/04/2023", "04/05/2023"]
ORDERED = {
    "day": ["02/01/2023", "01/02/2023", "03/02/2023", "02/03/2023", "05/04/2023", "04/05/2023"],  # 2 Jan, 1 Feb, ...
    "month": ["01/02/2023", "02/01/2023", "02/03/2023", "03/02/2023", "04/05/2023", "05/04/2023"],  # Jan 2, Feb 1, ...
}
ORDERED["auto"] = ORDERED["month"]  # undecided: month first, with a note


def _long(n: int = 40) -> pd.DataFrame:
    """One row per (patient, time), the readings of a random walk in the *day-first* time order, rows shuffled."""
    wide = random_walk(n, len(TIMES), seed=3)
    rows = [(r.id, t, getattr(r, f"A{ORDERED['day'].index(t)}"), r.S) for r in wide.itertuples() for t in TIMES]
    return pd.DataFrame(rows, columns=["patient", "day", "reading", "S"]).sample(frac=1, random_state=5).reset_index(drop=True)


def _csv(tmp_path, df: pd.DataFrame) -> str:
    p = tmp_path / "long.csv"
    df.to_csv(p, index=False)
    return str(p)


def _sorted(rel: pd.DataFrame) -> list:
    """The release as a sorted list of rows without the group numbers (the order of the groups and of the
    rows inside them is a shuffle, the job's with a fresh seed)."""
    return sorted(map(tuple, rel.drop(columns=["kgroup", "psubgroup"]).astype(str).to_numpy().tolist()))


@pytest.mark.parametrize("order", ["auto", "day", "month"])
def test_long_to_wide_orders_the_times_in_the_order_given(order):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TempanonWarning)
        wide, times = long_to_wide(_long(), entity="patient", time="day", value="reading", keep=["S"], date_order=order)
    assert times == ORDERED[order]
    assert wide.attrs["time_order"] == "timestamps" and wide.attrs["date_order"] == ("month" if order == "auto" else order)
    notes = [str(w.message) for w in caught if "could be day or month first" in str(w.message)]
    if order == "auto":  # undecided: read month first, and said so (with the option that decides it)
        assert wide.attrs["date_order_note"] == notes[0] and len(notes) == 1
        assert "read month first" in notes[0] and "pass --date-order day if" in notes[0] and "column 'day'" in notes[0]
    else:
        assert not notes and wide.attrs["date_order_note"] is None
    # day first: each series' readings in the walk's order (the readings were written in the day-first order)
    w = wide.set_index("patient")
    walk = random_walk(40, len(TIMES), seed=3).set_index("id")
    expect = walk[[f"A{ORDERED['day'].index(t)}" for t in times]].to_numpy()
    assert np.array_equal(w.loc[walk.index, times].to_numpy(dtype=float), expect)
    if order == "day":  # the walk's own order: A0, A1, ...
        assert [ORDERED["day"].index(t) for t in times] == list(range(len(TIMES)))


@pytest.mark.parametrize("order", ["day", "month"])
def test_the_same_reading_as_timestamped(order):
    """The long format orders its times as the instants ``timestamped`` reads from the same texts."""
    inst, _, info = parse_timestamps(pd.Series(TIMES), "day", date_order=order)
    assert info["date_order"] == order
    by_timestamped = [TIMES[i] for i in np.argsort(inst, kind="stable")]
    assert long_to_wide(_long(), entity="patient", time="day", value="reading", date_order=order)[1] == by_timestamped
    # day first evidence (13/01/2023) decides auto as it decides timestamped
    times = ["13/01/2023", "05/02/2023", "02/03/2023", "01/04/2023"]
    df = pd.DataFrame({"e": ["a"] * 4 + ["b"] * 4, "t": times[::-1] * 2, "v": range(8)})
    inst, _, info = parse_timestamps(pd.Series(times[::-1]), "t")
    assert info["date_order"] == "day"
    assert long_to_wide(df, entity="e", time="t", value="v")[1] == [times[::-1][i] for i in np.argsort(inst)] == times


def _job(tmp_path, data: str, order: str | None, qi: str) -> str:
    job = tmp_path / f"job-{order}.toml"
    job.write_text(f'''
[input]
path = "{data}"

[columns]
uid = "patient"
quasi_identifiers = ["{qi}"]
sensitive = ["S"]

[model]
name = "kp"
k = 5
p = 3
long_time = "day"
long_value = "reading"
{'' if order is None else f'date_order = "{order}"'}

[output]
table = "rel-job-{order}.csv"
summary = "sum-job-{order}.json"
''')
    return str(job)


@pytest.mark.parametrize("order", ["day", "month", "auto"])
def test_cli_api_and_job_give_the_same_release(tmp_path, order):
    df = _long()
    data = _csv(tmp_path, df)
    # the API: the long format pivoted in the order given, then anonymized
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TempanonWarning)
        wide, times = long_to_wide(df, entity="patient", time="day", value="reading", keep=["S"], date_order=order)
    api = kp_anonymize(wide, id_col="patient", qi=times, k=5, P=3, sensitive=["S"], shuffle_seed=0).released
    api_csv = tmp_path / "rel-api.csv"
    api.to_csv(api_csv, index=False)
    # the command
    out, summ = tmp_path / "rel-cli.csv", tmp_path / "sum-cli.json"
    r = runner.invoke(app, ["kp", data, "--long", "--entity", "patient", "--time", "day", "--value", "reading", "--sensitive",
                            "S", "--k", "5", "--p", "3", "--date-order", order, "--shuffle-seed", "0", "--out", str(out),
                            "--summary", str(summ)])  # fmt: skip
    assert r.exit_code == 0, r.output
    # the job (the quasi-identifiers as a range of time values: in the time order read)
    qi = f"{ORDERED[order][0]}:{ORDERED[order][-1]}"
    r2 = runner.invoke(app, ["run", _job(tmp_path, "long.csv", order, qi)])
    assert r2.exit_code == 0, r2.output
    rels = [pd.read_csv(p) for p in (api_csv, out, tmp_path / f"rel-job-{order}.csv")]
    lo = [f"{t}_lo" for t in ORDERED[order]]
    for rel in rels:
        assert [c for c in rel.columns if c.endswith("_lo")] == lo  # the release's columns in time order
    assert _sorted(rels[0]) == _sorted(rels[1]) == _sorted(rels[2])
    s_cli = json.loads(summ.read_text())
    s_job = json.loads((tmp_path / f"sum-job-{order}.json").read_text())
    first = "month first" if order == "auto" else f"{order} first"
    assert s_cli["date_order"] == s_job["date_order"] == first and s_cli["time_order"] == s_job["time_order"] == "timestamps"
    for key in ("kgroups", "psubgroups", "published"):
        assert s_cli[key] == s_job[key], key
    for key in ("value_loss", "pattern_loss"):  # (sums over the rows: their order moves the last digit)
        assert s_cli[key] == pytest.approx(s_job[key], rel=1e-12), key
    note = "every numeric date could be day or month first"
    if order == "auto":  # the command says the note once, with its option; the job once, with its key
        assert " ".join(r.output.split()).count(note) == 1 and "--date-order day" in r.output
        assert r2.output.count(note) == 1 and 'in the job file: date_order = "day"' in r2.output
    else:
        assert note not in r.output and note not in r2.output


def test_day_and_month_give_different_releases(tmp_path):
    data = _csv(tmp_path, _long())
    rels = {}
    for order in ("day", "month"):
        out = tmp_path / f"{order}.csv"
        r = runner.invoke(app, ["kp", data, "--long", "--entity", "patient", "--time", "day", "--value", "reading",
                                "--sensitive", "S", "--k", "5", "--p", "3", "--date-order", order, "--out", str(out), "-q"])  # fmt: skip
        assert r.exit_code == 0, r.output
        rels[order] = pd.read_csv(out)
        assert [c for c in rels[order].columns if c.endswith("_lo")] == [f"{t}_lo" for t in ORDERED[order]]
    # the patterns (SAX words over the series in time order) differ: the series were read in another order
    assert sorted(rels["day"]["pattern"]) != sorted(rels["month"]["pattern"])


UNREADABLE = [
    # (times, order, the error)
    (["05/02/2023", "13/02/2023", "01/03/2023"], "month",
     "column 'day', line {line}: date '13/02/2023' cannot be month first (first part 13 is not a month)"),
    (["02/05/2023", "02/13/2023", "03/01/2023"], "day",
     "column 'day', line {line}: date '02/13/2023' cannot be day first (second part 13 is not a month)"),
    (["05/02/2023", "31/02/2023", "01/03/2023"], "day",
     "column 'day', line {line}: cannot parse timestamp '31/02/2023' (--date-order day"),
]


def _bad_long(times: list[str]) -> tuple[pd.DataFrame, int]:
    """A long table with ``times`` (the second unreadable) and the file line of its first row with it."""
    df = pd.DataFrame([(f"p{i}", t, float(i + j), 1.0) for i in range(6) for j, t in enumerate(times)],
                      columns=["patient", "day", "reading", "S"])  # fmt: skip
    return df, int(np.flatnonzero((df["day"] == times[1]).to_numpy())[0]) + 2


@pytest.mark.parametrize("times, order, message", UNREADABLE)
def test_unreadable_value_named_on_api_cli_and_job(tmp_path, times, order, message):
    df, line = _bad_long(times)
    message = message.format(line=line)
    with pytest.raises(InputError) as e:
        long_to_wide(df, entity="patient", time="day", value="reading", date_order=order)
    assert message in str(e.value)
    data = _csv(tmp_path, df)
    out = tmp_path / "o.csv"
    r = runner.invoke(app, ["kp", data, "--long", "--entity", "patient", "--time", "day", "--value", "reading", "--k", "2",
                            "--p", "1", "--date-order", order, "--out", str(out)])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert message in " ".join(r.output.split()) and "Traceback" not in r.output and not out.exists()
    r = runner.invoke(app, ["run", _job(tmp_path, "long.csv", order, f"{times[0]}:{times[-1]}")])
    assert r.exit_code == 2, r.output
    assert message in " ".join(r.output.split()) and "Traceback" not in r.output


def test_auto_refuses_an_unreadable_time_among_dates():
    """``auto``: times that are mostly dates with one that is not (31/02/2023) are refused, naming it (ordered
    as text they put 01/03/2023 before 05/02/2023, out of time order); times that are not dates at all are
    still ordered as text, with a warning."""
    df, _ = _bad_long(["05/02/2023", "31/02/2023", "01/03/2023"])
    with pytest.raises(InputError, match=r"column 'day', line \d+: cannot parse timestamp '31/02/2023'"):
        long_to_wide(df, entity="patient", time="day", value="reading")
    df, _ = _bad_long(["pre", "mid", "post"])
    with pytest.warns(TempanonWarning, match="ordered as text"):
        wide, times = long_to_wide(df, entity="patient", time="day", value="reading")
    assert wide.attrs["time_order"] == "text" and times == sorted(times)


def test_option_errors(tmp_path):
    df = _long(12)
    data = _csv(tmp_path, df)
    out = tmp_path / "o.csv"
    base = ["kp", data, "--long", "--entity", "patient", "--time", "day", "--value", "reading", "--k", "2", "--p", "1",
            "--out", str(out)]  # fmt: skip
    r = runner.invoke(app, [*base, "--date-order", "dmy"])
    assert r.exit_code == 2 and "unknown date order 'dmy'" in r.output and not out.exists()
    wide, _ = long_to_wide(df, entity="patient", time="day", value="reading", date_order="day")
    wide.drop(columns=["patient"]).assign(id=wide["patient"]).to_csv(tmp_path / "wide.csv", index=False)
    r = runner.invoke(app, ["kp", str(tmp_path / "wide.csv"), "--id", "id", "--qi", ",".join(ORDERED["day"]), "--k", "2",
                            "--p", "1", "--date-order", "day", "--out", str(out)])  # fmt: skip
    assert r.exit_code == 2 and "--date-order is for --long" in r.output and not out.exists()
    with pytest.raises(InputError, match="unknown date order 'dmy'"):
        long_to_wide(df, entity="patient", time="day", value="reading", date_order="dmy")
    # the job: the key is checked where it is written, and only with the long format
    job = _job(tmp_path, "long.csv", "dmy", f"{ORDERED['day'][0]}:{ORDERED['day'][-1]}")
    r = runner.invoke(app, ["run", job])
    assert r.exit_code == 2 and "key 'model.date_order'" in r.output and "unknown date order 'dmy'" in r.output
    text = open(job).read().replace('long_time = "day"\nlong_value = "reading"\n', "").replace('"dmy"', '"day"')
    open(job, "w").write(text)
    r = runner.invoke(app, ["run", job])
    assert r.exit_code == 2 and "key 'model.date_order'" in r.output and "long format" in r.output
