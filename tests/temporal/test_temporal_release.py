"""Time zones, the steward audit, row order, budgets and bad timestamps of `timestamped` (issues 12, 13, 16)."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import InputError
from tempanon.temporal.api import anonymize_timestamped, read_audit
from tempanon.temporal.generator import example_exams, hospital_exams, paper_table3
from tempanon.temporal.granularity import parse_granularity
from tempanon.temporal.parse import parse_timestamps

runner = CliRunner()


def run(*args):
    return runner.invoke(app, ["timestamped", *map(str, args)])


def labels(values, gran, tz):
    t, miss, info = parse_timestamps(pd.Series(values), "T", tz)
    return list(parse_granularity(gran).labels_of(t)), info


# ---- calendar time zone -----------------------------------------------------------------------
def test_friday_evening_in_new_york_stays_friday_evening():
    v = ["2005-03-11T22:00:00-05:00"]  # Friday 22:00 EST = Saturday 03:00 UTC
    assert labels(v, "day", None)[0] == ["2005-03-12"]  # UTC calendar (default for aware times)
    assert labels(v, "day", "America/New_York")[0] == ["2005-03-11"]
    assert labels(v, "part-of-day", "America/New_York")[0] == ["2005-03-11 evening"]
    assert labels(v, "part-of-day", None)[0] == ["2005-03-12 night"]


def test_days_weeks_and_parts_of_day_follow_dst():
    tz = "America/New_York"
    # spring forward 2005-04-03 02:00 EST -> 03:00 EDT; fall back 2005-10-30 02:00 EDT -> 01:00 EST
    v = ["2005-04-02T23:30:00-05:00",  # Saturday before the change, EST
         "2005-04-03T23:30:00-04:00",  # Sunday (a 23-hour day), EDT: 03:30 UTC on Monday
         "2005-04-04T00:30:00-04:00",  # Monday just after midnight
         "2005-10-30T01:30:00-04:00",  # first 01:30 (EDT)
         "2005-10-30T01:30:00-05:00",  # second 01:30 (EST), one hour later
         "2005-10-30T23:30:00-05:00"]  # Sunday (a 25-hour day) evening: 04:30 UTC on Monday
    day, info = labels(v, "day", tz)
    assert day == ["2005-04-02", "2005-04-03", "2005-04-04", "2005-10-30", "2005-10-30", "2005-10-30"]
    assert labels(v, "week", tz)[0] == ["2005-W13", "2005-W13", "2005-W14", "2005-W43", "2005-W43", "2005-W43"]
    assert labels(v, "part-of-day", tz)[0][3:] == ["2005-10-30 night", "2005-10-30 night", "2005-10-30 evening"]
    assert labels(v, "day", None)[0][1] == "2005-04-04" and labels(v, "week", None)[0][5] == "2005-W44"
    assert info["calendar_timezone"] == tz and "converted to America/New_York" in info["timezone"]
    # naive times are wall-clock times of the calendar zone: unchanged
    assert labels(["2005-04-03 23:30"], "day", tz)[0] == ["2005-04-03"]


def test_timezone_in_api_summary_cli_and_bad_name(tmp_path):
    df = pd.DataFrame({"P": ["a", "b", "c", "d"],
                       "T": ["2005-03-11T18:00:00-05:00", "2005-03-11T20:00:00-05:00",
                             "2005-07-08T19:00:00-04:00", "2005-07-08T21:30:00-04:00"]})  # fmt: skip
    res = anonymize_timestamped(df, time="T", uid="P", k=2, granularities="day,week", timezone="America/New_York")
    assert res.summary["granularity"] == "day" and res.summary["timezone"] == "America/New_York"
    assert sorted(res.released["T"]) == ["2005-03-11", "2005-03-11", "2005-07-08", "2005-07-08"]
    utc = anonymize_timestamped(df, time="T", uid="P", k=2, granularities="day,week")
    assert utc.summary["granularity"] == "week" and "UTC" in utc.summary["timezone"]  # days split at UTC midnight
    assert any("--timezone" in m for m in utc.summary["messages"])
    with pytest.raises(InputError, match="unknown time zone 'Mars/Olympus'"):
        anonymize_timestamped(df, time="T", uid="P", k=2, timezone="Mars/Olympus")
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False)
    out, summ = tmp_path / "o" / "o.csv", tmp_path / "s.json"
    r = run(p, "--uid", "P", "--time", "T", "--k", "2", "--granularities", "day,week", "--timezone", "America/New_York",
            "--out", out, "--summary", summ)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert json.loads(summ.read_text())["timezone"] == "America/New_York"
    assert set(pd.read_csv(out)["T"]) == {"2005-03-11", "2005-07-08"}


# ---- bad timestamps: exit 2, column, file line and value, no traceback ---------------------------
@pytest.mark.parametrize("values, message", [
    (["2005-01-01", "2005-01-02", "1500-06-01"], "line 4: timestamp '1500-06-01' is outside 1677-09-21 00:12:44 .. 2262-04-11 23:47:16"),
    (["2005-01-01", "2999-01-02T10:00"], "line 3: timestamp '2999-01-02T10:00' is outside"),
    (["2005-01-01T10:00+01:00", "2005-01-02T10:00", "2005-01-03T10:00+01:00"],
     "line 3: timestamp '2005-01-02T10:00' has no UTC offset"),
    (["2005-01-01T10:00", "2005-01-01T11:00Z", "2005-01-03T10:00"], "line 3: timestamp '2005-01-01T11:00Z' has a UTC offset"),
    (["2005-01-01", "31.02.2005x"], "line 3: cannot parse timestamp '31.02.2005x'"),
    (["2005-01-01T09:00", "10:00"], "line 3: timestamp '10:00' has a time of day but no date"),
])
def test_bad_timestamps_exit_2_naming_column_line_and_value(tmp_path, values, message):
    p = tmp_path / "t.csv"
    pd.DataFrame({"P": [f"p{i}" for i in range(len(values))], "T": values}).to_csv(p, index=False)
    out = tmp_path / "o.csv"
    r = run(p, "--uid", "P", "--time", "T", "--k", "2", "--out", out)
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    assert "column 'T', " + message in text and "Traceback" not in text
    assert not out.exists()


# ---- row order and the steward audit ---------------------------------------------------------------
def test_release_rows_are_shuffled_within_classes_and_the_audit_maps_them_back():
    df = hospital_exams(400, (3, 8), seed=3)
    res = anonymize_timestamped(df, time="TIME", qi=["GENDER"], uid="PATIENT", k=5,
                                granularities="week,month,quarter,year", shuffle_seed=8_675_309_123_457)  # fmt: skip
    rel = res.released
    pat = df.loc[rel.index, "PATIENT"].to_numpy()
    same_input = float(np.mean(df["PATIENT"].to_numpy()[1:] == df["PATIENT"].to_numpy()[:-1]))
    same_release = float(np.mean(pat[1:] == pat[:-1]))
    assert same_input > 0.7 and same_release < 0.2  # input order groups patients; the release does not
    key = rel["GENDER"].astype(str) + "|" + rel["TIME"].astype(str)
    runs = 1 + int(np.sum(key.to_numpy()[1:] != key.to_numpy()[:-1]))
    assert runs == key.nunique()  # grouped by class: each class is one run of rows
    a = res.audit
    assert list(a["release_row"]) == list(range(1, len(rel) + 1))
    assert (a["respondent"].to_numpy() == pat).all() and (a["input_line"].to_numpy() == rel.index.to_numpy() + 2).all()
    again = anonymize_timestamped(df, time="TIME", qi=["GENDER"], uid="PATIENT", k=5,
                                  granularities="week,month,quarter,year", shuffle_seed=8_675_309_123_457)  # fmt: skip
    assert (again.released.index == rel.index).all()  # the seed reproduces the order
    assert res.shuffle_seed == 8_675_309_123_457 and "8675309123457" not in json.dumps(res.summary, default=str)


def test_cli_audit_is_steward_only_outside_the_release_folder_and_check_uses_it(tmp_path):
    p = tmp_path / "exams.csv"
    example_exams().to_csv(p, index=False)
    (tmp_path / "release").mkdir()
    (tmp_path / "steward").mkdir()
    out, audit = tmp_path / "release" / "o.csv", tmp_path / "steward" / "audit.csv"
    r = run(p, "--uid", "Patient", "--time", "Date", "--qi", "Address", "--allow-identifier", "Address", "--sensitive", "Exam", "--k", "2", "--granularities", "week,quarter",
            "--out", out, "--audit", audit, "-q")  # fmt: skip
    assert r.exit_code == 0, r.output
    text = audit.read_text()
    assert text.startswith("# STEWARD ONLY - DO NOT RELEASE") and "# shuffle seed: " in text.splitlines()[1]
    a = read_audit(audit)
    rel = pd.read_csv(out, dtype=str)
    df = example_exams()
    assert len(a) == len(rel) == len(df)
    src = df.iloc[a["input_line"].astype(int).to_numpy() - 2]
    assert (src["Patient"].to_numpy() == a["respondent"].to_numpy()).all()
    assert (src["Address"].to_numpy() == rel["Address"].to_numpy()).all()
    assert (pd.to_datetime(src["Date"]).dt.strftime("%G-W%V").to_numpy() == rel["Date"].to_numpy()).all()
    # check re-measures respondent-level k on the release through the audit
    c = runner.invoke(app, ["check", str(out), "--qi", "Address,Date", "--uid", "Patient", "--audit", str(audit),
                            "--k", "2", "--json"])  # fmt: skip
    assert c.exit_code == 0, c.output
    got = json.loads(c.output)
    assert got["respondent_k"] == 2 and got["k"] == 2
    c3 = runner.invoke(app, ["check", str(out), "--qi", "Address,Date", "--uid", "Patient", "--audit", str(audit), "--k", "3"])
    assert c3.exit_code == 1  # respondent-level k is 2
    wrong = tmp_path / "steward" / "short.csv"
    wrong.write_text("\n".join(text.splitlines()[:5]) + "\n")
    c4 = runner.invoke(app, ["check", str(out), "--qi", "Address,Date", "--uid", "Patient", "--audit", str(wrong)])
    assert c4.exit_code == 2 and "not this release's audit" in " ".join(c4.output.split())
    # never inside the release folder, never another output
    for bad in (tmp_path / "release" / "audit.csv", out):
        r2 = run(p, "--uid", "Patient", "--time", "Date", "--qi", "Address", "--allow-identifier", "Address", "--sensitive", "Exam", "--k", "2", "--granularities", "week",
                 "--out", tmp_path / "release" / "o2.csv", "--audit", bad)  # fmt: skip
        assert r2.exit_code == 2 and "--audit" in r2.output
    assert not (tmp_path / "release" / "o2.csv").exists()


# ---- budget ----------------------------------------------------------------------------------------
def test_time_limit_stops_with_the_best_verified_result_so_far(monkeypatch):
    import tempanon.temporal.least as least

    clock = iter(range(0, 1000, 10))
    monkeypatch.setattr("time.monotonic", lambda: next(clock))  # each look at the clock: 10 s later
    df = example_exams()
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2,
                                granularities="week,month,quarter,year", time_limit=15, max_suppression=0.0)  # fmt: skip
    s = res.summary
    assert s["budget"]["exhausted"] and any("time limit" in m for m in s["messages"])
    checked = [c["granularity"] for c in s["candidates"] if c.get("evaluated_by_algorithm")]
    assert s["granularity"] in checked and len(checked) < 5
    assert any(c.get("not_checked", "").startswith("not reached") for c in s["candidates"])
    assert least  # the search module the budget lives in
    with pytest.raises(InputError, match="time limit must be a positive"):
        anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2, time_limit=0)


def test_search_size_is_stated_before_the_search(tmp_path):
    p = tmp_path / "t.csv"
    paper_table3().to_csv(p, index=False)
    r = run(p, "--uid", "UID", "--time", "T", "--qi", "Q", "--k", "2", "--granularities", "week,month",
            "--out", tmp_path / "o.csv", "--time-limit", "30")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "searching 3 granularities (the data's day and 2 coarser); at most 30 s (--time-limit)" in r.output


def test_no_solution_hints_do_not_repeat_what_was_tried():
    from tempanon.errors import NoSolutionError

    df = example_exams()
    with pytest.raises(NoSolutionError) as e:
        anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=3, granularities="week,month,quarter,year")
    msg = str(e.value)
    assert "add coarser granularities" not in msg  # month, quarter, year were all tried
    assert "generalize the other quasi-identifiers" in msg and "lower k (the largest k reached without suppression is 2" in msg
    with pytest.raises(NoSolutionError) as e1:
        anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2, granularities="day")
    m = re.search(r"allow suppression of at least 2 of (\d+) tuples \(max_suppression ([0-9.]+); the fewest below "
                  r"k, at day\)", str(e1.value))  # fmt: skip
    assert m, str(e1.value)
    # the fraction named is the one to give: it allows the 2 tuples, and the run then succeeds
    frac = float(m.group(2))
    assert int(frac * int(m.group(1)) + 1e-9) >= 2
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2,
                                granularities="day", max_suppression=frac)  # fmt: skip
    assert res.summary["suppressed"] == 2 and len(res.released) == len(df) - 2
    with pytest.raises(NoSolutionError) as e2:
        anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=3, granularities="week,month")
    assert "add coarser granularities (quarter, semester, year)" in str(e2.value)


def test_report_states_the_time_zone_and_the_chosen_granularity_is_k_anonymous(tmp_path):
    from tempanon.report.timestamped import timestamped_report

    df = example_exams()
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2, granularities="week,2weeks,month,year",
                                timezone="Europe/Rome")  # fmt: skip
    html = timestamped_report(df, res, source="x", checksum=None).render()
    assert "Europe/Rome" in html
    table = html.split("every candidate granularity")[1]
    row = table.split("<td>month</td>")[1].split("</tr>")[0]
    assert "chosen" in row and "<td>yes</td>" in row
    assert "implied: coarser than the k-anonymous week" in table  # 2weeks pruned, not re-checked


def test_verifier_rederives_local_times_independently(monkeypatch):
    """The verifier's original times come from pandas' tz_convert of the text, not from the
    search's seconds: a parse that ignored the calendar zone would be rejected (exit 3)."""
    from tempanon.errors import VerificationError
    import tempanon.temporal.api as api
    from tempanon.temporal import parse

    df = pd.DataFrame({"P": ["a", "b", "c", "d"],
                       "T": ["2005-03-11T18:00:00+00:00", "2005-03-11T20:00:00+00:00",
                             "2005-07-08T03:00:00+00:00", "2005-07-08T05:30:00+00:00"]})  # fmt: skip
    ok = anonymize_timestamped(df, time="T", uid="P", k=2, granularities="day,week", timezone="America/New_York")
    assert sorted(ok.released["T"]) == ["2005-03-11", "2005-03-11", "2005-07-07", "2005-07-08"] or ok.summary["granularity"] != "day"
    real = parse.parse_timestamps
    monkeypatch.setattr(api, "parse_timestamps", lambda s, c, tz=None, **kw: real(s, c, None, **kw))  # a parse that forgets the zone
    with pytest.raises(VerificationError):
        anonymize_timestamped(df, time="T", uid="P", k=2, granularities="day,week", timezone="America/New_York")


def test_joint_search_takes_the_engine_budget():
    from tempanon.hierarchy import build_suppression

    df = example_exams()
    hier = {"Address": build_suppression("Address", df["Address"])}
    full = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=3, granularities="week,month,year",
                                 hierarchies=hier, time_limit=600)  # fmt: skip
    assert "budget" not in full.summary
    cut = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=3, granularities="week,month,year",
                                hierarchies=hier, time_limit=1e-9)  # fmt: skip
    assert cut.summary["budget"]["exhausted"] and any("time limit" in m for m in cut.summary["messages"])
    rel = cut.released.assign(P=df.loc[cut.released.index, "Patient"].to_numpy())
    assert rel.groupby(["Address", "Date"], dropna=False)["P"].nunique().min() >= 3  # still a verified release


def test_joint_release_is_grouped_by_class_and_shuffled():
    from tempanon.hierarchy import build_suppression

    df = example_exams()
    hier = {"Address": build_suppression("Address", df["Address"])}
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2, granularities="week,month,year",
                                hierarchies=hier, shuffle_seed=5)  # fmt: skip
    key = (res.released["Address"].astype(str) + "|" + res.released["Date"].astype(str)).to_numpy()
    assert 1 + int((key[1:] != key[:-1]).sum()) == len(set(key))
    assert list(res.released.index) != sorted(res.released.index)  # not in input order
    assert list(res.audit["input_line"]) == list(res.released.index + 2)


def test_time_limit_with_nothing_anonymous_yet_falls_back_on_the_coarsest(monkeypatch):
    clock = iter(range(0, 1000, 10))
    monkeypatch.setattr("time.monotonic", lambda: next(clock))
    df = example_exams()
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], sensitive=["Exam"], uid="Patient", k=2,
                                granularities="week,month,quarter,year", time_limit=5)  # fmt: skip
    s = res.summary
    # day checked, then only the top of the DAG: week (ISO weeks straddle years) and year; week <=_c year
    evaluated = sorted(c["granularity"] for c in s["candidates"] if c.get("evaluated_by_algorithm"))
    assert s["budget"]["exhausted"] and evaluated == ["day", "week", "year"] and s["granularity"] == "week"



from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = st.sampled_from(["2005", "-", "01", "13", "31", "T", " ", ":", "10", "99", "Z", "+", "05", "00", ".", "x",
                           "1500", "3000", "NaT", "", "/", "24", "60"])


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.lists(_PIECES, max_size=8).map("".join), min_size=1, max_size=6),
       tz=st.sampled_from([None, "UTC", "America/New_York"]))
@example(values=["20050520052005-2005T"], tz=None)  # pandas read an offset (-20:05) the offset pattern does not see
def test_parse_timestamps_fails_only_with_a_clear_input_error(values, tz):
    try:
        t, miss, info = parse_timestamps(pd.Series(values), "T", tz)
    except InputError as exc:
        assert "column 'T'" in str(exc) and "line " in str(exc)
        return
    assert len(t) == len(values) and t.dtype == np.int64
    assert all(v.strip() == "" for v, m in zip(values, miss) if m)  # only empty cells are missing
