"""README.md's k-anonymity examples (the `kanon` command, the Python block, the steward's check /
kanon / check pipeline, the DuckDB engine) run on the bundled samples as written, with the results
their comments state. The README names the samples by their source path; the test maps that to the
installed package's samples folder."""

import ast
import re
import shlex
from importlib import resources
from pathlib import Path

from typer.testing import CliRunner

from tempanon.cli import app

README = Path(__file__).resolve().parents[2] / "README.md"
SAMPLES = str(resources.files("tempanon") / "samples")


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), re.S)


def _commands(block):
    """The block's `tempanon ...` commands (lines joined at a trailing backslash, `$A` expanded, the
    samples path mapped) with the exit status a trailing comment states (default 0)."""
    text = block.replace("\\\n", " ").replace("src/tempanon/samples", SAMPLES)
    env, out = {}, []
    for line in text.splitlines():
        m = re.match(r"(\w+)=(\S+)$", line.strip())
        if m:
            env[m.group(1)] = m.group(2)
            continue
        if not line.startswith("tempanon "):
            continue
        cmd, _, comment = line.partition("#")
        for k, v in env.items():
            cmd = cmd.replace(f"${k}", v)
        code = re.search(r"exit (\d)", comment)
        out.append((shlex.split(cmd)[1:], int(code.group(1)) if code else 0))
    return out


def _kanon_blocks():
    return [b for b in _blocks("bash") if re.search(r"^tempanon (kanon|check) ", b, re.M)]


def test_every_kanon_and_check_example_runs(tmp_path, monkeypatch):
    blocks = _kanon_blocks()
    assert len(blocks) >= 3, "README's kanon examples moved; update this test"
    monkeypatch.chdir(tmp_path)
    ran = 0
    for block in blocks:
        for args, code in _commands(block):
            assert not any(a.startswith(("adult.csv", "hierarchies")) for a in args), args  # bundled samples only
            r = CliRunner().invoke(app, args)
            assert r.exit_code == code, (args, r.output)
            ran += 1
    assert ran >= 5
    assert (tmp_path / "released.csv").exists() and (tmp_path / "report.html").exists()
    assert (tmp_path / "released.parquet").exists() and (tmp_path / "summary.json").exists()


def test_python_example_runs_and_gives_the_levels_it_states(monkeypatch):
    block = next(b for b in _blocks("python") if "kanonymize" in b)
    code = block.replace('"src/tempanon/samples/adult/"', repr(SAMPLES + "/adult/"))
    assert code != block, "the Python example no longer reads the bundled sample"
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    stated = re.search(r"result\.selected_levels\s+# (\{.*?\})", block).group(1)
    assert ns["result"].selected_levels == ast.literal_eval(stated)
    first = re.search(r"result\.anonymous_nodes\s+#.*?e\.g\. \[(\(.*?\)), (\(.*?\))", block)
    assert [ast.literal_eval(first.group(1)), ast.literal_eval(first.group(2))] == [tuple(n) for n in ns["result"].anonymous_nodes[:2]]
