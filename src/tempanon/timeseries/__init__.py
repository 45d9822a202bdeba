"""(k,P)-anonymity for time series: Shou, Shang, Chen, Chen, Zhang, "Supporting Pattern-Preserving
Anonymization for Time-Series Data", IEEE TKDE.

Each published series carries the value envelope of its k-group and the SAX pattern of its
P-subgroup. Entry point: :func:`kp_anonymize` (CLI: ``tempanon kp``). Modules: :mod:`.sax`
(pattern representation), :mod:`.model` (losses, breach probabilities), :mod:`.tree`
(Algorithms 1-2), :mod:`.partition` (top-down partitioning, Algorithm 3), :mod:`.algorithms`
(Naive, KAPRA), :mod:`.ldiversity` (Section 5.4), :mod:`.publish` (Section 6), :mod:`.queries`
(Section 7), :mod:`.data` (Walk and Uniform generators)."""

from tempanon._lazy import lazy_exports

_EXPORTS = {
    'KPResult': 'api',
    'kp_anonymize': 'api',
    'released_source_rows': 'api',
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
