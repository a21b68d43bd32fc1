"""Parse tree -> DialectQuery: what the stream dialects build beyond the
SPARQL 1.1 part every road shares.

:class:`DialectBuilder` extends :class:`~..sparql_builder.SparqlBuilder`
(the builder of EP-SPARQL too) with aggregates, VALUES, solution
modifiers, sub-queries, the dialects' extra built-ins and their checks of
literals and relative IRIs; each dialect subclasses it for its own rules
(windows, stream clauses, REGISTER) and finishes the query
(:meth:`DialectBuilder.finish`).
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction

from lark import Token, v_args
from rdflib import Literal, URIRef

from .. import ast as A
from ..errors import QueryError
from ..sparql_builder import (BUILTIN_ARITY, Args, SelectClause, SparqlBuilder,
                              check_template, error_at, pos_of)
from ...rdf.literal_forms import literal_problem
from ...rdf.ntriples import SCHEME_RE
from . import ast as D

__all__ = ["DialectBuilder", "SelectClause", "error_at", "pos_of", "seconds", "check_window",
           "aggregates_in", "distinct_aggregates", "structure_key", "children", "free_vars", "check_aggregation"]

#: Functions the dialects add to SPARQL's built-ins (name -> (min, max) args).
EXTRA_BUILTINS = {"TIMESTAMP": (1, 3)}


@v_args(meta=True)
class DialectBuilder(SparqlBuilder):
    """Builds a dialect query's parts; ``finish`` makes the DialectQuery."""

    builtins = {**BUILTIN_ARITY, **EXTRA_BUILTINS}

    def __init__(self, base: str | None = None) -> None:
        super().__init__(base)
        #: IRIs left relative (no BASE to resolve them), each with where it
        #: first appears as data: they never match a stream's or the
        #: background's (a name, such as RSP-QL's <q1> or WINDOW <w1>, is
        #: not data: :meth:`name_at`)
        self.relative: dict[str, tuple[int, int]] = {}
        self._relative_uses: list[tuple[int, int, str]] = []

    def iri(self, meta, c):
        iri = super().iri(meta, c)
        tok = c[0]
        if tok.type == "IRIREF" and not SCHEME_RE.match(iri):
            self.relative.setdefault(str(iri), (tok.line, tok.column))
            self._relative_uses.append((tok.line, tok.column, str(iri)))
        return iri

    def name_at(self, iri: object, after: Token) -> None:
        """The first use of ``iri`` after the token ``after`` names
        something (a query, a window), it is not matched against data: a
        relative IRI there is not warned about."""
        key = (after.line, after.column)
        for i, (line, column, used) in enumerate(self._relative_uses):
            if used == str(iri) and (line, column) > key:
                del self._relative_uses[i]
                break
        else:
            return
        self.relative = {}
        for line, column, used in self._relative_uses:
            self.relative.setdefault(used, (line, column))

    def check_literal(self, literal: Literal, meta) -> None:
        """EP-SPARQL's check of a typed literal (rdf/literal_forms.py), at parse time."""
        problem = literal_problem(literal)
        if problem is not None:
            raise error_at(problem, meta)

    def undef(self, meta, c):
        return None

    def inline_data(self, meta, c):
        return c[1]

    def data_block_one(self, meta, c):
        var, values = c[0], c[1:]
        return D.Values((var,), tuple((v,) for v in values), pos_of(meta))

    def data_block_many(self, meta, c):
        vars_ = tuple(x for x in c if isinstance(x, A.Var))
        rows = tuple(x for x in c if isinstance(x, tuple))
        for r in rows:
            if len(r) != len(vars_):
                raise error_at(f"a VALUES row has {len(r)} values for {len(vars_)} variables", meta)
        return D.Values(vars_, rows, pos_of(meta))

    def data_row(self, meta, c):
        return tuple(c)

    def values_clause(self, meta, c):
        return c[1]

    def aggregate(self, name: str, args: Args, where) -> D.Aggregate:
        if args.star:
            if name != "COUNT":
                raise error_at(f"{name}(*) is not allowed, only COUNT(*)", where)
            return D.Aggregate("COUNT", None, args.distinct, " ", pos_of(where))
        if len(args.exprs) != 1:
            raise error_at(f"{name}() takes one argument, got {len(args.exprs)}", where)
        if args.separator is not None and name != "GROUP_CONCAT":
            raise error_at(f"{name}() does not take a SEPARATOR", where)
        sep = " " if args.separator is None else args.separator
        return D.Aggregate(name, args.exprs[0], args.distinct, sep, pos_of(where))

    # -- queries -------------------------------------------------------------
    def dataset_clause(self, meta, c):
        named = any(isinstance(x, Token) and x.type == "NAMED" for x in c)
        return ("named_graph" if named else "graph", c[-1])

    def group_condition(self, meta, c):
        items = [x for x in c if not isinstance(x, Token)]
        if len(items) == 2:
            return (items[0], items[1])
        if isinstance(items[0], A.Var):
            return items[0]
        return (items[0], None)

    def group_clause(self, meta, c):
        return ("group", tuple(x for x in c if not isinstance(x, Token)))

    def having_clause(self, meta, c):
        return ("having", tuple(x for x in c if not isinstance(x, Token)))

    def order_condition(self, meta, c):
        if isinstance(c[0], Token) and c[0].type in ("ASC", "DESC"):
            return (c[1], c[0].type == "DESC")
        return (c[0], False)

    def order_clause(self, meta, c):
        return ("order", tuple(x for x in c if not isinstance(x, Token)))

    def limit_clause(self, meta, c):
        return ("limit", int(str(c[1])))

    def offset_clause(self, meta, c):
        return ("offset", int(str(c[1])))

    def limit_offset(self, meta, c):
        """LIMIT and OFFSET together (one alone is inlined by the grammar)."""
        return dict(x for x in c if isinstance(x, tuple))

    def solution_modifier(self, meta, c):
        parts: dict = {}
        for x in c:
            if isinstance(x, tuple) and x and x[0] in ("group", "having", "order", "limit", "offset"):
                parts[x[0]] = x[1]
            elif isinstance(x, dict):
                parts.update(x)
        return D.Modifiers(group_by=parts.get("group", ()), having=parts.get("having", ()),
                           order_by=parts.get("order", ()), limit=parts.get("limit"),
                           offset=parts.get("offset", 0), grouped="group" in parts)

    def subselect(self, meta, c):
        sel, where, mods = c[0], c[1], c[2]
        values = c[3] if len(c) > 3 else None
        return D.SubQuery(sel.projection, where, sel.distinct, mods, values, sel.pos)

    # The query forms give their parts as a dict; the dialect's
    # query_parts() turns it into a DialectQuery.
    def select_query(self, meta, c):
        return self._query("SELECT", c[0], c[1:], pos=c[0].pos)

    def construct_query(self, meta, c):
        return self._query("CONSTRUCT", None, c[2:], template=c[1], pos=pos_of(c[0]))

    def ask_query(self, meta, c):
        return self._query("ASK", None, c[1:], pos=pos_of(c[0]))

    def _query(self, form, select, rest, template=(), pos=None):
        parts: dict = {"form": form, "template": template, "pos": pos, "clauses": [],
                       "modifiers": D.Modifiers(), "values": None}
        if select is not None:
            parts["projection"] = select.projection
            parts["distinct"] = select.distinct
            if select.r2s is not None:
                parts["r2s"] = select.r2s
        for x in rest:
            if isinstance(x, Token):
                continue
            if isinstance(x, A.Group):
                parts["where"] = x
            elif isinstance(x, D.Modifiers):
                parts["modifiers"] = x
            elif isinstance(x, D.Values):
                parts["values"] = x
            else:
                parts["clauses"].append(x)
        return parts

    def start(self, meta, c):
        parts = next(x for x in reversed(c) if isinstance(x, dict))
        extra = [x for x in c if isinstance(x, tuple) and x and x[0] == "register"]
        for e in extra:
            parts.update(e[1])
        return parts

    # -- the query -------------------------------------------------------------
    #: set by each dialect
    dialect = "sparql"
    default_r2s = "rstream"

    def clause(self, item, parts: dict) -> None:
        """A dataset-level clause of the dialect's own (overridden)."""
        raise QueryError(f"unexpected clause {item!r}")

    def policy(self, parts: dict, streams: list[D.StreamDecl]) -> D.Policy:
        """The dialect's report policy for this query (overridden)."""
        return D.Policy("close")

    def finish(self, parts: dict) -> D.DialectQuery:
        """The DialectQuery of a parsed query's parts."""
        streams: list[D.StreamDecl] = []
        graphs: list[URIRef] = []
        named: list[URIRef] = []
        for c in parts["clauses"]:
            if isinstance(c, D.StreamDecl):
                streams.append(c)
            elif isinstance(c, tuple) and c[0] == "graph":
                graphs.append(c[1])
            elif isinstance(c, tuple) and c[0] == "named_graph":
                named.append(c[1])
            else:
                self.clause(c, parts)
        projection = parts.get("projection", "*")
        mods = parts["modifiers"]
        check_aggregation(projection, mods)
        check_template(parts["template"])
        return D.DialectQuery(
            dialect=self.dialect, form=parts["form"], where=parts["where"],
            projection=projection, distinct=parts.get("distinct", False),
            template=tuple(parts["template"]), streams=tuple(streams), graphs=tuple(graphs),
            named_graphs=tuple(named), modifiers=mods, values=parts["values"],
            r2s=parts.get("r2s", self.default_r2s), policy=self.policy(parts, streams),
            name=parts.get("name"), output=parts.get("output"), prefixes=tuple(self.prefixes),
            base=self.base, pos=parts["pos"])


def seconds(value: str | int | Fraction, unit: str, units: dict[str, Fraction], where,
            what: str = "unit") -> Fraction:
    """``value`` in ``unit`` as exact seconds; QueryError for an unknown unit."""
    factor = units.get(unit) if unit in units else units.get(unit.lower())
    if factor is None:
        known = ", ".join(sorted({k for k in units}))
        raise error_at(f"unknown time {what} {unit!r} (known: {known})", where)
    return Fraction(value) * factor


def check_window(w: D.Window, where, step_at=None) -> D.Window:
    """Widths > 0, steps > 0, counts > 0 (docs/DIALECTS.md, "Errors");
    the error points at ``where`` (the step's at ``step_at`` if given)."""
    if w.width is not None and w.width <= 0:
        raise error_at(f"a window's width must be positive, got {float(w.width):g} s", where)
    if w.step is not None and w.step <= 0:
        raise error_at("a window's step must be positive, got 0" if w.step == 0 else
                       f"a window's step must be positive, got {float(w.step):g} s",
                       step_at if step_at is not None else where)
    if w.count is not None and w.count <= 0:
        raise error_at(f"a count window must hold at least one triple, got {w.count}", where)
    if w.kind == "past" and w.delay is not None and w.width is not None and w.delay >= w.width:
        raise error_at("a window FROM NOW - a TO NOW - d needs a > d", where)
    return w


def aggregates_in(e) -> list[D.Aggregate]:
    """The aggregates inside an expression (not inside EXISTS), left to
    right (iteratively: an expression may be thousands of operators deep)."""
    out: list[D.Aggregate] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, D.Aggregate):
            out.append(x)
        else:
            stack.extend(reversed(children(x)))
    return out


def distinct_aggregates(exprs) -> list[D.Aggregate]:
    """The aggregates of ``exprs``, each written once (``AVG(?v)`` in SELECT
    and in HAVING is one aggregate), in order of first appearance.  Equal
    aggregates are found by :func:`structure_key`, not by the dataclasses'
    ``==``/``hash``, which recurse through a deep argument."""
    out: list[D.Aggregate] = []
    seen: set[str] = set()
    for e in exprs:
        for a in aggregates_in(e):
            k = structure_key(a)
            if k not in seen:
                seen.add(k)
                out.append(a)
    return out


def structure_key(x) -> str:
    """A text equal for two trees exactly when they are ``==`` (the
    compared fields of the AST's dataclasses, tuples, lists and leaves),
    built iteratively: hashing or comparing a frozen dataclass thousands of
    levels deep raises RecursionError."""
    parts: list[str] = []
    stack: list = [x]
    while stack:
        y = stack.pop()
        if y is _OPEN or y is _CLOSE:
            parts.append("(" if y is _OPEN else ")")
        elif dataclasses.is_dataclass(y) and not isinstance(y, type):
            fs = [getattr(y, f.name) for f in dataclasses.fields(y) if f.compare]
            parts.append(type(y).__name__)
            stack.append(_CLOSE)
            stack.extend(reversed(fs))
            stack.append(_OPEN)
        elif isinstance(y, (tuple, list)):
            parts.append(type(y).__name__)
            stack.append(_CLOSE)
            stack.extend(reversed(y))
            stack.append(_OPEN)
        else:
            parts.append(repr(y))
    return " ".join(parts)


#: Brackets of :func:`structure_key` (a leaf's repr is quoted or named, so
#: it is never a bare bracket).
_OPEN, _CLOSE = object(), object()


def children(e) -> list:
    if isinstance(e, A.BinaryOp):
        return [e.left, e.right]
    if isinstance(e, A.UnaryOp):
        return [e.operand]
    if isinstance(e, A.FunctionCall):
        return list(e.args)
    if isinstance(e, (A.In, A.NotIn)):
        return [e.expr, *e.values]
    return []


def free_vars(e) -> list[A.Var]:
    """Variables of an expression outside its aggregates, left to right
    (iteratively: a FILTER of 2,000 alternatives is a deep tree)."""
    out: list[A.Var] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, A.Var):
            out.append(x)
        elif not isinstance(x, D.Aggregate):
            stack.extend(reversed(children(x)))
    return out


def check_aggregation(projection, mods: D.Modifiers) -> None:
    """In an aggregate query a projected variable must be grouped
    (SPARQL 1.1, 18.2.4.1): QueryError at the first one that is not."""
    items = () if projection == "*" else projection
    uses_agg = mods.grouped or bool(mods.having) or any(
        isinstance(i, tuple) and aggregates_in(i[0]) for i in items) or any(
        aggregates_in(e) for e, _ in mods.order_by)
    if not uses_agg:
        return
    if projection == "*":
        raise QueryError("SELECT * is not allowed with GROUP BY or aggregates")
    grouped = set()
    for g in mods.group_by:
        if isinstance(g, A.Var):
            grouped.add(g.name)
        elif isinstance(g, tuple) and g[1] is not None:
            grouped.add(g[1].name)
    bound_here: set[str] = set()
    for item in items:
        if isinstance(item, A.Var):
            if item.name not in grouped and item.name not in bound_here:
                raise error_at(f"?{item.name} is neither grouped nor aggregated: group by it "
                               f"(GROUP BY ?{item.name}) or use it inside an aggregate", item.pos)
        else:
            expr, var = item
            for v in free_vars(expr):
                if v.name not in grouped and v.name not in bound_here:
                    raise error_at(f"?{v.name} is neither grouped nor aggregated in the expression "
                                   f"for ?{var.name}", v.pos or var.pos)
            bound_here.add(var.name)
