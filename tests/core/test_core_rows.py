"""Plain batches cross as janus data (terms.batch_rows, py_columns op
push_rows) instead of text: on seeded random streams of plain events the
detections equal those of the text path (py_push, decoded from JSON), to
the type; anything not plain takes the text path, and bad items are
reported as before."""
from __future__ import annotations

import random

import pytest

from conftest import strict_form

from epsparql.core import CoreEngine, Detection, PlString, term
from epsparql.core.runtime import runtime
from epsparql.core.terms import batch_rows, batch_text, from_json

PLAIN = [0, 1, -7, 2**70, -(2**65), 0.0, -0.0, 2.5, -1e300, 1e-300, 123456.789,
         "a", "ACME", "it's", 'quote"d', "", "[]", "X", "_", "a b", "back\\slash",
         "new\nline", "true", "None", "f(x)", "[1,2]", "'", "e", "nul\x00", "\x7f"]

RULES = """
pair(X, Y) <- a(X) seq b(Y) within 3.
same(X) <- a(X) seq b(X).
both(X, Y, Z) <- c(X, Y) seq a(Z) within 2.
tag(X, t) <- b(X).
"""


def _events(rng: random.Random, n: int, ends: bool) -> list[tuple]:
    out, t = [], 0
    for _ in range(n):
        t += rng.choice((0, 1, 1, 2))
        if rng.random() < 0.1:
            t += rng.choice((0.5, 0.25))         # float times too
        name = rng.choice("abc")
        args = [rng.choice(PLAIN) for _ in range(2 if name == "c" else 1)]
        ev = term(name, *args)
        out.append((ev, t, t + rng.choice((0, 0, 1))) if ends else (ev, t))
    return out





@pytest.mark.parametrize("seed", range(25))
def test_rows_give_the_detections_of_the_text_path(seed: int) -> None:
    rng = random.Random(seed)
    a, b = CoreEngine(), CoreEngine()
    try:
        for e in (a, b):
            e.add_rules(RULES)
        rt = runtime()
        events = _events(rng, rng.randint(20, 200), ends=rng.random() < 0.5)
        i = 0
        while i < len(events):
            k = rng.randint(1, 40)
            batch = events[i:i + k]
            i += k
            assert batch_rows(batch) is not None          # this test is about the rows path
            got = a.push_many(batch)
            reply = from_json(rt.call("py_push", b.module, ("s", batch_text(batch)[0])))
            assert "error" not in reply, reply
            want = [Detection(*d) for d in reply["d"]]
            assert strict_form(got) == strict_form(want)
        assert a.stats()["events"] == b.stats()["events"] == len(events)
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("batch", [
    [(term("a", True), 1)],                        # a bool is no Prolog term
    [(term("a", None), 1)],
    [(term("a", PlString("s")), 1)],               # a string, not an atom
    [(term("a", "ünï"), 1)],                       # non-ASCII: the text path
    [(term("ä", 1), 1)],
    [(term("a", float("nan")), 1)],
    [(term("a", 1), float("inf"))],
    [(term("a", 1), 2, 1)],                        # end before start
    [(term("a", 1), 1), (term("a", 1), 1, 2)],     # items of two lengths
    [(term("a", 1), 1, None)],
    [(term("a", term("f", 1)), 1)],                # a nested compound
    [(term("a", [1]), 1)],
    [(term("a"), 1)],                              # no arguments
    [("a", 1)],                                    # an atom event
    [(term("a", 1), True)],
    [(1, 1)],
    [(term("a", 1),)],
])
def test_not_plain_takes_the_text_path(batch) -> None:
    assert batch_rows(batch) is None


def test_bad_items_reported_as_before() -> None:
    e = CoreEngine()
    try:
        e.add_rules(RULES)
        with pytest.raises(ValueError, match="batch item 1: end 1 is before start 2"):
            e.push_many([(term("a", 1), 1), (term("a", 1), 2, 1)])
        with pytest.raises(TypeError, match="batch item 0: booleans"):
            e.push_many([(term("a", True), 1)])
        assert e.stats()["events"] == 0
        e.push_many([(term("a", "ünï"), 1), (term("b", "x"), 2)])      # text path: fine
        assert sorted(map(repr, (d.event for d in e.drain()))) == sorted(
            map(repr, [term("tag", "x", "t"), term("pair", "ünï", "x")]))
    finally:
        e.close()
