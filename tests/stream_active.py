"""The active records of a stream step, from the steward's record table alone (independent of the
publisher): records not published whose home reaches the pending snapshots ``oldest..``, and among the
suppressed ones of an older home only those no published record of the same value follows in time
(Theorem 1: recycling them would break timestamp order with a release that cannot change)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def active_records(before: pd.DataFrame, oldest: int, w: int) -> pd.DataFrame:
    if not len(before):
        return before
    placed, home, code = before.placed.to_numpy(), before.home.to_numpy(), before.code.to_numpy()
    published = (placed >= 0) & (placed < oldest)
    m = int(code.max()) + 1
    pub_max = np.full(m, -1)
    np.maximum.at(pub_max, code[published], home[published])
    recyclable = (placed == -1) & ((home >= oldest) | (pub_max[code] <= home))
    return before[(recyclable | (placed >= oldest)) & (home + w >= oldest)]
