"""The Python API of full-domain k-anonymity: :func:`kanonymize`.

Example
-------
>>> import pandas as pd
>>> from tempanon.kanon import kanonymize
>>> from tempanon.hierarchy import build_intervals, build_suppression
>>> df = pd.DataFrame({"age": [21, 22, 23, 24, 35, 36], "sex": list("MMFFMF"), "dx": list("abcdef")})
>>> res = kanonymize(df, ["age", "sex"], {"age": build_intervals("age", df.age, [5, 10, 20]),
...                                       "sex": build_suppression("sex", df.sex)}, k=2)
>>> res.selected_levels
{'age': 2, 'sex': 0}
>>> len(res.table)
6
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from tempanon.data.roles import require_columns
from tempanon.errors import InputError, NoSolutionError
from tempanon.hierarchy.builders import HierarchySpec
from tempanon.hierarchy.core import Hierarchy
from tempanon.kanon.ldiversity import VARIANTS as L_VARIANTS
from tempanon.kanon.ldiversity import LDiversity
from tempanon.kanon.search import ALGORITHMS, Budget, SearchResult, run_search
from tempanon.kanon.select import CRITERIA, Criterion, discernibility, generalization_loss, select_node
from tempanon.lattice.dimension import Dimension
from tempanon.lattice.freqset import Table, encode_table
from tempanon.lattice.lattice import Lattice, Node
from tempanon.lattice.source import encode_distinct

ProgressFn = Callable[[str, int, int], None]


class Encoder(Protocol):
    """Anything that turns a column into a generalization :class:`Dimension` and base codes."""

    def encode(self, series: pd.Series) -> tuple[Dimension, np.ndarray]: ...


@dataclass
class KAnonResult:
    """What :func:`kanonymize` found and released."""

    table: pd.DataFrame
    quasi_identifiers: list[str]
    k: int
    algorithm: str
    criterion: str
    max_suppression: float
    max_suppressed_rows: int
    lattice_size: int
    nodes_checked: int
    anonymous_nodes: list[Node]
    minimal_nodes: list[Node]
    selected_node: Node
    criterion_value: float
    suppressed_rows: int
    min_class_size: int
    loss: float
    discernibility: float
    rows_in: int
    runtime_seconds: float
    search: SearchResult
    dimensions: list[Dimension] = field(repr=False)
    uid: str | None = None
    respondents: int | None = None
    sensitive: str | None = None
    l: int | None = None
    kept_rows: np.ndarray | None = field(default=None, repr=False)
    keep: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    identifier_overrides: list = field(default_factory=list)
    shuffle_seed: int | None = field(default=None, repr=False)  # secret: for the steward's audit only
    l_diversity: LDiversity | None = None
    plan: dict = field(default_factory=dict)
    engine: str = "numpy"
    engine_path: str = "bottom on driver"
    rows_out: int | None = None
    output: str | None = None
    engine_checks: dict | None = field(default=None, repr=False)

    @property
    def verification(self) -> dict[str, Any]:
        """What was verified, exactly (:func:`tempanon.data.roles.verification_statement`)."""
        from tempanon.data.roles import verification_statement

        g = f"respondent-level {self.k}-anonymity ({self.uid!r})" if self.uid else f"{self.k}-anonymity"
        checked = list(self.quasi_identifiers)
        if self.l is not None:
            g += f" and {self.l_diversity.describe() if self.l_diversity is not None else f'{self.l}-diversity'} of {self.sensitive!r}"
            checked.append(self.sensitive)
        return verification_statement(g, checked, insensitive=self.keep, overrides=self.identifier_overrides,
                                      left_out=self.left_out, dropped=self.dropped)  # fmt: skip

    @property
    def unchanged_columns(self) -> list[str]:
        """The release's columns released unchanged (every column but the quasi-identifiers: ``keep``, the
        sensitive column): a Parquet release of a Parquet input writes them with the input's types
        (:func:`tempanon.data.io.write_table`, ``like=``), as the engines do."""
        return [] if self.table is None else [c for c in self.table.columns if c not in self.quasi_identifiers]

    @property
    def selected_levels(self) -> dict[str, int]:
        return dict(zip(self.quasi_identifiers, self.selected_node))

    def level_names(self, node: Node) -> dict[str, str]:
        return {d.name: d.level_names[v] for d, v in zip(self.dimensions, node)}

    def summary(self) -> dict[str, Any]:
        """The machine-readable summary (the ``--summary`` JSON)."""
        st = self.search.stats
        return {
            "k": self.k,
            "quasi_identifiers": self.quasi_identifiers,
            "uid": self.uid,
            "respondents": self.respondents,
            "sensitive": self.sensitive,
            "l": self.l,
            "l_diversity": None if self.l_diversity is None else self.l_diversity.as_dict(),
            "algorithm": self.algorithm,
            "complete": self.search.complete,
            "stopped_early": st.stopped,
            "lattice_size": self.lattice_size,
            "nodes_checked": self.nodes_checked,
            "checks": {
                "total": st.nodes_checked,
                "full_lattice": st.full_lattice_checks,
                "search_space": st.search_space,
                "meaning": (
                    "k-anonymity checks; each node of a searched lattice is checked at most once. Incognito "
                    "searches the lattices of every quasi-identifier subset (search_space nodes in all), so its "
                    "total can exceed lattice_size; full_lattice counts the checks of full-lattice nodes"
                ),
            },
            "plan": self.plan,
            "table_scans": st.table_scans,
            "rollups": st.rollups,
            "candidates": st.candidates,
            "pruned_subsets": st.pruned_subsets,
            "marked": st.marked,
            "checks_by_projection": st.by_projection,
            "anonymous_nodes": [list(n) for n in self.anonymous_nodes],
            "minimal_nodes": [list(n) for n in self.minimal_nodes],
            "selected_node": list(self.selected_node),
            "selected_levels": self.level_names(self.selected_node),
            "criterion": self.criterion,
            "criterion_value": self.criterion_value,
            "max_suppression": self.max_suppression,
            "max_suppressed_rows": self.max_suppressed_rows,
            "rows_in": self.rows_in,
            "rows_out": int(len(self.table)) if self.table is not None else self.rows_out,
            "suppressed_rows": self.suppressed_rows,
            "min_class_size": self.min_class_size,
            "loss": self.loss,
            "discernibility": self.discernibility,
            "search_seconds": st.seconds,
            "runtime_seconds": self.runtime_seconds,
            "engine": self.engine,
            "engine_path": self.engine_path,
            "keep": list(self.keep),
            "left_out": list(self.left_out),
            "verification": self.verification,
            "steward_only": "this summary counts the input (rows_in, suppressed_rows, respondents): for the data "
                            "steward, not for release",
        }


def _validate_params(k: Any, max_suppression: Any, algorithm: str, criterion: Any) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise InputError(f"k must be an integer, got {k!r}")
    if k < 2:
        raise InputError(f"k must be at least 2, got {k}")
    if not isinstance(max_suppression, (int, float)) or not (0 <= max_suppression < 1) or math.isnan(max_suppression):
        raise InputError(f"max_suppression must be a fraction in [0, 1), got {max_suppression!r}")
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r}; expected one of {', '.join(ALGORITHMS)}")
    if not callable(criterion) and criterion not in CRITERIA:
        raise InputError(f"unknown criterion {criterion!r}; expected one of {', '.join(CRITERIA)}")


def _as_encoder(name: str, h: Any) -> Encoder:
    if isinstance(h, (str, bytes)) or hasattr(h, "__fspath__"):
        return Hierarchy.from_csv(h, name=name)
    if isinstance(h, Mapping):
        from tempanon.hierarchy.builders import hierarchy_from_config

        return hierarchy_from_config(h, where=f"hierarchy of {name!r}")
    from tempanon.hierarchy.builders import HierarchySpec

    if isinstance(h, HierarchySpec) and h.kind in ("file", "taxonomy"):
        # built now (it needs no data values): a Hierarchy, whose values missing from it every engine names
        # with the file line of their first row (an engine named a spec's by its position among the distinct values)
        return h.build(name)
    if not hasattr(h, "encode"):
        raise InputError(f"hierarchy of {name!r} must be a Hierarchy, a file path, a config dict or an encoder, got {type(h).__name__}")
    return h


def kanonymize(
    data: Any,
    qi: Sequence[str],
    hierarchies: Mapping[str, Any],
    k: int,
    *,
    uid: str | None = None,
    identifying: Sequence[str] = (),
    max_suppression: float = 0.0,
    algorithm: str = "incognito",
    criterion: Criterion = "loss",
    weights: Mapping[str, float] | None = None,
    sensitive: str | None = None,
    l: int | None = None,
    l_diversity: str = "frequency",
    c: float | None = None,
    progress: ProgressFn | None = None,
    verify: bool = True,
    engine: str = "auto",
    memory_limit: str | None = None,
    out: str | None = None,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    max_lattice: int | None = None,
    notice: Callable[[str], None] | None = None,
    keep: Sequence[str] = (),
    allow_identifier: Sequence[str] = (),
    shuffle: bool = True,
    seed: int | None = None,
    screen: bool = True,
    audit: str | os.PathLike | None = None,
    before_release: Callable[[], None] | None = None,
) -> KAnonResult:
    """k-anonymize ``data`` by full-domain generalization (Incognito, LeFevre et al. 2005).

    Parameters
    ----------
    data: the table; release rows are grouped by class and shuffled within it (see ``shuffle``).
    qi: quasi-identifier columns; the order of levels in every reported node.
    hierarchies: for each quasi-identifier a :class:`~tempanon.hierarchy.Hierarchy`, a path to an
        ARX hierarchy file, a config dict (see :mod:`tempanon.hierarchy.builders`), or any object
        with ``encode(series) -> (Dimension, codes)`` (e.g. time granularities).
    k: every released equivalence class has at least ``k`` rows -- or ``k`` distinct respondents
        when ``uid`` names a respondent id column (Mascetti et al. 2006); the uid is dropped from
        the release.
    identifying: direct identifiers, dropped from the release.
    max_suppression: fraction of rows that may be suppressed (Section 2.1): a node is accepted
        when the rows in classes smaller than k number at most ``floor(max_suppression * n)``;
        those rows are removed from the release.
    algorithm: one of ``incognito``, ``super-roots``, ``cube``, ``binary-search``, ``bottom-up``,
        ``bottom-up-rollup``, ``exhaustive`` (see :mod:`tempanon.kanon.search`).
    criterion: how the released node is chosen among the anonymous ones (see
        :mod:`tempanon.kanon.select`): ``height``, ``weighted-height`` (with ``weights``),
        ``discernibility``, ``loss``, or a callable.
    sensitive, l: with both, a node is accepted only if every released class is also l-diverse on
        ``sensitive`` (missing values count as a value); ``l_diversity`` picks what l means (see
        :mod:`tempanon.kanon.ldiversity`): ``frequency`` (default: the most frequent value has
        at most ``|E| / l`` rows), ``distinct`` (at least l distinct values), ``entropy``
        (entropy >= log l) or ``recursive`` ((c,l): ``r_1 < c (r_l + ... + r_m)``, needs ``c``).
        Combines with suppression: classes failing k or l are suppressed, at most
        ``max_suppression`` of the rows. Not combined with ``uid``.
    progress: ``progress(description, done, total)`` callback for long searches.
    keep: columns declared insensitive, released unchanged. Fail closed: the release holds only
        the quasi-identifiers, the ``sensitive`` column and ``keep``; every other column is left
        out (``result.left_out``). Columns released unchanged (``keep`` and quasi-identifiers
        left at level 0) are screened for direct identifiers (:mod:`tempanon.data.screen`) before
        anything is released or written, and refused unless listed in ``allow_identifier``
        (reported in ``result.verification``). With an engine other than numpy only the names and
        distinct values are screened (no per-row uniqueness).
    shuffle, seed: release rows are ordered by class and shuffled within each class (input order
        would leak what generalization hides); ``seed`` defaults to a secret random one, kept in
        ``result.shuffle_seed`` for the steward's audit only. (numpy engine; the other engines
        order rows by class and, inside a class, by a hash salted with a fresh secret.)
    audit: with ``engine="duckdb"`` or ``"spark"`` and ``out``, the steward's audit (release row ->
        input line, the secret salt of the row order as the shuffle seed; the format of
        :func:`tempanon.kanon.command.audit_text`; never in the release's folder), written by the
        engine, checked row by row by SQL against the written release and the input, and renamed
        into place before the release (:meth:`~tempanon.lattice.source_duckdb.SQLSource.release`;
        on Spark ``release_row`` counts the rows over the release's part files in name order,
        :mod:`tempanon.lattice.source_spark`). Refused with numpy (write ``audit_text(result)`` from
        the table in memory).
    screen: ``False`` only for callers that screen the columns themselves (the joint timestamped
        search, which releases its own table).
    verify: re-check the release with the independent verifier (:mod:`tempanon.verify`).
    before_release: called once the node is selected and screened, just before the release is made
        (with an engine other than numpy: before the engine writes ``out``; with numpy: before the
        table is built and, with ``out``, written): what a caller must say before any release exists
        (the commands' respondent-id warning). Not called when no release is made (an error, no
        solution).
    engine: who serves the frequency sets (:mod:`tempanon.lattice.source`): ``numpy`` (a DataFrame
        in memory), ``duckdb`` (a CSV/Parquet path or a DataFrame, out of core with
        ``memory_limit`` such as ``"4GB"``), ``spark`` (a Spark DataFrame or a path), ``auto``
        (numpy for DataFrames and small files, DuckDB for files from 256 MiB on, DuckDB whenever a
        ``memory_limit`` is given). ``data`` may also be a
        :class:`~tempanon.lattice.source.FrequencySource`.
    memory_limit: ``"4GB"``, ``"512MiB"``, ``"80%"`` (:mod:`tempanon.lattice.memory`): DuckDB's memory
        limit (it spills beyond it); with ``engine="spark"`` the heap of the local driver tempanon
        starts; refused (InputError) with ``engine="numpy"``, a cluster master, a Spark DataFrame
        (its session is already running) or a frequency source (already open).
    out: with an engine other than numpy, the engine writes the release to this path (``.parquet``
        or CSV; temp file, verified by an independent query on the written file, then renamed)
        and ``result.table`` is ``None``; without ``out`` the verified release is returned as a
        DataFrame. With numpy and ``out`` the verified release is also written there; a Parquet
        release of a Parquet file ``data`` writes the columns released unchanged
        (``result.unchanged_columns``) with the input's types, as the engines do
        (:func:`tempanon.data.io.typed_release`).
    max_nodes, time_limit: a budget for the search (checks; wall-clock seconds). When it runs
        out the search stops and the release is the best node among those proved anonymous so
        far (verified like any release); ``summary()["stopped_early"]`` says why, and
        ``search.complete`` is False.
    max_lattice: refuse (InputError, exit 2) a generalization lattice with more nodes than this
        (default :data:`MAX_LATTICE`); the search's memory grows with the lattice.
    notice: ``notice(message)`` receives the search plan (lattice size, work estimate) before the
        search, a warning when the lattice is above :data:`WARN_LATTICE`, and a note when a
        budget stopped the search.

    Raises
    ------
    InputError: bad parameters, unknown columns, values missing from a hierarchy.
    NoSolutionError: no full-domain generalization satisfies k with this suppression threshold.
    """
    t0 = time.perf_counter()
    _validate_params(k, max_suppression, algorithm, criterion)
    from tempanon.data.roles import column_names

    qi = column_names(qi, "qi")
    keep, identifying, allow_identifier = (column_names(v, n) for v, n in (
        (keep, "keep"), (identifying, "identifying"), (allow_identifier, "allow_identifier")))  # fmt: skip
    for name, col in (("sensitive", sensitive), ("uid", uid)):
        if isinstance(col, (list, tuple, set, dict)):  # (a list was a TypeError: unhashable type)
            raise InputError(f"{name} must be one column name (a string), got {type(col).__name__} {col!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise InputError(f"the shuffle seed must be a non-negative integer (got {seed!r})")
    from tempanon.data.io import refuse_nested_columns
    from tempanon.lattice.source import open_source

    if out is not None:  # as the commands check --out: kanonymize('in.csv', ..., out='in.csv') wrote the release over
        # its input (numpy and DuckDB), a named pipe was replaced on DuckDB, out='r.xlsx' held CSV text
        from tempanon.data.io import OutputSet

        inputs = [data] if isinstance(data, (str, os.PathLike)) else []
        for h in hierarchies.values() if isinstance(hierarchies, Mapping) else ():
            if isinstance(h, Hierarchy) and h.lines is not None and os.path.isfile(h.source):
                h = h.source  # read from that file (load_hierarchies): out= over it wrote the release there
            if isinstance(h, (str, os.PathLike)):
                inputs.append(("hierarchy", h))
        # Spark writes out= as a folder of part files, which may replace an earlier one: engine='spark', or a
        # Spark source given as the data (tempanon run and the engine command pass the source they opened)
        spark = engine == "spark" or getattr(data, "engine", None) == "spark"
        OutputSet(inputs, {"out": out, "audit": audit}, tables={"out"},
                  spark_releases={"out"} if spark else ())  # (checks only: nothing is staged)

    # a Parquet path: a nested column (list, struct, map) with a role is refused before any engine reads it
    refuse_nested_columns(data, {"qi": qi, "uid": [uid] if uid else None, "sensitive": [sensitive] if sensitive else None,
                                 "keep": keep, "allow_identifier": allow_identifier})  # fmt: skip
    from tempanon.data.cells import text_mixed_columns

    # a column of mixed Python types (1, True, 1.0) with a role: one value per released text (data/cells.py)
    data = text_mixed_columns(data, [*qi, uid, sensitive, *keep])

    # a Parquet path on numpy: only the columns with a role are read (names as given, no ranges: as used below)
    roles = {"qi": list(qi), "uid": [uid] if uid is not None else None, "sensitive": [sensitive] if sensitive is not None else None,
             "keep": list(keep), "allow_identifier": list(allow_identifier), "identifying": list(identifying)}  # fmt: skip
    src = open_source(data, engine, memory_limit=memory_limit, roles=roles)
    try:
        return _kanonymize(
            src, qi, hierarchies, k, t0, uid=uid, identifying=identifying, max_suppression=max_suppression,
            algorithm=algorithm, criterion=criterion, weights=weights, sensitive=sensitive, l=l,
            progress=progress, verify=verify, out=out, l_diversity=l_diversity, c=c, max_nodes=max_nodes,
            time_limit=time_limit, max_lattice=max_lattice, notice=notice, keep=keep,
            allow_identifier=allow_identifier, shuffle=shuffle, seed=seed, screen=screen, audit=audit,
            before_release=before_release, like=data if src is not data and isinstance(data, (str, os.PathLike)) else None,
            table=data if isinstance(data, pd.DataFrame) else None,
        )
    finally:
        if src is not data:
            src.close()


def _check_audit(src: Any, audit: Any, out: Any) -> None:
    """Refuse an ``audit=`` the engine cannot write, or that would sit beside or over a file it must not
    (before anything is searched)."""
    import os
    from pathlib import Path

    from tempanon.data.io import same_file

    if src.engine not in ("duckdb", "spark"):
        raise InputError("audit= is written by the DuckDB or Spark engine with out=; in memory (numpy) write "
                         "tempanon.kanon.command.audit_text(result)")  # fmt: skip
    if out is None:
        raise InputError("audit= needs the release written to a file (out=)")
    if same_file(audit, out):
        raise InputError(f"the audit {audit} is the release's path: choose another")
    if Path(os.path.realpath(audit)).parent == Path(os.path.realpath(out)).parent:
        raise InputError(f"the audit {audit} is in the release's folder: it links release rows to input lines and is for "
                         "the data steward only; write it elsewhere")  # fmt: skip
    inp = getattr(src, "input", None)
    if isinstance(inp, str) and Path(inp).exists() and same_file(audit, inp):
        raise InputError(f"the audit {audit} is the input: refusing to overwrite an input (nothing was read or written)")


def _kanonymize(src, qi, hierarchies, k, t0, *, uid, identifying, max_suppression, algorithm, criterion,
                weights, sensitive, l, progress, verify, out, l_diversity="frequency", c=None, max_nodes=None,
                time_limit=None, max_lattice=None, notice=None, keep=(), allow_identifier=(), shuffle=True, seed=None,
                screen=True, audit=None, before_release=None, like=None, table=None) -> KAnonResult:  # fmt: skip
    """:func:`kanonymize` on a :class:`~tempanon.lattice.source.FrequencySource`. ``table``: the DataFrame the
    caller gave (its columns, :func:`~tempanon.data.io.table_columns`, are the table's on every engine)."""
    if audit is not None:
        _check_audit(src, audit, out)
    qi = list(qi)
    if not qi:
        raise InputError("no quasi-identifier given")
    if len(set(qi)) != len(qi):
        raise InputError(f"quasi-identifier listed twice: {', '.join(sorted({q for q in qi if qi.count(q) > 1}))}")
    src.require_columns(qi, role="quasi-identifier")
    src.require_columns(list(identifying), role="identifying column")
    if uid is not None:
        src.require_columns([uid], role="respondent id (uid) column")
        if uid in qi:
            raise InputError(f"the respondent id {uid!r} cannot also be a quasi-identifier")
        row = src.first_missing_row(uid)
        if row is not None:
            from tempanon.data.lines import at_label, at_row_label

            frame = getattr(src, "data", None)  # the file line of that row (header = line 1)
            where = at_label(frame.index, row) if isinstance(frame, pd.DataFrame) else at_row_label(row)
            raise InputError(f"respondent id column {uid!r} has a missing value at {where}")
    n = src.n_rows
    if n == 0:  # a header-only export: named when it is a file (as stream, init and hierarchy say it)
        raise InputError("the input table has no rows" + (f": {like}" if like is not None else ""))
    ldiv: LDiversity | None = None
    if l is not None or sensitive is not None:
        if l is None:
            raise InputError(f"the sensitive column {sensitive!r} needs l (--l): every class is then l-diverse on it; to "
                             f"release {sensitive!r} unchanged without l-diversity, declare it with --keep instead")  # fmt: skip
        if sensitive is None:
            raise InputError("l-diversity needs a sensitive column (--sensitive) to be l-diverse on")
        if isinstance(l, bool) or not isinstance(l, (int, np.integer)) or l < 2:
            raise InputError(f"l must be an integer of at least 2, got {l!r}")
        if l_diversity not in L_VARIANTS:
            raise InputError(f"unknown l-diversity variant {l_diversity!r}; expected one of {', '.join(L_VARIANTS)}")
        ldiv = LDiversity(int(l), l_diversity, c)
        src.require_columns([sensitive], role="sensitive column")
        if sensitive in qi:
            raise InputError(f"the sensitive column {sensitive!r} cannot also be a quasi-identifier")
        if uid is not None:
            raise InputError("l-diversity with respondent ids (uid) is not supported")
        if src.engine != "numpy" and (ldiv.variant != "frequency" or max_suppression > 0):
            raise InputError(
                f"{ldiv.describe()}" + (" with suppression" if max_suppression > 0 else "")
                + f" is released by the numpy engine only, not {src.engine!r}; use --engine numpy"
            )
    elif c is not None:
        raise InputError("c is a parameter of recursive (c,l)-diversity: give it with sensitive, l and l_diversity='recursive'")
    elif l_diversity != "frequency":  # (--l-diversity entropy without --l was ignored without a word, as --c is refused)
        raise InputError(f"l_diversity {l_diversity!r} says what l means: give it with sensitive and l (--sensitive, --l), "
                         "or leave it out")  # fmt: skip
    budget = Budget(max_nodes=max_nodes, time_limit=time_limit) if (max_nodes is not None or time_limit is not None) else None
    limit = MAX_LATTICE if max_lattice is None else max_lattice
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
        raise InputError(f"max_lattice must be a positive integer, got {max_lattice!r}")
    from tempanon.data.io import table_columns
    from tempanon.data.roles import plan_release

    keep = list(keep)
    # (a Parquet file read with only its role columns, on numpy or by a job file for any engine: its other
    # columns are left out all the same)
    if table is not None:
        columns = table_columns(table)
    elif src.engine == "numpy" and isinstance(getattr(src, "data", None), pd.DataFrame):
        columns = table_columns(src.data)
    else:
        columns = list(src.columns)
    _release_cols, left_out = plan_release(
        columns, released=[*qi, *([sensitive] if sensitive else [])], keep=keep,
        drop=list(identifying), consumed=[uid] if uid else [],
    )  # fmt: skip
    src.require_columns(list(allow_identifier), role="--allow-identifier column")
    overrides = _screen(src, keep, allow_identifier, uid) if screen else []  # before the search: fail fast
    drop_all = [*identifying, *left_out]  # fail closed: columns without a role are not released
    if not isinstance(hierarchies, Mapping):  # (a directory's path was searched as a string: 'no hierarchy given')
        raise InputError(f"hierarchies must map each quasi-identifier to its hierarchy, got {type(hierarchies).__name__} "
                         f"{hierarchies!r}; for a directory of ARX files use tempanon.hierarchy.load_hierarchies(dir, qi)")  # fmt: skip
    missing_h = [q for q in qi if q not in hierarchies]
    if missing_h:
        raise InputError(f"no hierarchy given for quasi-identifier(s): {', '.join(missing_h)}")
    unknown_w = [w for w in (weights or {}) if w not in qi]
    if unknown_w:
        raise InputError(f"weight given for {', '.join(map(repr, unknown_w))}, not a quasi-identifier ({', '.join(qi)})")
    if weights and criterion != "weighted-height":  # (ignored without a word before, as --c is refused without recursive)
        which = "a custom criterion" if callable(criterion) else repr(criterion)
        raise InputError(f"weights are used by the criterion weighted-height only, not by {which}: "
                         f"add --criterion weighted-height (job key criterion) or leave the weights out")

    encoders = {q: _as_encoder(q, hierarchies[q]) for q in qi}
    dims = src.encode(qi, encoders)
    plan = search_plan(dims, algorithm)
    if plan["lattice_size"] > limit:
        raise InputError(
            f"the generalization lattice has {plan['lattice_size']:,} nodes ({plan['levels']}), above the limit of "
            f"{limit:,} (the search needs memory and time growing with it: about {plan['memory_mb']:,.0f} MB for "
            "its grids alone); use fewer quasi-identifiers or shorter hierarchies, or raise the limit with "
            "--max-lattice (API: max_lattice)"
        )
    table = src.bottom(uid=uid, sensitive=sensitive)
    max_sup = int(math.floor(max_suppression * n + 1e-9))
    plan["rows"] = n
    plan["distinct_rows"] = int(getattr(table, "distinct_rows", len(table.counts)))
    plan["source"] = src.describe()
    from tempanon.lattice.freqset import EngineTable

    if isinstance(table, EngineTable) and (ldiv is not None or algorithm == "cube"):
        raise InputError(
            f"the bottom frequency set stays in the engine ({plan['distinct_rows']:,} distinct rows estimated); "
            + ("l-diversity" if ldiv is not None else "the cube variant") + " needs it on the driver: use --algorithm incognito"
            + (" without --l" if ldiv is not None else "")
        )
    if notice is not None:
        notice(
            f"search plan: lattice of {plan['lattice_size']:,} nodes ({plan['levels']}); {algorithm} checks at most "
            f"{plan['max_checks']:,} nodes" + (f" of the lattices of all {plan['subsets']:,} quasi-identifier subsets" if plan["subsets"] > 1 and algorithm in ("incognito", "super-roots", "cube") else "")
            + f", each over up to {plan['distinct_rows']:,} distinct rows ({n:,} rows)"
        )
        if plan["lattice_size"] > WARN_LATTICE and budget is None:
            notice(
                f"warning: the lattice has {plan['lattice_size']:,} nodes (> {WARN_LATTICE:,}); the search may take long. "
                "Bound it with --max-nodes N or --time-limit S (the best verified result found by then is released)"
            )

    if ldiv is not None:
        sdata = getattr(src, "data", None)
        from tempanon.data.cells import value_codes

        # the values of the sensitive codes, for the messages: numpy's, or the engine's (SQLSource.bottom)
        labels = getattr(src, "extra_labels", None) if sdata is None else value_codes(sdata[sensitive].to_numpy(dtype=object))[1]
        counts = np.bincount(table.uid, weights=table.counts, minlength=table.n_uid).astype(np.int64)
        reason = ldiv.impossible_reason(counts, labels, max_sup, sensitive)
        if reason is not None:
            raise NoSolutionError(reason)
        from tempanon.kanon.ldiversity import table_summary

        plan["sensitive_summary"] = table_summary(counts, labels, sensitive)
    res = run_search(algorithm, dims, table, int(k), max_sup, progress=progress, l=ldiv, budget=budget)
    if res.stats.stopped and not res.anonymous_nodes:
        _try_top_node(res, dims, table, int(k), max_sup, ldiv)
    if not res.anonymous_nodes:
        raise NoSolutionError(_no_solution_message(res, k, uid, ldiv, sensitive, max_sup, n, max_suppression, table, plan.get("sensitive_summary", "")))
    if res.stats.stopped and notice is not None:
        notice(
            f"warning: the search stopped early ({res.stats.stopped}) after {res.stats.nodes_checked:,} checks; the "
            f"release is the best of the {len(res.anonymous_nodes):,} anonymous generalizations proved so far (and is "
            "verified), but a complete search may find a less generalized one"
        )
    crit_name = criterion if isinstance(criterion, str) else getattr(criterion, "__name__", "custom")
    lsup = ldiv if max_sup > 0 else None  # with suppression, classes failing l are suppressed too
    node, value = select_node(
        res.anonymous_nodes, res.minimal_nodes, dims, table, int(k), criterion, weights=weights, suppression=max_sup > 0, ldiv=lsup
    )
    if screen:  # quasi-identifiers left at level 0 are released unchanged: screened before any release
        overrides += _screen(src, [q for q, v in zip(qi, node) if v == 0], allow_identifier, uid)
    fs = src.frequency_set(node)
    table.drop_caches()  # the search's level columns: not needed by the release
    if before_release is not None:  # (the engine writes `out` next: said before any release exists)
        before_release()
    check = None
    if src.engine != "numpy":
        # the engine writes the release (temp path), verifies it by an independent query on the
        # written file and renames it into place
        rel = src.release(node, int(k), uid=uid, drop=drop_all, out=out, verify=verify,
                          max_suppressed=max_sup, l=l, sensitive=sensitive,
                          **({"audit": str(audit)} if audit is not None else {}))  # fmt: skip
        released, kept, min_size = rel.table, None, rel.min_class_size
        check = rel.checks
    else:
        rel = src.release(node, int(k), uid=uid, drop=drop_all)
        released, kept, min_size = rel.table, rel.kept, rel.min_class_size
        if lsup is not None:  # with suppression, classes failing l are suppressed too
            released, kept, min_size = _suppress_not_l_diverse(src, dims, node, lsup, sensitive, released, kept)
    shuffle_seed = None
    if shuffle and isinstance(released, pd.DataFrame):
        # the released level codes give the class order without re-reading the released text
        # (not after the l-diversity suppression above, which removes rows)
        labels = None if rel.codes is None or lsup is not None else [(c, d.labels[v]) for c, d, v in zip(rel.codes, dims, node)]
        released, shuffle_seed = _shuffle_within_classes(released, qi, seed, labels)
    rows_out = int(kept.sum()) if kept is not None else rel.rows_out
    suppressed = int(n - rows_out)
    data = getattr(src, "data", None)
    plan["source"] = src.describe()  # with the engine's query count when frequency sets ran there
    result = KAnonResult(
        table=released,
        quasi_identifiers=qi,
        k=int(k),
        algorithm=res.algorithm,
        criterion=crit_name,
        max_suppression=float(max_suppression),
        max_suppressed_rows=max_sup,
        lattice_size=res.lattice_size,
        nodes_checked=res.stats.nodes_checked,
        anonymous_nodes=res.anonymous_nodes,
        minimal_nodes=res.minimal_nodes,
        selected_node=node,
        criterion_value=float(value),
        suppressed_rows=suppressed,
        min_class_size=min_size,
        loss=generalization_loss(fs, dims, int(k), n, lsup),
        discernibility=discernibility(fs, int(k), n, lsup),
        rows_in=n,
        runtime_seconds=0.0,
        search=res,
        dimensions=dims,
        uid=uid,
        respondents=table.n_uid if uid else None,
        sensitive=sensitive,
        l=None if l is None else int(l),
        kept_rows=kept,
        l_diversity=ldiv,
        plan=plan,
        engine=src.engine,
        engine_path=src.path,
        rows_out=rows_out,
        output=None if rel is None else rel.path,
        engine_checks=check,
        keep=keep,
        left_out=left_out,
        dropped=[c for c in identifying if c in src.columns],
        identifier_overrides=overrides,
        shuffle_seed=shuffle_seed,
    )
    if verify and src.engine == "numpy":
        verify_release(data, result, src.encoders)  # (a hierarchy built from the data: the one the search used)
    if out is not None and src.engine == "numpy":
        from tempanon.data.io import write_table

        result.output = str(write_table(released, out, like=like, unchanged=result.unchanged_columns,
                                        input_text=None if like is None else getattr(src, "data", None)))
    result.runtime_seconds = time.perf_counter() - t0
    return result


def _screen(src, columns: Sequence[str], allow: Sequence[str], uid: str | None, time: str | None = None) -> list:
    """Identifier screening of ``columns`` (released unchanged) on the source's data; sources
    without an in-memory table are screened on their distinct values (names, value shapes and,
    with ``time``, second timestamps) and on counts (near-uniqueness per row, and per respondent
    with ``uid``), with the rules of :mod:`tempanon.data.screen`."""
    from tempanon.data.screen import IdentifierFinding, identifier_name_token, refuse_findings, refuse_identifiers, screen_columns

    if not columns:
        return []
    data = getattr(src, "data", None)
    if isinstance(data, pd.DataFrame):
        return refuse_identifiers(data, columns, allow=allow, uid=uid, time=time)
    found = []
    for c in dict.fromkeys(columns):
        if c in (uid, time):  # the model's own columns (as screen_columns)
            continue
        values = src.distinct_values(c).reset_index(drop=True)
        shown = screen_columns(pd.DataFrame({c: values}), [c], time=time, min_rows=2**62)
        reasons = shown[0].reason.split("; ") if shown else []
        n = src.count_present(c)
        # (the engine's distinct texts hold the missing value as '': not a present value)
        distinct = int((values.notna() & (values.astype(object) != "")).sum())
        near = []
        if n >= 20 and distinct >= 0.9 * n:  # the same rules as tempanon.data.screen's near-unique signal
            near.append(f"near-unique per row ({distinct} distinct values in {n} rows)")
        elif uid is not None:
            n_resp, own, distinct = src.respondent_uniqueness(c, uid)
            if n_resp >= 20 and own >= 0.9 * n_resp and distinct >= 0.9 * n_resp:
                near.append(f"near-unique per respondent ({own} of {n_resp} respondents ({uid!r}) "
                            "carry a value no other respondent has)")  # fmt: skip
        at = 1 if identifier_name_token(c) is not None else 0  # in screen_columns' order: name, uniqueness, values
        reasons[at:at] = near
        if reasons:
            found.append(IdentifierFinding(c, "; ".join(reasons)))
    return refuse_findings(found, allow=allow)


def _published_order(values: pd.Series) -> np.ndarray:
    """Rank of every value by its published text (missing first), equal texts equal ranks."""
    return pd.factorize(values.astype(object).where(values.notna(), "\x00<NA>").astype(str), sort=True)[0]


def _label_order(labels: np.ndarray) -> np.ndarray:
    """:func:`_published_order` of a level's labels (texts: sorted in Python, as pandas sorts them)."""
    if all(type(x) is str for x in labels):
        uniq = sorted(set(labels))
        pos = {t: i for i, t in enumerate(uniq)}
        return np.fromiter((pos[t] for t in labels), dtype=np.int64, count=len(labels))
    return _published_order(pd.Series(labels, dtype=object))


def _shuffle_within_classes(
    released: pd.DataFrame, qi: Sequence[str], seed: int | None, codes: Sequence[tuple[np.ndarray, np.ndarray]] | None = None
) -> tuple[pd.DataFrame, int]:
    """Rows ordered by class (classes in order of their published values) and in random order
    inside each class; index labels (input rows) are kept. Returns the table and the seed used
    (a secret random one when ``seed`` is None).

    ``codes``: per quasi-identifier, the released level code of every row and the labels of those
    codes; the published order is then ranked once per label instead of once per row (same ranks'
    order, so the same permutation)."""
    if seed is None:
        import secrets

        seed = secrets.randbits(63)
    if len(released) == 0:
        return released, int(seed)
    rng = np.random.default_rng(seed)
    if codes is not None:
        keys = [_label_order(labels)[c] for c, labels in codes]
    else:
        keys = [_published_order(released[q]) for q in qi]
    radix = [int(k.max(initial=0)) + 1 for k in keys]
    if math.prod(radix) < 2**62:  # the ranks packed in one key (same lexicographic order): a 2-key sort
        packed = np.zeros(len(released), dtype=np.int64)
        for k, r in zip(keys, radix):
            packed *= r
            packed += k
        keys = [packed]
    order = np.lexsort([rng.random(len(released)), *reversed(keys)])
    return released.iloc[order], int(seed)


def _suppress_not_l_diverse(src, dims, node, ldiv: LDiversity, sensitive: str, released: pd.DataFrame, kept: np.ndarray):
    """Remove from a release (``kept``: the rows of classes with >= k rows) the classes whose
    ``sensitive`` values are not l-diverse; returns (release, kept mask, smallest kept class)."""
    from tempanon.lattice.freqset import FrequencySet

    key = np.zeros(len(kept), dtype=np.int64)
    for d, v, c in zip(dims, node, src.base_codes):
        key = key * d.cardinality(v) + d.codes[v][c]
    _cls, inv = np.unique(key, return_inverse=True)
    from tempanon.data.cells import value_codes

    sc, uniq = value_codes(src.data[sensitive].to_numpy(dtype=object))
    n_s = max(len(uniq), 1)
    pairs, pc = np.unique(inv.astype(np.int64) * n_s + sc, return_counts=True)
    diverse = ldiv.holds(FrequencySet((), (), (), pc.astype(np.int64), pairs, n_s, True))
    still = diverse[inv]
    # the released rows by their input labels (robust to a release that reorders rows)
    pos = src.data.index.get_indexer(released.index) if src.data.index.is_unique else np.flatnonzero(kept)
    released = released[still[pos]]
    kept = kept & still
    sizes = np.bincount(inv[kept], minlength=len(diverse))
    min_size = int(sizes[sizes > 0].min()) if kept.any() else 0
    return released, kept, min_size


MAX_LATTICE = 1_000_000
"""Default limit on the generalization lattice (nodes): larger lattices are refused before the
search (exit 2) unless the caller raises it (``max_lattice`` / ``--max-lattice``). The search holds
several arrays over the lattice and Python objects per anonymous node, and Incognito's candidate
graphs span up to prod(levels + 1) - 1 subset-lattice nodes. 3,000 rows with 14 quasi-identifiers
once reached 23.6 GB (issue 12). Measured 2026-11-24 (3,000 random rows, 30 values per column,
3-level hierarchies, k = 5, loaded 2-core machine): 12 QIs (531,441 nodes) 2.4 s CPU, 142 MB peak;
14 QIs (4,782,969 nodes, refused by default) 20.5 s CPU, 0.5 GB peak with the limit raised. The
limit keeps the default well inside memory and time a user would expect."""

WARN_LATTICE = 100_000
"""Above this many lattice nodes the plan notice warns that the search may take long."""


def search_plan(dims: Sequence[Dimension], algorithm: str) -> dict:
    """Size of the search before it starts: the full lattice, the nodes the algorithm may check
    (Incognito: the lattices of every quasi-identifier subset, prod(levels + 1) - 1), and a rough
    upper estimate of the memory of the lattice-sized arrays (200 B per node; the 14-QI case of
    :data:`MAX_LATTICE` measured ~100 B per node)."""
    size = 1
    sub = 1
    for d in dims:
        size *= d.n_levels
        sub *= d.n_levels + 1
    incog = algorithm in ("incognito", "super-roots", "cube")
    return {
        "lattice_size": size,
        "levels": " x ".join(f"{d.name} {d.n_levels}" for d in dims),
        "subsets": 2 ** len(dims) - 1,
        "max_checks": (sub - 1) if incog else size,
        "memory_mb": size * 200 / 1e6,
    }


def _try_top_node(res: SearchResult, dims: Sequence[Dimension], table: Table, k: int, max_sup: int, ldiv: LDiversity | None) -> None:
    """A budget stopped the search before any node was proved anonymous: check the most general
    node (every attribute at a one-value level) so that a release is still possible."""
    from tempanon.kanon.search import _Ctx, _top_single_levels
    from tempanon.lattice.freqset import table_frequency_set

    tops = _top_single_levels(dims)
    if any(t is None for t in tops):
        return
    node = tuple(int(t) for t in tops)
    ctx = _Ctx(dims, table, k, 0, None, ldiv)
    ctx.max_suppressed = max_sup
    ctx.stats = res.stats
    fs = table_frequency_set(table, dims, tuple(range(len(dims))), node)
    ok = ctx.check_any(fs) if ldiv is not None else fs.is_anonymous(k, max_sup)
    if ldiv is None:
        ctx.tick(True)
    if ok:
        res.anonymous_nodes = [node]
        res.minimal_nodes = [node]


def _no_solution_message(res, k, uid, ldiv, sensitive, max_sup, n, max_suppression, table, res_plan_summary="") -> str:
    if res.stats.stopped:
        return (
            f"the search stopped early ({res.stats.stopped}) before any generalization was proved anonymous; "
            "raise --max-nodes / --time-limit"
        )
    size = table.n_uid if uid else n
    if size < k:
        what = "distinct respondents" if uid else "rows"
        return f"k={k} is impossible for this data: the whole table has only {size} {what}, fewer than k"
    what = f"{k} distinct respondents" if uid else f"{k} rows"
    if ldiv is not None:
        return (
            f"no full-domain generalization gives every class at least {what} and {ldiv.describe()} on {sensitive!r} "
            f"while suppressing at most {max_sup} of {n} rows (max_suppression={max_suppression}); "
            f"{res_plan_summary}. Allow more suppression, lower k or l, or use a weaker l-diversity variant"
        )
    return (
        f"no full-domain generalization gives every class at least {what} while suppressing at most "
        f"{max_sup} of {n} rows (max_suppression={max_suppression}); even the most general node fails. "
        "Allow more suppression or lower k."
    )


def verify_release(data: pd.DataFrame, result: KAnonResult, encoders: Mapping[str, Any]) -> None:
    """Independent re-check of a release (see :mod:`tempanon.verify`): k (or respondent-level k)
    on the released values, suppression within the limit, and every released value being the
    generalization of the original under the hierarchy file (for :class:`Hierarchy` inputs)."""
    from tempanon import verify

    released = result.table
    mapping = {}
    for q, v in zip(result.quasi_identifiers, result.selected_node):
        enc = encoders[q]
        if isinstance(enc, HierarchySpec):
            from tempanon.hierarchy.core import as_text

            enc = enc.build(q, pd.unique(as_text(data[q])))
        if isinstance(enc, Hierarchy):
            mapping[q] = enc.mapping(v)
    # k (or respondent-level k), suppression and the hierarchy's generalization, per distinct value
    verify.check_generalized_release(
        data, released, result.quasi_identifiers, result.k, mapping, uid=result.uid, max_suppressed=result.max_suppressed_rows
    )
    if result.l is not None:
        check = released
        if result.uid is not None:
            check = released.assign(**{"__uid__": data.loc[released.index, result.uid].to_numpy()})
        verify.check_l_diverse_classes(check, result.quasi_identifiers, result.sensitive, result.l) if (
            result.l_diversity is None or result.l_diversity.variant == "frequency"
        ) else verify.check_l_diversity(
            check, result.quasi_identifiers, result.sensitive, result.l, result.l_diversity.variant, result.l_diversity.c
        )


def encode_for_search(
    data: pd.DataFrame, qi: Sequence[str], hierarchies: Mapping[str, Any], uid: str | None = None
) -> tuple[list[Dimension], Table]:
    """Encode ``data`` once for the searches of :mod:`tempanon.kanon.search` (benchmarks, tests)."""
    dims, cols = [], []
    for q in qi:
        d, c = encode_distinct(_as_encoder(q, hierarchies[q]), data[q].rename(q))
        dims.append(d)
        cols.append(c)
    return dims, encode_table(dims, cols, None if uid is None else data[uid].to_numpy(dtype=object))


__all__ = ["KAnonResult", "Lattice", "encode_for_search", "kanonymize", "verify_release"]
