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


# ---- rendering in headless Chromium ------------------------------------------------------------
VIEWPORT = (1280, 900)
"""Window of the rendering tests (a laptop screen); a "screen" below is its height."""


def chromium() -> str | None:
    """The headless browser's executable (Debian's ``chromium``), or None when not installed."""
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def rendered_size(html: str, tmp_path, *, viewport: tuple[int, int] = VIEWPORT) -> tuple[int, int]:
    """``(document height, document width)`` in CSS pixels of ``html`` laid out by headless Chromium
    at ``viewport``: a copy of the page with one inline script that writes
    ``document.documentElement.scrollHeight``/``scrollWidth`` into the DOM, read back with
    ``--dump-dom``. Skips the calling test when Chromium is not installed."""
    import subprocess

    import pytest

    exe = chromium()
    if exe is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium): the rendered page size is not measured")
    probe = ("<script>var d=document.documentElement;document.body.setAttribute('data-size',"
             "d.scrollHeight+'x'+d.scrollWidth)</script></body>")
    assert html.count("</body>") == 1
    page = tmp_path / f"render-{abs(hash(html)) % 10**9}.html"
    page.write_text(html.replace("</body>", probe), encoding="utf-8")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
           f"--user-data-dir={tmp_path / 'chromium-profile'}", "--no-first-run", "--no-default-browser-check",
           f"--window-size={viewport[0]},{viewport[1]}", "--dump-dom", page.resolve().as_uri()]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    m = re.search(r'data-size="(\d+)x(\d+)"', out.stdout)
    assert m, f"Chromium did not render the page: {out.stderr[-2000:]}"
    return int(m.group(1)), int(m.group(2))
