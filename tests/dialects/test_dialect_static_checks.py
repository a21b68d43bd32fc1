"""EP-SPARQL's static checks on the dialects' queries (algebra/constants.py
through language/query_parts.py, language/scope.py): a regular expression
the engine cannot run and a broken scope rule are errors, an operator whose operand types never fit and a
variable no pattern binds are warnings, each with its line and column,
on every road (``Engine.register``, ``epsparql check``).  None of the
bundled queries (examples/: CSRBench, CityBench, the dialects' own) is
warned about.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

from epsparql import Engine, QueryWarning
from epsparql.algebra.constants import check_constants
from epsparql.language import QueryError
from epsparql.language.dialects import parse_dialect
from epsparql.prepare import EP_SPARQL, dialect_of, prepare_windowed

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "cli"))
from cli_child import cli  # noqa: E402  (the CLI in a child process)

P = "PREFIX ex: <http://ex.org/> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"

#: A query of each dialect with ``{W}`` where its WHERE clause goes (one
#: window over the stream ex:s, its triples matched by the body).
FRAMES = {
    "csparql": "REGISTER QUERY q AS " + P + "SELECT ?s FROM STREAM <http://ex.org/s> "
                                            "[RANGE 10s STEP 5s]\nWHERE { {W} }",
    "cqels": P + "SELECT ?s\nWHERE { STREAM <http://ex.org/s> [RANGE 10s] { {W} } }",
    "sparqlstream": P + "SELECT ?s FROM NAMED STREAM <http://ex.org/s> [NOW - 10 S SLIDE 5 S]\n"
                        "WHERE { {W} }",
    "streaming-sparql": P + "SELECT ?s FROM STREAM <http://ex.org/s> WINDOW RANGE 10000 MS "
                            "SLIDE 5000 MS\nWHERE { {W} }",
    "luposdate": P + "SELECT ?s\nWHERE { WINDOW TYPE SLIDINGDURATION 10000 { {W} } }",
    "rspql": P + "REGISTER RSTREAM <http://ex.org/out> AS SELECT ?s FROM NAMED WINDOW "
                 "<http://ex.org/w> ON <http://ex.org/s> [RANGE PT10S STEP PT5S]\n"
                 "WHERE { WINDOW <http://ex.org/w> { {W} } }",
}


def _marked(frame: str, body: str) -> tuple[str, tuple[int, int]]:
    """The query with ``body`` in it, without its '‸', and the mark's (line, column)."""
    text = frame.replace("{W}", body)
    i = text.index("‸")
    before = text[:i]
    return text.replace("‸", ""), (before.count("\n") + 1, i - before.rfind("\n"))


def _prefixed(query: str) -> str:
    """``query`` with the prefixes ex: and xsd: (after C-SPARQL's REGISTER … AS)."""
    if query.startswith("REGISTER QUERY"):
        at = query.index(" AS ") + 4
        return query[:at] + P + query[at:]
    return P + query


def _warnings(text: str, dialect: str | None = None) -> list[QueryWarning]:
    """The QueryWarnings of preparing ``text`` (the road Engine.register takes)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prepare_windowed(text, qid=1, dialect=dialect, module="m")
    return [w.message for w in caught if issubclass(w.category, QueryWarning)]


@pytest.mark.parametrize("dialect", sorted(FRAMES))
@pytest.mark.parametrize("body, words", [
    ('?s ex:p ?o FILTER(?o > "P5D"^^xsd:dayTimeDuration ‸+ 1)',
     "arithmetic on an xsd:duration"),
    ('?s ex:p ?o FILTER(STRLEN(STR(?o)) ‸< "3")', 'give the string a datatype: '
     'STRLEN(STR(?o)) < "3"^^xsd:decimal'),
    ('?s ex:p ?o FILTER(timestamp(?s, ex:p, ?o) ‸> 1000)',
     'times are seconds, but 1000 must be written as a date-time'),
    ('?s ex:p ?o FILTER(‸?prce > 5)', "?prce is not bound by any pattern"),
])
def test_type_and_unbound_warnings_name_line_and_column(dialect, body, words):
    text, position = _marked(FRAMES[dialect], body)
    got = _warnings(text, dialect)
    assert [w for w in got if words in w.message and (w.line, w.column) == position], \
        (position, [str(w) for w in got])


@pytest.mark.parametrize("dialect", sorted(FRAMES))
def test_a_regular_expression_the_engine_cannot_run_is_an_error(dialect):
    text, position = _marked(FRAMES[dialect], '?s ex:p ?o FILTER(‸REGEX(STR(?o), "a{2,1}"))')
    with pytest.raises(QueryError) as info:
        prepare_windowed(text, qid=1, dialect=dialect, module="m")
    assert "numbers out of order" in info.value.message
    assert (info.value.line, info.value.column) == position


@pytest.mark.parametrize("dialect", sorted(FRAMES))
def test_scope_rules_are_errors_with_line_and_column(dialect):
    """SPARQL 1.1's scope rules (language/scope.py), as for EP-SPARQL."""
    frame = FRAMES[dialect].replace("SELECT ?s", "SELECT (?o AS ‸?s)", 1)
    text, position = _marked(frame, "?s ex:p ?o")
    with pytest.raises(QueryError) as info:
        prepare_windowed(text, qid=1, dialect=dialect, module="m")
    assert "(... AS ?s) cannot assign ?s: it is already bound" in info.value.message
    assert (info.value.line, info.value.column) == position
    text, position = _marked(FRAMES[dialect], "{ _:b ex:p ?s } { ‸_:b ex:q ?o }")
    with pytest.raises(QueryError) as info:
        prepare_windowed(text, qid=1, dialect=dialect, module="m")
    assert "blank node _:b is used in two different groups" in info.value.message
    assert (info.value.line, info.value.column) == position


@pytest.mark.parametrize("query", [
    # GROUP BY and aggregate aliases, HAVING and ORDER BY reading them
    "REGISTER QUERY q AS SELECT ?k (COUNT(?o) AS ?n) FROM STREAM <http://ex.org/s> [RANGE 10s "
    "STEP 5s] WHERE { ?s ex:p ?o } GROUP BY (STR(?s) AS ?k) HAVING (?n > 1) ORDER BY DESC(?n)",
    # a sub-query's projection, VALUES (in the group and after the query)
    "REGISTER QUERY q AS SELECT ?s ?m ?c ?d FROM STREAM <http://ex.org/s> [RANGE 10s STEP 5s] "
    "WHERE { { SELECT ?s (MAX(?o) AS ?m) WHERE { ?s ex:p ?o } GROUP BY ?s } "
    "VALUES ?c { 1 2 } FILTER(?m > ?c && ?d != 0) } VALUES ?d { 3 }",
    # CQELS STREAM ?g, GRAPH ?g over the background
    "SELECT ?g ?n WHERE { STREAM ?g [RANGE 10s] { ?s ex:p ?o } GRAPH ?h { ?s ex:name ?n } "
    "FILTER(STR(?g) != STR(?h)) }",
    # RSP-QL WINDOW ?w
    "REGISTER RSTREAM <http://ex.org/out> AS SELECT ?w ?s FROM NAMED WINDOW <http://ex.org/w> "
    "ON <http://ex.org/s> [RANGE PT10S STEP PT5S] WHERE { WINDOW ?w { ?s ex:p ?o } "
    "FILTER(BOUND(?w)) }",
    # BIND, EXISTS (its own variables), an aggregate over an expression
    "REGISTER QUERY q AS SELECT ?s (SUM(?v * 2) AS ?t) FROM STREAM <http://ex.org/s> "
    "[RANGE 10s STEP 5s] WHERE { ?s ex:p ?o BIND(?o + 1 AS ?v) "
    "FILTER EXISTS { ?s ex:q ?z FILTER(?z > ?v) } } GROUP BY ?s",
])
def test_what_binds_a_variable_in_a_dialect(query):
    assert [str(w) for w in _warnings(_prefixed(query))] == []


@pytest.mark.parametrize("query, words", [
    # an aggregate's alias is a number: HAVING compares it with a string
    ("REGISTER QUERY q AS SELECT ?s (COUNT(?o) AS ?n) FROM STREAM <http://ex.org/s> "
     "[RANGE 10s STEP 5s] WHERE { ?s ex:p ?o } GROUP BY ?s HAVING (?n < \"a\")",
     '?n < "a": it compares a number with a string'),
    # ... and so it is through a sub-query
    ("SELECT ?s WHERE { { SELECT ?s (AVG(?o) AS ?m) WHERE { STREAM <http://ex.org/s> "
     "[RANGE 10s] { ?s ex:p ?o } } GROUP BY ?s } FILTER(?m = \"x\") }",
     '?m = "x": it compares a number with a string'),
    ("REGISTER QUERY q AS SELECT (SUM(STR(?o)) AS ?t) FROM STREAM <http://ex.org/s> "
     "[RANGE 10s STEP 5s] WHERE { ?s ex:p ?o }", "SUM of a string (STR(?o))"),
    # C-SPARQL 0.9's timestamp() is milliseconds; here it is an xsd:dateTime
    ("REGISTER QUERY q AS SELECT ?s FROM STREAM <http://ex.org/s> [RANGE 10s STEP 5s] "
     "WHERE { ?s ex:p ?o . ?o ex:p ?z FILTER(timestamp(?o, ex:p, ?z) - timestamp(?s, ex:p, ?o) "
     "< 1000) }", "timestamp() is an xsd:dateTime, not C-SPARQL 0.9's milliseconds"),
    ("SELECT ?s ?typo WHERE { STREAM <http://ex.org/s> [NOW] { ?s ex:p ?o } }",
     "?typo is not bound by any pattern of the query (a typo?): its column is always empty"),
])
def test_types_of_aggregates_and_aliases(query, words):
    got = [str(w) for w in _warnings(_prefixed(query))]
    assert len(got) == 1 and words in got[0], got


def _bundled() -> list[Path]:
    return sorted(p for p in (ROOT / "examples").rglob("*.rq"))


def test_no_bundled_query_is_warned_about():
    """Every query of examples/ (dialects and EP-SPARQL) passes the checks."""
    seen = 0
    for path in _bundled():
        text = path.read_text()
        if dialect_of(text) == EP_SPARQL:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # the builder's own (relative names)
            syntax = parse_dialect(text)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_constants(syntax)
        assert [str(w.message) for w in caught] == [], path
        seen += 1
    assert seen >= 40


def test_every_road_warns(tmp_path):
    """Engine.register, ``epsparql check`` and ``epsparql explain`` give the
    same warning, FILE:LINE:COLUMN on the command line."""
    text, (line, column) = _marked(FRAMES["csparql"],
                                   '?s ex:p ?o FILTER(?o > "P5D"^^xsd:dayTimeDuration ‸+ 1)')
    with Engine() as eng, pytest.warns(QueryWarning, match=f"line {line}, column {column}: "):
        eng.register(text)
    (tmp_path / "q.rq").write_text(text)
    for command in ("check", "explain"):
        r = cli(command, "q.rq", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        said = r.stdout + r.stderr
        assert f"q.rq:{line}:{column}: warning: " in said, said
        assert "arithmetic on an xsd:duration" in said
