"""Generalization lattices, nodes, frequency sets and rollup."""

from tempanon.lattice.dimension import Dimension

__all__ = ["Dimension"]
