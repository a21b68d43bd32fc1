"""The stream dialects inside Engine: registration, named streams next to
EP-SPARQL queries, snapshots of both, answers through the usual paths."""
from __future__ import annotations

import warnings

import pytest
from rdflib import Literal, URIRef

from epsparql import Engine
from epsparql.prepare import PreparedWindowQuery
from epsparql.window_runtime import DEFAULT_STREAM, WindowQuery

EX = "http://example.org/"
P = f"PREFIX ex: <{EX}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
A, B = EX + "a", EX + "b"
ann, bob, at, hall = (URIRef(EX + n) for n in ("ann", "bob", "detectedAt", "hall"))

CSPARQL = ("REGISTER QUERY seen AS " + P + "SELECT ?p (COUNT(*) AS ?n) "
           f"FROM STREAM <{A}> [RANGE 10s STEP 5s] WHERE {{ ?p ex:detectedAt ?r }} GROUP BY ?p")
EPSPARQL = P + "SELECT ?p ?r WHERE { ?p ex:detectedAt ?r }"


def test_register_detects_and_forces_the_dialect():
    with Engine() as eng:
        q = eng.register(CSPARQL)
        assert isinstance(q, WindowQuery) and q.dialect == "csparql" and q.name == "seen"
        assert isinstance(q.prepared, PreparedWindowQuery)
        assert q.prepared.syntax.dialect == "csparql" and q.algebra.windows
        assert q.variables == ["p", "n"] and q.form == "SELECT"
        e = eng.register(EPSPARQL)
        assert not isinstance(e, WindowQuery) and e.name == "q2"
        assert [x.name for x in eng.queries] == ["seen", "q2"]
        with pytest.raises(ValueError, match="unknown dialect"):
            eng.register(EPSPARQL, dialect="klingon")
        # forcing EP-SPARQL on a C-SPARQL text gives EP-SPARQL's error
        from epsparql import QueryError
        with pytest.raises(QueryError):
            eng.register(CSPARQL, dialect="ep-sparql")
        with pytest.raises(ValueError, match="registered already"):
            eng.register(CSPARQL)


def test_ep_sparql_sees_every_stream_and_windows_see_theirs():
    with Engine() as eng:
        w = eng.register(CSPARQL)
        e = eng.register(EPSPARQL)
        eng.push(ann, at, hall, 1, stream=A)
        eng.push(bob, at, hall, 2, stream=B)
        eng.push_many([(ann, at, hall, 3, None, B), (bob, at, hall, 4)])   # own stream, default
        eng.flush()
        got = [(str(a["p"]), a.start) for a in e.results()]
        assert sorted(got) == sorted([(str(ann), 1), (str(bob), 2), (str(ann), 3), (str(bob), 4)])
        [ans] = w.results()                    # only <a> is windowed: ann at 1
        # C-SPARQL's first window [0, 10) (t0 = 0), reported at its close
        assert ans.bindings == {"p": ann, "n": Literal(1)} and (ans.start, ans.end) == (0, 10)


def test_rows_and_streams_are_checked():
    with Engine() as eng:
        eng.register(CSPARQL)
        with pytest.raises(ValueError, match="row 1: .*stream must be an IRI"):
            eng.push_many([(ann, at, hall, 1), (ann, at, hall, 1, None, "not an iri")])
        with pytest.raises(TypeError, match="row 0: a stream must be an IRI"):
            eng.push_many([(ann, at, hall, 1, None, 7)])
        with pytest.raises(ValueError, match="stream must be an IRI"):
            eng.push(ann, at, hall, 1, stream="")
        with pytest.raises(ValueError, match="expected"):
            eng.push_many([(ann, at, hall, 1, 2, A, "x")])
        eng.push(ann, at, hall, 1, stream=URIRef(A))     # URIRef is fine
        eng.flush()
        assert eng.window_stats()["content"] == 1


def test_default_stream_is_documented_and_used():
    text = ("REGISTER QUERY d AS SELECT ?s FROM STREAM <%s> [RANGE 1s TUMBLING] WHERE { ?s ?p ?o }"
            % DEFAULT_STREAM)
    with Engine() as eng:
        q = eng.register(text)
        eng.push(ann, at, hall, 1)
        eng.push(bob, at, hall, 1, stream=A)
        eng.flush()
        assert [a["s"] for a in q.results()] == [ann]
    assert DEFAULT_STREAM == "urn:epsparql:stream"


def test_snapshot_and_clear_state_carry_both_kinds_of_state():
    def build():
        eng = Engine(allowed_lateness=1)
        w = eng.register(CSPARQL)
        e = eng.register(P + "SELECT ?p ?q WHERE { { ?p ex:detectedAt ?r } SEQ { ?q ex:detectedAt ?r } "
                         "FILTER (getDURATION() < \"PT20S\"^^xsd:duration) }")
        return eng, w, e

    rows = [(ann, at, hall, 1, None, A), (bob, at, hall, 3, None, A), (ann, at, hall, 6, None, B),
            (bob, at, hall, 12, None, A), (ann, at, hall, 13, None, A)]
    a, wa, ea = build()
    b, wb, eb = build()
    c, wc, ec = build()
    try:
        a.push_many(rows)
        a.flush()
        b.push_many(rows[:3])
        wb.results(), eb.results()
        state = b.snapshot()
        c.restore(state)
        c.push_many(rows[3:])
        c.flush()
        key = lambda q: sorted((x.start, x.end, sorted(x.bindings.items())) for x in q.results())
        got_w, got_e = key(wc), key(ec)
        assert got_w == key(wa)[-len(got_w):] and got_w
        assert got_e and set(map(str, got_e)) <= set(map(str, key(ea)))
        # a fresh engine fed everything matches a from the start
        c.clear_state()
        assert c.window_stats()["content"] == 0
        c.push_many(rows)
        c.flush()
        a2, wa2, ea2 = build()
        with a2:
            a2.push_many(rows)
            a2.flush()
            assert key(wc) == key(wa2) and key(ec) == key(ea2)
    finally:
        for e in (a, b, c):
            e.close()


def test_a_snapshot_of_other_queries_is_refused_and_changes_nothing():
    with Engine() as a, Engine() as ep_only, Engine() as other:
        a.register(CSPARQL)
        a.push(ann, at, hall, 1, stream=A)
        state = a.snapshot()
        ep_only.register(EPSPARQL, name="seen")
        with pytest.raises(ValueError):
            ep_only.restore(state)
        q = other.register(CSPARQL.replace("10s", "20s"))
        other.push(bob, at, hall, 2, stream=A)
        with pytest.raises(ValueError, match="does not fit"):
            other.restore(state)
        other.flush()
        assert [x["p"] for x in q.results()] == [bob]


def test_on_result_and_dataframe():
    got = []
    with Engine() as eng:
        q = eng.register(CSPARQL, on_result=got.append, keep=True)
        eng.push_many([(ann, at, hall, 1, None, A), (bob, at, hall, 2, None, A)])
        eng.flush()
        df = q.to_dataframe()
        assert list(df.columns[:3]) == ["query", "start", "end"]
        assert sorted(df["p"]) == [str(ann), str(bob)] and list(df["n"]) == [1, 1]
        assert set(df["end"]) == {10} and len(got) == 2      # the window [0, 10)


def test_function_errors_name_the_windowed_query():
    with Engine() as eng:
        def boom(x):
            raise ValueError("bad")
        eng.register_function(EX + "boom2", boom)
        q = eng.register("REGISTER QUERY b AS " + P + "SELECT ?p FROM STREAM <%s> [RANGE 1s TUMBLING] "
                         "WHERE { ?p ?x ?y FILTER (ex:boom2(?p)) }" % A)
        eng.push(ann, at, hall, 1, stream=A)
        eng.flush()
        assert q.results() == []
        [err] = eng.errors
        assert err.queries == ["b"] and "raised ValueError: bad" in err.message


def test_window_engine_is_a_deprecated_alias():
    from epsparql.windowed import WindowEngine
    with pytest.warns(DeprecationWarning, match="use epsparql.Engine"):
        eng = WindowEngine(incremental=False)
    with eng:
        q = eng.register(CSPARQL)
        assert isinstance(eng, Engine) and eng.engine is eng and not q.incremental
        eng.push_quads([(ann, at, hall, A, 1)])
        eng.flush()
        assert [x["p"] for x in q.results()] == [ann] and eng.stats()["queries"] == 1


def test_idle_and_largest_window_count_the_windows():
    with Engine() as eng:
        eng.register(CSPARQL)
        assert eng.idle and eng.largest_window == 10
        eng.push(ann, at, hall, 1, stream=A)
        assert not eng.idle
        eng.advance(30)
        assert eng.idle
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eng.register("REGISTER QUERY c AS SELECT ?s FROM STREAM <%s> [TRIPLES 3] "
                         "WHERE { ?s ?p ?o }" % A)
        assert eng.largest_window == float("inf")
