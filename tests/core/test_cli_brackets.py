"""Square brackets in a column name or a path are printed as written (found in the uatb acceptance pass):
the status lines are rich markup, so a column ``dose[mg]`` was printed as ``dose``, an output
``out[v2].csv`` as ``out.csv``, and a column ``note[/b]`` made the last status line raise rich's
MarkupError after the release was written: a traceback and exit 1 ('no solution')."""

import random

from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


def _data(tmp_path):
    rnd = random.Random(2)
    p = tmp_path / "br.csv"
    p.write_text("age,sex,dose[mg],note[/b]\n" + "".join(
        f"{rnd.randint(20, 60)},{rnd.choice('MF')},{rnd.choice([1, 2])},x\n" for _ in range(60)))  # fmt: skip
    h = tmp_path / "h"
    h.mkdir()
    (h / "age.csv").write_text("".join(f"{a};{a // 10 * 10}s;*\n" for a in range(20, 61)))
    (h / "sex.csv").write_text("M;*\nF;*\n")
    return p, h


def test_brackets_in_names_and_paths_are_printed_as_written(tmp_path):
    p, h = _data(tmp_path)
    out = tmp_path / "out[v2].csv"
    r = runner.invoke(app, ["kanon", str(p), "--qi", "age,sex", "--hierarchies", str(h), "--k", "3",
                            "--keep", "dose[mg],note[/b]", "--out", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "released unchanged as declared insensitive (not verified): dose[mg], note[/b]" in text
    assert "out[v2].csv" in text and out.exists()
    r = runner.invoke(app, ["kanon", str(p), "--qi", "age,sex", "--hierarchies", str(h), "--k", "3",
                            "--keep", "dose[mg]", "--out", str(tmp_path / "o.csv")])  # fmt: skip
    assert r.exit_code == 0 and "left out (no role, not released): note[/b]" in " ".join(r.output.split())


def test_own_markup_keeps_tempanons_styles_and_escaped_tags():
    from rich.markup import escape

    from tempanon._cliutil import own_markup

    assert own_markup("[bold]x[/] dose[mg]") == "[bold]x[/] dose\\[mg]"
    assert own_markup(escape("dose[mg]")) == escape("dose[mg]")  # already escaped (stream, check): unchanged
    assert own_markup("[yellow]warning:[/] a[1] b[B]") == "[yellow]warning:[/] a[1] b[B]"  # not tags for rich
