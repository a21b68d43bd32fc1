"""Rewrites of the algebra: filter placement and window extraction.

Both passes preserve the section 4.2 semantics exactly:

* A FILTER conjunct that does not look at the interval (no getDURATION/
  getSTARTTIME/getENDTIME) and whose variables are all certainly bound on
  one side of a join-like node is evaluated on that side, so it prunes
  partial matches as early as possible.  Filter(F, Union(A, B)) becomes
  Union(Filter(F, A), Filter(F, B)).  Nothing moves into an optional side.
  The conjuncts that end up on the same node form one Filter (one
  ``where`` of the compiled rule, however many there are).
* A conjunct ``getDURATION() < D`` or ``<= D`` (D a constant duration)
  wraps its pattern in a Window, which the compiler pushes into every
  binary step below it.  The conjunct itself stays, so `<` stays strict.

Every walk here is iterative (expressions with an explicit stack, patterns
through :mod:`epsparql.trampoline`): a chain of thousands of OPTIONALs,
BINDs or ``&&`` is as fine as a short one.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable, Iterator

from rdflib import Literal, XSD

from ..language import ast
from ..trampoline import Walk, run
from .nodes import (BGP, Background, EqJoin, EqLeftJoin, Extend, Filter, Join,
                    LeftJoin, Pattern, SeqJoin, SeqRightJoin, Union_, Window)

TEMPORAL_FUNCTIONS = {"GETDURATION", "GETSTARTTIME", "GETENDTIME"}
DURATION_TYPES = {XSD.duration, XSD.dayTimeDuration, XSD.yearMonthDuration}

_BINARY = (Join, Union_, SeqJoin, EqJoin, LeftJoin, SeqRightJoin, EqLeftJoin)
_UNARY = (Filter, Window, Extend)


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


def expr_nodes(e: Any) -> Iterator[Any]:
    """Every node of an expression, parents before children, left to right."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(expr_children(x)))


def expr_vars(e: Any) -> set[str]:
    """Names of the variables an expression mentions."""
    return {x.name for x in expr_nodes(e) if _kind(x) == "Var"}


def _is_time_call(e: Any) -> bool:
    return (_kind(e) == "FunctionCall" and isinstance(e.name, str)
            and e.name.upper() in TEMPORAL_FUNCTIONS)


def is_temporal(e: Any) -> bool:
    """Does the expression look at the solution's interval?"""
    return any(_is_time_call(x) for x in expr_nodes(e))


def conjuncts(e: Any) -> list[Any]:
    """The operands of a tree of ``&&``, left to right."""
    out: list[Any] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if _kind(x) == "BinaryOp" and x.op == "&&":
            stack += (x.right, x.left)
        else:
            out.append(x)
    return out


def conjoin(es: list[Any]) -> Any:
    """``e1 && e2 && …`` as a balanced tree (``&&`` is associative in
    SPARQL's three-valued logic), so a long conjunction stays shallow."""
    if len(es) == 1:
        return es[0]
    mid = len(es) // 2
    return ast.BinaryOp("&&", conjoin(es[:mid]), conjoin(es[mid:]))


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


def _triple_vars(triples: Any, out: set[str]) -> None:
    for t in triples:
        out |= _term_vars(t.s) | _term_vars(t.p) | _term_vars(t.o)


def all_vars(p: Pattern) -> set[str]:
    """Every variable a pattern mentions (BIND targets included)."""
    out: set[str] = set()
    stack = [p]
    while stack:
        x = stack.pop()
        if isinstance(x, BGP):
            _triple_vars(x.triples, out)
        elif isinstance(x, _BINARY):
            stack += (x.right, x.left)
        elif isinstance(x, _UNARY):
            if isinstance(x, Extend):
                out.add(x.var.name)
            stack.append(x.pattern)
        elif isinstance(x, Background):
            out |= _term_vars(x.graph)
            _triple_vars(x.triples, out)
    return out


def certain_vars(p: Pattern, memo: dict[int, tuple[Pattern, frozenset[str]]] | None = None
                 ) -> frozenset[str]:
    """Variables bound in every solution of ``p``.  ``memo`` (by node
    identity) saves recomputing them for the same nodes within one pass."""
    return run(_certain(p, {} if memo is None else memo))


def _certain(p: Pattern, memo: dict[int, tuple[Pattern, frozenset[str]]]
             ) -> Walk[frozenset[str]]:
    hit = memo.get(id(p))
    if hit is not None and hit[0] is p:
        return hit[1]
    if isinstance(p, BGP):
        out = frozenset(all_vars(p))
    elif isinstance(p, (Join, SeqJoin, EqJoin)):
        out = (yield _certain(p.left, memo)) | (yield _certain(p.right, memo))
    elif isinstance(p, Union_):
        out = (yield _certain(p.left, memo)) & (yield _certain(p.right, memo))
    elif isinstance(p, (LeftJoin, EqLeftJoin)):
        out = yield _certain(p.left, memo)
    elif isinstance(p, SeqRightJoin):
        out = yield _certain(p.right, memo)
    elif isinstance(p, _UNARY):
        out = yield _certain(p.pattern, memo)
    else:
        out = frozenset()
    memo[id(p)] = (p, out)
    return out


# -- passes ----------------------------------------------------------------------
def _rebuild(p: Pattern, visit: Callable[[Pattern], Walk[Pattern]]) -> Walk[Pattern]:
    """``p`` rebuilt bottom-up: children first, then ``visit`` on the node."""
    if isinstance(p, _BINARY):
        left = yield _rebuild(p.left, visit)
        right = yield _rebuild(p.right, visit)
        if left is not p.left or right is not p.right:
            p = replace(p, left=left, right=right)
    elif isinstance(p, _UNARY):
        inner = yield _rebuild(p.pattern, visit)
        if inner is not p.pattern:
            p = replace(p, pattern=inner)
    return (yield visit(p))


def push_filters(p: Pattern) -> Pattern:
    """Move each filter conjunct to the lowest node where it can be decided."""
    memo: dict[int, tuple[Pattern, frozenset[str]]] = {}

    def visit(node: Pattern) -> Walk[Pattern]:
        if isinstance(node, Filter):
            return (yield _place(conjuncts(node.expr), node.pattern, memo))
        return node
        yield  # unreachable: makes visit a walker

    return run(_rebuild(p, visit))


def _place(cs: list[Any], p: Pattern, memo: dict) -> Walk[Pattern]:
    """``p`` with the conjuncts ``cs`` placed as low as each can go; those
    that stay here form one Filter over ``p``."""
    stay: list[Any] = []
    movable: list[tuple[Any, set[str]]] = []
    for c in cs:
        if is_temporal(c):
            stay.append(c)
        else:
            movable.append((c, expr_vars(c)))
    if isinstance(p, (Join, SeqJoin, EqJoin)):
        lv = yield _certain(p.left, memo)
        rv = yield _certain(p.right, memo)
        to_left = [c for c, vs in movable if vs <= lv]
        to_right = [c for c, vs in movable if not vs <= lv and vs <= rv]
        stay += [c for c, vs in movable if not vs <= lv and not vs <= rv]
        p = yield _sides(p, to_left, to_right, memo)
    elif isinstance(p, Union_):
        every = [c for c, _ in movable]
        p = yield _sides(p, every, every, memo)
    elif isinstance(p, (LeftJoin, EqLeftJoin, SeqRightJoin)):
        mandatory = "right" if isinstance(p, SeqRightJoin) else "left"
        mv = yield _certain(getattr(p, mandatory), memo)
        down = [c for c, vs in movable if vs <= mv]
        stay += [c for c, vs in movable if not vs <= mv]
        if down:
            inner = yield _place(down, getattr(p, mandatory), memo)
            p = replace(p, **{mandatory: inner})
    elif isinstance(p, (Window, Filter)):
        if movable:
            p = replace(p, pattern=(yield _place([c for c, _ in movable],
                                                 p.pattern, memo)))
    elif isinstance(p, Extend):
        down = [c for c, vs in movable if p.var.name not in vs]
        stay += [c for c, vs in movable if p.var.name in vs]
        if down:
            p = replace(p, pattern=(yield _place(down, p.pattern, memo)))
    else:
        stay += [c for c, _ in movable]
    if not stay:
        return p
    order = {id(c): i for i, c in enumerate(cs)}
    return Filter(conjoin(sorted(stay, key=lambda c: order[id(c)])), p)


def _sides(p: Pattern, left_cs: list[Any], right_cs: list[Any], memo: dict
           ) -> Walk[Pattern]:
    left = (yield _place(left_cs, p.left, memo)) if left_cs else p.left
    right = (yield _place(right_cs, p.right, memo)) if right_cs else p.right
    if left is p.left and right is p.right:
        return p
    return replace(p, left=left, right=right)


def extract_windows(p: Pattern) -> Pattern:
    """Wrap each pattern bounded by a getDURATION() filter in a Window."""
    def visit(node: Pattern) -> Walk[Pattern]:
        if isinstance(node, Filter):
            bounds = [(w, c) for w, c in ((window_of(c), c) for c in conjuncts(node.expr)) if w]
            if bounds:
                secs = min(b[0] for b, _ in bounds)
                strict = any(b[1] for b, _ in bounds if b[0] == secs)
                pos = next(getattr(c, "pos", None) for b, c in bounds if b[0] == secs)
                return Filter(node.expr, Window(node.pattern, secs, strict, pos=pos))
        return node
        yield  # unreachable: makes visit a walker

    return run(_rebuild(p, visit))


def optimise(p: Pattern) -> Pattern:
    """The standard pipeline: windows first (they read whole filters), then
    filter placement."""
    return push_filters(extract_windows(p))


__all__ = ["optimise", "push_filters", "extract_windows", "certain_vars", "all_vars",
           "expr_vars", "expr_nodes", "expr_children", "is_temporal", "conjuncts",
           "conjoin", "duration_seconds", "window_of"]
