"""Numeric and time literals in answers come out as they went in, in
every output format, in ``q.results()`` and in Arrow.

The columns sink sends a typed literal with a short ASCII lexical form
(``n/3``, ``d/3``, ``dur/3``: a decimal, a double, an AVG's value, a
getDURATION()) inline in its buffer instead of through the term
dictionary (``prolog/c/columns_buffer.c``, kind 8), and the dictionary
keeps the others (a big integer, ``INF``, a datatype that is no
number).  On generated streams of literals with non-canonical lexical
forms (``"01.50"^^xsd:decimal``, ``"0042E0"^^xsd:double``, ``"+5"``),
negative zeros, huge exponents, bare canonical numbers and values that
repeat (a window answers each one several times, as the dictionary once
met them twice), for a windowed SELECT and AVG (C-SPARQL) and EP-SPARQL
SELECTs with getDURATION() / getSTARTTIME():

- the EP-SPARQL answers bind exactly the literals of the stream, in its
  order (the reference: the generated lexical forms and datatypes);
- a window's answers bind literals of the stream of their subject, and
  its AVG is the exact mean of that window's values (Fractions from the
  lexical forms), of the promoted datatype;
- the JSON lines and N-Triples texts of every literal are the ones
  written here from lexical form and datatype, and CSV, SPARQL JSON, the
  table and Arrow equal what the same writers make of Answer objects
  built from rdflib literals (which never pass through the sink).
"""
from __future__ import annotations

import csv
import io
import json
import random
from collections import defaultdict
from fractions import Fraction

import pytest
from rdflib import Literal, URIRef

from epsparql import Answer, Engine
from epsparql.io import answer_writer, to_arrow

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
S = EX + "s"
P = f"PREFIX ex: <{EX}>\n"
V = URIRef(EX + "v")

#: (lexical form, datatype) drawn from, repeats included on purpose
POOL = [("01.50", "decimal"), ("1.5", "decimal"), ("-0.0", "decimal"), ("123456789012.25", "decimal"),
        (".5", "decimal"), ("1.5E300", "double"), ("-0.0", "double"), ("1e-300", "double"),
        ("2.5", "double"), ("0042E0", "double"), ("-1.25E-7", "double"), ("1.5", "float"),
        ("-0.0", "float"), ("3.4E38", "float"), ("007", "integer"), ("-0", "integer"),
        ("+5", "integer"), ("12", "integer"), ("99999999999999999999999", "integer"),
        ("5", "long")]
RANK = {"integer": 0, "long": 0, "decimal": 1, "float": 2, "double": 3}
PROMOTED = ["integer", "decimal", "float", "double"]

QUERIES = {
    "window": (f"REGISTER QUERY win AS {P}SELECT ?x ?o FROM STREAM <{S}> [RANGE 3s STEP 1s] "
               f"WHERE {{ ?x ex:v ?o }}"),
    "avg": (f"REGISTER QUERY avg AS {P}SELECT ?x (AVG(?o) AS ?a) FROM STREAM <{S}> "
            f"[RANGE 3s STEP 1s] WHERE {{ ?x ex:v ?o }} GROUP BY ?x"),
    "ep": f"{P}SELECT ?x ?o (getDURATION() AS ?d) (getSTARTTIME() AS ?t) WHERE {{ ?x ex:v ?o }}",
    "seq": (f"{P}SELECT ?x ?a ?b (getDURATION() AS ?d) WHERE {{ {{ ?x ex:v ?a }} SEQ "
            f"{{ ?x ex:v ?b }} FILTER(getDURATION() < \"PT2S\"^^<{XSD}duration>) }}"),
}


def stream(seed: int, n: int = 70) -> list[tuple[int, str, str, float]]:
    """(key, lexical form, datatype, time): strictly increasing times in
    quarters of a second, half the values from POOL, half fresh."""
    rnd = random.Random(seed)
    rows, t = [], Fraction(0)
    for _ in range(n):
        t += rnd.choice([Fraction(1, 4), Fraction(1, 2), 1])
        if rnd.random() < 0.5:
            lex, dt = rnd.choice(POOL)
        elif rnd.random() < 0.7:
            lex, dt = repr(rnd.randrange(-9999, 9999) / rnd.choice([1, 4, 8])), \
                rnd.choice(["decimal", "double", "float"])
        else:
            lex, dt = str(rnd.randrange(-50, 50)), "integer"
        rows.append((rnd.randrange(3), lex, dt, float(t)))
    return rows


def literal(lex: str, dt: str) -> Literal:
    return Literal(lex, datatype=URIRef(XSD + dt), normalize=False)


def json_term(node) -> dict:
    """The SPARQL JSON term object, written here from the term's parts."""
    if isinstance(node, URIRef):
        return {"type": "uri", "value": str(node)}
    return {"type": "literal", "value": str(node), "datatype": str(node.datatype)}


def run(rows) -> dict[str, list[Answer]]:
    """Every query's answers over ``rows``, as Results."""
    with Engine() as eng:
        qs = {name: eng.register(text, name=name) for name, text in QUERIES.items()}
        eng.push_many([(URIRef(f"{EX}x{k}"), V, literal(lex, dt), t, None, S)
                       for k, lex, dt, t in rows])
        eng.flush()
        got = {name: q.results() for name, q in qs.items()}
        variables = {name: q.variables for name, q in qs.items()}
        return got, variables, qs


def check_reference(rows, got) -> None:
    """The answers against the stream (module doc)."""
    ep = list(got["ep"])
    assert [(str(a.bindings["x"]), str(a.bindings["o"]), str(a.bindings["o"].datatype), a.start)
            for a in ep] == [(f"{EX}x{k}", lex, XSD + dt, t) for k, lex, dt, t in rows]
    assert all(str(a.bindings["d"]) == "PT0S" for a in ep)
    by_key = defaultdict(set)
    for k, lex, dt, _ in rows:
        by_key[f"{EX}x{k}"].add((lex, XSD + dt))
    content = defaultdict(list)
    for a in got["window"]:
        o = a.bindings["o"]
        assert (str(o), str(o.datatype)) in by_key[str(a.bindings["x"])]
        content[(a.start, a.end, str(a.bindings["x"]))].append((str(o), str(o.datatype)))
    avgs = list(got["avg"])
    assert len(avgs) == len(content) > 0
    for a in avgs:
        vals = content[(a.start, a.end, str(a.bindings["x"]))]
        mean = sum(Fraction(lex) for lex, _ in vals) / len(vals)
        rank = max(max(RANK[dt[len(XSD):]] for _, dt in vals), 1)     # integer / integer: decimal
        got_avg = a.bindings["a"]
        assert str(got_avg.datatype) == XSD + PROMOTED[rank]
        if rank == 1:
            assert abs(Fraction(str(got_avg)) - mean) <= Fraction(1, 10**18)
        else:
            assert float(str(got_avg)) == pytest.approx(float(mean), rel=1e-9, abs=1e-300)
    seq = list(got["seq"])
    assert seq and all(str(a.bindings["d"].datatype) == XSD + "duration" for a in seq)


def written(fmt: str, query, answers) -> str:
    buf = io.StringIO()
    w = answer_writer(fmt, buf, [query])
    w.write_many(answers)
    w.close()
    return buf.getvalue()


def rebuilt(answers) -> list[Answer]:
    """The answers again, each term made anew from its text by rdflib:
    terms that never crossed the sink."""
    def again(node):
        if isinstance(node, Literal):
            return Literal(str(node), datatype=URIRef(str(node.datatype)), normalize=False)
        return URIRef(str(node))
    return [Answer({k: again(v) for k, v in a.bindings.items()}, a.start, a.end, (), a.query)
            for a in answers]


@pytest.mark.parametrize("seed", range(3))
def test_literals_come_out_as_they_went_in(seed):
    rows = stream(seed)
    got, variables, qs = run(rows)
    check_reference(rows, got)
    for name, res in got.items():
        q, ref = qs[name], rebuilt(res)
        # JSON lines and N-Triples terms, written here from the parts
        lines = [json.loads(line) for line in written("jsonl", q, res).splitlines()]
        assert [line["bindings"] for line in lines] == \
            [{k: json_term(v) for k, v in a.bindings.items()} for a in ref]
        rows_csv = list(csv.reader(io.StringIO(written("csv", q, res))))[1:]
        want_nt = [[f'"{v}"^^<{v.datatype}>' if isinstance(v, Literal) else f"<{v}>"
                    for v in (a.bindings[n] for n in variables[name])] for a in ref]
        assert [r[3:] for r in rows_csv] == want_nt
        # every format: the same text as from terms that never crossed the sink
        for fmt in ("jsonl", "csv", "sparql-json", "table"):
            assert written(fmt, q, res) == written(fmt, q, ref), fmt
        for values in ("python", "nt"):
            mine = to_arrow(res, variables=variables[name], values=values)
            theirs = to_arrow(ref, variables=variables[name], values=values)
            assert mine.schema.equals(theirs.schema) and mine.to_pylist() == theirs.to_pylist()


def test_construct_and_arrow_results():
    """N-Triples of CONSTRUCT answers and ``q.results(format="arrow")``."""
    rows = stream(7, 40)
    text = (f"{P}CONSTRUCT {{ ?x ex:o ?o . ?x ex:d ?d }} WHERE {{ ?x ex:v ?o "
            f"BIND(getDURATION() AS ?d) }}")
    with Engine() as eng:
        q = eng.register(text, name="con")
        sel = eng.register(QUERIES["ep"], name="ep")
        eng.push_many([(URIRef(f"{EX}x{k}"), V, literal(lex, dt), t, None, S)
                       for k, lex, dt, t in rows])
        eng.flush()
        nt = written("nt", q, q.results()).splitlines()
        want = [(f'<{EX}x{k}> <{EX}o> "{lex}"^^<{XSD}{dt}>', t) for k, lex, dt, t in rows]
        objects = [line for line in nt if f"<{EX}o>" in line]
        # each line: the triple, its start and end, " ."
        assert [(line.rsplit(" ", 3)[0], float(line.rsplit(" ", 3)[1])) for line in objects] == want
        table = sel.results(format="arrow")
        ref = to_arrow([Answer({"x": URIRef(f"{EX}x{k}"), "o": literal(lex, dt)}, t, t, (), "ep")
                        for k, lex, dt, t in rows], variables=["x", "o"])
        assert table.select(["start", "end", "x", "o"]).to_pylist() == ref.to_pylist()
