"""Issue 16: long-format input, missing-value sentinels and how missing readings are handled."""

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.errors import InputError
from tempanon.timeseries.api import kp_anonymize
from tempanon.timeseries.data import random_walk
from tempanon.timeseries.longformat import long_to_wide, mark_missing

runner = CliRunner()
QI = [f"A{i}" for i in range(10)]


def _long(wide: pd.DataFrame, shuffle_seed=0) -> pd.DataFrame:
    rows = [(r.id, t, getattr(r, f"A{t}"), r.S) for r in wide.itertuples() for t in range(10)]
    long = pd.DataFrame(rows, columns=["patient", "day", "reading", "S"])
    return long.sample(frac=1.0, random_state=shuffle_seed).reset_index(drop=True)  # any row order


def test_long_to_wide_round_trip():
    wide = random_walk(50, seed=2)
    w2, times = long_to_wide(_long(wide), entity="patient", time="day", value="reading", keep=["S"])
    assert times == [str(t) for t in range(10)]  # numeric time order, not text order ('10' < '2')
    w2 = w2.set_index("patient").loc[wide["id"]]
    assert np.array_equal(w2[times].to_numpy(dtype=float), wide[QI].to_numpy())
    assert np.array_equal(w2["S"].to_numpy(dtype=float), wide["S"].to_numpy())


def test_long_format_orders_times_numerically_and_by_timestamp():
    df = pd.DataFrame({"e": ["a"] * 3 + ["b"] * 3, "t": [10, 2, 1] * 2, "v": [3.0, 2.0, 1.0, 6.0, 5.0, 4.0]})
    wide, times = long_to_wide(df, entity="e", time="t", value="v")
    assert times == ["1", "2", "10"] and wide[times].to_numpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    df["t"] = ["2024-01-10", "2024-01-02", "2024-01-01"] * 2
    wide, times = long_to_wide(df, entity="e", time="t", value="v")
    assert times == ["2024-01-01", "2024-01-02", "2024-01-10"]


def test_long_format_orders_numbered_labels_by_their_number(tmp_path):
    """Times such as t0 .. t23 (UCR's column names melted): ordered by the number, not as text, where
    t10 < t2 scrambled every series in the pivot (Italy power demand: the pattern loss 401 with the
    scrambled order, 125 with the right one, same k and P). Plain text is ordered alphabetically, with a
    warning naming the order; the summary says how the times were ordered."""
    import json
    import warnings

    from tempanon.errors import TempanonWarning

    labels = [f"t{i}" for i in range(12)]
    df = pd.DataFrame({"e": ["a"] * 12 + ["b"] * 12, "t": labels[::-1] * 2, "v": list(range(12))[::-1] + list(range(12, 24))[::-1]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", TempanonWarning)  # no warning for numbered labels
        wide, times = long_to_wide(df, entity="e", time="t", value="v")
    assert times == labels and wide.attrs["time_order"] == "numbered labels"
    assert wide[times].to_numpy().tolist() == [list(range(12)), list(range(12, 24))]
    for odd in (["W1", "W2", "W10"], ["1h", "2h", "10h"], ["day-1", "day-2", "day-10"], ["Day 1", "Day 2", "Day 10"]):
        d = pd.DataFrame({"e": ["a"] * 3, "t": odd[::-1], "v": [3, 2, 1]})
        assert long_to_wide(d, entity="e", time="t", value="v")[1] == odd
    # mixed prefixes, or words: plain text, with a warning giving the order used
    for text in (["a1", "b2", "a10"], ["low", "high", "mid"], ["x-b", "x-a", "x-c"]):
        d = pd.DataFrame({"e": ["a"] * 3, "t": text, "v": [1, 2, 3]})
        with pytest.warns(TempanonWarning, match="ordered as text"):
            wide, times = long_to_wide(d, entity="e", time="t", value="v")
        assert times == sorted(text) and wide.attrs["time_order"] == "text"
    # the command: summary and status line
    wide = random_walk(60, seed=1)
    long = _long(wide)
    long["day"] = "t" + long["day"].astype(str)
    p = tmp_path / "long.csv"
    long.to_csv(p, index=False)
    r = runner.invoke(app, ["kp", str(p), "--long", "--entity", "patient", "--time", "day", "--value", "reading", "--sensitive",
                            "S", "--k", "5", "--p", "3", "--out", str(tmp_path / "o.csv"), "--summary", str(tmp_path / "s.json")])  # fmt: skip
    assert r.exit_code == 0, r.output
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["time_order"] == "numbered labels" and not any("ordered as text" in w for w in s.get("warnings", []))
    assert pd.read_csv(tmp_path / "o.csv").columns[2:6].tolist() == ["t0_lo", "t0_hi", "t1_lo", "t1_hi"]
    long["day"] = long["day"].map({f"t{i}": "abcdefghij"[i] for i in range(10)}).radd("x")
    long.to_csv(p, index=False)
    r = runner.invoke(app, ["kp", str(p), "--long", "--entity", "patient", "--time", "day", "--value", "reading", "--sensitive",
                            "S", "--k", "5", "--p", "3", "--out", str(tmp_path / "o.csv"), "--summary", str(tmp_path / "s.json")])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "warning:" in r.output and "ordered as text" in " ".join(r.output.split())
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["time_order"] == "text" and any("ordered as text" in w for w in s["warnings"])


def test_long_format_errors():
    df = pd.DataFrame({"e": ["a", "a", "b"], "t": [1, 1, 1], "v": [1.0, 2.0, 3.0], "S": [0, 0, 1]})
    with pytest.raises(InputError, match=r"entity 'a' has more than one reading at time '1' \(lines \[2, 3\]\)"):
        long_to_wide(df, entity="e", time="t", value="v")
    df = pd.DataFrame({"e": ["a", "a", "b"], "t": [1, 2, 1], "v": [1.0, 2.0, 3.0], "S": [0, 1, 1]})
    with pytest.raises(InputError, match="column 'S' has several values for entity 'a'"):
        long_to_wide(df, entity="e", time="t", value="v", keep=["S"])
    wide, times = long_to_wide(df, entity="e", time="t", value="v")
    assert np.isnan(wide.loc[1, "2"])  # b has no reading at time 2: a missing reading


def test_cli_long_format(tmp_path):
    wide = random_walk(200, seed=4)
    p = tmp_path / "long.csv"
    _long(wide).to_csv(p, index=False)
    (tmp_path / "r").mkdir()
    out = tmp_path / "r" / "o.csv"
    res = runner.invoke(app, ["kp", str(p), "--long", "--entity", "patient", "--time", "day", "--value", "reading",
                              "--sensitive", "S", "--k", "10", "--p", "5", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    rel = pd.read_csv(out)
    assert len(rel) >= 196 and {f"{t}_lo" for t in range(10)} <= set(rel.columns) and "patient" not in rel.columns
    res = runner.invoke(app, ["kp", str(p), "--id", "patient", "--qi", "reading", "--out", str(out)])
    assert res.exit_code == 2 and "more than once" in res.output
    res = runner.invoke(app, ["kp", str(p), "--long", "--entity", "patient", "--out", str(out)])
    assert res.exit_code == 2 and "--long needs --entity, --time and --value" in res.output


def test_na_values_and_missing_policies():
    df = random_walk(120, seed=6)
    df.loc[[3, 50], "A4"] = -1.0
    with pytest.raises(InputError, match="'A4', line 5 .*missing value.*--missing drop"):
        kp_anonymize(df, id_col="id", qi=QI, k=10, P=5, na_values="-1")
    r = kp_anonymize(df, id_col="id", qi=QI, k=10, P=5, na_values="-1", missing="drop")
    assert r.summary["dropped_incomplete"] == 2 and r.summary["missing_values_marked"] == 2
    assert r.summary["series"] == 118 and set(r.audit["id"]) == set(df["id"]) - {df["id"][3], df["id"][50]}
    # without --na-values the sentinel is a value like any other
    r = kp_anonymize(df, id_col="id", qi=QI, k=10, P=5)
    assert r.summary["series"] == 120 and r.released["A4_lo"].min() == -1.0


def test_mark_missing_matches_text_and_number():
    df = pd.DataFrame({"a": [-1, 2, -1.0], "b": ["NA", "3", "x"]})
    out, n = mark_missing(df, ["a", "b"], ["-1", "NA"])
    assert n == 3 and out["a"].isna().tolist() == [True, False, True] and out["b"].isna().tolist() == [True, False, False]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 7), st.integers(0, 10_000), st.floats(0, 0.5))
def test_long_to_wide_matches_a_dict_oracle(n_ent, n_t, seed, holes):
    """Every reading lands in its entity's row and its time's column, in numeric time order;
    absent readings are missing; row order of the long table does not matter."""
    rng = np.random.default_rng(seed)
    times = rng.choice(100, size=n_t, replace=False)
    cells = {(f"e{e}", int(t)): float(rng.normal()) for e in range(n_ent) for t in times if rng.random() >= holes}
    if not cells:
        return
    long = pd.DataFrame([(e, t, v) for (e, t), v in cells.items()], columns=["e", "t", "v"]).sample(frac=1, random_state=seed)
    wide, cols = long_to_wide(long, entity="e", time="t", value="v")
    present = sorted({t for _, t in cells})
    assert cols == [str(t) for t in present]
    for _, row in wide.iterrows():
        for t in present:
            v = row[str(t)]
            if (row["e"], t) in cells:
                assert v == cells[(row["e"], t)]
            else:
                assert pd.isna(v)
    assert sorted(wide["e"]) == sorted({e for e, _ in cells})


def test_long_format_refuses_a_bad_time_among_timestamps(tmp_path):
    """A typo among dates (32/01/2023 in a day-first column running from 25 January to 3 February) made the
    whole column fall back to text order with a warning that the values are 'neither numbers ... nor
    timestamps': exit 0 and every series' readings published out of time order (01/02 before 25/01); a lone
    bad date instead became a time point of its own, reported as a 'missing value' of another column (found
    in the uatb acceptance pass). Now the bad time is refused, naming the column, its line and the value;
    plain labels (a few of which happen to read as dates) are still ordered as text."""
    days = pd.date_range("2023-01-25", periods=10, freq="D")
    rows = [(f"E{e}", d.strftime("%d/%m/%Y"), e + j / 10) for e in range(6) for j, d in enumerate(days)]
    df = pd.DataFrame(rows, columns=["id", "day", "v"])
    df.loc[df["day"] == "31/01/2023", "day"] = "32/01/2023"  # the same typo in every series
    with pytest.raises(InputError, match=r"column 'day', line 8: cannot parse timestamp '32/01/2023' \(9 of the 10 "):
        long_to_wide(df, entity="id", time="day", value="v")
    p = tmp_path / "long.csv"
    df.to_csv(p, index=False)
    r = runner.invoke(app, ["kp", str(p), "--long", "--entity", "id", "--time", "day", "--value", "v", "--k", "3",
                            "--p", "2", "--out", str(tmp_path / "o.csv")])  # fmt: skip
    assert r.exit_code == 2 and "line 8: cannot parse timestamp '32/01/2023'" in " ".join(r.output.split())
    assert not (tmp_path / "o.csv").exists()
    one = pd.DataFrame({"id": ["a", "a", "a", "b", "b", "b"], "day": ["2023-01-01", "2023-13-01", "2023-01-03"] * 2,
                        "v": range(6)})  # fmt: skip
    with pytest.raises(InputError, match=r"line 3: cannot parse timestamp '2023-13-01'"):
        long_to_wide(one, entity="id", time="day", value="v")
    from tempanon.errors import TempanonWarning

    labels = pd.DataFrame({"e": ["a"] * 3, "t": ["1st", "pre", "post"], "v": [1, 2, 3]})  # '1st' reads as a date
    with pytest.warns(TempanonWarning, match="ordered as text"):
        assert long_to_wide(labels, entity="e", time="t", value="v")[1] == ["1st", "post", "pre"]


@pytest.mark.parametrize("unit", ["us", "ns"])
def test_time_typed_readings_are_refused(tmp_path, unit):
    """Readings that are timestamps, durations or periods (a Parquet timestamp column, a DataFrame's datetime64)
    were turned into integers of their storage unit and published as envelopes of those: the same data as a
    microsecond or a nanosecond Parquet column gave releases 1000 times apart, with exit 0 (found in the uatb
    acceptance pass; a CSV's date text was refused as 'not a number'). Now refused, naming the column and type."""
    wide = random_walk(30, seed=3)
    ts = wide.copy()
    ts["A0"] = pd.to_datetime(wide["A0"] * 1e9).astype(f"datetime64[{unit}]")
    with pytest.raises(InputError, match=r"quasi-identifier 'A0' holds timestamps \(datetime64\[" + unit + r"\]\), not numeric"):
        kp_anonymize(ts, id_col="id", qi=QI, k=5, P=2)
    p = tmp_path / "ts.parquet"
    ts.to_parquet(p, index=False)
    out = tmp_path / "o.parquet"
    r = runner.invoke(app, ["kp", str(p), "--id", "id", "--qi", "A0:A9", "--k", "5", "--p", "2", "--out", str(out)])
    # (the command reads cells as text, as job files do: a timestamp's text is no number)
    assert r.exit_code == 2 and "quasi-identifier 'A0', line 2 (id 'R0'): value '1970-01-01" in " ".join(r.output.split())
    assert "is not a number" in r.output and not out.exists()
    for col in (pd.to_timedelta(wide["A1"], unit="s"), pd.Series(pd.period_range("2020-01-01", periods=30, freq="D"))):
        d = wide.copy()
        d["A1"] = col
        with pytest.raises(InputError, match="'A1'"):  # (durations: refused as a type no role takes)
            kp_anonymize(d, id_col="id", qi=QI, k=5, P=2)
    d = wide.copy()
    d["S"] = pd.to_datetime(wide["S"] * 1e9)
    with pytest.raises(InputError, match="sensitive column 'S' holds timestamps"):
        kp_anonymize(d, id_col="id", qi=QI, k=5, P=2, sensitive=["S"], l_diversity=2, epsilon=0.1)


def test_epsilon_without_l_diversity_is_refused(tmp_path):
    """--epsilon (job key epsilon, API epsilon=) without l-diversity was ignored, exit 0 (found in the uatb
    acceptance pass), where kanon refuses --c without recursive l-diversity and --weights without weighted-height."""
    wide = random_walk(30, seed=5)
    with pytest.raises(InputError, match=r"epsilon \(0.05\) is the largest change .* give it with l_diversity"):
        kp_anonymize(wide, id_col="id", qi=QI, k=5, P=2, sensitive=["S"], epsilon=0.05)
    p = tmp_path / "w.csv"
    wide.to_csv(p, index=False)
    out = tmp_path / "o.csv"
    r = runner.invoke(app, ["kp", str(p), "--id", "id", "--qi", "A0:A9", "--sensitive", "S", "--k", "5", "--p", "2",
                            "--epsilon", "0.05", "--out", str(out)])  # fmt: skip
    assert r.exit_code == 2 and "give it with l_diversity (--l-diversity L)" in " ".join(r.output.split()) and not out.exists()
    job = tmp_path / "job.toml"
    job.write_text(f'[input]\npath = "{p}"\n[columns]\nuid = "id"\nquasi_identifiers = ["A0:A9"]\nsensitive = ["S"]\n'
                   f'[model]\nname = "kp"\nk = 5\np = 2\nepsilon = 0.05\n[output]\ntable = "{out}"\n')  # fmt: skip
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 2 and "line 11: key 'model.epsilon'" in " ".join(r.output.split()) and not out.exists()


def test_kp_command_releases_ids_and_kept_columns_as_written(tmp_path):
    """'tempanon kp' read the table with numbers inferred, so an id 00001 was '1' in the steward's audit (ids 1 and
    001 then alike) and a kept zip 01004 was released as '1004', where a job file (and kanon, timestamped) read
    cells as text and kept them (found in the uatb acceptance pass)."""
    wide = random_walk(30, seed=6)
    wide["id"] = [f"{i:05d}" for i in range(30)]
    wide["zip"] = [f"0{1000 + i % 3}" for i in range(30)]
    p = tmp_path / "w.csv"
    wide.to_csv(p, index=False)
    out, audit = tmp_path / "rel" / "o.csv", tmp_path / "steward" / "a.csv"
    r = runner.invoke(app, ["kp", str(p), "--id", "id", "--qi", "A0:A9", "--keep", "zip", "--k", "5", "--p", "2",
                            "--out", str(out), "--audit", str(audit)])  # fmt: skip
    assert r.exit_code == 0, r.output
    rel = pd.read_csv(out, dtype=str)
    assert sorted(rel["zip"]) == sorted(wide["zip"])
    aud = pd.read_csv(audit, comment="#", dtype=str)
    assert sorted(aud["id"]) == sorted(wide["id"])


def test_long_format_takes_keep_and_drop(tmp_path):
    """--keep and --drop with --long (job keys keep and identifying) were checked against the pivoted table, which
    had only the entity, the time points and the sensitive columns: 'unknown --keep column 'grp'; the input has
    columns: id, A0, ...' (found in the uatb acceptance pass). They go through the pivot now (a kept column must
    hold one value per entity, as a sensitive one)."""
    wide = random_walk(40, seed=7)
    wide["grp"] = [f"g{i % 4}" for i in range(40)]
    wide["name"] = [f"n{i}" for i in range(40)]
    long = wide.melt(id_vars=["id", "S", "grp", "name"], var_name="t", value_name="v")
    p = tmp_path / "long.csv"
    long.to_csv(p, index=False)
    out = tmp_path / "rel" / "o.csv"
    r = runner.invoke(app, ["kp", str(p), "--long", "--entity", "id", "--time", "t", "--value", "v", "--sensitive", "S",
                            "--keep", "grp", "--drop", "name", "--k", "5", "--p", "2", "--out", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    rel = pd.read_csv(out)
    assert rel.columns[-2:].tolist() == ["S", "grp"] and "name" not in rel.columns
    assert sorted(rel["grp"]) == sorted(wide["grp"])
    job = tmp_path / "job.toml"
    job.write_text(f'[input]\npath = "{p}"\n[columns]\nuid = "id"\nquasi_identifiers = ["A0:A9"]\nsensitive = ["S"]\n'
                   f'keep = ["grp"]\nidentifying = ["name"]\n[model]\nname = "kp"\nk = 5\np = 2\nlong_time = "t"\n'
                   f'long_value = "v"\n[output]\ntable = "{tmp_path / "rel" / "j.csv"}"\n')  # fmt: skip
    r = runner.invoke(app, ["run", str(job)])
    assert r.exit_code == 0, r.output
    assert pd.read_csv(tmp_path / "rel" / "j.csv").columns[-2:].tolist() == ["S", "grp"]
