"""``check --l`` and ``kanon --l`` judge the same l-diversity model by default.

``check --l-model`` defaulted to ``distinct`` and ``kanon --l-diversity`` (and a job's ``l_diversity``)
to ``frequency``: a steward who ran ``check --l 2`` on a table whose classes hold ``a, a, b`` was told it
is 2-diverse (two values), then ``kanon --l 2`` refused it (the most frequent value holds 2 of 3 rows,
more than 3/2). ``check`` now defaults to ``frequency``, the model ``kanon`` releases with."""

from __future__ import annotations

import inspect

from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.kanon import kanonymize
from tempanon.kanon.command import kanon
from tempanon.steward.check import check_table
from tempanon.steward.command import check

runner = CliRunner()


def _table(tmp_path):
    """Two classes of 3 rows, each with sensitive values a, a, b: distinct l 2, frequency l 1 (at every
    generalization: the whole table is a, a, a, a, b, b)."""
    rows = ["30,M,a", "30,M,a", "30,M,b", "40,F,a", "40,F,a", "40,F,b"]
    (tmp_path / "t.csv").write_text("age,sex,dx\n" + "\n".join(rows) + "\n")
    h = tmp_path / "h"
    h.mkdir()
    (h / "age.csv").write_text("30;*\n40;*\n")
    (h / "sex.csv").write_text("M;*\nF;*\n")
    return tmp_path / "t.csv", h


def _default(fn, name):
    return inspect.signature(fn).parameters[name].default


def test_the_defaults_are_one_model():
    assert _default(check, "l_model") == _default(kanon, "l_diversity") == "frequency"
    assert _default(check_table, "l_model") == _default(kanonymize, "l_diversity") == "frequency"


def test_check_then_kanon_agree(tmp_path):
    t, h = _table(tmp_path)
    c = runner.invoke(app, ["check", str(t), "--qi", "age,sex", "--sensitive", "dx", "--k", "2", "--l", "2"])
    assert c.exit_code == 1, c.output  # (main: exit 0, "distinct" l is 2)
    assert "frequency l-diversity of dx is 1, below the requested 2" in " ".join(c.output.split()), c.output
    r = runner.invoke(app, ["kanon", str(t), "--qi", "age,sex", "--hierarchies", str(h), "--sensitive", "dx",
                            "--k", "2", "--l", "2", "--out", str(tmp_path / "out.csv")])  # fmt: skip
    assert r.exit_code == 1, r.output  # no generalization makes it frequency 2-diverse
    # the same model named explicitly on both sides agrees too
    c = runner.invoke(app, ["check", str(t), "--qi", "age,sex", "--sensitive", "dx", "--l", "2", "--l-model", "distinct", "-q"])
    assert c.exit_code == 0, c.output
    r = runner.invoke(app, ["kanon", str(t), "--qi", "age,sex", "--hierarchies", str(h), "--sensitive", "dx",
                            "--k", "2", "--l", "2", "--l-diversity", "distinct", "--out", str(tmp_path / "out.csv"), "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output


def test_a_kanon_release_passes_check_by_default(tmp_path):
    rows = [f"{30 + 10 * (i % 2)},{'MF'[i % 2]},{'abc'[i % 3]}" for i in range(12)]
    (tmp_path / "t.csv").write_text("age,sex,dx\n" + "\n".join(rows) + "\n")
    h = tmp_path / "h"
    h.mkdir()
    (h / "age.csv").write_text("30;*\n40;*\n")
    (h / "sex.csv").write_text("M;*\nF;*\n")
    out = tmp_path / "out.csv"
    r = runner.invoke(app, ["kanon", str(tmp_path / "t.csv"), "--qi", "age,sex", "--hierarchies", str(h),
                            "--sensitive", "dx", "--k", "3", "--l", "2", "--out", str(out), "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    c = runner.invoke(app, ["check", str(out), "--qi", "age,sex", "--sensitive", "dx", "--k", "3", "--l", "2", "-q"])
    assert c.exit_code == 0, c.output
