"""Compile the EP-SPARQL algebra into rules of the Prolog core.

One query becomes one core rule ``q<N>(Vars…) <- Body``; its detections
are the query's solutions (bindings of every in-scope variable plus the
interval).  CONSTRUCT queries get one more rule per template triple that
feeds the constructed triple back as a ``triple/3`` event (Q-closure).

Operator mapping (section 4.2 -> docs/CORE.md):

    BGP / Join    -> and        Union        -> or
    SeqJoin       -> seq        EqJoin       -> equals
    SeqRightJoin  -> optseq     EqLeftJoin   -> eqopt
    LeftJoin      -> leftjoin   Filter       -> where (span/3 when it reads time)
    Window        -> within (pushed into every binary step by the core)

All data (IRIs, literals) is written through epsparql.core.terms, quoted
and escaped: a query's constants are never Prolog source.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from rdflib import RDF, XSD, BNode, Literal, URIRef

from ..algebra.nodes import (BGP, Background, Empty, EqJoin, EqLeftJoin, Extend, Filter,
                             Join, LeftJoin, Pattern, SeqJoin, SeqRightJoin,
                             Triple, Union_, Window)
from ..algebra.passes import all_vars, conjuncts, is_temporal
from ..core.terms import to_prolog
from ..language.errors import QueryError

RDF_TYPE = RDF.type
BINARY_OPS = {"||": "or", "&&": "and", "=": "eq", "!=": "ne", "<": "lt", ">": "gt",
              "<=": "le", ">=": "ge", "+": "add", "-": "sub", "*": "mul", "/": "div"}
UNARY_OPS = {"!": "not", "-": "neg", "+": "pos"}
COMPARISONS = {"<", ">", "<=", ">=", "=", "!="}
FAST_ARITH = {"+", "-", "*"}
PROLOG_CMP = {"<": "<", ">": ">", "<=": "=<", ">=": ">=", "=": "=:=", "!=": "=\\="}


@dataclass
class CompiledQuery:
    """The rule text of one query and how to read its detections back."""

    head: str                    # functor of the answer events
    variables: list[str]         # SPARQL variable per head argument
    rules: str                   # rule-language text for the core
    extra: list[str] = field(default_factory=list)  # names of computed select vars


_INTEGER_TYPES = {XSD.integer, XSD.int, XSD.long, XSD.short, XSD.byte,
                  XSD.nonNegativeInteger, XSD.positiveInteger, XSD.negativeInteger,
                  XSD.nonPositiveInteger, XSD.unsignedLong, XSD.unsignedInt,
                  XSD.unsignedShort, XSD.unsignedByte}
_REAL_TYPES = {XSD.decimal, XSD.double, XSD.float}


def _numeric_text(lit: Literal) -> str | None:
    """A numeric literal as Prolog number text (None if not numeric/valid)."""
    try:
        if lit.datatype in _INTEGER_TYPES:
            return str(int(str(lit)))
        if lit.datatype in _REAL_TYPES:
            v = float(str(lit))
            return repr(v) if v == v and v not in (float("inf"), float("-inf")) else None
    except ValueError:
        return None
    return None


class RuleWriter:
    """Writes one query's patterns and expressions as rule-language text."""

    def __init__(self, head: str, encode: Callable[[Any], Any],
                 is_function: Callable[[str], bool], module: str = "",
                 reasoning: str = "none"):
        self.head = head
        self.module = to_prolog(module) if module else "_"
        self.reasoning = reasoning
        self.encode = encode
        self.is_function = is_function
        self.vars: dict[str, str] = {}
        self._n = 0

    # -- terms ---------------------------------------------------------------
    def var(self, name: str) -> str:
        if name not in self.vars:
            self.vars[name] = f"V{len(self.vars)}"
        return self.vars[name]

    def fresh(self) -> str:
        self._n += 1
        return f"F{self._n}"

    def term(self, t: Any) -> str:
        if type(t).__name__ == "Var":
            return self.var(t.name)
        if isinstance(t, BNode):
            # blank nodes in patterns are non-distinguished variables
            return self.var("_:" + str(t))
        if isinstance(t, (URIRef, Literal)):
            return to_prolog(self.encode(t))
        raise QueryError(f"unsupported term in a pattern: {t!r}")

    # -- patterns ------------------------------------------------------------
    def pattern(self, p: Pattern) -> str:
        if isinstance(p, BGP):
            if not p.triples:
                raise QueryError("an empty group pattern {} cannot be detected on a stream")
            parts = [self.triple(t) for t in p.triples]
            out = parts[0]
            for q in parts[1:]:
                out = f"({out} and {q})"
            return out
        if isinstance(p, Join):
            bg = self._background_goal(p.right) or self._background_goal(p.left)
            if bg is not None:
                stream = p.left if self._background_goal(p.right) else p.right
                if self._background_goal(stream) is not None:
                    raise QueryError("a query needs at least one pattern over the stream "
                                     "(GRAPH patterns only match background knowledge)")
                return f"({self.pattern(stream)} where ({bg}))"
            return f"({self.pattern(p.left)} and {self.pattern(p.right)})"
        if isinstance(p, LeftJoin) and self._background_goal(p.right) is not None:
            bg = self._background_goal(p.right)
            if p.expr is not None:
                bg = f"{bg}, {self.condition(p.expr, None)}"
            return f"({self.pattern(p.left)} where (({bg}) *-> true ; true))"
        if isinstance(p, Background) or self._background_goal(p) is not None:
            raise QueryError("a GRAPH pattern (background knowledge) can only be joined "
                             "with stream patterns or be OPTIONAL to them")
        if isinstance(p, Union_):
            return f"({self.pattern(p.left)} or {self.pattern(p.right)})"
        if isinstance(p, SeqJoin):
            return f"({self.pattern(p.left)} seq {self.pattern(p.right)})"
        if isinstance(p, EqJoin):
            return f"({self.pattern(p.left)} equals {self.pattern(p.right)})"
        if isinstance(p, (SeqRightJoin, EqLeftJoin, LeftJoin)):
            op = {SeqRightJoin: "optseq", EqLeftJoin: "eqopt", LeftJoin: "leftjoin"}[type(p)]
            left, right = self.pattern(p.left), self.pattern(p.right)
            s, e = self.fresh(), self.fresh()
            cond = self.condition(p.expr, (s, e)) if p.expr is not None else "true"
            return f"{op}({left}, {right}, ({cond}), {s}-{e})"
        if isinstance(p, Window):
            return f"({self.pattern(p.pattern)} within {p.seconds!r})"
        if isinstance(p, Filter):
            inner = self.pattern(p.pattern)
            bound = certainly_bound(p.pattern)
            if is_temporal(p.expr):
                s, e = self.fresh(), self.fresh()
                return f"(span({inner}, {s}, {e}) where {self.condition(p.expr, (s, e), bound)})"
            return f"({inner} where {self.condition(p.expr, None, bound)})"
        if isinstance(p, Extend):
            inner = self.pattern(p.pattern)
            span = None
            if is_temporal(p.expr):
                span = (self.fresh(), self.fresh())
                inner = f"span({inner}, {span[0]}, {span[1]})"
            x = self.fresh()
            v = self.var(p.var.name)
            tree = self.expr(p.expr, span)
            return (f"({inner} where (sparql_eval:sparql_eval({tree}, {x}), "
                    f"({x} == '$error' -> true ; {v} = {x})))")
        if isinstance(p, Empty):
            raise QueryError("an empty group pattern {} cannot be detected on a stream")
        raise QueryError(f"unsupported pattern {type(p).__name__}")

    def triple(self, t: Triple) -> str:
        """A stream triple pattern, with RDFS entailment over the background:
        a type triple matches any super-class (and domain/range entailments),
        a triple matches a pattern asking for any super-property."""
        if not (type(t.p).__name__ == "Var" or isinstance(t.p, URIRef)):
            raise QueryError(f"property paths are only supported over background graphs "
                             f"(inside GRAPH): {t.p!r}")
        s, p, o = self.term(t.s), self.term(t.p), self.term(t.o)
        if self.reasoning == "none":
            return f"triple({s}, {p}, {o})"
        m = self.module
        if isinstance(t.p, URIRef) and t.p == RDF_TYPE:
            c, q, x = self.fresh(), self.fresh(), self.fresh()
            return (f"((triple({s}, {p}, {c}) where sparql_background:sub_class({m}, {c}, {o}))"
                    f" or (triple({s}, {q}, {x}) where sparql_background:entailed_type({m}, {q}, subject, {o}))"
                    f" or (triple({x}, {q}, {s}) where sparql_background:entailed_type({m}, {q}, object, {o})))")
        if isinstance(t.p, URIRef):
            q = self.fresh()
            return f"(triple({s}, {q}, {o}) where sparql_background:stream_property({m}, {q}, {p}))"
        q = self.fresh()
        return f"(triple({s}, {q}, {o}) where sparql_background:sub_property({m}, {q}, {p}))"

    def _background_goal(self, p: Pattern) -> str | None:
        """The Prolog goal matching a Background pattern (None otherwise)."""
        if isinstance(p, Filter):
            inner = self._background_goal(p.pattern)
            if inner is None or is_temporal(p.expr):
                return None
            return f"{inner}, {self.condition(p.expr, None)}"
        if not isinstance(p, Background):
            return None
        g = self.term(p.graph) if type(p.graph).__name__ == "Var" else to_prolog(str(p.graph))
        goals = []
        for t in p.triples:
            s, o = self.term(t.s), self.term(t.o)
            if type(t.p).__name__ == "Var" or isinstance(t.p, URIRef):
                goals.append(f"sparql_background:bg_triple({self.module}, {g}, {s}, {self.term(t.p)}, {o})")
            else:
                goals.append(f"sparql_background:bg_path({self.module}, {g}, {self.path(t.p)}, {s}, {o})")
        return ", ".join(goals)

    def path(self, p: Any) -> str:
        """A property path as an sparql_background path term."""
        k = type(p).__name__
        if isinstance(p, URIRef):
            return to_prolog(str(p))
        if k == "PathSeq":
            out = self.path(p.parts[0])
            for q in p.parts[1:]:
                out = f"seq({out}, {self.path(q)})"
            return out
        if k == "PathAlt":
            out = self.path(p.parts[0])
            for q in p.parts[1:]:
                out = f"alt({out}, {self.path(q)})"
            return out
        if k == "PathInv":
            return f"inv({self.path(p.path)})"
        if k == "PathMod":
            op = {"*": "star", "+": "plus", "?": "opt"}[p.mod]
            return f"{op}({self.path(p.path)})"
        raise QueryError(f"unsupported property path {p!r}")

    # -- expressions ---------------------------------------------------------
    def condition(self, e: Any, span: tuple[str, str] | None,
                  bound: frozenset[str] = frozenset()) -> str:
        """A goal that succeeds iff FILTER(e) keeps the solution (``bound``:
        variables every solution of the filtered pattern binds)."""
        goals = [self._conjunct(c, span, bound) for c in conjuncts(e)]
        return ", ".join(goals)

    def _conjunct(self, c: Any, span: tuple[str, str] | None,
                  bound: frozenset[str] = frozenset()) -> str:
        fast = self._fast_comparison(c, bound)
        general = f"sparql_eval:sparql_true({self.expr(c, span)})"
        if fast is None:
            return general
        guards, test = fast
        # numbers on both sides: plain arithmetic; otherwise SPARQL's rules
        return f"( {', '.join(guards)} -> {test} ; {general} )" if guards else test

    def _fast_comparison(self, c: Any, bound: frozenset[str] = frozenset()
                         ) -> tuple[list[str], str] | None:
        """Numeric comparisons of variables and numeric constants compile to
        inline arithmetic, guarded by 'both sides are numbers' (a variable
        that may be unbound is tested with nonvar/1 first, or the
        unification would bind it)."""
        if type(c).__name__ != "BinaryOp" or c.op not in COMPARISONS:
            return None
        guards: list[str] = []
        seen: dict[str, str] = {}

        def arith(e: Any) -> str | None:
            k = type(e).__name__
            if k == "Var":
                if e.name not in seen:
                    n = self.fresh()
                    seen[e.name] = n
                    # numeric literals are n(Value, Datatype, Lexical): a unification
                    v = self.var(e.name)
                    if e.name in bound:
                        guards.append(f"{v} = n({n}, _, _)")
                    else:
                        guards.append(f"nonvar({v}), {v} = n({n}, _, _)")
                return seen[e.name]
            if isinstance(e, Literal):
                return _numeric_text(e)
            if k == "BinaryOp" and e.op in FAST_ARITH:
                a, b = arith(e.left), arith(e.right)
                return None if a is None or b is None else f"({a} {e.op} {b})"
            return None

        a, b = arith(c.left), arith(c.right)
        if a is None or b is None:
            return None
        return guards, f"{a} {PROLOG_CMP[c.op]} {b}"

    def expr(self, e: Any, span: tuple[str, str] | None) -> str:
        """The sparql_eval expression tree of ``e``."""
        k = type(e).__name__
        if k == "Var":
            return f"var({self.var(e.name)})"
        if isinstance(e, (URIRef, Literal)):
            return f"const({to_prolog(self.encode(e))})"
        if k == "BinaryOp":
            op = BINARY_OPS.get(e.op)
            if op is None:
                raise QueryError(f"unsupported operator {e.op}")
            return f"{op}({self.expr(e.left, span)}, {self.expr(e.right, span)})"
        if k == "UnaryOp":
            return f"{UNARY_OPS[e.op]}({self.expr(e.operand, span)})"
        if k in ("In", "NotIn"):
            items = e.values
            lst = ", ".join(self.expr(x, span) for x in items)
            return f"{'in' if k == 'In' else 'notin'}({self.expr(e.expr, span)}, [{lst}])"
        if k == "FunctionCall":
            args = [self.expr(a, span) for a in e.args]
            if isinstance(e.name, str) and not isinstance(e.name, URIRef):
                name = e.name.upper()
                if name in ("GETDURATION", "GETSTARTTIME", "GETENDTIME"):
                    if span is None:
                        raise QueryError(f"{e.name}() outside a filter or expression over a pattern")
                    args = list(span)
                return f"call({to_prolog(name)}, [{', '.join(args)}])"
            iri = str(e.name)
            if not self.is_function(iri):
                pos = getattr(e, "pos", None)
                raise QueryError(f"unknown function <{iri}>: register it with "
                                 f"Engine.register_function() before registering the query",
                                 pos.line if pos else None, pos.column if pos else None)
            return f"call({to_prolog(iri)}, [{', '.join(args)}])"
        raise QueryError(f"unsupported expression {e!r}")


def certainly_bound(p: Pattern) -> frozenset[str]:
    """Variables that every solution of ``p`` binds (conservative: the
    optional side of an optional join, a union branch alone, a computed
    BIND variable and background patterns count as possibly unbound)."""
    if isinstance(p, BGP):
        return frozenset(x.name for t in p.triples for x in (t.s, t.p, t.o)
                         if type(x).__name__ == "Var")
    if isinstance(p, (Join, SeqJoin, EqJoin)):
        return certainly_bound(p.left) | certainly_bound(p.right)
    if isinstance(p, (Union_, LeftJoin, SeqRightJoin, EqLeftJoin)):
        return certainly_bound(p.left) & certainly_bound(p.right)
    if isinstance(p, (Filter, Window, Extend)):
        return certainly_bound(p.pattern)
    return frozenset()


def compile_query(q: Any, qid: int, *, encode: Callable[[Any], Any],
                  is_function: Callable[[str], bool] = lambda iri: False,
                  module: str = "", reasoning: str = "none") -> CompiledQuery:
    """Rules for a translated query (``epsparql.algebra.translate``).

    ``module`` is the engine's Prolog module (background knowledge lives
    there); ``reasoning`` is "rdfs" (stream patterns match entailed
    triples) or "none"."""
    head = f"sparql_q{qid}"
    w = RuleWriter(head, encode, is_function, module, reasoning)
    body = w.pattern(q.pattern)
    names = sorted(all_vars(q.pattern))
    for n in names:
        w.var(n)
    extra: list[str] = []
    computed: list[str] = []
    # SELECT (expr AS ?v): evaluated in Prolog on each solution
    for item in q.projection:
        if isinstance(item, tuple):
            expr, var = item
            span = None
            if is_temporal(expr):
                span = (w.fresh(), w.fresh())
                body = f"span({body}, {span[0]}, {span[1]})"
            x = w.fresh()
            tree = w.expr(expr, span)
            computed.append(f"sparql_eval:sparql_eval({tree}, {x}), "
                            f"({x} == '$error' -> true ; {w.var(var.name)} = {x})")
            extra.append(var.name)
    if computed:
        body = f"({body} where ({', '.join(computed)}))"
    variables = names + [n for n in extra if n not in names]
    # template blank nodes: fresh per answer, part of the answer event
    bnodes: list[str] = []
    for t in q.template:
        for x in (t.s, t.p, t.o):
            if isinstance(x, BNode) and str(x) not in bnodes:
                bnodes.append(str(x))
    if bnodes:
        gens = ", ".join(f"sparql_construct:construct_fresh_bnode({w.var('_:tpl:' + b)})" for b in bnodes)
        body = f"({body} where ({gens}))"
        variables += ["_:tpl:" + b for b in bnodes]
    args = ", ".join(w.var(n) for n in variables) if variables else ""
    head_term = f"{head}({args})" if args else head
    rules = [f"{head_term} <- {body}."]
    for t in q.template:
        pos = [w.var("_:tpl:" + str(x)) if isinstance(x, BNode) else w.term(x)
               for x in (t.s, t.p, t.o)]
        rules.append(f"triple({pos[0]}, {pos[1]}, {pos[2]}) <- {head_term} "
                     f"where sparql_construct:construct_valid_triple({pos[0]}, {pos[1]}, {pos[2]}).")
    return CompiledQuery(head, variables, "\n".join(rules), extra)
