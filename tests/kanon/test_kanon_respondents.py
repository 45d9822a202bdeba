"""Respondent-level k-anonymity (Mascetti et al. 2006, Definitions 1-4) in the Incognito engine."""

from __future__ import annotations

import pandas as pd
import pytest

from tempanon.hierarchy import Hierarchy
from tempanon.kanon import encode_for_search, kanonymize, run_search
from tempanon.kanon.search import COMPLETE
from tempanon.lattice.freqset import rollup, table_frequency_set

ZIP = Hierarchy.from_rows("zip", [["53715", "5371*", "*"], ["53710", "5371*", "*"], ["53706", "5370*", "*"]])


def _table():
    # respondent A has tuples in both 53715 and 53710: merging the two classes at level 1 gives
    # 3 distinct respondents, although the classes have 2 each (summing would say 4).
    return pd.DataFrame(
        {
            "uid": ["A", "B", "A", "C", "D", "E", "F", "G"],
            "zip": ["53715", "53715", "53710", "53710", "53706", "53706", "53706", "53706"],
            "exam": list("xyzwvuts"),
        }
    )


def _sizes(fs, dim, level):
    codes, sizes, _ = fs.classes()
    return {dim.labels[level][c]: int(s) for c, s in zip(codes[:, 0], sizes)}


def test_distinct_respondents_do_not_roll_up_by_summing():
    df = _table()
    dims, table = encode_for_search(df, ["zip"], {"zip": ZIP}, uid="uid")
    fs0 = table_frequency_set(table, dims, (0,), (0,))
    sizes0 = _sizes(fs0, dims[0], 0)
    assert sizes0 == {"53715": 2, "53710": 2, "53706": 4}
    fs1 = rollup(fs0, dims, (1,))
    sizes1 = _sizes(fs1, dims[0], 1)
    assert sizes1 == {"5371*": 3, "5370*": 4}  # 5371*: distinct respondents A, B, C
    assert sizes0["53715"] + sizes0["53710"] == 4  # what a summing rollup would report
    # so level 1 is not respondent-level 4-anonymous, although summing would say it is
    assert not fs1.is_anonymous(4)
    direct = table_frequency_set(table, dims, (0,), (1,))
    assert _sizes(direct, dims[0], 1) == sizes1
    _, _, tuples1 = fs1.classes()
    assert sorted(tuples1.tolist()) == [4, 4]


@pytest.mark.parametrize("algorithm", sorted(COMPLETE))
def test_every_algorithm_counts_respondents(algorithm):
    df = _table()
    dims, table = encode_for_search(df, ["zip"], {"zip": ZIP}, uid="uid")
    res = run_search(algorithm, dims, table, 3)
    assert res.anonymous_nodes == [(1,), (2,)]
    res4 = run_search(algorithm, dims, table, 4)
    assert res4.anonymous_nodes == [(2,)]  # only '*' has >= 4 distinct respondents (7)
    # counting tuples instead would accept level 1 at k=4 (classes of 4 tuples each)
    dims_t, table_t = encode_for_search(df, ["zip"], {"zip": ZIP})
    assert run_search(algorithm, dims_t, table_t, 4).anonymous_nodes == [(1,), (2,)]


def test_release_drops_uid_and_is_respondent_anonymous():
    df = _table()
    res = kanonymize(df, ["zip"], {"zip": ZIP}, 3, uid="uid", criterion="height")
    assert "uid" not in res.table.columns
    assert res.selected_node == (1,)
    assert res.respondents == 7
    groups = df.loc[res.table.index].assign(g=res.table["zip"]).groupby("g")["uid"].nunique()
    assert groups.min() >= 3
