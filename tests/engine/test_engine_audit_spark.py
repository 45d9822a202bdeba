"""``tempanon kanon --engine spark --audit``: the steward's audit written by Spark, checked row by
row by Spark SQL against the written release (a directory of part files) and the input before the
audit and then the release are renamed into place.

``release_row`` counts the release's rows over its part files in name order (rows in file order in
each part; :mod:`tempanon.lattice.source_spark`). The claims that makes, tested here rather than
assumed: Spark writes a global ``ORDER BY`` as part files in name order; Spark's reader, ordered by
``input_file_name()`` and ``monotonically_increasing_id()``, gives the rows of every part (and of
the input) in file order, even when a file is read in many splits. The ``multipart`` fixture
forces many small read splits and shuffle joins (so the release is written as several part files),
the hard case; the oracles are the numpy path's audit and an independent pandas check
(:func:`.test_engine_audit._check_independently`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from .test_engine_audit import _check_independently, _generated, _numpy_and_duckdb, _read_audit, _read_release, assert_tampered_run_refused, typed_parquet_maps

pytestmark = pytest.mark.spark

_MULTIPART = {
    "spark.sql.files.maxPartitionBytes": "2048",  # every file (input, release parts) read in many splits
    "spark.sql.files.openCostInBytes": "0",
    "spark.sql.autoBroadcastJoinThreshold": "-1",  # shuffle joins: the release's sort is range partitioned
    "spark.sql.adaptive.enabled": "false",  # no coalescing of the 8 shuffle partitions into one
}


@pytest.fixture
def multipart(spark_session):
    old = {k: spark_session.conf.get(k, None) for k in _MULTIPART}
    for k, v in _MULTIPART.items():
        spark_session.conf.set(k, v)
    yield spark_session
    for k, v in old.items():
        if v is None:
            spark_session.conf.unset(k)
        else:
            spark_session.conf.set(k, v)


def _parts(path: Path) -> list[Path]:
    return sorted(path.glob("part-*"))


# ---- the reader and writer claims the audit rests on ----------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_spark_reads_files_in_order_and_writes_sorted_parts_in_name_order(tmp_path, multipart, fmt):
    """The input numbering (``SparkSource._numbered``, and the window ``SparkSource.row_number``)
    is file order with a file read in many splits; a global ORDER BY is written as part files in
    name order; the written directory numbered by ``SparkSource._numbered`` is the parts
    concatenated in name order (what pandas/pyarrow read)."""
    from tempanon.lattice.source_spark import SparkSource

    spark = multipart
    rng = np.random.default_rng(5)
    n = 6000
    df = pd.DataFrame({"a": np.arange(n).astype(str), "b": rng.integers(0, 50, n).astype(str)})
    inp = tmp_path / f"in.{fmt}"
    if fmt == "csv":
        df.to_csv(inp, index=False)
    else:
        df.to_parquet(inp, row_group_size=200)
    src = SparkSource.from_path(inp, spark=spark)
    assert spark.sql("SELECT * FROM src").rdd.getNumPartitions() > 3
    got = spark.sql(f"SELECT a, {src.row_number} AS rn FROM src s").toPandas()
    assert (got["a"].astype(int) == got["rn"]).all()
    got = spark.sql(f"SELECT a, __tempanon_rn AS rn FROM {src._numbered('src', src.columns)} s").toPandas()
    assert sorted(got["rn"]) == list(range(n)) and (got["a"].astype(int) == got["rn"]).all()
    out = tmp_path / "out"
    src._copy("SELECT a, b FROM src ORDER BY CAST(b AS INT), CAST(a AS INT)", str(out), fmt == "parquet")
    parts = _parts(out)
    assert len(parts) > 3
    cat = _read_release(out)
    expected = df.assign(ai=df["a"].astype(int), bi=df["b"].astype(int)).sort_values(["bi", "ai"])[["a", "b"]]
    assert cat.to_numpy().tolist() == expected.to_numpy().tolist()
    if fmt == "parquet":
        whole = pd.read_parquet(out)  # pyarrow reads the directory's parts in name order
        assert whole.to_numpy().tolist() == cat.to_numpy().tolist()
    read = src._read_written(str(out), fmt == "parquet")
    assert spark.sql(f"SELECT * FROM {read}").rdd.getNumPartitions() > len(parts)
    numbered = spark.sql(f"SELECT a, b, __tempanon_rn AS rn FROM {src._numbered(read, ['a', 'b'])} w ORDER BY rn").toPandas()
    assert numbered["rn"].tolist() == list(range(n))
    assert numbered[["a", "b"]].to_numpy().tolist() == cat.to_numpy().tolist()
    src.close()


# ---- the same map input line -> released row as numpy and DuckDB ------------------------------------


@pytest.mark.parametrize("suffix, extra", [
    (".csv", ["--uid", "person"]),
    (".parquet", ["--uid", "person", "--max-suppression", "0.1"]),
    (".csv", ["--uid", "person", "--max-suppression", "0.1"]),
    (".parquet", ["--drop", "person"]),
])  # fmt: skip
def test_spark_audit_same_map_as_numpy_and_duckdb(tmp_path, multipart, suffix, extra):
    inp, hdir = _generated(tmp_path)
    got = _numpy_and_duckdb(tmp_path, inp, hdir, ["--qi", "age,sex,zip", "--k", "4", "--keep", "visit", *extra], suffix,
                            engines=("numpy", "duckdb", "spark"))  # fmt: skip
    rel = got["spark"]
    assert "person" not in rel.columns and list(rel.columns) == ["age", "sex", "zip", "visit"]
    assert (rel["visit"] == "").any()  # missing values went through
    out = tmp_path / "spark" / f"release{suffix}"
    assert out.is_dir() and len([p for p in _parts(out) if len(_read_release(p))]) > 1  # a multi-part release
    if "--max-suppression" in extra:
        assert got["summary"]["rows_out"] < len(pd.read_csv(inp))  # rows were suppressed
    aud = _read_audit(tmp_path / "steward" / "spark-audit.csv")[1]
    assert not aud["input_line"].is_monotonic_increasing  # the salted row order, not input order
    assert sorted(p.name for p in (tmp_path / "steward").iterdir() if p.name.startswith(".")) == []


def test_spark_audit_default_session_one_part(tmp_path, spark_session):
    """Without forced splits (the session's defaults: broadcast joins, adaptive execution, which
    coalesces a small release's shuffle partitions into one): one part file, the same map as numpy."""
    inp, hdir = _generated(tmp_path, n_people=120, seed=8)
    got = _numpy_and_duckdb(tmp_path, inp, hdir, ["--qi", "age,sex,zip", "--k", "3", "--uid", "person", "--keep", "visit"],
                            ".parquet", engines=("numpy", "spark"))  # fmt: skip
    assert len(got["spark"]) == got["summary"]["rows_out"]
    assert len(_parts(tmp_path / "spark" / "release.parquet")) == 1


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_spark_audit_typed_parquet_input(tmp_path, multipart, suffix):
    """A typed Parquet input (a float quasi-identifier, a kept float column with missing values, an
    integer respondent id): the Spark audit maps every input line to the same released row as the
    numpy path's and DuckDB's."""
    maps = typed_parquet_maps(tmp_path, suffix, ("numpy", "duckdb", "spark"), row_group_size=100)
    pd.testing.assert_frame_equal(maps["spark"], maps["numpy"])
    pd.testing.assert_frame_equal(maps["duckdb"], maps["numpy"])
    assert len(maps["spark"]) > 0 and (maps["spark"]["w"] == "").any()


def test_spark_api_audit(tmp_path, multipart):
    """kanonymize(path, engine="spark", out=, audit=): checked, and the same files as the command."""
    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize

    inp, hdir = _generated(tmp_path)
    hier = load_hierarchies(hdir, ["age", "sex", "zip"])
    (tmp_path / "rel").mkdir()
    res = kanonymize(str(inp), ["age", "sex", "zip"], hier, 3, uid="person", keep=["visit"], engine="spark",
                     out=str(tmp_path / "rel" / "r.csv"), audit=str(tmp_path / "a.csv"))  # fmt: skip
    assert res.engine_checks["audit"].startswith("checked row by row")
    summ = {"selected_levels": res.selected_levels, "selected_node": list(res.selected_node), "quasi_identifiers": res.quasi_identifiers}
    _check_independently(inp, hdir, summ, tmp_path / "rel" / "r.csv", tmp_path / "a.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "h", "input.csv", "rel"]


# ---- a corrupted audit or release is refused, nothing left --------------------------------------


def _data_lines(path: Path) -> list[tuple[Path, list[str]]]:
    """Every CSV part file of ``path`` (name order) with its lines (the header first)."""
    return [(p, p.read_text(encoding="utf-8").splitlines(keepends=True)) for p in _parts(path)]


def _corrupt_parts(which: str, path: Path) -> None:
    """Change what Spark wrote (CSV part files): ``release`` swaps the release's first and last rows
    (same classes and rows, wrong positions); ``parts`` swaps the names of the first and last part
    files (a release whose parts are not in the written order); ``audit-line`` swaps the input
    lines of the first and last audit rows; ``audit-duplicate`` names the second row's input line
    twice; ``audit-outside`` names an input line past the end of the input (the audit's parts hold
    its input lines; the driver numbers them). The part files' Hadoop checksums (``.part-*.crc``)
    are removed first."""
    rows = path.name.endswith(".rows")
    for crc in path.glob(".*.crc"):  # Hadoop's checksums would catch the change first: the check under test is ours
        crc.unlink()
    files = [(p, ls) for p, ls in _data_lines(path) if len(ls) > 1]
    slots = [(i, j) for i, (_, ls) in enumerate(files) for j in range(1, len(ls))]
    first, second, last = slots[0], slots[1], slots[-1]

    def get(s):
        return files[s[0]][1][s[1]]

    def put(s, text):
        files[s[0]][1][s[1]] = text

    if which == "release" and not rows:
        a, b = get(first), get(last)
        put(first, b)
        put(last, a)
    elif which == "parts" and not rows:
        assert len(files) > 1
        p, q = files[0][0], files[-1][0]
        tmp = p.with_name("swap")
        p.rename(tmp)
        q.rename(p)
        tmp.rename(q)
        return
    elif which.startswith("audit") and rows:
        f1, f2, fl = get(first), get(second), get(last)
        if which == "audit-line":
            put(first, fl)
            put(last, f1)
        elif which == "audit-duplicate":
            put(first, f2)
        else:
            put(first, "99999999\n")
    else:
        return
    for p, ls in files:
        p.write_text("".join(ls), encoding="utf-8")


@pytest.mark.parametrize("which, message", [
    ("release", r"audit row for release row 1: column '\w+' of input line \d+ generalizes to '[^']*', the release row has"),
    ("parts", r"audit row for release row \d+: column '\w+' of input line \d+ generalizes to '[^']*', the release row has"),
    ("audit-line", r"audit row for release row 1: column '\w+' of input line \d+ generalizes to"),
    ("audit-duplicate", r"the audit lists \d+ rows \(\d+ distinct release rows, \d+ distinct input lines\); the release has \d+"),
    ("audit-outside", r"the audit names 1 input line\(s\) that are not in the input"),
])  # fmt: skip
def test_spark_corrupted_audit_or_release_refused(tmp_path, monkeypatch, multipart, which, message):
    from tempanon.lattice.source_spark import SparkSource

    inp, hdir = _generated(tmp_path)
    copy = SparkSource._copy

    def faulty(self, query, path, parquet):
        copy(self, query, path, parquet)
        _corrupt_parts(which, Path(path))

    monkeypatch.setattr(SparkSource, "_copy", faulty)
    assert_tampered_run_refused(tmp_path, inp, hdir, "spark", message)


def test_spark_audit_needs_out_and_verify(tmp_path, spark_session):
    """What is still refused on Spark, as on DuckDB: an audit without a release file, or unverified."""
    from tempanon.errors import InputError
    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize
    from tempanon.lattice.source_spark import SparkSource

    inp, hdir = _generated(tmp_path)
    hier = load_hierarchies(hdir, ["age", "sex", "zip"])
    with pytest.raises(InputError, match="out="):
        kanonymize(str(inp), ["age", "sex", "zip"], hier, 3, engine="spark", audit=str(tmp_path / "b.csv"))
    src = SparkSource.from_path(inp, spark=spark_session)
    src.table = object()
    with pytest.raises(InputError, match="verify=False"):
        src.release((0, 0, 0), 2, uid=None, drop=(), out=str(tmp_path / "rel" / "r.csv"), verify=False, audit=str(tmp_path / "a.csv"))
    src.close()
    assert not (tmp_path / "b.csv").exists() and not (tmp_path / "rel").exists() and not (tmp_path / "a.csv").exists()


# ---- timestamped --engine spark --audit: the file path, the audit written by Spark -------------------


@pytest.mark.parametrize("joint", [False, True])
def test_timestamped_spark_audit_same_map_as_numpy_and_duckdb(tmp_path, multipart, joint):
    """``timestamped --engine spark --audit``: the file read by Spark (no rows on the driver), the
    release written as part files and the audit (release_row, input_line, respondent) written by
    Spark, checked row by row; each input line is released as the same row, for the same
    respondent, as numpy's and DuckDB's."""
    import json

    from .test_engine_temporal import ENC_ROWS, SAMPLE, _audited, _cli

    if joint:
        (tmp_path / "h").mkdir()
        (tmp_path / "h" / "ENCOUNTERCLASS.csv").write_text("\n".join(";".join(r) for r in ENC_ROWS) + "\n")
    outs = {}
    for eng in ("numpy", "duckdb", "spark"):
        (tmp_path / eng).mkdir()
        r = _cli(["timestamped", str(SAMPLE), "--time", "START", "--uid", "PATIENT", "--k", "3", "--max-suppression", "0.06",
                  "--qi", "ENCOUNTERCLASS", "--out", str(tmp_path / eng / "o.csv"), "--audit", str(tmp_path / f"{eng}-audit.csv"),
                  "--engine", eng, "--summary", str(tmp_path / f"{eng}.json"),
                  *(["--hierarchies", str(tmp_path / "h"), "--granularities", "day,week,month,year"] if joint else [])])  # fmt: skip
        assert r.exit_code == 0, r.output
        assert "into memory" not in " ".join(r.output.split()) and "on the driver" not in " ".join(r.output.split())
        text = "".join(p.read_text() if i == 0 else p.read_text().split("\n", 1)[1]
                       for i, p in enumerate(_parts(tmp_path / eng / "o.csv"))) if eng == "spark" else (tmp_path / eng / "o.csv").read_text()  # fmt: skip
        outs[eng] = _audited(text, tmp_path / f"{eng}-audit.csv")
    pd.testing.assert_frame_equal(outs["numpy"], outs["duckdb"])
    pd.testing.assert_frame_equal(outs["numpy"], outs["spark"])
    s = json.loads((tmp_path / "spark.json").read_text())
    assert s["verification"]["audit"].startswith("checked row by row")
    assert "Spark" in s["plan"]["input"] and "recorded in the steward audit only" in s["row_order"]
    assert len([p for p in _parts(tmp_path / "spark" / "o.csv") if len(p.read_text().splitlines()) > 1]) > 1
    heads = [(tmp_path / f"{e}-audit.csv").read_text().splitlines()[2] for e in ("numpy", "spark")]
    assert heads[0] == heads[1] == "release_row,input_line,respondent"


@pytest.mark.parametrize("which", ["release", "parts"])
def test_timestamped_spark_audit_refused_when_the_release_does_not_match(tmp_path, multipart, which):
    """A release whose rows (or part files) are not in the written order, classes intact: the
    row-by-row audit check refuses; neither the release nor the audit is written."""
    import tempanon.temporal.outofcore as ooc
    from tempanon.errors import VerificationError

    from .test_engine_temporal import _small_csv

    orig = ooc._write

    def moved(sq, query, path, parquet):
        orig(sq, query, path, parquet)
        _corrupt_parts(which, Path(path))

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(ooc, "_write", moved)
    try:
        small = _small_csv(tmp_path)
        (tmp_path / "rel").mkdir()
        (tmp_path / "st").mkdir()
        with pytest.raises(VerificationError, match="audit row"):
            ooc.anonymize_timestamped_file(small, out=tmp_path / "rel" / "o.csv", audit=tmp_path / "st" / "a.csv", engine="spark",
                                           time="START", qi=["CLS"], k=3, uid="PATIENT", max_suppression=0.06)  # fmt: skip
        assert list((tmp_path / "rel").iterdir()) == [] and list((tmp_path / "st").iterdir()) == []
    finally:
        monkeypatch.undo()
