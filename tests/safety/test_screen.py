"""Identifier screening (tempanon.data.screen): each signal flags what it should and nothing else."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tempanon.data.screen import IdentifierFinding, identifier_name_token, refuse_identifiers, screen_columns
from tempanon.errors import InputError


@pytest.mark.parametrize(
    "name", ["hadm_id", "row_id", "FirstName", "e-mail", "EMAIL", "Surname", "patientID", "ip", "IPAddress",
             "home address", "phone_number", "SSN", "mrn", "ID", "first.name", "Forename"],
)
def test_identifier_names_flagged(name):
    assert identifier_name_token(name) is not None


@pytest.mark.parametrize("name", ["paid", "width", "valid", "diagnosis", "age", "zip", "rapid", "ward", "mailbox_count_x"[:7]])
def test_ordinary_names_not_flagged(name):
    assert identifier_name_token(name) is None


def _frame(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 30, n),
            "diagnosis": rng.choice(["a", "b", "c"], n),
            "serial": np.arange(n) * 7 + 1000,
            "contact": [f"user{i}@example.org" for i in range(n)],
            "tel": [f"+44 20 7946 {i:04d}" for i in range(n)],
            "web": [f"https://example.org/p/{i % 3}" for i in range(n)],
            "host": [f"10.0.{i % 3}.{i % 2}" for i in range(n)],
            "notes": [f"patient complained of pain in the {'left' if i % 2 else 'right'} arm" for i in range(n)],
            "admitted": pd.date_range("2020-01-01", periods=n, freq="D").strftime("%Y-%m-%d %H:%M"),
            "zip": rng.choice(["12345", "12346"], n),
            "weight": rng.choice([60.5, 70.0, 80.25], n),
        }
    )


def test_each_signal_flags_its_column_only():
    df = _frame()
    found = {f.column: f.reason for f in screen_columns(df, list(df.columns))}
    assert "near-unique per row" in found["serial"]
    assert "e-mail" in found["contact"]
    assert "phone" in found["tel"]
    assert "URL" in found["web"]
    assert "IP address" in found["host"]
    assert "free text" in found["notes"]
    # without a time column a date is not a second timestamp, but it is near-unique
    assert "timestamps" not in found["admitted"]
    assert set(found) == {"serial", "contact", "tel", "web", "host", "notes", "admitted"}, found


def test_second_timestamp_only_with_time():
    df = _frame().assign(admitted=lambda d: d["admitted"].str[:10].where(d.index % 2 == 0, "2020-01-01"))
    assert not screen_columns(df, ["admitted"])  # few distinct values, no time column
    (f,) = screen_columns(df, ["admitted"], time="t")
    assert "timestamps" in f.reason and "'t'" in f.reason
    assert not screen_columns(df, ["zip", "weight", "age"], time="t")


def test_min_rows_and_uid():
    small = pd.DataFrame({"code": [f"x{i}" for i in range(19)]})
    assert not screen_columns(small, ["code"])
    assert screen_columns(pd.DataFrame({"code": [f"x{i}" for i in range(20)]}), ["code"])
    # per respondent: 30 patients with 3 rows each and their own code
    per = pd.DataFrame({"pid": np.repeat(np.arange(30), 3), "code": np.repeat([f"c{i}" for i in range(30)], 3),
                        "dx": np.tile(["a", "b", "c"], 30)})
    assert not screen_columns(per, ["code"])
    (f,) = screen_columns(per, ["code", "dx", "pid"], uid="pid")
    assert f.column == "code" and "per respondent" in f.reason


def test_refuse_and_override():
    df = _frame()
    with pytest.raises(InputError) as exc:
        refuse_identifiers(df, ["age", "contact", "serial"])
    msg = str(exc.value)
    assert "'contact'" in msg and "'serial'" in msg and "'age'" not in msg and "--allow-identifier" in msg
    overridden = refuse_identifiers(df, ["age", "contact", "serial"], allow={"contact", "serial"})
    assert [f.column for f in overridden] == ["contact", "serial"]
    assert all(isinstance(f, IdentifierFinding) for f in overridden)
    assert refuse_identifiers(df, ["age", "zip"]) == []


def test_dates_and_numbers_are_not_phones():
    df = pd.DataFrame({"d": ["2020-01-02", "2021-03-04"] * 20, "x": ["1234567.89", "7654321.1"] * 20,
                       "zip4": ["12345-6789", "12345-6780"] * 20})
    assert screen_columns(df, ["d", "x", "zip4"]) == []
