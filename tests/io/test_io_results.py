"""Answer writers (JSON lines, CSV, SPARQL JSON, N-Triples, table) and the
DataFrame conversion, on answers of a real engine."""
from __future__ import annotations

import io
import json
import math
from decimal import Decimal

import pandas as pd
import pytest
from rdflib import BNode, Literal, URIRef

from epsparql import Answer, Engine
from epsparql.io import (OUTPUT_FORMATS, answer_to_json, answer_writer, read_answers,
                         read_answers_csv, read_stream, term_from_json, to_dataframe,
                         write_answers)

EX = "http://example.org/"
XSD = "http://www.w3.org/2001/XMLSchema#"
TEXTS = ['say "hi"', "back\\slash", "two\nlines\r\n", "tab\t", "é 中 😀", "x" * 20_000,
         "a,b;c", "", "nul\x00"]


@pytest.fixture(scope="module")
def run():
    """An engine with a SELECT, a CONSTRUCT and an ASK query over a stream
    of hostile values; returns (queries, answers)."""
    engine = Engine()
    select = engine.register(f"""PREFIX ex: <{EX}>
        SELECT ?s ?o ?start WHERE {{ ?s ex:p ?o OPTIONAL {{ ?s ex:q ?start }} }}""", name="echo")
    construct = engine.register(f"""PREFIX ex: <{EX}>
        CONSTRUCT {{ ?s ex:copy ?o }} WHERE {{ ?s ex:p ?o }}""", name="copy")
    ask = engine.register(f"ASK {{ ?s <{EX}p> ?o }}", name="any")
    rows = []
    for i, text in enumerate(TEXTS):
        rows.append((URIRef(EX + f"s{i}"), URIRef(EX + "p"), Literal(text), i, i + 0.5))
    rows += [
        (BNode("b1"), URIRef(EX + "p"), Literal("Grüße", lang="de"), 20, 21),
        (URIRef(EX + "n"), URIRef(EX + "p"), Literal(42), 22, 22),
        (URIRef(EX + "n"), URIRef(EX + "q"), Literal(7), 22, 22),
        (URIRef(EX + "d"), URIRef(EX + "p"), Literal("1.5", datatype=URIRef(XSD + "decimal")), 23, 23),
        (URIRef(EX + "u"), URIRef(EX + "p"), URIRef("http://example.org/é"), 1714557600.25, 1714557601),
    ]
    engine.push_many(rows)
    engine.flush()
    answers = select.results() + construct.results() + ask.results()
    yield [select, construct, ask], answers
    engine.close()


def by_query(answers, name):
    return [a for a in answers if a.query == name]


def test_engine_gave_the_expected_answers(run):
    queries, answers = run
    assert len(by_query(answers, "echo")) == len(TEXTS) + 4
    assert len(by_query(answers, "copy")) == len(TEXTS) + 4
    assert len(by_query(answers, "any")) == 1
    values = {str(a["o"]) for a in by_query(answers, "echo")}
    assert set(TEXTS) <= values


def same_answers(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x.query, x.start, x.end) == (y.query, y.start, y.end)
        assert x.bindings == y.bindings
        for k in x.bindings:
            u, v = x.bindings[k], y.bindings[k]
            assert type(u) is type(v)
            if isinstance(u, Literal):
                assert (str(u), u.language, u.datatype) == (str(v), v.language, v.datatype)
        assert x.triples == y.triples


def test_jsonl_round_trip(run):
    queries, answers = run
    buf = io.StringIO()
    assert write_answers(answers, buf, "jsonl", queries) == len(answers)
    lines = buf.getvalue().splitlines()
    assert len(lines) == len(answers)                     # no raw line break inside a record
    first = json.loads(lines[0])
    assert set(first) >= {"query", "start", "end", "bindings"}
    same_answers(answers, list(read_answers(io.StringIO(buf.getvalue()))))
    copy = [json.loads(x) for x in lines if json.loads(x)["query"] == "copy"]
    assert all(len(c["triples"]) == 1 and c["triples"][0]["p"]["value"] == EX + "copy" for c in copy)


def test_jsonl_terms_are_sparql_json(run):
    _, answers = run
    a = next(a for a in answers if a.query == "echo" and str(a["s"]) == EX + "n")
    obj = answer_to_json(a)
    assert obj["bindings"]["o"] == {"type": "literal", "value": "42", "datatype": XSD + "integer"}
    assert obj["bindings"]["s"] == {"type": "uri", "value": EX + "n"}
    b = next(a for a in answers if a.query == "echo" and isinstance(a["s"], BNode))
    obj = answer_to_json(b)
    assert obj["bindings"]["s"]["type"] == "bnode"
    assert obj["bindings"]["o"] == {"type": "literal", "value": "Grüße", "xml:lang": "de"}


def test_csv_round_trip_and_meta_column_names(run, tmp_path):
    queries, answers = run
    path = tmp_path / "a.csv"
    write_answers(answers, path, "csv", queries)
    header = path.read_text().splitlines()[0]
    # ?start is a variable of "echo", so the time column is renamed
    assert header.startswith("query,_start,end,s,o,start")
    back = list(read_answers_csv(path))
    # CSV keeps bindings, not the CONSTRUCT triples
    same_answers([Answer(a.bindings, a.start, a.end, (), a.query) for a in answers], back)


def test_sparql_json_documents(run, tmp_path):
    queries, answers = run
    path = tmp_path / "a.json"
    write_answers(answers, path, "sparql-json", queries)
    docs = [json.loads(line) for line in path.read_text().splitlines()]
    assert [d["query"] for d in docs] == ["echo", "copy", "any"]
    echo, copy, ask = docs
    assert echo["head"]["vars"] == ["s", "o", "start", "_start", "end"]
    rows = echo["results"]["bindings"]
    assert len(rows) == len(by_query(answers, "echo"))
    for row, a in zip(rows, by_query(answers, "echo")):
        assert {k: term_from_json(v) for k, v in row.items() if k in a.bindings} == a.bindings
        assert float(row["_start"]["value"]) == a.start and float(row["end"]["value"]) == a.end
        assert row["end"]["datatype"] in (XSD + "integer", XSD + "decimal")
    assert len(copy["results"]["bindings"]) == len(by_query(answers, "copy"))
    assert ask == {"query": "any", "head": {}, "boolean": True}


def test_sparql_json_single_query_is_one_document_and_empty_ones_exist(run):
    queries, _ = run
    buf = io.StringIO()
    write_answers([], buf, "sparql-json", queries[:1], time_format="iso")
    doc = json.loads(buf.getvalue())
    assert doc["results"]["bindings"] == [] and doc["head"]["vars"][-1] == "end"
    buf = io.StringIO()
    write_answers([], buf, "sparql-json", queries[2:])
    assert json.loads(buf.getvalue())["boolean"] is False


def test_nt_output_is_a_readable_stream(run):
    queries, answers = run
    buf = io.StringIO()
    with answer_writer("nt", buf, queries) as w:
        w.write_many(answers)
        ignored = w.ignored
    assert ignored == len(answers) - len(by_query(answers, "copy"))
    rows = list(read_stream(io.StringIO(buf.getvalue()), "nt"))
    want = [(t, a.start, a.end) for a in by_query(answers, "copy") for t in a.triples]
    assert [(r[:3], r[3], r[4]) for r in rows] == want


def test_iso_time_format(run):
    queries, answers = run
    a = next(a for a in answers if a.query == "echo" and str(a["s"]) == EX + "u")
    buf = io.StringIO()
    write_answers([a], buf, "jsonl", queries, time_format="iso")
    obj = json.loads(buf.getvalue())
    assert obj["start"] == "2024-05-01T10:00:00.25Z" and obj["end"] == "2024-05-01T10:00:01Z"
    same_answers([a], list(read_answers(io.StringIO(buf.getvalue()))))


def test_table(run):
    queries, answers = run
    buf = io.StringIO()
    with answer_writer("table", buf, queries, max_width=30) as w:
        w.write_many(answers)
    text = buf.getvalue()
    lines = text.splitlines()
    assert lines[0].split() == ["query", "start", "end", "?s", "?o", "?start"]
    assert "ex:n" in text                     # the query's prefix abbreviates IRIs
    assert "\t" not in text.replace("\\t", "") and all(len(x) < 200 for x in lines)
    assert any(line.startswith("any") and "true" in line for line in lines)
    assert any("…" in line for line in lines)          # the long literal is cut
    assert '"Grüße"@de' in text and "42" in text


def test_unknown_format():
    with pytest.raises(ValueError, match="sparql-json"):
        answer_writer("xml", io.StringIO())
    assert set(OUTPUT_FORMATS) == {"jsonl", "csv", "sparql-json", "nt", "table"}


def test_to_dataframe(run):
    queries, answers = run
    echo = by_query(answers, "echo")
    df = to_dataframe(echo)
    assert list(df.columns) == ["query", "start", "end", "s", "o", "?start"]
    assert len(df) == len(echo) and df["start"].dtype == float
    row = df[df["s"] == EX + "n"].iloc[0]
    assert row["o"] == 42 and row["?start"] == 7
    assert df["?start"].isna().sum() == len(echo) - 1
    assert set(TEXTS) <= set(df["o"])
    assert Decimal("1.5") in set(df["o"])
    assert any(isinstance(x, str) and x.startswith("_:") for x in df["s"])

    nt = to_dataframe(echo, values="nt", times="datetime")
    assert str(nt["start"].dtype).startswith("datetime64") and str(nt["start"].dt.tz) == "UTC"
    assert (nt["s"] == f"<{EX}n>").any()
    rd = to_dataframe(echo, values="rdflib")
    assert (rd["o"] == Literal(42)).any()

    copy = to_dataframe(by_query(answers, "copy"), variables=["o"])
    assert list(copy.columns) == ["query", "start", "end", "o", "triples"]

    empty = to_dataframe([])
    assert list(empty.columns) == ["query", "start", "end"] and len(empty) == 0
    with pytest.raises(ValueError):
        to_dataframe(echo, values="json")


def test_numeric_column_dtype():
    answers = [Answer({"v": Literal(i)}, i, i, (), "q") for i in range(5)]
    df = to_dataframe(answers)
    assert pd.api.types.is_integer_dtype(df["v"])
    df = to_dataframe(answers + [Answer({}, 9, 9, (), "q")])
    assert pd.api.types.is_float_dtype(df["v"]) and math.isnan(df["v"].iloc[-1])


def jsonl_lines_as_dumped(q) -> list[str]:
    """The JSON lines the writer makes of ``q``'s answers, asserted equal to
    the lines json.dumps makes of them."""
    answers = list(q.results())
    buf = io.StringIO()
    with answer_writer("jsonl", buf, [q]) as w:
        w.write_many(answers)
    lines = buf.getvalue().splitlines()
    assert lines == [json.dumps(answer_to_json(a), ensure_ascii=False) for a in answers]
    return lines


@pytest.mark.parametrize("form", ["SELECT ?s ?o", "CONSTRUCT { ?s <http://ex/q> ?o }"])
def test_large_literals_are_written_in_pieces_as_json_dumps_writes_them(form):
    """Issue 25, finding 11: a JSON line with a value longer than
    LONG_KEY is written part by part (no copy of the line, its UTF-8
    bytes made a piece at a time); the lines are those of json.dumps, for
    plain, tagged and typed literals with characters JSON escapes."""
    from epsparql.io.results import WRITE_PIECE
    from epsparql.memo import LONG_KEY
    body = 'a"b\\c\n\u2603é\x01' * (WRITE_PIECE // 4)
    objs = [Literal(body), Literal(body, lang="en-GB"),
            Literal(body, datatype=URIRef("http://ex/dt")), Literal("short"),
            Literal("x" * (LONG_KEY + 1))]
    eng = Engine()
    try:
        q = eng.register(f"{form} WHERE {{ ?s <http://ex/p> ?o }}")
        eng.push_many([(URIRef(f"http://ex/s{i}"), URIRef("http://ex/p"), o, i + 1)
                       for i, o in enumerate(objs)])
        eng.flush()
        lines = jsonl_lines_as_dumped(q)
        got = [json.loads(x) for x in lines]
        values = [g["bindings"]["o"]["value"] if "bindings" in g and "o" in g["bindings"]
                  else g["triples"][0]["o"]["value"] for g in got]
        assert sorted(values, key=len) == sorted((str(o) for o in objs), key=len)
    finally:
        eng.close()


@pytest.mark.parametrize("bound", [True, False])
def test_jsonl_lines_of_a_batch_are_json_dumps_of_its_answers(bound):
    """The JSON lines of a batch whose every variable is bound in every
    answer are made by one format per line (braces in the query's name and
    the values are data, not format fields); they are the lines json.dumps
    writes, as are those of a batch with unbound variables."""
    eng = Engine()
    try:
        opt = "OPTIONAL { ?s <http://ex/q> ?z }" if not bound else ""
        q = eng.register(f"SELECT ?s ?o ?z WHERE {{ ?s <http://ex/p> ?o {opt} "
                         f"{'BIND(?o AS ?z)' if bound else ''} }}", name='q{0} "x"}')
        objs = [Literal("{0}{}}"), Literal(1.5), Literal(7), Literal("é", lang="fr"),
                URIRef("http://ex/{x}"), BNode("b{1}")]
        eng.push_many([(URIRef(f"http://ex/s{i}"), URIRef("http://ex/p"), o, i + 0.25)
                       for i, o in enumerate(objs)])
        eng.flush()
        assert len(jsonl_lines_as_dumped(q)) == len(objs)
    finally:
        eng.close()
