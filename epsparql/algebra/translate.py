"""Translate the parser's AST into the algebra of section 4.2.

SPARQL's own translation (SPARQL 1.1, 18.2.2) with the EP-SPARQL
operators added: SEQ -> SeqJoin, EQUALS -> EqJoin, OPTIONALSEQ ->
SeqRightJoin (left side optional), EQUALSOPTIONAL -> EqLeftJoin (right
side optional).  FILTERs scope over their whole group; the filters at the
top of an optional group become the condition of its left join, as for
OPTIONAL.

Long chains.  A chain of n UNION, SEQ or EQUALS operands, or n joined
group elements, is left-associative in the text; up to :data:`CHAIN`
operands it stays a left-deep tree (the shape ETALIS binarises), a longer
one becomes a balanced tree of such left-deep chunks, so 2,000
alternatives make a tree about 20 levels deep instead of 2,000.  The
operators are associative on solutions and their intervals (SEQ: ``A``
ends before ``B`` starts and ``B`` before ``C`` either way), so the
answers are the same; the Prolog core compiles a balanced rule in time
linear in its size instead of quadratic.  OPTIONAL, OPTIONALSEQ,
EQUALSOPTIONAL and BIND chains are not associative and stay as deep as
they are long: every walk over the algebra is iterative
(:mod:`epsparql.trampoline`).

Every query is also checked for its constants here
(:mod:`epsparql.algebra.constants`): invalid literals and regular
expressions are errors, comparisons that can never hold are warnings.
"""
from __future__ import annotations

from typing import Any, Callable

from ..language import ast
from ..language.errors import QueryError
from ..trampoline import Walk, run
from .constants import check_constants
from .nodes import (BGP, Background, Empty, EqJoin, EqLeftJoin, Extend, Filter, Join,
                    LeftJoin, Pattern, Query, SeqJoin, SeqRightJoin, Triple,
                    Union_)
from .passes import conjoin, expr_nodes

#: Chains up to this many operands stay left-deep; longer ones are balanced.
CHAIN = 16


def _err(what: str, node: Any) -> QueryError:
    pos = getattr(node, "pos", None)
    return QueryError(f"{what} is not supported yet",
                      pos.line if pos else None, pos.column if pos else None)


def _join(a: Pattern, b: Pattern) -> Pattern:
    if isinstance(a, Empty):
        return b
    if isinstance(b, Empty):
        return a
    if isinstance(a, BGP) and isinstance(b, BGP):
        return BGP(a.triples + b.triples)
    return Join(a, b)


def balanced(parts: list[Pattern], make: Callable[..., Pattern],
             keywords: list[Any] | None = None) -> Pattern:
    """``parts`` combined by the associative ``make``: left-deep up to
    :data:`CHAIN` parts, else two balanced halves (recursion depth log n).
    With ``keywords`` (the positions of the operator between part i-1 and
    part i, at index i), each node made gets the position of the operator
    between its two operands: ``make(left, right, pos=...)``."""
    def mk(a: Pattern, b: Pattern, i: int) -> Pattern:
        if keywords is None:
            return make(a, b)
        return make(a, b, pos=keywords[i])

    def build(lo: int, hi: int) -> Pattern:
        if hi - lo <= CHAIN:
            out = parts[lo]
            for i in range(lo + 1, hi):
                out = mk(out, parts[i], i)
            return out
        mid = (lo + hi) // 2
        return mk(build(lo, mid), build(mid, hi), mid)

    return build(0, len(parts))


def _chain(node: Any) -> tuple[list[Any], list[Any]]:
    """The operands of a chain of one associative operator (UNION, or one of
    SEQ / EQUALS), in text order, seen through groups that hold nothing but
    the same chain (``{ { A } UNION { B } } UNION { C }``, as tools print
    it); and the positions of the operators, the one between operand i-1
    and operand i at index i (index 0: None)."""
    def same(x: Any) -> bool:
        return type(x) is type(node) and getattr(x, "op", None) == getattr(node, "op", None)

    out: list[Any] = []
    keywords: list[Any] = [None]
    stack: list[tuple[Any, Any]] = [(node, None)]      # (operand, or None and a keyword)
    while stack:
        x, kw = stack.pop()
        if x is None:
            keywords.append(kw)
            continue
        while (isinstance(x, ast.Group) and len(x.elements) == 1
               and same(x.elements[0])):
            x = x.elements[0]
        if same(x):
            stack += ((x.right, None), (None, x.pos), (x.left, None))
        else:
            out.append(x)
    return out, keywords


_ASSOCIATIVE = {"SEQ": SeqJoin, "EQUALS": EqJoin}


def pattern(node: Any) -> Pattern:
    """The algebra of a group, union or temporal join."""
    return run(_pattern(node))


def group(g: ast.Group) -> Pattern:
    """The algebra of a group: its elements joined, then its FILTERs."""
    return run(_pattern(g))


def _pattern(node: Any) -> Walk[Pattern]:
    if isinstance(node, ast.Group):
        acc, cond = yield _group(node)
        return acc if cond is None else Filter(cond, acc)
    if isinstance(node, ast.Union) or (isinstance(node, ast.TemporalJoin)
                                       and node.op in _ASSOCIATIVE):
        make = Union_ if isinstance(node, ast.Union) else _ASSOCIATIVE[node.op]
        parts = []
        operands, keywords = _chain(node)
        for operand in operands:
            parts.append((yield _pattern(operand)))
        return balanced(parts, make, keywords)
    if isinstance(node, ast.TemporalJoin):
        if node.op == "OPTIONALSEQ":
            opt, cond = yield _optional_operand(node.left)
            right = yield _pattern(node.right)
            return SeqRightJoin(opt, right, cond, pos=node.pos)
        if node.op == "EQUALSOPTIONAL":
            left = yield _pattern(node.left)
            opt, cond = yield _optional_operand(node.right)
            return EqLeftJoin(left, opt, cond, pos=node.pos)
    if isinstance(node, ast.BGP):
        return BGP(tuple(Triple(t.s, t.p, t.o, pos=t.pos) for t in node.triples))
    raise _err(type(node).__name__, node)


def _optional_operand(node: Any) -> Walk[tuple[Pattern, Any]]:
    """(pattern, condition) of an optional operand.  Only the FILTERs at the
    top level of the operand's own group become the left join's condition
    (SPARQL 1.1, 18.2.2.6); a filter in a nested group filters the optional
    part by itself."""
    if isinstance(node, ast.Group):
        return (yield _group(node))
    return (yield _pattern(node)), None


def _group(g: ast.Group) -> Walk[tuple[Pattern, Any]]:
    """A group's pattern without its own FILTERs, and their conjunction.

    Consecutive joined elements form a run, joined as one (balanced when
    long) before an OPTIONAL or BIND takes the whole so far as its left
    side, as SPARQL's left-to-right translation does."""
    acc: Pattern = Empty()
    run_: list[Pattern] = []
    filters: list[Any] = []

    def flush(acc: Pattern) -> Pattern:
        if not run_:
            return acc
        merged: list[Pattern] = []
        for p in run_:                      # adjacent triple blocks are one BGP
            if merged and isinstance(p, BGP) and isinstance(merged[-1], BGP):
                merged[-1] = BGP(merged[-1].triples + p.triples)
            else:
                merged.append(p)
        run_.clear()
        return _join(acc, balanced(merged, _join))

    for e in g.elements:
        if isinstance(e, ast.Filter):
            filters.append(e.expr)
        elif isinstance(e, ast.Optional):
            acc = flush(acc)
            opt, cond = yield _optional_operand(e.pattern)
            acc = LeftJoin(acc, opt, cond, pos=e.pos)
        elif isinstance(e, ast.Bind):
            acc = flush(acc)
            _check_expr(e.expr)
            acc = Extend(acc, e.var, e.expr, pos=e.pos)
        elif isinstance(e, (ast.BGP, ast.Group, ast.Union, ast.TemporalJoin)):
            p = yield _pattern(e)
            if not isinstance(p, Empty):
                run_.append(p)
        elif isinstance(e, ast.Minus):
            raise _err("MINUS", e)
        elif isinstance(e, ast.Graph):
            run_.append(_background(e))
        elif isinstance(e, ast.SubSelect):
            raise _err("a sub-query", e)
        else:
            raise _err(type(e).__name__, e)
    acc = flush(acc)
    for f in filters:
        _check_expr(f)
    return acc, (conjoin(filters) if filters else None)


def _background(g: ast.Graph) -> Background:
    """GRAPH g { triples }: only triple patterns (paths allowed) inside."""
    triples: list[Triple] = []
    for e in g.pattern.elements:
        if isinstance(e, ast.BGP):
            triples.extend(Triple(t.s, t.p, t.o, pos=t.pos) for t in e.triples)
        else:
            raise _err(f"{type(e).__name__} inside GRAPH (only triple patterns and paths)", e)
    if not triples:
        raise _err("an empty GRAPH pattern", g)
    return Background(g.name, tuple(triples))


def _check_expr(e: Any) -> None:
    """EXISTS is not supported (yet) in expressions."""
    for x in expr_nodes(e):
        if isinstance(x, ast.Exists):
            raise _err("EXISTS", x)


def translate(q: ast.Query) -> Query:
    """The algebra query of a parsed query (its constants checked first)."""
    check_constants(q)
    where = group(q.where)
    if isinstance(where, Empty):
        raise QueryError("the WHERE clause is empty: nothing to detect on a stream")
    if isinstance(q, ast.SelectQuery):
        proj = () if q.projection == "*" else tuple(q.projection)
        for item in proj:
            if isinstance(item, tuple):
                _check_expr(item[0])
        return Query("SELECT", where, proj, q.distinct, source=q)
    if isinstance(q, ast.ConstructQuery):
        template = tuple(Triple(t.s, t.p, t.o, pos=t.pos) for t in q.template)
        return Query("CONSTRUCT", where, template=template, source=q)
    if isinstance(q, ast.AskQuery):
        return Query("ASK", where, source=q)
    raise QueryError(f"unsupported query form {type(q).__name__}")
