"""CQELS-QL against the brute-force reference, on generated streams and queries."""
from __future__ import annotations

import random

import pytest

from dialect_cases import answers_key, background, cqels_query, stream
from dialect_reference import evaluate
from epsparql import Engine


def run_engine(text: str, rows, bg, reasoning="none"):
    with Engine(reasoning=reasoning) as eng:
        for g, triples in bg.items():
            eng.add_background(triples, graph=g)
        q = eng.register(text, dialect="cqels")
        eng.push_many((r.s, r.p, r.o, r.tau, None, r.stream) for r in rows)
        eng.flush()
        assert eng.errors == []
        return [(a.start, a.end, a.bindings) for a in q.results()]


@pytest.mark.parametrize("seed", range(150))
def test_cqels_matches_reference(seed):
    rnd = random.Random(seed)
    rows = stream(rnd, rnd.randint(0, 25))
    bg = background(rnd)
    text, ref = cqels_query(rnd)
    expected = evaluate(ref, rows, bg)
    got = run_engine(text, rows, bg)
    assert answers_key(got) == answers_key(expected), (text, rows)
