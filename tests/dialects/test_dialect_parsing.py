"""Dialect detection, the front ends' syntax, and the errors docs/DIALECTS.md lists."""
from __future__ import annotations

from fractions import Fraction

import pytest

from epsparql.language import QueryError, QuerySyntaxError
from epsparql.language.dialects import detect_dialect, parse_dialect

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
