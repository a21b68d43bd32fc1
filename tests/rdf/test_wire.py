"""The batch format of stream triples (epsparql.rdf.wire): a term table per
batch (IRIs and blank nodes written once, bound to variables), datatype
IRIs named by process-wide variables, and the bridge entry py_push_table/3
that reads it as data.  Checked: terms arrive exactly (RDF term identity,
byte-identical lexical forms) whatever the data looks like, several terms
sharing text stay distinct, the caches' limits change nothing, and
malformed batch text is rejected, never run."""
from __future__ import annotations

import pytest
from rdflib import BNode, Literal, URIRef

from epsparql import Engine
from epsparql.core import CoreEngine, PrologError
from epsparql.core.terms import Compound, PlString
from epsparql.rdf import codec, wire

EX = "http://ex.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"

# text that is Prolog syntax, variable names the format itself uses,
# quotes, escapes, control characters, non-ASCII
NASTY = ["I0", "D0", "_", "A", "X", "I0,I1", "'", '"', "\\", "\\'", "'), halt, ('", '"), halt, ("',
         ":- halt.", "]).", "b([],[],[])", "e(triple(I0,I0,I0),1,1)", "line\nbreak", "tab\tx",
         "nul\x00byte", "bell\x07", "emoji 🚀 漢字", "0'c", "{}", "%", "/*", "x" * 300]


@pytest.fixture
def engine():
    e = Engine()
    yield e
    e.close()


def iri(text: str) -> URIRef:
    return URIRef(EX + text.replace("\n", "%0A").replace("\x00", "%00").replace(" ", "%20"))


def all_triples(engine):
    return engine.register("SELECT ?s ?p ?o WHERE { ?s ?p ?o }")


def same_term(a, b) -> bool:
    """RDF term identity, and the exact text of the term."""
    if type(a) is not type(b) or str(a) != str(b):
        return False
    if isinstance(a, Literal):              # language tags come back in lower case
        return a.datatype == b.datatype and (a.language or "").lower() == (b.language or "").lower()
    return True


def test_one_batch_of_hostile_terms_round_trips_exactly(engine):
    q = all_triples(engine)
    rows = []
    for i, t in enumerate(NASTY):
        s, p = iri("s/" + t), iri("p")
        rows += [(s, p, Literal(t), i),
                 (s, p, Literal(t, lang="en-GB"), i),
                 (s, p, Literal(t, datatype=URIRef(EX + "dt/" + t.replace("\n", "n"))), i),
                 (BNode("b" + str(i)), iri("p/" + t), iri("o/" + t), i)]
    engine.push_many(rows)                       # one crossing: one table
    got = [(a["s"], a["p"], a["o"], a.start) for a in q.results()]
    assert len(got) == len(rows)
    for (s, p, o, t), (gs, gp, go, gt) in zip(rows, got):
        assert same_term(gs, s) and same_term(gp, p) and same_term(go, o) and gt == t
    assert engine.errors == []


def test_shared_text_stays_distinct_terms(engine):
    # the same text as an IRI, a blank node id, a literal, a datatype IRI and
    # a language-tagged literal, all in one batch
    q = all_triples(engine)
    x = EX + "x"
    rows = [(URIRef(x), URIRef(x), URIRef(x), 1),
            (BNode(x), URIRef(x), Literal(x), 2),
            (URIRef(x), URIRef(x), Literal(x, datatype=URIRef(x)), 3),
            (URIRef(x), URIRef(x), Literal(x, lang="en"), 4),
            (URIRef(x), URIRef(x), BNode(x), 5),
            (URIRef(x), URIRef(x), Literal("1.5", datatype=URIRef(XSD + "double")), 6),
            (URIRef(x), URIRef(x), Literal("1.50", datatype=URIRef(XSD + "double"), normalize=False), 7),
            (URIRef(x), URIRef(x), Literal("1.5", datatype=URIRef(XSD + "decimal")), 8)]
    engine.push_many(rows)
    got = [(a["s"], a["p"], a["o"]) for a in q.results()]
    assert len(got) == len(rows)
    for (s, p, o, _), g in zip(rows, got):
        assert all(same_term(a, b) for a, b in zip(g, (s, p, o))), (g, (s, p, o))
    # and they join as RDF terms do: only identical terms unify
    q2 = engine.register("SELECT ?o WHERE { ?s ?p ?o . FILTER(sameTerm(?o, ?s)) }")
    engine.push_many([(s, p, o, t + 10) for s, p, o, t in rows])
    assert [a["o"] for a in q2.results()] == [URIRef(x)]
    assert str(got[6][2]) == "1.50" and str(got[5][2]) == "1.5"


def test_many_datatypes_and_the_limits_of_the_caches(engine, monkeypatch):
    # beyond the datatype variables (and with a literal cache that keeps
    # clearing) literals are written in full: same answers
    monkeypatch.setattr(wire, "_MAX_DT_VARS", len(wire._DT_VARS) + 2)
    monkeypatch.setattr(wire._LIT_WIRE, "limit", 3)
    q = all_triples(engine)
    rows = [(iri("s"), iri("p"), Literal(f"v{i % 7}", datatype=URIRef(f"{EX}type/{i % 5}'\"")), i)
            for i in range(40)]
    rows += [(iri("s"), iri("p"), Literal(str(i), datatype=URIRef(XSD + "integer")), 40 + i)
             for i in range(10)]
    engine.push_many(rows)
    got = q.results()
    assert len(got) == len(rows)
    for (s, p, o, t), a in zip(rows, got):
        assert same_term(a["o"], o) and a.start == t
    text = wire.triple_batch_text([(s, p, o, t, t) for s, p, o, t in rows])
    assert f"'{EX}type/4\\'\"'" in text          # written in full, escaped


def test_batch_text_writes_each_repeated_term_once():
    s, p = URIRef(EX + "s"), URIRef(EX + "p")
    rows = [(s, p, Literal(float(i)), i, i) for i in range(100)]
    rows += [(BNode("n1"), p, s, 100, 100)] * 3
    text = wire.triple_batch_text(rows)
    assert text.count(EX + "s") == 1 and text.count(EX + "p") == 1
    assert text.count("n1") == 1
    # canonical xsd:double literals are bare floats: no datatype written
    assert text.count(XSD + "double") == 0 and "t(I0,I1,5.0,5)" in text
    odd = wire.triple_batch_text([(s, p, Literal("5.50", datatype=URIRef(XSD + "double"),
                                                normalize=False), 1, 1)] * 3)
    assert odd.count(XSD + "double") == 1 and odd.count('"5.50"') == 3


def test_point_events_keep_their_end_time_exactly(engine):
    # the time is written once only when both are the same number written
    # the same way: 1 and 1.0, -0.0 and 0.0 stay as they are on the wire.
    # The engine keeps a time as the number it stands for (exactly: a
    # whole float is that integer, issue 25), so answers give 1, not 1.0
    q = all_triples(engine)
    s, p = iri("s"), iri("p")
    rows = [(s, p, Literal(1), 1, 1.0), (s, p, Literal(2), 2.0), (s, p, Literal("x"), 3, 3),
            (s, p, Literal(4), 4.5, 5)]
    engine.push_many([(s, p, Literal(0), -0.0, 0.0)] + rows)
    got = [(a.start, a.end) for a in q.results()]
    assert got == [(0, 0), (1, 1), (2, 2), (3, 3), (4.5, 5)]
    assert [(type(a), type(b)) for a, b in got] == [(int, int), (int, int), (int, int),
                                                    (int, int), (float, int)]
    text = wire.triple_batch_text([(s, p, o, t1, t1 if len(r) == 4 else r[4])
                                   for r in rows for (_, _, o, t1) in [r[:4]]])
    assert ",1,1.0)" in text and ",2.0)" in text and ",3)" in text and ",4.5,5)" in text


def test_times_are_plain_numbers(engine):
    np = pytest.importorskip("numpy")
    q = all_triples(engine)
    engine.push_many([(iri("s"), iri("p"), Literal(1), np.float64(1.5), np.float64(2.5)),
                      (iri("s"), iri("p"), Literal(2), 3, 3.0)])
    assert [(a.start, a.end) for a in q.results()] == [(1.5, 2.5), (3, 3.0)]


def test_decoded_terms_are_remembered_only_when_well_formed():
    n = codec.decode(Compound("n", (1.5, XSD + "double", PlString("1.50"))))
    assert n == Literal("1.50", datatype=URIRef(XSD + "double"), normalize=False)
    assert str(codec.decode(Compound("n", (1.5, XSD + "double", PlString("1.50"))))) == "1.50"
    assert codec.decode(Compound("n", (1, XSD + "integer", PlString("01")))) is \
        codec.decode(Compound("n", (1.0, XSD + "integer", PlString("01"))))
    assert codec.decode("http://ex.org/a") is codec.decode("http://ex.org/a")
    # a string and an atom of the same text are different terms
    assert isinstance(codec.decode(PlString("http://ex.org/a")), Literal)
    b1, b2 = codec.decode(Compound("b", ("x",))), codec.decode(Compound("b", ("x",)))
    assert b1 == b2 == BNode("x")


@pytest.mark.parametrize("text", [
    "b([I0],['a'],[e(triple(I0,I1,I0),1,1)])",          # a variable left unbound
    "b([I0,I1],['a'],[e(triple(I0,I0,I0),1,1)])",       # lists of different lengths
    "b([I0],[X],[e(triple(I0,I0,I0),1,1)])",            # a value that is not ground
    "b([I0],['a'],[e(triple(I0,I0,I0),1,1)]) :- halt",  # not a batch
    "[e(triple(a,b,c),1,1)]",                           # the plain format
    "b([I0],['a'],[x(I0,I0,I0,1,1)])",                  # an unknown item
    "b([I0],['a'],[t(I0,I0,I0)])",                      # an item of the wrong arity
    "b([I0],['a'],[n(I0,I0,1.5,I0,1)])",                # a literal item of the wrong arity
    "b([I0],['a'],x)",                                  # items not a list
    "b([I0],['a'],[e(triple(I0,I0,I0),1,1)",            # syntax error
])
def test_malformed_table_batches_are_rejected_not_run(text):
    eng = CoreEngine()
    try:
        eng.add_rules("seen(S) <- triple(S, _, _).")
        with pytest.raises(PrologError):
            eng.push_table_text(text)
        assert eng.stats()["events"] == 0
        # still alive and working; every item form
        eng.push_table_text("b([I0,D0],['a','dt'],[e(triple(I0,I0,I0),1,1),t(I0,I0,I0,2,2),"
                            "n(I0,I0,1.5,D0,\"1.50\",3,3),d(I0,I0,0.0,D0,\"x\",4,4),"
                            "dur(I0,I0,60,D0,\"PT1M\",5,5),t(I0,I0,I0,6),n(I0,I0,1.5,D0,\"1.50\",7),"
                            "d(I0,I0,0.0,D0,\"x\",8),dur(I0,I0,60,D0,\"PT1M\",9.5)])")
        got = eng.drain()
        assert [d.event for d in got] == [Compound("seen", ("a",))] * 9
        assert [(d.start, d.end) for d in got] == [(t, t) for t in (1, 2, 3, 4, 5, 6, 7, 8, 9.5)]
        eng.add_rules("lit(O) <- triple(_, _, O).")
        eng.push_table_text("b([I0,D0],['a','dt'],[n(I0,I0,1.5,D0,\"1.50\",16,16),"
                            "d(I0,I0,0.0,D0,\"x\",17),dur(I0,I0,60,D0,\"PT1M\",18,18)])")
        assert [d.event for d in eng.drain() if d.event.name == "lit"] == [
            Compound("lit", (Compound(f, (v, "dt", PlString(lex))),))
            for f, v, lex in [("n", 1.5, "1.50"), ("d", 0.0, "x"), ("dur", 60, "PT1M")]]
    finally:
        eng.close()


@pytest.mark.parametrize("value", [196.21, -0.0, 0.0, 1e-05, 5e-324, 1.7976931348623157e308, 1e16,
                                   0.1 + 0.2, 3, 0, -7, 10**20, 2**63])
def test_canonical_number_shortcut_writes_what_the_codec_would(value, monkeypatch):
    s, p = URIRef(EX + "s"), URIRef(EX + "p")
    lits = [Literal(value),
            Literal(str(value), datatype=URIRef(XSD + ("double" if isinstance(value, float) else "integer"))),
            Literal("0" + str(abs(value)), datatype=URIRef(XSD + "double"), normalize=False),
            Literal("1.0E2", datatype=URIRef(XSD + "double"), normalize=False),
            Literal("+5", datatype=URIRef(XSD + "integer"), normalize=False),
            Literal("INF", datatype=URIRef(XSD + "double")),
            Literal("NaN", datatype=URIRef(XSD + "double")),
            Literal(str(value), datatype=URIRef(XSD + "decimal"))]
    rows = [(s, p, o, i, i) for i, o in enumerate(lits)]
    fast = wire.triple_batch_text(rows)
    monkeypatch.setattr(wire, "_FAST_SLOTS", False)
    wire._LIT_WIRE.clear()
    assert wire.triple_batch_text(rows) == fast


def test_canonical_numbers_skip_the_codec(monkeypatch):
    calls = []
    real = wire.literal_wire
    monkeypatch.setattr(wire, "literal_wire", lambda x: calls.append(str(x)) or real(x))
    wire._LIT_WIRE.clear()
    s, p = URIRef(EX + "s"), URIRef(EX + "p")
    wire.triple_batch_text([(s, p, Literal(12.5), 1, 1), (s, p, Literal(12), 2, 2),
                            (s, p, Literal("12.50", datatype=URIRef(XSD + "double"), normalize=False), 3, 3),
                            (s, p, Literal("x"), 4, 4)])
    assert calls == ["12.50", "x"]
