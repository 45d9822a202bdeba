"""``tempanon kanon --engine duckdb|spark``: the command when the rows stay in an engine (issue 15).

The table is never loaded into pandas: the engine reads the file, serves the bottom frequency set
and writes the release itself (temp file, independent verification query on the written file,
rename). What needs the whole table in memory -- the HTML report and the before/after risk
measures -- is not available on this path (``--report`` is refused, the summary has no ``risk``).
"""

from __future__ import annotations

import time
from typing import Any

from tempanon.errors import InputError


def run_with_engine(a: dict[str, Any]) -> dict:
    """Run ``kanon`` with the arguments of :func:`tempanon.kanon.command._run` (its ``locals()``)."""
    from tempanon._cliutil import info, progress_reporter
    from tempanon.data.io import write_json
    from tempanon.data.roles import parse_column_list
    from tempanon.hierarchy import load_hierarchies
    from tempanon.kanon import kanonymize
    from tempanon.kanon.command import _parse_weights, describe_checks
    from tempanon.lattice.source import open_source

    if a.get("report") is not None:
        raise InputError("--report needs the table in memory: use --engine numpy (or leave --engine auto on a small file)")
    t0 = time.perf_counter()
    src = open_source(a["input_path"], a["engine"], memory_limit=a.get("memory_limit"), delimiter=a.get("delimiter"),
                      spark_master=a.get("spark_master"))  # fmt: skip
    try:
        qi_cols = parse_column_list(a["qi"], src.columns)
        drop_cols = parse_column_list(a["drop"], src.columns)
        src.require_columns(qi_cols, role="quasi-identifier")
        hier = load_hierarchies(a["hierarchies"], qi_cols)
        with progress_reporter(a["quiet"]) as progress:
            res = kanonymize(
                src, qi_cols, hier, a["k"], uid=a["uid"], identifying=drop_cols, max_suppression=a["max_suppression"],
                algorithm=a["algorithm"], criterion=a["criterion"], weights=_parse_weights(a["weights"]),
                sensitive=a["sensitive"], l=a["l"], progress=progress, out=str(a["out"]), **(a.get("search_opts") or {}),
                keep=parse_column_list(a.get("keep"), src.columns),
                allow_identifier=parse_column_list(a.get("allow_identifier"), src.columns),
            )  # fmt: skip
    finally:
        src.close()
    summ = res.summary()
    summ.update({"input": str(a["input_path"]), "output": str(a["out"]), "verification": {**(res.engine_checks or {}), **res.verification}})
    if a.get("verbose"):
        st = res.search.stats
        info(
            f"engine {res.engine} ({res.engine_path}): {describe_checks(st, res.lattice_size)}, "
            f"{st.table_scans} table scans, {st.rollups} rollups; search {st.seconds:.3f} s, "
            f"total {time.perf_counter() - t0:.3f} s",
            a["quiet"],
        )
    if a.get("summary") is not None:
        write_json(summ, a["summary"])
    return summ
