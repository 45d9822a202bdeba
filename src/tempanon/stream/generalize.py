"""Publishing snapshots by generalization instead of Anatomy (Wang et al., ICDM 2010, Section II.B).

Every snapshot that leaves the window is l-eligible; instead of Anatomy's two tables it can be
published as one table generalized by full-domain generalization, searched by the Incognito engine
with an l-diversity check (:func:`tempanon.kanon.kanonymize` with ``sensitive`` and ``l``): every
equivalence class of the published snapshot has at least ``l`` records and its most frequent
sensitive value at most ``|class| / l`` of them. An l-eligible snapshot is l-diverse at the top of
the lattice (one class, the whole snapshot), so a generalization always exists. Each published
snapshot is verified by the independent checks of :mod:`tempanon.verify` inside ``kanonymize``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from tempanon.errors import InputError
from tempanon.stream.publisher import PublishedSnapshot


@dataclass
class GeneralizedSnapshot:
    """One snapshot published by generalization: ``table`` has the quasi-identifiers generalized
    at ``levels`` and the sensitive column, rows in the order of :attr:`PublishedSnapshot.rows`."""

    label: str
    table: pd.DataFrame
    levels: dict[str, int]
    loss: float
    classes: int


def generalize_snapshots(
    data: pd.DataFrame,
    published: Iterable[PublishedSnapshot],
    qi: Sequence[str],
    sensitive: str,
    l: int,
    hierarchies: Mapping[str, Any],
    *,
    algorithm: str = "incognito",
    criterion: str = "loss",
    allow_identifier: Sequence[str] = (),
) -> list[GeneralizedSnapshot]:
    """Generalize each published snapshot so every class is l-diverse (see module doc).

    ``data`` is the stream's input table (its index the row numbers of ``PublishedSnapshot.rows``).
    ``allow_identifier``: quasi-identifiers the user allowed although identifier screening flags
    them (passed to every snapshot's :func:`~tempanon.kanon.kanonymize`, which screens a
    quasi-identifier left at level 0).
    """
    from tempanon.kanon import kanonymize
    from tempanon.verify import check_l_diverse_classes

    qi = list(qi)
    missing = [q for q in qi if q not in hierarchies]
    if missing:
        raise InputError(f"publishing by generalization needs a hierarchy for every quasi-identifier; missing: {', '.join(missing)}")
    out: list[GeneralizedSnapshot] = []
    for snap in published:
        part = data.loc[snap.rows, qi + [sensitive]]
        if len(part) == 0:
            out.append(GeneralizedSnapshot(snap.label, part.copy(), dict.fromkeys(qi, 0), 0.0, 0))
            continue
        res = kanonymize(part, qi, hierarchies, max(int(l), 2), sensitive=sensitive, l=int(l), algorithm=algorithm, criterion=criterion,
                         allow_identifier=allow_identifier)
        check_l_diverse_classes(res.table, qi, sensitive, int(l))
        out.append(
            GeneralizedSnapshot(snap.label, res.table, res.selected_levels, res.loss, int(res.table.groupby(qi, dropna=False).ngroups))
        )
    return out
