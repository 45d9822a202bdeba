"""Fuzzing job files (``tempanon run JOB.toml``): a valid job of each model (kanon, timestamped, stream,
kp) with one to three of its keys given a random value of a random TOML type (strings that name no
column or a wrong one, paths, numbers out of range, NaN, infinities, booleans, arrays, tables), or
with a key removed. Whatever the job, ``run`` exits 0, 1, 2 or 3 with a message, never a traceback;
a refusal names the job file; a kanon or timestamped release that is written holds its k when
re-checked by ``tempanon check``.

The default run draws 8 derandomized examples per model; ``TEMPANON_FUZZ_EXAMPLES=N`` draws N random
ones (``TEMPANON_FUZZ_SEED=S``: from seed S, reproducible)."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tempanon.cli import app
from tempanon.hierarchy import Hierarchy, build_intervals

runner = CliRunner()

BASE = {
    "kanon": {
        "input": {"path": "in.csv"},
        "columns": {"quasi_identifiers": ["age", "sex"], "identifying": ["sid"]},
        "hierarchies": {"age": "h/age.csv", "sex": "h/sex.csv"},
        "model": {"name": "kanon", "k": 2, "max_suppression": 0.2},
        "output": {"table": "out/o.csv", "summary": "steward/s.json"},
    },
    "timestamped": {
        "input": {"path": "in.csv"},
        "columns": {"time": "t", "uid": "pid", "quasi_identifiers": ["sex"], "identifying": ["sid"]},
        "hierarchies": {"sex": "h/sex.csv"},
        "model": {"name": "timestamped", "k": 2, "granularities": ["week", "month", "year"]},
        "output": {"table": "out/o.csv", "summary": "steward/s.json"},
    },
    "stream": {
        "input": {"path": "in.csv"},
        "columns": {"time": "t", "sensitive": ["dx"], "quasi_identifiers": ["sex"], "identifying": ["sid", "pid"]},
        "model": {"name": "stream", "l": 2, "window": 1},
        "output": {"directory": "out", "summary": "steward/s.json"},
    },
    "kp": {
        "input": {"path": "wide.csv"},
        "columns": {"uid": "id", "quasi_identifiers": ["A0:A3"], "sensitive": ["S"]},
        "model": {"name": "kp", "k": 3, "p": 2},
        "output": {"table": "out/o.csv", "summary": "steward/s.json"},
    },
}

# keys a job may hold, by section (unknown keys are refused: drawn too)
KEYS = {
    "input": ["path", "delimiter", "database", "sql", "postgres", "bogus"],
    "columns": ["quasi_identifiers", "identifying", "sensitive", "uid", "time", "keep", "allow_identifier"],
    "hierarchies": ["age", "sex", "dx", "t"],
    "model": ["k", "l", "p", "window", "max_suppression", "algorithm", "criterion", "weights", "l_diversity", "c",
              "max_nodes", "time_limit", "max_lattice", "engine", "memory_limit", "spark_master", "granularities", "metric", "data_granularity",
              "country", "day_parts", "timezone", "date_order", "snapshot", "cost", "suppression_cost", "seed",
              "defer", "step", "max_level", "paa", "epsilon", "publish_values", "publish_patterns", "long_time",
              "long_value", "na_values", "missing", "sensitive_numeric", "name"],
    "output": ["table", "directory", "summary", "report", "audit"],
}

NAMES = ["age", "sex", "dx", "t", "pid", "sid", "A0", "A0:A3", "S", "id", "nope", "", "A3:A0"]
STRINGS = st.sampled_from([*NAMES, "in.csv", "out/o.csv", "out", "steward/x.json", "../escape.csv", "x" * 300 + ".csv", "h/age.csv",
                           "numpy", "duckdb", "auto", "day", "month", "week", "kapra", "naive", "linear", "quadratic",
                           "exact", "fast", "paper", "drop", "refuse", "UTC", "Mars/Olympus", "US", "-1", "1e400",
                           "Ā\u0000", "a" * 300, "300MB", "80%", "lots", "local[1]", " ", "SELECT 1", "paa"])
NUMBERS = st.sampled_from([0, 1, 2, 3, -1, 10**18, -(10**18), 0.5, 1.5, -0.0, math.nan, math.inf, -math.inf, 1e-300])
SCALARS = STRINGS | NUMBERS | st.booleans()
VALUES = (SCALARS | st.lists(SCALARS, max_size=3) | st.lists(st.sampled_from(NAMES), max_size=3)
          | st.dictionaries(st.sampled_from(["a", "k", "dx", "default"]), SCALARS, max_size=2))


TYPED = {
    "integer": st.sampled_from([0, 1, 2, 3, 4, 5, 10, -1, 10**18]) | st.integers(-3, 40),
    "number": NUMBERS | st.floats(-1, 2),
    "string": STRINGS,
    "list of strings": st.lists(STRINGS, max_size=3) | st.lists(st.sampled_from(NAMES), max_size=3),
    "list of numbers": st.lists(NUMBERS, max_size=3),
    "boolean": st.booleans(),
    "number or boolean": NUMBERS | st.booleans(),
    "number or table": NUMBERS | st.dictionaries(st.sampled_from(["a", "b", "default"]), NUMBERS, max_size=2),
    "table": st.dictionaries(st.sampled_from(["age", "sex", "a"]), NUMBERS, max_size=2),
}


def _schema(model: str, section: str) -> dict:
    from tempanon.steward.job import COLUMNS_SCHEMA, INPUT_SCHEMA, MODELS, OUTPUT_SCHEMA

    spec = MODELS[model]
    if section == "model":
        return dict(spec.schema)
    if section == "columns":
        return {k: v for k, v in COLUMNS_SCHEMA.items() if k in spec.columns}
    if section == "output":
        return {k: v for k, v in OUTPUT_SCHEMA.items() if k in spec.outputs}
    if section == "input":
        return dict(INPUT_SCHEMA)
    return {"age": "string", "sex": "string", "dx": "string", "t": "string"}


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)  # (a JSON string is a TOML basic string for these characters)
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(x)}" for k, x in v.items()) + "}"


def _render(job: dict) -> str:
    out = []
    for section, table in job.items():
        out.append(f"[{section}]")
        out += [f"{json.dumps(k) if k == '' else k} = {_toml(v)}" for k, v in table.items()]
    return "\n".join(out) + "\n"


def _data(tmp, rng):
    n = 24
    df = pd.DataFrame({
        "pid": rng.integers(0, 8, n).astype(str), "sid": [f"s{i}" for i in range(n)],
        "t": (pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 60, n), unit="D")).strftime("%Y-%m-%d"),
        "age": rng.integers(18, 70, n).astype(str), "sex": rng.choice(["F", "M"], n), "dx": rng.choice(list("abcd"), n),
    })  # fmt: skip
    df.to_csv(tmp / "in.csv", index=False)
    m = 12
    wide = pd.DataFrame({"id": [f"e{i}" for i in range(m)], **{f"A{j}": rng.normal(size=m).round(2) for j in range(4)},
                         "S": rng.choice(list("xyz"), m)})  # fmt: skip
    wide.to_csv(tmp / "wide.csv", index=False)
    (tmp / "h").mkdir()
    build_intervals("age", df["age"].astype(int).unique(), [10, 40]).to_csv(tmp / "h" / "age.csv")
    Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]]).to_csv(tmp / "h" / "sex.csv")
    return df


SEED = int(os.environ["TEMPANON_FUZZ_SEED"]) if os.environ.get("TEMPANON_FUZZ_SEED") else None
EXAMPLES = int(os.environ.get("TEMPANON_FUZZ_EXAMPLES", "32"))


@pytest.mark.parametrize("model", sorted(BASE))
@settings(max_examples=max(1, EXAMPLES // len(BASE)), deadline=None, suppress_health_check=list(HealthCheck),
          derandomize="TEMPANON_FUZZ_EXAMPLES" not in os.environ and SEED is None, database=None)
@seed(SEED)
@given(data=st.data(), edits=st.integers(1, 3), rng_seed=st.integers(0, 2**16))
def test_fuzz_job_files(tmp_path_factory, model, data, edits, rng_seed):
    tmp = tmp_path_factory.mktemp("jobfuzz")
    _data(tmp, np.random.default_rng(rng_seed))
    job = json.loads(json.dumps(BASE[model]))
    for _ in range(edits):
        typed = data.draw(st.sampled_from([True, True, True, False]))  # most values of the key's own type
        section = data.draw(st.sampled_from(sorted(KEYS)))
        schema = _schema(model, section)
        key = data.draw(st.sampled_from(sorted(schema) if typed and schema else KEYS[section]))
        if data.draw(st.sampled_from(["set", "set", "set", "remove"])) == "remove":
            job.get(section, {}).pop(key, None)
        else:
            kind = schema.get(key) if typed else None
            job.setdefault(section, {})[key] = data.draw(TYPED.get(kind, VALUES) if typed else VALUES)
    text = _render(job)
    (tmp / "job.toml").write_text(text)
    r = runner.invoke(app, ["run", str(tmp / "job.toml"), "-q"])
    event(f"{model}: exit {r.exit_code}" + (os.environ.get("TEMPANON_FUZZ_EVENTS") and " " + " ".join(r.output.split())[:100] or ""))
    assert r.exit_code in (0, 1, 2, 3), (text, r.exit_code, r.output)
    assert r.exception is None or isinstance(r.exception, SystemExit), (text, repr(r.exception), r.output)
    if r.exit_code == 2:
        assert r.output.strip(), text
    if r.exit_code == 0 and model in ("kanon", "timestamped"):
        out = job["output"].get("table")
        summary = tmp / job["output"]["summary"] if isinstance(job["output"].get("summary"), str) else None
        if isinstance(out, str) and (tmp / out).is_file() and summary is not None and summary.is_file():
            s = json.loads(summary.read_text())
            qi = [q for q in job["columns"]["quasi_identifiers"] if isinstance(q, str)]
            if model == "timestamped":
                qi = [*qi, job["columns"]["time"]]
            if s.get("uid") or "uid" in job["columns"]:
                return  # (respondent-level k: checked against the audit, not by the rows alone)
            chk = runner.invoke(app, ["check", str(tmp / out), "--qi", ",".join(qi), "--k", str(s["k"])])
            assert chk.exit_code == 0, (text, chk.output)
