"""The examples of section 4.1 of the specification, downward compatibility
with SPARQL, and timewise monotonicity (section 4.2).

Queries (1)-(3) and the downratedby CONSTRUCT rule are used as printed in
the paper (bare names are IRIs relative to the default base
http://epsparql.org/ns#; ``hasStockprice`` in query (3) is spelled as
printed, with a lower-case p, and so is its ``?price2 < ?price1 * 1.5``).
Their expected answers are computed by hand (see the comments) and also
checked against the reference evaluator, on small streams with times in
seconds.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest
from rdflib import Literal, URIRef

import sparql_reference as R
from sparql_reference import (BGP, NS, And, Arith, Bound, Cmp, Construct, Dur,
                              EVar, Filter, Not, Num,
                              QueryGen, Select, SeqJoin, SeqRightJoin, Var,
                              answers, construct_answers, diff_message,
                              engine_counter, gen_stream, plain_cases, render,
                              rdflib_answers)
from epsparql.query_engine import Engine

DAY = 86400
N = NS


def iri(name):
    return URIRef(N + name)


def lit(v):
    return Literal(v)


def row(ta, tw, **b):
    return (frozenset(b.items()), ta, tw)


def run(texts, stream, *, flush=True):
    e = Engine()
    try:
        hs = [e.register(t) for t in texts]
        e.push_many(stream)
        if flush:
            e.flush()
        return [h.results() for h in hs], list(e.errors)
    finally:
        e.close()


# ---------------------------------------------------------------------------
# query (1): a drop by over 30% then a rise by over 5%, within 30 days
# ---------------------------------------------------------------------------
QUERY_1 = """SELECT ?company WHERE { ?company hasStockPrice ?price1 }
SEQ { ?company hasStockPrice ?price2 }
SEQ { ?company hasStockPrice ?price3 }
FILTER ( ?price2 < ?price1 * 0.7 && ?price3 > ?price1 * 1.05 &&
         getDURATION() < "P30D"^^xsd:duration)"""

HSP = iri("hasStockPrice")


def price(company, p, t):
    return (iri(company), HSP, lit(p), t, t)


STREAM_1 = sorted([
    # ACME: 100, 60 (< 70), 110 (> 105) within 2 days: an answer over [0, 2 days];
    # the later 50 is no rise
    price("ACME", 100, 0), price("ACME", 60, 1 * DAY), price("ACME", 110, 2 * DAY),
    price("ACME", 50, 3 * DAY),
    # IBM: the same shape over 31 days: too long
    price("IBM", 100, 0), price("IBM", 60, 10 * DAY), price("IBM", 110, 31 * DAY),
    # SAP: exactly 30 days: getDURATION() < P30D is strict
    price("SAP", 100, 0), price("SAP", 60, 5 * DAY), price("SAP", 110, 30 * DAY),
    # HP: 100 and 60 at the same instant: SEQ needs strictly later
    price("HP", 100, 100), price("HP", 60, 100), price("HP", 110, 200),
    # DELL: 100, 75 (not below 70), 120
    price("DELL", 100, 0), price("DELL", 75, 1 * DAY), price("DELL", 120, 2 * DAY),
    # SUN: within 29 days
    price("SUN", 10, 1 * DAY), price("SUN", 6, 2 * DAY), price("SUN", 11, 30 * DAY),
], key=lambda r: r[4])

EXPECTED_1 = Counter([row(0, 2 * DAY, company=iri("ACME")),
                      row(1 * DAY, 30 * DAY, company=iri("SUN"))])

REF_1 = Select(
    Filter(And(And(Cmp("<", EVar("price2"), Arith("*", EVar("price1"), Num(R.Fraction(7, 10)))),
                   Cmp(">", EVar("price3"), Arith("*", EVar("price1"), Num(R.Fraction(105, 100))))),
               Dur("<", 30 * DAY)),
           SeqJoin(SeqJoin(BGP(((Var("company"), HSP, Var("price1")),)),
                           BGP(((Var("company"), HSP, Var("price2")),))),
                   BGP(((Var("company"), HSP, Var("price3")),)))),
    ("company",))


def test_query_1_as_printed():
    (res,), errors = run([QUERY_1], STREAM_1)
    assert not errors
    assert answers(REF_1, STREAM_1) == EXPECTED_1
    assert engine_counter(res) == EXPECTED_1


def test_query_1_with_decimal_prices_and_datetimes():
    # the same detection with decimal prices and datetime time stamps
    from datetime import datetime, timedelta, timezone
    t0 = datetime(2010, 3, 1, tzinfo=timezone.utc)
    stream = [(iri("ACME"), HSP, Literal("100.0", datatype=R.XSD.decimal), t0),
              (iri("ACME"), HSP, Literal("69.9", datatype=R.XSD.decimal), t0 + timedelta(days=3)),
              (iri("ACME"), HSP, Literal("105.5", datatype=R.XSD.decimal), t0 + timedelta(days=29))]
    (res,), errors = run([QUERY_1], stream)
    assert not errors
    assert [(a.bindings, a.end - a.start) for a in res] == [({"company": iri("ACME")}, 29 * DAY)]
    assert res[0].start == t0.timestamp()


# ---------------------------------------------------------------------------
# query (2): a drop by more than 50%, with the rating agency that
# downrated the company before, if any
# ---------------------------------------------------------------------------
QUERY_2 = """SELECT ?company ?ratingagency WHERE { ?company downratedby ?ratingagency}
OPTIONALSEQ { { ?company hasStockPrice ?price1 } SEQ { ?company hasStockPrice ?price2 }}
FILTER (?price2 < ?price1 * 0.5)"""

DOWN = iri("downratedby")


def down(company, agency, t1, t2=None):
    return (iri(company), DOWN, iri(agency), t1, t1 if t2 is None else t2)


STREAM_2 = sorted([
    # ACME downrated by Moodys at 10 and by SP at 15, then 100 -> 40:
    # one answer per agency, over [downrating, 30]
    down("ACME", "Moodys", 10), down("ACME", "SP", 15),
    price("ACME", 100, 20), price("ACME", 40, 30),
    # IBM: 100 -> 45 and nobody downrated it: the drop alone
    price("IBM", 100, 20), price("IBM", 45, 40), price("IBM", 60, 45),
    # SAP: downrated between its two prices: not before the drop, so alone
    price("SAP", 100, 50), down("SAP", "Fitch", 55), price("SAP", 30, 60),
    # HP: downrated, but 100 -> 50 is not a drop by more than 50%
    down("HP", "Moodys", 1), price("HP", 100, 2), price("HP", 50, 3),
], key=lambda r: r[4])

EXPECTED_2 = Counter([
    row(10, 30, company=iri("ACME"), ratingagency=iri("Moodys")),
    row(15, 30, company=iri("ACME"), ratingagency=iri("SP")),
    row(20, 40, company=iri("IBM")),
    row(50, 60, company=iri("SAP")),
])

C, RA, P1, P2 = Var("company"), Var("ratingagency"), Var("price1"), Var("price2")
REF_2 = Select(
    Filter(Cmp("<", EVar("price2"), Arith("*", EVar("price1"), Num(R.Fraction(1, 2)))),
           SeqRightJoin(BGP(((C, DOWN, RA),)),
                        SeqJoin(BGP(((C, HSP, P1),)), BGP(((C, HSP, P2),))))),
    ("company", "ratingagency"))


def test_query_2_as_printed():
    (res,), errors = run([QUERY_2], STREAM_2)
    assert not errors
    assert answers(REF_2, STREAM_2) == EXPECTED_2
    assert engine_counter(res) == EXPECTED_2


def test_query_2_answers_as_soon_as_the_drop_is_seen():
    # OPTIONALSEQ waits for nothing: every earlier downrating is known when
    # the mandatory part completes
    e = Engine()
    try:
        q = e.register(QUERY_2)
        e.push_many([down("ACME", "Moodys", 10), price("ACME", 100, 20)])
        assert q.results() == []
        e.push_many([price("ACME", 40, 30)])
        got = engine_counter(q.results())
        assert got == Counter([row(10, 30, company=iri("ACME"), ratingagency=iri("Moodys"))])
        e.push_many([price("IBM", 100, 31), price("IBM", 45, 40)])
        assert engine_counter(q.results()) == Counter([row(31, 40, company=iri("IBM"))])
        e.flush()
        assert q.results() == []
    finally:
        e.close()


# ---------------------------------------------------------------------------
# query (3): negation through OPTIONALSEQ and !BOUND
# ---------------------------------------------------------------------------
QUERY_3 = """SELECT ?company WHERE { ?company hasStockprice ?price1 }
SEQ { { ?company hasAcquired ?othercompany }
      OPTIONALSEQ { ?company hasStockPrice ?price2 } }
FILTER ( ?price2 < ?price1 * 1.5 && !BOUND(?othercompany) &&
         getDURATION() < "P15D"^^xsd:duration )"""

HSP_LOWER = iri("hasStockprice")
ACQ = iri("hasAcquired")

STREAM_3 = sorted([
    # ACME: 100 (hasStockprice) then 120 (hasStockPrice) 2 days later, no
    # acquisition: 120 < 150, 2 days < 15: an answer over [0, 2 days]
    (iri("ACME"), HSP_LOWER, lit(100), 0, 0), price("ACME", 120, 2 * DAY),
    # IBM acquired Foo between its prices: the acquisition is the earlier
    # optional part of the second price, ?othercompany is bound: no answer
    (iri("IBM"), HSP_LOWER, lit(100), 0, 0), (iri("IBM"), ACQ, iri("Foo"), DAY, DAY),
    price("IBM", 120, 2 * DAY),
    # HP acquired Bar before its first price: the second price still has an
    # earlier acquisition, so it never occurs alone; the combination starts
    # before the first price: no answer
    (iri("HP"), ACQ, iri("Bar"), 0, 0), (iri("HP"), HSP_LOWER, lit(100), DAY, DAY),
    price("HP", 110, 2 * DAY),
    # SAP: 20 days: too long
    (iri("SAP"), HSP_LOWER, lit(100), 0, 0), price("SAP", 120, 20 * DAY),
    # DELL: 200 is not below 150
    (iri("DELL"), HSP_LOWER, lit(100), 0, 0), price("DELL", 200, DAY),
    # SUN: the capital-P spelling for the first price does not match hasStockprice
    price("SUN", 100, 0), price("SUN", 120, DAY),
], key=lambda r: r[4])

EXPECTED_3 = Counter([row(0, 2 * DAY, company=iri("ACME"))])

REF_3 = Select(
    Filter(And(And(Cmp("<", EVar("price2"), Arith("*", EVar("price1"), Num(R.Fraction(3, 2)))),
                   Not(Bound("othercompany"))),
               Dur("<", 15 * DAY)),
           SeqJoin(BGP(((C, HSP_LOWER, P1),)),
                   SeqRightJoin(BGP(((C, ACQ, Var("othercompany")),)),
                                BGP(((C, HSP, P2),))))),
    ("company",))


def test_query_3_as_printed():
    (res,), errors = run([QUERY_3], STREAM_3)
    assert not errors
    assert answers(REF_3, STREAM_3) == EXPECTED_3
    assert engine_counter(res) == EXPECTED_3


# ---------------------------------------------------------------------------
# the downratedby CONSTRUCT rule feeding query (2): the Q-closure
# ---------------------------------------------------------------------------
CONSTRUCT_DOWN = """CONSTRUCT ?company downratedby ?ratingagency
WHERE { ?rating1 rater ?ratingagency ; rated ?company ; score ?score1 }
SEQ { ?rating2 rater ?ratingagency ; rated ?company ; score ?score2 }
FILTER ( ?score2 < ?score1 )"""

RATER, RATED, SCORE = iri("rater"), iri("rated"), iri("score")


def rating(name, agency, company, score, t):
    r = iri(name)
    return [(r, RATER, iri(agency), t, t), (r, RATED, iri(company), t, t),
            (r, SCORE, lit(score), t, t)]


STREAM_4 = sorted(
    # Moodys rates ACME 5 at 1, then 3 at 2: ACME downratedby Moodys over [1, 2]
    rating("r1", "Moodys", "ACME", 5, 1) + rating("r2", "Moodys", "ACME", 3, 2)
    # Fitch rates ACME 4 at 3, then 6 at 4: an upgrade, nothing constructed
    + rating("r3", "Fitch", "ACME", 4, 3) + rating("r4", "Fitch", "ACME", 6, 4)
    # ACME drops 100 -> 40; IBM 100 -> 45 with no downrating
    + [price("ACME", 100, 5), price("ACME", 40, 6), price("IBM", 100, 5), price("IBM", 45, 7)],
    key=lambda r: r[4])

EXPECTED_4 = Counter([row(1, 6, company=iri("ACME"), ratingagency=iri("Moodys")),
                      row(5, 7, company=iri("IBM"))])

R1, R2 = Var("rating1"), Var("rating2")
REF_DOWN = Construct(
    ((C, DOWN, RA),),
    Filter(Cmp("<", EVar("score2"), EVar("score1")),
           SeqJoin(BGP(((R1, RATER, RA), (R1, RATED, C), (R1, SCORE, Var("score1")))),
                   BGP(((R2, RATER, RA), (R2, RATED, C), (R2, SCORE, Var("score2")))))))


@pytest.mark.parametrize("order", ["construct first", "select first"])
def test_downratedby_construct_feeds_query_2(order):
    texts = [CONSTRUCT_DOWN, QUERY_2] if order == "construct first" else [QUERY_2, CONSTRUCT_DOWN]
    results, errors = run(texts, STREAM_4)
    assert not errors
    res_c, res_q = (results if order == "construct first" else results[::-1])
    assert answers(REF_2, STREAM_4, [REF_DOWN]) == EXPECTED_4
    assert engine_counter(res_q) == EXPECTED_4
    # the CONSTRUCT's own answer: the triple over the interval of its solution
    exp_c = Counter([(frozenset({(iri("ACME"), DOWN, iri("Moodys"))}), 1, 2)])
    assert construct_answers(REF_DOWN, STREAM_4) == exp_c
    assert Counter((frozenset(a.triples), a.start, a.end) for a in res_c) == exp_c


def test_downratedby_without_the_construct_rule():
    # without the rule no downratedby triple exists: both drops occur alone
    (res,), errors = run([QUERY_2], STREAM_4)
    assert not errors
    assert engine_counter(res) == Counter([row(5, 6, company=iri("ACME")),
                                           row(5, 7, company=iri("IBM"))])


# ---------------------------------------------------------------------------
# downward compatibility: plain SPARQL over a stream with one time stamp
# gives rdflib's answers, each over [t, t]
# ---------------------------------------------------------------------------
EX = "PREFIX : <http://epsparql.org/ns#>\n"
A, B, Cc = R.SUBJECTS
P, Q, RR = R.PREDICATES
FLAT = [(A, P, lit(1)), (A, P, lit(2)), (A, Q, lit(1)), (B, P, lit(3)), (B, RR, lit(0)),
        (Cc, Q, lit(2)), (Cc, RR, lit(2)), (A, RR, lit(1))]

HAND_QUERIES = [
    "SELECT ?s ?x ?y WHERE { ?s :p ?x . ?s :q ?y . }",
    "SELECT * WHERE { ?s :p ?x . OPTIONAL { ?s :q ?y . } }",
    "SELECT * WHERE { ?s :p ?x . OPTIONAL { ?s :q ?y . FILTER(?y > ?x) } }",
    "SELECT * WHERE { ?s :p ?x . OPTIONAL { ?s :q ?y . } FILTER(!BOUND(?y)) }",
    "SELECT * WHERE { { ?s :p ?x . } UNION { ?s :q ?x . } FILTER(?x >= 2) }",
    "SELECT ?s WHERE { ?s :r ?z . OPTIONAL { ?s :p ?x . OPTIONAL { ?s :q ?y . } } }",
    "SELECT * WHERE { ?s :p ?x . ?t :r ?x . FILTER(?s != ?t || ?x = 1) }",
    "SELECT * WHERE { ?s ?w 2 . }",
    "SELECT ?x WHERE { ?s :p ?x . ?s :r ?z . }",
]


def _rdflib_rows(text, triples):
    from rdflib import Graph
    g = Graph()
    for t in triples:
        g.add(t)
    res = g.query(text)
    return {frozenset((str(v), r[v]) for v in res.vars if r[v] is not None) for r in res}


@pytest.mark.parametrize("order", ["given", "reversed"])
@pytest.mark.parametrize("text", HAND_QUERIES)
def test_downward_compatibility_hand_written(text, order):
    # all triples share one instant, so any push order is a valid stream
    t = 7
    stream = [(s, p, o, t, t) for s, p, o in (FLAT if order == "given" else FLAT[::-1])]
    (res,), errors = run([EX + text], stream)
    assert not errors
    assert all((a.start, a.end) == (t, t) for a in res)
    # rdflib: the distinct full solutions, projected (one answer per solution)
    full = _rdflib_rows(EX + text.replace(text[:text.index("WHERE")], "SELECT * "), FLAT)
    proj = None if text.startswith("SELECT *") else \
        [v.lstrip("?") for v in text[len("SELECT "):text.index("WHERE")].split()]
    exp = Counter(R.project(m, proj) for m in full)
    got = Counter(frozenset(a.bindings.items()) for a in res)
    assert got == exp, (text, got, exp)
    assert exp    # every hand-written query has answers on FLAT


@pytest.mark.parametrize("batch", range(8))
def test_downward_compatibility_generated(batch):
    # rdflib 7 deviates from SPARQL 1.1 on a few rare queries even in this
    # fragment (it evaluates the right side of a join with the left side's
    # bindings, which changes what an inner FILTER sees): a case where rdflib
    # contradicts the reference evaluator (itself checked against rdflib in
    # test_sparql_differential.py) is not a verdict on the engine and is left
    # out; such cases must stay rare.
    bad, skipped = [], []
    cases = plain_cases(90_000 + batch * 1000, 30, time=3)
    for seed, q, stream in cases:
        random.Random(seed).shuffle(stream)      # one instant: any order is valid
        exp = rdflib_answers(q, stream)
        if exp != answers(q, stream):
            skipped.append(seed)
            continue
        (res,), errors = run([render(q)], stream)
        got = engine_counter(res)
        if errors or got != exp:
            bad.append((seed, q, stream, got, exp, errors))
    assert len(skipped) <= 3, skipped
    if bad:
        seed, q, stream, got, exp, errors = bad[0]
        pytest.fail(f"{len(bad)}/{len(cases) - len(skipped)} differ from rdflib "
                    f"(seeds {[b[0] for b in bad]}); first:\n"
                    + diff_message(render(q), stream, exp, got)
                    + (f"\nengine errors: {errors[:2]}" if errors else ""), pytrace=False)


# ---------------------------------------------------------------------------
# timewise monotonicity
# ---------------------------------------------------------------------------
def _cases(seed0, n):
    out = []
    for seed in range(seed0, seed0 + n):
        rng = random.Random(seed)
        g = QueryGen(rng, filtered_optional_operand=False)
        out.append((seed, g.select(), gen_stream(rng)))
    return out


@pytest.mark.parametrize("batch", range(6))
def test_prefix_answers_are_answers_of_the_whole_stream(batch):
    # for every cut t: the answers on the triples ending before t are exactly
    # the answers of the whole stream that end before t (so in particular a
    # subset of them: nothing answered on a prefix is ever invalidated)
    for seed, q, stream in _cases(100_000 + batch * 20, 20):
        text = render(q)
        (full,), errors = run([text], stream)
        assert not errors, (seed, errors[:2])
        full = engine_counter(full)
        for t in sorted({r[4] for r in stream}):
            prefix = [r for r in stream if r[4] < t]
            (part,), errors = run([text], prefix)
            part = engine_counter(part)
            assert not errors, (seed, errors[:2])
            assert not part - full, f"seed {seed}, cut {t}:\n" + diff_message(text, prefix, full, part)
            before = Counter({k: v for k, v in full.items() if k[2] < t})
            assert part == before, f"seed {seed}, cut {t}:\n" + diff_message(text, prefix, before, part)


@pytest.mark.parametrize("batch", range(6))
def test_answers_emitted_while_streaming_are_final(batch):
    # push one triple at a time, never flushing: every answer emitted so far
    # is an answer of the whole stream (reference), ends no later than the
    # last triple pushed, and is never emitted twice
    for seed, q, stream in _cases(110_000 + batch * 20, 20):
        text = render(q)
        e = Engine()
        try:
            h = e.register(text)
            seen = Counter()
            for r in stream:
                e.push_many([r])
                for a in h.results():
                    assert a.end <= r[4], (seed, text, a)
                    seen[(frozenset(a.bindings.items()), a.start, a.end)] += 1
            errors = list(e.errors)
        finally:
            e.close()
        exp = answers(q, stream)
        assert not errors, (seed, errors[:2])
        assert not seen - exp, f"seed {seed}: answers before the end of the stream that are " \
                               f"not answers:\n" + diff_message(text, stream, exp, seen)


def _engine(text):
    e = Engine()
    return e, e.register(EX + "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n" + text)


def test_equalsoptional_waits_for_its_instant_to_close():
    e, q = _engine("SELECT * WHERE { { ?s :p ?x } EQUALSOPTIONAL { ?s :q ?y } }")
    try:
        e.push(A, P, lit(1), 5)
        assert q.results() == []             # a :q at 5 could still arrive
        e.push(A, Q, lit(2), 5)
        assert engine_counter(q.results()) == Counter([row(5, 5, s=A, x=lit(1), y=lit(2))])
        e.flush()
        assert q.results() == []             # never the mandatory part alone
    finally:
        e.close()


def test_equalsoptional_alone_once_the_instant_is_closed():
    e, q = _engine("SELECT * WHERE { { ?s :p ?x } EQUALSOPTIONAL { ?s :q ?y } }")
    try:
        e.push(A, P, lit(1), 5)
        e.push(B, Q, lit(1), 5)              # not compatible
        assert q.results() == []
        e.advance(5)
        assert engine_counter(q.results()) == Counter([row(5, 5, s=A, x=lit(1))])
        e.push(A, P, lit(2), 6, 7)
        assert q.results() == []
        e.push(B, RR, lit(0), 8)              # a later triple closes instant 7
        assert engine_counter(q.results()) == Counter([row(6, 7, s=A, x=lit(2))])
        e.flush()
        assert q.results() == []
    finally:
        e.close()


def test_optional_waits_for_its_instant_to_close():
    e, q = _engine("SELECT * WHERE { ?s :p ?x OPTIONAL { ?s :q ?y } }")
    try:
        e.push(A, P, lit(1), 5)
        assert q.results() == []
        e.push(A, Q, lit(2), 3, 5)           # optional part ending at the same instant
        assert engine_counter(q.results()) == Counter([row(3, 5, s=A, x=lit(1), y=lit(2))])
        e.push(A, Q, lit(3), 6)              # ends after: not part of the answer at 5
        e.flush()
        assert q.results() == []
    finally:
        e.close()


def test_optional_alone_after_advance():
    e, q = _engine("SELECT * WHERE { ?s :p ?x OPTIONAL { ?s :q ?y } }")
    try:
        e.push(A, Q, lit(2), 1)
        e.push(B, P, lit(1), 5)              # B's optional part never comes
        e.push(A, P, lit(1), 5)
        # a combination needs no waiting; B alone must wait for instant 5
        assert engine_counter(q.results()) == Counter([row(1, 5, s=A, x=lit(1), y=lit(2))])
        e.advance(5)
        assert engine_counter(q.results()) == Counter([row(5, 5, s=B, x=lit(1))])
        e.flush()
        assert q.results() == []
    finally:
        e.close()


def test_nested_optional_waits_for_the_inner_optional():
    # the optional side of EQUALSOPTIONAL has an optional part itself: the
    # mandatory side must not be answered alone at the close of instant 5
    # just before the optional side (alone) is decided at that same close
    e, q = _engine("SELECT * WHERE { { ?s :p ?x } EQUALSOPTIONAL "
                   "{ ?s :q ?y OPTIONAL { ?s :r ?z } } }")
    try:
        e.push(A, P, lit(1), 5)
        e.push(A, Q, lit(2), 5)
        assert q.results() == []             # a :r at 5 could still arrive
        e.advance(5)
        assert engine_counter(q.results()) == Counter([row(5, 5, s=A, x=lit(1), y=lit(2))])
    finally:
        e.close()


def test_optionalseq_and_seq_wait_for_nothing():
    e, q = _engine("SELECT * WHERE { { ?s :p ?x } OPTIONALSEQ { ?s :q ?y } }")
    try:
        e.push(A, Q, lit(1), 5)
        assert engine_counter(q.results()) == Counter([row(5, 5, s=A, y=lit(1))])
        e.push(A, P, lit(2), 6)
        e.push(A, Q, lit(3), 7)
        assert engine_counter(q.results()) == Counter([row(6, 7, s=A, x=lit(2), y=lit(3))])
    finally:
        e.close()
    e, q = _engine("SELECT * WHERE { { ?s :p ?x } SEQ { ?s :q ?y } }")
    try:
        e.push(A, P, lit(2), 6)
        e.push(A, Q, lit(3), 7)
        assert engine_counter(q.results()) == Counter([row(6, 7, s=A, x=lit(2), y=lit(3))])
    finally:
        e.close()
