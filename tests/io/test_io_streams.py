"""Stream formats: N-Triples with times, JSON lines, CSV (epsparql.io.streams)."""
from __future__ import annotations

import gzip
import io
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import BNode, Literal, URIRef
XSD_NS = "http://www.w3.org/2001/XMLSchema#"

from epsparql.io import (FORMATS, StreamFormatError, format_term, format_time, guess_format,
                         parse_term, parse_time, read_stream, term_from_json, term_to_json,
                         write_stream)

from conftest import ROOT

EX = "http://example.org/"
XSD_INTEGER = URIRef(XSD_NS + "integer")
HOSTILE = [
    'say "hi"',
    "back\\slash \\n not a newline",
    "line1\nline2\r\nline3",
    "tab\there",
    "unicode: é ü 中文 😀 \U0001F600",
    "nul\x00 bell\x07 del\x7f nel\x85 ls\u2028 ps\u2029",
    "x" * 100_000,
    '"""',
    "\\",
    "",
    " leading and trailing ",
    "# not a comment",
    "ends with a dot .",
    "<http://not/an/iri>",
    '1"^^<http://www.w3.org/2001/XMLSchema#integer>',
    'a,b;c"d',
]


def hostile_rows():
    rows = []
    t = 1_700_000_000
    for i, text in enumerate(HOSTILE):
        rows.append((URIRef(EX + f"s{i}"), URIRef(EX + "p"), Literal(text), t + i, t + i + 5))
    rows += [
        (BNode("b1"), URIRef(EX + "label"), Literal("Grüße \"x\"", lang="de-AT"), 10, None),
        (URIRef(EX + "é/ü?q=1#f"), URIRef(EX + "p"), Literal("01", datatype=XSD_INTEGER,
                                                              normalize=False), 10.5, 11.25),
        (URIRef(EX + "a"), URIRef(EX + "p"), BNode("node-1.x"), -3, -1),
        (URIRef(EX + "a"), URIRef(EX + "p"), Literal("abc", datatype=XSD_INTEGER,
                                                     normalize=False), 0, 0),   # ill-typed
        (URIRef(EX + "a"), URIRef(EX + "p"), Literal("x", datatype=URIRef(EX + "my type")),
         2**40, 2**40 + 1),
        (URIRef(EX + "a"), URIRef(EX + "p"), URIRef("urn:isbn:0451450523"), 0.1, 0.30000000000000004),
    ]
    return rows


def same_rows(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x[:3] == y[:3]
        for u, v in zip(x[:3], y[:3]):
            assert type(u) is type(v)
            if isinstance(u, Literal):
                assert (str(u), u.language, u.datatype) == (str(v), v.language, v.datatype)
        assert x[3] == y[3]
        assert x[4] == y[4]


# ---------------------------------------------------------------------------
# terms

@pytest.mark.parametrize("text", HOSTILE)
def test_literal_term_round_trip(text):
    lit = Literal(text)
    nt = format_term(lit)
    assert "\n" not in nt and "\r" not in nt
    back = parse_term(nt)
    assert str(back) == text and back.language is None and back.datatype is None


def test_term_syntax():
    assert parse_term('"a\\tb\\u00E9\\U0001F600\\"\\\\"') == Literal('a\tbé😀"\\')
    assert parse_term('"chat"@fr-CA') == Literal("chat", lang="fr-CA")
    lit = parse_term('"007"^^<http://www.w3.org/2001/XMLSchema#integer>')
    assert str(lit) == "007" and lit.datatype == XSD_INTEGER
    assert parse_term("_:b0") == BNode("b0")
    assert parse_term("<http://ex/\\u00E9>") == URIRef("http://ex/é")
    # a UTF-16 surrogate pair written as two \u escapes is one character
    assert parse_term('"\\uD83D\\uDE00"') == Literal("😀")
    for bad in ('"unterminated', '"bad \\q escape"', "<relative>", "<http://ex/a b>",
                '"x"@', '"x"^^xsd:integer', "_:", "ex:prefixed", '"\\uD800"', "'single'",
                '"a" trailing'):
        with pytest.raises(ValueError):
            parse_term(bad)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.sampled_from([None, "en", "de-CH"]))
def test_any_string_round_trips(text, lang):
    lit = Literal(text, lang=lang)
    back = parse_term(format_term(lit))
    assert str(back) == text and back.language == lang


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               min_size=1).map(lambda s: "http://ex/" + s))
def test_any_iri_round_trips(iri):
    assert parse_term(format_term(URIRef(iri))) == URIRef(iri)


def test_sparql_json_terms():
    for node in (URIRef(EX + "a"), BNode("b"), Literal("x"), Literal("x", lang="en"),
                 Literal("1", datatype=XSD_INTEGER)):
        assert term_from_json(term_to_json(node)) == node
    assert term_to_json(Literal("x", lang="en")) == {"type": "literal", "value": "x", "xml:lang": "en"}
    assert term_from_json("<http://ex/a>") == URIRef("http://ex/a")
    with pytest.raises(ValueError):
        term_from_json({"type": "iri", "value": "http://ex/a"})


# ---------------------------------------------------------------------------
# times

def test_parse_time():
    assert parse_time("1700000000") == 1700000000
    assert parse_time("-3") == -3
    assert parse_time("12.5") == 12.5
    assert parse_time("1.7e9") == 1_700_000_000 and isinstance(parse_time("1.7e9"), int)
    assert parse_time("1970-01-01T00:00:00Z") == 0
    assert parse_time("1970-01-01T00:00:00") == 0                       # no timezone: UTC
    assert parse_time("2024-05-01T12:00:00.250+02:00") == 1714557600.25
    assert parse_time("1969-12-31T23:59:58.5Z") == -1.5
    assert parse_time("2024-02-29T00:00:00Z") == 1709164800
    assert parse_time("2023-12-31T24:00:00Z") == parse_time("2024-01-01T00:00:00Z")
    for bad in ("nan", "inf", "-Infinity", "1e999", "2023-02-29T00:00:00Z", "2024-01-01",
                "2024-01-01T25:00:00Z", "12:00", "1,5", "", "0x10", "1_000"):
        with pytest.raises(ValueError):
            parse_time(bad)


def test_format_time():
    assert format_time(5) == "5" and format_time(5.0) == "5" and format_time(0.1) == "0.1"
    assert format_time(1714557600.25, "iso") == "2024-05-01T10:00:00.25Z"
    assert format_time(-1.5, "iso") == "1969-12-31T23:59:58.5Z"
    for t in (0, 1.5, -7, 1714557600, 1e-3, 123456789.123):
        assert parse_time(format_time(t)) == t
        assert math.isclose(parse_time(format_time(t, "iso")), t, abs_tol=1e-6)


# ---------------------------------------------------------------------------
# round trips of whole streams

@pytest.mark.parametrize("fmt", FORMATS)
def test_stream_round_trip(tmp_path, fmt):
    rows = hostile_rows()
    path = tmp_path / f"s.{fmt}"
    assert write_stream(rows, path, fmt) == len(rows)
    back = list(read_stream(path))                  # format from the file name
    same_rows(rows, back)
    # again through a second write (canonical output is stable)
    path2 = tmp_path / f"t.{fmt}"
    write_stream(back, path2, fmt)
    assert path.read_bytes() == path2.read_bytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_iso_times_round_trip(tmp_path, fmt):
    rows = [(URIRef(EX + "a"), URIRef(EX + "p"), Literal(i), 1714557600 + i * 0.5, None)
            for i in range(5)]
    path = tmp_path / f"s.{fmt}"
    write_stream(rows, path, fmt, time_format="iso")
    text = path.read_text()
    assert "2024-05-01T10:00:00.5Z" in text
    same_rows(rows, list(read_stream(path)))


def test_the_three_example_files_hold_the_same_stream():
    d = ROOT / "examples" / "formats"
    streams = [list(read_stream(d / f"readings.{fmt}")) for fmt in FORMATS]
    assert len(streams[0]) == 32
    same_rows(streams[0], streams[1])
    same_rows(streams[0], streams[2])


def test_gzip_text_object_and_crlf_bom(tmp_path):
    rows = hostile_rows()[:4]
    buf = io.StringIO()
    write_stream(rows, buf, "nt")
    text = buf.getvalue()
    gz = tmp_path / "s.nt.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write(text)
    same_rows(rows, list(read_stream(gz)))
    same_rows(rows, list(read_stream(io.StringIO(text), "nt")))
    crlf = ("\ufeff" + text.replace("\n", "\r\n")).encode("utf-8")
    same_rows(rows, list(read_stream(io.BytesIO(crlf), "nt")))
    # CSV and JSON lines with CRLF too
    for fmt in ("csv", "jsonl"):
        b = io.StringIO()
        write_stream(rows, b, fmt)
        data = ("\ufeff" + b.getvalue().replace("\n", "\r\n")).encode("utf-8")
        same_rows(rows, list(read_stream(io.BytesIO(data), fmt)))


def test_standard_input(monkeypatch):
    data = b"<http://ex/a> <http://ex/p> \"x\" 1 .\n<http://ex/a> <http://ex/p> \"y\" 2 3 .\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    rows = list(read_stream("-"))
    assert [(str(r[2]), r[3], r[4]) for r in rows] == [("x", 1, None), ("y", 2, 3)]


def test_line_format_details():
    text = """# a comment line

   <http://ex/a>\t<http://ex/p>   "x"   1   2   .   # trailing comment
<http://ex/a> <http://ex/p> "5." 5.
<http://ex/a> <http://ex/p> <http://ex/o> 2024-05-01T10:00:00Z 2024-05-01T10:01:00.5Z.
_:b <http://ex/p> "x"@en 7 .
"""
    rows = list(read_stream(io.StringIO(text), "nt"))
    assert [(r[3], r[4]) for r in rows] == [(1, 2), (5, None), (1714557600, 1714557660.5), (7, None)]
    assert str(rows[1][2]) == "5."


def test_jsonl_details():
    lines = [
        {"s": "<http://ex/a>", "p": "<http://ex/p>", "o": '"x"', "start": 1},
        {"s": {"type": "uri", "value": "http://ex/a"}, "p": "<http://ex/p>",
         "o": {"type": "literal", "value": "2", "datatype": XSD_NS + "integer"},
         "start": "2024-05-01T10:00:00Z", "end": None, "extra": "ignored"},
        {"s": "_:b", "p": "<http://ex/p>", "o": "_:c", "start": "3", "end": 4.5},
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\n\n"
    rows = list(read_stream(io.StringIO(text), "jsonl"))
    assert [(r[3], r[4]) for r in rows] == [(1, None), (1714557600, None), (3, 4.5)]
    assert rows[1][2] == Literal("2", datatype=XSD_INTEGER)


def test_csv_details():
    text = 'start,o,s,p,note\n5,"""x""",<http://ex/a>,<http://ex/p>,ignored\n\n6,_:o,_:s,<http://ex/p>,\n'
    rows = list(read_stream(io.StringIO(text), "csv"))
    assert [(str(r[0]), str(r[2]), r[3], r[4]) for r in rows] == [
        ("http://ex/a", "x", 5, None), ("s", "o", 6, None)]
    with pytest.raises(StreamFormatError, match=r"header.*missing start"):
        list(read_stream(io.StringIO("s,p,o\n<http://ex/a>,<http://ex/p>,<http://ex/o>\n"),
                         "csv", on_error="skip"))


# ---------------------------------------------------------------------------
# malformed lines

GOOD = '<http://ex/a> <http://ex/p> "ok" {t} .'
BAD_NT = [
    ('<http://ex/a> <http://ex/p> "unterminated 1 .', "closing quote"),
    ('<http://ex/a> <http://ex/p> "bad \\q" 1 .', "bad escape"),
    ('<http://ex/a> <http://ex/p> <http://ex/o> .', "missing start time"),
    ('<http://ex/a> <http://ex/p> <http://ex/o> 1', "'.'"),
    ('<http://ex/a> <http://ex/p> <http://ex/o> 5 3 .', "end time 3 is before start time 5"),
    ('<http://ex/a> <http://ex/p> <http://ex/o> nan .', "not finite"),
    ('<http://ex/a> <http://ex/p> <http://ex/o> 1e400 .', "not finite"),
    ('<http://ex/a> <http://ex/p> <http://ex/o> yesterday .', "neither a number"),
    ('<http://ex/a> <http://ex/p> <http://ex/o> 1 2 3 .', "at most two times"),
    ('<a> <http://ex/p> <http://ex/o> 1 .', "relative IRI"),
    ('"lit" <http://ex/p> <http://ex/o> 1 .', "as the subject"),
    ('<http://ex/a> _:p <http://ex/o> 1 .', "as the predicate"),
    ('<http://ex/a> <http://ex/p> <http://ex/o>1 .', "whitespace"),
    ('<http://ex/a><http://ex/p> <http://ex/o> 1 .', "whitespace after the subject"),
    ('<http://ex/a> <http://ex/p> "x"@ 1 .', "language tag"),
    ('<http://ex/a> <http://ex/p> "x"^^ex:t 1 .', "datatype"),
]


@pytest.mark.parametrize("line,message", BAD_NT)
def test_malformed_nt_line_stop(line, message):
    text = GOOD.format(t=1) + "\n# comment\n" + line + "\n" + GOOD.format(t=9) + "\n"
    reader = read_stream(io.StringIO(text), "nt", on_error="stop")
    got = []
    with pytest.raises(StreamFormatError) as info:
        for row in reader:
            got.append(row)
    assert len(got) == 1                                 # the row before is delivered
    err = info.value
    assert err.line == 3 and message in err.message
    assert str(err).startswith(f"{err.path}:3")


def test_malformed_lines_skip_counts_and_goes_on(tmp_path):
    lines = [GOOD.format(t=0)]
    for i, (line, _) in enumerate(BAD_NT):
        lines += [line, GOOD.format(t=i + 1)]
    path = tmp_path / "bad.nt"
    path.write_text("\n".join(lines) + "\n")
    seen = []
    reader = read_stream(path, on_error="skip", on_skip=seen.append)
    rows = list(reader)
    assert len(rows) == len(BAD_NT) + 1
    assert reader.skipped == len(BAD_NT) == len(seen) == len(reader.errors)
    assert [e.line for e in seen] == [2 * i + 2 for i in range(len(BAD_NT))]
    assert all(e.path == str(path) for e in seen)
    assert str(seen[0]).startswith(f"{path}:2:")


def test_invalid_utf8_line(tmp_path):
    path = tmp_path / "enc.nt"
    path.write_bytes(GOOD.format(t=1).encode() + b"\n<http://ex/a> <http://ex/p> \"\xff\xfe\" 2 .\n"
                     + GOOD.format(t=3).encode() + b"\n")
    with pytest.raises(StreamFormatError, match="UTF-8") as info:
        list(read_stream(path))
    assert info.value.line == 2
    reader = read_stream(path, on_error="skip")
    assert len(list(reader)) == 2 and reader.skipped == 1
    csv_path = tmp_path / "enc.csv"
    csv_path.write_bytes(b"s,p,o,start\n<http://ex/a>,<http://ex/p>,\"\"\"\xff\"\"\",1\n"
                         b"<http://ex/a>,<http://ex/p>,_:x,2\n")
    reader = read_stream(csv_path, on_error="skip")
    assert len(list(reader)) == 1 and reader.errors[0].line == 2


@pytest.mark.parametrize("line,message", [
    ("not json", "invalid JSON"),
    ("[1, 2]", "JSON object"),
    ('{"s": "<http://ex/a>", "p": "<http://ex/p>", "o": "\\"x\\""}', 'missing "start"'),
    ('{"s": "<http://ex/a>", "p": "\\"p\\"", "o": "\\"x\\"", "start": 1}', "predicate must be an IRI"),
    ('{"s": "\\"s\\"", "p": "<http://ex/p>", "o": "\\"x\\"", "start": 1}', "subject must be"),
    ('{"s": "<http://ex/a>", "p": "<http://ex/p>", "o": "x", "start": 1}', '"o"'),
    ('{"s": "<http://ex/a>", "p": "<http://ex/p>", "o": "\\"x\\"", "start": true}', "start time"),
    ('{"s": "<http://ex/a>", "p": "<http://ex/p>", "o": "\\"x\\"", "start": 5, "end": 1}', "before"),
    ('{"s": "<http://ex/a>", "p": "<http://ex/p>", "o": "\\"x\\"", "start": "soon"}', "neither"),
])
def test_malformed_jsonl_lines(line, message):
    good = json.dumps({"s": "<http://ex/a>", "p": "<http://ex/p>", "o": '"ok"', "start": 0})
    text = good + "\n" + line + "\n" + good.replace('"start": 0', '"start": 9') + "\n"
    with pytest.raises(StreamFormatError) as info:
        list(read_stream(io.StringIO(text), "jsonl"))
    assert info.value.line == 2 and message in info.value.message
    reader = read_stream(io.StringIO(text), "jsonl", on_error="skip")
    assert len(list(reader)) == 2 and reader.skipped == 1


@pytest.mark.parametrize("line,message", [
    ('<http://ex/a>,<http://ex/p>,"""x""",1,2,3', "expected 5 fields"),
    ('<http://ex/a>,<http://ex/p>,x,1,', '"o"'),
    ('<http://ex/a>,<http://ex/p>,"""x""",,', "start"),
    ('<http://ex/a>,<http://ex/p>,"""x""",4,2', "before"),
    ('<http://ex/a>,<http://ex/p>,"""x""",inf,', "not finite"),
])
def test_malformed_csv_lines(line, message):
    text = 's,p,o,start,end\n<http://ex/a>,<http://ex/p>,"""ok""",0,\n' + line + \
        '\n<http://ex/a>,<http://ex/p>,"""ok""",9,\n'
    with pytest.raises(StreamFormatError) as info:
        list(read_stream(io.StringIO(text), "csv"))
    assert info.value.line == 3 and message in info.value.message
    reader = read_stream(io.StringIO(text), "csv", on_error="skip")
    assert len(list(reader)) == 2 and reader.skipped == 1


def test_reading_is_lazy(tmp_path):
    """The first rows come before the reader ever sees the end of the file."""
    path = tmp_path / "lazy.nt"
    path.write_text(GOOD.format(t=1) + "\n" + "garbage\n" * 3)
    it = iter(read_stream(path))
    assert next(it)[3] == 1
    with pytest.raises(StreamFormatError):
        next(it)


def test_guess_format_and_bad_arguments(tmp_path):
    assert guess_format("a.nt") == guess_format("a.ntt") == guess_format("-") == "nt"
    assert guess_format("a.JSONL.gz") == guess_format("x.ndjson") == "jsonl"
    assert guess_format("a.csv") == "csv" and guess_format("a.txt") == "nt"
    with pytest.raises(ValueError):
        read_stream("a.nt", "turtle")
    with pytest.raises(ValueError):
        read_stream("a.nt", on_error="ignore")
    with pytest.raises(FileNotFoundError):
        list(read_stream(tmp_path / "missing.nt"))
