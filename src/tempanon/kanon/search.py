"""Full-domain k-anonymity searches over the generalization lattice.

Implements LeFevre, DeWitt, Ramakrishnan, "Incognito: Efficient Full-Domain K-Anonymity"
(SIGMOD 2005):

* :func:`incognito` -- Basic Incognito (Section 3.1, Figure 7): a-priori over quasi-identifier
  subsets of size 1..n, breadth-first search by height with marking of generalizations of
  anonymous nodes, rollup of frequency sets from parents, graph generation (join, prune, edge
  generation) for the next subset size. ``variant="super-roots"`` (Section 3.3.1) computes each
  family's roots from one frequency set of their common specialization; ``variant="cube"``
  (Section 3.3.2) pre-computes the zero-generalization frequency sets of every subset (the data
  cube) and rolls the roots up from them.
* :func:`binary_search` -- Samarati's binary search on height (Section 2.2).
* :func:`bottom_up` -- bottom-up breadth-first search, with or without rollup (Section 2.2).
* :func:`exhaustive` -- every node checked from the table: the test oracle.

All of them take the table as its zero-generalization :class:`FrequencySet` (see
:func:`tempanon.lattice.freqset.encode_table`), and count in :class:`SearchStats` the frequency
sets they evaluate, which reproduces the paper's "nodes searched" comparison.

Two exact short cuts keep the search fast without changing what it checks (``nodes_checked`` is
the paper's count):

* **Checks decided by projection.** A candidate with an attribute at a level of a single value
  (``*``) has exactly the frequency set of its projection on the other attributes, and the prune
  step of graph generation put that projection in S: it is k-anonymous. Such a check is counted
  (``SearchStats.by_projection``) but needs no frequency set -- on Adult with 9 quasi-identifiers
  this is 95% of Incognito's checks without suppression and 89% with 2%.
* **Batched root checks.** The remaining roots of a family are rolled up from a tree of
  super-roots, and the roots of each small group are checked together in one pass
  (:func:`~tempanon.lattice.freqset.small_class_tuples`); only the roots found not anonymous get
  a frequency set, from which their generalizations are rolled up.

Implementation note: each attribute subset's candidate nodes are a boolean grid over the product
of its attributes' levels, so graph generation is vectorized: the join of two families sharing a
prefix is an outer AND of their grids, pruning ANDs the grids of the other subsets, and edges are
the direct-generalization steps inside the grid (which is what the paper's edge-generation query
computes: the Hasse diagram of the candidates). A family's breadth-first search walks its grid's
cells as flat C-order indices (edges as integer steps), which visit in the same (height, levels)
order as level tuples.
"""

from __future__ import annotations

import heapq
import itertools
import math
import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from tempanon.data.scratch import scratch_dir
from tempanon.errors import InputError
from tempanon.lattice.dimension import Dimension
from tempanon.lattice.freqset import (
    EngineTable,
    FrequencySet,
    Table,
    _code_dtype,
    project,
    rollup,
    small_class_tuples,
    table_as_frequency_set,
    table_frequency_set,
)
from tempanon.kanon.ldiversity import LDiversity, as_ldiversity
from tempanon.lattice.lattice import Lattice, Node

ProgressFn = Callable[[str, int, int], None]

ALGORITHMS = ("incognito", "super-roots", "cube", "binary-search", "bottom-up", "bottom-up-rollup", "exhaustive")
PARALLEL_MIN_ROWS = 500_000
"""Tables with at least this many distinct rows search Incognito's families on several threads."""

_BATCH_CELLS = 16_384
"""Roots are checked together in one batched rollup once (roots x rows of their super-root) is
at most this; larger groups are split further in the tree of super-roots."""

COMPLETE = {"incognito", "super-roots", "cube", "bottom-up", "bottom-up-rollup", "exhaustive"}


@dataclass
class SearchStats:
    """Work counters.

    ``nodes_checked`` counts **checks**: k-anonymity (and l-diversity) tests of one node's frequency
    set, each decided from a frequency set or by projection. Every algorithm checks a node of a
    lattice at most once, so this is also the number of distinct nodes checked -- but for
    Incognito the nodes belong to the lattices of *every* attribute subset (``search_space`` of
    them, 2^n - 1 subset lattices), not only to the full lattice: that is why Incognito can report
    more checks than the full lattice has nodes (e.g. with suppression). ``full_lattice_checks``
    counts the checks of nodes of the full lattice (all quasi-identifiers).
    """

    nodes_checked: int = 0
    table_scans: int = 0
    rollups: int = 0
    cube_cuboids: int = 0
    seconds: float = 0.0
    candidates: int = 0  # nodes in the candidate graphs (Incognito: sum over iterations)
    pruned_subsets: int = 0  # nodes of all subset lattices never made candidates (a-priori pruning, subset property)
    marked: int = 0  # nodes not checked because a specialization was anonymous (generalization property)
    by_projection: int = 0  # checks answered without a frequency set: an attribute at a one-value level
    full_lattice_checks: int = 0  # checks of nodes of the full lattice (every quasi-identifier)
    search_space: int = 0  # nodes of the lattices the algorithm searches (Incognito: all subset lattices)
    cube_spilled: int = 0  # cube cuboids kept on disk (over the memory budget) until their iteration
    cache_peak: int = 0  # bottom-up with rollup: most frequency sets held at once (in memory or on disk)
    cache_spilled: int = 0  # bottom-up with rollup: frequency sets written to disk (over the memory budget)
    stopped: str | None = None  # why a budgeted search stopped early (None: it ran to the end)

    def add(self, other: SearchStats) -> None:
        self.nodes_checked += other.nodes_checked
        self.table_scans += other.table_scans
        self.rollups += other.rollups
        self.cube_cuboids += other.cube_cuboids
        self.candidates += other.candidates
        self.pruned_subsets += other.pruned_subsets
        self.marked += other.marked
        self.by_projection += other.by_projection
        self.full_lattice_checks += other.full_lattice_checks
        self.cube_spilled += other.cube_spilled
        self.cache_peak = max(self.cache_peak, other.cache_peak)
        self.cache_spilled += other.cache_spilled


@dataclass
class Budget:
    """A bound on a search's work: at most ``max_nodes`` checks and ``time_limit`` seconds (wall
    clock, from the start of the search). When either is reached the search stops between two
    checks and returns the anonymous nodes it has established so far (``complete=False``,
    ``stats.stopped`` says why)."""

    max_nodes: int | None = None
    time_limit: float | None = None
    used: int = 0
    started: float = field(default_factory=time.perf_counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        import numbers

        if self.max_nodes is not None and (isinstance(self.max_nodes, bool) or not isinstance(self.max_nodes, numbers.Integral)
                                           or self.max_nodes < 1):  # ('10' passed here and failed the search's comparison)
            raise InputError(f"max_nodes must be a positive integer, got {self.max_nodes!r}")
        if self.time_limit is not None and (isinstance(self.time_limit, bool) or not isinstance(self.time_limit, numbers.Real)
                                            or not self.time_limit > 0):  # fmt: skip
            raise InputError(f"time_limit must be a positive number of seconds, got {self.time_limit!r}")

    def spend(self) -> None:
        with self._lock:
            self.used += 1
            used = self.used
        if self.max_nodes is not None and used > self.max_nodes:
            raise BudgetExhausted(f"--max-nodes {self.max_nodes} reached")
        if self.time_limit is not None and time.perf_counter() - self.started > self.time_limit:
            raise BudgetExhausted(f"--time-limit {self.time_limit:g} s reached")


class BudgetExhausted(Exception):
    """Raised inside a search when its :class:`Budget` is used up (caught by the search)."""


@dataclass
class SearchResult:
    """Outcome of a lattice search.

    ``anonymous_nodes`` are level vectors (one level per dimension, in dimension order) sorted by
    (height, levels). For the sound and complete algorithms (``complete=True``) they are **all**
    k-anonymous full-domain generalizations; binary search reports the anonymous nodes it met.
    """

    algorithm: str
    k: int
    max_suppressed: int
    lattice_size: int
    anonymous_nodes: list[Node]
    minimal_nodes: list[Node]
    complete: bool
    stats: SearchStats = field(default_factory=SearchStats)


class _Ctx:
    def __init__(
        self,
        dims: Sequence[Dimension],
        table: Table,
        k: int,
        max_suppressed: int,
        progress: ProgressFn | None,
        l: LDiversity | int | None = None,
        budget: Budget | None = None,
    ):
        if k < 1:
            raise InputError(f"k must be >= 1, got {k}")
        l = as_ldiversity(l)
        if l is not None and not table.sensitive:
            raise InputError("an l-diversity check needs a table encoded with its sensitive attribute")
        if l is not None and max_suppressed:
            raise InputError(
                "l-diversity is checked inside the lattice search only without tuple suppression (with it the "
                "generalization property fails); run_search filters the k-anonymous nodes instead"
            )
        self.l = l
        self.budget = budget
        self.dims = list(dims)
        self.table = table
        self.k = int(k)
        self.max_suppressed = int(max_suppressed)
        self.stats = SearchStats()
        self.progress = progress
        # root checks can be batched when class sizes are tuple counts
        self.batchable = l is None and not table.n_uid and not table.sensitive
        # per attribute, for the families' grids: level heights, levels of one value, largest
        # height gain along one edge
        self.dim_arrays = [
            (np.asarray(d.heights, dtype=np.int64), np.array([d.cardinality(v) <= 1 for v in range(d.n_levels)], dtype=bool),
             max([1] + [d.heights[p] - d.heights[v] for v, ps in enumerate(d.parents) for p in ps]))
            for d in self.dims
        ]  # fmt: skip

    def child(self) -> _Ctx:
        """Same search, fresh counters (for one family searched on a worker thread)."""
        c = _Ctx.__new__(_Ctx)
        c.__dict__.update(self.__dict__)
        c.stats = SearchStats()
        return c

    def tick(self, full: bool) -> None:
        """Count one check (and spend one unit of the budget, which may stop the search)."""
        if self.budget is not None:
            self.budget.spend()
        self.stats.nodes_checked += 1
        if full:
            self.stats.full_lattice_checks += 1

    def tick_many(self, n: int, full: bool) -> None:
        """``n`` checks at once (as many :meth:`tick` calls; the budget may stop the search)."""
        if self.budget is not None:
            for _ in range(n):
                self.tick(full)
            return
        self.stats.nodes_checked += n
        if full:
            self.stats.full_lattice_checks += n

    def check(self, fs: FrequencySet) -> bool:
        self.tick(len(fs.attrs) == len(self.dims))
        if self.l is None:
            return fs.is_anonymous(self.k, self.max_suppressed)
        return fs.is_anonymous(self.k, self.max_suppressed) and bool(self.l.holds(fs).all())

    def check_any(self, fs: FrequencySet) -> bool:
        """The check of one node without relying on monotonicity: with l and suppression, the
        classes failing k or l are suppressed and must hold at most ``max_suppressed`` rows."""
        if self.l is None or not self.max_suppressed:
            return self.check(fs)
        self.tick(len(fs.attrs) == len(self.dims))
        sizes, rows, _ = fs._classes()
        bad = (sizes < self.k) | ~self.l.holds(fs)
        return int(rows[bad].sum()) <= self.max_suppressed

    def scan(self, attrs: Sequence[int], levels: Sequence[int]) -> FrequencySet:
        self.stats.table_scans += 1
        return table_frequency_set(self.table, self.dims, attrs, levels)

    def roll(self, fs: FrequencySet, levels: Sequence[int]) -> FrequencySet:
        self.stats.rollups += 1
        return rollup(fs, self.dims, levels)


# ---- grids ---------------------------------------------------------------------------------------


def _heights_grid(dims: Sequence[Dimension], attrs: Sequence[int]) -> np.ndarray:
    shape = tuple(dims[j].n_levels for j in attrs)
    h = np.zeros(shape, dtype=np.int64)
    for ax, j in enumerate(attrs):
        sh = [1] * len(attrs)
        sh[ax] = dims[j].n_levels
        h = h + np.asarray(dims[j].heights, dtype=np.int64).reshape(sh)
    return h


_SHIFTS: dict[tuple[int, int], tuple[tuple, tuple]] = {}


def _shift(ndim: int, ax: int) -> tuple[tuple, tuple]:
    """Index tuples of the cells above level 0 on axis ``ax`` and of the cells one level below them."""
    sl = _SHIFTS.get((ndim, ax))
    if sl is None:
        pre = (slice(None),) * ax
        sl = _SHIFTS[(ndim, ax)] = (pre + (slice(1, None),), pre + (slice(None, -1),))
    return sl


def _has_member_below(grid: np.ndarray, dims: Sequence[Dimension], attrs: Sequence[int]) -> np.ndarray:
    """For each cell: does ``grid`` hold a direct specialization of it?"""
    out = np.zeros(grid.shape, dtype=bool)
    for ax, j in enumerate(attrs):
        d = dims[j]
        if d.is_chain:
            dst, src = _shift(grid.ndim, ax)
            out[dst] |= grid[src]
        else:
            for v in range(d.n_levels):
                ch = d.children[v]
                if ch:
                    idx = [slice(None)] * grid.ndim
                    idx[ax] = v
                    out[tuple(idx)] |= np.take(grid, ch, axis=ax).any(axis=ax)
    return out


def minimal_nodes(anonymous: np.ndarray, dims: Sequence[Dimension], attrs: Sequence[int] | None = None) -> np.ndarray:
    """Anonymous cells with no anonymous direct specialization (grid form)."""
    attrs = tuple(range(anonymous.ndim)) if attrs is None else tuple(attrs)
    return anonymous & ~_has_member_below(anonymous, dims, attrs)


def _sorted_nodes(grid: np.ndarray, heights: np.ndarray) -> list[Node]:
    cells = np.argwhere(grid)
    if len(cells) == 0:
        return []
    hs = heights[tuple(cells.T)]
    order = np.lexsort(tuple(cells.T[::-1]) + (hs,))
    return [tuple(c) for c in cells[order].tolist()]


def _result(ctx: _Ctx, algorithm: str, anon_grid: np.ndarray, t0: float, complete: bool = True) -> SearchResult:
    attrs = tuple(range(len(ctx.dims)))
    heights = _heights_grid(ctx.dims, attrs)
    ctx.stats.seconds = time.perf_counter() - t0
    return SearchResult(
        algorithm=algorithm,
        k=ctx.k,
        max_suppressed=ctx.max_suppressed,
        lattice_size=int(anon_grid.size),
        anonymous_nodes=_sorted_nodes(anon_grid, heights),
        minimal_nodes=_sorted_nodes(minimal_nodes(anon_grid, ctx.dims, attrs), heights),
        complete=complete,
        stats=ctx.stats,
    )


# ---- Incognito -----------------------------------------------------------------------------------


def incognito(
    dims: Sequence[Dimension],
    table: Table,
    k: int,
    max_suppressed: int = 0,
    *,
    variant: str = "basic",
    progress: ProgressFn | None = None,
    l: LDiversity | int | None = None,
    workers: int | None = None,
    budget: Budget | None = None,
    cube_memory: int | None = None,
) -> SearchResult:
    """Incognito (Section 3, Figure 8): all k-anonymous full-domain generalizations.

    ``variant`` is ``"basic"`` (3.1), ``"super-roots"`` (3.3.1) or ``"cube"`` (3.3.2). A node is
    k-anonymous when the tuples in classes smaller than k number at most ``max_suppressed``
    (Section 2.1); the subset and generalization properties hold with that threshold, and with
    respondent-level class sizes.

    The families (attribute subsets) of one iteration are independent subgraphs; on tables of at
    least :data:`PARALLEL_MIN_ROWS` distinct rows they are searched by ``workers`` threads (numpy
    releases the GIL on large arrays). Results and counters do not depend on ``workers``.

    With a ``budget`` the search may stop early (:class:`Budget`); it then returns the anonymous
    nodes of the full lattice it can vouch for: every anonymous node ``x`` found for an attribute
    subset, extended with the other attributes at a one-value level (``*``), has the frequency
    set of ``x`` itself and is anonymous (``complete=False``). ``cube_memory`` bounds the bytes of
    cube cuboids kept in memory (default :data:`CUBE_MEMORY_BYTES`; the rest wait on disk).
    """
    if variant not in ("basic", "super-roots", "cube"):
        raise InputError(f"unknown Incognito variant {variant!r}")
    t0 = time.perf_counter()
    ctx = _Ctx(dims, table, k, max_suppressed, progress, l, budget)
    n = len(dims)
    ctx.stats.search_space = _subset_lattices_total(dims)
    name = {"basic": "incognito", "super-roots": "super-roots", "cube": "cube"}[variant]
    # C_1: every attribute's own DAG.
    C: dict[tuple[int, ...], np.ndarray] = {(j,): np.ones(dims[j].n_levels, dtype=bool) for j in range(n)}
    known: dict[tuple[int, ...], np.ndarray] = {}
    if workers is None:
        # an engine table (its bottom set did not fit the driver) is searched on one thread: the
        # engine's reads are serialized anyway, and two families' frequency sets at once would
        # double the driver's peak
        big = table.n_rows >= PARALLEL_MIN_ROWS and not isinstance(table, EngineTable)
        workers = min(2, os.cpu_count() or 1) if big else 1
    pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 else None
    cube = None
    try:
        cube = _CubeStore(ctx, CUBE_MEMORY_BYTES if cube_memory is None else cube_memory) if variant == "cube" else None
        _incognito_iterations(ctx, C, known, n, variant, cube, pool, progress)
    except BudgetExhausted as exc:
        ctx.stats.stopped = str(exc)
        return _result(ctx, name, _extend_known(known, dims), t0, complete=False)
    finally:
        if pool is not None:
            pool.shutdown()
        if cube is not None:
            cube.close()
    full = tuple(range(n))
    anon_full = known.get(full, np.zeros(tuple(d.n_levels for d in dims), dtype=bool))
    return _result(ctx, name, anon_full, t0)


def _incognito_iterations(ctx, C, known, n, variant, cube, pool, progress) -> None:
    """The a-priori loop of Figure 8: search each subset size, then generate the next graph.
    ``known`` receives every searched family's anonymous nodes (S_i per family, all iterations)."""
    dims = ctx.dims
    for i in range(1, n + 1):
        S: dict[tuple[int, ...], np.ndarray] = {}
        families = sorted(C.items())

        def run(item: tuple[tuple[int, ...], np.ndarray]) -> tuple[tuple[int, ...], np.ndarray, SearchStats]:
            # each family is searched with its own counters (families are independent subgraphs)
            fctx = ctx.child()
            try:
                return item[0], _search_family(fctx, item[0], item[1], variant, cube), fctx.stats
            except BudgetExhausted:
                ctx.stats.add(fctx.stats)
                raise

        n_cand = sum(int(cand.sum()) for _f, cand in families)
        ctx.stats.candidates += n_cand
        ctx.stats.pruned_subsets += _subset_lattice_nodes(dims, i) - n_cand
        engine = getattr(ctx.table, "source", None) if isinstance(ctx.table, EngineTable) else None
        if engine is not None and hasattr(engine, "prepare_frequency_sets"):
            # the bottom set stays in the engine: every table scan of this iteration in one job
            # (GROUP BY GROUPING SETS), read back node by node as the families reach them
            engine.prepare_frequency_sets([s for f, cand in families for s in _planned_scans(ctx, f, cand, variant)])
        try:
            results = pool.map(run, families) if pool is not None else map(run, families)
            for fi, (family, anon, fstats) in enumerate(results):
                ctx.stats.add(fstats)
                known[family] = anon
                if anon.any():
                    S[family] = anon
                if progress is not None:
                    progress(f"Incognito: subsets of size {i}/{n}", fi + 1, len(families))
        finally:
            if engine is not None and hasattr(engine, "finish_frequency_sets"):
                engine.finish_frequency_sets()
        if cube is not None:
            cube.discard(i)  # cuboids of this size whose family was no candidate
        if i < n:
            C = _graph_generation(S, dims)
            if not C:
                ctx.stats.pruned_subsets += sum(_subset_lattice_nodes(dims, j) for j in range(i + 1, n + 1))
                return


def _planned_scans(ctx: _Ctx, family: tuple[int, ...], cand: np.ndarray, variant: str) -> list[tuple[tuple[int, ...], Node]]:
    """The nodes whose frequency sets :func:`_search_family` will compute from T for this family:
    basic Incognito, every root not decided by projection (roots are never marked: no candidate
    specializes them); super-roots, the meet of those roots. (Cube reads no table.)"""
    if variant == "cube":
        return []
    roots_grid = cand & ~_has_member_below(cand, ctx.dims, family)
    if len(family) > 1:
        one: np.ndarray | bool = False
        for ax, j in enumerate(family):
            sh = [1] * len(family)
            sh[ax] = cand.shape[ax]
            one = one | ctx.dim_arrays[j][1].reshape(sh)
        roots_grid = roots_grid & ~np.broadcast_to(one, cand.shape)
    roots = [tuple(int(x) for x in r) for r in np.argwhere(roots_grid)]
    if not roots:
        return []
    if variant == "super-roots":
        return [(family, _meet(ctx.dims, family, roots))]
    return [(family, r) for r in roots]


def _subset_lattices_total(dims: Sequence[Dimension]) -> int:
    """Nodes in the lattices of all non-empty attribute subsets: prod(levels + 1) - 1."""
    out = 1
    for d in dims:
        out *= d.n_levels + 1
    return out - 1


def _top_single_levels(dims: Sequence[Dimension]) -> list[int | None]:
    """Per attribute: a level with a single value (``*``), or ``None`` when there is none."""
    out: list[int | None] = []
    for d in dims:
        one = [v for v in range(d.n_levels) if d.cardinality(v) <= 1]
        out.append(one[0] if one else None)
    return out


def _extend_known(known: dict[tuple[int, ...], np.ndarray], dims: Sequence[Dimension]) -> np.ndarray:
    """Full-lattice nodes proved anonymous by the families searched so far: a family's anonymous
    node with every other attribute at a one-value level has the same classes (projection)."""
    shape = tuple(d.n_levels for d in dims)
    out = np.zeros(shape, dtype=bool)
    tops = _top_single_levels(dims)
    for family, anon in known.items():
        others = [j for j in range(len(dims)) if j not in family]
        if any(tops[j] is None for j in others) or not anon.any():
            continue
        idx: list = [slice(None)] * len(dims)
        for j in others:
            idx[j] = tops[j]
        # place the family's grid at its axes, the other axes fixed at their one-value level
        view = out[tuple(idx)]
        view |= anon
        out[tuple(idx)] = view
    return out


def _subset_lattice_nodes(dims: Sequence[Dimension], size: int) -> int:
    """Number of nodes in the lattices of all attribute subsets of ``size`` attributes."""
    levels = [d.n_levels for d in dims]
    return sum(math.prod(levels[j] for j in sub) for sub in itertools.combinations(range(len(dims)), size))


def _graph_generation(S: dict[tuple[int, ...], np.ndarray], dims: Sequence[Dimension]) -> dict[tuple[int, ...], np.ndarray]:
    """Join, prune and edge generation (Section 3.1) on candidate grids.

    Join: families ``prefix+(a1,)`` and ``prefix+(a2,)`` with ``a1 < a2`` and equal prefix levels
    combine to ``prefix+(a1, a2)``. Prune: a candidate survives only if every subset of it with
    one attribute fewer is in S. Edges are implicit in the grid (direct generalizations).
    """
    by_prefix: dict[tuple[int, ...], list[int]] = {}
    for fam in S:
        by_prefix.setdefault(fam[:-1], []).append(fam[-1])
    C: dict[tuple[int, ...], np.ndarray] = {}
    for prefix, lasts in by_prefix.items():
        lasts.sort()
        for a1, a2 in itertools.combinations(lasts, 2):
            fam = prefix + (a1, a2)
            p, q = S[prefix + (a1,)], S[prefix + (a2,)]
            cand = p[..., :, None] & q[..., None, :]
            for idx in range(len(prefix)):
                sub = S.get(fam[:idx] + fam[idx + 1 :])
                if sub is None:
                    cand = None
                    break
                cand = cand & sub.reshape(sub.shape[:idx] + (1,) + sub.shape[idx:])
            if cand is not None and cand.any():
                C[fam] = cand
    return C


CUBE_MEMORY_BYTES = 1 << 30
"""Cube Incognito keeps zero-generalization cuboids in memory up to this many bytes; the rest are
written to a temporary directory and read back in the iteration that needs them."""


class _CubeStore:
    """The zero-generalization frequency sets of every attribute subset (Section 3.3.2), computed
    bottom-up before the search as in a data cube: from the table (the full subset), each subset
    from its smallest already computed superset (Rollup Property on the projection). Each cuboid
    is needed in exactly one iteration (its subset's size), by its family if that family is a
    candidate, so it is handed out once (:meth:`take`) and freed. Memory is bounded: cuboids are
    held as packed keys and counts, and those beyond ``memory`` bytes are written to a temporary
    directory (counted in ``stats.cube_spilled``)."""

    def __init__(self, ctx: _Ctx, memory: int) -> None:
        self.ctx = ctx
        self.memory = int(memory)
        self.used = 0
        self.mem: dict[tuple[int, ...], FrequencySet] = {}
        self.disk: dict[tuple[int, ...], tuple[tuple, str]] = {}
        self.lengths: dict[tuple[int, ...], int] = {}
        self.nbytes: dict[tuple[int, ...], int] = {}
        self.lock = threading.Lock()
        self.dir: str | None = None
        self._build()

    def _build(self) -> None:
        ctx = self.ctx
        n = len(ctx.dims)
        full = tuple(range(n))
        self.lengths[full] = len(ctx.table.counts)
        top = table_as_frequency_set(ctx.table)
        for size in range(n - 1, 0, -1):
            by_parent: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
            for sub in itertools.combinations(full, size):
                supers = [tuple(sorted(sub + (a,))) for a in full if a not in sub]
                best = min(supers, key=lambda f: (self.lengths[f], f))
                by_parent.setdefault(best, []).append(sub)
            for parent, subs in sorted(by_parent.items()):
                src = top if parent == full else self._get(parent, keep=True)
                for sub in subs:
                    fs = project(src, ctx.dims, sub)
                    ctx.stats.cube_cuboids += 1
                    self.lengths[sub] = len(fs)
                    self._put(sub, fs)
                    del fs
                if parent != full and src.keys is not None:
                    # drop the columns decoded from the keys (they would stay cached on an
                    # in-memory cuboid, outside the memory budget)
                    src._cols = None
                    src._sizes = None
                    src._uid = None
                del src

    @staticmethod
    def _arrays(fs: FrequencySet) -> dict[str, np.ndarray]:
        counts = fs.counts.astype(np.int32) if len(fs.counts) and int(fs.counts.max()) < 2**31 else fs.counts
        if fs.keys is not None:
            return {"keys": fs.keys, "counts": counts}
        out = {"counts": counts, **{f"c{i}": np.asarray(c) for i, c in enumerate(fs.cols)}}
        if fs.n_uid:
            out["uid"] = fs.uid
        return out

    def _put(self, sub: tuple[int, ...], fs: FrequencySet) -> None:
        arrays = self._arrays(fs)
        meta = (fs.attrs, fs.levels, fs.cards, fs.n_uid, fs.sensitive)
        nbytes = sum(a.nbytes for a in arrays.values())
        if self.used + nbytes <= self.memory:
            self.mem[sub] = self._make(meta, arrays)
            self.nbytes[sub] = nbytes
            self.used += nbytes
            return
        if self.dir is None:
            self.dir = scratch_dir("cube")
        path = os.path.join(self.dir, "_".join(map(str, sub)) + ".npz")
        np.savez(path, **arrays)
        self.disk[sub] = (meta, path)
        self.ctx.stats.cube_spilled += 1

    @staticmethod
    def _make(meta: tuple, arrays: dict[str, np.ndarray]) -> FrequencySet:
        attrs, levels, cards, n_uid, sensitive = meta
        counts = arrays["counts"]
        fs = FrequencySet(attrs, levels, cards, counts, arrays.get("keys"), n_uid, sensitive)
        if "keys" not in arrays:
            fs._cols = [np.asarray(arrays[f"c{i}"]) for i in range(len(attrs))]
            if n_uid:
                fs._uid = np.asarray(arrays["uid"])
        return fs

    def _get(self, sub: tuple[int, ...], keep: bool) -> FrequencySet:
        with self.lock:
            if sub in self.mem:
                fs = self.mem[sub] if keep else self.mem.pop(sub)
                if not keep:
                    self.used -= self.nbytes.pop(sub)
                return fs
            meta, path = self.disk[sub] if keep else self.disk.pop(sub)
        with np.load(path) as z:
            fs = self._make(meta, {name: z[name] for name in z.files})
        if not keep:
            os.remove(path)
        return fs

    def take(self, family: tuple[int, ...]) -> FrequencySet:
        """The family's cuboid, removed from the store (each is used by one search)."""
        if len(family) == len(self.ctx.dims):
            return table_as_frequency_set(self.ctx.table)
        return self._get(family, keep=False)

    def discard(self, size: int) -> None:
        """Free the cuboids of ``size`` attributes that no family took (pruned a priori)."""
        with self.lock:
            for sub in [s for s in self.mem if len(s) == size]:
                del self.mem[sub]
                self.used -= self.nbytes.pop(sub)
            for sub in [s for s in self.disk if len(s) == size]:
                os.remove(self.disk.pop(sub)[1])

    def close(self) -> None:
        self.mem.clear()
        self.disk.clear()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


def _generalization_steps(dims: Sequence[Dimension], family: tuple[int, ...], shape: tuple[int, ...]) -> list[tuple[int, int, list[list[int]]]]:
    """Per attribute of the family: (stride, levels, per level the flat-index offsets of its direct
    generalizations) in the family's C-order grid -- the edges of the grid as integer steps, in
    :meth:`Lattice.direct_generalizations` order."""
    out = []
    stride = int(np.prod(shape, dtype=np.int64)) if shape else 1
    for ax, j in enumerate(family):
        stride //= shape[ax]
        out.append((stride, shape[ax], [[(p - v) * stride for p in ps] for v, ps in enumerate(dims[j].parents)]))
    return out


def _search_family(
    ctx: _Ctx,
    family: tuple[int, ...],
    cand: np.ndarray,
    variant: str,
    cube: _CubeStore | None,
) -> np.ndarray:
    """Breadth-first search by height over one family's candidate graph (Figure 7, inner loop).

    Returns the grid of the family's k-anonymous nodes (S_i restricted to the family).

    Nodes are walked as flat (C-order) grid indices, which order like their level tuples; the
    queue is a heap on (height, index), so nodes are visited as by (height, levels).
    """
    dims = ctx.dims
    full = len(family) == len(dims)
    shape = cand.shape
    roots_grid = cand & ~_has_member_below(cand, dims, family)
    # cells with an attribute at a one-value level, by broadcasting
    one: np.ndarray | bool = False
    for ax, j in enumerate(family):
        sh = [1] * len(family)
        sh[ax] = shape[ax]
        one = one | ctx.dim_arrays[j][1].reshape(sh)
    if len(family) > 1 and not (roots_grid & ~one).any():
        # every root is decided by projection (anonymous), so every candidate -- each generalizes
        # a root -- is marked anonymous: the walk below would check the roots and nothing else
        n_roots = int(np.count_nonzero(roots_grid))
        ctx.tick_many(n_roots, full)
        ctx.stats.by_projection += n_roots
        ctx.stats.marked += int(np.count_nonzero(cand)) - n_roots
        return cand.copy()
    # heights of the grid's cells, by broadcasting
    hg: np.ndarray | int = 0
    max_gain = 1
    for ax, j in enumerate(family):
        sh = [1] * len(family)
        sh[ax] = shape[ax]
        hj, _oj, gain = ctx.dim_arrays[j]
        hg = hg + hj.reshape(sh)
        max_gain = max(max_gain, gain)
    hg = np.broadcast_to(hg, shape)
    heights = hg.astype(np.uint8).tobytes() if hg.size and hg.max() < 256 else hg.ravel().tolist()
    steps = _generalization_steps(dims, family, shape)
    is_cand = cand.tobytes()  # one byte per cell, C order
    anon = cand.copy()
    anon_f = anon.reshape(-1)
    n_cells = cand.size
    marked = bytearray(n_cells)
    done = bytearray(n_cells)
    fs_cache: dict[int, FrequencySet] = {}
    parent_of: dict[int, int] = {}
    # a candidate with an attribute at a one-value level has its projection's frequency set,
    # and that projection is in S (prune step): it is anonymous, no frequency set needed
    projected_g = cand & one if len(family) > 1 else np.zeros(shape, dtype=bool)
    projected = projected_g.tobytes()
    roots = np.flatnonzero(roots_grid.ravel()).tolist()
    root_set = {r for r in roots if not projected[r]}

    def node_of(i: int) -> Node:
        return tuple((i // st) % nl for st, nl, _offs in steps)

    root_fs: dict[int, FrequencySet] | None = None
    root_anon: dict[int, bool] = {}
    source = None
    if variant in ("super-roots", "cube") and root_set:
        root_nodes = [node_of(r) for r in sorted(root_set)]
        if variant == "super-roots":
            # Section 3.3.1: one scan per family, at the super-root (the roots' common specialization)
            source = ctx.scan(family, _meet(dims, family, root_nodes))
        elif cube is not None:
            source = cube.take(family)  # Section 3.3.2: the family's zero-generalization frequency set
        if source is not None:
            checked: dict[Node, bool] | None = {} if ctx.batchable else None
            by_node = _root_frequency_sets(ctx, family, root_nodes, source, checked)
            flat = dict(zip(root_nodes, sorted(root_set)))
            root_fs = {flat[nd]: fs for nd, fs in by_node.items()}
            if checked is not None:
                root_anon = {flat[nd]: ok for nd, ok in checked.items()}
    heap = [(heights[r], r) for r in roots]
    heapq.heapify(heap)
    last_h = -1
    tick = ctx.tick
    stats = ctx.stats
    while heap:
        h, node = heapq.heappop(heap)
        if done[node] or marked[node]:
            continue
        if h != last_h and len(fs_cache) > 32:  # free frequency sets no child can need any more
            needed = set(parent_of.values())
            for nd in [nd for nd in fs_cache if heights[nd] + max_gain < h and nd not in needed]:
                del fs_cache[nd]
        last_h = h
        done[node] = 1
        gens = [node + o for st, nl, offs in steps for o in offs[(node // st) % nl] if is_cand[node + o]]
        if projected[node]:
            tick(full)
            stats.by_projection += 1
            parent_of.pop(node, None)
            is_anon = True
        elif node in root_anon:  # checked in a batch with the family's other roots
            tick(full)
            is_anon = root_anon.pop(node)
            fs = None if is_anon else root_fs.pop(node)
        else:
            if node in root_set:
                fs = ctx.scan(family, node_of(node)) if root_fs is None else root_fs.pop(node)
            else:
                fs = ctx.roll(fs_cache[parent_of.pop(node)], node_of(node))
            is_anon = ctx.check(fs)
        if is_anon:
            for g in gens:
                marked[g] = 1
        else:
            anon_f[node] = False
            fs_cache[node] = fs
            size = len(fs)
            for g in gens:
                if done[g] or marked[g]:
                    continue
                old = parent_of.get(g)
                if old is None:
                    heapq.heappush(heap, (heights[g], g))
                    parent_of[g] = node
                elif len(fs_cache[old]) > size:
                    parent_of[g] = node
    ctx.stats.marked += int(cand.sum()) - done.count(1)  # anonymous without a check (marked or never reached)
    return anon


def _meet(dims: Sequence[Dimension], family: tuple[int, ...], nodes: Sequence[Node]) -> Node:
    """A common specialization of ``nodes``: the componentwise minimum on chains, level 0 on a
    non-chain attribute whose levels differ (the super-root of Section 3.3.1)."""
    out = []
    for ax, j in enumerate(family):
        col = {n[ax] for n in nodes}
        out.append(col.pop() if len(col) == 1 else (min(col) if dims[j].is_chain else 0))
    return tuple(out)


def _roots(cand: np.ndarray, dims: Sequence[Dimension], family: tuple[int, ...]) -> list[Node]:
    return [tuple(int(x) for x in r) for r in np.argwhere(cand & ~_has_member_below(cand, dims, family))]


def _root_frequency_sets(
    ctx: _Ctx,
    family: tuple[int, ...],
    roots: Sequence[Node],
    source: FrequencySet,
    checked: dict[Node, bool] | None = None,
) -> dict[Node, FrequencySet]:
    """Frequency sets of a family's roots rolled up from ``source`` through a tree of super-roots.

    A family's roots are pairwise incomparable, so none can be rolled up from another; rolling each
    from one super-root (Section 3.3.1) re-reads that large frequency set once per root. Here the
    roots are split recursively (median of the attribute whose levels vary most) and each group's
    own super-root (its meet) is rolled up from the parent group's, so every root is rolled up
    from a small, close specialization. The intermediate super-roots are frequency-set
    computations, counted as rollups.

    With ``checked`` (tuple-level k without l), the roots of each leaf group are checked together
    by one batched rollup (:func:`~tempanon.lattice.freqset.small_class_tuples`): ``checked[root]``
    receives the verdict (the check is counted when the search reaches the root) and only the
    roots found not anonymous get a frequency set -- the search rolls their generalizations up
    from it. Most roots are anonymous, so most never materialize one.
    """
    out: dict[Node, FrequencySet] = {}

    def rec(group: list[Node], src: FrequencySet) -> None:
        if checked is None:
            leaf = len(group) <= 2
        else:
            leaf = len(group) <= 1 or len(group) * len(src) <= _BATCH_CELLS
        if leaf:
            if checked is None:
                for r in group:
                    out[r] = ctx.roll(src, r)
                return
            ctx.stats.rollups += len(group)
            sup = small_class_tuples(src, ctx.dims, group, ctx.k)
            for r, s in zip(group, sup.tolist()):
                ok = s == 0 or (ctx.max_suppressed > 0 and s <= ctx.max_suppressed)
                checked[r] = ok
                if not ok:
                    out[r] = rollup(src, ctx.dims, r)
            return
        arr = np.asarray(group)
        ax = int(np.argmax(arr.max(axis=0) - arr.min(axis=0)))
        order = sorted(group, key=lambda n: (n[ax], n))
        half = len(order) // 2
        for part in (order[:half], order[half:]):
            m = _meet(ctx.dims, family, part)
            rec(part, src if m == src.levels else ctx.roll(src, m))

    rec(sorted(roots), source)
    return out


# ---- baselines (Section 2.2) ---------------------------------------------------------------------


def binary_search(
    dims: Sequence[Dimension],
    table: Table,
    k: int,
    max_suppressed: int = 0,
    *,
    progress: ProgressFn | None = None,
    l: LDiversity | int | None = None,
    budget: Budget | None = None,
) -> SearchResult:
    """Samarati's binary search on height (Section 2.2): the lowest height with a k-anonymous node.

    At each probed height the nodes are checked (from T) until one is k-anonymous; the result's
    ``anonymous_nodes`` are the anonymous nodes met (not the complete set), and the minimal height
    node found is ``minimal_nodes[0]``.
    """
    ungraded = [d.name for d in dims if not d.is_graded]
    if ungraded:
        raise InputError(
            f"binary search on height needs graded generalization levels (every step one level up); "
            f"{', '.join(map(repr, ungraded))} has a step that skips a height -- use incognito or another algorithm"
        )
    t0 = time.perf_counter()
    ctx = _Ctx(dims, table, k, max_suppressed, progress, l, budget)
    attrs = tuple(range(len(dims)))
    heights = _heights_grid(dims, attrs)
    ctx.stats.search_space = int(heights.size)
    found = np.zeros(heights.shape, dtype=bool)
    by_height: dict[int, list[Node]] = {}
    for cell in np.argwhere(np.ones(heights.shape, dtype=bool)):
        node = tuple(int(x) for x in cell)
        by_height.setdefault(int(heights[node]), []).append(node)

    def probe(h: int) -> bool:
        for node in by_height.get(h, []):
            if ctx.check(ctx.scan(attrs, node)):
                found[node] = True
                return True
        return False

    lo, hi = 0, int(heights.max())
    try:
        if not probe(hi):
            return _result(ctx, "binary-search", found, t0, complete=False)
        steps = 0
        while lo < hi:
            mid = (lo + hi) // 2
            steps += 1
            if progress is not None:
                progress("binary search on height", steps, max(1, int(np.ceil(np.log2(int(heights.max()) + 1)))))
            if probe(mid):
                hi = mid
            else:
                lo = mid + 1
    except BudgetExhausted as exc:
        ctx.stats.stopped = str(exc)
        return _result(ctx, "binary-search", found, t0, complete=False)
    res = _result(ctx, "binary-search", found, t0, complete=False)
    res.minimal_nodes = [n for n in res.anonymous_nodes if int(heights[n]) == lo][:1]
    return res


ROLLUP_CACHE_BYTES = 1 << 30  # bottom-up with rollup: frequency sets held in memory; the rest wait on disk


def bottom_up(
    dims: Sequence[Dimension],
    table: Table,
    k: int,
    max_suppressed: int = 0,
    *,
    use_rollup: bool = False,
    progress: ProgressFn | None = None,
    l: LDiversity | int | None = None,
    budget: Budget | None = None,
    cache_memory: int | None = None,
) -> SearchResult:
    """Bottom-up breadth-first search over the whole lattice (Section 2.2).

    Nodes are visited by height; the generalizations of a k-anonymous node are marked anonymous
    without a check. Without rollup every checked node's frequency set is computed from T; with
    rollup it is rolled up from a direct specialization (all of which were checked and found not
    anonymous, or the node would be marked). The paper rolls up from "(one of)" them; tempanon
    takes the one with the fewest rows (first in :meth:`Lattice.direct_specializations` order).

    With rollup the frequency sets wait in a :class:`_RollupCache`: a set is kept only while one
    of its direct generalizations may still be rolled up from it (not marked, and not yet
    committed to a smaller specialization once all its specializations are known), held as code
    columns in the narrowest integer type and tuple counts, and those beyond ``cache_memory``
    bytes (default :data:`ROLLUP_CACHE_BYTES`) are written to a temporary directory (Section 4.1:
    "all frequency sets were implemented as un-logged temporary tables" in DB2). The checks, scans, rollups and results are those of
    keeping every set in memory; ``stats.cache_peak`` / ``stats.cache_spilled`` count the sets held
    at once and those written to disk.
    """
    t0 = time.perf_counter()
    ctx = _Ctx(dims, table, k, max_suppressed, progress, l, budget)
    attrs = tuple(range(len(dims)))
    lat = Lattice(dims, attrs)
    heights = _heights_grid(dims, attrs)
    ctx.stats.search_space = int(heights.size)
    anon = np.zeros(heights.shape, dtype=bool)
    order = _sorted_nodes(np.ones(heights.shape, dtype=bool), heights)
    name = "bottom-up-rollup" if use_rollup else "bottom-up"
    cache = _RollupCache(lat, anon, ctx.stats, ROLLUP_CACHE_BYTES if cache_memory is None else cache_memory) if use_rollup else None
    try:
        for i, node in enumerate(order):
            gens = lat.direct_generalizations(node)
            if anon[node]:
                for g in gens:
                    anon[g] = True
                if cache is not None:
                    cache.done(gens)
                continue
            if cache is not None and node != lat.bottom:
                fs = cache.roll(ctx, node)
            else:
                fs = ctx.scan(attrs, node)
            if ctx.check(fs):
                anon[node] = True
                for g in gens:
                    anon[g] = True
            elif cache is not None:
                cache.put(node, fs, gens)
            del fs
            if cache is not None:
                cache.done(gens)
            if progress is not None and i % 256 == 0:
                progress("bottom-up search", i + 1, len(order))
    except BudgetExhausted as exc:
        ctx.stats.stopped = str(exc)
        return _result(ctx, name, _upward_closure(anon, dims), t0, complete=False)
    finally:
        if cache is not None:
            cache.close()
    return _result(ctx, name, anon, t0)


class _RollupCache:
    """The frequency sets bottom-up with rollup may still roll up from (Section 2.2, "Bottom-Up
    Breadth-First Search with rollup"), bounded.

    A checked, non-anonymous node ``s`` is kept while it has a *pending* direct generalization
    ``g``: one not marked anonymous and not yet rolled up, and -- once every direct
    specialization of ``g`` has been visited, when ``g``'s parent is fixed as the specialization
    with the fewest rows -- one that chose ``s``. Marks and choices are final by then (a node is
    marked only from its direct specializations), so dropping a set never changes a later
    rollup. Sets are held as code columns in the narrowest integer type (what a rollup reads)
    and tuple counts; beyond ``memory`` bytes they are written to a temporary directory and read
    back for each rollup (``stats.cache_spilled``)."""

    def __init__(self, lat: Lattice, anon: np.ndarray, stats: SearchStats, memory: int) -> None:
        self.lat = lat
        self.anon = anon
        self.stats = stats
        self.memory = int(memory)
        self.used = 0
        self.mem: dict[Node, tuple[FrequencySet, int]] = {}
        self.disk: dict[Node, tuple[tuple, str, int]] = {}
        self.pending: dict[Node, set[Node]] = {}
        # per node: direct specializations not yet visited (sum over attributes of the level's children)
        self.left = np.zeros(anon.shape, dtype=np.int64)
        for p, j in enumerate(lat.attrs):
            n_children = np.array([len(c) for c in lat.dims[j].children], dtype=np.int64)
            self.left += n_children.reshape([-1 if q == p else 1 for q in range(anon.ndim)])
        self.choice: dict[Node, Node] = {}
        self.dir: str | None = None

    def __len__(self) -> int:
        return len(self.mem) + len(self.disk)

    def _rows(self, node: Node) -> int:
        return self.mem[node][0].counts.shape[0] if node in self.mem else self.disk[node][2]

    def put(self, node: Node, fs: FrequencySet, gens: list[Node]) -> None:
        """Keep ``fs`` (of a checked, non-anonymous node with direct generalizations ``gens``) if
        one of them may roll up from it."""
        wait = {g for g in gens if not self.anon[g]}
        if not wait:
            return
        self.pending[node] = wait
        cols = [np.asarray(c).astype(_code_dtype(card), copy=False) for c, card in zip(fs.cols, fs.cards)]
        counts = fs.counts
        if len(counts) and int(counts.sum()) < 2**31:
            counts = counts.astype(np.int32)
        uid = fs.uid
        arrays = {"counts": counts, **{f"c{i}": c for i, c in enumerate(cols)}}
        if uid is not None:
            arrays["uid"] = uid.astype(_code_dtype(fs.n_uid), copy=False)
        meta = (fs.attrs, fs.levels, fs.cards, fs.n_uid, fs.sensitive)
        nbytes = sum(a.nbytes for a in arrays.values())
        if self.used + nbytes <= self.memory:
            self.mem[node] = (self._make(meta, arrays), nbytes)
            self.used += nbytes
        else:
            if self.dir is None:
                self.dir = scratch_dir("rollup")
            path = os.path.join(self.dir, "_".join(map(str, node)) + ".npz")
            np.savez(path, **arrays)
            self.disk[node] = (meta, path, len(counts))
            self.stats.cache_spilled += 1
        self.stats.cache_peak = max(self.stats.cache_peak, len(self))

    @staticmethod
    def _make(meta: tuple, arrays: dict[str, np.ndarray]) -> FrequencySet:
        attrs, levels, cards, n_uid, sensitive = meta
        fs = FrequencySet(attrs, levels, cards, arrays["counts"], None, n_uid, sensitive)
        fs._cols = [arrays[f"c{i}"] for i in range(len(attrs))]
        if n_uid:
            fs._uid = arrays["uid"]
        return fs

    def _get(self, node: Node) -> FrequencySet:
        if node in self.mem:
            return self.mem[node][0]
        meta, path, _ = self.disk[node]
        with np.load(path) as z:
            return self._make(meta, {name: z[name] for name in z.files})

    def _release(self, s: Node, g: Node) -> None:
        """``g`` will not roll up from ``s``: drop ``s`` once nothing waits on it."""
        wait = self.pending.get(s)
        if wait is None:
            return
        wait.discard(g)
        if wait:
            return
        del self.pending[s]
        if s in self.mem:
            self.used -= self.mem.pop(s)[1]
        elif s in self.disk:
            os.remove(self.disk.pop(s)[1])

    def done(self, gens: list[Node]) -> None:
        """A node has been visited (``gens``: its direct generalizations): those whose
        specializations are now all visited fix their parent (or, marked, need none) and release
        the others."""
        left = self.left
        for g in gens:
            n = left[g] = left[g] - 1
            if n:
                continue
            specs = self.lat.direct_specializations(g)
            if self.anon[g]:
                for s in specs:
                    self._release(s, g)
                continue
            best = min(specs, key=self._rows)
            self.choice[g] = best
            for s in specs:
                if s != best:
                    self._release(s, g)

    def roll(self, ctx: _Ctx, node: Node) -> FrequencySet:
        """``node``'s frequency set, rolled up from its chosen specialization."""
        parent = self.choice.pop(node)
        fs = ctx.roll(self._get(parent), node)
        self._release(parent, node)
        return fs

    def close(self) -> None:
        self.mem.clear()
        self.disk.clear()
        self.pending.clear()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


def _upward_closure(anon: np.ndarray, dims: Sequence[Dimension]) -> np.ndarray:
    """Every generalization of a node in ``anon`` (generalization property)."""
    attrs = tuple(range(anon.ndim))
    out = anon.copy()
    while True:
        nxt = out | _has_member_below(out, dims, attrs)
        if (nxt == out).all():
            return out
        out = nxt


def exhaustive(
    dims: Sequence[Dimension],
    table: Table,
    k: int,
    max_suppressed: int = 0,
    *,
    progress: ProgressFn | None = None,
    l: LDiversity | int | None = None,
    budget: Budget | None = None,
) -> SearchResult:
    """Check every node of the lattice from T, without any pruning (the test oracle). Valid for
    non-monotone requirements too (l-diversity with suppression)."""
    t0 = time.perf_counter()
    ctx = _Ctx(dims, table, k, 0 if l is not None else max_suppressed, progress, l, budget)
    ctx.max_suppressed = int(max_suppressed)  # exhaustive checks every node: no property needed
    attrs = tuple(range(len(dims)))
    shape = tuple(d.n_levels for d in dims)
    anon = np.zeros(shape, dtype=bool)
    ctx.stats.search_space = int(anon.size)
    try:
        for i, node in enumerate(Lattice(dims, attrs).nodes()):
            anon[node] = ctx.check_any(ctx.scan(attrs, node))
            if progress is not None and i % 256 == 0:
                progress("exhaustive scan", i + 1, anon.size)
    except BudgetExhausted as exc:
        ctx.stats.stopped = str(exc)
        return _result(ctx, "exhaustive", anon, t0, complete=False)
    return _result(ctx, "exhaustive", anon, t0)


def run_search(
    algorithm: str,
    dims: Sequence[Dimension],
    table: Table,
    k: int,
    max_suppressed: int = 0,
    *,
    progress: ProgressFn | None = None,
    l: LDiversity | int | None = None,
    budget: Budget | None = None,
) -> SearchResult:
    """Dispatch on the algorithm's name (see :data:`ALGORITHMS`).

    With ``l`` (an :class:`~tempanon.kanon.ldiversity.LDiversity`, or an int for frequency
    l-diversity) a node must also make every kept class l-diverse; the table must carry the
    sensitive attribute. Without suppression "k-anonymous and l-diverse" is monotone and the
    searches prune with it. With suppression it is not (see :mod:`tempanon.kanon.ldiversity`):
    the algorithm then finds the nodes that are k-anonymous with the threshold (a superset: the
    classes failing k are among those failing k or l), and every one of them is checked for
    "rows in classes failing k or l <= threshold" (:func:`filter_l_diverse`), which is sound and
    complete for the complete algorithms.
    """
    l = as_ldiversity(l)
    if l is not None and max_suppressed and algorithm != "exhaustive":
        if algorithm == "binary-search":
            raise InputError(
                "binary search on height cannot look for l-diversity with suppression (the requirement is not "
                "monotone then); use incognito or another complete algorithm"
            )
        res = run_search(algorithm, dims, table, k, max_suppressed, progress=progress, budget=budget)
        return filter_l_diverse(res, dims, table, k, max_suppressed, l, budget)
    kw = dict(progress=progress, l=l, budget=budget)
    if algorithm == "incognito":
        return incognito(dims, table, k, max_suppressed, **kw)
    if algorithm == "super-roots":
        return incognito(dims, table, k, max_suppressed, variant="super-roots", **kw)
    if algorithm == "cube":
        return incognito(dims, table, k, max_suppressed, variant="cube", **kw)
    if algorithm == "binary-search":
        return binary_search(dims, table, k, max_suppressed, **kw)
    if algorithm == "bottom-up":
        return bottom_up(dims, table, k, max_suppressed, **kw)
    if algorithm == "bottom-up-rollup":
        return bottom_up(dims, table, k, max_suppressed, use_rollup=True, **kw)
    if algorithm == "exhaustive":
        return exhaustive(dims, table, k, max_suppressed, **kw)
    raise InputError(f"unknown algorithm {algorithm!r}; expected one of {', '.join(ALGORITHMS)}")


def filter_l_diverse(
    res: SearchResult,
    dims: Sequence[Dimension],
    table: Table,
    k: int,
    max_suppressed: int,
    l: LDiversity,
    budget: Budget | None = None,
) -> SearchResult:
    """Keep the nodes of ``res`` whose release, suppressing every class that fails k or l, removes
    at most ``max_suppressed`` rows. Each node is checked (no pruning: with suppression the
    requirement is not monotone); frequency sets are rolled up from a checked specialization
    when there is one. The checks are added to ``res.stats``."""
    t0 = time.perf_counter()
    ctx = _Ctx(dims, table, k, 0, None, l, budget)
    ctx.max_suppressed = int(max_suppressed)
    ctx.stats = res.stats
    lat = Lattice(dims)
    attrs = tuple(range(len(dims)))
    keep = np.zeros(tuple(d.n_levels for d in dims), dtype=bool)
    cache: dict[Node, FrequencySet] = {}
    max_gain = lat.max_edge_height
    last_h = -1
    try:
        for node in sorted(res.anonymous_nodes, key=lambda n: (lat.height(n), n)):
            h = lat.height(node)
            if h != last_h:  # no later node can roll up from these
                for nd in [nd for nd in cache if lat.height(nd) + max_gain < h]:
                    del cache[nd]
                last_h = h
            specs = [s for s in lat.direct_specializations(node) if s in cache]
            fs = ctx.roll(min((cache[s] for s in specs), key=len), node) if specs else ctx.scan(attrs, node)
            cache[node] = fs
            keep[node] = ctx.check_any(fs)
    except BudgetExhausted as exc:
        res.stats.stopped = str(exc)
        res.complete = False
    heights = _heights_grid(dims, attrs)
    res.stats.seconds += time.perf_counter() - t0
    res.anonymous_nodes = _sorted_nodes(keep, heights)
    if res.algorithm == "binary-search":
        res.minimal_nodes = res.anonymous_nodes[:1]
    else:
        res.minimal_nodes = _sorted_nodes(minimal_nodes(keep, dims, attrs), heights)
    return res
