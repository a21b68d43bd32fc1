"""Late rows, caps and answers as they come, for windowed queries in Engine.

Where issue 17's engine features meet issue 13's windows:

- rows on named streams (``(s, p, o, start, end, stream)``) that come too
  late are reported by ``push_many`` exactly as the reorder buffer's rule
  says (tests/ordering_reference.py), and a windowed query answers as the
  brute-force reference (dialect_reference.py) over the stream without
  them, in the order the buffer releases it;
- ``max_answers`` counts windowed answers together with EP-SPARQL's: a
  capped engine delivers exactly the first N answers of an uncapped one,
  in the same order, then raises AnswerLimitError;
- ``on_answers`` hands windowed answers over as each call into the
  windows returns, and one that raises stops the push.
"""
from __future__ import annotations

import random

import pytest
from rdflib import Literal, URIRef

from dialect_cases import answers_key, background, cqels_query, csparql_query, stream
from dialect_reference import Row, evaluate
from ordering_reference import disorder, late_reference
from epsparql import Engine
from epsparql.query_engine import AnswerLimitError

pytestmark = pytest.mark.filterwarnings("ignore::epsparql.query_engine.UnboundedStateWarning",
                                        "ignore::epsparql.window_runtime.UnboundedWindowWarning")

EX = "http://example.org/"
EP = f"SELECT ?s ?o WHERE {{ ?s <{EX}p> ?o }}"


def _tuples(rows: list[Row]) -> list[tuple]:
    return [(r.s, r.p, r.o, r.tau, r.tau, r.stream) for r in rows]


def _chunks(rng: random.Random, rows: list) -> list[list]:
    out, i = [], 0
    while i < len(rows):
        n = rng.randint(1, 6)
        out.append(rows[i:i + n])
        i += n
    return out


def _engine(bg, **kw) -> Engine:
    eng = Engine(reasoning="none", **kw)
    for g, triples in bg.items():
        eng.add_background(triples, graph=g)
    return eng


@pytest.mark.parametrize("seed", range(60))
def test_late_rows_of_named_streams_against_the_references(seed):
    rng = random.Random(7000 + seed)
    rows = stream(rng, rng.randint(3, 25))
    bg = background(rng)
    make = cqels_query if seed % 2 else csparql_query
    text, ref = make(rng)
    pushed = disorder(rng, _tuples(rows), rng.randint(1, 8))
    lateness = rng.choice((0, 0, 0.5, 1, 2, 5))
    late = late_reference(pushed, lateness)
    # what the engine processes: the rows that were not late, in end-time
    # order (ties in arrival order), as the reorder buffer releases them
    kept = sorted((r for i, r in enumerate(pushed) if i not in set(late)), key=lambda r: r[4])
    expected = evaluate(ref, [Row(r[5], r[0], r[1], r[2], r[3]) for r in kept], bg)
    eng = _engine(bg, allowed_lateness=lateness, on_late=lambda row, source: None)
    try:
        q = eng.register(text)
        got_late, base = [], 0
        for part in _chunks(rng, pushed):
            got_late += [base + i for i in eng.push_many(part)]
            base += len(part)
        eng.flush()
        assert got_late == late, (pushed, lateness)
        assert eng.late == len(late)
        assert eng.errors == []
        got = [(a.start, a.end, a.bindings) for a in q.results()]
        assert answers_key(got) == answers_key(expected), (text, kept)
    finally:
        eng.close()


def _delivered(text, rows, bg, sizes, **kw):
    """Every answer in delivery order (query name, start, end, bindings),
    and the cap's error if one was raised."""
    out: list = []
    eng = _engine(bg, **kw)
    try:
        for t in (text, EP):
            eng.register(t, on_result=lambda a: out.append(
                (a.query, a.start, a.end, tuple(sorted(a.bindings.items())))))
        base = 0
        try:
            for n in sizes:
                eng.push_many(rows[base:base + n])
                base += n
            eng.flush()
        except AnswerLimitError as e:
            assert eng.answers == len(out)
            return out, e
        assert eng.answers == len(out)
        return out, None
    finally:
        eng.close()


@pytest.mark.parametrize("seed", range(40))
def test_max_answers_counts_windowed_answers_with_ep_sparql_ones(seed):
    rng = random.Random(8000 + seed)
    rows = stream(rng, rng.randint(5, 30))
    bg = background(rng)
    text, _ = (cqels_query if seed % 2 else csparql_query)(rng)
    tuples = _tuples(rows)
    sizes = [len(c) for c in _chunks(rng, tuples)]
    full, err = _delivered(text, tuples, bg, sizes)
    assert err is None
    if not full:
        return
    cap = rng.randrange(len(full))
    got, err = _delivered(text, tuples, bg, sizes, max_answers=cap)
    assert got == full[:cap]
    assert err is not None and (err.limit, err.cap, err.value) == ("max_answers", cap, cap + 1)
    got, err = _delivered(text, tuples, bg, sizes, max_answers=len(full))
    assert got == full and err is None


def test_on_answers_takes_windowed_answers_as_each_batch_is_evaluated():
    text = f"SELECT ?s WHERE {{ STREAM <{EX}s1> [NOW] {{ ?s <{EX}p> ?o }} }}"
    rows = [(URIRef(EX + f"n{i}"), URIRef(EX + "p"), Literal(i), i, i, EX + "s1")
            for i in range(1, 41)]
    taken: list = []
    calls = []
    eng = Engine(reasoning="none")
    try:
        q = eng.register(text)

        def take():
            calls.append(len(taken))
            taken.extend(q.results())

        eng.on_answers = take
        for k in range(4):
            eng.push_many(rows[10 * k:10 * k + 10])
            # instants up to the batch's last time stamp (exclusive) are
            # complete: their answers were handed over during the push
            assert q.results() == []
            assert len(taken) == 10 * k + 9 and len(calls) == k + 1
        eng.flush()
        assert q.results() == [] and len(calls) == 5
        assert sorted(int(str(a["s"])[len(EX) + 1:]) for a in taken) == list(range(1, 41))
        assert eng.answers == 40
    finally:
        eng.close()


def test_an_on_answers_that_raises_stops_a_windowed_push():
    text = f"SELECT ?s WHERE {{ STREAM <{EX}s1> [NOW] {{ ?s <{EX}p> ?o }} }}"
    rows = [(URIRef(EX + f"n{i}"), URIRef(EX + "p"), Literal(i), i, i, EX + "s1")
            for i in range(1, 11)]

    class Stop(Exception):
        pass

    def stop():
        raise Stop()

    eng = Engine(reasoning="none", on_answers=stop)
    try:
        eng.register(text)
        with pytest.raises(Stop):
            eng.push_many(rows)
    finally:
        eng.close()
