"""Hand-checked cases for every operator of the rule language (docs/CORE.md).

Each case gives a rule, a time-ordered stream and the exact multiset of
detections (head, start, end) worked out by hand from the table in
CORE.md.  Intervals are written [start, end].
"""
from __future__ import annotations

import subprocess
import textwrap

import pytest

from conftest import ROOT, dets
from epsparql.core import PrologError, term
from epsparql.core.runtime import swipl_executable

T = term


def run(engine, rules, events):
    """Add rules, push events, return sorted (head, start, end) detections."""
    engine.add_rules(rules)
    got = engine.push_many(events)
    assert engine.errors == []
    return dets(got)


def h(name, *args):
    return (name, tuple(args))


# ---------------------------------------------------------------------------
# seq: P.end < Q.start, over [P.start, Q.end]

@pytest.mark.parametrize("a, b, expected", [
    ((1, 1), (2, 2), [(1, 2)]),            # points in order
    ((1, 1), (1, 1), []),                  # same instant: not strictly before
    ((1, 2), (2, 3), []),                  # P.end == Q.start: not strictly before
    ((1, 2), (3, 4), [(1, 4)]),
    ((1, 3), (2, 4), []),                  # overlapping
    ((0, 5), (5.5, 6), [(0, 6)]),          # float times
    ((2, 2), (2, 2), []),                  # zero length at the same instant
])
def test_seq(engine, a, b, expected):
    got = run(engine, "h <- a seq b.", [("a", *a), ("b", *b)])
    assert got == [(h("h"), s, e) for (s, e) in expected]


def test_seq_wrong_order_is_not_detected(engine):
    assert run(engine, "h <- a seq b.", [("b", 1), ("a", 2)]) == []


def test_seq_is_left_associative_chain(engine):
    got = run(engine, "h <- a seq b seq c.",
              [("a", 1), ("b", 2), ("c", 2), ("c", 3)])
    assert got == [(h("h"), 1, 3)]


def test_seq_duplicates_multiply(engine):
    # two identical a's are two occurrences, each pairs with each b
    got = run(engine, "h <- a seq b.", [("a", 1), ("a", 1), ("b", 2), ("b", 3)])
    assert got == sorted([(h("h"), 1, 2)] * 2 + [(h("h"), 1, 3)] * 2, key=repr)


# ---------------------------------------------------------------------------
# and: any order or overlap, over [min start, max end]

def test_and_any_order(engine):
    got = run(engine, "h(X, Y) <- a(X) and b(Y).",
              [(T("b", 1), 1), (T("a", 2), 2, 5), (T("b", 3), 4, 6)])
    assert got == sorted([(h("h", 2, 1), 1, 5), (h("h", 2, 3), 2, 6)], key=repr)


def test_and_same_instant(engine):
    assert run(engine, "h <- a and b.", [("a", 5), ("b", 5)]) == [(h("h"), 5, 5)]


def test_and_occurrence_pairs_with_itself(engine):
    engine.add_rules("h(X, Y) <- a(X) and a(Y).")
    first = dets(engine.push(T("a", 1), 1))
    assert first == [(h("h", 1, 1), 1, 1)]             # once, with itself
    second = dets(engine.push(T("a", 2), 2))
    assert second == sorted([(h("h", 1, 2), 1, 2), (h("h", 2, 1), 1, 2),
                             (h("h", 2, 2), 2, 2)], key=repr)


# ---------------------------------------------------------------------------
# par: closed intervals intersect

@pytest.mark.parametrize("a, b, expected", [
    ((1, 2), (2, 3), [(1, 3)]),            # touching end points intersect
    ((1, 2), (3, 4), []),                  # disjoint
    ((1, 4), (2, 3), [(1, 4)]),            # containment
    ((2, 3), (1, 4), [(1, 4)]),
    ((2, 2), (2, 2), [(2, 2)]),            # zero length, same instant
    ((2, 2), (1, 3), [(1, 3)]),            # a point inside
    ((1, 1), (2, 2), []),                  # distinct points
])
def test_par(engine, a, b, expected):
    events = sorted([("a", *a), ("b", *b)], key=lambda e: e[2])
    got = run(engine, "h <- a par b.", events)
    assert got == [(h("h"), s, e) for (s, e) in expected]


# ---------------------------------------------------------------------------
# equals / meets / during / starts / finishes

@pytest.mark.parametrize("op, a, b, expected", [
    ("equals", (1, 3), (1, 3), [(1, 3)]),
    ("equals", (1, 3), (1, 4), []),
    ("equals", (0, 3), (1, 3), []),
    ("equals", (2, 2), (2, 2), [(2, 2)]),
    ("meets", (1, 2), (2, 4), [(1, 4)]),
    ("meets", (1, 2), (3, 4), []),
    ("meets", (1, 3), (2, 4), []),
    ("meets", (2, 2), (2, 2), [(2, 2)]),   # zero-length meets zero-length
    ("meets", (1, 2), (2, 2), [(1, 2)]),
    ("meets", (2, 4), (1, 2), []),         # b meets a, not a meets b
    ("during", (2, 3), (1, 4), [(1, 4)]),
    ("during", (1, 3), (1, 4), []),        # same start
    ("during", (2, 4), (1, 4), []),        # same end
    ("during", (2, 2), (1, 4), [(1, 4)]),  # zero length inside
    ("during", (1, 4), (2, 3), []),        # the other way round
    ("during", (1, 4), (1, 4), []),
    ("starts", (1, 2), (1, 4), [(1, 4)]),
    ("starts", (1, 1), (1, 4), [(1, 4)]),  # zero length at the start
    ("starts", (1, 4), (1, 4), []),        # same end
    ("starts", (2, 3), (1, 4), []),
    ("starts", (1, 4), (1, 2), []),        # longer one first
    ("finishes", (2, 4), (1, 4), [(1, 4)]),
    ("finishes", (4, 4), (1, 4), [(1, 4)]),  # zero length at the end
    ("finishes", (1, 4), (1, 4), []),      # same start
    ("finishes", (0, 4), (1, 4), []),      # P longer
])
def test_allen_relations(engine, op, a, b, expected):
    for order in (0, 1):                   # both arrival orders of equal ends
        events = [("a", *a), ("b", *b)] if order == 0 else [("b", *b), ("a", *a)]
        events.sort(key=lambda e: e[2])    # stable: equal ends keep the order above
        engine.reset()
        got = run(engine, f"h <- a {op} b.", events)
        assert got == [(h("h"), s, e) for (s, e) in expected], (op, a, b, events)


def test_allen_relation_of_an_event_type_with_itself(engine):
    # a[1,1] meets a[1,1]: the zero-length occurrence pairs with itself
    got = run(engine, "h(X, Y) <- a(X) meets a(Y).", [(T("a", 1), 1, 1), (T("a", 2), 1, 3)])
    assert got == sorted([(h("h", 1, 1), 1, 1), (h("h", 1, 2), 1, 3)], key=repr)


def test_during_interval_is_the_outer_one(engine):
    got = run(engine, "h(X, Y) <- a(X) during b(Y).",
              [(T("a", 1), 3, 4), (T("a", 2), 2, 6), (T("b", 9), 1, 7)])
    assert got == sorted([(h("h", 1, 9), 1, 7), (h("h", 2, 9), 1, 7)], key=repr)


# ---------------------------------------------------------------------------
# precedence (documented table)

def test_seq_binds_tighter_than_or(engine):
    # a or b seq c  ==  a or (b seq c): a alone is a detection
    got = run(engine, "h <- a or b seq c.", [("a", 1), ("b", 2), ("c", 3)])
    assert got == sorted([(h("h"), 1, 1), (h("h"), 2, 3)], key=repr)


def test_where_then_within_at_top(engine):
    # a seq b where C within 10  ==  ((a seq b) where C) within 10
    engine.add_rules("h(X, Y) <- a(X) seq b(Y) where Y > X within 10.")
    got = engine.push_many([(T("a", 1), 0), (T("b", 2), 10), (T("b", 0), 10), (T("b", 5), 11)])
    assert dets(got) == [(h("h", 1, 2), 0, 10)]


def test_equals_binds_tighter_than_seq(engine):
    # a seq b equals c  ==  a seq (b equals c)
    got = run(engine, "h <- a seq b equals c.",
              [("a", 1), ("b", 2, 3), ("c", 2, 3)])
    assert got == [(h("h"), 1, 3)]


# ---------------------------------------------------------------------------
# joins, constants

def test_join_on_shared_variable(engine):
    got = run(engine, "h(K, P1, P2) <- price(K, P1) seq price(K, P2).",
              [(T("price", "acme", 10), 1), (T("price", "ibm", 20), 2),
               (T("price", "acme", 12), 3)])
    assert got == [(h("h", "acme", 10, 12), 1, 3)]


def test_join_across_three_patterns(engine):
    got = run(engine, "h(X, Y) <- a(X) seq b(X, Y) seq c(Y).",
              [(T("a", 1), 1), (T("a", 2), 1), (T("b", 1, 7), 2), (T("b", 3, 7), 2),
               (T("c", 7), 3), (T("c", 8), 3)])
    assert got == [(h("h", 1, 7), 1, 3)]


def test_join_does_not_unify_int_with_float_or_atom_with_string(engine):
    from epsparql.core import PlString
    got = run(engine, "h(X) <- a(X) seq b(X).",
              [(T("a", 1), 1), (T("a", "x"), 1), (T("b", 1.0), 2), (T("b", PlString("x")), 2),
               (T("b", 1), 3)])
    assert got == [(h("h", 1), 1, 3)]


def test_repeated_variable_in_one_pattern(engine):
    got = run(engine, "h(X) <- a(X, X).", [(T("a", 1, 2), 1), (T("a", 3, 3), 2)])
    assert got == [(h("h", 3), 2, 2)]


def test_constants_in_patterns(engine):
    got = run(engine, "h(X) <- a(1, X) seq b(X, x).",
              [(T("a", 1, 5), 1), (T("a", 2, 5), 1), (T("b", 5, "x"), 2), (T("b", 5, "y"), 2)])
    assert got == [(h("h", 5), 1, 2)]


def test_quoted_constant_and_compound_in_pattern(engine):
    got = run(engine, "h(X) <- a('it''s', f(X, 2)).",
              [(T("a", "it's", T("f", 1, 2)), 1), (T("a", "its", T("f", 1, 2)), 2),
               (T("a", "it's", T("f", 1, 3)), 3)])
    assert got == [(h("h", 1), 1, 1)]


# ---------------------------------------------------------------------------
# or

def test_or_leaves_the_other_side_unbound(engine):
    got = run(engine, "h(X, Y) <- a(X) or b(Y).", [(T("a", 1), 1), (T("b", 2), 2, 3)])
    assert got == sorted([(h("h", 1, None), 1, 1), (h("h", None, 2), 2, 3)], key=repr)


def test_or_with_both_sides_matching_counts_twice(engine):
    got = run(engine, "h(X, Y) <- a(X) or a(Y).", [(T("a", 1), 1)])
    assert got == sorted([(h("h", 1, None), 1, 1), (h("h", None, 1), 1, 1)], key=repr)


def test_or_unbound_variable_then_joins(engine):
    # the b-side occurrence leaves X free; c(X) then binds it
    got = run(engine, "h(X, Y) <- (a(X) or b(Y)) seq c(X).",
              [(T("a", 1), 1), (T("b", 2), 1), (T("c", 1), 2), (T("c", 5), 3)])
    assert got == sorted([(h("h", 1, None), 1, 2), (h("h", 1, 2), 1, 2),
                          (h("h", 5, 2), 1, 3)], key=repr)


# ---------------------------------------------------------------------------
# cnot

def test_cnot_blocks_on_strictly_inside(engine):
    engine.add_rules("h <- (a seq c) cnot b.")
    assert dets(engine.push_many([("a", 1), ("b", 2), ("c", 3)])) == []
    engine.clear_state()
    assert dets(engine.push_many([("a", 1), ("c", 3)])) == [(h("h"), 1, 3)]


@pytest.mark.parametrize("b, blocked", [
    ((1, 1), False),       # at P's start: not strictly inside
    ((3, 3), False),       # at P's end
    ((0, 2), False),       # overlaps P's start
    ((2, 3), False),       # reaches P's end
    ((2, 2), True),
    ((1.5, 2.5), True),
])
def test_cnot_boundaries(engine, b, blocked):
    events = sorted([("a", 1, 1), ("b", *b), ("c", 3, 3)], key=lambda e: e[2])
    got = run(engine, "h <- (a seq c) cnot b.", events)
    assert got == ([] if blocked else [(h("h"), 1, 3)])


def test_cnot_respects_bindings(engine):
    got = run(engine, "h(X) <- (a(X) seq c(X)) cnot b(X).",
              [(T("a", 1), 1), (T("a", 2), 1), (T("b", 2), 2), (T("c", 1), 3), (T("c", 2), 3)])
    assert got == [(h("h", 1), 1, 3)]


def test_cnot_with_interval_event(engine):
    got = run(engine, "h(X) <- a(X) cnot b.",
              [("b", 2), (T("a", 3), 1, 2), (T("a", 1), 1, 3), (T("a", 2), 2, 4)])
    assert got == sorted([(h("h", 2), 2, 4), (h("h", 3), 1, 2)], key=repr)


def test_cnot_negated_pattern_with_its_own_variable(engine):
    """E's variables that P does not bind match anything: `a(X) cnot b(Y)`
    is `a(X)` with no b of any argument strictly inside.  (A rule whose
    cnot has such a variable must still detect.)"""
    got = run(engine, "h(X) <- a(X) cnot b(Y).",
              [(T("a", 1), 1, 3), (T("b", 9), 4), (T("a", 2), 3, 6)])
    assert got == [(h("h", 1), 1, 3)]


def test_cnot_negated_pattern_with_anonymous_variable(engine):
    got = run(engine, "h <- (a seq c) cnot b(_).", [("a", 1), ("c", 3)])
    assert got == [(h("h"), 1, 3)]


def test_cnot_negated_pattern_with_its_own_variable_nested(engine):
    got = run(engine, "h(X) <- (a(X) cnot b(Y)) seq c.",
              [(T("a", 1), 1, 3), ("c", 5)])
    assert got == [(h("h", 1), 1, 5)]


# ---------------------------------------------------------------------------
# where

def test_where_filters(engine):
    got = run(engine, "h(X) <- a(X) where X > 1.", [(T("a", 1), 1), (T("a", 2), 2)])
    assert got == [(h("h", 2), 2, 2)]


def test_where_binds_head_variable_with_is(engine):
    got = run(engine, "h(X, Y) <- a(X) where Y is X * 2 + 1.", [(T("a", 3), 1)])
    assert got == [(h("h", 3, 7), 1, 1)]


def test_where_on_inner_step_binds_for_outer(engine):
    got = run(engine, "h(X, D) <- (a(X) seq b(Y) where D is Y - X) seq c(D).",
              [(T("a", 1), 1), (T("b", 4), 2), (T("c", 2), 3), (T("c", 3), 3)])
    assert got == [(h("h", 1, 3), 1, 3)]


def test_where_every_solution_counts(engine):
    got = run(engine, "h(X, Y) <- a(X) where member(Y, [1, 2, 2]).", [(T("a", 0), 1)])
    assert got == sorted([(h("h", 0, 1), 1, 1), (h("h", 0, 2), 1, 1), (h("h", 0, 2), 1, 1)],
                         key=repr)


def test_where_on_binary_step_sees_both_sides(engine):
    got = run(engine, "h(X, Y) <- a(X) and b(Y) where X + Y =:= 5.",
              [(T("a", 1), 1), (T("b", 4), 2), (T("b", 3), 3), (T("a", 2), 4)])
    assert got == sorted([(h("h", 1, 4), 1, 2), (h("h", 2, 3), 3, 4)], key=repr)


def test_where_with_cut_and_disjunction(engine):
    got = run(engine, "h(X) <- a(X) where (X > 1, ! ; X =:= 0).",
              [(T("a", 0), 1), (T("a", 1), 2), (T("a", 5), 3)])
    assert got == sorted([(h("h", 0), 1, 1), (h("h", 5), 3, 3)], key=repr)


def test_helper_clauses_in_rule_text(engine):
    engine.add_rules(textwrap.dedent("""\
        big(X) :- X > limit_value.
        limit_value(10).
        big2(X) :- limit_value(L), X > L.
        h(X) <- a(X) where big2(X).
    """))
    got = engine.push_many([(T("a", 5), 1), (T("a", 11), 2)])
    assert dets(got) == [(h("h", 11), 2, 2)]


# ---------------------------------------------------------------------------
# within

@pytest.mark.parametrize("b_at, detected", [
    ((5, 5), True),        # exactly W: just inside
    ((6, 6), False),       # just outside
    ((2, 5), True),
    ((2, 6), False),       # b itself short, but the span is 6
])
def test_within_seq(engine, b_at, detected):
    got = run(engine, "h <- a seq b within 5.", [("a", 0, 1), ("b", *b_at)])
    assert got == ([(h("h"), 0, b_at[1])] if detected else [])


def test_within_atomic_interval(engine):
    got = run(engine, "h(X) <- a(X) within 2.",
              [(T("a", 1), 0, 2), (T("a", 2), 0, 3), (T("a", 3), 4, 4)])
    assert got == sorted([(h("h", 1), 0, 2), (h("h", 3), 4, 4)], key=repr)


def test_within_zero(engine):
    got = run(engine, "h <- a and b within 0.", [("a", 1), ("b", 1), ("b", 2)])
    assert got == [(h("h"), 1, 1)]


def test_within_applies_to_inner_steps(engine):
    # the three-event span is too long even though each pair fits
    got = run(engine, "h <- a seq b seq c within 3.", [("a", 0), ("b", 2), ("c", 3), ("c", 4)])
    assert got == [(h("h"), 0, 3)]


def test_within_inner_window_narrower_than_outer(engine):
    got = run(engine, "h <- (a seq b within 1) seq c within 10.",
              [("a", 0), ("b", 1), ("a", 2), ("b", 4), ("c", 5)])
    assert got == [(h("h"), 0, 5)]


def test_within_fractional_window(engine):
    """Windows are in seconds; a fractional window is a number of seconds."""
    got = run(engine, "h <- a seq b within 1.5.", [("a", 0), ("b", 1.5), ("b", 1.6)])
    assert got == [(h("h"), 0, 1.5)]


# ---------------------------------------------------------------------------
# derived events

def test_derived_events_trigger_other_rules(engine):
    engine.add_rules(textwrap.dedent("""\
        d(X) <- a(X) seq b(X).
        e(X) <- d(X) seq c(X).
        f(X, Y) <- d(X) and e(Y).
    """))
    got = dets(engine.push_many([(T("a", 1), 1), (T("b", 1), 2), (T("c", 1), 3)]))
    assert got == sorted([(h("d", 1), 1, 2), (h("e", 1), 1, 3), (h("f", 1, 1), 1, 3)], key=repr)


def test_derived_event_order_independent_of_rule_order(engine):
    engine.add_rules("e(X) <- d(X) seq c(X).\nd(X) <- a(X).")
    got = dets(engine.push_many([(T("a", 1), 1), (T("c", 1), 2)]))
    assert got == sorted([(h("d", 1), 1, 1), (h("e", 1), 1, 2)], key=repr)


def test_derived_event_used_with_cnot_and_where(engine):
    engine.add_rules(textwrap.dedent("""\
        big(X) <- a(X) where X > 5.
        quiet(X) <- (s(X) seq t(X)) cnot big(X).
    """))
    got = dets(engine.push_many([(T("s", 1), 1), (T("s", 2), 1), (T("a", 9), 2),
                                 (T("a", 2), 2), (T("t", 1), 3), (T("t", 2), 3)]))
    # big(9) at 2 does not block quiet(1)/(2) since X differs; a(2) is not big
    assert got == sorted([(h("big", 9), 2, 2), (h("quiet", 1), 1, 3), (h("quiet", 2), 1, 3)],
                         key=repr)


def test_rule_deriving_what_it_consumes_stops_with_an_error(make_engine):
    eng = make_engine(max_depth=5)
    eng.add_rules("a(X) <- a(Y) where X is Y + 1.")
    eng.push(T("a", 0), 1)
    assert len(eng.errors) == 1
    assert "max_depth" in eng.errors[0].message or "depth" in eng.errors[0].message
    # the engine still works afterwards
    eng.reset()
    eng.add_rules("h <- b.")
    assert dets(eng.push("b", 2)) == [(h("h"), 2, 2)]


# ---------------------------------------------------------------------------
# engine basics seen through the operators

def test_late_events_are_counted_and_processed(engine):
    engine.add_rules("h(X) <- a(X).")
    engine.push(T("a", 1), 5)
    got = engine.push(T("a", 2), 3)
    assert dets(got) == [(h("h", 2), 3, 3)]
    assert engine.stats()["late"] == 1
    assert engine.stats()["now"] == 5


def test_unknown_pattern_operator_is_rejected(engine):
    with pytest.raises(PrologError):
        engine.add_rules("h <- (a , b).")
    with pytest.raises(PrologError):
        engine.add_rules("h <- a within -1.")


def test_rules_added_later_see_only_later_events(engine):
    engine.add_rules("h <- a.")
    engine.push("a", 1)
    engine.add_rules("g <- a seq b.")
    got = dets(engine.push_many([("b", 2), ("a", 3), ("b", 4)]))
    assert got == sorted([(h("h"), 3, 3), (h("g"), 3, 4)], key=repr)


# ---------------------------------------------------------------------------
# rule files

def test_load_rules_file(engine, tmp_path):
    f = tmp_path / "my.rules"
    f.write_text(textwrap.dedent("""\
        % a comment
        :- dynamic(threshold/1).
        threshold(3).

        /* block comment */
        up(K, P1, P2) <-
            price(K, P1) seq price(K, P2)
            where ( threshold(T), P2 - P1 > T )
            within 10.
        still(K) <- price(K, _) or halted(K).
    """), encoding="utf-8")
    engine.load_rules(f)
    assert engine.stats()["rules"] == 2
    got = dets(engine.push_many([(T("price", "x", 1), 0), (T("price", "x", 5), 2),
                                 (T("price", "x", 6), 20), (T("halted", "y"), 21)]))
    assert got == sorted([(h("up", "x", 1, 5), 0, 2), (h("still", "x"), 0, 0),
                          (h("still", "x"), 2, 2), (h("still", "x"), 20, 20),
                          (h("still", "y"), 21, 21)], key=repr)


def test_load_rules_missing_file(engine, tmp_path):
    with pytest.raises(FileNotFoundError):
        engine.load_rules(tmp_path / "nope.rules")


def test_load_rules_syntax_error_adds_nothing(engine, tmp_path):
    f = tmp_path / "bad.rules"
    f.write_text("h <- a.\ng <- (b seq .\n", encoding="utf-8")
    with pytest.raises(PrologError):
        engine.load_rules(f)
    assert engine.stats()["rules"] == 0
    assert engine.push("a", 1) == []


def test_load_rules_unicode_file(engine, tmp_path):
    f = tmp_path / "u.rules"
    f.write_text("h(X) <- a(X, 'café ☕').\n", encoding="utf-8")
    engine.load_rules(f)
    got = dets(engine.push(T("a", 1, "café ☕"), 1))
    assert got == [(h("h", 1), 1, 1)]


# ---------------------------------------------------------------------------
# the engine-less Prolog API, from plain swipl

def run_swipl(tmp_path, body: str) -> list[str]:
    script = tmp_path / "api_test.pl"
    core = (ROOT / "prolog" / "epsparql_core.pl").as_posix()
    script.write_text(f":- use_module('{core}').\n" + textwrap.dedent(body), encoding="utf-8")
    proc = subprocess.run([swipl_executable(), "-q", "-g", "main", "-t", "halt", str(script)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "Warning" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr
    return proc.stdout.splitlines()


def test_prolog_api_from_swipl(tmp_path):
    out = run_swipl(tmp_path, """\
        main :-
            add_event_rules([ (rise(K, P1, P2) <- price(K, P1) seq price(K, P2)
                                                  where P2 > P1 within 10),
                              (any(X) <- price(X, _) or alarm(X)) ]),
            event(price(acme, 10), [1, 1]),
            event(price(acme, 12), [3, 3]),
            event(price(acme, 13), [20, 20]),
            forall(detected(rise(K, A, B), I), (print(d(K, A, B, I)), nl)),
            drain_detected(L), length(L, N), print(n(N)), nl,
            drain_detected(L2), print(again(L2)), nl,
            memberchk(detected(rise(acme, 10, 12), [1, 3]), L), print(ok), nl,
            reset_engine,
            event(price(acme, 10), [30, 30]),
            event(price(acme, 12), [31, 31]),
            drain_detected(L3), print(after_reset(L3)), nl,
            add_event_rules([(g <- a)]),
            event(a), drain_detected([detected(g, [T, T])]),
            ( number(T) -> print(wall_clock_ok) ; print(bad(T)) ), nl.
    """)
    assert out == ["d(acme,10,12,[1,3])", "n(4)", "again([])", "ok",
                   "after_reset([])", "wall_clock_ok"]


def test_prolog_api_clear_state_and_events_batch(tmp_path):
    out = run_swipl(tmp_path, """\
        main :-
            add_event_rules([ (h(X) <- a(X) seq b(X)) ]),
            events([e(a(1), 1, 1), event(a(2), [1, 2])]),
            clear_engine_state,
            events([e(b(1), 3, 3)]),
            drain_detected(L1), print(L1), nl,
            events([e(a(1), 0, 0), e(b(1), 3, 4)]),
            drain_detected(L2), print(L2), nl,
            catch(event(a(1), [5, 4]), E, (print(caught), nl)),
            ( nonvar(E) -> true ; print(no_error), nl ).
    """)
    assert out == ["[]", "[detected(h(1),[0,4])]", "caught"]


def test_prolog_api_rule_file_and_helper(tmp_path):
    rules = tmp_path / "r.rules"
    rules.write_text("small(X) :- X < 3.\nh(X) <- a(X) where small(X).\n", encoding="utf-8")
    out = run_swipl(tmp_path, f"""\
        main :-
            load_event_rules('{rules.as_posix()}'),
            event(a(1), [1, 1]), event(a(5), [2, 2]),
            drain_detected(L), print(L), nl.
    """)
    assert out == ["[detected(h(1),[1,1])]"]
