"""One value per released text (:mod:`tempanon.data.cells`): a DataFrame column with a role holding
``1``, ``True`` and ``1.0`` (equal and hash-equal in Python, three texts in a release) has three
values on every engine, in the hierarchies and in the verifier.

Before (main at 148dfbd, measured with a script): ``anonymize_stream`` with such a sensitive column
raised ``VerificationError: released sensitive values differ ...``; ``kanonymize`` on numpy counted
``1`` and ``True`` as one value ``'1'`` (no 2-diverse solution) while DuckDB released; a
quasi-identifier with a hierarchy listing ``1`` and ``True`` failed on DuckDB ("missing from the
hierarchy: 'True'") and not on numpy."""

from __future__ import annotations

import io
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tempanon import verify
from tempanon.data.cells import is_mixed, released_text, text_mixed_columns
from tempanon.errors import InputError, NoSolutionError, VerificationError
from tempanon.hierarchy import Hierarchy
from tempanon.hierarchy.core import as_text
from tempanon.kanon.api import kanonymize
from tempanon.stream.api import anonymize_stream
from tempanon.temporal.api import anonymize_timestamped
from tempanon.timeseries.api import kp_anonymize

N = 60
CYCLE = [1, True, 1.0]
TEXTS = ["1", "True", "1.0"]


def _frame(cycle=CYCLE, n: int = N) -> pd.DataFrame:
    return pd.DataFrame({
        "t": [f"2021-01-{1 + i % 9:02d}" for i in range(n)],
        "sex": ["M", "F"] * (n // 2),
        "p": [f"p{i % 4}" for i in range(n)],
        "x": pd.Series([cycle[i % len(cycle)] for i in range(n)], dtype=object),
    })  # fmt: skip


def _sex() -> Hierarchy:
    return Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]])


def _xh(texts=TEXTS) -> Hierarchy:
    return Hierarchy.from_rows("x", [[t, "*"] for t in texts])


def _written(path: str) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _rows(df: pd.DataFrame) -> list[tuple]:
    return sorted(map(tuple, df.to_numpy().tolist()))


def test_the_cells_module():
    s = pd.Series([1, True, 1.0, None, np.nan, "1", 0, False], dtype=object)
    assert is_mixed(s) and not is_mixed(pd.Series([1, 2, None], dtype=object)) and not is_mixed(pd.Series(["a", None]))
    assert not is_mixed(pd.Series([1.0, 2.0])) and not is_mixed(pd.Series([True, False], dtype=object))
    assert released_text(s).tolist() == ["1", "True", "1.0", None, None, "1", "0", "False"]
    assert list(as_text(s)) == ["1", "True", "1.0", "", "", "1", "0", "False"]
    df = pd.DataFrame({"a": s, "b": s})
    out = text_mixed_columns(df, ["a", "nope", None])
    assert out["a"].tolist()[:3] == ["1", "True", "1.0"] and out["b"] is not None and out["b"].tolist()[:2] == [1, True]
    plain = pd.DataFrame({"a": ["u", "v"], "b": [1, 2]})
    assert text_mixed_columns(plain, ["a", "b"]) is plain  # (no copy on the usual path)


@pytest.mark.parametrize("l", [None, 2])
def test_numpy_and_duckdb_release_the_same_qi_column(tmp_path, l):
    df = _frame()
    outs = {}
    for eng in ("numpy", "duckdb"):
        out = str(tmp_path / f"{eng}.csv")
        kw = {"sensitive": "p", "l": l} if l else {}
        r = kanonymize(df, qi=["sex", "x"], hierarchies={"sex": _sex(), "x": _xh()}, k=10, engine=eng, out=out, **kw)
        assert r.selected_levels == {"sex": 0, "x": 0}  # 6 classes of 10: each text its own value
        outs[eng] = _written(out)
    assert _rows(outs["numpy"]) == _rows(outs["duckdb"])
    assert outs["numpy"].groupby(["sex", "x"]).size().to_dict() == {(s, t): 10 for s in "FM" for t in TEXTS}


def test_a_hierarchy_built_from_the_frame_has_one_leaf_per_text():
    from tempanon.hierarchy import build_suppression

    df = _frame()
    h = build_suppression("x", df["x"])
    assert sorted(h.table[:, 0]) == sorted(TEXTS)


@pytest.mark.parametrize("cycle, texts", [([1, True, 1.0], TEXTS), ([0, False, "a"], ["0", "False", "a"]),
                                          ([1.0, True, "b"], ["1.0", "True", "b"])])  # fmt: skip
def test_numpy_and_duckdb_release_the_same_sensitive_column(tmp_path, cycle, texts):
    # 3 texts of 20 rows each: 3-diverse as texts; as Python values 1 and True (or 0 and False) are
    # 40 of 60 rows, and numpy refused it (no solution) before
    df = _frame(cycle)
    outs = {}
    for eng in ("numpy", "duckdb"):
        out = str(tmp_path / f"{eng}.csv")
        kanonymize(df, qi=["sex"], hierarchies={"sex": _sex()}, k=2, engine=eng, sensitive="x", l=3, out=out)
        outs[eng] = _written(out)
    assert _rows(outs["numpy"]) == _rows(outs["duckdb"])
    assert outs["numpy"]["x"].value_counts().to_dict() == {t: 20 for t in texts}
    with pytest.raises(NoSolutionError):  # (4 texts would need 4 rows of each in every class: 1 missing)
        kanonymize(df, qi=["sex"], hierarchies={"sex": _sex()}, k=2, engine="numpy", sensitive="x", l=4)


def test_the_stream_releases_three_values(tmp_path):
    res = anonymize_stream(_frame(), time="t", sensitive="x", l=2, w=1, qi=["sex"])
    got = res.st.groupby(res.st["x"].astype(str))["count"].sum()
    assert set(got.index) == set(TEXTS) and (got <= 20).all(), got
    qit, stt = res.qit, res.st
    # every group 3-diverse on the written texts (an independent group-by on strings)
    by = stt.assign(x=stt["x"].astype(str)).groupby(["snapshot", "group"])
    assert len(by) and (by["x"].nunique() >= 2).all()
    assert len(qit) == int(stt["count"].sum())


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_timestamped_qi_and_uid_columns(engine):
    # respondents 7, True, 7.0, '7', 1: four texts (7 and '7' are one), three Python values; every
    # class of x (any granule) holds all five: 4-anonymous by text only
    df = _frame()
    df["u"] = pd.Series([[7, True, 7.0, "7", 1][i % 5] for i in range(N)], dtype=object)
    r = anonymize_timestamped(df, time="t", k=4, qi=["x"], uid="u", engine=engine, shuffle_seed=3)
    rel = r.released
    assert sorted(rel["x"].astype(str).unique()) == sorted(TEXTS) and "u" not in rel.columns
    u = df.loc[rel.index, "u"].astype(str)
    per = rel.assign(x=rel["x"].astype(str), t=rel["t"].astype(str), u=u.to_numpy()).groupby(["x", "t"])["u"].nunique()
    assert (per == 4).all(), per
    with pytest.raises(NoSolutionError):
        anonymize_timestamped(df, time="t", k=5, qi=["x"], uid="u", engine=engine)


def test_timestamped_engines_agree():
    df = _frame()
    rel = {e: anonymize_timestamped(df, time="t", k=4, qi=["x"], engine=e, shuffle_seed=5).released for e in ("numpy", "duckdb")}
    assert _rows(rel["numpy"].astype(str)) == _rows(rel["duckdb"].astype(str))


def test_kp_sensitive_column():
    df = pd.DataFrame({"id": [f"s{i}" for i in range(40)], "a": np.arange(40, dtype=float), "b": np.arange(40) % 3.0,
                       "x": pd.Series([[1, True][i % 2] for i in range(40)], dtype=object)})  # fmt: skip
    r = kp_anonymize(df, id_col="id", qi=["a", "b"], k=4, P=2, sensitive=["x"], shuffle_seed=1)
    assert r.released["x"].astype(str).value_counts().to_dict() == {"1": 20, "True": 20}
    # perturbation needs numbers: True is named (before: taken for 1, "1 distinct whole numbers")
    with pytest.raises(InputError, match="value 'True' is not a number"):
        kp_anonymize(df, id_col="id", qi=["a", "b"], k=4, P=2, sensitive=["x"], l_diversity=2, epsilon=1.0)


def test_the_verifier_counts_1_true_and_1_0_apart():
    rel = pd.DataFrame({"q": ["a"] * 4, "s": pd.Series([1, True, 1.0, 1], dtype=object)})
    verify.check_l_diverse_classes(rel, ["q"], "s", 2)  # 3 texts, the most frequent 2 of 4
    verify.check_l_diversity(rel, ["q"], "s", 3, "distinct")
    with pytest.raises(VerificationError):
        verify.check_l_diversity(rel, ["q"], "s", 4, "distinct")
    qi = pd.DataFrame({"q": pd.Series([1, True, 1.0, 1, True, 1.0], dtype=object)})
    assert verify.check_k_anonymity(qi, ["q"], 2)["classes"] == 3
    with pytest.raises(VerificationError, match="not 3-anonymous"):
        verify.check_k_anonymity(qi, ["q"], 3)
    # respondents by their text: 1 and True are two respondents
    uid = pd.DataFrame({"q": ["a"] * 4, "u": pd.Series([1, True, 1, True], dtype=object)})
    assert verify.check_k_anonymity(uid, ["q"], 2, uid="u")["min_class_size"] == 2
    with pytest.raises(VerificationError):
        verify.check_k_anonymity(uid, ["q"], 3, uid="u")
    # the generalization is looked up by the original's text: True is not the leaf 1
    orig = pd.DataFrame({"q": pd.Series([1, True], dtype=object)})
    mapping = {"q": {"1": "one", "True": "yes"}}
    verify.check_generalized_release(orig, pd.DataFrame({"q": ["one", "yes"]}), ["q"], 1, mapping)
    with pytest.raises(VerificationError, match="not the generalization"):
        verify.check_generalized_release(orig, pd.DataFrame({"q": ["one", "one"]}), ["q"], 1, mapping)
    # a column released unchanged: True published for 1 is a change
    o = pd.DataFrame({"t": ["x", "x"], "s": pd.Series([1, 1], dtype=object)})
    r = pd.DataFrame({"t": ["x", "x"], "s": pd.Series([1, True], dtype=object)})
    with pytest.raises(VerificationError, match="published True instead of 1"):
        verify.check_timestamped_release(o, r, time="t", qi=[], uid=None, k=1, granularity="x",
                                         original_times=pd.Series([pd.NaT, pd.NaT]), n_input=2)  # fmt: skip


POOL = [1, True, 1.0, 0, False, "1", "True", None]
_col = st.lists(st.sampled_from(POOL), min_size=12, max_size=40)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(_col, st.data(), st.sampled_from([2, 3]), st.booleans())
def test_released_classes_are_the_groups_of_the_written_text(tmp_path_factory, qcells, data, k, with_l):
    n = len(qcells)
    scells = data.draw(st.lists(st.sampled_from(POOL), min_size=n, max_size=n))
    df = pd.DataFrame({"q": pd.Series(qcells, dtype=object), "s": pd.Series(scells, dtype=object)})
    # (a column of Python floats only, 1.0 and missing, is not a mix: its hierarchy text is "1" on
    # numpy and "1.0" on DuckDB, as for a Parquet float column; apart from this change, not drawn here)
    assume(pd.api.types.infer_dtype(df["q"], skipna=True) != "floating")
    texts = sorted({t for t in as_text(df["q"]) if t != ""})
    h = Hierarchy.from_rows("q", [[t, "*"] for t in texts]) if texts else Hierarchy.from_rows("q", [["z", "*"]])
    d = tmp_path_factory.mktemp("mix")
    written = {}
    for eng in ("numpy", "duckdb"):
        out = os.path.join(d, f"{eng}.csv")
        kw = {"sensitive": "s", "l": 2} if with_l else {"keep": ["s"]}
        try:
            res = kanonymize(df, qi=["q"], hierarchies={"q": h}, k=k, engine=eng, out=out, **kw)
        except NoSolutionError:
            written[eng] = None
            continue
        w = _written(out)
        written[eng] = w
        # the written file is the API's table, as text
        table = res.table if res.table is not None else pd.read_csv(out, dtype=str, keep_default_na=False)
        assert len(w) == len(table)
        sizes = w.groupby("q").size()
        assert (sizes >= k).all(), (eng, sizes)
        if with_l:  # frequency 2-diversity on the written texts (the empty field is the missing value)
            top = w.groupby("q")["s"].agg(lambda v: v.value_counts().iloc[0])
            assert (top * 2 <= sizes).all(), (eng, w)
        # each input text went to one released text (level 0) or all to '*': classes by text
        src = pd.Series(as_text(df["q"])).astype(str)
        if res.selected_levels["q"] == 0:
            assert sorted(w["q"]) == sorted(src), (eng, w)
        # the sensitive column is written as the text of each input cell
        stext = df["s"].map(lambda v: "" if v is None else str(v))
        assert sorted(w["s"]) == sorted(stext), eng
    if written["numpy"] is None or written["duckdb"] is None:
        assert written["numpy"] is None and written["duckdb"] is None
    else:
        assert _rows(written["numpy"]) == _rows(written["duckdb"])


def test_an_open_numpy_source_tells_them_apart_too():
    # a NumpySource made by the caller is not converted by the API: the encoding, the sensitive
    # codes and the respondents are by text all the same (lattice/source.py, lattice/freqset.py)
    from tempanon.lattice.source import NumpySource

    big = _frame([0, False, 0.0], n=120)  # (64 rows or more: encoded per distinct value)
    r = kanonymize(NumpySource(big), qi=["sex", "x"], hierarchies={"sex": _sex(), "x": _xh(["0", "False", "0.0"])}, k=20)
    assert r.selected_levels == {"sex": 0, "x": 0}
    assert r.table.groupby(["sex", "x"]).size().to_dict() == {(s, t): 20 for s in "FM" for t in ["0", "False", "0.0"]}
    df = _frame([0, False, 0.0])
    r = kanonymize(NumpySource(df), qi=["sex"], hierarchies={"sex": _sex()}, k=2, sensitive="x", l=3)
    assert r.table["x"].astype(str).value_counts().to_dict() == {"0": 20, "False": 20, "0.0": 20}
    df["u"] = pd.Series([[1, True][i % 2] for i in range(N)], dtype=object)
    r = kanonymize(NumpySource(df), qi=["sex"], hierarchies={"sex": _sex()}, k=1 + 1, uid="u")
    assert r.respondents == 2


def test_a_name_given_twice_is_still_refused_by_its_own_message():
    df = pd.DataFrame([[1, True, "M"]] * 4, columns=["x", "x", "sex"]).astype(object)
    with pytest.raises(InputError, match=r"duplicate column name\(s\) 'x' \(columns 1 and 2\)"):
        kanonymize(df, qi=["sex", "x"], hierarchies={"sex": _sex(), "x": _xh()}, k=2)
