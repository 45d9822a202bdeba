"""The published folder of a stream release: one pair of Anatomy files per snapshot that has records
(``<label>.qit.csv``, ``<label>.st.csv``; ``<label>.csv`` with ``--publish generalization``), and
nothing else.

Shared by ``tempanon stream`` and ``tempanon run`` (a stream job), so that both write the same
folder. A release **replaces** an earlier one in the same folder: the earlier release's snapshot files
that the new release has no file for (a snapshot that is empty now: another ``l``, window or input)
are removed with the commit, so the folder never mixes files of two runs, of which only one was
verified (issue 14, "Also found"; found on 2026-11-26: a second run with ``l = 5`` into the folder of a
run with ``l = 2`` left 686 pairs of the ``l = 2`` files, 1,372 of the folder's 3,310, beside the new ones). A folder that holds
anything else than snapshot files is refused, so that nothing but an earlier release is ever removed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

from tempanon.errors import InputError

SNAPSHOT_FILE = re.compile(r"^-?\d[\dT-]*\.(?:qit\.|st\.)?csv$")
"""Names of snapshot files: a snapshot label (``2016-01-01``, ``2016-01-01T05-30``, ``2016-01``,
``7``: :data:`tempanon.stream.snapshots._LABEL`) and ``.qit.csv``, ``.st.csv`` or ``.csv``."""

LEFTOVER = re.compile(r"^\..+\.(?:old|tmp(?:\.\w+)*)$")
"""Hidden files of a write or commit killed half-way (:class:`tempanon.data.io.OutputSet`)."""


def earlier_release_files(out: str | os.PathLike, inputs: Iterable = (), label: str = "--out") -> list[Path]:
    """The files an earlier release left in the published folder ``out`` (snapshot files and hidden
    leftovers of an interrupted write), sorted by name; ``[]`` if ``out`` does not exist. Refuses
    (:class:`InputError`) a folder that holds an input or anything else."""
    out = Path(out)
    if not out.is_dir():
        return []
    real_out = os.path.realpath(out)
    for given in inputs:
        if given is None or str(given) in ("", "-"):
            continue
        real = os.path.realpath(given)
        if real == real_out or real.startswith(real_out.rstrip(os.sep) + os.sep):
            raise InputError(f"{label} {out} holds the input {given}: write the release to another folder "
                             "(nothing was read or written)")  # fmt: skip
    files = []
    for entry in sorted(os.scandir(out), key=lambda e: e.name):
        if entry.is_file(follow_symlinks=False) and (SNAPSHOT_FILE.match(entry.name) or LEFTOVER.match(entry.name)):
            files.append(Path(entry.path))
        else:
            raise InputError(
                f"{label} {out} holds {entry.name!r}, which is not a snapshot file of an earlier release: a release "
                "replaces every snapshot file in its folder, so it is written only to a new folder, an empty one, or one "
                "that holds an earlier release; choose another folder (nothing was read or written)"
            )
    return files


def stage_release(outs, out: str | os.PathLike, files: Iterable[tuple[str, str]], earlier: list[Path]) -> int:
    """Stage a release into ``outs`` (an :class:`~tempanon.data.io.OutputSet`): ``files`` are (file
    name, text) pairs written into ``out``; each file of ``earlier`` (:func:`earlier_release_files`,
    scanned **before** anything of this run was staged) that is not rewritten leaves with the commit.
    The folder is created even when there is no file (an empty release: every record suppressed).
    Returns the number of files staged."""
    from tempanon.data.io import write_error

    out = Path(out)
    written = set()
    for name, text in files:
        outs.text(text, out / name, "snapshot file")
        written.add(name)
    for stale in earlier:
        if stale.name not in written:
            outs.remove(stale, "an earlier release's snapshot file")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(out, exc) from exc
    return len(written)


def anatomy_files(result) -> list[tuple[str, str]]:
    """The (file name, CSV text) pairs of an Anatomy release (a :class:`StreamResult`): per published
    snapshot with records, its QIT and ST, each table formatted once and cut per snapshot
    (:func:`tempanon.data.io.csv_texts_by`: the same bytes as ``to_csv`` per file)."""
    from tempanon.data.io import csv_text, csv_texts_by

    qcols = [c for c in result.qit.columns if c != "snapshot"]
    scols = [c for c in result.st.columns if c != "snapshot"]
    q_text = csv_texts_by(result.qit, "snapshot", qcols)
    s_text = csv_texts_by(result.st, "snapshot", scols)
    empty_q = csv_text(result.qit.iloc[:0][qcols])
    empty_s = csv_text(result.st.iloc[:0][scols])
    files = []
    for p in result.published:
        if p.size == 0:  # snapshots without records: listed in the summary, no file
            continue
        files.append((f"{p.label}.qit.csv", q_text.get(p.label, empty_q)))
        files.append((f"{p.label}.st.csv", s_text.get(p.label, empty_s)))
    return files
