"""Engine.push_arrow: a columnar batch of term texts gives exactly what
push_many gives for the same rows, for EP-SPARQL and windowed queries,
in order or not, with the same late rows and the same errors."""
from __future__ import annotations

import random

import pyarrow as pa
import pytest
from rdflib import BNode, Literal, URIRef

from epsparql import Engine
from epsparql.io.streams import format_term

EX = "http://example.org/"
S1, S2 = EX + "s1", EX + "s2"
P = f"PREFIX ex: <{EX}>\n"
v, w = URIRef(EX + "v"), URIRef(EX + "w")

QUERIES = [
    P + "SELECT ?k ?a ?b WHERE { { ?k ex:v ?a } SEQ { ?k ex:v ?b } FILTER(?b > ?a && "
        "getDURATION() < \"PT4S\"^^<http://www.w3.org/2001/XMLSchema#duration>) }",
    P + "CONSTRUCT { ?k ex:seen ?o } WHERE { ?k ex:w ?o }",
    f"REGISTER QUERY c AS {P}SELECT ?k (COUNT(*) AS ?n) (AVG(?o) AS ?a) FROM STREAM <{S1}> "
    f"[RANGE 4s STEP 1s] WHERE {{ ?k ex:v ?o }} GROUP BY ?k",
    f"REGISTER QUERY d AS {P}SELECT ?k ?o FROM STREAM <{S2}> [RANGE 3s STEP 3s] "
    f"WHERE {{ ?k ?p ?o }}",
]

OBJECTS = [lambda r: Literal(r.randrange(6)), lambda r: Literal(r.random() * 10),
           lambda r: Literal(f"t{r.randrange(3)}"), lambda r: Literal("x", lang="en"),
           lambda r: URIRef(f"{EX}o{r.randrange(3)}"), lambda r: BNode(f"b{r.randrange(2)}"),
           lambda r: Literal("2024-01-01T00:00:00Z",
                             datatype=URIRef("http://www.w3.org/2001/XMLSchema#dateTime"))]


def stream(seed: int, n: int, disorder: float = 0.0) -> list[tuple]:
    r = random.Random(seed)
    rows, t = [], 0.0
    for _ in range(n):
        t += r.choice([0, 0, 0.5, 1, 1.25])
        s = URIRef(f"{EX}k{r.randrange(4)}")
        o = r.choice(OBJECTS)(r)
        t1 = t - (r.random() * 2 if r.random() < disorder else 0)
        t2 = t1 + r.choice([0, 0, 0.5])
        g = r.choice([S1, S1, S2, None])
        rows.append((s, r.choice([v, v, w]), o, t1, t2, g))
    return rows


def table(rows: list[tuple], ends: bool = True) -> pa.Table:
    return pa.table({
        "s": [format_term(x[0]) for x in rows], "p": [format_term(x[1]) for x in rows],
        "o": [format_term(x[2]) for x in rows], "start": [x[3] for x in rows],
        **({"end": [None if x[4] == x[3] and i % 2 else x[4] for i, x in enumerate(rows)]}
           if ends else {}),
        "stream": [x[5] for x in rows], "line": list(range(1, len(rows) + 1))})


def run(rows, how: str, lateness: float = 0.0, batch_size: int = 50):
    out = []
    late_seen = []
    with Engine(allowed_lateness=lateness, batch_size=batch_size) as eng:
        qs = [eng.register(q) for q in QUERIES]
        for i in range(0, len(rows), 37):
            part = rows[i:i + 37]
            if how == "rows":
                late = eng.push_many(part)
            else:
                late = eng.push_arrow(table(part))
            late_seen.extend(i + j for j in late)
        eng.flush()
        for q in qs:
            out.append([(a.start, a.end, sorted(a.bindings.items()), sorted(a.triples))
                        for a in q.results()])
        return out, late_seen, eng.late


@pytest.mark.parametrize("seed", range(8))
def test_same_answers_as_rows(seed):
    rows = stream(seed, 300)
    assert run(rows, "arrow") == run(rows, "rows")


@pytest.mark.parametrize("seed", range(4))
def test_out_of_order_and_late_rows_go_through_the_reorder_buffer(seed):
    rows = stream(100 + seed, 250, disorder=0.3)
    for lateness in (0.0, 1.0):
        a = run(rows, "arrow", lateness)
        b = run(rows, "rows", lateness)
        assert a == b
        if lateness == 0.0:
            assert a[2] > 0 and a[1]                  # some were late, named by position


def test_a_table_of_chunks_and_a_record_batch():
    rows = stream(7, 400)
    t = table(rows)
    chunked = pa.Table.from_batches(t.to_batches(max_chunksize=33))
    with Engine(batch_size=64) as e1, Engine(batch_size=64) as e2, Engine() as e3:
        qs = [[e.register(q) for q in QUERIES] for e in (e1, e2, e3)]
        e1.push_arrow(chunked)
        for rb in t.to_batches(max_chunksize=90):
            e2.push_arrow(rb)
        e3.push_many(rows)
        for e in (e1, e2, e3):
            e.flush()
        got = [[sorted((a.start, a.end, sorted(a.bindings.items())) for a in q.results())
                for q in qq] for qq in qs]
        assert got[0] == got[1] == got[2]


@pytest.mark.parametrize("bad, message", [
    ({"s": ["<http://example.org/a>", "<not an iri>"]}, "row 1"),
    ({"o": ['"open', '"x"']}, "row 0"),
    ({"start": [1.0, float("nan")]}, "row 1: start time nan is not finite"),
    ({"start": [1, None]}, "row 1: start time is missing"),
    ({"end": [0.5, 3.0]}, "row 0: end 0.5 is before start 1.0"),
    ({"stream": [None, "not an iri"]}, "row 1: a stream must be an IRI"),
    ({"p": [None, "<http://example.org/p>"]}, "row 0: p is missing"),
])
def test_bad_rows_are_named_and_nothing_of_the_slice_goes_in(bad, message):
    cols = {"s": ["<http://example.org/a>"] * 2, "p": ["<http://example.org/v>"] * 2,
            "o": ['"1"^^<http://www.w3.org/2001/XMLSchema#integer>'] * 2, "start": [1.0, 2.0]}
    cols.update(bad)
    with Engine() as eng:
        q = eng.register(QUERIES[1].replace("ex:w", "ex:v"))
        with pytest.raises(ValueError, match=message):
            eng.push_arrow(pa.table(cols))
        eng.flush()
        assert len(q.results()) == 0


def test_missing_columns_and_wrong_types():
    with Engine() as eng:
        with pytest.raises(ValueError, match="needs the columns"):
            eng.push_arrow(pa.table({"s": ["<http://example.org/a>"], "p": ["<http://example.org/v>"],
                                     "o": ["<http://example.org/b>"]}))
        with pytest.raises(ValueError, match="numbers of seconds"):
            eng.push_arrow(pa.table({"s": ["<http://example.org/a>"], "p": ["<http://example.org/v>"],
                                     "o": ["<http://example.org/b>"], "start": ["1"]}))
        with pytest.raises(ValueError, match="as strings"):
            eng.push_arrow(pa.table({"s": [1], "p": ["<http://example.org/v>"],
                                     "o": ["<http://example.org/b>"], "start": [1]}))


def test_data_is_never_code():
    evil = '"), halt ; true. %"'
    with Engine() as eng:
        q = eng.register(P + "SELECT ?o WHERE { ?s ex:v ?o }")
        eng.push_arrow(pa.table({"s": ["<http://example.org/a>"], "p": ["<http://example.org/v>"],
                                 "o": ['"' + evil.replace('"', '\\"') + '"'], "start": [1]}))
        eng.flush()
        [a] = q.results()
        assert str(a["o"]) == evil


def test_a_large_literal_is_not_kept_after_its_batch():
    """Issue 25, finding 11: every distinct term text stayed in the
    push path's cache with its janus data, so a stream of large distinct
    literals grew the process by twice their size each (20 literals of
    5 MB: 409 MB peak; now 209 MB).  Long texts are not remembered."""
    import pyarrow as pa
    from epsparql.memo import LONG_KEY, BoundedCache
    from epsparql.rdf import wire_arrow
    big = '"' + "x" * (LONG_KEY + 1) + '"'
    small = '"y"'
    eng = Engine()
    try:
        q = eng.register("SELECT ?o WHERE { ?s <http://ex/p> ?o }")
        eng.push_arrow(pa.table({"s": ["<http://ex/a>"] * 2, "p": ["<http://ex/p>"] * 2,
                                 "o": [big, small], "start": [1, 2]}))
        eng.flush()
        assert sorted(len(str(a.bindings["o"])) for a in q.results()) == [1, LONG_KEY + 1]
        assert big not in wire_arrow._TERMS and small in wire_arrow._TERMS
    finally:
        eng.close()
    c = BoundedCache(4)
    assert c.put("k" * (LONG_KEY + 1), 1) == 1 and len(c) == 0
    assert c.put("k", 2) == 2 and c["k"] == 2


def test_answered_large_literals_are_one_term_each_and_not_kept_for_ever():
    """Issue 25, finding 11, on the answer side: the core's dictionary
    holds a term with a long text under its SHA-1, not a copy (and not
    in its id cache), so equal large literals are still one term (set
    DISTINCT drops the repeat at one instant), and once the long texts
    it has seen add up past its budget (64 MB) it starts afresh, so the
    Python table of terms lets go of them too."""
    import pyarrow as pa
    big = '"' + "x" * 3_000_000 + '"'
    eng = Engine()
    try:
        q = eng.register("SELECT DISTINCT ?o WHERE { ?s <http://ex/p> ?o }")
        eng.push_arrow(pa.table({"s": ["<http://ex/a>", "<http://ex/b>"],
                                 "p": ["<http://ex/p>"] * 2, "o": [big, big],
                                 "start": [1, 1]}))
        [a] = q.results()                     # one answer: the two are one term
        assert len(str(a["o"])) == 3_000_000
        table = eng.core._terms
        gen0 = table.generation
        for i in range(25):                   # 75 MB of distinct long literals, answered
            eng.push_arrow(pa.table({"s": ["<http://ex/a>"], "p": ["<http://ex/p>"],
                                     "o": [big[:-1] + str(i) + '"'], "start": [2 + i]}))
            got = q.results()
            assert [str(x["o"])[-3:] for x in got] == [("x" + str(i))[-3:].rjust(3, "x")]
        assert table.generation > gen0
        assert sum(len(str(v)) for v in table.values if v is not None) < 70_000_000
    finally:
        eng.close()


@pytest.mark.parametrize("suffix", ["", "@en", "@EN-gb", "^^<http://www.w3.org/2001/XMLSchema#string>",
                                    "^^<http://www.w3.org/2001/XMLSchema#integer>",
                                    "^^<http://ex/dt>"])
@pytest.mark.parametrize("body", ["x", "é ü ☃", "a\\nb", "say \\\"hi\\\"", "9"])
def test_long_term_texts_give_the_data_every_term_gets(body, suffix):
    """Long texts skip the dictionary and, when they are plain, tagged or
    xsd:string literals without escapes, rdflib: the janus data is the
    same as the one path of every other term gives, the lexical form
    handed over by reference (a LongText, released after the push)."""
    from epsparql.core.long_text import LongText
    from epsparql.memo import LONG_KEY
    from epsparql.rdf.ntriples import parse_term
    from epsparql.rdf.wire_arrow import arrow_batch
    from epsparql.rdf.wire_rows import term_data
    text = '"' + body * (LONG_KEY // len(body) + 1) + '"' + suffix
    b = arrow_batch(pa.table({"s": ["<http://ex/a>", "<http://ex/b>"], "p": ["<http://ex/p>"] * 2,
                              "o": [text, '"short"'], "start": [1, 2]}))
    terms, ss, ps, os_ = b.data[:4]
    got = terms[os_[0] - 1]
    plain = "\\" not in body and suffix in ("", "@en", "@EN-gb", "^^<http://www.w3.org/2001/XMLSchema#string>")
    if plain:
        assert type(got[2]) is LongText and b.longs == [got[2]]
        got = got[:2] + (str.__str__(got[2].text),) + got[3:]
    else:
        assert b.longs == []
    assert got == term_data(parse_term(text))
    assert terms[os_[1] - 1] == ("s", 1, "short")
    assert terms[ss[1] - 1] == "http://ex/b" and ps[0] == ps[1]


def _peak_kb(args: list[str]) -> int:
    """The peak RSS of ``epsparql ARGS`` as a fresh process (kB)."""
    import subprocess
    import sys
    code = ("import resource, sys\nfrom epsparql.cli.main import main\nrc = main(sys.argv[1:])\n"
            "assert rc == 0, rc\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.split()[-1])


def test_a_large_literal_costs_a_few_times_its_size_through_the_command_line(tmp_path):
    """A 10 MB literal: the reader's block and Arrow column, one Python
    text of its lexical form, the Prolog string (issue 25, finding 11: it
    cost 12x unanswered, 22x answered; a push imported pandas for it; the
    JSON line writer wrote a copy of the line, its bytes and two copies of
    the term: 13x answered, then 11x; a short block went through the row
    parser, and an answer's text crossed back as a copy: 4.3x both now,
    the answer's text the push's own, its JSON escaped piece by piece)."""
    size = 10_000_000
    big, small = tmp_path / "big.nt", tmp_path / "small.nt"
    rest = '<http://ex.org/b> <http://ex.org/p> "small" 2 .\n'
    big.write_text(f'<http://ex.org/a> <http://ex.org/p> "{"x" * size}" 1 .\n' + rest)
    small.write_text('<http://ex.org/a> <http://ex.org/p> "x" 1 .\n' + rest)
    answered, unanswered = tmp_path / "a.rq", tmp_path / "n.rq"
    answered.write_text("SELECT ?s ?o WHERE { ?s <http://ex.org/p> ?o }")
    unanswered.write_text("SELECT ?s ?o WHERE { ?s <http://ex.org/none> ?o }")
    out = str(tmp_path / "out.jsonl")

    def extra(q):
        run = ["run", str(q), "--output-format", "jsonl", "--out", out, "--quiet", "--stream"]
        return (_peak_kb(run + [str(big)]) - _peak_kb(run + [str(small)])) * 1000 / size
    assert extra(unanswered) < 6
    assert extra(answered) < 6


def test_a_push_of_a_large_literal_does_not_load_pandas():
    import subprocess
    import sys
    code = ("import io, sys\nfrom epsparql import Engine\n"
            "from epsparql.io.streams import StreamReader\ne = Engine()\n"
            "e.register('SELECT ?o WHERE { ?s <http://ex.org/p> ?o }')\n"
            "line = '<http://ex.org/a> <http://ex.org/p> \"' + 'y' * 100000 + '\" 1 .\\n'\n"
            "for b in StreamReader(io.BytesIO(line.encode()), 'nt').batches():\n"
            "    e.push_arrow(b)\n"
            "assert len(e.queries[0].results()) == 1\nprint('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False"


INT = "http://www.w3.org/2001/XMLSchema#integer"
#: integer objects the codec does not make bare numbers, or past 18 digits
ODD_INTEGERS = ["05", "-0", "+5", "1234567890123456789", "99999999999999999999", "-00"]


@pytest.mark.parametrize("seed", range(4))
def test_integer_objects_cross_as_bare_numbers(seed):
    """A batch whose objects are all canonical xsd:integer literals of at
    most 18 digits crosses them as one column of numbers (read in Arrow,
    not a dictionary entry each); one odd literal sends the batch the
    dictionary way; both give what push_many gives."""
    from epsparql.rdf.wire_arrow import arrow_batch
    r = random.Random(300 + seed)
    rows, t = [], 0.0
    for i in range(300):
        t += r.choice([0, 0.5, 1])
        val = r.choice([r.randrange(-50, 50), r.randrange(10 ** 17, 10 ** 18), 0])
        o = Literal(val) if i % 97 or seed % 2 else \
            Literal(r.choice(ODD_INTEGERS), datatype=URIRef(INT))
        rows.append((URIRef(f"{EX}k{r.randrange(4)}"), v, o, t, t, S1))
    canonical = table([x for x in rows if "\"" + str(x[2]) + "\"" in format_term(x[2])
                       and str(x[2]) not in ODD_INTEGERS][:40])
    assert arrow_batch(canonical).data[3][0] == "bare"
    odd = table([(URIRef(EX + "k0"), v, Literal(x, datatype=URIRef(INT)), 1, 1, S1)
                 for x in ODD_INTEGERS])
    assert isinstance(arrow_batch(odd).data[3], list)
    assert run(rows, "arrow") == run(rows, "rows")
