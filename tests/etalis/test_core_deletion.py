"""Rule deletion at run time (issue 15): deleting a rule by its label stops
it, drops its partial matches, and leaves every other rule as it was.

Generated: labelled rules (identical sub-patterns shared between them),
half a stream, a random subset deleted, the rest of the stream.  A kept
rule detects what the reference finds on the whole stream, a deleted one
what it finds on the first half; the stored partial matches are exactly
those of an engine that only ever had the kept rules.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from conftest import as_tuple
from core_reference import detections, rule_text
from epsparql.core import term
from gen_cases import Gen, stream, types_for


def labelled(rules):
    return "\n".join(f"r{i} 'rule:' {rule_text(*r)}" for i, r in enumerate(rules))


def delete(eng, what: str) -> None:
    """Through a directive: the engine's own engine_delete_rules/2."""
    eng.add_rules(f":- epsparql_core:engine_delete_rules('{eng.module}', {what}).")


def det_counter(dets):
    return Counter((as_tuple(d.event), d.start, d.end) for d in dets)


def push(eng, events):
    return eng.push_many([(term(n, *args), s, e) for (n, args, s, e) in events])


@pytest.mark.parametrize("seed", range(40))
def test_deleted_rules_stop_and_the_others_do_not_notice(make_engine, seed):
    rng = random.Random(seed)
    types = types_for(rng)
    gen = Gen(rng, types, extra=("or", "cnot", "where", "within"))
    rules = gen.rules(rng.randint(2, 4))
    if rng.random() < 0.5:                              # a rule sharing a body with another
        base = rng.choice(rules)
        rules.append((f"h{len(rules) + 1}",) + base[1:])
    events = stream(rng, types, rng.randint(6, 14))
    half = len(events) // 2
    gone = set(rng.sample(range(len(rules)), rng.randint(1, len(rules) - 1)))

    eng = make_engine(gc_every=0)
    eng.add_rules(labelled(rules))
    got = det_counter(push(eng, events[:half]))
    for i in sorted(gone):
        delete(eng, f"r{i}")
    got += det_counter(push(eng, events[half:]))
    assert eng.errors == []

    kept = [r for i, r in enumerate(rules) if i not in gone]
    deleted = [r for i, r in enumerate(rules) if i in gone]
    expected = detections(kept, events) + detections(deleted, events[:half])
    assert got == expected, (labelled(rules), gone, events, expected - got, got - expected)

    # the partial matches kept are those of the kept rules alone
    only = make_engine(gc_every=0)
    only.add_rules(labelled(kept))
    push(only, events)
    assert eng.stats()["goals"] == only.stats()["goals"]
    assert eng.stats()["rules"] == len(kept)


def test_delete_by_label_deletes_every_rule_with_it(make_engine):
    eng = make_engine()
    eng.add_rules("""
        grp 'rule:' x(A) <- a(A) seq b(A).
        grp 'rule:' y(A) <- a(A) and b(A).
        other 'rule:' z(A) <- a(A) seq b(A).
        w(A) <- a(A).
    """)
    eng.delete_rules("grp")                     # the Python API
    got = det_counter(push(eng, [("a", (1,), 1, 1), ("b", (1,), 2, 2)]))
    assert got == Counter({(("z", (1,)), 1, 2): 1, (("w", (1,)), 1, 1): 1})


def test_delete_an_unlabelled_rule_by_its_text(make_engine):
    eng = make_engine()
    eng.add_rules("x(A) <- a(A) seq b(A).\ny(A) <- a(A) seq b(A).")
    delete(eng, "(x(Q) <- a(Q) seq b(Q))")
    got = det_counter(push(eng, [("a", (1,), 1, 1), ("b", (1,), 2, 2)]))
    assert got == Counter({(("y", (1,)), 1, 2): 1})


def test_deleting_from_inside_a_rule(make_engine):
    """A rule's do-action deletes another rule while events are processed."""
    eng = make_engine()
    eng.add_rules(f"""
        victim 'rule:' v(A) <- a(A).
        stop <- b do epsparql_core:engine_delete_rules('{eng.module}', victim).
    """)
    got = det_counter(push(eng, [("a", (1,), 1, 1), ("b", (), 2, 2), ("a", (2,), 3, 3)]))
    assert got == Counter({(("v", (1,)), 1, 1): 1, (("stop", ()), 2, 2): 1})
    assert eng.errors == []
