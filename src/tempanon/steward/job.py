"""Job files: a whole anonymization described in one TOML file (``tempanon run JOB.toml``).

Layout (every key is checked: an unknown key or a value of the wrong type is an error that names
the key and its line in the file)::

    [input]
    path = "patients.csv"          # CSV (delimiter detected) or Parquet; relative to this file
    # delimiter = ";"
    # --- or a SQL query against a DuckDB or SQLite file ...
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
types, the ``[columns]``/``[output]`` keys it accepts, whether it takes hierarchies, and a runner.
Wired: ``kanon``, ``timestamped`` (``[columns] time = ...``; hierarchies optional, for a joint
generalization) and ``kp`` (``[columns] uid`` is the series id, quasi-identifiers may be ranges
``"A0:A9"``, no hierarchies, ``[output] audit``) and ``stream`` (``[columns] time`` and one
``sensitive`` column, no hierarchies, ``[output] directory`` for the snapshot files); see
docs/steward.md.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tempanon.data.roles import delimiter_hint
from tempanon.errors import InputError, TempanonWarning

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
    "number or table": (int, float, dict),
    "number or boolean": (int, float, bool),
}


def _check_type(ctx: Ctx, keys: tuple[str, ...], value: Any, kind: str) -> None:
    ok = isinstance(value, _TYPES[kind]) and not (kind in ("integer", "number", "number or table") and isinstance(value, bool))
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
COLUMNS_SCHEMA = {"quasi_identifiers": "list of strings", "identifying": "list of strings", "sensitive": "list of strings", "uid": "string",
                  "time": "string", "keep": "list of strings", "allow_identifier": "list of strings"}
OUTPUT_SCHEMA = {"table": "string", "directory": "string", "summary": "string", "report": "string", "audit": "string"}
_BASE_COLUMNS = frozenset({"quasi_identifiers", "identifying", "sensitive", "uid", "keep", "allow_identifier"})
_BASE_OUTPUTS = frozenset({"table", "summary", "report"})
HIERARCHY_SCHEMA = {"type": "string", "widths": "list of numbers", "start": "number", "top": "string", "levels": "integer",
                    "char": "string", "formats": "list of strings", "tree": "table", "path": "string",
                    "date_order": "string"}


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
    columns: frozenset[str] = _BASE_COLUMNS  # accepted [columns] keys
    required_columns: frozenset[str] = frozenset({"quasi_identifiers"})  # quasi_identifiers: non-empty too
    hierarchies: str = "required"  # "required" for every quasi-identifier, "optional", or "none"
    outputs: frozenset[str] = _BASE_OUTPUTS  # accepted [output] keys
    required_outputs: frozenset[str] = frozenset({"table"})
    column_ranges: bool = False  # quasi_identifiers entries may be ranges "A0:A9" (expanded on the data)
    prepare: Callable[[Job, pd.DataFrame], pd.DataFrame] | None = None  # reshape the input first (kp: long format)


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
    output_table: Path  # the released table (for the stream model: the directory of snapshot files)
    summary: Path | None
    report: Path | None
    raw: dict = field(repr=False, default_factory=dict)
    time: str | None = None
    audit: Path | None = None
    keep: list[str] = field(default_factory=list)  # declared insensitive: released unchanged (screened)
    allow_identifier: list[str] = field(default_factory=list)  # identifier screening overridden for these
    outputs: Any = field(default=None, repr=False)  # the run's OutputSet (tempanon.data.io)
    before_write: Callable[[], None] | None = field(default=None, repr=False)  # said before any output is written


def _refuse_nul_paths(ctx: Ctx, raw: dict) -> None:
    """Refuse a NUL character (TOML's ``\\u0000``) in a file name of the job: every value of ``[input]``
    and ``[output]``, a hierarchy's file and a ``file:`` granularity. The system cannot look such a name
    up (it ended in a ValueError traceback, "embedded null byte"; found by the job fuzz, seed 38). A column
    name may hold one (a Parquet file's, as ``tempanon init`` writes it)."""
    def refuse(keys: tuple[str, ...], value: Any) -> None:
        if isinstance(value, str) and "\0" in value:
            raise ctx.error(keys, f"{value!r} holds a NUL character (\\u0000), which no file name can hold")

    for section in ("input", "output"):
        for key, value in (raw.get(section) if isinstance(raw.get(section), dict) else {}).items():
            refuse((section, key), value)
    hierarchies = raw.get("hierarchies")
    for name, h in (hierarchies.items() if isinstance(hierarchies, dict) else ()):
        if isinstance(h, dict):
            refuse(("hierarchies", name, "path"), h.get("path"))
        else:
            refuse(("hierarchies", name), h)
    model = raw.get("model") if isinstance(raw.get("model"), dict) else {}
    for key in ("granularities", "data_granularity"):
        values = model.get(key)
        for value in values if isinstance(values, list) else [values]:
            refuse(("model", key), value)


def load_job(path: str | Path) -> Job:
    """Read and validate a job file (see module doc); raises :class:`JobError` naming key and line."""
    p = Path(path)
    if not p.is_file():
        raise JobError(f"job file not found: {p}")
    try:  # (a byte order mark, as Windows editors save UTF-8, is no TOML: skipped; line ends as read_text has them)
        text = p.read_bytes().decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as exc:
        from tempanon.data.io import not_utf8_message

        raise JobError(not_utf8_message(p, exc)) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise JobError(f"{p}: not valid TOML: {exc}") from None
    ctx = Ctx(p.resolve(), text)
    _check_table(ctx, (), raw, TOP_SCHEMA, {"input", "columns", "model", "output"})
    _refuse_nul_paths(ctx, raw)

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
            if not source[key].strip():  # (resolved, "" is the job's folder: refused as an output 'in the input directory')
                raise ctx.error(("input", key), "empty; give the data file (relative to the job file's folder)")
            source[key] = ctx.resolve(source[key])
            if not source[key].exists():
                raise ctx.error(("input", key), f"file not found: {source[key]}")
            if source[key].is_dir():
                raise ctx.error(("input", key), f"{source[key]} is a directory, not a data file")
    if "delimiter" in source:  # (said when the data was read, without the key and its line)
        from tempanon.data.io import normalize_delimiter

        try:
            normalize_delimiter(source["delimiter"])
        except InputError as exc:
            raise ctx.error(("input", "delimiter"), str(exc)) from None

    # the model decides which column roles, hierarchies and outputs the file may have (checked in
    # full below; an unknown or missing model name falls back to the kanon layout until then)
    model_raw = raw["model"]
    name0 = model_raw.get("name") if isinstance(model_raw, dict) else None
    if isinstance(name0, str) and name0 not in MODELS:  # (name = "Stream" was judged by the kanon layout: "key
        # 'columns.time': unknown key", not the typo in the model's name)
        raise ctx.error(("model", "name"), f"unknown model {name0!r}; job files support: {', '.join(MODELS)}")
    spec0 = MODELS.get(name0, MODELS["kanon"]) if isinstance(name0, str) else MODELS["kanon"]
    cols = raw["columns"]
    _check_table(ctx, ("columns",), cols, {k: v for k, v in COLUMNS_SCHEMA.items() if k in spec0.columns}, set(spec0.required_columns))
    qi_required = "quasi_identifiers" in spec0.required_columns
    if qi_required and not cols["quasi_identifiers"]:
        raise ctx.error(("columns", "quasi_identifiers"), "give at least one quasi-identifier")
    qi_list = list(cols.get("quasi_identifiers", []))
    twice = sorted({str(q) for q in qi_list if qi_list.count(q) > 1})
    if twice:  # before the tables that name quasi-identifiers, whose errors would hide this one
        raise ctx.error(("columns", "quasi_identifiers"), f"quasi-identifier listed twice: {', '.join(map(repr, twice))}")

    hier_raw = raw.get("hierarchies", {})
    if not isinstance(hier_raw, dict):
        raise ctx.error(("hierarchies",), f"expected a table, got {_describe(hier_raw)}")
    if spec0.hierarchies == "none" and hier_raw:
        raise ctx.error(("hierarchies",), f"the {model_raw.get('name')} model generalizes without hierarchies; remove the [hierarchies] table")
    hierarchies: dict[str, Any] = {}
    for name, conf in hier_raw.items():
        keys = ("hierarchies", name)
        if name not in qi_list:
            raise ctx.error(keys, f"hierarchy for {name!r}, which is not a quasi-identifier ({', '.join(qi_list) or 'none given'})")
        if isinstance(conf, str):  # shorthand: a file path
            conf = {"type": "file", "path": conf}
        _check_table(ctx, keys, conf, HIERARCHY_SCHEMA, {"type"})
        conf = dict(conf)
        if conf["type"] == "file" and "path" in conf:
            conf["path"] = str(ctx.resolve(conf["path"]))
            if not Path(conf["path"]).is_file():
                raise ctx.error(keys + ("path",), f"hierarchy file not found: {conf['path']}")
        if conf["type"] == "dates":  # before any data is read, with the key's line
            from tempanon.hierarchy.builders import _check_date_format

            for f in conf.get("formats", ()):
                try:
                    _check_date_format(name, f)
                except InputError as exc:
                    raise ctx.error(keys + ("formats",), str(exc)) from None
        if conf["type"] == "intervals" and isinstance(conf.get("widths"), list):  # (as dates: with the key's line)
            from tempanon.hierarchy.builders import check_interval_widths

            try:
                check_interval_widths(name, conf["widths"], conf.get("start", 0))
            except InputError as exc:
                bad_key = "start" if "start" in str(exc) else "widths"
                raise ctx.error(keys + (bad_key,), str(exc)) from None
        if conf["type"] == "masking" and isinstance(conf.get("levels"), int) and conf["levels"] < 0:
            raise ctx.error(keys + ("levels",), f"attribute {name!r}: masking levels must be >= 0, got {conf['levels']}")
        from tempanon.hierarchy import hierarchy_from_config

        try:
            hierarchies[name] = hierarchy_from_config(conf, where=ctx.where(keys))
        except JobError:
            raise
        except InputError as exc:
            raise JobError(str(exc)) from None
    missing = [q for q in qi_list if q not in hierarchies]
    if missing and spec0.hierarchies == "required":
        raise ctx.error(("hierarchies",), f"no hierarchy for quasi-identifier(s) {', '.join(missing)}")

    model = raw["model"]
    if not isinstance(model, dict):
        raise ctx.error(("model",), f"expected a table, got {_describe(model)}")
    name = model.get("name")
    if not isinstance(name, str):
        raise ctx.error(("model", "name") if "name" in model else ("model",), "give the model's name as a string, e.g. name = \"kanon\"")
    if name not in MODELS:
        raise ctx.error(("model", "name"), f"unknown model {name!r}; job files support: {', '.join(MODELS)}")
    spec = MODELS[name]
    _check_table(ctx, ("model",), {k: v for k, v in model.items() if k != "name"}, spec.schema, spec.required)
    if spec.validate is not None:
        spec.validate(ctx, model, qi_list)
    if name in ("kanon", "timestamped"):
        _validate_engine_keys(ctx, name, model, source)

    out = raw["output"]
    _check_table(ctx, ("output",), out, {k: v for k, v in OUTPUT_SCHEMA.items() if k in spec.outputs}, set(spec.required_outputs))
    return Job(
        ctx=ctx,
        source=source,
        quasi_identifiers=qi_list,
        identifying=list(cols.get("identifying", [])),
        sensitive=list(cols.get("sensitive", [])),
        uid=cols.get("uid"),
        hierarchies=hierarchies,
        model=name,
        params={k: v for k, v in model.items() if k != "name"},
        output_table=ctx.resolve(out["table"] if "table" in out else out["directory"]),
        summary=ctx.resolve(out["summary"]) if "summary" in out else None,
        report=ctx.resolve(out["report"]) if "report" in out else None,
        raw=raw,
        time=cols.get("time"),
        audit=ctx.resolve(out["audit"]) if "audit" in out else None,
        keep=list(cols.get("keep", [])),
        allow_identifier=list(cols.get("allow_identifier", [])),
    )


def _job_roles(job: Job) -> dict:
    """The columns the job names (:func:`read_source` reads only those of a Parquet file): ``[columns]``
    and the model's keys naming columns; quasi-identifiers (and ``publish_values``/``publish_patterns``)
    as ranges where the model parses them so (``column_ranges``), and not when they name time values
    (the long format)."""
    p = job.params
    long = "long_time" in p or "long_value" in p
    ranges = MODELS[job.model].column_ranges if job.model in MODELS else False

    def spec(cols):
        return None if not cols else ",".join(cols) if ranges else list(cols)

    return {"quasi_identifiers": None if long else spec(job.quasi_identifiers), "sensitive": list(job.sensitive or []),
            "identifying": list(job.identifying or []), "uid": [job.uid] if job.uid else None,
            "time": [job.time] if job.time else None, "keep": list(job.keep or []),
            "allow_identifier": list(job.allow_identifier or []),
            **{key: [p[key]] if isinstance(p.get(key), str) else None for key in ("long_time", "long_value")},
            **{key: None if long or not isinstance(p.get(key), list) else spec(p[key])
               for key in ("publish_values", "publish_patterns")}}  # fmt: skip


def read_source(job: Job) -> tuple[pd.DataFrame, str, str | None, str]:
    """Load the job's data: ``(frame, description, checksum, checksum kind)``."""
    from tempanon.data.io import read_table
    from tempanon.report.sections import file_sha256, frame_sha256

    src = job.source
    if "path" in src:
        # a Parquet file: only the columns given a role are read (the others are left out all the same)
        df = read_table(src["path"], as_text=True, delimiter=src.get("delimiter"), roles=_job_roles(job))
        return df, str(src["path"]), file_sha256(src["path"]), "SHA-256 of the input file"
    if "database" in src:
        df = read_table(src["database"], sql=src["sql"])
        return df, f"{src['database']}: {src['sql']}", frame_sha256(df), "SHA-256 of the query result (pandas row hashes)"
    from tempanon.data.io import read_table

    df = read_table(None, sql=src["sql"], postgres=src["postgres"])  # PostgreSQL through DuckDB
    return df, f"postgres: {src['sql']}", frame_sha256(df), "SHA-256 of the query result (pandas row hashes)"


# ---- models -----------------------------------------------------------------------------------
def _kanon_args(job: Job) -> dict:
    """The job's keyword arguments of :func:`tempanon.kanon.kanonymize` but the data, quasi-identifiers,
    hierarchies, k and engine (checked: a sensitive column needs l, l needs one sensitive column)."""
    p = job.params
    ctx = job.ctx
    l = p.get("l")
    if job.sensitive and l is None:
        raise ctx.error(("columns", "sensitive"), "a sensitive column in the kanon model needs [model] l (l-diverse classes)")
    if l is not None and len(job.sensitive) != 1:
        raise ctx.error(("model", "l"), "l-diversity needs exactly one [columns] sensitive column")
    if job.audit is not None and Path(os.path.realpath(job.audit)).parent == Path(os.path.realpath(job.output_table)).parent:
        # (as kanon --audit on every engine, and the engine route's kanonymize: refused on both routes alike)
        raise ctx.error(("output", "audit"), f"the audit {job.audit} is in the release's folder: it links release rows to "
                        "input lines and is for the data steward only; write it elsewhere")  # fmt: skip
    return dict(
        uid=job.uid,
        identifying=job.identifying,
        max_suppression=float(p.get("max_suppression", 0.0)),
        algorithm=p.get("algorithm", "incognito"),
        criterion=p.get("criterion", "loss"),
        weights=p.get("weights"),
        sensitive=job.sensitive[0] if l is not None else None,
        l=l,
        **{key: p[key] for key in ("l_diversity", "c", "max_nodes", "time_limit", "max_lattice") if key in p},
        keep=job.keep,
        allow_identifier=job.allow_identifier,
    )


def _run_kanon(job: Job, df: pd.DataFrame, source: SourceInfo, progress: Any) -> dict:
    from tempanon.kanon import kanonymize

    p = job.params
    res = kanonymize(df, job.quasi_identifiers, job.hierarchies, p["k"], progress=progress, **_kanon_args(job),
                     **({"engine": p["engine"]} if "engine" in p else {}))  # fmt: skip
    # kanonymize verified the release independently; build the report first, then write atomically
    rep = None
    if job.report is not None:
        from tempanon.report.kanon import kanon_report

        rep = kanon_report(df, res, source=source.description, checksum=source.checksum, checksum_kind=source.checksum_kind,
                           identifying=job.identifying)
    if job.audit is not None:  # the steward's audit: input line of every released row, the secret shuffle seed
        from tempanon.data.io import OutputSet
        from tempanon.kanon.command import audit_text

        if job.outputs is None:
            job.outputs = OutputSet()
        text = audit_text(res)
        job.outputs.stage(job.audit, lambda p_: p_.write_text(text, encoding="utf-8"), "[output] audit")
    summ = _write_outputs(job, res.table, res.summary(), rep, unchanged=res.unchanged_columns, input_text=df)
    summ["_result"] = res
    return summ


def _run_kanon_engine(job: Job, engine: str, source: SourceInfo, progress: Any, say: Callable[[str], None]) -> dict:
    """The ``kanon`` model on DuckDB or Spark over the input file (:func:`_run_on_engine`): the file read
    by the engine (:func:`tempanon.lattice.source.open_source`, as ``kanon --engine``), the job's columns
    checked against the engine's schema, the release and the audit written by the engine
    (:func:`tempanon.kanon.engine_command.release_on_engine`), the report from its aggregates."""
    from tempanon.kanon.engine_command import measure_release, release_on_engine
    from tempanon.lattice.source import open_source

    p = job.params
    path = job.source["path"]
    src = open_source(path, engine, delimiter=job.source.get("delimiter"), memory_limit=p.get("memory_limit"),
                      spark_master=p.get("spark_master"))
    try:
        _check_columns(job, _columns_frame(src.columns))
        args = _kanon_args(job)
        res = release_on_engine(src, job.quasi_identifiers, job.hierarchies, p["k"], progress=progress, warn=say,
                                uid_option="[columns] uid", input_path=path, out=str(job.output_table),
                                audit=None if job.audit is None else str(job.audit), **args)  # fmt: skip
        summ = res.summary()
        _risk, html = measure_release(
            src, res, job.output_table, engine, uid=job.uid, qi_cols=job.quasi_identifiers, risk=False,
            verification=summ.get("verification"),
            report=None if job.report is None else {"source": source.description, "checksum": source.checksum,
                                                    "checksum_kind": source.checksum_kind, "identifying": job.identifying})
    finally:
        src.close()
    summ = _write_outputs(job, None, summ, html)  # the release and audit are in place (verified): report and summary
    summ["_result"] = res
    return summ


def _validate_k_and_suppression(ctx: Ctx, model: dict) -> None:
    if model["k"] < 2:
        raise ctx.error(("model", "k"), f"k must be at least 2, got {model['k']}")
    ms = model.get("max_suppression", 0.0)
    if not 0 <= ms < 1:
        raise ctx.error(("model", "max_suppression"), f"must be a fraction in [0, 1), got {ms}")


def _validate_kanon(ctx: Ctx, model: dict, qi: list[str]) -> None:
    from tempanon.kanon.search import ALGORITHMS
    from tempanon.kanon.select import CRITERIA

    _validate_k_and_suppression(ctx, model)
    if "l" in model and model["l"] < 2:
        raise ctx.error(("model", "l"), f"l must be at least 2, got {model['l']}")
    if model.get("algorithm", "incognito") not in ALGORITHMS:
        raise ctx.error(("model", "algorithm"), f"unknown algorithm {model['algorithm']!r}; expected one of {', '.join(ALGORITHMS)}")
    if model.get("criterion", "loss") not in CRITERIA:
        raise ctx.error(("model", "criterion"), f"unknown criterion {model['criterion']!r}; expected one of {', '.join(CRITERIA)}")
    for name, w in model.get("weights", {}).items():
        if name not in qi:
            raise ctx.error(("model", "weights", name), f"weight for {name!r}, which is not a quasi-identifier ({', '.join(qi)})")
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
            raise ctx.error(("model", "weights", name), f"expected a non-negative number, got {_describe(w)}")
    if model.get("weights") and model.get("criterion", "loss") != "weighted-height":
        raise ctx.error(("model", "weights"), f"weights are used by the criterion weighted-height only, not by "
                                              f"{model.get('criterion', 'loss')!r} (the default is 'loss'): add "
                                              f"criterion = \"weighted-height\" or remove the weights")


def _write_outputs(job: Job, table: pd.DataFrame | None, summ: dict, rep: Any, extra: Mapping[Path, pd.DataFrame] | None = None,
                   *, unchanged: Sequence[str] = (), input_text: pd.DataFrame | None = None) -> dict:
    """Stage the verified table (and extra tables), the report (or its rendered HTML) and the summary in the run's
    :class:`~tempanon.data.io.OutputSet` and commit them together. ``unchanged``: the table's columns
    released unchanged; with ``input_text`` (the input as read) a Parquet table of a Parquet ``[input]
    path`` writes them with the input's types (:func:`tempanon.data.io.typed_release`), as the
    commands do."""
    from tempanon.data.io import OutputSet

    outs = job.outputs if job.outputs is not None else OutputSet()
    if job.before_write is not None:  # (the respondent-id warning: said before any output is written)
        job.before_write()
        job.before_write = None
    summ = {**summ, "job": str(job.ctx.path), "output": str(job.output_table)}
    if job.audit is not None:
        summ["audit"] = str(job.audit)
    with outs:
        if table is not None:
            like = job.source.get("path") if unchanged else None
            outs.table(table, job.output_table, "[output] table", like=like, unchanged=unchanged, input_text=input_text)
        for path, frame in (extra or {}).items():  # a table, or a writer ``write(tmp_path)``
            label = "[output] audit" if path == job.audit else "output"
            if callable(frame):
                outs.stage(path, frame, label)
            else:
                outs.table(frame, path, label)
        if isinstance(rep, str):  # rendered already (the engine route's report, from its aggregates)
            outs.stage(job.report, lambda p_: Path(p_).write_text(rep, encoding="utf-8"), "[output] report")
            summ["report"] = str(job.report)
        elif rep is not None:
            from tempanon.report.sections import add_verification

            if "verification" not in rep.section_keys():
                add_verification(rep, summ.get("verification"))
            outs.stage(job.report, rep.write, "[output] report")
            summ["report"] = str(job.report)
        if job.summary is not None:
            outs.json(summ, job.summary, "[output] summary")
        outs.commit()
    return summ


def _parameter_error(job: Job, keys: tuple[str, ...], exc: InputError) -> JobError:
    return job.ctx.error(keys, str(exc))


# -- timestamped data (tempanon.temporal, Mascetti et al. TIME 2006) --
_TS_INCOGNITO = ("height", "loss", "discernibility")


def _timestamped_parts(ctx: Ctx, model: dict):
    from tempanon.temporal.granularity import parse_parts

    try:
        return parse_parts(model.get("day_parts"))
    except InputError as exc:
        raise ctx.error(("model", "day_parts"), str(exc)) from None


def _validate_timestamped(ctx: Ctx, model: dict, qi: list[str]) -> None:
    from tempanon.temporal.api import parse_granularities
    from tempanon.temporal.least import METRICS

    _validate_k_and_suppression(ctx, model)
    metric = model.get("metric", "gen_c")
    if metric not in METRICS + _TS_INCOGNITO:
        raise ctx.error(("model", "metric"), f"unknown metric {metric!r}; expected one of {', '.join(METRICS)} "
                        f"(or {', '.join(_TS_INCOGNITO)} with hierarchies for the other quasi-identifiers)")
    parts = _timestamped_parts(ctx, model)
    from tempanon.temporal.parse import check_date_order, check_timezone

    for key, check in (("timezone", check_timezone), ("date_order", check_date_order)):
        if key in model:
            try:
                check(model[key])
            except InputError as exc:
                raise ctx.error(("model", key), str(exc)) from None
    date_order = model.get("date_order", "auto")  # (boundary files' dates: the order of the time column's)
    try:  # (warn=False: a boundary file's note, an undecided date order, is the run's to give, in its summary)
        parse_granularities(model.get("granularities"), country=model.get("country"), parts=parts, date_order=date_order,
                            warn=False)  # fmt: skip
    except InputError as exc:
        raise ctx.error(("model", "granularities") if "granularities" in model else ("model",), str(exc)) from None
    if "engine" in model:
        from tempanon.lattice.source_temporal import resolve_time_engine

        try:
            resolve_time_engine(model["engine"])
        except InputError as exc:
            raise ctx.error(("model", "engine"), str(exc)) from None
    if "data_granularity" in model:
        from tempanon.temporal.granularity import parse_granularity

        try:
            parse_granularity(model["data_granularity"], country=model.get("country"), parts=parts, date_order=date_order,
                              warn=False)  # fmt: skip
        except InputError as exc:
            raise ctx.error(("model", "data_granularity"), str(exc)) from None


def _timestamped_args(job: Job, check: bool = True) -> dict:
    """The job's keyword arguments of :func:`tempanon.temporal.api.anonymize_timestamped` (and of
    :func:`tempanon.temporal.outofcore.anonymize_timestamped_file`) but the data, engine and progress
    (``check``: checked by :func:`_check_timestamped_roles` first)."""
    p, ctx = job.params, job.ctx
    if check:
        _check_timestamped_roles(job)
    roles = {"keep": job.keep, "allow_identifier": job.allow_identifier, "sensitive": job.sensitive}
    return dict(
        time=job.time, qi=job.quasi_identifiers, k=p["k"], uid=job.uid, granularities=p.get("granularities"),
        metric=p.get("metric", "gen_c"), max_suppression=float(p.get("max_suppression", 0.0)),
        data_granularity=p.get("data_granularity"), country=p.get("country"), parts=_timestamped_parts(ctx, p),
        hierarchies=job.hierarchies or None, timezone=p.get("timezone"), time_limit=p.get("time_limit"),
        date_order=p.get("date_order", "auto"), **roles,
    )  # fmt: skip


def _check_timestamped_roles(job: Job) -> None:
    """The job's roles for the ``timestamped`` model: the time is no quasi-identifier, the uid neither, a
    hierarchy metric has hierarchies. After the columns are checked against the input's
    (:func:`_check_columns`), on every engine: a job with several problems is refused for the same one."""
    p, ctx = job.params, job.ctx
    if job.time in job.quasi_identifiers:
        raise ctx.error(("columns", "time"), f"the time column {job.time!r} is generalized by granularities; do not list it in quasi_identifiers")
    if job.uid is not None and job.uid in job.quasi_identifiers + [job.time]:
        raise ctx.error(("columns", "uid"), f"the respondent id {job.uid!r} cannot also be a quasi-identifier or the time")
    metric = p.get("metric", "gen_c")
    if metric in _TS_INCOGNITO and not job.hierarchies:
        raise ctx.error(("model", "metric"), f"metric {metric!r} needs hierarchies for the other quasi-identifiers; use gen_c, gen_m or gen_s")


def _run_timestamped(job: Job, df: pd.DataFrame, source: SourceInfo, progress: Any) -> dict:
    from tempanon.temporal.api import anonymize_timestamped

    p = job.params
    args = _timestamped_args(job)
    # direct identifiers are removed (the API's drop, as the engine route's: a frame read with only the role
    # columns of a Parquet file keeps the file's columns for the summary's left_out)
    res = anonymize_timestamped(df, progress=progress, engine=p.get("engine", "auto"),
                                drop=[c for c in job.identifying if c != job.uid], **args)
    # verified inside (tempanon.verify.check_timestamped_release)
    rep = None
    if job.report is not None:  # built before anything is written
        from tempanon.report.timestamped import timestamped_report

        rep = timestamped_report(df, res, source=source.description, checksum=source.checksum, checksum_kind=source.checksum_kind,
                                 identifying=job.identifying)
    summ = _write_outputs(job, res.released, res.summary, rep, unchanged=res.unchanged_columns, input_text=df)
    if job.audit is not None:  # (its path checked before anything was read: _output_set)
        from tempanon.temporal.api import write_audit

        write_audit(res, job.audit)
        summ["audit"] = str(job.audit)
    return _timestamped_status(job, res, summ)


def _timestamped_status(job: Job, res: Any, summ: dict) -> dict:
    """The ``timestamped`` run's status line (``_status``) and search lines (``_verbose``) in ``summ``."""
    s = res.summary
    gran = s["granularity"]
    if isinstance(gran, dict):  # joint: {time: granularity, qi: level}
        gran = f"{gran[job.time]} (" + ", ".join(f"{q} at level {v}" for q, v in gran.items() if q != job.time) + ")"
    summ["_status"] = (f"timestamped: respondent-level k={s['k']} with time as {gran}; gen_m {s['gen_m']}, "
                       f"gen_s {s['gen_s']}; {s['suppressed']} of {s['tuples']} tuples suppressed"
                       + _date_order_note((s.get("timestamps") or {}).get("date_order_note"))
                       + "".join(f"\nnote: {n}" for n in res.boundary_notes))  # (undecided boundary files, in the summary too)
    from tempanon.report.timestamped import search_lines

    summ["_verbose"] = search_lines(s)
    return summ


def _run_timestamped_engine(job: Job, engine: str, source: SourceInfo, progress: Any, say: Callable[[str], None]) -> dict:
    """The ``timestamped`` model on DuckDB or Spark over the input file (:func:`_run_on_engine`): the API
    of ``timestamped --engine duckdb|spark`` (:func:`tempanon.temporal.outofcore.anonymize_timestamped_file`:
    the file read by the engine, the job's columns checked against its schema, the release and the audit
    written, verified and renamed by the engine), the report from the engine's measures."""
    from tempanon.temporal.outofcore import anonymize_timestamped_file

    args = _timestamped_args(job, check=False)  # (the roles checked after the columns, as the in-memory route does)

    def check_columns(cols: list[str]) -> None:
        _check_columns(job, _columns_frame(cols))
        _check_timestamped_roles(job)

    res = anonymize_timestamped_file(
        job.source["path"], out=str(job.output_table), engine=engine, delimiter=job.source.get("delimiter"),
        memory_limit=job.params.get("memory_limit"), spark_master=job.params.get("spark_master"), progress=progress,
        warn=say, uid_option="[columns] uid", check_columns=check_columns,
        drop=[c for c in job.identifying if c != job.uid], audit=None if job.audit is None else str(job.audit),
        measures=job.report is not None, **args,
    )  # fmt: skip
    html = None
    if job.report is not None:  # from the engine's measures of the input and of the release as written
        from tempanon.kanon.engine_command import report_failed
        from tempanon.report.sections import add_verification
        from tempanon.report.timestamped import timestamped_report_from_measures

        try:
            rep = timestamped_report_from_measures(res, source=source.description, checksum=source.checksum,
                                                   checksum_kind=source.checksum_kind, identifying=job.identifying)
            add_verification(rep, res.summary.get("verification"))
            html = rep.render()
        except Exception as exc:  # said plainly (exit 4), no traceback; the verified release stays
            raise report_failed(job.output_table, engine, "the report", exc) from exc
    summ = _write_outputs(job, None, res.summary, html)  # the release and audit are in place (verified)
    return _timestamped_status(job, res, summ)


def _date_order_note(note: str | None) -> str:
    """The status line's note when the date order was undecided (``auto`` read every numeric date month
    first; the parser's ``date_order_note``, none otherwise), with the job file's key."""
    return f"\nnote: {note}; in the job file: date_order = \"day\"" if note else ""


# -- time series (tempanon.timeseries, (k,P)-anonymity, Shou et al. TKDE) --
def _validate_kp(ctx: Ctx, model: dict, qi: list[str]) -> None:
    from tempanon.timeseries.api import ALGORITHMS
    from tempanon.timeseries.sax import MAX_LEVEL

    k, P = model["k"], model["p"]
    # the API's bounds and words (tempanon.timeseries.api._check_params), said here with the key and line
    if k < 2:
        raise ctx.error(("model", "k"), f"k must be at least 2, got {k} (k = 1 publishes every series' exact values)")
    if P < 2:
        raise ctx.error(("model", "p"), f"P must be at least 2, got {P} (P = 1 publishes each series' own pattern; "
                                        "Section 4.2.1 needs P > 1/thr > 1)")
    if P > k:
        raise ctx.error(("model", "p"), f"P must not exceed k (Definition 5 needs P <= k), got P={P} > k={k}")
    if model.get("algorithm", "kapra") not in ALGORITHMS:
        raise ctx.error(("model", "algorithm"), f"unknown algorithm {model['algorithm']!r}; expected one of {', '.join(ALGORITHMS)}")
    if not 1 <= model.get("max_level", 5) <= MAX_LEVEL:
        raise ctx.error(("model", "max_level"), f"must be in 1..{MAX_LEVEL}, got {model['max_level']}")
    if model.get("paa", 1) < 1:
        raise ctx.error(("model", "paa"), f"must be at least 1, got {model['paa']}")
    if "l_diversity" in model:
        if model["l_diversity"] < 2:
            raise ctx.error(("model", "l_diversity"), f"l must be at least 2, got {model['l_diversity']} (l = 1 changes nothing)")
        if model["l_diversity"] > P:
            raise ctx.error(("model", "l_diversity"), f"l-diversity needs l <= P (each P-subgroup must hold l values), "
                                                      f"got l={model['l_diversity']} > P={P}")
        if "epsilon" not in model:
            raise ctx.error(("model", "l_diversity"), "l-diversity needs 'epsilon' (the largest change of a perturbed sensitive value)")
    if "epsilon" in model and not model["epsilon"] > 0:
        raise ctx.error(("model", "epsilon"), f"must be positive, got {model['epsilon']}")
    if "epsilon" in model and "l_diversity" not in model:  # (ignored before, as kp_anonymize and --epsilon did)
        raise ctx.error(("model", "epsilon"), "epsilon is the largest change of a sensitive value perturbed for "
                                              "l-diversity: give it with l_diversity, or leave it out")  # fmt: skip
    if "date_order" in model:  # how the long format's times are read (numeric dates)
        from tempanon.temporal.parse import check_date_order

        if "long_time" not in model:
            raise ctx.error(("model", "date_order"), "date_order is for the long format (long_time): how its times' "
                            "numeric dates are read")  # fmt: skip
        try:
            check_date_order(model["date_order"])
        except InputError as exc:
            raise ctx.error(("model", "date_order"), str(exc)) from None


def _prepare_kp(job: Job, df: pd.DataFrame) -> pd.DataFrame:
    from tempanon.timeseries.longformat import job_prepare  # [model] long_time/long_value: long format

    return job_prepare(job, df)


def _run_kp(job: Job, df: pd.DataFrame, source: SourceInfo, progress: Any) -> dict:
    from tempanon.timeseries.api import kp_anonymize

    p, ctx = job.params, job.ctx
    if job.audit is not None:  # steward-only audit (id -> release row), never in the release folder (issue 12)
        from tempanon.temporal.api import check_audit_path

        try:
            check_audit_path(job.audit, job.output_table, [job.summary, job.report])
        except InputError as exc:
            raise ctx.error(("output", "audit"), str(exc)) from None
    for key in ("publish_values", "publish_patterns"):
        if key in p:
            from tempanon.data.roles import parse_column_list

            try:
                p = {**p, key: parse_column_list(",".join(p[key]), list(df.columns))}
            except InputError as exc:
                raise _parameter_error(job, ("model", key), exc) from None
            other = [c for c in p[key] if c not in job.quasi_identifiers]
            if other:
                raise ctx.error(("model", key), f"{', '.join(map(repr, other))} is not a quasi-identifier ({', '.join(job.quasi_identifiers)})")
    try:
        res = kp_anonymize(
            df, id_col=job.uid, qi=job.quasi_identifiers, k=p["k"], P=p["p"], sensitive=job.sensitive,
            algorithm=p.get("algorithm", "kapra"), max_level=p.get("max_level", 5), paa_segments=p.get("paa"),
            l_diversity=p.get("l_diversity"), epsilon=p.get("epsilon"), publish_values=p.get("publish_values"),
            publish_patterns=p.get("publish_patterns"), na_values=p.get("na_values"), missing=p.get("missing", "refuse"),
            numeric_sensitive=p.get("sensitive_numeric", False),
            progress=progress, keep=job.keep, drop=job.identifying, allow_identifier=job.allow_identifier,
        )  # verified inside (tempanon.verify.check_kp_anonymity)
    except InputError as exc:
        if "PAA" in str(exc) and "paa" in p:
            raise _parameter_error(job, ("model", "paa"), exc) from None
        raise
    rep = None
    if job.report is not None:  # built before anything is written
        from tempanon.report.kp import kp_report

        rep = kp_report(df, res, id_col=job.uid, qi=job.quasi_identifiers, sensitive=job.sensitive, source=source.description,
                        checksum=source.checksum, checksum_kind=source.checksum_kind)
    from tempanon.timeseries.api import write_kp_audit

    # the audit says in the file itself that it is for the steward only (as the CLI writes it)
    extra = {job.audit: (lambda p_: write_kp_audit(res, p_))} if job.audit is not None else {}
    if df.attrs.get("time_order"):  # the long format: how its times were ordered, as `tempanon kp --long` says it
        res.summary["time_order"] = df.attrs["time_order"]
        if df.attrs.get("date_order"):
            res.summary["date_order"] = f"{df.attrs['date_order']} first"
    summ = _write_outputs(job, res.released, res.summary, rep, extra)
    s = res.summary
    summ["_status"] = (f"kp ({s['algorithm']}): k={s['k']}, P={s['P']}; {s['published']} of {s['series']} series published in "
                       f"{s['kgroups']} k-groups / {s['psubgroups']} P-subgroups; VL {s['value_loss']:.4g}, PL {s['pattern_loss']:.4g}"
                       + _date_order_note(df.attrs.get("date_order_note")))  # (the long format's times)
    return summ


# -- snapshot streams (tempanon.stream, Wang et al. ICDM 2010) --
def _validate_stream(ctx: Ctx, model: dict, qi: list[str]) -> None:
    from tempanon.stream.api import make_cost
    from tempanon.stream.model import validate_defer, validate_l, validate_step, validate_window
    from tempanon.stream.snapshots import validate_granule
    from tempanon.temporal.parse import check_date_order, check_timezone

    for key, check in (("l", validate_l), ("window", validate_window), ("defer", validate_defer), ("step", validate_step),
                       ("timezone", check_timezone), ("date_order", check_date_order)):
        if key not in model:
            continue
        try:
            check(model[key])
        except InputError as exc:
            raise ctx.error(("model", key), str(exc)) from None
    if "snapshot" in model:
        try:
            validate_granule(model["snapshot"])
        except InputError as exc:
            raise ctx.error(("model", "snapshot"), str(exc)) from None
    if str(model.get("snapshot", "")).strip().lower() == "number":
        from tempanon.stream.api import _check_number_options

        for key in ("timezone", "date_order"):
            try:
                _check_number_options("number", model.get("timezone") if key == "timezone" else None,
                                      check_date_order(model.get("date_order")) if key == "date_order" else "auto")
            except InputError as exc:
                raise ctx.error(("model", key), str(exc).replace("--timezone", "timezone").replace("--date-order", "date_order")
                                .replace("--snapshot number", 'snapshot = "number"')) from None
    if isinstance(model.get("window"), int):
        from tempanon.stream.api import DEFAULT_MAX_SNAPSHOTS, _check_window_span

        try:
            _check_window_span(model["window"], DEFAULT_MAX_SNAPSHOTS)
        except InputError as exc:
            raise ctx.error(("model", "window"), str(exc)) from None
    if model.get("step") == "paper" and "defer" in model and validate_defer(model["defer"]) > 0:
        # (said by StreamPublisher without the key and its line)
        raise ctx.error(("model", "defer"), "step 'paper' prices every suppression at beta (Definition 2): defer must be 0 with it")
    if isinstance(model.get("seed"), int) and model["seed"] < 0:
        raise ctx.error(("model", "seed"), f"seed must be an integer >= 0, got {model['seed']}")
    beta = model.get("suppression_cost", 10.0)
    if isinstance(beta, dict):
        for value, c in beta.items():
            if isinstance(c, bool) or not isinstance(c, (int, float)):
                raise ctx.error(("model", "suppression_cost", value), f"expected a number, got {_describe(c)}")
        beta = {k: float(v) for k, v in beta.items()}
    try:
        make_cost(model.get("cost", "linear"), model["window"], beta)
    except InputError as exc:
        raise ctx.error(("model", "cost") if "cost" in model else ("model", "suppression_cost"), str(exc)) from None


def _run_stream(job: Job, df: pd.DataFrame, source: SourceInfo, progress: Any) -> dict:
    from tempanon.data.io import OutputSet
    from tempanon.data.screen import refuse_identifiers
    from tempanon.stream.api import anonymize_stream
    from tempanon.stream.release_files import anatomy_files, earlier_release_files, stage_release

    p, ctx = job.params, job.ctx
    if len(job.sensitive) != 1:
        raise ctx.error(("columns", "sensitive"), f"the stream model protects exactly one sensitive column, got {len(job.sensitive)}")
    sens = job.sensitive[0]
    if not job.quasi_identifiers:
        raise ctx.error(("columns", "quasi_identifiers"), "name the quasi-identifiers (no longer every other column)")
    if job.keep:
        raise ctx.error(("columns", "keep"), "the stream model publishes only its quasi-identifiers (QIT) and the sensitive column (ST); list columns to publish as quasi-identifiers")
    qi = list(job.quasi_identifiers)
    # Anatomy publishes the quasi-identifiers exactly (QIT): screen them like any unchanged column
    overrides = refuse_identifiers(df, qi, allow=job.allow_identifier, time=job.time)
    beta = p.get("suppression_cost", 10.0)
    if isinstance(beta, dict):  # (anonymize_stream says it too, without the key and its line)
        present = set(df[sens].dropna().astype(str)) if sens in df.columns else None
        for value in beta:
            if present is not None and value != "default" and value not in present:
                raise ctx.error(("model", "suppression_cost", value),
                                f"suppression cost given for value {value!r}, which does not occur in column {sens!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TempanonWarning)  # reported in the status line from the summary
        res = anonymize_stream(
            df, time=job.time, sensitive=sens, l=p["l"], w=p["window"], qi=qi, snapshot=p.get("snapshot", "day"),
            cost=p.get("cost", "linear"), suppression_cost={k: float(v) for k, v in beta.items()} if isinstance(beta, dict) else float(beta),
            seed=p.get("seed", 0), progress=progress, **({"defer": p["defer"]} if "defer" in p else {}),
            **({"step": p["step"]} if "step" in p else {}), timezone=p.get("timezone"),
            date_order=p.get("date_order", "auto"), allow_identifier=job.allow_identifier,
        )  # every snapshot verified inside (tempanon.verify.check_anatomy)
    rep = None
    if job.report is not None:  # built before anything is written
        from tempanon.report.stream import stream_report

        rep = stream_report(df, res, source=source.description, checksum=source.checksum, checksum_kind=source.checksum_kind)
    out = job.output_table
    if out.exists() and not out.is_dir():
        raise ctx.error(("output", "directory"), f"{out} exists and is not a directory")
    outs = job.outputs if job.outputs is not None else OutputSet()
    with outs:
        # the same folder as `tempanon stream` writes: a pair of files per snapshot with records; an
        # earlier release's files that this one does not rewrite leave with the commit
        try:
            earlier = earlier_release_files(out, _job_inputs(job), label=f"{ctx.where(('output', 'directory'))}: directory")
        except InputError as exc:
            raise JobError(str(exc)) from None
        stage_release(outs, out, anatomy_files(res), earlier)
        job.outputs = outs
        from tempanon.data.roles import verification_statement

        from tempanon.data.io import table_columns

        left_out = [c for c in table_columns(df) if c not in {*qi, sens, job.time, *job.identifying}]
        statement = verification_statement(f"{p['l']}-diversity (Anatomy) of {sens!r} in every published snapshot",
                                           [*qi, sens], overrides=overrides, left_out=left_out, dropped=job.identifying)
        files_written = sum(1 for snap in res.published if snap.size)  # as `tempanon stream` counts them
        summ = _write_outputs(job, None, {**res.summary, "left_out": left_out, "verification": statement,
                                          "files_written": files_written}, rep,
                              {job.audit: res.audit[["row", "snapshot", "published", "distance"]]} if job.audit is not None else None)
    s = res.summary
    summ["_status"] = (f"stream: l={s['l']}, window {s['window']}; {s['snapshots']} snapshots of {s['records']} records: "
                       f"{s['suppressed']} suppressed, {s['repositioned']} repositioned (max {s['max_reposition_distance']}), "
                       f"information loss {s['information_loss']:g}"
                       + "".join(f"\nwarning: {m}" for m in s.get("warnings", [])))
    return summ


_STREAM_SPEC = ModelSpec(
    schema={"l": "integer", "window": "integer", "snapshot": "string", "cost": "string", "suppression_cost": "number or table",
            "seed": "integer", "defer": "number or boolean", "step": "string", "timezone": "string", "date_order": "string"},
    required={"l", "window"},
    run=_run_stream,
    description="l-diverse snapshot stream with bounded delay (Anatomy, Wang et al.)",
    validate=_validate_stream,
    columns=frozenset({"quasi_identifiers", "identifying", "sensitive", "time", "allow_identifier", "keep"}),
    required_columns=frozenset({"time", "sensitive", "quasi_identifiers"}),
    hierarchies="none",
    outputs=frozenset({"directory", "summary", "report", "audit"}),
    required_outputs=frozenset({"directory"}),
)


MODELS: dict[str, ModelSpec] = {
    "kanon": ModelSpec(
        schema={"k": "integer", "max_suppression": "number", "algorithm": "string", "criterion": "string", "weights": "table",
                "l": "integer", "l_diversity": "string", "c": "number", "max_nodes": "integer", "time_limit": "number",
                "max_lattice": "integer", "engine": "string", "memory_limit": "string", "spark_master": "string"},
        required={"k"},
        run=_run_kanon,
        description="full-domain k-anonymity (Incognito)",
        validate=_validate_kanon,
        outputs=_BASE_OUTPUTS | {"audit"},
    ),
    "timestamped": ModelSpec(
        schema={"k": "integer", "granularities": "list of strings", "metric": "string", "max_suppression": "number",
                "data_granularity": "string", "country": "string", "day_parts": "string", "timezone": "string",
                "time_limit": "number", "engine": "string", "date_order": "string", "memory_limit": "string",
                "spark_master": "string"},
        required={"k"},
        run=_run_timestamped,
        description="respondent-level k-anonymity of timestamped data over time granularities (Mascetti et al.)",
        validate=_validate_timestamped,
        columns=_BASE_COLUMNS | {"time"},
        required_columns=frozenset({"time"}),
        hierarchies="optional",
        outputs=_BASE_OUTPUTS | {"audit"},
    ),
    "kp": ModelSpec(
        schema={"k": "integer", "p": "integer", "algorithm": "string", "max_level": "integer", "paa": "integer",
                "l_diversity": "integer", "epsilon": "number", "publish_values": "list of strings", "publish_patterns": "list of strings",
                "long_time": "string", "long_value": "string", "na_values": "list of strings", "missing": "string",
                "sensitive_numeric": "boolean", "date_order": "string"},
        required={"k", "p"},
        run=_run_kp,
        description="(k,P)-anonymity of time series (KAPRA / Naive, Shou et al.)",
        validate=_validate_kp,
        required_columns=frozenset({"quasi_identifiers", "uid"}),
        hierarchies="none",
        outputs=_BASE_OUTPUTS | {"audit"},
        column_ranges=True,
        prepare=_prepare_kp,
    ),
    "stream": _STREAM_SPEC,
}


def _job_inputs(job: Job) -> list:
    """The job's input files: the job file, the data file or database, the hierarchy files."""
    inputs = [job.ctx.path, job.source.get("path"), job.source.get("database")]
    for conf in (job.raw.get("hierarchies") or {}).values():
        path = conf if isinstance(conf, str) else conf.get("path") if isinstance(conf, dict) else None
        if path:
            inputs.append(job.ctx.resolve(path))
    return inputs


def _output_set(job: Job):
    """The job's outputs, checked against its inputs (job file, data file, hierarchy files) and
    each other; an audit may not be written inside the release directory."""
    from tempanon.data.io import OutputSet
    from tempanon.stream.release_files import earlier_release_files

    inputs = _job_inputs(job)
    outputs = {"[output] summary": job.summary, "[output] report": job.report, "[output] audit": job.audit}
    if job.model == "stream":
        outs = OutputSet(inputs, outputs, directories={"[output] directory": job.output_table})
        d = Path(os.path.realpath(job.output_table))
        for label, p in outputs.items():
            if p is not None and d in Path(os.path.realpath(p)).parents:
                raise job.ctx.error(("output", label[9:]), f"{p} is inside the release directory {job.output_table}; "
                                    "steward-only files may not be written inside the release")  # fmt: skip
        try:  # a folder holding anything but an earlier release is refused before anything is read
            earlier_release_files(job.output_table, inputs, label=f"{job.ctx.where(('output', 'directory'))}: directory")
        except InputError as exc:
            raise JobError(str(exc)) from None
        return outs
    spark = job.params.get("engine") == "spark"  # Spark writes the table as a directory of part files
    outs = OutputSet(inputs, {"[output] table": job.output_table, **outputs}, spark_releases={"[output] table"} if spark else (),
                     tables={"[output] table"})
    if job.model == "timestamped" and job.audit is not None:
        # steward-only audit (release row -> input line, respondent), never in the release folder: refused here,
        # before anything is read, on every engine (the in-memory route refused it only after the search, the
        # engines before reading: an input with another problem was refused for a different one)
        from tempanon.temporal.api import check_audit_path

        try:
            check_audit_path(job.audit, job.output_table, [job.summary, job.report])
        except InputError as exc:
            raise job.ctx.error(("output", "audit"), str(exc)) from None
    return outs


def run_job(job: Job, progress: Any = None, warn: Callable[[str], None] | None = None) -> dict:
    """Load the data, run the model, write the verified outputs; returns the summary dict.

    ``warn`` receives each warning line (``warning: ...``: a column that reads like a respondent id
    without ``[columns] uid``) before any output is written; without it they come back in the
    summary's ``_warnings``. A ``kanon`` or ``timestamped`` job on an ``[input] path`` with ``engine =
    "duckdb"`` or ``"spark"`` never reads the table into pandas: the engine reads the file, as the
    commands' ``--engine duckdb|spark`` (:func:`_run_on_engine`)."""
    said: list[str] = []
    say = warn if warn is not None else said.append
    job.outputs = _output_set(job)  # every output checked against the inputs before anything is read
    if "path" in job.source:  # a nested Parquet column (list, struct, map) with a role: refused before any row is read
        from tempanon.data.io import refuse_nested_columns

        p = job.params
        try:
            refuse_nested_columns(job.source["path"], {
                "[columns] quasi_identifiers": None if "long_time" in p else job.quasi_identifiers,  # (long: time values)
                "[columns] sensitive": job.sensitive,
                "[columns] uid": [job.uid] if job.uid else None, "[columns] time": [job.time] if job.time else None,
                "[columns] keep": job.keep, "[columns] allow_identifier": job.allow_identifier,
                "[model] long_time": [p["long_time"]] if isinstance(p.get("long_time"), str) else None,
                "[model] long_value": [p["long_value"]] if isinstance(p.get("long_value"), str) else None})  # fmt: skip
        except InputError as exc:
            raise JobError(f"{job.ctx.where(('columns',))}: {exc}") from None
    engine = _file_engine(job)
    if engine is not None:
        summ = _run_on_engine(job, engine, progress, say)
    else:
        summ = _run_in_memory(job, progress, say)
    if said:
        summ["_warnings"] = said
    return summ


def _run_in_memory(job: Job, progress: Any, say: Callable[[str], None]) -> dict:
    """:func:`run_job` with the table read into pandas (:func:`read_source`)."""
    df, desc, checksum, kind = read_source(job)
    spec = MODELS[job.model]
    if spec.prepare is not None:
        df = spec.prepare(job, df)
    if spec.column_ranges:
        from tempanon.data.roles import parse_column_list

        try:
            job.quasi_identifiers = parse_column_list(",".join(job.quasi_identifiers), list(df.columns))
        except InputError as exc:
            raise JobError(f"{job.ctx.where(('columns', 'quasi_identifiers'))}: {exc}") from None
    _check_columns(job, df)
    hint = _respondent_id_hint(job, df)
    if hint:  # said before the first output is written (_write_outputs), as the commands say it
        job.before_write = lambda: say(f"warning: {hint}")
    try:
        return spec.run(job, df, SourceInfo(desc, checksum, kind), progress)
    except Exception as exc:  # a DuckDB error not classified on its way: the input's (exit 2) or the engine's (exit 4)
        duckdb = sys.modules.get("duckdb")  # as kanon and timestamped --engine duckdb (source_duckdb.engine_error)
        if duckdb is not None and isinstance(exc, duckdb.Error):
            from tempanon.lattice.source_duckdb import engine_error

            raise engine_error(job.source.get("path"), exc) from exc
        raise
    finally:
        job.before_write = None


def _check_columns(job: Job, df: pd.DataFrame) -> None:
    """The job's columns against the input's (``df``: the table, or an empty frame with the columns of
    the file as the engine reads them): the time, every role, ``allow_identifier``, the uid."""
    from tempanon.data.roles import ColumnRoles, require_columns

    if job.time is not None and job.time not in df.columns:
        raise job.ctx.error(("columns", "time"), f"unknown column {job.time!r}; the input has columns: {', '.join(map(str, df.columns))}"
                            + delimiter_hint(df.columns))
    try:
        ColumnRoles(job.quasi_identifiers + ([job.time] if job.time else []), job.identifying, job.sensitive,
                    job.keep, [job.uid] if job.uid else []).validate(df)
        require_columns(df, job.allow_identifier, role="allow_identifier column")
    except InputError as exc:
        raise JobError(f"{job.ctx.where(('columns',))}: {exc}") from None
    if job.uid is not None and job.uid not in df.columns:
        raise job.ctx.error(("columns", "uid"), f"unknown column {job.uid!r}; the input has columns: {', '.join(map(str, df.columns))}"
                            + delimiter_hint(df.columns))


def _resolved_engine(model_name: str, model: Mapping[str, Any], path: Any) -> str:
    """The engine a ``kanon`` or ``timestamped`` job's ``[model] engine`` means, as the command resolves
    its ``--engine``: ``auto`` is DuckDB with a ``memory_limit``, and for ``kanon`` also for a file from
    :data:`tempanon.lattice.source.AUTO_DUCKDB_BYTES` on (:func:`tempanon.lattice.source.resolve_engine`;
    ``timestamped``: :func:`tempanon.lattice.source_temporal.resolve_time_engine`)."""
    engine, limit = model.get("engine", "auto"), model.get("memory_limit")
    if model_name == "kanon":
        from tempanon.lattice.source import resolve_engine

        return resolve_engine(path if path is not None else pd.DataFrame(), engine, limit)
    return "duckdb" if engine == "auto" and limit is not None else ("numpy" if engine == "auto" else engine)


def _validate_engine_keys(ctx: Ctx, model_name: str, model: Mapping[str, Any], source: Mapping[str, Any]) -> None:
    """``[model] memory_limit`` and ``spark_master``, checked as ``--memory-limit`` and ``--spark-master``
    are (:func:`tempanon.lattice.memory.check_memory_limit`) before anything is read: a limit bounds an
    engine that reads the ``[input] path`` itself (DuckDB; Spark's local driver), so it needs a file input
    (a query's or a spreadsheet's table is held by pandas) and not ``engine = "numpy"``; a Spark master
    needs ``engine = "spark"``."""
    from tempanon.lattice.memory import check_memory_limit

    if "spark_master" in model and model.get("engine") != "spark":
        raise ctx.error(("model", "spark_master"), "spark_master needs engine = \"spark\"")
    if "memory_limit" not in model:
        return
    path = source.get("path")
    if path is None:
        raise ctx.error(("model", "memory_limit"), "memory_limit bounds an engine that reads an [input] path itself; a "
                        "query's result is held in memory by pandas: leave memory_limit out")  # fmt: skip
    from tempanon.data.excel import is_spreadsheet

    if is_spreadsheet(Path(str(path))):
        raise ctx.error(("model", "memory_limit"), f"memory_limit bounds an engine that reads the input itself; a spreadsheet "
                        f"({path}) is read into memory by pandas: save it as CSV or Parquet, or leave memory_limit out")  # fmt: skip
    try:
        check_memory_limit(_resolved_engine(model_name, model, None), model["memory_limit"], spark_master=model.get("spark_master"))
    except InputError as exc:
        raise ctx.error(("model", "memory_limit"), str(exc).replace("--memory-limit", "memory_limit")
                        .replace("--engine duckdb", 'engine = "duckdb"')) from None  # fmt: skip


def _file_engine(job: Job) -> str | None:
    """``duckdb`` or ``spark`` when the job's ``kanon`` or ``timestamped`` model runs on that engine
    over an ``[input] path`` (:func:`_resolved_engine`: ``auto`` too, as the commands resolve it): the
    engine then reads the file itself (:func:`_run_on_engine`); else ``None`` (the table is read into
    pandas: SQL sources, a spreadsheet, ``numpy``)."""
    if "path" in job.source and job.model in ("kanon", "timestamped"):
        from tempanon.data.excel import is_spreadsheet

        if is_spreadsheet(Path(job.source["path"])):  # (read by pandas only: its frame goes to the engine)
            return None
        try:
            engine = _resolved_engine(job.model, job.params, job.source["path"])
        except InputError as exc:
            raise job.ctx.error(("model", "engine"), str(exc)) from None
        return engine if engine in ("duckdb", "spark") else None
    return None


def _run_on_engine(job: Job, engine: str, progress: Any, say: Callable[[str], None]) -> dict:
    """:func:`run_job` for a ``kanon`` or ``timestamped`` job on DuckDB or Spark over a file: the same
    API as ``kanon``/``timestamped --engine duckdb|spark`` (:func:`tempanon.kanon.engine_command.release_on_engine`,
    :func:`tempanon.temporal.outofcore.anonymize_timestamped_file`). The engine reads the file (no row
    reaches pandas), checks the job's columns against the file's, writes the release (and the audit),
    verifies and renames it; the report comes from the engine's aggregates. The respondent-id warning
    is said (``say``) before the release is written."""
    from tempanon.report.sections import file_sha256

    path = job.source["path"]
    source = SourceInfo(str(path), None, "SHA-256 of the input file")
    if job.report is not None:  # (only the report shows it)
        source.checksum = file_sha256(path) if Path(path).is_file() else None
    run = _run_kanon_engine if job.model == "kanon" else _run_timestamped_engine
    return run(job, engine, source, progress, say)


def _columns_frame(columns: Sequence[str]) -> pd.DataFrame:
    """An empty frame with the input's columns, for :func:`_check_columns` on an engine's schema."""
    return pd.DataFrame(columns=pd.Index(list(columns), dtype=object))


def _respondent_id_hint(job: Job, df: pd.DataFrame) -> str | None:
    """The ``kanon`` and ``timestamped`` commands' warning without a respondent id (``[columns] uid``) of a
    column that reads like one (:func:`tempanon.steward.init.respondent_id_warning`: the same rule and
    text as the commands'), with the same columns excluded: those given a model role (quasi-identifiers,
    the time, keep, sensitive). For a table read into pandas; on the engine route
    (:func:`_run_on_engine`) the engine counts (:func:`tempanon.steward.init.respondent_id_warning_engine`)."""
    if job.uid is not None or job.model not in ("kanon", "timestamped"):
        return None
    from tempanon.steward.init import respondent_id_warning

    roles = [*job.quasi_identifiers, *([job.time] if job.time else []), *job.keep, *job.sensitive]
    return respondent_id_warning(df, roles, option="[columns] uid", path=job.source.get("path"))


__all__ = ["MODELS", "Job", "JobError", "ModelSpec", "key_line", "load_job", "read_source", "run_job"]
