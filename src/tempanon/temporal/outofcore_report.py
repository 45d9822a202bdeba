"""What the timestamped report measures, computed by the engine on the file path (``--report`` with
``--engine duckdb|spark``; :func:`tempanon.temporal.outofcore.anonymize_timestamped_file` with
``measures=True``).

The in-memory report (:func:`tempanon.report.timestamped.timestamped_report`) re-measures the
release against the input rows in pandas. Here the same numbers come from ``GROUP BY``s in the
engine, one row per class or per released value, never one per record, computed inside
:func:`~tempanon.temporal.outofcore.verify_written` right after the written release passed its
checks (its views ``v_expected``, the input's classes at the released generalization with their
rows ``n`` and respondents ``sz``, and ``v_released``, the classes counted in the written file):

* **after**: the released classes' rows and distinct respondents (each released class was just
  verified to be a whole input class, so its respondents are the input class's), and the distinct
  respondents of the released rows;
* **before**: the input's classes over the raw text of the time and the quasi-identifiers, with
  their rows and distinct respondents, as a histogram (how many classes have each (rows,
  respondents) pair: raw timestamps make nearly one class per record);
* **losses**: per released column of the search (time, quasi-identifiers), the number of distinct
  input values and, for every released value, its rows and the distinct input values it covers
  (:func:`tempanon.report.timestamped.observed_losses`'s definition).

Values are compared as text with a missing value as the empty string, as
:func:`tempanon.hierarchy.as_text` does in memory; a typed timestamp column's input values are grouped
and counted by the typed value, of which that text is a bijection (:func:`measure_written`), not by its
text computed per row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

#: examples of released values shown per column (the in-memory report shows the first four)
EXAMPLES = 4


def measure_written(sq, *, time: str, qi: Sequence[str], uid: str | None, expect: Mapping[str, str], names: Sequence[str],
                    keys_in: Sequence[str], vjoin: str, n_input: int, generalized: Sequence[str] = ()) -> dict:  # fmt: skip
    """The report's aggregates (module doc) from the views of a verification that passed. ``expect``:
    per released column its expected released text as SQL over ``src s`` and ``vjoin`` (the
    joins of the time labels and hierarchy maps); ``keys_in`` the class keys of ``v_expected``
    (named ``names``); ``generalized`` the quasi-identifiers released through a hierarchy (the
    others are released unchanged). Returns plain numpy arrays and numbers (see :func:`report_inputs`)."""
    from tempanon.metrics.risk import ClassAggregates

    Q = sq.q
    on = " AND ".join(f"r.{c} = e.{c}" for c in names)
    after = sq._arrow(f"SELECT r.n AS n, e.sz AS sz FROM v_released r JOIN v_expected e ON {on}")
    sizes = after.column("n").to_numpy().astype(np.int64)
    resp = after.column("sz").to_numpy().astype(np.int64)
    # the input rows that were released: those of a released class (one row per class: no duplicates)
    released_rows = (f"FROM src s {vjoin} JOIN v_released r ON "
                     + " AND ".join(f"{e} = r.{c}" for e, c in zip(keys_in, names)))  # fmt: skip
    if uid is not None:
        r_total = int(sq._rows(f"SELECT count(DISTINCT {sq.value_expr(uid)}) AS n {released_rows}")[0][0])
    else:
        r_total = int(sizes.sum())
    attrs = [time, *qi]
    # The input's values as the classes and distinct counts see them: their text (verify_written's expected
    # text of a column released unchanged), but a typed timestamp column by its typed value, not by its text
    # per row (SQLSource.text_expr, computed for every row). Within one column the text is a bijection of
    # the typed value: one value has one text (numpy's, str of the pandas Timestamp: the wall clock in the
    # column's zone with its offset, the fraction to the microsecond, or the nanosecond when there is one),
    # and two values never share one (wall clock and offset name one instant; a naive value is its wall
    # clock); a missing value's text "" is no present value's (a timestamp's text is never empty), and
    # GROUP BY keeps the missing value (NULL) as a class of its own. So the same classes and the same
    # counts, but count(DISTINCT) leaves NULL out where the text counted "": :func:`_distinct` adds it.
    stamps = sq._timestamp_kinds("src")
    raw = [f"s.{Q(c)}" if c in stamps else sq.released_text("s", c) for c in attrs]
    nullable = [c in stamps for c in attrs]
    size_b = f"count(DISTINCT {sq.value_expr(uid)})" if uid is not None else "count(*)"
    # a histogram of (records, respondents) over the input's classes: raw timestamps make nearly one
    # class per record, so one row per class would bring the whole table's worth to the driver
    before = sq._arrow(f"SELECT n, sz, count(*) AS c FROM (SELECT count(*) AS n, {size_b} AS sz FROM src s "
                       f"GROUP BY {', '.join(raw)}) h GROUP BY n, sz")  # fmt: skip
    b_sizes = before.column("n").to_numpy().astype(np.int64)
    b_resp = before.column("sz").to_numpy().astype(np.int64)
    b_classes = before.column("c").to_numpy().astype(np.int64)
    b_total = int(sq._rows(f"SELECT count(DISTINCT {sq.value_expr(uid)}) AS n FROM src s")[0][0]) if uid is not None else int(n_input)
    losses = {}
    for c, e, nul in zip(attrs, raw, nullable):
        n_values = int(sq._rows(f"SELECT {_distinct(e, nul)} AS n FROM src s")[0][0])
        if n_values <= 1 or (c != time and c not in generalized):
            # a column released unchanged covers one input value per released value: (c - 1) = 0
            per = sq._arrow(f"SELECT v FROM (SELECT DISTINCT {expect[c]} AS v {released_rows}) x ORDER BY v LIMIT {EXAMPLES + 1}")
            losses[c] = {"n_values": n_values, "covered_rows": int(sizes.sum()),
                         "examples": per.column("v").to_pylist()}  # fmt: skip
            continue
        per = sq._arrow(f"SELECT v, count(*) AS n, {_distinct('o', nul)} AS c FROM (SELECT {expect[c]} AS v, {e} AS o "
                        f"{released_rows}) x GROUP BY v ORDER BY v")  # fmt: skip
        rows = per.column("n").to_numpy().astype(np.int64)
        cov = per.column("c").to_numpy().astype(np.int64)
        losses[c] = {"n_values": n_values, "covered_rows": int((rows * cov).sum()),
                     "examples": per.column("v").to_pylist()[: EXAMPLES + 1]}  # fmt: skip
    return {
        "columns": list(sq.columns),
        "rows_in": int(n_input),
        "rows_out": int(sizes.sum()),
        # (without a respondent column every row is a respondent, as the in-memory report counts)
        "before": ClassAggregates(b_sizes, b_resp, b_total, classes=b_classes),
        "after": ClassAggregates(sizes, resp, r_total),
        "losses": losses,
    }


def _distinct(e: str, nullable: bool) -> str:
    """SQL counting the distinct values of ``e`` in a group, a missing value (NULL) counted as one of them
    when ``nullable`` (``e`` a typed value whose missing value's text "" is a value, :func:`measure_written`)."""
    if not nullable:
        return f"count(DISTINCT {e})"
    return f"(count(DISTINCT {e}) + CASE WHEN count(*) > count({e}) THEN 1 ELSE 0 END)"


def observed_losses_from(measures: Mapping, columns: Sequence[str], levels: Mapping[str, str]) -> list[tuple[str, str, str, float]]:
    """:func:`tempanon.report.timestamped.observed_losses` from the engine's aggregates: per column
    ``(name, level, examples, loss)``, the loss the mean over input rows of ``(c - 1) / (L - 1)``
    (suppressed rows count 1)."""
    n, kept = int(measures["rows_in"]), int(measures["rows_out"])
    out = []
    for col in columns:
        m = measures["losses"][col]
        L = int(m["n_values"])
        if n == 0 or L <= 1:
            loss = 0.0 if n == 0 else (n - kept) / n
        else:
            loss = ((int(m["covered_rows"]) - kept) / (L - 1) + (n - kept)) / n
        shown = [str(v) for v in m["examples"]]
        examples = ", ".join(shown[:EXAMPLES]) + (", ..." if len(shown) > EXAMPLES else "")
        out.append((col, levels.get(col, "unchanged"), examples, loss))
    return out


__all__ = ["measure_written", "observed_losses_from"]
