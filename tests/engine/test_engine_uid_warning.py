"""``kanon`` and ``timestamped`` without ``--uid`` warn when a column reads like a respondent id
(an id-like name, no missing cell, values that repeat over the rows): k then counts rows, not people.
The warning was printed on the numpy engine only; with ``--engine duckdb`` or ``spark`` (the
out-of-core paths) it was missing. The engines now warn with the same text, the counts computed by the
engine (one ``count(DISTINCT ...)`` query: ``SQLSource.missing_and_distinct``), no row in pandas."""

from __future__ import annotations

import pytest

from uid_warning_cli import EXPECTED, kanon_on, timestamped_on
from uid_warning_cli import warnings_of as _warnings


def _visits(tmp_path):
    """60 rows, 12 patients (``patient_id`` repeats), ``row_id`` unique per row (not a respondent id)."""
    if (tmp_path / "v.csv").exists():  # (as a test left it)
        return tmp_path / "v.csv"
    rows = [f"r{i},p{i % 12},{'MF'[i % 2]},2023-0{1 + i % 3}-0{1 + i % 7} 10:00,{'ab'[i % 2]}" for i in range(60)]
    (tmp_path / "v.csv").write_text("row_id,patient_id,sex,visit,dx\n" + "\n".join(rows) + "\n")
    (tmp_path / "h").mkdir(exist_ok=True)
    (tmp_path / "h" / "sex.csv").write_text("M;*\nF;*\n")
    return tmp_path / "v.csv"


def _kanon(tmp_path, engine, *extra):
    return kanon_on(_visits, tmp_path, engine, *extra)


def _timestamped(tmp_path, engine, *extra):
    return timestamped_on(_visits, tmp_path, engine, *extra)


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
