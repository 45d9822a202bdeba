"""numeric_dates and utc_offsets match their patterns once per distinct key (a value's first 11
characters after its leading whitespace; its last 6 characters): the same results as the patterns
matched on every value, on values built to sit at the keys' edges."""

import re

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from tempanon.stream.snapshots import _OFFSET, utc_offsets
from tempanon.temporal.parse import _NUMERIC_DATE, numeric_dates

DIGITS = st.sampled_from(list("0123456789") + ["\u0663", "\u096b", "\uff17"])  # ASCII and other Nd digits
SPACE = st.sampled_from([" ", "\t", "\n", "\u00a0", "\u2003", "\x1c", "\u3000"])
# (no lone surrogates, '\ud800': text read from a file cannot hold them, and pandas' string dtype, the oracle's and
# the keys' own, cannot encode them)
CHARS = st.characters(blacklist_categories=("Cs",))
PIECES = st.one_of(DIGITS, SPACE, st.sampled_from(list("./-:+TZ ab")), CHARS)


def _values(draw_list):
    return pd.Series(draw_list, dtype=object)


@st.composite
def date_like(draw):
    lead = "".join(draw(st.lists(SPACE, max_size=3)))
    sep = draw(st.sampled_from(["/", ".", "-", ":"]))
    seps = [sep, draw(st.sampled_from([sep, sep, "/", "."]))]
    parts = ["".join(draw(st.lists(DIGITS, min_size=0, max_size=n))) for n in (3, 3, 6)]
    rest = "".join(draw(st.lists(PIECES, max_size=6)))
    return lead + parts[0] + seps[0] + parts[1] + seps[1] + parts[2] + rest


@st.composite
def offset_like(draw):
    head = "".join(draw(st.lists(PIECES, max_size=8)))
    tail = draw(st.sampled_from(["Z", "+05:30", "-0800", "+01", "-01", ":00+02", ":5Z", "1Z", "+1:30", "+12:3", ""]))
    return head + "".join(draw(st.lists(DIGITS, max_size=2))) + tail


def _dates_per_value(text):
    m = text.astype("string").str.extract(_NUMERIC_DATE)
    found = m[0].notna().to_numpy()
    pos = np.flatnonzero(found)
    return pos, m[0].to_numpy()[pos].astype(int), m[2].to_numpy()[pos].astype(int), m[1].to_numpy()[pos] == "."


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(date_like(), st.text(CHARS, max_size=14), st.none()), min_size=1, max_size=30))
def test_numeric_dates_by_key_as_per_value(values):
    text = _values(values)
    got, want = numeric_dates(text), _dates_per_value(text)
    for g, w in zip(got, want):
        assert np.array_equal(g, w)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(offset_like(), st.text(CHARS, max_size=10)), min_size=1, max_size=30))
def test_utc_offsets_by_tail_as_per_value(values):
    text = _values(values)
    want = text.str.extract(f"({_OFFSET.pattern[:-1]})$", expand=False)
    got = utc_offsets(text)
    assert got.isna().tolist() == want.isna().tolist()
    assert got[got.notna()].tolist() == want[want.notna()].tolist()


def test_the_keys_edges():
    # an 11th character that is a digit rejects a two-digit year; a match in the first 10 decides it
    text = pd.Series(["  05/03/2023", "05/03/23", "05/03/231", "\u00a005.03.2023x", "1/2/17 10:00", "2017-01-01T06:00:42Z"])
    pos, a, b, dots = numeric_dates(text)
    assert pos.tolist() == [0, 1, 3, 4] and a.tolist() == [5, 5, 5, 1] and b.tolist() == [3, 3, 3, 2]
    assert dots.tolist() == [False, False, True, False]
    off = utc_offsets(pd.Series(["2020-01-01T10:00:00+05:30", "2020-01-01T10:00Z", "10:00:00+02", "2020-01-01 10", "Z"]))
    assert off.tolist()[:3] == ["+05:30", "Z", "+02"] and off.isna().tolist()[3:] == [True, True]
    assert re.search(_OFFSET, "10:00:00+02")  # (the pattern itself, for the record)
