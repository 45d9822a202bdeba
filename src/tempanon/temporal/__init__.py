"""k-anonymity for timestamped data (Mascetti, Bettini, Wang, Jajodia, "k-Anonymity in Databases
with Timestamped Data", TIME 2006): many tuples per respondent, time granularities, the least
k-anonymous generalization by gen_m, gen_s and gen_c. See docs/temporal.md.

Entry points: :func:`anonymize_timestamped` (a DataFrame in memory; CLI: ``tempanon timestamped``),
:func:`anonymize_timestamped_file` (a file read and released by DuckDB or Spark, ``--engine``),
:func:`read_audit` (the steward's audit). Modules: :mod:`.granularity` (granularities, calendars),
:mod:`.relations` (the granularity DAG), :mod:`.least` (Algorithm 1), :mod:`.joint` (with generalized
quasi-identifiers), :mod:`.generator` (the paper's examples and synthetic hospital exams)."""

from tempanon._lazy import lazy_exports

_EXPORTS = {
    "TimestampedResult": "api",
    "anonymize_timestamped": "api",
    "read_audit": "api",
    "anonymize_timestamped_file": "outofcore",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
