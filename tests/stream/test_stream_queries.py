"""Window queries, workload generator, relative error; publisher API behaviour; shared data (skips)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from shared_data import shared_data  # tests/shared_data.py
from tempanon.errors import InputError
from tempanon.stream.api import anonymize_stream
from tempanon.stream.publisher import StreamPublisher
from tempanon.stream.queries import WindowQuery, answer_workload, generate_workload

DATA = shared_data("snapshots") or Path("/nonexistent")


def _eligible_stream(days=6, per_day=6):
    rows = []
    for d in range(days):
        for i in range(per_day):
            rows.append({"t": f"2021-03-{d + 1:02d} {i:02d}:00", "s": "abc"[i % 3], "sex": "FM"[i % 2], "zip": str(i % 3)})
    return pd.DataFrame(rows)


def test_estimate_is_exact_without_qi_predicate_and_without_loss():
    df = _eligible_stream()
    r = anonymize_stream(df, time="t", sensitive="s", l=3, w=0, snapshot="day")
    assert r.summary["suppressed"] == 0 and r.summary["information_loss"] == 0
    qs = [WindowQuery((), v, a, b) for v in "abc" for a in range(6) for b in range(a, 6)]
    ans = answer_workload(qs, df, r.row_snapshot, "s", r.qit, r.st, r.labels)
    assert np.allclose(ans.actual, ans.estimate)
    assert np.all(ans.relative_error < 1e-12)


def test_anatomy_estimate_by_hand():
    qit = pd.DataFrame({"snapshot": ["d1"] * 4, "sex": ["F", "M", "F", "F"], "group": [1, 1, 2, 2]})
    st = pd.DataFrame({"snapshot": ["d1"] * 4, "group": [1, 1, 2, 2], "s": ["a", "b", "a", "c"], "count": [1, 1, 1, 1]})
    df = pd.DataFrame({"sex": ["F", "M", "F", "F"], "s": ["a", "b", "c", "a"]})
    q = [WindowQuery((("sex", "F"),), "a", 0, 0)]
    ans = answer_workload(q, df, np.zeros(4, dtype=int), "s", qit, st, ["d1"])
    # F rows: one in group 1 (share of a = 1/2), two in group 2 (share 1/2 each) -> 1.5; actual 2
    assert ans.estimate[0] == pytest.approx(1.5) and ans.actual[0] == 2
    assert ans.relative_error[0] == pytest.approx(0.25)


def test_workload_generator():
    df = _eligible_stream()
    snap = np.repeat(np.arange(6), 6)
    qs = generate_workload(df, snap, ["sex", "zip"], "s", n_queries=50, qd=2, span=3, seed=1)
    assert len(qs) == 50 and all(len(q.predicate) == 2 and q.b - q.a <= 2 for q in qs)
    assert qs == generate_workload(df, snap, ["sex", "zip"], "s", n_queries=50, qd=2, span=3, seed=1)
    r = anonymize_stream(df, time="t", sensitive="s", l=3, w=1, snapshot="day")
    ans = answer_workload(qs, df, r.row_snapshot, "s", r.qit, r.st, r.labels)
    assert np.all(ans.actual >= 1)
    with pytest.raises(InputError, match="qd"):
        generate_workload(df, snap, ["sex"], "s", qd=3)


def test_publisher_push_and_flush_delay():
    pub = StreamPublisher(2, 2, sensitive="s", qi=["q"])
    outs = []
    for t in range(5):
        got = pub.push(pd.DataFrame({"q": [t, t], "s": ["a", "b"]}, index=[2 * t, 2 * t + 1]), label=f"d{t}")
        # snapshot t - w pops when D[t] arrives
        assert [o.label for o in got] == ([f"d{t - 2}"] if t >= 2 else [])
        assert all(o.qit is not None and list(o.qit.columns) == ["q", "group"] for o in got)
        outs += got
    outs += pub.flush()
    assert [o.label for o in outs] == [f"d{t}" for t in range(5)]
    with pytest.raises(InputError, match="flushed"):
        pub.push(pd.DataFrame({"q": [1], "s": ["a"]}))
    with pytest.raises(InputError, match="missing sensitive"):
        StreamPublisher(2, 1, sensitive="s").push(pd.DataFrame({"q": [1]}))


@pytest.mark.skipif(not DATA.exists(), reason="shared data not available")
def test_use_of_force_weekly_prefix():
    df = pd.read_csv(DATA / "mn_police_use_of_force.csv", dtype=str, keep_default_na=False, na_values=[""]).iloc[:3000]
    qi = ["race", "sex", "age", "precinct", "neighborhood"]
    base = anonymize_stream(df, time="response_datetime", sensitive="problem", qi=qi, l=3, w=0, snapshot="week")
    r = anonymize_stream(df, time="response_datetime", sensitive="problem", qi=qi, l=3, w=2, snapshot="week")
    # on this prefix repositioning recycles much of what w=0 suppresses
    assert r.summary["information_loss"] <= base.summary["information_loss"]
    assert r.summary["max_reposition_distance"] <= 2
    assert r.summary["records"] == 3000


def test_query_functions_refuse_misfitting_inputs():
    """generate_workload / answer_workload on a row_snapshot of another length, an unknown column, a
    non-integer qd or a release without a queried column: IndexError, KeyError, TypeError or a numpy
    broadcast error before (found by the acceptance pass uatc); now InputErrors saying what does not fit.
    qi as 'race,sex' text is read as the other APIs read it (it was taken letter by letter)."""
    import pandas as pd
    import pytest

    from tempanon.errors import InputError
    from tempanon.stream.queries import answer_workload, generate_workload

    df = pd.DataFrame({"race": list("abab"), "sex": list("FFMM"), "dx": list("xyxy")})
    snap = [0, 0, 1, 1]
    with pytest.raises(InputError, match="row_snapshot has 2 entries, the table 4 rows"):
        generate_workload(df, snap[:2], ["race"], "dx")
    with pytest.raises(InputError, match="unknown column 'nope'"):
        generate_workload(df, snap, ["race", "nope"], "dx")
    with pytest.raises(InputError, match="qd must be an integer, got 1.5"):
        generate_workload(df, snap, ["race"], "dx", qd=1.5)
    qs = generate_workload(df, snap, "race,sex", "dx", n_queries=5)
    assert {c for q in qs for c, _ in q.predicate} <= {"race", "sex"}
    qit = pd.DataFrame({"snapshot": ["0", "0"], "race": ["a", "b"], "group": [1, 1]})
    st = pd.DataFrame({"snapshot": ["0", "0"], "group": [1, 1], "dx": ["x", "y"], "count": [1, 1]})
    with pytest.raises(InputError, match="the release's qit has no column\\(s\\) 'sex'"):
        answer_workload(qs, df, snap, "dx", qit, st, ["0", "1"])
    with pytest.raises(InputError, match="row_snapshot has 4 entries, the table 2 rows"):
        answer_workload(qs, df.iloc[:2], snap, "dx", qit.assign(sex="F"), st, ["0", "1"])
