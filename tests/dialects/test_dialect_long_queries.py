"""Long dialect queries, as tools generate them, register and answer
(issue 25, finding 4: they crashed with a RecursionError): a UNION of
1,000 branches (C-SPARQL) or of 500 windowed branches (CQELS), 1,000 named
windows read through GRAPH ?g, a FILTER of 2,000 alternatives, a chain of
1,500 additions."""
from __future__ import annotations

import sys

from rdflib import Literal, URIRef

from conftest import ROOT
from epsparql import Engine

sys.path.insert(0, str(ROOT / "tests" / "cli"))
from cli_child import cli  # noqa: E402  (the CLI in a child process)

EX = "http://example.org/"
S = EX + "s"


def csparql_union(n: int) -> str:
    return (f"REGISTER QUERY q AS SELECT ?s ?o FROM STREAM <{S}> [RANGE 10s STEP 5s] WHERE {{ "
            + " UNION ".join(f"{{ ?s <{EX}p{i}> ?o }}" for i in range(n)) + " }")


def cqels_union(n: int) -> str:
    return ("SELECT ?s WHERE { " + " UNION ".join(
        f"{{ STREAM <{S}{i}> [RANGE 10s] {{ ?s <{EX}p> ?o }} }}" for i in range(n)) + " }")


def named_windows(n: int) -> str:
    return ("REGISTER QUERY q AS SELECT ?g ?s " + " ".join(
        f"FROM NAMED STREAM <{S}{i}> [RANGE 10s STEP 5s]" for i in range(n))
        + " WHERE { GRAPH ?g { ?s ?p ?o } }")


def filter_or(n: int) -> str:
    return (f"REGISTER QUERY q AS SELECT ?s ?o FROM STREAM <{S}> [RANGE 10s STEP 5s] "
            f"WHERE {{ ?s ?p ?o FILTER(" + " || ".join(f"?o = {i}" for i in range(n)) + ") }")


def run(text: str, rows: list[tuple]) -> list:
    with Engine() as eng:
        q = eng.register(text)
        eng.push_many(rows)
        eng.flush()
        return sorted((a.end, tuple(sorted((k, str(v)) for k, v in a.bindings.items())))
                      for a in q.results())


def test_a_union_of_a_thousand_branches():
    got = run(csparql_union(1000), [(URIRef(EX + "a"), URIRef(f"{EX}p{i}"), Literal(i), 1, None, S)
                                   for i in (0, 499, 999, 1000)])
    assert [dict(b)["o"] for _, b in got] == ["0", "499", "999"]


def test_a_cqels_union_of_500_windows():
    got = run(cqels_union(500), [(URIRef(EX + f"x{i}"), URIRef(EX + "p"), Literal(1), 1, None,
                                  f"{S}{i}") for i in (3, 250, 499)])
    assert sorted({dict(b)["s"] for _, b in got}) == [EX + "x250", EX + "x3", EX + "x499"]


def test_a_thousand_named_windows_through_graph():
    got = run(named_windows(1000), [(URIRef(EX + "a"), URIRef(EX + "p"), Literal(1), 1, None,
                                     f"{S}{i}") for i in (7, 777)])
    assert {dict(b)["g"] for _, b in got} == {f"{S}7", f"{S}777"}


def test_a_filter_of_two_thousand_alternatives():
    got = run(filter_or(2000), [(URIRef(EX + "a"), URIRef(EX + "p"), Literal(i), 1, None, S)
                                for i in (0, 1999, 2000, 5000)])
    assert sorted(dict(b)["o"] for _, b in got) == ["0", "1999"]


def test_a_chain_of_1500_additions_and_one_past_the_limit():
    """A FILTER 1,500 operators deep answers (the windowed road's
    translation and its expression compiler, rules/expressions.py, walk it
    without recursion); one past MAX_EXPR_DEPTH is a QueryError at its
    place, as in EP-SPARQL."""
    import pytest
    from epsparql.language import QueryError
    from epsparql.rules.expressions import MAX_EXPR_DEPTH

    def chain(n: int) -> str:
        return (f"REGISTER QUERY q AS SELECT ?o FROM STREAM <{S}> [RANGE 10s STEP 5s] "
                f"WHERE {{ ?s ?p ?o FILTER(?o{' + 1' * n} = 1501) }}")
    got = run(chain(1500), [(URIRef(EX + "a"), URIRef(EX + "p"), Literal(i), 1, None, S)
                            for i in (0, 1, 2)])
    assert [dict(b)["o"] for _, b in got] == ["1"]
    with pytest.raises(QueryError, match=f"more than {MAX_EXPR_DEPTH:,} operators deep"):
        run(chain(MAX_EXPR_DEPTH + 100), [])


def test_an_aggregate_behind_a_filter_1500_operators_deep():
    """The per-pane aggregation's check that a FILTER can be evaluated at
    arrival (window_compile._arrival_safe) walks it without recursion: it
    was a RecursionError."""
    text = (f"REGISTER QUERY q AS SELECT ?s (SUM(?o) AS ?t) FROM STREAM <{S}> [RANGE 4s STEP 2s] "
            f"WHERE {{ ?s <{EX}p> ?o FILTER(?o{' + 1' * 1500} > 1501) }} GROUP BY ?s")
    got = run(text, [(URIRef(EX + "a"), URIRef(EX + "p"), Literal(t), t, None, S)
                     for t in range(6)])
    # ?o > 1 of 0..5 at 0..5 s; windows [0,4) [2,6) [4,8) (C-SPARQL's, closed at the start)
    assert [(end, dict(b)["t"]) for end, b in got] == [(4, "5"), (6, "14"), (8, "9")]


def test_aggregates_of_an_argument_1500_operators_deep():
    """Aggregates whose argument is 1,500 operators deep, in SELECT, HAVING
    and ORDER BY, per pane (SUM) and by reading the window (SUM DISTINCT):
    telling two aggregates apart hashed and compared the frozen dataclasses,
    recursively (a RecursionError).  The same aggregate written twice is
    computed once (builder.distinct_aggregates), one that differs is not."""
    from epsparql.language.dialects.builder import distinct_aggregates
    from epsparql.language.dialects import parse_dialect

    deep = "?o" + " + 1" * 1500
    rows = [(URIRef(EX + "a"), URIRef(EX + "p"), Literal(t), t, None, S) for t in range(6)]
    for agg in (f"SUM({deep})", f"SUM(DISTINCT {deep})"):
        text = (f"REGISTER QUERY q AS SELECT ?s ({agg} AS ?t) (AVG({deep}) AS ?u) "
                f"FROM STREAM <{S}> [RANGE 4s STEP 2s] WHERE {{ ?s <{EX}p> ?o }} GROUP BY ?s "
                f"HAVING ({agg} > 6006) ORDER BY DESC({agg})")
        got = run(text, rows)
        # windows [0,4) [2,6) [4,8): ?o + 1500 summed over 0..3, 2..5, 4..5
        assert [(end, dict(b)["t"], dict(b)["u"]) for end, b in got] == \
            [(4 + 2 * k, str(s + 1500 * n), f"{(s + 1500 * n) / n:g}")
             for k, (s, n) in enumerate([(6, 4), (14, 4), (9, 2)]) if s + 1500 * n > 6006]
    q = parse_dialect(f"REGISTER QUERY q AS SELECT (SUM({deep}) AS ?a) (SUM({deep}) AS ?b) "
                            f"(SUM({deep} + 1) AS ?c) FROM STREAM <{S}> [RANGE 4s STEP 2s] "
                            f"WHERE {{ ?s ?p ?o }}")
    assert len(distinct_aggregates([item[0] for item in q.projection])) == 2


def test_the_command_runs_them(tmp_path):
    (tmp_path / "q.rq").write_text(csparql_union(1000))
    (tmp_path / "s.nqt").write_text(f'<{EX}a> <{EX}p999> "1" <{S}> 1 .\n')
    r = cli("run", "q.rq", "--stream", "s.nqt", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") == 1
