"""The window test on float times, and expiry of goals without clause
references (docs/CORE.md, Execution).

The seq join checks `End - Start =< W` as the definition reads, so a
`within` over it compiles to no second check: on float times where
`T1 >= T4 - W` and `T4 - T1 =< W` disagree, the engine must follow the
latter (checked against Python's own IEEE arithmetic on seeded random
streams).  Expired goals are dropped as the stream goes on.
"""
from __future__ import annotations

import random

import pytest

from conftest import dets
from epsparql.core import term

T = term


def float_stream(seed: int, n: int = 300, w: float = 1000.0):
    """a(K)/b(K) point events at large float times whose gaps sit at the
    window's edge, where the two forms of the test round differently."""
    rnd = random.Random(seed)
    t, out = 1e9 + rnd.random(), []
    for _ in range(n):
        t += rnd.choice([w, w - 1e-7, w + 1e-7, 0.37, rnd.uniform(0, 2 * w)])
        out.append((T(rnd.choice("ab"), rnd.randrange(3)), t))
    return out


def reference(events, w: float, three: bool):
    """a seq b (seq b), same key, `end - start =< w` on every step's span."""
    found = []
    for i, (ea, ta) in enumerate(events):
        if ea.name != "a":
            continue
        for j in range(i + 1, len(events)):
            eb, tb = events[j]
            if eb.name != "b" or eb.args != ea.args or not ta < tb or not tb - ta <= w:
                continue
            if not three:
                found.append((("h", tuple(ea.args)), ta, tb))
                continue
            for k in range(j + 1, len(events)):
                ec, tc = events[k]
                if ec.name == "b" and ec.args == ea.args and tb < tc and tc - ta <= w:
                    found.append((("h", tuple(ea.args)), ta, tc))
    return sorted(found, key=repr)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("three", [False, True])
def test_float_window_as_defined(make_engine, seed, three):
    w = 1000.0
    events = float_stream(seed, w=w)
    body = "(a(K) seq b(K)) seq b(K)" if three else "a(K) seq b(K)"
    eng = make_engine()
    eng.add_rules(f"h(K) <- {body} within {w}.")
    got = dets(eng.push_many(events))
    assert got == reference(events, w, three)


def test_expired_goals_are_dropped(make_engine):
    eng = make_engine(gc_every=50)
    eng.add_rules("h(K, P, Q) <- p(K, P) seq p(K, Q) where Q > P within 100.")
    rnd = random.Random(3)
    events = [(T("p", f"k{rnd.randrange(10)}", rnd.randrange(100)), t) for t in range(1, 20_001)]
    got = eng.push_many(events)
    assert len(got) > 10_000
    # at most a window and a sweep period (W/4) of goals stay stored
    assert eng.stats()["goals"] <= 125 + 50, eng.stats()
