"""Lazy package exports (PEP 562), so that ``tempanon --help`` does not import pandas or scipy.

A package's ``__init__`` declares which names live in which submodule; a name's submodule is
imported on first access (``from tempanon.kanon import kanonymize`` works as usual).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for ``package`` exporting ``{name: submodule}``."""

    def __getattr__(name: str) -> Any:
        sub = exports.get(name)
        if sub is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{sub}"), name)
        globals_ = importlib.import_module(package).__dict__
        globals_[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
