"""Test helper: parse a tempanon HTML report and check that it is self-contained."""

from __future__ import annotations

import re
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.sections, self.urls, self.text = [], [], [], []
        self.figures = self.figures_with_svg = 0
        self._in_fig = False
        self._svg = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a.get("id"))
        if tag == "figure":
            self.figures += 1
            self._in_fig, self._svg = True, False
        if tag == "svg" and self._in_fig:
            self._svg = True
        self.urls += [v for n, v in attrs if n in ("href", "src", "xlink:href", "action", "data") and v is not None]

    def handle_endtag(self, tag):
        if tag == "figure":
            self.figures_with_svg += self._svg
            self._in_fig = False

    def handle_data(self, data):
        self.text.append(data)


def check_page(html: str, sections: list[str]) -> Page:
    """Parses; every section present; every figure an inline SVG; nothing outside the page."""
    p = Page()
    p.feed(html)
    p.close()
    assert html.startswith("<!DOCTYPE html>")
    assert p.sections == sections
    assert p.figures > 0 and p.figures == p.figures_with_svg
    for tag in ("script", "link", "img", "iframe", "object", "embed"):
        assert tag not in p.tags
    assert all(u.startswith("#") for u in p.urls)
    assert set(re.findall(r"https?://[^\s\"')<>]+", html)) <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    assert "@import" not in html
    return p
