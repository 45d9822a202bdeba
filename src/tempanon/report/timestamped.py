"""The report of a timestamped-data run (:func:`tempanon.temporal.api.anonymize_timestamped`).

Mascetti, Bettini, Wang, Jajodia (TIME 2006): the guarantee is respondent-level k-anonymity over
the quasi-identifiers and the generalized time (Definition 4); the utility measures are the
paper's gen_m / gen_s (Section 4.1); the picture is the granularity DAG (Section 3.2) with the
chosen granularity. Every section comes from the shared builders of
:mod:`tempanon.report.sections`.

The guarantee and the risk are re-measured here on the released table by
:func:`tempanon.metrics.measure` (classes of the released quasi-identifiers and time, respondents
counted by the UID looked up in the input through the release's row labels), independently of the
search; the verifier's verdict of :func:`tempanon.verify.check_timestamped_release` (run by the
API before anything is returned) is shown next to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tempanon.hierarchy.core import as_text
from tempanon.metrics.risk import measure
from tempanon.report.html import Report, Section
from tempanon.report.sections import granularity_section, guarantee_section, inputs_section, other_role, risk_section, utility_section

_UID = "__tempanon_uid__"


def observed_losses(data: pd.DataFrame, released: pd.DataFrame, columns: Sequence[str], levels: Mapping[str, str]) -> list[tuple[str, str, str, float]]:
    """Per column ``(name, level, examples of released values, loss)`` measured on the data.

    The loss of a column is the mean over *input* rows of ``(c - 1) / (L - 1)``: ``L`` the distinct
    values of the column in the input, ``c`` the distinct input values released as the same value
    as this row's (the released granule or hierarchy value "covers" ``c`` observed values); a
    suppressed row counts 1, a column with one value 0. It is the normalized loss of the k-anonymity
    report with the hierarchy leaves replaced by the values actually observed, so it applies to
    granularities as well. ``released`` carries the input's row positions as its index.
    """
    n = len(data)
    out = []
    for col in columns:
        orig = pd.Series(as_text(data[col]), dtype=object)
        n_values = int(orig.nunique(dropna=False))
        rel = pd.Series(as_text(released[col]), index=released.index, dtype=object)
        if n == 0 or n_values <= 1:
            loss = 0.0 if n == 0 else (n - len(released)) / n
        else:
            pairs = pd.DataFrame({"r": rel.to_numpy(), "o": orig.to_numpy()[released.index.to_numpy()]})
            covered = pairs.drop_duplicates().groupby("r", sort=False)["o"].size()
            c = covered.reindex(pairs["r"]).to_numpy(dtype=float)
            loss = (float(((c - 1) / (n_values - 1)).sum()) + (n - len(released))) / n
        shown = sorted(pd.unique(rel))[:4]  # the smallest four (the file path's engine shows the same)
        examples = ", ".join(map(str, shown)) + (", ..." if rel.nunique() > 4 else "")
        out.append((col, levels.get(col, "unchanged"), examples, loss))
    return out


def timestamped_report(
    data: pd.DataFrame,
    result: Any,
    *,
    source: str,
    checksum: str | None,
    checksum_kind: str = "SHA-256 of the input file",
    parameters: Mapping[str, Any] | None = None,
    identifying: Sequence[str] = (),
    threshold: float = 0.2,
) -> Report:
    """Build the report of ``result`` (a :class:`~tempanon.temporal.api.TimestampedResult`) on the
    input ``data`` (the frame given to the API, any index; rows matched by position)."""
    from tempanon.data.io import table_columns

    columns = table_columns(data)  # (a Parquet file read with only its role columns: every column of the file)
    data = data.reset_index(drop=True)
    s = result.summary
    time, qi, uid = s["time"], list(s["qi"]), s["uid"]
    released = result.released
    attrs = [time, *qi]
    idx = released.index.to_numpy()
    # respondents: the UID of the input row behind each released tuple (without UID every tuple is one)
    uids = data[uid].to_numpy() if uid is not None else np.arange(len(data))
    check = released[attrs].copy()
    check[_UID] = uids[idx]
    after = measure(check, attrs, uid=_UID, threshold=threshold)
    before = measure(data[attrs].assign(**{_UID: uids}), attrs, uid=_UID, threshold=threshold)
    return _report(result, columns=columns, rows_in=len(data), rows_out=len(released), before=before,
                   after=after, losses=observed_losses(data, released, attrs, _levels(s)), source=source,
                   checksum=checksum, checksum_kind=checksum_kind, parameters=parameters, identifying=identifying,
                   threshold=threshold)  # fmt: skip


def timestamped_report_from_measures(
    result: Any,
    *,
    source: str,
    checksum: str | None,
    checksum_kind: str = "SHA-256 of the input file",
    parameters: Mapping[str, Any] | None = None,
    identifying: Sequence[str] = (),
    threshold: float = 0.2,
) -> Report:
    """The same report for the file path, where the rows stay in the engine: ``result.measures``
    holds the engine's aggregates (:mod:`tempanon.temporal.outofcore_report`, computed on the
    input and on the release as written, after its verification, with the input's columns).
    The numbers are those :func:`timestamped_report` measures in memory (tested)."""
    from tempanon.temporal.outofcore_report import observed_losses_from

    m = result.measures
    if m is None:
        raise ValueError("the result carries no engine measures (anonymize_timestamped_file(..., measures=True))")
    s = result.summary
    return _report(result, columns=m["columns"], rows_in=m["rows_in"], rows_out=m["rows_out"],
                   before=m["before"].risk(threshold), after=m["after"].risk(threshold),
                   losses=observed_losses_from(m, [s["time"], *s["qi"]], _levels(s)), source=source, checksum=checksum,
                   checksum_kind=checksum_kind, parameters=parameters, identifying=identifying, threshold=threshold)  # fmt: skip


def _levels(s: Mapping[str, Any]) -> dict:
    """Released level per column: the joint node's, or the time granularity alone."""
    return dict(s["granularity"]) if s.get("mode") == "joint" else {s["time"]: s["granularity"]}


def _report(result: Any, *, columns: Sequence[str], rows_in: int, rows_out: int, before: Any, after: Any, losses: list,
            source: str, checksum: str | None, checksum_kind: str, parameters: Mapping[str, Any] | None,
            identifying: Sequence[str], threshold: float) -> Report:  # fmt: skip
    """The report from what was measured (``before``/``after``: :class:`~tempanon.metrics.risk.RiskSummary`
    of the input and of the release, classes over the time and the quasi-identifiers with respondents;
    ``losses``: :func:`observed_losses` rows)."""
    s = result.summary
    time, qi, uid, k = s["time"], list(s["qi"]), s["uid"], int(s["k"])
    joint = s.get("mode") == "joint"
    levels = _levels(s)
    time_level = levels[time]
    identifying = [c for c in identifying if c in columns]

    roles = {}
    for c in columns:
        if c == time:
            roles[c] = f"time (generalized to {time_level})"
        elif c in qi:
            lv = levels.get(c)
            roles[c] = f"quasi-identifier (generalized, level {lv})" if joint and lv not in (None, "value") else "quasi-identifier (unchanged)"
        else:
            roles[c] = other_role(c, uid=uid, identifying=identifying,
                                  kept=(s.get("verification") or {}).get("released_unchanged_declared_insensitive", ()),
                                  sensitive=s.get("sensitive") or ())
    params = {
        "model": "respondent-level k-anonymity of timestamped data" + (" (time and quasi-identifiers jointly)" if joint else ""),
        "k": k,
        "metric": s["metric"],
        "max_suppression": s["max_suppression"],
        "data granularity": s["data_granularity"],
        "calendar time zone": s.get("timezone"),
        "candidate granularities": ", ".join(result.dag.names[1:] + list(result.dag.disregarded)),
        **(parameters or {}),
    }
    rep = Report(
        "tempanon report: k-anonymity of timestamped data",
        f"{source}: {s['tuples']:,} tuples of {s['respondents']:,} respondents in, {rows_out:,} released; "
        f"k = {k}; time as {time_level}",
    )
    rep.add(inputs_section(source=source, rows=rows_in, roles=roles, parameters=params, checksum=checksum, checksum_kind=checksum_kind))

    # ---- guarantee: re-measured on the released table --------------------------------------
    verdict = s.get("verification") or {}
    max_sup = int(s["max_suppressed_tuples"])
    suppressed = rows_in - rows_out
    verified = bool(verdict) and (after.respondent_k is None or after.respondent_k >= k) and suppressed <= max_sup
    rep.add(guarantee_section(
        model="respondent-level k-anonymity (Mascetti et al., Definition 4)",
        requested={"respondent-level k": k, "suppressed tuples": f"<= {max_sup}"},
        achieved={"respondent-level k": after.respondent_k, "suppressed tuples": suppressed, "classes": after.classes,
                  "time labels": verdict.get("time_labels")},
        verified=verified,
        class_counts=after.class_counts, class_sizes=after.class_sizes if rows_out else [],
        k=k,
        what="respondents",
        checker="tempanon.verify.check_timestamped_release, re-measured by tempanon.metrics.measure"
        if result.measures is None else
        "tempanon.temporal.outofcore.verify_written (SQL on the written file), re-measured by GROUP BY in the engine",
    ))
    rep.add(risk_section(before.as_dict(), after.as_dict(), threshold=threshold))

    # ---- utility --------------------------------------------------------------------------
    rep.add(utility_section(
        attributes=losses,
        measures={"gen_m (fewest respondents in a released class, Definition 5)": s["gen_m"],
                  "gen_s (sum over released classes of their respondents, Procedure 2)": s["gen_s"],
                  "selection metric": s["metric"],
                  "calendar time zone": s.get("timezone")},
        suppressed_rows=suppressed,
        rows_in=rows_in,
    ))

    # ---- picture: the granularity DAG ----------------------------------------------------------
    rep.add(_granularities(result, time_level, joint))
    return rep


def _granularities(result: Any, chosen: str, joint: bool) -> Section:
    dag = result.dag
    s = result.summary
    names = dag.names
    edges = [(names[v], names[p]) for v, ps in enumerate(dag.parents) for p in ps]
    cands = [c for c in s["candidates"] if "equivalent_to" not in c or c.get("k_anonymous") is not None]
    feasible = [c["granularity"] for c in cands if c.get("k_anonymous") and c["granularity"] in names]
    note = []
    if dag.disregarded:
        note.append("Not usable on this data: " + "; ".join(f"{n} ({why})" for n, why in dag.disregarded.items()) + ".")
    if dag.equivalent:
        note.append("Same granules as another: " + ", ".join(f"{a} = {b}" for a, b in dag.equivalent.items()) + ".")
    if joint:
        note.append("Time was generalized jointly with the other quasi-identifiers; green marks granularities that are "
                    "k-anonymous with the other quasi-identifiers unchanged.")
    sec = granularity_section(nodes=names, edges=edges, chosen=chosen, feasible=feasible, note=" ".join(note) or None)
    rows = []
    others = {a: lv for a, lv in s["granularity"].items() if a != s["time"]} if joint else {}
    for c in s["candidates"]:
        if "equivalent_to" in c and "k_anonymous" not in c:
            continue
        name = c["granularity"]
        is_chosen = name == chosen
        gm, gs, fewest, below = c.get("gen_m"), c.get("gen_s"), c.get("min_respondents"), c.get("suppressed")
        if not c.get("compatible"):
            anon = "not usable"
        elif is_chosen:
            # the release was verified k-anonymous; in joint mode with the other quasi-identifiers generalized
            anon = "yes" + (" (with " + ", ".join(f"{a} at level {lv}" for a, lv in others.items()) + ")" if joint else "")
            if joint:
                gm, gs, fewest, below = s["gen_m"], s["gen_s"], s["gen_m"], s["suppressed"]
        elif c.get("not_checked"):
            if "pruned_coarser_than" in c:
                anon = f"yes (implied: coarser than the k-anonymous {c['pruned_coarser_than']})"
            elif c["not_checked"].startswith("bounded"):
                anon = ("yes (implied), " if c.get("k_anonymous") else "") + "not evaluated: " + c["not_checked"]
            else:
                anon = "not checked (time limit)"
            gm = gs = fewest = below = "not checked"
        else:
            anon = ("yes" if c.get("k_anonymous") else "no") + (" (other quasi-identifiers unchanged)" if joint else "")
        rows.append((name, "chosen" if is_chosen else "", anon, fewest, gm, gs, below))
    sec.add_table(["granularity", "released?", "k-anonymous", "fewest respondents in a class", "gen_m", "gen_s", "tuples in classes below k"], rows,
                  caption="every candidate granularity evaluated on the data (time generalized alone" + (", other quasi-identifiers unchanged, except the chosen row: the released node)" if joint else "; pruned ones are implied by a finer k-anonymous granularity and not re-checked)"))
    return sec


def search_lines(s: dict) -> str:
    """The search as text (for ``--verbose``), from the summary: granularities checked by Algorithm 1, pruned, minimal."""
    if s.get("mode") == "joint":
        return (f"joint search: {s['nodes_checked']} nodes checked of {s['lattice_size']} ({s['anonymous_nodes']} "
                f"anonymous, {len(s['minimal_k_anonymous'])} minimal); search {s['search_seconds']:.3f} s")  # fmt: skip
    usable = [c for c in s["candidates"] if c.get("compatible") and "equivalent_to" not in c]
    checked = [c["granularity"] for c in usable if c.get("evaluated_by_algorithm")]
    pruned = [c["granularity"] for c in usable if "pruned_coarser_than" in c]
    bounded = [c["granularity"] for c in usable if str(c.get("not_checked", "")).startswith("bounded")]
    return (f"search: {len(checked)} of {len(usable)} granularities checked ({', '.join(checked)}); "
            f"{len(pruned)} pruned as coarser than a k-anonymous one"
            + (f" ({', '.join(pruned)})" if pruned else "")
            + (f"; {len(bounded)} skipped because a bound shows they cannot beat the best ({', '.join(bounded)})"
               if bounded else "")
            + f"; minimal k-anonymous: {', '.join(s['minimal_k_anonymous']) or 'none'}"
            + ("; the time limit stopped the search" if s.get("budget") else ""))


__all__ = ["observed_losses", "search_lines", "timestamped_report", "timestamped_report_from_measures"]
