"""An output path that is a device, a named pipe, a socket or a system path is refused (found in the uatb
acceptance pass): outputs are written to a temporary file renamed over their path, so
``kanon ... --out /dev/null`` (run as root) replaced the machine's /dev/null with a regular file and
``--out /dev/stdout`` replaced the link /dev/stdout by a file, exit 0. These tests never name a real
device on the command line (without the fix they would replace it): they use a named pipe and a link to
/proc/self/fd/1 in a temporary folder, and call the check itself on /dev paths."""

import os

import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import InputError
from tempanon.samples import sample_dir

runner = CliRunner()
A = sample_dir("adult")
TS = sample_dir("timeseries") / "randomwalk_300.csv"


def _kanon(out, *extra):
    return runner.invoke(app, ["kanon", str(A / "adult.csv.gz"), "--qi", "age,sex", "--hierarchies", str(A), "--k", "5",
                               "--out", *map(str, out), *map(str, extra)])  # fmt: skip


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_a_named_pipe_or_a_link_into_proc_is_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "out.csv"
    link.symlink_to("/proc/self/fd/1")
    r = _kanon([fifo])
    assert r.exit_code == 2 and "is a named pipe, not a file" in " ".join(r.output.split()), r.output
    assert fifo.is_fifo()
    r = _kanon([tmp_path / "rel.csv"], "--summary", link)
    assert r.exit_code == 2 and "is a system path (/proc/self/fd/1)" in " ".join(r.output.split()), r.output
    assert link.is_symlink() and not (tmp_path / "rel.csv").exists()
    r = runner.invoke(app, ["kp", str(TS), "--id", "id", "--qi", "A0:A9", "--out", str(fifo)])
    assert r.exit_code == 2 and "is a named pipe, not a file" in " ".join(r.output.split()), r.output
    r = _kanon(["-"])
    assert r.exit_code == 2 and "--out -: tempanon does not write to standard output" in r.output
    assert not os.path.exists("-")


def test_device_and_system_paths_are_refused(tmp_path):
    from tempanon.data.io import atomic_write, refuse_special_output

    for path in ("/dev/null", "/dev/stdout", "/proc/self/fd/1", "/sys/kernel/x"):
        with pytest.raises(InputError, match="is a system path"):
            refuse_special_output(path, "--out")
    with pytest.raises(InputError, match="is a system path"):
        atomic_write("/dev/null", lambda p: p.write_text("x"))
    refuse_special_output(tmp_path / "new.csv", "--out")  # a new file, an existing file, a directory: not refused here
    (tmp_path / "old.csv").write_text("x")
    refuse_special_output(tmp_path / "old.csv", "--out")


def test_a_release_named_like_another_format_is_refused(tmp_path):
    """'--out released.xlsx' wrote CSV text into a file Excel then refused to open as a workbook ('released.json':
    CSV, not JSON), exit 0 (found in the uatb acceptance pass). A release is CSV or Parquet: other formats'
    names are refused on every command and in job files, before anything is read."""
    for name in ("released.xlsx", "released.json"):
        out = tmp_path / name
        r = _kanon([out])
        assert r.exit_code == 2 and f"a name ending in {out.suffix} would hold CSV text" in " ".join(r.output.split())
        assert not out.exists()
    r = runner.invoke(app, ["kp", str(TS), "--id", "id", "--qi", "A0:A9", "--out", str(tmp_path / "kp.xlsx")])
    assert r.exit_code == 2 and "would hold CSV text" in r.output and not (tmp_path / "kp.xlsx").exists()
    job = tmp_path / "job.toml"
    job.write_text(f'[input]\npath = "{TS}"\n[columns]\nuid = "id"\nquasi_identifiers = ["A0:A9"]\n[model]\nname = "kp"\n'
                   f'k = 10\np = 5\n[output]\ntable = "{tmp_path / "out.ods"}"\n')  # fmt: skip
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 2 and "[output] table" in r.output and "would hold CSV text" in " ".join(r.output.split())
    for name in ("released.csv", "released.parquet", "released.csv.gz", "released.txt"):
        assert _kanon([tmp_path / name]).exit_code == 0 and (tmp_path / name).exists()


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_kanonymize_out_never_overwrites_an_input(tmp_path, engine):
    """kanonymize(path, ..., out=path) wrote the release over its input on numpy and DuckDB, and out= a hierarchy
    file read by load_hierarchies wrote it over that file (found in the uatb acceptance pass, which overwrote a
    bundled hierarchy that way); DuckDB replaced a named pipe; out='r.xlsx' held CSV text. The API now checks
    out= (and audit=) as the commands check --out."""
    import shutil

    import pandas as pd

    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize

    data = tmp_path / "in.csv"
    pd.read_csv(A / "adult.csv.gz", sep=";", dtype=str, keep_default_na=False).head(500).to_csv(data, sep=";", index=False)
    hdir = tmp_path / "h"
    shutil.copytree(A, hdir)
    before = {p: p.read_bytes() for p in [data, hdir / "age.csv"]}
    H = load_hierarchies(hdir, ["age", "sex"])
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for out, message in ((data, r"out .*in.csv is the input .*: refusing to overwrite an input"),
                         (hdir / "age.csv", r"out .*age.csv is the hierarchy file .*: refusing to overwrite an input"),
                         (fifo, r"is a named pipe, not a file"),
                         (tmp_path / "r.xlsx", r"a name ending in .xlsx would hold CSV text")):  # fmt: skip
        with pytest.raises(InputError, match=message):
            kanonymize(str(data), ["age", "sex"], H, k=2, engine=engine, out=str(out))
    assert all(p.read_bytes() == b for p, b in before.items()) and fifo.is_fifo()
    r = kanonymize(str(data), ["age", "sex"], H, k=2, engine=engine, out=str(tmp_path / "ok.csv"))
    assert (tmp_path / "ok.csv").exists() and r.selected_levels is not None


def test_anonymize_timestamped_file_out_never_overwrites_an_input(tmp_path):
    """anonymize_timestamped_file(..., out=) refused only its input: out= a hierarchy file wrote the release over it,
    a named pipe was replaced, out='r.xlsx' held CSV text (found in the uatb acceptance pass)."""
    from tempanon.temporal import anonymize_timestamped_file

    data = tmp_path / "enc.csv"
    data.write_bytes(__import__("gzip").decompress((sample_dir("timestamped") / "encounters.csv.gz").read_bytes()))
    h = tmp_path / "ENCOUNTERCLASS.csv"
    h.write_text("".join(f"{v};{g};*\n" for v, g in [("ambulatory", "out"), ("outpatient", "out"), ("wellness", "out"),
                 ("emergency", "acute"), ("inpatient", "acute"), ("urgentcare", "acute"), ("home", "out"),
                 ("virtual", "out"), ("hospice", "acute"), ("snf", "acute")]))  # fmt: skip
    before = h.read_bytes()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    run = dict(time="START", uid="PATIENT", k=2, qi=["ENCOUNTERCLASS"], hierarchies={"ENCOUNTERCLASS": str(h)},
               granularities="year", max_suppression=0.5, engine="duckdb")  # fmt: skip
    for out, message in ((h, r"is the hierarchy file .*: refusing to overwrite an input"),
                         (fifo, r"is a named pipe, not a file"), (tmp_path / "r.xlsx", r"would hold CSV text")):  # fmt: skip
        with pytest.raises(InputError, match=message):
            anonymize_timestamped_file(str(data), out=str(out), **run)
    assert h.read_bytes() == before and fifo.is_fifo()
