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

from rdflib import XSD, BNode, Literal, URIRef

from ..algebra.nodes import (BGP, Empty, EqJoin, EqLeftJoin, Extend, Filter,
                             Join, LeftJoin, Pattern, SeqJoin, SeqRightJoin,
                             Triple, Union_, Window)
from ..algebra.passes import all_vars, conjuncts, is_temporal
from ..core.terms import to_prolog
from ..language.errors import QueryError

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
                 is_function: Callable[[str], bool]):
        self.head = head
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
            return f"({self.pattern(p.left)} and {self.pattern(p.right)})"
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
            if is_temporal(p.expr):
                s, e = self.fresh(), self.fresh()
                return f"(span({inner}, {s}, {e}) where {self.condition(p.expr, (s, e))})"
            return f"({inner} where {self.condition(p.expr, None)})"
        if isinstance(p, Extend):
            inner = self.pattern(p.pattern)
            span = None
            if is_temporal(p.expr):
                span = (self.fresh(), self.fresh())
                inner = f"span({inner}, {span[0]}, {span[1]})"
            x = self.fresh()
            v = self.var(p.var.name)
            tree = self.expr(p.expr, span)
            return (f"({inner} where (ep_sparql:sparql_eval({tree}, {x}), "
                    f"({x} == '$error' -> true ; {v} = {x})))")
        if isinstance(p, Empty):
            raise QueryError("an empty group pattern {} cannot be detected on a stream")
        raise QueryError(f"unsupported pattern {type(p).__name__}")

    def triple(self, t: Triple) -> str:
        if not (type(t.p).__name__ == "Var" or isinstance(t.p, URIRef)):
            raise QueryError(f"property paths are only supported over background graphs: {t.p!r}")
        return f"triple({self.term(t.s)}, {self.term(t.p)}, {self.term(t.o)})"

    # -- expressions ---------------------------------------------------------
    def condition(self, e: Any, span: tuple[str, str] | None) -> str:
        """A goal that succeeds iff FILTER(e) keeps the solution."""
        goals = [self._conjunct(c, span) for c in conjuncts(e)]
        return ", ".join(goals)

    def _conjunct(self, c: Any, span: tuple[str, str] | None) -> str:
        fast = self._fast_comparison(c)
        general = f"ep_sparql:sparql_true({self.expr(c, span)})"
        if fast is None:
            return general
        guards, test = fast
        # numbers on both sides: plain arithmetic; otherwise SPARQL's rules
        return f"( {', '.join(guards)} -> {test} ; {general} )" if guards else test

    def _fast_comparison(self, c: Any) -> tuple[list[str], str] | None:
        """Numeric comparisons of variables and numeric constants compile to
        inline arithmetic, guarded by 'both sides are numbers'."""
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
        """The ep_sparql expression tree of ``e``."""
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


def compile_query(q: Any, qid: int, *, encode: Callable[[Any], Any],
                  is_function: Callable[[str], bool] = lambda iri: False) -> CompiledQuery:
    """Rules for a translated query (``epsparql.algebra.translate``)."""
    head = f"sparql_q{qid}"
    w = RuleWriter(head, encode, is_function)
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
            computed.append(f"ep_sparql:sparql_eval({tree}, {x}), "
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
        gens = ", ".join(f"ep_construct:construct_fresh_bnode({w.var('_:tpl:' + b)})" for b in bnodes)
        body = f"({body} where ({gens}))"
        variables += ["_:tpl:" + b for b in bnodes]
    args = ", ".join(w.var(n) for n in variables) if variables else ""
    head_term = f"{head}({args})" if args else head
    rules = [f"{head_term} <- {body}."]
    for t in q.template:
        pos = [w.var("_:tpl:" + str(x)) if isinstance(x, BNode) else w.term(x)
               for x in (t.s, t.p, t.o)]
        rules.append(f"triple({pos[0]}, {pos[1]}, {pos[2]}) <- {head_term} "
                     f"where ep_construct:construct_valid_triple({pos[0]}, {pos[1]}, {pos[2]}).")
    return CompiledQuery(head, variables, "\n".join(rules), extra)
