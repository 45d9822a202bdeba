"""Privacy, risk and utility measures of tables (vectorized over integer class codes)."""

from tempanon.metrics.risk import RiskSummary, class_codes, class_sizes, distinct_per_class, l_measures, measure

__all__ = ["RiskSummary", "class_codes", "class_sizes", "distinct_per_class", "l_measures", "measure"]
