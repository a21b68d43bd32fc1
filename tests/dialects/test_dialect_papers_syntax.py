"""Syntax from the languages' papers, and errors that say what is meant
(issue 25, finding 10)."""
from __future__ import annotations

import pytest
from rdflib import Literal, URIRef

from epsparql import Engine, QuerySyntaxError

EX = "http://example.org/"
S = EX + "s"


def answers(text: str, times) -> list:
    with Engine() as eng:
        q = eng.register(text)
        for t in times:
            eng.push(URIRef(EX + "a"), URIRef(EX + "p"), Literal(t), t, stream=S)
        eng.flush()
        return [(a.start, a.end, tuple(sorted((k, str(v)) for k, v in a.bindings.items())))
                for a in q.results()]


def test_sparqlstream_to_now_minus_zero_is_to_now():
    base = (f"PREFIX ex: <{EX}>\nSELECT ?o FROM STREAM <{S}> [NOW - 10 SECONDS TO NOW@ "
            f"STEP 5 SECONDS] WHERE {{ ?s ex:p ?o }}")
    times = [1, 4, 7, 12]
    got = answers(base.replace("@", ""), times)
    assert got and answers(base.replace("@", " - 0 SECONDS"), times) == got
    assert answers(base.replace("@", " - 0 MINUTES"), times) == got


def test_csparql_computed_every():
    text = (f"REGISTER QUERY q COMPUTED EVERY 5s AS SELECT (COUNT(*) AS ?n) FROM STREAM <{S}> "
            f"[RANGE 10s STEP 1s] WHERE {{ ?s ?p ?o }}")
    got = answers(text, range(12))
    # every 5 s, each window with its latest close's content: [c - 10, c) for
    # the closes c = 10, 11, … (C-SPARQL's windows from t0 = 0; none yet at 0
    # and 5: empty, and C-SPARQL reports non-empty content only, so no COUNT = 0)
    assert [(a, b, dict(c)["n"]) for a, b, c in got] == [(0, 10, "10"), (5, 15, "7")]
    with Engine(window_semantics="cql") as eng:       # the CQL reading: (t - 10, t]
        q = eng.register(text)
        for t in range(12):
            eng.push(URIRef(EX + "a"), URIRef(EX + "p"), Literal(t), t, stream=S)
        eng.flush()
        assert [(a.start, a.end, str(a["n"])) for a in q.results()] == [
            (-10, 0, "1"), (-5, 5, "6"), (0, 10, "10"), (5, 15, "6")]
    with pytest.raises(QuerySyntaxError):
        answers(text.replace("EVERY 5s", "EVERY"), [])


@pytest.mark.parametrize("window, message, column_of", [
    ("[RANGE 10 fortnights STEP 1s]", "unknown time unit 'fortnights'", "fortnights"),
    ("[RANGE 10 s STEP 1s]", "a duration is written without a space: 10s, not 10 s", "10 s"),
])
def test_durations_errors_point_at_what_is_wrong(window, message, column_of):
    text = f"REGISTER QUERY q AS SELECT ?s FROM STREAM <{S}> {window} WHERE {{ ?s ?p ?o }}"
    with pytest.raises(QuerySyntaxError) as e:
        Engine().register(text)
    assert message in str(e.value)
    assert e.value.line == 1 and e.value.column == text.index(column_of) + 1


@pytest.mark.parametrize("op", ["SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL"])
def test_an_event_operator_in_a_dialect_query_says_it_is_ep_sparql(op):
    text = (f"REGISTER QUERY q AS SELECT ?s FROM STREAM <{S}> [RANGE 10s STEP 1s] "
            f"WHERE {{ {{ ?s ?p ?o }} {op} {{ ?s ?p ?o }} }}")
    with pytest.raises(QuerySyntaxError) as e:
        Engine().register(text)
    assert f"{op} is an EP-SPARQL event operator, not part of C-SPARQL" in str(e.value)
    assert e.value.column == text.index(f" {op} ") + 2


def test_an_expected_word_is_listed_once_however_many_names_it_has():
    """Issue 25, finding 10: an error listed '-' twice (the grammar's DASH
    and a dialect's own '-' both expected at one place)."""
    from epsparql.language.parser import describe_expected
    text = describe_expected({"DASH", "'-'", "RSQB"})
    assert text.count("'-'") == 1 and "']'" in text
