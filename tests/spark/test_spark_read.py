"""The read stage (epsparql/spark/read.py) against the stream reader.

Files of generated lines, the common shape mixed with every other thing a
line can be (escapes, tabs, comments, blank lines, CRLF, a byte order
mark, invalid UTF-8, decimal and xsd:dateTime times, two times, an end
before the start, relative IRIs, rdf:langString without a tag, blank
nodes, non-ASCII text, nqt streams), read in pieces of every size: the
rows must be those of :class:`epsparql.io.streams.StreamReader` over the
whole file (as terms, with their times and streams, in input order), and
the errors the same messages with the same file line numbers.  No Spark.
"""
from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from epsparql.io.streams import StreamFormatError, StreamReader
from epsparql.rdf.ntriples import parse_term
from epsparql.spark import read as R

NS = "http://example.org/"
GOOD = [
    '<{ns}a> <{ns}p> "1.5"^^<http://www.w3.org/2001/XMLSchema#double> {t} .',
    '<{ns}b> <{ns}p> <{ns}o> {t} .',
    '_:b1 <{ns}p> "x y  z"@en-GB {t} .',
    '<{ns}c> <{ns}p> "" {t} {t2} .',
    '<{ns}é> <{ns}p> "ünï ✓ <{ns}x>" {t}.5 .',
    '<{ns}d> <{ns}p> _:o.1 {t} .',
    '<{ns}e> <{ns}p> "tab\tinside" {t} .',
    '<{ns}f> <{ns}p> "a"@fr {t} {t2}.25 .',
    '<{ns}g> <{ns}p> "-007"^^<http://www.w3.org/2001/XMLSchema#integer> +{t} .',
]
OTHER = [
    '<{ns}a>\t<{ns}p>\t"tabs" {t} .',
    '  <{ns}a> <{ns}p> "lead" {t} .  # comment',
    '<{ns}a> <{ns}p> "esc\\"aped\\u00e9" {t} .',
    '<{ns}a\\u0041> <{ns}p> "iri escape" {t} .',
    '<{ns}a> <{ns}p> "when" 2024-01-01T09:30:00Z .',
    '<{ns}a> <{ns}p> "sci" 1.7e3 .',
    '<{ns}a> <{ns}p> "late end" {t2} {t} .',                 # end before start: error
    '<{ns}a> <{ns}p> "x"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString> {t} .',
    '<rel> <{ns}p> "relative" {t} .',
    '<{ns}a> <{ns}p> oops {t} .',
    '<{ns}a> <{ns}p> "no dot" {t}',
    '<{ns}a> <{ns}p> "x" 1234567890123456789 .',
    '# a comment',
    '',
    '   ',
    '<{ns}a> <{ns}p> "crlf" {t} .\r',
]
NQT = [
    '<{ns}a> <{ns}p> "v" <{ns}stream1> {t} .',
    '<{ns}a> <{ns}p> <{ns}o> <{ns}stream2> {t} {t2} .',
    '<{ns}a> <{ns}p> "x <{ns}y>" {t} .',
    '<{ns}a> <{ns}p> "x"^^<{ns}dt> <{ns}s> {t}.5 .',
    '<{ns}a> <{ns}p> "v" _:g {t} .',
]


def write_file(path: Path, seed: int, n: int, nqt: bool = False, bom: bool = False,
               gz: bool = False) -> None:
    rnd = random.Random(seed)
    lines = []
    for i in range(n):
        t = 1000 + i
        pool = GOOD if rnd.random() < 0.7 else OTHER + (NQT if nqt else [])
        lines.append(rnd.choice(pool).format(ns=NS, t=t, t2=t + 3).encode())
        if rnd.random() < 0.01:
            lines.append(b'<http://example.org/a> <http://example.org/p> "\xff\xfe" 5 .')
    data = (b"\xef\xbb\xbf" if bom else b"") + b"\n".join(lines)
    if rnd.random() < 0.5:
        data += b"\n"
    path.write_bytes(gzip.compress(data) if gz else data)


def reference(path: Path, fmt: str) -> tuple[list, list[str]]:
    errors: list[str] = []
    reader = StreamReader(str(path), fmt, on_error="skip", on_skip=lambda e: errors.append(str(e)))
    rows = [(r[0], r[1], r[2], float(r[3]), float(r[3] if r[4] is None else r[4]),
             r[5] if len(r) > 5 else None) for r in reader]
    return rows, errors


def ours(path: Path, fmt: str, piece_bytes: int, monkeypatch) -> tuple[list, list[str]]:
    monkeypatch.setattr(R, "MIN_PIECE", piece_bytes)
    monkeypatch.setattr(R, "MAX_PIECE", piece_bytes)
    monkeypatch.setattr(R, "BLOCK", max(64, piece_bytes // 3))
    pieces = R.plan_pieces([str(path)], fmt, 1000)
    rows, errors = [], []
    for piece in pieces:
        problems = R.Problems("skip")
        problems.KEEP = 10 ** 6
        for b in R.read_piece(piece, problems):
            for r in b.to_pylist():
                rows.append((r["seq"], (parse_term(r["s"]), parse_term(r["p"]),
                                        parse_term(r["o"]), r["start"], r["end"], r["stream"])))
        errors.extend(problems.messages)
    rows.sort(key=lambda x: x[0])
    return [r for _, r in rows], errors


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("piece_bytes", [97, 1000, 1 << 20])
def test_nt_pieces_read_as_the_stream_reader(tmp_path, monkeypatch, seed, piece_bytes):
    path = tmp_path / "s.nt"
    write_file(path, seed, 300, bom=seed == 1)
    want_rows, want_errors = reference(path, "nt")
    got_rows, got_errors = ours(path, "nt", piece_bytes, monkeypatch)
    assert got_rows == want_rows
    assert got_errors == want_errors
    assert len(want_errors) > 5 and len(want_rows) > 200


@pytest.mark.parametrize("seed", range(3))
def test_nqt_and_gzip(tmp_path, monkeypatch, seed):
    path = tmp_path / "s.nqt"
    write_file(path, seed, 300, nqt=True)
    want = reference(path, "nqt")
    assert any(r[5] for r in want[0])
    assert ours(path, "nqt", 500, monkeypatch) == want
    gz = tmp_path / "s.nqt.gz"
    write_file(gz, seed, 300, nqt=True, gz=True)
    assert ours(gz, "nqt", 500, monkeypatch) == reference(gz, "nqt")


def test_jsonl_and_csv_through_the_stream_reader(tmp_path, monkeypatch):
    from epsparql.io.streams import write_stream
    rows = [(parse_term(f"<{NS}s{i}>"), parse_term(f"<{NS}p>"), parse_term(f'"v{i}"'), i, None)
            for i in range(200)]
    for fmt in ("jsonl", "csv"):
        path = tmp_path / f"s.{fmt}"
        write_stream(rows, path, fmt)
        with path.open("a") as f:
            f.write("not a row\n")
        want = reference(path, fmt)
        assert len(want[0]) == 200 and len(want[1]) == 1
        assert ours(path, fmt, 700, monkeypatch) == want


def test_stop_names_the_file_line(tmp_path, monkeypatch):
    path = tmp_path / "s.nt"
    path.write_text("".join(f'<{NS}a> <{NS}p> "{i}" {i} .\n' for i in range(50))
                    + "<a> <b> oops 5 .\n")
    monkeypatch.setattr(R, "MIN_PIECE", 300)
    monkeypatch.setattr(R, "MAX_PIECE", 300)
    pieces = R.plan_pieces([str(path)], None, 100)
    assert len(pieces) > 3
    with pytest.raises(StreamFormatError) as err:
        for piece in pieces:
            list(R.read_piece(piece, R.Problems("stop")))
    assert str(err.value).startswith(f"{path}:51:")
