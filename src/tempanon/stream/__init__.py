"""Streams of snapshots (Wang, Xu, Wong, Fu, "Anonymizing Temporal Data", ICDM 2010): the reposition
model, OptimalReposition, Anatomy publishing (Xiao & Tao, VLDB 2006), window queries. See docs/stream.md."""

from tempanon.stream.api import StreamResult, anonymize_stream, make_cost, stream_json_lines
from tempanon.stream.model import CostModel, is_l_eligible
from tempanon.stream.publisher import PublishedSnapshot, StreamPublisher

__all__ = [
    "CostModel",
    "PublishedSnapshot",
    "StreamPublisher",
    "StreamResult",
    "anonymize_stream",
    "is_l_eligible",
    "make_cost",
    "stream_json_lines",
]
