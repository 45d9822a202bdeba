"""The note of a boundary file (``--granularities file:terms.csv``) whose numeric date order ``--date-order
auto`` could not decide (read month first) is said as the time column's own date-order note is: in the
summary's ``messages`` the command and the job write, printed once as ``note: ...`` (a job: in its status
line), on every engine. Before, it was only warned while the granularities were read, and the summary
(and so the report) of the run that used those boundaries did not say how they were read. A run that fails
still says it (warned before its error)."""

from __future__ import annotations

import json
import warnings

import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import TempanonWarning

runner = CliRunner()

# 06/02/2023 could be day or month first (01/01 is the same day either way): read month first, undecided
TERMS = "label,start,end\nT1,01/01/2023,06/02/2023\nT2,06/02/2023,01/01/2024\n"
VISITS = ["2023-01-10", "2023-01-20", "2023-01-30", "2023-03-01", "2023-04-01", "2023-05-01", "2023-07-01",
          "2023-08-01", "2023-09-01"]  # fmt: skip


def _files(tmp_path):
    (tmp_path / "terms.csv").write_text(TERMS)
    (tmp_path / "v.csv").write_text("pid,visit\n" + "".join(f"p{i},{v}\n" for i, v in enumerate(VISITS)))
    note = (f"boundary file {tmp_path / 'terms.csv'}: column 'start/end': every numeric date could be day or month "
            "first: read month first, line 3 ('06/02/2023') as 2 June; if it is 6 February, pass --date-order day")
    return tmp_path / "v.csv", tmp_path / "terms.csv", note


def _said(output: str, note: str) -> int:
    return " ".join(output.split()).count(note)


@pytest.mark.parametrize("order", ["auto", "day"])
def test_the_boundary_note_is_in_the_summary_on_every_engine(tmp_path, backend, order):
    data, terms, note = _files(tmp_path)
    summ = tmp_path / "s.json"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TempanonWarning)
        r = runner.invoke(app, ["timestamped", str(data), "--uid", "pid", "--time", "visit", "--k", "3", "--granularities",
                                f"file:{terms}", "--date-order", order, "--engine", backend, "--out",
                                str(tmp_path / "o.csv"), "--summary", str(summ)])  # fmt: skip
    assert r.exit_code == 0, r.output
    messages = [m for m in json.loads(summ.read_text())["messages"] if m.startswith("boundary file")]
    assert [m.startswith(note) for m in messages] == ([True] if order == "auto" else []), messages
    assert _said(r.output, "note: " + note) == (order == "auto"), r.output  # once, as a note
    assert not [w for w in caught if "boundary file" in str(w.message)]  # (not warned as well: said twice)


def test_the_boundary_note_is_in_the_job_summary_on_every_engine(tmp_path, backend):
    data, terms, note = _files(tmp_path)
    job = tmp_path / "job.toml"
    job.write_text(f'[input]\npath = "{data.name}"\n\n[columns]\nuid = "pid"\ntime = "visit"\n\n[model]\n'
                   f'name = "timestamped"\nk = 3\ngranularities = ["file:{terms}"]\nengine = "{backend}"\n\n'
                   '[output]\ntable = "out/r.csv"\nsummary = "out/s.json"\n')  # fmt: skip
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    messages = json.loads((tmp_path / "out" / "s.json").read_text())["messages"]
    assert [m for m in messages if m.startswith("boundary file")] == [m for m in messages if m.startswith(note)] != []
    assert _said(r.output, "note: " + note) == 1, r.output


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_a_boundary_file_as_data_granularity_and_a_failed_run_say_it(tmp_path, engine):
    data, terms, note = _files(tmp_path)
    base = ["timestamped", str(data), "--uid", "pid", "--time", "visit", "--granularities", f"file:{terms}", "--engine",
            engine, "--out", str(tmp_path / "o.csv")]  # fmt: skip
    # the same file as the data granularity too: said once
    summ = tmp_path / "s.json"
    r = runner.invoke(app, [*base, "--k", "3", "--data-granularity", f"file:{terms}", "--summary", str(summ)])
    assert r.exit_code == 0, r.output
    assert [m.startswith(note) for m in json.loads(summ.read_text())["messages"] if "boundary file" in m] == [True]
    assert _said(r.output, note) == 1, r.output
    # k=30 above the 9 respondents: the run fails, and the note is still said (warned before the error)
    with warnings.catch_warnings(record=True) as caught:  # (the command line prints it as warning: ...)
        warnings.simplefilter("always", TempanonWarning)
        r = runner.invoke(app, [*base, "--k", "30"])
    assert r.exit_code == 1 and "k=30 is impossible for this data: the whole table has only 9 distinct respondents" in \
        " ".join(r.output.split()), r.output
    assert [str(w.message).startswith(note) for w in caught if "boundary file" in str(w.message)] == [True]


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_the_api_says_the_note_in_the_result_and_warns_it_at_the_caller_when_the_run_fails(tmp_path, engine):
    """The API (in memory and on a file): the note in ``result.boundary_notes`` and the summary's messages; a
    run that fails warns it, attributed to the caller's line (the public functions take no ``_notes``)."""
    import inspect

    import pandas as pd

    from tempanon.temporal.api import anonymize_timestamped
    from tempanon.temporal.outofcore import anonymize_timestamped_file

    data, terms, note = _files(tmp_path)

    def run(k):
        if engine == "numpy":
            return anonymize_timestamped(pd.read_csv(data, dtype=str), time="visit", uid="pid", k=k,
                                         granularities=[f"file:{terms}"])  # fmt: skip
        return anonymize_timestamped_file(data, out=tmp_path / "o.csv", time="visit", uid="pid", k=k,
                                          granularities=[f"file:{terms}"])  # fmt: skip

    for fn in (anonymize_timestamped, anonymize_timestamped_file):
        assert not [p for p in inspect.signature(fn).parameters if p.startswith("_") or p == "notes"]
    res = run(3)
    assert [n.startswith(note) for n in res.boundary_notes] == [True], res.boundary_notes
    assert [m for m in res.summary["messages"] if "boundary file" in m] == res.boundary_notes, res.summary["messages"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TempanonWarning)
        with pytest.raises(Exception, match="k=30 is impossible for this data"):  # (9 respondents)
            run(30)
    said = [w for w in caught if str(w.message) == res.boundary_notes[0]]
    assert len(said) == 1 and said[0].filename == __file__, [(w.filename, str(w.message)) for w in caught]
