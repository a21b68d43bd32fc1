"""Late rows written out directly: the reference for the reorder buffer's
late rows (``epsparql/ordering.py``) and a helper that disorders streams."""
from __future__ import annotations

import random


def late_reference(rows, lateness):
    """Positions of the late rows: a row is late when it ends before the
    latest end minus ``lateness`` of the earlier rows that were not late."""
    late, high = [], float("-inf")
    for i, r in enumerate(rows):
        end = r[4] if len(r) > 4 and r[4] is not None else r[3]
        if end < high - lateness:
            late.append(i)
        else:
            high = max(high, end)
    return late


def disorder(rng: random.Random, rows: list, k: int) -> list:
    """``rows`` with up to ``k`` rows moved earlier or later by a few places."""
    rows = list(rows)
    for _ in range(k):
        if len(rows) < 2:
            break
        i = rng.randrange(len(rows))
        j = max(0, min(len(rows) - 1, i + rng.randint(-4, 4)))
        rows.insert(j, rows.pop(i))
    return rows
