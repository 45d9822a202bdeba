"""Private scratch directories (spill files of the searches and of the engines).

A directory is removed by its owner when the work ends, also on an error or Ctrl-C. A process
ended by a signal that runs no Python cleanup (SIGKILL, SIGTERM, the CPU limit's SIGXCPU) leaves
its directory behind, which can be large (a DuckDB spill of 100M rows reached 16 GB). So every
directory is named after the process that made it (``tempanon-<kind>-<pid>-<random>``), and making
one first removes the directories of this user whose process no longer exists.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile

_NAME = re.compile(r"^tempanon-[a-z]+-(\d+)-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # exists (another user's) or cannot tell: keep
        return True
    return True


def sweep_stale(parent: str | None = None) -> list[str]:
    """Remove the scratch directories in ``parent`` (the temporary directory) that belong to this
    user and were made by a process that no longer exists; returns their paths."""
    parent = parent or tempfile.gettempdir()
    removed = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    uid = os.getuid() if hasattr(os, "getuid") else None
    for e in entries:
        m = _NAME.match(e.name)
        if not m or int(m.group(1)) == os.getpid():
            continue
        try:
            if not e.is_dir(follow_symlinks=False) or (uid is not None and e.stat(follow_symlinks=False).st_uid != uid):
                continue
        except OSError:
            continue
        if not _alive(int(m.group(1))):
            shutil.rmtree(e.path, ignore_errors=True)
            removed.append(e.path)
    return removed


def scratch_dir(kind: str) -> str:
    """A new private directory ``tempanon-<kind>-<pid>-...`` in the temporary directory, after
    removing the stale ones (:func:`sweep_stale`)."""
    if not re.fullmatch(r"[a-z]+", kind):
        raise ValueError(f"scratch kind must be lower-case letters (got {kind!r})")
    sweep_stale()
    return tempfile.mkdtemp(prefix=f"tempanon-{kind}-{os.getpid()}-")
