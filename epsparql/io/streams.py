"""Timestamped RDF streams: read and write them in four formats.

Every format carries rows ``(s, p, o, start, end)``: rdflib terms and the
occurrence interval in seconds (``end`` is ``None`` when the input gave only
a start, meaning a point event), and ``(s, p, o, start, end, stream)`` for
a row on a named stream (the stream an IRI string; the stream dialects'
windows read streams by name, docs/DIALECTS.md; a row without one is on
the engine's default stream).  Terms are written in N-Triples syntax in
all formats; times are numbers of seconds (``1700000000``, ``12.5``)
or ``xsd:dateTime`` lexical forms (``2024-01-01T09:30:00Z``; no timezone
means UTC).

``nt`` -- the timestamped line format (``.nt``, ``.ntt``)::

    <http://ex/a> <http://ex/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> 1700000000 1700000005 .

  one triple in N-Triples syntax, whitespace, the start time, optionally
  whitespace and the end time, then ``.``; ``#`` comments and blank lines.

``nqt`` -- N-Quads with times (``.nqt``)::

    <http://ex/a> <http://ex/p> "1" <http://ex/stream> 1700000000 1700000005 .

  an N-Quads line with the times before the ``.``: subject, predicate,
  object, the stream IRI (N-Quads' graph position; a line without one is
  on the default stream), the start time, optionally the end time.

``jsonl`` -- one JSON object a line (``.jsonl``, ``.ndjson``)::

    {"s": "<http://ex/a>", "p": "<http://ex/p>", "o": "\\"1\\"", "start": 1700000000, "end": 1700000005}

  terms as N-Triples strings (or SPARQL 1.1 JSON term objects), times as
  JSON numbers or strings; ``end`` optional; ``stream`` optional (an IRI,
  as ``"<http://ex/s>"``, ``"http://ex/s"`` or a JSON term object).

``csv`` -- a header naming the columns ``s,p,o,start[,end][,stream]``
(``.csv``); an empty ``stream`` field is the default stream.

Reading is incremental (a generator over lines), from a file, a ``.gz``
file, a binary or text file object, or standard input (``"-"``).  A
malformed line raises :class:`StreamFormatError` (``on_error="stop"``)
or is counted and skipped (``on_error="skip"``).  See docs/CLI.md.
:meth:`StreamReader.batches` reads the same rows as Arrow columns of term
texts (:mod:`epsparql.io.stream_batches`); both readers parse a line with
:mod:`epsparql.io.stream_lines`.
"""
from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import os
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from rdflib.term import URIRef

from ..rdf.ntriples import TermSyntaxError, format_term, parse_term
from ..rdf.sparql_json import term_from_json, term_to_json
from ..times import NUMBER_RE, format_time, parse_time, seconds
from .stream_lines import (Row, StreamFormatError, StreamHeaderError, nt_texts_line, parse_jsonl_line,
                           parse_nqt_line, parse_nt_line, row_from_fields)

if TYPE_CHECKING:                   # batches() imports it when called
    import pyarrow

__all__ = [
    "FORMATS", "Row", "StreamFormatError", "StreamHeaderError", "StreamReader", "StreamWriter",
    "read_stream", "write_stream", "guess_format", "open_output",
    "parse_term", "format_term", "parse_time", "format_time",
    "term_to_json", "term_from_json",
]

#: Stream formats, by name.
FORMATS = ("nt", "nqt", "jsonl", "csv")

# ---------------------------------------------------------------------------
# reading

_EXTENSIONS = {".nt": "nt", ".ntt": "nt", ".ntx": "nt", ".nqt": "nqt", ".jsonl": "jsonl",
               ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv"}


def guess_format(path: str | os.PathLike | None, default: str = "nt") -> str:
    """The format of a file from its name (``.nt``/``.ntt``, ``.nqt``,
    ``.jsonl``/``.ndjson``, ``.csv``, each optionally ``.gz``); ``default``
    otherwise."""
    if path is None or str(path) == "-":
        return default
    name = str(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return _EXTENSIONS.get(os.path.splitext(name)[1], default)


class StreamReader:
    """Iterate over the rows of a timestamped stream, line by line.

    ``source`` is a path (``.gz`` is decompressed), ``"-"`` for standard
    input, or a file object (binary or text).  ``format`` is ``"nt"``,
    ``"nqt"``, ``"jsonl"`` or ``"csv"`` (default: guessed from the file
    name, else ``"nt"``).  Rows are ``(s, p, o, start, end)``, with the
    stream IRI as a sixth item when the line names one.  ``on_error="stop"`` raises :class:`StreamFormatError` at the
    first malformed line; ``"skip"`` counts it in :attr:`skipped`, keeps the
    first ``keep_errors`` in :attr:`errors`, calls ``on_skip(error)`` if
    given, and goes on.

    Counters while iterating: :attr:`line` (lines read), :attr:`rows`
    (rows yielded), :attr:`skipped`.
    """

    def __init__(self, source: str | os.PathLike | IO, format: str | None = None, *,
                 on_error: str = "stop", on_skip: Callable[[StreamFormatError], None] | None = None,
                 keep_errors: int = 100, name: str | None = None) -> None:
        if on_error not in ("stop", "skip"):
            raise ValueError(f"on_error must be 'stop' or 'skip', got {on_error!r}")
        if isinstance(source, (str, os.PathLike)):
            self.path = "<stdin>" if str(source) == "-" else str(source)
            fmt = format or guess_format(source)
        else:
            self.path = name or getattr(source, "name", None) or "<stream>"
            if not isinstance(self.path, str):
                self.path = "<stream>"
            fmt = format or guess_format(self.path if self.path != "<stdin>" else None)
        if name is not None:
            self.path = name
        if fmt not in FORMATS:
            raise ValueError(f"unknown stream format {fmt!r} (one of {', '.join(FORMATS)})")
        self.format = fmt
        self.source = source
        self.on_error = on_error
        self.on_skip = on_skip
        self.keep_errors = keep_errors
        self.line = 0
        self.rows = 0
        self.skipped = 0
        self.errors: list[StreamFormatError] = []
        self._file: IO | None = None
        self._owned = False

    # -- opening ---------------------------------------------------------------
    def _open(self) -> IO:
        src = self.source
        if isinstance(src, (str, os.PathLike)):
            if str(src) == "-":
                if sys.stdin is None:
                    raise FileNotFoundError("there is no standard input to read the stream from")
                return sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
            p = Path(src)
            if not p.exists():
                raise FileNotFoundError(f"stream file not found: {p}")
            if p.is_dir():
                raise IsADirectoryError(f"stream path is a directory: {p}")
            self._owned = True
            with open(p, "rb") as f:
                magic = f.read(2)
            if magic == b"\x1f\x8b":
                return gzip.open(p, "rb")
            return open(p, "rb", buffering=1 << 20)
        return src

    def _lines(self, f: IO) -> Iterator[str | None]:
        """Decoded lines without their line break; None for a line that is
        not valid UTF-8 (reported by the caller)."""
        first = True
        if isinstance(f, io.TextIOBase):
            for line in f:
                if first:
                    line, first = line.lstrip("\ufeff"), False
                yield line.rstrip("\r\n")
            return
        for raw in f:
            if first:
                if raw.startswith(codecs.BOM_UTF8):
                    raw = raw[3:]
                first = False
            try:
                yield raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                yield None

    # -- errors ----------------------------------------------------------------
    def _error(self, message: str, col: int | None = None) -> None:
        """Report a malformed line of :attr:`line` (``col``: 0-based): raise
        it (``on_error="stop"``), or count it, keep it and call ``on_skip``."""
        err = StreamFormatError(message, self.path, self.line,
                                None if col is None else col + 1)
        if self.on_error == "stop":
            raise err
        self.skipped += 1
        if len(self.errors) < self.keep_errors:
            self.errors.append(err)
        if self.on_skip is not None:
            self.on_skip(err)

    # -- iteration -------------------------------------------------------------
    def __iter__(self) -> Iterator[Row]:
        return self._rows(parse_nt_line)

    def texts(self) -> Iterator[Row]:
        """Rows with the terms as N-Triples text instead of rdflib terms
        (what travels between Spark stages): the same lines accepted and
        the same errors; plain N-Triples lines skip building terms."""
        if self.format == "nt":
            return self._rows(nt_texts_line)
        return ((format_term(r[0]), format_term(r[1]), format_term(r[2]), *r[3:])
                for r in self._rows(parse_nt_line))

    def batches(self, size: int = 5000) -> Iterator["pyarrow.RecordBatch"]:
        """The stream as Arrow record batches of at most ``size`` rows, with
        the columns ``s``, ``p``, ``o`` (N-Triples texts), ``start``,
        ``end`` (float64 seconds; ``end`` null for a point event),
        ``stream`` (the IRI, null for the default stream) and ``line`` (the
        1-based line number): the rows, errors and counters of iterating
        the reader, read in blocks (:mod:`epsparql.io.stream_batches`).
        A batch is cut short when the source has nothing more ready (a
        live pipe's rows come as they are written) and before an error
        that stops the reading.  :attr:`line` counts the lines read, which
        may be ahead of the last batch given out (a row's own line is in
        its ``line`` column); :attr:`rows` the rows given out."""
        from .stream_batches import read_batches
        return read_batches(self, size, start=self._start, report=self._error,
                            csv_rows=self._csv_rows)

    def _start(self) -> IO:
        """The source opened, for :meth:`close` to close."""
        self._file = self._open()
        return self._file

    def _rows(self, parse_nt: Callable[[str], Row | None]) -> Iterator[Row]:
        f = self._start()
        try:
            if self.format == "csv":
                for row in self._csv_rows(self._lines(f)):
                    self.rows += 1
                    yield row
            else:
                parse = parse_nt if self.format == "nt" else \
                    parse_nqt_line if self.format == "nqt" else parse_jsonl_line
                for line in self._lines(f):
                    self.line += 1
                    if line is None:
                        self._error("not valid UTF-8")
                        continue
                    try:
                        row = parse(line)
                    except TermSyntaxError as e:
                        self._error(e.message, e.col)
                        continue
                    if row is not None:
                        self.rows += 1
                        yield row
        finally:
            self.close()

    def _csv_rows(self, lines: Iterable[str | None]) -> Iterator[Row]:
        """The rows of a CSV stream from its decoded lines (None: not UTF-8)."""
        bad_utf8 = "\udcff"
        reader = csv.reader(bad_utf8 if line is None else line for line in lines)
        header: list[str] | None = None
        index: dict[str, int] = {}
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as e:
                self.line = reader.line_num
                self._error(f"malformed CSV: {e}")
                continue
            self.line = reader.line_num
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            if any(bad_utf8 in x for x in fields):
                if header is None:
                    raise StreamHeaderError("the header is not valid UTF-8", self.path, self.line)
                self._error("not valid UTF-8")
                continue
            if header is None:
                header = [h.strip().lower() for h in fields]
                index = {h: i for i, h in enumerate(header)}
                missing = [c for c in ("s", "p", "o", "start") if c not in index]
                if missing or len(index) != len(header):
                    raise StreamHeaderError(
                        "the CSV header must name the columns s,p,o,start[,end][,stream] "
                        f"(found {','.join(fields)!r}" + (f"; missing {', '.join(missing)}" if missing else
                                                             "; a column is named twice") + ")",
                        self.path, self.line)
                continue
            if len(fields) != len(header):
                self._error(f"expected {len(header)} fields ({','.join(header)}), found {len(fields)}")
                continue
            has_end = "end" in index
            try:
                row = row_from_fields(lambda k: fields[index[k]] if k in index else None, has_end,
                                       "stream" in index)
            except TermSyntaxError as e:
                self._error(e.message)
                continue
            yield row

    def close(self) -> None:
        f, self._file = self._file, None
        if f is not None and self._owned:
            f.close()

    def __enter__(self) -> "StreamReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_stream(source: str | os.PathLike | IO, format: str | None = None, *,
                on_error: str = "stop",
                on_skip: Callable[[StreamFormatError], None] | None = None) -> StreamReader:
    """Rows ``(s, p, o, start, end)`` of a stream, read lazily.

    ``for s, p, o, start, end in read_stream("events.nt"): ...``; the
    returned :class:`StreamReader` also counts lines, rows and skipped
    lines.  Rows can go straight to :meth:`epsparql.Engine.push_many`."""
    return StreamReader(source, format, on_error=on_error, on_skip=on_skip)


# ---------------------------------------------------------------------------
# writing

def open_output(dest: str | os.PathLike | IO | None) -> tuple[IO, bool]:
    """A text file to write to, and whether the caller must close it:
    ``None`` or ``"-"`` is standard output, a path is opened (``.gz``
    compressed), a file object is used as is."""
    if dest is None or (isinstance(dest, (str, os.PathLike)) and str(dest) == "-"):
        return sys.stdout, False
    if isinstance(dest, (str, os.PathLike)):
        if str(dest).endswith(".gz"):
            return gzip.open(dest, "wt", encoding="utf-8", newline=""), True
        return open(dest, "w", encoding="utf-8", newline=""), True
    return dest, False


class StreamWriter:
    """Write rows ``(s, p, o, start[, end[, stream]])`` in a stream format.

    ``time_format="iso"`` writes times as ``xsd:dateTime`` in UTC.  The
    stream of a row goes to the graph position in ``nqt``, to a
    ``stream`` member in ``jsonl`` and to a ``stream`` column in ``csv``
    (``streams=True``, or the first row has one); ``nt`` has no place for
    it (a row with a stream is an error there)."""

    def __init__(self, dest: str | os.PathLike | IO | None, format: str = "nt", *,
                 time_format: str = "seconds", streams: bool | None = None) -> None:
        if format not in FORMATS:
            raise ValueError(f"unknown stream format {format!r} (one of {', '.join(FORMATS)})")
        self.format = format
        self.time_format = time_format
        self.out, self._owned = open_output(dest)
        self.count = 0
        self._csv = None
        self._streams = streams
        if format == "csv":
            self._csv = csv.writer(self.out, lineterminator="\n")
            if streams is not None:
                self._csv_header()

    def _csv_header(self) -> None:
        self._csv.writerow(["s", "p", "o", "start", "end"] + (["stream"] if self._streams else []))

    def _time(self, t: Any) -> Any:
        return format_time(seconds(t), self.time_format)

    def write(self, row: Sequence[Any]) -> None:
        s, p, o, start = row[0], row[1], row[2], row[3]
        end = row[4] if len(row) > 4 else None
        stream = row[5] if len(row) > 5 else None
        st = self._time(start)
        en = None if end is None else self._time(end)
        g = None if stream is None else format_term(URIRef(str(stream)))
        if self.format in ("nt", "nqt"):
            if g is not None and self.format == "nt":
                raise ValueError(f"the nt format has no stream: write rows with a stream as "
                                 f"nqt, jsonl or csv ({g})")
            tail = st if en is None else f"{st} {en}"
            mid = "" if g is None else f" {g}"
            self.out.write(f"{format_term(s)} {format_term(p)} {format_term(o)}{mid} {tail} .\n")
        elif self.format == "jsonl":
            obj: dict[str, Any] = {"s": format_term(s), "p": format_term(p), "o": format_term(o),
                                   "start": _json_time(st)}
            if en is not None:
                obj["end"] = _json_time(en)
            if g is not None:
                obj["stream"] = g
            self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        else:
            if self._streams is None:
                self._streams = g is not None
                self._csv_header()
            if g is not None and not self._streams:
                raise ValueError("this CSV stream was started without a stream column "
                                 "(StreamWriter(..., streams=True))")
            fields = [format_term(s), format_term(p), format_term(o), st, "" if en is None else en]
            self._csv.writerow(fields + ([g or ""] if self._streams else []))
        self.count += 1

    def write_many(self, rows: Iterable[Sequence[Any]]) -> int:
        n = 0
        for row in rows:
            self.write(row)
            n += 1
        return n

    def close(self) -> None:
        if self._csv is not None and self._streams is None:
            self._streams = False
            self._csv_header()                      # an empty stream still has its header
        if self._owned:
            self.out.close()
        else:
            self.out.flush()

    def __enter__(self) -> "StreamWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _json_time(text: str) -> Any:
    """A formatted time as a JSON value: a number when it is one."""
    if NUMBER_RE.fullmatch(text):
        return float(text) if ("." in text or "e" in text or "E" in text) else int(text)
    return text


def write_stream(rows: Iterable[Sequence[Any]], dest: str | os.PathLike | IO | None,
                 format: str = "nt", *, time_format: str = "seconds",
                 streams: bool | None = None) -> int:
    """Write rows ``(s, p, o, start[, end[, stream]])`` to ``dest`` (a path,
    ``"-"`` or a text file object) in ``format``; returns the number
    written (``streams``: see :class:`StreamWriter`; for a list of rows,
    a CSV gets a stream column when any row has a stream)."""
    if streams is None and format == "csv" and isinstance(rows, (list, tuple)):
        streams = any(len(r) > 5 and r[5] is not None for r in rows)
    with StreamWriter(dest, format, time_format=time_format, streams=streams) as w:
        return w.write_many(rows)
