"""Acceptance audit: ``tempanon run``'s ``wrote ...`` line named the table and the report but not the
summary the job asked for (nor, for kanon, its audit), although both were written: a steward
reading the output could not tell where they went. Now every written file is named."""

from __future__ import annotations

from typer.testing import CliRunner

from tempanon.cli import app

runner = CliRunner()


def _table(tmp_path):
    rows = [f"p{i % 12},{'MF'[i % 2]},{20 + (i % 3) * 10},{'abc'[i % 3]}" for i in range(60)]
    (tmp_path / "v.csv").write_text("pid,sex,age,dx\n" + "\n".join(rows) + "\n")


def _wrote_line(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("wrote "))


def test_kanon_job_names_summary_and_audit(tmp_path):
    _table(tmp_path)
    (tmp_path / "job.toml").write_text("""
[input]
path = "v.csv"
[columns]
uid = "pid"
quasi_identifiers = ["sex", "age"]
[hierarchies]
sex = { type = "suppression" }
age = { type = "suppression" }
[model]
name = "kanon"
k = 2
[output]
table = "out/released.csv"
summary = "steward/summary.json"
audit = "steward/audit.csv"
""")
    r = runner.invoke(app, ["run", str(tmp_path / "job.toml")])
    assert r.exit_code == 0, r.output
    line = _wrote_line(r.output)
    for name in ("out/released.csv", "steward/summary.json", "steward/audit.csv"):
        assert (tmp_path / name).exists()
        assert str(tmp_path / name) in line, line


def test_timestamped_job_names_summary(tmp_path):
    rows = [f"p{i % 12},{'MF'[i % 2]},2023-0{1 + i % 3}-0{1 + i % 7} 10:00" for i in range(60)]
    (tmp_path / "v.csv").write_text("pid,sex,visit\n" + "\n".join(rows) + "\n")
    (tmp_path / "job.toml").write_text("""
[input]
path = "v.csv"
[columns]
uid = "pid"
time = "visit"
quasi_identifiers = ["sex"]
[model]
name = "timestamped"
k = 2
granularities = ["month", "year"]
[output]
table = "out/released.csv"
summary = "steward/summary.json"
""")
    r = runner.invoke(app, ["run", str(tmp_path / "job.toml")])
    assert r.exit_code == 0, r.output
    line = _wrote_line(r.output)
    assert str(tmp_path / "steward/summary.json") in line and (tmp_path / "steward/summary.json").exists()
    assert str(tmp_path / "out/released.csv") in line


def test_init_header_only_writes_no_job(tmp_path):
    """Acceptance audit: ``tempanon init`` on a header-only CSV wrote a job with no quasi-identifier
    (every column 'left out', exit 0) that could only fail; now exit 2, no job file."""
    (tmp_path / "h.csv").write_text("pid,sex,age\n")
    r = runner.invoke(app, ["init", str(tmp_path / "h.csv"), "--out", str(tmp_path / "j.toml")])
    assert r.exit_code == 2 and "the input table has no rows" in r.output
    assert not (tmp_path / "j.toml").exists()
