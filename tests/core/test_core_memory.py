"""Goal store bounds, garbage collection, consumption policies, aggregates.

Bounds are derived from the window and the garbage-collection interval,
never from wall time.  Events arrive one per second (t = 0, 1, 2, ...).

A goal stored at start T1 is dead once now - T1 > W (CORE.md); stores are
swept every gc_every events, and a store is swept at most once per W/4 of
application time.  So between two sweeps at most W + W/4 + (the time
covered by gc_every events) seconds' worth of goals are alive.
"""
from __future__ import annotations

import math

import pytest

from conftest import dets
from epsparql.core import term

T = term
N_EVENTS = 20_000


def stream(n, keys=100):
    """a(K) at even t, b(K) at odd t, K cycling over `keys` values: each
    b(K) has an a(K) one second before it, the previous a(K) being
    2 * keys seconds older (None: every K is new)."""
    return [(T("a" if i % 2 == 0 else "b", i // 2 if keys is None else (i // 2) % keys), i)
            for i in range(n)]


def push_sampled(engine, events, chunk=37):
    """Push in odd-sized chunks (so samples fall between GC runs), return
    the goal counts after each chunk and the number of detections."""
    samples, ndet = [], 0
    for i in range(0, len(events), chunk):
        ndet += len(engine.push_many(events[i:i + chunk]))
        samples.append(engine.stats()["goals"])
    engine.drain()
    return samples, ndet


def bound(window, gc_every, events_per_second=1.0):
    return math.ceil((window + window / 4 + gc_every / events_per_second + 1) * events_per_second)


@pytest.mark.parametrize("gc_every", [100, 1000])
def test_window_bounds_goal_store_seq(make_engine, gc_every):
    W = 50
    eng = make_engine(gc_every=gc_every)
    eng.add_rules(f"h(X) <- a(X) seq b(X) within {W}.")
    samples, ndet = push_sampled(eng, stream(N_EVENTS))
    assert ndet == N_EVENTS // 2                   # every b finds its a
    assert max(samples) <= bound(W, gc_every), max(samples)
    assert max(samples) < N_EVENTS // 4            # far from unbounded growth
    assert eng.stats()["events"] == N_EVENTS


def test_window_bounds_goal_store_symmetric(make_engine):
    W, every = 30, 200
    eng = make_engine(gc_every=every)
    eng.add_rules(f"h(X) <- a(X) and b(X) within {W}.")
    samples, ndet = push_sampled(eng, stream(N_EVENTS))
    # each b(K) at t pairs with a(K) at t-1 only (the previous a(K) is 200 s older)
    assert ndet == N_EVENTS // 2
    assert max(samples) <= bound(W, every), max(samples)


def test_window_bounds_cnot_store(make_engine):
    W, every = 40, 100
    eng = make_engine(gc_every=every)
    eng.add_rules(f"h(X) <- (a(X) seq b(X)) cnot c within {W}.")
    events = []
    for i in range(N_EVENTS // 2):
        events.append((T("a", i % 10), 2 * i))
        events.append(("c", 2 * i + 1) if i % 3 == 0 else (T("b", i % 10), 2 * i + 1))
    samples, _ = push_sampled(eng, events)
    # two events per second of stream time per 2 s: at most W + W/4 + every events alive
    assert max(samples) <= bound(W, every), max(samples)


def test_gc_period_bounds_goal_store(make_engine):
    W, period = 20, 10
    eng = make_engine(gc_every=0, gc_period=period)
    eng.add_rules(f"h(X) <- a(X) seq b(X) within {W}.")
    samples, ndet = push_sampled(eng, stream(5000))
    assert ndet == 2500
    assert max(samples) <= bound(W, period), max(samples)


def test_without_window_goals_grow(make_engine):
    eng = make_engine(gc_every=100)
    eng.add_rules("h(X) <- a(X) seq b(X).")
    samples, ndet = push_sampled(eng, stream(N_EVENTS, keys=None))
    # every a is a goal forever (documented): the count only grows
    assert samples == sorted(samples)
    assert samples[-1] == N_EVENTS // 2
    eng.gc()
    assert eng.stats()["goals"] == N_EVENTS // 2
    assert ndet == N_EVENTS // 2


def test_explicit_gc_removes_expired_goals(make_engine):
    W = 50
    eng = make_engine(gc_every=0)                  # never on its own
    eng.add_rules(f"h(X) <- a(X) seq b(X) within {W}.")
    eng.push_many(stream(1000, keys=10))
    assert eng.stats()["goals"] == 500             # nothing collected yet
    eng.gc()
    # now = 999: a goal at T1 is dead iff 999 - T1 > 50; a's at even
    # T1 in 950..998 stay
    assert eng.stats()["goals"] == 25
    eng.gc()
    assert eng.stats()["goals"] == 25              # idempotent
    # what survived still completes: a(9) at 958, 978 and 998
    got = dets(eng.push(T("b", 9), 1000))
    assert got == [(("h", (9,)), 958, 1000), (("h", (9,)), 978, 1000), (("h", (9,)), 998, 1000)]


def test_gc_does_not_change_detections(make_engine):
    rules = """h(X) <- a(X) seq b(X) within 7.
               g(X, Y) <- (a(X) and b(Y) within 3) cnot c.
               k(X) <- (a(X) or b(X)) seq a(X) within 4."""
    events = [(T("a" if i % 3 else "b", i % 4), i // 2) for i in range(600)]
    events += [("c", 300 + i) for i in range(0, 50, 7)]
    events.sort(key=lambda e: e[1])
    got = []
    for every in (0, 1, 3):
        eng = make_engine(gc_every=every)
        eng.add_rules(rules)
        got.append(dets(eng.push_many(events)))
    assert got[0] and got[0] == got[1] == got[2]


# ---------------------------------------------------------------------------
# consumption policies

PARTNERS = [(T("a", 1), 1), (T("a", 2), 2), (T("b", 10), 3), (T("b", 11), 4), (T("b", 12), 5)]


def test_policy_recent_seq(make_engine):
    eng = make_engine(policy="recent")
    eng.add_rules("h(X, Y) <- a(X) seq b(Y).")
    got = [dets(eng.push(*e)) for e in PARTNERS]
    # b(10) takes the most recent a (2) and consumes it; b(11) gets a(1); b(12) nothing
    assert got == [[], [], [(("h", (2, 10)), 2, 3)], [(("h", (1, 11)), 1, 4)], []]
    assert eng.stats()["goals"] == 0


def test_policy_chronological_seq(make_engine):
    eng = make_engine(policy="chronological")
    eng.add_rules("h(X, Y) <- a(X) seq b(Y).")
    got = [dets(eng.push(*e)) for e in PARTNERS]
    assert got == [[], [], [(("h", (1, 10)), 1, 3)], [(("h", (2, 11)), 2, 4)], []]
    assert eng.stats()["goals"] == 0


@pytest.mark.parametrize("policy, first, second", [
    ("recent", (2, 10), (1, 11)),
    ("chronological", (1, 10), (2, 11)),
])
def test_policy_symmetric_operator(make_engine, policy, first, second):
    eng = make_engine(policy=policy)
    eng.add_rules("h(X, Y) <- a(X) and b(Y).")
    got = [dets(eng.push(*e)) for e in PARTNERS + [(T("a", 3), 6)]]
    assert got[:2] == [[], []]
    assert got[2] == [(("h", first), min(first[0], 3), 3)]
    assert got[3] == [(("h", second), min(second[0], 4), 4)]
    # b(12) found no a: it was stored, and a(3) now pairs with it
    assert got[4] == []
    assert got[5] == [(("h", (3, 12)), 5, 6)]
    assert eng.stats()["goals"] == 0


def test_policy_consumes_per_join_key(make_engine):
    eng = make_engine(policy="recent")
    eng.add_rules("h(K, X, Y) <- a(K, X) seq b(K, Y).")
    got = dets(eng.push_many([(T("a", "p", 1), 1), (T("a", "q", 2), 2), (T("a", "p", 3), 3),
                              (T("b", "p", 9), 4), (T("b", "p", 8), 5), (T("b", "p", 7), 6),
                              (T("b", "q", 6), 7)]))
    assert got == sorted([(("h", ("p", 3, 9)), 3, 4), (("h", ("p", 1, 8)), 1, 5),
                          (("h", ("q", 2, 6)), 2, 7)], key=repr)


@pytest.mark.parametrize("policy, expected", [
    ("recent", [((3, 4), 3, 4), ((1, 2), 2, 5), ((5, 6), 1, 6)]),
    ("chronological", [((1, 4), 2, 4), ((5, 6), 1, 6)]),
])
def test_policy_partner_must_satisfy_the_where(make_engine, policy, expected):
    # the matching partner is one for which the condition holds
    eng = make_engine(policy=policy)
    eng.add_rules("h(X, Y) <- a(X) seq b(Y) where Y > X.")
    got = dets(eng.push_many([(T("a", 5), 1), (T("a", 1), 2), (T("a", 3), 3),
                              (T("b", 4), 4), (T("b", 2), 5), (T("b", 6), 6)]))
    assert got == sorted([(("h", xy), s, e) for (xy, s, e) in expected], key=repr)


def test_policy_applies_to_rules_added_after_it(make_engine):
    eng = make_engine()
    eng.add_rules("u(X, Y) <- a(X) seq b(Y).")
    eng.set_option("policy", "recent")
    eng.add_rules("r(X, Y) <- a(X) seq b(Y).")
    got = dets(eng.push_many(PARTNERS[:4]))
    assert got == sorted([(("u", (1, 10)), 1, 3), (("u", (2, 10)), 2, 3),
                          (("u", (1, 11)), 1, 4), (("u", (2, 11)), 2, 4),
                          (("r", (2, 10)), 2, 3), (("r", (1, 11)), 1, 4)], key=repr)


def test_policy_value_is_checked(make_engine):
    with pytest.raises(ValueError):
        make_engine(policy="newest")


# ---------------------------------------------------------------------------
# aggregates

def approx_dets(got):
    return [(name, tuple(pytest.approx(a) if isinstance(a, float) else a for a in args), s, e)
            for ((name, args), s, e) in got]


def test_aggregate_count_time_window(engine):
    engine.add_rules("cnt(N) <- aggregate(count, a, time(10), N).")
    got = [dets(engine.push("a", t)) for t in (0, 5, 10, 11, 25)]
    assert got == [[(("cnt", (1,)), 0, 0)], [(("cnt", (2,)), 0, 5)],
                   [(("cnt", (3,)), 0, 10)],        # start 0 is exactly 10 before: kept
                   [(("cnt", (3,)), 5, 11)],        # 0 dropped
                   [(("cnt", (1,)), 25, 25)]]


def test_aggregate_count_grouped_count_window(engine):
    engine.add_rules("c(K, N) <- aggregate(count, k(K), count(2), N).")
    got = [dets(engine.push(T("k", k), t)) for (k, t) in (("x", 0), ("y", 1), ("x", 2), ("x", 3))]
    assert got == [[(("c", ("x", 1)), 0, 0)], [(("c", ("y", 1)), 1, 1)],
                   [(("c", ("x", 2)), 0, 2)], [(("c", ("x", 2)), 2, 3)]]


PRICES = [(T("price", "x", 1), 0), (T("price", "y", 10), 1), (T("price", "x", 2), 2),
          (T("price", "x", 4), 3)]


def test_aggregate_sum_grouped_count_window(engine):
    engine.add_rules("s(C, S) <- aggregate(sum(P), price(C, P), count(2), S).")
    got = [dets(engine.push(*e)) for e in PRICES]
    assert got == [[(("s", ("x", 1)), 0, 0)], [(("s", ("y", 10)), 1, 1)],
                   [(("s", ("x", 3)), 0, 2)], [(("s", ("x", 6)), 2, 3)]]


def test_aggregate_sum_ungrouped_with_caret(engine):
    engine.add_rules("t(S) <- aggregate(sum(P), C^price(C, P), count(2), S).")
    got = [dets(engine.push(*e)) for e in PRICES]
    assert got == [[(("t", (1,)), 0, 0)], [(("t", (11,)), 0, 1)],
                   [(("t", (12,)), 1, 2)], [(("t", (6,)), 2, 3)]]


def test_aggregate_avg_time_window(engine):
    engine.add_rules("m(C, A) <- aggregate(avg(P), price(C, P), time(100), A).")
    got = [approx_dets(dets(engine.push(*e))) for e in PRICES]
    assert got == [[("m", ("x", 1), 0, 0)], [("m", ("y", 10), 1, 1)],
                   [("m", ("x", 1.5), 0, 2)], [("m", ("x", 7 / 3), 0, 3)]]


@pytest.mark.parametrize("op, values", [("min", [5, 3, 3, 3, 6]), ("max", [5, 5, 5, 6, 7])])
def test_aggregate_min_max_time_window(engine, op, values):
    engine.add_rules(f"r(C, M) <- aggregate({op}(P), price(C, P), time(2), M).")
    events = [(T("price", "x", p), t) for (p, t) in ((5, 0), (3, 1), (4, 2), (6, 3), (7, 5))]
    got = [dets(engine.push(*e)) for e in events]
    intervals = [(0, 0), (0, 1), (0, 2), (1, 3), (3, 5)]
    assert got == [[(("r", ("x", v)), s, e)] for v, (s, e) in zip(values, intervals)]


def test_aggregate_fractional_time_window(engine):
    engine.add_rules("cnt(N) <- aggregate(count, a, time(0.5), N).")
    got = [dets(engine.push("a", t)) for t in (0, 0.5, 1.25)]
    assert got == [[(("cnt", (1,)), 0, 0)], [(("cnt", (2,)), 0, 0.5)],
                   [(("cnt", (1,)), 1.25, 1.25)]]


def test_aggregate_feeds_other_rules(engine):
    engine.add_rules("""n(N) <- aggregate(count, a, count(3), N).
                        full <- n(N) where N >= 3.""")
    got = dets(engine.push_many([("a", t) for t in range(4)]))
    assert [d for d in got if d[0][0] == "full"] == [(("full", ()), 0, 2), (("full", ()), 1, 3)]


def test_aggregate_store_bounded_by_its_window(make_engine):
    eng = make_engine(gc_every=100)
    eng.add_rules("c(K, N) <- aggregate(count, a(K), count(5), N).")
    eng.push_many(stream(4000, keys=10))           # 10 groups of a's
    assert eng.stats()["goals"] <= 10 * 5
