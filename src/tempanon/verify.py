"""Independent privacy checks, run before every write and by the tests.

These checks deliberately do **not** reuse the anonymization kernels: they work on the released
table as text (pandas group-bys on the published values), so a bug in an algorithm cannot hide
itself. Each ``check_*`` function raises :class:`~tempanon.errors.VerificationError` with a
precise message on failure and returns a small report dict on success.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from tempanon.errors import VerificationError


def _class_sizes(df: pd.DataFrame, qi: Sequence[str], uid: str | None = None) -> pd.Series:
    keys = df[list(qi)].astype(object).where(df[list(qi)].notna(), "\x00<NA>")
    if uid is None:
        return keys.groupby(list(qi), sort=False, dropna=False).size()
    frame = keys.assign(__uid__=df[uid].to_numpy())
    return frame.groupby(list(qi), sort=False, dropna=False)["__uid__"].nunique()


def check_k_anonymity(
    released: pd.DataFrame,
    qi: Sequence[str],
    k: int,
    *,
    uid: str | None = None,
    n_input: int | None = None,
    max_suppressed: int | None = None,
) -> dict:
    """Check that every equivalence class of ``released`` over ``qi`` has at least ``k`` rows
    (or ``k`` distinct values of ``uid``: respondent-level k-anonymity), and that at most
    ``max_suppressed`` of the ``n_input`` input rows are missing from the release.
    """
    if len(released) == 0:
        sizes = pd.Series(dtype=int)
    else:
        sizes = _class_sizes(released, qi, uid)
    if len(sizes) and int(sizes.min()) < k:
        bad = sizes[sizes < k]
        example = bad.index[0]
        what = "respondents" if uid else "rows"
        raise VerificationError(
            f"output is not {k}-anonymous: {len(bad)} equivalence class(es) have fewer than {k} {what}, "
            f"e.g. {dict(zip(qi, example if isinstance(example, tuple) else (example,)))} with {int(bad.iloc[0])}"
        )
    suppressed = None
    if n_input is not None:
        suppressed = n_input - len(released)
        if suppressed < 0:
            raise VerificationError(f"output has {len(released)} rows, more than the {n_input} input rows")
        if max_suppressed is not None and suppressed > max_suppressed:
            raise VerificationError(
                f"output suppresses {suppressed} rows, more than the allowed {max_suppressed}"
            )
    return {
        "k": k,
        "classes": int(len(sizes)),
        "min_class_size": int(sizes.min()) if len(sizes) else None,
        "suppressed_rows": suppressed,
    }


def check_generalization(
    original: pd.DataFrame, released: pd.DataFrame, mapping: dict[str, dict[str, str]]
) -> None:
    """Check that each released quasi-identifier value is the generalization of the original value.

    ``released`` must carry the original row positions in its index; ``mapping[col][value]`` is the
    expected published text of ``value`` (built from the hierarchy file, not from the kernels).
    """
    for col, table in mapping.items():
        src = original.loc[released.index, col].astype(object)
        src = src.where(src.notna(), "")
        expected = src.map(lambda v: table.get(str(v)))
        got = released[col].astype(object).where(released[col].notna(), "").astype(str)
        bad = expected.isna() | (expected.astype(str) != got)
        if bool(bad.any()):
            row = bad[bad].index[0]
            raise VerificationError(
                f"column {col!r}, row {row}: released value {got.loc[row]!r} is not the generalization "
                f"{expected.loc[row]!r} of {original.loc[row, col]!r}"
            )


# --- l-diversity / Anatomy (streams, issue 4) ----------------------------------------------------


# --- (k,P)-anonymity (time series, issue 5) ------------------------------------------------------


# --- timestamped data (issue 3) -------------------------------------------------------------------
