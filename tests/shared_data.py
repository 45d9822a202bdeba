"""Where the project's shared data (``shared/data/<kind>``: the papers' data sets, not shipped with the
package) is, for tests that use it only when it exists: ``$TEMPANON_SHARED_DATA/<kind>`` when that
variable is set, else ``shared/data/<kind>`` beside the checkout or above it (a clone's parent, a git
worktree's grandparent). ``None`` when absent: such tests are skipped, never failed."""

from __future__ import annotations

import os
from pathlib import Path


def shared_data(kind: str) -> Path | None:
    env = os.environ.get("TEMPANON_SHARED_DATA")
    if env:
        d = Path(env) / kind
        return d if d.is_dir() else None
    for parent in Path(__file__).resolve().parents:
        d = parent / "shared" / "data" / kind
        if d.is_dir():
            return d
    return None
