"""Background knowledge and RDFS reasoning during detection."""
from __future__ import annotations

import pytest
from rdflib import Graph, Literal, RDF, URIRef

from epsparql import Engine, QueryError

NS = "http://epsparql.org/ns#"
BG = "urn:epsparql:background"
SCHEMA = """@prefix : <http://epsparql.org/ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
:Oak rdfs:subClassOf :Tree . :Tree rdfs:subClassOf :Plant .
:Plant rdfs:subClassOf :Tree .                       # a cycle
:hasParent rdfs:subPropertyOf :hasAncestor .
:hasAncestor rdfs:subPropertyOf :relatedTo .
:eats rdfs:domain :Animal ; rdfs:range :Food .
:Animal rdfs:subClassOf :Being .
:a :road :b . :b :road :c . :c :road :a . :c :road :d .
"""


def U(x: str) -> URIRef:
    return URIRef(NS + x)


@pytest.fixture
def engine():
    e = Engine()
    e.load_background(SCHEMA)
    yield e
    e.close()


def answers(q):
    return sorted(tuple(sorted((k, str(v)) for k, v in a.bindings.items())) + (a.start, a.end)
                  for a in q.results())


def test_type_matches_every_super_class_including_through_a_cycle(engine):
    plant = engine.register("SELECT ?x WHERE { ?x a :Plant }")
    tree = engine.register("SELECT ?x WHERE { ?x a :Tree }")
    any_class = engine.register("SELECT ?c WHERE { :o1 a ?c }")
    engine.push(U("o1"), RDF.type, U("Oak"), 1)
    assert answers(plant) == [(("x", NS + "o1"), 1, 1)]
    assert answers(tree) == [(("x", NS + "o1"), 1, 1)]
    assert {a[0][1] for a in answers(any_class)} == {NS + "Oak", NS + "Tree", NS + "Plant"}


def test_sub_property_transitivity(engine):
    q = engine.register("SELECT ?x ?y WHERE { ?x :relatedTo ?y }")
    exact = engine.register("SELECT ?x WHERE { ?x :hasParent ?y }")
    engine.push(U("p"), U("hasParent"), U("q"), 1)
    engine.push(U("r"), U("relatedTo"), U("s"), 2)
    assert answers(q) == [(("x", NS + "p"), ("y", NS + "q"), 1, 1),
                          (("x", NS + "r"), ("y", NS + "s"), 2, 2)]
    assert len(answers(exact)) == 1          # no super-property goes down


def test_domain_and_range(engine):
    being = engine.register("SELECT ?x WHERE { ?x a :Being }")
    food = engine.register("SELECT ?x WHERE { ?x a :Food }")
    engine.push(U("cat"), U("eats"), U("mouse"), 3, 4)
    assert answers(being) == [(("x", NS + "cat"), 3, 4)]
    assert answers(food) == [(("x", NS + "mouse"), 3, 4)]


def test_reasoning_none_matches_only_what_is_there():
    e = Engine(reasoning="none")
    try:
        e.load_background(SCHEMA)
        q = e.register("SELECT ?x WHERE { ?x a :Plant }")
        e.push(U("o1"), RDF.type, U("Oak"), 1)
        e.push(U("o2"), RDF.type, U("Plant"), 2)
        assert answers(q) == [(("x", NS + "o2"), 2, 2)]
    finally:
        e.close()


def test_background_graph_joins_add_no_time_and_paths_follow_cycles(engine):
    q = engine.register(f"SELECT ?v ?to WHERE {{ ?v :at ?from GRAPH <{BG}> {{ ?from :road+ ?to }} }}")
    engine.push(U("van"), U("at"), U("a"), 10, 12)
    got = answers(q)
    assert {a[0][1] for a in got} == {NS + "a", NS + "b", NS + "c", NS + "d"}
    assert {(a[2], a[3]) for a in got} == {(10, 12)}      # the stream triple's interval only


def test_paths_star_inverse_sequence_alternative(engine):
    star = engine.register(f"SELECT ?to WHERE {{ ?v :at ?f GRAPH <{BG}> {{ ?f :road* ?to }} }}")
    inv = engine.register(f"SELECT ?to WHERE {{ ?v :at ?f GRAPH <{BG}> {{ ?f ^:road ?to }} }}")
    seq = engine.register(f"SELECT ?to WHERE {{ ?v :at ?f GRAPH <{BG}> {{ ?f :road/:road ?to }} }}")
    alt = engine.register(f"SELECT ?to WHERE {{ ?v :at ?f GRAPH <{BG}> {{ ?f (:road|^:road) ?to }} }}")
    engine.push(U("van"), U("at"), U("d"), 1)
    assert [a[0][1] for a in answers(star)] == [NS + "d"]
    assert [a[0][1] for a in answers(inv)] == [NS + "c"]
    assert answers(seq) == []
    assert [a[0][1] for a in answers(alt)] == [NS + "c"]
    engine.push(U("van"), U("at"), U("c"), 2)
    assert {a[0][1] for a in answers(seq)} == {NS + "b"}


def test_background_graph_uses_entailment_and_optional(engine):
    q = engine.register(f"""SELECT ?x ?p WHERE {{ ?x :seen ?t
        OPTIONAL {{ GRAPH <{BG}> {{ ?x :relatedTo ?p }} }} }}""")
    engine.add_background([(U("kid"), U("hasParent"), U("mum"))])
    engine.push_many([(U("kid"), U("seen"), Literal(1), 1), (U("dog"), U("seen"), Literal(1), 2)])
    assert answers(q) == [(("p", NS + "mum"), ("x", NS + "kid"), 1, 1), (("x", NS + "dog"), 2, 2)]


def test_updates_take_effect_for_later_events(engine):
    q = engine.register("SELECT ?x WHERE { ?x a :Mammal }")
    engine.push(U("cow"), RDF.type, U("Cow"), 1)
    assert answers(q) == []
    engine.add_background([(U("Cow"), URIRef("http://www.w3.org/2000/01/rdf-schema#subClassOf"), U("Mammal"))])
    engine.push(U("bull"), RDF.type, U("Cow"), 2)
    assert answers(q) == [(("x", NS + "bull"), 2, 2)]
    engine.remove_background([(U("Cow"), URIRef("http://www.w3.org/2000/01/rdf-schema#subClassOf"), U("Mammal"))])
    engine.push(U("calf"), RDF.type, U("Cow"), 3)
    assert answers(q) == []


def test_load_from_file_graph_and_formats(tmp_path):
    f = tmp_path / "bg.nt"
    f.write_text(f"<{NS}A> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <{NS}B> .\n")
    g = Graph()
    g.add((U("B"), URIRef("http://www.w3.org/2000/01/rdf-schema#subClassOf"), U("C")))
    e = Engine()
    try:
        assert e.load_background(str(f)) == 1
        assert e.load_background(g, graph="http://ex/g2") == 2
        q = e.register("SELECT ?x WHERE { ?x a :C }")
        e.push(U("x"), RDF.type, U("A"), 1)
        assert answers(q) == [(("x", NS + "x"), 1, 1)]
        named = e.register("SELECT ?s WHERE { ?s :p ?o GRAPH <http://ex/g2> { ?a ?b ?c } }")
        e.push(U("s"), U("p"), U("o"), 2)
        assert len(answers(named)) == 1
    finally:
        e.close()


def test_owlrl_materialises_the_background_first():
    e = Engine(reasoning="owlrl")
    try:
        e.load_background("""@prefix : <http://epsparql.org/ns#> .
            @prefix owl: <http://www.w3.org/2002/07/owl#> .
            :likes owl:inverseOf :likedBy . :ann :likes :bob .""")
        q = e.register("SELECT ?x ?y WHERE { ?t :tick ?n GRAPH <urn:epsparql:background> { ?x :likedBy ?y } }")
        e.push(U("t"), U("tick"), Literal(1), 1)
        assert answers(q) == [(("x", NS + "bob"), ("y", NS + "ann"), 1, 1)]
    finally:
        e.close()


def test_background_only_query_is_rejected(engine):
    with pytest.raises(QueryError, match="stream"):
        engine.register(f"SELECT ?a WHERE {{ GRAPH <{BG}> {{ ?a :road ?b }} }}")


def test_a_background_join_is_not_reported_as_unbounded(engine):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        engine.register(f"SELECT ?a ?alt WHERE {{ ?a :at ?l . GRAPH <{BG}> {{ ?l :road ?alt }} }}")
