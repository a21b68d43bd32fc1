"""Query-aware partitioning (epsparql.algebra.partition, epsparql.spark.job).

The claim: routing each triple to the groups its key positions name, and
keeping in each group only the answers of its key, gives exactly the
answers of one engine over the whole stream.  Checked here without Spark
(the workers' code run in-process over simulated partitions) on generated
queries and streams, on CONSTRUCT feedback and on RDFS entailment that
moves values between positions; tests/test_spark.py runs the same through
a real SparkSession.
"""
from __future__ import annotations

import json
import random
from collections import Counter

import pandas as pd
import pyarrow as pa
import pytest
from rdflib import Literal, URIRef

import sparql_reference as R
from sparql_reference import QueryGen, gen_stream, render
from epsparql import Engine
from epsparql.algebra import optimise, translate
from epsparql.algebra.partition import NO_SCHEMA, Schema, key_plan, plan
from epsparql.io.results import answer_from_json
from epsparql.io.streams import format_term
from epsparql.language import parse_query
from epsparql.spark.counts import JobTotals, LocalCounts
from epsparql.spark.job import WHOLE, JobSpec, canonical_key
from epsparql.spark.route import ArrowRouter
from epsparql.spark.worker import run_partition

NS = "http://epsparql.org/ns#"
PFX = "PREFIX : <http://epsparql.org/ns#>\nPREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"


def alg(text: str):
    a = translate(parse_query(text))
    return type(a)(**{**a.__dict__, "pattern": optimise(a.pattern)})


# ---------------------------------------------------------------------------
# choosing the key
# ---------------------------------------------------------------------------
def test_stock_queries_key_on_the_company_at_the_subject():
    text = (PFX + "SELECT ?c WHERE { ?c :price ?p1 } SEQ { ?c :price ?p2 } "
            "FILTER (?p2 > ?p1 && getDURATION() < \"PT1H\"^^xsd:duration)")
    k = key_plan(alg(text), "q")
    assert k.variable == "c"
    assert [pk.position for pk in k.patterns] == [0, 0]
    assert k.positions == {0}


def test_no_common_variable_or_ask_is_not_partitioned():
    star = PFX + "SELECT * WHERE { ?r :rater ?a ; :rated ?c } SEQ { ?r2 :rater ?a ; :rated ?c }"
    k = key_plan(alg(star), "q")
    assert not k.partitioned and "no variable occurs in every stream pattern" in k.reason
    ask = PFX + "ASK { ?c :price ?p } SEQ { ?c :price ?q }"
    assert "ASK" in key_plan(alg(ask), "q").reason


def test_distinct_that_projects_the_key_away_is_not_partitioned():
    q = PFX + "SELECT DISTINCT ?p WHERE { ?c :price ?p } SEQ { ?c :price ?q }"
    assert "DISTINCT" in key_plan(alg(q), "q").reason
    q2 = PFX + "SELECT DISTINCT ?c WHERE { ?c :price ?p } SEQ { ?c :price ?q }"
    assert key_plan(alg(q2), "q").variable == "c"


def test_the_key_least_spread_over_positions_wins():
    # ?x is at the subject of one pattern and the object of the other; ?s at
    # the subject of both: ?s routes every triple to one group
    q = PFX + "SELECT * WHERE { ?s :p ?x } SEQ { ?s :q ?x }"
    assert key_plan(alg(q), "q").variable in ("s", "x")
    q = PFX + "SELECT * WHERE { ?s :p ?x } SEQ { ?x :q ?s }"
    k = key_plan(alg(q), "q")
    assert k.positions == {0, 2}


def test_rdfs_entailment_restricts_and_widens_key_positions():
    typed = PFX + "SELECT * WHERE { ?k a :C } SEQ { ?k :q ?v }"
    # rdfs:range can turn `x :p k` into `k a :C`: the key may be an object too
    k = key_plan(alg(typed), "q", Schema(range=True))
    assert k.variable == "k" and k.positions == {0, 2}
    assert key_plan(alg(typed), "q", NO_SCHEMA).positions == {0}
    # sub-classes rewrite the class: a class variable is no key
    by_class = PFX + "SELECT * WHERE { ?x a ?k } SEQ { ?y a ?k }"
    assert key_plan(alg(by_class), "q").variable == "k"
    kk = key_plan(alg(by_class), "q", Schema(sub_class=True))
    assert not kk.partitioned and "RDFS entailment" in kk.reason
    # sub-properties rewrite the predicate
    by_prop = PFX + "SELECT * WHERE { ?x ?k ?y } SEQ { ?z ?k ?w }"
    assert not key_plan(alg(by_prop), "q", Schema(sub_property=True)).partitioned


def test_construct_feedback_keeps_the_key_or_runs_on_the_whole_stream():
    producer = PFX + "CONSTRUCT { ?c :alarm ?p } WHERE { ?c :price ?p FILTER (?p > 10) }"
    consumer = PFX + "SELECT * WHERE { ?c :alarm ?a } SEQ { ?c :alarm ?b }"
    p = plan([("prod", alg(producer)), ("cons", alg(consumer))])
    assert [k.variable for k in p.queries] == ["c", "c"]
    # the derived triple carries the key at the object: the consumer reads
    # its key at the subject, so the derived triple may belong to another group
    flipped = PFX + "CONSTRUCT { ?p :alarm ?c } WHERE { ?c :price ?p FILTER (?p > 10) }"
    p = plan([("prod", alg(flipped)), ("cons", alg(consumer))])
    assert not p.queries[0].partitioned and "key position" in p.queries[0].reason
    assert not p.queries[1].partitioned
    # an unpartitioned producer takes its consumers along
    star = PFX + ("CONSTRUCT { ?c :alarm ?a } WHERE { ?r :rater ?a ; :rated ?c } "
                  "SEQ { ?r2 :rater ?a ; :rated ?c }")
    p = plan([("prod", alg(star)), ("cons", alg(consumer))])
    assert not p.queries[1].partitioned and "prod" in p.queries[1].reason


def triples_batch(rows) -> pa.RecordBatch:
    """Rows (s, p, o, start, end) as the read stage gives them."""
    return pa.RecordBatch.from_pydict({
        "s": [format_term(r[0]) for r in rows], "p": [format_term(r[1]) for r in rows],
        "o": [format_term(r[2]) for r in rows], "start": [float(r[3]) for r in rows],
        "end": [float(r[3] if r[4] is None else r[4]) for r in rows],
        "stream": pa.nulls(len(rows), pa.string()), "seq": list(range(len(rows)))},
        schema=pa.schema([("s", pa.string()), ("p", pa.string()), ("o", pa.string()),
                          ("start", pa.float64()), ("end", pa.float64()),
                          ("stream", pa.string()), ("seq", pa.int64())]))


def groups(spec: JobSpec, s: str, p: str, o: str, per_key: bool = True) -> list[str]:
    from epsparql.rdf.ntriples import parse_term
    routed = ArrowRouter(spec, per_key=per_key).route(
        triples_batch([(parse_term(s), parse_term(p), parse_term(o), 1, None)]))
    return [g for b in routed for g in b.column("grp").to_pylist()]


def test_router_uses_canonical_terms():
    spec = JobSpec.build([("q", PFX + "SELECT * WHERE { ?k :p ?v } SEQ { ?k :q ?w }")])
    assert groups(spec, "<http://ex/a>", "<http://ex/p>", '"1"') == ["<http://ex/a>"]
    # language tags are case-insensitive: both spellings meet in one group
    assert canonical_key('"x"@EN-gb') == canonical_key('"x"@en-GB')
    spec2 = JobSpec.build([("q", PFX + "SELECT * WHERE { ?r :rater ?a ; :rated ?c } "
                                  "SEQ { ?r2 :rater ?a ; :rated ?c }")])
    assert groups(spec2, "<http://ex/a>", "<http://ex/p>", '"1"') == [WHOLE]


# ---------------------------------------------------------------------------
# the claim, in-process: simulated partitions against one engine
# ---------------------------------------------------------------------------
def replay_in_process(spec: JobSpec, rows, partitions: int) -> list:
    """What Spark does in `epsparql spark run`, without Spark: route, place
    groups in partitions by their hash, sort, run the engine stage's code
    per partition."""
    routed = pa.Table.from_batches(ArrowRouter(spec).route(triples_batch(rows))) \
        if rows else None
    out = []
    order = ["grp", "end", "start", "seq"] if spec.per_key else ["end", "start", "seq"]
    for n in range(partitions):
        if routed is None:
            break
        mine = routed.filter(pa.array([p % partitions == n for p in routed["part"].to_pylist()]))
        df = mine.to_pandas().sort_values(order, kind="stable")
        # Arrow record batches in and out, as mapInArrow hands them over
        table = pa.Table.from_pandas(df, schema=routed.schema, preserve_index=False)
        chunks = table.to_batches(max_chunksize=7) or [pa.RecordBatch.from_pandas(df)]
        counts = LocalCounts()
        for batch in run_partition(spec, ("json",), iter(chunks), counts):
            out.extend(answer_from_json(json.loads(j)) for j in batch.column("json").to_pylist())
        totals = JobTotals.of(counts.value)
        assert not totals.errors, totals.error_messages
    return out


def single_engine(queries, rows, background: str = "") -> list:
    e = Engine()
    if background:
        e.load_background(background)
    qs = [e.register(t, name=n) for n, t in queries]
    e.push_many(rows)
    e.flush()
    out = [a for q in qs for a in q.results()]
    assert not e.errors
    e.close()
    return out


def multiset(answers) -> Counter:
    return Counter((a.query, frozenset(a.bindings.items()), a.start, a.end,
                    frozenset(a.triples)) for a in answers)


def check(queries, rows, partitions=(1, 2, 3), background: str = "") -> JobSpec:
    from rdflib import Graph
    bg = [Graph().parse(data=background, format="turtle")] if background else []
    spec = JobSpec.build(queries, background=bg)
    expected = multiset(single_engine(queries, rows, background))
    for n in partitions:
        got = multiset(replay_in_process(spec, rows, n))
        assert got == expected, (
            f"{n} partitions, plan:\n" + "\n".join(spec.plan.describe())
            + f"\nqueries: {queries}\nmissing: {expected - got}\nextra: {got - expected}")
    return spec


@pytest.mark.parametrize("batch", range(8))
def test_generated_queries_partitioned_equal_one_engine(batch):
    partitioned = 0
    for seed in range(5000 + batch * 25, 5000 + (batch + 1) * 25):
        rng = random.Random(seed)
        q = QueryGen(rng, filtered_optional_operand=False).select()
        rows = gen_stream(rng, n=rng.randint(8, 24), subjects=R.SUBJECTS)
        spec = check([("q", render(q))], rows, partitions=(2, 3))
        partitioned += bool(spec.keyed)
    assert partitioned >= 5          # the generator must exercise real keys


def test_two_keys_from_different_positions_and_a_whole_stream_query():
    rng = random.Random(7)
    queries = [
        ("by_s", PFX + "SELECT * WHERE { ?s :p ?x } SEQ { ?s :q ?y }"),
        ("by_o", PFX + "SELECT * WHERE { ?a :p ?o } EQUALSOPTIONAL { ?b :r ?o }"),
        ("all", PFX + "SELECT * WHERE { ?a :p ?x } SEQ { ?b :q ?y } FILTER (?x < ?y)"),
    ]
    for _ in range(15):
        rows = gen_stream(rng, n=rng.randint(10, 30), subjects=R.SUBJECTS)
        rows = [(s, p, URIRef(NS + "abc"[int(o) % 3]) if p == R.PREDICATES[2] else o, t1, t2)
                for s, p, o, t1, t2 in rows]
        spec = check(queries, rows)
    assert spec.per_key and spec.whole == ["all"]


def test_construct_rules_feeding_queries_partitioned():
    queries = [
        ("rule", PFX + "CONSTRUCT { ?s :alarm ?x } WHERE { ?s :p ?x FILTER (?x > 1) }"),
        ("pair", PFX + "SELECT * WHERE { ?s :alarm ?x } SEQ { ?s :alarm ?y } "
                       "FILTER (getDURATION() < \"PT5S\"^^xsd:duration)"),
    ]
    rng = random.Random(11)
    for _ in range(15):
        spec = check(queries, gen_stream(rng, n=rng.randint(10, 30), subjects=R.SUBJECTS))
    assert spec.keyed == ["rule", "pair"]


def test_range_entailment_routes_objects_too():
    background = ("@prefix : <http://epsparql.org/ns#> . "
                  "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . "
                  ":p rdfs:range :C . :q rdfs:domain :D .")
    queries = [("typed", PFX + "SELECT * WHERE { ?k a :C } SEQ { ?k :q ?v }")]
    a, b, c = R.SUBJECTS
    x = URIRef(NS + "x")
    rows = [(x, URIRef(NS + "p"), a, 1, 1),          # a a :C, by range
            (a, URIRef(NS + "q"), Literal(1), 2, 2),
            (b, URIRef(NS + "p"), c, 3, 3),          # c a :C
            (c, URIRef(NS + "q"), Literal(2), 4, 4),
            (b, URIRef(NS + "q"), Literal(3), 5, 5)]
    spec = check(queries, rows, background=background)
    assert spec.per_key and spec.positions == (0, 2)
    assert len(single_engine(queries, rows, background)) == 2
