"""Large literals handed to Prolog and back by reference (issue 25,
finding 11; epsparql/core/long_text.py): what comes out is the input,
character for character, whichever way the text crossed.

The reference is the input itself: each answer's literal must be the
text of the line it came from (or, for a string a rule built, that text
with what the rule added), and two different long literals must never be
taken for one, nor one literal pushed twice for two.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pytest

from epsparql import Engine
from epsparql.core.terms import Compound
from epsparql.rdf import wire_arrow

P = "http://ex.org/p"
N = 300_000
L1 = "a" * N + "1"
L2 = "a" * N + "2"                              # L1 but for its last character
L3 = "é ü ☃ 😀 x" * (N // 10)                  # not ASCII, tagged @en
ESC = 'say "hi"\\ \n\t' * (N // 12)            # escaped in N-Triples: crosses as text
LONG = [("a", L1, None), ("b", L2, None), ("c", L1, None), ("d", L3, "en"), ("e", ESC, None),
        ("f", "short", None)]


def nt_literal(text: str, lang: str | None) -> str:
    """N-Triples text of a literal (an independent writer: escapes \\ " \\n \\r \\t)."""
    body = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            .replace("\r", "\\r").replace("\t", "\\t"))
    return '"' + body + '"' + ("@" + lang if lang else "")


def table(rows: list[tuple[str, str, str | None]], t: int = 1) -> pa.Table:
    return pa.table({"s": [f"<http://ex.org/{s}>" for s, _, _ in rows], "p": [f"<{P}>"] * len(rows),
                     "o": [nt_literal(x, lang) for _, x, lang in rows], "start": [t] * len(rows)})


@pytest.fixture
def pushed(monkeypatch):
    """The LongText wrappers each push made (their texts taken before the
    push released them), through push_arrow and through push_many."""
    from epsparql import query_engine
    made: list[tuple] = []
    real_batch, real_rows = wire_arrow.arrow_batch, query_engine.triple_batch_rows

    def arrow_spy(batch):
        b = real_batch(batch)
        made.extend((w, w.text) for w in b.longs)
        return b

    def rows_spy(rows, longs=None):
        data = real_rows(rows, longs)
        made.extend((w, w.text) for w in longs or ())
        return data
    monkeypatch.setattr(wire_arrow, "arrow_batch", arrow_spy)
    monkeypatch.setattr(query_engine, "triple_batch_rows", rows_spy)
    return made


def push(eng: Engine, how: str, rows: list[tuple[str, str, str | None]], t: int = 1) -> None:
    """Push the rows as an Arrow table of N-Triples texts or as rdflib terms."""
    if how == "arrow":
        eng.push_arrow(table(rows, t))
    else:
        from rdflib import Literal, URIRef
        eng.push_many([(URIRef(f"http://ex.org/{s}"), URIRef(P), Literal(x, lang=lang), t)
                       for s, x, lang in rows])


@pytest.mark.parametrize("how", ["arrow", "rows"])
def test_long_literals_in_one_push_come_back_whole_and_by_reference(pushed, how):
    with Engine() as eng:
        q = eng.register(f"SELECT ?s ?o WHERE {{ ?s <{P}> ?o }}")
        d = eng.register(f"SELECT DISTINCT ?o WHERE {{ ?s <{P}> ?o }}")
        push(eng, how, LONG)
        got = sorted((str(a["s"]), str(a["o"]), a["o"].language) for a in q.results())
        assert got == sorted((f"http://ex.org/{s}", x, lang) for s, x, lang in LONG)
        # the same literal twice is one term, two different ones two
        assert sorted(str(a["o"]) for a in d.results()) == sorted({L1, L2, L3, ESC, "short"})
        # by reference: the answers' texts are the very objects the push
        # made (an N-Triples text with escapes crosses as text), and the
        # push let go of its wrappers
        texts = {id(t) for _, t in pushed}
        by_ref = 3 if how == "arrow" else 4
        assert len(pushed) == by_ref + (how == "arrow") and all(w.text is None for w, _ in pushed)
        table_texts = [v.args[0] for v in eng.core._terms.values
                       if type(v) is Compound and v.name in ("s", "l") and len(v.args[0]) > 4096]
        assert sorted(map(len, table_texts)) == sorted(map(len, [L1, L2, L3, ESC]))
        assert sum(id(t) in texts for t in table_texts) == by_ref


@pytest.mark.parametrize("how", ["arrow", "rows"])
def test_a_long_literal_a_rule_built_or_an_earlier_push_holds_crosses_as_text(pushed, how):
    """The fallback: a string Prolog made (CONCAT, in a CONSTRUCT rule
    whose triples a query answers) has no Python object, nor has one
    pushed in an earlier call (a SEQ answered later): both cross as text."""
    with Engine() as eng:
        eng.register(f"CONSTRUCT {{ ?s <http://ex.org/q> ?c }} WHERE {{ ?s <{P}> ?o "
                     f'BIND(CONCAT(?o, "!") AS ?c) }}')
        made = eng.register("SELECT ?s ?c WHERE { ?s <http://ex.org/q> ?c }")
        later = eng.register(f"SELECT ?s ?o WHERE {{ ?s <{P}> ?o }} SEQ {{ ?s <http://ex.org/r> ?x }}")
        push(eng, how, [("a", L1, None), ("b", L2, None), ("d", L3, "en")])
        eng.push_arrow(pa.table({"s": ["<http://ex.org/a>", "<http://ex.org/d>"],
                                 "p": ["<http://ex.org/r>"] * 2, "o": ['"x"'] * 2, "start": [2, 2]}))
        got = sorted((str(a["s"]), str(a["c"]), a["c"].language) for a in made.results())
        # (CONCAT of a tagged and a simple literal is a simple literal)
        assert got == [("http://ex.org/a", L1 + "!", None), ("http://ex.org/b", L2 + "!", None),
                       ("http://ex.org/d", L3 + "!", None)]
        got = sorted((str(a["s"]), str(a["o"]), a["o"].language) for a in later.results())
        assert got == [("http://ex.org/a", L1, None), ("http://ex.org/d", L3, "en")]
        assert pushed and all(w.text is None for w, _ in pushed)


def test_text_parts_write_what_json_dumps_format_term_and_csv_write(monkeypatch):
    """A long literal's JSON, N-Triples and CSV text, escaped a piece at a
    time (pieces of 7 characters here, so escapes and astral characters
    fall on their edges), is json.dumps's, format_term's, csv.writer's;
    its table cell the table writer's of the rdflib term."""
    import csv
    import io
    from rdflib import Literal
    from epsparql.io import long_parts, results
    from epsparql.rdf.ntriples import format_term
    monkeypatch.setattr(long_parts, "WRITE_PIECE", 7)
    lex = 'x"\\\n\t\r\u0001\u2028é😀,' * 700
    for enc, node in [(Compound("s", (lex,)), Literal(lex)),
                      (Compound("l", (lex, "en-gb")), Literal(lex, lang="en-gb"))]:
        want_json = json.dumps({"type": "literal", "value": str(node),
                                **({"xml:lang": node.language} if node.language else {})},
                               ensure_ascii=False)
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow([format_term(node)])
        for parts, want in [(long_parts.json_parts(enc), want_json),
                            (long_parts.nt_parts(enc), format_term(node)),
                            (long_parts.csv_field(long_parts.nt_parts(enc)), buf.getvalue())]:
            out = io.StringIO()
            parts.write_to(out)
            assert out.getvalue() == str(parts) == want
        assert want_json == results.term_json_text(node)
        table = results.TableWriter(io.StringIO())         # a cell: from the start of the text
        assert table._long_cells([enc]) == [table.cell(node)]
    assert long_parts.json_parts(Compound("s", ("short",))) is None


@pytest.mark.parametrize("n, fmt", [(5_000, "jsonl"), (200_000, "jsonl"), (200_000, "csv"),
                                    (200_000, "sparql-json")])
def test_long_literals_through_the_command_line(tmp_path, n, fmt):
    """``epsparql run`` over a file of long literals (5 KB: the block goes
    through the row parser; 200 KB: the columnar cut): each line written
    is json.dumps's line of the input's terms, or csv.writer's row, or the
    SPARQL JSON document is json.dumps's."""
    import csv
    import io
    rows = [("a", "a" * n + "1", None), ("b", "a" * n + "2", None), ("c", "a" * n + "1", None),
            ("d", "é ü ☃ 😀 x" * (n // 10), "en"), ("e", 'say "hi"\\ \n\t' * (n // 12), None),
            ("f", "short", None)]
    stream = tmp_path / "s.nt"
    stream.write_text("".join(f"<http://ex.org/{s}> <{P}> {nt_literal(x, lang)} {i + 1} .\n"
                              for i, (s, x, lang) in enumerate(rows)), encoding="utf-8")
    q = tmp_path / "q.rq"
    q.write_text(f"SELECT ?s ?o WHERE {{ ?s <{P}> ?o }}")
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "epsparql.cli", "run", str(q), "--stream", str(stream),
                    "--output-format", fmt, "--out", str(out), "--quiet"], check=True)
    def term(s, x, lang):
        return {"s": {"type": "uri", "value": f"http://ex.org/{s}"},
                "o": {"type": "literal", "value": x, **({"xml:lang": lang} if lang else {})}}
    if fmt == "jsonl":
        want = "".join(json.dumps({"query": "q", "start": i + 1, "end": i + 1,
                                   "bindings": term(s, x, lang)}, ensure_ascii=False) + "\n"
                       for i, (s, x, lang) in enumerate(rows))
    elif fmt == "sparql-json":
        def t(i):
            return {"type": "literal", "value": str(i + 1),
                    "datatype": "http://www.w3.org/2001/XMLSchema#integer"}
        want = json.dumps({"query": "q", "head": {"vars": ["s", "o", "start", "end"]},
                           "results": {"bindings": [{**term(s, x, lang), "start": t(i), "end": t(i)}
                                                    for i, (s, x, lang) in enumerate(rows)]}},
                          ensure_ascii=False) + "\n"
    else:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["query", "start", "end", "s", "o"])
        w.writerows(["q", str(i + 1), str(i + 1), f"<http://ex.org/{s}>", nt_literal(x, lang)]
                    for i, (s, x, lang) in enumerate(rows))
        want = buf.getvalue()
    assert out.read_bytes() == want.encode("utf-8")


def test_long_literals_through_a_window(pushed):
    """A C-SPARQL window (bridge_windows.pl) over long literals: the window
    that closes within the push answers by reference; the one the flush
    closes afterwards holds L1 again, one term with the first."""
    st = "http://ex.org/st"
    with Engine() as eng:
        q = eng.register(f"REGISTER QUERY w AS SELECT ?s ?o FROM STREAM <{st}> [RANGE 1s TUMBLING] "
                         f"WHERE {{ ?s <{P}> ?o }}")
        rows = [("a", L1, None), ("b", L2, None), ("d", L3, "en")]
        t = table(rows + [("c", L1, None)]).append_column("stream", pa.array([st] * 4))
        t = t.set_column(3, "start", pa.array([1, 1, 1, 5]))
        eng.push_arrow(t)
        texts = {id(x) for _, x in pushed}
        assert sum(id(v.args[0]) in texts for v in eng.core._terms.values
                   if type(v) is Compound and len(v.args[0]) > 4096) == 3
        eng.flush()
        got = sorted((a.start, str(a["s"]), str(a["o"]), a["o"].language) for a in q.results())
        assert got == sorted([(1, f"http://ex.org/{s}", x, lang) for s, x, lang in rows]
                             + [(5, "http://ex.org/c", L1, None)])
        assert len(pushed) == 4 and all(w.text is None for w, _ in pushed)


def test_texts_under_one_hash_are_told_apart_by_content():
    """bridge_long_text.pl finds a string's object by term_hash/2, then
    compares the texts: an entry whose hash collides (forced here: B
    filed under A's hash, first) is never taken for A, and a string with
    no entry of its own has none, whatever the entries around it."""
    from epsparql.core.runtime import runtime
    r = runtime().query_once(
        "atom_string(TA, A), atom_string(TB, B), atom_string(TC, C), term_hash(A, H), "
        "bridge_long_text:with_long_refs([r(H, B, wrong), r(H, A, right)], "
        "( bridge_long_text:long_text_blob(A, X), "
        "  ( bridge_long_text:long_text_blob(B, Y) -> true ; Y = none ), "
        "  ( bridge_long_text:long_text_blob(C, Z) -> true ; Z = none ) )), "
        "( bridge_long_text:long_text_blob(A, W) -> true ; W = none )",
        {"TA": L1, "TB": L2, "TC": "a" * N + "3"})
    assert (r["X"], r["Y"], r["Z"], r["W"]) == ("right", "none", "none", "none")
