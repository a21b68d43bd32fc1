"""Generated rules and streams for the tests of the core's new features.

Small rule bodies over two or three event types with tiny argument
domains (so that joins succeed often), and streams with ties, zero-length
and overlapping intervals and duplicates.  The expected detections come
from the reference evaluator (tests/core_reference.py), the specification
written as Python.  Everything is drawn from a seed: a failure is
reproducible from the seed in its test id.
"""
from __future__ import annotations

import operator
import random

from core_reference import TEMPORAL, Var, pattern_vars

DOMAIN = (0, 1, 2)
VARS = ("X", "Y", "Z")


class Cmp:
    """A comparison of a variable with a variable or a constant."""

    OPS = {"<": operator.lt, ">": operator.gt, "=<": operator.le, ">=": operator.ge}
    vars = ()

    def __init__(self, op, a, b):
        self.op, self.a, self.b = op, a, b
        txt = (lambda x: x.name if isinstance(x, Var) else repr(x))
        self.prolog = f"{txt(a)} {op} {txt(b)}"

    def __call__(self, bindings):
        val = (lambda x: bindings[x.name] if isinstance(x, Var) else x)
        return self.OPS[self.op](val(self.a), val(self.b))


def bound(p) -> set:
    kind = p[0]
    if kind == "ev":
        return {a.name for a in p[2] if isinstance(a, Var)}
    if kind in TEMPORAL:
        return bound(p[1]) | bound(p[2])
    if kind == "or":
        return bound(p[1]) & bound(p[2])
    if kind in ("cnot", "where", "within"):
        return bound(p[1])
    raise ValueError(p)


class Gen:
    """Patterns over `types` (name -> arity) with the operators `ops`."""

    def __init__(self, rng: random.Random, types: dict, ops=tuple(TEMPORAL),
                 extra=("or", "cnot", "where", "within")):
        self.rng, self.types, self.ops, self.extra = rng, types, ops, extra

    def atom(self):
        name = self.rng.choice(sorted(self.types))
        args = tuple(Var(self.rng.choice(VARS)) if self.rng.random() < 0.8
                     else self.rng.choice(DOMAIN) for _ in range(self.types[name]))
        return ("ev", name, args)

    def pattern(self, depth):
        rng = self.rng
        if depth == 0 or rng.random() < 0.2:
            return self.atom()
        kind = rng.choice(self.ops + self.extra) if rng.random() < 0.4 else rng.choice(self.ops)
        if kind in TEMPORAL or kind in ("or", "cnot"):
            return (kind, self.pattern(depth - 1), self.pattern(depth - 1))
        p = self.pattern(depth - 1)
        if kind == "within":
            return ("within", p, rng.choice((0, 1, 2, 4)))
        vs = sorted(bound(p))
        if not vs:
            return p
        b = Var(rng.choice(vs)) if rng.random() < 0.5 else rng.choice(DOMAIN)
        return ("where", p, Cmp(rng.choice(sorted(Cmp.OPS)), Var(rng.choice(vs)), b))

    def rules(self, n, depth=2):
        out = []
        for i in range(n):
            body = self.pattern(self.rng.choice(range(1, depth + 1)))
            out.append((f"h{i + 1}", tuple(Var(v) for v in pattern_vars(body)), body))
        return out


def stream(rng: random.Random, types: dict, n: int):
    """Events (name, args, start, end) in nondecreasing order of end."""
    evs = []
    for _ in range(n):
        if evs and rng.random() < 0.1:
            evs.append(rng.choice(evs))
            continue
        name = rng.choice(sorted(types))
        args = tuple(rng.choice(DOMAIN) for _ in range(types[name]))
        start = rng.randint(0, 8)
        evs.append((name, args, start, start + rng.choice((0, 0, 1, 2))))
    rng.shuffle(evs)
    evs.sort(key=lambda e: e[3])
    return evs


def types_for(rng: random.Random) -> dict:
    names = ["a", "b", "c"][: rng.choice((2, 3))]
    return {n: rng.choice((1, 1, 2)) for n in names}
