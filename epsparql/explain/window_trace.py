"""What a windowed query's windows held at each instant it answered
(``epsparql run … --trace`` over queries of the stream dialects).

The engine's own window runtime (``prolog/stream_window.pl``) keeps no
triple of a window it can aggregate pane by pane, so the content shown
is computed here, from the rows the engine processed, by the
definitions docs/DIALECTS.md gives (and :func:`~.window_tree.window_content`
prints): ``t − width < τ ≤ t`` for a time window at instant ``t``, the
last ``n`` occurrences for ``TRIPLES n``, and so on, τ an occurrence's
end time, exact (a decimal stamp is the decimal written), a triple
counted once (a set).  ``tests/dialects/test_dialect_trace.py`` checks
it against the engine: the content at every instant is what ``SELECT
?s ?p ?o`` over the same window answers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

from ..algebra.streams import (T0_FIRST, WindowDef, closed_open, content_change,
                                earliest_open)
from ..window_runtime import stream_of

__all__ = ["WindowTracer", "WindowView", "InstantView", "exact_time", "window_bounds",
           "window_members"]


def exact_time(t: Any) -> Fraction:
    """A time stamp as an exact number: an int as itself, a float as the
    decimal it prints as (how the engine reads a stamp)."""
    if isinstance(t, Fraction):
        return t
    if isinstance(t, float):
        return Fraction(repr(t))
    return Fraction(t)


def _floor_multiple(t: Fraction, b: Fraction) -> Fraction:
    return (t // b) * b


def window_bounds(w: WindowDef, t: Any, q: Any = None,
                  first: Any = None) -> tuple[str, Fraction | None, Fraction | None]:
    """The bounds of window ``w`` (of query ``q``: its window semantics) at
    instant ``t``: ``("range", lo, hi)`` (lo < τ ≤ hi), ``("closed-open",
    lo, hi)`` (lo ≤ τ < hi: C-SPARQL's, SPARQLstream's and RSP-QL's windows from t0, the one
    that closed last at or before t; [t0, t0) before the first), ``("now",
    t, t)`` (τ = t), ``("closed", lo, t)`` (lo ≤ τ ≤ t: CQELS as CSRBench's
    oracle reads it, the earliest window still open at t, cut at t), ``("all",
    None, t)`` (τ ≤ t) or ``("count", None, t)``
    (the last n with τ ≤ t).  A window on a grid from t0 = first starts
    at ``first``, the time of the query's first arrival (empty before)."""
    win, t = w.window, exact_time(t)
    if q is not None and earliest_open(q, win):       # the oracle's CQELS: [o, t]
        a, b, t0 = Fraction(win.width), Fraction(win.step), q.origin(win)
        if t0 == T0_FIRST:
            if first is None:                          # no arrival yet: empty
                return "closed", t, t
            t0 = exact_time(first)
        k = (t - t0 - a) // b + 1                      # the least k with t0 + kβ + ω > t
        if q.scope == "from_t0":
            k = max(k, 0)
        return "closed", t0 + k * b, t
    if q is not None and content_change(q, win):      # CQELS: the slide does not delay
        return "range", t - Fraction(win.width), t
    if q is not None and closed_open(q, win):
        a, b, t0 = Fraction(win.width), Fraction(win.step), q.origin(win)
        kind = "closed-open" if q.content == "co" else "range"
        if t0 == T0_FIRST:
            if first is None:                          # no arrival yet: empty
                return kind, t, t
            t0 = exact_time(first)
        k = (t - t0 - a) // b                          # the close t0 + kβ + ω <= t
        if k < 0 and q.scope == "from_t0":
            return kind, t0, t0
        return kind, t0 + k * b, t0 + k * b + a
    if win.kind == "range":
        hi = t if win.step is None else _floor_multiple(t, Fraction(win.step))
        return "range", hi - Fraction(win.width), hi
    if win.kind == "past":
        s = t if win.step is None else _floor_multiple(t, Fraction(win.step))
        return "range", s - Fraction(win.width), s - Fraction(win.delay or 0)
    if win.kind == "now":
        return "now", t, t
    if win.kind == "count":
        return "count", None, t
    return "all", None, t


def _on(w: WindowDef, stream: str) -> bool:
    if w.stream is None or type(w.stream).__name__ == "Var":
        return True
    return str(w.stream) == stream


def row_stream(row: Sequence[Any]) -> str:
    """The stream a row is on, as plain text (an rdflib IRI is not equal
    to its text)."""
    return str(stream_of(row))


def row_time(row: Sequence[Any]) -> Any:
    """A row's occurrence time τ: its end (its start when it has none)."""
    return row[4] if len(row) > 4 and row[4] is not None else row[3]


def first_time(q: Any, rows: Sequence[Sequence[Any]]) -> Any:
    """The time of the first of ``rows`` (in processing order) on a stream
    of query ``q``'s windows (its t0 when t0 = first), or None."""
    if q is None:
        return None
    for r in rows:
        if any(_on(w, row_stream(r)) for w in q.windows):
            return row_time(r)
    return None


def window_members(w: WindowDef, t: Any, rows: Sequence[Sequence[Any]],
                   q: Any = None) -> list[int]:
    """The positions in ``rows`` (the rows processed so far, in processing
    order) of the occurrences window ``w`` (of query ``q``) holds at
    instant ``t``: for each distinct triple (and stream, for a window per
    stream) its latest occurrence, in processing order."""
    kind, lo, hi = window_bounds(w, t, q, first_time(q, rows))
    per_stream = type(w.stream).__name__ == "Var"
    inside: list[int] = []
    for i, r in enumerate(rows):
        if not _on(w, row_stream(r)):
            continue
        tau = exact_time(row_time(r))
        if kind == "range" and not (lo < tau <= hi):
            continue
        if kind == "closed-open" and not (lo <= tau < hi):
            continue
        if kind == "closed" and not (lo <= tau <= hi):
            continue
        if kind == "now" and tau != hi:
            continue
        if kind in ("all", "count") and tau > hi:
            continue
        inside.append(i)
    if kind == "count":
        n = w.window.count or 0
        if per_stream:
            by: dict[str, list[int]] = {}
            for i in inside:
                by.setdefault(row_stream(rows[i]), []).append(i)
            inside = sorted(j for idx in by.values() for j in idx[-n:] if n)
        else:
            inside = inside[-n:] if n else []
    latest: dict[tuple, int] = {}
    for i in inside:
        r = rows[i]
        latest[(r[0], r[1], r[2]) + ((row_stream(r),) if per_stream else ())] = i
    return sorted(latest.values())


@dataclass
class WindowView:
    """One window of a query at an instant: its bounds and what it held."""

    window: WindowDef
    kind: str
    lo: Fraction | None
    hi: Fraction | None
    members: list[int]          # positions in the tracer's processed rows


@dataclass
class InstantView:
    """A query's evaluation at instant ``t``: its windows and answers."""

    query: Any
    t: Any
    windows: list[WindowView]
    answers: list[Any] = field(default_factory=list)


class WindowTracer:
    """Push rows one at a time into an engine whose queries are windowed;
    each step's record says which windows the row entered and, for every
    instant the queries answered at, what each window held and the answers.
    The records have the keys :class:`~.trace.Tracer`'s have where they
    mean the same (``step``, ``row``, ``answers``, ``late``, ``held``)."""

    def __init__(self, engine: Any, queries: Sequence[Any]) -> None:
        self.engine = engine
        self.queries = list(queries)
        #: rows processed (not late), in processing order, and their steps
        self.rows: list[tuple] = []
        self.row_steps: list[Any] = []
        self.step_no = 0
        self.totals = {"rows": 0, "answers": 0, "instants": 0, "late": 0}
        self._errors = len(engine.errors)

    def entered(self, row: Sequence[Any]) -> list[tuple[Any, WindowDef]]:
        """The (query, window) pairs a row is on the stream of."""
        g = row_stream(row)
        return [(q, w) for q in self.queries for w in q.algebra.windows if _on(w, g)]

    def push(self, row: tuple, step: int | None = None, held: int | str | None = None) -> dict:
        """Push one row ``(s, p, o, start[, end[, stream]])``; what it did."""
        self.step_no = step if step is not None else self.step_no + 1
        stream = row[5] if len(row) > 5 else None
        late0 = self.engine.late
        end = row[4] if len(row) > 4 else None
        self.engine.push(row[0], row[1], row[2], row[3], end, stream=stream)
        late = self.engine.late > late0
        if not late:
            self.rows.append(tuple(row))
            self.row_steps.append(self.step_no)
        rec = {"step": self.step_no, "row": tuple(row), "late": late,
               "entered": [] if late else self.entered(row), "instants": self._instants()}
        if held is not None:
            rec["held"] = held
        return self._count(rec)

    def late(self, row: tuple, step: int, by: float) -> dict:
        """A row the reorder buffer found late: not pushed."""
        self.step_no = step
        return self._count({"step": step, "row": tuple(row), "late": True, "late_by": by,
                            "entered": [], "instants": []})

    def end(self) -> dict:
        """End of stream (``Engine.flush()``): the instants it closed."""
        self.engine.flush()
        return self._count({"step": "end", "row": None, "late": False, "entered": [],
                            "instants": self._instants()})

    def _instants(self) -> list[InstantView]:
        out: list[InstantView] = []
        for q in self.queries:
            by: dict[Any, InstantView] = {}
            for a in q.results():
                view = by.get(a.end)
                if view is None:
                    view = by[a.end] = InstantView(q, a.end, self._windows(q, a.end))
                    out.append(view)
                view.answers.append(a)
        out.sort(key=lambda v: exact_time(v.t))
        return out

    def _windows(self, q: Any, t: Any) -> list[WindowView]:
        views = []
        for w in q.algebra.windows:
            kind, lo, hi = window_bounds(w, t, q.algebra, first_time(q.algebra, self.rows))
            views.append(WindowView(w, kind, lo, hi, window_members(w, t, self.rows, q.algebra)))
        return views

    def _count(self, rec: dict) -> dict:
        errors = self.engine.errors
        rec["errors"], self._errors = errors[self._errors:], len(errors)
        self.totals["rows"] += rec["row"] is not None and not rec["late"]
        self.totals["late"] += bool(rec["late"])
        self.totals["instants"] += len(rec["instants"])
        self.totals["answers"] += sum(len(v.answers) for v in rec["instants"])
        return rec
