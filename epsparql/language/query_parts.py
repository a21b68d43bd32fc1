"""Every part of a parsed query, EP-SPARQL's or a stream dialect's, in one walk.

The static checks read a query through this walk, so that they are the
same on every road: :mod:`epsparql.algebra.constants` (constants and
expression types) and :func:`epsparql.language.scope.unbound_variables`
(variables no pattern binds).  A dialect query
(:class:`~epsparql.language.dialects.ast.DialectQuery`) is built from the
same groups, triples and expressions as an EP-SPARQL one, plus its window
patterns (CQELS ``STREAM <s> [..] {…}``, RSP-QL ``WINDOW <w> {…}``,
Streaming SPARQL's and LUPOSDATE's windowed groups), VALUES, sub-queries
with solution modifiers, and aggregates in expressions.

The walk is iterative (a chain of thousands of groups needs no Python
recursion) and in text order: the template, the projection, the WHERE
clause depth first, then GROUP BY, HAVING, ORDER BY and VALUES.
"""
from __future__ import annotations

from typing import Any, Iterator, NamedTuple

from rdflib import BNode, Literal, URIRef

from . import ast as A

__all__ = ["Part", "query_parts", "expression_nodes", "operands"]


class Part(NamedTuple):
    """One part of a query.  ``kind`` is

    * ``triple``: a triple pattern of the WHERE clause (``node``);
    * ``template``: a triple of a CONSTRUCT template;
    * ``expr``: an expression whose variables it reads (FILTER, BIND, a
      SELECT or GROUP BY expression, HAVING, ORDER BY);
    * ``binds``: a variable bound otherwise than by a triple pattern (GRAPH
      ?g, BIND, a sub-query's projection, VALUES, STREAM ?g, WINDOW ?w, an
      ``AS ?v`` of SELECT or GROUP BY);
    * ``projected``: a variable the query's SELECT clause projects;
    * ``term``: a constant of a VALUES block.

    ``expr`` is the expression a ``binds`` part assigns (``AS ?v``), else None."""

    kind: str
    node: Any
    pos: A.Pos | None
    expr: Any = None


def query_parts(query: Any) -> Iterator[Part]:
    """The parts of ``query`` (an ``ast.Query`` or a ``DialectQuery``) in
    text order; the groups of EXISTS inside expressions are walked too."""
    from .dialects import ast as D           # (the dialects' package imports the parser)
    form = getattr(query, "form", None)
    if isinstance(query, A.ConstructQuery) or form == "CONSTRUCT":
        for t in query.template:
            yield Part("template", t, t.pos or query.pos)
    projection = query.projection if isinstance(query, A.SelectQuery) or form == "SELECT" \
        else "*"
    if projection != "*":
        for item in projection:
            if isinstance(item, tuple):
                yield Part("expr", item[0], item[1].pos)
                yield Part("binds", item[1], item[1].pos, item[0])
            else:
                yield Part("projected", item, item.pos)
    # a stack of what is left to walk: patterns, and parts to give as they are
    stack: list[Any] = [query.where]
    if isinstance(query, D.DialectQuery):
        stack[:0] = reversed(_after_where(query.modifiers, query.values))
    while stack:
        x = stack.pop()
        if isinstance(x, Part):
            if x.kind == "expr":
                stack += reversed([g.pattern for g in expression_nodes(x.node, A.Exists)])
            yield x
        elif isinstance(x, A.Group):
            stack += reversed(x.elements)
        elif isinstance(x, A.BGP):
            for t in x.triples:
                yield Part("triple", t, t.pos)
        elif isinstance(x, (A.Union, A.TemporalJoin)):
            stack += (x.right, x.left)
        elif isinstance(x, (A.Optional, A.Minus, D.WindowedGroup)):
            stack.append(x.pattern)
        elif isinstance(x, (A.Graph, D.StreamPattern, D.WindowPattern)):
            name = x.name if isinstance(x, (A.Graph, D.WindowPattern)) else x.stream
            stack.append(x.pattern)
            if isinstance(name, A.Var):
                yield Part("binds", name, name.pos or x.pos)
        elif isinstance(x, A.Filter):
            stack.append(Part("expr", x.expr, x.pos))
        elif isinstance(x, A.Bind):
            stack += (Part("binds", x.var, x.var.pos or x.pos, x.expr),
                      Part("expr", x.expr, x.pos))
        elif isinstance(x, D.Values):
            stack += reversed(_values(x))
        elif isinstance(x, (A.SubSelect, D.SubQuery)):
            later: list[Any] = []
            if x.projection != "*":
                for item in x.projection:
                    if isinstance(item, tuple):
                        later += (Part("expr", item[0], item[1].pos),
                                  Part("binds", item[1], item[1].pos, item[0]))
                    else:
                        later.append(Part("binds", item, item.pos))
            later.append(x.where)
            if isinstance(x, D.SubQuery):
                later += _after_where(x.modifiers, x.values)
            stack += reversed(later)


def _after_where(mods: Any, values: Any) -> list[Any]:
    """The parts of GROUP BY, HAVING, ORDER BY and VALUES, in text order."""
    out: list[Any] = []
    for g in mods.group_by:
        if isinstance(g, tuple):
            out.append(Part("expr", g[0], getattr(g[0], "pos", None)))
            if g[1] is not None:
                out.append(Part("binds", g[1], g[1].pos, g[0]))
        else:
            out.append(Part("expr", g, g.pos))
    out += [Part("expr", h, getattr(h, "pos", None)) for h in mods.having]
    out += [Part("expr", e, getattr(e, "pos", None)) for e, _ in mods.order_by]
    if values is not None:
        out += _values(values)
    return out


def _values(v: Any) -> list[Part]:
    out = [Part("binds", var, var.pos or v.pos) for var in v.vars]
    out += [Part("term", x, v.pos) for row in v.rows for x in row
            if isinstance(x, (URIRef, Literal, BNode))]
    return out


def expression_nodes(e: Any, kind: type) -> list[Any]:
    """The nodes of class ``kind`` in an expression, left to right, not
    looking inside them (nor inside EXISTS): its variables, its EXISTS."""
    out: list[Any] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if not isinstance(x, kind):
            stack += operands(x)
            continue
        out.append(x)
    return out


def operands(x: Any) -> tuple:
    """An expression node's operands, last first (pushed on a stack, they
    come off left to right): an aggregate's argument too; none for a leaf
    or an EXISTS."""
    if isinstance(x, A.BinaryOp):
        return (x.right, x.left)
    if isinstance(x, A.UnaryOp):
        return (x.operand,)
    if isinstance(x, A.FunctionCall):
        return tuple(reversed(x.args))
    if isinstance(x, (A.In, A.NotIn)):
        return (*reversed(x.values), x.expr)
    if type(x).__name__ == "Aggregate" and x.arg is not None:
        return (x.arg,)
    return ()
