"""Generated streams and queries for the differential tests of the dialects.

A case is a stream (rows on two named streams), background triples, and
one query written twice: in the dialect under test, and as the neutral
:class:`dialect_reference.RefQuery` (plain SPARQL 1.1 reading window i as
``GRAPH <urn:window:i>``).  Both are built from one description, so the
two texts say the same thing by construction; only the engine and the
reference evaluate them.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from dialect_reference import BACKGROUND, TIMESTAMP, RefQuery, RefWindow, Row

EX = "http://example.org/"
S1, S2 = EX + "s1", EX + "s2"
P, Q, V, NAME = (URIRef(EX + n) for n in ("p", "q", "v", "name"))
NODES = [URIRef(EX + n) for n in "abcd"]
PREFIX = f"PREFIX ex: <{EX}>\n"


def stream(rnd: random.Random, n: int) -> list[Row]:
    """n rows on S1/S2: ex:p and ex:q link nodes, ex:v gives an integer;
    time stamps nondecreasing, integers and halves."""
    t: float | int = rnd.choice([0, 1, 2])
    rows = []
    for _ in range(n):
        t = t + rnd.choice([0, 0, 1, 1, 1, 2, 3, 0.5])
        if isinstance(t, float) and t.is_integer():
            t = int(t)
        pred = rnd.choice([P, P, Q, V])
        o = Literal(rnd.randint(0, 4)) if pred == V else rnd.choice(NODES)
        rows.append(Row(rnd.choice([S1, S1, S2]), rnd.choice(NODES), pred, o, t))
    return rows


def background(rnd: random.Random) -> dict[str, list[tuple]]:
    """Names for some nodes, in the default background graph."""
    names = [(n, NAME, Literal(str(n)[-1].upper())) for n in NODES if rnd.random() < 0.7]
    return {BACKGROUND: names}


@dataclass
class Win:
    """A window in CQELS syntax and as a RefWindow (stream filled in later)."""

    text: str
    kind: str
    width: Fraction | None = None
    step: Fraction | None = None
    count: int | None = None


def cqels_window(rnd: random.Random, semantics: str = "engine") -> Win:
    """A CQELS window and its reference.  Engine semantics (CQELS reports on
    content change): a SLIDE or TUMBLING window holds t - a < τ <= t at
    each arrival, as one without; the CQL reading: its latest step's."""
    k = rnd.choice(["range", "range", "slide", "tumbling", "now", "all", "count", "ms"])
    stepped = semantics == "cql"
    a = rnd.choice([1, 2, 3, 5])
    if k == "range":
        return Win(f"RANGE {a}s", "range", Fraction(a))
    if k == "ms":
        return Win(f"RANGE {a * 1000 + 500}ms", "range", Fraction(a * 1000 + 500, 1000))
    if k == "slide":
        b = rnd.choice([1, 2])
        return Win(f"RANGE {a}s SLIDE {b}s", "range", Fraction(a), Fraction(b) if stepped else None)
    if k == "tumbling":
        return Win(f"RANGE {a}s TUMBLING", "range", Fraction(a), Fraction(a) if stepped else None)
    if k == "now":
        return Win("NOW", "now")
    if k == "all":
        return Win("ALL", "all")
    n = rnd.choice([1, 2, 3])
    return Win(f"TRIPLES {n}", "count", count=n)


def ref_window(w: Win, stream_iri: str | None, default: bool = False,
               graph: str | None = None, t0: Fraction | None = None,
               from_t0: bool = False) -> RefWindow:
    """``t0``: a time window with a step is closed-open from t0 (C-SPARQL's
    and RSP-QL's engine reading), from its first window on (``from_t0``)."""
    co = t0 is not None and w.kind == "range" and w.step is not None
    return RefWindow(stream_iri, w.kind, w.width, w.step, w.count, default=default, graph=graph,
                     t0=t0 if co else None, from_t0=from_t0 and co)


# --------------------------------------------------------------- CQELS queries

def cqels_query(rnd: random.Random, semantics: str = "engine") -> tuple[str, RefQuery]:
    """A random CQELS query and its neutral form, under ``semantics``."""
    shape = rnd.choice(SHAPES)
    w1, w2 = cqels_window(rnd, semantics), cqels_window(rnd, semantics)
    s1 = rnd.choice([S1, S2])
    s2 = rnd.choice([S1, S2])
    where_c, where_r, select, mods, nwin = shape(rnd, w1, w2, s1, s2)
    wins = [ref_window(w1, s1), ref_window(w2, s2)][:nwin]
    text = PREFIX + f"{select}\nWHERE {{ {where_c} }}\n{mods}"
    ref = PREFIX + f"{select}\nWHERE {{ {where_r} }}\n{mods}"
    return text, RefQuery(wins, ref, ("eager",), "istream")


def _st(s: str, w: Win, body: str) -> str:
    return f"STREAM <{s}> [{w.text}] {{ {body} }}"


def _g(i: int, body: str) -> str:
    return f"GRAPH <urn:window:{i}> {{ {body} }}"


def shape_basic(rnd, w1, w2, s1, s2):
    body = rnd.choice(["?x ex:p ?y", "?x ?pr ?y", "?x ex:v ?v", "ex:a ?pr ?y"])
    sel = {"?x ex:p ?y": "?x ?y", "?x ?pr ?y": "?x ?pr ?y", "?x ex:v ?v": "?x ?v",
           "ex:a ?pr ?y": "?pr ?y"}[body]
    return _st(s1, w1, body), _g(0, body), f"SELECT {sel}", "", 1


def shape_join(rnd, w1, w2, s1, s2):
    a, b = "?x ex:p ?y", rnd.choice(["?y ex:q ?z", "?y ex:p ?z", "?x ex:v ?z"])
    return (f"{_st(s1, w1, a)} {_st(s2, w2, b)}", f"{_g(0, a)} {_g(1, b)}",
            "SELECT ?x ?y ?z", "", 2)


def shape_background(rnd, w1, w2, s1, s2):
    a = "?x ex:p ?y"
    return (f"{_st(s1, w1, a)} ?y ex:name ?n", f"{_g(0, a)} ?y ex:name ?n",
            "SELECT ?x ?n", "", 1)


def shape_optional(rnd, w1, w2, s1, s2):
    a, b = "?x ex:p ?y", "?y ex:v ?v"
    return (f"{_st(s1, w1, a)} OPTIONAL {{ {_st(s2, w2, b)} }}",
            f"{_g(0, a)} OPTIONAL {{ {_g(1, b)} }}", "SELECT ?x ?y ?v", "", 2)


def shape_filter(rnd, w1, w2, s1, s2):
    a = "?x ex:v ?v"
    f = rnd.choice(["?v > 2", "?v <= 1 || ?x = ex:b", "?v != 3 && ?v >= 1", "isLiteral(?v)"])
    return (f"{_st(s1, w1, a)} FILTER ({f})", f"{_g(0, a)} FILTER ({f})", "SELECT ?x ?v", "", 1)


def shape_aggregate(rnd, w1, w2, s1, s2):
    a = "?x ex:v ?v"
    agg = rnd.choice(["(COUNT(?v) AS ?n)", "(SUM(?v) AS ?n)", "(MIN(?v) AS ?n)",
                      "(MAX(?v) AS ?n)", "(COUNT(DISTINCT ?v) AS ?n)", "(COUNT(*) AS ?n)",
                      "(AVG(?v) AS ?n)", "(SUM(DISTINCT ?v) AS ?n)"])
    grouped = rnd.random() < 0.7
    # ungrouped, with COUNT: rdflib 7.6 drops the one row of MIN/MAX alone
    # over no solutions (SPARQL 1.1 gives one row, the aggregate unbound)
    sel = f"SELECT ?x {agg}" if grouped else f"SELECT {agg} (COUNT(*) AS ?c)"
    mods = "GROUP BY ?x" if grouped else ""
    if grouped and rnd.random() < 0.4:
        mods += " HAVING (COUNT(?v) > 1)"
    return _st(s1, w1, a), _g(0, a), sel, mods, 1


def shape_union(rnd, w1, w2, s1, s2):
    a = "?x ex:p ?y"
    return (f"{{ {_st(s1, w1, a)} }} UNION {{ {_st(s2, w2, a)} }}",
            f"{{ {_g(0, a)} }} UNION {{ {_g(1, a)} }}", "SELECT ?x ?y", "", 2)


def shape_minus(rnd, w1, w2, s1, s2):
    a, b = "?x ex:p ?y", rnd.choice(["?x ex:p ?y", "?y ex:q ?z", "?x ex:v ?v"])
    return (f"{_st(s1, w1, a)} MINUS {{ {_st(s2, w2, b)} }}",
            f"{_g(0, a)} MINUS {{ {_g(1, b)} }}", "SELECT ?x ?y", "", 2)


def shape_nested(rnd, w1, w2, s1, s2):
    """MINUS / OPTIONAL with private variables, then more patterns."""
    a = "?x ex:p ?y"
    b = rnd.choice(["?y ex:q ?z", "?z ex:p ?y", "?x ex:v ?z"])
    op = rnd.choice(["MINUS", "OPTIONAL"])
    sel = "SELECT ?x ?y ?n" if op == "MINUS" else "SELECT ?x ?y ?z ?n"
    return (f"{_st(s1, w1, a)} {op} {{ {_st(s2, w2, b)} }} ?x ex:name ?n",
            f"{_g(0, a)} {op} {{ {_g(1, b)} }} ?x ex:name ?n", sel, "", 2)


def shape_modifiers(rnd, w1, w2, s1, s2):
    a = "?x ex:p ?y"
    sel, mods = rnd.choice([("SELECT DISTINCT ?x", ""), ("SELECT ?x ?y", "ORDER BY ?x ?y LIMIT 2"),
                            ("SELECT DISTINCT ?y", "ORDER BY DESC(?y) LIMIT 1 OFFSET 1"),
                            ("SELECT ?x", "")])
    return _st(s1, w1, a), _g(0, a), sel, mods, 1


def shape_bind(rnd, w1, w2, s1, s2):
    a = "?x ex:v ?v"
    e = rnd.choice(["?v * 2 + 1", "?v - 2", "IF(?v > 2, \"big\", \"small\")", "STR(?x)"])
    return (f"{_st(s1, w1, a)} BIND ({e} AS ?w)", f"{_g(0, a)} BIND ({e} AS ?w)",
            "SELECT ?x ?w", "", 1)


def shape_subquery(rnd, w1, w2, s1, s2):
    # HAVING: rdflib 7.6 gives a grouped sub-query over no solutions one
    # group (the top level correctly none); HAVING drops it, and changes
    # nothing else (every real group has a ?v)
    a = "?x ex:v ?v"
    inner_c = (f"{{ SELECT ?x (COUNT(?v) AS ?c) WHERE {{ {_st(s1, w1, a)} }} GROUP BY ?x "
               f"HAVING (COUNT(?v) > 0) }}")
    inner_r = (f"{{ SELECT ?x (COUNT(?v) AS ?c) WHERE {{ {_g(0, a)} }} GROUP BY ?x "
               f"HAVING (COUNT(?v) > 0) }}")
    return (f"{inner_c} ?x ex:name ?n", f"{inner_r} ?x ex:name ?n", "SELECT ?n ?c", "", 1)


def shape_values(rnd, w1, w2, s1, s2):
    a = "?x ex:p ?y"
    vals = "VALUES ?x { ex:a ex:c }"
    return f"{_st(s1, w1, a)} {vals}", f"{_g(0, a)} {vals}", "SELECT ?x ?y", "", 1


def shape_exists(rnd, w1, w2, s1, s2):
    a, b = "?x ex:p ?y", "?y ex:p ?z"
    neg = rnd.choice(["", "NOT "])
    return (f"{_st(s1, w1, a)} FILTER {neg}EXISTS {{ {_st(s2, w2, b)} }}",
            f"{_g(0, a)} FILTER {neg}EXISTS {{ {_g(1, b)} }}", "SELECT ?x ?y", "", 2)


def shape_path(rnd, w1, w2, s1, s2):
    """Property paths over window content (and sometimes joined with the
    background)."""
    body = rnd.choice(["?x ex:p+ ?y", "?x ex:p/ex:q ?y", "ex:a (ex:p|ex:q)* ?y", "?x ^ex:p ?y",
                       "ex:b ex:p? ?y", "?x ex:p/ex:p* ?y"])
    # DISTINCT for the closures: rdflib 7.6 gives the start node of a bound
    # `*` path twice when a cycle leads back to it (SPARQL 1.1's ALP
    # visits each node once)
    sel = "SELECT DISTINCT ?y" if body.startswith("ex:") else "SELECT ?x ?y"
    if rnd.random() < 0.3:
        return (f"{_st(s1, w1, body)} ?y ex:name ?n", f"{_g(0, body)} ?y ex:name ?n",
                sel + " ?n", "", 1)
    return _st(s1, w1, body), _g(0, body), sel, "", 1


SHAPES = [shape_basic, shape_join, shape_background, shape_optional, shape_filter,
          shape_aggregate, shape_union, shape_minus, shape_modifiers, shape_bind,
          shape_subquery, shape_values, shape_exists, shape_nested, shape_path]


# ------------------------------------------------------------- comparisons

def norm_term(x):
    """A term for comparison: numbers by value alone.  rdflib 7.6 gives
    ``?v * 2 + 1`` of an integer ?v as an xsd:decimal where SPARQL 1.1
    (and sparql_eval.pl, tested on its own) says xsd:integer, and writes
    decimals' lexical forms its own way; the numeric types are checked by
    tests/test_sparql_expr.py, not here."""
    if isinstance(x, Literal) and x.datatype in (XSD.integer, XSD.decimal, XSD.double,
                                                 XSD.float, XSD.int, XSD.long):
        v = x.toPython()
        if isinstance(v, (int, float, Decimal)):
            return ("num", round(float(v), 9))
    if isinstance(x, Literal) and x.datatype == XSD.dateTime:
        return ("dateTime", x.toPython().timestamp())          # by value, not lexical form
    return x


def answers_key(answers) -> dict:
    """{end: Counter((start, bindings))}: the answers of each evaluation as a
    bag (their order within an instant is not compared)."""
    out: dict = {}
    for start, end, b in answers:
        key = (float(Fraction(end)),)
        bag = out.setdefault(key, Counter())
        bag[(float(Fraction(start)), tuple(sorted((k, norm_term(v)) for k, v in b.items())))] += 1
    return out


# ------------------------------------------------------------- C-SPARQL queries

def csparql_window(rnd: random.Random) -> Win:
    k = rnd.choice(["step", "step", "tumbling", "count", "now", "all", "ms"])
    a = rnd.choice([1, 2, 3, 5])
    if k == "step":
        b = rnd.choice([1, 2, 3])
        return Win(f"RANGE {a}s STEP {b}s", "range", Fraction(a), Fraction(b))
    if k == "ms":
        return Win(f"RANGE {a * 1000}ms STEP 1500ms", "range", Fraction(a), Fraction(3, 2))
    if k == "tumbling":
        return Win(f"RANGE {a}s TUMBLING", "range", Fraction(a), Fraction(a))
    if k == "count":
        n = rnd.choice([1, 2, 3])
        return Win(f"TRIPLES {n}", "count", count=n)
    if k == "now":
        return Win("NOW", "now")
    return Win("ALL", "all")


def csparql_query(rnd: random.Random, semantics: str = "engine",
                  t0: Fraction = Fraction(0)) -> tuple[str, RefQuery]:
    """A random C-SPARQL query (one default window on S1, maybe a named
    one on S2) and its neutral form, under ``semantics``: engine, its time
    windows closed-open from ``t0`` (k >= 0, as CSRBench's oracle), or cql."""
    w1 = csparql_window(rnd)
    named = rnd.random() < 0.5
    w2 = csparql_window(rnd) if named else None
    co = dict(t0=t0, from_t0=True) if semantics == "engine" else {}
    clauses = f"FROM STREAM <{S1}> [{w1.text}]\n"
    wins = [ref_window(w1, S1, default=True, **co)]
    if named:
        clauses += f"FROM NAMED STREAM <{S2}> [{w2.text}]\n"
        wins.append(ref_window(w2, S2, graph=S2, **co))
    g2 = f"GRAPH <{S2}>" if named else ""
    shapes = [
        ("SELECT ?x ?y", "?x ex:p ?y", ""),
        ("SELECT ?x ?z", "?x ex:p ?y . ?y ex:p ?z", ""),
        ("SELECT ?x ?n", "?x ex:p ?y . ?y ex:name ?n", ""),
        ("SELECT ?x (COUNT(?v) AS ?n) (SUM(?v) AS ?s)", "?x ex:v ?v", "GROUP BY ?x"),
        ("SELECT (COUNT(*) AS ?n)", "?x ?pr ?y", ""),
        # with COUNT: rdflib 7.6 drops the one row of MAX/MIN alone over no solutions
        ("SELECT (MAX(?v) AS ?m) (MIN(?v) AS ?l) (COUNT(?v) AS ?c)", "?x ex:v ?v", ""),
        ("SELECT ?x ?v", "?x ex:v ?v FILTER (?v >= 2)", ""),
        ("SELECT DISTINCT ?x", "?x ?pr ?y", "ORDER BY ?x LIMIT 2"),
        ("SELECT ?x ?y ?v", "?x ex:p ?y OPTIONAL { ?y ex:v ?v }", ""),
        ("SELECT ?x ?y", "?x ex:p+ ?y", ""),
        ("SELECT DISTINCT ?y", "ex:a (ex:p|ex:q)* ?y", ""),   # see shape_path
        ("SELECT ?x ?z", "?x ex:p/ex:q ?z", ""),
        ("SELECT ?x ?n", "?x ^ex:p/ex:name ?n", ""),
        # C-SPARQL's timestamp(): the reference reads TIMESTAMP (see below)
        ("SELECT ?x ?y ?t", "?x ex:p ?y BIND (timestamp(?x, ex:p, ?y) AS ?t)", ""),
        ("SELECT ?x", "?x ex:p ?y . ?x ex:q ?z FILTER (f:timestamp(?x, ex:p, ?y) < f:timestamp(?x, ex:q, ?z))", ""),
        ("SELECT ?x ?t", "?x ex:v ?v BIND (timestamp(?x) AS ?t)", ""),
    ]
    if named:
        shapes += [
            ("SELECT ?x ?z", f"?x ex:p ?y {g2} {{ ?y ex:q ?z }}", ""),
            ("SELECT ?x ?y", f"{{ ?x ex:p ?y }} UNION {{ {g2} {{ ?x ex:p ?y }} }}", ""),
            ("SELECT ?x ?y", f"?x ex:p ?y MINUS {{ {g2} {{ ?x ex:p ?y }} }}", ""),
            ("SELECT ?x (COUNT(?z) AS ?n)", f"?x ex:p ?y OPTIONAL {{ {g2} {{ ?y ?pr ?z }} }}",
             "GROUP BY ?x"),
            # GRAPH ?g: the named window and the background graphs
            ("SELECT ?g ?x ?y", "GRAPH ?g { ?x ?pr ?y }", ""),
            ("SELECT ?g ?x", "?x ex:p ?y GRAPH ?g { ?y ex:q ?z }", ""),
        ]
    select, body, mods = rnd.choice(shapes)
    name = f"q{rnd.randint(0, 999)}"
    fns = "PREFIX f: <http://larkc.eu/csparql/sparql/jena/ext#>\n"
    text = f"REGISTER QUERY {name} AS\n{PREFIX}{fns}{select}\n{clauses}WHERE {{ {body} }}\n{mods}"
    body_r = body.replace("f:timestamp(", "timestamp(").replace("timestamp(", f"<{TIMESTAMP}>(")
    ref = PREFIX + f"{select}\nWHERE {{ {body_r} }}\n{mods}"
    return text, RefQuery(wins, ref, ("close", True), "rstream")


# ------------------------------------------- shapes shared by the other dialects
#
# A shape is (SELECT in the dialect, SELECT in SPARQL, WHERE body, modifiers)
# written with two readers, ``A(body)`` and ``B(body)``: each dialect says
# how a body is read through its first and second window, in its own syntax
# and in the reference's.  ``A`` may also be the query's default graph.

def shared_shapes(A, B, agg=None):
    """The shapes of a generated query, each a function building it (a
    reader may create a window when called); ``A``/``B`` map a body to a pair
    (dialect text, reference text); ``agg(name, arg, var)`` writes an
    aggregate projection in the dialect (SPARQL 1.1's ``(NAME(arg) AS var)``
    by default)."""
    def sparql_agg(name, arg, var):
        return f"({name}({arg}) AS {var})"
    agg = agg or sparql_agg

    def both(f):
        return f(0), f(1)

    def sel(*items):
        """SELECT items: plain variables or (name, arg, var) aggregates."""
        d = " ".join(i if isinstance(i, str) else agg(*i) for i in items)
        r = " ".join(i if isinstance(i, str) else sparql_agg(*i) for i in items)
        return d, r

    def cat(*parts):
        return tuple(" ".join(p[k] for p in parts) for k in (0, 1))

    def lit(text):
        return (text, text)

    shapes = [
        lambda: (sel("?x", "?y"), A("?x ex:p ?y"), ""),
        lambda: (sel("?x", "?z"), A("?x ex:p ?y . ?y ex:p ?z"), ""),
        lambda: (sel("?x", "?n"), cat(A("?x ex:p ?y"), lit(". ?y ex:name ?n")), ""),
        lambda: (sel("?x", ("COUNT", "?v", "?n"), ("SUM", "?v", "?s")), A("?x ex:v ?v"), "GROUP BY ?x"),
        lambda: (sel("?x", ("AVG", "?v", "?a")), A("?x ex:v ?v"), "GROUP BY ?x"),
        lambda: (sel(("COUNT", "*", "?n")), A("?x ?pr ?y"), ""),
        # with COUNT: rdflib 7.6 drops the one row of MAX/MIN alone over no solutions
        lambda: (sel(("MAX", "?v", "?m"), ("MIN", "?v", "?l"), ("COUNT", "?v", "?c")), A("?x ex:v ?v"), ""),
        lambda: (sel("?x", "?v"), A("?x ex:v ?v FILTER (?v >= 2)"), ""),
        lambda: (sel("DISTINCT ?x"), A("?x ?pr ?y"), "ORDER BY ?x LIMIT 2"),
        lambda: (sel("?x", "?y", "?v"), cat(A("?x ex:p ?y"), lit("OPTIONAL {"), B("?y ex:v ?v"), lit("}")), ""),
        lambda: (sel("?x", "?z"), cat(A("?x ex:p ?y"), B("?y ex:q ?z")), ""),
        lambda: (sel("?x", "?y"), cat(lit("{"), A("?x ex:p ?y"), lit("} UNION {"), B("?x ex:p ?y"), lit("}")), ""),
        lambda: (sel("?x", "?y"), cat(A("?x ex:p ?y"), lit("MINUS {"), B("?x ex:p ?y"), lit("}")), ""),
        lambda: (sel("?x", ("COUNT", "?z", "?n")),
         cat(A("?x ex:p ?y"), lit("OPTIONAL {"), B("?y ?pr ?z"), lit("}")), "GROUP BY ?x"),
    ]
    return shapes


def _pick_shape(rnd, A, B, agg=None):
    (sel_d, sel_r), (where_d, where_r), mods = rnd.choice(shared_shapes(A, B, agg))()
    return sel_d, sel_r, where_d, where_r, mods


# ------------------------------------------------------------- SPARQLstream

def sparqlstream_window(rnd: random.Random) -> tuple[str, RefWindow]:
    """A window in SPARQLstream syntax and as a RefWindow (stream filled in later)."""
    a = rnd.choice([2, 3, 5])
    k = rnd.choice(["step", "step", "nostep", "past", "past_nostep", "ms", "minute",
                    "morph", "morph", "morph_bare", "morph_past"])
    lead = rnd.choice(["FROM ", ""])
    unit = rnd.choice(["SECONDS", "seconds", "Second", "SECOND"])
    # morph-streams' forms (its grammar; SRBench's and CSRBench's queries)
    if k == "morph":
        b = rnd.choice([1, 2, 3])
        u, f = rnd.choice([("S", 1), (" S", 1), (" s", 1), (" SECONDS", 1), (" MS", 1000)])
        return (f"[NOW - {a * f}{u} SLIDE {b * f}{u}]",
                RefWindow(None, "range", Fraction(a), Fraction(b)))
    if k == "morph_bare":
        return f"[NOW - {a} S SLIDE]", RefWindow(None, "range", Fraction(a), Fraction(1))
    if k == "morph_past":
        d = rnd.choice([1, 2])
        a = d + rnd.choice([1, 2, 3])
        b = rnd.choice([1, 2])
        return (f"[NOW - {a} S TO NOW - {d} S SLIDE {b} S]",
                RefWindow(None, "past", Fraction(a), Fraction(b), delay=Fraction(d)))
    if k == "step":
        b = rnd.choice([1, 2, 3])
        return (f"[{lead}NOW - {a} {unit} TO NOW STEP {b} {unit}]",
                RefWindow(None, "range", Fraction(a), Fraction(b)))
    if k == "nostep":
        return f"[{lead}NOW - {a} {unit} TO NOW]", RefWindow(None, "range", Fraction(a))
    if k == "ms":
        return (f"[{lead}NOW-{a * 1000 + 500} MILLISECONDS TO NOW STEP 500 millisecond]",
                RefWindow(None, "range", Fraction(a * 1000 + 500, 1000), Fraction(1, 2)))
    if k == "minute":
        return (f"[{lead}NOW - 1 MINUTE TO NOW STEP 1 MINUTES]",
                RefWindow(None, "range", Fraction(60), Fraction(60)))
    d = rnd.choice([1, 2])
    a = d + rnd.choice([1, 2, 3])
    if k == "past":
        b = rnd.choice([1, 2])
        return (f"[{lead}NOW - {a} {unit} TO NOW - {d} {unit} STEP {b} {unit}]",
                RefWindow(None, "past", Fraction(a), Fraction(b), delay=Fraction(d)))
    return (f"[{lead}NOW - {a} {unit} TO NOW - {d} {unit}]",
            RefWindow(None, "past", Fraction(a), delay=Fraction(d)))


def sparqlstream_query(rnd: random.Random, semantics: str = "engine") -> tuple[str, RefQuery]:
    """A default window on S1 (the default graph), maybe a named one on S2
    read with GRAPH <S2> and, as morph-streams reads it, by plain patterns
    too (part of the default graph); an R2S operator after SELECT.  Under
    the engine ``semantics`` (morph-streams as CSRBench's oracle configures
    it) a time window with a step is closed-open from t0 = 0, every k, and
    an evaluation whose windows are all empty reports nothing; a window
    without a step or ending before NOW keeps the CQL definition."""
    import dataclasses
    t1, r1 = sparqlstream_window(rnd)
    t2, r2 = sparqlstream_window(rnd)
    if semantics == "engine":
        r1, r2 = (dataclasses.replace(r, t0=Fraction(0)) if r.kind == "range" and r.step is not None
                  else r for r in (r1, r2))

    def A(body):
        return body, body

    def B(body):
        return f"GRAPH <{S2}> {{ {body} }}", f"GRAPH <{S2}> {{ {body} }}"
    sel_d, sel_r, where_d, where_r, mods = _pick_shape(rnd, A, B)
    named = f"<{S2}>" in where_d or rnd.random() < 0.2
    # a query whose stream windows are all named reads them in the default
    # graph too (morph-streams); one with an unnamed window keeps the seed's
    only_named = rnd.random() < 0.3
    if only_named:
        clauses = f"FROM NAMED STREAM <{S1}> {t1}\n"
        wins = [dataclasses.replace(r1, stream=S1, graph=S1, default=semantics == "engine")]
    else:
        clauses = f"FROM STREAM <{S1}> {t1}\n"
        wins = [dataclasses.replace(r1, stream=S1, default=True)]
    if named:
        clauses += f"FROM NAMED STREAM <{S2}> {t2}\n"
        wins.append(dataclasses.replace(r2, stream=S2, graph=S2,
                                        default=only_named and semantics == "engine"))
    r2s = rnd.choice(["", "ISTREAM", "DSTREAM", "RSTREAM", "istream"])
    if r2s and rnd.random() < 0.3 and not sel_d.startswith("DISTINCT"):
        select = f"SELECT {r2s}({sel_d})"
    else:
        select = f"SELECT {r2s} {sel_d}"
    text = f"{PREFIX}{select}\n{clauses}WHERE {{ {where_d} }}\n{mods}"
    ref = f"{PREFIX}SELECT {sel_r}\nWHERE {{ {where_r} }}\n{mods}"
    return text, RefQuery(wins, ref, ("close", semantics == "engine"), (r2s or "rstream").lower())


# --------------------------------------------------------- Streaming SPARQL

def streaming_window(rnd: random.Random) -> tuple[str, RefWindow]:
    k = rnd.choice(["slide", "slide", "slide_default", "fixed", "elems", "ms", "minute"])
    a = rnd.choice([2, 3, 5])
    unit = rnd.choice(["S", "s"])
    if k == "slide":
        b = rnd.choice([1, 2])
        return f"WINDOW RANGE {a} {unit} SLIDE {b} {unit}", RefWindow(None, "range", Fraction(a), Fraction(b))
    if k == "slide_default":
        return f"WINDOW RANGE {a} {unit} SLIDE", RefWindow(None, "range", Fraction(a), Fraction(1))
    if k == "fixed":
        return f"WINDOW RANGE {a} {unit} FIXED", RefWindow(None, "range", Fraction(a), Fraction(a))
    if k == "ms":
        return (f"WINDOW RANGE {a * 1000} SLIDE 500 MS",
                RefWindow(None, "range", Fraction(a), Fraction(1, 2)))
    if k == "minute":
        return "WINDOW RANGE 1 MINUTE FIXED", RefWindow(None, "range", Fraction(60), Fraction(60))
    n = rnd.choice([1, 2, 3])
    return f"WINDOW ELEMS {n}", RefWindow(None, "count", count=n)


def streaming_sparql_query(rnd: random.Random) -> tuple[str, RefQuery]:
    """FROM STREAM <S1> with a window (the default graph); the second
    reader is a group with its own window on S1 (the innermost wins) or a
    FROM NAMED STREAM <S2> read with GRAPH."""
    import dataclasses
    t1, r1 = streaming_window(rnd)
    t2, r2 = streaming_window(rnd)
    inner = rnd.random() < 0.6
    wins = [dataclasses.replace(r1, stream=S1, default=True)]
    clauses = f"FROM STREAM <{S1}> {t1}\n"

    def A(body):
        return body, body
    if inner:
        def B(body):
            return f"{{ {body} {t2} }}", f"GRAPH <urn:window:1> {{ {body} }}"
    else:
        def B(body):
            return f"GRAPH <{S2}> {{ {body} }}", f"GRAPH <{S2}> {{ {body} }}"
    sel_d, sel_r, where_d, where_r, mods = _pick_shape(rnd, A, B)
    if inner and t2 in where_d:
        wins.append(dataclasses.replace(r2, stream=S1, with_background=True))
    elif not inner and f"<{S2}>" in where_d:
        clauses += f"FROM NAMED STREAM <{S2}> {t2}\n"
        wins.append(dataclasses.replace(r2, stream=S2, graph=S2))
    # sometimes the whole WHERE group has its own window: it replaces the
    # FROM window for the top-level patterns
    if inner and not any(w.with_background for w in wins) and rnd.random() < 0.3:
        t3, r3 = streaming_window(rnd)
        where_d = f"{where_d} {t3}"
        where_r = f"GRAPH <urn:window:1> {{ {where_r} }}"
        wins.append(dataclasses.replace(r3, stream=S1, with_background=True))
    text = f"{PREFIX}SELECT {sel_d}\n{clauses}WHERE {{ {where_d} }}\n{mods}"
    ref = f"{PREFIX}SELECT {sel_r}\nWHERE {{ {where_r} }}\n{mods}"
    return text, RefQuery(wins, ref, ("close", False), "rstream")


# ---------------------------------------------------------------- LUPOSDATE

LUPOS_AGG = {"COUNT": "count", "SUM": "sum", "AVG": "average", "MIN": "min", "MAX": "max"}


def luposdate_query(rnd: random.Random) -> tuple[str, RefQuery]:
    """WINDOW TYPE windows over every stream, patterns outside them over the
    whole stream so far, a result policy (DURATION, TRIPLES or none)."""
    wins: list[RefWindow] = []

    def window():
        if rnd.random() < 0.5:
            n = rnd.choice([1, 2, 3, 5])
            return f"WINDOW TYPE SLIDINGTRIPLES {n}", RefWindow(None, "count", count=n,
                                                               with_background=True)
        ms = rnd.choice([1000, 2000, 2500, 3000, 5000])
        return (f"WINDOW TYPE SLIDINGDURATION {ms}",
                RefWindow(None, "range", Fraction(ms, 1000), with_background=True))

    def reader(body):
        text, rw = window()
        wins.append(RefWindow(rw.stream, rw.kind, rw.width, rw.step, rw.count,
                              graph=f"urn:window:{len(wins)}", with_background=True))
        return f"{text} {{ {body} }}", f"GRAPH <{wins[-1].graph}> {{ {body} }}"

    def agg(name, arg, var):
        if name == "COUNT" and arg == "*":
            return f"(COUNT(*) AS {var})"
        return f"lupos:{LUPOS_AGG[name]}({arg}) AS {var}"
    sel_d, sel_r, where_d, where_r, mods = _pick_shape(rnd, reader, reader, agg)
    if rnd.random() < 0.25:
        where_d += " . ?x ex:p ?w0"
        where_r += " . ?x ex:p ?w0"
    if "ex:name" in where_d or "?w0" in where_d:
        # a pattern outside every window reads the whole stream so far
        wins.append(RefWindow(None, "all", default=True))
    policy_text, policy = rnd.choice([
        ("STREAM INTERMEDIATERESULT DURATION 1000", ("period", Fraction(1))),
        ("STREAM INTERMEDIATERESULT DURATION 1500", ("period", Fraction(3, 2))),
        ("STREAM INTERMEDIATERESULT DURATION 2000", ("period", Fraction(2))),
        ("STREAM INTERMEDIATERESULT TRIPLES 1", ("triples", 1)),
        ("STREAM INTERMEDIATERESULT TRIPLES 3", ("triples", 3)),
        ("", ("final",)),
    ])
    text = (f"{PREFIX}PREFIX lupos: <http://www.luposdate.org/>\nSELECT {sel_d}\n{policy_text}\n"
            f"WHERE {{ {where_d} }}\n{mods}")
    ref = f"{PREFIX}SELECT {sel_r}\nWHERE {{ {where_r} }}\n{mods}"
    return text, RefQuery(wins, ref, policy, "rstream")


# -------------------------------------------------------------------- RSP-QL

def rspql_window(rnd: random.Random) -> tuple[str, RefWindow]:
    a, b = rnd.choice([(2, 1), (3, 1), (3, 3), (5, 2), (2, 2)])
    if rnd.random() < 0.2:
        return "[RANGE PT2.5S STEP PT0.5S]", RefWindow(None, "range", Fraction(5, 2), Fraction(1, 2))
    if rnd.random() < 0.1:
        return "[RANGE PT1M STEP PT1M]", RefWindow(None, "range", Fraction(60), Fraction(60))
    return f"[RANGE PT{a}S STEP PT{b}S]", RefWindow(None, "range", Fraction(a), Fraction(b))


def rspql_query(rnd: random.Random, semantics: str = "engine",
                t0: Fraction = Fraction(0)) -> tuple[str, RefQuery]:
    """Named windows <w1> on S1 and maybe <w2> on S1 or S2, read with
    WINDOW <w> { … }; everything else reads the background.  Under the
    engine ``semantics`` the windows are closed-open from ``t0``, for
    every k (YASPER, rsp-js)."""
    import dataclasses
    w1, w2 = EX + "w1", EX + "w2"
    t1, r1 = rspql_window(rnd)
    t2, r2 = rspql_window(rnd)
    if semantics == "engine":
        r1, r2 = (dataclasses.replace(r, t0=t0) for r in (r1, r2))

    def reader(w):
        def read(body):
            return f"WINDOW <{w}> {{ {body} }}", f"GRAPH <{w}> {{ {body} }}"
        return read
    sel_d, sel_r, where_d, where_r, mods = _pick_shape(rnd, reader(w1), reader(w2))
    clauses = f"FROM NAMED WINDOW <{w1}> ON <{S1}> {t1}\n"
    wins = [dataclasses.replace(r1, stream=S1, graph=w1)]
    if f"<{w2}>" in where_d or rnd.random() < 0.2:
        s = rnd.choice([S1, S2])
        clauses += f"FROM NAMED WINDOW <{w2}> ON <{s}> {t2}\n"
        wins.append(dataclasses.replace(r2, stream=s, graph=w2))
    r2s = rnd.choice(["RSTREAM", "ISTREAM", "DSTREAM"])
    head = f"REGISTER {r2s} <{EX}out> AS\n"
    text = (f"{PREFIX}{head}SELECT {sel_d}\n{clauses}WHERE {{ {where_d} }}\n{mods}"
            if rnd.random() < 0.5 else
            f"{head}{PREFIX}SELECT {sel_d}\n{clauses}WHERE {{ {where_d} }}\n{mods}")
    ref = f"{PREFIX}SELECT {sel_r}\nWHERE {{ {where_r} }}\n{mods}"
    return text, RefQuery(wins, ref, ("close", False), r2s.lower())


# ---------------------------------------------------------------------------
# running a generated case through the engine
# ---------------------------------------------------------------------------
def run_engine(text: str, rows, bg, dialect: str, reasoning: str = "none",
               **options) -> list[tuple]:
    """A generated query over generated rows and background in a fresh
    Engine (``options``: more of its arguments, e.g. window_semantics):
    its answers as (start, end, bindings); the dialect must be the one
    detected, and the run must record no error."""
    import warnings

    from epsparql import Engine
    with Engine(reasoning=reasoning, **options) as eng:
        for g, triples in bg.items():
            eng.add_background(triples, graph=g)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # unbounded windows, on purpose
            q = eng.register(text)
        assert q.dialect == dialect
        eng.push_many((r.s, r.p, r.o, r.tau, None, r.stream) for r in rows)
        eng.flush()
        assert eng.errors == []
        return [(a.start, a.end, a.bindings) for a in q.results()]


def check_against_reference(seed: int, make_query, dialect: str, **options) -> None:
    """One generated stream, background and query of ``dialect`` (from
    ``make_query``): the engine's answers (an Engine with ``options``)
    equal the brute-force reference's."""
    from dialect_reference import evaluate
    rnd = random.Random(seed)
    rows = stream(rnd, rnd.randint(0, 25))
    bg = background(rnd)
    text, ref = make_query(rnd)
    expected = evaluate(ref, rows, bg)
    got = run_engine(text, rows, bg, dialect, **options)
    assert answers_key(got) == answers_key(expected), (text, rows)
