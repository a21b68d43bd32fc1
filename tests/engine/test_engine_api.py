"""The Engine API: registration, pushing, answers, CONSTRUCT feedback,
extension functions, rule passthrough, hostile data, isolation."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from rdflib import BNode, Literal, URIRef

from epsparql import Engine, QueryError, QuerySyntaxError

NS = "http://epsparql.org/ns#"
EX = "http://ex.org/"
XSD_NS = URIRef("http://www.w3.org/2001/XMLSchema#")


def U(x: str) -> URIRef:
    return URIRef(NS + x)


@pytest.fixture
def engine():
    e = Engine()
    yield e
    e.close()


def test_query_one_of_the_paper_as_printed(engine):
    q = engine.register(
        'SELECT ?company WHERE { ?company hasStockPrice ?price1 } SEQ { ?company hasStockPrice ?price2 } '
        'SEQ { ?company hasStockPrice ?price3 } FILTER ( ?price2 < ?price1 * 0.7 && '
        '?price3 > ?price1 * 1.05 && getDURATION() < "P30D"^^xsd:duration)')
    day = 86400
    p = U("hasStockPrice")
    engine.push_many([(U("ACME"), p, Literal(100), 0), (U("ACME"), p, Literal(60.5), 5 * day),
                      (U("ACME"), p, Literal(110), 20 * day), (U("ACME"), p, Literal(120), 40 * day),
                      (U("IBM"), p, Literal(100), 41 * day), (U("IBM"), p, Literal(50), 42 * day),
                      (U("IBM"), p, Literal(106), 72 * day)])   # exactly 31 days: outside
    engine.flush()
    got = [(a["company"], a.start, a.end) for a in q.results()]
    assert got == [(U("ACME"), 0, 20 * day)]
    assert q.variables == ["company"]


def test_results_drain_and_callback(engine):
    seen = []
    q = engine.register("SELECT ?s WHERE { ?s :p ?o }", on_result=seen.append, keep=True)
    engine.push(U("a"), U("p"), Literal(1), 1)
    assert len(q.results()) == 1 and q.results() == []
    assert [a["s"] for a in seen] == [U("a")]


def test_a_callback_takes_the_answers_and_nothing_piles_up(engine):
    # issue 25, finding 8: a program that only listens runs in bounded memory
    seen = []
    q = engine.register("SELECT ?s ?o WHERE { ?s :p ?o }", on_result=seen.append)
    assert q.keep is False
    engine.push_many([(U("a"), U("p"), Literal(i), i) for i in range(20_000)])
    assert len(seen) == 20_000 and q.pending == 0 and len(q.results()) == 0
    assert engine.answers == 20_000                     # counted all the same


def test_datetime_times_and_interval_functions(engine):
    q = engine.register("""SELECT ?s (getSTARTTIME() AS ?t0) (getENDTIME() AS ?t1) (getDURATION() AS ?d)
                           WHERE { ?s :p ?o }""")
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    t1 = datetime(2024, 1, 1, 0, 1, 30, tzinfo=timezone.utc)
    engine.push(U("a"), U("p"), Literal(1), t0, t1)
    (a,) = q.results()
    assert a.start == t0.timestamp() and a.end == t1.timestamp()
    assert (str(a["t0"]), a["t0"].datatype) == ("2024-01-01T00:00:00Z", URIRef(XSD_NS + "dateTime"))
    assert (str(a["t1"]), a["t1"].datatype) == ("2024-01-01T00:01:30Z", URIRef(XSD_NS + "dateTime"))
    assert (str(a["d"]), a["d"].datatype) == ("PT1M30S", URIRef(XSD_NS + "duration"))


def test_construct_feeds_the_stream_and_select_sees_it(engine):
    # the downratedby rule of the paper feeding query (2)
    engine.register("""CONSTRUCT { ?company downratedby ?ratingagency } WHERE
        { ?rating1 rater ?ratingagency ; rated ?company ; score ?score1 }
        SEQ { ?rating2 rater ?ratingagency ; rated ?company ; score ?score2 }
        FILTER ( ?score2 < ?score1 )""")
    q2 = engine.register("""SELECT ?company ?ratingagency WHERE { ?company downratedby ?ratingagency }
        OPTIONALSEQ { { ?company hasStockPrice ?price1 } SEQ { ?company hasStockPrice ?price2 } }
        FILTER (?price2 < ?price1 * 0.5)""")
    r1, r2 = BNode("r1"), BNode("r2")
    rows = [(r1, U("rater"), U("moody"), 1), (r1, U("rated"), U("ACME"), 1), (r1, U("score"), Literal(5), 1),
            (r2, U("rater"), U("moody"), 2), (r2, U("rated"), U("ACME"), 2), (r2, U("score"), Literal(3), 2),
            (U("ACME"), U("hasStockPrice"), Literal(100), 3), (U("ACME"), U("hasStockPrice"), Literal(40), 4),
            (U("IBM"), U("hasStockPrice"), Literal(100), 5), (U("IBM"), U("hasStockPrice"), Literal(10), 6)]
    engine.push_many(rows)
    engine.flush()
    got = sorted((a["company"], a.bindings.get("ratingagency"), a.start, a.end) for a in q2.results())
    assert got == [(U("ACME"), U("moody"), 1, 4), (U("IBM"), None, 5, 6)]


def test_construct_answers_carry_triples_and_fresh_blank_nodes(engine):
    q = engine.register("CONSTRUCT { _:e :about ?s . _:e :value ?o } WHERE { ?s :p ?o }")
    engine.push_many([(U("a"), U("p"), Literal(1), 1), (U("b"), U("p"), Literal(2), 2)])
    a1, a2 = q.results()
    assert len(a1.triples) == 2 and a1.triples[0][0] == a1.triples[1][0]
    assert isinstance(a1.triples[0][0], BNode) and a1.triples[0][0] != a2.triples[0][0]
    assert (a1.triples[0][1], a1.triples[0][2]) == (U("about"), U("a"))


def test_rule_deriving_what_it_consumes_terminates(engine):
    q = engine.register("CONSTRUCT { ?s :p ?o } WHERE { ?s :p ?o }")
    sel = engine.register("SELECT ?s WHERE { ?s :p ?o }")
    engine.push(U("a"), U("p"), Literal(1), 1)
    assert len(q.results()) == 1 and len(sel.results()) == 1
    assert engine.errors == []


def test_ask_and_distinct(engine):
    ask = engine.register("ASK { ?s :p ?o }")
    dis = engine.register("SELECT DISTINCT ?s WHERE { ?s :p ?o }")
    engine.push_many([(U("a"), U("p"), Literal(1), 1), (U("a"), U("p"), Literal(2), 2)])
    assert len(ask.results()) == 1
    assert [a["s"] for a in dis.results()] == [U("a")]


def test_python_extension_function_in_filter_and_select(engine):
    engine.register_function(EX + "double", lambda x: Literal(int(x) * 2))
    q = engine.register(f"PREFIX ex: <{EX}> SELECT ?x (ex:double(?x) AS ?d) "
                        f"WHERE {{ ?s :v ?x }} FILTER(ex:double(?x) > 5)")
    engine.push_many([(U("a"), U("v"), Literal(2), 1), (U("a"), U("v"), Literal(3), 2),
                      (U("a"), U("v"), Literal("boom"), 3)])     # the function raises: filter false
    got = [(a["x"], a["d"]) for a in q.results()]
    assert got == [(Literal(3), Literal(6))]
    err = engine.errors[-1]                     # the failure is reported, with its query
    assert err.function == EX + "double" and err.context == (Literal("boom"),)
    assert isinstance(err.exception, ValueError) and err.queries == [q.name]


def test_prolog_extension_function(engine, tmp_path):
    f = tmp_path / "fns.pl"
    f.write_text("in_region(n(Lat,_,_), s(\"north\"), bool(B, Lex)) :- "
                 "( Lat > 0 -> B = true, Lex = \"true\" ; B = false, Lex = \"false\" ).\n")
    engine.load_prolog(str(f))
    engine.register_function(EX + "inRegion", "user:in_region")
    q = engine.register(f'PREFIX ex: <{EX}> SELECT ?s WHERE {{ ?s :lat ?l }} FILTER(ex:inRegion(?l, "north"))')
    engine.push_many([(U("oslo"), U("lat"), Literal(59.9), 1), (U("lima"), U("lat"), Literal(-12.0), 2)])
    assert [a["s"] for a in q.results()] == [U("oslo")]


def test_unknown_function_is_a_query_error_with_position(engine):
    with pytest.raises(QueryError) as ei:
        engine.register(f"PREFIX ex: <{EX}>\nSELECT ?x WHERE {{ ?s :v ?x }}\nFILTER(ex:nope(?x))")
    assert "nope" in str(ei.value) and ei.value.line == 3


def test_syntax_error_and_rejections(engine):
    with pytest.raises(QuerySyntaxError) as ei:
        engine.register("SELECT ?x WHERE {\n  ?s :p ?x\n  FILTER (?x > )\n}")
    assert ei.value.line == 3
    with pytest.raises(QueryError, match="LIMIT"):
        engine.register("SELECT ?x WHERE { ?s :p ?x } LIMIT 5")


def test_core_rules_next_to_queries_feed_the_stream(engine):
    # a hand-written core rule deriving a triple, seen by a query
    engine.add_rules(f"triple(S, '{NS}alarm', O) <- triple(S, '{NS}level', O) "
                     f"where sparql_eval:sparql_number(O, V), V > 10.")
    q = engine.register("SELECT ?s ?v WHERE { ?s :alarm ?v }")
    engine.push_many([(U("b1"), U("level"), Literal(5), 1), (U("b2"), U("level"), Literal(12), 2)])
    assert [(a["s"], a["v"]) for a in q.results()] == [(U("b2"), Literal(12))]


HOSTILE = ["it's", 'say "hi"', "back\\slash", "), halt, foo(", ":- halt.", "line\nbreak",
           "nul\x00byte", "emoji 🚀 and 漢字", "0'c", "{}", "'" * 50, "x" * 100_000]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_literals_and_iris_round_trip(engine, text):
    q = engine.register("SELECT ?s ?o WHERE { ?s :p ?o }")
    iri = URIRef(EX + "x?q=" + text.replace("\n", "%0A").replace("\x00", "%00").replace(" ", "%20")[:200])
    for lit in (Literal(text), Literal(text, lang="en"), Literal(text, datatype=URIRef(EX + "dt"))):
        engine.push(iri, U("p"), lit, 1)
        (a,) = q.results()
        assert a["s"] == iri
        assert str(a["o"]) == text and a["o"].language == lit.language and a["o"].datatype == lit.datatype
    assert engine.errors == []


def test_two_engines_are_isolated():
    e1, e2 = Engine(), Engine()
    try:
        q1 = e1.register("SELECT ?s WHERE { ?s :p ?o }")
        q2 = e2.register("SELECT ?s WHERE { ?s :q ?o }")
        e1.push(U("a"), U("p"), Literal(1), 1)
        e2.push(U("b"), U("p"), Literal(1), 1)
        assert [a["s"] for a in q1.results()] == [U("a")]
        assert q2.results() == []
    finally:
        e1.close()
        e2.close()


def test_bad_rows_are_rejected_before_anything_is_pushed(engine):
    q = engine.register("SELECT ?s WHERE { ?s :p ?o }")
    with pytest.raises(TypeError):
        engine.push_many([(U("a"), U("p"), Literal(1), 1), (U("a"), "not a term", Literal(1), 2)])
    with pytest.raises(ValueError):
        engine.push_many([(U("a"), U("p"), Literal(1), 1), (U("a"), U("p"), Literal(1), 5, 4)])
    with pytest.raises(ValueError):
        engine.push(U("a"), U("p"), Literal(1), float("nan"))
    assert q.results() == []


def test_rule_errors_name_the_query_and_the_event(engine, tmp_path):
    f = tmp_path / "bad.pl"
    f.write_text("explode(_) :- throw(error(type_error(integer, oops), _)).\n"
                 "explode(_, _) :- throw(error(type_error(integer, oops), _)).\n")
    engine.load_prolog(str(f))
    engine.register_function(EX + "explode", "user:explode")
    ok = engine.register("SELECT ?s WHERE { ?s :p ?o }", name="fine")
    bad = engine.register(f"PREFIX ex: <{EX}> SELECT ?s WHERE {{ ?s :p ?o }} FILTER(ex:explode(?o))",
                          name="bad")
    engine.add_rules(f"boom(S) <- triple(S, '{NS}p', _) where user:explode(S).")
    engine.push(U("a"), U("p"), Literal(1), 1)
    engine.push(U("b"), U("p"), Literal(2), 2)
    assert [a["s"] for a in ok.results()] == [U("a"), U("b")]   # the engine went on
    assert bad.results() == []
    errs = [e for e in engine.errors if "oops" in e.message]
    core_rule = [e for e in errs if e.function is None]
    in_query = [e for e in errs if e.function is not None]
    assert len(core_rule) == 2 and "p" in str(core_rule[0].context)
    assert len(in_query) == 2 and in_query[0].queries == ["bad"]
    assert in_query[0].context == (Literal(1),)
