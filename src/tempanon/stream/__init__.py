"""Streams of snapshots (Wang, Xu, Wong, Fu, "Anonymizing Temporal Data", ICDM 2010): the reposition
model, per-step optimal repositioning, Anatomy publishing (Xiao & Tao, VLDB 2006), window queries.
See docs/stream.md."""

from tempanon._lazy import lazy_exports

_EXPORTS = {
    "StreamResult": "api",
    "anonymize_stream": "api",
    "make_cost": "api",
    "stream_json_lines": "api",
    "CostModel": "model",
    "is_l_eligible": "model",
    "PublishedSnapshot": "publisher",
    "StreamPublisher": "publisher",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
