"""``tempanon run JOB`` with ``engine = "duckdb"`` (or ``"spark"``) for the ``kanon`` and ``timestamped``
models behaves as the commands do: without ``[columns] uid`` it warns of a column that reads like a
respondent id (the numpy job path did not either), and a DuckDB failure is classified as the commands
classify it (``source_duckdb.engine_error``): out of memory or an internal error is exit 4, "an engine
failure, not the input", nothing written; a value that does not convert is the input's (exit 2). Before,
a job printed no warning on any engine and let a DuckDB error out as a traceback (exit 1)."""

from __future__ import annotations

import duckdb
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.lattice.source_duckdb import DuckDBSource
from tempanon.lattice.source_temporal import DuckDBTimeSource

runner = CliRunner()

EXPECTED = ("warning: column 'patient_id' reads like a respondent id (12 values repeat over 60 rows) but is not "
            "[columns] uid: every row counts as a respondent, so k counts rows, not people; give [columns] uid "
            "patient_id")


def _job(tmp_path, model, engine, uid=False, name="job.toml"):
    if not (tmp_path / "v.csv").exists():
        rows = [f"r{i},p{i % 12},{'MF'[i % 2]},2023-0{1 + i % 3}-0{1 + i % 7} 10:00,{'ab'[i % 2]}" for i in range(60)]
        (tmp_path / "v.csv").write_text("row_id,patient_id,sex,visit,dx\n" + "\n".join(rows) + "\n")
    cols = 'quasi_identifiers = ["sex"]\n' + ('uid = "patient_id"\n' if uid else "")
    if model == "kanon":
        body = f'[columns]\n{cols}\n[hierarchies]\nsex = {{ type = "suppression" }}\n\n[model]\nname = "kanon"\nk = 2\n'
    else:
        body = f'[columns]\n{cols}time = "visit"\n\n[model]\nname = "timestamped"\nk = 2\ngranularities = ["month", "year"]\n'
    out = tmp_path / f"out-{name[:-5]}"
    text = (f'[input]\npath = "v.csv"\n\n{body}engine = "{engine}"\n\n[output]\ntable = "{out.name}/r.csv"\n'
            f'summary = "{out.name}/s.json"\n')
    (tmp_path / name).write_text(text)
    return tmp_path / name, out


def _warnings(output: str) -> list[str]:
    text = " ".join(output.split())
    return [("warning:" + w).split(" for respondent-level k")[0] for w in text.split("warning:")[1:]]


@pytest.mark.parametrize("model", ["kanon", "timestamped"])
def test_a_job_warns_as_the_command_on_every_engine(tmp_path, backend, model):
    job, _ = _job(tmp_path, model, backend)
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    assert _warnings(r.output) == [EXPECTED], r.output
    job, _ = _job(tmp_path, model, backend, uid=True, name="uid.toml")
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    assert "reads like a respondent id" not in r.output, r.output


OOM = duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate data of size 16.0 MiB (1.0 GiB/1.0 GiB used)")
INTERNAL = duckdb.InternalException("INTERNAL Error: Attempted to access index 3 within vector of size 3")
CONVERSION = duckdb.ConversionException("Conversion Error: Could not convert string 'abc' to INT64")


@pytest.mark.parametrize("model", ["kanon", "timestamped"])
@pytest.mark.parametrize("exc,code,text", [(OOM, 4, "Out of Memory Error"), (INTERNAL, 4, "InternalException: INTERNAL Error"),
                                           (CONVERSION, 2, "Could not convert string 'abc'")],
                         ids=["oom", "internal", "conversion"])  # fmt: skip
def test_a_job_tells_the_engine_from_the_input(tmp_path, monkeypatch, model, exc, code, text):
    def fail(self, *a, **kw):
        raise exc

    monkeypatch.setattr(DuckDBSource, "bottom", fail)
    monkeypatch.setattr(DuckDBTimeSource, "check", fail)
    job, out = _job(tmp_path, model, "duckdb", uid=True)
    r = runner.invoke(app, ["run", str(job), "-q"])
    msg = " ".join(r.output.split())
    assert r.exit_code == code, (msg, r.exception)
    assert text in msg and "Traceback" not in msg, msg
    if code == 4:
        assert "the DuckDB engine failed (an engine failure, not the input)" in msg and "nothing was written" in msg, msg
    else:
        assert msg.startswith("error: DuckDB engine: ") and "engine failure" not in msg, msg
    assert not out.exists() or list(out.iterdir()) == []
