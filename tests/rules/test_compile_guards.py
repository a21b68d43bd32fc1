"""Numeric FILTER comparisons compile to inline arithmetic guarded by
'both sides are numbers'.  A variable that every solution of the filtered
pattern binds needs no nonvar/1 test; one that may be unbound (optional
side, one union branch, BIND) keeps it, or the guard's unification would
bind it."""
from __future__ import annotations

from rdflib import Literal, URIRef

from epsparql import Engine
from epsparql.algebra.nodes import (BGP, Background, EqJoin, EqLeftJoin, Extend, Filter, Join,
                                    LeftJoin, SeqJoin, SeqRightJoin, Triple, Union_, Window)
from epsparql.rules.from_algebra import certainly_bound

NS = "http://epsparql.org/ns#"


def _var(name):
    from epsparql.language.ast import Var
    return Var(name)


def bgp(*names):
    return BGP(tuple(Triple(_var(a), URIRef(NS + "p"), _var(b)) for a, b in names))


def test_certainly_bound():
    a, b, c = bgp(("k", "a")), bgp(("k", "b")), bgp(("k", "c"))
    assert certainly_bound(a) == {"k", "a"}
    for op in (Join, SeqJoin, EqJoin):
        assert certainly_bound(op(a, b)) == {"k", "a", "b"}
    for op in (Union_, LeftJoin, SeqRightJoin, EqLeftJoin):
        assert certainly_bound(op(a, b)) == {"k"}
    assert certainly_bound(Window(SeqJoin(a, Filter(None, b)), 10.0)) == {"k", "a", "b"}
    assert certainly_bound(Extend(a, _var("d"), None)) == {"k", "a"}
    assert certainly_bound(Join(a, Background(URIRef(NS + "g"), b.triples))) == {"k", "a"}
    assert certainly_bound(Union_(SeqJoin(a, b), SeqJoin(b, c))) == {"k", "b"}
    # a variable predicate is bound by the event too
    assert certainly_bound(BGP((Triple(_var("s"), _var("p"), _var("o")),))) == {"s", "p", "o"}


def guards(text):
    e = Engine()
    try:
        return e.register(text).rules
    finally:
        e.close()


def test_guards_in_compiled_rules():
    seq = guards("SELECT ?k WHERE { ?k :price ?p1 } SEQ { ?k :price ?p2 } FILTER (?p2 > ?p1 * 1.05)")
    assert "nonvar(" not in seq and "= n(" in seq
    opt = guards("SELECT ?k WHERE { ?k :price ?p1 OPTIONAL { ?k :vol ?v } FILTER (?v > ?p1) }")
    assert opt.count("nonvar(") == 2
    bind = guards("SELECT ?k WHERE { ?k :price ?p . BIND(?p * 2 AS ?d) FILTER (?d > 3) }")
    assert "nonvar(" in bind


def test_optional_variable_in_a_numeric_filter_stays_unbound():
    # ?v may be unbound: its comparison is then an error and the filter drops
    # the solution (with a guard that bound ?v, the arithmetic would raise)
    e = Engine()
    try:
        q = e.register("SELECT ?k ?v WHERE { ?k :price ?p OPTIONAL { ?k :vol ?v } "
                       "FILTER (?v < 100) }")
        k1, k2 = URIRef(NS + "k1"), URIRef(NS + "k2")
        price, vol = URIRef(NS + "price"), URIRef(NS + "vol")
        e.push_many([(k1, vol, Literal(3), 1), (k1, price, Literal(5), 2),
                     (k2, price, Literal(7), 3), (k1, vol, Literal(300), 4),
                     (k1, price, Literal(6), 5)])
        e.flush()
        got = sorted((str(a["k"]), int(a["v"]), a.start) for a in q.results())
        assert got == [(NS + "k1", 3, 1), (NS + "k1", 3, 1)]
        assert e.errors == []
    finally:
        e.close()
