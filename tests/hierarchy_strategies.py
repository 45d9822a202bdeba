"""Hypothesis building blocks for random hierarchies, shared by the property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from tempanon.hierarchy import Hierarchy


def random_chain(draw, name: str, domain: int) -> Hierarchy:
    """A random full-domain chain: each level merges the groups of the one below at random."""
    height = draw(st.integers(1, 3))
    groups = list(range(domain))
    cols = [[f"{name}{v}" for v in range(domain)]]
    for lv in range(1, height):
        n_up = draw(st.integers(1, max(1, len(set(groups)) - 1))) if len(set(groups)) > 1 else 1
        mapping = {g: draw(st.integers(0, n_up - 1)) for g in sorted(set(groups))}
        groups = [mapping[g] for g in groups]
        cols.append([f"{name}L{lv}_{g}" for g in groups])
    cols.append(["*"] * domain)
    return Hierarchy.from_rows(name, [list(r) for r in zip(*cols)])


def bucket(v: str, width: int) -> str:
    """A value's interval of ``width`` (``'20-29'``) for the fuzz tests' age hierarchies; text that is
    not a finite number falls in ``'other'``."""
    import numpy as np

    try:
        x = float(v)
    except ValueError:
        return "other"
    if not np.isfinite(x):
        return "other"
    lo = int(x // width * width)
    return f"{lo}-{lo + width - 1}"
