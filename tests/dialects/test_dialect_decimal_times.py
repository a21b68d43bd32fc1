"""Time stamps are the decimals they were written as (issue 25, finding 1).

A stream with decimal sub-second stamps (tenths of a second, near the
Unix epoch and near zero) must give every dialect and EP-SPARQL the
answers the same stream gives with the stamps scaled to integers and the
windows and durations scaled alike: windows, steps, panes and
getDURATION() compute with 0.1 as 1/10, not with its binary neighbour.
Both scales run in one engine kind, on many generated streams; the
answers' times are compared scaled back, exactly."""
from __future__ import annotations

import random
from fractions import Fraction

import pytest
from rdflib import Literal, URIRef

from epsparql import Engine

EX = "http://example.org/"
S = EX + "s"
P = f"PREFIX ex: <{EX}>\n"
XSD = "http://www.w3.org/2001/XMLSchema#"

#: each query at two scales: its windows in tenths of a second (for the
#: decimal stamps) and in seconds (for the same stamps times ten)
QUERIES = {
    "csparql": lambda w, s: (f"REGISTER QUERY q AS {P}SELECT (COUNT(*) AS ?n) (SUM(?v) AS ?sum) "
                             f"FROM STREAM <{S}> [RANGE {w} STEP {s}] WHERE {{ ?x ex:v ?v }}"),
    "csparql_groups": lambda w, s: (f"REGISTER QUERY q AS {P}SELECT ?x (AVG(?v) AS ?a) "
                                    f"FROM STREAM <{S}> [RANGE {w} STEP {s}] "
                                    f"WHERE {{ ?x ex:v ?v }} GROUP BY ?x"),
    "cqels": lambda w, s: (f"{P}SELECT ?x ?v WHERE {{ STREAM <{S}> [RANGE {w} SLIDE {s}] "
                           f"{{ ?x ex:v ?v }} }}"),
    "rspql": lambda w, s: (f"REGISTER RSTREAM <{EX}out> AS {P}SELECT (COUNT(*) AS ?n) "
                           f"FROM NAMED WINDOW <{EX}w> ON <{S}> [RANGE {w} STEP {s}] "
                           f"WHERE {{ WINDOW <{EX}w> {{ ?x ex:v ?v }} }}"),
    "sparqlstream": lambda w, s: (f"{P}SELECT ?x ?v FROM STREAM <{S}> "
                                  f"[NOW - {w} TO NOW STEP {s}] WHERE {{ ?x ex:v ?v }}"),
    "streaming": lambda w, s: (f"{P}SELECT ?x ?v FROM STREAM <{S}> WINDOW RANGE {w} SLIDE {s} "
                               f"WHERE {{ ?x ex:v ?v }}"),
    "luposdate": lambda w, s: (f"{P}SELECT (COUNT(?v) AS ?n) STREAM INTERMEDIATERESULT DURATION {s} "
                               f"WHERE {{ WINDOW TYPE SLIDINGDURATION {w} {{ ?x ex:v ?v }} }}"),
    "ep-sparql": lambda w, s: (f"{P}SELECT ?a ?b WHERE {{ {{ ?x ex:v ?a }} SEQ {{ ?y ex:v ?b }} "
                               f"FILTER(getDURATION() <= \"{w}\"^^<{XSD}duration>) }}"),
}

#: (width, step) as written at the two scales
SCALES = {
    "csparql": (("300ms", "100ms"), ("3s", "1s")),
    "csparql_groups": (("500ms", "200ms"), ("5s", "2s")),
    "cqels": (("1s", "100ms"), ("10s", "1s")),
    "rspql": (("PT0.3S", "PT0.1S"), ("PT3S", "PT1S")),
    "sparqlstream": (("300 MILLISECONDS", "100 MILLISECONDS"), ("3 SECONDS", "1 SECOND")),
    "streaming": (("300 MS", "100 MS"), ("3 S", "1 S")),
    "luposdate": (("300", "100"), ("3000", "1000")),
    "ep-sparql": (("PT0.3S", None), ("PT3S", None)),
}


def stream(seed: int, base: int) -> list[tuple[int, int, int]]:
    """(key, value, tenths) rows, nondecreasing tenths from ``base``."""
    r = random.Random(seed)
    t = base + r.randrange(0, 5)
    rows = []
    for _ in range(r.randrange(8, 30)):
        t += r.choice([0, 1, 1, 2, 3, 7])
        rows.append((r.randrange(3), r.randrange(10), t))
    return rows


def answers(name: str, decimal: bool, rows) -> list[tuple]:
    w, s = SCALES[name][0 if decimal else 1]
    with Engine() as eng:
        q = eng.register(QUERIES[name](w, s))
        for k, v, tenths in rows:
            t = float(Fraction(tenths, 10)) if decimal else tenths
            if decimal and tenths % 10 == 0:
                t = tenths // 10                  # a whole second comes as an integer
            eng.push(URIRef(f"{EX}x{k}"), URIRef(EX + "v"), Literal(v), t, stream=S)
        eng.flush()
        out = []
        for a in q.results():
            scale = 10 if decimal else 1
            start = Fraction(str(a.start)) * scale
            end = Fraction(str(a.end)) * scale
            out.append((start, end, tuple(sorted((k, str(x)) for k, x in a.bindings.items()))))
        return sorted(out)


@pytest.mark.parametrize("base", [0, 17_000_000_000])         # tenths: 0 s and 1.7e9 s
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_decimal_stamps_answer_as_their_integer_scaling(name, seed, base):
    rows = stream(seed, base)
    assert answers(name, True, rows) == answers(name, False, rows)


def test_the_issues_example():
    # value i at 1700000000.i, [RANGE 300ms STEP 100ms]: three rows a window,
    # C-SPARQL's windows [c - 0.3, c) reported at their closes c (each
    # window holding a row, up to the last opened by 1700000001)
    def end(tenths):
        t = Fraction(17_000_000_000 + tenths, 10)
        return int(t) if t.denominator == 1 else float(t)

    def run(semantics):
        with Engine(window_semantics=semantics) as eng:
            q = eng.register(QUERIES["csparql"]("300ms", "100ms"))
            for i in range(1, 11):
                eng.push(URIRef(f"{EX}x{i}"), URIRef(EX + "v"), Literal(i),
                         float(f"1700000000.{i}") if i < 10 else 1700000001, stream=S)
            eng.flush()
            return [(a.end, int(a["n"]), int(a["sum"])) for a in q.results()]

    assert run("engine") == [(end(2), 1, 1), (end(3), 2, 3)] + [
        (end(i + 1), 3, 3 * i - 3) for i in range(3, 11)] + [(end(12), 2, 19), (end(13), 1, 10)]
    # the CQL reading: (c - 0.3, c]
    assert run("cql") == [(end(1), 1, 1), (end(2), 2, 3)] + [
        (end(i), 3, 3 * i - 3) for i in range(3, 11)]


def test_get_duration_of_events_three_tenths_apart():
    with Engine() as eng:
        q = eng.register(QUERIES["ep-sparql"]("PT0.3S", None))
        eng.push(URIRef(EX + "x"), URIRef(EX + "v"), Literal(1), 0.1)
        eng.push(URIRef(EX + "y"), URIRef(EX + "v"), Literal(2), 0.4)
        eng.flush()
        assert [(a.start, a.end) for a in q.results()] == [(0.1, 0.4)]
