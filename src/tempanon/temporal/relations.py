"""Relations between granularities and the directly-coarser DAG (Mascetti et al., Section 3.2;
Bettini, Jajodia, Wang, *Time Granularities in Databases, Data Mining and Temporal Reasoning*).

* ``G`` is *finer than* ``H`` (G ⪯ H) if every granule of G is contained in one granule of H;
* ``G`` *groups into* ``H`` if every granule of H is the union of some granules of G (day groups
  into business-day, although day is not finer than business-day: weekends);
* ``G`` is *covered by* ``H`` (H covers G) if every instant of a granule of G lies in a granule
  of H;
* ``G`` and ``H`` are *shift-equivalent* if they have the same granules up to an index shift,
  i.e. G ⪯ H and H ⪯ G;
* ``up(z, G, H)`` is the index of the granule of H that contains granule ``z`` of G, undefined
  (``GAP``) when there is none.

Granularities like business days with holidays or explicit boundaries are not periodic, so the
relations are decided exactly on a finite *span* ``[lo, hi)`` of instants: by default the years
the data covers. The decision cuts the span into *pieces* at the change points of both
granularities (on each piece both indexes are constant) and checks the pieces with numpy; pairs
of uniform granularities (``floor((t - offset) / period)``) are decided arithmetically, so the
second never has to be enumerated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tempanon.errors import InputError
from tempanon.temporal.granularity import GAP, Granularity, _fmt

DEFAULT_SPAN = (631_152_000, 1_893_456_000)  # 1990-01-01 .. 2030-01-01


class Relation:
    """Outcome of a relation test: truth value and, when false, a witness saying why (the text
    is built on first access: formatting labels costs more than the test)."""

    __slots__ = ("holds", "_why")

    def __init__(self, holds: bool, why: str | Callable[[], str] = "") -> None:
        self.holds = bool(holds)
        self._why = why

    @property
    def reason(self) -> str:
        if callable(self._why):
            self._why = self._why()
        return self._why

    def __bool__(self) -> bool:
        return self.holds

    def __repr__(self) -> str:
        return f"Relation(holds={self.holds})"


def span_of(instants: np.ndarray) -> tuple[int, int]:
    """The whole years covering ``instants`` as a span ``[lo, hi)``."""
    if len(instants) == 0:
        return DEFAULT_SPAN
    y = np.array([instants.min(), instants.max()], dtype=np.int64).astype("datetime64[s]").astype("datetime64[Y]")
    lo = y[0].astype("datetime64[s]").astype(np.int64)
    hi = (y[1] + 1).astype("datetime64[s]").astype(np.int64)
    return int(lo), int(hi)


def _when(t: int) -> str:
    return str(_fmt(np.array([t]), "%Y-%m-%dT%H:%M:%S")[0])


def _glabel(g: Granularity, i: int) -> str:
    return str(g.label(np.array([i], dtype=np.int64))[0])


def _unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based; faster here than numpy's hash-based unique)."""
    a = np.sort(np.asarray(a, dtype=np.int64))
    if len(a) == 0:
        return a
    return a[np.r_[True, a[1:] != a[:-1]]]


def _true_change_points(g: Granularity, lo: int, hi: int) -> np.ndarray | None:
    cps = g.change_points(lo, hi)
    if cps is None:
        return None
    cps = _unique(cps)
    if len(cps) == 0:
        return cps
    return cps[g.index(cps) != g.index(cps - 1)]


def _pieces(g: Granularity, h: Granularity, lo: int, hi: int):
    if g.uniform is not None or h.uniform is not None:
        return None
    cg, ch = g.change_points(lo, hi), h.change_points(lo, hi)
    if cg is None or ch is None:
        return None
    starts = _unique(np.r_[np.int64(lo), np.asarray(cg, dtype=np.int64), np.asarray(ch, dtype=np.int64)])
    starts = starts[(starts >= lo) & (starts < hi)]
    ends = np.r_[starts[1:], np.int64(hi)]
    return starts, ends, g.index(starts), h.index(starts)


def _uniform_witness(g: Granularity, h: Granularity, lo: int) -> str:
    (p, _), (q, _) = g.uniform, h.uniform  # type: ignore[misc]
    n = min(int(np.lcm(p, q) // p) + 1, 1_000_000)
    z = g.index(np.array([lo])) + np.arange(n)
    a, b = h.index(g.start(z)), h.index(g.end(z) - 1)
    bad = np.nonzero(a != b)[0]
    if len(bad):
        j = bad[0]
        return (f"granule {_glabel(g, z[j])} of {g.name} spans the granules {_glabel(h, a[j])} and "
                f"{_glabel(h, b[j])} of {h.name}")  # fmt: skip
    return f"the granules of {g.name} are not aligned with those of {h.name}"


def _functional(g_idx: np.ndarray, h_idx: np.ndarray) -> int | None:
    """Position (into the inputs) of a g index mapped to two h indexes, or None if g -> h is a map."""
    order = np.argsort(g_idx, kind="stable")
    gs, hs = g_idx[order], h_idx[order]
    bad = np.nonzero((gs[1:] == gs[:-1]) & (hs[1:] != hs[:-1]))[0]
    return None if len(bad) == 0 else int(order[bad[0] + 1])


def finer_than(g: Granularity, h: Granularity, span: tuple[int, int] = DEFAULT_SPAN) -> Relation:
    """G ⪯ H on ``span``: each granule of G lies in one granule of H."""
    lo, hi = span
    if g is h:
        return Relation(True)
    if g.uniform is not None and h.uniform is not None:
        (p, og), (q, oh) = g.uniform, h.uniform
        if q % p == 0 and (oh - og) % p == 0:
            return Relation(True)
        return Relation(False, lambda: _uniform_witness(g, h, lo))
    pieces = _pieces(g, h, lo, hi)
    if pieces is None:
        if g.uniform is not None:
            p, og = g.uniform
            ch = _true_change_points(h, lo, hi)
            if ch is None:
                raise InputError(f"cannot compare {g.name} and {h.name}: both too fine on the span")
            starts = np.r_[np.int64(lo), ch]
            hv = h.index(starts)
            if (hv == GAP).any():
                t = int(starts[np.nonzero(hv == GAP)[0][0]])
                return Relation(False, lambda: f"the instant {_when(t)} of {g.name} granule "
                                       f"{_glabel(g, int(g.index(np.array([t]))[0]))} lies in no granule of {h.name}")
            bad = np.nonzero((ch - og) % p != 0)[0]
            if len(bad):
                t = int(ch[bad[0]])
                z = int(g.index(np.array([t]))[0])
                return Relation(False, lambda: f"granule {_glabel(g, z)} of {g.name} spans the granules "
                                       f"{_glabel(h, int(h.index(np.array([t - 1]))[0]))} and "
                                       f"{_glabel(h, int(h.index(np.array([t]))[0]))} of {h.name}")
            return Relation(True)
        # h is uniform and too fine to enumerate: check each piece of g against h's arithmetic.
        cg = g.change_points(lo, hi)
        starts = _unique(np.r_[np.int64(lo), np.asarray(cg, dtype=np.int64)])
        starts = starts[(starts >= lo) & (starts < hi)]
        ends = np.r_[starts[1:], np.int64(hi)]
        gv = g.index(starts)
        ha, hb = h.index(starts), h.index(ends - 1)
        m = gv != GAP
        bad = np.nonzero(m & (ha != hb))[0]
        if len(bad):
            j = bad[0]
            return Relation(False, lambda: f"granule {_glabel(g, gv[j])} of {g.name} spans the granules "
                                   f"{_glabel(h, ha[j])} and {_glabel(h, hb[j])} of {h.name}")
        j = _functional(gv[m], ha[m])
        if j is not None:
            return Relation(False, lambda: f"granule {_glabel(g, gv[m][j])} of {g.name} meets two granules of {h.name}")
        return Relation(True)
    starts, ends, gv, hv = pieces
    m = gv != GAP
    gap = np.nonzero(m & (hv == GAP))[0]
    if len(gap):
        j = gap[0]
        return Relation(False, lambda: f"the instant {_when(int(starts[j]))} of {g.name} granule {_glabel(g, gv[j])} "
                               f"lies in no granule of {h.name}")
    j = _functional(gv[m], hv[m])
    if j is not None:
        z = gv[m][j]
        hs = np.unique(hv[m][gv[m] == z])
        return Relation(False, lambda: f"granule {_glabel(g, z)} of {g.name} spans the granules "
                               f"{_glabel(h, hs[0])} and {_glabel(h, hs[1])} of {h.name}")
    return Relation(True)


def covered_by(g: Granularity, h: Granularity, span: tuple[int, int] = DEFAULT_SPAN) -> Relation:
    """H covers G on ``span``: every instant of every granule of G lies in some granule of H."""
    lo, hi = span
    if not h.has_gaps and h.uniform is not None:
        return Relation(True)
    pieces = _pieces(g, h, lo, hi)
    if pieces is None:  # g uniform and too fine: every instant of the span is in g
        ch = _true_change_points(h, lo, hi)
        starts = np.r_[np.int64(lo), ch]
        hv = h.index(starts)
        bad = np.nonzero(hv == GAP)[0]
        if len(bad):
            return Relation(False, lambda: f"the instant {_when(int(starts[bad[0]]))} lies in no granule of {h.name}")
        return Relation(True)
    starts, _, gv, hv = pieces
    bad = np.nonzero((gv != GAP) & (hv == GAP))[0]
    if len(bad):
        j = bad[0]
        return Relation(False, lambda: f"the instant {_when(int(starts[j]))} of {g.name} granule {_glabel(g, gv[j])} "
                               f"lies in no granule of {h.name}")
    return Relation(True)


def groups_into(g: Granularity, h: Granularity, span: tuple[int, int] = DEFAULT_SPAN) -> Relation:
    """G groups into H on ``span``: every granule of H is a union of granules of G."""
    lo, hi = span
    if g.uniform is not None and h.uniform is not None:
        return finer_than(g, h, span)
    pieces = _pieces(g, h, lo, hi)
    if pieces is None:
        if g.uniform is not None:
            # g has no gaps: H's granules are unions of g's iff H changes only on g boundaries.
            p, og = g.uniform
            ch = _true_change_points(h, lo, hi)
            bad = np.nonzero((ch - og) % p != 0)[0]
            if len(bad):
                return Relation(False, lambda: f"a granule of {h.name} starts or ends at {_when(int(ch[bad[0]]))}, "
                                       f"inside a granule of {g.name}")
            return Relation(True)
        # h is uniform and very fine: its granules are unions of g's only if g is finer and gap-free.
        r = finer_than(g, h, span)
        if not r:
            return r
        c = covered_by(h, g, span)
        return c if not c else Relation(True)
    starts, _, gv, hv = pieces
    inh = hv != GAP
    bad = np.nonzero(inh & (gv == GAP))[0]
    if len(bad):
        j = bad[0]
        return Relation(False, lambda: f"the instant {_when(int(starts[j]))} of {h.name} granule {_glabel(h, hv[j])} "
                               f"lies in no granule of {g.name}")
    touched = _unique(gv[inh])
    sel = np.isin(gv, touched) & (gv != GAP)
    j = _functional(gv[sel], hv[sel])
    if j is not None:
        return Relation(False, lambda: f"granule {_glabel(g, gv[sel][j])} of {g.name} is not inside one granule of {h.name}")
    return Relation(True)


def shift_equivalent(g: Granularity, h: Granularity, span: tuple[int, int] = DEFAULT_SPAN) -> Relation:
    """G and H have the same granules (up to an index shift): G ⪯ H and H ⪯ G."""
    a = finer_than(g, h, span)
    if not a:
        return a
    return finer_than(h, g, span)


def up(z: np.ndarray, g: Granularity, h: Granularity, span: tuple[int, int] | None = None) -> np.ndarray:
    """``up(z, G, H)``: index of the granule of H containing granule ``z`` of G (vectorized);
    ``GAP`` where undefined (the granule of G meets a gap of H or two granules of H). The test
    uses the hull ``[start, end)`` of the granule, so for a granule of G with gaps of its own it
    is conservative (may say undefined when the instants outside G's gap are all in one H)."""
    z = np.asarray(z, dtype=np.int64)
    s, e = g.start(z), g.end(z)
    a, b = h.index(s), h.index(e - 1)
    ok = (a == b) & (a != GAP)
    if h.has_gaps and len(z) and ok.any():
        lo = int(s.min()) if span is None else span[0]
        hi = int(e.max()) if span is None else span[1]
        cps = _true_change_points(h, lo - 1, hi + 1)
        if cps is not None and len(cps):
            inside = np.searchsorted(cps, e, side="left") - np.searchsorted(cps, s, side="right")
            ok &= inside == 0
    return np.where(ok, a, GAP)


@dataclass
class GranularityDAG:
    """The granularities usable on the data, ordered by finer-than, with the directly-coarser
    edges computed (Section 3.2). ``nodes[0]`` is the data's granularity."""

    nodes: list[Granularity]
    parents: list[tuple[int, ...]]  # directly coarser
    finer: np.ndarray  # finer[i, j]: nodes[i] ⪯ nodes[j]
    disregarded: dict[str, str] = field(default_factory=dict)  # name -> why
    equivalent: dict[str, str] = field(default_factory=dict)  # dropped name -> kept name
    messages: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [g.name for g in self.nodes]

    @property
    def children(self) -> list[tuple[int, ...]]:
        ch: list[list[int]] = [[] for _ in self.nodes]
        for v, ps in enumerate(self.parents):
            for p in ps:
                ch[p].append(v)
        return [tuple(c) for c in ch]


def extend_span(span: tuple[int, int], granularities: list[Granularity]) -> tuple[int, int]:
    """Widen ``span`` to whole granules of every granularity at both ends, so that a granule cut
    by the span's edge (the ISO week holding January 1) is seen whole when deciding relations."""
    lo, hi = span
    new_lo, new_hi = lo, hi
    for g in granularities:
        i = g.index(np.array([lo, hi - 1], dtype=np.int64))
        if i[0] != GAP:
            new_lo = min(new_lo, int(g.start(i[:1])[0]))
        if i[1] != GAP:
            new_hi = max(new_hi, int(g.end(i[1:])[0]))
    return new_lo, new_hi


def build_dag(data_g: Granularity, candidates: list[Granularity], span: tuple[int, int]) -> GranularityDAG:
    """Directly-coarser DAG over ``{data_g} ∪ candidates`` computed from finer-than.

    A candidate the data granularity is not finer than is disregarded (the reason kept); a
    candidate shift-equivalent to an earlier one (or to the data granularity) is reported and
    merged into it. ``span`` is widened to whole granules (:func:`extend_span`)."""
    span = extend_span(span, [data_g, *candidates])
    dag = GranularityDAG([data_g], [], np.zeros((0, 0), bool))
    compatible: list[Granularity] = []
    seen: set[str] = set()
    for h in candidates:
        if h.name in seen:
            raise InputError(f"granularity {h.name!r} listed twice")
        seen.add(h.name)
        if h is data_g:
            dag.equivalent[h.name] = data_g.name
            dag.messages.append(f"{h.name} is the data's granularity (no generalization)")
            continue
        r = finer_than(data_g, h, span)
        if not r:
            dag.disregarded[h.name] = f"the data granularity {data_g.name} is not finer than {h.name}: {r.reason}"
            dag.messages.append(f"{h.name} disregarded: {dag.disregarded[h.name]}")
            continue
        compatible.append(h)
    allg = [data_g, *compatible]
    m = len(allg)
    full = np.eye(m, dtype=bool)
    full[0, :] = True
    for i in range(1, m):
        for j in range(0, m):  # j = 0 too: a candidate with the data granularity's granules
            if i != j:
                full[i, j] = bool(finer_than(allg[i], allg[j], span))
    keep = [0]
    for i in range(1, m):
        # shift equivalence decided on the granules (finer-than both ways), never by name
        same = next((j for j in keep if full[i, j] and full[j, i]), None)
        if same is not None:
            dag.equivalent[allg[i].name] = allg[same].name
            what = " (the data's granularity: no generalization)" if same == 0 else ""
            dag.messages.append(f"{allg[i].name} is shift-equivalent to {allg[same].name} (same granules){what}; "
                                f"{allg[same].name} is kept")  # fmt: skip
            continue
        keep.append(i)
    nodes = [allg[i] for i in keep]
    f = full[np.ix_(keep, keep)].copy()
    f[1:, 0] = False
    n = len(nodes)
    parents = []
    for i in range(n):
        above = [j for j in range(n) if j != i and f[i, j]]
        direct = [j for j in above if not any(x != j and f[x, j] for x in above)]
        parents.append(tuple(direct))
    dag.nodes, dag.parents, dag.finer = nodes, parents, f
    return dag
