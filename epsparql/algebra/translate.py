"""Translate the parser's AST into the algebra of section 4.2.

SPARQL's own translation (SPARQL 1.1, 18.2.2) with the EP-SPARQL
operators added: SEQ -> SeqJoin, EQUALS -> EqJoin, OPTIONALSEQ ->
SeqRightJoin (left side optional), EQUALSOPTIONAL -> EqLeftJoin (right
side optional).  FILTERs scope over their whole group; the filters at the
top of an optional group become the condition of its left join, as for
OPTIONAL.
"""
from __future__ import annotations

from typing import Any

from ..language import ast
from ..language.errors import QueryError
from .nodes import (BGP, Background, Empty, EqJoin, EqLeftJoin, Extend, Filter, Join,
                    LeftJoin, Pattern, Query, SeqJoin, SeqRightJoin, Triple,
                    Union_)
from .passes import conjoin


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


def _optional_operand(node: Any) -> tuple[Pattern, Any]:
    """(pattern, condition) of an optional operand.  Only the FILTERs at the
    top level of the operand's own group become the left join's condition
    (SPARQL 1.1, 18.2.2.6); a filter in a nested group filters the optional
    part by itself."""
    if isinstance(node, ast.Group):
        return _group(node)
    return pattern(node), None


def pattern(node: Any) -> Pattern:
    """The algebra of a group, union or temporal join."""
    if isinstance(node, ast.Group):
        return group(node)
    if isinstance(node, ast.Union):
        return Union_(pattern(node.left), pattern(node.right))
    if isinstance(node, ast.TemporalJoin):
        if node.op == "SEQ":
            return SeqJoin(pattern(node.left), pattern(node.right))
        if node.op == "EQUALS":
            return EqJoin(pattern(node.left), pattern(node.right))
        if node.op == "OPTIONALSEQ":
            opt, cond = _optional_operand(node.left)
            return SeqRightJoin(opt, pattern(node.right), cond)
        if node.op == "EQUALSOPTIONAL":
            opt, cond = _optional_operand(node.right)
            return EqLeftJoin(pattern(node.left), opt, cond)
    if isinstance(node, ast.BGP):
        return BGP(tuple(Triple(t.s, t.p, t.o) for t in node.triples))
    raise _err(type(node).__name__, node)


def group(g: ast.Group) -> Pattern:
    """The algebra of a group: its elements joined, then its FILTERs."""
    acc, cond = _group(g)
    return acc if cond is None else Filter(cond, acc)


def _group(g: ast.Group) -> tuple[Pattern, Any]:
    """A group's pattern without its own FILTERs, and their conjunction."""
    acc: Pattern = Empty()
    filters: list[Any] = []
    for e in g.elements:
        if isinstance(e, ast.Filter):
            filters.append(e.expr)
        elif isinstance(e, ast.Optional):
            opt, cond = _optional_operand(e.pattern)
            acc = LeftJoin(acc, opt, cond)
        elif isinstance(e, ast.Bind):
            acc = Extend(acc, e.var, e.expr)
        elif isinstance(e, (ast.BGP, ast.Group, ast.Union, ast.TemporalJoin)):
            acc = _join(acc, pattern(e))
        elif isinstance(e, ast.Minus):
            raise _err("MINUS", e)
        elif isinstance(e, ast.Graph):
            acc = _join(acc, _background(e))
        elif isinstance(e, ast.SubSelect):
            raise _err("a sub-query", e)
        else:
            raise _err(type(e).__name__, e)
    for f in filters:
        _check_expr(f)
    return acc, (conjoin(filters) if filters else None)


def _background(g: ast.Graph) -> Background:
    """GRAPH g { triples }: only triple patterns (paths allowed) inside."""
    triples: list[Triple] = []
    for e in g.pattern.elements:
        if isinstance(e, ast.BGP):
            triples.extend(Triple(t.s, t.p, t.o) for t in e.triples)
        else:
            raise _err(f"{type(e).__name__} inside GRAPH (only triple patterns and paths)", e)
    if not triples:
        raise _err("an empty GRAPH pattern", g)
    return Background(g.name, tuple(triples))


def _check_expr(e: Any) -> None:
    if isinstance(e, ast.Exists):
        raise _err("EXISTS", e)
    for c in _children(e):
        _check_expr(c)


def _children(e: Any) -> list[Any]:
    if isinstance(e, ast.BinaryOp):
        return [e.left, e.right]
    if isinstance(e, ast.UnaryOp):
        return [e.operand]
    if isinstance(e, ast.FunctionCall):
        return list(e.args)
    if isinstance(e, (ast.In, ast.NotIn)):
        return [e.expr, *e.values]
    return []


def translate(q: ast.Query) -> Query:
    """The algebra query of a parsed query."""
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
        template = tuple(Triple(t.s, t.p, t.o) for t in q.template)
        return Query("CONSTRUCT", where, template=template, source=q)
    if isinstance(q, ast.AskQuery):
        return Query("ASK", where, source=q)
    raise QueryError(f"unsupported query form {type(q).__name__}")
