"""The independent checker ``tempanon.verify.check_kp_anonymity``: accepts real releases, rejects
every kind of broken one, and agrees with a brute-force reading of Definition 5."""

from collections import Counter
from statistics import NormalDist, pstdev

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.errors import VerificationError
from tempanon.timeseries.api import kp_anonymize
from tempanon.timeseries.data import random_walk
from tempanon.verify import check_kp_anonymity

QI = [f"A{i}" for i in range(10)]


@pytest.fixture(scope="module")
def release():
    df = random_walk(200, seed=3)
    r = kp_anonymize(df, id_col="id", qi=QI, sensitive=["S"], k=6, P=3)
    return df, r


def _check(df, rel, audit, **kw):
    args = dict(id_col="id", qi=QI, k=6, P=3, sensitive=["S"])
    args.update(kw)
    return check_kp_anonymity(df, rel, audit, **args)


def test_accepts_real_release(release):
    df, r = release
    rep = _check(df, r.released, r.audit)
    assert rep["min_kgroup"] >= 6 and rep["min_psubgroup"] >= 3


@pytest.mark.parametrize("mutation, message", [
    ("small_kgroup", "fewer than k"),
    ("wrong_pattern", "own SAX word"),
    ("envelope", "misses the original"),
    ("lost_id", "lines for 200 input"),
    ("invented_id", "lost or invented"),
    ("dup_id", "twice"),
    ("suppress", "suppressed"),
    ("sensitive", "changed"),
    ("split_psub", "fewer than P"),
    ("envelope_differs", "different envelopes"),
    ("bad_row_map", "one-to-one"),
])
def test_rejects_broken_release(release, mutation, message):
    df, r = release
    rel, audit = r.released.copy(), r.audit.copy()
    if mutation == "small_kgroup":
        rel.loc[0, "kgroup"] = rel["kgroup"].max() + 1
    elif mutation == "wrong_pattern":
        p = rel.loc[0, "pattern"]
        rel.loc[rel["psubgroup"] == rel.loc[0, "psubgroup"], "pattern"] = ("b" if p[0] == "a" else "a") + p[1:]
    elif mutation == "envelope":
        g = rel["kgroup"] == rel.loc[0, "kgroup"]
        rel.loc[g, "A3_hi"] = rel.loc[g, "A3_lo"]
    elif mutation == "lost_id":
        audit = audit.iloc[1:]
    elif mutation == "invented_id":
        audit.loc[0, "id"] = "nobody"
    elif mutation == "dup_id":
        audit.loc[1, "id"] = audit.loc[0, "id"]
    elif mutation == "suppress":
        rows = audit["output_row"].dropna().astype(int)
        drop = rows.index[:3]
        audit.loc[drop, "output_row"] = pd.NA
        keep = sorted(set(range(len(rel))) - set(rows.loc[drop]))
        rel = rel.iloc[keep].reset_index(drop=True)
        remap = {old: new for new, old in enumerate(keep)}
        audit["output_row"] = audit["output_row"].map(lambda v: remap.get(v, pd.NA) if pd.notna(v) else pd.NA).astype("Int64")
    elif mutation == "sensitive":
        rel.loc[5, "S"] = rel.loc[5, "S"] + 1
    elif mutation == "split_psub":
        rel.loc[0, "psubgroup"] = rel["psubgroup"].max() + 1
    elif mutation == "envelope_differs":
        rel.loc[0, "A1_lo"] = rel.loc[0, "A1_lo"] - 1
    elif mutation == "bad_row_map":
        audit.loc[0, "output_row"] = audit.loc[1, "output_row"]
    with pytest.raises(VerificationError, match=message):
        _check(df, rel, audit)


def test_l_diversity_checked(release):
    df, r = release
    rel = r.released.copy()
    g = rel["psubgroup"] == 0
    rel.loc[g, "S"] = rel.loc[g, "S"].iloc[0]  # one value everywhere, within epsilon=10 of originals
    with pytest.raises(VerificationError, match="not 3-diverse"):
        _check(df, rel, r.audit, l_diversity=3, epsilon=10.0)
    with pytest.raises(VerificationError, match="moved by more than epsilon"):
        _check(df, rel, r.audit, l_diversity=1, epsilon=1e-12)


# ---- brute-force oracle of Definition 5 on tiny random releases ------------------------------

def _sax_ref(row, level):
    mu, sd = sum(row) / len(row), pstdev(row)
    flat = sd <= 1e-9 * max(1.0, max(abs(v) for v in row))
    cuts = [NormalDist().inv_cdf(j / level) for j in range(1, level)]
    return "".join(chr(97 + sum(c <= (0.0 if flat else (v - mu) / sd) for c in cuts)) for v in row)


def _pattern_ok(row, level, pattern):
    """The documented rule: the own SAX word, except that a value within 1e-9 of a breakpoint may
    take either neighbouring symbol."""
    mu, sd = sum(row) / len(row), pstdev(row)
    flat = sd <= 1e-9 * max(1.0, max(abs(v) for v in row))
    cuts = [NormalDist().inv_cdf(j / level) for j in range(1, level)]
    for v, ch in zip(row, pattern):
        z = 0.0 if flat else (v - mu) / sd
        own = sum(c <= z for c in cuts)
        got = ord(ch) - 97
        if got != own and not (abs(got - own) == 1 and any(abs(z - c) <= 1e-9 for c in cuts)):
            return False
    return len(pattern) == len(row)


def _definition5(X, assign, k, P):
    """assign: per series (kgroup, psubgroup, level, pattern, lo, hi) or None (suppressed)."""
    pub = [a for a in assign if a is not None]
    if len(assign) - len(pub) >= P or not pub:
        return False
    kc = Counter(a[0] for a in pub)
    if min(kc.values()) < k:
        return False
    pc = Counter((a[0], a[3], a[2]) for a in pub)
    if min(pc.values()) < P:
        return False
    psc = Counter(a[1] for a in pub)
    if min(psc.values()) < P:
        return False
    for ps in psc:
        if len({(a[0], a[2], a[3]) for a in pub if a[1] == ps}) != 1:
            return False
    for kg in kc:
        if len({(a[4], a[5]) for a in pub if a[0] == kg}) != 1:
            return False
    for i, a in enumerate(assign):
        if a is None:
            continue
        if any(not (lo <= x <= hi) for x, lo, hi in zip(X[i], a[4], a[5])):
            return False
        if not _pattern_ok(list(X[i]), a[2], a[3]):
            return False
    return True


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_checker_agrees_with_bruteforce_definition(data):
    n = data.draw(st.integers(2, 9))
    w = data.draw(st.integers(1, 4))
    X = [tuple(float(v) for v in data.draw(st.lists(st.integers(0, 3), min_size=w, max_size=w))) for _ in range(n)]
    k = data.draw(st.integers(1, 4))
    P = data.draw(st.integers(1, k))
    n_kg, n_ps = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    levels = data.draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=4, max_size=4))
    assign = []
    for i in range(n):
        if data.draw(st.integers(0, 9)) == 0:
            assign.append(None)
            continue
        kg = data.draw(st.integers(0, n_kg - 1))
        sub = data.draw(st.integers(0, n_ps - 1))
        ps = kg * 10 + sub
        level = levels[2 * kg + sub] if data.draw(st.integers(0, 9)) else data.draw(st.integers(1, 3))
        pat = _sax_ref(list(X[i]), level)
        if data.draw(st.integers(0, 7)) == 0:
            pat = "".join(chr(97 + data.draw(st.integers(0, level - 1))) for _ in range(w))
        elif data.draw(st.integers(0, 7)) == 0:
            j = data.draw(st.integers(0, w - 1))
            pat = pat[:j] + chr(97 + data.draw(st.integers(0, level - 1))) + pat[j + 1:]
        assign.append([kg, ps, level, pat])
    # envelopes: the k-group's min/max, sometimes shrunk
    for kg in {a[0] for a in assign if a is not None}:
        mem = [i for i, a in enumerate(assign) if a is not None and a[0] == kg]
        lo = tuple(min(X[i][j] for i in mem) for j in range(w))
        hi = tuple(max(X[i][j] for i in mem) for j in range(w))
        if data.draw(st.integers(0, 7)) == 0:
            hi = tuple(h - 0.5 for h in hi)
        for i in mem:
            assign[i] += [lo, hi]
    qi = [f"A{j}" for j in range(w)]
    df = pd.DataFrame({"id": [f"r{i}" for i in range(n)], **{q: [x[j] for x in X] for j, q in enumerate(qi)}})
    pub = [i for i, a in enumerate(assign) if a is not None]
    rel = pd.DataFrame({"kgroup": [assign[i][0] for i in pub], "psubgroup": [assign[i][1] for i in pub]})
    for j, q in enumerate(qi):
        rel[f"{q}_lo"] = [assign[i][4][j] for i in pub]
        rel[f"{q}_hi"] = [assign[i][5][j] for i in pub]
    rel["pattern"] = [assign[i][3] for i in pub]
    rel["pattern_level"] = np.array([assign[i][2] for i in pub], dtype=np.int64)
    rows = {i: r for r, i in enumerate(pub)}
    audit = pd.DataFrame({"id": df["id"], "output_row": pd.array([rows.get(i) for i in range(n)], dtype="Int64")})
    expect = _definition5(X, [None if a is None else (a[0], a[1], a[2], a[3], a[4], a[5]) for a in assign], k, P)
    try:
        check_kp_anonymity(df, rel, audit, id_col="id", qi=qi, k=k, P=P)
        got = True
    except VerificationError:
        got = False
    assert got == expect


def test_breakpoint_tolerance_only_next_to_a_breakpoint():
    # [0, 1, 2]: z = (-1.22, 0, 1.22); at level 2 the middle value sits on the breakpoint 0
    df = pd.DataFrame({"id": ["a", "b"], "A0": [0.0, 0.0], "A1": [1.0, 1.0], "A2": [2.0, 2.0]})
    qi = ["A0", "A1", "A2"]
    audit = pd.DataFrame({"id": ["a", "b"], "output_row": pd.array([0, 1], dtype="Int64")})

    def rel(pattern):
        return pd.DataFrame({"kgroup": [0, 0], "psubgroup": [0, 0], **{f"{c}_lo": [0.0 + i] * 2 for i, c in enumerate(qi)},
                             **{f"{c}_hi": [0.0 + i] * 2 for i, c in enumerate(qi)}, "pattern": [pattern] * 2,
                             "pattern_level": np.array([2, 2], dtype=np.int64)})

    check_kp_anonymity(df, rel("abb"), audit, id_col="id", qi=qi, k=2, P=2)  # own word
    check_kp_anonymity(df, rel("aab"), audit, id_col="id", qi=qi, k=2, P=2)  # on the breakpoint
    with pytest.raises(VerificationError, match="own SAX word"):
        check_kp_anonymity(df, rel("bbb"), audit, id_col="id", qi=qi, k=2, P=2)
