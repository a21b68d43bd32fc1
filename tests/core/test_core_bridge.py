"""The Python bridge: batching, errors, data round trips, engine isolation."""
from __future__ import annotations

import math

import pytest

from conftest import as_tuple, dets
from epsparql.core import (Compound, CoreEngine, Detection, PlString, PrologError,
                           RuleError, term)

T = term


# ---------------------------------------------------------------------------
# batching

def big_stream(n=12_000):
    out = []
    for i in range(n):
        x = (i // 3) % 7
        if i % 3 == 0:
            out.append((T("a", x, float(i % 11)), i))
        elif i % 3 == 1:
            out.append((T("b", x), i - 1, i))
        else:
            out.append(("c", i))
    return out


RULES = """h(X, V) <- a(X, V) seq b(X) within 30.
           g(X) <- (a(X, _) par b(X)) cnot c within 3.
           k(N) <- aggregate(count, a(_, _), count(4), N)."""


def test_push_many_batches_match_one_by_one(make_engine):
    events = big_stream()
    batched = make_engine(batch_size=5000)
    batched.add_rules(RULES)
    got_batched = batched.push_many(events)
    single = make_engine()
    single.add_rules(RULES)
    got_single = []
    for ev in events:
        got_single.extend(single.push(*ev))
    assert got_batched == got_single                       # same detections, same order
    assert batched.drain() == got_batched
    assert single.drain() == got_single
    # detections that straddle the batch boundaries at 5000 and 10000 exist
    assert any(d.start < 5000 <= d.end for d in got_batched)
    assert any(d.start < 10000 <= d.end for d in got_batched)
    heads = {d.event.name for d in got_batched}
    assert heads == {"h", "g", "k"}
    s1, s2 = batched.stats(), single.stats()
    assert s1["events"] == s2["events"] == len(events)
    assert s1["goals"] == s2["goals"]


def test_small_batch_size_and_generators(make_engine):
    eng = make_engine(batch_size=3)
    eng.add_rules("h(X) <- a(X) seq b(X).")
    got = eng.push_many((T("a" if i % 2 == 0 else "b", i // 2), i) for i in range(10))
    assert dets(got) == [(("h", (i,)), 2 * i, 2 * i + 1) for i in range(5)]


def test_on_detected_callback_and_drain(make_engine):
    seen = []
    eng = make_engine(on_detected=seen.append)
    eng.add_rules("h(X) <- a(X).")
    got = eng.push_many([(T("a", 1), 1), (T("a", 2), 2, 3)])
    assert seen == got == [Detection(T("h", 1), 1, 1), Detection(T("h", 2), 2, 3)]
    assert eng.drain() == got
    assert eng.drain() == []
    assert eng.stats()["pending"] == 0


# ---------------------------------------------------------------------------
# errors

def test_syntax_error_in_rules(engine):
    with pytest.raises(PrologError) as ei:
        engine.add_rules("h <- a.\ng(X <- b(X).")
    assert "Syntax error" in str(ei.value)
    assert engine.stats()["rules"] == 0                    # nothing added
    assert engine.push("a", 1) == []


def test_compile_error_in_rules_adds_nothing(engine):
    """CORE.md/engine_add_rules: the whole list is checked before anything
    is added."""
    with pytest.raises(PrologError) as ei:
        engine.add_rules("h <- a.\ng <- b within foo.")
    assert "foo" in str(ei.value)
    assert engine.stats()["rules"] == 0
    assert engine.push("a", 1) == []


def test_bad_pattern_is_a_prolog_error(engine):
    with pytest.raises(PrologError):
        engine.add_rules("h <- aggregate(median(X), a(X), count(3), R).")
    with pytest.raises(PrologError):
        engine.add_rules("h <- X.")
    with pytest.raises(PrologError):
        engine.add_rules("42 <- a.")


def _prime(engine):
    engine.add_rules("h(X) <- a(X).\ng(X) <- a(X) seq b(X).")
    engine.push(T("a", 0), 0)
    engine.drain()
    return engine.stats()


@pytest.mark.parametrize("bad, exc, fragment", [
    ((T("a", 3), "3"), TypeError, "batch item 2"),             # time not a number
    ((T("a", 3), None), TypeError, "batch item 2"),
    ((T("a", 3), True), TypeError, "batch item 2"),            # bool is not a time
    ((T("a", 3), 5, 4), ValueError, "batch item 2"),           # end before start
    ((T("a", 3), math.nan), ValueError, "batch item 2"),
    ((T("a", 3), 3, math.inf), ValueError, "batch item 2"),
    ((T("a", 3), -math.inf, 3), ValueError, "batch item 2"),
    ((T("a", 3),), ValueError, "batch item 2"),                # wrong shapes
    ((T("a", 3), 1, 2, 3), ValueError, "batch item 2"),
    (42, TypeError, "batch item 2"),
    ((PlString("a"), 3), TypeError, "batch item 2"),           # a string is not an event
    ((7, 3), TypeError, "batch item 2"),
    ((T("a", math.nan), 3), ValueError, "batch item 2"),       # bad arguments
    ((T("a", True), 3), TypeError, "batch item 2"),
    ((T("a", {"k": 1}), 3), TypeError, "batch item 2"),
])
def test_bad_batch_item_rejects_the_whole_batch(engine, bad, exc, fragment):
    before = _prime(engine)
    batch = [(T("a", 1), 1), (T("b", 0), 2), bad, (T("a", 4), 4)]
    with pytest.raises(exc, match=fragment):
        engine.push_many(batch)
    after = engine.stats()
    assert after["events"] == before["events"] == 1        # nothing of that batch processed
    assert after["now"] == before["now"]
    assert engine.drain() == []
    # the engine is still usable, and a(0) is still waiting for b(0)
    assert dets(engine.push(T("b", 0), 5)) == [(("g", (0,)), 0, 5)]


@pytest.mark.parametrize("text", [
    "[e(a, 1, 1), e(a, 3, 2)]",            # end before start
    "[e(a, 1, 1), e(a, x, 2)]",            # not a number
    "[e(a, 1, 1), e(b, 1)]",               # wrong shape
    "[e(a, 1, 1), e(X, 2, 2)]",            # unbound event
    "[e(a, 1, 1), e(3, 2, 2)]",            # not callable
    "[e(a, 1, 1), e(a, 2, inf)]",          # not finite
    "[e(a, 1, 1), e(a, 2, 2)",             # syntax error
    "e(a, 1, 1)",                          # not a list
])
def test_bad_batch_text_is_a_prolog_error_and_processes_nothing(engine, text):
    engine.add_rules("h <- a.")
    with pytest.raises(PrologError):
        engine.push_text(text)
    assert engine.stats()["events"] == 0
    assert engine.drain() == []
    assert dets(engine.push_text("[e(a, 5, 6)]")) == [(("h", ()), 5, 6)]


def test_lone_surrogate_is_a_value_error_and_processes_nothing(engine):
    engine.add_rules("h(X) <- a(X).")
    with pytest.raises(ValueError):
        engine.push_many([(T("a", "ok"), 1), (T("a", "bad \ud800"), 2)])
    assert engine.stats()["events"] == 0
    assert dets(engine.push(T("a", "ok"), 3)) == [(("h", ("ok",)), 3, 3)]


def test_float_subclass_times_are_numbers(engine):
    np = pytest.importorskip("numpy")
    engine.add_rules("h <- a seq b.")
    got = engine.push_many([("a", np.float64(1.5)), ("b", np.float64(2.5), np.float64(3.0))])
    assert dets(got) == [(("h", ()), 1.5, 3.0)]


def test_exception_in_where_is_reported_and_engine_goes_on(engine):
    engine.add_rules("""h(X) <- a(X, Y) where X > Y.
                        u(X) <- c(X) where no_such_predicate(X).
                        g(X) <- b(X).""")
    got = engine.push_many([(T("a", 1, "foo"), 1), (T("b", 2), 2), (T("c", 3), 3),
                            (T("a", 5, 4), 4), (T("b", 6), 5)])
    assert dets(got) == [(("g", (2,)), 2, 2), (("g", (6,)), 5, 5), (("h", (5,)), 4, 4)]
    assert len(engine.errors) == 2
    e1, e2 = engine.errors
    assert isinstance(e1, RuleError)
    assert e1.context == Compound("event", (T("a", 1, "foo"), [1, 1]))
    assert "foo" in e1.message
    assert e2.context == Compound("event", (T("c", 3), [3, 3]))
    assert "no_such_predicate" in e2.message
    # later pushes are normal and report no new errors
    assert dets(engine.push(T("a", 9, 1), 6)) == [(("h", (9,)), 6, 6)]
    assert len(engine.errors) == 2


def test_exception_in_instantiated_where_is_reported(engine):
    engine.add_rules("h(X, Y) <- (a(X) or b(Y)) where X > 0.")
    engine.push_many([(T("b", 1), 1), (T("a", 1), 2)])
    assert len(engine.errors) == 1
    assert engine.errors[0].context == Compound("event", (T("b", 1), [1, 1]))
    assert dets(engine.drain()) == [(("h", (1, None)), 2, 2)]


RULES_DEPTH = """d(X, Y) <- a(X, Y).
                 bad(X) <- d(X, Y) where X > Y.
                 e(X) <- b(X).
                 f(X) <- e(X).
                 g(X) <- f(X)."""


def test_errors_in_derived_rules_do_not_use_up_the_depth(make_engine):
    """An exception inside a rule over derived events must not count
    against max_depth for the rest of the batch: b -> e -> f -> g is
    depth 2 < max_depth 3 whatever failed before it."""
    eng = make_engine(max_depth=3)
    eng.add_rules(RULES_DEPTH)
    got = eng.push_many([(T("a", 1, "x"), 1), (T("a", 2, "x"), 2), (T("b", 1), 3)])
    assert (("g", (1,)), 3, 3) in dets(got)
    assert len(eng.errors) == 2
    assert all("depth" not in e.message for e in eng.errors), eng.errors


def test_errors_in_derived_rules_default_depth(make_engine):
    eng = make_engine()
    eng.add_rules(RULES_DEPTH)
    batch = [(T("a", i, "x"), i) for i in range(200)] + [(T("b", 1), 300)]
    got = eng.push_many(batch)
    assert (("g", (1,)), 300, 300) in dets(got)
    assert all("depth" not in e.message for e in eng.errors)


# ---------------------------------------------------------------------------
# data round trips

HOSTILE = [
    "'", '"', "\\", "\\'", "'\"", "it's", 'say "hi"', "back\\slash\\",
    "), halt, foo(", ":- halt.", "a). :- halt. b(", "'), halt, foo('",
    "line1\nline2", "\r\n\t", "nul\0byte", "\0", "\x01\x1f\x7f",
    "emoji 😀🎉", "中文字符", "Ελληνικά", "mixed 'ü' \"中\" \\😀",
    "", " ", "[]", "{}", "null", '{"s": "x"}', '{"f": "g", "a": []}',
    "%comment", "/* c */", "0'a", "X", "_", "Var", "end_of_file", ".",
    "x" * 100_000,
]


@pytest.mark.parametrize("kind", [str, PlString])
def test_hostile_strings_round_trip(engine, kind):
    engine.add_rules("h(X) <- a(X).\nj(X) <- a(X) seq b(X).")
    events = []
    for i, s in enumerate(HOSTILE):
        events.append((T("a", kind(s)), 2 * i))
        events.append((T("b", kind(s)), 2 * i + 1))
    got = engine.push_many(events)
    hs = [d.event.args[0] for d in got if d.event.name == "h"]
    js = [d for d in got if d.event.name == "j"]
    assert hs == HOSTILE
    assert all(type(x) is kind for x in hs)
    # each b(s) joins exactly with its own a(s): equal text, equal term
    assert len(js) == len(HOSTILE)
    assert [d.event.args[0] for d in js] == HOSTILE
    assert [(d.start, d.end) for d in js] == [(2 * i, 2 * i + 1) for i in range(len(HOSTILE))]


def test_atom_and_string_stay_distinct(engine):
    engine.add_rules("j(X) <- a(X) seq b(X).\nh(X) <- a(X).")
    got = engine.push_many([(T("a", "x"), 1), (T("a", PlString("y")), 1),
                            (T("b", PlString("x")), 2), (T("b", "y"), 2)])
    assert [d.event.name for d in got] == ["h", "h"]
    assert type(got[0].event.args[0]) is str and got[0].event.args[0] == "x"
    assert type(got[1].event.args[0]) is PlString and got[1].event.args[0] == "y"


def test_hostile_functor_names(engine):
    engine.add_rules("h(X) <- '), halt, foo('(X).\ng(X) <- 'a b\\'c'(X).")
    got = engine.push_many([(T("), halt, foo(", 1), 1), (T("a b'c", 2), 2), (T(":- halt.", 3), 3)])
    assert dets(got) == [(("g", (2,)), 2, 2), (("h", (1,)), 1, 1)]


@pytest.mark.parametrize("value", [
    2 ** 100, -(2 ** 70), 10 ** 40 + 1, -1, 0, -1.5, -1e-300, 1e300, 5e-324, -0.0, 0.1,
    1e22, -123456.789, [1, "two", PlString("three"), [4.5, []]], [],
    T("g", T("k", 1, PlString("s")), [T("m", "n")]), Compound("zero", ()),
])
def test_numbers_lists_compounds_round_trip(engine, value):
    engine.add_rules("h(X) <- a(X).")
    (d,) = engine.push(T("a", value), 1)
    back = d.event.args[0]
    assert back == value
    assert type(back) is type(value)
    if isinstance(value, float):
        assert math.copysign(1, back) == math.copysign(1, value)


def test_numbers_compare_numerically_in_conditions(engine):
    engine.add_rules("h(X) <- a(X) where X > 10 ** 30.\nn(X) <- a(X) where X < -1.25.")
    got = engine.push_many([(T("a", 2 ** 100), 1), (T("a", 10 ** 30), 2), (T("a", -1.5), 3)])
    assert dets(got) == [(("h", (2 ** 100,)), 1, 1), (("n", (-1.5,)), 3, 3)]


def test_negative_and_large_times(engine):
    engine.add_rules("h <- a seq b.")
    got = engine.push_many([("a", -10), ("b", -5.5, -5), ("a", 1.7e9), ("b", 1.7e9 + 0.25)])
    assert dets(got) == sorted([(("h", ()), -10, -5), (("h", ()), -10, 1.7e9 + 0.25),
                                (("h", ()), 1.7e9, 1.7e9 + 0.25)], key=repr)


# ---------------------------------------------------------------------------
# engines in one process

def test_two_engines_keep_rules_and_state_apart(make_engine):
    e1, e2 = make_engine(), make_engine(policy="recent")
    assert e1.module != e2.module
    e1.add_rules("h(X) <- a(X) seq b(X).")
    e2.add_rules("h(X) <- a(X) seq b(X).\ng <- c.")
    e1.push(T("a", 1), 1)
    e2.push(T("a", 1), 1)
    e2.push(T("a", 1), 2)
    assert e1.stats()["goals"] == 1 and e2.stats()["goals"] == 2
    assert e1.push("c", 3) == []                           # g is e2's rule only
    assert dets(e1.push(T("b", 1), 4)) == [(("h", (1,)), 1, 4)]
    assert dets(e2.push(T("b", 1), 4)) == [(("h", (1,)), 2, 4)]   # recent, from e2's own goals
    assert e1.stats()["rules"] == 1 and e2.stats()["rules"] == 2
    assert e1.stats()["events"] == 3 and e2.stats()["events"] == 3
    e2.add_rules("k(X) <- b(X).")
    e1.reset()
    assert e1.push(T("b", 1), 5) == []
    assert dets(e2.push(T("b", 2), 5)) == [(("k", (2,)), 5, 5)]


def test_closed_engine_leaves_others_working(make_engine):
    e1, e2 = make_engine(), make_engine()
    for e in (e1, e2):
        e.add_rules("h <- a.")
    e1.close()
    assert dets(e2.push("a", 1)) == [(("h", ()), 1, 1)]
    with CoreEngine() as e3:
        e3.add_rules("h <- a.")
        assert len(e3.push("a", 1)) == 1
    assert e3.module == ""


# ---------------------------------------------------------------------------
# reset / clear_state

def test_reset_forgets_rules_goals_and_detections(make_engine):
    eng = make_engine(policy="chronological")
    eng.add_rules("h(X, Y) <- a(X) seq b(Y).\nhelper(1).")
    eng.push_many([(T("a", 1), 1), (T("a", 2), 2)])
    eng.push(T("b", 3), 3)
    eng.reset()
    assert eng.drain() == []
    st = eng.stats()
    assert (st["rules"], st["goals"], st["events"], st["nodes"], st["pending"]) == (0, 0, 0, 0, 0)
    assert eng.push_many([(T("a", 9), 0), (T("b", 9), 1)]) == []
    # helper clauses are gone too: calling one is now an unknown procedure
    eng.add_rules("k(X) <- a(X) where helper(X).")
    assert eng.push(T("a", 1), 2) == []
    assert len(eng.errors) == 1 and "helper/1" in eng.errors[0].message
    eng.add_rules("bad(X) <- c(X) where X > 1.")
    eng.push(T("c", "x"), 3)
    assert len(eng.errors) == 2
    eng.reset()
    assert eng.errors == []
    # options survive a reset: the policy is still chronological
    eng.add_rules("h(X, Y) <- a(X) seq b(Y).")
    got = eng.push_many([(T("a", 1), 1), (T("a", 2), 2), (T("b", 3), 3), (T("b", 4), 4)])
    assert dets(got) == [(("h", (1, 3)), 1, 3), (("h", (2, 4)), 2, 4)]


def test_clear_state_keeps_rules(engine):
    engine.add_rules("h(X) <- a(X) seq b(X).\nbig(X) :- X > 5.\ng(X) <- c(X) where big(X).")
    engine.push(T("a", 1), 10)
    engine.push(T("c", "bad"), 11)                 # a recorded rule error
    engine.push(T("c", 9), 12)                     # a pending detection
    assert engine.errors
    engine.clear_state()
    assert engine.errors == []
    assert engine.drain() == []
    st = engine.stats()
    assert (st["rules"], st["goals"], st["events"], st["late"]) == (2, 0, 0, 0)
    assert st["now"] == -math.inf
    # the goal a(1) is gone; time restarted (an earlier time is not late)
    assert engine.push(T("b", 1), 0) == []
    got = engine.push_many([(T("a", 1), 1), (T("b", 1), 2), (T("c", 7), 3)])
    assert dets(got) == [(("g", (7,)), 3, 3), (("h", (1,)), 1, 2)]
    assert engine.stats()["late"] == 0
