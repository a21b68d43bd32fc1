"""Stream triples as janus data (epsparql.rdf.wire_rows, op push_triples):
the events Prolog builds from a term table and rows of ids, or from a
column of numbers, are exactly those of the text path (epsparql.rdf.wire),
on generated batches of hostile terms of every kind; batches the path
should not take go as text; malformed data is rejected naming its place,
never run."""
from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import BNode, Literal, URIRef

from epsparql import Engine
from epsparql.core import CoreEngine, PrologError
from epsparql.rdf import codec, wire, wire_rows

EX = "http://ex.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
NASTY = ["I0", "_", "A", "'", '"', "\\", "'), halt, ('", ":- halt.", "line\nbreak", "nul\x00byte",
         "emoji 🚀 漢字", "0'c", "%", "x" * 300, "", " ", "1", "1.5"]


def _term(rnd: random.Random, position: str):
    """A random RDF term for a triple position."""
    t = rnd.choice(NASTY)
    k = rnd.randrange(10 if position == "o" else 4)
    if k < 2 or position == "p":
        return URIRef(EX + t.replace(" ", "%20").replace("\n", "%0A"))
    if k == 2:
        return BNode("b" + str(rnd.randrange(5)))
    if k == 3 and position == "s":
        return URIRef(EX + "s" + str(rnd.randrange(3)))
    return rnd.choice([
        Literal(t), Literal(t, lang=rnd.choice(["en", "en-GB", "de"])),
        Literal(t, datatype=URIRef(EX + "dt")),
        Literal(rnd.uniform(-1e6, 1e6)), Literal(rnd.randrange(-10**20, 10**20)),
        Literal("1.50", datatype=URIRef(XSD + "double"), normalize=False),
        Literal("+5", datatype=URIRef(XSD + "integer"), normalize=False),
        Literal("INF", datatype=URIRef(XSD + "double")),
        Literal("2024-01-02T03:04:05Z", datatype=URIRef(XSD + "dateTime")),
        Literal("PT1M", datatype=URIRef(XSD + "duration")),
        Literal("true", datatype=URIRef(XSD + "boolean")),
        Literal("1.5", datatype=URIRef(XSD + "decimal")),
    ])


def _numbers(rnd: random.Random, n: int) -> list:
    """An object column of number literals of one datatype (the column path)."""
    if rnd.random() < 0.5:
        return [Literal(rnd.choice([rnd.uniform(-1e3, 1e3), 0.0, -0.0, 1e-300, 1e22, 5e-324,
                                    round(rnd.uniform(0, 100), 2)])) if rnd.random() < 0.8 else
                Literal(rnd.choice(["1.50", "+2.0", ".5", "1E3", "-0"]),
                        datatype=URIRef(XSD + "double"), normalize=False)
                for _ in range(n)]
    return [Literal(rnd.choice([0, -1, 7, 2**63, -(10**30), rnd.randrange(-999, 999)]))
            if rnd.random() < 0.8 else
            Literal(rnd.choice(["+5", "007", "-0"]), datatype=URIRef(XSD + "integer"), normalize=False)
            for _ in range(n)]


def _times(rnd: random.Random, n: int) -> list[tuple]:
    out = []
    for _ in range(n):
        t1 = rnd.choice([rnd.randrange(0, 100), rnd.uniform(0, 100), -0.0, 10**19])
        t2 = t1 if rnd.random() < 0.6 else rnd.choice([t1, float(t1), t1 + rnd.randrange(3)])
        out.append((t1, t2))
    return out


def _events(engine: CoreEngine) -> list:
    return [(d.event, d.start, d.end, type(d.start), type(d.end)) for d in engine.drain()]


@pytest.fixture(scope="module")
def engines():
    a, b = CoreEngine(), CoreEngine()
    for e in (a, b):
        e.add_rules("got(S, P, O) <- triple(S, P, O).")
    yield a, b
    a.close()
    b.close()


def _both(engines, rows) -> tuple[list, list]:
    rows_engine, text_engine = engines
    data = wire_rows.triple_batch_rows(rows)
    assert data is not None
    rows_engine.push_triple_rows_columns(data)
    text_engine.push_table_text_columns(wire.triple_batch_text(rows))
    return _events(rows_engine), _events(text_engine)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), numbers=st.booleans())
def test_rows_give_the_events_of_the_text_path(engines, seed, numbers):
    rnd = random.Random(seed)
    n = rnd.randrange(1, 40)
    objects = _numbers(rnd, n) if numbers else [_term(rnd, "o") for _ in range(n)]
    rows = [(_term(rnd, "s"), _term(rnd, "p"), o, t1, t2)
            for o, (t1, t2) in zip(objects, _times(rnd, n))]
    if numbers:
        assert wire_rows._numbers(objects) is not None           # the column path is taken
    got, want = _both(engines, rows)
    assert got == want
    assert len(got) == n


def test_number_column_forms_the_codec_would_not_read_as_numbers_go_elsewhere():
    # rdflib reads these as numbers, the codec does not (or not to the same
    # value): the column path must not take them
    for lex, dt in [("1_000", "integer"), (" 5", "integer"), ("١٢", "integer"),
                    ("1_0.5", "double"), ("inf", "double"), ("1e400", "double"), ("1 5", "integer")]:
        other = Literal(1.5) if dt == "double" else Literal(2)
        col = [Literal(lex, datatype=URIRef(XSD + dt), normalize=False), other]
        assert wire_rows._numbers(col) is None, lex
    # forms in the codec's lexical space that are not canonical: taken, kept
    for lex, dt, v in [("1.50", "double", 1.5), ("+5", "integer", 5), ("05", "integer", 5),
                       ("1.0E2", "double", 100.0), (".5", "double", 0.5)]:
        other = Literal(1.5) if dt == "double" else Literal(2)
        col = [Literal(lex, datatype=URIRef(XSD + dt), normalize=False), other]
        got = wire_rows._numbers(col)
        assert got[2][0] == v and str(got[3]).split(" ")[0] == lex
    assert wire_rows._numbers([Literal(1.5), Literal(2)]) is None            # two datatypes
    assert wire_rows._numbers([Literal(1.5), Literal("x")]) is None
    # canonical forms: the codec's bare numbers, nothing but the values cross
    assert wire_rows._numbers([Literal(1.5), Literal(-2.25)]) == ("bare", [1.5, -2.25])
    assert wire_rows._numbers([Literal(3), Literal(-4)]) == ("bare", [3, -4])
    got = wire_rows._numbers([Literal("1.50", datatype=URIRef(XSD + "double"), normalize=False),
                              Literal(2.5), Literal(1e20)])
    assert got[0] == "n" and got[4] == [0, 1, 0]          # bare only where the codec is


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789+-.eE", min_size=1, max_size=8))
def test_numbers_read_by_python_from_these_characters_are_the_codecs(lex):
    # the column path's claim: over these characters Python's float()/int()
    # accept exactly the codec's lexical space, to the same value
    for dt, read in (("double", float), ("integer", int)):
        if dt == "integer" and set(lex) - set("0123456789+-"):
            continue
        try:
            v = read(lex)
        except ValueError:
            v = None
        enc = codec.encode(Literal(lex, datatype=URIRef(XSD + dt), normalize=False))
        if v is None or (dt == "double" and not math.isfinite(v)):
            assert enc.name == "t"
        elif type(enc) in (int, float):                 # a canonical form: the bare number
            assert enc == v and type(enc) is type(v)
        else:
            assert enc.name == "n" and enc.args[0] == v


def test_batches_of_many_distinct_literals_go_as_text():
    s, p = URIRef(EX + "s"), URIRef(EX + "p")
    rows = [(s, p, Literal(f"v{i}"), i, i) for i in range(1000)]
    assert wire_rows.triple_batch_rows(rows) is None
    rows = [(s, p, Literal(f"v{i % 3}"), i, i) for i in range(1000)]
    assert wire_rows.triple_batch_rows(rows) is not None
    # text janus cannot take (a lone surrogate) goes as text
    assert wire_rows.triple_batch_rows([(URIRef(EX + "\ud800"), p, s, 1, 1)]) is None
    assert wire_rows.triple_batch_rows([(s, p, Literal("\ud800"), 1, 1)]) is None


def test_the_engine_takes_both_ways_alike():
    rnd = random.Random(7)
    q = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
    rows = [(_term(rnd, "s"), _term(rnd, "p"), _term(rnd, "o"), i) for i in range(300)]
    rows += [(URIRef(EX + "k"), URIRef(EX + "price"), Literal(float(i) / 3), 300 + i)
             for i in range(300)]
    with Engine(batch_size=50) as a, Engine(batch_size=50) as b:
        qa, qb = a.register(q), b.register(q)
        a.push_many(rows)
        real = wire_rows.triple_batch_rows
        try:
            wire_rows_off = lambda part, longs=None: None        # noqa: E731
            import epsparql.query_engine as qe
            qe.triple_batch_rows = wire_rows_off
            b.push_many(rows)
        finally:
            qe.triple_batch_rows = real
        got = [(a_["s"], a_["p"], a_["o"], a_.start, a_.end) for a_ in qa.results()]
        want = [(a_["s"], a_["p"], a_["o"], a_.start, a_.end) for a_ in qb.results()]
        assert got == want and len(got) == len(rows)


@pytest.mark.parametrize("data", [
    [["a"], [1], [1], [2], [1], [1]],                       # a place beyond the table
    [["a"], [1], [1], [0], [1], [1]],                       # place 0
    [["a"], [1], [1], ["a"], [1], [1]],                     # a place that is not a number
    [["a"], [1, 1], [1], [1], [1], [1]],                    # columns of different lengths
    [["a", ("n", 4)], [1], [1], [2], [1], [1]],             # a term with no arguments
    [["a", ("n", 4, [1], "dt", "x")], [1], [1], [2], [1], [1]],   # an argument not atomic
    [["a", ["x"]], [1], [1], [2], [1], [1]],                # a table entry that is no term
    [["a"], [1], [1], ("n", "dt", [1.5, 2.5], "1.5 2.5"), [1], [1]],    # lexicals not an object
    [["a"], [1], [1], ("n", "dt", [1.5], wire_rows.Lexicals("1.5 2.5")), [1], [1]],  # counts differ
    [["a"], [1], [1], [1], ["x"], ["x"]],                   # times not numbers
    [["a"], [1], [1], [1], [2], [1]],                       # end before start
    [["a"], [1], [1]],                                      # not a batch
])
def test_malformed_rows_are_rejected_not_run(data):
    eng = CoreEngine()
    try:
        eng.add_rules("seen(S) <- triple(S, _, _).")
        with pytest.raises(PrologError):
            eng.push_triple_rows_columns(data)
        assert eng.stats()["events"] == 0
        eng.push_triple_rows_columns([["a", ("l", 1, "x", "en")], [1, 1], [1, 1], [2, 1],
                                      [1, 2.5], [1, 3]])
        got = eng.drain()
        assert [(d.event, d.start, d.end) for d in got] == [
            (("seen", ("a",)), 1, 1), (("seen", ("a",)), 2.5, 3)]
    finally:
        eng.close()


@pytest.mark.parametrize("literal", [lambda i: Literal(float(i)), lambda i: Literal(f"v{i}")])
def test_rows_on_named_streams_mixed_with_others_reach_the_queries(literal):
    # rows with a stream of their own among rows without one: the core's
    # rows lose the stream whatever the order (rows path and text path:
    # many distinct string literals go as text)
    s, p = URIRef(EX + "s"), URIRef(EX + "p")
    rows = [(s, p, literal(i), i) if i % 3 else (s, p, literal(i), i, None, EX + "stream")
            for i in range(1, 400)]
    with Engine() as eng:
        q = eng.register("SELECT ?o WHERE { ?s ?p ?o }")
        eng.push_many(rows)
        assert [a["o"] for a in q.results()] == [r[2] for r in rows]


def test_the_column_path_follows_the_codec(monkeypatch):
    # the column path builds bare numbers and n(Value, Datatype, Lexical) as
    # the codec does: it is on only when the codec encodes them so (checked
    # on the codec itself)
    assert wire_rows._COLUMN_PATH == wire_rows._codec_as_assumed()
    assert wire_rows._codec_as_assumed()
    real = codec.encode
    monkeypatch.setattr(wire_rows, "encode",
                        lambda x: float(x) if isinstance(x, Literal) and x.datatype is not None
                        and str(x.datatype) == XSD + "double" else real(x))
    assert not wire_rows._codec_as_assumed()
    # a literal a codec makes a bare number goes in the table as the number
    assert wire_rows.term_data(Literal(2.5)) == 2.5
    monkeypatch.setattr(wire_rows, "_COLUMN_PATH", False)
    assert wire_rows._numbers([Literal(1.5)]) is None


def test_a_number_in_the_table_is_the_number():
    eng = CoreEngine()
    try:
        eng.add_rules("o(O) <- triple(_, _, O).")
        eng.push_triple_rows_columns([["a", 2.5, 7], [1, 1], [1, 1], [2, 3], [1, 2], [1, 2]])
        assert [d.event for d in eng.drain()] == [("o", (2.5,)), ("o", (7,))]
    finally:
        eng.close()
