"""A self-contained HTML report: sections of blocks (text, key/value lists, tables, figures).

The page has no script, no external stylesheet, font, image or link: CSS is inline in ``<style>``
and every figure is an inline ``<svg>`` element produced by matplotlib. It opens the same offline,
in a mail attachment or in an archive years later.

Reports stay a few screens long whatever the input's size: a table shows at most
:data:`MAX_TABLE_ROWS` rows (``max_rows``) followed by a "showing N of M" note, and a cell at most
:data:`MAX_CELL_CHARS` characters; figures are size-capped in :mod:`tempanon.report.figures`.

Each capability contributes :class:`Section` objects (see :mod:`tempanon.report.sections`); a
:class:`Report` is just a title, a subtitle and an ordered list of sections.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_TABLE_ROWS = 30
"""Rows a report table shows by default; the rest are summarized by a "showing N of M" note."""
MAX_CELL_CHARS = 160
"""Characters a table cell or key/value shows; longer text ends in an ellipsis."""

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
main{max-width:1100px;margin:0 auto;padding:24px 32px;background:#fff}
h1{font-size:26px;margin:8px 0 4px}h2{font-size:20px;border-bottom:2px solid #d0d7de;padding-bottom:4px;margin-top:32px}
h3{font-size:15px;margin:16px 0 6px}p.sub{color:#57606a;margin:0 0 16px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:13px;display:block;max-width:100%;overflow-x:auto}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top;max-width:36em;overflow-wrap:anywhere}
caption{text-align:left;color:#57606a;font-size:13px;padding:2px 0}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
dl.kv{display:grid;grid-template-columns:max-content auto;gap:2px 16px;font-size:14px;margin:8px 0}dl.kv dt{color:#57606a}dl.kv dd{margin:0}
.ok{color:#1a7f37;font-weight:600}.bad{color:#cf222e;font-weight:600}.note{color:#57606a;font-size:13px}
figure{margin:12px 0}figure svg{max-width:100%;height:auto}p.more{color:#57606a;font-size:13px;margin:-6px 0 12px}figcaption{color:#57606a;font-size:13px}
nav ol{columns:2;font-size:14px}code{font-size:13px;background:#f6f8fa;padding:1px 4px}
"""


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


@dataclass
class Block:
    """One piece of a section, already rendered to HTML (use the ``add_*`` helpers)."""

    kind: str
    html: str


@dataclass
class Section:
    """A titled part of the report. ``key`` is its HTML id (stable, for tests and links)."""

    key: str
    title: str
    blocks: list[Block] = field(default_factory=list)

    def add_text(self, text: str, *, css: str | None = None) -> Section:
        cls = f' class="{esc(css)}"' if css else ""
        self.blocks.append(Block("text", f"<p{cls}>{esc(text)}</p>"))
        return self

    def add_heading(self, text: str) -> Section:
        self.blocks.append(Block("heading", f"<h3>{esc(text)}</h3>"))
        return self

    def add_kv(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> Section:
        pairs = items.items() if isinstance(items, Mapping) else items
        body = "".join(f"<dt>{esc(_cell(k))}</dt><dd>{esc(_cell(v))}</dd>" for k, v in pairs)
        self.blocks.append(Block("kv", f'<dl class="kv">{body}</dl>'))
        return self

    def add_table(
        self,
        header: Sequence[str],
        rows: Iterable[Sequence[Any]],
        *,
        caption: str | None = None,
        max_rows: int | None = MAX_TABLE_ROWS,
        rest: str | None = None,
    ) -> Section:
        """A table of ``rows`` (numbers right-aligned). At most ``max_rows`` rows are shown (``None``:
        all); when there are more, a note below says "showing N of M rows" and, with ``rest``, where
        the others are (e.g. "all of them are in the summary JSON")."""
        head = "".join(f"<th>{esc(h)}</th>" for h in header)
        rows = list(rows)
        shown = rows if max_rows is None else rows[: max(0, int(max_rows))]
        body = []
        for row in shown:
            cells = []
            for v in row:
                num = isinstance(v, (int, float)) and not isinstance(v, bool)
                cells.append(f'<td class="num">{esc(_cell(v))}</td>' if num else f"<td>{esc(_cell(v))}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        cap = f"<caption>{esc(caption)}</caption>" if caption else ""
        self.blocks.append(Block("table", f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"))
        if len(shown) < len(rows):
            note = f"showing {len(shown):,} of {len(rows):,} rows" + (f"; {rest}" if rest else "") + "."
            self.blocks.append(Block("more", f'<p class="more">{esc(note)}</p>'))
        return self

    def add_figure(self, svg: str, caption: str) -> Section:
        """An inline SVG figure (see :func:`tempanon.report.figures.to_svg`)."""
        if not svg.lstrip().startswith("<svg"):
            raise ValueError("a figure must be an inline <svg> element")
        self.blocks.append(Block("figure", f'<figure class="plot">{svg}<figcaption>{esc(caption)}</figcaption></figure>'))
        return self

    def add_status(self, ok: bool, text: str) -> Section:
        self.blocks.append(Block("status", f'<p class="{"ok" if ok else "bad"}">{esc(text)}</p>'))
        return self

    def render(self) -> str:
        return f'<section id="{esc(self.key)}"><h2>{esc(self.title)}</h2>{"".join(b.html for b in self.blocks)}</section>'


def _cell(v: Any) -> str:
    """``_fmt(v)`` cut to :data:`MAX_CELL_CHARS` characters (an ellipsis marks the cut)."""
    text = _fmt(v)
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "\u2026"


def _fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if v != v:
            return "n/a"
        if v in (float("inf"), float("-inf")):  # (int(v) would raise OverflowError)
            return "\u221e" if v > 0 else "-\u221e"
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v):,}" if abs(v) >= 10000 else str(int(v))
        return f"{v:.4g}" if abs(v) < 1e6 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10000 else str(v)
    if isinstance(v, (list, tuple)):
        return ", ".join(_fmt(x) for x in v)
    return str(v)


@dataclass
class Report:
    """An ordered list of sections rendered as one self-contained HTML page."""

    title: str
    subtitle: str = ""
    sections: list[Section] = field(default_factory=list)

    def add(self, section: Section) -> Section:
        if any(s.key == section.key for s in self.sections):
            raise ValueError(f"duplicate report section {section.key!r}")
        self.sections.append(section)
        return section

    def section_keys(self) -> list[str]:
        return [s.key for s in self.sections]

    def render(self) -> str:
        nav = "".join(f'<li><a href="#{esc(s.key)}">{esc(s.title)}</a></li>' for s in self.sections)
        body = "".join(s.render() for s in self.sections)
        sub = f'<p class="sub">{esc(self.subtitle)}</p>' if self.subtitle else ""
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(self.title)}</title><style>{_CSS}</style></head>"
            f"<body><main><h1>{esc(self.title)}</h1>{sub}<nav><ol>{nav}</ol></nav>{body}</main></body></html>\n"
        )

    def write(self, path: str | os.PathLike) -> Path:
        """Write the page atomically (see :func:`tempanon.data.io.atomic_write`)."""
        from tempanon.data.io import atomic_write

        text = self.render()
        return atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


__all__ = ["MAX_CELL_CHARS", "MAX_TABLE_ROWS", "Block", "Report", "Section", "esc"]
