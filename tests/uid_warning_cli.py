"""The respondent-id warning's CLI runs, shared by tests/engine/test_engine_uid_warning.py (a CSV
input) and tests/engine/test_uid_warning_parquet.py (a Parquet one): ``kanon`` and ``timestamped`` on
the visits a test's ``visits(tmp_path)`` writes (with ``h/sex.csv``), the warning's expected text, and
the warnings of an output."""

from __future__ import annotations

from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()

EXPECTED = ("warning: column 'patient_id' reads like a respondent id (12 values repeat over 60 rows) but is not --uid: "
            "every row counts as a respondent, so k counts rows, not people; give --uid patient_id")


def warnings_of(output: str) -> list[str]:
    text = " ".join(output.split())
    return [("warning:" + w).split(" for respondent-level k")[0] for w in text.split("warning:")[1:]]


def kanon_on(visits, tmp_path, engine, *extra):
    v = visits(tmp_path)
    out = tmp_path / f"k-{engine}-{len(extra)}-{len(list(tmp_path.iterdir()))}.csv"
    return runner.invoke(app, ["kanon", str(v), "--qi", "sex", "--hierarchies", str(tmp_path / "h"), "--k", "2",
                               "--engine", engine, "--out", str(out), *extra])  # fmt: skip


def timestamped_on(visits, tmp_path, engine, *extra):
    v = visits(tmp_path)
    out = tmp_path / f"t-{engine}-{len(extra)}-{len(list(tmp_path.iterdir()))}.csv"
    return runner.invoke(app, ["timestamped", str(v), "--time", "visit", "--qi", "sex", "--k", "2",
                               "--granularities", "month,year", "--engine", engine, "--out", str(out), *extra])  # fmt: skip
