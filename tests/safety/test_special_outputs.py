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
