"""HTML reports: structure, self-containment, figures, and the kanon --report/--verbose options."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.hierarchy import build_intervals, build_masking, build_suppression
from tempanon.kanon import kanonymize
from tempanon.report import Report, Section
from tempanon.report import sections as S
from tempanon.report.kanon import attribute_losses, kanon_report

runner = CliRunner()

KANON_SECTIONS = ["inputs", "guarantee", "risk", "utility", "lattice"]


class Parsed(HTMLParser):
    """Collects tags, section ids, figure contents and every URL-ish attribute."""

    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.sections: list[str] = []
        self.figures = 0
        self.svg_in_figure = 0
        self._fig_depth = 0
        self._fig_has_svg = False
        self.urls: list[str] = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a.get("id"))
        if tag == "figure":
            self.figures += 1
            self._fig_depth += 1
            self._fig_has_svg = False
        if tag == "svg" and self._fig_depth:
            self._fig_has_svg = True
        for name, value in attrs:
            if name in ("href", "src", "xlink:href", "action", "data") and value is not None:
                self.urls.append(value)

    def handle_endtag(self, tag):
        if tag == "figure":
            self._fig_depth -= 1
            self.svg_in_figure += self._fig_has_svg

    def handle_data(self, data):
        self.text.append(data)


def assert_self_contained(html: str) -> Parsed:
    p = Parsed()
    p.feed(html)
    p.close()
    assert html.startswith("<!DOCTYPE html>")
    for tag in ("script", "link", "img", "iframe", "object", "embed"):
        assert tag not in p.tags, f"<{tag}> in report"
    # every reference is an in-page anchor or an in-SVG reference
    assert all(u.startswith("#") for u in p.urls), [u for u in p.urls if not u.startswith("#")][:5]
    # the only http(s) strings are the SVG/XLink namespace declarations
    for m in re.finditer(r"https?://[^\s\"')<>]+", html):
        assert m.group(0) in ("http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"), m.group(0)
    assert "url(http" not in html and "@import" not in html
    assert p.figures == p.svg_in_figure > 0, "every figure must embed an inline SVG"
    return p


@pytest.fixture
def table():
    rng = np.random.default_rng(3)
    n = 400
    return pd.DataFrame({
        "name": [f"n{i}" for i in range(n)],
        "age": rng.integers(18, 80, n).astype(str),
        "sex": rng.choice(["M", "F"], n),
        "zip": rng.choice(["53715", "53710", "53706", "53703"], n),
        "dx": rng.choice(["flu", "cold"], n),
    })


def _run(df, **kw):
    h = {"age": build_intervals("age", df.age, [5, 10, 20, 40]), "sex": build_suppression("sex", df.sex),
         "zip": build_masking("zip", df.zip, 2)}
    return kanonymize(df, ["age", "sex", "zip"], h, 5, identifying=["name"], **kw)


def test_kanon_report_sections_figures_and_self_containment(table):
    res = _run(table, max_suppression=0.05)
    rep = kanon_report(table, res, source="t.csv", checksum="abc", identifying=["name"])
    assert rep.section_keys() == KANON_SECTIONS
    html = rep.render()
    p = assert_self_contained(html)
    assert p.sections == KANON_SECTIONS
    assert p.figures == 4  # class-size histogram, risk bars, loss bars, lattice
    text = " ".join(p.text)
    assert "verified on the released table" in text
    assert "direct identifier (removed)" in text and "abc" in text


def test_attribute_losses_average_to_the_run_loss(table):
    res = _run(table, max_suppression=0.05)
    losses = attribute_losses(res)
    assert [x[0] for x in losses] == ["age", "sex", "zip"]
    assert np.mean([x[3] for x in losses]) == pytest.approx(res.loss)
    assert all(0 <= x[3] <= 1 for x in losses)


def test_report_risk_numbers_are_the_measured_ones(table):
    from tempanon.metrics import measure

    res = _run(table)
    html = kanon_report(table, res, source="t.csv", checksum=None).render()
    before = measure(table, ["age", "sex", "zip"])
    # the input's unique-record count and the release's k appear in the risk table
    risk_html = html[html.index('id="risk"'):html.index('id="utility"')]
    assert f"<td class=\"num\">{before.uniques}</td>" in risk_html
    assert f"<td class=\"num\">{res.min_class_size}</td>" in risk_html


def test_big_lattice_uses_projection():
    svg_small = S.lattice_section(names=["a", "b"], n_levels=[3, 2], anonymous=[(2, 1)], minimal=[(2, 1)], selected=(2, 1)).render()
    svg_big = S.lattice_section(names=list("abcdef"), n_levels=[5, 4, 4, 3, 3, 3], anonymous=[(4, 3, 3, 2, 2, 2), (3, 3, 3, 2, 2, 2)],
                                minimal=[(3, 3, 3, 2, 2, 2)], selected=(3, 3, 3, 2, 2, 2)).render()
    assert "<svg" in svg_small and "<svg" in svg_big
    assert "nodes by height" in svg_big and "minimal anonymous nodes" in svg_big
    assert "nodes by height" not in svg_small


def test_section_builders_for_other_capabilities(tmp_path):
    rng = np.random.default_rng(0)
    rep = Report("synthetic", "all builders")
    rep.add(S.granularity_section(nodes=["second", "minute", "hour", "day", "week", "month", "year"],
                                  edges=[("second", "minute"), ("minute", "hour"), ("hour", "day"), ("day", "week"), ("day", "month"), ("month", "year")],
                                  chosen="week", feasible=["month", "year"]))
    rep.add(S.stream_section(labels=[f"2021-01-{d:02d}" for d in range(1, 21)], sizes=rng.integers(10, 50, 20).tolist(),
                             suppressed=rng.integers(0, 5, 20).tolist(), distances=rng.random(20).tolist()))
    groups = []
    for g in range(4):
        m = rng.random((5, 12)).cumsum(axis=1)
        groups.append({"members": m, "patterns": np.round(m), "label": f"group {g}"})
    rep.add(S.timeseries_section(groups=groups, k=5, p=3, measures={"IL": 0.12}))
    rep.add(S.inputs_section(source="x", rows=1, roles={"a": "qi"}, parameters={"k": 2}, checksum=None))
    rep.add(S.guarantee_section(model="(k,P)", requested={"k": 5}, achieved={"k": 5}, verified=True, class_sizes=[5, 6, 7], k=5, what="series"))
    out = rep.write(tmp_path / "r.html")
    html = out.read_text()
    p = assert_self_contained(html)
    assert p.sections == ["granularities", "stream", "timeseries", "inputs", "guarantee"]
    assert p.figures == 4
    assert ">week<" in html or "week" in html
    with pytest.raises(ValueError, match="duplicate"):
        rep.add(Section("stream", "again"))


def test_section_builders_reject_inconsistent_data():
    with pytest.raises(ValueError, match="same length"):
        S.stream_section(labels=[1, 2], sizes=[1], suppressed=[0, 0])
    with pytest.raises(ValueError, match="cycle"):
        S.granularity_section(nodes=["a", "b"], edges=[("a", "b"), ("b", "a")], chosen="a")
    with pytest.raises(ValueError, match="unknown node"):
        S.granularity_section(nodes=["a"], edges=[("a", "z")], chosen="a")
    with pytest.raises(ValueError, match="points"):
        S.timeseries_section(groups=[{"members": np.zeros((2, 4)), "patterns": np.zeros((2, 3))}])
    with pytest.raises(ValueError, match="inline <svg>"):
        Section("x", "x").add_figure("<img src='http://example.com/x.png'>", "no")


def test_text_is_escaped():
    sec = Section("s", "<b>title</b>").add_text("<script>alert(1)</script>").add_table(["<h>"], [["<v>"]])
    html = Report("t<", sections=[sec]).render()
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>title" not in html


# ---- kanon --report / --verbose ---------------------------------------------------------------
@pytest.fixture
def files(tmp_path, table):
    data = tmp_path / "t.csv"
    table.to_csv(data, sep=";", index=False)
    hdir = tmp_path / "h"
    build_intervals("age", table.age, [5, 10, 20, 40]).to_csv(hdir / "age.csv")
    build_suppression("sex", table.sex).to_csv(hdir / "sex.csv")
    build_masking("zip", table.zip, 2).to_csv(hdir / "zip.csv")
    return tmp_path, data, hdir


def test_kanon_cli_report_and_verbose(files):
    tmp, data, hdir = files
    rep = tmp / "out" / "r.html"
    r = runner.invoke(app, ["kanon", str(data), "--qi", "age,sex,zip", "--hierarchies", str(hdir), "--k", "5", "--drop", "name",
                            "--out", str(tmp / "o.csv"), "--report", str(rep), "--verbose"])
    assert r.exit_code == 0, r.output
    assert "nodes checked" in r.output and "table scans" in r.output and "search:" in r.output and "build report" in r.output
    html = rep.read_text()
    p = assert_self_contained(html)
    assert p.sections == KANON_SECTIONS
    import hashlib
    assert hashlib.sha256(data.read_bytes()).hexdigest() in html
    # no stray temporary files from the atomic write
    assert [f.name for f in rep.parent.iterdir()] == ["r.html"]


def test_kanon_cli_no_report_without_solution(files):
    tmp, data, hdir = files
    rep = tmp / "r.html"
    r = runner.invoke(app, ["kanon", str(data), "--qi", "age,sex,zip", "--hierarchies", str(hdir), "--k", "1000",
                            "--out", str(tmp / "o.csv"), "--report", str(rep), "-q"])
    assert r.exit_code == 1
    assert not rep.exists() and not (tmp / "o.csv").exists()
