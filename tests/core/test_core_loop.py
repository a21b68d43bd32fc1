"""The executor's hot path (prolog/epsparql_core.pl, docs/CORE.md
"Execution"): the batch check, the loop over a batch in the engine's own
module, the way a detection reaches the sink, and the expiry of goals.

* A batch of valid ``e/3`` items is checked without being copied; any
  other batch is converted and checked item by item.  Both must accept
  and reject exactly what the item-by-item check does, with the same
  error, and process nothing of a rejected batch.
* ``ep_emit/3`` calls a sink declared with ``direct_sink/1`` directly and
  any other with ``call/4``: the detections, their order, a failing sink,
  nested sinks and the buffer must not depend on which.
* Expired goals are dropped from the front of a store with ``retract/1``
  (the first live one put back in front) and, every 8th sweep or for a
  forced collection, anywhere: the goals left, *in their order*, must be
  those of a model of the documented sweeps, on streams whose starts are
  out of order; and no clause reference (an atom-table blob, which makes
  SWI-Prolog run an atom garbage collection with every clause garbage
  collection) is made for a store of single events.
"""
from __future__ import annotations

import math
import random
import subprocess

import pytest

from conftest import dets
from epsparql.core import term
from epsparql.core.runtime import PROLOG_DIR, runtime, swipl_executable

T = term


# -- the batch check ------------------------------------------------------------

def _push_error(module: str, batch: str) -> str | None:
    """engine_events/2 on a batch written in Prolog (``Inf``/``NaN`` stand
    for the floats): the formal of the error it raises, else None."""
    goal = ("Inf is inf, NaN is nan, Sub is 5.0e-324, "
            f"_B = {batch}, "
            f"catch((epsparql_core:engine_events({module}, _B), _F = none), error(_F, _), true), "
            "term_string(_F, Formal)")
    r = runtime().query_once(goal)
    return None if r["Formal"] == "none" else r["Formal"]


@pytest.mark.parametrize("batch, formal", [
    ("[e(a, 1, 1), e(_, 2, 2)]", "instantiation_error"),
    ("[e(a, 1, 1), e(3, 2, 2)]", "type_error(event,3)"),
    ("[e(a, 1, 1), e(a, x, 2)]", "type_error(number,x)"),
    ("[e(a, 1, 1), e(a, 2, _)]", "instantiation_error"),
    ("[e(a, 1, 1), e(a, 3, 2)]", "domain_error(event_interval,[3,2])"),
    ("[e(a, 1, 1), e(a, 2, Inf)]", "domain_error(finite_number,1.0Inf)"),
    ("[e(a, 1, 1), e(a, NaN, 2)]", "domain_error(finite_number,1.5NaN)"),
    ("[e(a, 1, 1), e(a, 2.5, 2.0)]", "domain_error(event_interval,[2.5,2.0])"),
    ("[e(a, 1, 1), foo]", "type_error(event_item,foo)"),
    ("[e(a, 1, 1), _]", "instantiation_error"),
    ("[e(a, 1, 1), event(a, [2])]", "type_error(event_item,event(a,[2]))"),
    ("[event(a, [1, 1]), event(\"s\", [2, 2])]", "type_error(event,\"s\")"),
    ("[e(a, 1, 1)|_]", "instantiation_error"),
    ("e(a, 1, 1)", "type_error(list,e(a,1,1))"),
])
def test_bad_batches_raise_as_the_item_check_does_and_run_nothing(engine, batch, formal):
    engine.add_rules("h <- a.")
    assert _push_error(engine.module, batch) == formal
    assert engine.stats()["events"] == 0
    assert engine.drain() == []


@pytest.mark.parametrize("batch, want", [
    ("[e(a, 1, 1), e(a, 2, 3)]", [(("h", ()), 1, 1), (("h", ()), 2, 3)]),
    ("[event(a, [1, 1]), e(a, 2, 2)]", [(("h", ()), 1, 1), (("h", ()), 2, 2)]),
    ("[e(a, 1, 2), event(a, [3, 4])]", [(("h", ()), 1, 2), (("h", ()), 3, 4)]),
    ("[e(a, 0.5, 1.5), e(a, Sub, 2)]", [(("h", ()), 0.5, 1.5), (("h", ()), 5e-324, 2)]),
    ("[e(a, -0.0, 0), e(a, 1, 1.0)]", [(("h", ()), -0.0, 0), (("h", ()), 1, 1.0)]),
    ("[]", []),
])
def test_good_batches_of_either_form_are_run(engine, batch, want):
    engine.add_rules("h <- a.")
    assert _push_error(engine.module, batch) is None
    assert dets(engine.drain()) == sorted(want, key=repr)


def test_random_batches_check_as_item_by_item(engine):
    """Random batches with one spoilt item somewhere: the error and the
    state are those of engine_events/2 on the items one at a time."""
    engine.add_rules("h(X) <- a(X).")
    rng = random.Random(7)
    goods = ["e(a({i}), {i}, {i})", "event(a({i}), [{i}, {i}])", "e(a({i}), {i}.0, {i}.5)"]
    bads = ["e(_, {i}, {i})", "e(a, {i}, x)", "e(a, {j}, {i})", "e(a, {i}, Inf)", "z({i})",
            "e(7, {i}, {i})", "event(a, {i})"]
    for _ in range(40):
        n = rng.randint(1, 8)
        items = [rng.choice(goods).format(i=100 + k) for k in range(n)]
        spoilt = rng.random() < 0.7
        if spoilt:
            at = rng.randrange(n)
            items[at] = rng.choice(bads).format(i=100 + at, j=200 + at)
        before = engine.stats()["events"]
        got = _push_error(engine.module, "[" + ", ".join(items) + "]")
        one_by_one = None
        for it in items:
            one_by_one = _push_error(engine.module, f"[{it}]") if spoilt else None
            if one_by_one:
                break
        engine.drain()
        if spoilt:
            assert got is not None and got == one_by_one, (items, got, one_by_one)
        else:
            assert got is None
            assert engine.stats()["events"] == before + n


# -- the sink -------------------------------------------------------------------

_SINKS = """
:- module(e2_sinks, []).
:- use_module(library(epsparql_core_path_placeholder)).
:- dynamic got/2.
direct_sink(E, T1, T2) :- assertz(got(direct, d(E, T1, T2))).
plain_sink(E, T1, T2) :- assertz(got(plain, d(E, T1, T2))).
failing_sink(_, _, _) :- fail.
"""


@pytest.fixture
def sinks(tmp_path_factory):
    """A module e2_sinks with three sinks that note what they get;
    e2_sinks:direct_sink declared with direct_sink/1."""
    rt = runtime()
    path = tmp_path_factory.getbasetemp() / "e2_sinks.pl"
    if not path.exists():
        path.write_text(_SINKS.replace(
            ":- use_module(library(epsparql_core_path_placeholder)).",
            f":- use_module('{PROLOG_DIR / 'epsparql_core'}')."))
    rt.consult(path)
    rt.query_once("retractall(e2_sinks:got(_, _)), "
                  "( epsparql_core:direct_sink(e2_sinks:direct_sink) -> true "
                  "; assertz(epsparql_core:direct_sink(e2_sinks:direct_sink)) )")
    yield rt
    rt.query_once("retractall(epsparql_core:direct_sink(e2_sinks:direct_sink)), "
                  "retractall(e2_sinks:got(_, _))")


def _through(rt, module: str, sink: str, batch: str) -> list[str]:
    rt.query_once("retractall(e2_sinks:got(_, _))")
    rt.query_once(f"e2_sinks:with_detection_sink({sink}, engine_events({module}, {batch}))")
    return rt.query_once("findall(_S, (e2_sinks:got(_, _D), term_string(_D, _S)), L)")["L"]


def test_direct_and_called_sinks_get_the_same_detections(make_engine, sinks):
    rt = sinks
    rules = "r(K, P, Q) <- p(K, P) seq p(K, Q) where Q > P within 50.\ns(K) <- p(K, _)."
    rng = random.Random(3)
    batch = "[" + ", ".join(f"e(p(k{rng.randrange(4)}, {rng.randrange(20)}), {t}, {t})"
                            for t in range(1, 300)) + "]"
    a, b = make_engine(), make_engine()
    a.add_rules(rules)
    b.add_rules(rules)
    code = rt.query_once(f"with_output_to(string(S), listing({a.module}:ep_emit/3))")["S"]
    assert "e2_sinks:direct_sink(" in code                  # the direct call was generated
    got_direct = _through(rt, a.module, "direct_sink", batch)
    got_plain = _through(rt, b.module, "plain_sink", batch)
    assert len(got_direct) > 200
    assert got_direct == got_plain                          # same detections, same order
    assert a.drain() == [] and b.drain() == []              # none went to the buffers


def test_engines_made_before_a_direct_sink_is_declared_still_call_it(make_engine, sinks):
    rt = sinks
    rt.query_once("retractall(epsparql_core:direct_sink(e2_sinks:direct_sink))")
    old = make_engine()
    old.add_rules("h(X) <- a(X).")
    rt.query_once("assertz(epsparql_core:direct_sink(e2_sinks:direct_sink))")
    assert _through(rt, old.module, "direct_sink", "[e(a(1), 1, 1), e(a(2), 2, 2)]") == \
        ["d(h(1),1,1)", "d(h(2),2,2)"]


def test_nested_sinks_and_the_buffer(make_engine, sinks):
    rt = sinks
    eng = make_engine()
    eng.add_rules("h(X) <- a(X).")
    rt.query_once("retractall(e2_sinks:got(_, _))")
    m = eng.module
    rt.query_once(f"""e2_sinks:with_detection_sink(direct_sink,
                        ( engine_events({m}, [e(a(1), 1, 1)]),
                          with_detection_sink(plain_sink, engine_events({m}, [e(a(2), 2, 2)])),
                          engine_events({m}, [e(a(3), 3, 3)]) ))""")
    got = rt.query_once("findall(_S, (e2_sinks:got(_W, _D), term_string(_W-_D, _S)), L)")["L"]
    assert got == ["direct-d(h(1),1,1)", "plain-d(h(2),2,2)", "direct-d(h(3),3,3)"]
    eng.push(T("a", 4), 4)                                  # no sink: the buffer
    assert dets(eng.drain()) == [(("h", (4,)), 4, 4)]


def test_a_failing_sink_fails_the_detection_whichever_the_call(make_engine, sinks):
    """A sink that fails makes ep_emit/3 fail: the rest of the emission
    (here the feeding of the head to the rule that listens to it) does not
    happen, as with call/4 before."""
    rt = sinks
    rt.query_once("assertz(epsparql_core:direct_sink(e2_sinks:failing_sink))")
    try:
        for declare in (True, False):
            if not declare:
                rt.query_once("retractall(epsparql_core:direct_sink(e2_sinks:failing_sink))")
            eng = make_engine()
            eng.add_rules("h(X) <- a(X).\ng(X) <- h(X).")
            rt.query_once(f"e2_sinks:with_detection_sink(failing_sink, "
                          f"engine_events({eng.module}, [e(a(1), 1, 1)]))")
            assert eng.drain() == [] and eng.errors == []
    finally:
        rt.query_once("retractall(epsparql_core:direct_sink(e2_sinks:failing_sink))")


# -- expiry ---------------------------------------------------------------------

def _model(events, w: float, every: int):
    """The left store of ``a(K) seq b(K) within W`` after each event, as
    docs/CORE.md describes the collection: every ``every`` events a sweep
    of the store if the clock moved by W/4 since its last one (or it never
    had one): the expired goals at its front go, and on every 8th sweep
    every expired goal (a goal is expired when its start is before
    now - W); order kept."""
    goals, now, since, last, sweeps = [], -math.inf, 0, None, 0
    for name, k, t1, t2 in events:
        now = max(now, t2)
        if name == "a":
            goals.append([k, t1, t2])
        since += 1
        if since >= every:
            since = 0
            if last is None or now - last >= w / 4:
                sweeps, last, lim = sweeps + 1, now, now - w
                while goals and goals[0][1] < lim:
                    goals.pop(0)
                if sweeps % 8 == 0:
                    goals = [g for g in goals if g[1] >= lim]
    return goals


@pytest.mark.parametrize("seed", range(6))
def test_sweeps_leave_the_goals_of_the_model_in_order(make_engine, seed):
    rng = random.Random(seed)
    w, every = rng.choice([(40, 5), (100, 7), (25.5, 3)])
    eng = make_engine(gc_every=every)
    eng.add_rules(f"h(K) <- a(K) seq b(K) within {w}.")
    events, t = [], 0
    for _ in range(1500):                 # ordered by end; starts out of order
        t += rng.choice([0, 1, 1, 2, 0.5])
        events.append((rng.choice("aab"), rng.randrange(5), t - rng.choice([0, 0, 3, 20, 60]), t))
    pos = 0
    while pos < len(events):
        n = rng.randint(1, 60)
        chunk = events[pos:pos + n]
        eng.push_many([(T(name, k), t1, t2) for name, k, t1, t2 in chunk])
        pos += n
        want = _model(events[:pos], w, every)
        got = [g["goal"] for g in eng.goals()]
        assert got == want, (seed, pos)
    eng.gc()                               # a forced collection: every expired goal
    now = events[-1][3]
    assert [g["goal"] for g in eng.goals()] == [g for g in want if g[1] >= now - w]


def test_policies_see_the_store_in_order_after_sweeps(make_engine):
    """chronological takes the oldest partner, recent the newest: the
    store's order after many sweeps is still the arrival order."""
    for policy in ("chronological", "recent"):
        eng = make_engine(gc_every=3, policy=policy)
        eng.add_rules("h(K, T) <- a(K, T) seq b(K) within 30.")
        got = []
        for t in range(1, 400):
            if t % 7 == 0:
                got += eng.push(T("b", 1), t)
            else:
                eng.push(T("a", 1, t), t)
        heads = [d.event.args[1] for d in got]
        for d, h in zip(got, heads):
            window = [x for x in range(d.end - 30, d.end) if x % 7 != 0 and x >= 1]
            assert h in window
        if policy == "chronological":
            assert heads == sorted(heads)
        else:
            assert all(d.end - 1 == h or (d.end - 1) % 7 == 0 for d, h in zip(got, heads))


_NO_BLOBS = r"""
:- use_module('{core}').
:- initialization(main, main).
main :-
    set_prolog_gc_thread(false),
    engine_create(m),
    engine_add_rules(m, [(rise(K, P, Q) <- price(K, P) seq price(K, Q) where Q > P within 200)]),
    findall(e(price(K, P), T, T),
            ( between(1, 30000, T), K is T mod 37, P is (T * 7919) mod 101 ), Es),
    statistics(atom_garbage_collection, [A0|_]),
    statistics(clause_garbage_collection, [C0|_]),
    engine_events(m, Es),
    statistics(atom_garbage_collection, [A1|_]),
    statistics(clause_garbage_collection, [C1|_]),
    engine_stats(m, St),
    A is A1 - A0, C is C1 - C0,
    format("~w ~w ~w~n", [A, C, St.goals]).
"""


def test_expiry_of_single_events_makes_no_clause_references(tmp_path):
    """30,000 events through a store of single events, in a fresh swipl
    with the collections in its own thread: the clause garbage collector
    runs (expired goals are retracted), the atom garbage collector does
    not (no clause-reference blob to reclaim; with clause/3 and erase/1
    per expired goal it ran with every clause collection)."""
    script = tmp_path / "no_blobs.pl"
    script.write_text(_NO_BLOBS.replace("{core}", str(PROLOG_DIR / "epsparql_core")))
    r = subprocess.run([swipl_executable(), str(script)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    agc, cgc, goals = map(int, r.stdout.split())
    assert cgc > 0
    assert agc == 0, (agc, cgc)
    assert goals <= 200 + 50 + 10          # a window and a sweep period of goals, about


# -- within steps compiled as their child -----------------------------------------

def _pattern(rng: random.Random, depth: int, pool: list[str]) -> str:
    """A random body over a/b/c/d(X): binary steps, some under `within`
    (over a binary step a within is compiled as its child), sub-patterns
    reused from ``pool`` so that rules share steps."""
    if pool and rng.random() < 0.3:
        return rng.choice(pool)
    if depth == 0 or rng.random() < 0.25:
        return f"{rng.choice('abcd')}(X)"
    op = rng.choice(["seq", "seq", "and", "par"])
    p = f"({_pattern(rng, depth - 1, pool)} {op} {_pattern(rng, depth - 1, pool)})"
    if rng.random() < 0.5:
        p = f"({p} within {rng.choice([4, 8, 15])})"
    pool.append(p)
    return p


def _aliases(module: str) -> int:
    return runtime().query_once(
        f"aggregate_all(count, core_graph:ep_alias({module}, _, _), N)")["N"]


@pytest.mark.parametrize("seed", range(12))
def test_withins_compiled_as_their_child_keep_every_order(make_engine, seed):
    """The same rules with justification on (no within is aliased) and off:
    the detections in the order they are made, the goals in store order,
    the errors, before and after more rules share the steps and after
    rules are deleted, must be the same.  Heads d(X) are events too, so
    the order of the clauses of a shared step shows in what is fed back."""
    rng = random.Random(seed)
    policy = rng.choice(["unrestricted", "unrestricted", "chronological", "recent"])
    plain = make_engine(policy=policy, gc_every=7, max_depth=50)
    justified = make_engine(policy=policy, gc_every=7, max_depth=50)
    justified.set_option("justify", True)
    pool: list[str] = []
    alias_counts = []

    def add(k: int) -> None:
        rules = []
        for i in range(k):
            body = _pattern(rng, rng.randint(1, 3), pool)
            # heads d(X) are fed back, to rules without d in their body (no cycle)
            head = rng.choice(["h", "g"]) if "d(" in body else rng.choice(["h", "d", "d"])
            if rng.random() < 0.7 or "within" not in body:
                body = f"({body} within {rng.choice([5, 10, 20])})"
            rules.append(f"r{len(pool)}_{i} 'rule:' {head}(X) <- {body}.")
        text = "\n".join(rules)
        plain.add_rules(text)
        justified.add_rules(text)
        alias_counts.append(_aliases(plain.module))
        assert _aliases(justified.module) == 0

    def push(n: int, t0: int) -> int:
        events = []
        t = t0
        for _ in range(n):
            t += rng.choice([0, 1, 1, 2])
            events.append((T(rng.choice("abcd"), rng.randrange(3)), t - rng.choice([0, 0, 1, 3]), t))
        got_p = plain.push_many(events)
        got_j = justified.push_many(events)
        assert [(d.event, d.start, d.end) for d in got_p] == \
               [(d.event, d.start, d.end) for d in got_j]
        assert plain.goals() == justified.goals()
        assert [(e.kind, e.node, e.context) for e in plain.errors] == \
               [(e.kind, e.node, e.context) for e in justified.errors]
        return t

    add(rng.randint(1, 4))
    t = push(80, 0)
    add(rng.randint(1, 4))                # shares steps with the first rules
    t = push(80, t)
    labels = runtime().query_once(
        f"findall(_L, core_state:engine_rule_key({plain.module}, _, 'rule:'(_L, _)), Ls)")["Ls"]
    for label in rng.sample(labels, k=min(len(labels), rng.randint(1, 3))):
        for eng in (plain, justified):
            runtime().query_once(f"epsparql_core:engine_delete_rules({eng.module}, '{label}')")
    alias_counts.append(_aliases(plain.module))
    push(80, t)
    assert plain.rule_graph() == justified.rule_graph()
    _ALIAS_COUNTS.append(alias_counts)


_ALIAS_COUNTS: list[list[int]] = []


def test_the_within_cases_above_aliased_and_unaliased():
    """The seeds above compile withins as their child, and undo that when
    later rules share the child (the count of aliases goes down)."""
    if len(_ALIAS_COUNTS) < 12:
        pytest.skip("runs after the seeded cases, in the same process")
    assert any(c[0] > 0 for c in _ALIAS_COUNTS)
    assert any(b < a for c in _ALIAS_COUNTS for a, b in zip(c, c[1:]))


def test_withins_are_aliased_and_unaliased(make_engine):
    """The within over a binary step is compiled as the step (one call less
    per occurrence), until another parent of the step comes."""
    eng = make_engine()
    eng.add_rules("h(X) <- (a(X) seq b(X)) within 10.")
    assert _aliases(eng.module) == 1
    code = runtime().query_once(
        f"with_output_to(string(S), listing({eng.module}:ep_emit/3)), "
        f"core_graph:ep_alias({eng.module}, _W, _C), "
        f"atom_concat(ep_n, _C, _N), with_output_to(string(L), listing({eng.module}:_N))")["L"]
    assert "ep_emit(h(" in code
    pair = "core_graph:ep_alias({m}, 1, 2)".format(m=eng.module)
    assert runtime().query_once(pair) is not None                   # h's within, node 1, as node 2
    eng.add_rules("g(X) <- a(X) seq b(X) within 10.")  # the same within step: still aliased
    assert runtime().query_once(pair) is not None
    eng.add_rules("f(X) <- a(X) seq b(X) seq c(X) within 10.")   # node 2 gets another parent
    assert runtime().query_once(pair) is None
    got = eng.push_many([(T("a", 1), 1), (T("b", 1), 2), (T("c", 1), 3)])
    assert [(d.event, d.start, d.end) for d in got] == \
        [(T("h", 1), 1, 2), (T("g", 1), 1, 2), (T("f", 1), 1, 3)]
