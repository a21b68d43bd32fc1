"""C-SPARQL against the brute-force reference, on generated streams and queries."""
from __future__ import annotations

import random
import warnings

import pytest

from dialect_cases import answers_key, background, csparql_query, stream
from dialect_reference import evaluate
from epsparql import Engine
from epsparql.window_runtime import UnboundedWindowWarning


def run_engine(text: str, rows, bg):
    with Engine(reasoning="none") as eng:
        for g, triples in bg.items():
            eng.add_background(triples, graph=g)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnboundedWindowWarning)
            q = eng.register(text)
        assert q.dialect == "csparql"
        eng.push_many((r.s, r.p, r.o, r.tau, None, r.stream) for r in rows)
        eng.flush()
        assert eng.errors == []
        return [(a.start, a.end, a.bindings) for a in q.results()]


@pytest.mark.parametrize("seed", range(150))
def test_csparql_matches_reference(seed):
    rnd = random.Random(1000 + seed)
    rows = stream(rnd, rnd.randint(0, 25))
    bg = background(rnd)
    text, ref = csparql_query(rnd)
    expected = evaluate(ref, rows, bg)
    got = run_engine(text, rows, bg)
    assert answers_key(got) == answers_key(expected), (text, rows)
