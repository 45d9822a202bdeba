"""A time outside the range of nanosecond timestamps (1677-09-21 .. 2262-04-11) in ``stream``'s time
column: pandas parses ``-3`` (year -3), ``2300-01-01`` or ``0001-01-01`` at a coarser resolution,
and the conversion to nanoseconds raised OutOfBoundsDatetime, a traceback (file and standard
input); now refused with the line and the value as ``timestamped`` refuses it (exit 2). Found by
the rebalanced commands fuzz (tests/safety/test_fuzz_commands.py, session 15)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


@pytest.mark.parametrize("value", ["-3", "2300-01-01", "0001-01-01", "2300-03-10T00:00+01:00"])
def test_a_time_out_of_range_is_refused_with_its_line(tmp_path, value):
    first = "2021-03-09T00:00+01:00" if "+" in value else "2021-03-09"
    (tmp_path / "in.csv").write_text(f"pid,t,sex,dx\n1,{first},F,a\n2,{first},M,b\n3,{value},F,c\n")
    r = runner.invoke(app, ["stream", str(tmp_path / "in.csv"), "--time", "t", "--sensitive", "dx", "--l", "2", "--window", "0",
                            "--qi", "sex", "--out", str(tmp_path / "rel")])  # fmt: skip
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    assert f"column 't', line 4: time '{value}' is outside 1677-09-21 00:12:44 .. 2262-04-11 23:47:16" in text, text
    assert not (tmp_path / "rel").exists()


def test_on_standard_input_too(tmp_path):
    lines = [{"pid": 1, "t": "2021-03-09", "sex": "F", "dx": "a"}, {"pid": 2, "t": "2300-01-01", "sex": "M", "dx": "b"}]
    r = runner.invoke(app, ["stream", "-", "--time", "t", "--sensitive", "dx", "--l", "2", "--window", "0", "--qi", "sex",
                            "--out", str(tmp_path / "rel")], input="".join(json.dumps(x) + "\n" for x in lines))  # fmt: skip
    assert r.exit_code == 2, (r.output, repr(r.exception))
    assert "standard input, line 2: time '2300-01-01' is outside" in " ".join(r.output.split())


@pytest.mark.parametrize("value", ["12:30", "7:05:09.5 pm", "23:59:59"])
def test_a_time_of_day_without_a_date_is_refused(tmp_path, value):
    """pandas dates '12:30' today: the stream was published as snapshot <the day of the run>, exit 0
    (found by the acceptance pass uatc); timestamped refuses such values, and so does stream now, on a
    file and on standard input."""
    (tmp_path / "in.csv").write_text(f"t,sex,dx\n2021-03-09 10:00,F,a\n{value},M,b\n")
    opts = ["--time", "t", "--sensitive", "dx", "--l", "2", "--window", "0", "--qi", "sex", "-q"]
    r = runner.invoke(app, ["stream", str(tmp_path / "in.csv"), *opts, "--out", str(tmp_path / "rel")])
    assert r.exit_code == 2, r.output
    assert f"column 't', line 3: time '{value}' has a time of day but no date" in " ".join(r.output.split())
    assert not (tmp_path / "rel").exists()
    lines = "".join(json.dumps({"t": t, "sex": "F", "dx": d}) + "\n" for t, d in (("2021-03-09 10:00", "a"), (value, "b")))
    r = runner.invoke(app, ["stream", "-", *opts, "--out", str(tmp_path / "rel2")], input=lines)
    assert r.exit_code == 2 and f"line 2: time '{value}' has a time of day but no date" in " ".join(r.output.split()), r.output


@pytest.mark.parametrize("value,why", [("inf", "too large"), ("1e30", "too large"), ("18446744073709551615", "too large"),
                                       ("1.5", "")])  # fmt: skip
def test_a_snapshot_number_beyond_64_bits_is_refused(tmp_path, value, why):
    """--snapshot number: 'inf' was a traceback (IntCastingNaNError) and '1e30' wrapped around to -2**63,
    then a traceback counting the span (found by the acceptance pass uatc)."""
    (tmp_path / "in.csv").write_text(f"t,sex,dx\n1,F,a\n{value},M,b\n")
    r = runner.invoke(app, ["stream", str(tmp_path / "in.csv"), "--time", "t", "--sensitive", "dx", "--l", "2", "--window", "0",
                            "--qi", "sex", "--snapshot", "number", "--out", str(tmp_path / "rel")])  # fmt: skip
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and f"column 't', line 3: '{value}' is not an integer snapshot number" in text, text
    assert why in text


@pytest.mark.parametrize("unit,times,n", [("minute", ("1700-01-01", "2260-01-01"), "294,530,401"),
                                          ("number", ("-4611686018427387904", "4611686018427387904"), "9,223,372,036,854,775,809")])  # fmt: skip
def test_a_span_too_large_is_refused_before_the_grid_is_built(tmp_path, unit, times, n):
    """The grid of every snapshot was built before its size was checked: minutes from 1700 to 2260 are
    294,530,401 timestamps (2.4 GB), and numbers spanning more than 2**63 a traceback (OverflowError)."""
    from tempanon.stream.snapshots import index_snapshots
    import pandas as pd
    from tempanon.errors import InputError

    with pytest.raises(InputError, match=f"the stream spans {n} {unit} snapshots"):
        index_snapshots(pd.Series(times), "t", unit)


def test_messages_show_numpy_cells_as_python_values():
    """A DataFrame's int or bool time column: the message showed numpy's repr, "np.int64(1577836800) is not a
    date/time" (found by the acceptance pass uatc); integers now also point to --snapshot number."""
    import pandas as pd

    from tempanon.errors import InputError
    from tempanon.stream import anonymize_stream

    for t, shown in (([1577836800, 1577923200], "1577836800 is not a date/time; a column of snapshot numbers needs --snapshot number"),
                     ([True, False], "True is not a date/time")):  # fmt: skip
        df = pd.DataFrame({"t": t, "s": ["a", "b"], "q": ["x", "y"]})
        with pytest.raises(InputError) as exc:
            anonymize_stream(df, time="t", sensitive="s", qi="q", l=2, w=1)
        assert str(exc.value) == f"column 't', line 2: {shown}"
