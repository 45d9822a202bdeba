"""One quasi-identifier's generalization space: a DAG of levels over dictionary codes.

A :class:`Dimension` is what the lattice search needs to know about one attribute, whatever
generalizes it: a value generalization hierarchy (a chain of levels 0..h, Incognito Section 2) or
a partial order of time granularities (Mascetti et al., Section 3.2). Everything is expressed on
integer codes:

* the data column is encoded once to *base codes* ``0..n_base-1`` (level 0);
* ``codes[v][b]`` is the code, at level ``v``, of base code ``b`` (a dense ``0..n_v-1`` range);
* ``parents[v]`` are the direct generalizations of level ``v`` (edges towards coarser levels);
* ``labels[v][c]`` is the published text of code ``c`` at level ``v``;
* ``loss[v][c]`` is the normalized generalization loss of a cell holding code ``c`` at level
  ``v`` (0 for an ungeneralized value, 1 for full suppression ``*``).

The rollup map between two comparable levels (``up`` in the granularity paper) is derived from the
``codes`` arrays and cached: it exists iff level ``u`` is finer than level ``v``, which for this
class means every base value that shares a code at ``u`` shares one at ``v``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from tempanon.errors import HierarchyError


@dataclass(eq=False)
class Dimension:
    name: str
    level_names: tuple[str, ...]
    parents: tuple[tuple[int, ...], ...]
    codes: tuple[np.ndarray, ...]
    labels: tuple[np.ndarray, ...]
    loss: tuple[np.ndarray, ...]
    _up_cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        n = len(self.level_names)
        if not (len(self.parents) == len(self.codes) == len(self.labels) == len(self.loss) == n):
            raise HierarchyError(f"attribute {self.name!r}: inconsistent dimension definition")
        if n == 0:
            raise HierarchyError(f"attribute {self.name!r}: a dimension needs at least one level")
        for v, ps in enumerate(self.parents):
            for p in ps:
                if not 0 <= p < n or p == v:
                    raise HierarchyError(f"attribute {self.name!r}: bad edge {v}->{p}")
        # Level 0 must be the bottom: every level reachable from it.
        if set(range(n)) - self._reachable(0):
            raise HierarchyError(f"attribute {self.name!r}: level 0 must be finer than every other level")
        self.codes = tuple(np.ascontiguousarray(c, dtype=np.int64) for c in self.codes)

    # ---- structure -----------------------------------------------------------------------------
    @property
    def n_levels(self) -> int:
        return len(self.level_names)

    @property
    def n_base(self) -> int:
        return len(self.codes[0])

    def cardinality(self, level: int) -> int:
        """Number of distinct codes at ``level``."""
        return len(self.labels[level])

    def _reachable(self, start: int) -> set[int]:
        seen, stack = {start}, [start]
        while stack:
            for p in self.parents[stack.pop()]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return seen

    @cached_property
    def heights(self) -> tuple[int, ...]:
        """Height of each level: the longest path from level 0 (the level number for a chain)."""
        order = self.topological_order
        h = [0] * self.n_levels
        for v in order:
            for p in self.parents[v]:
                h[p] = max(h[p], h[v] + 1)
        return tuple(h)

    @cached_property
    def topological_order(self) -> tuple[int, ...]:
        indeg = [0] * self.n_levels
        for ps in self.parents:
            for p in ps:
                indeg[p] += 1
        ready = [v for v in range(self.n_levels) if indeg[v] == 0]
        out: list[int] = []
        while ready:
            v = ready.pop()
            out.append(v)
            for p in self.parents[v]:
                indeg[p] -= 1
                if indeg[p] == 0:
                    ready.append(p)
        if len(out) != self.n_levels:
            raise HierarchyError(f"attribute {self.name!r}: the generalization graph has a cycle")
        return tuple(out)

    @cached_property
    def children(self) -> tuple[tuple[int, ...], ...]:
        """Direct specializations of each level (reverse edges)."""
        ch: list[list[int]] = [[] for _ in range(self.n_levels)]
        for v, ps in enumerate(self.parents):
            for p in ps:
                ch[p].append(v)
        return tuple(tuple(sorted(c)) for c in ch)

    def generalizes(self, u: int, v: int) -> bool:
        """True if level ``v`` is ``u`` or reachable from ``u`` (v is at least as general)."""
        return bool(self.reach[u, v])

    @cached_property
    def reach(self) -> np.ndarray:
        """``reach[u, v]``: level ``v`` is ``u`` or a generalization of ``u``."""
        r = np.zeros((self.n_levels, self.n_levels), dtype=bool)
        for u in range(self.n_levels):
            r[u, list(self._reachable(u))] = True
        return r

    @cached_property
    def is_graded(self) -> bool:
        """Every edge raises the height by exactly one (true for chains)."""
        return all(self.heights[p] == self.heights[v] + 1 for v, ps in enumerate(self.parents) for p in ps)

    @cached_property
    def is_chain(self) -> bool:
        return all(self.parents[v] == ((v + 1,) if v + 1 < self.n_levels else ()) for v in range(self.n_levels))

    # ---- maps ----------------------------------------------------------------------------------
    def up(self, u: int, v: int) -> np.ndarray:
        """The map from codes at level ``u`` to codes at the coarser level ``v`` (rollup).

        Raises :class:`HierarchyError` if ``u`` is not finer than ``v``.
        """
        key = (u, v)
        m = self._up_cache.get(key)
        if m is None:
            if u == v:
                m = np.arange(self.cardinality(u), dtype=np.int64)
            else:
                m = np.full(self.cardinality(u), -1, dtype=np.int64)
                m[self.codes[u]] = self.codes[v]
                if not np.array_equal(m[self.codes[u]], self.codes[v]):
                    raise HierarchyError(
                        f"attribute {self.name!r}: level {self.level_names[v]!r} does not generalize "
                        f"level {self.level_names[u]!r} (a value has two generalizations)"
                    )
            self._up_cache[key] = m
        return m

    def level_index(self, name_or_index: str | int) -> int:
        if isinstance(name_or_index, (int, np.integer)):
            return int(name_or_index)
        try:
            return self.level_names.index(str(name_or_index))
        except ValueError:
            raise HierarchyError(f"attribute {self.name!r} has no level {name_or_index!r}") from None
