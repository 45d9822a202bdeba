"""Date/times written with several UTC offsets, as a zone with daylight saving time writes them (a
Parquet timestamp in America/New_York read as text: ``...-05:00`` in winter, ``...-04:00`` in
summer). pandas refuses to parse such texts together ("Mixed timezones detected"): ``tempanon init``
and the dates builder (``hierarchies.<col> = { type = "dates" }``, so ``tempanon run``) ended with a
traceback (found 2026-11-27 on a Parquet file with a New York column). Each value is now parsed at
its own wall clock (``parse_wall_clock``)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.hierarchy.builders import build_dates, parse_wall_clock

runner = CliRunner()

# 2021-03-14 is the day New York moves from -05:00 to -04:00 (02:00 local does not exist)
ACROSS_DST = ["2021-03-14 01:30:00-05:00", "2021-03-14 03:15:00-04:00", "2021-01-02 23:59:59.250000-05:00",
              "2021-07-04 12:00:00Z"]  # fmt: skip


def test_parse_wall_clock_keeps_each_values_wall_clock():
    parsed = parse_wall_clock(ACROSS_DST)
    assert not parsed.isna().any()
    assert parsed.dt.strftime("%Y-%m-%d %H:%M:%S").tolist() == [
        "2021-03-14 01:30:00", "2021-03-14 03:15:00", "2021-01-02 23:59:59", "2021-07-04 12:00:00"]  # fmt: skip
    # one offset: as pandas parses it (aware, that offset); unparsable text stays missing
    one = parse_wall_clock(["2021-03-14 03:15:00-04:00", "2021-03-15 03:15:00-04:00", "soon"])
    assert str(one.dt.tz) == "UTC-04:00" and one.isna().tolist() == [False, False, True]
    # a date without a time is not cut at its day ("-14" is no offset)
    assert parse_wall_clock(["2021-03-14", "2021-03-14 03:15:00-04:00", "2021-03-14 01:00:00-05:00"]).dt.day.tolist() == [14, 14, 14]


def test_dates_builder_levels_are_the_written_days_and_hours():
    h = build_dates("ts", ACROSS_DST)
    levels = [h.mapping(level) for level in range(1, 5)]
    assert [m["2021-03-14 03:15:00-04:00"] for m in levels] == ["2021-03-14 03:15", "2021-03-14", "2021-03", "2021"]
    assert [m["2021-03-14 01:30:00-05:00"] for m in levels[:2]] == ["2021-03-14 01:30", "2021-03-14"]
    assert [m["2021-01-02 23:59:59.250000-05:00"] for m in levels[:2]] == ["2021-01-02 23:59", "2021-01-02"]


def test_init_and_run_on_a_new_york_parquet_column(tmp_path):
    instants = [1609459200 + i * 86400 * 3 + (i % 24) * 3600 for i in range(150)]  # 2021: both offsets
    src = tmp_path / "visits.parquet"
    pq.write_table(pa.table({
        "sex": ["MF"[i % 2] for i in range(150)],
        "visit": pa.array([t * 1_000_000 for t in instants], pa.timestamp("us")).cast(pa.timestamp("us", tz="America/New_York")),
    }), src)  # fmt: skip
    r = runner.invoke(app, ["init", str(src)])
    assert r.exit_code == 0, r.output
    job = (tmp_path / "visits.job.toml").read_text()
    assert 'visit = { type = "dates"' in job and "visit: date" in job, job
    r = runner.invoke(app, ["run", str(tmp_path / "visits.job.toml")])
    assert r.exit_code == 0, r.output
    assert "verified: 5-anonymity" in " ".join(r.output.split())
