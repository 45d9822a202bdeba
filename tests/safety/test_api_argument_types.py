"""The Python APIs of kanon, timestamped and kp with arguments of the wrong type (found in the uatb
acceptance pass): each is an InputError naming the argument and the value, never a TypeError or a
ValueError from numpy, and never a silently different run.

Before: a column given as a string (``qi="age"``) was split into its letters ('unknown quasi-identifier
'a', 'g', 'e'', or 'a quasi-identifier is listed twice' for ``"A0,A1"``); ``seed="x"``, ``seed=-1``, a
``max_nodes`` of ``"10"``, a weight ``"x"``, ``epsilon="0.1"``, ``paa_segments=5.0``, ``na_values=-1``,
``granularities=5``, ``max_suppression=None``, a DataFrame that is not one (kp, timestamped) were
tracebacks; kp took ``shuffle_seed=1.5`` as 1 and timestamped ``max_suppression="0.1"`` as 0.1.
"""

import numpy as np
import pandas as pd
import pytest

from tempanon.errors import InputError
from tempanon.hierarchy import load_hierarchies
from tempanon.kanon import kanonymize
from tempanon.samples import sample_dir
from tempanon.temporal import anonymize_timestamped
from tempanon.timeseries import kp_anonymize
from tempanon.timeseries.data import random_walk

A = sample_dir("adult")
QI = [f"A{i}" for i in range(10)]


@pytest.fixture(scope="module")
def adult():
    df = pd.read_csv(A / "adult.csv.gz", sep=";", dtype=str, keep_default_na=False).head(2000)
    return df, load_hierarchies(A, ["age", "sex", "race"])


def test_kanonymize_argument_types(adult):
    df, H = adult
    r = kanonymize(df, "age", {"age": H["age"]}, k=5, seed=1)  # one column as a string: that column
    assert list(r.selected_levels) == ["age"]
    r2 = kanonymize(df, ["age"], {"age": H["age"]}, k=5, seed=1, keep="workclass")
    assert r2.table.columns.tolist() == ["age", "workclass"]
    qi = ["age", "sex", "race"]
    bad = [(dict(seed="x"), r"shuffle seed must be a non-negative integer \(got 'x'\)"),
           (dict(seed=-1), r"shuffle seed must be a non-negative integer \(got -1\)"),
           (dict(seed=1.5), r"shuffle seed must be a non-negative integer \(got 1.5\)"),
           (dict(sensitive=["salary-class"], l=2), r"sensitive must be one column name \(a string\), got list"),
           (dict(max_nodes="10"), r"max_nodes must be a positive integer, got '10'"),
           (dict(time_limit="5"), r"time_limit must be a positive number of seconds, got '5'"),
           (dict(criterion="weighted-height", weights={"age": "x"}), r"weight of 'age' must be a non-negative number, got x"),
           (dict(keep=5), r"keep must be a list of column names, got int 5")]  # fmt: skip
    for kw, message in bad:
        with pytest.raises(InputError, match=message):
            kanonymize(df, qi, H, k=5, **kw)
    with pytest.raises(InputError, match=r"hierarchies must map each quasi-identifier to its hierarchy, got str .*load_hierarchies"):
        kanonymize(df, qi, str(A), k=5)


def test_kp_anonymize_argument_types():
    wide = random_walk(40, seed=4)
    base = dict(id_col="id", qi=QI, k=5, P=2)
    r = kp_anonymize(wide, **base, sensitive="S", shuffle_seed=3)
    assert r.released.columns[-1] == "S"
    one = kp_anonymize(wide, **{**base, "qi": "A0"}, shuffle_seed=3)  # one column as a string
    assert one.released.columns[2:4].tolist() == ["A0_lo", "A0_hi"]
    assert kp_anonymize(wide, **base, na_values=-1, shuffle_seed=3).summary["published"] == 40
    bad = [(dict(qi="A0,A1"), r"unknown quasi-identifier 'A0,A1'"),
           (dict(shuffle_seed=1.5), r"shuffle seed must be a non-negative integer \(got 1.5\)"),
           (dict(shuffle_seed=-1), r"shuffle seed must be a non-negative integer \(got -1\)"),
           (dict(shuffle_seed="x"), r"shuffle seed must be a non-negative integer \(got 'x'\)"),
           (dict(paa_segments=5.0), r"PAA segments must be an integer, got 5.0"),
           (dict(paa_segments="5"), r"PAA segments must be an integer, got '5'"),
           (dict(algorithm=["kapra"]), r"unknown algorithm \['kapra'\]"),
           (dict(sensitive=["S"], l_diversity=2, epsilon="0.1"), r"positive epsilon \(--epsilon\), got '0.1'"),
           (dict(na_values={"x": 1}), r"na_values must be a text such as '-1,NA' or a list of sentinels, got dict"),
           (dict(publish_values=3), r"publish_values must be a list of column names, got int 3")]  # fmt: skip
    for kw, message in bad:
        with pytest.raises(InputError, match=message):
            kp_anonymize(wide, **{**base, **kw})
    for data in (None, wide.to_dict(), "walk.csv"):
        with pytest.raises(InputError, match=r"df must be a pandas DataFrame, got"):
            kp_anonymize(data, **base)


def test_anonymize_timestamped_argument_types():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"uid": [f"p{i % 12}" for i in range(60)],
                       "t": pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 300, 60), unit="D"),
                       "ward": rng.choice(["a", "b"], 60), "note": rng.choice(["x", "y"], 60)})  # fmt: skip
    base = dict(time="t", uid="uid", k=2, granularities="month,quarter,year", max_suppression=0.5, shuffle_seed=1)
    r = anonymize_timestamped(df, **base, qi="ward", keep="note")  # one column as a string
    assert r.released.columns.tolist() == ["t", "ward", "note"]
    bad = [(dict(max_suppression="0.1"), r"max-suppression must be in \[0, 1\) \(got '0.1'\)"),
           (dict(max_suppression=None), r"max-suppression must be in \[0, 1\) \(got None\)"),
           (dict(granularities=5), r"granularities must be a list such as \['day', 'month'\] or a text 'day,month', got int 5"),
           (dict(time_limit="5"), r"time limit must be a positive number of seconds \(got '5'\)"),
           (dict(drop=7), r"drop must be a list of column names, got int 7"),
           (dict(hierarchies="hier/"), r"hierarchies must map quasi-identifiers to their hierarchies, got str")]  # fmt: skip
    for kw, message in bad:
        with pytest.raises(InputError, match=message):
            anonymize_timestamped(df, **{**base, **kw})
    for data in (None, "visits.csv"):
        with pytest.raises(InputError, match=r"df must be a pandas DataFrame, got"):
            anonymize_timestamped(data, **base)
