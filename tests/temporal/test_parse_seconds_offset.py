"""UTC offsets with seconds (a zone's local mean time: Europe/Amsterdam's ``+00:19:32`` until 1937,
America/New_York's ``-04:56:02`` before 1883, Asia/Kolkata's ``+05:21:10`` before 1906) are Python's own
text of such instants (``str(pandas.Timestamp)``, the numpy path's text of an aware Parquet column), but
pandas parses none of them (NaT). Before, ``timestamped --time`` on such a column was refused on numpy
("cannot parse", or "has no UTC offset" beside ``+05:30`` values) and released on DuckDB, which reads the
typed Parquet values. The oracle: the instants the text was made from, and Python's
``datetime.fromisoformat``."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempanon.data.screen import _looks_like_timestamp
from tempanon.temporal.api import reference_times
from tempanon.temporal.parse import parse_timestamps

ZONES = ["Europe/Amsterdam", "America/New_York", "Asia/Kolkata", "Europe/Dublin", "Africa/Monrovia", "Europe/Paris"]


def _instants(zone: str, n: int = 300) -> pd.Series:
    rng = np.random.default_rng(len(zone))
    secs = rng.integers(pd.Timestamp("1850-01-01").value // 10**9, pd.Timestamp("1990-01-01").value // 10**9, n)
    return pd.Series(pd.to_datetime(secs, unit="s", utc=True)).dt.tz_convert(zone)


@pytest.mark.parametrize("zone", ZONES)
def test_python_text_of_old_instants_parses_to_the_instant(zone):
    """``str`` of random aware instants 1850-1990 (offsets with seconds among them in every zone but
    Paris after 1911) parses back to the same instant, on the zone's wall clock and in UTC."""
    aware = _instants(zone)
    text = aware.map(str)
    assert zone == "Europe/Paris" or text.str.contains(r"[+-]\d\d:\d\d:\d\d$").any()
    secs, missing, info = parse_timestamps(text, "t", zone)
    assert not missing.any() and info["timezone"] == f"converted to {zone}"
    want = aware.dt.tz_localize(None).astype("datetime64[s]").astype(np.int64).to_numpy()
    assert np.array_equal(secs, want)
    utc, _, _ = parse_timestamps(text, "t")
    want_utc = np.array([int(dt.datetime.fromisoformat(v).timestamp()) for v in text])
    assert np.array_equal(utc, want_utc)
    # the verifier's own reading (Python's ISO parser for these values) agrees
    ref = reference_times(text, secs, missing, zone)
    assert np.array_equal(ref.to_numpy().astype("datetime64[s]").astype(np.int64), want)


def test_seconds_offsets_next_to_minute_offsets_are_one_aware_column():
    """Kolkata: ``+05:21:10`` beside ``+05:30``: every value carries an offset (before: "has no UTC
    offset"); a missing value stays missing; a fraction of an offset's second is kept."""
    text = pd.Series(["1900-01-01 12:00:00+05:21:10", "1950-01-01 12:00:00+05:30", "", "1930-03-01 00:00:00+00:19:32.130000"])
    secs, missing, _ = parse_timestamps(text, "t")
    assert missing.tolist() == [False, False, True, False]
    want = [pd.Timestamp("1900-01-01 06:38:50"), pd.Timestamp("1950-01-01 06:30:00"), pd.Timestamp("1930-02-28 23:40:27")]
    assert pd.to_datetime(secs[[0, 1, 3]], unit="s").tolist() == want


def test_a_naive_value_among_seconds_offsets_is_still_refused():
    from tempanon.errors import InputError

    text = pd.Series(["1900-01-01 12:00:00+05:21:10", "1900-01-02 12:00:00+05:21:10", "1900-01-03 12:00:00"])
    with pytest.raises(InputError, match=r"line 4: timestamp '1900-01-03 12:00:00' has no UTC offset"):
        parse_timestamps(text, "t")


def test_screening_sees_timestamps_with_seconds_offsets():
    assert _looks_like_timestamp(_instants("Europe/Amsterdam").map(str))


def _cli(args):
    from typer.testing import CliRunner

    from tempanon.cli import app

    return CliRunner().invoke(app, args)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_timestamped_time_column_with_seconds_offsets_numpy_as_duckdb(tmp_path, fmt):
    """``timestamped --time`` on old Amsterdam instants (an aware Parquet column, or a CSV of Python's
    text): numpy releases, and its release is DuckDB's (before: numpy refused, "cannot parse")."""
    i = np.arange(60)
    t = (pd.Timestamp("1930-03-01", tz="UTC") + pd.to_timedelta(i * 3, unit="D") + pd.to_timedelta(i * 37, unit="min"))
    df = pd.DataFrame({"pid": i % 20, "sex": np.where(i % 2 == 0, "F", "M"), "t": t.tz_convert("Europe/Amsterdam")})
    inp = tmp_path / f"old.{fmt}"
    if fmt == "parquet":
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), inp)
    else:
        df.assign(t=df["t"].map(str)).to_csv(inp, index=False)
    got = {}
    for eng in ("numpy", "duckdb"):
        out = tmp_path / f"{eng}.csv"
        r = _cli(["timestamped", str(inp), "--time", "t", "--qi", "sex", "--k", "2", "--uid", "pid", "--timezone",
                  "Europe/Amsterdam", "--granularities", "day,month,year", "--engine", eng, "--out", str(out), "-q"])  # fmt: skip
        assert r.exit_code == 0, (eng, r.output)
        head, *rows = out.read_text().splitlines()
        got[eng] = [head, *sorted(rows)]
    assert got["numpy"] == got["duckdb"]
    assert any(row.startswith("1930-03") or ",1930-03" in row for row in got["numpy"][1:])
