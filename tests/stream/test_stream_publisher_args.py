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


def test_wrong_argument_types_are_input_errors(tmp_path):
    """anonymize_stream(qi=5) and seed='x' were TypeErrors, 'tempanon stream --seed -1' a traceback
    (numpy's ValueError); allow_identifier='ip' was read letter by letter, so the 'ip' column stayed
    refused (found by the acceptance pass uatc)."""
    from typer.testing import CliRunner

    from tempanon.cli import app
    from tempanon.stream import anonymize_stream

    df = pd.DataFrame({"t": ["2020-01-01"] * 30, "ip": [f"10.0.0.{i}" for i in range(30)], "dx": list("ab") * 15})
    opts = dict(time="t", sensitive="dx", l=2, w=0)
    with pytest.raises(InputError, match="a list of columns must be text such as 'a,b' or a list of names, got int 5"):
        anonymize_stream(df, qi=5, **opts)
    with pytest.raises(InputError, match="seed must be an integer >= 0, got 'x'"):
        anonymize_stream(df, qi="ip", allow_identifier=["ip"], seed="x", **opts)
    res = anonymize_stream(df, qi="ip", allow_identifier="ip", **opts)
    assert res.summary["suppressed"] == 0
    p = tmp_path / "in.csv"
    df.to_csv(p, index=False)
    r = CliRunner().invoke(app, ["stream", str(p), "--time", "t", "--sensitive", "dx", "--qi", "ip", "--allow-identifier", "ip",
                                 "--l", "2", "--window", "0", "--seed", "-1", "--out", str(tmp_path / "out")])  # fmt: skip
    assert r.exit_code == 2 and "seed must be an integer >= 0, got -1" in r.output, r.output


def test_anonymize_stream_refuses_what_is_not_a_dataframe():
    """anonymize_stream([1, 2], ...) was an AttributeError traceback (found by the acceptance pass uatc)."""
    from tempanon.stream import anonymize_stream

    with pytest.raises(InputError, match="the stream must be a pandas DataFrame, got list"):
        anonymize_stream([1, 2], time="t", sensitive="s", l=2, w=0)
