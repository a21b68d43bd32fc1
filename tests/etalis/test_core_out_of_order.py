"""Out-of-order detection in the core (issue 15): with the out_of_order
option a late event still pairs with the events before and after it.

Generated rules (every binary operator, or, where, within; not cnot, whose
"nothing in between" cannot be decided before the stream is complete) and
streams, pushed in a random order: the detections must be those the
reference evaluator finds on the stream (the same as sorted input gives).
Garbage collection is off: it forgets partial matches by the clock, which
a late event can be older than (that is the reorder buffer's lateness
bound, outside this test).
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from conftest import as_tuple
from core_reference import TEMPORAL, detections, rule_text
from epsparql.core import term
from gen_cases import Gen, stream, types_for


#: seq is the operator out_of_order changes (the others store both sides)
SEQ_HEAVY = ("seq",) * 6 + tuple(op for op in TEMPORAL if op != "seq")


def run(make_engine, rules, events, **options):
    eng = make_engine(gc_every=0)
    for k, v in options.items():
        eng.set_option(k, v)
    eng.add_rules("\n".join(rule_text(*r) for r in rules))
    got = eng.push_many([(term(n, *args), s, e) for (n, args, s, e) in events])
    assert eng.errors == []
    return Counter((as_tuple(d.event), d.start, d.end) for d in got)


def case(seed):
    rng = random.Random(seed)
    types = types_for(rng)
    rules = Gen(rng, types, ops=SEQ_HEAVY, extra=("or", "where", "within")).rules(
        rng.choice((1, 2, 3)))
    events = stream(rng, types, rng.randint(4, 12))
    shuffled = events[:]
    rng.shuffle(shuffled)
    return rules, shuffled, detections(rules, events)


SEEDS = range(100)


@pytest.mark.parametrize("seed", SEEDS)
def test_shuffled_input_gives_the_sorted_answers(make_engine, seed):
    rules, shuffled, expected = case(seed)
    got = run(make_engine, rules, shuffled, out_of_order=True)
    assert got == expected, ("\n".join(rule_text(*r) for r in rules), shuffled,
                             expected - got, got - expected)


def test_the_generated_cases_need_the_option(make_engine):
    """Guards the generator: without out_of_order many cases go wrong."""
    wrong = sum(run(make_engine, r, sh) != exp for r, sh, exp in map(case, SEEDS))
    assert wrong >= 10


def test_the_option_matters_for_seq():
    """Without it, a left side arriving after its right side is missed."""
    from epsparql.core import CoreEngine
    for ooo, want in ((False, []), (True, [(("d", (1,)), 1, 2)])):
        eng = CoreEngine(gc_every=0)
        eng.set_option("out_of_order", ooo)
        eng.add_rules("d(X) <- a(X) seq b(X).")
        got = eng.push_many([(term("b", 1), 2), (term("a", 1), 1)])
        assert [(as_tuple(d.event), d.start, d.end) for d in got] == want
        eng.close()


@pytest.mark.parametrize("policy", ["recent", "chronological"])
def test_consuming_policies_pair_a_late_event_once(make_engine, policy):
    eng = make_engine()
    eng.set_option("policy", policy)
    eng.set_option("out_of_order", True)
    eng.add_rules("d(X, Y) <- a(X) seq b(Y).")
    got = eng.push_many([(term("b", 1), 5), (term("b", 2), 6), (term("a", 0), 1)])
    assert len(got) == 1
    (head, start, end), = [(as_tuple(d.event), d.start, d.end) for d in got]
    assert start == 1 and head[1][1] == (2 if policy == "recent" else 1)
