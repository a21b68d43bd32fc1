"""Alarms of the core on event time (issue 15, timers).

A rule `exceptionAlarm(E, Secs) <- Body` sets, for every detection of Body
over [T1, T2], an alarm that emits E over [T1, T2 + Secs] when the clock
passes T2 + Secs: before the first event ending after it, or at advance(t)
for t at or after it.  No sleeps: the clock is the stream's.

Generated streams check the absence pattern "no delivery within D seconds
of an assignment" against a reference written from that sentence.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from conftest import as_tuple
from epsparql.core import term


def heads(dets):
    return [(as_tuple(d.event), d.start, d.end) for d in dets]


def test_alarm_fires_when_the_clock_passes_it(make_engine):
    eng = make_engine()
    eng.add_rules("exceptionAlarm(ring(X), 10) <- a(X).")
    assert heads(eng.push(term("a", 1), 5)) == []
    assert heads(eng.push(term("z"), 15)) == []          # due at 15: not passed yet
    assert heads(eng.push(term("z"), 15.5)) == [(("ring", (1,)), 5, 15)]
    assert heads(eng.push(term("z"), 100)) == []          # fired once


def test_alarm_fires_before_the_event_that_passes_it(make_engine):
    eng = make_engine()
    eng.add_rules("""
        exceptionAlarm(ring(X), 10) <- a(X).
        after(X) <- ring(X) seq b(X).
        before(X) <- b(X) seq ring(X).
    """)
    out = heads(eng.push_many([(term("a", 1), 0), (term("b", 1), 12)]))
    assert out == [(("ring", (1,)), 0, 10), (("after", (1,)), 0, 12)]


def test_advance_fires_alarms_flush_does_not(make_engine):
    eng = make_engine()
    eng.add_rules("""
        exceptionAlarm(ring(X), 10) <- a(X).
        exceptionAlarmAbsoluteDatime(noon(X), datime(2024, 1, 1, 12, 0, 0)) <- a(X).
    """)
    eng.push(term("a", 1), 0)
    assert heads(eng.flush()) == []
    assert heads(eng.advance(9.5)) == []
    assert heads(eng.advance(10)) == [(("ring", (1,)), 0, 10)]
    noon = 1704110400                                     # 2024-01-01T12:00:00Z
    assert heads(eng.advance(noon)) == [(("noon", (1,)), 0, noon)]


def test_alarms_are_part_of_the_state(make_engine):
    a = make_engine()
    rules = "exceptionAlarm(ring(X), 10) <- a(X)."
    a.add_rules(rules)
    a.push(term("a", 1), 0)
    b = make_engine()
    b.add_rules(rules)
    b.import_state(a.export_state())
    assert heads(b.advance(20)) == [(("ring", (1,)), 0, 10)]


def test_a_bad_delay_is_an_error_of_the_event(make_engine):
    eng = make_engine()
    eng.add_rules("exceptionAlarm(ring, D) <- a(D).")
    eng.push(term("a", "soon"), 1)
    assert len(eng.errors) == 1 and "soon" in eng.errors[0].message


def reference_missed(stream, delay):
    """missed(D) over [ta, ta + delay] for each assign(D) at ta with no
    delivery(D) strictly inside (ta, ta + delay); a delivery at exactly
    ta + delay is too late (the interval is open at its end)."""
    out = Counter()
    for name, d, ta in stream:
        if name != "assign":
            continue
        due = ta + delay
        if not any(n == "delivery" and dd == d and ta < t < due for n, dd, t in stream):
            out[(("missed", (d,)), ta, due)] += 1
    return out


@pytest.mark.parametrize("seed", range(20))
def test_absence_pattern_against_reference(make_engine, seed):
    rng = random.Random(seed)
    delay = rng.choice([3, 5, 10])
    stream, t = [], 0
    for _ in range(rng.randint(5, 40)):
        t += rng.choice([0, 1, 1, 2, 3])
        stream.append((rng.choice(["assign", "assign", "delivery"]), rng.randint(0, 3), t))
    eng = make_engine()
    eng.add_rules(f"""
        exceptionAlarm(check(D), {delay}) <- assign(D).
        missed(D) <- check(D) cnot delivery(D).
    """)
    got = Counter(heads(eng.push_many([(term(n, d), t) for n, d, t in stream])))
    got.update(heads(eng.advance(t + delay + 1)))
    got = Counter({k: v for k, v in got.items() if k[0][0] == "missed"})
    assert got == reference_missed(stream, delay), stream
    assert eng.errors == []
