"""Options that only mean something with another one are refused without it, instead of being ignored
without a word (found in the uatb acceptance pass): timestamped --country without a business-day
granularity, --day-parts without part-of-day; kanon --l-diversity entropy|distinct|recursive without --l.
(kanon already refused --c without recursive l-diversity and --weights without weighted-height.)"""

import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import InputError
from tempanon.hierarchy import load_hierarchies
from tempanon.kanon import kanonymize
from tempanon.samples import sample_dir
from tempanon.temporal import anonymize_timestamped

runner = CliRunner()
A = sample_dir("adult")
ENC = sample_dir("timestamped") / "encounters.csv.gz"


def test_timestamped_country_and_day_parts_need_their_granularity(tmp_path):
    base = ["timestamped", str(ENC), "--uid", "PATIENT", "--time", "START", "--k", "2", "--max-suppression", "0.5",
            "--out", str(tmp_path / "o.csv")]  # fmt: skip
    for extra, message in ((["--granularities", "month,year", "--country", "US"],
                            "country (--country) gives the public holidays of the business-day granularity, which is "
                            "not among the granularities (month, year)"),
                           (["--granularities", "year", "--day-parts", "night=0-6,day=6-24"],
                            "day parts (--day-parts) gives the parts of the part-of-day granularity")):  # fmt: skip
        for engine in ("numpy", "duckdb"):
            r = runner.invoke(app, [*base, *extra, "--engine", engine])
            assert r.exit_code == 2 and message in " ".join(r.output.split()), r.output
            assert not (tmp_path / "o.csv").exists()
    r = runner.invoke(app, [*base, "--granularities", "business-day,month,year", "--country", "US", "-q"])
    assert r.exit_code == 0, r.output
    df = pd.read_csv(ENC, dtype=str, keep_default_na=False)
    with pytest.raises(InputError, match="which is not among the granularities"):
        anonymize_timestamped(df, time="START", uid="PATIENT", k=2, granularities="year", country="US")


def test_kanon_l_diversity_variant_needs_l(tmp_path):
    df = pd.read_csv(A / "adult.csv.gz", sep=";", dtype=str, keep_default_na=False).head(1000)
    with pytest.raises(InputError, match=r"l_diversity 'entropy' says what l means: give it with sensitive and l"):
        kanonymize(df, ["age", "sex"], load_hierarchies(A, ["age", "sex"]), k=5, l_diversity="entropy")
    out = tmp_path / "o.csv"
    r = runner.invoke(app, ["kanon", str(A / "adult.csv.gz"), "--qi", "age,sex", "--hierarchies", str(A), "--k", "5",
                            "--l-diversity", "distinct", "--out", str(out)])  # fmt: skip
    assert r.exit_code == 2 and "l_diversity 'distinct' says what l means" in " ".join(r.output.split()) and not out.exists()


def test_kanon_spark_master_needs_engine_spark(tmp_path):
    """'kanon --spark-master URL' without --engine spark ran on numpy (or DuckDB) as if it were not given, exit 0,
    where timestamped and a job's spark_master refuse it (found in the uatb acceptance pass)."""
    out = tmp_path / "o.csv"
    r = runner.invoke(app, ["kanon", str(A / "adult.csv.gz"), "--qi", "age,sex", "--hierarchies", str(A), "--k", "5",
                            "--spark-master", "local[1]", "--out", str(out)])  # fmt: skip
    assert r.exit_code == 2 and "--spark-master needs --engine spark" in r.output and not out.exists()


def test_a_hierarchies_file_is_not_a_missing_directory(tmp_path):
    """--hierarchies given an existing file said 'hierarchy directory not found' (found in the uatb acceptance pass)."""
    f = tmp_path / "age.csv"
    f.write_text("20;*\n")
    for cmd in (["kanon", str(A / "adult.csv.gz"), "--qi", "age", "--k", "2"],
                ["timestamped", str(ENC), "--uid", "PATIENT", "--time", "START", "--qi", "ENCOUNTERCLASS", "--k", "2"]):  # fmt: skip
        r = runner.invoke(app, [*cmd, "--hierarchies", str(f), "--out", str(tmp_path / "o.csv")])
        assert r.exit_code == 2 and "is a file, not a directory" in " ".join(r.output.split()), r.output
