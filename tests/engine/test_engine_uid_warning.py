"""``kanon`` and ``timestamped`` without ``--uid`` warn when a column reads like a respondent id
(an id-like name, no missing cell, values that repeat over the rows): k then counts rows, not people.
The warning was printed on the numpy engine only; with ``--engine duckdb`` or ``spark`` (the
out-of-core paths) it was missing. The engines now warn with the same text, the counts computed by the
engine (one ``count(DISTINCT ...)`` query: ``SQLSource.missing_and_distinct``), no row in pandas."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


def _visits(tmp_path):
    """60 rows, 12 patients (``patient_id`` repeats), ``row_id`` unique per row (not a respondent id)."""
    if (tmp_path / "v.csv").exists():  # (as a test left it)
        return tmp_path / "v.csv"
    rows = [f"r{i},p{i % 12},{'MF'[i % 2]},2023-0{1 + i % 3}-0{1 + i % 7} 10:00,{'ab'[i % 2]}" for i in range(60)]
    (tmp_path / "v.csv").write_text("row_id,patient_id,sex,visit,dx\n" + "\n".join(rows) + "\n")
    (tmp_path / "h").mkdir(exist_ok=True)
    (tmp_path / "h" / "sex.csv").write_text("M;*\nF;*\n")
    return tmp_path / "v.csv"


def _warnings(output: str) -> list[str]:
    text = " ".join(output.split())
    return [("warning:" + w).split(" for respondent-level k")[0] for w in text.split("warning:")[1:]]


EXPECTED = ("warning: column 'patient_id' reads like a respondent id (12 values repeat over 60 rows) but is not --uid: "
            "every row counts as a respondent, so k counts rows, not people; give --uid patient_id")


def _kanon(tmp_path, engine, *extra):
    v = _visits(tmp_path)
    return runner.invoke(app, ["kanon", str(v), "--qi", "sex", "--hierarchies", str(tmp_path / "h"), "--k", "2",
                               "--engine", engine, "--out", str(tmp_path / f"k-{engine}-{len(extra)}-{len(list(tmp_path.iterdir()))}.csv"), *extra])  # fmt: skip


def _timestamped(tmp_path, engine, *extra):
    v = _visits(tmp_path)
    out = tmp_path / f"t-{engine}-{len(extra)}-{len(list(tmp_path.iterdir()))}.csv"
    return runner.invoke(app, ["timestamped", str(v), "--time", "visit", "--qi", "sex", "--k", "2",
                               "--granularities", "month,year", "--engine", engine, "--out", str(out), *extra])  # fmt: skip


@pytest.mark.parametrize("command", [_kanon, _timestamped], ids=["kanon", "timestamped"])
def test_every_engine_warns_alike(tmp_path, backend, command):
    r = command(tmp_path, backend)
    assert r.exit_code == 0, r.output
    assert _warnings(r.output) == [EXPECTED], r.output
    r = command(tmp_path, backend, "--uid", "patient_id")
    assert r.exit_code == 0, r.output
    assert "reads like a respondent id" not in r.output, r.output


@pytest.mark.parametrize("command", [_kanon, _timestamped], ids=["kanon", "timestamped"])
def test_a_role_column_or_a_missing_cell_is_not_warned_about(tmp_path, backend, command):
    v = _visits(tmp_path)
    r = command(tmp_path, backend, "--keep", "patient_id", "--allow-identifier", "patient_id")  # a role: not a forgotten uid
    assert r.exit_code == 0, r.output
    assert "reads like a respondent id" not in r.output, r.output
    lines = v.read_text().splitlines()
    lines[5] = lines[5].replace(",p4,", ",,")  # a missing id: not a respondent id column
    v.write_text("\n".join(lines) + "\n")
    r = command(tmp_path, backend)
    assert r.exit_code == 0 and "reads like a respondent id" not in r.output, r.output


def test_the_engine_counts_the_columns(tmp_path, monkeypatch):
    """The DuckDB path counts in SQL (``missing_and_distinct``), not in pandas (the numpy rule's function)."""
    import tempanon.steward.init as init
    from tempanon.lattice.source_duckdb import SQLSource

    asked = []
    real = SQLSource.missing_and_distinct

    def counted(self, columns):
        asked.append(list(columns))
        return real(self, columns)

    def refused(*a, **kw):
        raise AssertionError("the rows were counted in pandas")

    monkeypatch.setattr(SQLSource, "missing_and_distinct", counted)
    monkeypatch.setattr(init, "respondent_id_warning", refused)
    r = _timestamped(tmp_path, "duckdb")
    assert r.exit_code == 0 and _warnings(r.output) == [EXPECTED], r.output
    assert asked == [["row_id", "patient_id"]]  # the id-like names only, in one query
