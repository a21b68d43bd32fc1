"""StreamReader.batches against the row reader: the same rows (terms, times,
streams, line numbers), the same errors and counters, on generated streams
of every format, read from every kind of source."""
from __future__ import annotations

import csv
import gzip
import io
import json
import subprocess
import sys

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batch_reference import both, by_batches, by_rows
from epsparql.io import StreamFormatError, StreamReader
from epsparql.io.stream_batches import SCHEMA

XSD = "http://www.w3.org/2001/XMLSchema#"
LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"

# ---------------------------------------------------------------------------
# generated lines: mostly the common shape, and every kind of exception to it

iri_body = st.one_of(
    st.sampled_from(["http://ex/a", "http://ex/p", "http://ex/é/ü?q=1#f", "urn:isbn:0451450523",
                     XSD + "integer", "mailto:x@y.z", "http://ex/中", "a:", "h+t.t-p:x"]),
    st.text(alphabet="ab/é:#.~%-_😀", max_size=6).map(lambda t: "http://ex/" + t))
iri = iri_body.map(lambda b: f"<{b}>")
bad_iri = st.sampled_from(["<a>", "<#x>", "<é>", "<1http://x>", "<>", "<http://a b>", "<http://a>b>",
                           "<http://ex/\\u00E9>", "<http://ex/\\u0020>", "<http://ex/\\x>", "<http:/{}>",
                           "<http://ex", "http://ex/a"])
bnode = st.sampled_from(["_:b1", "_:node-1.x", "_:é", "_:x_y", "_:B", "_:1", "_:a.", "_:", "_:-a",
                         "_:a😀"])
plain_lex = st.text(st.characters(blacklist_characters='"\\\n\r', blacklist_categories=("Cs",)),
                    max_size=10)
escape = st.sampled_from(["\\u00E9", "\\u00e9", '\\"', "\\\\", "\\n", "\\t", "\\r", "\\'",
                          "\\uD83D\\uDE00", "\\U0001F600", "\\uD83D", "\\uDE00x", "\\x41",
                          "\\U00110000", "\\u12", "\\"])
lex = st.one_of(plain_lex, st.lists(st.one_of(plain_lex, escape), max_size=4).map("".join))
lang = st.sampled_from(["en", "en-GB", "EN", "fr-x-1", "1en", "en-", "é"])
datatype = st.one_of(iri, st.sampled_from([f"<{LANGSTRING}>", "<integer>", f"<{XSD}date>"]))
literal = st.one_of(
    lex.map(lambda t: f'"{t}"'),
    st.tuples(lex, lang).map(lambda x: f'"{x[0]}"@{x[1]}'),
    st.tuples(lex, datatype).map(lambda x: f'"{x[0]}"^^{x[1]}'),
    st.sampled_from(['"unclosed', '"a"b"', '"x"@', '"x"^^', "'single'", '"tab\there"']))
node = st.one_of(iri, iri, bnode, bad_iri)
obj = st.one_of(iri, bnode, literal, literal, bad_iri)
number = st.one_of(
    st.integers(-10**6, 10**6), st.integers(1_600_000_000, 1_800_000_000),
    st.integers(-10**15 + 1, 10**15 - 1)).map(str)
time = st.one_of(
    number, number, number,
    st.decimals(min_value=-10**12, max_value=10**12, allow_nan=False, places=3).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.sampled_from(["0", "-0", "+0", "+5", "007", "-0.0", "0.1", "12.5", "-3.25", "1.7e9",
                     "1E3", ".5", "12.", "2024-01-01T09:30:00Z", "2024-05-01T12:00:00.250+02:00",
                     "2024-02-30T00:00:00Z", "2024-01-01T24:00:00", "1969-12-31T23:59:59.5Z",
                     "123456789012345", "999999999999999.75", "1234567890123456", "9007199254740992",
                     "12345678901234567.5", "nan", "inf", "-inf", "1e999", "x", "1:2"]))
sep = st.sampled_from([" "] * 12 + ["\t", "  ", " \t"])
end_of_statement = st.sampled_from([" ."] * 12 + [".", " . ", " .\t", " . # note", " .#c", " ", "",
                                                  " . .", " .x"])


@st.composite
def statement(draw, stream: bool) -> str:
    parts = [draw(node), draw(st.one_of(iri, iri, iri, bad_iri, bnode)), draw(obj)]
    if stream and draw(st.booleans()):
        parts.append(draw(st.one_of(iri, iri, iri, bnode, bad_iri)))
    parts.append(draw(time))
    if draw(st.booleans()):
        parts.append(draw(time))
    if draw(st.integers(0, 30)) == 0:
        parts.append(draw(time))                  # three times: an error
    text = parts[0]
    for p in parts[1:]:
        text += draw(sep) + p
    if draw(st.integers(0, 20)) == 0:
        text = draw(sep) + text
    return text + draw(end_of_statement)


@st.composite
def mutated(draw, stream: bool) -> str:
    line = draw(statement(stream))
    at = draw(st.integers(0, len(line)))
    how = draw(st.sampled_from(["cut", "drop", "insert"]))
    if how == "cut":
        return line[:at]
    if how == "drop":
        return line[:at] + line[at + 1:]
    return line[:at] + draw(st.sampled_from(['"', "\\", "<", ">", " ", "#", "\t", ".", "é", "\x00",
                                             "@", "^", "_:", "\x85", "\u2028"])) + line[at:]


def line_kind(stream: bool) -> st.SearchStrategy[str]:
    return st.one_of(
        *[statement(stream)] * 8,
        mutated(stream),
        st.sampled_from(["", "   ", "\t", "# a comment", "  # indented", "#", "\x85", " . "]),
        st.text(max_size=15).filter(lambda t: "\n" not in t and "\r" not in t))


@st.composite
def stream_bytes(draw, fmt: str) -> bytes:
    """A stream: lines of ``fmt`` with LF or CRLF, perhaps a byte order
    mark, perhaps no final line break, perhaps bytes that are not UTF-8."""
    if fmt in ("nt", "nqt"):
        lines = draw(st.lists(line_kind(fmt == "nqt"), max_size=25))
    elif fmt == "jsonl":
        lines = draw(st.lists(jsonl_line(), max_size=20))
    else:
        lines = draw(csv_lines())
    out = b""
    for line in lines:
        raw = line.encode("utf-8", "surrogatepass")
        if draw(st.integers(0, 40)) == 0:
            at = draw(st.integers(0, len(raw)))
            raw = raw[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + raw[at:]
        out += raw + draw(st.sampled_from([b"\n"] * 8 + [b"\r\n", b"\r\r\n"]))
    if out and draw(st.integers(0, 5)) == 0:
        out = out.rstrip(b"\r\n")
    if draw(st.integers(0, 8)) == 0:
        out = b"\xef\xbb\xbf" + out
    return out


def json_time(t: str):
    try:
        return json.loads(t)
    except ValueError:
        return t


@st.composite
def jsonl_line(draw) -> str:
    kind = draw(st.integers(0, 12))
    if kind == 0:
        return draw(st.sampled_from(["", "  ", "{", "[1]", '{"s": "<http://ex/a>"}', "null", "{}x"]))
    obj = {"s": draw(node), "p": draw(st.one_of(iri, iri, bnode)), "o": draw(obj_json()),
           "start": draw(st.one_of(time.map(json_time), time))}
    if draw(st.booleans()):
        obj["end"] = draw(st.one_of(time.map(json_time), st.none()))
    if draw(st.booleans()):
        obj["stream"] = draw(st.one_of(iri, iri_body, st.just(""), st.none(), bad_iri,
                                       st.just({"type": "uri", "value": "http://ex/g"})))
    if draw(st.integers(0, 10)) == 0:
        del obj[draw(st.sampled_from(sorted(obj)))]
    return json.dumps(obj, ensure_ascii=draw(st.booleans()))


def obj_json():
    return st.one_of(obj, obj, st.just({"type": "literal", "value": "v", "xml:lang": "en"}),
                     st.just({"type": "bnode", "value": "b"}), st.just(3))


@st.composite
def csv_lines(draw) -> list[str]:
    cols = draw(st.sampled_from([["s", "p", "o", "start", "end", "stream"], ["s", "p", "o", "start"],
                                 ["S", " p", "o", "start", "end"], ["s", "p", "o"], ["s", "s", "p", "o", "start"]]))
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    for _ in range(draw(st.integers(0, 15))):
        kind = draw(st.integers(0, 10))
        if kind == 0:
            out.write(draw(st.sampled_from(["", "a,b", '"unclosed,x', "x" * 3])) + "\n")
            continue
        values = {"s": draw(node), "p": draw(iri), "o": draw(st.one_of(obj, st.just('"two\nlines"'))),
                  "start": draw(time), "end": draw(st.one_of(time, st.just(""))),
                  "stream": draw(st.one_of(iri_body, st.just(""), bad_iri))}
        w.writerow([values.get(c.strip().lower(), "") for c in cols])
    return out.getvalue().split("\n")[:-1] if out.getvalue() else []


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------
# the differential tests

@pytest.mark.parametrize("fmt", ["nt", "nqt", "jsonl", "csv"])
@pytest.mark.parametrize("on_error", ["stop", "skip"])
@SETTINGS
@given(data=st.data())
def test_batches_give_what_the_rows_give(fmt, on_error, data):
    stream = data.draw(stream_bytes(fmt), label="stream")
    size = data.draw(st.integers(1, 6), label="size")
    block = data.draw(st.sampled_from([None, 1, 2, 3, 5, 8]), label="block_lines")
    # 0: every block cut in columns; None: small blocks to the row parser, as
    # a service's short inputs are read
    small = data.draw(st.sampled_from([0, 0, None]), label="small_block")
    rows, batches = both(stream, fmt, on_error, size, block, small_block=small)
    assert batches == rows


class Trickle(io.RawIOBase):
    """A binary source that gives at most ``step`` bytes a read, as a slow
    pipe or a socket does (so lines and the byte order mark come split)."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.pos, self.step = data, 0, step

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = min(len(b), self.step, len(self.data) - self.pos)
        b[:n] = self.data[self.pos:self.pos + n]
        self.pos += n
        return n


@pytest.mark.parametrize("fmt", ["nt", "nqt", "jsonl", "csv"])
@SETTINGS
@given(data=st.data())
def test_sources_that_give_a_few_bytes_at_a_time(fmt, data):
    stream = data.draw(stream_bytes(fmt), label="stream")
    step = data.draw(st.integers(1, 9), label="step")
    kind = data.draw(st.sampled_from(["raw", "buffered", "gzip"]), label="kind")

    def source(b: bytes):
        raw = Trickle(b if kind != "gzip" else gzip.compress(b), step)
        if kind == "raw":
            return raw
        buffered = io.BufferedReader(raw, buffer_size=16)
        return buffered if kind == "buffered" else gzip.GzipFile(fileobj=buffered)

    rows, batches = both(stream, fmt, "skip", data.draw(st.integers(1, 4)), None, source)
    assert batches == rows


@pytest.mark.parametrize("fmt", ["nt", "nqt", "jsonl", "csv"])
@SETTINGS
@given(data=st.data())
def test_text_sources(fmt, data):
    stream = data.draw(stream_bytes(fmt), label="stream")
    text = stream.decode("utf-8", "replace")
    for make in (lambda: io.StringIO(text, newline="\n"), lambda: io.StringIO(text, newline=None)):
        assert by_batches(make(), fmt, "skip", 3, 6) == by_rows(make(), fmt, "skip")


# ---------------------------------------------------------------------------
# files, gzip, standard input, big streams

def common_lines(n: int, start: int = 1_700_000_000) -> str:
    out = []
    for i in range(n):
        o = [f'"{i}"^^<{XSD}integer>', f"<http://ex/o{i % 7}>", f'"word {i} é"@en', "_:b"][i % 4]
        g = " <http://ex/stream>" if i % 3 == 0 else ""
        end = f" {start + i + 5}" if i % 2 else ""
        out.append(f"<http://ex/s{i % 11}> <http://ex/p> {o}{g} {start + i}{end} .\n")
    return "".join(out)


@pytest.mark.parametrize("fmt", ["nt", "nqt"])
def test_a_big_stream_in_many_batches(tmp_path, fmt):
    text = common_lines(30_000)
    if fmt == "nt":
        text = text.replace(" <http://ex/stream>", "")
    text = text.replace("\n", "\n# a comment\n", 3) + "<a> <http://ex/p> <http://ex/o> 1 .\n"
    lines = text.split("\n")
    lines[20_000] = lines[20_000].replace('"', '"\\u00E9', 1)        # an escape in the middle
    text = "\n".join(lines)
    path = tmp_path / f"big.{fmt}"
    path.write_text(text, encoding="utf-8")
    rows = by_rows(path, fmt, "skip")
    assert len(rows.rows) == 30_000 and len(rows.skipped) == 1
    assert by_batches(path, fmt, "skip", 5000) == rows
    assert by_batches(path, fmt, "skip", 777) == rows
    gz = tmp_path / f"big.{fmt}.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    assert by_batches(gz, fmt, "skip", 5000) == by_rows(gz, fmt, "skip")


def test_batch_sizes_and_schema(tmp_path):
    path = tmp_path / "s.nqt"
    path.write_text(common_lines(12_345))
    reader = StreamReader(path)
    sizes = [b.num_rows for b in reader.batches(5000)]
    assert sum(sizes) == 12_345 and max(sizes) == 5000 and reader.rows == 12_345
    assert reader.line == 12_345 and reader.skipped == 0
    first = next(iter(StreamReader(path).batches(3)))
    assert first.schema == SCHEMA
    assert first.to_pylist() == [
        {"s": "<http://ex/s0>", "p": "<http://ex/p>", "o": f'"0"^^<{XSD}integer>',
         "start": 1_700_000_000.0, "end": None, "stream": "http://ex/stream", "line": 1},
        {"s": "<http://ex/s1>", "p": "<http://ex/p>", "o": "<http://ex/o1>",
         "start": 1_700_000_001.0, "end": 1_700_000_006.0, "stream": None, "line": 2},
        {"s": "<http://ex/s2>", "p": "<http://ex/p>", "o": '"word 2 é"@en',
         "start": 1_700_000_002.0, "end": None, "stream": None, "line": 3}]


def test_escapes_come_back_canonical():
    data = ('<http://ex/\\u00E9> <http://ex/p> "caf\\u00E9 \\"x\\" \\uD83D\\uDE00"@fr 1 .\n'
            '_:b <http://ex/p> "tab\\there"^^<http://ex/t\\u0079pe> 2 3 .\n').encode()
    batch = next(iter(StreamReader(io.BytesIO(data), "nt").batches()))
    assert batch.column("s").to_pylist() == ["<http://ex/é>", "_:b"]
    assert batch.column("o").to_pylist() == ['"café \\"x\\" 😀"@fr', '"tab\\there"^^<http://ex/type>']


def test_times_exactly_as_the_row_reader():
    times = ["-0", "+7", "0.1", "-3.25", "1.7e9", "2024-01-01T09:30:00Z", "1969-12-31T23:59:59.5Z",
             "123456789012345", "999999999999999.75", "9007199254740992", "12345678901234567.5",
             "-0.000", "+0.5", "007.50", "0.30000000000000004", "0.000000000000000000000000000000000001",
             # exactly halfway between two doubles (ties to even), and just above
             "1.00000000000000011102230246251565404236316680908203125",
             "1.00000000000000011102230246251565404236316680908203125000000001",
             "123456789012345.678901234567890123456789", "4503599627370495.5"]
    data = "".join(f"<http://ex/a> <http://ex/p> <http://ex/o> {t} .\n" for t in times).encode()
    got = next(iter(StreamReader(io.BytesIO(data), "nt").batches())).column("start").to_pylist()
    want = [float(r[3]) for r in StreamReader(io.BytesIO(data), "nt")]
    assert [repr(x) for x in got] == [repr(x) for x in want]
    assert repr(got[0]) == "0.0"


def test_an_integer_time_beyond_float64_is_an_error_not_a_rounding():
    data = (b"<http://ex/a> <http://ex/p> <http://ex/o> 1 .\n"
            b"<http://ex/a> <http://ex/p> <http://ex/o> 9007199254740993 .\n"
            b"<http://ex/a> <http://ex/p> <http://ex/o> 3 .\n")
    reader = StreamReader(io.BytesIO(data), "nt", on_error="skip", name="big.nt")
    rows = [r for b in reader.batches() for r in b.column("line").to_pylist()]
    assert rows == [1, 3] and reader.skipped == 1
    assert str(reader.errors[0]) == ("big.nt:2: time 9007199254740993 is beyond 2^53 seconds, where a "
                                     "float64 time column cannot hold it exactly")


def test_stop_gives_the_rows_before_the_error_then_raises():
    data = common_lines(10).encode() + b"<http://ex/a> <http://ex/p> <http://ex/o> 5 4 .\n" + \
        common_lines(3).encode()
    reader = StreamReader(io.BytesIO(data), "nqt", name="e.nqt")
    it = reader.batches(4)
    got = [next(it).num_rows for _ in range(3)]
    assert got == [4, 4, 2]
    with pytest.raises(StreamFormatError) as e:
        next(it)
    assert str(e.value) == "e.nqt:11: end time 4 is before start time 5"
    assert (reader.rows, reader.line) == (10, 11)
    assert by_rows(io.BytesIO(data), "nqt").stop[-1] == "s.stream:11: end time 4 is before start time 5"


def test_truncated_gzip_gives_the_lines_before_then_raises(tmp_path):
    whole = gzip.compress(common_lines(5000).encode())
    path = tmp_path / "cut.nqt.gz"
    path.write_bytes(whole[:len(whole) * 2 // 3])
    want, got = [], []
    with pytest.raises(EOFError):
        for row in StreamReader(path):
            want.append(row)
    with pytest.raises(EOFError):
        for batch in StreamReader(path).batches(1000):
            got.extend(batch.column("line").to_pylist())
    assert len(want) > 1000 and got == list(range(1, len(want) + 1))


def test_bad_sizes():
    for size in (0, -1, True, 2.5):
        with pytest.raises(ValueError):
            StreamReader(io.BytesIO(b""), "nt").batches(size)


def test_empty_streams():
    for data in (b"", b"\xef\xbb\xbf", b"\n\n", b"# only a comment", b"\xef\xbb"):
        assert list(StreamReader(io.BytesIO(data), "nqt", on_error="skip").batches()) == []
        assert by_batches(io.BytesIO(data), "nqt", "skip") == by_rows(io.BytesIO(data), "nqt", "skip")


def test_arrow_columns_types():
    batch = next(iter(StreamReader(io.BytesIO(common_lines(3).encode()), "nqt").batches()))
    assert [f.type for f in batch.schema] == [pa.string()] * 3 + [pa.float64()] * 2 + [pa.string(), pa.int64()]
    assert batch.column("end").null_count == 2 and batch.column("stream").null_count == 2


def test_a_lone_surrogate_in_a_term_of_a_text_source_is_refused():
    # rows take it into the term; an Arrow string cannot hold it
    text = "<http://ex/a\udcff> <http://ex/p> <http://ex/o> 1 .\n# \udcff a comment\n"
    reader = StreamReader(io.StringIO(text), "nt", on_error="skip", name="t.nt")
    assert list(reader.batches()) == [] and reader.line == 2
    assert [str(e) for e in reader.errors] == ["t.nt:1: not valid UTF-8 (a term holds a lone surrogate)"]
    assert len(list(StreamReader(io.StringIO(text), "nt"))) == 1


def test_reading_batches_does_not_import_pandas():
    # pyarrow imports pandas for pa.array and to_numpy: half a second of every run
    code = ("import io, sys\n"
            "from epsparql.io import StreamReader\n"
            "data = " + repr(common_lines(50) + '<a> <http://ex/p> "\\u00E9" 1 .\n') + ".encode()\n"
            "rows = sum(b.num_rows for b in StreamReader(io.BytesIO(data), 'nqt', on_error='skip').batches(7))\n"
            "print(rows, 'pandas' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "50 False\n"


def test_a_line_longer_than_a_block():
    from epsparql.io import line_blocks
    long = "x" * (line_blocks.MAX_BLOCK + 1000)
    data = (f'<http://ex/a> <http://ex/p> "{long}" 7 .\n' + common_lines(2)).encode()
    got = by_batches(io.BytesIO(data), "nqt", "stop", 3)
    assert len(got.rows) == 3 and got.rows[0][2] == ("Literal", long, None, None)
    assert got == by_rows(io.BytesIO(data), "nqt")


def test_a_blank_node_label_ending_in_a_unicode_space_is_read_alike():
    """Found by the property above (CI, 2026-11-28): U+0085 ends a blank
    node label (any non-ASCII character may); the batches' text of the
    term, parsed back, kept it only once parse_term stopped stripping
    Unicode white space (N-Triples' is space and tab)."""
    data = (b'\xef\xbb\xbf<http://ex/a> <http://ex/a> <http://ex/a> 0 0 .\n'
            b'<http://ex/::::::> <http://ex/a> _:x_y\xc2\x85 0 0 .')
    for small in (0, None):
        rows, batches = both(data, "nqt", "skip", 1, None, small_block=small)
        assert batches == rows and rows.rows[-1][2] == ("BNode", "x_y\x85")


@pytest.mark.parametrize("on_error", ["stop", "skip"])
def test_an_integer_time_a_float64_cannot_hold_is_refused_by_both_readers(on_error):
    """Found by the property above (2026-11-29): the row reader took the
    time 12345678901234561 (beyond 2**53: no float64 holds it) as the
    exact integer while the batch reader refused it; both refuse it now,
    with the same message, and take 2**60 (which float64 holds)."""
    lines = {"nt": ['<http://ex/a> <http://ex/p> "x"@en  {t} .'],
             "nqt": ["<http://ex/a> <http://ex/p> <http://ex/o> <http://ex/s> 5 {t} ."],
             "jsonl": ['{{"s": "<http://ex/a>", "p": "<http://ex/p>", "o": "<http://ex/o>", '
                       '"start": {t}}}'],
             "csv": ["s,p,o,start", "<http://ex/a>,<http://ex/p>,<http://ex/o>,{t}"]}
    for fmt, template in lines.items():
        for t, refused in (("12345678901234561", True), ("-" + "9" * 400, True), (str(2**60), False)):
            data = ("\n".join(x.format(t=t) for x in template) + "\n").encode()
            rows, batches = both(data, fmt, on_error, 1, None, small_block=0)
            assert batches == rows, (fmt, t)
            problems = rows.skipped if on_error == "skip" else [rows.stop] if rows.stop else []
            assert (len(problems) == 1 and "beyond 2^53 seconds" in str(problems[0])) == refused, \
                (fmt, t, rows)
            assert len(rows.rows) == (0 if refused else 1), (fmt, t)
