"""The worker's output rows (epsparql/spark/worker.py) are exactly those of
the previous row builder (a dict per answer, a pandas frame converted to
Arrow by Spark), on generated answers, without a SparkSession.

Two runners over the same spec take the same generated stream: one builds
its rows as the pipeline does now (:meth:`Runner.results`, then
:meth:`Rows.arrow` for the batch replay's ``mapInArrow`` and
:func:`frame` for streaming's ``applyInPandasWithState``), the other with
the former ``Runner.results`` (kept below, verbatim but for its imports)
and a pandas frame that Spark's own pandas-to-Arrow conversion (what
``mapInPandas`` ran) turns into Arrow.  Both Arrow batches must be equal,
schema and every value: kind, query, key, start, end, bindings (in
order), triples, json, message, count.

The stream mixes IRIs, blank nodes, plain literals, literals with
language tags and datatypes (canonical doubles, which travel as bare
numbers, non-canonical ones, integers, decimals, strings with quotes,
escapes and non-ASCII), in and out of order (late rows); the queries
leave variables unbound (OPTIONALSEQ, BIND of an error), make CONSTRUCT
triples (with blank nodes, and template triples left out), run keyed (a
group of one key, fed every key's rows) and unkeyed (one group for a
whole partition), on the whole stream, and a Python function that raises
makes rule errors.
"""
from __future__ import annotations

import json
import random
import re

import pytest
from rdflib import BNode, Literal, URIRef

from epsparql.answers import Results
from epsparql.rdf.ntriples import format_term
from epsparql.spark.job import JobSpec
from epsparql.spark.worker import OUTPUT_COLUMNS, Runner, Rows, arrow_schema, frame

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


# -- the former row builder (Runner.results before Arrow rows), verbatim ----
_NONE: list[str] = []


def old_results(self: Runner) -> list[tuple]:
    from epsparql.io.results import batch_json_lines, batch_nt_columns
    out: list[tuple] = []
    nt = lambda table, ids: table.mapped("nt", format_term, ids)  # noqa: E731
    for q in self.engine.queries:
        var = self.keyvar.get(q.name)
        got = q.results()
        assert isinstance(got, Results)
        for b in got.batches:
            cols = batch_nt_columns(b)
            n = len(b)
            keys: list[str | None] = [self.key] * n
            if var is not None:
                keys = dict(cols).get(var) or [None] * n
            keep = list(range(n)) if self.key is None or var is None else \
                [j for j in range(n) if keys[j] == self.key]
            if not keep:
                continue
            lines = batch_json_lines(b, end="")
            starts, ends = b.starts(), b.ends()
            if b.shape.form == "CONSTRUCT":
                ts = b.template_rows(nt, format_term)
                triples = [[f"{s} {p} {o} ." for s, p, o in ts[j]] for j in keep]
            else:
                triples = [_NONE] * len(keep)
            named = [(name, col) for name, col in cols]
            out.extend(zip(
                ["answer"] * len(keep), [q.name] * len(keep), [keys[j] for j in keep],
                [float(starts[j]) for j in keep], [float(ends[j]) for j in keep],
                [{name: col[j] for name, col in named if col[j] is not None} for j in keep],
                triples, lines if len(keep) == n else [lines[j] for j in keep],
                [None] * len(keep), [None] * len(keep)))
    for s, p, o, t1, t2 in self.late:
        out.append(("late", None, self.key, float(t1), float(t2), None,
                    [f"{format_term(s)} {format_term(p)} {format_term(o)} ."],
                    None, "later than the allowed lateness", None))
    self.late.clear()
    errors = self.engine.errors
    for e in errors[self._errors_seen:]:
        out.append(("error", ",".join(e.queries), self.key, None, None, None, None, None,
                    str(e), None))
    self._errors_seen = len(errors)
    return out


def spark_arrow(pdf):
    """What Spark's mapInPandas made of a frame of output rows."""
    from pyspark.sql.conversion import PandasToArrowConversion
    from pyspark.sql.types import (ArrayType, DoubleType, LongType, MapType, StringType,
                                   StructField, StructType)
    s = StringType()
    schema = StructType([StructField("_0", StructType([
        StructField("kind", s), StructField("query", s), StructField("key", s),
        StructField("start", DoubleType()), StructField("end", DoubleType()),
        StructField("bindings", MapType(s, s)), StructField("triples", ArrayType(s)),
        StructField("json", s), StructField("message", s), StructField("count", LongType())]))])
    rb = PandasToArrowConversion.convert([pdf], schema, timezone="UTC", safecheck=True,
                                         arrow_cast=True)
    import pyarrow as pa
    struct = rb.column(0)
    return pa.RecordBatch.from_arrays(struct.flatten(), schema=arrow_schema())


def old_frame(rows: list[tuple]):
    import pandas as pd
    cols = [list(c) for c in zip(*rows)] if rows else [[] for _ in OUTPUT_COLUMNS]
    return pd.DataFrame(dict(zip(OUTPUT_COLUMNS, cols)), columns=OUTPUT_COLUMNS)


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


@pytest.mark.parametrize("seed", range(6))
def test_rows_equal_the_former_rows(seed):
    spec = JobSpec.build(QUERIES, allowed_lateness=1)
    assert set(spec.keyed) == {"pairs", "maybe", "bind", "make"} and spec.whole == ["whole"]
    rows = stream(seed)
    # (kind, group key): a keyed group fed every key's rows (the others'
    # answers dropped), a keyed partition run as one group, the whole stream
    groups = [("keyed", format_term(KEYS[seed % len(KEYS)])), ("keyed", None), ("whole", None)]
    seen = {"answer": 0, "late": 0, "error": 0, "unbound": 0, "triples": 0, "bnode": 0}
    for kind, key in groups:
        new, old = runners(spec, kind)
        for r in (new, old):
            r.start(key)
        got: list = []
        want: list = []
        for i in range(0, len(rows), 70):
            chunk = list(zip(*rows[i:i + 70]))
            for r in (new, old):
                r.push(*chunk)
            if i + 70 >= len(rows):
                for r in (new, old):
                    r.engine.flush()
            out = new.results()
            ref = old_results(old)
            assert isinstance(out, Rows) and len(out) == len(ref)
            a, b = out.arrow(), spark_arrow(old_frame(ref))
            assert a.schema == b.schema
            assert fresh(a.to_pylist()) == fresh(b.to_pylist())
            # the pandas frame of streaming: the rows of the former frame
            c = spark_arrow(frame(out))
            assert c.schema == b.schema
            assert fresh(c.to_pylist()) == fresh(b.to_pylist())
            assert fresh(_same_tuples(out.tuples())) == fresh(_same_tuples(ref))
            got.extend(a.to_pylist())
            want.extend(ref)
        for row in got:
            seen[row["kind"]] += 1
            if row["kind"] == "answer":
                names = {"pairs": 3, "maybe": 3, "bind": 3, "make": 0, "whole": 3}[row["query"]]
                seen["unbound"] += len(row["bindings"]) < names
                seen["triples"] += bool(row["triples"])
                seen["bnode"] += "_:" in row["json"] or any("_:" in v for _, v in row["bindings"])
                json.loads(row["json"])
    # the generator reaches every case
    assert all(v > 0 for v in seen.values()), seen


def _same_tuples(rows: list[tuple]) -> list[tuple]:
    """Rows with NaN (a missing start in a pandas column) as None."""
    def norm(v):
        return None if isinstance(v, float) and v != v else v
    return [tuple(map(norm, x)) for x in rows]


_FRESH = re.compile(r"epsparql[0-9a-z]+_[0-9]+")


def fresh(rows: list) -> str:
    """The rows as text, the labels of blank nodes CONSTRUCT made (one
    counter per process, shared by the two runners' engines) numbered in
    order of appearance."""
    text = repr(rows)
    names: dict[str, str] = {}
    return _FRESH.sub(lambda m: names.setdefault(m.group(0), f"fresh{len(names)}"), text)


def test_rows_of_plain_rows_and_empty():
    r = Rows()
    assert r.arrow().num_rows == 0 and len(frame(r)) == 0
    r.append(("stats", None, "events", None, None, None, None, None, "", 7))
    r.append(("skipped", None, None, None, None, None, None, None, "f:1:2: bad", None))
    ref = [("stats", None, "events", None, None, None, None, None, "", 7),
           ("skipped", None, None, None, None, None, None, None, "f:1:2: bad", None)]
    assert r.arrow().equals(spark_arrow(old_frame(ref)))
    assert spark_arrow(frame(r)).equals(spark_arrow(old_frame(ref)))


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
