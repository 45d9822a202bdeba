"""Issue 12, (k,P) part: release row order, what the report draws, degenerate parameters."""

import numpy as np
import pandas as pd
import pytest

from tempanon.errors import InputError
from tempanon.report.kp import kp_report
from tempanon.timeseries.api import kp_anonymize, released_source_rows
from tempanon.timeseries.data import random_walk

QI = [f"A{i}" for i in range(10)]


@pytest.fixture(scope="module")
def walk():
    return random_walk(400, 10, seed=3)


def test_rows_inside_groups_are_not_in_input_order(walk):
    """With an id-sorted input, input order inside a P-subgroup would give the id away: the
    release shuffles rows inside P-subgroups (and P-subgroups, k-groups) with a secret seed."""
    r = kp_anonymize(walk, id_col="id", qi=QI, sensitive=["S"], k=10, P=5)
    src = released_source_rows(r.audit)
    rel = r.released
    groups = rel.groupby(["kgroup", "psubgroup"], sort=False).indices
    increasing = sum(bool(np.all(np.diff(src[rows]) > 0)) for rows in groups.values())
    assert len(groups) >= 30
    assert increasing < len(groups) / 2  # each group of >= 5 rows is increasing with prob. <= 1/120
    # the seed is in the steward's audit only, and reproduces the release
    seed = int(r.audit["shuffle_seed"].iloc[0])
    assert r.audit["shuffle_seed"].nunique() == 1 and "shuffle_seed" not in rel.columns
    again = kp_anonymize(walk, id_col="id", qi=QI, sensitive=["S"], k=10, P=5, shuffle_seed=seed)
    pd.testing.assert_frame_equal(again.released, rel)
    other = kp_anonymize(walk, id_col="id", qi=QI, sensitive=["S"], k=10, P=5, shuffle_seed=seed + 1)
    assert not other.released.equals(rel)


def test_default_seeds_differ(walk):
    a = kp_anonymize(walk, id_col="id", qi=QI, k=10, P=5)
    b = kp_anonymize(walk, id_col="id", qi=QI, k=10, P=5)
    assert a.audit["shuffle_seed"].iloc[0] != b.audit["shuffle_seed"].iloc[0]


def test_report_picture_uses_the_release_only(walk):
    """The time-series picture must not depend on the original series: rebuilt from data whose
    quasi-identifier values were changed (same release), it is byte-identical. The report says
    in its title that it is for the steward."""
    r = kp_anonymize(walk, id_col="id", qi=QI, sensitive=["S"], k=10, P=5, shuffle_seed=1)
    other = walk.copy()
    other[QI] = other[QI].to_numpy() * 3.0 + 7.0
    a = kp_report(walk, r, id_col="id", qi=QI, sensitive=["S"], source="x", checksum=None)
    b = kp_report(other, r, id_col="id", qi=QI, sensitive=["S"], source="x", checksum=None)
    sa = {s.key: s.render() for s in a.sections}
    sb = {s.key: s.render() for s in b.sections}
    assert sa["timeseries"] == sb["timeseries"]
    assert sa["inputs"] != sb["inputs"] or sa["risk"] != sb["risk"] or sa["utility"] != sb["utility"]
    html = a.render()
    assert "STEWARD ONLY" in html and "FOR THE DATA STEWARD ONLY" in html
    assert "not member series" in sa["timeseries"]


@pytest.mark.parametrize("kw, message", [
    ({"k": 1, "P": 1}, "k must be at least 2"),
    ({"k": 5, "P": 1}, "P must be at least 2"),
    ({"k": 5, "P": 5, "sensitive": ["S"], "l_diversity": 1, "epsilon": 0.1}, "l must be at least 2"),
])
def test_degenerate_parameters_are_refused(walk, kw, message):
    with pytest.raises(InputError, match=message):
        kp_anonymize(walk, id_col="id", qi=QI, **kw)


def test_audit_and_summary_say_steward_only(tmp_path, walk):
    from tempanon.timeseries.api import write_kp_audit

    r = kp_anonymize(walk, id_col="id", qi=QI, k=10, P=5)
    assert "not for release" in r.summary["steward_only"]
    write_kp_audit(r, tmp_path / "a.csv")
    assert (tmp_path / "a.csv").read_text().splitlines()[0].startswith("# STEWARD ONLY - DO NOT RELEASE")
    back = pd.read_csv(tmp_path / "a.csv", comment="#", dtype={"id": str})
    assert back["id"].tolist() == r.audit["id"].tolist()
    write_kp_audit(r, tmp_path / "a.parquet")
    import pyarrow.parquet as pq

    meta = pq.read_schema(tmp_path / "a.parquet").metadata
    assert meta[b"tempanon"].startswith(b"# STEWARD ONLY")
