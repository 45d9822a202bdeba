"""`tempanon stream --publish generalization`: one generalized, l-diverse CSV per published snapshot,
matching the audit; every bad-input case exits 2 with a clear message and writes nothing."""

import json
from collections import Counter
from importlib import resources
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.data.io import read_table
from tempanon.hierarchy import build_intervals, build_suppression, load_hierarchies
from tempanon.verify import check_l_diverse_classes

runner = CliRunner()
SAMPLE = Path(str(resources.files("tempanon") / "samples" / "stream" / "use_of_force_sample.csv"))
QI = ["race", "sex", "age", "precinct"]


def _run(args, input=None):
    return runner.invoke(app, ["stream", *map(str, args)], input=input)


def _read(p):
    return pd.read_csv(p, dtype=str, keep_default_na=False, na_values=[""])


@pytest.fixture()
def setup(tmp_path):
    """The first 300 rows of the sample and ARX hierarchies built from their (text) values."""
    src = tmp_path / "in.csv"
    lines = SAMPLE.read_text().splitlines()[:301]
    src.write_text("\n".join(lines) + "\n")
    df = read_table(src, as_text=True)
    hdir = tmp_path / "hier"
    hdir.mkdir()
    for q in ["race", "sex", "precinct"]:
        build_suppression(q, df[q].dropna()).to_csv(hdir / f"{q}.csv")
    build_intervals("age", df["age"].dropna(), [10, 20, 40, 80]).to_csv(hdir / "age.csv")
    return src, df, hdir


def _base(src, out, l=2):
    return [src, "--time", "response_datetime", "--sensitive", "problem", "--qi", ",".join(QI),
            "--l", l, "--window", 2, "--out", out, "--quiet"]


@pytest.mark.parametrize("l", [2, 3])
def test_generalization_end_to_end(setup, tmp_path, l):
    src, df, hdir = setup
    out = tmp_path / "out"
    r = _run(_base(src, out, l) + ["--publish", "generalization", "--hierarchies", hdir,
                                   "--summary", tmp_path / "s.json", "--audit", tmp_path / "a.csv"])
    assert r.exit_code == 0, r.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["publish"] == "generalization" and summary["l"] == l
    audit = _read(tmp_path / "a.csv")
    assert audit["row"].astype(int).tolist() == list(range(len(df)))
    published = [p for p in summary["per_snapshot"] if p["published"]]
    assert published
    # one CSV per published snapshot with records, nothing else (no Anatomy tables)
    assert sorted(f.name for f in out.iterdir()) == sorted(f"{p['snapshot']}.csv" for p in published if p["published_size"])
    assert set(summary["generalization"]) == {p["snapshot"] for p in published}
    heights = {q: h.height for q, h in load_hierarchies(hdir, QI).items()}
    below_top = 0
    for p in published:
        label = p["snapshot"]
        if not p["published_size"]:
            continue
        t = _read(out / f"{label}.csv")
        # generalized quasi-identifiers and the sensitive value only: no time column, no row ids
        assert list(t.columns) == QI + ["problem"]
        rows = audit.index[audit["published"] == label].to_numpy()
        assert len(t) == len(rows) == p["published_size"]
        # the published sensitive values are exactly those of the records the audit places here
        assert Counter(t["problem"].fillna("<NA>")) == Counter(df.loc[rows, "problem"].fillna("<NA>"))
        if len(t):
            check_l_diverse_classes(t, QI, "problem", l)
        levels = summary["generalization"][label]["levels"]
        assert set(levels) == set(QI) and all(0 <= levels[q] <= heights[q] for q in QI)
        if len(t):
            # the released values are those of the selected level of each hierarchy
            for q in QI:
                h = load_hierarchies(hdir, [q])[q]
                allowed = set(h.table[:, levels[q]].tolist())
                assert set(t[q].dropna()) <= allowed, (label, q)
            below_top += any(levels[q] < heights[q] for q in QI)
    assert below_top > 0  # generalization is not always the trivial top of the lattice


def test_missing_hierarchies_is_exit_2(setup, tmp_path):
    src, _, _ = setup
    out = tmp_path / "out"
    r = _run(_base(src, out) + ["--publish", "generalization"])
    assert r.exit_code == 2
    assert "--hierarchies" in r.output
    assert not out.exists()


def test_unknown_publish_mode_is_exit_2(setup, tmp_path):
    src, _, hdir = setup
    r = _run(_base(src, tmp_path / "out") + ["--publish", "mondrian", "--hierarchies", hdir])
    assert r.exit_code == 2
    assert "mondrian" in r.output and "anatomy" in r.output and "generalization" in r.output


def test_hierarchies_without_generalization_is_exit_2(setup, tmp_path):
    src, _, hdir = setup
    r = _run(_base(src, tmp_path / "out") + ["--hierarchies", hdir])
    assert r.exit_code == 2
    assert "--publish generalization" in r.output


def test_hierarchy_missing_a_value_is_exit_2_naming_column_and_value(setup, tmp_path):
    src, df, hdir = setup
    values = sorted(df["race"].dropna().unique())
    dropped = values[0]
    build_suppression("race", [v for v in values if v != dropped]).to_csv(hdir / "race.csv")
    out = tmp_path / "out"
    r = _run(_base(src, out) + ["--publish", "generalization", "--hierarchies", hdir, "--summary", tmp_path / "s.json"])
    assert r.exit_code == 2, r.output
    assert "race" in r.output and dropped in r.output
    assert not (tmp_path / "s.json").exists()
    assert not out.exists() or not any(out.iterdir())  # nothing published


def test_missing_hierarchy_file_is_exit_2(setup, tmp_path):
    src, _, hdir = setup
    (hdir / "age.csv").unlink()
    r = _run(_base(src, tmp_path / "out") + ["--publish", "generalization", "--hierarchies", hdir])
    assert r.exit_code == 2
    assert "age" in r.output


def test_generalization_from_stdin_is_refused(setup, tmp_path):
    _, _, hdir = setup
    lines = '{"response_datetime": "2016-01-01 00:47", "problem": "Fight", "race": "Black", "sex": "Male", "age": "20.0", "precinct": "1"}\n'
    out = tmp_path / "out"
    r = _run(["-", "--time", "response_datetime", "--sensitive", "problem", "--l", 2, "--window", 1,
              "--out", out, "--publish", "generalization", "--hierarchies", hdir], input=lines)
    assert r.exit_code == 2
    assert "standard input" in r.output
    assert not out.exists()


def test_generalization_with_report(setup, tmp_path):
    """Issue 16: --report works with --publish generalization; its guarantee and risk are re-counted on
    the equivalence classes of the written tables."""
    src, _, hdir = setup
    out, rep_path = tmp_path / "out", tmp_path / "r.html"
    r = _run(_base(src, out, 3) + ["--publish", "generalization", "--hierarchies", hdir, "--report", rep_path,
                                   "--summary", tmp_path / "s.json"])
    assert r.exit_code == 0, r.output
    html = rep_path.read_text()
    assert "verified on the released table" in html and "NOT verified" not in html
    assert "full-domain generalization" in html and "check_l_diverse_classes" in html
    assert json.loads((tmp_path / "s.json").read_text())["report"] == str(rep_path)
    # the largest share of one value in a class of the written files, recomputed, is the one reported
    worst = 0.0
    for f in out.glob("*.csv"):
        t = _read(f).fillna("<NA>")
        c = t.groupby(QI + ["problem"]).size().groupby(level=list(range(len(QI))))
        worst = max(worst, float((c.max() / c.sum()).max()))
    assert worst <= 1 / 3 + 1e-12
    risk = html.split('id="risk"')[1].split("</section>")[0]
    import re

    got = re.search(r"largest probability of inferring a sensitive value[^<]*</td><td[^>]*>[0-9.]+</td><td[^>]*>([0-9.]+)</td>", risk)
    assert got is not None and float(got.group(1)) == pytest.approx(worst, rel=1e-3)


def test_anatomy_remains_the_default(setup, tmp_path):
    src, _, _ = setup
    out = tmp_path / "out"
    r = _run(_base(src, out) + ["--summary", tmp_path / "s.json"])
    assert r.exit_code == 0, r.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["publish"] == "anatomy" and "generalization" not in summary
    names = {f.name for f in out.iterdir()}
    assert names and all(n.endswith(".qit.csv") or n.endswith(".st.csv") for n in names)
