"""Report figures: matplotlib (headless, Agg) rendered to inline SVG strings.

Every function takes plain data (lists, numpy arrays, dicts) so any capability can draw them, and
returns the ``<svg>...</svg>`` text ready for :meth:`tempanon.report.html.Section.add_figure`.
Text stays text in the SVG (``svg.fonttype = none``: small and searchable); the XML prolog,
DOCTYPE and the RDF metadata block matplotlib writes are removed, so the SVG references nothing
outside the page.

Figures stay readable and small whatever the input's size: :func:`new_figure` caps the size at
:data:`MAX_WIDTH` x :data:`MAX_HEIGHT` inches; per-item figures switch to a compact form past a few
dozen items (:func:`attribute_loss_bars`), long sequences are drawn in at most :data:`MAX_BARS`
bins of consecutive items (:func:`bin_edges`, :func:`reduce_bins`; the caller says so in its
caption), tick labels are thinned to at most :data:`MAX_TICKS` (:func:`sparse_ticks`), and a
group panel draws at most ``max_members`` series.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

COLORS = {
    "plain": "#c9d1d9",
    "anonymous": "#8fd19e",
    "minimal": "#1a7f37",
    "selected": "#cf222e",
    "before": "#d4a72c",
    "after": "#0969da",
    "suppressed": "#cf222e",
    "edge": "#afb8c1",
}


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


MAX_WIDTH = 12.0
"""Largest figure width (inches; the page shows it at most 1,036 px wide)."""
MAX_HEIGHT = 7.0
"""Largest figure height (inches): a figure never takes more than about one screen."""
MAX_BARS = 200
"""Most bars (or points) a sequence figure draws; longer sequences are binned."""
MAX_TICKS = 12
"""Most tick labels on a categorical axis."""


def new_figure(width: float = 8.0, height: float = 3.2, ncols: int = 1, nrows: int = 1):
    """A figure of ``width`` x ``height`` inches, each capped (:data:`MAX_WIDTH`, :data:`MAX_HEIGHT`)."""
    plt = _plt()
    size = (min(float(width), MAX_WIDTH), min(float(height), MAX_HEIGHT))
    fig, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False)
    return fig, axes


def bin_edges(n: int, max_bins: int = MAX_BARS) -> np.ndarray:
    """Start positions of at most ``max_bins`` bins of consecutive items covering ``range(n)``
    (equal widths, the last one possibly shorter); ``arange(n)`` when ``n <= max_bins``."""
    if n <= max_bins:
        return np.arange(n, dtype=np.int64)
    width = -(-n // max_bins)
    return np.arange(0, n, width, dtype=np.int64)


def reduce_bins(values: Sequence[float] | np.ndarray, starts: np.ndarray, how: str = "sum") -> np.ndarray:
    """``values`` reduced per bin (``starts`` from :func:`bin_edges`): ``sum``, ``mean``, ``min``
    or ``max`` (numpy ``reduceat``; a mean ignores NaN)."""
    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return v
    starts = np.asarray(starts, dtype=np.int64)
    if how == "sum":
        return np.add.reduceat(v, starts)
    if how == "min":
        return np.minimum.reduceat(v, starts)
    if how == "max":
        return np.maximum.reduceat(v, starts)
    if how == "mean":
        ok = ~np.isnan(v)
        tot = np.add.reduceat(np.where(ok, v, 0.0), starts)
        cnt = np.add.reduceat(ok.astype(float), starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)
    raise ValueError(f"unknown reduction {how!r}")


def bin_labels(labels: Sequence[Any], starts: np.ndarray) -> list[str]:
    """A label per bin: the item's label, or ``first .. last`` for a bin of several items."""
    labels = [str(x) for x in labels]
    ends = [*(int(s) for s in starts[1:]), len(labels)]
    return [labels[a] if b - a == 1 else f"{labels[a]} .. {labels[b - 1]}" for a, b in zip((int(s) for s in starts), ends)]


def sparse_ticks(ax, positions: Sequence[float] | np.ndarray, labels: Sequence[Any], *, axis: str = "x", max_ticks: int = MAX_TICKS, rotation: float = 30) -> None:
    """Label at most ``max_ticks`` evenly spaced positions (so labels never overlap)."""
    positions = np.asarray(positions)
    labels = [str(x) for x in labels]
    if labels and max(map(len, labels)) > 14:  # long labels (ranges of bins): fewer of them
        max_ticks = max(2, (max_ticks * 2) // 3)
    step = max(1, -(-len(positions) // max_ticks))
    if axis == "x":
        ax.set_xticks(positions[::step], labels[::step], rotation=rotation, ha="right" if rotation else "center")
    else:
        ax.set_yticks(positions[::step], labels[::step])


def to_svg(fig) -> str:
    """Render ``fig`` to a self-contained ``<svg>`` string and close it."""
    import matplotlib

    plt = _plt()
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "tempanon"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    return text.strip()


# ---- equivalence classes -----------------------------------------------------------------------
def class_size_histogram(sizes: Sequence[int] | np.ndarray, k: int | None = None, *, what: str = "records",
                         counts: Sequence[int] | np.ndarray | None = None) -> str:
    """Number of equivalence classes (or groups) by size, with the required ``k`` marked
    (``counts``: how many classes each entry of ``sizes`` stands for; ``None``: one each)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    weights = None if counts is None else np.asarray(counts, dtype=np.int64)
    fig, axes = new_figure(8, 3)
    ax = axes[0, 0]
    if len(sizes) == 0:
        ax.text(0.5, 0.5, "no classes (empty release)", ha="center", va="center", transform=ax.transAxes)
    elif sizes.max() <= 60:
        per = np.bincount(sizes, weights=weights).astype(np.int64)
        xs = np.flatnonzero(per)
        ax.bar(xs, per[xs], width=0.8, color=COLORS["after"])
        ax.set_xlim(0, max(int(sizes.max()) + 1, (k or 0) + 1))
    else:
        bins = np.unique(np.round(np.geomspace(1, sizes.max() + 1, 40)).astype(int))
        ax.hist(sizes, bins=bins, weights=weights, color=COLORS["after"])
        ax.set_xscale("log")
    if k is not None and len(sizes):
        ax.axvline(k - 0.5 if sizes.max() <= 60 else k, color=COLORS["selected"], ls="--", lw=1.2, label=f"k = {k}")
        ax.legend(frameon=False)
    ax.set_xlabel(f"class size ({what})")
    ax.set_ylabel("number of classes")
    ax.spines[["top", "right"]].set_visible(False)
    return to_svg(fig)


def risk_comparison(before: Mapping[str, float | None], after: Mapping[str, float | None]) -> str:
    """Grouped bars of risk measures (values in [0, 1]) before and after anonymization."""
    labels = [k for k in before if before.get(k) is not None or after.get(k) is not None]
    fig, axes = new_figure(8, 3)
    ax = axes[0, 0]
    x = np.arange(len(labels))
    b = [before.get(k) or 0.0 for k in labels]
    a = [after.get(k) or 0.0 for k in labels]
    ax.bar(x - 0.2, b, 0.4, label="input", color=COLORS["before"])
    ax.bar(x + 0.2, a, 0.4, label="release", color=COLORS["after"])
    for xi, (vb, va) in enumerate(zip(b, a)):
        ax.text(xi - 0.2, vb, f"{vb:.3g}", ha="center", va="bottom", fontsize=8)
        ax.text(xi + 0.2, va, f"{va:.3g}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, labels)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("share / probability")
    ax.legend(frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return to_svg(fig)


def attribute_loss_bars(names: Sequence[str], losses: Sequence[float], levels: Sequence[str], *, max_labelled: int = 24) -> str:
    """Horizontal bars of the generalization loss of each attribute, labelled with its level.

    More than ``max_labelled`` attributes (e.g. the time points of a series): one vertical bar per
    attribute in column order (binned past :data:`MAX_BARS`, the mean per bin), at most
    :data:`MAX_TICKS` names on the axis, in a figure of fixed height."""
    if len(names) > max_labelled:
        starts = bin_edges(len(names))
        vals = reduce_bins(losses, starts, "mean")
        fig, axes = new_figure(10, 3)
        ax = axes[0, 0]
        x = np.arange(len(starts))
        ax.bar(x, vals, width=0.9 if len(x) < 60 else 1.0, color=COLORS["after"])
        sparse_ticks(ax, x, bin_labels(names, starts))
        ax.set_ylim(0, 1)
        ax.set_ylabel("generalization loss")
        ax.set_title(f"{len(names):,} attributes in column order" + (f", {len(starts)} bins (mean loss per bin)" if len(starts) < len(names) else ""), fontsize=9)
        ax.spines[["top", "right"]].set_visible(False)
        return to_svg(fig)
    fig, axes = new_figure(8, 0.45 * len(names) + 1.0)
    ax = axes[0, 0]
    y = np.arange(len(names))[::-1]
    ax.barh(y, losses, color=COLORS["after"])
    ax.set_yticks(y, [f"{n} (level {lv})" for n, lv in zip(names, levels)])
    ax.set_xlim(0, 1)
    ax.set_xlabel("generalization loss (0 = unchanged, 1 = fully suppressed)")
    ax.spines[["top", "right"]].set_visible(False)
    return to_svg(fig)


# ---- generalization lattice -------------------------------------------------------------------
def _int_locator():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _chain_parents(n_levels: int) -> tuple[tuple[int, ...], ...]:
    return tuple((j + 1,) if j + 1 < n_levels else () for j in range(n_levels))


def lattice_diagram(
    n_levels: Sequence[int],
    anonymous: Sequence[Sequence[int]],
    minimal: Sequence[Sequence[int]],
    selected: Sequence[int] | None,
    *,
    names: Sequence[str] | None = None,
    parents: Sequence[Sequence[Sequence[int]]] | None = None,
    heights: Sequence[Sequence[int]] | None = None,
    max_nodes: int = 400,
) -> str:
    """The generalization lattice with its anonymous, minimal and selected nodes.

    ``n_levels[j]`` is the number of levels of attribute ``j``; a node is a level vector. Levels
    form chains unless ``parents[j][v]`` (direct generalizations of level ``v``) and
    ``heights[j][v]`` are given (time granularity DAGs). Up to ``max_nodes`` nodes the Hasse
    diagram is drawn (nodes by height, edges to direct generalizations). Bigger lattices get two
    readable projections instead: per height, how many nodes exist and how many are anonymous
    (with the minimal and selected ones marked), and the minimal nodes as lines across the
    attributes' levels (parallel coordinates), the selected node in red.
    """
    dims = len(n_levels)
    names = list(names) if names is not None else [f"A{j}" for j in range(dims)]
    parents = [tuple(tuple(p) for p in ps) for ps in parents] if parents is not None else [_chain_parents(n) for n in n_levels]
    heights = [list(h) for h in heights] if heights is not None else [list(range(n)) for n in n_levels]
    anon = {tuple(int(v) for v in n) for n in anonymous}
    mins = {tuple(int(v) for v in n) for n in minimal}
    sel = tuple(int(v) for v in selected) if selected is not None else None
    size = int(np.prod([int(n) for n in n_levels]))

    def h(node: tuple[int, ...]) -> int:
        return sum(heights[j][v] for j, v in enumerate(node))

    def colour(node: tuple[int, ...]) -> str:
        if node == sel:
            return COLORS["selected"]
        if node in mins:
            return COLORS["minimal"]
        if node in anon:
            return COLORS["anonymous"]
        return COLORS["plain"]

    if size <= max_nodes:
        nodes = list(itertools.product(*[range(int(n)) for n in n_levels]))
        by_h: dict[int, list[tuple[int, ...]]] = {}
        for n in nodes:
            by_h.setdefault(h(n), []).append(n)
        pos = {}
        for hh, ns in by_h.items():
            ns.sort()
            for i, n in enumerate(ns):
                pos[n] = (i - (len(ns) - 1) / 2, hh)
        width = max(len(v) for v in by_h.values())
        fig, axes = new_figure(min(12, 2 + 0.55 * width), min(10, 1.5 + 0.8 * len(by_h)))
        ax = axes[0, 0]
        segs_x, segs_y = [], []
        for n in nodes:
            for j in range(dims):
                for p in parents[j][n[j]]:
                    m = n[:j] + (p,) + n[j + 1 :]
                    segs_x += [pos[n][0], pos[m][0], None]
                    segs_y += [pos[n][1], pos[m][1], None]
        ax.plot(segs_x, segs_y, color=COLORS["edge"], lw=0.8, zorder=1)
        xs = [pos[n][0] for n in nodes]
        ys = [pos[n][1] for n in nodes]
        ax.scatter(xs, ys, s=260 if size <= 60 else 90, c=[colour(n) for n in nodes], edgecolors="#57606a", linewidths=0.6, zorder=2)
        if size <= 60:
            for n in nodes:
                dark = n == sel or n in mins
                ax.annotate("".join(map(str, n)) if max(n_levels) <= 10 else ",".join(map(str, n)), pos[n], ha="center", va="center",
                            fontsize=7, zorder=3, color="white" if dark else "#1f2328")
        ax.set_ylabel("height (sum of levels)")
        ax.set_yticks(sorted(by_h))
        ax.set_xticks([])
        ax.set_title("node = levels of " + ", ".join(names), fontsize=9)
        for s in ("top", "right", "bottom"):
            ax.spines[s].set_visible(False)
    else:
        # per-height counts: convolution of the attributes' level-height histograms
        total = np.array([1], dtype=np.int64)
        for j in range(dims):
            total = np.convolve(total, np.bincount(heights[j]))
        hs = np.arange(len(total))
        n_anon = np.bincount([h(n) for n in anon], minlength=len(total)) if anon else np.zeros(len(total), int)
        n_min = np.bincount([h(n) for n in mins], minlength=len(total)) if mins else np.zeros(len(total), int)
        fig, axes = new_figure(12, 4.2, ncols=2)
        ax = axes[0, 0]
        ax.barh(hs, total, color=COLORS["plain"], label="not anonymous")
        ax.barh(hs, n_anon, color=COLORS["anonymous"], label="anonymous")
        ax.barh(hs, n_min, color=COLORS["minimal"], label="minimal anonymous")
        if sel is not None:
            ax.plot([n_anon[h(sel)]], [h(sel)], marker="*", ms=14, color=COLORS["selected"], ls="", label="selected")
        ax.set_xscale("symlog")
        ax.set_xlabel("nodes at this height")
        ax.set_ylabel("height (sum of levels)")
        ax.set_title(f"{size:,} nodes by height", fontsize=10)
        ax.yaxis.set_major_locator(_int_locator())
        ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)  # below, never on the bars
        ax.spines[["top", "right"]].set_visible(False)
        ax2 = axes[0, 1]
        xs = np.arange(dims)
        for n in sorted(mins)[:300]:
            ax2.plot(xs, n, color=COLORS["minimal"], alpha=0.35, lw=1)
        if sel is not None:
            ax2.plot(xs, sel, color=COLORS["selected"], lw=2.5, marker="o", label="selected")
        ax2.set_xticks(xs, names, rotation=30, ha="right", fontsize=9 if dims <= 12 else 7)
        ax2.set_ylabel("generalization level")
        ax2.yaxis.set_major_locator(_int_locator())
        ax2.set_title(f"{len(mins)} minimal anonymous nodes (levels per attribute)" + ("; red: the released one" if sel is not None else ""), fontsize=10)
        ax2.spines[["top", "right"]].set_visible(False)
    return to_svg(fig)


# ---- time granularities -------------------------------------------------------------------------
def dag_diagram(nodes: Sequence[str], edges: Sequence[tuple[str, str]], *, chosen: Sequence[str] | str | None = None, feasible: Sequence[str] = ()) -> str:
    """A DAG (e.g. time granularities, finer -> coarser edges) in layers by longest path from the
    sources; ``chosen`` nodes in red, ``feasible`` ones in green, others grey."""
    nodes = list(nodes)
    chosen_set = {chosen} if isinstance(chosen, str) else set(chosen or ())
    feas = set(feasible)
    unknown = {a for e in edges for a in e} - set(nodes)
    if unknown:
        raise ValueError(f"edges mention unknown node(s): {', '.join(sorted(unknown))}")
    preds: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        preds[b].append(a)
    layer: dict[str, int] = {}

    def depth(n: str, stack: tuple[str, ...] = ()) -> int:
        if n in stack:
            raise ValueError(f"the granularity graph has a cycle through {n!r}")
        if n not in layer:
            layer[n] = 1 + max((depth(p, stack + (n,)) for p in preds[n]), default=-1)
        return layer[n]

    for n in nodes:
        depth(n)
    rows: dict[int, list[str]] = {}
    for n in nodes:
        rows.setdefault(layer[n], []).append(n)
    pos = {n: (i - (len(ns) - 1) / 2, lv) for lv, ns in rows.items() for i, n in enumerate(ns)}
    width = max(len(v) for v in rows.values())
    fig, axes = new_figure(min(12, 2.5 + 1.6 * width), 1.2 + 0.9 * len(rows))
    ax = axes[0, 0]
    for a, b in edges:
        ax.annotate("", xy=pos[b], xytext=pos[a], arrowprops={"arrowstyle": "->", "color": COLORS["edge"], "lw": 1, "shrinkA": 12, "shrinkB": 12})
    for n in nodes:
        c = COLORS["selected"] if n in chosen_set else COLORS["anonymous"] if n in feas else COLORS["plain"]
        ax.annotate(n, pos[n], ha="center", va="center", fontsize=9, bbox={"boxstyle": "round,pad=0.3", "fc": c, "ec": "#57606a"},
                    color="white" if n in chosen_set else "#1f2328")
    xs = [p[0] for p in pos.values()]
    ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
    ax.set_ylim(-0.6, max(rows) + 0.6)
    ax.set_ylabel("finer  ->  coarser")
    ax.set_xticks([])
    ax.set_yticks([])
    for s in ax.spines.values():
        s.set_visible(False)
    return to_svg(fig)


# ---- streams ------------------------------------------------------------------------------------
def stream_timeline(labels: Sequence[Any], sizes: Sequence[int], suppressed: Sequence[int], distances: Sequence[float] | None = None) -> str:
    """Per snapshot: released size and suppressed tuples (stacked), and reposition distances."""
    n = len(labels)
    if not (len(sizes) == len(suppressed) == n) or (distances is not None and len(distances) != n):
        raise ValueError("labels, sizes, suppressed (and distances) must have the same length")
    rows = 2 if distances is not None else 1
    starts = bin_edges(n)
    if len(starts) < n:  # binned: sums of tuples and the mean distance per bin of consecutive snapshots
        sizes, suppressed = reduce_bins(sizes, starts, "sum"), reduce_bins(suppressed, starts, "sum")
        distances = reduce_bins(distances, starts, "mean") if distances is not None else None
        labels = bin_labels(labels, starts)
        n = len(starts)
    fig, axes = new_figure(10, 2.6 * rows, nrows=rows)
    x = np.arange(n)
    ax = axes[0, 0]
    ax.bar(x, sizes, color=COLORS["after"], label="released tuples")
    ax.bar(x, suppressed, bottom=sizes, color=COLORS["suppressed"], label="suppressed tuples")
    ax.set_ylabel("tuples")
    ax.set_xlim(-0.6, n - 0.4)
    ax.legend(frameon=False, fontsize=8, loc="lower left", bbox_to_anchor=(0, 1), ncol=2)  # above the bars, never on them
    ax.spines[["top", "right"]].set_visible(False)
    if distances is not None:
        ax2 = axes[1, 0]
        ax2.plot(x, distances, marker="o" if n <= 60 else None, ms=3, color=COLORS["before"])
        ax2.set_xlim(-0.6, n - 0.4)
        ax2.set_ylabel("reposition distance")
        ax2.spines[["top", "right"]].set_visible(False)
    last = axes[-1, 0]
    sparse_ticks(last, x, labels)
    if rows == 2:
        ax.set_xticks([])
    return to_svg(fig)


# ---- time series ------------------------------------------------------------------------------
def series_envelopes(groups: Sequence[Mapping[str, Any]], *, max_groups: int = 6, max_members: int = 40) -> str:
    """A few (k,P) groups: each panel the group's envelope (min..max per time point), its members'
    series, and their reconstructed patterns (dashed).

    Each group is a mapping with ``members`` (an ``(m, T)`` array), optional ``patterns`` (an
    ``(m, T)`` array of reconstructed series), optional ``label``. The envelope covers every
    member; at most ``max_members`` members (and patterns) of a group are drawn, evenly spaced.
    """
    groups = list(groups)[:max_groups]
    if not groups:
        raise ValueError("no group to draw")
    cols = min(3, len(groups))
    rows_ = (len(groups) + cols - 1) // cols
    fig, axes = new_figure(4 * cols, 2.6 * rows_, ncols=cols, nrows=rows_)
    for i, g in enumerate(groups):
        ax = axes[i // cols, i % cols]
        m = np.atleast_2d(np.asarray(g["members"], dtype=float))
        t = np.arange(m.shape[1])
        ax.fill_between(t, m.min(axis=0), m.max(axis=0), color=COLORS["after"], alpha=0.18, label="envelope")
        drawn = np.unique(np.linspace(0, m.shape[0] - 1, min(max_members, m.shape[0])).round().astype(int))
        for row in m[drawn]:
            ax.plot(t, row, color=COLORS["after"], lw=0.9, alpha=0.8)
        if g.get("patterns") is not None:
            pat = np.atleast_2d(np.asarray(g["patterns"], dtype=float))
            if pat.shape[1] != m.shape[1]:
                raise ValueError(f"group {i}: patterns have {pat.shape[1]} points, members {m.shape[1]}")
            for row in pat[drawn] if len(pat) == len(m) else pat[:max_members]:
                ax.plot(t, row, color=COLORS["selected"], lw=1, ls="--", alpha=0.8)
        ax.set_title(str(g.get("label", f"group {i + 1} ({m.shape[0]} series)")), fontsize=9)
        ax.spines[["top", "right"]].set_visible(False)
    for j in range(len(groups), rows_ * cols):
        axes[j // cols, j % cols].axis("off")
    return to_svg(fig)


__all__ = [
    "MAX_BARS",
    "MAX_HEIGHT",
    "MAX_TICKS",
    "MAX_WIDTH",
    "attribute_loss_bars",
    "bin_edges",
    "bin_labels",
    "reduce_bins",
    "sparse_ticks",
    "class_size_histogram",
    "dag_diagram",
    "lattice_diagram",
    "new_figure",
    "risk_comparison",
    "series_envelopes",
    "stream_timeline",
    "to_svg",
]
