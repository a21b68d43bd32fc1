"""The order in which a windowed query's group is joined: bound variables first.

rules/window_compile.py turns a group into a Prolog conjunction, which
Prolog runs left to right as nested loops.  Written in the query's order,
``{ {?a :p ?x} {?b :q ?y} }`` or ``?p a :C . ?o :observedProperty ?p``
(CityBench's C-SPARQL queries) enumerate a cross product, or a whole
window, before the patterns that bind the shared variables.  As Jena
ARQ's and rdflib's BGP evaluation, :func:`plan_join` reorders what is a
pure join:

- a group's triple patterns and its nested groups that are themselves
  pure joins are flattened into one list of *units*; every other pattern
  (OPTIONAL, MINUS, UNION, BIND, VALUES, a sub-query, CQELS's ``STREAM
  ?g``) is one unit, planned inside on its own;
- the units are taken greedily, the one with the fewest expected
  solutions given the variables bound so far first (:func:`weight`: a
  triple with a bound subject before one with a bound object before one
  with only its predicate; ``rdf:type`` with a bound class counts as
  unselective), ties in the query's order;
- units sharing no variable form independent *parts*: each is evaluated
  once and the parts combined (a cross product the query asks for is
  built from lists, not by evaluating part 2 again for every solution of
  part 1);
- a FILTER goes right after the units that bind its variables when that
  cannot change its value: each of its variables in scope where it is
  written is bound by every solution of its group (else it stays after
  its group, or its group stays one unit).  It keeps that scope: a
  variable of another group is unbound in it, as SPARQL says.

Join is commutative and associative on bags, so the answers are those of
the query's order; only their order in a result (unordered in SPARQL
without ORDER BY) may differ.  A group with an ``EXISTS`` is left in the
query's order (the bindings its pattern sees would depend on the order).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rdflib import BNode, URIRef
from rdflib.namespace import RDF

from ..algebra.nodes import Empty, Extend, Filter, Join, LeftJoin, Union_
from ..algebra.streams import (ExistsExpr, Minus, PerStream, Quad, SubSelect, Table,
                               in_scope)
from ..language import ast as A

__all__ = ["JoinPlan", "Part", "Placed", "binds_all", "bound_triple", "certainly_bound",
           "plan_join", "unit_variables", "weight"]


@dataclass(frozen=True)
class Placed:
    """A FILTER of the group at the place it is evaluated; ``scope``: the
    variables in scope where the query wrote it (the others are unbound
    in it, whatever the units around bind)."""

    expr: Any
    scope: frozenset[str]


@dataclass(frozen=True)
class Part:
    """Units and filters joined in ``steps``' order, sharing no variable
    with another part; ``variables``: those its solutions carry."""

    steps: tuple[Any, ...]
    variables: tuple[str, ...]


@dataclass(frozen=True)
class JoinPlan:
    """A pure join: ``before`` (filters on none of its variables), its
    independent ``parts``, then ``after`` (filters over several parts)."""

    before: tuple[Placed, ...]
    parts: tuple[Part, ...]
    after: tuple[Placed, ...]

    def steps(self) -> Iterator[Any]:
        """Every unit and filter, in the order evaluated."""
        yield from self.before
        for p in self.parts:
            yield from p.steps
        yield from self.after


def certainly_bound(p: Any) -> set[str]:
    """Variables every solution of ``p`` binds (conservative)."""
    if isinstance(p, Quad):
        return in_scope(p)
    if isinstance(p, PerStream):
        return certainly_bound(p.pattern) | ({p.var} if p.var else set())
    if isinstance(p, Join):
        return certainly_bound(p.left) | certainly_bound(p.right)
    if isinstance(p, (Union_,)):
        return certainly_bound(p.left) & certainly_bound(p.right)
    if isinstance(p, (LeftJoin, Minus)):
        return certainly_bound(p.left)
    if isinstance(p, Filter):
        return certainly_bound(p.pattern)
    if isinstance(p, Extend):
        return certainly_bound(p.pattern)
    if isinstance(p, Table):
        return {n for i, n in enumerate(p.vars) if all(r[i] is not None for r in p.rows)}
    return set()


def binds_all(p: Any) -> bool:
    """Does every solution of ``p`` bind every in-scope variable (so that
    evaluating it under outer bindings is the bottom-up join)?"""
    return certainly_bound(p) >= in_scope(p)


def bound_triple(q: Quad, known: set[str] | frozenset[str], var_windows: set[int]) -> bool:
    """Are all of a triple pattern's positions (and graphs) bound when it
    runs, so that it has one solution or none?  Not a path (a sequence
    joins its steps: a bag); not over a window in ``var_windows`` (CQELS's
    STREAM ?g: its graph is the pattern's too)."""
    t = q.triple
    if not isinstance(t.p, (URIRef, A.Var)):
        return False
    for x in (t.s, t.p, t.o):
        if isinstance(x, BNode) or isinstance(x, A.Var) and x.name not in known:
            return False
    for src in q.sources:
        if src.kind == "window" and src.ref in var_windows:
            return False
        if src.kind == "background" and isinstance(src.ref, A.Var) and src.ref.name not in known:
            return False
    return True


def unit_variables(p: Any) -> set[str]:
    """The variables a unit's goal shares with the clause: its in-scope
    ones, plus a triple's blank nodes (``_:b``, as window_compile names
    them)."""
    out = set(in_scope(p))
    if isinstance(p, Quad):
        out |= {"_:" + str(x) for x in (p.triple.s, p.triple.p, p.triple.o)
                if isinstance(x, BNode)}
    return out


def _has_exists(e: Any) -> bool:
    from ..language.dialects.builder import children
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ExistsExpr):
            return True
        stack.extend(children(x))
    return False


def _pattern_has_exists(p: Any) -> bool:
    """Does an EXISTS occur in ``p`` outside its sub-queries (which are
    evaluated on their own)?"""
    stack = [p]
    while stack:
        x = stack.pop()
        if isinstance(x, (Join, Union_, Minus)):
            stack += (x.left, x.right)
        elif isinstance(x, LeftJoin):
            stack += (x.left, x.right)
            if x.expr is not None and _has_exists(x.expr):
                return True
        elif isinstance(x, (Filter, Extend)):
            if _has_exists(x.expr):
                return True
            stack.append(x.pattern)
        elif isinstance(x, PerStream):
            stack.append(x.pattern)
    return False


def _flatten(p: Any) -> tuple[list[Any], list[tuple[Any, frozenset[str], frozenset[str] | None]]]:
    """The units of a pure join and its filters as (expr, scope, needs);
    ``needs``: the filter's variables in its scope, each bound by every
    solution of its group, or None for a filter of the whole group that
    must see all of it (one on a variable the group may leave unbound)."""
    from ..language.dialects.builder import free_vars
    units: list[Any] = []
    filters: list[tuple[Any, frozenset[str], frozenset[str] | None]] = []
    stack: list[tuple[Any, bool]] = [(p, True)]     # (pattern, one of the group's own filters?)
    while stack:
        x, top = stack.pop()
        if isinstance(x, Join):
            stack += ((x.right, False), (x.left, False))     # left first
        elif isinstance(x, Empty):
            pass                                # the identity of join
        elif isinstance(x, Filter):
            scope = frozenset(in_scope(x.pattern))
            needs = frozenset({v.name for v in free_vars(x.expr)} & scope)
            if needs <= certainly_bound(x.pattern):
                filters.append((x.expr, scope, needs))
                stack.append((x.pattern, top))
            elif top:
                # the group's own filter on a variable it may leave
                # unbound: after all of the group (plan_join)
                filters.append((x.expr, scope, None))
                stack.append((x.pattern, top))
            else:
                units.append(x)
        else:
            units.append(x)
    return units, filters


#: The weight of a triple pattern by which of subject, predicate, object
#: are bound (a constant or a variable bound before): about the solutions
#: it gives for one binding of the others, without statistics (Jena ARQ's
#: ReorderFixed has the same shape).
_WEIGHTS = {(True, True, True): 1, (True, True, False): 2, (True, False, True): 2,
            (False, True, True): 4, (True, False, False): 10, (False, False, True): 20,
            (False, True, False): 100, (False, False, False): 1000}


def weight(p: Any, bound: set[str] | frozenset[str]) -> float:
    """The expected solutions of unit ``p`` per binding of ``bound``
    (lower first; see :data:`_WEIGHTS`)."""
    if isinstance(p, Quad):
        t = p.triple
        path = not isinstance(t.p, (URIRef, A.Var))

        def b(x: Any) -> bool:
            if isinstance(x, A.Var):
                return x.name in bound
            return not isinstance(x, BNode)
        s, pp, o = b(t.s), (not path) and b(t.p), b(t.o)
        w = _WEIGHTS[(s, pp, o)]
        if isinstance(t.p, URIRef) and t.p == RDF.type and not s:
            # a class's instances are many; with RDFS entailment the
            # window's every triple may give one (its property's domain)
            w = 50 if o else 200
        elif isinstance(t.p, URIRef) and t.p == RDF.type and not o:
            w = 3                               # after the subject's other triples
        return w * 2 if path else w
    if isinstance(p, Table):
        return max(len(p.rows), 1)
    if isinstance(p, SubSelect):
        return 0.5          # evaluated whole wherever it is: once, first
    if isinstance(p, (LeftJoin, Minus)):
        return weight(p.left, bound)
    if isinstance(p, (Filter, Extend, PerStream)):
        return weight(p.pattern, bound)
    if isinstance(p, Union_):
        return weight(p.left, bound) + weight(p.right, bound)
    if isinstance(p, Join):
        units, _ = _flatten(p)
        return min((weight(u, bound) for u in units), default=1)
    return 1000


def plan_join(p: Any, bound: frozenset[str] = frozenset()) -> JoinPlan | None:
    """The evaluation plan of ``p`` when it is a join or a filtered group
    (see the module docstring), else None; ``bound``: variables bound
    by every solution of what is evaluated before it (outer bindings).
    None too when the group has an EXISTS (kept in the query's order)."""
    if not isinstance(p, (Join, Filter)) or _pattern_has_exists(p):
        return None
    units, filters = _flatten(p)
    # greedy: the lightest unit given what is bound, ties in query order;
    # a unit's weight changes only when one of its variables gets bound
    uvars = [unit_variables(u) for u in units]
    users: dict[str, list[int]] = {}
    for i, vs in enumerate(uvars):
        for v in vs:
            users.setdefault(v, []).append(i)
    order: list[int] = []
    known = set(bound)
    weights = {i: (weight(u, known), i) for i, u in enumerate(units)}
    while weights:
        best = min(weights.values())[1]
        del weights[best]
        order.append(best)
        new = certainly_bound(units[best]) - known
        known |= new
        for i in {i for v in new for i in users.get(v, ()) if i in weights}:
            weights[i] = (weight(units[i], known), i)
    # independent parts: units connected by a variable not bound outside
    parent = list(range(len(units)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    owner: dict[str, int] = {}
    uvars = [vs - bound for vs in uvars]
    for i, vs in enumerate(uvars):
        for v in vs:
            if v in owner:
                parent[find(i)] = find(owner[v])
            else:
                owner[v] = i
    for i, vs in enumerate(uvars):
        if not vs and order:
            # a check on constants or outer bindings: inline in the first part
            parent[find(i)] = find(order[0])
    roots: list[int] = []
    for i in order:
        r = find(i)
        if r not in roots:
            roots.append(r)
    part_of = {r: k for k, r in enumerate(roots)}
    # where each filter goes: before, in one part, or after
    before: list[Placed] = []
    after: list[Placed] = []
    pending: list[list[tuple[frozenset[str], Placed]]] = [[] for _ in roots]
    for expr, scope, needs in filters:
        f = Placed(expr, scope)
        if needs is None:
            after.append(f)
            continue
        free = needs - bound
        ks = {part_of[find(owner[v])] for v in free if v in owner}
        if not free:
            before.append(f)
        elif len(ks) == 1 and all(v in owner for v in free):
            pending[ks.pop()].append((free, f))
        else:
            after.append(f)
    parts: list[Part] = []
    for k, r in enumerate(roots):
        steps: list[Any] = []
        have: set[str] = set()
        mine = [i for i in order if find(i) == r]
        waiting = pending[k]
        for i in mine:
            steps.append(units[i])
            have |= certainly_bound(units[i])
            ready = [w for w in waiting if w[0] <= have]
            steps.extend(f for _, f in ready)
            waiting = [w for w in waiting if not w[0] <= have]
        steps.extend(f for _, f in waiting)     # (cannot happen: needs are bound)
        variables = sorted(set().union(*(in_scope(units[i]) for i in mine)))
        parts.append(Part(tuple(steps), tuple(variables)))
    if not parts:
        parts.append(Part((), ()))
    return JoinPlan(tuple(before), tuple(parts), tuple(after))
