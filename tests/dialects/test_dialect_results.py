"""The results contract of windowed queries: one answer channel.

A stream dialect's query is a :class:`~epsparql.Query` like an EP-SPARQL
one: its answers come through the columns sink and are taken with the
same ``results()`` (a Results, ``limit=``, ``format="arrow"``),
``pending``, ``to_dataframe()`` and ``on_result``, for every form, and
the writers read them from columns.  Each property is checked on
generated streams against the answers of the same query in an engine
without the column path's conveniences (the Answer objects themselves).
"""
from __future__ import annotations

import io
import random

import pyarrow as pa
import pytest
from rdflib import BNode, Literal, URIRef

from epsparql import Engine, Query, Results, WindowQuery
from epsparql.io import answer_writer, to_arrow

EX = "http://example.org/"
S = EX + "s"
P = f"PREFIX ex: <{EX}>\n"
k, v, tag = (URIRef(EX + n) for n in ("k", "v", "tag"))

QUERIES = {
    "select": (f"REGISTER QUERY sel AS {P}SELECT ?x ?o FROM STREAM <{S}> [RANGE 4s STEP 2s] "
               f"WHERE {{ ?x ex:v ?o }}"),
    "aggregate": (f"REGISTER QUERY agg AS {P}SELECT ?x (COUNT(*) AS ?n) (AVG(?o) AS ?a) "
                  f"FROM STREAM <{S}> [RANGE 4s STEP 1s] WHERE {{ ?x ex:v ?o }} GROUP BY ?x"),
    "optional": (f"REGISTER QUERY opt AS {P}SELECT ?x ?o ?t FROM STREAM <{S}> [RANGE 3s STEP 1s] "
                 f"WHERE {{ ?x ex:v ?o OPTIONAL {{ ?x ex:tag ?t }} }}"),
    "construct": (f"REGISTER QUERY con AS {P}CONSTRUCT {{ ?x ex:seen _:b . _:b ex:value ?o . "
                  f"?o ex:bad ?x }} FROM STREAM <{S}> [RANGE 2s STEP 2s] WHERE {{ ?x ex:v ?o }}"),
    "ask": (f"REGISTER QUERY yes AS {P}ASK FROM STREAM <{S}> [RANGE 2s STEP 1s] "
            f"WHERE {{ ?x ex:tag ?t }}"),
    "cqels": (f"{P}SELECT ?x ?o WHERE {{ STREAM <{S}> [RANGE 3s SLIDE 1s] {{ ?x ex:v ?o }} }}"),
}


def stream(seed: int, n: int = 60) -> list[tuple]:
    rnd = random.Random(seed)
    rows, t = [], 0
    for _ in range(n):
        t += rnd.choice([0, 0, 1, 1, 2])
        x = URIRef(f"{EX}x{rnd.randrange(4)}")
        if rnd.random() < 0.2:
            rows.append((x, tag, Literal(rnd.choice(["a", "b"])), t, None, S))
        else:
            rows.append((x, v, Literal(rnd.randrange(5)), t, None, S))
    return rows


def unlabelled(answers) -> list[tuple]:
    """Answers with their blank nodes' labels left out (each engine makes
    fresh ones)."""
    def t(x):
        return "_:" if isinstance(x, BNode) else x
    return [(a.query, a.start, a.end, tuple(sorted(a.bindings.items())),
             tuple(tuple(map(t, tr)) for tr in a.triples)) for a in answers]


def answers_of(text: str, rows: list[tuple], **kw) -> tuple[Engine, Query, list]:
    """The engine, its query and its answers taken after each batch of 7 rows."""
    eng = Engine(**kw)
    q = eng.register(text)
    got = []
    for i in range(0, len(rows), 7):
        eng.push_many(rows[i:i + 7])
        got.append(q.results())
    eng.flush()
    got.append(q.results())
    return eng, q, got


@pytest.mark.parametrize("name", sorted(QUERIES))
@pytest.mark.parametrize("seed", range(6))
def test_results_are_results_of_columns(name, seed):
    eng, q, got = answers_of(QUERIES[name], stream(seed))
    with eng:
        assert isinstance(q, WindowQuery) and isinstance(q, Query)
        for r in got:
            assert type(r) is Results
            assert r.query == q.name and r.variables == q.variables
            assert all(b.shape.query == q.name for b in r.batches)
            lst = list(r)
            assert r == lst and len(r) == len(lst)
            assert r.intervals() == [(a.start, a.end) for a in lst]
            for i in range(-len(lst), len(lst)):
                assert r[i] == lst[i]
            for var in q.variables:
                assert r.column(var) == [a.bindings.get(var) for a in lst]
        assert q.pending == 0 and len(q.results()) == 0
        assert sum(map(len, got)) > 0 or name == "ask"


def every_answer(text: str, rows: list[tuple]) -> list:
    """All the answers of a query over ``rows``, taken batch by batch."""
    eng, _, got = answers_of(text, rows)
    eng.close()
    return [a for r in got for a in r]


def kept(eng: Engine, text: str, rows: list[tuple]) -> Query:
    """The query over ``rows`` in ``eng``, its answers all kept (none taken)."""
    q = eng.register(text)
    eng.push_many(rows)
    eng.flush()
    return q


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_limit_takes_the_oldest_and_leaves_the_rest(name):
    rows = stream(11, 90)
    every = every_answer(QUERIES[name], rows)
    with Engine() as eng2:
        q2 = kept(eng2, QUERIES[name], rows)
        assert q2.pending == len(every)
        taken = []
        rnd = random.Random(3)
        while q2.pending:
            before = q2.pending
            n = rnd.randrange(0, 5)
            r = q2.results(limit=n)
            assert len(r) == min(n, before) and q2.pending == before - len(r)
            taken.extend(r)
        assert unlabelled(taken) == unlabelled(every)
        with pytest.raises(ValueError):
            q2.results(limit=-1)


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_arrow_and_dataframe(name):
    rows = stream(5, 80)
    every = every_answer(QUERIES[name], rows)
    with Engine() as eng2:
        q2 = kept(eng2, QUERIES[name], rows)
        table = q2.results(format="arrow")
        assert isinstance(table, pa.Table) and table.num_rows == len(every)
        assert table.column_names[:2] == ["start", "end"]
        assert set(q2.variables) <= set(table.column_names)
        # the same table as from the Answer objects themselves
        ref = to_arrow(every, variables=q2.variables)
        if "triples" in ref.column_names:          # fresh blank nodes: compare the counts
            assert [len(x) for x in table.column("triples").to_pylist()] == \
                [len(x) for x in ref.column("triples").to_pylist()]
            ref, table = ref.drop(["triples"]), table.drop(["triples"])
        mine = table.select(ref.column_names)
        assert mine.schema.equals(ref.schema) and mine.to_pylist() == ref.to_pylist()
        assert q2.pending == 0
        empty = q2.results(format="arrow")           # nothing left: the variables stay
        assert empty.num_rows == 0 and set(q2.variables) <= set(empty.column_names)
        eng2.clear_state()                           # flush() ended that stream
        eng2.push_many([(r[0], r[1], r[2], r[3] + 1000, None, S) for r in rows])
        eng2.flush()
        df = q2.to_dataframe()
        assert len(df) == q2.pending + len(df) and list(df.columns[:3]) == ["query", "start", "end"]
        assert (df["query"] == q2.name).all()


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_on_result_sees_each_answer_once_in_order(name):
    rows = stream(8, 70)
    seen = []
    with Engine() as eng:
        q = eng.register(QUERIES[name], on_result=seen.append, keep=True)
        kept = []
        for i in range(0, len(rows), 9):
            eng.push_many(rows[i:i + 9])
            kept.extend(q.results())
        eng.flush()
        kept.extend(q.results())
        assert seen == kept
    with Engine() as eng:                       # the callback alone: nothing is kept
        heard = []
        q = eng.register(QUERIES[name], on_result=heard.append)
        eng.push_many(rows)
        eng.flush()
        assert q.pending == 0 and len(q.results()) == 0
        assert unlabelled(heard) == unlabelled(seen)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "sparql-json", "nt", "table"])
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_writers_write_the_columns_as_the_answers(fmt, name):
    rows = stream(2, 70)
    eng, q, got = answers_of(QUERIES[name], rows)
    with eng:
        every = [a for r in got for a in r]

        def written(answers) -> str:
            buf = io.StringIO()
            w = answer_writer(fmt, buf, [q])
            try:
                for r in answers:
                    w.write_many(r)
                w.close()
            except ValueError as e:
                return f"error: {e}"
            return buf.getvalue()
        assert written(got) == written([every])
        one_by_one = io.StringIO()
        w = answer_writer(fmt, one_by_one, [q])
        for a in every:
            w.write(a)
        w.close()
        assert one_by_one.getvalue() == written(got)


def test_construct_leaves_out_what_rdf_does_not_allow_and_blank_nodes_are_fresh():
    rows = [(URIRef(EX + "a"), v, Literal(1), 1, None, S), (URIRef(EX + "b"), v, Literal(2), 1, None, S)]
    with Engine() as eng:
        q = eng.register(QUERIES["construct"])
        eng.push_many(rows)
        eng.flush()
        got = q.results()
        assert len(got) == 2
        blanks = set()
        for a in got:
            preds = sorted(str(t[1]) for t in a.triples)
            assert preds == [EX + "seen", EX + "value"]       # ?o ex:bad ?x: a literal subject
            [b] = {t[2] for t in a.triples if str(t[1]) == EX + "seen"}
            assert isinstance(b, BNode) and (b, URIRef(EX + "value"), a.bindings["o"]) in a.triples
            blanks.add(b)
        assert len(blanks) == 2                               # one per answer


def test_ask_answers_bind_ask():
    rows = [(URIRef(EX + "a"), tag, Literal("x"), 1, None, S),
            (URIRef(EX + "a"), v, Literal(1), 4, None, S)]
    with Engine() as eng:
        q = eng.register(QUERIES["ask"])
        eng.push_many(rows)
        eng.flush()
        got = [(a.end, a.bindings["ask"].toPython()) for a in q.results()]
        assert (2, True) in got and got[-1][1] is False     # [0, 2) holds the tag
        assert all(set(a.bindings) == {"ask"} for a in q.results())


def test_a_cap_counts_windowed_and_ep_sparql_answers_together():
    from epsparql import AnswerLimitError
    rows = stream(4, 80)
    every = every_answer(QUERIES["select"], rows)
    assert len(every) > 5
    with Engine(max_answers=5) as eng2:
        q2 = eng2.register(QUERIES["select"])
        with pytest.raises(AnswerLimitError):
            eng2.push_many(rows)
            eng2.flush()
        assert q2.results() == every[:5]


def test_errors_name_their_query():
    text = (f"REGISTER QUERY boom AS {P}SELECT ?x (<{EX}fail>(?o) AS ?y) FROM STREAM <{S}> "
            f"[RANGE 2s STEP 1s] WHERE {{ ?x ex:v ?o }}")
    with Engine() as eng:
        def fail(x):
            raise RuntimeError("no")
        eng.register_function(EX + "fail", fail)
        q = eng.register(text)
        eng.push_many(stream(1, 10))
        eng.flush()
        assert len(q.results()) > 0              # the failing expression leaves ?y unbound
        assert eng.errors and all(e.queries == ["boom"] for e in eng.errors)
