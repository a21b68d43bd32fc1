"""Rewrites of the algebra: filter placement and window extraction.

Both passes preserve the section 4.2 semantics exactly:

* A FILTER conjunct that does not look at the interval (no getDURATION/
  getSTARTTIME/getENDTIME) and whose variables are all certainly bound on
  one side of a join-like node is evaluated on that side, so it prunes
  partial matches as early as possible.  Filter(F, Union(A, B)) becomes
  Union(Filter(F, A), Filter(F, B)).  Nothing moves into an optional side.
* A conjunct ``getDURATION() < D`` or ``<= D`` (D a constant duration)
  wraps its pattern in a Window, which the compiler pushes into every
  binary step below it.  The conjunct itself stays, so `<` stays strict.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Iterable

from rdflib import Literal, XSD

from .nodes import (BGP, Background, Empty, EqJoin, EqLeftJoin, Extend, Filter, Join,
                    LeftJoin, Pattern, SeqJoin, SeqRightJoin, Triple, Union_,
                    Window)

TEMPORAL_FUNCTIONS = {"GETDURATION", "GETSTARTTIME", "GETENDTIME"}
DURATION_TYPES = {XSD.duration, XSD.dayTimeDuration, XSD.yearMonthDuration}


# -- expressions (parser AST, duck-typed by class name) -------------------
def _kind(e: Any) -> str:
    return type(e).__name__


def expr_children(e: Any) -> list[Any]:
    k = _kind(e)
    if k == "BinaryOp":
        return [e.left, e.right]
    if k == "UnaryOp":
        return [e.operand]
    if k == "FunctionCall":
        return list(e.args)
    if k in ("In", "NotIn"):
        return [e.expr, *e.values]
    return []


def expr_vars(e: Any) -> set[str]:
    """Names of the variables an expression mentions."""
    if _kind(e) == "Var":
        return {e.name}
    out: set[str] = set()
    for c in expr_children(e):
        out |= expr_vars(c)
    return out


def is_temporal(e: Any) -> bool:
    """Does the expression look at the solution's interval?"""
    if _kind(e) == "FunctionCall" and isinstance(e.name, str) and e.name.upper() in TEMPORAL_FUNCTIONS:
        return True
    return any(is_temporal(c) for c in expr_children(e))


def conjuncts(e: Any) -> list[Any]:
    if _kind(e) == "BinaryOp" and e.op == "&&":
        return conjuncts(e.left) + conjuncts(e.right)
    return [e]


def conjoin(es: list[Any]) -> Any:
    from ..language import ast
    out = es[0]
    for e in es[1:]:
        out = ast.BinaryOp("&&", out, e)
    return out


_DUR = re.compile(r"^(-)?P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?"
                  r"(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?"
                  r"(?:(\d+(?:\.\d+)?)S)?)?$")


def duration_seconds(lit: Literal) -> float | None:
    """Seconds of an xsd:duration literal (months 30 days, years 365)."""
    m = _DUR.match(str(lit))
    if not m or str(lit) in ("P", "PT", "-P"):
        return None
    sign = -1 if m.group(1) else 1
    y, mo, w, d, h, mi, s = (float(g) if g else 0.0 for g in m.groups()[1:])
    return sign * (((y * 365 + mo * 30 + w * 7 + d) * 24 + h) * 60 + mi) * 60 + s


def window_of(e: Any) -> tuple[float, bool] | None:
    """(seconds, strict) if ``e`` is getDURATION() < / <= a constant."""
    if _kind(e) != "BinaryOp" or e.op not in ("<", "<=", ">", ">="):
        return None
    left, right, op = e.left, e.right, e.op
    if op in (">", ">="):
        left, right, op = right, left, {">": "<", ">=": "<="}[op]
    if not (_kind(left) == "FunctionCall" and isinstance(left.name, str)
            and left.name.upper() == "GETDURATION"):
        return None
    if isinstance(right, Literal) and right.datatype in DURATION_TYPES:
        secs = duration_seconds(right)
    elif isinstance(right, Literal) and right.datatype in (XSD.integer, XSD.decimal, XSD.double):
        secs = float(right.toPython())  # seconds given as a plain number
    else:
        return None
    if secs is None or secs < 0:
        return None
    return secs, op == "<"


# -- variables of patterns ---------------------------------------------------
def _term_vars(t: Any) -> set[str]:
    return {t.name} if _kind(t) == "Var" else set()


def all_vars(p: Pattern) -> set[str]:
    if isinstance(p, BGP):
        out: set[str] = set()
        for t in p.triples:
            out |= _term_vars(t.s) | _term_vars(t.p) | _term_vars(t.o)
        return out
    if isinstance(p, (Join, Union_, SeqJoin, EqJoin, LeftJoin, SeqRightJoin, EqLeftJoin)):
        return all_vars(p.left) | all_vars(p.right)
    if isinstance(p, (Filter, Window)):
        return all_vars(p.pattern)
    if isinstance(p, Extend):
        return all_vars(p.pattern) | {p.var.name}
    if isinstance(p, Background):
        out = _term_vars(p.graph)
        for t in p.triples:
            out |= _term_vars(t.s) | _term_vars(t.p) | _term_vars(t.o)
        return out
    return set()


def certain_vars(p: Pattern) -> set[str]:
    """Variables bound in every solution of ``p``."""
    if isinstance(p, BGP):
        return all_vars(p)
    if isinstance(p, (Join, SeqJoin, EqJoin)):
        return certain_vars(p.left) | certain_vars(p.right)
    if isinstance(p, Union_):
        return certain_vars(p.left) & certain_vars(p.right)
    if isinstance(p, (LeftJoin, EqLeftJoin)):
        return certain_vars(p.left)
    if isinstance(p, SeqRightJoin):
        return certain_vars(p.right)
    if isinstance(p, (Filter, Window, Extend)):
        return certain_vars(p.pattern)
    return set()


# -- passes ----------------------------------------------------------------------
def push_filters(p: Pattern) -> Pattern:
    """Move each filter conjunct to the lowest node where it can be decided."""
    if isinstance(p, Filter):
        inner = push_filters(p.pattern)
        for c in conjuncts(p.expr):
            inner = _push(c, inner)
        return inner
    return _map_children(p, push_filters)


def _push(c: Any, p: Pattern) -> Pattern:
    if not is_temporal(c):
        vs = expr_vars(c)
        if isinstance(p, (Join, SeqJoin, EqJoin)):
            if vs <= certain_vars(p.left):
                return replace(p, left=_push(c, p.left))
            if vs <= certain_vars(p.right):
                return replace(p, right=_push(c, p.right))
        elif isinstance(p, Union_):
            return Union_(_push(c, p.left), _push(c, p.right))
        elif isinstance(p, (LeftJoin, EqLeftJoin)):
            if vs <= certain_vars(p.left):
                return replace(p, left=_push(c, p.left))
        elif isinstance(p, SeqRightJoin):
            if vs <= certain_vars(p.right):
                return replace(p, right=_push(c, p.right))
        elif isinstance(p, Window):
            return replace(p, pattern=_push(c, p.pattern))
        elif isinstance(p, Filter):
            return Filter(p.expr, _push(c, p.pattern))
        elif isinstance(p, Extend) and p.var.name not in vs:
            return replace(p, pattern=_push(c, p.pattern))
    return Filter(c, p)


def extract_windows(p: Pattern) -> Pattern:
    """Wrap each pattern bounded by a getDURATION() filter in a Window."""
    p = _map_children(p, extract_windows)
    if isinstance(p, Filter):
        bounds = [w for w in (window_of(c) for c in conjuncts(p.expr)) if w]
        if bounds:
            secs = min(b[0] for b in bounds)
            strict = any(b[1] for b in bounds if b[0] == secs)
            return Filter(p.expr, Window(p.pattern, secs, strict))
    return p


def _map_children(p: Pattern, f) -> Pattern:
    if isinstance(p, (Join, Union_, SeqJoin, EqJoin, LeftJoin, SeqRightJoin, EqLeftJoin)):
        return replace(p, left=f(p.left), right=f(p.right))
    if isinstance(p, (Filter, Window, Extend)):
        return replace(p, pattern=f(p.pattern))
    return p


def optimise(p: Pattern) -> Pattern:
    """The standard pipeline: windows first (they read whole filters), then
    filter placement."""
    return push_filters(extract_windows(p))


__all__ = ["optimise", "push_filters", "extract_windows", "certain_vars", "all_vars",
           "expr_vars", "is_temporal", "conjuncts", "duration_seconds", "window_of"]
