"""Late rows, as ``epsparql run`` and ``--trace`` report them.

A row that ends before rows the engine has already processed (beyond the
allowed lateness, ``--lateness``) is not processed: the engine's reorder
buffer (``epsparql/ordering.py``) counts it.  The command names the first
one, once, with its file and line and the ``--lateness`` that would keep
it, and counts them all in the summary.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from ..explain.trace import late_note
from ..times import format_time

__all__ = ["LateRows"]


def _end(row: Sequence[Any]) -> float:
    return row[4] if len(row) > 4 and row[4] is not None else row[3]


def _seconds(x: float) -> str:
    """A time span in seconds, as short as it is exact."""
    return f"{x:g}" if isinstance(x, float) and not float(x).is_integer() else f"{int(x)}"


class LateRows:
    """Counts the late rows of a stream and names the first one.

    Call :meth:`pushed` after each push with the rows pushed, their line
    numbers and the positions the engine reported late."""

    def __init__(self, path: str, say: Callable[[str], None] | None) -> None:
        self.path = path
        self.say = say
        self.count = 0
        self.first: str | None = None      # "file:line" of the first late row
        self._max_end = -math.inf          # the latest end of the rows pushed before

    def pushed(self, rows: Sequence[Sequence[Any]], lines: Sequence[int],
               late: Sequence[int]) -> None:
        """Rows ``(s, p, o, start[, end])`` pushed, from these lines."""
        self.pushed_ends([_end(r) for r in rows], lines, late)

    def pushed_ends(self, ends: Sequence[float], lines: Sequence[int],
                    late: Sequence[int]) -> None:
        """Rows pushed, known by their end times, from these lines."""
        if late:
            self.count += len(late)
            if self.first is None:
                self._name_first(ends, lines, late[0])
        if len(ends):
            self._max_end = max(self._max_end, max(ends))

    def _name_first(self, ends: Sequence[float], lines: Sequence[int], i: int) -> None:
        line = lines[i] if i < len(lines) else None
        self.first = f"{self.path}:{line}" if line is not None else self.path
        before = max([self._max_end, *ends[:i]])
        end = ends[i]
        if self.say is None:
            return
        self.say(f"late row {self.first}: it ends at {format_time(end)}, "
                 f"{_seconds(before - end)} s before a row already processed "
                 f"(ending at {format_time(before)}), so it was not processed "
                 f"({late_note(before - end)}; further late rows are counted in the summary)")

    def summary(self) -> str | None:
        """The summary's part, or None when no row was late."""
        if not self.count:
            return None
        rows = "row" if self.count == 1 else "rows"
        return (f"{self.count:,} late {rows} not processed (first: {self.first}; "
                f"--lateness SECONDS keeps rows that much out of order)")
