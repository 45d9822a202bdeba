"""Full-domain k-anonymity: Incognito and its baselines (LeFevre, DeWitt, Ramakrishnan 2005)."""

from tempanon._lazy import lazy_exports

_EXPORTS = {
    'KAnonResult': 'api',
    'encode_for_search': 'api',
    'kanonymize': 'api',
    'ALGORITHMS': 'search',
    'SearchResult': 'search',
    'binary_search': 'search',
    'bottom_up': 'search',
    'exhaustive': 'search',
    'incognito': 'search',
    'run_search': 'search',
    'CRITERIA': 'select',
    'select_node': 'select',
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
