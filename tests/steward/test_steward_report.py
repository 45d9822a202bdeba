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
# a report written by a command or job also says what was verified (issue 12), after the guarantee
WRITTEN_KANON_SECTIONS = [*KANON_SECTIONS[:2], "verification", *KANON_SECTIONS[2:]]


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
    assert p.sections == WRITTEN_KANON_SECTIONS
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


# ---- reports that scale (issue 16): a long input stays a few screens -------------------------
from report_page import VIEWPORT, check_page, rendered_size  # noqa: E402  (tests/report_page.py)

SCREENS = 5
"""A report of any input fits in this many screens (VIEWPORT heights) at VIEWPORT width."""


def assert_fits(html, tmp_path):
    height, width = rendered_size(html, tmp_path)
    assert width <= VIEWPORT[0], f"the page is {width} px wide: something overflows the {VIEWPORT[0]} px window"
    assert height <= SCREENS * VIEWPORT[1], f"the page is {height} px tall, more than {SCREENS} screens"
    return height


def test_table_caps_rows_with_a_note():
    rows = [(f"c{i}", i) for i in range(100)]
    html = Section("s", "s").add_table(["a", "b"], rows, rest="all are in the summary").render()
    assert html.count("<tr>") == 1 + 30  # header + MAX_TABLE_ROWS
    assert "showing 30 of 100 rows; all are in the summary." in html
    assert ">c29<" in html and ">c30<" not in html
    small = Section("s", "s").add_table(["a"], [("x",)] * 30).render()
    assert "showing" not in small and small.count("<tr>") == 31
    every = Section("s", "s").add_table(["a"], [("x",)] * 100, max_rows=None).render()
    assert every.count("<tr>") == 101 and "showing" not in every
    long = Section("s", "s").add_table(["a"], [("y" * 1000,)]).add_kv({"k": "z" * 1000}).render()
    assert "y" * 159 + "\u2026" in long and "y" * 160 not in long and "z" * 160 not in long


def test_wide_input_roles_are_grouped_by_role():
    roles = {"id": "respondent id", **{f"A{i}": "quasi-identifier" for i in range(144)}, "S": "sensitive"}
    html = S.inputs_section(source="x", rows=3, roles=roles, parameters={}, checksum=None).render()
    assert html.count("<tr>") == 1 + 3  # one row per role
    assert "A0, A1, A2, A3, A4, A5, A6, ... and 137 more (last: A143)" in html
    assert '<td class="num">144</td>' in html
    few = S.inputs_section(source="x", rows=3, roles={"a": "qi", "b": "other"}, parameters={}, checksum=None).render()
    assert few.count("<tr>") == 3 and "<td>a</td><td>qi</td>" in few


def test_binning_helpers_match_brute_force():
    from tempanon.report import figures as F

    rng = np.random.default_rng(1)
    for n in (0, 1, 5, 200, 201, 999, 1500):
        starts = F.bin_edges(n)
        assert len(starts) <= F.MAX_BARS and (n == 0 or starts[0] == 0)
        ends = [*starts[1:], n]
        assert sum(b - a for a, b in zip(starts, ends)) == n  # the bins cover every item once
        v = rng.random(n)
        v[rng.random(n) < 0.2] = np.nan
        if n == 0:
            continue
        for how, fn in (("sum", np.sum), ("min", np.min), ("max", np.max), ("mean", np.nanmean)):
            w = np.nan_to_num(v) if how != "mean" else v
            got = F.reduce_bins(w, starts, how)
            with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
                __import__("warnings").simplefilter("ignore")
                want = [fn(w[a:b]) for a, b in zip(starts, ends)]
            np.testing.assert_allclose(got, want, equal_nan=True)
        labels = F.bin_labels([f"d{i}" for i in range(n)], starts)
        assert labels[0].startswith("d0") and labels[-1].endswith(f"d{n - 1}") and len(labels) == len(starts)


def test_figures_are_size_capped():
    from tempanon.report import figures as F

    def size_in(svg):
        w, h = (float(re.search(rf'{a}="([\d.]+)pt"', svg).group(1)) / 72 for a in ("width", "height"))
        return w, h

    svg = F.attribute_loss_bars([f"A{i}" for i in range(1940)], np.linspace(0, 1, 1940), ["1"] * 1940)
    w, h = size_in(svg)
    assert h <= F.MAX_HEIGHT + 1 and w <= F.MAX_WIDTH + 2
    assert svg.count("<text") <= 40  # at most MAX_TICKS names (+ axis numbers), no overlapping wall of labels
    svg = F.stream_timeline([f"s{i}" for i in range(5000)], np.ones(5000, int), np.zeros(5000, int), np.zeros(5000))
    assert len(svg) < 300_000 and size_in(svg)[1] <= F.MAX_HEIGHT + 1
    big = {"members": np.random.default_rng(0).random((500, 50))}
    svg = F.series_envelopes([big])
    assert svg.count("<path") < 80  # 40 members + envelope + axes, not 500 polylines


def test_kanon_report_of_a_wide_input_fits(tmp_path):
    rng = np.random.default_rng(0)
    n = 1500
    df = pd.DataFrame({f"q{i}": rng.choice(["a", "b", "c"], n) for i in range(9)})
    for i in range(120):
        df[f"other_column_with_a_rather_long_name_{i}"] = "v" * 40
    qi = [f"q{i}" for i in range(9)]
    res = kanonymize(df, qi, {q: build_suppression(q, df[q]) for q in qi}, 5, max_suppression=0.05)
    html = kanon_report(df, res, source="wide.csv", checksum=None).render()
    check_page(html, KANON_SECTIONS)
    assert "showing 12 of" in html or len(res.minimal_nodes) <= 12
    assert_fits(html, tmp_path)


def test_kp_report_of_long_series_fits(tmp_path):
    from tempanon.report.kp import kp_report
    from tempanon.timeseries.api import kp_anonymize
    from tempanon.timeseries.data import random_walk

    T = 144  # the case of issue 16: 15,009 px before
    df = random_walk(80, T, seed=1)
    qi = [f"A{i}" for i in range(T)]
    sens = ["S"] if "S" in df.columns else []
    res = kp_anonymize(df, id_col="id", qi=qi, k=10, P=5, sensitive=sens)
    html = kp_report(df, res, id_col="id", qi=qi, sensitive=sens, source="walk.csv", checksum=None).render()
    assert "showing 15 of 144 rows" in html and f"{df.shape[1]} columns, grouped by role" in html
    assert_fits(html, tmp_path)


def test_stream_report_of_many_snapshots_fits(tmp_path):
    from tempanon.report.stream import stream_report
    from tempanon.stream.api import anonymize_stream

    rng = np.random.default_rng(0)
    n, days = 3000, 900
    minutes = np.sort(rng.integers(0, days * 24 * 60, n))
    when = (pd.Timestamp("2020-03-01") + pd.to_timedelta(minutes, unit="min")).strftime("%Y-%m-%d %H:%M")
    df = pd.DataFrame({"when": when, "dx": rng.choice(["flu", "cold", "hiv", "ulcer"], n, p=[0.4, 0.3, 0.2, 0.1]),
                       "zip": rng.choice(["01", "02", "03"], n), "age": rng.integers(20, 60, n).astype(str)})
    res = anonymize_stream(df, time="when", sensitive="dx", l=2, w=2, qi=["zip", "age"])
    html = stream_report(df, res, source="s.csv", checksum=None).render()
    assert "Bars are bins of" in html
    assert len(html) < 600_000
    assert_fits(html, tmp_path)


def test_timestamped_report_of_a_wide_input_fits(tmp_path):
    from tempanon.report.timestamped import timestamped_report
    from tempanon.temporal.api import anonymize_timestamped

    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({"Patient": rng.integers(0, 500, n).astype(str),
                       "Date": (pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, n), unit="D")).strftime("%Y-%m-%d"),
                       "Address": rng.choice([f"Addr{i}" for i in range(5)], n)})
    for i in range(80):
        df[f"extra_{i}"] = rng.choice(["x", "y"], n)
    res = anonymize_timestamped(df, time="Date", qi=["Address"], allow_identifier=["Address"], keep=[f"extra_{i}" for i in range(80)], k=3, uid="Patient", granularities="week,month,quarter,year")
    html = timestamped_report(df, res, source="t.csv", checksum=None).render()
    assert "grouped by role" in html
    assert_fits(html, tmp_path)


def test_a_small_report_fits_too(table, tmp_path):
    html = kanon_report(table, _run(table, max_suppression=0.05), source="t.csv", checksum=None).render()
    assert "showing" not in html and "grouped by role" not in html  # nothing is cut from a small report
    assert assert_fits(html, tmp_path) > VIEWPORT[1]  # and the measurement is real: more than one screen


def test_kp_report_counts_the_series_of_the_groups_it_draws():
    """The time-series section said 'smallest group drawn 2' in every kp report (it counted the two bounds of the
    envelope drawn for each k-group, not the k-group's series), suggesting groups below k (found in the uatb
    acceptance pass). It is now the smallest drawn k-group's number of series, at least k."""
    import re

    from tempanon.report.kp import kp_report
    from tempanon.timeseries.api import kp_anonymize
    from tempanon.timeseries.data import random_walk

    df = random_walk(120, seed=2)
    qi = [f"A{i}" for i in range(10)]
    res = kp_anonymize(df, id_col="id", qi=qi, k=10, P=5, shuffle_seed=1)
    html = kp_report(df, res, id_col="id", qi=qi, sensitive=[], source="walk.csv", checksum=None).render()
    text = re.sub(r"<[^>]+>", " ", re.sub(r"<svg.*?</svg>", "", html, flags=re.S))
    drawn = int(re.search(r"smallest group drawn\s+(\d+)", text).group(1))
    sizes = res.released.groupby("kgroup").size()
    assert drawn >= 10 and drawn in set(sizes)
    # the per-attribute loss is described once, as the kp report measures it (not as hierarchy leaves covered)
    assert "hierarchy leaves" not in text and "Loss per attribute: the mean over input series" in text
