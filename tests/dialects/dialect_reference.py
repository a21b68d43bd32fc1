"""A brute-force reference evaluator of docs/DIALECTS.md.

Written from the definitions, independently of epsparql's parser,
compiler and Prolog runtime: for each evaluation instant the report
policy names, it computes each window's content from the whole stream
(the CQL formulas (1) and (2) of the tutorial, as pinned in
docs/DIALECTS.md), builds an rdflib Dataset from it (the default graph,
a named graph per window, the background graphs), evaluates a plain
SPARQL 1.1 text with rdflib, and applies the relation-to-stream operator.
A window may instead be closed-open from a t0 (``RefWindow.t0``), as
C-SPARQL's and RSP-QL's engines read theirs (docs/DIALECTS.md, "Window
semantics"): the windows [t0 + k·β, t0 + k·β + ω), each evaluated at its
close t0 + k·β + ω, for k ≥ 0 (``from_t0``, CSRBench's oracle) or every
integer k (YASPER, rsp-js).
The query is given in that neutral form (:class:`RefQuery`), so the
generator of a differential test writes each query twice: in the dialect
under test, and as plain SPARQL whose window patterns are
``GRAPH <urn:window:i> { … }``.

Times are exact Fractions where the definitions compute them (instants,
window bounds); a float time stamp is compared with an instant as a
double, as the engine does.
"""
from __future__ import annotations

import math
from functools import lru_cache
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from datetime import datetime, timezone

from rdflib import Dataset, Literal, URIRef
from rdflib.namespace import XSD
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.operators import register_custom_function

BACKGROUND = "urn:epsparql:background"
#: The reference's C-SPARQL timestamp(): the generators write
#: ``timestamp(`` as ``<urn:epsparql:test:timestamp>(`` in the reference text.
TIMESTAMP = URIRef("urn:epsparql:test:timestamp")
_STAMPS: dict = {}                      # triple -> latest τ, at the instant being evaluated


def _timestamp(*args):
    """timestamp(?s, ?p, ?o): the latest occurrence of the triple in the
    windows; timestamp(?x): of any triple mentioning ?x."""
    if len(args) == 3:
        taus = [_STAMPS[args]] if args in _STAMPS else []
    else:
        taus = [tau for tr, tau in _STAMPS.items() if args[0] in tr]
    if not taus:
        raise ValueError("no occurrence")
    t = max(taus, key=lambda x: (float(x), x))
    return Literal(datetime.fromtimestamp(float(t), tz=timezone.utc), datatype=XSD.dateTime)


register_custom_function(TIMESTAMP, _timestamp, override=True)


def window_graph(i: int) -> URIRef:
    """The named graph the reference query reads window i from."""
    return URIRef(f"urn:window:{i}")


@dataclass(frozen=True)
class RefWindow:
    """``stream``: an IRI, None (every stream) or "?" (one window per stream,
    bound to ``var``); ``kind``: range, now, all, count, past."""

    stream: str | None
    kind: str
    width: Fraction | None = None
    step: Fraction | None = None
    count: int | None = None
    delay: Fraction = Fraction(0)
    var: str | None = None             # the variable bound to the stream ("?")
    graph: str | None = None           # read as this named graph (default: urn:window:i)
    default: bool = False              # part of the default graph
    with_background: bool = False      # its named graph also holds the default background
    t0: Fraction | None = None         # range with step: closed-open windows from t0
    from_t0: bool = False              # ... only those with k >= 0 (none before t0)


@dataclass
class RefQuery:
    windows: list[RefWindow]
    sparql: str
    policy: tuple                       # ("close", non_empty) | ("eager",) | ("period", d) | ("triples", n) | ("final",)
    r2s: str = "rstream"
    default_graphs: list[str] = field(default_factory=lambda: [BACKGROUND])


@dataclass(frozen=True)
class Row:
    stream: str
    s: Any
    p: Any
    o: Any
    tau: Any


def _le(tau, x) -> bool:
    """tau <= x as the engine compares (as doubles when tau is a float)."""
    return tau <= (float(x) if isinstance(tau, float) else x)


def _lt(x, tau) -> bool:
    return (float(x) if isinstance(tau, float) else x) < tau


def _exact(t) -> Fraction:
    return Fraction(t)


def _floor_multiple(t, b: Fraction) -> Fraction:
    return math.floor(_exact(t) / b) * b


def _ceil_multiple(t, b: Fraction) -> Fraction:
    return math.ceil(_exact(t) / b) * b


def _ge(tau, x) -> bool:
    """tau >= x as the engine compares."""
    return tau >= (float(x) if isinstance(tau, float) else x)


def _below(tau, x) -> bool:
    """tau < x as the engine compares."""
    return tau < (float(x) if isinstance(tau, float) else x)


def _closes(w: RefWindow):
    """The windows of a closed-open window: (k, open, close) from k = 0 on
    (or every k), as its definition lists them."""
    return lambda k: (k, w.t0 + k * w.step, w.t0 + k * w.step + w.width)


def closed_open_window(w: RefWindow, t):
    """The closed-open window evaluated at instant t: the one that closed
    last at or before t, (open, close); None before the first (from_t0)."""
    win = _closes(w)
    k = math.floor((_exact(t) - w.t0 - w.width) / w.step)     # close <= t
    if w.from_t0 and k < 0:
        return None
    _, o, c = win(k)
    return o, c


def closed_open_instants(w: RefWindow, first, last) -> list:
    """The closes of a closed-open window after the first time stamp
    ``first`` (the window closing at it cannot hold it) up to the last
    window opened at or before ``last`` (every window holding a triple)."""
    win = _closes(w)
    k = math.floor((_exact(first) - w.t0 - w.width) / w.step) + 1
    if w.from_t0:
        k = max(k, 0)
    out = []
    while _ge(last, win(k)[1]):
        out.append(win(k)[2])
        k += 1
    return out


def _accepts(w: RefWindow, stream: str) -> bool:
    return w.stream in (None, "?") or w.stream == stream


def content(w: RefWindow, rows: list[Row], t, before: bool = False) -> dict[str, dict[tuple, Any]]:
    """The window's content at instant t: per stream key ('' unless one
    window per stream), each distinct triple -> the time stamp of its
    latest occurrence in the window; ``before``: of the occurrences
    before t only (a query with closed-open windows sees those at t)."""
    seen = [r for r in rows if _accepts(w, r.stream)
            and (_below(r.tau, t) if before else _le(r.tau, t))]
    groups: dict[str, list[Row]] = {}
    for r in seen:
        groups.setdefault(r.stream if w.stream == "?" else "", []).append(r)
    out: dict[str, dict[tuple, Any]] = {}
    for key, rs in groups.items():
        if w.kind == "count":
            inside = rs[-w.count:]
        elif w.kind == "now":
            inside = [r for r in rs if not _lt(t, r.tau) and _le(r.tau, t) and r.tau == t]
        elif w.kind == "all":
            inside = rs
        elif w.t0 is not None:
            oc = closed_open_window(w, t)
            inside = [] if oc is None else [r for r in rs if _ge(r.tau, oc[0])
                                            and _below(r.tau, oc[1])]
        else:
            s = t if w.step is None else _floor_multiple(t, w.step)
            hi = s - w.delay if w.kind == "past" else s
            lo = s - w.width
            inside = [r for r in rs if _lt(lo, r.tau) and _le(r.tau, hi)]
        triples: dict[tuple, Any] = {}
        for r in inside:
            triples[(r.s, r.p, r.o)] = r.tau      # later rows overwrite: latest occurrence
        out[key] = triples
    return out


def opening(w: RefWindow, cont: dict[str, dict[tuple, Any]], t):
    """The window's opening at t (docs/DIALECTS.md, "Answers")."""
    if w.t0 is not None:
        oc = closed_open_window(w, t)
        return w.t0 if oc is None else oc[0]
    if w.kind in ("range", "past"):
        s = t if w.step is None else _floor_multiple(t, w.step)
        return s - w.width
    if w.kind == "now":
        return t
    taus = [tau for c in cont.values() for tau in c.values()]
    return min(taus) if taus else t


def instants(q: RefQuery, rows: list[Row]) -> list:
    """The evaluation instants of q over the whole stream, in order."""
    mine = [r for r in rows if any(_accepts(w, r.stream) for w in q.windows)]
    if not mine or not rows:
        return []
    first, last = mine[0].tau, rows[-1].tau
    kind = q.policy[0]
    ts: set = set()
    if kind == "close" and _closed_open(q):
        for w in q.windows:         # time-driven: the closed-open windows' closes only
            if w.t0 is not None:
                ts.update(closed_open_instants(w, first, last))
    elif kind == "close" and q.windows:
        for w in q.windows:
            if w.kind in ("range", "past") and w.step is not None:
                k = _ceil_multiple(first, w.step)
                end = _ceil_multiple(last, w.step)
                while k <= end:
                    ts.add(k)
                    k += w.step
            else:
                ts.update(r.tau for r in mine if _accepts(w, r.stream))
    elif kind == "eager":
        ts.update(r.tau for r in mine)
    elif kind == "period":
        d = q.policy[1]
        k = _ceil_multiple(first, d)
        while k <= _ceil_multiple(last, d):
            ts.add(k)
            k += d
    elif kind == "final" or (kind == "close" and not q.windows):
        ts.add(last)
    return sorted(ts, key=lambda x: (float(x), x))


def _closed_open(q: RefQuery) -> bool:
    """Has q a closed-open window?  Then each of its evaluations at t reads
    the occurrences before t, in every window."""
    return any(w.t0 is not None for w in q.windows)


def _dedupe_instants(ts: list) -> list:
    out: list = []
    for t in ts:
        if not out or not (out[-1] == t):
            out.append(t)
    return out


def evaluate(q: RefQuery, rows: list[Row], background: dict[str, list[tuple]] | None = None,
             ) -> list[tuple[Any, Any, dict]]:
    """The answers ``(start, end, bindings)`` of q over the stream ``rows``
    (in arrival order, nondecreasing time stamps), instant by instant."""
    background = background or {}
    if q.policy[0] == "triples":
        return _evaluate_every(q, rows, background)
    out: list[tuple[Any, Any, dict]] = []
    prev: Counter = Counter()
    for t in _dedupe_instants(instants(q, rows)):
        res = _evaluate_at(q, rows, background, t)
        if res is None:
            continue
        out.extend(_report(q, res, prev))
        prev = Counter(_key(b) for b in res[2])
    return out


def _evaluate_every(q, rows, background):
    out: list = []
    prev: Counter = Counter()
    mine = [i for i, r in enumerate(rows) if any(_accepts(w, r.stream) for w in q.windows)]
    n = q.policy[1]
    points = [mine[k] for k in range(n - 1, len(mine), n)]
    if mine and (len(mine) % n):
        points.append(len(rows) - 1)
    for i in points:
        res = _evaluate_at(q, rows[:i + 1], background, rows[i].tau)
        if res is None:
            continue
        out.extend(_report(q, res, prev))
        prev = Counter(_key(b) for b in res[2])
    return out


def _key(b: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in b.items()))


def _report(q: RefQuery, res, prev: Counter):
    start, end, bindings = res
    cur = Counter(_key(b) for b in bindings)
    if q.r2s == "rstream":
        return [(start, end, b) for b in bindings]
    grow = cur - prev if q.r2s == "istream" else prev - cur
    return [(start, end, dict(k)) for k, n in grow.items() for _ in range(n)]


def _evaluate_at(q: RefQuery, rows, background, t):
    """(start, end, [bindings]) of one evaluation, or None when it is
    skipped (C-SPARQL, every window empty)."""
    conts = [content(w, rows, t, _closed_open(q)) for w in q.windows]
    _STAMPS.clear()
    for c in conts:
        for triples in c.values():
            for tr, tau in triples.items():
                if tr not in _STAMPS or (float(tau), tau) > (float(_STAMPS[tr]), _STAMPS[tr]):
                    _STAMPS[tr] = tau
    if q.policy[0] == "close" and q.policy[1] and q.windows and \
            all(not any(c.values()) for c in conts):
        return None
    ds = Dataset()
    dflt = ds.default_graph
    for g in q.default_graphs:
        for tr in background.get(g, ()):
            dflt.add(tr)
    for g, triples in background.items():
        ng = ds.graph(URIRef(g))
        for tr in triples:
            ng.add(tr)
    for i, (w, c) in enumerate(zip(q.windows, conts)):
        for key, triples in c.items():
            name = URIRef(key) if w.stream == "?" else URIRef(w.graph or window_graph(i))
            # a window of the default graph only is no named graph (GRAPH ?g)
            ng = None if (w.default and w.graph is None) else ds.graph(name)
            for tr in triples:
                if ng is not None:
                    ng.add(tr)
                if w.default:
                    dflt.add(tr)
    for i, w in enumerate(q.windows):
        if w.with_background:
            ng = ds.graph(URIRef(w.graph or window_graph(i)))
            for g in q.default_graphs:
                for tr in background.get(g, ()):
                    ng.add(tr)
    result = ds.query(_prepared(q.sparql))
    if result.type == "ASK":
        bindings = [{"ask": Literal(bool(result.askAnswer))}]
    else:
        bindings = [{str(k): v for k, v in r.asdict().items() if v is not None} for r in result]
    start, end = _interval(q, conts, t)
    return start, end, bindings


@lru_cache(maxsize=256)
def _prepared(sparql: str):
    """The query parsed once for all its instants (rdflib's parser costs
    as much as a small evaluation)."""
    return prepareQuery(sparql)


def _interval(q: RefQuery, conts, t):
    """[earliest opening, t]; only count windows: [first, last] time stamp
    of their contents ([t, t] when all are empty)."""
    if not q.windows:
        return t, t
    if all(w.kind == "count" for w in q.windows):
        taus = [tau for c in conts for cc in c.values() for tau in cc.values()]
        return (min(taus), max(taus)) if taus else (t, t)
    return min(opening(w, c, t) for w, c in zip(q.windows, conts)), t
