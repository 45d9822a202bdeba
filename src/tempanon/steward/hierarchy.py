"""``tempanon hierarchy``: build hierarchy files like ARX's wizards and show one as a tree.

Building uses the builders of :mod:`tempanon.hierarchy.builders` on a column's distinct values
(intervals, masking, dates, suppression) or on a taxonomy tree given as a JSON or TOML file
(nested tables/objects, lists of leaves at the bottom). The result is written in the ARX format
(``;``-separated, column 0 the value, column j its level-j generalization).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tempanon.errors import InputError
from tempanon.hierarchy import Hierarchy, build_dates, build_intervals, build_masking, build_suppression, build_taxonomy

KINDS = ("intervals", "masking", "dates", "suppression", "taxonomy")


def parse_numbers(spec: str, what: str) -> list[float]:
    try:
        vals = [float(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{what}: expected comma-separated numbers, got {spec!r}") from None
    if not vals:
        raise InputError(f"{what}: give at least one number")
    return [int(v) if v.is_integer() else v for v in vals]


def load_tree(path: str | Path) -> dict:
    """A taxonomy tree from a ``.json`` or ``.toml`` file."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"taxonomy file not found: {p}")
    try:
        if p.suffix.lower() == ".toml":
            return tomllib.loads(p.read_text(encoding="utf-8"))
        tree = json.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"taxonomy file {p}: {exc}") from None
    except UnicodeDecodeError as exc:  # (a traceback before)
        raise InputError(f"taxonomy file {p}: not UTF-8 (byte {exc.start + 1} is 0x{exc.object[exc.start]:02x}); save it as "
                         "UTF-8, the encoding tempanon reads data and hierarchies in") from None
    if not isinstance(tree, dict):
        raise InputError(f"taxonomy file {p}: the top must be an object of categories")
    return tree


def build(
    kind: str,
    column: str,
    values: Sequence[object] | None,
    *,
    widths: str | None = None,
    start: float = 0,
    levels: int | None = None,
    formats: str | None = None,
    tree: str | Path | None = None,
    date_order: str = "auto",
) -> Hierarchy:
    """Build one hierarchy (see module doc). ``values`` are the column's values (needed except for
    taxonomy, where they are checked to be covered when given). ``date_order``: how a dates
    hierarchy reads numeric dates (:func:`tempanon.hierarchy.builders.build_dates`)."""
    if kind not in KINDS:
        raise InputError(f"unknown hierarchy type {kind!r}; expected one of {', '.join(KINDS)}")
    if kind != "taxonomy" and values is None:
        raise InputError(f"a {kind} hierarchy is built from the data: give --data INPUT and --column")
    if kind == "intervals":
        if not widths:
            raise InputError("--widths is required for intervals, e.g. --widths 5,10,20")
        return build_intervals(column, values, parse_numbers(widths, "--widths"), start=start)
    if kind == "masking":
        return build_masking(column, values, levels)
    if kind == "dates":
        fmts = [f for f in formats.split(",")] if formats else None
        from tempanon.temporal.parse import check_date_order

        order = check_date_order(date_order)
        return build_dates(column, values, fmts, date_order=order) if fmts else build_dates(column, values, date_order=order)
    if kind == "suppression":
        return build_suppression(column, values)
    if tree is None:
        raise InputError("--tree FILE (JSON or TOML) is required for a taxonomy")
    h = build_taxonomy(column, load_tree(tree))
    if values is not None:
        from tempanon.hierarchy.core import MISSING, as_text
        import pandas as pd

        text = as_text(pd.Series(list(values), dtype=object))
        leaves = set(h.values.tolist())
        missing = [v for v in pd.unique(text) if v != MISSING and v not in leaves]
        if missing:
            raise InputError(f"column {column!r}: {len(missing)} value(s) not in the taxonomy: {', '.join(map(repr, missing[:5]))}")
    return h


def _natural(value: object) -> tuple:
    """Sort key: by the leading number when there is one (``5-9`` before ``10-14``), then as text."""
    m = re.match(r"\s*\[?(-?\d+(?:\.\d+)?)", str(value))
    return (0, float(m.group(1)), str(value)) if m else (1, 0.0, str(value))


def tree_view(h: Hierarchy, max_children: int = 8):
    """A :class:`rich.tree.Tree` of ``h`` from the top value down to the original values; at most
    ``max_children`` children per node (the rest summarized as "... N more")."""
    from rich.markup import escape
    from rich.tree import Tree

    table = h.table
    top = table[0, -1]
    root = Tree(f"[bold]{escape(str(top))}[/]  [dim]{escape(h.name)}: {len(table)} values, height {h.height}[/]")

    def grow(node, rows: np.ndarray, level: int) -> None:
        if level < 0:
            return
        col = table[rows, level]
        kids = sorted(set(col.tolist()), key=_natural)
        for v in kids[:max_children]:
            sub = rows[col == v]
            label = escape(str(v)) if str(v) != "" else "[italic]<missing>[/]"
            child = node.add(label + (f" [dim]({len(sub)})[/]" if level > 0 else ""))
            grow(child, sub, level - 1)
        if len(kids) > max_children:
            node.add(f"[dim]... {len(kids) - max_children} more[/]")

    grow(root, np.arange(len(table)), h.height - 1)
    return root


__all__ = ["KINDS", "build", "load_tree", "parse_numbers", "tree_view"]
