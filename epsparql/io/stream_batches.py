"""A stream read as Arrow record batches of term texts (:meth:`StreamReader.batches`).

Why: the engine takes a batch of N-Triples texts in one crossing into
Prolog, so reading must not build a Python object per row (rows of rdflib
terms cost 4–12 µs a line, bench/reader.py).  Here the input is read in
blocks of lines (:mod:`epsparql.io.line_blocks`); ``nt`` and ``nqt`` lines
of the common shape (single spaces, no escapes, no comment, times as plain
decimal numbers) are checked by one RE2 match each, built from the
patterns of :mod:`epsparql.rdf.ntriples`, and cut into columns with numpy
over the block's bytes.  Every other line
(and every ``jsonl`` and ``csv`` line) goes through the row reader's own
line parser, so rows, errors and their ``path:line:column`` are those of
iterating the :class:`~epsparql.io.streams.StreamReader`.

A block becomes a batch or a few: a live pipe's rows come in a short
batch as soon as their lines are complete instead of waiting for a full
one.
"""
from __future__ import annotations

from typing import IO, Callable, Iterable, Iterator, NamedTuple, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..rdf.ntriples import (BNODE_LABEL_PATTERN, IRI_ABSOLUTE_PLAIN_PATTERN, LANG_PATTERN,
                            RDF_LANGSTRING, STRING_PLAIN_PATTERN, TermSyntaxError, format_term)
from .line_blocks import LineBlocks, byte_positions, decoded_lines
from .stream_lines import (Row, StreamFormatError, check_time_exact, parse_jsonl_line, parse_nqt_line,
                           parse_nt_line)

__all__ = ["SCHEMA", "Counters", "read_batches"]

#: The columns of every batch.
SCHEMA = pa.schema([("s", pa.string()), ("p", pa.string()), ("o", pa.string()),
                    ("start", pa.float64()), ("end", pa.float64()), ("stream", pa.string()),
                    ("line", pa.int64())])

_BLOCK_LINES = 16384       # lines of a block (RE2 and numpy pay per call), in whole batches
#: A block of fewer lines goes through the row reader's parser whole: the
#: columnar cut costs about 0.7 ms a block however small (compiling the RE2
#: pattern is half of it), the row parser about 0.15 ms and 5 µs a line
#: (a service reads many small inputs: one MQTT message, a short request).
_SMALL_BLOCK = 128
#: ... unless it holds more bytes than this (a long line, a large literal):
#: the row parser would make an rdflib term, an N-Triples text and its
#: UTF-8 bytes of it (the reader's peak was 7x a 50 MB line's size; the
#: columnar cut keeps one Arrow copy of it)
_SMALL_BYTES = 1 << 16


# ---------------------------------------------------------------------------
# times: the one place that turns the row reader's times into float64

#: A time the fast path takes: at most 15 integer digits, so that an
#: integral time is exact in float64, as the row reader's int is.
_TIME = r"[+-]?[0-9]{1,15}(?:\.[0-9]+)?"


def _time_column(texts: pa.Array) -> np.ndarray:
    """Seconds of texts matching ``_TIME``: Arrow's cast rounds correctly,
    as ``float()`` does; ``+ 0.0`` makes ``-0`` the row reader's 0."""
    return _numpy(texts.cast(pa.float64()), np.float64) + 0.0


def _seconds(t: int | float) -> float:
    """A time of the row reader as float64 (which refused any it cannot
    hold exactly: stream_lines.check_time_exact)."""
    check_time_exact(t)
    return float(t)


# ---------------------------------------------------------------------------
# Arrow arrays to and from numpy through their buffers: zero-copy, and
# without ``pa.array`` or ``to_numpy``, which import pandas (half a second
# of every run that reads a stream)

def _numpy(arr: pa.Array, dtype: type) -> np.ndarray:
    """The values of a primitive array without nulls."""
    size = np.dtype(dtype).itemsize
    return np.frombuffer(arr.buffers()[1], dtype, count=len(arr), offset=arr.offset * size)


def _bools(arr: pa.Array) -> np.ndarray:
    """A boolean array without nulls as numpy booleans."""
    bits = np.unpackbits(np.frombuffer(arr.buffers()[1], np.uint8), bitorder="little")
    return bits[arr.offset:arr.offset + len(arr)].astype(bool)


def _bitmap(valid: np.ndarray | None) -> pa.Buffer | None:
    return None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))


def _arrow(values: np.ndarray, type: pa.DataType, valid: np.ndarray | None = None) -> pa.Array:
    """A primitive Arrow array over ``values`` (null where not ``valid``)."""
    if type == pa.bool_():
        return pa.Array.from_buffers(type, len(values), [None, _bitmap(values)])
    nulls = 0 if valid is None else len(values) - int(valid.sum())
    return pa.Array.from_buffers(type, len(values), [_bitmap(valid), pa.py_buffer(values)],
                                 null_count=nulls)


def _texts(values: list[str | None]) -> pa.Array:
    """A string array of Python strings (None: null)."""
    n = len(values)
    raw = [b"" if v is None else v.encode("utf-8") for v in values]
    data = b"".join(raw)
    off = np.zeros(n + 1, _offset_type(len(data)))
    np.cumsum(np.fromiter(map(len, raw), np.int64, n), out=off[1:])
    valid = np.fromiter((v is not None for v in values), bool, n)
    return _string_type(len(data)).from_buffers(n, pa.py_buffer(off), pa.py_buffer(data),
                                                _bitmap(valid), n - int(valid.sum())).cast(pa.string())


# ---------------------------------------------------------------------------
# the common line shape

_IRI = IRI_ABSOLUTE_PLAIN_PATTERN
_BNODE = "_:" + BNODE_LABEL_PATTERN
_LITERAL = STRING_PLAIN_PATTERN + "(?:" + LANG_PATTERN + r"|\^\^" + _IRI + ")?"


def _line_pattern(stream: bool) -> str:
    """RE2: a whole line (with its line break) of the common shape."""
    return ("^(?:" + _IRI + "|" + _BNODE + ") " + _IRI + " (?:" + _IRI + "|" + _BNODE + "|"
            + _LITERAL + ")" + ("(?: " + _IRI + ")?" if stream else "") + " " + _TIME
            + "(?: " + _TIME + r")? \.\r*\n$")


_LINE = {"nt": _line_pattern(False), "nqt": _line_pattern(True)}     # jsonl, csv: none
_PARSE = {"nt": parse_nt_line, "nqt": parse_nqt_line, "jsonl": parse_jsonl_line}
_LANGSTRING_DT = "^^<" + RDF_LANGSTRING + ">"     # refused by the row reader: left to it
_SPACE, _NL, _QUOTE, _LT = 32, 10, 34, 60


def _offset_type(size: int) -> type:
    return np.int32 if size < 2**31 else np.int64


def _string_type(size: int) -> type:
    """Arrow strings whose offsets can address ``size`` bytes."""
    return pa.StringArray if size < 2**31 else pa.LargeStringArray


def _strings(buf: pa.Buffer, a: np.ndarray, b: np.ndarray,
             valid: np.ndarray | None = None) -> pa.Array:
    """The strings ``buf[a[i]:b[i]]`` (ranges in increasing order, not
    overlapping): one offsets array alternates them with the gaps
    between, and ``take`` keeps every other one."""
    n = len(a)
    if n == 0:
        return _texts([])
    off = np.empty(2 * n, _offset_type(buf.size))
    off[0::2] = a
    off[1::2] = b
    both = _string_type(buf.size).from_buffers(2 * n - 1, pa.py_buffer(off), buf)
    out = both.take(_arrow(np.arange(0, 2 * n - 1, 2), pa.int64())).cast(pa.string())
    if valid is None:
        return out
    return pa.StringArray.from_buffers(n, out.buffers()[1], out.buffers()[2],
                                       pa.py_buffer(np.packbits(valid, bitorder="little")),
                                       n - int(valid.sum()))


def _separators(a: np.ndarray, sp: np.ndarray, quotes: bool) -> np.ndarray:
    """The spaces ``sp`` of a block of the common shape less those inside
    a literal (a line has at most one, its only two quotes)."""
    if not quotes:
        return sp
    qt = byte_positions(a, _QUOTE)
    lo = np.searchsorted(sp, qt[0::2])   # each literal's spaces are sp[lo:hi]
    k = np.searchsorted(sp, qt[1::2]) - lo
    inside = int(k.sum())
    if not inside:
        return sp
    has = k > 0
    lo, k = lo[has], k[has]
    keep = np.ones(len(sp), bool)
    keep[np.repeat(lo - (np.cumsum(k) - k), k) + np.arange(inside)] = False
    return sp[keep]


def _cut(data: bytes, a: np.ndarray, nl: np.ndarray, stream: bool
         ) -> tuple[list[pa.Array], np.ndarray]:
    """The columns s, p, o, start, end, stream of a block whose every line
    is of the common shape (so its fields are separated by single spaces,
    spaces inside a literal aside), and the lines the row reader refuses
    although they have the shape (end before start, rdf:langString)."""
    n = len(nl)
    sp = _separators(a, byte_positions(a, _SPACE), b'"' in data)
    cnt = np.diff(np.searchsorted(sp, nl), prepend=0)
    first = np.cumsum(cnt) - cnt          # each line's first separator in sp
    start = np.empty(n, np.int64)
    start[0] = 0
    start[1:] = nl[:-1] + 1
    s0, s1, s2 = sp[first], sp[first + 1], sp[first + 2]
    g = (a[s2 + 1] == _LT) if stream else np.zeros(n, bool)   # a stream after the object
    gi = g.astype(np.int64)
    t1a = sp[first + 2 + gi] + 1
    t1b = sp[first + 3 + gi]
    has_end = cnt == 5 + gi
    buf = pa.py_buffer(data)
    o = _strings(buf, s1 + 1, s2)
    t1 = _time_column(_strings(buf, t1a, t1b))
    if has_end.any():
        t2a = np.where(has_end, t1b + 1, t1a)  # no end: T1 again, masked
        t2b = np.where(has_end, sp[first + cnt - 1], t1b)
        t2 = _time_column(_strings(buf, t2a, t2b))
        bad = has_end & (t2 < t1)
        end = _arrow(t2, pa.float64(), has_end)
    else:
        bad = np.zeros(n, bool)
        end = _arrow(np.zeros(n), pa.float64(), has_end)
    if _LANGSTRING_DT.encode() in data:
        bad |= _bools(pc.ends_with(o, _LANGSTRING_DT))
    if g.any():
        streams = _strings(buf, np.where(g, s2 + 2, s2), np.where(g, sp[first + 3] - 1, s2), g)
    else:
        streams = _texts([None] * n)
    cols = [_strings(buf, start, s0), _strings(buf, s0 + 1, s1), o, _arrow(t1, pa.float64()), end,
            streams]
    return cols, np.flatnonzero(bad)


# ---------------------------------------------------------------------------
# a block's rows

def _row_texts(row: Row) -> tuple:
    """A row of the row reader as the columns s, p, o, start, end, stream.
    A text source may hold lone surrogates (text decoded with
    ``surrogateescape``), which Arrow strings cannot: such a row is refused
    as the same bytes read as bytes are."""
    out = (format_term(row[0]), format_term(row[1]), format_term(row[2]), _seconds(row[3]),
           None if row[4] is None else _seconds(row[4]), row[5] if len(row) > 5 else None)
    try:
        "".join((out[0], out[1], out[2], out[5] or "")).encode("utf-8")
    except UnicodeEncodeError:
        raise TermSyntaxError("not valid UTF-8 (a term holds a lone surrogate)") from None
    return out


def _rows_batch(rows: list[tuple]) -> pa.RecordBatch:
    """Rows ``(s, p, o, start, end, stream, line)`` as a batch."""
    s, p, o, start, end, stream, line = zip(*rows) if rows else ((),) * 7
    ends = np.array([0.0 if t is None else t for t in end], np.float64)
    return pa.RecordBatch.from_arrays(
        [_texts(list(s)), _texts(list(p)), _texts(list(o)),
         _arrow(np.array(start, np.float64), pa.float64()),
         _arrow(ends, pa.float64(), np.array([t is not None for t in end], bool)),
         _texts(list(stream)), _arrow(np.array(line, np.int64), pa.int64())], schema=SCHEMA)


def _common_rows(data: bytes, a: np.ndarray, nl: np.ndarray, fmt: str, first_line: int
                 ) -> tuple[pa.RecordBatch | None, np.ndarray]:
    """The rows of a block's lines of the common shape, and which lines
    gave them (a boolean a line; none for a block that is not UTF-8)."""
    n = len(nl)
    ok = np.zeros(n, bool)
    if fmt not in _LINE or not n:
        return None, ok
    offsets = np.empty(n + 1, _offset_type(len(data)))
    offsets[0] = 0
    offsets[1:] = nl + 1
    lines = _string_type(len(data)).from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        lines.validate(full=True)
    except pa.ArrowInvalid:              # not UTF-8: every line to the row parser
        return None, ok
    ok = _bools(pc.match_substring_regex(lines, _LINE[fmt]))
    keep = np.flatnonzero(ok)
    if not len(keep):
        return None, ok
    if len(keep) < n:                    # the lines of the shape, as a block of their own
        a = a[np.repeat(ok, np.diff(offsets))]
        data = a.tobytes()
        nl = byte_positions(a, _NL)
    cols, bad = _cut(data, a, nl, fmt == "nqt")
    batch = pa.RecordBatch.from_arrays(cols + [_arrow(keep + first_line, pa.int64())], schema=SCHEMA)
    if len(bad):
        good = np.ones(len(keep), bool)
        good[bad] = False
        batch = batch.filter(_arrow(good, pa.bool_()))
        ok[keep[bad]] = False
    return batch, ok


def _block_rows(job: _Job, data: bytes | None, texts: list[str] | None,
                nl: np.ndarray | None, first_line: int
                ) -> tuple[pa.RecordBatch | None, StreamFormatError | None, int]:
    """The rows of one block of complete lines, the error that stopped
    the reading in it (``on_error="stop"``; the rows are those before it),
    and the number of lines.  Lines of the common shape are cut out; the
    others go through the row reader's line parser in line order, their
    errors counted or raised as iterating does."""
    if data is not None:
        a = np.frombuffer(data, np.uint8)
        if nl is None:                   # a text source's lines, encoded
            nl = byte_positions(a, _NL)
        fast, ok = (None, np.zeros(len(nl), bool)) \
            if len(nl) < job.small and len(data) <= _SMALL_BYTES else \
            _common_rows(data, a, nl, job.reader.format, first_line)
    else:
        fast, ok = None, np.zeros(len(texts), bool)
    slow = np.flatnonzero(~ok)
    if len(slow) and texts is None:
        texts = decoded_lines(data)
    rows, error = _slow_rows(job, texts, slow, first_line)
    if error is not None and fast is not None:
        fast = fast.filter(_arrow(_numpy(fast.column("line"), np.int64) < job.reader.line, pa.bool_()))
    if rows:
        extra = _rows_batch(rows)
        fast = extra if fast is None or not fast.num_rows else \
            pa.Table.from_batches([fast, extra]).sort_by("line").combine_chunks().to_batches()[0]
    return fast, error, len(ok)


def _slow_rows(job: _Job, texts: list[str | None], which: Iterable[int],
               first_line: int) -> tuple[list[tuple], StreamFormatError | None]:
    """Lines through the row reader's parser: rows with their line
    numbers, and the error that stopped the reading (or None)."""
    reader = job.reader
    parse = _PARSE[reader.format]
    rows: list[tuple] = []
    try:
        for i in which:
            reader.line = first_line + int(i)
            text = texts[i]
            if text is None:
                job.report("not valid UTF-8", None)
                continue
            try:
                row = parse(text)
                if row is not None:
                    rows.append(_row_texts(row) + (reader.line,))
            except TermSyntaxError as e:
                job.report(e.message, e.col)
    except StreamFormatError as e:
        return rows, e
    return rows, None


# ---------------------------------------------------------------------------
# batching: one block, one batch

class Counters(Protocol):
    """What a reading keeps up to date on its reader (a StreamReader): the
    lines read and the rows given out, as iterating the reader does."""
    format: str
    line: int
    rows: int

    def close(self) -> None: ...


class _Job(NamedTuple):
    """One batched reading: the reader's counters, and what it hands over:
    how a malformed line is reported (counted, kept, or raised as a
    :class:`StreamFormatError`) and how its CSV lines become rows."""
    reader: Counters
    report: Callable[[str, int | None], None]
    csv_rows: Callable[[Iterable[str | None]], Iterator[Row]]
    small: int = _SMALL_BLOCK       # blocks of fewer lines: the row parser's


def read_batches(reader: Counters, size: int, *, start: Callable[[], IO],
                 report: Callable[[str, int | None], None],
                 csv_rows: Callable[[Iterable[str | None]], Iterator[Row]],
                 block_lines: int | None = None,
                 small_block: int | None = None) -> Iterator[pa.RecordBatch]:
    """The rows of a stream as record batches of at most ``size`` rows
    (see :meth:`StreamReader.batches`, which calls this): ``start()``
    opens the source (``reader.close()`` closes it), ``report(message,
    column)`` reports a malformed line of ``reader.line``, ``csv_rows``
    turns CSV lines into rows.  ``block_lines``: at most that many lines a
    block (default a multiple of ``size`` near ``_BLOCK_LINES``); the rows
    do not depend on it, which the tests check with small ones.
    ``small_block``: blocks of fewer lines go through the row parser whole
    (default ``_SMALL_BLOCK``; 0: none, as the tests ask to check the
    columnar cut on small blocks)."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"size must be a positive number of rows, got {size!r}")
    small = _SMALL_BLOCK if small_block is None else small_block
    return _batches(_Job(reader, report, csv_rows, small), start, size,
                    block_lines or size * max(1, _BLOCK_LINES // size))


def _batches(job: _Job, start: Callable[[], IO], size: int, block_lines: int
             ) -> Iterator[pa.RecordBatch]:
    reader = job.reader
    f = start()
    try:
        source = LineBlocks(f)
        parts = _csv_batches(job, source, block_lines) if reader.format == "csv" else \
            _line_batches(job, source, block_lines)
        for batch, error in parts:
            for at in range(0, 0 if batch is None else batch.num_rows, size):
                piece = batch.slice(at, size)
                reader.rows += piece.num_rows
                yield piece
            if error is not None:        # after the rows read before it
                raise error
    finally:
        reader.close()


#: What the readers below give: rows read (or None) and the error that
#: stops the reading (or None).
_Part = tuple[pa.RecordBatch | None, BaseException | None]


def _line_batches(job: _Job, source: LineBlocks, lines: int) -> Iterator[_Part]:
    """``nt``, ``nqt`` and ``jsonl``: the rows of each block of lines."""
    reader = job.reader
    line = 1
    encode = reader.format in _LINE
    while True:
        got = source.block(lines, encode)
        if got is None:
            return
        batch, error, n = _block_rows(job, *got, line)
        del got                          # (the block's bytes: not kept while the batch is used)
        line += n
        if error is None:
            reader.line = line - 1
        yield batch, error
        if error is not None:
            return


def _csv_batches(job: _Job, source: LineBlocks, lines: int) -> Iterator[_Part]:
    """``csv`` (a record may span lines): the row reader's CSV rows, a
    batch for each block of lines."""
    left = [0]                           # lines of the current block not yet read

    def texts() -> Iterator[str | None]:
        while True:
            got = source.block(lines, encode=False)
            if got is None:
                return
            block = got[1] if got[1] is not None else decoded_lines(got[0])
            left[0] = len(block)
            for text in block:
                left[0] -= 1
                yield text

    rows: list[tuple] = []
    try:
        for row in job.csv_rows(texts()):
            try:
                rows.append(_row_texts(row) + (job.reader.line,))
            except TermSyntaxError as e:
                job.report(e.message, e.col)
            if left[0] == 0:
                yield _rows_batch(rows), None
                rows = []
    except StreamFormatError as e:
        yield _rows_batch(rows), e
        return
    yield _rows_batch(rows), None
