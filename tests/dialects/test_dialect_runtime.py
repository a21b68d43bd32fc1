"""The window runtime through epsparql.windowed: the worked examples of
docs/DIALECTS.md, memory, time, reasoning, bad input."""
from __future__ import annotations


import pytest
from rdflib import Literal, URIRef
from rdflib.namespace import RDF, RDFS

from epsparql.windowed import DEFAULT_STREAM, WindowEngine

EX = "http://example.org/"
RFID = EX + "rfid"
ann, bob, hall, at = (URIRef(EX + n) for n in ("ann", "bob", "hall", "detectedAt"))
P = f"PREFIX ex: <{EX}>\n"


def rows_of(q):
    return [(a.start, a.end, {k: str(v) for k, v in a.bindings.items()}) for a in q.results()]


@pytest.fixture
def eng():
    with WindowEngine() as e:
        yield e


def test_doc_example_cqels(eng):
    q = eng.register(P + """SELECT ?p ?room
WHERE {
  STREAM <http://example.org/rfid> [RANGE 3s] { ?p ex:detectedAt ?room }
}""")
    eng.push(ann, at, hall, 1, stream=RFID)
    eng.push(bob, at, hall, 2, stream=RFID)
    eng.flush()
    assert rows_of(q) == [(-2, 1, {"p": str(ann), "room": str(hall)}),
                          (-1, 2, {"p": str(bob), "room": str(hall)})]


def test_doc_example_csparql(eng):
    q = eng.register("REGISTER QUERY hallCount AS\n" + P + """SELECT (COUNT(?p) AS ?n)
FROM STREAM <http://example.org/rfid> [RANGE 10s STEP 5s]
WHERE { ?p ex:detectedAt ex:hall }""")
    assert q.name == "hallCount" and q.dialect == "csparql"
    eng.push(ann, at, hall, 1, stream=RFID)
    eng.push(bob, at, hall, 2, stream=RFID)
    eng.flush()
    assert rows_of(q) == [(-5, 5, {"n": "2"})]
    eng.advance(15)                      # 10 has both rows; 15 is empty: not evaluated
    assert rows_of(q) == [(0, 10, {"n": "2"})]


def test_advance_evaluates_up_to_the_watermark(eng):
    q = eng.register("SELECT ?p WHERE { STREAM <%s> [RANGE 2s SLIDE 1s] { ?p ?x ?y } }" % RFID)
    eng.push(ann, at, hall, 1, stream=RFID)
    assert q.results() == []             # instant 1 is not complete yet
    eng.advance(1)
    assert rows_of(q) == [(-1, 1, {"p": str(ann)})]


def test_memory_is_bounded_by_the_window(eng):
    eng.register(P + "SELECT ?k (AVG(?v) AS ?a) FROM STREAM <%s> [RANGE 10s STEP 1s] "
                 "WHERE { ?k ex:price ?v } GROUP BY ?k" % RFID, dialect="csparql")
    price = URIRef(EX + "price")
    sizes = []
    for block in range(6):
        rows = [(URIRef(EX + f"k{i % 7}"), price, Literal(i), (block * 5000 + i) / 100)
                for i in range(5000)]
        eng.push_many(rows, stream=RFID)
        sizes.append(eng.stats()["content"])
    # 100 rows a second, 10 s window: about 1,000 distinct triples, whatever the length
    assert max(sizes) <= 1100 and sizes[-1] == sizes[1]


def test_late_rows_go_to_the_side_output():
    late = []
    with WindowEngine(allowed_lateness=1.0, on_late=lambda row, src: late.append(row)) as eng:
        q = eng.register("SELECT ?p WHERE { STREAM <%s> [NOW] { ?p ?x ?y } }" % RFID)
        eng.push(ann, at, hall, 5, stream=RFID)
        eng.push(bob, at, hall, 4.5, stream=RFID)      # within the lateness: reordered
        eng.push(bob, at, hall, 7, stream=RFID)
        eng.push(ann, at, hall, 3, stream=RFID)        # too late
        eng.flush()
        assert [a.end for a in q.results()] == [4.5, 5, 7]
        assert eng.late == 1 and len(late) == 1 and late[0][3] == 3


def test_rdfs_over_window_content():
    dog, animal, rex = URIRef(EX + "Dog"), URIRef(EX + "Animal"), URIRef(EX + "rex")
    text = P + "SELECT ?x WHERE { STREAM <%s> [NOW] { ?x a ex:Animal } }" % RFID
    for reasoning, expected in (("rdfs", [str(rex)]), ("none", [])):
        with WindowEngine(reasoning=reasoning) as eng:
            eng.engine.add_background([(dog, RDFS.subClassOf, animal)])
            q = eng.register(text)
            eng.push(rex, RDF.type, dog, 1, stream=RFID)
            eng.flush()
            assert [r[2]["x"] for r in rows_of(q)] == expected


def test_stream_variable_binds_each_stream(eng):
    s1, s2 = EX + "s1", EX + "s2"
    q = eng.register("SELECT ?g ?p WHERE { STREAM ?g [TRIPLES 1] { ?p ?x ?y } }")
    eng.push(ann, at, hall, 1, stream=s1)
    eng.push(bob, at, hall, 2, stream=s2)
    eng.push(bob, at, hall, 3, stream=s1)
    eng.flush()
    # ISTREAM: what each arrival added, the last triple of each stream
    assert [(e, r["g"], r["p"]) for _, e, r in rows_of(q)] == [
        (1, s1, str(ann)), (2, s2, str(bob)), (3, s1, str(bob))]


def test_default_stream_and_construct(eng):
    q = eng.register(P + "CONSTRUCT { ?p ex:seenIn ?r } WHERE { STREAM <%s> [NOW] { ?p ex:detectedAt ?r } }"
                     % DEFAULT_STREAM)
    eng.push(ann, at, hall, 1)
    eng.flush()
    [a] = q.results()
    assert a.triples == ((ann, URIRef(EX + "seenIn"), hall),)


def test_data_is_never_prolog_source(eng):
    nasty = Literal("x'), halt. ok('\\\"")
    q = eng.register("SELECT ?o WHERE { STREAM <%s> [NOW] { ?s ?p ?o } }" % RFID)
    eng.push(ann, at, nasty, 1, stream=RFID)
    eng.flush()
    assert [a.bindings["o"] for a in q.results()] == [nasty]


def test_a_failing_function_does_not_stop_the_engine(eng):
    def boom(x):
        raise RuntimeError("no")
    eng.engine.register_function(EX + "boom", boom)
    q = eng.register(P + "SELECT ?p WHERE { STREAM <%s> [NOW] { ?p ?x ?y } "
                     "FILTER (ex:boom(?p) || true) }" % RFID)
    eng.push(ann, at, hall, 1, stream=RFID)
    eng.flush()
    assert [a.bindings["p"] for a in q.results()] == [ann]   # error || true is true


def test_bad_rows_name_their_index(eng):
    eng.register("SELECT ?p WHERE { STREAM <%s> [NOW] { ?p ?x ?y } }" % RFID)
    with pytest.raises(TypeError, match="row 1"):
        eng.push_many([(ann, at, hall, 1), ("ann", at, hall, 2)], stream=RFID)
    with pytest.raises(ValueError, match="row 0: end"):
        eng.push_many([(ann, at, hall, 3, 2)], stream=RFID)


def test_all_window_warns(eng):
    with pytest.warns(UserWarning, match="ALL"):
        eng.register("SELECT ?p WHERE { STREAM <%s> [ALL] { ?p ?x ?y } }" % RFID)
