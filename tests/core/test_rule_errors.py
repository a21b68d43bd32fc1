"""Rule errors cross as data: the error's kind and term, what triggered it,
the rule-graph step it was raised in and the rules concerned.

The step is checked against the rule graph itself (the node whose own
pattern holds the raising condition), on generated rules and streams.
"""
from __future__ import annotations

import random

import pytest

from epsparql.core import Compound, PrologError, RuleError, term
from epsparql.core.rule_graph import Child, RuleGraph, subterms
from epsparql.core.runtime import runtime

T = term

#: boom(Tag, X) raises a type error naming Tag when X is odd.
HELPERS = """
boom(Tag, X) :- 1 =:= X mod 2, throw(error(type_error(tagged, Tag), _)).
boom(_, _).
"""


def own_subterms(t):
    """The sub-terms of a node's pattern outside its children's patterns."""
    stack = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, Child):
            continue
        yield x
        if isinstance(x, Compound):
            stack.extend(x.args)
        elif isinstance(x, list):
            stack.extend(x)


def node_of_tag(graph: RuleGraph, tag: str) -> int:
    found = [n.id for n in graph.nodes.values()
             if any(isinstance(x, Compound) and x.name == "boom" and x.args[0] == tag
                    for x in own_subterms(n.term))]
    assert len(found) == 1, (tag, found)
    return found[0]


def random_pattern(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.3:
        return f"{rng.choice('abc')}(X)"
    op = rng.choice(["seq", "and", "par", "or", "seq", "equals"])
    return f"({random_pattern(rng, depth - 1)} {op} {random_pattern(rng, depth - 1)})"


def with_condition(rng: random.Random, pattern: str, tag: str) -> str:
    """``pattern`` with ``where boom(tag, X)`` put around one of its
    parenthesised sub-patterns (or the whole)."""
    spots = [i for i, c in enumerate(pattern) if c == "("
             and pattern[i + 1:i + 2] in ("(", "a", "b", "c") and pattern[i - 1:i] != "a"
             and (i == 0 or pattern[i - 1] in " (")]
    if not spots or rng.random() < 0.25:
        return f"({pattern} where boom({tag}, X))"
    start = rng.choice(spots)
    depth = 0
    for end in range(start, len(pattern)):
        depth += {"(": 1, ")": -1}.get(pattern[end], 0)
        if depth == 0:
            break
    inner = pattern[start:end + 1]
    return pattern[:start] + f"({inner} where boom({tag}, X))" + pattern[end + 1:]


@pytest.mark.parametrize("seed", range(15))
def test_errors_name_the_step_and_rules_they_were_raised_in(make_engine, seed):
    rng = random.Random(seed)
    eng = make_engine()
    rules, tags = [], []
    for k in range(rng.randint(1, 4)):
        tag = f"t{k}"
        body = with_condition(rng, random_pattern(rng, rng.randint(1, 3)), tag)
        if rng.random() < 0.5:
            body = f"({body} within {rng.randint(3, 20)})"
        rules.append(f"h{k}(X) <- {body}.")
        tags.append(tag)
    eng.add_rules(HELPERS + "\n".join(rules))
    graph = RuleGraph.of(eng)
    expected = {tag: node_of_tag(graph, tag) for tag in tags}
    events = []                                # intervals: par and equals can hold
    for t in range(1, 80):
        events.append((T(rng.choice("abc"), rng.randint(1, 4)), t - rng.choice([0, 0, 1, 2]), t))
    size = rng.randint(1, 20)
    for i in range(0, len(events), size):
        eng.push_many(events[i:i + size])
    pushed = {(e, (s, t)) for e, s, t in events}
    assert eng.errors, f"the generated stream raised no error: not a test ({rules})"
    for err in eng.errors:
        assert isinstance(err, RuleError)
        assert err.kind == "type_error"
        tag = err.error.args[1]
        assert err.error == Compound("type_error", ("tagged", tag))
        assert err.node == expected[tag], (rules, err)
        assert set(err.rules) == {r.name for r in graph.rules_above(err.node)}
        assert len(err.heads) == len(err.rules)
        ctx = err.context
        assert ctx.name == "event" and (ctx.args[0], tuple(ctx.args[1])) in pushed


def test_inline_arithmetic_error_names_its_step_not_the_predicate(engine):
    engine.add_rules("r(K) <- a(K) seq b(K) where X is K + 1, X > 0 within 10.")
    engine.push_many([(T("a", "x"), 1), (T("b", "x"), 2)])
    (err,) = engine.errors
    graph = RuleGraph.of(engine)
    (rule,) = graph.rules
    step = graph.nodes[rule.node]
    while step.kind != "where":                 # the seq step with its condition
        step = graph.nodes[step.children[0]]
    assert err.node == step.id and err.rules == ("r",)
    assert err.kind == "type_error" and "ep_n" not in err.message


def test_error_outside_any_step_has_no_node(make_engine):
    eng = make_engine()
    eng.add_rules(f"""
        h(X) <- a(X) do throw(oops(X)).
        g(X) <- b(X).
        hook(E, _) :- E = g(X), throw(bad_hook(X)).
        hook(_, _).""")
    eng.set_option("hook", Compound(":", (eng.module, "hook")))
    eng.push_many([(T("a", 1), 1), (T("b", 2), 2)])
    action, hook = eng.errors
    graph = RuleGraph.of(eng)
    (h,) = [r for r in graph.rules if r.name == "h"]
    # a do-action belongs to its rule: the rule's root step
    assert action.kind == "exception" and action.error == T("oops", 1)
    assert action.context == T("action", T("h", 1), [1, 1])
    assert action.node == h.node and action.rules == ("h",)
    # a hook runs on a detection of head g: the rules deriving g
    assert hook.error == T("bad_hook", 2) and hook.node is None and hook.rules == ("g",)
    assert hook.context.name == "hook"


def test_error_deciding_a_waiting_answer_names_the_optional_step(engine):
    engine.add_rules("""
        h(X) <- eqopt(a(X), b(X), check(X), _-_).
        check(X) :- nb_current(lo_phase, closing), !, throw(closing(X)).
        check(_).""")
    rt = runtime()
    rt.query_once("nb_setval(lo_phase, open)")
    try:
        engine.push_many([(T("a", 1), 1), (T("b", 1), 1)])
        assert engine.errors == []
        rt.query_once("nb_setval(lo_phase, closing)")
        engine.push_many([(T("a", 2), 5)])        # closes instant 1: the condition runs again
    finally:
        rt.query_once("nb_setval(lo_phase, open)")
    (err,) = engine.errors
    graph = RuleGraph.of(engine)
    (eqopt,) = [n.id for n in graph.nodes.values() if n.kind == "eqopt"]
    assert err.context == T("close", 1) and err.node == eqopt and err.rules == ("h",)
    assert err.error == T("closing", 1)


def test_limits_name_their_rules(make_engine):
    small = make_engine(max_depth=20)
    small.add_rules("\n".join(f"e({i + 1}) <- e({i})." for i in range(1, 60)))
    small.push(T("e", 1), 1)
    (err,) = small.errors
    # the deriving rules; no step: the depth is exceeded between steps
    assert err.kind == "derivation_depth" and err.rules == ("e",) and err.heads == ("e(22)",)


def test_bridge_errors_carry_their_kind(engine):
    with pytest.raises(PrologError) as info:
        engine.add_rules("h(X) <- a(X) seq .")
    assert info.value.kind == "syntax_error"
    with pytest.raises(PrologError) as info:
        engine.add_rules("h(X) <- 42.")
    assert info.value.kind == "domain_error" and info.value.formal.args[0] == "event_pattern"
    with pytest.raises(ValueError, match="Invalid engine state"):     # kind invalid_engine_state
        engine.load_state_text("epsparql_state(1, 'x').\nfoo :- halt.\n")
