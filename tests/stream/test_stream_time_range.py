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
