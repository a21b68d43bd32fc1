"""Detected heads are fed back as events only when some rule listens to
them (the core leaves the look-up out otherwise): every way a rule can
name the event it emits must count as listened to."""
from __future__ import annotations

from epsparql.core import term


def _heads(dets):
    return sorted((d.event.name, d.start, d.end) for d in dets)


def test_labelled_rule_head_is_fed_back(make_engine):
    eng = make_engine()
    eng.add_rules("""
        r1 'rule:' b(X) <- a(X).
        c(X) <- b(X) seq d(X).
    """)
    out = eng.push_many([(term("a", 1), 1), (term("d", 1), 5)])
    assert _heads(out) == [("b", 1, 1), ("c", 1, 5)]


def test_listener_added_after_the_emitting_rule(make_engine):
    eng = make_engine()
    eng.add_rules("b(X) <- a(X).")
    assert _heads(eng.push_many([(term("a", 1), 1)])) == [("b", 1, 1)]
    eng.add_rules("c(X) <- b(X) seq d(X).")
    out = eng.push_many([(term("a", 2), 2), (term("d", 2), 6)])
    assert _heads(out) == [("b", 2, 2), ("c", 2, 6)]


def test_alarm_event_is_fed_back_under_a_label(make_engine):
    eng = make_engine()
    eng.add_rules("""
        t 'rule:' exceptionAlarm(ring(X), 10) <- a(X).
        after(X) <- ring(X) seq b(X).
    """)
    out = eng.push_many([(term("a", 1), 0), (term("b", 1), 12)])
    assert _heads(out) == [("after", 0, 12), ("ring", 0, 10)]
