"""Full-domain k-anonymity: Incognito and its baselines (LeFevre, DeWitt, Ramakrishnan 2005)."""

from tempanon.kanon.api import KAnonResult, encode_for_search, kanonymize
from tempanon.kanon.search import (
    ALGORITHMS,
    SearchResult,
    binary_search,
    bottom_up,
    exhaustive,
    incognito,
    run_search,
)
from tempanon.kanon.select import CRITERIA, select_node

__all__ = [
    "ALGORITHMS",
    "CRITERIA",
    "KAnonResult",
    "SearchResult",
    "binary_search",
    "bottom_up",
    "encode_for_search",
    "exhaustive",
    "incognito",
    "kanonymize",
    "run_search",
    "select_node",
]
