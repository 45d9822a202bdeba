"""Job files: a whole anonymization described in one TOML file (``tempanon run JOB.toml``).

Layout (every key is checked: an unknown key or a value of the wrong type is an error that names
the key and its line in the file)::

    [input]
    path = "patients.csv"          # CSV (delimiter detected) or Parquet; relative to this file
    # delimiter = ";"
    # --- or a SQL query through DuckDB, against a DuckDB/SQLite file ...
    # database = "clinic.duckdb"
    # sql = "SELECT * FROM src.patients"
    # --- ... or a PostgreSQL server (DuckDB's postgres extension; not tested here, see docs)
    # postgres = "host=localhost dbname=clinic user=me"
    # sql = "SELECT * FROM src.public.patients"

    [columns]
    quasi_identifiers = ["age", "sex", "zip"]
    identifying = ["name"]          # removed from the release
    uid = "patient_id"              # optional: respondent-level k, removed from the release

    [hierarchies]
    age = { type = "intervals", widths = [5, 10, 20] }
    sex = { type = "suppression" }
    zip = { type = "file", path = "hierarchies/zip.csv" }   # ARX format, relative to this file

    [model]
    name = "kanon"
    k = 5
    max_suppression = 0.02
    algorithm = "incognito"
    criterion = "loss"
    # weights = { age = 2.0 }

    [output]
    table = "out/patients-anonymized.csv"
    summary = "out/summary.json"    # optional
    report = "out/report.html"      # optional

Models are a dispatch table (:data:`MODELS`): each entry names its ``[model]`` keys with their
types and a runner. Only ``kanon`` is wired today; the timestamped, stream and (k,P) models are
added by registering a :class:`ModelSpec` once their Python APIs are final.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tempanon.errors import InputError

# ---- locating keys in the file text (tomllib gives no line numbers) -----------------------------
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*((?:"[^"]*"|'[^']*'|[A-Za-z0-9_\-]+)(?:\s*\.\s*(?:"[^"]*"|'[^']*'|[A-Za-z0-9_\-]+))*)\s*=""")


def _split_key(text: str) -> tuple[str, ...]:
    parts = re.findall(r""""([^"]*)"|'([^']*)'|([A-Za-z0-9_\-]+)""", text)
    return tuple(a or b or c for a, b, c in parts)


def key_line(text: str, path: tuple[str, ...]) -> int | None:
    """1-based line of the key ``path`` (e.g. ``("model", "k")``) in TOML ``text``; for a key inside
    an inline table the line of the enclosing key; for a table, its header line."""
    table: tuple[str, ...] = ()
    best: int | None = None
    for no, line in enumerate(text.splitlines(), start=1):
        stripped = line.split("#", 1)[0] if '"' not in line and "'" not in line else line
        m = _HEADER.match(stripped)
        if m:
            table = _split_key(m.group(1))
            if table == path:
                return no
            continue
        m = _KEY.match(line)
        if m:
            full = table + _split_key(m.group(1))
            if full == path:
                return no
            if path[: len(full)] == full and len(full) >= 1 and (best is None):
                best = no  # the key path continues inside an inline table on this line
    return best


class JobError(InputError):
    """A job file problem (exit status 2), naming the key and its line."""


@dataclass
class Ctx:
    """Where a job file lives and its text, for relative paths and error messages."""

    path: Path
    text: str

    def where(self, keys: tuple[str, ...]) -> str:
        line = key_line(self.text, keys)
        return f"{self.path}" + (f", line {line}" if line else "") + f": key '{'.'.join(keys)}'"

    def error(self, keys: tuple[str, ...], msg: str) -> JobError:
        return JobError(f"{self.where(keys)}: {msg}")

    def resolve(self, value: str) -> Path:
        p = Path(value).expanduser()
        return p if p.is_absolute() else (self.path.parent / p)


# ---- schema ---------------------------------------------------------------------------------
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "list of strings": (list,),
    "table": (dict,),
    "list of numbers": (list,),
}


def _check_type(ctx: Ctx, keys: tuple[str, ...], value: Any, kind: str) -> None:
    ok = isinstance(value, _TYPES[kind]) and not (kind in ("integer", "number") and isinstance(value, bool))
    if ok and kind == "list of strings":
        ok = all(isinstance(v, str) for v in value)
    if ok and kind == "list of numbers":
        ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    if not ok:
        raise ctx.error(keys, f"expected {kind}, got {_describe(value)}")


def _describe(value: Any) -> str:
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a number", list: "a list", dict: "a table"}
    return f"{names.get(type(value), type(value).__name__)} ({value!r})" if not isinstance(value, (dict, list)) else names[type(value)]


def _check_table(ctx: Ctx, keys: tuple[str, ...], table: Any, schema: Mapping[str, str], required: set[str] = frozenset()) -> None:
    if not isinstance(table, dict):
        raise ctx.error(keys, f"expected a table, got {_describe(table)}")
    for key, value in table.items():
        if key not in schema:
            raise ctx.error(keys + (key,), f"unknown key; expected one of: {', '.join(schema)}")
        _check_type(ctx, keys + (key,), value, schema[key])
    for key in sorted(required - set(table)):
        raise ctx.error(keys, f"missing required key '{key}'")


TOP_SCHEMA = {"input": "table", "columns": "table", "hierarchies": "table", "model": "table", "output": "table"}
INPUT_SCHEMA = {"path": "string", "delimiter": "string", "database": "string", "sql": "string", "postgres": "string"}
COLUMNS_SCHEMA = {"quasi_identifiers": "list of strings", "identifying": "list of strings", "sensitive": "list of strings", "uid": "string"}
OUTPUT_SCHEMA = {"table": "string", "summary": "string", "report": "string"}
HIERARCHY_SCHEMA = {"type": "string", "widths": "list of numbers", "start": "number", "top": "string", "levels": "integer",
                    "char": "string", "formats": "list of strings", "tree": "table", "path": "string"}


@dataclass
class SourceInfo:
    """Where the data came from, for the report."""

    description: str
    checksum: str | None
    checksum_kind: str


@dataclass
class ModelSpec:
    """One model of the job runner: its ``[model]`` keys (name -> type), required keys, runner."""

    schema: dict[str, str]
    required: set[str]
    run: Callable[[Job, pd.DataFrame, SourceInfo, Any], dict]
    description: str = ""
    validate: Callable[[Ctx, dict, list[str]], None] | None = None


@dataclass
class Job:
    """A validated job file with paths resolved against its directory."""

    ctx: Ctx
    source: dict
    quasi_identifiers: list[str]
    identifying: list[str]
    sensitive: list[str]
    uid: str | None
    hierarchies: dict[str, Any]
    model: str
    params: dict
    output_table: Path
    summary: Path | None
    report: Path | None
    raw: dict = field(repr=False, default_factory=dict)


def load_job(path: str | Path) -> Job:
    """Read and validate a job file (see module doc); raises :class:`JobError` naming key and line."""
    p = Path(path)
    if not p.is_file():
        raise JobError(f"job file not found: {p}")
    text = p.read_text(encoding="utf-8")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise JobError(f"{p}: not valid TOML: {exc}") from None
    ctx = Ctx(p.resolve(), text)
    _check_table(ctx, (), raw, TOP_SCHEMA, {"input", "columns", "model", "output"})

    inp = raw["input"]
    _check_table(ctx, ("input",), inp, INPUT_SCHEMA)
    sources = [k for k in ("path", "database", "postgres") if k in inp]
    if len(sources) != 1:
        raise ctx.error(("input",), "give exactly one of 'path' (CSV/Parquet file), 'database' (DuckDB/SQLite file) or 'postgres' (connection string)")
    if sources[0] in ("database", "postgres") and "sql" not in inp:
        raise ctx.error(("input", sources[0]), "a database source needs a 'sql' query")
    if sources[0] == "path" and "sql" in inp:
        raise ctx.error(("input", "sql"), "'sql' goes with 'database' or 'postgres', not with 'path'")
    source = dict(inp)
    for key in ("path", "database"):
        if key in source:
            source[key] = ctx.resolve(source[key])
            if not source[key].exists():
                raise ctx.error(("input", key), f"file not found: {source[key]}")

    cols = raw["columns"]
    _check_table(ctx, ("columns",), cols, COLUMNS_SCHEMA, {"quasi_identifiers"})
    if not cols["quasi_identifiers"]:
        raise ctx.error(("columns", "quasi_identifiers"), "give at least one quasi-identifier")

    hier_raw = raw.get("hierarchies", {})
    if not isinstance(hier_raw, dict):
        raise ctx.error(("hierarchies",), f"expected a table, got {_describe(hier_raw)}")
    hierarchies: dict[str, Any] = {}
    for name, conf in hier_raw.items():
        keys = ("hierarchies", name)
        if name not in cols["quasi_identifiers"]:
            raise ctx.error(keys, f"hierarchy for {name!r}, which is not a quasi-identifier ({', '.join(cols['quasi_identifiers'])})")
        if isinstance(conf, str):  # shorthand: a file path
            conf = {"type": "file", "path": conf}
        _check_table(ctx, keys, conf, HIERARCHY_SCHEMA, {"type"})
        conf = dict(conf)
        if conf["type"] == "file" and "path" in conf:
            conf["path"] = str(ctx.resolve(conf["path"]))
            if not Path(conf["path"]).is_file():
                raise ctx.error(keys + ("path",), f"hierarchy file not found: {conf['path']}")
        from tempanon.hierarchy import hierarchy_from_config

        try:
            hierarchies[name] = hierarchy_from_config(conf, where=ctx.where(keys))
        except JobError:
            raise
        except InputError as exc:
            raise JobError(str(exc)) from None
    missing = [q for q in cols["quasi_identifiers"] if q not in hierarchies]
    if missing:
        raise ctx.error(("hierarchies",), f"no hierarchy for quasi-identifier(s) {', '.join(missing)}")

    model = raw["model"]
    if not isinstance(model, dict):
        raise ctx.error(("model",), f"expected a table, got {_describe(model)}")
    name = model.get("name")
    if not isinstance(name, str):
        raise ctx.error(("model", "name") if "name" in model else ("model",), "give the model's name as a string, e.g. name = \"kanon\"")
    if name not in MODELS:
        planned = {"timestamped", "stream", "kp"}
        extra = " (planned for job files, not wired yet: use its own command)" if name in planned else ""
        raise ctx.error(("model", "name"), f"unknown model {name!r}{extra}; job files support: {', '.join(MODELS)}")
    spec = MODELS[name]
    _check_table(ctx, ("model",), {k: v for k, v in model.items() if k != "name"}, spec.schema, spec.required)
    if spec.validate is not None:
        spec.validate(ctx, model, list(cols["quasi_identifiers"]))

    out = raw["output"]
    _check_table(ctx, ("output",), out, OUTPUT_SCHEMA, {"table"})
    return Job(
        ctx=ctx,
        source=source,
        quasi_identifiers=list(cols["quasi_identifiers"]),
        identifying=list(cols.get("identifying", [])),
        sensitive=list(cols.get("sensitive", [])),
        uid=cols.get("uid"),
        hierarchies=hierarchies,
        model=name,
        params={k: v for k, v in model.items() if k != "name"},
        output_table=ctx.resolve(out["table"]),
        summary=ctx.resolve(out["summary"]) if "summary" in out else None,
        report=ctx.resolve(out["report"]) if "report" in out else None,
        raw=raw,
    )


def read_source(job: Job) -> tuple[pd.DataFrame, str, str | None, str]:
    """Load the job's data: ``(frame, description, checksum, checksum kind)``."""
    from tempanon.data.io import read_table
    from tempanon.report.sections import file_sha256, frame_sha256

    src = job.source
    if "path" in src:
        df = read_table(src["path"], as_text=True, delimiter=src.get("delimiter"))
        return df, str(src["path"]), file_sha256(src["path"]), "SHA-256 of the input file"
    if "database" in src:
        df = read_table(src["database"], sql=src["sql"])
        return df, f"{src['database']}: {src['sql']}", frame_sha256(df), "SHA-256 of the query result (pandas row hashes)"
    df = read_postgres(src["postgres"], src["sql"])
    return df, f"postgres: {src['sql']}", frame_sha256(df), "SHA-256 of the query result (pandas row hashes)"


def read_postgres(dsn: str, sql: str) -> pd.DataFrame:
    """Run ``sql`` against PostgreSQL attached as ``src`` through DuckDB's postgres extension.

    The extension is installed by DuckDB on first use (it downloads it once unless it is already
    in DuckDB's extension directory). Not exercised by the test suite (no server there).
    """
    import duckdb

    con = duckdb.connect()
    try:
        con.execute("INSTALL postgres; LOAD postgres;")
        quoted = dsn.replace("'", "''")
        con.execute(f"ATTACH '{quoted}' AS src (TYPE postgres, READ_ONLY)")
        return con.execute(sql).df()
    except duckdb.Error as exc:
        raise InputError(f"PostgreSQL source failed: {exc}") from exc
    finally:
        con.close()


# ---- models -----------------------------------------------------------------------------------
def _run_kanon(job: Job, df: pd.DataFrame, source: SourceInfo, progress: Any) -> dict:
    from tempanon.data.io import write_json, write_table
    from tempanon.kanon import kanonymize

    p = job.params
    ctx = job.ctx
    if job.sensitive:
        raise ctx.error(("columns", "sensitive"), "the kanon model has no l-diversity; remove 'sensitive' or check l with `tempanon check`")
    res = kanonymize(
        df,
        job.quasi_identifiers,
        job.hierarchies,
        p["k"],
        uid=job.uid,
        identifying=job.identifying,
        max_suppression=float(p.get("max_suppression", 0.0)),
        algorithm=p.get("algorithm", "incognito"),
        criterion=p.get("criterion", "loss"),
        weights=p.get("weights"),
        progress=progress,
    )
    # kanonymize verified the release independently; build the report first, then write atomically
    rep = None
    if job.report is not None:
        from tempanon.report.kanon import kanon_report

        rep = kanon_report(df, res, source=source.description, checksum=source.checksum, checksum_kind=source.checksum_kind,
                           identifying=job.identifying)
    write_table(res.table, job.output_table)
    summ = res.summary()
    summ.update({"job": str(job.ctx.path), "output": str(job.output_table)})
    if rep is not None:
        rep.write(job.report)
        summ["report"] = str(job.report)
    if job.summary is not None:
        write_json(summ, job.summary)
    summ["_result"] = res
    return summ


def _validate_kanon(ctx: Ctx, model: dict, qi: list[str]) -> None:
    from tempanon.kanon.search import ALGORITHMS
    from tempanon.kanon.select import CRITERIA

    if model["k"] < 2:
        raise ctx.error(("model", "k"), f"k must be at least 2, got {model['k']}")
    ms = model.get("max_suppression", 0.0)
    if not 0 <= ms < 1:
        raise ctx.error(("model", "max_suppression"), f"must be a fraction in [0, 1), got {ms}")
    if model.get("algorithm", "incognito") not in ALGORITHMS:
        raise ctx.error(("model", "algorithm"), f"unknown algorithm {model['algorithm']!r}; expected one of {', '.join(ALGORITHMS)}")
    if model.get("criterion", "loss") not in CRITERIA:
        raise ctx.error(("model", "criterion"), f"unknown criterion {model['criterion']!r}; expected one of {', '.join(CRITERIA)}")
    for name, w in model.get("weights", {}).items():
        if name not in qi:
            raise ctx.error(("model", "weights", name), f"weight for {name!r}, which is not a quasi-identifier ({', '.join(qi)})")
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
            raise ctx.error(("model", "weights", name), f"expected a non-negative number, got {_describe(w)}")


MODELS: dict[str, ModelSpec] = {
    "kanon": ModelSpec(
        schema={"k": "integer", "max_suppression": "number", "algorithm": "string", "criterion": "string", "weights": "table"},
        required={"k"},
        run=_run_kanon,
        description="full-domain k-anonymity (Incognito)",
        validate=_validate_kanon,
    ),
    # TODO(job files): "timestamped", "stream" and "kp" register here once tempanon.temporal,
    # tempanon.stream and tempanon.timeseries publish their final APIs.
}


def run_job(job: Job, progress: Any = None) -> dict:
    """Load the data, run the model, write the verified outputs; returns the summary dict."""
    from tempanon.data.roles import ColumnRoles

    df, desc, checksum, kind = read_source(job)
    try:
        ColumnRoles(job.quasi_identifiers, job.identifying, job.sensitive).validate(df)
    except InputError as exc:
        raise JobError(f"{job.ctx.where(('columns',))}: {exc}") from None
    if job.uid is not None and job.uid not in df.columns:
        raise job.ctx.error(("columns", "uid"), f"unknown column {job.uid!r}; the input has columns: {', '.join(map(str, df.columns))}")
    return MODELS[job.model].run(job, df, SourceInfo(desc, checksum, kind), progress)


__all__ = ["MODELS", "Job", "JobError", "ModelSpec", "key_line", "load_job", "read_postgres", "read_source", "run_job"]
