"""The core's optional joins, interval access, instant closing and dedup.

Hand-checked against docs/CORE.md ("Optional joins") and section 4.2 of
the specification (SeqRightJoin, EqLeftJoin, LeftJoin).
"""
from __future__ import annotations

from conftest import dets
from epsparql.core import term as T


def test_optseq_adds_earlier_optional_part_or_emits_mandatory_alone(engine):
    engine.add_rules("r(X, Y) <- optseq(down(X, Y), price(X, _), true).")
    got = engine.push_many([(T("price", "acme", 1), 1),          # nothing before: alone
                            (T("down", "acme", "moody"), 2),
                            (T("price", "acme", 2), 2),          # not strictly before: alone
                            (T("price", "acme", 3), 3)])         # down@2 ended before
    assert dets(got) == dets_list([(("r", ("acme", None)), 1, 1),
                                   (("r", ("acme", None)), 2, 2),
                                   (("r", ("acme", "moody")), 2, 3)])


def dets_list(items):
    return sorted(items, key=repr)


def test_optseq_condition_decides_between_combination_and_alone(engine):
    # the condition rules out the only earlier optional part: R alone
    engine.add_rules("r(X, S) <- optseq(score(X, S), price(X, P), S > P).")
    got = engine.push_many([(T("score", "a", 1), 1), (T("price", "a", 5), 2),
                            (T("score", "b", 9), 3), (T("price", "b", 5), 4)])
    assert dets(got) == dets_list([(("r", ("a", None)), 2, 2), (("r", ("b", 9)), 3, 4)])


def test_optseq_optional_store_ignores_window(engine):
    # an optional part outside the window cannot be in an answer, but it
    # still rules out the mandatory part alone: nothing at all is emitted
    engine.add_rules("r(X, Y) <- optseq(down(X, Y), price(X, _), true) within 5.")
    got = engine.push_many([(T("down", "a", "m"), 1), (T("price", "a", 1), 20)])
    assert got == []
    engine.gc()
    assert engine.push(T("price", "a", 2), 30) == []


def test_eqopt_waits_for_the_instant_to_close(engine):
    engine.add_rules("r(X, Y) <- eqopt(a(X), b(X, Y), true).")
    assert engine.push(T("a", 1), 5) == []            # b(1, _) could still come at 5
    got = engine.push(T("b", 1, "z"), 5)
    assert dets(got) == [(("r", (1, "z")), 5, 5)]
    assert engine.push(T("a", 2), 5) == []
    assert engine.advance(4) == []                    # instant 5 still open
    got = engine.advance(5)                           # closed: a(2) had no partner
    assert dets(got) == [(("r", (2, None)), 5, 5)]
    assert engine.flush() == []                       # nothing emitted twice


def test_eqopt_requires_the_same_interval(engine):
    engine.add_rules("r(X, Y) <- eqopt(a(X), b(X, Y), true).")
    engine.push_many([(T("a", 1), 1, 5), (T("b", 1, "early"), 2, 5)])
    got = engine.flush()
    assert dets(got) == [(("r", (1, None)), 1, 5)]


def test_leftjoin_takes_optional_parts_ending_no_later(engine):
    engine.add_rules("r(X, Y) <- leftjoin(a(X), c(X, Y), true).")
    got = engine.push_many([(T("c", 1, "before"), 1), (T("a", 1), 3),
                            (T("c", 1, "same"), 3), (T("c", 1, "after"), 4)])
    got += engine.flush()
    assert dets(got) == dets_list([(("r", (1, "before")), 1, 3), (("r", (1, "same")), 3, 3)])


def test_leftjoin_alone_after_close_and_a_time_advance_closes_it(engine):
    engine.add_rules("r(X, Y) <- leftjoin(a(X), c(X, Y), true).")
    assert engine.push(T("a", 7), 1) == []
    got = engine.push(T("zzz"), 2)                    # time moves on: instant 1 closed
    assert dets(got) == [(("r", (7, None)), 1, 1)]


def test_span_binds_the_interval(engine):
    engine.add_rules("long(X, D) <- span(a(X) seq b(X), S, E) where D is E - S, D > 2.")
    got = engine.push_many([(T("a", 1), 1), (T("b", 1), 2), (T("a", 2), 3), (T("b", 2), 9)])
    assert dets(got) == [(("long", (2, 6)), 3, 9)]           # a(1)..b(1) lasts 1 s


def test_optional_with_interval_condition_four_argument_form(engine):
    # SeqRightJoin: the condition sees the combined interval for combinations
    engine.add_rules("r(X, Y) <- optseq(d(X, Y), p(X), E - S < 3, S-E).")
    got = engine.push_many([(T("d", 1, "old"), 1), (T("p", 1), 5)])
    # combination [1,5] fails (4 >= 3); checked on p's own interval [5,5]
    # the condition holds (0 < 3), so d blocks: nothing is emitted
    assert got == []


def test_dedup_makes_detections_a_set(make_engine):
    eng = make_engine()
    eng.set_option("dedup", True)
    eng.add_rules("h(X) <- a(X) seq b(X).\nb(X) <- b(X).")   # a rule deriving what it consumes
    got = eng.push_many([(T("a", 1), 1), (T("a", 1), 1), (T("b", 1), 2), (T("b", 1), 2)])
    # each distinct detection once: h from the duplicated inputs, and the
    # b(1) the second rule derives (its re-derivations are not fed back)
    assert dets(got) == dets_list([(("b", (1,)), 2, 2), (("h", (1,)), 1, 2)])
    assert eng.errors == []


def test_dedup_set_lives_for_one_instant_across_batches(make_engine):
    # no optional steps: a new instant only forgets the set of the last one
    eng = make_engine()
    eng.set_option("dedup", True)
    eng.add_rules("h(X) <- a(X).")
    assert dets(eng.push(T("a", 1), 1)) == [(("h", (1,)), 1, 1)]
    assert eng.push(T("a", 1), 1) == []                   # same instant, next batch
    assert dets(eng.push(T("a", 1), 2)) == [(("h", (1,)), 2, 2)]
    assert dets(eng.push_many([(T("a", 1), 3), (T("a", 2), 3), (T("a", 1), 3)])) == \
        dets_list([(("h", (1,)), 3, 3), (("h", (2,)), 3, 3)])
    # the set is a global variable of the engine, dropped at the next instant
    from epsparql.core.runtime import runtime
    seen = "nb_current(K, _)"
    key = {"K": "$epsparql_seen_" + eng.module}
    assert runtime().query_once(seen, key) is not None
    assert eng.push(T("other"), 4) == []
    assert runtime().query_once(seen, key) is None


def test_dedup_with_answers_waiting_for_their_instant(make_engine):
    # eqopt answers wait for the instant to close; closing happens before
    # the instant's set is forgotten, so the waiting duplicates count once
    eng = make_engine()
    eng.set_option("dedup", True)
    eng.add_rules("r(X, Y) <- eqopt(a(X), b(X, Y), true).")
    assert eng.push(T("a", 1), 5) == []
    assert eng.push(T("a", 1), 5) == []                   # the same occurrence again
    assert dets(eng.push(T("z"), 6)) == [(("r", (1, None)), 5, 5)]
    assert eng.push(T("a", 1), 7) == []
    assert dets(eng.push(T("z"), 8)) == [(("r", (1, None)), 7, 7)]
    assert eng.flush() == []


def test_rule_added_mid_stream_sees_only_later_events(engine):
    engine.add_rules("h(X) <- a(X) seq b(X).")
    engine.push(T("a", 1), 1)
    engine.add_rules("g(X) <- a(X) seq b(X).")
    got = engine.push(T("b", 1), 2)
    assert dets(got) == [(("h", (1,)), 1, 2)]          # g did not see a(1)
    engine.push(T("a", 2), 3)
    got = engine.push(T("b", 2), 4)
    assert dets(got) == dets_list([(("h", (2,)), 3, 4), (("g", (2,)), 3, 4)])


def test_plain_prolog_advance_and_flush(tmp_path):
    import subprocess
    from epsparql.core.runtime import PROLOG_DIR, swipl_executable
    script = tmp_path / "t.pl"
    script.write_text(f"""
:- use_module('{PROLOG_DIR / 'epsparql_core.pl'}').
t :- add_event_rules([(r(X, Y) <- eqopt(a(X), b(X, Y), true))]),
     event(a(1), [5, 5]),
     drain_detected(L0), L0 == [],
     advance_time(5), drain_detected(L1),
     L1 = [detected(r(1, V), [5, 5])], var(V),
     event(a(2), [6, 6]), flush_events, drain_detected(L2),
     L2 = [detected(r(2, _), [6, 6])].
""")
    r = subprocess.run([swipl_executable(), "-g", "t", "-t", "halt", str(script)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_a_raising_rule_does_not_duplicate_other_rules_detections(engine):
    # h's entry clause runs before bad's; bad raises on the same event.
    engine.add_rules("h(X) <- a(X).\nbad(X) <- a(X) where Y = foo, X > Y.")
    got = engine.push(T("a", 1), 1)
    assert dets(got) == [(("h", (1,)), 1, 1)]
    assert len(engine.errors) == 1 and "a(1)" in repr(engine.errors[0].context)
