"""On a Parquet input the numpy path reads only the columns given a role (``read_table``'s ``roles``),
so it could not warn of a column that reads like a respondent id and has no role, while DuckDB and
Spark (which see every column) did: the same table, two answers. The numpy path now reads those
id-like columns alone (``read_parquet_columns``: pyarrow's ``columns=``) and applies the same rule, in
the file's column order: the same warning on every engine, for the commands and for a job."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from uid_warning_cli import EXPECTED, kanon_on, timestamped_on
from uid_warning_cli import warnings_of as _warnings

runner = CliRunner()



def _visits(tmp_path):
    """60 rows, 12 patients (integer ``patient_id``, no role), a unique ``row_id``, a wide ``notes`` column."""
    p = tmp_path / "v.parquet"
    if not p.exists():
        pd.DataFrame({
            "row_id": [f"r{i}" for i in range(60)], "patient_id": [i % 12 for i in range(60)],
            "sex": ["MF"[i % 2] for i in range(60)], "notes": ["x" * 200 + str(i) for i in range(60)],
            "visit": [f"2023-0{1 + i % 3}-0{1 + i % 7} 10:00" for i in range(60)], "dx": ["ab"[i % 2] for i in range(60)],
        }).to_parquet(p, index=False)  # fmt: skip
        (tmp_path / "h").mkdir()
        (tmp_path / "h" / "sex.csv").write_text("M;*\nF;*\n")
    return p


def _kanon(tmp_path, engine, *extra):
    return kanon_on(_visits, tmp_path, engine, *extra)


def _timestamped(tmp_path, engine, *extra):
    return timestamped_on(_visits, tmp_path, engine, *extra)


@pytest.mark.parametrize("command", [_kanon, _timestamped], ids=["kanon", "timestamped"])
def test_a_parquet_input_warns_alike_on_every_engine(tmp_path, backend, command):
    r = command(tmp_path, backend)
    assert r.exit_code == 0, r.output
    assert _warnings(r.output) == [EXPECTED], r.output
    r = command(tmp_path, backend, "--keep", "patient_id", "--allow-identifier", "patient_id")  # a role: no warning
    assert r.exit_code == 0 and "reads like a respondent id" not in r.output, r.output


@pytest.mark.parametrize("command", [_kanon, _timestamped], ids=["kanon", "timestamped"])
def test_numpy_reads_only_the_id_like_columns_it_left_out(tmp_path, monkeypatch, command):
    read = []
    real = pd.read_parquet

    def recorded(path, *a, columns=None, **kw):
        read.append(None if columns is None else list(columns))
        return real(path, *a, columns=columns, **kw)

    monkeypatch.setattr(pd, "read_parquet", recorded)
    r = command(tmp_path, "numpy")
    assert r.exit_code == 0 and _warnings(r.output) == [EXPECTED], r.output
    assert ["row_id", "patient_id"] in read, read  # the id-like columns with no role, alone
    assert all(cols is not None and "notes" not in cols for cols in read), read  # never the whole file


def test_a_parquet_job_warns_as_the_commands(tmp_path):
    _visits(tmp_path)
    (tmp_path / "job.toml").write_text('[input]\npath = "v.parquet"\n\n[columns]\nquasi_identifiers = ["sex"]\n\n'
                                       '[hierarchies]\nsex = "h/sex.csv"\n\n[model]\nname = "kanon"\nk = 2\n\n'
                                       '[output]\ntable = "o/r.csv"\n')  # fmt: skip
    r = runner.invoke(app, ["run", str(tmp_path / "job.toml")])
    assert r.exit_code == 0, r.output
    assert _warnings(r.output) == [EXPECTED.replace("--uid", "[columns] uid")], r.output
