"""Detections in columns (CoreEngine.push_many_columns / drain_columns)
against the bridge's independent JSON path (py_push / py_drain, decoded by
terms.from_json), on generated rules and streams: values of every type,
unbound variables, intervals, several heads per batch, any drain order and
amount, small buffers and dictionary restarts."""
from __future__ import annotations

import math
import random

import pytest

from conftest import same_strict

from core_reference import rule_text
from epsparql.core import Columns, Compound, CoreEngine, Detection, PlString, term
from epsparql.core.runtime import runtime
from epsparql.core.terms import batch_text, from_json
from core.test_core_differential import gen_case  # tests/core/

# arguments of every kind the bridge carries
VALUES = [
    0, 1, -7, 2**70, -(2**65), 0.0, -0.0, 2.5, -1e300, 1e-300, 123456.789,
    "a", "ACME", "it's", "quote\"d", "ünï €", "", "[]", "X", "_", "a b",
    PlString(""), PlString("str"), PlString("it's \"x\""),
    term("f", 1), term("f", "a", PlString("s")), term("g", term("h", 2.5), [1, "x"]),
    [], [1, 2, 3], ["a", PlString("b"), [0.5]], term("n", 3, "http://x#int", PlString("3")),
]

# rules whose heads carry bound values, computed values, unbound
# variables, variables inside compounds, and several heads per event
RULES = """
pair(X, Y) <- a(X) seq b(Y) within 3.
same(X) <- a(X) seq b(X).
opt(X, Y) <- eqopt(a(X), c(X, Y), true).
wrapped(f(X, Y), [X]) <- eqopt(a(X), c(X, Y), true).
tag(X, t) <- b(X).
plain <- c(_, _).
"""


def _reference(module: str, op: str, arg) -> list[Detection]:
    """The old path: the bridge's JSON reply, decoded by from_json."""
    rt = runtime()
    if op == "push":
        reply = from_json(rt.call("py_push", module, ("s", arg)))
    elif op == "flush":
        reply = from_json(rt.call("py_flush", module))
    else:
        reply = from_json(rt.call("py_drain", module))
    assert "error" not in reply, reply
    return [Detection(*d) for d in reply["d"]]


def _events(rng: random.Random, n: int) -> list[tuple]:
    out, t = [], 0
    for _ in range(n):
        t += rng.choice((0, 1, 1, 2))
        name = rng.choice("abc")
        args = [rng.choice(VALUES) for _ in range(2 if name == "c" else 1)]
        out.append((term(name, *args), t, t + rng.choice((0, 0, 1))))
    return out


def _flatten(chunks: list[Columns]) -> list[Detection]:
    return [d for c in chunks for d in c.detections()]


def _check_columns(chunks: list[Columns]) -> None:
    """Each chunk's columns say the same as its Detection objects."""
    for c in chunks:
        dets = c.detections()
        assert len(c) == len(dets) == len(c.start) == len(c.end)
        assert [d.start for d in dets] == c.start and [d.end for d in dets] == c.end
        for i in range(c.arity):
            col = c.column(i)
            assert col == [d.event.args[i] for d in dets]
            if c.kinds[i] == "id":
                assert [c.terms[k] for k in c.ids(i)] == col
            else:
                assert c.ids(i) == col
        if c.arity == 0:
            assert all(d.event == c.name for d in dets)
        else:
            assert all(d.event.name == c.name and len(d.event.args) == c.arity for d in dets)





@pytest.mark.parametrize("seed", range(12))
def test_columns_equal_the_json_path_in_any_drain_order(seed, limits):
    rng = random.Random(seed)
    limits(rng.choice((1, 2, 5, 4096)), rng.choice((3, 8, 1048576)))
    events = _events(rng, rng.randint(20, 120))
    a, b = CoreEngine(), CoreEngine()            # a: columns, b: JSON reference
    try:
        for e in (a, b):
            e.add_rules(RULES)
        got: list[Detection] = []        # in drain order
        want: list[Detection] = []
        undrained: list[Detection] = []  # what the pushes returned, not drained yet
        kept: list[Columns] = []         # chunks kept across dictionary restarts

        def drain() -> None:
            if rng.random() < 0.5:
                chunks = a.drain_columns()
                _check_columns(chunks)
                kept.extend(chunks)
                out = _flatten(chunks)
            else:
                out = a.drain()
            assert same_strict(out, undrained)
            got.extend(out)
            undrained.clear()

        i = 0
        while i < len(events):
            k = rng.randint(1, 15)
            batch = events[i:i + k]
            i += k
            if rng.random() < 0.5:
                chunks = a.push_many_columns(batch)
                _check_columns(chunks)
                kept += chunks
                undrained.extend(_flatten(chunks))
            else:
                undrained.extend(a.push_many(batch))
            want += _reference(b.module, "push", batch_text(batch)[0])
            if rng.random() < 0.3:
                drain()
        undrained.extend(a.flush())
        drain()
        want += _reference(b.module, "flush", None)
        assert len(got) == len(want) > 0
        assert same_strict(got, want), next((x, y) for x, y in zip(got, want) if not same_strict([x], [y]))
        _check_columns(kept)                     # old chunks still decode after restarts
        assert a.errors == [] and b.errors == []
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("chunk", range(4))
def test_columns_on_the_differential_corpus(chunk):
    """The core's differential corpus (generated rules and streams): the
    columnar detections equal the JSON path's, in order."""
    for i in range(8):
        rules, events, _, gc_every = gen_case(7919 * chunk + i)
        text = "\n".join(rule_text(*r) for r in rules)
        a, b = CoreEngine(gc_every=gc_every), CoreEngine(gc_every=gc_every)
        try:
            a.add_rules(text)
            b.add_rules(text)
            batch = [(term(n, *args), s, e) for (n, args, s, e) in events]
            chunks = a.push_many_columns(batch)
            _check_columns(chunks)
            want = _reference(b.module, "push", batch_text(batch)[0])
            assert same_strict(_flatten(chunks), want)
            assert same_strict(a.drain(), want)        # kept for drain() as well
        finally:
            a.close()
            b.close()


def test_many_detections_in_one_call_cross_in_chunks(limits):
    limits(64, 1048576)
    eng = CoreEngine()
    try:
        eng.add_rules("p(K, X, Y) <- a(K, X) seq a(K, Y) within 1000.")
        batch = [(term("a", f"k{t % 3}", t * 0.5), t) for t in range(1, 301)]
        chunks = eng.push_many_columns(batch)
        n = sum(map(len, chunks))
        assert n == sum(1 for i in range(300) for j in range(i + 1, 300) if i % 3 == j % 3)
        assert len(chunks) == math.ceil(n / 64) and max(map(len, chunks)) == 64
        assert chunks[0].kinds == ["id", "value", "value"]
        keys = {k for c in chunks for k in c.column(0)}
        assert keys == {"k0", "k1", "k2"}
        # each distinct term crossed once: three keys in the dictionary
        assert sorted(chunks[-1].terms) == ["k0", "k1", "k2"]
    finally:
        eng.close()


def test_a_column_of_numbers_and_terms_decodes_per_value():
    eng = CoreEngine()
    try:
        eng.add_rules("h(X) <- a(X).")
        batch = [(term("a", v), t) for t, v in enumerate([1, "x", 2.5, PlString("s"), [1]], 1)]
        (c,) = eng.push_many_columns(batch)
        assert c.kinds == ["value"]
        assert same_strict(c.column(0), [1, "x", 2.5, PlString("s"), [1]])
    finally:
        eng.close()


def test_on_detected_sees_columnar_pushes_too():
    seen = []
    eng = CoreEngine(on_detected=seen.append)
    try:
        eng.add_rules("h(X) <- a(X).")
        chunks = eng.push_many_columns([(term("a", 1), 1), (term("a", Compound("f", ("y",))), 2)])
        assert seen == _flatten(chunks) == [Detection(term("h", 1), 1, 1),
                                            Detection(term("h", term("f", "y")), 2, 2)]
    finally:
        eng.close()


_inner: list = []


def inner_push(x):
    """Called from a rule of the outer engine (janus py_call): pushes into
    another engine while the outer engine's call is still running."""
    eng, seen = _inner
    seen.extend(eng.push_many([(term("b", x), 1), (term("b", [x]), 2)]))
    return True


def test_a_push_from_inside_a_push_gets_its_own_buffer(limits):
    limits(3, 1048576)                   # outer buffer flushed mid-call, too
    inner, outer = CoreEngine(), CoreEngine()
    seen: list = []
    _inner[:] = [inner, seen]
    try:
        inner.add_rules("g(X) <- b(X).")
        outer.add_rules("h(X, Y) <- a(X) where (janus:py_call(test_core_columns:inner_push(X), _), "
                        "Y = X).")
        batch = [(term("a", v), t) for t, v in enumerate(["p", 2, PlString("q"), "p", 5.5], 1)]
        got = outer.push_many(batch)
        assert got == [Detection(term("h", v, v), t, t) for (e, t) in batch for v in [e.args[0]]]
        assert seen == [d for (e, _) in batch
                        for d in (Detection(term("g", e.args[0]), 1, 1),
                                  Detection(term("g", [e.args[0]]), 2, 2))]
        assert outer.errors == [] and inner.errors == []
    finally:
        _inner.clear()
        inner.close()
        outer.close()
