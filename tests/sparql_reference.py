"""A small reference evaluator of EP-SPARQL (section 4.2 of the specification).

Deliberately naive and independent of the project's parser and algebra:
queries are written in this module's own algebra (the classes below), each
operator is evaluated over the whole finite stream by nested loops, straight
from the definitions, and ``render`` writes a query as EP-SPARQL text so the
same query can be given to the engine.

Semantics (section 4.2, with the project's documented readings):

* The stream is a SET of triple occurrences ``((s, p, o), t1, t2)``, t1 <= t2.
* A solution is ``(mu, ta, tw)`` with ``mu`` a frozenset of (var, term);
  every operator denotes a SET of solutions.
* BGP: one occurrence per triple pattern (the same occurrence may serve
  several patterns), mu's domain exactly the pattern's variables, interval
  [min starts, max ends].
* Join: compatible pairs, combined over [min ta, max tw]; Union: union.
* SeqJoin(L, R): L.tw < R.ta.  EqJoin: same ta and same tw.
* LeftJoin(L, R, F) (OPTIONAL): combinations with compatible R, R.tw <= L.tw
  (the printed "<" read as "<="), F true on mu ⋈ mu' with L's interval; plus
  L alone when no such R satisfies F.
* SeqRightJoin(L, R, F) (L OPTIONALSEQ R; R mandatory): Filter(F, SeqJoin(L, R))
  (F on the combined interval) plus R alone when no compatible L with
  L.tw < R.ta satisfies F on mu ⋈ mu' with R's interval.
* EqLeftJoin(L, R, F) (L EQUALSOPTIONAL R; L mandatory): Filter(F, EqJoin(L, R))
  plus L alone when no compatible R over the same interval satisfies F.
* Filter: SPARQL's three-valued logic; an error drops the solution.
  getDURATION() = tw - ta in seconds, compared with durations in seconds.
* SELECT: each full solution projected, one row per distinct full solution.
* CONSTRUCT: the Q-closure, the stream extended with the constructed triples
  (over the answer's interval) until a fixpoint.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Iterable, Optional

from rdflib import BNode, Literal, URIRef, XSD

NS = "http://epsparql.org/ns#"          # the parser's default base for bare names


# ---------------------------------------------------------------------------
# query representation
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Var:
    name: str

    def __repr__(self) -> str:
        return "?" + self.name


@dataclass(frozen=True)
class BGP:
    triples: tuple  # of (s, p, o): Var or rdflib term


@dataclass(frozen=True)
class Join:
    left: Any
    right: Any


@dataclass(frozen=True)
class Union:
    left: Any
    right: Any


@dataclass(frozen=True)
class LeftJoin:          # left OPTIONAL { right FILTER(expr) }
    left: Any
    right: Any
    expr: Any = None


@dataclass(frozen=True)
class SeqJoin:           # {left} SEQ {right}
    left: Any
    right: Any


@dataclass(frozen=True)
class EqJoin:            # {left} EQUALS {right}
    left: Any
    right: Any


@dataclass(frozen=True)
class SeqRightJoin:      # { left FILTER(expr) } OPTIONALSEQ {right}; right mandatory
    left: Any
    right: Any
    expr: Any = None


@dataclass(frozen=True)
class EqLeftJoin:        # {left} EQUALSOPTIONAL { right FILTER(expr) }; left mandatory
    left: Any
    right: Any
    expr: Any = None


@dataclass(frozen=True)
class Filter:
    expr: Any
    pattern: Any


# -- expressions -------------------------------------------------------------
@dataclass(frozen=True)
class EVar:
    name: str


@dataclass(frozen=True)
class Num:
    value: Any  # int or Fraction (rendered as a decimal)


@dataclass(frozen=True)
class Const:
    term: Any   # an rdflib term (IRI)


@dataclass(frozen=True)
class Arith:
    op: str     # + - *
    left: Any
    right: Any


@dataclass(frozen=True)
class Cmp:
    op: str     # = != < > <= >=
    left: Any
    right: Any


@dataclass(frozen=True)
class And:
    left: Any
    right: Any


@dataclass(frozen=True)
class Or:
    left: Any
    right: Any


@dataclass(frozen=True)
class Not:
    arg: Any


@dataclass(frozen=True)
class Bound:
    name: str


@dataclass(frozen=True)
class Dur:
    """getDURATION() op "PT<seconds>S"^^xsd:duration."""
    op: str
    seconds: Any


@dataclass(frozen=True)
class Select:
    pattern: Any
    projection: Optional[tuple] = None   # var names; None = SELECT *


@dataclass(frozen=True)
class Construct:
    template: tuple   # of (s, p, o): Var or rdflib term
    pattern: Any


# ---------------------------------------------------------------------------
# expressions: SPARQL three-valued logic
# ---------------------------------------------------------------------------
class _Error:
    def __repr__(self) -> str:
        return "ERROR"


ERROR = _Error()

NUMERIC = {XSD.integer, XSD.decimal, XSD.double, XSD.float, XSD.int, XSD.long}


def numeric(term) -> Optional[Fraction]:
    """The exact value of a numeric literal, else None."""
    if isinstance(term, Literal) and term.datatype in NUMERIC:
        v = term.toPython()
        if isinstance(v, (int, Decimal, float)) and not isinstance(v, bool):
            return Fraction(v)
    return None


def _value(e, mu: dict, ta, tw):
    """A value: Fraction (number), an rdflib term, or ERROR."""
    if isinstance(e, EVar):
        if e.name not in mu:
            return ERROR
        t = mu[e.name]
        n = numeric(t)
        return n if n is not None else t
    if isinstance(e, Num):
        return Fraction(e.value)
    if isinstance(e, Const):
        return e.term
    if isinstance(e, Arith):
        a, b = _value(e.left, mu, ta, tw), _value(e.right, mu, ta, tw)
        if not isinstance(a, Fraction) or not isinstance(b, Fraction):
            return ERROR
        return {"+": a + b, "-": a - b, "*": a * b}[e.op]
    raise TypeError(f"not a value expression: {e!r}")


def _compare(op: str, a, b):
    if a is ERROR or b is ERROR:
        return ERROR
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return {"=": a == b, "!=": a != b, "<": a < b, ">": a > b,
                "<=": a <= b, ">=": a >= b}[op]
    if op in ("=", "!="):
        # RDFterm-equal: two literals that differ are a type error; a number
        # and an IRI (or two IRIs) are simply (un)equal
        if isinstance(a, Fraction) or isinstance(b, Fraction):
            if isinstance(a, Fraction) and isinstance(b, Fraction):
                raise AssertionError
            other = b if isinstance(a, Fraction) else a
            if isinstance(other, Literal):
                return ERROR
            return op == "!="
        if isinstance(a, Literal) and isinstance(b, Literal) and a != b:
            return ERROR
        return (a == b) == (op == "=")
    return ERROR   # ordering of IRIs, or of a number and an IRI


def evaluate(e, mu: dict, ta, tw):
    """True, False or ERROR."""
    if isinstance(e, Cmp):
        return _compare(e.op, _value(e.left, mu, ta, tw), _value(e.right, mu, ta, tw))
    if isinstance(e, Dur):
        return _compare(e.op, Fraction(tw) - Fraction(ta), Fraction(e.seconds))
    if isinstance(e, Bound):
        return e.name in mu
    if isinstance(e, Not):
        v = evaluate(e.arg, mu, ta, tw)
        return ERROR if v is ERROR else not v
    if isinstance(e, And):
        a, b = evaluate(e.left, mu, ta, tw), evaluate(e.right, mu, ta, tw)
        if a is False or b is False:
            return False
        if a is ERROR or b is ERROR:
            return ERROR
        return True
    if isinstance(e, Or):
        a, b = evaluate(e.left, mu, ta, tw), evaluate(e.right, mu, ta, tw)
        if a is True or b is True:
            return True
        if a is ERROR or b is ERROR:
            return ERROR
        return False
    raise TypeError(f"not a boolean expression: {e!r}")


def holds(e, mu, ta, tw) -> bool:
    """Does FILTER(e) keep the solution (None: no condition)?"""
    if e is None:
        return True
    return evaluate(e, dict(mu), ta, tw) is True


# ---------------------------------------------------------------------------
# patterns
# ---------------------------------------------------------------------------
def compatible(m1: frozenset, m2: frozenset) -> bool:
    d = dict(m1)
    return all(d.get(k, v) == v for k, v in m2)


def combine(a, b):
    (m1, s1, e1), (m2, s2, e2) = a, b
    return (m1 | m2, min(s1, s2), max(e1, e2))


def normalise_stream(stream: Iterable) -> frozenset:
    """The set of occurrences ((s, p, o), t1, t2) of rows (s, p, o, t1[, t2])."""
    out = set()
    for row in stream:
        if len(row) == 3 and isinstance(row[0], tuple):
            occ = row
        else:
            s, p, o, t1, *rest = row
            occ = ((s, p, o), t1, rest[0] if rest and rest[0] is not None else t1)
        assert occ[1] <= occ[2], f"start after end: {occ}"
        out.add(occ)
    return frozenset(out)


def _match(pattern, triple, mu: dict) -> Optional[dict]:
    out = dict(mu)
    for p, v in zip(pattern, triple):
        if isinstance(p, Var):
            if p.name in out and out[p.name] != v:
                return None
            out[p.name] = v
        elif p != v:
            return None
    return out


def eval_bgp(triples, stream: frozenset) -> set:
    out = set()

    def go(i, mu, starts, ends):
        if i == len(triples):
            out.add((frozenset(mu.items()), min(starts), max(ends)))
            return
        for (trip, t1, t2) in stream:
            m = _match(triples[i], trip, mu)
            if m is not None:
                go(i + 1, m, starts + [t1], ends + [t2])

    if triples:
        go(0, {}, [], [])
    return out


def eval_pattern(p, stream: frozenset) -> set:
    """The set of solutions (mu, ta, tw) of a pattern over a finite stream."""
    if isinstance(p, BGP):
        return eval_bgp(p.triples, stream)
    if isinstance(p, Filter):
        return {s for s in eval_pattern(p.pattern, stream) if holds(p.expr, *s)}
    L = eval_pattern(p.left, stream)
    R = eval_pattern(p.right, stream)
    if isinstance(p, Union):
        return L | R
    if isinstance(p, Join):
        return {combine(a, b) for a in L for b in R if compatible(a[0], b[0])}
    if isinstance(p, SeqJoin):
        return {combine(a, b) for a in L for b in R
                if compatible(a[0], b[0]) and a[2] < b[1]}
    if isinstance(p, EqJoin):
        return {combine(a, b) for a in L for b in R
                if compatible(a[0], b[0]) and a[1] == b[1] and a[2] == b[2]}
    if isinstance(p, LeftJoin):
        out = set()
        for a in L:
            found = False
            for b in R:
                if compatible(a[0], b[0]) and b[2] <= a[2] \
                        and holds(p.expr, a[0] | b[0], a[1], a[2]):
                    out.add(combine(a, b))
                    found = True
            if not found:
                out.add(a)
        return out
    if isinstance(p, SeqRightJoin):
        out = set()
        for b in R:                      # the mandatory side
            alone = True
            for a in L:
                if compatible(a[0], b[0]) and a[2] < b[1]:
                    c = combine(a, b)
                    if holds(p.expr, *c):
                        out.add(c)
                    if holds(p.expr, a[0] | b[0], b[1], b[2]):
                        alone = False
            if alone:
                out.add(b)
        return out
    if isinstance(p, EqLeftJoin):
        out = set()
        for a in L:                      # the mandatory side
            alone = True
            for b in R:
                if compatible(a[0], b[0]) and a[1] == b[1] and a[2] == b[2]:
                    c = combine(a, b)
                    if holds(p.expr, *c):
                        out.add(c)
                        alone = False
            if alone:
                out.add(a)
        return out
    raise TypeError(f"not a pattern: {p!r}")


def pattern_vars(p) -> set:
    if isinstance(p, BGP):
        return {x.name for t in p.triples for x in t if isinstance(x, Var)}
    if isinstance(p, Filter):
        return pattern_vars(p.pattern)
    return pattern_vars(p.left) | pattern_vars(p.right)


# ---------------------------------------------------------------------------
# queries
# ---------------------------------------------------------------------------
def _valid_triple(s, p, o) -> bool:
    return isinstance(s, (URIRef, BNode)) and isinstance(p, URIRef) and o is not None


def constructed(c: Construct, stream: frozenset) -> set:
    """Triple occurrences one CONSTRUCT query builds from a stream."""
    out = set()
    for mu, ta, tw in eval_pattern(c.pattern, stream):
        m = dict(mu)
        for t in c.template:
            trip = tuple(m.get(x.name) if isinstance(x, Var) else x for x in t)
            if all(x is not None for x in trip) and _valid_triple(*trip):
                out.add((trip, ta, tw))
    return out


def closure(stream: Iterable, constructs: Iterable[Construct] = (), max_rounds: int = 50) -> frozenset:
    """The Q-closure of a stream under CONSTRUCT queries."""
    s = normalise_stream(stream)
    cs = list(constructs)
    for _ in range(max_rounds):
        new = set(s)
        for c in cs:
            new |= constructed(c, s)
        if new == s:
            return s
        s = frozenset(new)
    raise RuntimeError("the Q-closure did not reach a fixpoint")


def solutions(query, stream: Iterable, constructs: Iterable[Construct] = ()) -> set:
    """Full solutions of a query's pattern over the Q-closure of a stream."""
    pattern = query.pattern if isinstance(query, (Select, Construct)) else query
    return eval_pattern(pattern, closure(stream, constructs))


def project(mu: frozenset, projection) -> frozenset:
    if projection is None:
        return mu
    keep = set(projection)
    return frozenset((k, v) for k, v in mu if k in keep)


def answers(query: Select, stream: Iterable, constructs: Iterable[Construct] = ()) -> Counter:
    """Counter of (frozenset(projected bindings), start, end)."""
    return Counter((project(mu, query.projection), ta, tw)
                   for mu, ta, tw in solutions(query, stream, constructs))


def construct_answers(c: Construct, stream: Iterable, constructs: Iterable[Construct] = ()) -> Counter:
    """Counter of (frozenset(constructed triples), start, end), one per
    solution of c's pattern (over the closure under ``constructs``) that
    builds at least one valid triple."""
    out = Counter()
    for mu, ta, tw in solutions(c, stream, constructs):
        m = dict(mu)
        trips = set()
        for t in c.template:
            trip = tuple(m.get(x.name) if isinstance(x, Var) else x for x in t)
            if all(x is not None for x in trip) and _valid_triple(*trip):
                trips.add(trip)
        if trips:
            out[(frozenset(trips), ta, tw)] += 1
    return out


def engine_counter(results, projection=None) -> Counter:
    """The engine's answers in the form ``answers`` returns."""
    out = Counter()
    for a in results:
        b = a.bindings
        if projection is not None:
            b = {k: v for k, v in b.items() if k in projection}
        out[(frozenset(b.items()), a.start, a.end)] += 1
    return out


# ---------------------------------------------------------------------------
# rendering as EP-SPARQL text
# ---------------------------------------------------------------------------
PREFIXES = "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\nPREFIX : <%s>\n" % NS


def render_term(t) -> str:
    if isinstance(t, Var):
        return "?" + t.name
    if isinstance(t, URIRef):
        if str(t).startswith(NS) and str(t)[len(NS):].isidentifier():
            return ":" + str(t)[len(NS):]
        return f"<{t}>"
    if isinstance(t, Literal):
        n = numeric(t)
        if n is not None and t.datatype == XSD.integer:
            return str(int(n))
        return t.n3()
    raise TypeError(f"cannot render {t!r}")


def _num(v) -> str:
    f = Fraction(v)
    if f.denominator == 1:
        return str(f.numerator)
    d = Decimal(f.numerator) / Decimal(f.denominator)
    s = format(d, "f")
    assert Fraction(Decimal(s)) == f, f"{v} is not a finite decimal"
    return s


def _dur(seconds) -> str:
    return f'"PT{_num(seconds)}S"^^xsd:duration'


def render_expr(e) -> str:
    if isinstance(e, EVar):
        return "?" + e.name
    if isinstance(e, Num):
        s = _num(e.value)
        return f"({s})" if s.startswith("-") else s
    if isinstance(e, Const):
        return render_term(e.term)
    if isinstance(e, Arith):
        return f"({render_expr(e.left)} {e.op} {render_expr(e.right)})"
    if isinstance(e, Cmp):
        return f"({render_expr(e.left)} {e.op} {render_expr(e.right)})"
    if isinstance(e, Dur):
        return f"(getDURATION() {e.op} {_dur(e.seconds)})"
    if isinstance(e, Bound):
        return f"BOUND(?{e.name})"
    if isinstance(e, Not):
        inner = render_expr(e.arg)
        return f"!{inner}" if inner.startswith(("(", "BOUND")) else f"!({inner})"
    if isinstance(e, And):
        return f"({render_expr(e.left)} && {render_expr(e.right)})"
    if isinstance(e, Or):
        return f"({render_expr(e.left)} || {render_expr(e.right)})"
    raise TypeError(f"cannot render {e!r}")


def _filter(e) -> str:
    return f" FILTER({render_expr(e)})"


_OPS = {Union: "UNION", SeqJoin: "SEQ", EqJoin: "EQUALS",
        SeqRightJoin: "OPTIONALSEQ", EqLeftJoin: "EQUALSOPTIONAL"}


def render_group(p) -> str:
    """``{ … }`` whose SPARQL translation is exactly ``p``."""
    return "{ " + render_content(p) + " }"


def _operand(p, cond) -> str:
    """The group of an optional operand with join condition ``cond``.  A
    FILTER of the operand itself must not land at the group's top level (it
    would become the join's condition): it gets a group of its own."""
    inner = render_group(p) if isinstance(p, Filter) else render_content(p)
    return "{ " + inner + (_filter(cond) if cond is not None else "") + " }"


def render_content(p) -> str:
    """The body of a group whose translation is ``p``."""
    if isinstance(p, BGP):
        return " . ".join(" ".join(render_term(x) for x in t) for t in p.triples) + " ."
    if isinstance(p, Filter):
        return render_content(p.pattern) + _filter(p.expr)
    if isinstance(p, Join):
        # a FILTER of either side must stay inside its own group; a
        # LeftJoin on the right would otherwise take the left as its own
        left = render_content(p.left) if isinstance(p.left, (BGP, Join)) else render_group(p.left)
        right = render_content(p.right) if isinstance(p.right, BGP) else render_group(p.right)
        return f"{left} {right}"
    if isinstance(p, LeftJoin):
        left = render_content(p.left) if isinstance(p.left, (BGP, Join, LeftJoin)) \
            else render_group(p.left)
        return f"{left} OPTIONAL {_operand(p.right, p.expr)}"
    if isinstance(p, SeqRightJoin):
        return f"{_operand(p.left, p.expr)} OPTIONALSEQ {render_group(p.right)}"
    if isinstance(p, EqLeftJoin):
        return f"{render_group(p.left)} EQUALSOPTIONAL {_operand(p.right, p.expr)}"
    if type(p) in _OPS:
        return f"{render_group(p.left)} {_OPS[type(p)]} {render_group(p.right)}"
    raise TypeError(f"cannot render {p!r}")


def render(query, prefixes: str = PREFIXES) -> str:
    """EP-SPARQL text of a Select or Construct."""
    if isinstance(query, Select):
        head = "SELECT " + ("*" if query.projection is None
                            else " ".join("?" + v for v in query.projection))
        return f"{prefixes}{head} WHERE {render_group(query.pattern)}"
    if isinstance(query, Construct):
        tpl = " . ".join(" ".join(render_term(x) for x in t) for t in query.template)
        return f"{prefixes}CONSTRUCT {{ {tpl} }} WHERE {render_group(query.pattern)}"
    raise TypeError(f"cannot render {query!r}")


def render_stream(stream: Iterable) -> str:
    """A readable listing of a stream (for failure messages)."""
    rows = sorted(normalise_stream(stream), key=lambda o: (o[2], o[1], str(o[0])))
    return "\n".join(f"  {' '.join(render_term(x) for x in trip)}  [{t1}, {t2}]"
                     for trip, t1, t2 in rows)


def render_answers(c: Counter) -> str:
    def key(item):
        (mu, s, e), n = item
        return (s, e, sorted((k, str(v)) for k, v in mu))
    lines = []
    for (mu, s, e), n in sorted(c.items(), key=key):
        b = ", ".join(f"?{k}={render_term(v)}" for k, v in sorted(mu, key=lambda kv: kv[0]))
        lines.append(f"  {{{b}}} [{s}, {e}]" + (f" x{n}" if n != 1 else ""))
    return "\n".join(lines) or "  (none)"


def diff_message(text: str, stream, expected: Counter, got: Counter) -> str:
    missing = expected - got
    extra = got - expected
    return (f"query:\n{text}\nstream:\n{render_stream(stream)}\n"
            f"expected:\n{render_answers(expected)}\ngot:\n{render_answers(got)}\n"
            f"missing:\n{render_answers(missing)}\nextra:\n{render_answers(extra)}")


# ---------------------------------------------------------------------------
# random streams and queries (seeded, for the differential tests)
# ---------------------------------------------------------------------------
import random as _random

SUBJECTS = [URIRef(NS + n) for n in ("a", "b", "c")]
PREDICATES = [URIRef(NS + n) for n in ("p", "q", "r")]
OBJECTS = [Literal(i) for i in range(4)]

SUBJECT_VARS = ("s", "t")
OBJECT_VARS = ("x", "y", "z")
PREDICATE_VARS = ("w",)


def gen_stream(rng: _random.Random, n: Optional[int] = None, *, predicates=None,
               subjects=None, halves: Optional[bool] = None) -> list:
    """Rows (s, p, o, start, end), end nondecreasing, start <= end, with ties,
    equal intervals, overlaps, zero-length intervals and duplicates."""
    predicates = predicates or PREDICATES[:rng.choice((2, 3))]
    subjects = subjects or SUBJECTS[:rng.choice((1, 1, 2, 2, 3))]
    n = n if n is not None else rng.randint(3, 11)
    if halves is None:
        halves = rng.random() < 0.2
    unit = Fraction(1, 2) if halves else 1
    rows, end = [], 0
    for _ in range(n):
        end += rng.choice((0, 0, 1, 1, 1, 2, 3))
        same_end = [r for r in rows if r[4] == _t(end, unit)]
        if same_end and rng.random() < 0.1:          # an identical occurrence again
            rows.append(rng.choice(same_end))
            continue
        if same_end and rng.random() < 0.3:          # the interval of another one
            start = rng.choice(same_end)[3]
        else:
            start = _t(max(0, end - rng.choice((0, 0, 0, 1, 2, 4))), unit)
        rows.append((rng.choice(subjects), rng.choice(predicates), rng.choice(OBJECTS[:3]),
                     start, _t(end, unit)))
    return rows


def _t(k, unit):
    v = k * unit
    return int(v) if Fraction(v).denominator == 1 else float(v)


class QueryGen:
    """Random queries over the vocabulary of gen_stream.

    ``ops``: the pattern operators to use; ``temporal``: allow getDURATION()
    in filters; ``filtered_optional_operand``: allow an optional operand that
    is itself a Filter (its FILTER in a nested group, see ``_operand``);
    "always": make every optional operand one."""

    ALL_OPS = ("Join", "Union", "LeftJoin", "SeqJoin", "EqJoin", "SeqRightJoin",
               "EqLeftJoin", "Filter")

    def __init__(self, rng: _random.Random, *, ops=ALL_OPS, temporal: bool = True,
                 max_leaves: int = 4, filtered_optional_operand: bool = True,
                 predicate_vars: bool = True, durations=(0, 1, 2, 3, 5)):
        self.rng = rng
        self.ops = ops
        self.temporal = temporal
        self.max_leaves = max_leaves
        self.filtered_optional_operand = filtered_optional_operand
        self.predicate_vars = predicate_vars
        self.durations = durations

    # -- patterns --------------------------------------------------------------
    def triple(self):
        r = self.rng
        s = Var(r.choice(SUBJECT_VARS[:1] * 3 + SUBJECT_VARS[1:])) if r.random() < 0.9 \
            else r.choice(SUBJECTS[:2])
        if self.predicate_vars and r.random() < 0.08:
            p = Var(PREDICATE_VARS[0])
        else:
            p = r.choice(PREDICATES[:2] * 2 + PREDICATES[2:3])
        o = Var(r.choice(OBJECT_VARS)) if r.random() < 0.88 else r.choice(OBJECTS)
        return (s, p, o)

    def bgp(self):
        n = 1 if self.rng.random() < 0.8 else 2
        return BGP(tuple(self.triple() for _ in range(n)))

    def pattern(self, leaves: Optional[int] = None):
        r = self.rng
        leaves = leaves if leaves is not None else r.randint(1, self.max_leaves)
        if leaves <= 1:
            p = self.bgp()
            if "Filter" in self.ops and r.random() < 0.15:
                p = Filter(self.expr(pattern_vars(p)), p)
            return p
        op = r.choice([o for o in self.ops if o != "Filter"])
        k = r.randint(1, leaves - 1)
        left, right = self.pattern(k), self.pattern(leaves - k)
        if op in ("LeftJoin", "SeqRightJoin", "EqLeftJoin") and not self.filtered_optional_operand:
            opt = right if op != "SeqRightJoin" else left
            while isinstance(opt, Filter):
                opt = opt.pattern
            if op == "SeqRightJoin":
                left = opt
            else:
                right = opt
        scope = pattern_vars(left) | pattern_vars(right)
        cond = self.expr(scope) if r.random() < 0.5 else None
        if op in ("LeftJoin", "SeqRightJoin", "EqLeftJoin") and self.filtered_optional_operand == "always":
            # the optional operand filtered in a group of its own, on
            # variables of both sides
            if op == "SeqRightJoin" and not isinstance(left, Filter):
                left = Filter(self.expr(scope), left)
            elif op != "SeqRightJoin" and not isinstance(right, Filter):
                right = Filter(self.expr(scope), right)
            if r.random() < 0.4:
                cond = None
        cls = {"Join": Join, "Union": Union, "LeftJoin": LeftJoin, "SeqJoin": SeqJoin,
               "EqJoin": EqJoin, "SeqRightJoin": SeqRightJoin, "EqLeftJoin": EqLeftJoin}[op]
        p = cls(left, right, cond) if op in ("LeftJoin", "SeqRightJoin", "EqLeftJoin") \
            else cls(left, right)
        if "Filter" in self.ops and r.random() < 0.3:
            p = Filter(self.expr(scope), p)
        return p

    # -- expressions -----------------------------------------------------------
    def _var(self, scope, kinds):
        r = self.rng
        inscope = [v for v in sorted(scope) if v in kinds]
        if inscope and r.random() < 0.93:
            return r.choice(inscope)
        return r.choice(kinds)       # possibly out of scope: unbound

    def atom(self, scope):
        r = self.rng
        k = r.random()
        cmp = r.choice(("<", ">", "<=", ">=", "=", "!="))
        if self.temporal and k < 0.2:
            return Dur(r.choice(("<", "<", "<=", "<=", ">", ">=")), r.choice(self.durations))
        if k < 0.45:
            return Cmp(cmp, EVar(self._var(scope, OBJECT_VARS)), Num(r.choice((0, 1, 2, 3))))
        if k < 0.6:
            a = self._var(scope, OBJECT_VARS)
            b = self._var(scope, OBJECT_VARS)
            return Cmp(cmp, EVar(a), EVar(b))
        if k < 0.7:
            a = EVar(self._var(scope, OBJECT_VARS))
            e = Arith(r.choice(("*", "+", "-")), a, Num(r.choice((Fraction(1, 2), 1, 2))))
            return Cmp(cmp, EVar(self._var(scope, OBJECT_VARS)), e)
        if k < 0.85:
            return Bound(self._var(scope, OBJECT_VARS + SUBJECT_VARS))
        if k < 0.95:
            a = self._var(scope, SUBJECT_VARS)
            b = Const(r.choice(SUBJECTS)) if r.random() < 0.5 else EVar(self._var(scope, SUBJECT_VARS))
            return Cmp(r.choice(("=", "!=")), EVar(a), b)
        # a type error or mixed comparison: an IRI against a number
        return Cmp(cmp, EVar(self._var(scope, SUBJECT_VARS)), Num(1))

    def expr(self, scope, depth: int = 0):
        r = self.rng
        k = r.random()
        if depth >= 2 or k < 0.55:
            return self.atom(scope)
        if k < 0.75:
            return And(self.expr(scope, depth + 1), self.expr(scope, depth + 1))
        if k < 0.9:
            return Or(self.expr(scope, depth + 1), self.expr(scope, depth + 1))
        return Not(self.expr(scope, depth + 1))

    def select(self):
        p = self.pattern()
        vs = sorted(pattern_vars(p))
        r = self.rng
        if r.random() < 0.3 or not vs:
            return Select(p, None)
        proj = tuple(v for v in vs if r.random() < 0.6) or (r.choice(vs),)
        return Select(p, proj)


def certain_vars(p) -> set:
    """Variables bound in every solution of a pattern."""
    if isinstance(p, BGP):
        return pattern_vars(p)
    if isinstance(p, Filter):
        return certain_vars(p.pattern)
    if isinstance(p, (Join, SeqJoin, EqJoin)):
        return certain_vars(p.left) | certain_vars(p.right)
    if isinstance(p, Union):
        return certain_vars(p.left) & certain_vars(p.right)
    if isinstance(p, (LeftJoin, EqLeftJoin)):
        return certain_vars(p.left)
    if isinstance(p, SeqRightJoin):
        return certain_vars(p.right)
    raise TypeError(p)


def expr_vars(e) -> set:
    if isinstance(e, EVar):
        return {e.name}
    if isinstance(e, Bound):
        return {e.name}
    if isinstance(e, (Num, Const, Dur)) or e is None:
        return set()
    if isinstance(e, Not):
        return expr_vars(e.arg)
    return expr_vars(e.left) | expr_vars(e.right)


def scoped_filters_only(p, top: bool = True) -> bool:
    """True if every FILTER below the top level mentions only variables its
    own pattern certainly binds, and no optional operand is itself a Filter:
    the queries on which SPARQL engines that pass outer bindings into inner
    groups (rdflib does) and engines that simplify nested groups before
    reading an OPTIONAL's filter agree with SPARQL 1.1's scoping."""
    if isinstance(p, BGP):
        return True
    if isinstance(p, Filter):
        if not top and not expr_vars(p.expr) <= certain_vars(p.pattern):
            return False
        return scoped_filters_only(p.pattern, top)
    if isinstance(p, (LeftJoin, EqLeftJoin)) and isinstance(p.right, Filter):
        return False
    if isinstance(p, SeqRightJoin) and isinstance(p.left, Filter):
        return False
    return scoped_filters_only(p.left, False) and scoped_filters_only(p.right, False)


def _type_safe(e) -> bool:
    """No comparison can be a type error once its variables are bound."""
    if e is None or isinstance(e, (Bound, Dur, EVar, Num, Const)):
        return True
    if isinstance(e, Cmp):
        kinds = {("s" if (isinstance(x, EVar) and x.name in SUBJECT_VARS) or isinstance(x, Const)
                  else "n") for x in (e.left, e.right)}
        return kinds == {"n"} or (kinds == {"s"} and e.op in ("=", "!="))
    if isinstance(e, Not):
        return _type_safe(e.arg)
    return _type_safe(e.left) and _type_safe(e.right)


def error_free(p) -> bool:
    """Every FILTER and join condition mentions only variables bound in all
    the solutions it is evaluated on, and cannot raise a type error: the
    filters on which SPARQL's three-valued logic never comes into play."""
    if isinstance(p, BGP):
        return True
    if isinstance(p, Filter):
        return expr_vars(p.expr) <= certain_vars(p.pattern) and _type_safe(p.expr) \
            and error_free(p.pattern)
    cond = getattr(p, "expr", None)
    if cond is not None and not (expr_vars(cond) <= certain_vars(p.left) | certain_vars(p.right)
                                 and _type_safe(cond)):
        return False
    return error_free(p.left) and error_free(p.right)


def joins_on_certain_vars(p) -> bool:
    """Every variable shared by the two sides of a join-like operator is
    bound in every solution of both sides, and every BGP has a variable."""
    if isinstance(p, BGP):
        return bool(pattern_vars(p))
    if isinstance(p, Filter):
        return joins_on_certain_vars(p.pattern)
    if not isinstance(p, Union):
        shared = pattern_vars(p.left) & pattern_vars(p.right)
        if not shared <= certain_vars(p.left) & certain_vars(p.right):
            return False
    return joins_on_certain_vars(p.left) and joins_on_certain_vars(p.right)


# ---------------------------------------------------------------------------
# shrinking a failing case (for reports)
# ---------------------------------------------------------------------------
def _expr_shrinks(e):
    if isinstance(e, (And, Or)):
        yield e.left
        yield e.right
        for l2 in _expr_shrinks(e.left):
            yield type(e)(l2, e.right)
        for r2 in _expr_shrinks(e.right):
            yield type(e)(e.left, r2)
    elif isinstance(e, Not):
        yield e.arg
        for a in _expr_shrinks(e.arg):
            yield Not(a)


def _pattern_shrinks(p):
    if isinstance(p, BGP):
        if len(p.triples) > 1:
            for i in range(len(p.triples)):
                yield BGP(p.triples[:i] + p.triples[i + 1:])
        return
    if isinstance(p, Filter):
        yield p.pattern
        for e in _expr_shrinks(p.expr):
            yield Filter(e, p.pattern)
        for q in _pattern_shrinks(p.pattern):
            yield Filter(p.expr, q)
        return
    yield p.left
    yield p.right
    cond = getattr(p, "expr", None)
    if cond is not None:
        yield type(p)(p.left, p.right, None)
        for e in _expr_shrinks(cond):
            yield type(p)(p.left, p.right, e)
    extra = (cond,) if hasattr(p, "expr") else ()
    for q in _pattern_shrinks(p.left):
        yield type(p)(q, p.right, *extra)
    for q in _pattern_shrinks(p.right):
        yield type(p)(p.left, q, *extra)


def shrink(query: Select, stream: list, fails) -> tuple:
    """Greedy shrinking of a (query, stream) pair for which ``fails`` holds."""
    assert fails(query, stream)
    changed = True
    while changed:
        changed = False
        if query.projection is not None and fails(Select(query.pattern, None), stream):
            query, changed = Select(query.pattern, None), True
        for i in range(len(stream)):
            s2 = stream[:i] + stream[i + 1:]
            if fails(query, s2):
                stream, changed = s2, True
                break
        for p2 in _pattern_shrinks(query.pattern):
            q2 = Select(p2, query.projection)
            if query.projection is not None:
                vs = pattern_vars(p2)
                q2 = Select(p2, tuple(v for v in query.projection if v in vs) or None)
            if fails(q2, stream):
                query, changed = q2, True
                break
    return query, stream


# ---------------------------------------------------------------------------
# plain SPARQL cases, and rdflib's answers to them
# ---------------------------------------------------------------------------
def plain_cases(seed0, n, *, time=5):
    """Plain SPARQL queries in the fragment where rdflib's evaluation follows
    SPARQL 1.1 (filters on certainly bound variables, joins on certainly
    bound variables), over streams sharing one timestamp."""
    out, seed = [], seed0
    while len(out) < n:
        rng = _random.Random(seed)
        g = QueryGen(rng, ops=("Join", "Union", "LeftJoin", "Filter"), temporal=False,
                     filtered_optional_operand=False, predicate_vars=False)
        stream = [(s, p, o, time, time) for s, p, o, *_ in gen_stream(rng)]
        q = g.select()
        if scoped_filters_only(q.pattern) and error_free(q.pattern) \
                and joins_on_certain_vars(q.pattern):
            out.append((seed, q, stream))
        seed += 1
    return out


def rdflib_answers(q: Select, stream):
    """rdflib's answers as a Counter like ``answers``: the full solutions
    (SELECT *) as a set, each projected."""
    from rdflib import Graph
    g = Graph()
    for s, p, o, *_ in stream:
        g.add((s, p, o))
    res = g.query(render(Select(q.pattern, None)))
    full = {frozenset((str(v), row[v]) for v in res.vars if row[v] is not None) for row in res}
    t = stream[0][3]
    return Counter((project(m, q.projection), t, t) for m in full)
