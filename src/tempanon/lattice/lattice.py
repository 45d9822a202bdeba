"""The multi-attribute generalization lattice (Incognito Section 2).

A node is a tuple of levels, one per attribute of an attribute subset (``attrs``); the full
lattice is the product of the attributes' level DAGs (chains for value hierarchies, granularity
DAGs for time). Node ``b`` is a *direct generalization* of ``a`` when exactly one attribute moves
along one edge of its DAG. The *height* of a node is the sum of its levels' heights; the
*distance vector* between a node and a generalization of it is the per-attribute height
difference.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from tempanon.lattice.dimension import Dimension

Node = tuple[int, ...]


class Lattice:
    """Generalization lattice over ``dims`` (optionally restricted to a subset ``attrs``)."""

    def __init__(self, dims: Sequence[Dimension], attrs: Sequence[int] | None = None) -> None:
        self.dims = list(dims)
        self.attrs = tuple(range(len(self.dims))) if attrs is None else tuple(attrs)

    @property
    def size(self) -> int:
        out = 1
        for j in self.attrs:
            out *= self.dims[j].n_levels
        return out

    @property
    def bottom(self) -> Node:
        return (0,) * len(self.attrs)

    def height(self, node: Node) -> int:
        return sum(self.dims[j].heights[v] for j, v in zip(self.attrs, node))

    @property
    def max_height(self) -> int:
        return sum(max(self.dims[j].heights) for j in self.attrs)

    def distance_vector(self, lower: Node, upper: Node) -> tuple[int, ...]:
        """Per-attribute height difference from ``lower`` to its generalization ``upper``."""
        return tuple(
            self.dims[j].heights[u] - self.dims[j].heights[l] for j, l, u in zip(self.attrs, lower, upper)
        )

    def is_generalization(self, lower: Node, upper: Node) -> bool:
        return all(self.dims[j].generalizes(l, u) for j, l, u in zip(self.attrs, lower, upper))

    def direct_generalizations(self, node: Node) -> list[Node]:
        out = []
        for i, (j, v) in enumerate(zip(self.attrs, node)):
            for p in self.dims[j].parents[v]:
                out.append(node[:i] + (p,) + node[i + 1 :])
        return out

    def direct_specializations(self, node: Node) -> list[Node]:
        out = []
        for i, (j, v) in enumerate(zip(self.attrs, node)):
            for c in self.dims[j].children[v]:
                out.append(node[:i] + (c,) + node[i + 1 :])
        return out

    def nodes(self) -> Iterator[Node]:
        """Every node, in lexicographic order of levels."""
        return itertools.product(*(range(self.dims[j].n_levels) for j in self.attrs))

    def nodes_by_height(self) -> list[Node]:
        """Every node, sorted by (height, levels)."""
        return sorted(self.nodes(), key=lambda n: (self.height(n), n))

    @property
    def max_edge_height(self) -> int:
        """Largest height gain along one edge (1 for chains)."""
        gain = 1
        for j in self.attrs:
            d = self.dims[j]
            for v, ps in enumerate(d.parents):
                for p in ps:
                    gain = max(gain, d.heights[p] - d.heights[v])
        return gain
