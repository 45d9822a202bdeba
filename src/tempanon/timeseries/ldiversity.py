"""Sensitive-attribute l-diversity by perturbation (Shou et al., TKDE, Section 5.4).

An attacker who knows a victim's pattern narrows it to a P-subgroup ``PS(r)``. For each sensitive
value ``v_i`` held by more than ``floor(|PS(r)|/l)`` series of a P-subgroup, ``x_i = |EC(v_i)| -
floor(|PS(r)|/l)`` of them (the last ones in input order) get new values inside the
epsilon-neighbourhood ``(v_i, v_i + epsilon]``, distinct from each other and from every value of
the P-subgroup. Afterwards no value covers more than ``1/l`` of a P-subgroup.
"""

from __future__ import annotations

import numpy as np


def perturb_l_diverse(values: np.ndarray, psubgroup: np.ndarray, l: int, epsilon: float) -> np.ndarray:
    """Return perturbed copies of the numeric sensitive ``values`` (one per published series)."""
    vals = np.asarray(values, dtype=float).copy()
    ps = np.asarray(psubgroup)
    size = np.bincount(ps)
    cap = size // l
    # count of (psubgroup, value) pairs, vectorized; only offending pairs are touched
    key_u, inv, cnt = np.unique(np.stack([ps.astype(float), vals]), axis=1, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    over = cnt[inv] > cap[ps]
    if not over.any():
        return vals
    rows = np.flatnonzero(over)
    order = rows[np.lexsort((rows, inv[rows]))]
    grp = inv[order]
    starts = np.flatnonzero(np.r_[True, grp[1:] != grp[:-1]])
    rank = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
    keep = cap[ps[order]]
    move = order[rank >= keep]
    j = (rank - keep + 1)[rank >= keep]  # 1..x_i
    x = (cnt[inv[move]] - cap[ps[move]]).astype(float)
    base = vals[move]
    new = base + epsilon * j / (x + 1.0)
    # distinctness inside the P-subgroup: a moved value may coincide with a value already there
    # (e.g. v + epsilon * j / (x + 1) equal to another record's value). Such a record (rare: a loop
    # over the clashing records only) gets the first offset epsilon * (j - 1 + 2**-k) / (x + 1),
    # k = 1, 2, ..., inside its own interval ((j - 1), j] * epsilon / (x + 1), that no other record
    # of its P-subgroup holds; the intervals of one value's moved records are disjoint, so the
    # records already placed keep their values.
    vals[move] = new
    _, inv2, cnt2 = np.unique(np.stack([ps.astype(float), vals]), axis=1, return_inverse=True, return_counts=True)
    clashing = np.flatnonzero(cnt2[inv2.ravel()[move]] > 1)
    for i in clashing:
        r = move[i]
        peers = vals[(ps == ps[r])]
        if np.count_nonzero(peers == vals[r]) <= 1:
            continue  # an earlier fix already made it unique
        for k in range(1, 200):
            cand = base[i] + epsilon * (j[i] - 1 + 2.0**-k) / (x[i] + 1.0)
            if cand > base[i] and not np.any(peers == cand):
                vals[r] = cand
                break
    return vals
