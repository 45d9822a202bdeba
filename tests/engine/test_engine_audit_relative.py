"""``--audit`` given as a **relative** path on DuckDB (kanon and timestamped).

The engine paths write the audit to a temporary name made by ``tempfile.mkstemp``, which is
absolute, and took "its folder differs from the audit's folder" for "a hidden holder folder"
(Spark's). A relative ``--audit steward/a.csv`` compared ``/cwd/steward`` with ``steward``: after
both files were renamed into place the run tried to remove ``steward`` (not empty: a traceback,
exit 1) and its clean-up then removed the **whole folder** ``steward``, the audit and any other file
in it included. Now the folders are compared as absolute paths: exit 0, the audit and the folder's
other files stay. (Spark uses a real holder folder: tests/engine/test_engine_audit_spark.py.)"""

from __future__ import annotations

from pathlib import Path

from .test_engine_audit import _generated, _kanon, _read_audit
from .test_engine_temporal import SAMPLE, _cli


def _steward(tmp_path: Path) -> Path:
    (tmp_path / "steward").mkdir()
    (tmp_path / "steward" / "notes.txt").write_text("the steward's own file\n")
    (tmp_path / "rel").mkdir()
    return tmp_path / "steward"


def test_kanon_duckdb_relative_audit_path(tmp_path, monkeypatch):
    inp, hdir = _generated(tmp_path, n_people=60)
    steward = _steward(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = _kanon(inp, "--hierarchies", hdir, "--qi", "age,sex,zip", "--k", "3", "--keep", "visit", "--out", "rel/r.csv",
               "--audit", "steward/a.csv", "--engine", "duckdb", "-q")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in steward.iterdir()) == ["a.csv", "notes.txt"]
    assert len(_read_audit(steward / "a.csv")[1]) == len((tmp_path / "rel" / "r.csv").read_text().splitlines()) - 1


def test_timestamped_duckdb_relative_audit_path(tmp_path, monkeypatch):
    steward = _steward(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = _cli(["timestamped", str(SAMPLE), "--time", "START", "--uid", "PATIENT", "--k", "3", "--max-suppression", "0.06",
              "--out", "rel/o.csv", "--audit", "steward/a.csv", "--engine", "duckdb", "-q"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in steward.iterdir()) == ["a.csv", "notes.txt"]
    assert (tmp_path / "rel" / "o.csv").exists()
