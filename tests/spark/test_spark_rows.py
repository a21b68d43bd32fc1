"""The engine stage's answer rows (epsparql/spark/rows.py, worker.py) are
exactly the answers, on generated streams, without a SparkSession.

Two runners over the same spec take the same generated stream: one makes
its rows as the pipeline does (:meth:`Runner.answers` -> :class:`AnswerBlock`
-> Arrow columns, built from each query's columns), the other drains its
queries' answers as :class:`epsparql.Answer` objects and writes each row
field from them one by one (``format_term``, ``answer_to_json``): the
reference.  Every field must be equal: query, key, start, end, bindings
(as a map), triples, json; and the streaming frame (pandas, with the side
rows of late rows and rule errors) the same rows.

The stream mixes IRIs, blank nodes, plain literals, literals with
language tags and datatypes (canonical doubles, which travel as bare
numbers, non-canonical ones, integers, decimals, strings with quotes,
escapes and non-ASCII), in and out of order (late rows); the queries
leave variables unbound (OPTIONALSEQ, BIND of an error), make CONSTRUCT
triples (with blank nodes, and template triples left out), run keyed (a
group of one key, fed every key's rows) and unkeyed (one group for a
whole partition), on the whole stream, a windowed query (its answers
still Answer objects: the second path, until windowed queries answer
with Results), and a Python function that raises makes rule errors.
"""
from __future__ import annotations

import json
import random
import re

import pyarrow as pa
import pytest
from rdflib import BNode, Literal, URIRef

from epsparql.io.results import answer_to_json
from epsparql.rdf.ntriples import format_term
from epsparql.spark.job import JobSpec
from epsparql.spark.rows import ANSWER_FIELDS, record_batch
from epsparql.spark.worker import STREAM_FIELDS, Runner, side_row, stream_frame

NS = "http://epsparql.org/ns#"
PFX = "PREFIX : <http://epsparql.org/ns#>\n"
_X = "http://www.w3.org/2001/XMLSchema#"
EX = "http://example.org/fn#"
QUERIES = [
    ("pairs", PFX + "SELECT ?k ?a ?b WHERE { ?k :p ?a } SEQ { ?k :q ?b } "
                    "FILTER (getDURATION() < \"PT6S\"^^xsd:duration)"),
    ("maybe", PFX + "SELECT ?k ?a ?b WHERE { ?k :p ?a } OPTIONALSEQ { ?k :q ?b } "
                    "FILTER (getDURATION() < \"PT4S\"^^xsd:duration)"),
    ("bind", PFX + "SELECT ?k ?a ?n WHERE { ?k :p ?a BIND (?a + 1 AS ?n) }"),
    ("make", PFX + "CONSTRUCT { ?k :seen ?a . _:b :of ?k . ?k :next ?n } "
                   "WHERE { ?k :q ?a BIND (?a * 2 AS ?n) }"),
    ("win", "REGISTER QUERY win AS " + PFX + "SELECT ?k (COUNT(*) AS ?n) "
            "FROM STREAM <urn:epsparql:stream> [RANGE 5s STEP 2s] WHERE { ?k :q ?a } GROUP BY ?k"),
    ("whole", PFX + "SELECT ?x ?y ?b WHERE { ?x :p ?a } SEQ { ?y :r ?b } "
                    "FILTER (getDURATION() < \"PT3S\"^^xsd:duration)"),
]
KEYS = [URIRef(NS + f"c{i}") for i in range(4)] + [BNode("kb1")]


def objects(rnd: random.Random):
    """Terms of every kind, numbers more often (they take the fast path)."""
    return rnd.choice([
        URIRef(NS + f"o{rnd.randrange(5)}"), URIRef("http://example.org/é/ü?x=1#frag"),
        BNode(f"b{rnd.randrange(3)}"),
        Literal("plain"), Literal('quo"te \\ back\nline\ttab é ✓'), Literal("chat", lang="fr"),
        Literal("Colour", lang="en-GB"), Literal(rnd.randrange(-50, 50)),
        Literal(str(rnd.randrange(100)), datatype=URIRef(_X + "integer")),
        Literal(f"{rnd.uniform(-100, 100):.2f}", datatype=URIRef(_X + "decimal")),
        Literal(repr(round(rnd.uniform(-1e3, 1e3), rnd.randrange(0, 4))),
                datatype=URIRef(_X + "double")),
        Literal("1.50E1", datatype=URIRef(_X + "double")),
        Literal("007", datatype=URIRef(_X + "integer")),
        Literal(repr(rnd.uniform(0, 1) * 1e-7), datatype=URIRef(_X + "double")),
        Literal("1e20", datatype=URIRef(_X + "double")),
        Literal("-0.0", datatype=URIRef(_X + "double")),
        Literal(rnd.uniform(-10, 10)),
        Literal(str(rnd.randrange(9)), datatype=URIRef(_X + "string")),
        Literal("true", datatype=URIRef(_X + "boolean")),
        Literal("x", datatype=URIRef(NS + "myType")),
    ])


def stream(seed: int, n: int = 400) -> list[tuple]:
    """N-Triples rows (s, p, o, start, end); some behind the allowed lateness."""
    rnd = random.Random(seed)
    rows, t = [], 100.0
    for _ in range(n):
        t += rnd.choice([0, 0.5, 1, 1])
        s = rnd.choice(KEYS)
        p = URIRef(NS + rnd.choice("ppqqr"))
        when = t - 5 if rnd.random() < 0.03 else t          # late: 5 s > the 1 s allowed
        start = when - rnd.choice([0, 0, 1])
        rows.append((format_term(s), format_term(p), format_term(objects(rnd)), start, when))
    return rows


# -- the reference: each field written from Answer objects ----------------------
def reference_rows(r: Runner) -> list[dict]:
    """The rows of the answers since the last call, from Answer objects (a
    keyed group keeps its own key's answers)."""
    out = []
    for q in r.engine.queries:
        var = r.keyvar.get(q.name)
        for a in q.results():
            key = r.key
            if var is not None:
                v = a.bindings.get(var)
                key = None if v is None else format_term(v)
                if r.key is not None and key != r.key:
                    continue
            out.append({"query": q.name, "key": key, "start": float(a.start),
                        "end": float(a.end),
                        "bindings": {x: format_term(v) for x, v in a.bindings.items()},
                        "triples": [f"{format_term(s)} {format_term(p)} {format_term(o)} ."
                                    for s, p, o in a.triples],
                        "json": json.dumps(answer_to_json(a), ensure_ascii=False)})
    return out


def explode(x):
    raise ValueError("no such thing")


def runners(spec: JobSpec, kind: str) -> tuple[Runner, Runner]:
    out = []
    for _ in range(2):
        r = Runner(spec, kind)
        r.engine.register_function(EX + "explode", explode)
        r.engine.register(PFX + f"PREFIX ex: <{EX}> SELECT ?k WHERE {{ ?k :r ?o }} "
                          "FILTER (ex:explode(?o))", name="raises")
        r.keyvar["raises"] = None
        out.append(r)
    return out[0], out[1]


def triples(rows) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {"s": [r[0] for r in rows], "p": [r[1] for r in rows], "o": [r[2] for r in rows],
         "start": [float(r[3]) for r in rows], "end": [float(r[4]) for r in rows],
         "stream": pa.nulls(len(rows), pa.string())})


def as_dicts(batch: pa.RecordBatch) -> list[dict]:
    rows = batch.to_pylist()
    for row in rows:
        if "bindings" in row:
            row["bindings"] = dict(row["bindings"])
    return rows


@pytest.mark.parametrize("seed", range(6))
def test_rows_equal_the_answers(seed):
    spec = JobSpec.build(QUERIES, allowed_lateness=1)
    assert set(spec.keyed) == {"pairs", "maybe", "bind", "make", "win"}
    assert spec.whole == ["whole"]
    rows = stream(seed)
    # (kind, group key): a keyed group fed every key's rows (the others'
    # answers dropped), a keyed partition run as one group, the whole stream
    groups = [("keyed", format_term(KEYS[seed % len(KEYS)])), ("keyed", None), ("whole", "")]
    seen = {"unbound": 0, "triples": 0, "bnode": 0, "late": 0, "error": 0, "win": 0}
    for kind, key in groups:
        new, old = runners(spec, kind)
        for r in (new, old):
            r.start(key)
        for i in range(0, len(rows), 70):
            batch = triples(rows[i:i + 70])
            for r in (new, old):
                r.push(batch)
                if i + 70 >= len(rows):
                    r.engine.flush()
            blocks = new.answers()
            want = reference_rows(old)
            got = as_dicts(record_batch(blocks, ANSWER_FIELDS))
            assert fresh(got) == fresh(want)
            # any subset of the fields, in any order
            assert as_dicts(record_batch(blocks, ("json", "end"))) == \
                [{"json": g["json"], "end": g["end"]} for g in got]
            # streaming: the same answers as a pandas frame, and the side rows
            late, errors = new.side()
            old.side()
            side = [side_row("late", key, "later than the allowed lateness", start=float(x[3]),
                             end=float(x[4]), triples=[f"{format_term(x[0])} "
                                                       f"{format_term(x[1])} {format_term(x[2])} ."])
                    for x in late] + [side_row("error", key, str(e), query=",".join(e.queries))
                                      for e in errors]
            frame = stream_frame(blocks, side)
            assert list(frame.columns) == list(STREAM_FIELDS)
            assert list(frame["kind"]) == ["answer"] * len(got) + [x[0] for x in side]
            answers = frame[frame["kind"] == "answer"][list(ANSWER_FIELDS)].to_dict("records")
            assert fresh([{**a, "triples": list(a["triples"])} for a in answers]) == fresh(got)
            seen["late"] += len(late)
            seen["error"] += len(errors)
            for g in got:
                names = {"pairs": 3, "maybe": 3, "bind": 3, "make": 0, "whole": 3, "win": 2}
                seen["unbound"] += len(g["bindings"]) < names[g["query"]]
                seen["triples"] += bool(g["triples"])
                seen["bnode"] += any(v.startswith("_:") for v in g["bindings"].values())
                seen["win"] += g["query"] == "win"
                json.loads(g["json"])
    # the generator reaches every case
    assert all(v > 0 for v in seen.values()), seen


_FRESH = re.compile(r"epsparql[0-9a-z]+_[0-9]+")


def fresh(rows: list) -> str:
    """The rows as text, the labels of blank nodes CONSTRUCT made (one
    counter per process, shared by the two runners' engines) numbered in
    order of appearance."""
    text = repr(rows)
    names: dict[str, str] = {}
    return _FRESH.sub(lambda m: names.setdefault(m.group(0), f"fresh{len(names)}"), text)


def test_no_answers_make_an_empty_batch_of_the_schema():
    b = record_batch([], ("query", "bindings", "json"))
    assert b.num_rows == 0 and b.schema.names == ["query", "bindings", "json"]
    frame = stream_frame([], [side_row("stats", "k", count=3)])
    assert list(frame["kind"]) == ["stats"] and int(frame["count"][0]) == 3


def test_bare_numbers_written_as_their_decoded_terms():
    """The texts of bare numbers (no rdflib term built) are those of the
    decoded terms, for every kind of number and the values that are equal
    in Python but not in RDF (0.0 and -0.0, 1 and 1.0, True and 1)."""
    from epsparql.io.results import _numbers_json_texts, term_json_text
    from epsparql.rdf.codec import decode, encode
    from epsparql.rdf.ntriples import format_encoded_numbers
    rnd = random.Random(5)
    values = [0.0, -0.0, 1, 1.0, -1, 2 ** 70, -(2 ** 63), 1e-300, 5e-324, 1e300, 1e16, 123.45,
              float("inf"), float("-inf"), float("nan"), True, False, "http://x/y", None, "$error",
              encode(Literal("1.50", datatype=URIRef(_X + "double"))),
              encode(Literal("a", lang="en"))]
    values += [rnd.uniform(-1e6, 1e6) for _ in range(200)] + [rnd.randrange(-10 ** 9, 10 ** 9)
                                                            for _ in range(50)]
    values += values[:40]                         # repeats (the per-batch memo)
    nts, jsons = format_encoded_numbers(values), _numbers_json_texts(values)
    for v, nt, js in zip(values, nts, jsons):
        if type(v) in (int, float):
            assert nt == format_term(decode(v)), v
            assert js == term_json_text(decode(v)), v
            assert json.loads(js)["value"] == str(decode(v))
        else:
            assert nt is None and js is None, v
