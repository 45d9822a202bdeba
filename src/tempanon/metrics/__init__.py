"""Privacy, risk and utility measures of tables (vectorized over integer class codes)."""

from tempanon._lazy import lazy_exports

_EXPORTS = {
    'ClassAggregates': 'risk',
    'RiskSummary': 'risk',
    'aggregates_of': 'risk',
    'class_codes': 'risk',
    'class_sizes': 'risk',
    'distinct_per_class': 'risk',
    'l_measures': 'risk',
    'measure': 'risk',
    'risk_from_aggregates': 'risk',
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
