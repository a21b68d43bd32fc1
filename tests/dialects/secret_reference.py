"""An independent reference of the SECRET model for one window.

Written from the definitions (Botan et al., "SECRET: A Model for Analysis
of the Execution Semantics of Stream Processing Systems", VLDB 2010, as
docs/DIALECTS.md pins it, "The SECRET parameters"), sharing no code with
epsparql: no parser, no algebra, no Prolog.  It reads a list of rows
(s, p, o, t) on one stream, one time window (width ω, step β or none) and
its parameters, and answers a one-pattern query ``?s P ?o`` as COUNT(*),
as its (s, o) rows or as its s column (a subject once per object),
through RSTREAM or ISTREAM.

- **scope**: the windows W_k = ⟨o_k, c_k⟩, o_k = t0 + k·β, c_k = o_k + ω,
  for k ≥ 0 (``from_t0``) or every integer k; ``t0="first"`` is the first
  row's time.
- **content**: ``co`` holds the rows with o ≤ τ < c, ``oc`` o < τ ≤ c; a
  window's content is the *set* of its triples.
- **report**: ``close`` evaluates each window at its close c, from the
  first close after the first row (``co``: c > τ₁; ``oc``: c ≥ τ₁) to the
  end of input (``co``: every window opened at or before the last time
  stamp; ``oc``: up to the first close at or after it); ``periodic`` every
  d (t = j·d, from the first at or after τ₁ to the first at or after the
  last), each with the latest window closed at or before t (before the
  first one, from t0: an empty window opening at t0); ``change`` at each
  arrival t, over (t − ω, t] (``sliding=True``, the engine reading of
  content change), over the earliest window still open at t, cut at t:
  o ≤ τ ≤ t with o = t0 + k·β, k the least (k ≥ 0 with ``from_t0``)
  whose close t0 + k·β + ω is after t (``earliest=True``, CSRBench's
  oracle's reading of CQELS: Dell'Aglio et al., ISWC 2013, §4, and its
  ``WindowOperator``), or the latest window closed at or before t; a window
  without a step has no closes: it is evaluated at the arrivals (close)
  or at the periodic instants, over (t − ω, t].  ``non_empty`` skips an
  evaluation whose window is empty.
- **tick**: ``time`` evaluates after every row of one time stamp,
  ``tuple`` after each row.
- **relation**: ``bag`` (CQL: ISTREAM emits a row as many times as its
  multiplicity grew) or ``set`` (an evaluation's rows without repeats,
  ISTREAM the rows not in the previous evaluation's set: CSRBench's
  oracle keeps relations as sets).

An answer is (start, end, value): end the evaluation instant, start the
window's opening (t − ω for a sliding one).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence


def exact(t: Any) -> Fraction:
    """A time as the decimal it is written as (0.1 is 1/10)."""
    return Fraction(repr(t)) if isinstance(t, float) else Fraction(t)


@dataclass(frozen=True)
class Params:
    """The window and its SECRET parameters (see the module docstring)."""

    width: Fraction
    step: Fraction | None
    t0: Any = 0                        # a number, or "first"
    from_t0: bool = False
    content: str = "oc"                # co | oc
    report: str = "close"              # close | change | periodic
    period: Fraction | None = None
    non_empty: bool = False
    tick: str = "time"                 # time | tuple
    sliding: bool = False              # change: the window ends at each arrival
    earliest: bool = False             # change: the earliest open window, cut at t
    r2s: str = "rstream"
    relation: str = "bag"              # bag | set


def _windows_at(p: Params, t0: Fraction, t: Fraction) -> tuple[Fraction, Fraction] | None:
    """The latest window closed at or before t: (o, c); None before the first."""
    k = math.floor((t - t0 - p.width) / p.step)
    if p.from_t0 and k < 0:
        return None
    o = t0 + k * p.step
    return o, o + p.width


def _inside(p: Params, o: Fraction, c: Fraction, tau: Fraction) -> bool:
    return (o <= tau < c) if p.content == "co" else (o < tau <= c)


def _instants(p: Params, times: list[Fraction], t0: Fraction) -> list[tuple[Fraction, int]]:
    """(instant, rows seen) pairs: when the query is evaluated, and how many
    rows (in order) it has seen then."""
    first, last = times[0], times[-1]
    n = len(times)
    seen = lambda t, strict: sum(1 for x in times if (x < t if strict else x <= t))  # noqa: E731
    if p.report == "change" or (p.report == "close" and p.step is None):
        if p.tick == "tuple":
            return [(t, i + 1) for i, t in enumerate(times)]
        return [(t, seen(t, False)) for t in sorted(set(times))]
    if p.report == "periodic":
        d = p.period
        j0, j1 = math.ceil(first / d), math.ceil(last / d)
        return [(j * d, seen(j * d, False)) for j in range(j0, j1 + 1)]
    # close: the windows' closes
    b, w = p.step, p.width
    if p.content == "co":
        k0 = math.floor((first - t0 - w) / b) + 1          # first close > first
        k1 = math.floor((last - t0) / b)                    # last opening <= last
    else:
        k0 = math.ceil((first - t0 - w) / b)                # first close >= first
        k1 = math.ceil((last - t0 - w) / b)                 # first close >= last
    if p.from_t0:
        k0 = max(k0, 0)
        if p.content == "oc":
            k1 = max(k1, 0)                                 # the first close is c_0
    out = []
    for k in range(k0, k1 + 1):
        c = t0 + k * b + w
        out.append((c, seen(c, p.content == "co")))
    return out


def evaluate(rows: Sequence[tuple], p: Params, predicate: Any,
             form: str = "count") -> list[tuple[Fraction, Fraction, Any]]:
    """The answers, in order: (start, end, value); value the COUNT (an int)
    or the sorted (s, o) rows (``form="select"``) or s values
    (``"subjects"``) of one evaluation (RSTREAM) or its new rows
    (ISTREAM: as many times as a row's multiplicity grew)."""
    rows = list(rows)
    if not rows:
        return []
    times = [exact(r[3]) for r in rows]
    assert times == sorted(times), "rows in time order"
    t0 = times[0] if p.t0 == "first" else exact(p.t0)
    out: list[tuple[Fraction, Fraction, Any]] = []
    prev: Counter = Counter()
    for t, n in _instants(p, times, t0):
        if p.step is None or (p.report == "change" and p.sliding):
            o, c = t - p.width, t
            holds = lambda tau, o=o, c=c: o < tau <= c          # noqa: E731
        elif p.report == "change" and p.earliest:
            k = math.floor((t - t0 - p.width) / p.step) + 1     # least k: t0 + kβ + ω > t
            if p.from_t0:
                k = max(k, 0)
            o = t0 + k * p.step
            holds = lambda tau, o=o, t=t: o <= tau <= t         # noqa: E731
        else:
            win = _windows_at(p, t0, t)
            if win is None:
                o = t0
                holds = lambda tau: False                       # noqa: E731
            else:
                o, c = win
                holds = lambda tau, o=o, c=c: _inside(p, o, c, tau)  # noqa: E731
        content = {(r[0], r[1], r[2]) for r, tau in zip(rows[:n], times[:n]) if holds(tau)}
        if p.non_empty and not content:
            continue
        matches = sorted((s, ob) for s, pr, ob in content if pr == predicate)
        if form == "subjects":                                  # SELECT ?s: repeats
            matches = sorted(s for s, _ in matches)
        if form == "count":
            result = Counter({len(matches): 1})
        else:
            result = Counter(matches)
        if p.relation == "set":
            result = Counter(set(result))
        if p.r2s == "istream":
            new = result - prev
            prev = result
            result = new
        if not result:
            continue
        value = next(iter(result)) if form == "count" else sorted(result.elements())
        out.append((o, t, value))
    return out
