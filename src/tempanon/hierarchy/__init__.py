"""Value generalization hierarchies and their builders (Incognito Section 2)."""

from tempanon.hierarchy.builders import (
    HierarchySpec,
    build_dates,
    build_intervals,
    build_masking,
    build_suppression,
    build_taxonomy,
    hierarchy_from_config,
)
from tempanon.hierarchy.core import MISSING, Hierarchy, as_text, load_hierarchies

__all__ = [
    "MISSING",
    "Hierarchy",
    "HierarchySpec",
    "as_text",
    "build_dates",
    "build_intervals",
    "build_masking",
    "build_suppression",
    "build_taxonomy",
    "hierarchy_from_config",
    "load_hierarchies",
]
