"""Shared by the benchmark scripts: print a table row and append its record to a JSON-lines file."""

from __future__ import annotations

import json
from pathlib import Path


def emit(line: str, row: dict, jsonl: Path | None) -> None:
    """Print ``line`` (flushed, so long runs show progress) and append ``row`` to ``jsonl`` if given."""
    print(line, flush=True)
    if jsonl:
        with open(jsonl, "a") as fh:
            fh.write(json.dumps(row) + "\n")
