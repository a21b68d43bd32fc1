"""Events raised inside the engine (issue 15, "a defect first").

An event pushed while the core is processing one -- from a where
condition, a detection hook or a do-action -- is queued and processed
right after the current event, in order, never lost; a rule that keeps
raising events stops at max_queued with an error naming it.

The generated test compares with a reference: raising c(X) at the time of
every a(X) is the same as having c(X) in the stream right after a(X).
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from conftest import as_tuple
from epsparql.core import term


def raise_helper(eng) -> str:
    """raise(E, T): push E at [T, T] into this engine (from inside it)."""
    return f"raise(E, T) :- epsparql_core:engine_event('{eng.module}', E, [T, T]).\n"


def heads(dets):
    return [(as_tuple(d.event), d.start, d.end) for d in dets]


@pytest.mark.parametrize("via", ["where", "hook"])
def test_a_loop_from_a_condition_or_hook_names_its_rule(make_engine, via):
    eng = make_engine()
    eng.set_option("max_queued", 10)
    if via == "where":
        eng.add_rules(raise_helper(eng) + "loop(X) <- span(a(X), _, T) where raise(a(X), T).")
    else:
        eng.add_rules(raise_helper(eng) + """
            tick(loop(X), [_, T]) :- raise(a(X), T).
            loop(X) <- a(X).""")
        eng.set_option("hook", "tick")
    eng.push(term("a", 1), 1)
    assert len(eng.errors) == 1
    assert "loop(" in eng.errors[0].message and "max_queued" in eng.errors[0].message


def test_raised_from_a_where_condition_is_processed(make_engine):
    eng = make_engine()
    eng.add_rules(raise_helper(eng) + """
        b(X) <- span(a(X), _, T) where raise(c(X), T).
        d(X) <- c(X).
    """)
    out = heads(eng.push(term("a", 1), 5))
    assert out == [(("b", (1,)), 5, 5), (("d", (1,)), 5, 5)]
    assert eng.errors == []
    assert eng.stats()["events"] == 2          # a(1) and the raised c(1)


def test_raised_from_a_hook(make_engine):
    eng = make_engine()
    eng.add_rules(raise_helper(eng) + """
        tick(b(X), [_, T]) :- !, raise(c(X), T).
        tick(_, _).
        b(X) <- a(X).
        d(X) <- c(X).
    """)
    eng.set_option("hook", "tick")
    out = heads(eng.push_many([(term("a", 1), 1), (term("a", 2), 2)]))
    # each raised c(X) is processed right after the a(X) that raised it,
    # before the next event of the batch
    assert out == [(("b", (1,)), 1, 1), (("d", (1,)), 1, 1),
                   (("b", (2,)), 2, 2), (("d", (2,)), 2, 2)]
    assert eng.errors == []


def test_raised_from_a_do_action(make_engine):
    eng = make_engine()
    eng.add_rules(raise_helper(eng) + """
        b(X) <- span(a(X), _, T) seq e(X) do raise(c(X), 100).
        d(X) <- c(X) seq f(X).
    """)
    out = heads(eng.push_many([(term("a", 1), 1), (term("e", 1), 2), (term("f", 1), 101)]))
    assert out == [(("b", (1,)), 1, 2), (("d", (1,)), 100, 101)]
    assert eng.errors == []


def test_raised_events_keep_their_order(make_engine):
    """Several raised events: FIFO, and those they raise in turn go last."""
    eng = make_engine()
    eng.add_rules(raise_helper(eng) + """
        r1 <- a where (raise(x(1), 1), raise(x(2), 1)).
        r2(N) <- x(N) where (N =:= 1 -> raise(y, 1) ; true).
        r3 <- y.
    """)
    out = [h[0] for h in heads(eng.push(term("a"), 1))]
    assert out == [("r1", ()), ("r2", (1,)), ("r2", (2,)), ("r3", ())]


def test_a_loop_stops_at_max_queued_with_an_error_naming_the_rule(make_engine):
    eng = make_engine()
    eng.set_option("max_queued", 25)
    eng.add_rules(raise_helper(eng) + """
        again(X) <- span(a(X), _, T) do raise(a(X), T).
    """)
    out = eng.push(term("a", 7), 1)
    # the pushed a(7) and 25 raised ones were processed; the 26th is dropped
    assert len(out) == 26
    assert eng.stats()["events"] == 26
    assert len(eng.errors) == 1
    msg = eng.errors[0].message
    assert "max_queued" in msg and "25" in msg and "again(" in msg, msg
    # the engine goes on: the next push works and loops (and stops) again
    out2 = eng.push(term("a", 8), 2)
    assert len(out2) == 26


def test_max_depth_default_runs_long_chains_and_the_limit_names_rule_and_option(make_engine):
    rules = "\n".join(f"e({i + 1}) <- e({i})." for i in range(1, 1500))
    eng = make_engine(max_depth=10000)          # the core's default
    eng.add_rules(rules)
    out = eng.push(term("e", 1), 1)
    assert len(out) == 1499 and eng.errors == []
    small = make_engine(max_depth=50)
    small.add_rules(rules)
    small.push(term("e", 1), 1)
    assert len(small.errors) == 1
    msg = small.errors[0].message
    assert "max_depth" in msg and "50" in msg and "e(" in msg and "set_event_option" in msg, msg


@pytest.mark.parametrize("seed", range(12))
def test_raising_equals_having_the_event_in_the_stream(make_engine, seed):
    """Generated: where-conditions raise c(X) at every a(X); the
    detections are those of a stream holding c(X) right after each a(X)."""
    rng = random.Random(seed)
    stream = []
    for t in range(rng.randint(5, 30)):
        name = rng.choice(["a", "b", "e"])
        stream.append((name, rng.randint(0, 2), t))
    rules = """
        k(X) <- c(X) seq e(X).
        m(X, Y) <- b(X) seq c(Y) where X < Y.
        n(X) <- (c(X) and b(X)) within 3.
    """
    raising = make_engine()
    raising.add_rules(raise_helper(raising) + "got(X) <- span(a(X), _, T) where raise(c(X), T).\n"
                      + rules)
    plain = make_engine()
    plain.add_rules("got(X) <- a(X).\n" + rules)
    expanded = []
    for name, x, t in stream:
        expanded.append((term(name, x), t))
        if name == "a":
            expanded.append((term("c", x), t))
    got = Counter(heads(raising.push_many([(term(n, x), t) for n, x, t in stream])))
    want = Counter(heads(plain.push_many(expanded)))
    assert got == want, (stream, got - want, want - got)
    assert raising.errors == [] and plain.errors == []
