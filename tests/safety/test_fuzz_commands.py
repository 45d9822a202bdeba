"""Fuzzing every command (issue 12): random small tables and options. Whatever the input, a
command exits 0, 1, 2 or 3 with a message (never a traceback), and every release it writes holds
its guarantee when re-checked by ``tempanon check`` on the written text.

The default run draws 60 derandomized examples (~8 s); ``TEMPANON_FUZZ_EXAMPLES=400`` draws that
many random ones (400 passed on 2026-11-24, ~60 s)."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.data.io import write_csv
from tempanon.hierarchy import build_intervals, build_suppression

runner = CliRunner()

VALUES = st.sampled_from(["1", "1.0", "", "x", "2020-01-01", "inf", "-3", "Ā", "a;b", "9" * 25, "2300-01-01", "NaN", "x\ry"])


@st.composite
def tables(draw):
    n = draw(st.integers(0, 30))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "pid": rng.integers(0, max(n // 2, 1), n).astype(str),
        "sid": [f"s{i}" for i in range(n)],
        "t": (pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 90, n), unit="D")).strftime("%Y-%m-%d"),
        "age": rng.integers(18, 70, n).astype(str),
        "sex": rng.choice(["F", "M"], n),
        "dx": rng.choice(["a", "b", "c", "d"], n),
        "A0": rng.normal(size=n).round(2), "A1": rng.normal(size=n).round(2), "A2": rng.normal(size=n).round(2),
    })  # fmt: skip
    # a few cells replaced by odd values (bad times, numbers as text, empty cells)
    for _ in range(draw(st.integers(0, 3))):
        if n:
            col = draw(st.sampled_from(list(df.columns)))
            df[col] = df[col].astype(object)
            df.loc[draw(st.integers(0, n - 1)), col] = draw(VALUES)
    return df


OPTS = {
    "kanon": st.fixed_dictionaries({"--k": st.sampled_from([2, 2, 3, 5, 1]), "--max-suppression": st.sampled_from([0.0, 0.2, 0.2, 1.5]),
                                    "--algorithm": st.sampled_from(["incognito", "incognito", "exhaustive", "nope"])},
                                   optional={"--uid": st.just("pid"), "--keep": st.sampled_from(["dx", "pid", "t", "nope"]),
                                             "--l": st.sampled_from([2, 3]), "--drop": st.just("A0")}),
    "timestamped": st.fixed_dictionaries({"--k": st.sampled_from([2, 2, 3, 0]),
                                          "--granularities": st.sampled_from(["week,month", "month,year", "day", "bogus"])},
                                         optional={"--uid": st.just("pid"), "--qi": st.sampled_from(["sex", "sex", "sex,age", "t"]),
                                                   "--keep": st.sampled_from(["dx", "age"]),
                                                   "--max-suppression": st.sampled_from([0.0, 0.3])}),
    "stream": st.fixed_dictionaries({"--l": st.sampled_from([2, 2, 3, 1]), "--window": st.sampled_from([0, 1, 2]),
                                     "--qi": st.sampled_from(["sex", "sex,age", "", "nope"])},
                                    optional={"--snapshot": st.sampled_from(["day", "week", "fortnight"])}),
    "kp": st.fixed_dictionaries({"--k": st.sampled_from([2, 4, 4, 1]), "--p": st.sampled_from([1, 2, 2, 5])},
                                optional={"--sensitive": st.just("dx"), "--keep": st.sampled_from(["sex", "dx"]),
                                          "--max-level": st.sampled_from([3, 3, 0, 9])}),
    "check": st.fixed_dictionaries({"--qi": st.sampled_from(["sex", "age,sex", "nope"])},
                                   optional={"--k": st.sampled_from([1, 2]), "--uid": st.just("pid")}),
}


def _args(opts):
    out = []
    for k, v in opts.items():
        out += [k, str(v)]
    return out


def _run(args, input=None):
    r = runner.invoke(app, [str(a) for a in args], input=input)
    assert r.exit_code in (0, 1, 2, 3), (args, r.exit_code, r.output)
    assert r.exception is None or isinstance(r.exception, SystemExit), (args, repr(r.exception), r.output)
    return r


def _recheck(out, qi, k, extra=()):
    if k < 2 or not out.exists():
        return
    r = _run(["check", out, "--qi", ",".join(qi), "--k", k, *extra])
    assert r.exit_code == 0, (out, r.output)


@settings(max_examples=int(os.environ.get("TEMPANON_FUZZ_EXAMPLES", "60")), deadline=None, suppress_health_check=list(HealthCheck),
          derandomize="TEMPANON_FUZZ_EXAMPLES" not in os.environ)
@given(df=tables(), command=st.sampled_from(sorted(OPTS) + ["run"]), data=st.data(), fmt=st.sampled_from(["csv", "parquet"]))
def test_fuzz_every_command(tmp_path_factory, df, command, data, fmt):
    tmp = tmp_path_factory.mktemp("fuzz")
    src = tmp / f"in.{fmt}"
    if fmt == "parquet":
        df.astype(str).where(df.notna(), None).to_parquet(src, index=False)
    else:
        write_csv(df, src)  # (a value with a lone carriage return quoted, as a CSV writer should)
    hdir = tmp / "h"
    hdir.mkdir()
    ages = pd.to_numeric(df["age"], errors="coerce").replace([np.inf, -np.inf], np.nan).dropna().astype(int).unique() if len(df) else [20]
    build_intervals("age", ages if len(ages) else [20], [10, 40]).to_csv(hdir / "age.csv")
    build_suppression("sex", pd.Series(["F", "M"])).to_csv(hdir / "sex.csv")
    rel = tmp / "release"
    out = rel / "o.csv"
    if command == "run":
        keep = data.draw(st.sampled_from(["", 'keep = ["dx"]', 'keep = ["pid"]']))
        (tmp / "job.toml").write_text(
            f'[input]\npath = "{src.name}"\n[columns]\nquasi_identifiers = ["age", "sex"]\n{keep}\n'
            '[hierarchies]\nage = "h/age.csv"\nsex = "h/sex.csv"\n[model]\nname = "kanon"\n'
            f'k = {data.draw(st.sampled_from([2, 3]))}\n[output]\ntable = "release/o.csv"\nsummary = "s.json"\n'
        )
        r = _run(["run", tmp / "job.toml"])
        if r.exit_code == 0:
            s = json.loads((tmp / "s.json").read_text())
            _recheck(out, ["age", "sex"], s["k"])
        return
    opts = data.draw(OPTS[command])
    if command == "kanon":
        if "--l" in opts:
            opts["--sensitive"] = "dx"
        r = _run(["kanon", src, "--qi", "age,sex", "--hierarchies", hdir, "--out", out, "--summary", tmp / "s.json", *_args(opts)])
        if r.exit_code == 0:
            assert not {"A1", "A2"} & set(pd.read_csv(out, dtype=str).columns)  # never released without a role
            if "--uid" not in opts:
                _recheck(out, ["age", "sex"], int(opts["--k"]))
    elif command == "timestamped":
        audit = tmp / "steward" / "audit.csv"
        r = _run(["timestamped", src, "--time", "t", "--out", out, "--audit", audit, *_args(opts)])
        if r.exit_code == 0:
            qi = [q for q in opts.get("--qi", "").split(",") if q and q != "t"] + ["t"]
            extra = ["--uid", "pid", "--audit", audit] if "--uid" in opts else []
            _recheck(out, qi, int(opts["--k"]), extra)
    elif command == "stream":
        _run(["stream", src, "--time", "t", "--sensitive", "dx", "--out", rel, "--summary", tmp / "s.json", *_args(opts)])
    elif command == "kp":
        _run(["kp", src, "--id", "sid", "--qi", "A0:A2", "--out", out, *_args(opts)])
    else:
        _run(["check", src, *_args(opts)])
