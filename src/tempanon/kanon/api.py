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
from tempanon.kanon.search import ALGORITHMS, SearchResult, run_search
from tempanon.kanon.select import CRITERIA, Criterion, discernibility, generalization_loss, select_node
from tempanon.lattice.dimension import Dimension
from tempanon.lattice.freqset import Table, encode_table, table_frequency_set
from tempanon.lattice.lattice import Lattice, Node

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

    @property
    def verification(self) -> dict[str, Any]:
        """What was verified, exactly (:func:`tempanon.data.roles.verification_statement`)."""
        from tempanon.data.roles import verification_statement

        g = f"respondent-level {self.k}-anonymity ({self.uid!r})" if self.uid else f"{self.k}-anonymity"
        if self.l is not None:
            g += f" and {self.l}-diversity of {self.sensitive!r}"
        checked = list(self.quasi_identifiers) + ([self.sensitive] if self.l is not None and self.sensitive else [])
        return verification_statement(g, checked, insensitive=self.keep, overrides=self.identifier_overrides,
                                      left_out=self.left_out, dropped=self.dropped)  # fmt: skip

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
            "algorithm": self.algorithm,
            "complete": self.search.complete,
            "lattice_size": self.lattice_size,
            "nodes_checked": self.nodes_checked,
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
            "rows_out": int(len(self.table)),
            "suppressed_rows": self.suppressed_rows,
            "min_class_size": self.min_class_size,
            "loss": self.loss,
            "discernibility": self.discernibility,
            "search_seconds": st.seconds,
            "runtime_seconds": self.runtime_seconds,
            "keep": list(self.keep),
            "left_out": list(self.left_out),
            "verification": self.verification,
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
    if not hasattr(h, "encode"):
        raise InputError(f"hierarchy of {name!r} must be a Hierarchy, a file path, a config dict or an encoder, got {type(h).__name__}")
    return h


def kanonymize(
    data: pd.DataFrame,
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
    progress: ProgressFn | None = None,
    verify: bool = True,
    keep: Sequence[str] = (),
    allow_identifier: Sequence[str] = (),
    shuffle: bool = True,
    seed: int | None = None,
    screen: bool = True,
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
    sensitive, l: with both, a node is accepted only if every class is also l-diverse: its most
        frequent ``sensitive`` value has at most ``|E| / l`` rows (l-eligibility of each class,
        Definition 1 of Wang et al., ICDM 2010; missing values count as a value). Not combined with
        ``uid`` or suppression (the generalization property needs neither).
    progress: ``progress(description, done, total)`` callback for long searches.
    keep: columns declared insensitive, released unchanged. Fail closed: the release holds only
        the quasi-identifiers, the ``sensitive`` column and ``keep``; every other column is left
        out (``result.left_out``). Columns released unchanged (``keep`` and quasi-identifiers
        left at level 0) are screened for direct identifiers (:mod:`tempanon.data.screen`) and
        refused unless listed in ``allow_identifier`` (reported in ``result.verification``).
    shuffle, seed: release rows are ordered by class and shuffled within each class (input order
        would leak what generalization hides); ``seed`` defaults to a secret random one, kept in
        ``result.shuffle_seed`` for the steward's audit only.
    screen: ``False`` only for callers that screen the columns themselves (the joint timestamped
        search, which releases its own table).
    verify: re-check the release with the independent verifier (:mod:`tempanon.verify`).

    Raises
    ------
    InputError: bad parameters, unknown columns, values missing from a hierarchy.
    NoSolutionError: no full-domain generalization satisfies k with this suppression threshold.
    """
    t0 = time.perf_counter()
    _validate_params(k, max_suppression, algorithm, criterion)
    if not isinstance(data, pd.DataFrame):
        raise InputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    qi = list(qi)
    if not qi:
        raise InputError("no quasi-identifier given")
    if len(set(qi)) != len(qi):
        raise InputError(f"quasi-identifier listed twice: {', '.join(sorted({q for q in qi if qi.count(q) > 1}))}")
    require_columns(data, qi, role="quasi-identifier")
    require_columns(data, list(identifying), role="identifying column")
    if uid is not None:
        require_columns(data, [uid], role="respondent id (uid) column")
        if uid in qi:
            raise InputError(f"the respondent id {uid!r} cannot also be a quasi-identifier")
        if data[uid].isna().any():
            row = data.index[np.flatnonzero(data[uid].isna().to_numpy())[0]]
            raise InputError(f"respondent id column {uid!r} has a missing value at row {row}")
    if len(data) == 0:
        raise InputError("the input table has no rows")
    if l is not None or sensitive is not None:
        if l is None or sensitive is None:
            raise InputError("l-diversity needs both a sensitive column and l")
        if isinstance(l, bool) or not isinstance(l, (int, np.integer)) or l < 2:
            raise InputError(f"l must be an integer of at least 2, got {l!r}")
        require_columns(data, [sensitive], role="sensitive column")
        if sensitive in qi:
            raise InputError(f"the sensitive column {sensitive!r} cannot also be a quasi-identifier")
        if uid is not None:
            raise InputError("l-diversity with respondent ids (uid) is not supported")
        if max_suppression > 0:
            raise InputError("l-diversity is checked without suppression; set max_suppression to 0")
    from tempanon.data.roles import plan_release

    keep = list(keep)
    release_cols, left_out = plan_release(
        list(data.columns), released=[*qi, *([sensitive] if sensitive else [])], keep=keep,
        drop=list(identifying), consumed=[uid] if uid else [],
    )  # fmt: skip
    missing_h = [q for q in qi if q not in hierarchies]
    if missing_h:
        raise InputError(f"no hierarchy given for quasi-identifier(s): {', '.join(missing_h)}")
    unknown_w = [w for w in (weights or {}) if w not in qi]
    if unknown_w:
        raise InputError(f"weight given for {', '.join(map(repr, unknown_w))}, not a quasi-identifier ({', '.join(qi)})")

    encoders = {q: _as_encoder(q, hierarchies[q]) for q in qi}
    dims: list[Dimension] = []
    cols: list[np.ndarray] = []
    for q in qi:
        series = data[q].rename(q)
        d, c = encoders[q].encode(series)
        if d.name != q:
            d.name = q
        dims.append(d)
        cols.append(c)
    uid_values = data[uid].to_numpy(dtype=object) if uid is not None else None
    sens_values = data[sensitive].to_numpy(dtype=object) if sensitive is not None else None
    table = encode_table(dims, cols, uid_values, sensitive=sens_values)
    n = len(data)
    max_sup = int(math.floor(max_suppression * n + 1e-9))

    res = run_search(algorithm, dims, table, int(k), max_sup, progress=progress, l=l)
    if not res.anonymous_nodes:
        what = f"{k} distinct respondents" if uid else f"{k} rows"
        if l is not None:
            what += f" and {l}-diverse values of {sensitive!r}"
        raise NoSolutionError(
            f"no full-domain generalization gives every class at least {what} while suppressing at most "
            f"{max_sup} of {n} rows (max_suppression={max_suppression}); even the most general node fails. "
            "Allow more suppression or lower k."
        )
    crit_name = criterion if isinstance(criterion, str) else getattr(criterion, "__name__", "custom")
    node, value = select_node(
        res.anonymous_nodes, res.minimal_nodes, dims, table, int(k), criterion, weights=weights, suppression=max_sup > 0
    )
    fs = table_frequency_set(table, dims, tuple(range(len(dims))), node)
    released, kept, min_size = _release(data, qi, dims, cols, node, int(k), uid, identifying)
    released = released[release_cols]
    from tempanon.data.screen import refuse_identifiers

    unchanged = [*keep, *(q for q, v in zip(qi, node) if v == 0)]
    overrides = refuse_identifiers(data, unchanged, allow=allow_identifier, uid=uid) if screen else []
    shuffle_seed = None
    if shuffle:
        released, shuffle_seed = _shuffle_within_classes(released, qi, seed)
    suppressed = int(n - kept.sum())
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
        loss=generalization_loss(fs, dims, int(k), n),
        discernibility=discernibility(fs, int(k), n),
        rows_in=n,
        runtime_seconds=0.0,
        search=res,
        dimensions=dims,
        uid=uid,
        respondents=table.n_uid if uid else None,
        sensitive=sensitive,
        l=None if l is None else int(l),
        kept_rows=kept,
        keep=keep,
        left_out=left_out,
        dropped=[c for c in identifying if c in data.columns],
        identifier_overrides=overrides,
        shuffle_seed=shuffle_seed,
    )
    if verify:
        verify_release(data, result, encoders)
    result.runtime_seconds = time.perf_counter() - t0
    return result


def _release(
    data: pd.DataFrame,
    qi: Sequence[str],
    dims: Sequence[Dimension],
    cols: Sequence[np.ndarray],
    node: Node,
    k: int,
    uid: str | None,
    identifying: Sequence[str],
) -> tuple[pd.DataFrame, np.ndarray, int]:
    """The generalized table at ``node``, rows of classes smaller than k removed."""
    level_codes = [d.codes[v][c] for d, v, c in zip(dims, node, cols)]
    key = np.zeros(len(data), dtype=np.int64)
    for d, v, c in zip(dims, node, level_codes):
        key = key * d.cardinality(v) + c
    cls, inv = np.unique(key, return_inverse=True)
    if uid is None:
        sizes = np.bincount(inv, minlength=len(cls))
    else:
        u = pd.factorize(data[uid])[0]
        pairs = np.unique(inv.astype(np.int64) * (int(u.max()) + 1) + u)
        sizes = np.bincount(pairs // (int(u.max()) + 1), minlength=len(cls))
    kept = sizes[inv] >= k
    out = data.drop(columns=[c for c in [*identifying, *([uid] if uid else [])] if c in data.columns])
    out = out.copy()
    for q, d, v, c in zip(qi, dims, node, level_codes):
        out[q] = pd.Series(d.labels[v][c], index=data.index, dtype=object)
    released = out.loc[kept]
    min_size = int(sizes[sizes >= k].min()) if (sizes >= k).any() else 0
    return released, kept, min_size


def _shuffle_within_classes(released: pd.DataFrame, qi: Sequence[str], seed: int | None) -> tuple[pd.DataFrame, int]:
    """Rows ordered by class (classes in order of their published values) and in random order
    inside each class; index labels (input rows) are kept. Returns the table and the seed used
    (a secret random one when ``seed`` is None)."""
    if seed is None:
        import secrets

        seed = secrets.randbits(63)
    if len(released) == 0:
        return released, int(seed)
    rng = np.random.default_rng(seed)
    keys = [pd.factorize(released[q].astype(object).where(released[q].notna(), "\x00<NA>").astype(str), sort=True)[0]
            for q in qi]  # fmt: skip
    order = np.lexsort([rng.random(len(released)), *reversed(keys)])
    return released.iloc[order], int(seed)


def verify_release(data: pd.DataFrame, result: KAnonResult, encoders: Mapping[str, Any]) -> None:
    """Independent re-check of a release (see :mod:`tempanon.verify`): k (or respondent-level k)
    on the released values, suppression within the limit, and every released value being the
    generalization of the original under the hierarchy file (for :class:`Hierarchy` inputs)."""
    from tempanon import verify

    released = result.table
    check = released
    if result.uid is not None:
        check = released.assign(**{"__uid__": data.loc[released.index, result.uid].to_numpy()})
    verify.check_k_anonymity(
        check,
        result.quasi_identifiers,
        result.k,
        uid="__uid__" if result.uid is not None else None,
        n_input=len(data),
        max_suppressed=result.max_suppressed_rows,
    )
    if result.l is not None:
        verify.check_l_diverse_classes(check, result.quasi_identifiers, result.sensitive, result.l)
    mapping = {}
    for q, v in zip(result.quasi_identifiers, result.selected_node):
        enc = encoders[q]
        if isinstance(enc, HierarchySpec):
            from tempanon.hierarchy.core import as_text

            enc = enc.build(q, pd.unique(as_text(data[q])))
        if isinstance(enc, Hierarchy):
            mapping[q] = enc.mapping(v)
    if mapping:
        verify.check_generalization(data, released, mapping)


def encode_for_search(
    data: pd.DataFrame, qi: Sequence[str], hierarchies: Mapping[str, Any], uid: str | None = None
) -> tuple[list[Dimension], Table]:
    """Encode ``data`` once for the searches of :mod:`tempanon.kanon.search` (benchmarks, tests)."""
    dims, cols = [], []
    for q in qi:
        d, c = _as_encoder(q, hierarchies[q]).encode(data[q].rename(q))
        dims.append(d)
        cols.append(c)
    return dims, encode_table(dims, cols, None if uid is None else data[uid].to_numpy(dtype=object))


__all__ = ["KAnonResult", "Lattice", "encode_for_search", "kanonymize", "verify_release"]
