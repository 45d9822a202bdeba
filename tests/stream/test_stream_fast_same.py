"""The fast step's kernel made cheaper without changing what it finds (issue 14, 2026-11-26): the hot
functions compiled without numba's reference counting (``_fastkernel.jit_nonrt``), the candidates'
sort without allocation (``_fastkernel.stable_order``), and the flows' residual network rewritten in
place after a cycle instead of rebuilt (``_fastkernel.cancel_cycles``). Every placement is the same as
before: fingerprints of whole random streams' releases computed with the kernel of main at 7c6b8fb
(before these changes), and the daily use-of-force cells in docs/benchmarks.md ("Fast step: the same
search, cheaper")."""

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.stream.model import CostModel
from tempanon.stream.publisher import StreamPublisher


def _stream_fingerprints():
    """Per random stream (w in {1, 2, 4, 5, 8}, l in {2, 3, 5}, linear and quadratic mu, defer 0 and the
    default, skewed values): md5 of the final placements (``placed`` per record, flushed)."""
    import pandas as pd

    rng = np.random.default_rng(20261126)
    out = []
    for case in range(30):
        w = [1, 2, 4, 5, 8][case % 5]
        l = [2, 3, 5][case % 3]
        kind = ["linear", "quadratic"][case % 2]
        kw = {"defer": 0.0} if case % 4 == 0 else {}
        cost = CostModel.linear(w, 1.0, 10.0) if kind == "linear" else CostModel.quadratic(w, 10.0)
        pub = StreamPublisher(l, w, sensitive="s", qi=["q"], cost=cost, step="fast", **kw)
        rid = 0
        for t in range(18):
            vals = rng.choice(list("abcdefg"), size=int(rng.integers(0, 14)), p=[0.3, 0.2, 0.15, 0.12, 0.1, 0.08, 0.05])
            snap = pd.DataFrame({"q": [0] * len(vals), "s": list(vals)}, index=np.arange(rid, rid + len(vals)))
            rid += len(vals)
            pub.push(snap, label=str(t))
        pub.flush()
        placed = np.ascontiguousarray(pub.record_table()["placed"].to_numpy(), dtype=np.int64)
        out.append(hashlib.md5(placed.tobytes()).hexdigest()[:12])
    return out


# computed with the kernel of main at 7c6b8fb (before the changes above)
MAIN_FINGERPRINTS = [
    '5ce8f971b779', '0ef79d5e0f9a', 'e3b595b0d10b', 'a8acdfecf812', '58c0cc734e02', '7160f84e94cf',
    '6972dc936259', '9b8559239841', '52cd3ab4d6bd', '79c5e6b66f4f', 'b2c7db9fee39', 'e7115c568b4a',
    '6536a7a0ed4e', '470b6209d91a', 'e0d296e919f9', '8c3affa8a3fa', '77ed7bc58909', '4c76d8665433',
    'e0a7745339b8', 'ca6a4d556e15', 'dfd2820fe9d0', '8c66235d0e9c', '591bd5611ac6', '805ce1b4cf8e',
    'fe46e057b84b', 'dbf9231995b9', '9511e92713a5', '91fda72c616c', '0085450e2eb9', 'e3105845f146',
]


def test_placements_are_those_of_the_kernel_before():
    """30 random streams place every record exactly as the kernel before the changes did (the streams
    use the flow polish and the level transfers: checked through the kernel's counters)."""
    from tempanon.stream import fast

    before = fast.STATS.copy()
    got = _stream_fingerprints()
    assert fast.STATS[9] > before[9] and fast.STATS[36] > before[36] and fast.STATS[37] > before[37]
    assert got == MAIN_FINGERPRINTS


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, -1e-6, 3.0, 1e300]), max_size=150))
def test_stable_order_is_numpy_mergesort(keys):
    """``_fastkernel.stable_order`` (fill_candidates' sort, no allocation) is ``np.argsort(kind="mergesort")``
    (stable: equal keys in index order), on lists with many ties."""
    from tempanon.stream import fast

    k = fast.kernel()
    key = np.array(keys, dtype=np.float64)
    nc = len(key)
    idx = np.full(nc + 1, -7, dtype=np.int64)
    tmp = np.zeros(nc + 1, dtype=np.int64)
    k.stable_order(key, np.int64(nc), idx, tmp)
    assert idx[:nc].tolist() == np.argsort(key, kind="mergesort").tolist()
    assert idx[nc] == -7
