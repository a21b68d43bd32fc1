"""Late rows, caps and answers as they come, from the Python API.

Checked against plain references on seeded random streams and queries:

- which rows are late: a row is late when it ends before the latest end,
  minus the allowed lateness, of the rows before it that were not late
  (the reorder buffer's rule, written out directly);
- the answers with ``allowed_lateness`` are the reference evaluator's
  (tests/sparql_reference.py) over the stream without its late rows;
- ``max_answers=N`` delivers exactly the first N answers an uncapped
  engine delivers, in the same order, then raises AnswerLimitError;
- ``on_answers`` hands a batch's answers over while the batch runs, a
  chunk at a time, never the whole batch at once.
"""
from __future__ import annotations

import random

import pytest
from rdflib import Literal, URIRef

from ordering_reference import disorder, late_reference
from sparql_reference import QueryGen, answers, diff_message, engine_counter, gen_stream, render
from epsparql import Engine, parse_query
from epsparql.query_engine import AnswerLimitError, LimitError, StateLimitError

pytestmark = pytest.mark.filterwarnings("ignore::epsparql.query_engine.UnboundedStateWarning")

EX = "http://ex/"


def chunks(rng: random.Random, rows: list) -> list[list]:
    out, i = [], 0
    while i < len(rows):
        n = rng.randint(1, 5)
        out.append(rows[i:i + n])
        i += n
    return out


@pytest.mark.parametrize("seed", range(200))
def test_push_many_reports_the_late_rows(seed):
    rng = random.Random(seed)
    rows = disorder(rng, gen_stream(rng, rng.randint(3, 25)), rng.randint(0, 8))
    lateness = rng.choice((0, 0, 0.5, 1, 2, 5))
    expected = late_reference(rows, lateness)
    e = Engine(allowed_lateness=lateness, on_late=lambda row, src: None)
    try:
        got, base = [], 0
        for part in chunks(rng, rows):
            got += [base + i for i in e.push_many(part)]
            base += len(part)
        assert got == expected, (rows, lateness)
        assert e.late == len(expected)
        e.flush()
        assert e.buffered == 0
    finally:
        e.close()


@pytest.mark.parametrize("seed", range(120))
def test_answers_with_lateness_are_those_of_the_stream_without_its_late_rows(seed):
    rng = random.Random(10_000 + seed)
    g = QueryGen(rng, ops=("Join", "Union", "SeqJoin", "EqJoin", "Filter"))
    q = g.select()
    rows = disorder(rng, gen_stream(rng), rng.randint(1, 6))
    lateness = rng.choice((0, 1, 2, 4))
    late = set(late_reference(rows, lateness))
    kept = [r for i, r in enumerate(rows) if i not in late]
    text = render(q)
    e = Engine(allowed_lateness=lateness, on_late=lambda row, src: None)
    try:
        h = e.register(text)
        got_late = e.push_many(rows)
        e.flush()
        assert set(got_late) == late
        got = engine_counter(h.results(), q.projection)
        expected = answers(q, kept)
        assert got == expected, diff_message(text, kept, expected, got)
    finally:
        e.close()


def run_all(text, rows, **kw):
    e = Engine(**kw)
    try:
        h = e.register(text)
        error = None
        try:
            e.push_many(rows)
            e.flush()
        except LimitError as x:
            error = x
        return h.results(), error, e.answers
    finally:
        e.close()


@pytest.mark.parametrize("seed", range(80))
def test_max_answers_delivers_the_first_answers_then_stops(seed):
    rng = random.Random(20_000 + seed)
    g = QueryGen(rng, ops=("Join", "Union", "SeqJoin", "EqJoin", "LeftJoin", "Filter"))
    text = render(g.select())
    rows = gen_stream(rng, rng.randint(5, 25))
    full, error, n = run_all(text, rows, batch_size=rng.choice((1, 3, 5000)))
    assert error is None and n == len(full)
    cap = rng.randint(0, len(full) + 1)
    got, error, n = run_all(text, rows, batch_size=rng.choice((1, 3, 5000)), max_answers=cap)
    assert [(a.bindings, a.start, a.end) for a in got] == \
        [(a.bindings, a.start, a.end) for a in full[:cap]]
    assert n == min(cap, len(full))
    if len(full) > cap:
        assert isinstance(error, AnswerLimitError) and error.cap == cap
        assert error.limit == "max_answers" and error.value == cap + 1
    else:
        assert error is None


def test_max_goals_stops_after_the_batch_that_crosses_it():
    rows = [(URIRef(EX + "s"), URIRef(EX + "p"), Literal(i), i) for i in range(100)]
    text = f"SELECT ?a ?b WHERE {{ <{EX}s> <{EX}p> ?a }} SEQ {{ <{EX}s> <{EX}p> ?b }}"
    e = Engine(max_goals=25, batch_size=10)
    try:
        q = e.register(text)
        with pytest.raises(StateLimitError) as info:
            e.push_many(rows)
        assert info.value.cap == 25 and info.value.value == 30
        # the three batches that went in: every pair among their 30 rows
        assert len(q.results()) == 30 * 29 // 2
    finally:
        e.close()


def test_answers_are_handed_over_while_a_batch_runs():
    """250 rows of one unbounded SEQ: 31,125 answers from one batch, taken a
    chunk at a time as the core makes them."""
    n = 250
    rows = [(URIRef(EX + "s"), URIRef(EX + "p"), Literal(i), i) for i in range(n)]
    e = Engine()
    sizes: list[int] = []
    try:
        q = e.register(f"SELECT ?a ?b WHERE {{ <{EX}s> <{EX}p> ?a }} SEQ {{ <{EX}s> <{EX}p> ?b }}")
        taken: list = []

        def came():
            got = q.results()
            sizes.append(len(got))
            taken.extend(got)

        e.on_answers = came
        e.push_many(rows)
        e.flush()
        taken += q.results()
        assert len(sizes) >= 7 and max(sizes) <= 4096
        pairs = {(int(a["a"]), int(a["b"])) for a in taken}
        assert len(taken) == n * (n - 1) // 2 and pairs == {(i, j) for j in range(n)
                                                            for i in range(j)}
    finally:
        e.close()


def test_an_answer_callback_that_raises_stops_the_batch():
    rows = [(URIRef(EX + "s"), URIRef(EX + "p"), Literal(i), i) for i in range(200)]
    e = Engine()
    try:
        q = e.register(f"SELECT ?a ?b WHERE {{ <{EX}s> <{EX}p> ?a }} SEQ {{ <{EX}s> <{EX}p> ?b }}")

        class Enough(Exception):
            pass

        def came():
            raise Enough()

        e.on_answers = came
        with pytest.raises(Enough):
            e.push_many(rows)
        assert 0 < len(q.results()) <= 4096        # the first chunk, not the batch's 44,850
    finally:
        e.close()


@pytest.mark.parametrize("base", ["not an iri", "http://ex/ a", "relative/path", "", "x:<y>"])
def test_a_base_that_is_not_an_absolute_iri_is_refused(base):
    with pytest.raises(ValueError, match="absolute IRI"):
        Engine(base=base)
    with pytest.raises(ValueError, match="absolute IRI"):
        parse_query("SELECT ?x WHERE { ?x p ?y }", base=base)


@pytest.mark.parametrize("kw", [{"max_answers": -1}, {"max_goals": 1.5}, {"max_answers": True}])
def test_caps_must_be_whole_numbers(kw):
    with pytest.raises(ValueError):
        Engine(**kw)
