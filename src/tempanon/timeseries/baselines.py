"""The two baselines of Shou et al., TKDE, Section 7.3: TGA [17] and BFP2KA [20].

They are comparators for the experiments (``benchmarks/bench_timeseries.py``), not release
commands: the CLI does not offer them. Shou et al. say little about them (Sections 1-2, 7.1, 7.3):

* **TGA** ("our implementation of [17]", Nergiz, Atzori, Saygin, *Perturbation-driven
  anonymization of trajectories*): it "publishes data by firstly enforcing k-anonymity and then
  reconstructing randomly a trajectory from the anonymized form", so it "does not achieve pattern
  preservation"; it handles numerical series and is run with ``k`` equal to (k,P)-anonymity's
  ``P``. tempanon's reading (:func:`tga`): Nergiz et al.'s greedy clustering - a random unassigned
  series is the pivot, it and the ``k-1`` unassigned series nearest to it form a k-group, until
  fewer than ``k`` are left; those join the k-group whose total instant value loss (Eq. 2 summed
  over the members) grows least. Series of one data set share their instants, so the
  anonymization of a group (Nergiz et al.'s alignment and generalization) is its value envelope
  ``[min, max]`` per instant. The published series of a member is drawn uniformly and
  independently inside the envelope at every instant (the random reconstruction). The distance to
  the pivot is Euclidean (the VL of the two-series envelope, Eq. 2), where Nergiz et al. use the
  log-area cost of the pair's generalization (docs/fidelity.md D12).
* **BFP2KA** ("our implementation of [20]", Pensa, Monreale, Pinelli, Pedreschi,
  *Pattern-preserving k-anonymization of sequences*, the BF-P2kA algorithm): sequences over a
  finite alphabet, a prefix tree, "exact string match"; it "only handles alphabetical sequences",
  so the paper runs it on *String*, the SAX words at level 20 of the series
  (:func:`string_dataset`). tempanon's reading (:func:`bfp2ka`): build the prefix tree with each
  node's support (number of sequences with that prefix); prune every node of support ``< k``; each
  sequence whose path was cut is re-inserted as its longest common subsequence (LCS) with the
  root-to-leaf path of the pruned tree that shares the longest one (ties: the path of the
  larger support, then the lexicographically smaller path; of several LCS strings, the one at the
  lexicographically first positions of the sequence); a sequence whose whole path survives is
  published unchanged. Every published sequence is then a subsequence of a prefix shared by
  ``>= k`` input sequences, i.e. contained in ``>= k`` of them: the k-anonymity of sequences of
  [20], checked independently by :func:`check_sequence_k_anonymity` (docs/fidelity.md D13).

Model checks: TGA's release has envelopes, so it goes through the same verifier as Naive and
KAPRA, :func:`tempanon.verify.check_kp_anonymity`, with ``P = 1`` and no pattern columns (the
k-requirement of Definition 5 alone: k-groups of ``>= k`` series, one envelope per k-group
containing every member); its random series are checked to lie inside their envelopes. BFP2KA
publishes neither envelopes nor SAX patterns; its model (every published sequence contained in
``>= k`` input sequences) is checked by :func:`check_sequence_k_anonymity`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from tempanon.errors import InputError, NoSolutionError, VerificationError
from tempanon.timeseries.model import instant_value_loss, pattern_loss
from tempanon.timeseries.partition import envelopes
from tempanon.timeseries.sax import sax_words, znormalize

STRING_LEVEL = 20  # Section 7.1: String = SAX words of Motion at level 20


# --- TGA ------------------------------------------------------------------------------------------


@dataclass
class TGAResult:
    """Per input series its k-group, the k-groups' envelopes ``lo``/``hi`` (``(G, n)``) and the
    randomly reconstructed series published for it (``(m, n)``, inside its envelope)."""

    kgroup: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    reconstruction: np.ndarray
    stats: dict = field(default_factory=dict)


def tga_groups(X: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """Greedy clustering of TGA (Nergiz et al. [17]): pivot = a random unassigned series; it and
    the ``k-1`` unassigned series nearest to it (Euclidean; ties: the lower input index) form a
    k-group; repeated while ``>= k`` series are unassigned; each of the ``< k`` left joins the
    k-group whose total VL (Eq. 2 times the group size) grows least (ties: the lower group).
    Returns the k-group of every series (``0..G-1``)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if n < k:
        raise NoSolutionError(f"the input has {n} series, fewer than k={k}")
    rng = np.random.default_rng(seed)
    group = np.full(n, -1, dtype=np.int64)
    idx = np.arange(n)  # unassigned series, compacted from time to time
    Xr = X
    alive = np.ones(n, dtype=bool)
    n_alive = n
    g = 0
    while n_alive >= k:
        if n_alive < idx.size // 2:  # compact
            keep = alive[idx]
            idx, Xr = idx[keep], Xr[keep]
        live = np.flatnonzero(alive[idx])
        pivot_pos = live[rng.integers(live.size)]
        d = ((Xr - Xr[pivot_pos]) ** 2).sum(axis=1)
        d[~alive[idx]] = np.inf
        d[pivot_pos] = -1.0  # the pivot is always in its group
        kth = np.partition(d, k - 1)[k - 1]
        cand = np.flatnonzero(d <= kth)
        take = cand[np.lexsort((idx[cand], d[cand]))][:k]
        members = idx[take]
        group[members] = g
        alive[members] = False
        n_alive -= k
        g += 1
    left = np.flatnonzero(group < 0)
    if left.size:
        lo, hi = envelopes(X[group >= 0], group[group >= 0])
        size = np.bincount(group[group >= 0]).astype(float)
        for i in left:  # fewer than k series
            nlo, nhi = np.minimum(lo, X[i]), np.maximum(hi, X[i])
            grow = (size + 1) * instant_value_loss(nlo, nhi) - size * instant_value_loss(lo, hi)
            best = int(np.argmin(grow))
            group[i] = best
            lo[best], hi[best], size[best] = nlo[best], nhi[best], size[best] + 1
    return group


def tga(X: np.ndarray, k: int, seed: int = 0) -> TGAResult:
    """TGA on a float matrix (series x instants): :func:`tga_groups`, the envelope of every k-group,
    and per series a random series drawn uniformly inside its envelope at every instant (seeded by
    ``seed``; the draw uses a generator independent of the clustering's)."""
    X = np.asarray(X, dtype=float)
    group = tga_groups(X, k, seed)
    lo, hi = envelopes(X, group)
    rng = np.random.default_rng([seed, 1])
    u = rng.random(X.shape)
    rec = lo[group] + u * (hi[group] - lo[group])
    rec = np.clip(rec, lo[group], hi[group])
    return TGAResult(kgroup=group, lo=lo, hi=hi, reconstruction=rec,
                     stats={"kgroups": int(group.max()) + 1, "suppressed": 0})


@dataclass
class TGARelease:
    released: pd.DataFrame
    audit: pd.DataFrame
    summary: dict
    result: TGAResult


def tga_release(df: pd.DataFrame, *, id_col: str, qi, k: int, sensitive=(), seed: int = 0,
                shuffle_seed: int = 0) -> TGARelease:
    """Run TGA on ``df`` and build a release in the (k,P) table layout: ``kgroup``, ``psubgroup``
    (= the k-group), ``<col>_lo``/``<col>_hi`` (the envelope), ``<col>_rec`` (the random
    reconstruction), ``pattern`` (empty: TGA publishes no pattern representation),
    ``pattern_level`` (1), the sensitive columns; rows in a random order by k-group
    (``shuffle_seed``). Checked by :func:`tempanon.verify.check_kp_anonymity` with ``P = 1`` and no
    pattern column (the k-requirement: group sizes, one envelope per k-group containing its
    members, sensitive values unchanged, audit one-to-one) and by a check that every
    reconstructed value lies in its envelope; raises :class:`VerificationError` otherwise."""
    from tempanon.timeseries.api import _first_seen, series_matrix, shuffled_release_order
    from tempanon.verify import check_kp_anonymity

    qi = list(qi)
    sensitive = list(sensitive)
    X = series_matrix(df, qi, id_col)
    res = tga(X, k, seed)
    n = X.shape[0]
    rows = np.arange(n)
    order = shuffled_release_order(rows, res.kgroup, res.kgroup, int(shuffle_seed))
    kg = _first_seen(res.kgroup[order])
    lo, hi = res.lo[res.kgroup[order]], res.hi[res.kgroup[order]]
    rec = res.reconstruction[order]
    cols: dict = {"kgroup": kg, "psubgroup": kg}
    for j, c in enumerate(qi):
        cols[f"{c}_lo"] = lo[:, j]
        cols[f"{c}_hi"] = hi[:, j]
    for j, c in enumerate(qi):
        cols[f"{c}_rec"] = rec[:, j]
    cols["pattern"] = np.full(n, "", dtype=object)
    cols["pattern_level"] = np.ones(n, dtype=np.int64)
    released = pd.DataFrame(cols)
    for s in sensitive:
        released[s] = df[s].to_numpy()[order]
    out_row = np.empty(n, dtype=np.int64)
    out_row[order] = np.arange(n)
    audit = pd.DataFrame({"id": df[id_col].to_numpy(), "output_row": pd.array(out_row, dtype="Int64")})
    original = pd.DataFrame(X, columns=qi)
    original.insert(0, id_col, df[id_col].to_numpy())
    for s in sensitive:
        original[s] = df[s].to_numpy()
    report = check_kp_anonymity(original, released, audit, id_col=id_col, qi=qi, k=k, P=1,
                                value_columns=qi, pattern_columns=[], sensitive=sensitive)
    R = released[[f"{c}_rec" for c in qi]].to_numpy(dtype=float)
    L = released[[f"{c}_lo" for c in qi]].to_numpy(dtype=float)
    H = released[[f"{c}_hi" for c in qi]].to_numpy(dtype=float)
    if not ((L <= R) & (R <= H)).all():
        raise VerificationError("TGA check failed: a reconstructed value lies outside its envelope")
    Xp = X[order]
    summary = {
        "algorithm": "tga", "k": int(k), "series": int(n), "kgroups": report["kgroups"],
        "min_kgroup": report["min_kgroup"], "suppressed": 0,
        "value_loss": float(instant_value_loss(L, H).sum()),
        "pattern_loss": float(pattern_loss(znormalize(Xp), znormalize(R)).sum()),
        "verified": True,
    }
    return TGARelease(released=released, audit=audit, summary=summary, result=res)


# --- BFP2KA ---------------------------------------------------------------------------------------


def string_dataset(X: np.ndarray, level: int = STRING_LEVEL) -> np.ndarray:
    """*String* (Section 7.1): the SAX word of every series at ``level`` (20 in the paper), one
    symbol per instant, as integer codes ``0..level-1`` (``int16``)."""
    return sax_words(np.asarray(X, dtype=float), level).astype(np.int16)


@dataclass
class BFP2KAResult:
    """Per input sequence the published sequence: ``published[i, :length[i]]`` (the rest ``-1``),
    ``path`` the pruned-tree path it was re-inserted along (index into ``paths``; its own path if
    it was not cut), ``cut`` whether its path was pruned; ``paths`` (``(p, L)``, ``-1`` padded),
    ``path_length`` and ``path_support`` describe the root-to-leaf paths of the pruned tree."""

    published: np.ndarray
    length: np.ndarray
    path: np.ndarray
    cut: np.ndarray
    paths: np.ndarray
    path_length: np.ndarray
    path_support: np.ndarray
    stats: dict = field(default_factory=dict)


def _codes(S: np.ndarray, base: int) -> np.ndarray:
    """Integer code of each row (symbols ``>= 0``; ``-1`` ends the sequence): digits ``s+1`` in base
    ``base`` (``= V+1``), so sequences of different lengths get different codes."""
    S = np.asarray(S, dtype=np.int64)
    w = S.shape[1]
    digits = np.where(S >= 0, S + 1, 0)
    return digits @ (base ** np.arange(w, dtype=np.int64))


def _combos(L: int, m: int) -> np.ndarray:
    """All position tuples ``0 <= p_1 < ... < p_m < L`` in lexicographic order, ``(C(L, m), m)``."""
    c = list(combinations(range(L), m))
    return np.array(c, dtype=np.int64).reshape(len(c), m)


def _subseq_codes(S: np.ndarray, combos: np.ndarray, base: int) -> np.ndarray:
    """Code (as :func:`_codes`) of the subsequence of every row of ``S`` at every position tuple:
    ``(rows, C)``, without building the subsequences."""
    code = np.zeros((S.shape[0], combos.shape[0]), dtype=np.int64)
    for j in range(combos.shape[1]):
        code += (S[:, combos[:, j]] + 1) * (base ** j)
    return code


def bfp2ka(S: np.ndarray, k: int, *, batch: int = 20000) -> BFP2KAResult:
    """BF-P2kA (Pensa et al. [20]) on integer sequences ``S`` (``(n, L)``, symbols ``0..V-1``, one
    sequence per row, all of length ``L`` as SAX words are). See the module doc for the rules.

    Vectorized: the supports of all prefixes come from dense prefix ids per depth; the pruned
    tree's root-to-leaf paths are the distinct prefixes ``S[i, :depth_i]`` (``depth_i`` the longest
    prefix of ``S[i]`` with support ``>= k``); the longest common subsequence of a cut sequence with
    any path is the largest ``m`` for which one of its ``C(L, m)`` subsequences of length ``m`` is
    a subsequence of a path, looked up among the integer codes of all subsequences of all paths.
    Tested against a literal prefix tree with an LCS dynamic programme per (sequence, path)."""
    S = np.asarray(S)
    if S.ndim != 2:
        raise InputError("BFP2KA needs a 2-d array of symbol codes (sequences x positions)")
    n, L = S.shape
    if L == 0:
        raise InputError("BFP2KA needs sequences of at least one symbol")
    if n < k:
        raise NoSolutionError(f"the input has {n} sequences, fewer than k={k}")
    if n and S.min() < 0:
        raise InputError("BFP2KA: symbol codes must be >= 0")
    S = S.astype(np.int64)
    V = int(S.max()) + 1 if n and L else 1
    base = V + 1
    if L * np.log2(base) >= 62:
        raise InputError(f"BFP2KA: sequences of length {L} over {V} symbols are too long for 63-bit codes")
    # supports of every prefix; depth_i = longest prefix of S[i] with support >= k
    depth = np.zeros(n, dtype=np.int64)
    for d in range(1, L + 1):
        ids = np.unique(_codes(S[:, :d], base), return_inverse=True)[1]
        freq = np.bincount(ids)[ids] >= k
        depth += freq & (depth == d - 1)
    # root-to-leaf paths of the pruned tree: the distinct S[i, :depth_i] with depth_i >= 1
    padded = np.where(np.arange(L) < depth[:, None], S, -1)
    pcode = _codes(padded, base)
    has = depth >= 1
    ucode, first, inv = np.unique(pcode[has], return_index=True, return_inverse=True)
    paths = padded[np.flatnonzero(has)[first]]
    plen = depth[np.flatnonzero(has)[first]]
    # keep the leaves: a prefix S[i, :depth_i] can be an inner node (a sibling branch goes deeper)
    inner = np.zeros(len(ucode), dtype=bool)
    for d in np.unique(plen):
        longer = plen > d
        if longer.any():
            pre = _codes(np.where(np.arange(L) < d, paths[longer], -1), base)
            inner |= (plen == d) & np.isin(ucode, pre)
    leaf_id = np.cumsum(~inner) - 1
    ucode, paths, plen = ucode[~inner], paths[~inner], plen[~inner]
    # support of a path = sequences having it as a prefix (those with depth >= its length sharing it)
    psup = np.zeros(len(ucode), dtype=np.int64)
    for d in np.unique(plen):
        sel = np.flatnonzero(plen == d)
        pre = _codes(np.where(np.arange(L) < d, S, -1), base)
        cnt = np.unique(pre, return_counts=True)
        psup[sel] = cnt[1][np.searchsorted(cnt[0], ucode[sel])]
    # rank of each path: larger support first, then the lexicographically smaller path
    lex = np.lexsort(tuple(paths[:, j] for j in range(L - 1, -1, -1)))
    lexpos = np.empty(len(paths), dtype=np.int64)
    lexpos[lex] = np.arange(len(paths))
    rank_order = np.lexsort((lexpos, -psup))
    prank = np.empty(len(paths), dtype=np.int64)
    prank[rank_order] = np.arange(len(paths))
    # every subsequence of every path -> the best-ranked path holding it
    sub_codes, sub_rank = [], []
    for d in np.unique(plen):
        sel = np.flatnonzero(plen == d)
        for m in range(0, int(d) + 1):
            code = _subseq_codes(paths[sel], _combos(int(d), m), base)
            sub_codes.append(code.ravel())
            sub_rank.append(np.repeat(prank[sel], code.shape[1]))
    published = np.full((n, L), -1, dtype=np.int64)
    length = np.zeros(n, dtype=np.int64)
    path = np.full(n, -1, dtype=np.int64)
    cut = depth < L
    whole = np.flatnonzero(~cut)
    published[whole] = S[whole]
    length[whole] = L
    path[whole] = leaf_id[inv[np.searchsorted(np.flatnonzero(has), whole)]]
    todo = np.flatnonzero(cut)
    if sub_codes and todo.size:
        allc = np.concatenate(sub_codes)
        allr = np.concatenate(sub_rank)
        o = np.lexsort((allr, allc))
        allc, allr = allc[o], allr[o]
        keep = np.r_[True, allc[1:] != allc[:-1]]
        sc, sr = allc[keep], allr[keep]  # each code with its best (smallest) path rank
        maxlen = int(plen.max())
        for b0 in range(0, todo.size, batch):
            rows = todo[b0:b0 + batch]
            open_ = np.ones(rows.size, dtype=bool)
            for m in range(maxlen, -1, -1):
                if not open_.any():
                    break
                r = rows[open_]
                combos = _combos(L, m)
                code = _subseq_codes(S[r], combos, base)
                at = np.minimum(np.searchsorted(sc, code), sc.size - 1)
                found = sc[at] == code
                rk = np.where(found, sr[at], np.iinfo(np.int64).max)
                best = rk.min(axis=1)
                ok = best < np.iinfo(np.int64).max
                if not ok.any():
                    continue
                # the first combination (lexicographic positions) held by the chosen path
                first_c = np.argmax(rk[ok] == best[ok, None], axis=1)
                rr = r[ok]
                if m:
                    published[rr, :m] = S[rr[:, None], combos[first_c]]
                length[rr] = m
                path[rr] = rank_order[best[ok]]
                idx_open = np.flatnonzero(open_)
                open_[idx_open[ok]] = False
    # cut sequences with no path at all (no symbol of support >= k at the root): published empty
    stats = {"paths": int(len(paths)), "cut": int(cut.sum()), "mean_length": float(length.mean()) if n else 0.0,
             "max_path_length": int(plen.max()) if plen.size else 0, "suppressed": 0}
    return BFP2KAResult(published=published, length=length, path=path, cut=cut, paths=paths,
                        path_length=plen, path_support=psup, stats=stats)


def check_sequence_k_anonymity(S: np.ndarray, published: np.ndarray, length: np.ndarray, k: int) -> dict:
    """Independent check of BFP2KA's output (the k-anonymity of sequences of [20]): every published
    sequence ``published[i, :length[i]]`` is a subsequence of at least ``k`` input sequences (rows
    of ``S``), and there is one published sequence per input sequence. Counts by enumerating the
    subsequences of every input sequence (positions in increasing order), one per distinct
    subsequence and input; raises :class:`VerificationError` naming a failing row."""
    S = np.asarray(S, dtype=np.int64)
    P_ = np.asarray(published, dtype=np.int64)
    length = np.asarray(length, dtype=np.int64)
    n, L = S.shape
    if P_.shape != (n, L) or length.shape != (n,):
        raise VerificationError("sequence k-anonymity check failed: one published sequence per input needed")
    if ((length < 0) | (length > L)).any():
        raise VerificationError("sequence k-anonymity check failed: a published length is out of range")
    if (np.where(np.arange(L) < length[:, None], P_ < 0, P_ != -1)).any():
        raise VerificationError("sequence k-anonymity check failed: padding or symbols misplaced")
    if n < k:
        raise VerificationError(f"sequence k-anonymity check failed: {n} sequences, fewer than k={k}")
    V = max(int(S.max()) + 1 if S.size else 1, int(P_.max()) + 1 if P_.size else 1)
    weights = (V + 1) ** np.arange(L, dtype=np.int64)

    def enc(A):
        return np.where(A >= 0, A + 1, 0) @ weights

    support = np.zeros(n, dtype=np.int64)
    pcode = enc(P_)
    for m in np.unique(length):
        rows = np.flatnonzero(length == m)
        if m == 0:
            support[rows] = n
            continue
        targets = np.unique(pcode[rows])
        counts = np.zeros(targets.size, dtype=np.int64)
        combos = list(combinations(range(L), int(m)))
        step = max(1, 2_000_000 // max(1, len(combos)))
        for b0 in range(0, n, step):
            Sb = S[b0:b0 + step]
            code = np.zeros((Sb.shape[0], len(combos)), dtype=np.int64)
            for j in range(int(m)):
                code += (Sb[:, [c[j] for c in combos]] + 1) * weights[j]
            code = np.sort(code, axis=1)
            distinct = np.c_[np.ones((code.shape[0], 1), dtype=bool), code[:, 1:] != code[:, :-1]]
            c = code[distinct]
            c = c[np.isin(c, targets)]
            u, cnt = np.unique(c, return_counts=True)
            counts[np.searchsorted(targets, u)] += cnt
        support[rows] = counts[np.searchsorted(targets, pcode[rows])]
    if (support < k).any():
        i = int(np.flatnonzero(support < k)[0])
        raise VerificationError(
            f"sequence k-anonymity check failed: published sequence {i} is contained in {support[i]} input "
            f"sequences, fewer than k={k}")
    return {"k": int(k), "min_support": int(support.min()), "sequences": int(n)}


def bfp2ka_arrays(published: np.ndarray, length: np.ndarray, n_symbols: int):
    """Envelopes and reconstructed normalized series of a BFP2KA output for the Section 7.1
    queries on *String* (symbol codes as values): the published symbols are read position by
    position (symbol ``j`` of the published sequence at instant ``j``); a known position is the
    point ``[s, s]``, an unknown one (beyond the published length) the whole range
    ``[0, n_symbols-1]``. The reconstructed series takes the published codes and, at unknown
    positions, the mean of the known ones, z-normalized (an empty sequence reconstructs flat)."""
    P_ = np.asarray(published, dtype=float)
    known = np.arange(P_.shape[1]) < np.asarray(length)[:, None]
    lo = np.where(known, P_, 0.0)
    hi = np.where(known, P_, float(n_symbols - 1))
    cnt = known.sum(axis=1, keepdims=True)
    mean = np.where(cnt > 0, np.where(known, P_, 0.0).sum(axis=1, keepdims=True) / np.maximum(cnt, 1), 0.0)
    rec = znormalize(np.where(known, P_, mean))
    return lo, hi, rec


