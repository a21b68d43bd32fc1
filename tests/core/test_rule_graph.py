"""The rule graph as data (epsparql.core.rule_graph, py_rule_graph/2).

On generated core rules (tests/core/test_core_differential.py's
generator: temporal operators, where, within, shared sub-patterns) and
generated EP-SPARQL queries (tests/sparql_reference.py's: optional
joins, unions, filters, windows, RDFS wrappers), every graph keeps the
contract explain and the trace rely on:

- a node's variables are numbered 0..vars-1 in first-occurrence order;
- a node's top-level Child sub-terms are exactly its children, and every
  Child (at any depth) is a variant of that child's own pattern;
- a join step's stores hold the join variables first, then the variables
  of their own operand (goal_stores/6), and the goals stored while a
  stream runs have exactly that many arguments plus the interval;
- a rule's head is written over its root's variables.
"""
from __future__ import annotations

import random
import warnings

import pytest

import sparql_reference as R
from core.test_core_differential import gen_case
from core_reference import pattern_text, rule_text
from epsparql import Engine
from epsparql.core import CoreEngine, term
from epsparql.core.rule_graph import Child, RuleGraph, Var, subterms, variables
from epsparql.core.terms import Compound


def matches(cut, full, places) -> bool:
    """Is ``cut`` (a child's pattern as its parent holds it: written a few
    levels deep, "..." below, variables at the parent's places) the child
    node's own pattern ``full`` (its variables numbered 0.. , its
    variable j being the parent's ``places[j]``)?"""
    if isinstance(cut, Child):
        cut = cut.term
    if isinstance(full, Child):
        full = full.term
    if cut == "...":
        return True
    if isinstance(full, Var):
        return isinstance(cut, Var) and cut.index == places[full.index]
    if isinstance(full, Compound):
        return (isinstance(cut, Compound) and cut.name == full.name
                and len(cut.args) == len(full.args)
                and all(matches(a, b, places) for a, b in zip(cut.args, full.args)))
    if isinstance(full, list):
        return (isinstance(cut, list) and len(cut) == len(full)
                and all(matches(a, b, places) for a, b in zip(cut, full)))
    return cut == full


def top_children(t):
    """The Child sub-terms of ``t`` not inside another Child."""
    if isinstance(t, Child):
        yield t
    elif isinstance(t, Compound):
        for a in t.args:
            yield from top_children(a)
    elif isinstance(t, list):
        for a in t:
            yield from top_children(a)


def check_graph(g: RuleGraph, goals: list[dict]) -> None:
    assert g.nodes and g.rules
    for n in g.nodes.values():
        assert variables(n.term) == list(range(n.vars)), n.text
        assert sorted({c.node for c in top_children(n.term)}) == sorted(n.children), n.text
        for c in (x for x in subterms(n.term) if isinstance(x, Child)):
            child = g.nodes[c.node]
            assert c.vars is not None and len(c.vars) == child.vars, (n.text, c.node)
            assert matches(c.term, child.term, c.vars), (n.text, c.node)
        for s in n.stores:
            assert all(isinstance(a, int) and 0 <= a < n.vars for a in s.args), (n.text, s)
            if s.side in "lr":
                ops = n.operands()
                join = n.join_vars()
                own = variables(ops[0] if s.side == "l" else ops[1])
                assert s.args == join + [v for v in own if v not in join], (n.text, s)
            elif s.side == "n":
                assert s.args == variables(n.operands()[1])
    for r in g.rules:
        root = g.nodes[r.node]
        assert all(x.index is not None and x.index < root.vars
                   for x in subterms(r.head) if isinstance(x, Var)), r.text
    arity = {s.name: len(s.args) + 2 for s in g.stores if s.side in "lrn"}
    for goal in goals:
        if goal["store"] in arity:
            assert len(goal["goal"]) == arity[goal["store"]], goal


@pytest.mark.parametrize("seed", range(60))
def test_core_rules(seed):
    rules, events, _, gc_every = gen_case(seed)
    eng = CoreEngine(gc_every=1000)
    try:
        eng.add_rules("\n".join(rule_text(*r) for r in rules))
        eng.push_many([(term(n, *args), s, e) for (n, args, s, e) in events])
        g = RuleGraph.of(eng)
        check_graph(g, eng.goals())
        assert [r.name for r in g.rules] == [r[0] for r in rules]
    finally:
        eng.close()


@pytest.mark.parametrize("seed", range(30))
def test_rules_with_actions_alarms_and_justification(seed):
    """Every rule is in the graph whatever its emitting clause does: a
    do-action, an alarm head, the justification record."""
    rules, events, _, _ = gen_case(seed)
    rng = random.Random(seed)
    eng = CoreEngine(gc_every=1000)
    try:
        eng.set_option("justify", rng.random() < 0.5)
        texts, names = [], []
        for r in rules:
            head, body = rule_text(*r).rstrip(".").split(" <- ", 1)
            kind = rng.choice(["plain", "do", "alarm"])
            if kind == "do":
                texts.append(f"{head} <- {body} do true.")
                names.append(r[0])
            elif kind == "alarm":
                texts.append(f"exceptionAlarm({head}, 5) <- {body}.")
                names.append("exceptionAlarm")
            else:
                texts.append(f"{head} <- {body}.")
                names.append(r[0])
        eng.add_rules("\n".join(texts))
        eng.push_many([(term(n, *args), s, e) for (n, args, s, e) in events])
        g = RuleGraph.of(eng)
        check_graph(g, eng.goals())
        assert [r.name for r in g.rules] == names
    finally:
        eng.close()


def dets_of(detections):
    return sorted((repr(d.event), d.start, d.end) for d in detections)


def annotated_text(pattern, rng, origins):
    """core_reference.pattern_text with random sub-patterns wrapped as
    '$origin'(o(K), ...); ``origins`` collects K -> the sub-pattern."""
    kind = pattern[0]
    if kind == "ev":
        text = pattern_text(pattern)
    elif kind in ("where",):
        text = f"({annotated_text(pattern[1], rng, origins)} where ({pattern[2].prolog}))"
    elif kind == "within":
        text = f"({annotated_text(pattern[1], rng, origins)} within {pattern[2]!r})"
    else:
        text = (f"({annotated_text(pattern[1], rng, origins)} {kind} "
                f"{annotated_text(pattern[2], rng, origins)})")
    if rng.random() < 0.6:
        k = len(origins)
        origins[k] = pattern
        text = f"'$origin'(o({k}), {text})"
    return text


@pytest.mark.parametrize("seed", range(40))
def test_origin_annotations_change_nothing_but_the_origins(seed):
    """The same rules with and without '$origin' wrappers: the same graph
    (patterns, edges, stores), the same state fingerprint, the same
    detections; and each annotated sub-pattern's origin is on a step whose
    pattern is that sub-pattern (or a join fused with its condition)."""
    rules, events, _, _ = gen_case(seed)
    rng = random.Random(seed)
    plain, marked = CoreEngine(gc_every=1000), CoreEngine(gc_every=1000)
    try:
        origins: dict[int, tuple] = {}
        plain.add_rules("\n".join(rule_text(*r) for r in rules))
        texts = []
        for name, args, body in rules:
            head = rule_text(name, args, ("ev", "x", ())).split(" <- ")[0]
            texts.append(f"{head} <- {annotated_text(body, rng, origins)}.")
        marked.add_rules("\n".join(texts))
        g1, g2 = RuleGraph.of(plain), RuleGraph.of(marked)
        assert [(n.id, n.text, n.children, n.window) for n in g1.nodes.values()] == \
            [(n.id, n.text, n.children, n.window) for n in g2.nodes.values()]
        assert [(r.text, r.node) for r in g1.rules] == [(r.text, r.node) for r in g2.rules]
        assert all(not n.origins for n in g1.nodes.values())
        stream = [(term(n, *a), s, e) for (n, a, s, e) in events]
        assert dets_of(plain.push_many(stream)) == dets_of(marked.push_many(stream))
        marked.import_state(plain.export_state())            # same fingerprint
        seen = set()
        for n in g2.nodes.values():
            for o in n.origins:
                k = o.args[0]
                seen.add(k)
                kind = origins[k][0]
                want = origins[k][1] if kind == "ev" else kind
                # the step of that sub-pattern: its operator (a join may
                # carry its condition: where(seq(...), C)), or its event
                assert want in (n.kind, n.op), (pattern_text(origins[k]), n.text)
        assert seen == set(origins)                      # every annotation is on some step
    finally:
        plain.close()
        marked.close()


@pytest.mark.parametrize("seed", range(40))
def test_ep_sparql_queries(seed):
    rng = random.Random(7000 + seed)
    queries = [R.QueryGen(rng).select() for _ in range(rng.choice((1, 2, 3)))]
    stream = R.gen_stream(rng)
    with Engine() as eng, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        handles = [eng.register(R.render(q)) for q in queries]
        eng.push_many(stream)                   # rows (s, p, o, start, end)
        g = eng.rule_graph()
        check_graph(g, eng.core.goals())
        # each query's answer rule is in the graph, headed by its answer event
        heads = [r.name for r in g.rules]
        assert heads == [h.compiled.head for h in handles]
        for h in handles:
            part = h.rule_graph()
            assert [r.name for r in part.rules] == [h.compiled.head]
            assert set(part.nodes) == g.below([part.rules[0].node])
