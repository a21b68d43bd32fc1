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

Expressions become sparql_eval trees through rules/expressions.py, the
compiler the windowed queries use too (this writer's hooks: a query
variable is a rule variable, getDURATION() and the like read the span);
a FILTER's numeric and duration comparisons get inline arithmetic here
first.  All data (IRIs, literals) is written through epsparql.core.terms,
quoted and escaped: a query's constants are never Prolog source.

Origins: the text written for each element of the algebra (an operator,
a triple; numbered by :mod:`epsparql.algebra.elements`) is wrapped as
``'$origin'(Head-Number, Text)``.  The core compiles the rule as if the
wrappers were not there and keeps each number on the step it made from
that text, so ``epsparql explain`` can say which element of which query
every step of the rule graph implements.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from rdflib import RDF, XSD, BNode, Literal, URIRef

from ..algebra.elements import numbers
from ..algebra.nodes import (BGP, Background, Empty, EqJoin, EqLeftJoin, Extend, Filter,
                             Join, LeftJoin, Pattern, SeqJoin, SeqRightJoin,
                             Triple, Union_, Window)
from ..algebra.passes import all_vars, conjoin, conjuncts, is_temporal, window_of
from ..algebra.translate import CHAIN
from ..core.terms import to_prolog
from ..language.errors import QueryError
from ..trampoline import Walk, run
from .expressions import MAX_EXPR_DEPTH, ExpressionCompiler

__all__ = ["CompiledQuery", "RuleWriter", "compile_query", "certainly_bound", "balanced_text",
           "MAX_EXPR_DEPTH", "MAX_TERM_DEPTH", "MAX_VARIABLES"]

RDF_TYPE = RDF.type
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


def _kind_of(e: Any) -> str:
    return type(e).__name__


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


class RuleWriter(ExpressionCompiler):
    """Writes one query's patterns and expressions as rule-language text."""

    def __init__(self, head: str, encode: Callable[[Any], Any],
                 is_function: Callable[[str], bool], module: str = "",
                 reasoning: str = "none", hoist: bool = False,
                 origins: dict[int, int] | None = None):
        self.head = head
        self.origins = origins or {}          # id(algebra element) -> its number
        self.module = to_prolog(module) if module else "_"
        self.reasoning = reasoning
        self.encode = encode
        self.is_function = is_function
        self.vars: dict[str, str] = {}
        self._n = 0
        self._bound: dict[int, tuple[Pattern, frozenset[str]]] = {}   # certainly_bound memo
        self.hoist = hoist
        self.helpers: list[str] = []          # helper clauses (hoisted where-goals)
        self._used: list[set[str]] = []       # query variables seen by open goals

    # -- terms ---------------------------------------------------------------
    def var(self, name: str) -> str:
        if name not in self.vars:
            self.vars[name] = f"V{len(self.vars)}"
        v = self.vars[name]
        if self._used:
            self._used[-1].add(v)
        return v

    def fresh(self) -> str:
        self._n += 1
        return f"F{self._n}"

    def goal(self, make: Walk[str], extern: tuple[str, ...] = ()) -> Walk[str]:
        """A ``where`` goal.  With ``hoist``, the goal becomes a helper
        clause ``<head>_w<k>(Args) :- Goal`` and the rule calls it: its
        local variables (intermediate values, numeric guards) then stay out
        of the rule's steps, whose arity SWI-Prolog limits.  Args are the
        query variables the goal reads or binds and ``extern`` (span
        variables bound outside it)."""
        if not self.hoist:
            return (yield make)
        self._used.append(set())
        try:
            text = yield make
        finally:
            used = self._used.pop()
        if self._used:
            self._used[-1] |= used
        args = sorted(used, key=lambda v: int(v[1:])) + list(extern)
        name = f"{self.head}_w{len(self.helpers)}"
        call = f"{name}({', '.join(args)})" if args else name
        self.helpers.append(f"{call} :- {text}.")
        return call

    def term(self, t: Any) -> str:
        if type(t).__name__ == "Var":
            return self.var(t.name)
        if isinstance(t, BNode):
            # blank nodes in patterns are non-distinguished variables
            return self.var("_:" + str(t))
        if isinstance(t, (URIRef, Literal)):
            return to_prolog(self.encode(t))
        raise QueryError(f"unsupported term in a pattern: {t!r}")

    def origin(self, element: Any, text: str) -> str:
        """``text``, written for ``element`` of the algebra, with the
        element's number around it (when it has one)."""
        n = self.origins.get(id(element))
        return text if n is None else f"'$origin'({self.head}-{n}, {text})"

    # -- patterns ------------------------------------------------------------
    def pattern(self, p: Pattern) -> str:
        """The rule-language text of a pattern."""
        return run(self._pattern(p))

    def _pattern(self, p: Pattern) -> Walk[str]:
        return self.origin(p, (yield self._pattern_text(p)))

    def _pattern_text(self, p: Pattern) -> Walk[str]:
        if isinstance(p, BGP):
            if not p.triples:
                raise QueryError("an empty group pattern {} cannot be detected on a stream")
            return balanced_text([self.origin(t, self.triple(t)) for t in p.triples], "and")
        if isinstance(p, Join):
            left_bg, right_bg = _timeless(p.left), _timeless(p.right)
            if left_bg and right_bg:
                raise QueryError("a query needs at least one pattern over the stream "
                                 "(GRAPH patterns only match background knowledge)")
            if left_bg or right_bg:
                stream, bg = (p.right, p.left) if left_bg else (p.left, p.right)
                text = yield self._pattern(stream)
                goal = yield self.goal(self._background_goal(bg))
                return f"({text} where ({goal}))"
            left = yield self._pattern(p.left)
            right = yield self._pattern(p.right)
            return f"({left} and {right})"
        if isinstance(p, LeftJoin) and _timeless(p.right):
            left = yield self._pattern(p.left)
            goal = yield self.goal(self._optional_background(p))
            return f"({left} where ({goal}))"
        if _timeless(p):
            raise QueryError("a GRAPH pattern (background knowledge) can only be joined "
                             "with stream patterns or be OPTIONAL to them")
        if isinstance(p, Union_):
            # the branches' internal variables (F<n>) are local to each
            # branch, so both count from the same number: a UNION of 2,000
            # alternatives needs no more of them than its largest branch
            start = self._n
            left = yield self._pattern(p.left)
            after_left, self._n = self._n, start
            right = yield self._pattern(p.right)
            self._n = max(self._n, after_left)
            return f"({left} or {right})"
        if isinstance(p, (SeqJoin, EqJoin)):
            op = "seq" if isinstance(p, SeqJoin) else "equals"
            left = yield self._pattern(p.left)
            right = yield self._pattern(p.right)
            return f"({left} {op} {right})"
        if isinstance(p, (SeqRightJoin, EqLeftJoin, LeftJoin)):
            op = {SeqRightJoin: "optseq", EqLeftJoin: "eqopt", LeftJoin: "leftjoin"}[type(p)]
            left = yield self._pattern(p.left)
            right = yield self._pattern(p.right)
            if p.expr is None:                   # no condition: no interval to name
                return f"{op}({left}, {right}, true)"
            s, e = self.fresh(), self.fresh()
            cond = yield self.goal(self._condition(p.expr, (s, e)), (s, e))
            return f"{op}({left}, {right}, ({cond}), {s}-{e})"
        if isinstance(p, Window):
            inner = yield self._pattern(p.pattern)
            return f"({inner} within {p.seconds!r})"
        if isinstance(p, Filter):
            expr = p.expr
            if isinstance(p.pattern, Window):
                expr = self._beyond_window(expr, p.pattern)
                if expr is None:                # the window is the whole filter
                    return (yield self._pattern(p.pattern))
            inner = yield self._pattern(p.pattern)
            bound = yield _certainly_bound(p.pattern, self._bound)
            if is_temporal(expr):
                s, e = self.fresh(), self.fresh()
                cond = yield self.goal(self._condition(expr, (s, e), bound), (s, e))
                return f"(span({inner}, {s}, {e}) where {cond})"
            cond = yield self.goal(self._condition(expr, None, bound))
            return f"({inner} where {cond})"
        if isinstance(p, Extend):
            inner = yield self._pattern(p.pattern)
            span = None
            if is_temporal(p.expr):
                span = (self.fresh(), self.fresh())
                inner = f"span({inner}, {span[0]}, {span[1]})"
            goal = yield self.goal(self._assign(p.expr, p.var.name, span), span or ())
            return f"({inner} where ({goal}))"
        if isinstance(p, Empty):
            raise QueryError("an empty group pattern {} cannot be detected on a stream")
        raise QueryError(f"unsupported pattern {type(p).__name__}")

    def _beyond_window(self, expr: Any, w: Window) -> Any:
        """The conjuncts of a filter over window ``w`` that the window does
        not already enforce (None if none is left).  The core's ``within W``
        keeps exactly the matches with End - Start =< W, so a conjunct
        ``getDURATION() <= D`` with D >= W, or ``< D`` with D > W, holds for
        every match, when D is a valid duration literal (sparql_eval then
        compares the two durations by their seconds); a strict bound at W,
        a plain number (a type error in SPARQL, never true) or an invalid
        literal stay.  Leaving them out spares every answer the span and
        the filter step of the compiled rule."""
        kept = []
        for c in conjuncts(expr):
            bound = window_of(c)
            if bound is None:
                kept.append(c)
                continue
            lit = c.right if _kind_of(c.left) == "FunctionCall" else c.left
            enc = self.encode(lit) if isinstance(lit, Literal) else None
            if (getattr(enc, "name", None) == "dur"
                    and enc.args[0] == bound[0]
                    and (bound[0] > w.seconds or (bound[0] == w.seconds and not bound[1]))):
                continue
            kept.append(c)
        return conjoin(kept) if kept else None

    def _assign(self, e: Any, name: str, span: tuple[str, str] | None) -> Walk[str]:
        """Evaluate ``e`` and bind variable ``name`` (left unbound on an error)."""
        x = self.fresh()
        v = self.var(name)
        tree = yield self._expr(e, span)
        return (f"sparql_eval:sparql_eval({tree}, {x}), "
                f"({x} == '$error' -> true ; {v} = {x})")

    def _optional_background(self, p: LeftJoin) -> Walk[str]:
        """OPTIONAL over background knowledge: its goal (and condition) if
        it holds, else nothing bound."""
        bg = yield self._background_goal(p.right)
        if p.expr is not None:
            bg = f"{bg}, {(yield self._condition(p.expr, None))}"
        return f"({bg}) *-> true ; true"

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

    def _background_goal(self, p: Pattern) -> Walk[str]:
        """The Prolog goal matching a timeless pattern (see :func:`_timeless`):
        GRAPH patterns, joins of them and non-temporal filters over them."""
        if isinstance(p, Filter):
            inner = yield self._background_goal(p.pattern)
            return f"{inner}, {(yield self._condition(p.expr, None))}"
        if isinstance(p, Join):
            left = yield self._background_goal(p.left)
            right = yield self._background_goal(p.right)
            return f"{left}, {right}"
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
        return run(self._path(p))

    def _path(self, p: Any) -> Walk[str]:
        k = type(p).__name__
        if isinstance(p, URIRef):
            return to_prolog(str(p))
        if k in ("PathSeq", "PathAlt"):
            parts = []
            for q in p.parts:
                parts.append((yield self._path(q)))
            op = "seq" if k == "PathSeq" else "alt"
            out = parts[0]
            for q in parts[1:]:
                out = f"{op}({out}, {q})"
            return out
        if k == "PathInv":
            return f"inv({(yield self._path(p.path))})"
        if k == "PathMod":
            op = {"*": "star", "+": "plus", "?": "opt"}[p.mod]
            return f"{op}({(yield self._path(p.path))})"
        raise QueryError(f"unsupported property path {p!r}")

    # -- expressions ---------------------------------------------------------
    def condition(self, e: Any, span: tuple[str, str] | None,
                  bound: frozenset[str] = frozenset()) -> str:
        """A goal that succeeds iff FILTER(e) keeps the solution (``bound``:
        variables every solution of the filtered pattern binds)."""
        return run(self._condition(e, span, bound))

    def _condition(self, e: Any, span: tuple[str, str] | None,
                   bound: frozenset[str] = frozenset()) -> Walk[str]:
        goals = []
        for c in conjuncts(e):
            fast = self._fast_duration(c, span) or self._fast_comparison(c, bound)
            general = f"sparql_eval:sparql_true({(yield self._expr(c, span))})"
            if fast is None:
                goals.append(general)
                continue
            guards, test = fast
            # numbers on both sides: plain arithmetic; otherwise SPARQL's rules
            goals.append(f"( {', '.join(guards)} -> {test} ; {general} )" if guards else test)
        return ", ".join(goals)

    def _fast_duration(self, c: Any, span: tuple[str, str] | None
                       ) -> tuple[list[str], str] | None:
        """``getDURATION() < D`` (``<=``, ``>``, ``>=``, either way round) with
        D a valid duration literal compiles to ``End - Start < Seconds``:
        sparql_eval orders the duration of a span and a duration literal by
        their seconds, and the span's times are numbers, so this is the
        same test without building a duration term per solution."""
        if span is None or type(c).__name__ != "BinaryOp" or c.op not in ("<", "<=", ">", ">="):
            return None

        def is_duration_call(e: Any) -> bool:
            return (type(e).__name__ == "FunctionCall" and isinstance(e.name, str)
                    and not isinstance(e.name, URIRef) and e.name.upper() == "GETDURATION"
                    and not e.args)

        def seconds(e: Any) -> str | None:
            if not isinstance(e, Literal):
                return None
            enc = self.encode(e)
            if getattr(enc, "name", None) == "dur" and len(enc.args) == 3:
                return to_prolog(enc.args[0])
            return None

        op = PROLOG_CMP[c.op]
        if is_duration_call(c.left):
            v = seconds(c.right)
            if v is not None:
                return [], f"{span[1]} - {span[0]} {op} {v}"
        if is_duration_call(c.right):
            v = seconds(c.left)
            if v is not None:
                return [], f"{v} {op} {span[1]} - {span[0]}"
        return None

    def _fast_comparison(self, c: Any, bound: frozenset[str] = frozenset()
                         ) -> tuple[list[str], str] | None:
        """Numeric comparisons of variables and numeric constants compile to
        inline arithmetic: first on bare numbers (canonical xsd:integer and
        xsd:double literals, the common case: no unification, no fresh
        variable), then on n/3 terms (a variable that may be unbound is
        tested with nonvar/1 first, or the unification would bind it)."""
        if type(c).__name__ != "BinaryOp" or c.op not in COMPARISONS:
            return None
        guards: list[str] = []
        bare: list[str] = []
        seen: dict[str, tuple[str, str]] = {}

        def arith(e: Any) -> Walk[tuple[str, str] | None]:
            k = type(e).__name__
            if k == "Var":
                if e.name not in seen:
                    n = self.fresh()
                    # numeric literals are bare numbers or n(Value, Datatype, Lexical)
                    v = self.var(e.name)
                    seen[e.name] = (v, n)
                    bare.append(f"number({v})")
                    if e.name in bound:
                        guards.append(f"{v} = n({n}, _, _)")
                    else:
                        guards.append(f"nonvar({v}), {v} = n({n}, _, _)")
                return seen[e.name]
            if isinstance(e, Literal):
                t = _numeric_text(e)
                return None if t is None else (t, t)
            if k == "BinaryOp" and e.op in FAST_ARITH:
                a = yield arith(e.left)
                if a is None:
                    return None
                b = yield arith(e.right)
                if b is None:
                    return None
                return f"({a[0]} {e.op} {b[0]})", f"({a[1]} {e.op} {b[1]})"
            return None

        a = run(arith(c.left))
        b = run(arith(c.right)) if a is not None else None
        if a is None or b is None:
            return None
        op = PROLOG_CMP[c.op]
        if not guards:
            return [], f"{a[1]} {op} {b[1]}"
        # one if-then-else arm per representation; _condition adds the general one
        return [f"{', '.join(bare)} -> {a[0]} {op} {b[0]} ; {', '.join(guards)}"], \
            f"{a[1]} {op} {b[1]}"

    def expr(self, e: Any, span: tuple[str, str] | None) -> str:
        """The sparql_eval expression tree of ``e``."""
        return self.tree(e, span)

    def _expr(self, e: Any, span: tuple[str, str] | None) -> Walk[str]:
        return self.tree_walk(e, span)

    # -- the expression compiler's hooks (rules/expressions.py) ----------------
    def expr_var(self, v: Any, span: tuple[str, str] | None) -> str:
        return self.var(v.name)

    def expr_builtin(self, e: Any, name: str, args: list[str],
                     span: tuple[str, str] | None) -> str | None:
        """getDURATION(), getSTARTTIME() and getENDTIME() read the interval
        of the pattern the expression is over (``span``)."""
        if name not in ("GETDURATION", "GETSTARTTIME", "GETENDTIME"):
            return None
        if span is None:
            raise QueryError(f"{e.name}() outside a filter or expression over a pattern")
        return f"call({to_prolog(name)}, [{', '.join(span)}])"


def balanced_text(parts: list[str], op: str) -> str:
    """``p1 op p2 op …`` parenthesised as a balanced tree of left-deep
    chunks (an associative operator: ``and`` of a BGP's triples), so the
    core binarises a long body in linear time."""
    if len(parts) <= CHAIN:
        out = parts[0]
        for q in parts[1:]:
            out = f"({out} {op} {q})"
        return out
    mid = len(parts) // 2
    return f"({balanced_text(parts[:mid], op)} {op} {balanced_text(parts[mid:], op)})"


def _timeless(p: Pattern) -> bool:
    """Is ``p`` background only (no time): a GRAPH pattern, a join of such
    patterns, or a filter over one that does not read the interval?"""
    stack = [p]
    while stack:
        x = stack.pop()
        if isinstance(x, Filter) and not is_temporal(x.expr):
            stack.append(x.pattern)
        elif isinstance(x, Join):
            stack += (x.left, x.right)
        elif not isinstance(x, Background):
            return False
    return True


def certainly_bound(p: Pattern) -> frozenset[str]:
    """Variables that every solution of ``p`` binds (conservative: the
    optional side of an optional join, a union branch alone, a computed
    BIND variable and background patterns count as possibly unbound)."""
    return run(_certainly_bound(p, {}))


def _certainly_bound(p: Pattern, memo: dict[int, tuple[Pattern, frozenset[str]]]
                     ) -> Walk[frozenset[str]]:
    hit = memo.get(id(p))
    if hit is not None and hit[0] is p:
        return hit[1]
    if isinstance(p, BGP):
        out = frozenset(x.name for t in p.triples for x in (t.s, t.p, t.o)
                        if type(x).__name__ == "Var")
    elif isinstance(p, (Join, SeqJoin, EqJoin)):
        out = (yield _certainly_bound(p.left, memo)) | (yield _certainly_bound(p.right, memo))
    elif isinstance(p, (Union_, LeftJoin, SeqRightJoin, EqLeftJoin)):
        out = (yield _certainly_bound(p.left, memo)) & (yield _certainly_bound(p.right, memo))
    elif isinstance(p, (Filter, Window, Extend)):
        out = yield _certainly_bound(p.pattern, memo)
    else:
        out = frozenset()
    memo[id(p)] = (p, out)
    return out


#: Most variables one step of a rule may hold: SWI-Prolog's predicate
#: arity (1,024) less the interval and some room.
MAX_VARIABLES = 1000

#: Deepest rule term (rules/expressions.py: MAX_EXPR_DEPTH, the deepest
#: expression).  SWI-Prolog reads, writes and compiles terms with C
#: recursion; embedded in Python a term about 12,000 levels deep overflows
#: the C stack (measured), so this leaves a margin of two.
MAX_TERM_DEPTH = 6000

_NESTING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[(\[]|[)\]]")


def term_depth(text: str) -> int:
    """How deep the parentheses and brackets of rule text nest (outside
    quoted atoms and strings): the depth of its terms, as the compiler
    writes every operator term in parentheses."""
    depth = deepest = 0
    for m in _NESTING.finditer(text):
        c = m.group()
        if c in "([":
            depth += 1
            deepest = max(deepest, depth)
        elif c in ")]":
            depth -= 1
    return deepest

_VARIABLE = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\b([VF]\d+)\b|(?<![\w'\"])(_)(?!\w)")


def rule_variables(text: str) -> int:
    """How many variables a rule body holds (``V<n>``, ``F<n>`` and each
    ``_``), outside quoted atoms and strings: the arity of its top step."""
    names: set[str] = set()
    anonymous = 0
    for m in _VARIABLE.finditer(text):
        if m.group(1):
            names.add(m.group(1))
        elif m.group(2):
            anonymous += 1
    return len(names) + anonymous


def compile_query(q: Any, qid: int, *, encode: Callable[[Any], Any],
                  is_function: Callable[[str], bool] = lambda iri: False,
                  module: str = "", reasoning: str = "none") -> CompiledQuery:
    """Rules for a translated query (``epsparql.algebra.translate``).

    ``module`` is the engine's Prolog module (background knowledge lives
    there); ``reasoning`` is "rdfs" (stream patterns match entailed
    triples) or "none".  A query whose rule would hold more than
    :data:`MAX_VARIABLES` variables in one step is written again with its
    ``where`` goals as helper clauses; if it is still too large, it is a
    QueryError naming the count and the limit."""
    args = (q, qid, encode, is_function, module, reasoning)
    compiled, size = _write(*args, hoist=False)
    if size > MAX_VARIABLES:
        compiled, size = _write(*args, hoist=True)
    if size > MAX_VARIABLES:
        pos = getattr(getattr(q, "source", None), "pos", None)
        own = len(compiled.variables)
        rdfs = (" (RDFS reasoning adds one per stream triple pattern; "
                "Engine(reasoning='none'), --reasoning none on the command line, does not)" if reasoning != "none" else "")
        raise QueryError(f"the query is too large for the engine: one step of its rule "
                         f"needs {size:,} variables, {own:,} of them the query's own{rdfs}; "
                         f"the limit is {MAX_VARIABLES:,} (SWI-Prolog's predicate arity)",
                         pos.line if pos else None, pos.column if pos else None)
    return compiled


def _write(q: Any, qid: int, encode: Callable[[Any], Any], is_function: Callable[[str], bool],
           module: str, reasoning: str, *, hoist: bool) -> tuple[CompiledQuery, int]:
    """The compiled query and the most variables one step of it holds."""
    head = f"sparql_q{qid}"
    w = RuleWriter(head, encode, is_function, module, reasoning, hoist, numbers(q))
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
            computed.append(run(w.goal(w._assign(expr, var.name, span), span or ())))
            extra.append(var.name)
    if computed:
        body = w.origin(q, f"({body} where ({', '.join(computed)}))")
    variables = names + [n for n in extra if n not in names]
    # template blank nodes: fresh per answer, part of the answer event
    bnodes: list[str] = []
    for t in q.template:
        for x in (t.s, t.p, t.o):
            if isinstance(x, BNode) and str(x) not in bnodes:
                bnodes.append(str(x))
    if bnodes:
        gens = ", ".join(f"sparql_construct:construct_fresh_bnode({w.var('_:tpl:' + b)})" for b in bnodes)
        body = w.origin(q, f"({body} where ({gens}))")
        variables += ["_:tpl:" + b for b in bnodes]
    args = ", ".join(w.var(n) for n in variables) if variables else ""
    head_term = f"{head}({args})" if args else head
    rules = [f"{head_term} <- {body}."]
    for t in q.template:
        pos = [w.var("_:tpl:" + str(x)) if isinstance(x, BNode) else w.term(x)
               for x in (t.s, t.p, t.o)]
        answer = w.origin(q, head_term)
        rules.append(f"triple({pos[0]}, {pos[1]}, {pos[2]}) <- " + w.origin(
            t, f"({answer} where sparql_construct:construct_valid_triple("
               f"{pos[0]}, {pos[1]}, {pos[2]}))") + ".")
    size = rule_variables(body)
    if q.template:                  # the answer event is a pattern of the template rules
        size = max(size, len(variables))
    text = "\n".join(rules + w.helpers)
    depth = term_depth(text)
    if depth > MAX_TERM_DEPTH:
        pos = getattr(getattr(q, "source", None), "pos", None)
        raise QueryError(f"the query is too deep for the engine: its compiled rule nests "
                         f"{depth:,} levels (a chain of OPTIONAL, OPTIONALSEQ, "
                         f"EQUALSOPTIONAL or BIND is as deep as it is long); the limit is "
                         f"{MAX_TERM_DEPTH:,}", pos.line if pos else None,
                         pos.column if pos else None)
    return CompiledQuery(head, variables, text, extra), size
