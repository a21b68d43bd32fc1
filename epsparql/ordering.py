"""Event time: a reorder buffer with allowed lateness, and watermarks.

The core needs triples in nondecreasing order of their end time.  Real
streams are not: this buffer holds each triple until the watermark has
passed its end, then releases everything it may release in time order.
The watermark of a source is the largest end time it has sent minus the
allowed lateness (or a time it declared with ``advance``); the engine's
watermark is the minimum over its sources, so a quiet source holds the
others back until it sends a heartbeat.  A triple ending before what has
already been released is *late*: it is counted and handed to the late
callback (a side output), never processed out of order and never dropped
without trace.  Only event time is used; the wall clock never.
"""
from __future__ import annotations

import heapq
import math
from typing import Any, Callable, Sequence

Row = tuple  # (s, p, o, start, end), times in seconds


class Reorderer:
    """Reorder buffer over normalised rows ``(s, p, o, start, end)``."""

    def __init__(self, allowed_lateness: float = 0.0,
                 on_late: Callable[[Row, str], None] | None = None) -> None:
        if not (allowed_lateness >= 0 and math.isfinite(allowed_lateness)):
            raise ValueError(f"allowed_lateness must be a finite number >= 0, got {allowed_lateness!r}")
        self.lateness = float(allowed_lateness)
        self.on_late = on_late
        self.late = 0                     # late rows seen so far
        self.late_rows: list[Row] = []    # kept when no callback is given (bounded)
        self._heap: list[tuple[float, int, Row]] = []
        self._seq = 0
        self._released = -math.inf        # everything ending before this has gone out
        self._sources: dict[str, float] = {}
        self._declared: set[str] = set()  # sources named with register()

    @property
    def buffered(self) -> int:
        return len(self._heap)

    @property
    def watermark(self) -> float:
        return min(self._sources.values()) if self._sources else -math.inf

    def add(self, rows: Sequence[Row], source: str = "default",
            late: list[int] | None = None) -> list[Row]:
        """Take rows from ``source``; return the rows that may go to the core now.
        The positions in ``rows`` of the rows found late are appended to
        ``late`` when it is given (so a caller can say which input line it was)."""
        wm = self._sources.get(source, -math.inf)
        lateness = self.lateness
        released = self._released
        # fast path: one source, no lateness, in order -> straight through
        single = not self._sources or (len(self._sources) == 1 and source in self._sources)
        if lateness == 0.0 and not self._heap and single:
            prev = released
            ok = True
            for r in rows:
                e = r[4]
                if e < prev:
                    ok = False
                    break
                prev = e
            if ok:
                if rows:
                    self._sources[source] = max(wm, rows[-1][4])
                    self._released = max(released, rows[-1][4])
                else:
                    self._sources.setdefault(source, wm)
                return list(rows)
        out: list[Row] = []
        for i, r in enumerate(rows):
            e = r[4]
            if e < self._released:
                self._late(r, source)
                if late is not None:
                    late.append(i)
                continue
            heapq.heappush(self._heap, (e, self._seq, r))
            self._seq += 1
            if e - lateness > wm:
                wm = e - lateness
                self._sources[source] = wm
                out.extend(self._release(self.watermark))
        self._sources[source] = wm
        return out

    def pass_through(self, first_end: float, last_end: float, ordered: bool,
                     source: str = "default") -> bool:
        """The fast path of :meth:`add` for rows known only by their end
        times (a columnar batch): if rows from ``source`` whose ends run
        nondecreasingly from ``first_end`` to ``last_end`` (``ordered``)
        may go straight through (one source, no lateness, nothing held,
        none late), account for them and say True; else change nothing
        and say False (the caller then adds the rows themselves)."""
        single = not self._sources or (len(self._sources) == 1 and source in self._sources)
        if not (ordered and self.lateness == 0.0 and not self._heap and single
                and first_end >= self._released):
            return False
        wm = self._sources.get(source, -math.inf)
        self._sources[source] = max(wm, last_end)
        self._released = max(self._released, last_end)
        return True

    def register(self, source: str) -> None:
        """Declare a source before it sends anything: until it does (or
        advances), it holds the watermark back."""
        self._declared.add(source)
        self._sources.setdefault(source, -math.inf)

    def advance(self, t: float, source: str | None = None) -> list[Row]:
        """``source`` (or every source) will send nothing more ending at or
        before ``t``; return the rows that may go out now."""
        if source is None:
            for k in list(self._sources) or ["default"]:
                self._sources[k] = max(self._sources.get(k, -math.inf), t)
        else:
            self._sources[source] = max(self._sources.get(source, -math.inf), t)
        return self._release(self.watermark)

    def flush(self) -> list[Row]:
        """End of stream: everything buffered, in order."""
        return self._release(math.inf)

    def _release(self, wm: float) -> list[Row]:
        out: list[Row] = []
        heap = self._heap
        while heap and heap[0][0] <= wm:
            out.append(heapq.heappop(heap)[2])
        if wm > self._released:
            self._released = wm
        return out

    def _late(self, row: Row, source: str) -> None:
        self.late += 1
        if self.on_late is not None:
            self.on_late(row, source)
        elif len(self.late_rows) < 100_000:
            self.late_rows.append(row)

    # -- snapshots ---------------------------------------------------------------
    def export_state(self, encode_node: Callable[[Any], Any]) -> dict:
        """The buffer's state as JSON-ready data: the buffered rows (in heap
        order, with their tie-breaking sequence numbers), the release point,
        every source's watermark and the late count.  ``late_rows`` are side
        output, not state: they are not in it.  ``encode_node`` turns a
        triple position into JSON-ready data."""
        return {
            # rows may carry more plain-string fields after the end time (the
            # stream of epsparql.windowed's rows): kept as they are
            "heap": [[seq, [encode_node(r[0]), encode_node(r[1]), encode_node(r[2]), r[3], r[4],
                            *r[5:]]]
                     for _, seq, r in self._heap],
            "seq": self._seq,
            "released": _num_out(self._released),
            "sources": {k: _num_out(v) for k, v in self._sources.items()},
            "late": self.late,
        }

    def restored(self, data: Any, decode_node: Callable[[Any], Any]) -> "Reorderer":
        """A new buffer with this one's lateness, callback and declared
        sources, in the state ``data`` (from :meth:`export_state`).  Raises
        ValueError for malformed data; ``self`` is never changed."""
        try:
            if not isinstance(data, dict):
                raise ValueError("not an object")
            heap = []
            for item in data["heap"]:
                seq, row = item
                s, p, o, t1, t2, *extra = row
                if any(type(x) is not str for x in extra):
                    raise ValueError(f"bad buffered row {str(item)[:100]}")
                row = (decode_node(s), decode_node(p), decode_node(o), _time(t1), _time(t2),
                       *extra)
                if type(seq) is not int or row[3] > row[4]:
                    raise ValueError(f"bad buffered row {str(item)[:100]}")
                heap.append((row[4], seq, row))
            new = Reorderer(self.lateness, self.on_late)
            heapq.heapify(heap)
            new._heap = heap
            new._seq = data["seq"]
            if type(new._seq) is not int or new._seq < 0:
                raise ValueError(f"bad sequence number {new._seq!r}")
            new._released = _num_in(data["released"])
            sources = data["sources"]
            if not isinstance(sources, dict):
                raise ValueError("sources must be an object")
            new._sources = {str(k): _num_in(v) for k, v in sources.items()}
            new._declared = set(self._declared)
            for name in self._declared:
                new._sources.setdefault(name, -math.inf)
            new.late = data["late"]
            if type(new.late) is not int or new.late < 0:
                raise ValueError(f"bad late count {new.late!r}")
            return new
        except (KeyError, TypeError, ValueError) as ex:
            raise ValueError(f"malformed reorder buffer state: {ex}") from None

    def cleared(self) -> "Reorderer":
        """A new, empty buffer with this one's lateness, callback and
        declared sources (their watermarks back at -inf)."""
        new = Reorderer(self.lateness, self.on_late)
        new._declared = set(self._declared)
        for name in self._declared:
            new._sources[name] = -math.inf
        return new


def _num_out(x: float) -> Any:
    """A watermark for JSON: infinities as strings."""
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return "-inf"
    return x


def _num_in(x: Any) -> float:
    if x == "inf":
        return math.inf
    if x == "-inf":
        return -math.inf
    return _time(x)


def _time(x: Any) -> float:
    if type(x) not in (int, float) or not math.isfinite(x):
        raise ValueError(f"bad time {x!r}")
    return x
