"""Sample data shipped with tempanon (package data, no download)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

ADULT_QI = (
    "age",
    "sex",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
)
"""The Adult quasi-identifiers in the order of the Incognito paper's experiments."""


def sample_dir(name: str) -> Path:
    """Directory of a bundled sample (``adult``, ...)."""
    path = Path(str(resources.files("tempanon.samples"))) / name
    if not path.is_dir():
        raise FileNotFoundError(f"no bundled sample {name!r}")
    return path


def adult_path() -> Path:
    """The bundled UCI Adult table (30,162 rows, ``;``-separated, gzip)."""
    return sample_dir("adult") / "adult.csv.gz"


def adult_hierarchies_dir() -> Path:
    """Directory holding one ARX hierarchy file per Adult quasi-identifier."""
    return sample_dir("adult")


def load_adult():
    """The Adult table as a DataFrame of text columns."""
    from tempanon.data.io import read_table

    return read_table(adult_path(), as_text=True)
