"""Self-contained HTML reports (inline CSS and SVG figures, no script, no network).

* :mod:`tempanon.report.html` -- :class:`Report` and :class:`Section` (the generic section API);
* :mod:`tempanon.report.figures` -- matplotlib figures rendered to inline SVG, from plain data;
* :mod:`tempanon.report.sections` -- section builders shared by every capability;
* :mod:`tempanon.report.kanon` -- the report of a k-anonymity run.
"""

from tempanon.report.html import Report, Section

__all__ = ["Report", "Section"]
