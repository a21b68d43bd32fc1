"""The read stage: stream files to Arrow batches of triples, in parallel pieces.

A plain line-format file is cut into byte ranges (:class:`Piece`) on the
driver from its size alone (nothing is read there); a piece owns the lines
that *start* in its range, as Hadoop's line reader does, so pieces never
share or lose a line.  Each piece is read in blocks of whole lines that
become Arrow arrays without a Python object per line:

* the common line shape (``<s> <p> o start [end] .`` with single spaces,
  no escapes, number times; ``nqt`` with an optional stream IRI) is
  recognised by one RE2 match per line and cut into columns with Arrow's
  string kernels (:func:`_fast_rows`);
* blank and comment lines are dropped the same way;
* every other line (escapes, tabs, ``xsd:dateTime`` times, malformed
  lines, invalid UTF-8) goes to :class:`epsparql.io.streams.StreamReader`,
  one line at a time: the same rows, the same errors, the same
  ``--on-error`` behaviour as ``epsparql run``.

JSON lines and CSV files are read by ``StreamReader`` whole (a JSON lines
file in pieces too), their rows packed into Arrow batches.  Line numbers
are counted lazily: a piece knows its lines' ordinals, and the number of
lines before it is counted only when one of its lines is reported.

A row's ``seq`` is (piece index << 36) + its ordinal in the piece: the
input order, which the engine stage uses to order rows with equal times.
"""
from __future__ import annotations

import gzip
import io
import os
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from ..rdf.ntriples import RDF_LANGSTRING

#: Plain line-format files larger than this are read in several pieces.
MIN_PIECE = 8 << 20
#: ... and no piece is larger than this.
MAX_PIECE = 128 << 20
#: Bytes read at a time (a block of whole lines becomes one Arrow batch).
BLOCK = 8 << 20

TRIPLE_COLUMNS = ("s", "p", "o", "start", "end", "stream", "seq")

_IRI = r'<[A-Za-z][A-Za-z0-9+.\-]*:[^\x00-\x20<>"{}|^`\\]*>'
_BNODE = (r"_:(?:[A-Za-z0-9_]|[^\x00-\x7f])"
          r"(?:(?:[A-Za-z0-9_\-.]|[^\x00-\x7f])*(?:[A-Za-z0-9_\-]|[^\x00-\x7f]))?")
_LITERAL = r'"[^"\\\n\r]*"(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\^\^' + _IRI + r")?"
_TIME = r"[+-]?[0-9]{1,15}(?:\.[0-9]{1,15})?"
_TERMS = f"(?:{_IRI}|{_BNODE}) {_IRI} (?:{_IRI}|{_BNODE}|{_LITERAL})"
#: The common shape of an ``nt`` line (a subset of what streams.py's fast
#: pattern accepts: single spaces, absolute IRIs, no escapes).
FAST_NT = f"^{_TERMS} {_TIME}(?: {_TIME})? \\.$"
#: ... and of an ``nqt`` line: an optional stream IRI before the times.
FAST_NQT = f"^{_TERMS}(?: {_IRI})? {_TIME}(?: {_TIME})? \\.$"
#: A line that is only whitespace or a comment (no row, no error).
BLANK = r"^[ \t]*(?:#.*)?$"
_TWO_TIMES = f" {_TIME}$"
_STREAM_AT_END = f" {_IRI}$"
_LANGSTRING_TAIL = f'"^^<{RDF_LANGSTRING}>'


@dataclass(frozen=True)
class Piece:
    """Lines of ``path`` starting in bytes [first, end) (``end`` -1: to the
    end of the file) in stream format ``format``; ``gz``: gzip-compressed
    (then always the whole file)."""

    idx: int
    path: str
    first: int
    end: int
    format: str
    gz: bool = False


def plan_pieces(files: Sequence[str], format: str | None, parallelism: int) -> list[Piece]:
    """The read tasks: a plain ``nt``, ``nqt`` or ``jsonl`` file is cut into
    about ``parallelism`` pieces per file (each MIN_PIECE to MAX_PIECE
    bytes), others are one piece each.  Only file sizes are looked at."""
    from ..io.streams import guess_format
    out: list[Piece] = []
    for path in files:
        fmt = format or guess_format(path)
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        size = os.path.getsize(path)
        if fmt == "csv" or gz or size <= MIN_PIECE:
            out.append(Piece(len(out), path, 0, -1, fmt, gz))
            continue
        step = min(MAX_PIECE, max(MIN_PIECE, -(-size // max(1, parallelism))))
        for first in range(0, size, step):
            end = first + step
            out.append(Piece(len(out), path, first, -1 if end >= size else end, fmt))
    return out


class Problems:
    """Malformed lines of one read task: the number skipped and the first
    few messages (``--on-error skip``), or the first one raised (``stop``)."""

    KEEP = 10

    def __init__(self, on_error: str) -> None:
        self.on_error = on_error
        self.skipped = 0
        self.messages: list[str] = []

    def add(self, message: str) -> None:
        self.skipped += 1
        if len(self.messages) < self.KEEP:
            self.messages.append(message)


def read_piece(piece: Piece, problems: Problems, *, with_stream: bool = True,
               data: bytes | None = None) -> Iterator[Any]:
    """Arrow record batches of the piece's triples (:data:`TRIPLE_COLUMNS`:
    N-Triples texts, times as float64 seconds, ``end`` = ``start`` when
    the line has one time, ``stream`` null on the default stream).
    ``data``: the whole file's bytes, already read (streaming)."""
    lines = _PieceLines(piece, data)
    if piece.format in ("nt", "nqt"):
        for block in lines.blocks():
            yield from _block_rows(piece, block, lines, problems, with_stream)
    else:
        yield from _reader_rows(piece, lines, problems, with_stream)


# -- lines ------------------------------------------------------------------------
class _PieceLines:
    """The bytes of a piece (of a file, or ``data`` in memory) as blocks of
    whole lines, and the number of lines before the piece (counted on
    first use)."""

    def __init__(self, piece: Piece, data: bytes | None = None) -> None:
        self.piece = piece
        self.data = data
        self.start = 0                 # byte offset of the piece's first line
        self.ordinal = 0               # lines of the piece handed out so far
        self._before: int | None = 0 if piece.first == 0 else None

    def _open(self) -> Any:
        p = self.piece
        if self.data is not None:
            return io.BytesIO(self.data)
        return gzip.open(p.path, "rb") if p.gz else open(p.path, "rb")

    def blocks(self) -> Iterator[bytes]:
        """Blocks of whole lines (each but maybe the file's last ending in
        ``\\n``); a UTF-8 byte order mark at the start of the file dropped."""
        p = self.piece
        with self._open() as f:
            if p.first > 0:
                f.seek(p.first - 1)
                f.readline()                   # the line byte first-1 is in is not ours
            self.start = pos = f.tell()
            carry = b""
            head = p.first == 0
            while p.end < 0 or pos < p.end:
                want = BLOCK if p.end < 0 else min(BLOCK, p.end - pos)
                chunk = f.read(want)
                if not chunk:
                    break
                pos += len(chunk)
                if p.end >= 0 and pos >= p.end and not chunk.endswith(b"\n"):
                    chunk += f.readline()      # our last line runs past the end
                data = carry + chunk
                if head:
                    if data.startswith(b"\xef\xbb\xbf"):
                        data = data[3:]
                    head = False
                cut = data.rfind(b"\n") + 1
                if cut:
                    yield data[:cut]
                carry = data[cut:]
            if carry:
                yield carry

    def raw_lines(self) -> Iterator[bytes]:
        """The piece's lines one by one (for the stream reader)."""
        for block in self.blocks():
            yield from io.BytesIO(block)

    def before(self) -> int:
        """Lines of the file before the piece (read once, when asked)."""
        if self._before is None:
            n, left = 0, self.start
            with self._open() as f:
                while left > 0:
                    buf = f.read(min(left, 16 << 20))
                    if not buf:
                        break
                    n += buf.count(b"\n")
                    left -= len(buf)
            self._before = n
        return self._before


# -- the fast path ------------------------------------------------------------------
def _line_array(block: bytes) -> Any:
    """A block's lines as an Arrow binary array (line ends kept), zero copy."""
    import numpy as np
    import pyarrow as pa
    buf = np.frombuffer(block, dtype=np.uint8)
    ends = np.flatnonzero(buf == 10) + 1
    if not len(ends) or ends[-1] != len(block):
        ends = np.append(ends, len(block))
    offsets = np.empty(len(ends) + 1, dtype=np.int32)
    offsets[0] = 0
    offsets[1:] = ends
    return pa.Array.from_buffers(pa.binary(), len(ends),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(block)])


def _texts(lines: Any) -> tuple[Any, Any]:
    """The lines as strings without their line end (``rstrip("\\r\\n")``), and
    a mask of those that are valid UTF-8 (None: all are)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    try:
        text = lines.cast(pa.string())
        valid = None
    except pa.ArrowInvalid:                    # some line is not UTF-8: find which
        raw = lines.to_pylist()
        ok = []
        for b in raw:
            try:
                b.decode("utf-8")
                ok.append(True)
            except UnicodeDecodeError:
                ok.append(False)
        valid = pa.array(ok)
        text = pa.array([b.decode("utf-8") if k else "" for b, k in zip(raw, ok)], pa.string())
    return pc.utf8_rtrim(text, characters="\r\n"), valid


def _block_rows(piece: Piece, block: bytes, lines: _PieceLines, problems: Problems,
                with_stream: bool) -> Iterator[Any]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    raw = _line_array(block)
    text, valid = _texts(raw)
    base = lines.ordinal                    # the ordinal of the block's first line
    lines.ordinal += len(raw)
    fast = pc.match_substring_regex(text, FAST_NQT if piece.format == "nqt" else FAST_NT)
    if valid is not None:
        fast = pc.and_(fast, valid)
    is_fast = fast.to_numpy(zero_copy_only=False)
    every = bool(is_fast.all())
    rows = _fast_rows(text if every else text.filter(fast), piece.format == "nqt")
    at = np.flatnonzero(is_fast)                   # the fast lines' positions in the block
    # the fast shape, but an error to report: an end before the start, a
    # datatype rdf:langString (the stream reader says what is wrong)
    wrong = pc.or_(pc.less(rows["end"], rows["start"]),
                   pc.ends_with(rows["o"], _LANGSTRING_TAIL)).to_numpy(zero_copy_only=False)
    cols = rows
    if wrong.any():
        keep = pa.array(~wrong)
        cols = {k: v.filter(keep) for k, v in rows.items()}
    cols["seq"] = pa.array((piece.idx << 36) + base + at[~wrong], pa.int64())
    if not with_stream:
        cols["stream"] = pa.nulls(len(cols["seq"]), pa.string())
    if len(cols["seq"]):
        yield _batch(cols)
    # everything else but blank lines, line by line through the stream reader
    rest = np.flatnonzero(~is_fast)
    if len(rest):
        blank = pc.match_substring_regex(text.take(pa.array(rest)), BLANK)
        if valid is not None:
            blank = pc.and_(blank, valid.take(pa.array(rest)))
        rest = rest[~blank.to_numpy(zero_copy_only=False)]
    todo = np.union1d(rest, at[wrong])
    if len(todo):
        picked = raw.take(pa.array(todo)).to_pylist()
        yield from _slow_lines(piece, [(int(i) + base, b) for i, b in zip(todo, picked)],
                               lines, problems, with_stream)


def _fast_rows(text: Any, nqt: bool) -> dict[str, Any]:
    """The columns of lines of the fast shape: cut at single spaces (a
    subject and predicate never hold one, an object only inside its
    quotes), the times and stream taken from the right."""
    import pyarrow as pa
    import pyarrow.compute as pc
    el = pc.list_element
    parts = pc.split_pattern(text, " ", max_splits=2)
    s, p, rest = el(parts, 0), el(parts, 1), el(parts, 2)
    head, last = _rsplit(pc.utf8_slice_codeunits(rest, 0, -2))      # " ." gone
    two = pc.match_substring_regex(head, _TWO_TIMES)              # "o [stream] t1" t2
    before, t1 = _rsplit(head)
    head = pc.if_else(two, before, head)
    t1 = pc.if_else(two, t1, last)
    t2 = pc.if_else(two, last, t1)
    stream = pa.nulls(len(text), pa.string())
    if nqt:
        named = pc.match_substring_regex(head, _STREAM_AT_END)
        before, g = _rsplit(head)
        stream = pc.if_else(named, pc.utf8_slice_codeunits(g, 1, -1), stream)
        head = pc.if_else(named, before, head)
    return {"s": s, "p": p, "o": head, "start": pc.cast(t1, pa.float64()),
            "end": pc.cast(t2, pa.float64()), "stream": stream}


def _rsplit(text: Any) -> tuple[Any, Any]:
    """Each string cut at its last space: (what is before, the last word);
    ("", the string) when it has no space."""
    import pyarrow.compute as pc
    spaced = pc.binary_join_element_wise(" ", text, "")       # at least one space
    parts = pc.split_pattern(spaced, " ", max_splits=1, reverse=True)
    return pc.utf8_slice_codeunits(pc.list_element(parts, 0), 1), pc.list_element(parts, 1)


def _batch(cols: dict[str, Any]) -> Any:
    import pyarrow as pa
    return pa.RecordBatch.from_arrays([cols[c] for c in TRIPLE_COLUMNS], names=list(TRIPLE_COLUMNS))


# -- the stream reader ----------------------------------------------------------------
def _located(err: Any, lines: _PieceLines) -> Any:
    """A reader's error with the line number counted from the file's start."""
    from ..io.streams import StreamFormatError
    line = None if err.line is None else err.line + lines.before()
    return StreamFormatError(err.message, lines.piece.path, line, err.column)


def _report(err: Any, lines: _PieceLines, problems: Problems) -> None:
    err = _located(err, lines)
    if problems.on_error == "stop":
        raise err
    problems.add(str(err))


def _reader(source: Any, piece: Piece, skipped: list) -> Any:
    """The stream reader over ``source``, its errors collected in ``skipped``
    (reported with the file's line numbers by :func:`_report`)."""
    from ..io.streams import StreamReader
    return StreamReader(source, piece.format, on_error="skip", on_skip=skipped.append,
                        name=piece.path)


def _slow_lines(piece: Piece, todo: list[tuple[int, bytes]], lines: _PieceLines,
                problems: Problems, with_stream: bool) -> Iterator[Any]:
    """Lines the fast path left (ordinal in the piece, raw bytes), each read
    by the stream reader as the line it is (``epsparql run``'s rows and
    errors)."""
    from ..rdf.ntriples import format_term
    out = _Columns(with_stream)
    for ordinal, raw in todo:
        skipped: list = []
        # a blank line first: the reader treats a first line's BOM specially
        reader = _reader(io.BytesIO(b"\n" + raw), piece, skipped)
        reader.line = ordinal - 1                 # the line's number, counted in the piece
        for row in reader:
            out.add(piece, ordinal, format_term(row[0]), format_term(row[1]),
                    format_term(row[2]), row[3], row[4], row[5] if len(row) > 5 else None)
        for err in skipped:
            _report(err, lines, problems)
    if out.seq:
        yield out.batch()


def _reader_rows(piece: Piece, lines: _PieceLines, problems: Problems, with_stream: bool,
                 chunk: int = 50_000) -> Iterator[Any]:
    """A JSON lines or CSV piece, through the stream reader (rows as texts)."""
    skipped: list = []
    reader = _reader(_IterFile(lines.raw_lines()), piece, skipped)
    out = _Columns(with_stream)
    for row in reader.texts():
        for err in skipped:
            _report(err, lines, problems)
        skipped.clear()
        out.add(piece, reader.line - 1, *row[:5], row[5] if len(row) > 5 else None)
        if len(out.seq) >= chunk:
            yield out.batch()
            out = _Columns(with_stream)
    for err in skipped:
        _report(err, lines, problems)
    if out.seq:
        yield out.batch()


class _IterFile(io.RawIOBase):
    """Lines of an iterator as a binary file the stream reader iterates."""

    def __init__(self, it: Iterator[bytes]) -> None:
        self._it = it

    def readable(self) -> bool:
        return True

    def __iter__(self) -> Iterator[bytes]:
        return self._it


class _Columns:
    """Rows collected column by column (the stream reader's path)."""

    def __init__(self, with_stream: bool) -> None:
        self.with_stream = with_stream
        self.cols: dict[str, list] = {c: [] for c in TRIPLE_COLUMNS}
        self.seq = self.cols["seq"]

    def add(self, piece: Piece, ordinal: int, s: str, p: str, o: str, t1: Any, t2: Any,
            stream: str | None) -> None:
        c = self.cols
        c["s"].append(s)
        c["p"].append(p)
        c["o"].append(o)
        c["start"].append(float(t1))
        c["end"].append(float(t1 if t2 is None else t2))
        c["stream"].append(stream if self.with_stream else None)
        c["seq"].append((piece.idx << 36) + ordinal)

    def batch(self) -> Any:
        import pyarrow as pa
        types = {"start": pa.float64(), "end": pa.float64(), "seq": pa.int64()}
        return pa.RecordBatch.from_arrays(
            [pa.array(self.cols[c], types.get(c, pa.string())) for c in TRIPLE_COLUMNS],
            names=list(TRIPLE_COLUMNS))


__all__ = ["Piece", "Problems", "plan_pieces", "read_piece", "TRIPLE_COLUMNS", "FAST_NT",
           "FAST_NQT"]
