"""Self-contained HTML reports (inline CSS and SVG figures, no script, no network).

* :mod:`tempanon.report.html` -- :class:`Report` and :class:`Section` (the generic section API);
* :mod:`tempanon.report.figures` -- matplotlib figures rendered to inline SVG, from plain data;
* :mod:`tempanon.report.sections` -- section builders shared by every capability;
* :mod:`tempanon.report.kanon` -- the report of a k-anonymity run."""

from tempanon._lazy import lazy_exports

_EXPORTS = {
    'Report': 'html',
    'Section': 'html',
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
