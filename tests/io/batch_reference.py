"""What reading a stream gives, through the row reader and through
``StreamReader.batches``, in one comparable form: the differential tests
of the columnar reader (tests/io/test_stream_batches.py) compare the two."""
from __future__ import annotations

import io
from typing import Any, Callable

from rdflib.term import Literal, Node

from epsparql.io.stream_batches import SCHEMA, read_batches
from epsparql.io.streams import StreamFormatError, StreamReader, parse_term


def term_key(node: Node) -> tuple:
    """A term as its kind, text, language and datatype (rdflib's ``==``
    on literals compares values)."""
    if isinstance(node, Literal):
        return ("Literal", str(node), node.language, None if node.datatype is None else str(node.datatype))
    return (type(node).__name__, str(node))


def time_key(t: int | float | None) -> str | None:
    """A time as the float64 a column holds, by its repr (so -0.0 is not 0.0)."""
    return None if t is None else repr(float(t))


def error_key(e: StreamFormatError) -> tuple:
    return (type(e).__name__, e.message, e.path, e.line, e.column, str(e))


class Outcome:
    """Rows ``(s, p, o, start, end, stream, line)`` as keys, the errors
    skipped, the error that stopped the reading (or None) and the reader's
    counters at the end."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []
        self.skipped: list[tuple] = []
        self.stop: tuple | None = None
        self.counters: tuple = ()

    def __eq__(self, other: Any) -> bool:
        return vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"Outcome({vars(self)!r})"


def _read(source: Any, fmt: str, on_error: str, each: Callable[[StreamReader], Any]) -> Outcome:
    out = Outcome()
    reader = StreamReader(source, fmt, on_error=on_error, name="s.stream",
                          on_skip=lambda e: out.skipped.append(error_key(e)))
    try:
        each(reader, out)
    except StreamFormatError as e:
        out.stop = error_key(e)
    out.counters = (reader.line, reader.rows, reader.skipped, [error_key(e) for e in reader.errors])
    return out


def by_rows(source: Any, fmt: str, on_error: str = "stop") -> Outcome:
    """Reading by iterating the reader (the reference)."""
    def each(reader: StreamReader, out: Outcome) -> None:
        for row in reader:
            out.rows.append((term_key(row[0]), term_key(row[1]), term_key(row[2]), time_key(row[3]),
                             time_key(row[4]), row[5] if len(row) > 5 else None, reader.line))
    return _read(source, fmt, on_error, each)


def in_blocks(reader: StreamReader, size: int, block_lines: int | None,
              small_block: int | None = 0):
    """``reader.batches(size)``, read in blocks of at most ``block_lines``
    lines (the public method chooses its own: the tests make small ones);
    ``small_block``: blocks of fewer lines go to the row parser whole (0,
    the default here: none, so that small test streams check the columnar
    cut; None: the reader's own threshold)."""
    return read_batches(reader, size, start=reader._start, report=reader._error,
                        csv_rows=reader._csv_rows, block_lines=block_lines,
                        small_block=small_block)


def by_batches(source: Any, fmt: str, on_error: str = "stop", size: int = 5000,
               block_lines: int | None = None, small_block: int | None = 0) -> Outcome:
    """Reading by batches, the terms parsed back with ``parse_term``; every
    batch is checked to have the schema and between 1 and ``size`` rows."""
    def each(reader: StreamReader, out: Outcome) -> None:
        for batch in in_blocks(reader, size, block_lines, small_block):
            assert batch.schema == SCHEMA
            assert 1 <= batch.num_rows <= size
            for r in batch.to_pylist():
                out.rows.append((term_key(parse_term(r["s"])), term_key(parse_term(r["p"])),
                                 term_key(parse_term(r["o"])), time_key(r["start"]),
                                 time_key(r["end"]), r["stream"], r["line"]))
    return _read(source, fmt, on_error, each)


def both(data: bytes, fmt: str, on_error: str, size: int, block_lines: int | None = None,
         source: Callable[[bytes], Any] = io.BytesIO,
         small_block: int | None = 0) -> tuple[Outcome, Outcome]:
    """The reference read of ``data`` and the batched read of it from ``source(data)``."""
    return (by_rows(io.BytesIO(data), fmt, on_error),
            by_batches(source(data), fmt, on_error, size, block_lines, small_block))
