"""`kanon --verbose` says what the node count counts, alike on every engine: Incognito checks nodes of the
lattices of all quasi-identifier subsets (each once), so the count may exceed the full lattice's size and
must not be printed as "N nodes checked of <lattice size>" (issue 13)."""

import re

import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.samples import ADULT_QI, adult_hierarchies_dir, adult_path


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_verbose_check_count_is_named(engine, tmp_path):
    qi = ",".join(ADULT_QI)
    r = CliRunner().invoke(app, ["kanon", str(adult_path()), "--qi", qi, "--hierarchies", str(adult_hierarchies_dir()),
                                 "--k", "2", "--max-suppression", "0.02", "--out", str(tmp_path / "o.csv"),
                                 "--engine", engine, "--verbose"])  # fmt: skip
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    for n, m in re.findall(r"(\d+) nodes checked of (\d+)", text):
        assert int(n) <= int(m), text
    m = re.search(r"(\d+) nodes checked, each once \(distinct nodes of the lattices of all quasi-identifier subsets, "
                  r"(\d+) nodes in all; (\d+) of them in the full lattice of (\d+) nodes\)", text)
    assert m, text
    checked, space, full, lattice = map(int, m.groups())
    assert checked > lattice and checked <= space and full <= lattice
