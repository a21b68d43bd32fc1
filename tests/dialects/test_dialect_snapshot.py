"""WindowEngine.snapshot()/restore(): an engine restored from a snapshot
taken mid-stream continues exactly as the engine it was taken from, on
generated streams and queries of every dialect (windows, pending past
windows, per-pane aggregates, ISTREAM/DSTREAM memory, the reorder buffer)."""
from __future__ import annotations

import random
import warnings

import pytest
from rdflib import URIRef

import dialect_cases as C
from epsparql import Engine
from test_dialect_panes import agg_stream, pane_query

GENERATORS = [("cqels", C.cqels_query), ("csparql", C.csparql_query),
              ("sparqlstream", C.sparqlstream_query), ("streaming-sparql", C.streaming_sparql_query),
              ("luposdate", C.luposdate_query), ("rspql", C.rspql_query),
              ("panes", lambda rnd: pane_query(rnd, numeric_only=False))]


def engine(text, bg, dialect):
    eng = Engine(reasoning="none", allowed_lateness=1.0)
    for g, triples in bg.items():
        eng.add_background(triples, graph=g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = eng.register(text, dialect=None if dialect == "panes" else dialect)
    return eng, q


def answers(q):
    return [(a.start, a.end, sorted((k, v.n3()) for k, v in a.bindings.items())) for a in q.results()]


def quads(rows):
    return [(r.s, r.p, r.o, r.tau, None, r.stream) for r in rows]


@pytest.mark.parametrize("seed", range(50))
def test_restored_engine_continues_as_the_original(seed):
    rnd = random.Random(9000 + seed)
    dialect, gen = GENERATORS[seed % len(GENERATORS)]
    rows = (agg_stream(rnd, rnd.randint(5, 40), numeric_only=False) if dialect == "panes"
            else C.stream(rnd, rnd.randint(5, 30)))
    # a little disorder, within the allowed lateness of 1 s
    for i in range(len(rows) - 1):
        if rnd.random() < 0.2 and rows[i + 1].tau - rows[i].tau <= 0.5:
            rows[i], rows[i + 1] = rows[i + 1], rows[i]
    bg = C.background(rnd)
    text, _ = gen(rnd)
    cut = rnd.randint(0, len(rows))
    a, qa = engine(text, bg, dialect)
    b, qb = engine(text, bg, dialect)
    c, qc = engine(text, bg, dialect)
    try:
        a.push_many(quads(rows[:cut]))
        assert answers(qa) is not None
        b.push_many(quads(rows[:cut]))
        qb.results()
        state = b.snapshot()
        c.restore(state)
        a.push_many(quads(rows[cut:]))
        a.flush()
        c.push_many(quads(rows[cut:]))
        c.flush()
        assert answers(qc) == answers(qa), (text, cut, rows)
        assert c.window_stats() == a.window_stats() and c.late == a.late
        assert a.errors == [] and c.errors == []
    finally:
        for e in (a, b, c):
            e.close()


def test_restore_checks_the_queries_and_the_data():
    text = ("REGISTER QUERY q AS PREFIX ex: <http://example.org/> SELECT ?x "
            "FROM STREAM <http://example.org/s> [RANGE 2s STEP 1s] WHERE { ?x ex:p ?y }")
    with Engine() as a, Engine() as other, Engine() as same:
        qa = a.register(text)
        a.push(URIRef("http://example.org/a"), URIRef("http://example.org/p"),
               URIRef("http://example.org/b"), 1, stream="http://example.org/s")
        state = a.snapshot()
        other.register(text.replace("2s", "3s"))
        with pytest.raises(ValueError, match="does not fit"):
            other.restore(state)
        with pytest.raises(ValueError, match="not a Engine snapshot"):
            same.restore(b"junk")
        qs = same.register(text)
        import zlib
        from epsparql.query_engine import SNAPSHOT_MAGIC
        payload = zlib.decompress(state[len(SNAPSHOT_MAGIC):])
        evil = payload.replace(b"swc1_0", b"halt")          # a clause of another predicate
        with pytest.raises(ValueError, match="does not fit"):
            same.restore(SNAPSHOT_MAGIC + zlib.compress(evil))
        same.restore(state)                                  # the failed ones changed nothing
        same.flush()
        a.flush()
        # C-SPARQL's windows [0, 2) and [1, 3) hold the row at 1
        assert [x.end for x in qs.results()] == [x.end for x in qa.results()] == [2, 3]
