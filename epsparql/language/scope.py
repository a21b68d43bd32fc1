"""SPARQL 1.1's static scope rules, checked on a parsed query.

A query that breaks them is an error in SPARQL 1.1 (section 18.2.1 and the
grammar notes of section 19.8), and on a stream it would be silently
wrong: rebinding a bound variable compiles to an equality test that drops
the rows where the values differ.  So :func:`check_scopes` raises
:class:`~epsparql.language.errors.QueryError` with the line and column of
the offending variable for:

* ``BIND (expr AS ?v)`` where ``?v`` is already in scope: bound by an
  element before the BIND in the same group (a triple pattern, a nested
  group, OPTIONAL, UNION or a temporal operator, GRAPH, an earlier BIND,
  a sub-select's projection).  FILTER and MINUS bind nothing;
* ``SELECT (expr AS ?v)`` where ``?v`` is in scope in the WHERE clause
  (assigning it twice in the SELECT clause, or projecting it and assigning
  it, is already a parse error);
* a blank node label ``_:b`` used in the patterns of two different groups
  (SPARQL scopes a label to one basic graph pattern; epsparql allows one
  group, so a FILTER between two triple blocks does not split them).
  CONSTRUCT templates have their own labels.

The rules are the same for the stream dialects' queries, whose window
patterns (``STREAM ?g [..] {…}``, ``WINDOW ?w {…}``, windowed groups),
VALUES and sub-queries put variables in scope as GRAPH, VALUES and a
sub-select do.

:func:`unbound_variables` lists, for warnings, the variables that no
pattern of the query binds at all (a typo, most often).

Which variables a pattern puts in scope follows the table of section
18.2.1, with SEQ, EQUALS, OPTIONALSEQ and EQUALSOPTIONAL like UNION (both
sides).  The walk is iterative (:mod:`epsparql.trampoline`): a chain of
thousands of groups is checked without Python's recursion limit.
"""
from __future__ import annotations

from typing import Any

from rdflib import BNode

from ..trampoline import Walk, run
from . import ast as A
from .errors import QueryError
from .query_parts import expression_nodes, query_parts

__all__ = ["check_scopes", "unbound_variables"]


def check_scopes(query: Any) -> None:
    """Raise QueryError if ``query`` (an ``ast.Query`` or a ``DialectQuery``)
    breaks a static scope rule (see module doc)."""
    run(_query(query, _Labels()))


class _Labels:
    """Where each blank node label of the patterns was first used."""

    def __init__(self) -> None:
        self.first: dict[str, tuple[int, A.Pos | None]] = {}

    def use(self, label: str, group: int, pos: A.Pos | None) -> None:
        seen = self.first.setdefault(label, (group, pos))
        if seen[0] != group:
            where = f" (first used at {seen[1]})" if seen[1] is not None else ""
            raise _error(f"blank node _:{label} is used in two different groups{where}; "
                         "SPARQL scopes a blank node label to one basic graph pattern: "
                         f"to join the groups on it, write a variable (?{label}) instead",
                         pos)


def _error(message: str, pos: A.Pos | None) -> QueryError:
    if pos is None:
        return QueryError(message)
    return QueryError(message, pos.line, pos.column)


def _query(q: Any, labels: _Labels) -> Walk[None]:
    """Check a query form (EP-SPARQL's or a stream dialect's): its WHERE
    clause, then a SELECT's assignments."""
    scope: set[str] = set()
    yield _group(q.where, scope, labels)
    select = isinstance(q, A.SelectQuery) or getattr(q, "form", None) == "SELECT"
    if select and q.projection != "*":
        _check_projection(q.projection, scope)
        yield _projection_exprs(q.projection, labels)


def _check_projection(projection: A.Projection, scope: set[str]) -> None:
    """``(expr AS ?v)`` must not assign a variable the WHERE clause binds."""
    for item in projection:
        if isinstance(item, tuple) and item[1].name in scope:
            var = item[1]
            raise _error(f"(... AS ?{var.name}) cannot assign ?{var.name}: it is already "
                         "bound by the WHERE clause, and SPARQL 1.1 does not allow "
                         "rebinding an in-scope variable; use a new variable name",
                         var.pos)


def _projection_exprs(projection: A.Projection, labels: _Labels) -> Walk[None]:
    for item in projection:
        if isinstance(item, tuple):
            yield _expr(item[0], labels)


def _group(g: A.Group, out: set[str], labels: _Labels) -> Walk[None]:
    """Check a group and add the variables it puts in scope to ``out``."""
    seen: set[str] = set()
    gid = id(g)
    for e in g.elements:
        if isinstance(e, A.Bind):
            if e.var.name in seen:
                raise _error(f"BIND cannot assign ?{e.var.name}: it is already bound "
                             "earlier in this group, and SPARQL 1.1 does not allow "
                             "rebinding an in-scope variable; use a new variable name",
                             e.var.pos or e.pos)
            yield _expr(e.expr, labels)
            seen.add(e.var.name)
        elif isinstance(e, A.Filter):
            yield _expr(e.expr, labels)
        elif isinstance(e, A.BGP):
            _bgp(e, seen, gid, labels)
        elif isinstance(e, A.Minus):
            yield _group(e.pattern, set(), labels)        # binds nothing outside
        else:
            yield _pattern(e, seen, labels)
    out |= seen


def _pattern(node: Any, out: set[str], labels: _Labels) -> Walk[None]:
    """A group element other than BIND, FILTER, MINUS and a triple block."""
    from .dialects import ast as D           # (the dialects' package imports the parser)
    if isinstance(node, A.Group):
        yield _group(node, out, labels)
    elif isinstance(node, (A.Union, A.TemporalJoin)):
        yield _pattern(node.left, out, labels)
        yield _pattern(node.right, out, labels)
    elif isinstance(node, A.Optional):
        yield _group(node.pattern, out, labels)
    elif isinstance(node, A.Graph):
        if isinstance(node.name, A.Var):
            out.add(node.name.name)
        yield _group(node.pattern, out, labels)
    elif isinstance(node, (D.StreamPattern, D.WindowPattern)):     # STREAM ?g / WINDOW ?w
        name = node.stream if isinstance(node, D.StreamPattern) else node.name
        if isinstance(name, A.Var):
            out.add(name.name)
        yield _group(node.pattern, out, labels)
    elif isinstance(node, D.WindowedGroup):
        yield _group(node.pattern, out, labels)
    elif isinstance(node, D.Values):
        out.update(v.name for v in node.vars)
    elif isinstance(node, (A.SubSelect, D.SubQuery)):
        inner: set[str] = set()
        yield _group(node.where, inner, labels)
        if node.projection == "*":
            out |= inner
        else:
            _check_projection(node.projection, inner)
            yield _projection_exprs(node.projection, labels)
            out.update(v.name if isinstance(v, A.Var) else v[1].name
                       for v in node.projection)
    elif isinstance(node, A.BGP):
        _bgp(node, out, id(node), labels)


def _bgp(bgp: A.BGP, out: set[str], group: int, labels: _Labels) -> None:
    for t in bgp.triples:
        for x in (t.s, t.p, t.o):
            if isinstance(x, A.Var):
                out.add(x.name)
            elif isinstance(x, BNode):
                labels.use(str(x), group, t.pos)


def _expr(e: Any, labels: _Labels) -> Walk[None]:
    """Check the groups of EXISTS / NOT EXISTS inside an expression."""
    for x in expression_nodes(e, A.Exists):
        yield _group(x.pattern, set(), labels)


def unbound_variables(query: Any) -> list[tuple[str, A.Pos | None]]:
    """Warnings (message, position) for variables no pattern of the query
    can bind, which is most often a typo (``FILTER(?prce > 5)``): in an
    expression such a variable is an error for every solution (so a FILTER
    is never true unless it is inside BOUND, COALESCE or IF), a projected
    one is always empty, a template triple with one is never produced.
    ``query`` is an EP-SPARQL query or a stream dialect's: what binds a
    variable is a triple pattern, GRAPH ?g, BIND, VALUES, a sub-query's
    projection, a window pattern's ``STREAM ?g`` / ``WINDOW ?w``, an
    ``AS ?v`` of SELECT or GROUP BY (:mod:`epsparql.language.query_parts`)."""
    bound: set[str] = set()
    uses: list[tuple[A.Var, str]] = []
    for kind, node, _, _ in query_parts(query):
        if kind == "triple":
            bound.update(v.name for v in (node.s, node.p, node.o) if isinstance(v, A.Var))
        elif kind == "binds":
            bound.add(node.name)
        elif kind == "expr":
            uses += [(v, "expression") for v in expression_nodes(node, A.Var)]
        elif kind == "projected":
            uses.append((node, "projection"))
        elif kind == "template":
            uses += [(v, "template") for v in (node.s, node.p, node.o) if isinstance(v, A.Var)]
    out: list[tuple[str, A.Pos | None]] = []
    said: set[str] = set()
    for var, where in uses:
        if var.name in bound or var.name in said:
            continue
        said.add(var.name)
        what = {"expression": "an expression using it has no value (an error, so a FILTER "
                              "is false) unless it is inside BOUND, COALESCE or IF",
                "projection": "its column is always empty",
                "template": "a template triple with it is never constructed"}[where]
        out.append((f"?{var.name} is not bound by any pattern of the query (a typo?): "
                    f"{what}", var.pos))
    return out
