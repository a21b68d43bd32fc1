"""Parse tree -> AST for the SPARQL 1.1 part shared by the stream dialects.

One Lark transformer, :class:`SparqlBuilder`, builds the nodes of
:mod:`epsparql.language.ast` and :mod:`.ast` from the rules of
``sparql11.lark``; each dialect subclasses it for its own rules (windows,
stream clauses, REGISTER) and finishes the query (:meth:`query_parts`).
Terms follow the EP-SPARQL front end: rdflib terms, ``Var``, positions
as ``Pos``; a sign in front of a number literal is folded into it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from urllib.parse import urljoin

from lark import Token, v_args
from lark.visitors import Transformer_NonRecursive
from lark.tree import Meta
from rdflib import BNode, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, XSD

from .. import ast as A
from ..errors import QueryError
from ..parser import BUILTIN_ARITY
from ...rdf.literal_forms import literal_problem
from . import ast as D

PREDECLARED = {"xsd": str(XSD), "rdf": str(RDF), "rdfs": str(RDFS), "owl": str(OWL)}
AGGREGATES = {"COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT"}
#: Functions the dialects add to SPARQL's built-ins (name -> (min, max) args).
EXTRA_BUILTINS = {"TIMESTAMP": (1, 3)}
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ABSOLUTE_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def pos_of(x) -> A.Pos | None:
    """The position of a token, a tree's meta or a node."""
    if isinstance(x, Token):
        return A.Pos(x.line or 1, x.column or 1)
    if isinstance(x, Meta):
        return None if x.empty else A.Pos(x.line, x.column)
    return getattr(x, "pos", None)


def error_at(message: str, where) -> QueryError:
    p = where if isinstance(where, A.Pos) else pos_of(where)
    return QueryError(message, p.line if p else None, p.column if p else None)


@dataclass(frozen=True)
class _Args:
    exprs: tuple
    distinct: bool = False
    star: bool = False
    separator: str | None = None


@dataclass(frozen=True)
class SelectClause:
    projection: object
    distinct: bool
    pos: A.Pos | None
    r2s: str | None = None


@v_args(meta=True)
class SparqlBuilder(Transformer_NonRecursive):
    """Builds AST nodes; ``query_parts`` collects what a query form holds."""

    def __init__(self, base: str | None = None) -> None:
        super().__init__()
        self.base = base
        self.prefixes: list[tuple[str, str]] = []
        self._fresh = 0
        #: IRIs left relative (no BASE to resolve them), each with where it
        #: first appears as data: they never match a stream's or the
        #: background's (a name, such as RSP-QL's <q1> or WINDOW <w1>, is
        #: not data: :meth:`name_at`)
        self.relative: dict[str, tuple[int, int]] = {}
        self._relative_uses: list[tuple[int, int, str]] = []

    # -- prologue and IRIs -------------------------------------------------
    def _resolve(self, iri: str) -> str:
        if self.base is None or _ABSOLUTE_IRI.match(iri):
            return iri
        return urljoin(self.base, iri)

    def base_decl(self, meta, c):
        self.base = self._resolve(str(c[1])[1:-1])

    def prefix_decl(self, meta, c):
        name = str(c[1])[:-1]
        iri = self._resolve(str(c[2])[1:-1])
        self.prefixes = [(p, i) for p, i in self.prefixes if p != name] + [(name, iri)]

    def prologue(self, meta, c):
        return None

    def namespace(self, prefix: str, token) -> str:
        for name, iri in reversed(self.prefixes):
            if name == prefix:
                return iri
        if prefix in PREDECLARED:
            return PREDECLARED[prefix]
        raise error_at(f"unknown prefix '{prefix}:' (declare it with PREFIX {prefix}: <...>)", token)

    def iri(self, meta, c):
        tok = c[0]
        if tok.type == "IRIREF":
            iri = self._resolve(str(tok)[1:-1])
            if not _ABSOLUTE_IRI.match(iri):
                self.relative.setdefault(iri, (tok.line, tok.column))
                self._relative_uses.append((tok.line, tok.column, iri))
            return URIRef(iri)
        prefix, _, local = str(tok).partition(":")
        local = re.sub(r"\\(.)", r"\1", local)
        return URIRef(self.namespace(prefix, tok) + local)

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

    def rdf_type(self, meta, c):
        return RDF.type

    # -- literals, nodes -----------------------------------------------------
    def var(self, meta, c):
        return A.Var(str(c[0])[1:], pos_of(c[0]))

    def string(self, meta, c):
        tok = c[0]
        q = 3 if tok.type.startswith("STRING_LITERAL_LONG") else 1
        body = str(tok)[q:-q]
        out, i = [], 0
        while i < len(body):
            ch = body[i]
            if ch == "\\" and i + 1 < len(body):
                nxt = body[i + 1]
                if nxt in _ECHAR:
                    out.append(_ECHAR[nxt])
                    i += 2
                    continue
                if nxt in "uU":
                    n = 4 if nxt == "u" else 8
                    hexd = body[i + 2:i + 2 + n]
                    if len(hexd) == n and all(h in "0123456789abcdefABCDEF" for h in hexd):
                        out.append(chr(int(hexd, 16)))
                        i += 2 + n
                        continue
                raise error_at(f"invalid escape sequence '\\{nxt}' in a string", tok)
            out.append(ch)
            i += 1
        return "".join(out)

    def rdf_literal(self, meta, c):
        if len(c) == 1:
            return Literal(c[0])
        if isinstance(c[1], Token):
            return Literal(c[0], lang=str(c[1])[1:])
        lit = Literal(c[0], datatype=c[1])
        problem = literal_problem(lit)     # EP-SPARQL's check (algebra/constants.py)
        if problem is not None:
            raise error_at(problem, meta)
        return lit

    def integer(self, meta, c):
        return Literal(str(c[0]), datatype=XSD.integer)

    def decimal(self, meta, c):
        return Literal(str(c[0]), datatype=XSD.decimal)

    def double(self, meta, c):
        return Literal(str(c[0]), datatype=XSD.double)

    def boolean(self, meta, c):
        return Literal(str(c[0]).lower(), datatype=XSD.boolean)

    def labelled_bnode(self, meta, c):
        return BNode(str(c[0])[2:])

    def anon_bnode(self, meta, c):
        return self._new_bnode()

    def _new_bnode(self) -> BNode:
        self._fresh += 1
        return BNode(f"anon{self._fresh}")

    def undef(self, meta, c):
        return None

    # -- triples -------------------------------------------------------------
    def blank_node_property_list(self, meta, c):
        node = self._new_bnode()
        return ("bnl", node, self._expand(node, c[0], pos_of(meta)))

    def verb_objects(self, meta, c):
        return (c[0], c[1], pos_of(meta))

    def object_list(self, meta, c):
        return tuple(c)

    def property_list(self, meta, c):
        return tuple(c)

    def _expand(self, subject, plist, pos):
        out = []
        for verb, objects, vpos in plist:
            for obj in objects:
                nested = ()
                if isinstance(obj, tuple) and obj and obj[0] == "bnl":
                    _, obj, nested = obj
                out.append(A.TriplePattern(subject, verb, obj, vpos or pos))
                out.extend(nested)
        return tuple(out)

    def triples_same_subject(self, meta, c):
        subject = c[0]
        triples = ()
        if isinstance(subject, tuple) and subject and subject[0] == "bnl":
            _, subject, triples = subject
        if len(c) > 1:
            triples = self._expand(subject, c[1], pos_of(meta)) + triples
        return triples

    def triples_block(self, meta, c):
        return A.BGP(tuple(t for group in c for t in group), pos_of(meta))

    # -- paths ---------------------------------------------------------------
    def path_alternative(self, meta, c):
        return A.PathAlt(tuple(c), pos_of(meta))

    def path_sequence(self, meta, c):
        return A.PathSeq(tuple(c), pos_of(meta))

    def path_inverse(self, meta, c):
        return A.PathInv(c[0], pos_of(meta))

    def path_modified(self, meta, c):
        return A.PathMod(c[0], str(c[1]), pos_of(meta))

    # -- patterns ------------------------------------------------------------
    def group_graph_pattern(self, meta, c):
        body = c[0] if c else ()
        if isinstance(body, D.SubQuery):
            return A.Group((body,), pos_of(meta))
        return A.Group(tuple(body), pos_of(meta))

    def group_body(self, meta, c):
        return tuple(x for x in c if not isinstance(x, Token))

    def group_or_union(self, meta, c):
        groups = [x for x in c if not isinstance(x, Token)]
        out = groups[0]
        for g in groups[1:]:
            out = A.Union(out, g, g.pos)
        return out

    def optional_pattern(self, meta, c):
        return A.Optional(c[1], pos_of(c[0]))

    def minus_pattern(self, meta, c):
        return A.Minus(c[1], pos_of(c[0]))

    def graph_pattern(self, meta, c):
        return A.Graph(c[1], c[2], pos_of(c[0]))

    def filter(self, meta, c):
        return A.Filter(c[1], pos_of(c[0]))

    def bind(self, meta, c):
        return A.Bind(c[1], c[3], pos_of(c[0]))

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

    # -- expressions ---------------------------------------------------------
    def binop(self, meta, c):
        left, op, right = c
        return A.BinaryOp(str(op), left, right, pos_of(op))

    def unop(self, meta, c):
        op, operand = str(c[0]), c[1]
        if op in "+-" and isinstance(operand, Literal) and operand.datatype in (
                XSD.integer, XSD.decimal, XSD.double) and not str(operand).startswith(("+", "-")):
            return Literal(("-" if op == "-" else "") + str(operand), datatype=operand.datatype)
        return A.UnaryOp(op, operand, pos_of(c[0]))

    def in_expr(self, meta, c):
        return A.In(c[0], c[2], pos_of(c[1]))

    def not_in_expr(self, meta, c):
        return A.NotIn(c[0], c[3], pos_of(c[1]))

    def expr_list(self, meta, c):
        return tuple(c)

    def arg_list(self, meta, c):
        distinct = any(isinstance(x, Token) and x.type == "DISTINCT" for x in c)
        sep = None
        items = [x for x in c if not isinstance(x, Token)]
        if any(isinstance(x, Token) and x.type == "SEPARATOR" for x in c):
            sep = items.pop()
        return _Args(tuple(items), distinct, False, sep)

    def star_args(self, meta, c):
        return _Args((), distinct=any(isinstance(x, Token) and x.type == "DISTINCT" for x in c),
                     star=True)

    def builtin_call(self, meta, c):
        tok, args = c
        name = str(tok).upper()
        name = {"ISURI": "ISIRI", "URI": "IRI"}.get(name, name)
        if name in AGGREGATES:
            return self.aggregate(name, args, tok)
        arity = BUILTIN_ARITY.get(name) or EXTRA_BUILTINS.get(name)
        if arity is None:
            raise error_at(f"unknown function {str(tok)!r} (extension functions are "
                           f"written as IRIs or prefixed names, e.g. ex:f(?x))", tok)
        if args.star or args.distinct or args.separator is not None:
            raise error_at(f"{tok}() does not take '*', DISTINCT or SEPARATOR (only aggregates do)", tok)
        low, high = arity
        if len(args.exprs) < low or (high is not None and len(args.exprs) > high):
            raise error_at(f"{tok}() takes {low if low == high else f'{low} to {high}'} "
                           f"arguments, got {len(args.exprs)}", tok)
        if name == "BOUND" and not isinstance(args.exprs[0], A.Var):
            raise error_at("BOUND needs a variable, e.g. BOUND(?x)", tok)
        return A.FunctionCall(name, args.exprs, pos_of(tok))

    def aggregate(self, name: str, args: _Args, where) -> D.Aggregate:
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

    def function_call(self, meta, c):
        name, args = c
        mapped = self.function_alias(name)
        if mapped in AGGREGATES:
            return self.aggregate(mapped, args, meta)
        if mapped is not None:
            return A.FunctionCall(mapped, args.exprs, pos_of(meta))
        if args.star or args.distinct or args.separator is not None:
            raise error_at(f"extension function <{name}> does not take '*', DISTINCT or SEPARATOR", meta)
        return A.FunctionCall(name, args.exprs, pos_of(meta))

    def function_alias(self, iri: URIRef) -> str | None:
        """A dialect's own name for a built-in or an aggregate (overridden)."""
        return None

    def exists(self, meta, c):
        return A.Exists(c[1], False, pos_of(meta))

    def not_exists(self, meta, c):
        return A.Exists(c[2], True, pos_of(meta))

    # -- queries -------------------------------------------------------------
    def select_modifier(self, meta, c):
        return str(c[0]).upper()

    def projection_all(self, meta, c):
        return "*"

    def projection_list(self, meta, c):
        seen: set[str] = set()
        for item in c:
            var = item[1] if isinstance(item, tuple) else item
            if var.name in seen:
                raise error_at(f"variable ?{var.name} is projected twice", var.pos)
            seen.add(var.name)
        return tuple(c)

    def projection_expr(self, meta, c):
        parts = [x for x in c if not isinstance(x, Token)]
        return (parts[0], parts[1])

    def select_clause(self, meta, c):
        modifier = next((x for x in c[1:-1] if isinstance(x, str) and x in ("DISTINCT", "REDUCED")),
                        None)
        return SelectClause(c[-1], modifier == "DISTINCT", pos_of(c[0]))

    def graph_clause(self, meta, c):
        named = any(isinstance(x, Token) and x.type == "NAMED" for x in c)
        return ("named_graph" if named else "graph", c[-1])

    def where_clause(self, meta, c):
        return c[-1]

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

    def construct_template(self, meta, c):
        return c[0].triples if c else ()

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
        for t in parts["template"]:
            if not isinstance(t.p, (URIRef, A.Var)):
                raise error_at("property paths are not allowed in a CONSTRUCT template", t.pos)
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
    """The aggregates inside an expression (not inside EXISTS)."""
    if isinstance(e, D.Aggregate):
        return [e]
    out: list[D.Aggregate] = []
    for c in children(e):
        out.extend(aggregates_in(c))
    return out


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
