"""The order in which a windowed query's pattern is evaluated, as lines.

``epsparql explain`` prints it under the algebra: the triple patterns,
filters and other patterns of each group in the order
:func:`epsparql.rules.join_order.plan_join` chose (bound variables
first), and the independent parts that are evaluated once each and then
combined.  What the user reads to see why a query is fast or slow.
"""
from __future__ import annotations

from typing import Any

from ..algebra.nodes import Empty, Extend, Filter, Join, LeftJoin, Union_
from ..algebra.streams import ContinuousQuery, Minus, PerStream, Quad, SubSelect, Table
from ..rdf.prefixes import Prefixes
from ..rules.join_order import Placed, binds_all, bound_triple, certainly_bound, plan_join
from .algebra_tree import expr_text, term_text

__all__ = ["join_order_lines"]


def join_order_lines(q: ContinuousQuery, prefixes: Prefixes) -> list[str]:
    """The evaluation order of a windowed query's pattern, one step a
    line, nested patterns indented; a triple whose positions are all
    bound when it runs is marked: it is tested, once."""
    out: list[str] = []
    var_windows = {w.index for w in q.windows if type(w.stream).__name__ == "Var"}
    _lines(q.relation.pattern, frozenset(), prefixes, "", out, var_windows)
    return out


def _triple(q: Quad, prefixes: Prefixes) -> str:
    t = q.triple
    return " ".join(term_text(x, prefixes) for x in (t.s, t.p, t.o))


def _lines(p: Any, bound: frozenset[str], prefixes: Prefixes, ind: str, out: list[str],
           vw: set[int]) -> None:
    plan = plan_join(p, bound)
    if plan is not None:
        for f in plan.before:
            out.append(f"{ind}FILTER {expr_text(f.expr, prefixes)}")
        many = len(plan.parts) > 1
        for k, part in enumerate(plan.parts):
            inner = ind
            if many:
                out.append(f"{ind}part {k + 1} (shares no variable with the others: evaluated "
                           f"once, then combined):")
                inner = ind + "  "
            known = set(bound)
            for step in part.steps:
                if isinstance(step, Placed):
                    out.append(f"{inner}FILTER {expr_text(step.expr, prefixes)}")
                elif isinstance(step, Quad) and bound_triple(step, known, vw):
                    out.append(f"{inner}{_triple(step, prefixes)}   (bound: tested once)")
                else:
                    # (a unit that may leave a variable unbound runs on its own)
                    _lines(step, frozenset(known) if binds_all(step) else frozenset(),
                           prefixes, inner, out, vw)
                    known |= certainly_bound(step)
        for f in plan.after:
            out.append(f"{ind}FILTER {expr_text(f.expr, prefixes)}")
        return
    deeper = ind + "  "
    if isinstance(p, Quad):
        out.append(ind + _triple(p, prefixes))
    elif isinstance(p, Empty):
        out.append(ind + "{}")
    elif isinstance(p, Join):
        out.append(ind + "in the query's order (an EXISTS inside):")
        _lines(p.left, bound, prefixes, deeper, out, vw)
        _lines(p.right, bound | certainly_bound(p.left), prefixes, deeper, out, vw)
    elif isinstance(p, Filter):
        _lines(p.pattern, bound, prefixes, ind, out, vw)
        out.append(f"{ind}FILTER {expr_text(p.expr, prefixes)}")
    elif isinstance(p, LeftJoin):
        _lines(p.left, bound, prefixes, ind, out, vw)
        out.append(ind + "OPTIONAL:")
        _lines(p.right, bound | certainly_bound(p.left), prefixes, deeper, out, vw)
    elif isinstance(p, Minus):
        _lines(p.left, bound, prefixes, ind, out, vw)
        out.append(ind + "MINUS:")
        _lines(p.right, frozenset(), prefixes, deeper, out, vw)
    elif isinstance(p, Union_):
        out.append(ind + "UNION of:")
        branches, stack = [], [p]
        while stack:                    # a chain of UNIONs is one list of branches
            x = stack.pop()
            if isinstance(x, Union_):
                stack += (x.right, x.left)
            else:
                branches.append(x)
        for b in branches:
            _lines(b, bound, prefixes, deeper, out, vw)
    elif isinstance(p, Extend):
        _lines(p.pattern, bound, prefixes, ind, out, vw)
        out.append(f"{ind}BIND ?{p.var.name} := {expr_text(p.expr, prefixes)}")
    elif isinstance(p, PerStream):
        out.append(f"{ind}per stream ?{p.var}:")
        _lines(p.pattern, bound, prefixes, deeper, out, vw)
    elif isinstance(p, Table):
        out.append(f"{ind}VALUES {' '.join('?' + v for v in p.vars)} ({len(p.rows)} rows)")
    elif isinstance(p, SubSelect):
        names = " ".join("?" + v for _, v in p.relation.projection)
        out.append(f"{ind}sub-query SELECT {names} (evaluated on its own):")
        _lines(p.relation.pattern, frozenset(), prefixes, deeper, out, vw)
    else:
        out.append(ind + type(p).__name__)
