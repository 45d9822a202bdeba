"""threads= of the DuckDB engine (anonymize_timestamped_file, DuckDBSource) is checked before any
work: 2.7 was truncated to 2, 0 said only 'bad setting', and 100000 started 100,000 threads."""
import pytest

from tempanon.errors import InputError
from tempanon.temporal.outofcore import anonymize_timestamped_file


def _table(tmp_path):
    p = tmp_path / "t.csv"
    rows = [f"p{i % 5},2023-0{1 + i % 3}-1{i % 9} 10:00,{'AB'[i % 2]}" for i in range(40)]
    p.write_text("uid,when,c\n" + "\n".join(rows) + "\n")
    return p


@pytest.mark.parametrize("threads", [0, -1, 2.7, True, "4", 100_000])
def test_bad_threads_are_refused(tmp_path, threads):
    out = tmp_path / "o.csv"
    with pytest.raises(InputError, match=r"threads must be an integer from 1 to 1024"):
        anonymize_timestamped_file(_table(tmp_path), out=out, time="when", uid="uid", qi=["c"], k=2,
                                   granularities=["month", "year"], engine="duckdb", threads=threads)
    assert not out.exists()


def test_threads_in_range_run(tmp_path):
    out = tmp_path / "o.csv"
    anonymize_timestamped_file(_table(tmp_path), out=out, time="when", uid="uid", qi=["c"], k=2,
                               granularities=["month", "year"], engine="duckdb", threads=1)
    assert out.exists()
