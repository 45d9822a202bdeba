"""The report's number formatting (report/html.py ``_fmt``) on the values a summary can hold, including
non-finite floats (``int(inf)`` raised OverflowError before)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tempanon.report.html import _cell, _fmt


@pytest.mark.parametrize(("v", "text"), [
    (None, "n/a"), (True, "yes"), (False, "no"), (float("nan"), "n/a"), (float("inf"), "\u221e"),
    (float("-inf"), "-\u221e"), (np.float64("inf"), "\u221e"), (3.0, "3"), (12345.0, "12,345"), (0.5, "0.5"),
    (1e20, "100,000,000,000,000,000,000"), (12345, "12,345"), (7, "7"), ([1.0, float("inf")], "1, \u221e"),
])
def test_fmt_values(v, text):
    assert _fmt(v) == text


@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers() | st.none() | st.booleans())
def test_fmt_never_raises_and_is_short(v):
    text = _cell(v)
    assert isinstance(text, str) and text
    if isinstance(v, float) and math.isfinite(v) and v == int(v) and abs(v) < 1e15:
        assert int(text.replace(",", "")) == int(v)
