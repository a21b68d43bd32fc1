"""The algebra of a windowed query (the stream dialects) as a tree to print or draw.

The root says when the query is evaluated (its report policy) and what it
emits (its relation-to-stream operator), lists its windows, and has the
relation (projection, grouping, aggregates, modifiers) above the SPARQL
1.1 pattern; each triple pattern says which windows and background graphs
it reads.  The counterpart of :mod:`.algebra_tree` for EP-SPARQL.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..algebra.streams import (ContinuousQuery, ExistsExpr, Minus, PerStream, Quad, Relation,
                               SubSelect, Table, WindowDef, closed_open, content_change,
                               earliest_open)
from ..rdf.prefixes import Prefixes
from .algebra_tree import expr_text, term_text
from .tree import TreeNode

__all__ = ["window_algebra_tree", "window_text", "window_content", "policy_text"]


def _dur(x: Fraction | None) -> str:
    if x is None:
        return "?"
    f = Fraction(x)
    for unit, n in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if f >= n and (f / n).denominator == 1:
            return f"{f / n}{unit}"
    return f"{float(f) * 1000:g}ms"


def _time(x: Fraction) -> str:
    """An instant in seconds (t0 may be 0 or negative): ``0s``, ``1.5s``."""
    f = Fraction(x)
    return f"{f}s" if f.denominator == 1 else f"{float(f):g}s"


def window_text(w: WindowDef, prefixes: Prefixes, q: ContinuousQuery | None = None) -> str:
    """``window 0 on <s>: RANGE 10s STEP 1s`` (``every stream`` without a
    stream, ``each stream ?g`` for CQELS's ``STREAM ?g``); ``q``: the
    query, whose window semantics the content says."""
    win = w.window
    if w.stream is None:
        on = "every stream"
    elif type(w.stream).__name__ == "Var":
        on = f"each stream ?{w.stream.name}"
    else:
        on = prefixes.term(w.stream)
    if win.kind == "range":
        what = f"RANGE {_dur(win.width)}" + ("" if win.step is None else
                                             " TUMBLING" if win.step == win.width else
                                             f" STEP {_dur(win.step)}")
    elif win.kind == "past":
        what = (f"FROM NOW-{_dur(win.width)} TO NOW-{_dur(win.delay)}"
                + ("" if win.step is None else f" STEP {_dur(win.step)}"))
    elif win.kind == "count":
        what = f"TRIPLES {win.count}"
    else:
        what = win.kind.upper()
    return f"window {w.index} on {on}: {what}; {window_content(w, q)}"


#: what each window semantics means, for explain
SEMANTICS_TEXT = {"engine": " (each dialect as its reference engine answers)",
                  "cql": " (the CQL reading of every dialect)",
                  "csrbench": " (each dialect as CSRBench's oracle reads it)"}


def window_content(w: WindowDef, q: ContinuousQuery | None = None) -> str:
    """What the window holds at an instant t, and its own instants, as
    docs/DIALECTS.md's table says (τ an occurrence's time stamp; the
    content is the set of the triples occurring so), under the window
    semantics of ``q``."""
    win = w.window
    if q is not None and closed_open(q, win):
        a, b, o = _dur(win.width), _dur(win.step), q.origin(win)
        t0 = "the first arrival's time" if o == "first" else _time(o)
        ks = "k ≥ 0" if q.scope == "from_t0" else "every integer k"
        if q.content == "co":
            return (f"windows [t0 + k·{b}, t0 + k·{b} + {a}) with t0 = {t0}, {ks} (closed at "
                    f"the start, open at the end); instants: their closes c = t0 + k·{b} + {a} "
                    f"(the first after the first arrival); holds the triples with c − {a} ≤ τ "
                    f"< c (a set)")
        return (f"windows (t0 + k·{b}, t0 + k·{b} + {a}] with t0 = {t0}, {ks} (open at the "
                f"start, closed at the end); instants: their closes c = t0 + k·{b} + {a} (the "
                f"first at or after the first arrival); holds the triples with c − {a} < τ ≤ c "
                f"(a set)")
    if q is not None and earliest_open(q, win):
        a, b, o = _dur(win.width), _dur(win.step), q.origin(win)
        t0 = "the first arrival's time" if o == "first" else _time(o)
        ks = "k ≥ 0" if q.scope == "from_t0" else "every integer k"
        return (f"reported on content change over windows [t0 + k·{b}, t0 + k·{b} + {a}) "
                f"with t0 = {t0}, {ks} (CSRBench's oracle): instants: its stream's arrivals; "
                f"at an arrival t holds the triples of the earliest window still open, cut "
                f"at t: t0 + k·{b} ≤ τ ≤ t (a set)")
    if q is not None and content_change(q, win):
        return (f"reported on content change (CQELS): instants: its stream's arrivals, the "
                f"slide does not delay them; holds the triples with t − {_dur(win.width)} "
                f"< τ ≤ t (a set)")
    if win.kind == "range" and win.step is not None:
        a, b = _dur(win.width), _dur(win.step)
        return (f"instants t = k·{b} (the first at or after the first arrival), holds the "
                f"triples with t − {a} < τ ≤ t (a set)")
    if win.kind == "range":
        return (f"instants: its stream's arrivals, holds the triples with t − {_dur(win.width)} "
                f"< τ ≤ t (a set)")
    if win.kind == "past":
        step = f"instants t = k·{_dur(win.step)}" if win.step is not None else "instants: arrivals"
        return (f"{step}, holds the triples with t − {_dur(win.width)} < τ ≤ t − "
                f"{_dur(win.delay)} (a set)")
    if win.kind == "count":
        return (f"instants: arrivals, holds the last {win.count} occurrences with τ ≤ t "
                f"(ties in arrival order; a set)")
    if win.kind == "now":
        return "instants: arrivals, holds the triples with τ = t"
    return "instants: arrivals, holds every triple with τ ≤ t (grows with the stream)"


def policy_text(q: ContinuousQuery) -> str:
    """When the query is evaluated, in words."""
    p = q.policy
    if p.kind == "close":
        return "at each window close" + (", non-empty windows only" if p.non_empty else "")
    ne = ", non-empty windows only" if p.non_empty else ""
    if p.kind == "eager":
        return ("after each arrival" if q.tick == "tuple" else "at each arrival instant") + ne
    if p.kind == "period":
        return f"every {_dur(p.period)}" + ne
    if p.kind == "triples":
        return f"after every {p.count} triples"
    return "once, at the end of input"


def window_algebra_tree(q: ContinuousQuery, prefixes: Prefixes) -> TreeNode:
    """The windowed query as a TreeNode (see the module docstring)."""

    def sources(quad: Quad) -> str:
        parts = []
        for s in quad.sources:
            if s.kind == "window":
                parts.append(f"window {s.ref}")
            else:
                parts.append("GRAPH " + term_text(s.ref, prefixes))
        return " + ".join(parts)

    def pat(p: Any) -> TreeNode:
        kind = type(p).__name__
        if isinstance(p, Quad):
            t = p.triple
            return TreeNode(f"Triple over {sources(p)}",
                            [" ".join(term_text(x, prefixes) for x in (t.s, t.p, t.o))])
        if kind in ("Join", "Union_", "LeftJoin") or isinstance(p, Minus):
            label = {"Join": "Join", "Union_": "Union", "LeftJoin": "LeftJoin (OPTIONAL)",
                     "Minus": "Minus"}[kind]
            n = TreeNode(label)
            if getattr(p, "expr", None) is not None:
                n.details.append("condition " + expr_text(p.expr, prefixes))
            n.children = [pat(p.left), pat(p.right)]
            return n
        if kind == "Filter":
            return TreeNode("Filter", [expr_text(p.expr, prefixes)], [pat(p.pattern)])
        if kind == "Extend":
            return TreeNode("Extend (BIND)", [f"?{p.var.name} := {expr_text(p.expr, prefixes)}"],
                            [pat(p.pattern)])
        if isinstance(p, PerStream):
            return TreeNode(f"per stream ?{p.var}", [], [pat(p.pattern)])
        if isinstance(p, Table):
            head = " ".join("?" + v for v in p.vars)
            return TreeNode(f"Values ({len(p.rows)} row{'s' if len(p.rows) != 1 else ''})",
                            [head] if head else [])
        if isinstance(p, SubSelect):
            return relation(p.relation, "SubSelect")
        if kind == "Empty":
            return TreeNode("Empty {}")
        if isinstance(p, ExistsExpr):
            return TreeNode(("NOT " if p.negated else "") + "EXISTS", [], [pat(p.pattern)])
        return TreeNode(kind, [repr(p)[:80]])

    def relation(r: Relation, label: str) -> TreeNode:
        items = []
        for e, v in r.projection:
            items.append("?" + v if e is None else f"({expr_text(e, prefixes)} AS ?{v})")
        details = [" ".join(items) or "(nothing)"]
        if r.group_by:
            details.append("GROUP BY " + " ".join(
                expr_text(e, prefixes) if v is None else f"({expr_text(e, prefixes)} AS ?{v})"
                for e, v in r.group_by))
        elif r.grouped:
            details.append("aggregates over all solutions (one group)")
        for h in r.having:
            details.append("HAVING " + expr_text(h, prefixes))
        if r.order_by:
            details.append("ORDER BY " + " ".join(
                ("DESC" if d else "ASC") + f"({expr_text(e, prefixes)})" for e, d in r.order_by))
        if r.offset:
            details.append(f"OFFSET {r.offset}")
        if r.limit is not None:
            details.append(f"LIMIT {r.limit}")
        return TreeNode(f"{label}{' DISTINCT' if r.distinct else ''}", details, [pat(r.pattern)])

    head = f"{q.form} ({q.dialect}): {q.r2s.upper()} {policy_text(q)}"
    details = [window_text(w, prefixes, q) for w in q.windows] + [
        f"window semantics: {q.semantics}" + SEMANTICS_TEXT.get(q.semantics, "")
        + (f"  [{q.secret.semantics.source}]" if q.secret is not None else "")]
    if q.secret is not None:
        # the SECRET parameters in force, each with where it came from
        details += ["SECRET " + line for line in q.secret.lines()[1:]]
    if q.output is not None and q.form == "CONSTRUCT":
        details.append(f"writes its triples on stream {prefixes.term(q.output)}")
    if q.form == "CONSTRUCT":
        details.extend("template " + " ".join(term_text(x, prefixes) for x in (t.s, t.p, t.o))
                       for t in q.template)
    return TreeNode(head, details, [relation(q.relation, "Relation (per evaluation)")])
