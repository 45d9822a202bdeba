"""Shared fixtures for the k-anonymity tests: the Incognito paper's Patients example."""

from __future__ import annotations

import pandas as pd
import pytest

from tempanon.hierarchy import Hierarchy

# Figure 1 of LeFevre, DeWitt, Ramakrishnan (SIGMOD 2005).
PATIENTS = pd.DataFrame(
    {
        "Birthdate": ["1/21/76", "4/13/86", "2/28/76", "1/21/76", "4/13/86", "2/28/76"],
        "Sex": ["Male", "Female", "Male", "Male", "Female", "Female"],
        "Zipcode": ["53715", "53715", "53703", "53703", "53706", "53706"],
        "Disease": ["Flu", "Hepatitis", "Brochitis", "Broken Arm", "Sprained Ankle", "Hang Nail"],
    }
)


def patients_hierarchies() -> dict[str, Hierarchy]:
    """Figure 2: B0 -> B1 (*), S0 -> S1 (Person), Z0 -> Z1 (5371*, 5370*) -> Z2 (537**)."""
    return {
        "Birthdate": Hierarchy.from_rows("Birthdate", [[b, "*"] for b in ["1/21/76", "4/13/86", "2/28/76"]]),
        "Sex": Hierarchy.from_rows("Sex", [["Male", "Person"], ["Female", "Person"]]),
        "Zipcode": Hierarchy.from_rows(
            "Zipcode",
            [["53715", "5371*", "537**"], ["53710", "5371*", "537**"], ["53706", "5370*", "537**"], ["53703", "5370*", "537**"]],
        ),
    }


@pytest.fixture
def patients() -> pd.DataFrame:
    return PATIENTS.copy()


@pytest.fixture
def patients_h() -> dict[str, Hierarchy]:
    return patients_hierarchies()
