"""Dialect detection, the front ends' syntax, and the errors docs/DIALECTS.md lists."""
from __future__ import annotations

from fractions import Fraction

import pytest

from epsparql.language import QueryError, QuerySyntaxError
from rdflib import URIRef

from epsparql.language.dialects import detect_dialect, parse_dialect
from epsparql.language.dialects.ast import Window

P = "PREFIX ex: <http://example.org/>\n"


@pytest.mark.parametrize("text, dialect", [
    ("REGISTER QUERY q AS SELECT * FROM STREAM <s> [RANGE 1s STEP 1s] WHERE { ?a ?b ?c }", "csparql"),
    ("SELECT * FROM STREAM <s> [RANGE 1s TUMBLING] WHERE { ?a ?b ?c }", "csparql"),
    ("SELECT * WHERE { STREAM <s> [NOW] { ?a ?b ?c } }", "cqels"),
    ("SELECT * WHERE { STREAM ?g [RANGE 3s] { ?a ?b ?c } }", "cqels"),
    (P + "SELECT * WHERE { STREAM ex:s [TRIPLES 1] { ?a ?b ?c } }", "cqels"),
    ("SELECT ISTREAM ?a FROM NAMED STREAM <s> [NOW - 10 MINUTES TO NOW STEP 1 MINUTE] WHERE { ?a ?b ?c }",
     "sparqlstream"),
    ("SELECT ?a FROM STREAM <s> WINDOW RANGE 30 MINUTE SLIDE WHERE { ?a ?b ?c }", "streaming-sparql"),
    ("SELECT ?a STREAM INTERMEDIATERESULT DURATION 1000 WHERE { WINDOW TYPE SLIDINGTRIPLES 5 { ?a ?b ?c } }",
     "luposdate"),
    ("REGISTER RSTREAM <o> AS SELECT * FROM NAMED WINDOW <w> ON <s> [RANGE PT10S STEP PT5S] "
     "WHERE { WINDOW <w> { ?a ?b ?c } }", "rspql"),
    ("SELECT ?c WHERE { ?c <p> ?x } SEQ { ?c <p> ?y }", None),
    # keywords inside strings, comments and IRIs do not count
    ("SELECT * WHERE { ?a <http://x/STREAM> \"STREAM <s> [NOW]\" } # REGISTER QUERY", None),
])
def test_detection(text, dialect):
    assert detect_dialect(text) == dialect


def test_windows_in_exact_seconds():
    q = parse_dialect(P + "SELECT * WHERE { STREAM <s> [RANGE 1m30s SLIDE 250ms] { ?a ?b ?c } }")
    w = q.where.elements[0].window
    assert (w.kind, w.width, w.step) == ("range", Fraction(90), Fraction(1, 4))
    q = parse_dialect("SELECT * WHERE { STREAM <s> [RANGE 2h TUMBLING] { ?a ?b ?c } }")
    w = q.where.elements[0].window
    assert (w.width, w.step) == (Fraction(7200), Fraction(7200))
    q = parse_dialect("REGISTER STREAM out AS CONSTRUCT { ?a <p> ?c } "
                      "FROM STREAM <s> [RANGE TRIPLES 5] WHERE { ?a ?b ?c }")
    assert q.name == "out" and q.form == "CONSTRUCT" and q.streams[0].window.count == 5
    assert q.policy.non_empty and q.r2s == "rstream"


def test_keywords_stay_names_elsewhere():
    # NOW() is a function, 'range'/'all' are prefixes outside windows
    q = parse_dialect("PREFIX range: <http://r/> SELECT ?a (NOW() AS ?n) "
                      "WHERE { STREAM <s> [ALL] { ?a range:x ?c } }")
    assert q.where.elements[0].window.kind == "all"


@pytest.mark.parametrize("text, line, column, words", [
    ("SELECT *\nWHERE { STREAM <s> [RANGE 0s] { ?a ?b ?c } }", 2, 27, "width must be positive"),
    ("SELECT *\nWHERE { STREAM <s> [RANGE 5s SLIDE 0s] { ?a ?b ?c } }", 2, 36, "step must be positive"),
    ("SELECT *\nWHERE { STREAM <s> [RANGE 5parsecs] { ?a ?b ?c } }", 2, 27, "unknown time unit"),
    ("SELECT *\nWHERE { STREAM <s> [TRIPLES 0] { ?a ?b ?c } }", 2, 29, "at least one triple"),
    ("SELECT ?a (COUNT(?b) AS ?n)\nWHERE { STREAM <s> [NOW] { ?a ?b ?c } }", 1, 8, "neither grouped"),
    ("SELECT ?a ?c (COUNT(?b) AS ?n)\nWHERE { STREAM <s> [NOW] { ?a ?b ?c } }\nGROUP BY ?a", 1, 11,
     "?c is neither grouped"),
    ("SELECT ((?b + 1) AS ?n)\nWHERE { STREAM <s> [NOW] { ?a ?b ?c } }\nGROUP BY ?a", 1, 10,
     "?b is neither grouped"),
    ("REGISTER QUERY q AS SELECT *\nFROM STREAM <s> [RANGE 5s STEP 0ms] WHERE { ?a ?b ?c }", 2, 32,
     "step must be positive"),
    ("REGISTER QUERY q AS SELECT *\nFROM STREAM <s> [RANGE 5w STEP 1s] WHERE { ?a ?b ?c }", 2, 24,
     "unknown time unit 'w'"),
])
def test_errors_name_line_and_column(text, line, column, words):
    with pytest.raises(QueryError) as e:
        parse_dialect(text)
    assert (e.value.line, e.value.column) == (line, column)
    assert words in str(e.value)


def test_syntax_error_says_what_was_expected():
    with pytest.raises(QuerySyntaxError) as e:
        parse_dialect("SELECT * WHERE {\n STREAM <s> [RANGE 3s { ?a ?b ?c } }", dialect="cqels")
    assert (e.value.line, e.value.column) == (2, 23)
    assert "SLIDE" in str(e.value) and "CQELS" in str(e.value)


def test_not_a_stream_dialect():
    with pytest.raises(QueryError, match="not a query of a stream dialect"):
        parse_dialect("SELECT * WHERE { ?a ?b ?c }")
    with pytest.raises(ValueError, match="unknown dialect"):
        parse_dialect("SELECT * WHERE { ?a ?b ?c }", dialect="cql")


TUTORIAL_CQELS = [
    """SELECT ?locName ?locDesc
FROM NAMED <http://deri.org/floorplan/>
WHERE {
  STREAM <http://deri.org/streams/rfid> [NOW] {?person lv:detectedat ?loc}
  GRAPH <http://deri.org/floorplan/>
    {?loc lv:name ?locName. ?loc lv:desc ?locDesc}
  ?person foaf:name '$Name$'.
}""",
    """CONSTRUCT {?person1 lv:reachable ?person2}
FROM NAMED <http://deri.org/floorplan/>
WHERE {
  STREAM <http://deri.org/streams/rfid> [NOW] {?person1 lv:detectedat ?loc1}
  STREAM <http://deri.org/streams/rfid> [RANGE 3s]
    {?person2 lv:detectedat ?loc2}
  GRAPH <http://deri.org/floorplan/> {?loc1 lv:connected ?loc2}
}""",
    """SELECT ?coAuthName
FROM NAMED <http://deri.org/floorplan/>
WHERE {
  STREAM <http://deri.org/streams/rfid> [TRIPLES 1]
  {?auth lv:detectedat ?loc}
  STREAM <http://deri.org/streams/rfid> [RANGE 5s]
  {?coAuth lv:detectedat ?loc}
  { ?paper dc:creator ?auth. ?paper dc:creator ?coAuth.
    ?auth foaf:name '$Name$'. ?coAuth foaf:name ?coAuthorName}
  FILTER (?auth != ?coAuth)
}""",
    """SELECT ?loc2 ?locName (count(distinct ?coAuth) as ?noCoAuths)
FROM NAMED <http://deri.org/floorplan/>
WHERE {
  STREAM <http://deri.org/streams/rfid> [TRIPLES 1]
  {?auth lv:detectedat ?loc1}
  STREAM <http://deri.org/streams/rfid> [RANGE 30s]
  {?coAuth lv:detectedat ?loc2}
  GRAPH <http://deri.org/floorplan/>
  {?loc2 lv:name ?locName. ?loc2 lv:connected ?loc1}
  {
  ?paper dc:creator ?auth. ?paper dc:creator ?coAuth.?auth foaf:name '$Name$'
  }
  FILTER (?auth != ?coAuth)
}
GROUP BY ?loc2 ?locName""",
]
PREFIXES = ("PREFIX lv: <http://deri.org/floorplan/> PREFIX foaf: <http://xmlns.com/foaf/0.1/> "
            "PREFIX dc: <http://purl.org/dc/elements/1.1/>\n")


@pytest.mark.parametrize("text", TUTORIAL_CQELS)
def test_tutorial_cqels_queries_parse(text):
    q = parse_dialect(PREFIXES + text)
    assert q.dialect == "cqels" and q.r2s == "istream" and q.policy.kind == "eager"


@pytest.mark.parametrize("mods, limit, offset", [
    ("LIMIT 3", 3, 0), ("OFFSET 2", None, 2), ("LIMIT 3 OFFSET 2", 3, 2), ("OFFSET 2 LIMIT 3", 3, 2),
])
def test_solution_modifiers(mods, limit, offset):
    q = parse_dialect("SELECT ?a WHERE { STREAM <s> [NOW] { ?a ?b ?c } } ORDER BY DESC(?a) " + mods)
    assert (q.modifiers.limit, q.modifiers.offset) == (limit, offset)
    assert q.modifiers.order_by[0][1] is True


@pytest.mark.parametrize("text, line, column, words", [
    # SPARQLstream
    ("SELECT *\nFROM STREAM <s> [NOW - 0 SECONDS TO NOW STEP 1 SECOND] WHERE { ?a ?b ?c }", 2, 24,
     "width must be positive"),
    ("SELECT *\nFROM STREAM <s> [NOW - 5 SECONDS TO NOW STEP 0 SECOND] WHERE { ?a ?b ?c }", 2, 46,
     "step must be positive"),
    ("SELECT *\nFROM STREAM <s> [NOW - 5 FORTNIGHTS TO NOW] WHERE { ?a ?b ?c }", 2, 26,
     "unknown time unit 'fortnights'"),
    ("SELECT *\nFROM STREAM <s> [NOW - 1 HOUR TO NOW - 2 HOURS] WHERE { ?a ?b ?c }", 2, 24, "needs a > d"),
    ("SELECT ISTREAM ?a (COUNT(?b) AS ?n)\nFROM STREAM <s> [NOW - 1 HOUR TO NOW] WHERE { ?a ?b ?c }",
     1, 16, "?a is neither grouped"),
    # Streaming SPARQL
    ("SELECT ?a\nFROM STREAM <s> WINDOW RANGE 0 S SLIDE WHERE { ?a ?b ?c }", 2, 30, "width must be positive"),
    ("SELECT ?a\nFROM STREAM <s> WINDOW RANGE 5 S SLIDE 0 S WHERE { ?a ?b ?c }", 2, 40,
     "step must be positive"),
    ("SELECT ?a\nFROM STREAM <s> WINDOW RANGE 5 PARSECS SLIDE WHERE { ?a ?b ?c }", 2, 32,
     "unknown time unit 'parsecs'"),
    ("SELECT ?a\nFROM STREAM <s> WINDOW ELEMS 0 WHERE { ?a ?b ?c }", 2, 30, "at least one triple"),
    ("SELECT ?a\nFROM NAMED <g> WHERE { ?a ?b ?c WINDOW ELEMS 3 }", 2, 33, "no stream to read"),
    ("SELECT ?a (SUM(?b) AS ?n)\nFROM STREAM <s> WINDOW ELEMS 2 WHERE { ?a ?b ?c }", 1, 8,
     "?a is neither grouped"),
    # LUPOSDATE
    ("SELECT ?a\nWHERE { WINDOW TYPE SLIDINGDURATION 0 { ?a ?b ?c } }", 2, 37, "width must be positive"),
    ("SELECT ?a\nWHERE { WINDOW TYPE SLIDINGTRIPLES 0 { ?a ?b ?c } }", 2, 36, "at least one triple"),
    ("SELECT ?a\nSTREAM INTERMEDIATERESULT DURATION 0\nWHERE { WINDOW TYPE SLIDINGTRIPLES 3 { ?a ?b ?c } }",
     2, 36, "period must be positive"),
    ("PREFIX lupos: <http://www.luposdate.org/>\nSELECT ?a lupos:sum(?b) AS ?s\n"
     "WHERE { WINDOW TYPE SLIDINGTRIPLES 3 { ?a ?b ?c } }", 2, 8, "?a is neither grouped"),
    # RSP-QL
    ("REGISTER RSTREAM <o> AS SELECT *\nFROM NAMED WINDOW <w> ON <s> [RANGE PT0S STEP PT1S] "
     "WHERE { WINDOW <w> { ?a ?b ?c } }", 2, 37, "width must be positive"),
    ("REGISTER RSTREAM <o> AS SELECT *\nFROM NAMED WINDOW <w> ON <s> [RANGE PT10S STEP PT0S] "
     "WHERE { WINDOW <w> { ?a ?b ?c } }", 2, 48, "step must be positive"),
    ("REGISTER RSTREAM <o> AS SELECT *\nFROM NAMED WINDOW <w> ON <s> [RANGE PT10X STEP PT1S] "
     "WHERE { WINDOW <w> { ?a ?b ?c } }", 2, 37, "'PT10X' is not an xsd:duration"),
    ("REGISTER RSTREAM <o> AS SELECT *\nFROM NAMED WINDOW <w> ON <s> [RANGE PT10S STEP PT1S]\n"
     "WHERE { WINDOW <v> { ?a ?b ?c } }", 3, 9, "window <v> is not declared"),
    ("REGISTER ISTREAM <o> AS SELECT ?a (MAX(?b) AS ?m)\nFROM NAMED WINDOW <w> ON <s> "
     "[RANGE PT10S STEP PT1S] WHERE { WINDOW <w> { ?a ?b ?c } }", 1, 32, "?a is neither grouped"),
])
def test_other_dialects_errors_name_line_and_column(text, line, column, words):
    from epsparql.algebra.streams import translate
    with pytest.raises(QueryError) as e:
        translate(parse_dialect(text))
    assert (e.value.line, e.value.column) == (line, column)
    assert words in str(e.value)


@pytest.mark.parametrize("text, dialect", [
    ("SELECT ?a FROM STREAM <s> [FROM NOW – 3 HOURS TO NOW – 2 HOURS] WHERE { ?a ?b ?c }", "sparqlstream"),
    ("SELECT RSTREAM(?a) FROM STREAM <s> [NOW-1 minute TO NOW] WHERE { ?a ?b ?c }", "sparqlstream"),
    ("SELECT ?a FROM STREAM <s> WINDOW ELEMS 3 WHERE { ?a ?b ?c }", "streaming-sparql"),
    ("SELECT ?a FROM STREAM <s> WINDOW RANGE 5 S FIXED WHERE { ?a ?b ?c }", "streaming-sparql"),
    ("SELECT ?a WHERE { WINDOW TYPE SLIDINGDURATION 500 { ?a ?b ?c } }", "luposdate"),
    ("PREFIX : <http://e/> REGISTER ISTREAM :o AS CONSTRUCT { ?a ?b ?c } "
     "FROM NAMED WINDOW :w ON :s [RANGE PT1M STEP PT10S] WHERE { WINDOW :w { ?a ?b ?c } }", "rspql"),
])
def test_detection_of_the_other_dialects(text, dialect):
    assert detect_dialect(text) == dialect
    assert parse_dialect(text).dialect == dialect


def test_other_dialects_syntax():
    q = parse_dialect("SELECT ?a FROM STREAM <s> [FROM NOW – 3 HOURS TO NOW – 2 HOURS STEP 30 MINUTES] "
                      "WHERE { ?a ?b ?c }")
    w = q.streams[0].window
    assert (w.kind, w.width, w.delay, w.step) == ("past", 10800, 7200, 1800)
    q = parse_dialect("SELECT DSTREAM DISTINCT ?a FROM NAMED STREAM <s> [NOW - 250 Millisecond TO NOW] "
                      "WHERE { GRAPH <s> { ?a ?b ?c } }")
    assert q.r2s == "dstream" and q.distinct and q.streams[0].name == URIRef("s")
    assert q.streams[0].window == Window("range", Fraction(1, 4))
    q = parse_dialect("SELECT ISTREAM (COUNT(*) AS ?n) FROM STREAM <s> [NOW - 1 DAY TO NOW] "
                      "WHERE { ?a ?b ?c }")
    assert q.r2s == "istream" and q.projection[0][1].name == "n"
    q = parse_dialect("SELECT ?a FROM STREAM <s> WINDOW RANGE 2 HOURS SLIDE WHERE { ?a ?b ?c }")
    assert q.streams[0].window == Window("range", Fraction(7200), Fraction(3600))
    q = parse_dialect("SELECT ?a FROM STREAM <s> WINDOW RANGE 1500 SLIDE 1 week WHERE { ?a ?b ?c }")
    assert q.streams[0].window == Window("range", Fraction(3, 2), Fraction(604800))
    q = parse_dialect("PREFIX lupos: <http://www.luposdate.org/>\nSELECT ?a lupos:count(?c) AS ?n\n"
                      "STREAM INTERMEDIATERESULT TRIPLES 10 WHERE { WINDOW TYPE SLIDINGTRIPLES 3 "
                      "{ ?a ?b ?c } } GROUP BY ?a")
    assert q.policy.kind == "triples" and q.policy.count == 10
    assert q.projection[1][0].name == "COUNT"
    q = parse_dialect("REGISTER DSTREAM <http://e/o> AS SELECT * FROM NAMED WINDOW <http://e/w> ON "
                      "<http://e/s> [RANGE P1DT1H STEP PT0.5S] WHERE { WINDOW <http://e/w> { ?a ?b ?c } }")
    assert q.r2s == "dstream" and q.output == URIRef("http://e/o")
    assert q.streams[0].window == Window("range", Fraction(90000), Fraction(1, 2))
    assert q.streams[0].name == URIRef("http://e/w")


def test_syntax_errors_speak_words_not_grammar_names():
    """Generated queries of every dialect, one word replaced by a wrong one
    (or cut short): the error names line and column and says what was
    expected in words, never a grammar-internal terminal name (R2S_WORD,
    XSD_DURATION, ...)."""
    import random
    import re

    from dialect_cases import (cqels_query, csparql_query, luposdate_query, rspql_query,
                               sparqlstream_query, streaming_sparql_query)
    rnd = random.Random(11)
    makers = [cqels_query, csparql_query, sparqlstream_query, streaming_sparql_query,
              luposdate_query, rspql_query]
    internal = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\$END")
    seen = 0
    for i in range(300):
        text, _ = makers[i % len(makers)](rnd)
        words = list(re.finditer(r"[A-Za-z]+|[\[\]{}().]", text))
        w = rnd.choice(words)
        bad = text[:w.start()] + rnd.choice(["FOO", "}", "[", "42", ""]) + text[w.end():]
        if rnd.random() < 0.2:
            bad = text[:w.start()]
        try:
            parse_dialect(bad)
        except QuerySyntaxError as e:
            seen += 1
            assert e.line >= 1 and e.column >= 1
            assert not internal.search(str(e).split("\n")[0]), str(e)
        except (QueryError, ValueError):
            pass
    assert seen > 100


BAD = '"P5"^^<http://www.w3.org/2001/XMLSchema#duration>'


@pytest.mark.parametrize("dialect, text", [
    ("csparql", "REGISTER QUERY q AS\nSELECT ?s FROM STREAM <http://ex/s> [RANGE 10s STEP 1s]\n"
                "WHERE { ?s <http://ex/p> ?o FILTER(?o > " + BAD + ") }"),
    ("cqels", "SELECT ?s\nWHERE { STREAM <http://ex/s> [RANGE 10s] { ?s <http://ex/p> ?o }\n"
              "FILTER(?o > " + BAD + ") }"),
    ("sparqlstream", "SELECT ?s FROM NAMED STREAM <http://ex/s> [NOW - 10 S SLIDE 1 S]\n"
                     "WHERE { ?s <http://ex/p> ?o FILTER(?o > " + BAD + ") }"),
    ("rspql", "REGISTER RSTREAM <http://ex/out> AS SELECT ?s\nFROM NAMED WINDOW <http://ex/w> "
              "ON <http://ex/s> [RANGE PT10S STEP PT1S]\nWHERE { WINDOW <http://ex/w> "
              "{ ?s <http://ex/p> ?o } FILTER(?o > " + BAD + ") }"),
])
def test_issue_23_an_invalid_typed_literal_is_refused_with_its_position(dialect, text):
    """Issue 23, finding 4: the literal check of EP-SPARQL (one definition,
    rdf/literal_forms.py) on the dialects' road too: refused with line and
    column, not registered to never match."""
    from epsparql import Engine
    from epsparql.language import QueryError
    with Engine() as eng, pytest.raises(QueryError) as info:
        eng.register(text, dialect=dialect)
    err = info.value
    assert '"P5"^^xsd:duration is not a valid xsd:duration' in err.message
    line = text.splitlines()[err.line - 1]
    assert line[err.column - 1:].startswith('"P5"'), (err.line, err.column)
