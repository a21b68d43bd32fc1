"""Differential test: the engine against the reference evaluator.

Random rule bodies over a few event types with tiny argument domains, and
random time-ordered streams (ties, equal intervals, zero-length and
overlapping intervals, duplicates).  The detections of the engine, as a
multiset of (head, start, end), must equal those of tests/core_reference.py.

Everything is generated from fixed seeds, so a failure is reproducible:
the assertion message carries the rule text, the stream, and the
difference.
"""
from __future__ import annotations

import operator
import random
from collections import Counter

import pytest

from core_reference import (TEMPORAL, Var, detections, pattern_text,
                            pattern_vars, rule_text)
from epsparql.core import CoreEngine, term
from conftest import as_tuple

DOMAIN = (0, 1, 2)
VARS = ("X", "Y", "Z")
BINARY = tuple(TEMPORAL)            # seq and par equals meets during starts finishes
WINDOWS = (0, 1, 2, 3, 5)

# ---------------------------------------------------------------------------
# where-conditions: one representation, rendered as Prolog text for the
# engine and evaluated in Python for the reference.


def _val(x, b):
    return b[x.name] if isinstance(x, Var) else x


def _txt(x):
    return x.name if isinstance(x, Var) else repr(x)


class Cmp:
    """Comparison of two variables, or of a variable and a constant."""
    OPS = {"<": operator.lt, ">": operator.gt, "=<": operator.le,
           ">=": operator.ge, "=:=": operator.eq, "=\\=": operator.ne}
    vars = ()

    def __init__(self, op, a, b):
        self.op, self.a, self.b = op, a, b
        self.prolog = f"{_txt(a)} {op} {_txt(b)}"

    def __call__(self, b):
        return self.OPS[self.op](_val(self.a, b), _val(self.b, b))


class Is:
    """New = Old + K: binds a fresh variable (used in the head)."""

    def __init__(self, new, old, k):
        self.new, self.old, self.k = new, old, k
        self.vars = (new,)
        self.prolog = f"{new} is {_txt(old)} + {k}"

    def __call__(self, b):
        return [{self.new: _val(self.old, b) + self.k}]


class Member:
    """member(New, Values): one solution per value (each counts)."""

    def __init__(self, new, values):
        self.new, self.values = new, tuple(values)
        self.vars = (new,)
        self.prolog = f"member({new}, [{', '.join(map(repr, self.values))}])"

    def __call__(self, b):
        return [{self.new: v} for v in self.values]


class Truth:
    vars = ()

    def __init__(self, value):
        self.value = value
        self.prolog = "true" if value else "fail"

    def __call__(self, b):
        return self.value


# ---------------------------------------------------------------------------
# generators


def bound_vars(p) -> set:
    """Variables bound in every occurrence of p (safe to use in a where)."""
    kind = p[0]
    if kind == "ev":
        return {a.name for a in p[2] if isinstance(a, Var)}
    if kind in TEMPORAL:
        return bound_vars(p[1]) | bound_vars(p[2])
    if kind == "or":
        return bound_vars(p[1]) & bound_vars(p[2])
    if kind == "cnot":
        return bound_vars(p[1])
    if kind == "where":
        return bound_vars(p[1]) | set(p[2].vars)
    if kind == "within":
        return bound_vars(p[1])
    raise ValueError(p)


class Gen:
    def __init__(self, rng: random.Random, types: dict):
        self.rng = rng
        self.types = types
        self.fresh = 0

    def atom(self):
        name = self.rng.choice(sorted(self.types))
        args = tuple(Var(self.rng.choice(VARS)) if self.rng.random() < 0.75
                     else self.rng.choice(DOMAIN)
                     for _ in range(self.types[name]))
        return ("ev", name, args)

    def cond(self, p):
        rng = self.rng
        bound = sorted(bound_vars(p))
        r = rng.random()
        if not bound or r < 0.08:
            return Truth(rng.random() < 0.7)
        if r < 0.2:
            self.fresh += 1
            return Is(f"W{self.fresh}", Var(rng.choice(bound)), rng.choice((0, 1, 10)))
        if r < 0.3:
            self.fresh += 1
            return Member(f"W{self.fresh}", rng.sample(DOMAIN, rng.choice((1, 2))))
        a = Var(rng.choice(bound))
        b = Var(rng.choice(bound)) if rng.random() < 0.5 else rng.choice(DOMAIN)
        return Cmp(rng.choice(sorted(Cmp.OPS)), a, b)

    def pattern(self, depth):
        rng = self.rng
        if depth == 0 or rng.random() < 0.25:
            return self.atom()
        r = rng.random()
        if r < 0.55:
            return (rng.choice(BINARY), self.pattern(depth - 1), self.pattern(depth - 1))
        if r < 0.65:
            return ("or", self.pattern(depth - 1), self.pattern(depth - 1))
        if r < 0.77:
            return ("cnot", self.pattern(depth - 1), self.pattern(depth - 1))
        if r < 0.89:
            p = self.pattern(depth - 1)
            return ("where", p, self.cond(p))
        return ("within", self.pattern(depth - 1), rng.choice(WINDOWS))


def gen_stream(rng: random.Random, types: dict, n: int, step):
    evs = []
    for _ in range(n):
        if evs and rng.random() < 0.15:
            evs.append(rng.choice(evs))                 # an exact duplicate
            continue
        name = rng.choice(sorted(types))
        args = tuple(rng.choice(DOMAIN) for _ in range(types[name]))
        start = rng.randint(0, 6) * step
        length = rng.choice((0, 0, 0, 1, 1, 2, 3)) * step
        evs.append((name, args, start, start + length))
    rng.shuffle(evs)
    evs.sort(key=lambda e: e[3])     # nondecreasing end, ties in random order
    return evs


def subpatterns(p):
    yield p
    if p[0] == "ev":
        return
    if p[0] in ("where", "within"):
        yield from subpatterns(p[1])
    else:
        yield from subpatterns(p[1])
        yield from subpatterns(p[2])


def gen_case(seed: int):
    """One case: rules (head, args, body), a stream, engine options."""
    rng = random.Random(seed)
    names = ["a", "b", "c"][: rng.choice((2, 3))]
    types = {n: rng.choice((1, 1, 2)) for n in names}
    g = Gen(rng, types)
    for _attempt in range(50):
        rules = []
        for i in range(rng.choice((1, 2, 3))):
            if rules and rng.random() < 0.5:
                # reuse a sub-pattern of an earlier rule: exercises the
                # sharing of identical sub-patterns between rules
                base = rng.choice(list(subpatterns(rng.choice(rules)[2])))
                r = rng.random()
                if r < 0.4:
                    body = (rng.choice(BINARY), base, g.pattern(1))
                elif r < 0.6:
                    body = ("within", base, rng.choice(WINDOWS))
                elif r < 0.8:
                    body = ("where", base, g.cond(base))
                else:
                    body = base
            else:
                body = g.pattern(rng.choice((1, 2, 2, 3)))
            head_args = tuple(Var(v) for v in pattern_vars(body))
            rules.append((f"h{i + 1}", head_args, body))
        step = 1 if rng.random() < 0.8 else 0.5
        events = gen_stream(rng, types, rng.randint(3, 9), step)
        expected = detections(rules, events)
        if sum(expected.values()) <= 2000:
            break
    gc_every = rng.choice((1000, 1000, 1, 2))
    return rules, events, expected, gc_every


def run_engine(rules, events, gc_every) -> Counter:
    eng = CoreEngine(gc_every=gc_every)
    try:
        eng.add_rules("\n".join(rule_text(*r) for r in rules))
        got = eng.push_many([(term(n, *args), s, e) for (n, args, s, e) in events])
        assert eng.errors == [], eng.errors
        assert eng.drain() == got
        return Counter((as_tuple(d.event), d.start, d.end) for d in got)
    finally:
        eng.close()


def describe(rules, events, gc_every, expected, got) -> str:
    lines = ["rules:"]
    lines += ["  " + rule_text(*r) for r in rules]
    lines.append(f"gc_every: {gc_every}")
    lines.append("events (name, args, start, end):")
    lines += [f"  {e}" for e in events]
    missing = expected - got
    extra = got - expected
    lines.append(f"missing (expected, not detected): {dict(missing)}")
    lines.append(f"extra (detected, not expected): {dict(extra)}")
    return "\n".join(lines)


CHUNKS = 30
PER_CHUNK = 10


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_engine_matches_reference(chunk):
    failures = []
    for i in range(PER_CHUNK):
        seed = 7919 * chunk + i
        rules, events, expected, gc_every = gen_case(seed)
        got = run_engine(rules, events, gc_every)
        if got != expected:
            failures.append(f"seed {seed}:\n" + describe(rules, events, gc_every, expected, got))
    assert not failures, "\n\n".join(failures[:3])


def test_generator_covers_the_language():
    """The generated cases use every operator, non-empty expected results,
    zero-length intervals, ties, duplicates and unbound variables."""
    seen_ops = Counter()
    nonempty = unbound = zero = ties = dups = 0
    for chunk in range(CHUNKS):
        for i in range(PER_CHUNK):
            rules, events, expected, _ = gen_case(7919 * chunk + i)
            for r in rules:
                for p in subpatterns(r[2]):
                    seen_ops[p[0]] += 1
            nonempty += bool(expected)
            unbound += any(None in h[1] for (h, _, _) in expected)
            zero += any(s == e for (_, _, s, e) in events)
            ends = [e for (_, _, _, e) in events]
            ties += len(set(ends)) < len(ends)
            dups += len(set(events)) < len(events)
    for op in list(TEMPORAL) + ["or", "cnot", "where", "within", "ev"]:
        assert seen_ops[op] >= 20, (op, seen_ops)
    n = CHUNKS * PER_CHUNK
    assert nonempty > n // 2
    assert unbound >= 10 and zero > n // 2 and ties > n // 2 and dups >= 20


def test_reference_self_check():
    """The reference itself on a hand-checked case (guards the oracle)."""
    X, Y = Var("X"), Var("Y")
    evs = [("a", (1,), 1, 1), ("a", (1,), 1, 1), ("b", (1,), 2, 3), ("b", (2,), 2, 4)]
    body = ("seq", ("ev", "a", (X,)), ("ev", "b", (X,)))
    assert detections([("h", (X,), body)], evs) == Counter({(("h", (1,)), 1, 3): 2})
    body = ("or", ("ev", "a", (X,)), ("ev", "b", (Y,)))
    got = detections([("h", (X, Y), body)], evs)
    assert got[(("h", (1, None)), 1, 1)] == 2 and got[(("h", (None, 2)), 2, 4)] == 1
    body = ("cnot", ("ev", "b", (Y,)), ("ev", "b", (X,)))       # b(2)[2,4] has nothing inside
    assert sum(detections([("h", (Y,), body)], evs).values()) == 2
    assert pattern_text(("within", body, 2)) == "((b(Y) cnot b(X)) within 2)"
