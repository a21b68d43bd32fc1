"""The lazy and columnar views of answers against eager Answer objects.

``Query.results()`` keeps a query's answers as the core's columns of term
ids and decodes a term when it is read; Arrow, pandas, the writers and
Spark read the columns.  Here every view is checked against a plain eager
reference built, independently, from the core's own Detection objects
(``CoreEngine.on_detected``) with the semantics the engine had before the
columns (set semantics on (head, interval), SELECT projection, DISTINCT,
ASK's first answer, CONSTRUCT's complete template triples): the same
answers in the same order, every term of the same rdflib type with the
same lexical form, datatype and language tag, blank nodes by label,
unbound variables absent, intervals with their int/float type.

Inputs: the generated query corpus of the differential tests (seeded,
every operator, OPTIONAL parts left unbound) over generated streams whose
objects are drawn from terms of every kind (language tags, datatypes,
ill-typed and unknown-datatype literals, blank nodes, IRIs), and a
hand-written corpus (SELECT expressions, DISTINCT, ASK, CONSTRUCT with
template blank nodes).  Each case pushes its stream in random chunks and
drains each query at random moments and in random amounts (``limit``),
reading the answers only at the end, after later pushes and, with a tiny
term dictionary, after the dictionary started afresh several times.
"""
from __future__ import annotations

import io
import math
import re
import random
from datetime import timezone

import pandas as pd
import pyarrow as pa
import pytest
from rdflib import BNode, Literal, URIRef

import sparql_reference as R
from epsparql import Answer, Engine
from epsparql.answers import Results
from epsparql.core.runtime import runtime
from epsparql.core.terms import Compound
from epsparql.io import answer_writer, to_arrow, to_dataframe
from epsparql.rdf.codec import decode
from epsparql.rdf.ntriples import parse_term

EX = "http://example.org/"
XS = "http://www.w3.org/2001/XMLSchema#"


def xsd(name: str) -> URIRef:
    return URIRef(XS + name)


OTHER_DT = URIRef(EX + "custom")

#: Objects of every kind the views must keep apart.
TERMS = [
    Literal(1), Literal(2), Literal(-7), Literal("0042", datatype=xsd("integer")),
    Literal("3.50", datatype=xsd("decimal")), Literal(2.5), Literal("1e3", datatype=xsd("double")),
    Literal("7", datatype=xsd("nonNegativeInteger")), Literal(True), Literal("0", datatype=xsd("boolean")),
    Literal("chat", lang="fr"), Literal("chat", lang="en-GB"), Literal("chat"),
    Literal("chat", datatype=xsd("string")), Literal("", lang="de"), Literal('say "hi"\n'),
    Literal("2024-05-01T10:00:00Z", datatype=xsd("dateTime")),
    Literal("2024-05-01T10:00:00.25", datatype=xsd("dateTime")),
    Literal("2024-05-01", datatype=xsd("date")), Literal("P1DT2H", datatype=xsd("duration")),
    Literal("abc", datatype=xsd("integer")), Literal("INF", datatype=xsd("double")),
    Literal("x y", datatype=OTHER_DT), BNode("b1"), BNode("b2"),
    URIRef(EX + "o1"), URIRef(EX + "é/ü"),
]


@pytest.fixture
def tiny_dictionary():
    """A term dictionary of 5 terms and buffers of 3 detections: the
    dictionary starts afresh again and again, within instants too."""
    runtime().query_once("bridge_columns:columns_set_limits(3, 5)")
    yield
    runtime().query_once("bridge_columns:columns_set_limits(4096, 1048576)")


# ---------------------------------------------------------------------------
# the eager reference
# ---------------------------------------------------------------------------
def eager_answers(q, detections) -> list[Answer]:
    """The answers of query ``q`` from the core's detections, built
    eagerly with the engine's semantics (one Answer, one dict each)."""
    out: list[Answer] = []
    seen_occ: set = set()
    seen_proj: set = set()
    asked = False
    for d in detections:
        name = d.event.name if isinstance(d.event, Compound) else d.event
        if name != q.compiled.head:
            continue
        occ = (d.event, d.start, d.end)
        if occ in seen_occ:                     # set semantics: a repeat
            continue
        seen_occ.add(occ)
        values = d.event.args if isinstance(d.event, Compound) else ()
        row = {}
        for var, v in zip(q.compiled.variables, values):
            node = decode(v)
            if node is not None:
                row[var] = node
        if q.form == "ASK":
            if asked:
                continue
            asked = True
            out.append(Answer({}, d.start, d.end, query=q.name))
        elif q.form == "CONSTRUCT":
            triples = []
            for t in q.template:
                pos = []
                for x in (t.s, t.p, t.o):
                    if type(x).__name__ == "Var":
                        pos.append(row.get(x.name))
                    elif isinstance(x, BNode):
                        pos.append(row.get("_:tpl:" + str(x)))
                    else:
                        pos.append(x)
                # SPARQL 1.1, 16.2: an unbound position, a literal subject or a
                # predicate that is not an IRI leaves the triple out
                if all(p is not None for p in pos) and isinstance(pos[0], (URIRef, BNode)) \
                        and isinstance(pos[1], URIRef):
                    triples.append(tuple(pos))
            if triples:
                out.append(Answer({k: v for k, v in row.items() if not k.startswith("_:")},
                                  d.start, d.end, tuple(triples), q.name))
        else:
            keep = q.projection if q.projection is not None else \
                [k for k in row if not k.startswith("_:")]
            bindings = {k: row[k] for k in keep if k in row}
            if q.distinct:
                key = tuple(sorted(bindings.items()))
                if key in seen_proj:
                    continue
                seen_proj.add(key)
            out.append(Answer(bindings, d.start, d.end, query=q.name))
    return out


# ---------------------------------------------------------------------------
# exact comparison
# ---------------------------------------------------------------------------
def same_term(a, b) -> bool:
    if type(a) is not type(b) or str(a) != str(b):
        return False
    if isinstance(a, Literal):
        return a.datatype == b.datatype and a.language == b.language
    return True


def same_time(a, b) -> bool:
    return type(a) is type(b) and a == b


def check_answer(lazy, ref) -> None:
    assert type(lazy) is Answer
    assert lazy.query == ref.query
    assert same_time(lazy.start, ref.start) and same_time(lazy.end, ref.end)
    assert list(lazy.bindings) == list(ref.bindings)          # same variables, same order
    assert len(lazy.bindings) == len(ref.bindings)
    for k, v in ref.bindings.items():
        assert k in lazy.bindings and same_term(lazy.bindings[k], v), (k, lazy.bindings[k], v)
        assert same_term(lazy[k], v)
    assert lazy.bindings == ref.bindings and ref.bindings == lazy.bindings
    assert len(lazy.triples) == len(ref.triples)
    for t, u in zip(lazy.triples, ref.triples):
        assert all(same_term(x, y) for x, y in zip(t, u))
    assert lazy.triples == ref.triples
    assert lazy == ref and ref == lazy


# ---------------------------------------------------------------------------
# running a case
# ---------------------------------------------------------------------------
def run_case(texts, stream, rng) -> tuple[list, list[list[Results]], list[list[Answer]]]:
    """Register, push in random chunks, drain at random moments and in
    random amounts; returns (queries, per query its Results objects in
    drain order, per query its eager reference answers)."""
    e = Engine()
    detections = []
    e.core.on_detected = detections.append
    try:
        qs = [e.register(t) for t in texts]
        taken: list[list[Results]] = [[] for _ in qs]
        i = 0
        while i < len(stream):
            k = rng.choice((1, 1, 2, 3, 7))
            e.push_many(stream[i:i + k])
            i += k
            for q, got in zip(qs, taken):
                r = rng.random()
                if r < 0.3:
                    got.append(q.results())
                elif r < 0.5:
                    limit = rng.choice((0, 1, 2, 5))
                    before = q.pending
                    got.append(q.results(limit=limit))
                    assert len(got[-1]) == min(limit, before)
                    assert q.pending == before - len(got[-1])
        e.flush()
        for q, got in zip(qs, taken):
            got.append(q.results())
            assert q.pending == 0
        refs = [eager_answers(q, detections) for q in qs]
        return qs, taken, refs
    finally:
        e.close()


def check_views(qs, taken, refs, rng) -> int:
    """Every view of every query's answers against the reference; returns
    the number of answers checked."""
    n = 0
    for q, parts, ref in zip(qs, taken, refs):
        assert sum(map(len, parts)) == len(ref)
        whole = Results([b for p in parts for b in p.batches], q.name, q.variables)
        assert len(whole) == len(ref)
        # intervals without decoding, in order
        assert [(s, t) for s, t in whole.intervals()] == [(a.start, a.end) for a in ref]
        assert all(same_time(s, a.start) for s, a in zip(whole.starts(), ref))
        # the answers, read in a random order, each part on its own
        pos = 0
        for p in parts:
            order = list(range(len(p)))
            rng.shuffle(order)
            for j in order:
                check_answer(p[j], ref[pos + j])
                check_answer(p[j - len(p)], ref[pos + j])           # negative index
            pos += len(p)
        for lazy, r in zip(whole, ref):                             # iteration
            check_answer(lazy, r)
        assert whole == ref and whole[1:3] == ref[1:3]
        for v in q.variables:
            col = whole.column(v)
            assert len(col) == len(ref)
            assert all((c is None) == (v not in a.bindings) and (c is None or same_term(c, a[v]))
                       for c, a in zip(col, ref))
        check_arrow(q, whole, ref)
        check_dataframe(q, whole, ref)
        check_writers(q, whole, ref)
        n += len(ref)
    return n


# ---------------------------------------------------------------------------
# Arrow and pandas
# ---------------------------------------------------------------------------
INTEGER_TYPES = {xsd(t) for t in (
    "integer", "nonPositiveInteger", "negativeInteger", "nonNegativeInteger", "positiveInteger",
    "long", "int", "short", "byte", "unsignedLong", "unsignedInt", "unsignedShort",
    "unsignedByte")}
REAL_TYPES = {xsd("decimal"), xsd("double"), xsd("float")}


def python_kind(node) -> tuple[str, object]:
    """What epsparql.io.arrow documents for a term, worked out with rdflib."""
    if isinstance(node, URIRef):
        return "str", str(node)
    if isinstance(node, BNode):
        return "str", "_:" + str(node)
    dt = node.datatype
    if node.language is not None or dt is None or dt == xsd("string"):
        return "str", str(node)
    if node.ill_typed:
        return "str", str(node)
    v = node.toPython()
    if dt in INTEGER_TYPES:
        return ("int", v) if -2 ** 63 <= v < 2 ** 63 else ("other", None)
    if dt in REAL_TYPES:
        lex = str(node)
        if not (re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", lex)
                or (dt != xsd("decimal") and lex in ("INF", "+INF", "-INF", "NaN"))):
            return "str", lex                   # not XSD's lexical space (rdflib is lenient)
        return "float", float(v)
    if dt == xsd("boolean"):
        return "bool", v
    if dt in (xsd("dateTime"), xsd("dateTimeStamp")):
        return "datetime", (v if v.tzinfo else v.replace(tzinfo=timezone.utc))
    if str(dt).startswith(XS) and dt not in (xsd("anyURI"), xsd("normalizedString"), xsd("token")):
        return "other", None
    return "str", str(node)


def expected_type(kinds: set[str]) -> str:
    if not kinds:
        return "null"
    if kinds == {"int"}:
        return "int"
    if kinds <= {"int", "float"}:
        return "float"
    if len(kinds) == 1 and kinds <= {"bool", "datetime", "str"}:
        return next(iter(kinds))
    return "nt"


def check_arrow(q, whole, ref) -> None:
    names = [f.name for f in to_arrow(whole).schema]
    assert names[:2] == ["start", "end"]
    nt = to_arrow(whole, values="nt")
    py = to_arrow(whole)
    assert nt.num_rows == py.num_rows == len(ref)
    assert nt.schema.metadata[b"epsparql.query"] == q.name.encode()
    starts = py.column("start").to_pylist()
    assert starts == [a.start for a in ref]
    if all(float(a.start).is_integer() and float(a.end).is_integer() for a in ref):
        assert py.schema.field("start").type == pa.int64()
    for v in q.variables:
        col = [f for f in nt.schema if f.metadata and f.metadata[b"epsparql.variable"] == v.encode()]
        assert len(col) == 1
        name = col[0].name
        texts = nt.column(name).to_pylist()
        for t, a in zip(texts, ref):
            assert (t is None) == (v not in a.bindings)
            if t is not None:
                assert same_term(parse_term(t), a[v])
        kinds = {python_kind(a[v])[0] for a in ref if v in a.bindings}
        want = expected_type(kinds)
        field = py.schema.field(name)
        assert field.metadata[b"epsparql.values"] == (b"nt" if want == "nt" else b"python")
        got = py.column(name).to_pylist()
        for x, a in zip(got, ref):
            if v not in a.bindings:
                assert x is None
            elif want == "nt":
                assert same_term(parse_term(x), a[v])
            else:
                kind, value = python_kind(a[v])
                if want == "float":
                    assert x == float(value) or (math.isnan(x) and math.isnan(value))
                elif want == "datetime":
                    assert abs((x - value).total_seconds()) < 1e-6
                else:
                    assert x == value and type(x) is type(value)
        if want in ("int", "float", "bool"):
            assert field.type == {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}[want]
    if q.form == "CONSTRUCT":
        trip = py.column("triples").to_pylist()
        for row, a in zip(trip, ref):
            got = [tuple(parse_term(x[k]) for k in "spo") for x in row]
            assert len(got) == len(a.triples)
            assert all(same_term(x, y) for t, u in zip(got, a.triples) for x, y in zip(t, u))


def check_dataframe(q, whole, ref) -> None:
    df = to_dataframe(whole)
    assert list(df["query"]) == [q.name] * len(ref)
    assert list(df["start"]) == [a.start for a in ref]
    rd = to_dataframe(whole, values="rdflib")
    nt = to_dataframe(whole, values="nt")
    for v, col in zip(q.variables, df.columns[3:]):
        for x, y, z, a in zip(df[col], rd[col], nt[col], ref):
            if v not in a.bindings:
                assert y is None and z is None
                assert x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NaT \
                    or x is pd.NA
                continue
            assert same_term(y, a[v]) and same_term(parse_term(z), a[v])
            kind, value = python_kind(a[v])
            if kind in ("int", "float", "bool"):
                assert x == value or (math.isnan(x) and math.isnan(value))
            elif kind == "str":
                assert x == value
            elif kind == "datetime":
                assert pd.Timestamp(x) == pd.Timestamp(value)
    # the same frame from the eager answers (the generic path)
    eager = to_dataframe(ref, variables=q.variables)
    assert list(eager.columns) == list(df.columns)
    for c in df.columns:
        if c == "triples":
            assert list(eager[c]) == list(df[c])
            continue
        assert eager[c].dtype == df[c].dtype, c
        pd.testing.assert_series_equal(eager[c], df[c], check_names=False)


# ---------------------------------------------------------------------------
# writers
# ---------------------------------------------------------------------------
def written(fmt, q, answers) -> str:
    buf = io.StringIO()
    w = answer_writer(fmt, buf, [q])
    try:
        w.write_many(answers)
        w.close()
    except ValueError as e:                 # e.g. a CSV column missing: the same error
        return f"error: {e}; written: {buf.getvalue()}"
    return buf.getvalue()


def check_writers(q, whole, ref) -> None:
    for fmt in ("jsonl", "csv", "sparql-json", "nt", "table"):
        assert written(fmt, q, whole) == written(fmt, q, ref), fmt


# ---------------------------------------------------------------------------
# the corpus
# ---------------------------------------------------------------------------
def varied_stream(rng, stream):
    """The generated stream with its objects mapped to terms of every kind."""
    kinds = {}
    out = []
    for s, p, o, t1, t2 in stream:
        if o not in kinds:
            kinds[o] = rng.choice(TERMS)
        out.append((s, p, kinds[o] if rng.random() < 0.7 else rng.choice(TERMS), t1, t2))
    return out


def generated_cases(seed: int, count: int):
    rng = random.Random(seed)
    gen = R.QueryGen(rng)
    for _ in range(count):
        q = gen.query() if hasattr(gen, "query") else gen.select()
        stream = R.gen_stream(rng)
        if rng.random() < 0.6:
            stream = varied_stream(rng, stream)
        yield [R.render(q)], stream


HAND = [
    """PREFIX : <http://epsparql.org/ns#>
       SELECT ?s ?o (STR(?o) AS ?text) (LANG(?o) AS ?lang) (DATATYPE(?o) AS ?dt)
       WHERE { ?s :p ?o }""",
    """PREFIX : <http://epsparql.org/ns#>
       SELECT DISTINCT ?o WHERE { ?s :p ?o } SEQ { ?s :q ?x }""",
    """PREFIX : <http://epsparql.org/ns#>
       SELECT ?s ?o ?x WHERE { ?s :p ?o OPTIONAL { ?s :q ?x } }""",
    """PREFIX : <http://epsparql.org/ns#>
       SELECT ?s ?o ?x WHERE { ?s :p ?o } OPTIONALSEQ { ?s :q ?x }""",
    """PREFIX : <http://epsparql.org/ns#>
       ASK { ?s :p ?o } SEQ { ?s :p ?o2 }""",
    """PREFIX : <http://epsparql.org/ns#>
       CONSTRUCT { ?s :copy ?o . _:n :of ?s . _:n :value ?o } WHERE { ?s :p ?o }""",
    """PREFIX : <http://epsparql.org/ns#>
       CONSTRUCT { ?s :pair ?x . ?x :back ?s } WHERE { ?s :p ?o OPTIONAL { ?s :q ?x } }""",
    """PREFIX : <http://epsparql.org/ns#> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
       SELECT ?s (getDURATION() AS ?d) (getSTARTTIME() AS ?t) (?o * 2 AS ?twice)
       WHERE { ?s :p ?o } SEQ { ?s :q ?o2 } FILTER (getDURATION() <= "PT5S"^^xsd:duration)""",
    """PREFIX : <http://epsparql.org/ns#>
       SELECT * WHERE { ?s ?p ?o }""",
]


def hand_stream(rng, n=40):
    subjects = [URIRef(R.NS + x) for x in "abc"] + [BNode("s1")]
    preds = [URIRef(R.NS + x) for x in ("p", "q")]
    rows, t = [], 0
    for _ in range(n):
        t += rng.choice((0, 0, 1, 1, 2))
        start = max(0, t - rng.choice((0, 0, 1, 3)))
        row = (rng.choice(subjects), rng.choice(preds), rng.choice(TERMS),
               start if rng.random() < 0.8 else float(start), t)
        rows.append(row)
        if rng.random() < 0.1:
            rows.append(row)                       # an identical occurrence again
    return rows


# ---------------------------------------------------------------------------
# the tests
# ---------------------------------------------------------------------------
def test_generated_queries_all_views():
    rng = random.Random(14)
    total = 0
    for texts, stream in generated_cases(1400, 400):
        qs, taken, refs = run_case(texts, stream, rng)
        total += check_views(qs, taken, refs, rng)
    assert total > 500            # the corpus exercised the views


def test_generated_queries_dictionary_started_afresh(tiny_dictionary):
    rng = random.Random(15)
    total = 0
    for texts, stream in generated_cases(1500, 200):
        qs, taken, refs = run_case(texts, stream, rng)
        total += check_views(qs, taken, refs, rng)
    assert total > 100


@pytest.mark.parametrize("tiny", [False, True])
def test_hand_corpus_all_views(request, tiny):
    if tiny:
        request.getfixturevalue("tiny_dictionary")
    rng = random.Random(16 + tiny)
    kinds_seen = set()
    for seed in range(6):
        stream = hand_stream(random.Random(seed))
        qs, taken, refs = run_case(HAND, stream, rng)
        check_views(qs, taken, refs, rng)
        for ref in refs:
            for a in ref:
                for v in a.bindings.values():
                    kinds_seen.add(type(v).__name__ if not isinstance(v, Literal)
                                   else (v.language and "lang") or str(v.datatype))
    # the corpus reached every kind of term
    assert {"URIRef", "BNode", "lang", str(xsd("integer")), str(xsd("dateTime")),
            str(OTHER_DT)} <= kinds_seen


def test_reading_costs_no_decoding(monkeypatch):
    """len(), intervals and a.start of every answer decode no term."""
    import epsparql.answers as A
    e = Engine()
    q = e.register("SELECT ?s ?o WHERE { ?s <http://x/p> ?o }")
    e.push_many([(URIRef(f"http://x/s{i}"), URIRef("http://x/p"), Literal(i), i) for i in range(50)])
    e.flush()
    res = q.results()
    calls = []
    real = A.decode
    monkeypatch.setattr(A, "decode", lambda t: calls.append(t) or real(t))
    assert len(res) == 50
    assert [a.start for a in res] == list(range(50))
    assert res.intervals()[7] == (7, 7)
    assert all("s" in a.bindings and len(a.bindings) == 2 for a in res)
    assert calls == []
    assert res[3]["o"] == Literal(3) and res[3]["o"] == Literal(3)
    assert len(calls) == 1                  # one term, decoded once, when it is read
    e.close()


def test_results_format_and_limit_errors():
    e = Engine()
    q = e.register("SELECT ?s WHERE { ?s <http://x/p> ?o }")
    with pytest.raises(ValueError, match="format"):
        q.results(format="csv")
    with pytest.raises(ValueError, match="limit"):
        q.results(limit=-1)
    with pytest.raises(TypeError, match="format='arrow'"):
        q.results(values="nt")
    e.push(URIRef("http://x/a"), URIRef("http://x/p"), Literal(1), 3)
    t = q.results(format="arrow", values="nt")
    assert isinstance(t, pa.Table) and t.column("s").to_pylist() == ["<http://x/a>"]
    assert q.results(format="arrow").num_rows == 0
    e.close()


def test_pickled_answers_are_plain():
    import pickle
    e = Engine()
    q = e.register("CONSTRUCT { ?s <http://x/c> ?o } WHERE { ?s <http://x/p> ?o }")
    e.push(URIRef("http://x/a"), URIRef("http://x/p"), Literal("v", lang="en"), 3)
    (a,) = q.results()
    b = pickle.loads(pickle.dumps(a))
    assert type(b.bindings) is dict and type(b.triples) is tuple and b == a
    e.close()
