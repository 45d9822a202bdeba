"""TGA [17] and BFP2KA [20], the baselines of Shou et al. Section 7.3 (tempanon.timeseries.baselines):
hand-made inputs with known answers, literal reference implementations (hypothesis), the
verifiers, determinism."""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.errors import InputError, NoSolutionError, VerificationError
from tempanon.timeseries.baselines import (
    bfp2ka,
    bfp2ka_arrays,
    check_sequence_k_anonymity,
    string_dataset,
    tga,
    tga_groups,
    tga_release,
)
from tempanon.timeseries.data import random_walk
from tempanon.timeseries.model import instant_value_loss
from tempanon.timeseries.sax import sax_words
from tempanon.verify import check_kp_anonymity

# --- TGA ------------------------------------------------------------------------------------------


def _canon(groups):
    return sorted(sorted(np.flatnonzero(groups == g).tolist()) for g in np.unique(groups))


def test_tga_two_far_clusters_any_seed():
    X = np.array([[0, 0], [0, 1], [1, 0], [100, 100], [101, 100], [100, 101]], dtype=float)
    for seed in range(8):
        assert _canon(tga_groups(X, 3, seed)) == [[0, 1, 2], [3, 4, 5]]
    res = tga(X, 3, seed=0)
    g0 = res.kgroup[0]
    assert res.lo[g0].tolist() == [0, 0] and res.hi[g0].tolist() == [1, 1]
    g1 = res.kgroup[3]
    assert res.lo[g1].tolist() == [100, 100] and res.hi[g1].tolist() == [101, 101]


def test_tga_leftover_joins_group_whose_value_loss_grows_least():
    # k=2, five series: two pairs are formed (which ones depends on the random pivots, so the
    # result is compared with the literal reference for several seeds); the fifth joins a pair
    X = np.array([[0.0], [1.0], [10.0], [11.0], [3.0]])
    for seed in range(10):
        g = tga_groups(X, 2, seed)
        assert (g == _tga_reference(X, 2, seed)).all()
        assert sorted(np.bincount(g).tolist()) == [2, 3]
    # the leftover rule by hand: with pairs {0, 1} and {2, 3}, the series 3.0 joins {0, 1}
    lo, hi = np.array([[0.0], [10.0]]), np.array([[1.0], [11.0]])
    grow = [3 * instant_value_loss(np.minimum(lo[g:g + 1], 3.0), np.maximum(hi[g:g + 1], 3.0))[0]
            - 2 * instant_value_loss(lo[g:g + 1], hi[g:g + 1])[0] for g in (0, 1)]
    assert grow[0] < grow[1]  # 3.0 would join {0, 1}: VL grows by 3*3 - 2*1 = 7 against 3*8 - 2*1 = 22
    X2 = np.array([[0.0], [1.0], [100.0], [101.0], [3.0]])
    for seed in range(10):
        g = tga_groups(X2, 2, seed)
        if g[0] == g[1] and g[2] == g[3]:  # seeds whose pivots paired {0,1}, {2,3}: 3.0 was left over
            assert g[4] == g[0]


def _tga_reference(X, k, seed):
    """Literal greedy clustering of TGA (one Python loop per step)."""
    rng = np.random.default_rng(seed)
    n = len(X)
    group = [-1] * n
    g = 0
    while sum(1 for x in group if x < 0) >= k:
        live = [i for i in range(n) if group[i] < 0]
        pivot = live[rng.integers(len(live))]
        others = sorted((float(((X[i] - X[pivot]) ** 2).sum()), i) for i in live if i != pivot)
        for i in [pivot] + [i for _, i in others[:k - 1]]:
            group[i] = g
        g += 1
    for i in [i for i in range(n) if group[i] < 0]:
        best, best_grow = None, None
        for h in range(g):
            mem = [j for j in range(n) if group[j] == h]
            lo, hi = X[mem].min(axis=0), X[mem].max(axis=0)
            nlo, nhi = np.minimum(lo, X[i]), np.maximum(hi, X[i])
            grow = (len(mem) + 1) * np.sqrt(np.mean((nhi - nlo) ** 2)) - len(mem) * np.sqrt(np.mean((hi - lo) ** 2))
            if best_grow is None or grow < best_grow:
                best, best_grow = h, grow
        group[i] = best
    return np.array(group)


matrices = st.integers(1, 4).flatmap(lambda w: st.lists(
    st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 7.25, -3.0]), min_size=w, max_size=w), min_size=1, max_size=30))


@settings(max_examples=60, deadline=None)
@given(matrices, st.integers(1, 6), st.integers(0, 2**31))
def test_tga_matches_reference_and_groups_are_k_anonymous(rows, k, seed):
    X = np.array(rows, dtype=float)
    if len(X) < k:
        with pytest.raises(NoSolutionError):
            tga_groups(X, k, seed)
        return
    g = tga_groups(X, k, seed)
    assert (g == _tga_reference(X, k, seed)).all()
    sizes = np.bincount(g)
    assert sizes.min() >= k and len(sizes) == len(X) // k
    res = tga(X, k, seed)
    assert (res.lo[res.kgroup] <= X).all() and (X <= res.hi[res.kgroup]).all()
    R = res.reconstruction
    assert (res.lo[res.kgroup] <= R).all() and (R <= res.hi[res.kgroup]).all()
    again = tga(X, k, seed)
    assert (again.kgroup == res.kgroup).all() and np.array_equal(again.reconstruction, R)


def test_tga_seed_changes_draws_but_not_validity():
    X = random_walk(300, seed=5)[[f"A{i}" for i in range(10)]].to_numpy()
    a, b = tga(X, 5, seed=1), tga(X, 5, seed=2)
    assert not np.array_equal(a.reconstruction, b.reconstruction)
    for r in (a, b):
        assert np.bincount(r.kgroup).min() >= 5


def _frame(X):
    df = pd.DataFrame(X, columns=[f"A{j}" for j in range(X.shape[1])])
    df.insert(0, "id", [f"s{i}" for i in range(len(X))])
    df["S"] = np.arange(len(X)) % 4
    return df


def test_tga_release_passes_the_kp_verifier_and_tampering_is_caught():
    df = random_walk(200, seed=2)
    qi = [f"A{i}" for i in range(10)]
    rel = tga_release(df, id_col="id", qi=qi, k=4, sensitive=["S"], seed=3, shuffle_seed=9)
    assert rel.summary["verified"] and rel.summary["min_kgroup"] >= 4
    assert (rel.released["pattern"] == "").all()
    again = tga_release(df, id_col="id", qi=qi, k=4, sensitive=["S"], seed=3, shuffle_seed=9)
    pd.testing.assert_frame_equal(rel.released, again.released)
    original = df[["id", *qi, "S"]]
    kw = dict(id_col="id", qi=qi, k=4, P=1, value_columns=qi, pattern_columns=[], sensitive=["S"])
    check_kp_anonymity(original, rel.released, rel.audit, **kw)
    bad = rel.released.copy()
    bad.loc[bad["kgroup"] == 0, "A3_hi"] = bad.loc[bad["kgroup"] == 0, "A3_lo"]  # envelope misses members
    with pytest.raises(VerificationError):
        check_kp_anonymity(original, bad, rel.audit, **kw)
    small = rel.released.copy()
    small.loc[small.index[0], "kgroup"] = 999  # a k-group of one series
    with pytest.raises(VerificationError):
        check_kp_anonymity(original, small, rel.audit, **kw)
    with pytest.raises(VerificationError):  # and with k = 5 the 4-groups fail
        check_kp_anonymity(original, rel.released, rel.audit, **{**kw, "k": 5})


# --- BFP2KA ---------------------------------------------------------------------------------------


def _seqs(*words):
    return np.array([[ord(c) - 97 for c in w] for w in words], dtype=np.int64)


def _text(res, i):
    return "".join(chr(97 + int(s)) for s in res.published[i, :res.length[i]])


def test_bfp2ka_small_example_by_hand():
    # supports: a 4, b 1 (pruned); ab 3, ac 1 (pruned); abc, abd, abe 1 (pruned) -> one leaf path "ab"
    S = _seqs("abc", "abd", "abe", "acd", "bcd")
    res = bfp2ka(S, 2)
    assert ["".join(chr(97 + s) for s in p[:n]) for p, n in zip(res.paths, res.path_length)] == ["ab"]
    assert res.path_support.tolist() == [3]
    assert [_text(res, i) for i in range(5)] == ["ab", "ab", "ab", "a", "b"]
    assert res.cut.all()
    check_sequence_k_anonymity(S, res.published, res.length, 2)


def test_bfp2ka_whole_paths_kept_and_ties_by_support_then_lexicographic():
    # "abc" x2 survives whole (k=2); leaves: "abc" (2), "cb" (3: cba, cbb, cbc)
    # "bcx": LCS with "abc" is "bc" (2), with "cb" is "c"/"b" (1) -> "bc" along "abc"
    # "cab": LCS 2 with both ("ab" along abc, "cb" along cb); "cb" has the larger support -> "cb"
    S = _seqs("abc", "abc", "cba", "cbb", "cbc", "bcd", "cab")
    res = bfp2ka(S, 2)
    paths = {"".join(chr(97 + s) for s in p[:n]): int(sup) for p, n, sup in zip(res.paths, res.path_length, res.path_support)}
    assert paths == {"abc": 2, "cb": 3}
    got = [_text(res, i) for i in range(len(S))]
    assert got[:2] == ["abc", "abc"] and not res.cut[:2].any()
    assert got[2:5] == ["cb", "cb", "cb"]
    assert got[5] == "bc" and got[6] == "cb"
    check_sequence_k_anonymity(S, res.published, res.length, 2)


def test_bfp2ka_nothing_frequent_publishes_empty_sequences():
    S = _seqs("ab", "cd", "ef")
    res = bfp2ka(S, 2)
    assert res.length.tolist() == [0, 0, 0] and len(res.paths) == 0
    check_sequence_k_anonymity(S, res.published, res.length, 2)
    with pytest.raises(NoSolutionError):
        bfp2ka(S, 4)
    with pytest.raises(InputError):
        bfp2ka(np.zeros((3, 0), dtype=np.int64), 2)


def _lcs_len(a, b):
    D = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a)):
        for j in range(len(b)):
            D[i + 1][j + 1] = D[i][j] + 1 if a[i] == b[j] else max(D[i][j + 1], D[i + 1][j])
    return D[-1][-1]


def _is_subseq(u, s):
    it = iter(s)
    return all(c in it for c in u)


def _bfp2ka_reference(S, k):
    """Literal BF-P2kA: a dict prefix tree with supports, pruning of nodes with support < k, the
    root-to-leaf paths of the pruned tree, and per cut sequence the LCS dynamic programme against
    every path; ties as documented."""
    seqs = [tuple(int(x) for x in r) for r in S]
    support = {}
    for s in seqs:
        for d in range(1, len(s) + 1):
            support[s[:d]] = support.get(s[:d], 0) + 1
    kept = {p for p, c in support.items() if c >= k}
    leaves = [p for p in kept if not any(q[:len(p)] == p and len(q) > len(p) for q in kept)]
    leaves.sort(key=lambda p: (-support[p], p))
    out = []
    for s in seqs:
        if s in kept:
            out.append((s, s))
            continue
        if not leaves:
            out.append(((), None))
            continue
        m = max(_lcs_len(s, p) for p in leaves)
        path = next(p for p in leaves if _lcs_len(s, p) == m)
        u = next(tuple(s[i] for i in c) for c in combinations(range(len(s)), m)
                 if _is_subseq(tuple(s[i] for i in c), path))
        out.append((u, path))
    return out


sequence_sets = st.integers(1, 5).flatmap(lambda L: st.lists(
    st.lists(st.integers(0, 3), min_size=L, max_size=L), min_size=1, max_size=40))


@settings(max_examples=80, deadline=None)
@given(sequence_sets, st.integers(1, 5))
def test_bfp2ka_matches_literal_reference(rows, k):
    S = np.array(rows, dtype=np.int64)
    if len(S) < k:
        with pytest.raises(NoSolutionError):
            bfp2ka(S, k)
        return
    res = bfp2ka(S, k)
    ref = _bfp2ka_reference(S, k)
    for i, (u, path) in enumerate(ref):
        assert tuple(res.published[i, :res.length[i]].tolist()) == u
        assert (res.published[i, res.length[i]:] == -1).all()
        if path is None:
            assert res.path[i] == -1
        else:
            p = res.path[i]
            assert tuple(res.paths[p, :res.path_length[p]].tolist()) == path
        assert _is_subseq(u, tuple(S[i].tolist()))  # only the sequence's own symbols, in order
    check_sequence_k_anonymity(S, res.published, res.length, k)
    # the verifier's supports against brute force
    for i in range(len(S)):
        u = tuple(res.published[i, :res.length[i]].tolist())
        assert sum(_is_subseq(u, tuple(s)) for s in S.tolist()) >= k
    again = bfp2ka(S, k)
    assert np.array_equal(again.published, res.published) and np.array_equal(again.path, res.path)


def test_sequence_verifier_rejects_a_unique_sequence():
    S = _seqs("abc", "abd", "abe", "acd", "bcd")
    res = bfp2ka(S, 2)
    pub, length = res.published.copy(), res.length.copy()
    pub[3] = S[3]  # "acd" is in one input sequence only
    length[3] = 3
    with pytest.raises(VerificationError, match="published sequence 3 is contained in 1"):
        check_sequence_k_anonymity(S, pub, length, 2)
    pub2 = res.published.copy()
    pub2[0, 2] = 1  # a symbol beyond the published length
    with pytest.raises(VerificationError):
        check_sequence_k_anonymity(S, pub2, res.length, 2)


def test_string_dataset_and_arrays():
    X = random_walk(500, seed=4)[[f"A{i}" for i in range(10)]].to_numpy()
    S = string_dataset(X)
    assert S.shape == (500, 10) and S.min() >= 0 and S.max() <= 19
    assert np.array_equal(S, sax_words(X, 20))
    res = bfp2ka(S, 5)
    check_sequence_k_anonymity(S, res.published, res.length, 5)
    lo, hi, rec = bfp2ka_arrays(res.published, res.length, 20)
    known = np.arange(10) < res.length[:, None]
    assert (lo[known] == hi[known]).all() and (lo[~known] == 0).all() and (hi[~known] == 19).all()
    assert np.isfinite(rec).all()
    # a published symbol at position j is the sequence's own symbol at position >= j
    for i in range(50):
        u = res.published[i, :res.length[i]]
        assert _is_subseq(tuple(u.tolist()), tuple(S[i].tolist()))
