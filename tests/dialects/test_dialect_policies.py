"""The report policies and R2S operators of the other dialects, on the
runtime they share: generated CQELS queries re-registered with each policy
(window close, non-empty close, periodic, every n triples, final) and each
of RSTREAM/ISTREAM/DSTREAM, against the reference."""
from __future__ import annotations

import dataclasses
import random
import warnings
from fractions import Fraction

import pytest

from dialect_cases import answers_key, background, cqels_query, stream
from dialect_reference import evaluate
from epsparql.language.dialects import parse_dialect
from epsparql.language.dialects.ast import Policy
from epsparql import Engine

VARIANTS = [
    (Policy("close"), ("close", False)),
    (Policy("close", non_empty=True), ("close", True)),
    (Policy("period", period=Fraction(2)), ("period", Fraction(2))),
    (Policy("period", period=Fraction(3, 2)), ("period", Fraction(3, 2))),
    (Policy("triples", count=3), ("triples", 3)),
    (Policy("triples", count=1), ("triples", 1)),
    (Policy("final"), ("final",)),
]


@pytest.mark.parametrize("seed", range(80))
def test_policy_and_r2s_match_reference(seed):
    rnd = random.Random(5000 + seed)
    rows = stream(rnd, rnd.randint(0, 25))
    bg = background(rnd)
    text, ref = cqels_query(rnd, "cql")    # other policies read SLIDE windows by their steps
    policy, ref_policy = VARIANTS[seed % len(VARIANTS)]
    r2s = ("rstream", "istream", "dstream")[(seed // len(VARIANTS)) % 3]
    ast = dataclasses.replace(parse_dialect(text, dialect="cqels"), policy=policy, r2s=r2s)
    ref = dataclasses.replace(ref, policy=ref_policy, r2s=r2s)
    expected = evaluate(ref, rows, bg)
    with Engine(reasoning="none") as eng:
        for g, triples in bg.items():
            eng.add_background(triples, graph=g)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            q = eng.register(ast)
        eng.push_many((r.s, r.p, r.o, r.tau, None, r.stream) for r in rows)
        eng.flush()
        assert eng.errors == []
        got = [(a.start, a.end, a.bindings) for a in q.results()]
    assert answers_key(got) == answers_key(expected), (policy, r2s, text, rows)
