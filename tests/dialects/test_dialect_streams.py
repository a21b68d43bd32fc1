"""Streams that queries write (CONSTRUCT results fed back), timestamp(),
property paths and GRAPH ?g / WINDOW ?w over windows: the runtime through
Engine (the generated differential tests cover timestamp(),
paths and GRAPH ?g against the reference too)."""
from __future__ import annotations

import pytest
from rdflib import Literal, URIRef

from epsparql.language import QueryError
from epsparql import Engine

EX = "http://example.org/"
RFID = EX + "rfid"
P = f"PREFIX ex: <{EX}>\n"
ann, bob, hall, room, at = (URIRef(EX + n) for n in ("ann", "bob", "hall", "room", "at"))


def rows_of(q):
    return sorted(((a.start, a.end, {k: str(v) for k, v in a.bindings.items()})
                   for a in q.results()), key=str)


@pytest.fixture
def eng():
    with Engine() as e:
        yield e


def push_rfid(eng):
    eng.push_many([(ann, at, hall, 1), (bob, at, hall, 2), (ann, at, room, 7)], stream=RFID)


def test_csparql_register_stream_feeds_other_queries(eng):
    up = eng.register("REGISTER STREAM seen AS " + P + """CONSTRUCT { ?p ex:seenIn ?r }
FROM STREAM <http://example.org/rfid> [RANGE 5s TUMBLING] WHERE { ?p ex:at ?r }""",
                      window_semantics="cql")       # (the windows (c - a, c] of the numbers below)
    assert str(up.algebra.output) == "urn:epsparql:stream:seen"
    down = eng.register("REGISTER QUERY counts AS " + P + """SELECT ?r (COUNT(?p) AS ?n)
FROM STREAM <urn:epsparql:stream:seen> [RANGE 10s STEP 5s] WHERE { ?p ex:seenIn ?r } GROUP BY ?r""",
                        window_semantics="cql")
    push_rfid(eng)
    eng.advance(20)
    assert [a.triples for a in up.results()] == [
        ((ann, URIRef(EX + "seenIn"), hall),), ((bob, URIRef(EX + "seenIn"), hall),),
        ((ann, URIRef(EX + "seenIn"), room),)]
    # the triples written at 5 are stamped 5 and read by the windows from then on
    assert rows_of(down) == sorted([(-5, 5, {"r": str(hall), "n": "2"}),
                                    (0, 10, {"r": str(hall), "n": "2"}),
                                    (5, 15, {"r": str(room), "n": "1"})], key=str)
    assert eng.errors == []


def test_rspql_istream_construct_writes_its_output_stream(eng):
    pairs = eng.register(P + """REGISTER ISTREAM <http://example.org/pairs> AS
CONSTRUCT { ?p ex:with ?q } FROM NAMED WINDOW ex:w ON ex:rfid [RANGE PT10S STEP PT5S]
WHERE { WINDOW ex:w { ?p ex:at ?r . ?q ex:at ?r FILTER (?p != ?q) } }""")
    assert pairs.name == EX + "pairs"
    reader = eng.register("SELECT ?a ?b WHERE { STREAM <http://example.org/pairs> [NOW] "
                          "{ ?a <http://example.org/with> ?b } }", dialect="cqels")
    push_rfid(eng)
    eng.advance(20)
    got = rows_of(reader)
    assert got == sorted([(5, 5, {"a": str(ann), "b": str(bob)}),
                          (5, 5, {"a": str(bob), "b": str(ann)})], key=str)


def test_a_query_reading_its_own_output_stops_with_an_error(eng):
    eng.register("REGISTER STREAM <http://example.org/loop> AS " + P + """CONSTRUCT { ?s ex:again ?o }
FROM STREAM <http://example.org/loop> [NOW] WHERE { ?s ?p ?o }""")
    eng.push(ann, at, hall, 1, stream=EX + "loop")
    eng.flush()
    assert any("stopped after 100 rounds" in e.message for e in eng.errors)


def test_register_stream_is_for_construct():
    from epsparql.language.dialects import parse_dialect
    with pytest.raises(QueryError, match="REGISTER STREAM is for CONSTRUCT"):
        parse_dialect("REGISTER STREAM s AS SELECT ?a FROM STREAM <s> [NOW] WHERE { ?a ?b ?c }")


def test_timestamp_of_a_triple_and_of_a_term(eng):
    q = eng.register("REGISTER QUERY t AS " + P + """PREFIX f: <http://larkc.eu/csparql/sparql/jena/ext#>
SELECT ?p ?t ?last FROM STREAM <http://example.org/rfid> [RANGE 10s STEP 10s]
WHERE { ?p ex:at ex:hall . ?p ex:at ex:room
        FILTER (f:timestamp(?p, ex:at, ex:hall) < timestamp(?p, ex:at, ex:room))
        BIND (timestamp(?p, ex:at, ex:hall) AS ?t) BIND (timestamp(?p) AS ?last) }""")
    push_rfid(eng)
    eng.push(bob, at, room, 0.5, stream=EX + "other")      # another stream: not in the window
    eng.push(bob, at, room, 8, stream=RFID)
    eng.flush()
    assert rows_of(q) == sorted([
        (0, 10, {"p": str(ann), "t": "1970-01-01T00:00:01Z", "last": "1970-01-01T00:00:07Z"}),
        (0, 10, {"p": str(bob), "t": "1970-01-01T00:00:02Z", "last": "1970-01-01T00:00:08Z"})], key=str)


def test_timestamp_with_a_stream_reads_only_that_stream(eng):
    q = eng.register(P + """SELECT ?p ?t WHERE {
  STREAM ?g [RANGE 10s] { ?p ex:at ?r } FILTER (?g = ex:rfid)
  BIND (timestamp(?p, <http://example.org/other>) AS ?t) }""")
    eng.push(ann, at, hall, 1, stream=EX + "other")
    eng.push(ann, at, room, 2, stream=RFID)
    eng.flush()
    got = [(a.end, str(a.bindings["t"])) for a in q.results()]
    assert got == [(2, "1970-01-01T00:00:01Z")]


def test_paths_over_window_and_background(eng):
    nxt = URIRef(EX + "next")
    eng.add_background([(URIRef(EX + "c"), nxt, URIRef(EX + "d"))])
    q = eng.register("REGISTER QUERY t AS " + P + """SELECT ?y FROM STREAM <http://example.org/rfid>
[RANGE 10s STEP 5s] WHERE { ex:a ex:next+ ?y }""", window_semantics="cql")
    eng.push_many([(URIRef(EX + "a"), nxt, URIRef(EX + "b"), 1),
                   (URIRef(EX + "b"), nxt, URIRef(EX + "c"), 2)], stream=RFID)
    eng.advance(5)
    assert [r[2]["y"][-1] for r in rows_of(q)] == ["b", "c", "d"]
    eng.advance(15)             # (5, 15]: the window is empty, C-SPARQL reports nothing
    assert rows_of(q) == [(0, 10, {"y": EX + "b"}), (0, 10, {"y": EX + "c"}),
                          (0, 10, {"y": EX + "d"})]


def test_graph_var_ranges_over_named_windows_and_background(eng):
    eng.add_background([(ann, URIRef(EX + "name"), Literal("Ann"))], graph=EX + "people")
    q = eng.register("REGISTER QUERY g AS " + P + """SELECT ?g ?x
FROM NAMED STREAM <http://example.org/s1> [RANGE 10s STEP 5s]
FROM NAMED STREAM <http://example.org/s2> [RANGE 10s STEP 5s]
WHERE { GRAPH ?g { ?x ?p ?y } }""", window_semantics="cql")
    eng.push(ann, at, hall, 1, stream=EX + "s1")
    eng.push(bob, at, hall, 2, stream=EX + "s2")
    eng.flush()
    assert rows_of(q) == sorted([(-5, 5, {"g": EX + "s1", "x": str(ann)}),
                                 (-5, 5, {"g": EX + "s2", "x": str(bob)}),
                                 (-5, 5, {"g": EX + "people", "x": str(ann)})], key=str)


def test_rspql_window_var_ranges_over_named_windows(eng):
    q = eng.register(P + """REGISTER RSTREAM <http://example.org/o> AS
SELECT ?w ?x FROM NAMED WINDOW ex:w1 ON ex:s1 [RANGE PT10S STEP PT5S]
FROM NAMED WINDOW ex:w2 ON ex:s2 [RANGE PT10S STEP PT5S]
WHERE { WINDOW ?w { ?x ?p ?y } }""")
    eng.push(ann, at, hall, 6, stream=EX + "s1")
    eng.push(bob, at, hall, 7, stream=EX + "s2")
    eng.flush()
    # RSP-QL's windows [5k, 5k + 10) (t0 = 0): 6 and 7 are in [0, 10) and [5, 15)
    assert rows_of(q) == sorted([(0, 10, {"w": EX + "w1", "x": str(ann)}),
                                 (0, 10, {"w": EX + "w2", "x": str(bob)}),
                                 (5, 15, {"w": EX + "w1", "x": str(ann)}),
                                 (5, 15, {"w": EX + "w2", "x": str(bob)})], key=str)
