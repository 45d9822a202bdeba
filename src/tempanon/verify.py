"""Independent privacy checks, run before every write and by the tests.

These checks deliberately do **not** reuse the anonymization kernels: they work on the released
table as text (pandas group-bys on the published values), so a bug in an algorithm cannot hide
itself. Each ``check_*`` function raises :class:`~tempanon.errors.VerificationError` with a
precise message on failure and returns a small report dict on success.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tempanon.data.lines import at_label as _at_label
from tempanon.errors import VerificationError


def _written_keys(df: pd.DataFrame, qi: Sequence[str]) -> pd.DataFrame:
    """The quasi-identifier values as the text they are written as (``1`` and ``1.0`` are two
    classes in a CSV file, so they are two classes here); a missing value is a key of its own,
    apart from the empty string. This is the finest partition any writer can produce, so k checked
    on it holds in every written form."""
    return pd.DataFrame({q: _as_text(df[q]) for q in qi}, index=df.index)


def _class_sizes(df: pd.DataFrame, qi: Sequence[str], uid: str | None = None) -> pd.Series:
    if df.columns.duplicated().any():
        dup = sorted(set(df.columns[df.columns.duplicated()]))
        raise VerificationError(f"the release has duplicate column names: {', '.join(map(str, dup))}")
    keys = _written_keys(df, qi)
    if uid is None:
        return keys.groupby(list(qi), sort=False, dropna=False).size()
    frame = keys.assign(__uid__=(_as_text(df[uid]) if _mixed(df[uid]) else df[uid]).to_numpy())
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


def check_l_diverse_classes(released: pd.DataFrame, qi: Sequence[str], sensitive: str, l: int) -> dict:
    """Check that in every equivalence class over ``qi`` the most frequent value of ``sensitive``
    (missing is a value) has at most ``|E| / l`` rows."""
    keys = _written_keys(released, qi)
    sens = _as_text(_one_zero(released[sensitive]))  # (as written: 1, True and 1.0 are three values; -0.0 is 0.0)
    counts = keys.assign(__s__=sens.to_numpy()).groupby(list(qi) + ["__s__"], sort=False).size()
    per = counts.groupby(level=list(range(len(qi))), sort=False).agg(["max", "sum"])
    bad = per[per["max"] * l > per["sum"]]
    if len(bad):
        ex = bad.index[0]
        raise VerificationError(
            f"output is not {l}-diverse on {sensitive!r}: {len(bad)} class(es) fail, e.g. "
            f"{dict(zip(qi, ex if isinstance(ex, tuple) else (ex,)))} where one value has {int(bad['max'].iloc[0])} of {int(bad['sum'].iloc[0])} rows"
        )
    return {"l": l, "classes": int(len(per))}


def check_l_diversity(
    released: pd.DataFrame, qi: Sequence[str], sensitive: str, l: int, variant: str = "frequency", c: float | None = None
) -> dict:
    """Independent check of l-diversity on a release (every class over ``qi``; missing is a
    value), for the variants of :mod:`tempanon.kanon.ldiversity`, recomputed here from the released
    values with pandas and Python arithmetic:

    * ``frequency``: most frequent value <= |E| / l;  * ``distinct``: >= l distinct values;
    * ``entropy``: -sum p ln p >= ln l (relative tolerance 1e-12);
    * ``recursive``: r_1 < c * (r_l + ... + r_m), counts sorted descending.
    """
    import math

    if variant not in ("frequency", "distinct", "entropy", "recursive"):
        raise ValueError(f"unknown l-diversity variant {variant!r}")
    keys = _written_keys(released, qi)  # (as written: 1, True and 1.0 are three values)
    sens = _as_text(_one_zero(released[sensitive]))
    counts = keys.assign(__s__=sens.to_numpy()).groupby(list(qi) + ["__s__"], sort=False).size()
    bad = []
    n_classes = 0
    for cls, grp in counts.groupby(level=list(range(len(qi))), sort=False):
        n_classes += 1
        r = sorted((int(x) for x in grp.to_numpy()), reverse=True)
        total = sum(r)
        if variant == "frequency":
            ok = r[0] * l <= total
        elif variant == "distinct":
            ok = len(r) >= l
        elif variant == "entropy":
            h = -sum((x / total) * math.log(x / total) for x in r)
            ok = h >= math.log(l) * (1 - 1e-12)
        else:
            ok = r[0] < float(c) * sum(r[l - 1 :])
        if not ok:
            bad.append((cls, r))
    if bad:
        cls, r = bad[0]
        name = f"recursive ({c:g},{l})-diversity" if variant == "recursive" else f"{variant} {l}-diversity"
        raise VerificationError(
            f"output fails {name} on {sensitive!r}: {len(bad)} class(es) fail, e.g. "
            f"{dict(zip(qi, cls if isinstance(cls, tuple) else (cls,)))} with sensitive value counts {r[:10]}"
        )
    return {"l": l, "variant": variant, "c": c, "classes": n_classes}


def _value_text(v: object) -> str:
    """The text under which a data value is looked up in a hierarchy: missing -> "", an integral
    float prints as an integer (20.0 -> "20"), everything else ``str`` (the documented data model)."""
    import numpy as np

    if v is None:
        return ""
    if isinstance(v, (float, np.floating)):
        if v != v:
            return ""
        if float(v).is_integer():
            return str(int(v))
    return str(v)


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
        if _mixed(src):  # (1, True, 1.0: equal in Python, three texts)
            src = src.astype(str)
        codes, uniq = pd.factorize(src, use_na_sentinel=False)  # look each distinct value up once
        looked_up = np.array([table.get(_value_text(v)) for v in uniq], dtype=object)
        expected = pd.Series(looked_up[codes], index=src.index, dtype=object)
        got = released[col].astype(object).where(released[col].notna(), "").astype(str)
        bad = expected.isna() | (expected.astype(str) != got)
        if bool(bad.any()):
            row = bad[bad].index[0]
            raise VerificationError(
                f"column {col!r}, input {_at_label(original.index, row)}: released value {got.loc[row]!r} is not the generalization "
                f"{expected.loc[row]!r} of {original.loc[row, col]!r}"
            )


# --- l-diversity / Anatomy (streams, issue 4) ----------------------------------------------------


def _mixed(col: pd.Series) -> bool:
    """An object column whose cells may be equal in Python but written as different texts (``1``,
    ``True``, ``1.0``; ``Decimal('1.0')``, ``Decimal('1.00')``): grouped here by its text."""
    return col.dtype == object and pd.api.types.infer_dtype(col, skipna=True) in (
        "mixed", "mixed-integer", "mixed-integer-float", "decimal")


def _one_zero(col: pd.Series) -> pd.Series:
    """A float sensitive column with ``-0.0`` as ``0.0``: one value, as a reader of the release reads the
    numbers (equal; pandas, a Parquet reader) and as the search counted them; written, they are two texts
    (``-0.0``, ``0.0``), and telling them apart would pass a class the search did not make l-diverse. Any
    other column as it is (a file's cells are text: ``'-0.0'`` stays its own value, as the search took it)."""
    if pd.api.types.is_float_dtype(col.dtype):
        return col + 0.0  # (IEEE: -0.0 + 0.0 is 0.0; every other value, NaN too, unchanged)
    if col.dtype == object and pd.api.types.infer_dtype(col, skipna=True) == "floating":
        values = col.to_numpy(dtype=object, copy=True)
        kinds = set(map(type, values))  # (one pass in C, no Python code per cell)
        if kinds <= {float, np.float64, type(None), type(pd.NA)}:  # Python floats (np.float64 too) or missing
            if type(pd.NA) not in kinds:  # a float64 column (None as NaN), as Series.map made it
                return pd.Series(values.astype(np.float64) + 0.0, index=col.index, name=col.name)
            zero = np.zeros(len(values), dtype=bool)
            present = ~pd.isna(values)
            zero[present] = values[present].astype(np.float64) == 0.0
            values[zero] = values[zero] + 0.0  # (each zero cell's own v + 0.0: 0.0, its type kept; pd.NA kept)
            return pd.Series(values, index=col.index, name=col.name, dtype=object)
        # other float types (a numpy float32 cell, a float subclass): cell by cell
        return col.map(lambda v: v + 0.0 if isinstance(v, float) else v)
    return col


def _as_text(col: pd.Series) -> pd.Series:
    obj = col.astype(object)
    return obj.where(obj.notna(), "\x00<NA>").astype(str)


def check_l_eligible(values: pd.Series, l: int) -> dict:
    """Definition 1 of Wang et al. (ICDM 2010): the most frequent value of ``values`` (missing is a
    value of its own) occurs at most ``len(values) / l`` times. The empty table is l-eligible."""
    counts = _as_text(pd.Series(values)).value_counts()
    n = int(counts.sum())
    top = int(counts.iloc[0]) if len(counts) else 0
    if l * top > n:
        raise VerificationError(
            f"table of {n} records is not {l}-eligible: value {counts.index[0]!r} occurs {top} times (> {n}/{l})"
        )
    return {"records": n, "max_frequency": top}


def _text_codes(*columns: pd.Series) -> tuple[list[np.ndarray], np.ndarray]:
    """Codes of the *text* of every value of ``columns`` (as :func:`_as_text`: missing is one value
    of its own, everything else ``str``) in one code space shared by all columns, and the texts of
    the codes. Only the distinct values are converted to text when that is exact: integer, boolean
    and string columns, and object columns whose distinct values are all ``str`` or missing (a
    hash-based factorization could merge values that compare equal but print differently, e.g.
    ``1`` and ``1.0``; other columns are converted value by value first)."""
    codes, texts = [], []
    for col in columns:
        col = pd.Series(col).reset_index(drop=True)
        dtype = col.dtype
        exact = isinstance(dtype, pd.StringDtype) or pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
        c, u = pd.factorize(col, use_na_sentinel=False)
        if not exact and dtype == object:
            exact = all(type(v) is str or v is None or (isinstance(v, float) and v != v) for v in u)
        if not exact:
            c, u = pd.factorize(_as_text(col), use_na_sentinel=False)
        codes.append(np.asarray(c, dtype=np.int64))
        texts.append(_as_text(pd.Series(np.asarray(u, dtype=object), dtype=object)).to_numpy(dtype=object))
    canon, uniq = pd.factorize(np.concatenate(texts) if texts else np.zeros(0, dtype=object))
    out, offset = [], 0
    for c, t in zip(codes, texts):
        out.append(canon[offset + c] if len(c) else np.zeros(0, dtype=np.int64))
        offset += len(t)
    return out, np.asarray(uniq, dtype=object)


def check_anatomy(
    qit: pd.DataFrame,
    st: pd.DataFrame,
    l: int,
    *,
    sensitive: str,
    qi: Sequence[str] | None = None,
    group: str = "group",
    partition: str | None = None,
    expected_values: pd.Series | None = None,
    expected_partition: pd.Series | None = None,
) -> dict:
    """Check an Anatomy release (Xiao & Tao, VLDB 2006) on the released tables only.

    * ``st`` has columns ``group``, ``sensitive``, ``count`` with positive integer counts and no repeated
      (group, value) pair; ``qit`` has a ``group`` column and, when ``qi`` is given, nothing but ``qi``
      and ``group`` (no timestamp, no sensitive value published there);
    * the groups of both tables coincide and each group's ST counts add up to its QIT rows;
    * every group is l-diverse: each value makes at most ``1 / l`` of the group (so >= l distinct values);
    * with ``expected_values`` (the sensitive values of the records meant to be published), the
      released multiset of values equals it (nothing lost, nothing invented).

    With ``partition`` (a column of both tables, e.g. the snapshot), groups are keyed by
    ``(partition, group)`` and ``expected_partition`` gives the partition of each expected value, so
    many releases are checked at once.

    Values are compared by their published text (missing is a value of its own): every column is
    coded by the text of its values (:func:`_text_codes`) and the checks are counts over those codes,
    so a group, a value or a snapshot is what a reader of the released tables sees.
    """
    for col in (group, sensitive, "count"):
        if col not in st.columns:
            raise VerificationError(f"sensitive table lacks column {col!r}")
    if group not in qit.columns:
        raise VerificationError(f"quasi-identifier table lacks column {group!r}")
    if qi is not None:
        extra = [c for c in qit.columns if c not in set(qi) | {group} | ({partition} if partition else set())]
        if extra:
            raise VerificationError(f"quasi-identifier table publishes non-QI column(s) {extra}")
    if sensitive in qit.columns:  # (also when the caller names it a quasi-identifier: it links each value to its row)
        raise VerificationError(f"quasi-identifier table publishes the sensitive column {sensitive!r}")
    counts = pd.to_numeric(st["count"], errors="coerce")
    if counts.isna().any() or (counts <= 0).any() or (counts != counts.round()).any():
        raise VerificationError("sensitive table has a count that is not a positive integer")
    counts = counts.to_numpy(dtype=float)
    (st_g, qit_g), g_text = _text_codes(st[group], qit[group])
    n_st, n_qit = len(st), len(qit)
    if partition is not None:
        for name, table in (("sensitive", st), ("quasi-identifier", qit)):
            if partition not in table.columns:
                raise VerificationError(f"{name} table lacks column {partition!r}")
        with_expected = expected_values is not None and expected_partition is not None
        parts = [st[partition], qit[partition]] + ([pd.Series(expected_partition)] if with_expected else [])
        part_codes, p_text = _text_codes(*parts)
        st_p, qit_p = part_codes[0], part_codes[1]
    else:
        p_text = np.array([""], dtype=object)
        st_p, qit_p = np.zeros(n_st, dtype=np.int64), np.zeros(n_qit, dtype=np.int64)
    # a group is the pair (partition text, group text): one dense id over both tables
    NG = max(len(g_text), 1)
    gkey, gid = np.unique(np.concatenate([st_p * NG + st_g, qit_p * NG + qit_g]), return_inverse=True)
    gid = gid.reshape(-1)
    st_id, qit_id = gid[:n_st], gid[n_st:]
    K = len(gkey)

    def key_text(k: int) -> str:
        """The text key of group ``k`` as the messages print it: partition, ``\\x01``, group."""
        p, g = divmod(int(gkey[k]), NG)
        return (p_text[p] + "\x01" if partition is not None else "") + g_text[g]

    if expected_values is not None:
        (st_v, exp_v), v_text = _text_codes(st[sensitive], pd.Series(expected_values))
    else:
        (st_v,), v_text = _text_codes(st[sensitive])
    pair = st_id * max(len(v_text), 1) + st_v
    _, first = np.unique(pair, return_index=True)
    if len(first) < n_st:
        dup = np.ones(n_st, dtype=bool)
        dup[first] = False
        raise VerificationError(f"sensitive table repeats (group, value) at line {int(np.flatnonzero(dup)[0]) + 2}")
    st_sum = np.bincount(st_id, weights=counts, minlength=K)
    st_max = np.zeros(K)
    np.maximum.at(st_max, st_id, counts)
    in_st = np.bincount(st_id, minlength=K) > 0
    sizes = np.bincount(qit_id, minlength=K)
    if not np.array_equal(in_st, sizes > 0):
        only = np.flatnonzero(in_st != (sizes > 0))
        keys = sorted(key_text(k) for k in only)
        raise VerificationError(f"groups differ between the two tables, e.g. {keys[:3]}")
    bad = np.flatnonzero(st_sum != sizes)
    if len(bad):
        k = min(bad, key=key_text)  # the first failing group in text order
        g = key_text(k)
        raise VerificationError(
            f"group {g.replace(chr(1), ', group ')}: sensitive counts add up to {int(st_sum[k])} but it has {int(sizes[k])} QIT rows"
        )
    bad = np.flatnonzero(l * st_max > st_sum)
    if len(bad):
        k = min(bad, key=key_text)  # the first failing group in text order
        g = key_text(k)
        raise VerificationError(
            f"group {g.replace(chr(1), ', group ')} is not {l}-diverse: a value has {int(st_max[k])} of its {int(st_sum[k])} records"
        )
    if expected_values is not None:
        NV = max(len(v_text), 1)
        if partition is not None and expected_partition is not None:
            exp_p = part_codes[2]
            if len(exp_p) != len(exp_v):
                raise VerificationError("released sensitive values differ from the records meant to be published")
            want_key, got_key, M = exp_p * NV + exp_v, st_p * NV + st_v, max(len(p_text), 1) * NV
        else:
            want_key, got_key, M = exp_v, st_v, NV
        want = np.bincount(want_key, minlength=M)
        got = np.bincount(got_key, weights=counts, minlength=M)
        if len(want) != len(got) or not np.array_equal(want, got):
            raise VerificationError("released sensitive values differ from the records meant to be published")
    return {"groups": int(K), "records": int(n_qit), "min_group_size": int(sizes.min()) if K else None}


# --- (k,P)-anonymity (time series, issue 5) ------------------------------------------------------


def _ts_sax_symbols(values, level: int, paa_segments: int | None = None):
    """SAX symbols of each row, written independently of :mod:`tempanon.timeseries.sax` from the
    documented rule: z-normalize (population std; a row with std <= 1e-9*max(1, max|x|) is constant
    and gets z = 0), optional PAA by ``numpy.array_split`` chunks, symbol = number of breakpoints
    ``Phi^-1(j/level)`` that are <= z."""
    import numpy as np
    from scipy.special import ndtri

    x = np.asarray(values, dtype=float)
    mu = x.mean(axis=1)[:, None]
    sd = x.std(axis=1)[:, None]
    flat = sd <= 1e-9 * np.maximum(1.0, np.abs(x).max(axis=1))[:, None]
    z = np.where(flat, 0.0, (x - mu) / np.where(flat, 1.0, sd))
    if paa_segments is not None and paa_segments != x.shape[1]:
        z = np.stack([c.mean(axis=1) for c in np.array_split(z, paa_segments, axis=1)], axis=1)
    cuts = ndtri(np.arange(1, level) / level)
    return np.digitize(z, cuts, right=False), z, cuts


def check_kp_anonymity(
    original: pd.DataFrame,
    released: pd.DataFrame,
    audit: pd.DataFrame,
    *,
    id_col: str,
    qi: Sequence[str],
    k: int,
    P: int,
    value_columns: Sequence[str] | None = None,
    pattern_columns: Sequence[str] | None = None,
    sensitive: Sequence[str] = (),
    l_diversity: int | None = None,
    epsilon: float | None = None,
    paa_segments: int | None = None,
) -> dict:
    """Check a (k,P)-anonymous time-series release (Shou et al., TKDE, Definition 5).

    Works on the released table and the steward's audit (``id``, ``output_row``) only: every input
    id appears once in the audit, published rows map one-to-one to output rows, fewer than ``P``
    series are suppressed, every k-group has ``>= k`` rows sharing one envelope that contains each
    member's original values, every P-subgroup lies in one k-group with ``>= P`` rows and one
    pattern, inside each k-group every (pattern, level) is shared by ``>= P`` rows, and every
    published pattern is the record's own SAX word at the published level (recomputed here).
    Sensitive values are unchanged, or with ``l_diversity`` each P-subgroup has no value on more
    than ``floor(size/l)`` rows and each value moved by at most ``epsilon``.
    """
    import numpy as np

    def fail(msg: str):
        raise VerificationError(f"(k,P)-anonymity check failed: {msg}")

    qi = list(qi)
    vcols = list(qi if value_columns is None else value_columns)
    pcols = list(qi if pattern_columns is None else pattern_columns)
    n_in = len(original)
    ids = original[id_col].astype(str).to_numpy()
    if len(audit) != n_in:
        fail(f"audit has {len(audit)} lines for {n_in} input series")
    aud_ids = audit["id"].astype(str).to_numpy()
    if len(set(aud_ids)) != len(aud_ids):
        fail("an id appears twice in the audit")
    if set(aud_ids) != set(ids):
        missing = sorted(set(ids) - set(aud_ids))[:3]
        fail(f"ids lost or invented in the audit, e.g. {missing}")
    pos = pd.Series(np.arange(n_in), index=ids)
    src_of_audit = pos.loc[aud_ids].to_numpy()
    rows = pd.to_numeric(audit["output_row"], errors="coerce")
    pub = rows.notna().to_numpy()
    suppressed = int((~pub).sum())
    if suppressed >= max(P, 1):
        fail(f"{suppressed} series suppressed, P={P} allows at most {P - 1}")
    out_rows = rows[pub].to_numpy()
    if not np.array_equal(np.sort(out_rows), np.arange(len(released))):
        fail(f"audit output rows do not match the {len(released)} released rows one-to-one")
    src = np.empty(len(released), dtype=np.int64)
    src[out_rows.astype(np.int64)] = src_of_audit[pub]
    if len(released) == 0:
        fail("nothing is published")
    rel = released.reset_index(drop=True)
    kg = rel["kgroup"].to_numpy()
    ks = rel.groupby("kgroup")["kgroup"].transform("size").to_numpy()
    if ks.min() < k:
        fail(f"k-group {kg[ks.argmin()]} has {ks.min()} series, fewer than k={k}")
    ps = rel.groupby("psubgroup").agg(n=("kgroup", "size"), nk=("kgroup", "nunique"),
                                      npat=("pattern", "nunique"), nlev=("pattern_level", "nunique"))
    if (ps["nk"] > 1).any() or (ps["npat"] > 1).any() or (ps["nlev"] > 1).any():
        fail("a P-subgroup spans several k-groups or patterns")
    if ps["n"].min() < P:
        fail(f"P-subgroup {ps['n'].idxmin()} has {ps['n'].min()} series, fewer than P={P}")
    share = rel.groupby(["kgroup", "pattern", "pattern_level"])["kgroup"].transform("size").to_numpy()
    if share.min() < P:
        fail(f"in k-group {kg[share.argmin()]} a pattern is shared by {share.min()} series, fewer than P={P}")
    X = original[qi].to_numpy(dtype=float)[src]
    for c in vcols:
        lo = rel[f"{c}_lo"].to_numpy(dtype=float)
        hi = rel[f"{c}_hi"].to_numpy(dtype=float)
        if (rel.groupby("kgroup")[[f"{c}_lo", f"{c}_hi"]].nunique() > 1).any().any():
            fail(f"column {c!r}: rows of one k-group publish different envelopes")
        x = X[:, qi.index(c)]
        bad = ~((lo <= x) & (x <= hi))
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            fail(f"column {c!r}, output line {r + 2}: envelope [{lo[r]}, {hi[r]}] misses the original {x[r]}")
    levels = rel["pattern_level"].to_numpy()
    if not np.issubdtype(levels.dtype, np.integer) or levels.min() < 1 or levels.max() > 26:
        fail("pattern_level must be an integer in 1..26")
    pats = rel["pattern"].astype(str).to_numpy()
    width = paa_segments if paa_segments is not None else len(pcols)
    lens = np.array([len(p) for p in pats])
    if (lens != width).any():
        fail(f"output line {int(np.flatnonzero(lens != width)[0]) + 2}: pattern length is not {width}")
    sel = [qi.index(c) for c in pcols] if paa_segments is None else list(range(width))
    for level in np.unique(levels):
        r = np.flatnonzero(levels == level)
        expect, z, cuts = _ts_sax_symbols(X[r], int(level), paa_segments)
        expect, z = expect[:, sel], z[:, sel]
        text = "".join(pats[r])
        if not text.isascii():
            fail("a pattern has a letter outside a..z")
        got = np.frombuffer(text.encode("ascii"), dtype=np.uint8).reshape(len(r), width).astype(np.int64) - 97
        # a value within 1e-9 of a breakpoint may take either neighbouring symbol (summation order)
        near = np.zeros(z.shape, dtype=bool)
        if cuts.size:
            near = np.abs(z[..., None] - cuts).min(axis=-1) <= 1e-9
        wrong = ((expect != got) & ~(near & (np.abs(expect - got) == 1))).any(axis=1)
        if wrong.any():
            i = int(r[np.flatnonzero(wrong)[0]])
            fail(f"output line {i + 2}: pattern {pats[i]!r} is not the series' own SAX word at level {level}")
    perturbed = 0
    for s in sensitive:
        orig = original[s].to_numpy()[src]
        got = rel[s].to_numpy()
        if l_diversity is None:
            same = pd.Series(orig).eq(pd.Series(got)).to_numpy() | (pd.isna(orig) & pd.isna(got))
            if not same.all():
                fail(f"sensitive column {s!r} changed in output line {int(np.flatnonzero(~same)[0]) + 2}")
        else:
            o, g = np.asarray(orig, dtype=float), np.asarray(got, dtype=float)
            if (np.abs(o - g) > (epsilon or 0.0) + 1e-9 * np.maximum(1, np.abs(o))).any():
                fail(f"sensitive column {s!r}: a value moved by more than epsilon={epsilon}")
            perturbed += int((o != g).sum())
            cnt = rel.assign(_v=g).groupby(["psubgroup", "_v"])["_v"].transform("size").to_numpy()
            cap = np.floor(rel.groupby("psubgroup")["psubgroup"].transform("size").to_numpy() / l_diversity)
            if (cnt > cap).any():
                i = int(np.flatnonzero(cnt > cap)[0])
                fail(f"sensitive column {s!r}: P-subgroup {rel['psubgroup'][i]} is not {l_diversity}-diverse")
    return {
        "k": k,
        "P": P,
        "kgroups": int(rel["kgroup"].nunique()),
        "psubgroups": int(len(ps)),
        "min_kgroup": int(ks.min()),
        "min_psubgroup": int(ps["n"].min()),
        "suppressed": suppressed,
        "perturbed": perturbed,
    }


# --- timestamped data (issue 3) -------------------------------------------------------------------

import numpy as np  # noqa: E402


def _expected_time_labels(times: pd.Series, granularity: str) -> pd.Series | None:
    """Labels of the built-in granularities recomputed with pandas' own calendar code (not the
    numpy index arithmetic of :mod:`tempanon.temporal`); None for other granularities."""
    fmt = {
        "second": "%Y-%m-%dT%H:%M:%S", "minute": "%Y-%m-%dT%H:%M", "hour": "%Y-%m-%dT%H",
        "day": "%Y-%m-%d", "business-day": "%Y-%m-%d", "month": "%Y-%m", "year": "%Y",
        "format:%Y": "%Y", "format:%Y-%m": "%Y-%m", "format:%Y-%m-%d": "%Y-%m-%d",
    }.get(granularity)  # fmt: skip
    if fmt is not None:
        return times.dt.strftime(fmt)
    year = times.dt.year.astype("Int64").astype(str)
    if granularity == "week":
        iso = times.dt.isocalendar()
        return iso["year"].astype(str) + "-W" + iso["week"].astype(int).map("{:02d}".format)
    if granularity == "quarter":
        return year + "Q" + times.dt.quarter.astype(str)
    if granularity == "semester":
        return year + "S" + ((times.dt.month > 6).astype(int) + 1).astype(str)
    return None


def check_timestamped_release(
    original: pd.DataFrame,
    released: pd.DataFrame,
    *,
    time: str,
    qi: Sequence[str],
    uid: str | None,
    k: int,
    granularity: str,
    original_times: pd.Series,
    n_input: int,
    max_suppressed: int = 0,
    generalized_qi: Sequence[str] = (),
) -> dict:
    """Independent check of a timestamped release (Mascetti et al., Definition 4).

    ``released`` carries the original row labels in its index. Checks that the UID column is not
    published; that every class of (quasi-identifiers, released time) holds at least ``k``
    distinct respondents (UIDs looked up in ``original``) and at most ``max_suppressed`` rows are
    missing; that quasi-identifiers not in ``generalized_qi`` and all other columns are published
    unchanged; that a missing timestamp stays missing; and that each released time is the label
    of the granule holding the original time: recomputed with pandas for built-in granularities,
    otherwise checked structurally (labels ordered by time form contiguous blocks: granules of a
    granularity never interleave). ``original_times`` are the parsed timestamps (naive, UTC for
    tz-aware input), indexed like ``original``.
    """
    if uid is not None and uid in released.columns:
        raise VerificationError(f"the respondent identifier {uid!r} is published")
    if not released.index.isin(original.index).all():
        raise VerificationError("released rows that are not in the input")
    src = original.loc[released.index]
    for col in released.columns:
        if col == time or col in generalized_qi:
            continue
        if col not in src.columns:
            raise VerificationError(f"released column {col!r} is not in the input")
        mixed = _mixed(src[col]) or _mixed(released[col])  # (as written: 1 published as True is a change)
        if not mixed and src[col].equals(released[col]):  # same values, missing in the same places
            continue
        a = src[col].astype(object).where(src[col].notna(), None)
        b = released[col].astype(object).where(released[col].notna(), None)
        if mixed:
            diff = _as_text(a) != _as_text(b)
        else:
            diff = a.ne(b) & ~(a.isna() & b.isna())
        if bool(diff.any()):
            row = diff[diff].index[0]
            raise VerificationError(f"column {col!r}, input {_at_label(src.index, row)}: published {b[row]!r} instead of {a[row]!r}")
    frame = released[list(qi) + [time]].copy()
    frame["__uid__"] = src[uid].to_numpy() if uid is not None else np.arange(len(src))
    report = check_k_anonymity(frame, list(qi) + [time], k, uid="__uid__", n_input=n_input,
                               max_suppressed=max_suppressed)  # fmt: skip
    times = original_times.loc[released.index]
    got = released[time].astype(object).where(released[time].notna(), None)
    miss_t, miss_l = times.isna(), got.isna()
    if bool((miss_t != miss_l).any()):
        row = (miss_t != miss_l)[lambda s: s].index[0]
        raise VerificationError(f"input {_at_label(original_times.index, row)}: time {times[row]!r} released as {got[row]!r}")
    times, got = times[~miss_t], got[~miss_t].astype(str)
    expected = _expected_time_labels(times, granularity)
    if expected is not None:
        bad = expected.astype(str) != got
        if granularity == "business-day":
            bad |= times.dt.day_of_week >= 5
        if bool(bad.any()):
            row = bad[bad].index[0]
            raise VerificationError(
                f"input {_at_label(original_times.index, row)}: time {times[row]} released as {got[row]!r}, expected {expected[row]!r} ({granularity})"
            )
        report["time_labels"] = "recomputed"
    else:
        seq = got.iloc[np.argsort(times.to_numpy(), kind="stable")]
        starts = seq.ne(seq.shift())
        n_blocks = int(starts.sum())
        if n_blocks != seq.nunique():
            lab = seq[starts].value_counts()
            raise VerificationError(
                f"released time labels interleave in time (e.g. {lab.index[0]!r} occurs in {int(lab.iloc[0])} "
                f"separate stretches): they are not the granules of one granularity"
            )
        report["time_labels"] = "contiguous"
    report["respondents"] = int((_as_text(frame["__uid__"]) if _mixed(frame["__uid__"]) else frame["__uid__"]).nunique())
    return report


def check_timestamp_order(home, published, value) -> dict:
    """Theorem 1 of Wang, Xu, Wong, Fu (ICDM 2010): the releases of a stream are *timestamp-order
    preserving*: for records ``r1`` published in ``D'[i]`` and ``r2`` in ``D'[j]`` with the same
    sensitive value, ``i < j`` implies ``r1.TS <= r2.TS``. Works on the steward's record table:
    ``home`` (each record's own snapshot index), ``published`` (the snapshot index it was published
    in, negative or missing when suppressed) and ``value`` (its sensitive value). Raises
    :class:`VerificationError` naming how many records are out of order and one example."""
    home = np.asarray(home, dtype=np.int64)
    pub = pd.to_numeric(pd.Series(published), errors="coerce").fillna(-1).to_numpy(dtype=np.int64)
    val = pd.Series(value, dtype=object).astype(str).where(pd.Series(value, dtype=object).notna(), "\x00<NA>")
    codes = pd.factorize(val)[0].astype(np.int64)
    keep = pub >= 0
    h, p, c = home[keep], pub[keep], codes[keep]
    if len(h) == 0:
        return {"records": 0, "out_of_order": 0}
    order = np.lexsort((h, p, c))
    h, p, c = h[order], p[order], c[order]
    span = int(h.max()) - int(h.min()) + 1
    key = c * span + (h - int(h.min()))  # the running maximum never crosses into another value
    run = np.maximum.accumulate(key)
    new_group = np.ones(len(h), dtype=bool)
    new_group[1:] = (c[1:] != c[:-1]) | (p[1:] != p[:-1])
    start = np.flatnonzero(new_group)
    first_of_value = np.ones(len(h), dtype=bool)
    first_of_value[1:] = c[1:] != c[:-1]
    # the largest home published earlier (in an earlier snapshot) with the same value
    before = np.where(first_of_value[start], -1, np.concatenate([[-1], run[:-1]])[start])
    group_id = np.cumsum(new_group) - 1
    prev_max = before[group_id]
    bad = (prev_max >= 0) & (prev_max // span == c) & (key < prev_max)
    n_bad = int(bad.sum())
    if n_bad:
        k = int(np.flatnonzero(bad)[0])
        raise VerificationError(
            f"releases are not timestamp-order preserving (Theorem 1): {n_bad} record(s) published after a record "
            f"of the same sensitive value with a later timestamp, e.g. a record of snapshot {int(h[k])} published in "
            f"{int(p[k])} after one of snapshot {int(prev_max[k] % span + home[keep].min())}"
        )
    return {"records": int(len(h)), "out_of_order": 0}


def check_stream_delays(row_snapshot, rows, published, w: int, labels=None) -> dict:
    """Every record of a stream is published in its own snapshot or at most ``w`` snapshots later, or
    suppressed: ``row_snapshot[i]`` is input row ``i``'s snapshot as its time cuts it, ``rows`` and
    ``published`` the publisher's placement per record (snapshot index, negative when suppressed).
    Raises :class:`VerificationError` naming the first record (input line, header = line 1) placed
    elsewhere: a record published before its own time, or delayed more than ``w``."""
    rows = np.asarray(rows, dtype=np.int64)
    pub = np.asarray(published, dtype=np.int64)
    home = np.asarray(row_snapshot, dtype=np.int64)[rows]
    bad = (pub >= 0) & ((pub < home) | (pub > home + int(w)))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        name = (lambda i: repr(labels[i])) if labels is not None else str
        raise VerificationError(
            f"{int(bad.sum())} record(s) published outside their window of {int(w)} snapshot(s), e.g. the record "
            f"of line {int(rows[k]) + 2} (snapshot {name(int(home[k]))}) in snapshot {name(int(pub[k]))}"
        )
    return {"records": int(len(rows)), "outside_window": 0}


# --- full-domain releases, per distinct value (issue 15) ------------------------------------------


def check_generalized_release(
    original: pd.DataFrame,
    released: pd.DataFrame,
    qi: Sequence[str],
    k: int,
    mapping: dict[str, dict[str, str]],
    *,
    uid: str | None = None,
    max_suppressed: int | None = None,
) -> dict:
    """:func:`check_k_anonymity` and :func:`check_generalization` in one pass, with the text work
    done once per distinct value instead of once per row (the same checks, same messages).

    ``released`` carries the original row labels in its index. For every column in ``mapping``
    each released value must be ``mapping[col][text of the original value]`` (the hierarchy file,
    not the kernels); every class of the released ``qi`` values must have at least ``k`` rows (or
    ``k`` distinct ``uid`` values of the original rows); at most ``max_suppressed`` input rows may
    be missing. Rows are compared as integer codes: each column is factorized once, the expected
    label looked up once per distinct original value."""
    pos = original.index.get_indexer(released.index)
    if (pos < 0).any():
        raise VerificationError(f"output row {released.index[int(np.argmax(pos < 0))]!r} is not an input row")
    seen = np.zeros(len(original), dtype=bool)
    seen[pos] = True
    if int(np.count_nonzero(seen)) != len(pos):
        raise VerificationError("output repeats an input row")
    key = np.zeros(len(released), dtype=np.int64)
    for col in qi:
        got = released[col]
        if col in mapping:
            # expected text once per distinct original value, then one object comparison per row;
            # the classes are then those of the (verified) expected labels
            table = mapping[col]
            ocol = original[col]
            if _mixed(ocol):  # (1, True, 1.0: equal in Python, three texts; missing stays missing)
                ocol = ocol.astype(object).where(ocol.isna(), ocol.astype(str))
            oc, ou = pd.factorize(ocol, use_na_sentinel=False)
            oc = oc[pos]
            expected = [table.get(_value_text(v)) for v in ou]
            lab_code, labels = pd.factorize(pd.Series(["\x00<none>" if e is None else str(e) for e in expected], dtype=object))
            got_text = got.to_numpy(dtype=object)
            exp_text = np.asarray(labels, dtype=object)[lab_code][oc]
            # a missing released cell reads as "" (so it matches an empty expected label): compare
            # first, then look for missing values among the mismatches only (isna over every
            # object cell cost more than the comparison)
            try:
                bad = np.asarray(got_text != exp_text, dtype=bool)
            except TypeError:  # a value without a plain truth for != (pd.NA): the cell-by-cell way
                bad = None
            if bad is None or bad.shape != got_text.shape:
                missing = pd.isna(got_text)
                bad = np.where(missing, "", got_text).astype(object) != exp_text
            else:
                missing = np.zeros(len(got_text), dtype=bool)
                rows = np.flatnonzero(bad)
                if len(rows):
                    miss = pd.isna(got_text[rows])
                    missing[rows[miss]] = True
                    bad[rows[miss]] = exp_text[rows[miss]] != ""
            if missing.any():
                got_text = np.where(missing, "", got_text).astype(object)
            if bad.any():
                r = int(np.argmax(bad))
                row = released.index[r]
                raise VerificationError(
                    f"column {col!r}, row {row}: released value {str(got_text[r])!r} is not the generalization "
                    f"{expected[oc[r]]!r} of {original.loc[row, col]!r}"
                )
            rc, n_codes = lab_code[oc], len(labels)
            if missing.any():  # a missing cell and an empty text are different published values
                rc, n_codes = rc * 2 + missing, 2 * n_codes
        else:
            rc, ru = pd.factorize(_as_text(got) if _mixed(got) else got, use_na_sentinel=False)
            n_codes = len(ru)
        rc = np.asarray(rc, dtype=np.int64)
        if n_codes and int(key.max(initial=0)) + 1 > (2**62) // max(n_codes, 1):
            key = pd.factorize(key)[0].astype(np.int64)
        key = key * max(n_codes, 1) + rc
    cls, inv = np.unique(key, return_inverse=True)
    if uid is None:
        sizes = np.bincount(inv, minlength=len(cls))
    else:
        uo = original[uid]
        u = pd.factorize((_as_text(uo) if _mixed(uo) else uo).to_numpy(dtype=object)[pos], use_na_sentinel=False)[0].astype(np.int64)
        n_u = int(u.max(initial=0)) + 1
        pairs = np.unique(inv.astype(np.int64) * n_u + u)
        sizes = np.bincount(pairs // n_u, minlength=len(cls))
    if len(sizes) and int(sizes.min()) < k:
        small = sizes < k
        r = int(np.argmax(small[inv]))
        example = {c: released[c].iloc[r] for c in qi}
        what = "respondents" if uid else "rows"
        raise VerificationError(
            f"output is not {k}-anonymous: {int(small.sum())} equivalence class(es) have fewer than {k} {what}, "
            f"e.g. {example} with {int(sizes[inv[r]])}"
        )
    suppressed = len(original) - len(released)
    if max_suppressed is not None and suppressed > max_suppressed:
        raise VerificationError(f"output suppresses {suppressed} rows, more than the allowed {max_suppressed}")
    return {"k": k, "classes": int(len(sizes)), "min_class_size": int(sizes.min()) if len(sizes) else None, "suppressed_rows": suppressed}
