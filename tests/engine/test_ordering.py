"""Event time: reorder buffer, allowed lateness, late side output, sources."""
from __future__ import annotations

import random
from collections import Counter

from rdflib import Literal, URIRef

from epsparql import Engine
from epsparql.ordering import Reorderer

NS = "http://epsparql.org/ns#"
Q = """SELECT ?s ?x ?y WHERE { ?s :p ?x } SEQ { ?s :q ?y }
       FILTER (getDURATION() < "PT20S"^^xsd:duration)"""


def U(x):
    return URIRef(NS + x)


def stream(seed, n=300):
    rnd = random.Random(seed)
    rows = []
    for t in range(n):
        s = U(f"s{rnd.randrange(3)}")
        p = U(rnd.choice("pq"))
        rows.append((s, p, Literal(rnd.randrange(5)), t, t + rnd.choice([0, 0, 1, 2])))
    rows.sort(key=lambda r: r[4])
    return rows


def answers(engine, rows, **kw):
    q = engine.register(Q)
    engine.push_many(rows, **kw)
    engine.flush()
    return Counter((tuple(sorted(a.bindings.items())), a.start, a.end) for a in q.results())


def shuffle_within(rows, lateness, seed):
    """Delay each row by up to `lateness` seconds of event time."""
    rnd = random.Random(seed)
    keyed = [(r[4] + rnd.uniform(0, lateness), i, r) for i, r in enumerate(rows)]
    return [r for _, _, r in sorted(keyed)]


def test_disorder_within_the_allowed_lateness_gives_the_sorted_answers():
    for seed in range(5):
        rows = stream(seed)
        expected = answers(Engine(), rows)
        assert expected
        shuffled = shuffle_within(rows, 5.0, seed)
        assert shuffled != rows
        e = Engine(allowed_lateness=5.0)
        assert answers(e, shuffled) == expected
        assert e.late == 0


def test_disorder_in_many_small_batches():
    rows = stream(7)
    expected = answers(Engine(), rows)
    e = Engine(allowed_lateness=5.0)
    q = e.register(Q)
    shuffled = shuffle_within(rows, 5.0, 7)
    for i in range(0, len(shuffled), 7):
        e.push_many(shuffled[i:i + 7])
    e.flush()
    got = Counter((tuple(sorted(a.bindings.items())), a.start, a.end) for a in q.results())
    assert got == expected


def test_late_events_are_counted_and_go_to_the_side_output():
    side = []
    e = Engine(allowed_lateness=2.0, on_late=lambda row, src: side.append((row[4], src)))
    q = e.register("SELECT ?s WHERE { ?s :p ?o }")
    e.push_many([(U("a"), U("p"), Literal(1), 10), (U("a"), U("p"), Literal(2), 9),   # within 2 s
                 (U("a"), U("p"), Literal(3), 20)])
    e.push(U("a"), U("p"), Literal(4), 5)       # watermark is 18: late
    e.flush()
    assert e.late == 1 and side == [(5, "default")]
    assert [a.start for a in q.results()] == [9, 10, 20]


def test_without_lateness_out_of_order_events_are_late_not_processed():
    e = Engine()
    q = e.register("SELECT ?s WHERE { ?s :p ?o }")
    e.push_many([(U("a"), U("p"), Literal(1), 10), (U("a"), U("p"), Literal(2), 3)])
    assert e.late == 1 and len(e.late_rows) == 1 and e.late_rows[0][4] == 3
    assert [a.start for a in q.results()] == [10]


def test_watermark_is_the_minimum_over_sources():
    e = Engine()
    q = e.register("SELECT ?s ?o WHERE { ?s :p ?o }")
    a, b = e.source("a"), e.source("b")
    a.push(U("x"), U("p"), Literal(1), 10)
    b.push(U("y"), U("p"), Literal(2), 4)
    # source a is at 10, b at 4: only what ends by 4 is out
    assert [x.start for x in q.results()] == [4]
    b.push(U("y"), U("p"), Literal(3), 7)       # b moves to 7, still behind a
    assert [x.start for x in q.results()] == [7]
    b.advance(12)                                # heartbeat of the quiet source
    assert [x.start for x in q.results()] == [10]
    assert e.late == 0


def test_heartbeat_closes_instants_on_a_quiet_stream():
    e = Engine()
    q = e.register("SELECT ?s ?y WHERE { ?s :p ?x } EQUALSOPTIONAL { ?s :q ?y }")
    e.push(U("a"), U("p"), Literal(1), 5)
    assert q.results() == []                     # a :q at 5 could still come
    e.advance(5)
    (ans,) = q.results()
    assert "y" not in ans.bindings


def test_reorderer_releases_in_end_order_and_is_stable():
    r = Reorderer(allowed_lateness=3)
    rows = [("s", "p", "o", t, t) for t in (5, 3, 4, 9, 8, 6, 12)]
    out = r.add(rows)
    out += r.flush()
    assert [x[4] for x in out] == sorted(x[4] for x in rows)


# -- bounded resources ---------------------------------------------------------
import pytest  # noqa: E402

from epsparql.core import PrologError  # noqa: E402
from epsparql.query_engine import StateLimitError, UnboundedStateWarning  # noqa: E402


def test_unbounded_query_warns_and_bounded_does_not():
    e = Engine()
    with pytest.warns(UnboundedStateWarning, match="getDURATION"):
        e.register("SELECT ?s WHERE { ?s :p ?x } SEQ { ?s :q ?y }")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e.register(Q)                                     # has a window
        e.register("SELECT ?s WHERE { ?s :p ?x }")        # a single pattern stores nothing


def test_state_cap_fails_clearly_without_eviction():
    e = Engine(max_goals=50)
    q = e.register("SELECT ?s ?y WHERE { ?s :p ?x } SEQ { ?s :q ?y }")
    with pytest.raises(StateLimitError, match="max_goals=50"):
        for t in range(200):
            e.push(U("a"), U("p"), Literal(t), t)
    # nothing was evicted: the stored partial matches are all still there
    assert e.core.stats()["goals"] > 50


def test_stack_exhaustion_is_a_clear_error_and_the_engine_recovers(tmp_path):
    f = tmp_path / "loop.pl"
    f.write_text("deep(N, R) :- N1 is N + 1, deep(N1, R0), R = [N|R0].\n")
    e = Engine()
    e.load_prolog(str(f))
    e.add_rules(f"boom(S) <- triple(S, '{NS}p', _) where user:deep(0, _).")
    with pytest.raises(PrologError, match="(?i)stack"):
        e.push(U("a"), U("p"), Literal(1), 1)
    e.core.reset()
    q = e.register("SELECT ?s WHERE { ?s :p ?o }")
    e.push(U("b"), U("p"), Literal(1), 2)
    assert [a["s"] for a in q.results()] == [U("b")]
