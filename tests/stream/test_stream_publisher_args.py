"""StreamPublisher's quasi-identifiers, checked as anonymize_stream checks them (found by the acceptance
pass uatc): the sensitive column named a quasi-identifier was published in every QIT beside its group
(each record's value in the clear; the verifier let it pass as a declared QI), a comma-separated text
was taken letter by letter, and a QI given twice was published twice."""

from __future__ import annotations

import pandas as pd
import pytest

from tempanon.errors import InputError, VerificationError
from tempanon.stream import StreamPublisher
from tempanon.verify import check_anatomy


def _snapshot() -> pd.DataFrame:
    return pd.DataFrame({"race": ["B", "W", "B", "W"], "sex": ["F", "M", "M", "F"], "dx": ["a", "b", "c", "d"]})


def test_the_sensitive_column_is_no_quasi_identifier():
    with pytest.raises(InputError, match="column 'dx' cannot be a quasi-identifier: it is the sensitive column"):
        StreamPublisher(l=2, w=0, sensitive="dx", qi=["dx", "race"])


def test_a_quasi_identifier_given_twice_is_refused():
    with pytest.raises(InputError, match="quasi-identifier 'race' is given twice"):
        StreamPublisher(l=2, w=0, sensitive="dx", qi=["race", "race"])


def test_quasi_identifiers_as_comma_separated_text():
    pub = StreamPublisher(l=2, w=0, sensitive="dx", qi="race, sex")
    assert pub.qi == ["race", "sex"]
    (out,) = pub.push(_snapshot())
    assert list(out.qit.columns) == ["race", "sex", "group"]


def test_the_verifier_refuses_a_qit_with_the_sensitive_column_even_as_a_declared_qi():
    qit = pd.DataFrame({"dx": ["a", "b"], "group": [1, 1]})
    st = pd.DataFrame({"group": [1, 1], "dx": ["a", "b"], "count": [1, 1]})
    with pytest.raises(VerificationError, match="publishes the sensitive column 'dx'"):
        check_anatomy(qit, st, 2, sensitive="dx", qi=["dx"])
