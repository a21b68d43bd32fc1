"""One line of a timestamped stream, parsed: the line formats ``nt``,
``nqt`` and ``jsonl``, a CSV row's fields, and the error a malformed
line is reported with.

Both readers of :mod:`epsparql.io.streams` stand on these parsers: rows
(``iter(StreamReader)``) parse every line here, and the columnar reader
(:mod:`epsparql.io.stream_batches`) the lines it does not cut out itself,
so that the two give the same rows and the same errors.  A parser returns
a row, None for a line to ignore (blank, comment), or raises
:class:`~epsparql.rdf.ntriples.TermSyntaxError` with the column.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

from rdflib.term import BNode, Literal, Node, URIRef

from ..rdf.ntriples import (BNODE_LABEL_PATTERN, IRI_PLAIN_PATTERN, LANG_PATTERN, STRING_PATTERN,
                            TermSyntaxError, format_term, iri, literal, term_at)
from ..rdf.sparql_json import term_from_json
from ..times import format_time, parse_time

__all__ = ["Row", "StreamFormatError", "StreamHeaderError", "parse_nt_line", "parse_nqt_line",
           "parse_jsonl_line", "nt_texts_line", "row_from_fields"]

#: A stream row: subject, predicate, object, start, end (None: end = start),
#: and the stream IRI when the input names one.
Row = tuple  # (Node, Node, Node, int | float, int | float | None[, str])


class StreamFormatError(ValueError):
    """A malformed line of a stream.

    ``path`` is the file name (``"<stdin>"`` for standard input), ``line``
    the 1-based line number, ``column`` the 1-based column when known, and
    ``message`` what is wrong.  ``str()`` gives ``path:line: message``.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None,
                 column: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.path or "<stream>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"

    def __str__(self) -> str:
        return self._render()

    def __reduce__(self):
        return (type(self), (self.message, self.path, self.line, self.column))


class StreamHeaderError(StreamFormatError):
    """A CSV header that cannot be read: the whole file is unusable, so it
    stops reading whatever ``on_error`` says."""


_WS_RE = re.compile(r"[ \t]*")


def _time_value(v: Any, what: str) -> int | float:
    """A start/end time from a JSON or CSV value (number or string)."""
    if isinstance(v, bool):
        raise ValueError(f"{what} time must be a number or an xsd:dateTime string, got {v!r}")
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"{what} time {v!r} is not finite")
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    if isinstance(v, str):
        try:
            return parse_time(v)
        except ValueError as e:
            raise ValueError(f"{what} {e}") from None
    raise ValueError(f"{what} time must be a number or an xsd:dateTime string, got {v!r}")


def check_time_exact(t: int | float) -> None:
    """Refuse an integer time beyond 2**53 seconds: a float64 time column
    (the batch reader's, Arrow answers, Spark) has no exact value for it,
    and a time is refused rather than moved; both readers say so alike."""
    if type(t) is int and not -2**53 <= t <= 2**53 and not _float_exact(t):
        raise TermSyntaxError(f"time {t} is beyond 2^53 seconds, where a float64 time column "
                              "cannot hold it exactly")


def _float_exact(t: int) -> bool:
    try:
        return float(t) == t
    except OverflowError:
        return False


def _check_interval(start: int | float, end: int | float | None) -> None:
    check_time_exact(start)
    if end is not None:
        check_time_exact(end)
    if end is not None and end < start:
        raise TermSyntaxError(f"end time {format_time(end)} is before start time {format_time(start)}")


# ---------------------------------------------------------------------------
# line parsers (one per format); each returns a row, or None for a line to ignore

_FAST_NT_RE = re.compile(
    r"[ \t]*(?:" + IRI_PLAIN_PATTERN + r"|_:" + BNODE_LABEL_PATTERN + r")[ \t]+" + IRI_PLAIN_PATTERN
    + r"[ \t]+(?:" + IRI_PLAIN_PATTERN + r"|_:" + BNODE_LABEL_PATTERN + r"|" + STRING_PATTERN
    + r"(?:" + LANG_PATTERN + r"|\^\^" + IRI_PLAIN_PATTERN + r")?)"
    r"[ \t]+([+-]?[0-9]+)(?:[ \t]+([+-]?[0-9]+))?[ \t]*\.[ \t]*(?:#.*)?")


def _fast_terms(g: tuple) -> tuple:
    """Subject, predicate and object from the first 8 groups of a fast
    line match (TermSyntaxError where a term is invalid)."""
    s = iri(g[0], 0) if g[0] is not None else BNode(g[1])
    p = iri(g[2], 0)
    if g[3] is not None:
        o = iri(g[3], 0)
    elif g[4] is not None:
        o = BNode(g[4])
    else:
        o = literal(g[5], g[6], g[7])
    return s, p, o


def _fast_times(g: tuple, i: int) -> tuple[int, int | None]:
    """Start and end (None: none given) from groups i and i + 1 of a fast
    line match, checked."""
    start = int(g[i])
    end = None if g[i + 1] is None else int(g[i + 1])
    _check_interval(start, end)
    return start, end


def _terms_at(line: str) -> tuple | None:
    """The detailed parse of a line's subject, predicate and object, and
    the position after them (None for a blank or comment line); errors
    name their column."""
    pos = _WS_RE.match(line).end()
    if pos == len(line) or line[pos] == "#":
        return None
    s, pos = term_at(line, pos, "subject")
    pos = _ws_required(line, pos, "the subject")
    p, pos = term_at(line, pos, "predicate")
    pos = _ws_required(line, pos, "the predicate")
    o, pos = term_at(line, pos, "object")
    return s, p, o, pos


def parse_nt_line(line: str) -> Row | None:
    m = _FAST_NT_RE.fullmatch(line)
    if m is not None:                      # the common case, in one match
        try:
            g = m.groups()
            s, p, o = _fast_terms(g)
            start, end = _fast_times(g, 8)
            return (s, p, o, start, end)
        except TermSyntaxError:
            pass                           # the detailed parse below says where
    got = _terms_at(line)
    if got is None:
        return None
    s, p, o, pos = got
    start, end = _times_and_dot(line, pos, "the object", _NT_LINE)
    return (s, p, o, start, end)


_TIME_INT = r"[ \t]+([+-]?[0-9]+)(?:[ \t]+([+-]?[0-9]+))?"
_TIME_DEC = r"[ \t]+([+-]?[0-9]+(?:\.[0-9]+)?)(?:[ \t]+([+-]?[0-9]+(?:\.[0-9]+)?))?"
assert _TIME_INT in _FAST_NT_RE.pattern
_FAST_NT_DEC_RE = re.compile(_FAST_NT_RE.pattern.replace(_TIME_INT, _TIME_DEC))


#: N-Quads with times: an optional stream IRI before the times (its group
#: comes right before the times' groups).
_STREAM_OPT = r"(?:[ \t]+" + IRI_PLAIN_PATTERN + r")?"
_FAST_NQT_RE = re.compile(_FAST_NT_RE.pattern.replace(_TIME_INT, _STREAM_OPT + _TIME_INT))


def parse_nqt_line(line: str) -> Row | None:
    """A line of the ``nqt`` format (see the module docstring)."""
    m = _FAST_NQT_RE.fullmatch(line)
    if m is not None:                      # the common case, in one match
        try:
            g = m.groups()
            s, p, o = _fast_terms(g)
            stream = None if g[8] is None else str(iri(g[8], 0))
            start, end = _fast_times(g, 9)
            return (s, p, o, start, end) if stream is None else (s, p, o, start, end, stream)
        except TermSyntaxError:
            pass                           # the detailed parse below says where
    got = _terms_at(line)
    if got is None:
        return None
    s, p, o, pos = got
    stream = None
    after = _WS_RE.match(line, pos).end()
    if line[after:after + 1] in ("<", "_"):
        pos = _ws_required(line, pos, "the object")
        if line[pos] == "_":
            raise TermSyntaxError("the stream (the graph position) must be an IRI <...>, "
                                  "not a blank node", pos)
        g, pos = term_at(line, pos, "stream")
        stream = str(g)
    start, end = _times_and_dot(line, pos, "the stream" if stream else "the object", _NQT_LINE)
    return (s, p, o, start, end) if stream is None else (s, p, o, start, end, stream)


#: What a line is, as the errors say it.
_NT_LINE = "subject predicate object start [end] ."
_NQT_LINE = "subject predicate object [stream] start [end] ."


def _times_and_dot(line: str, pos: int, after: str, shape: str
                   ) -> tuple[int | float, int | float | None]:
    """The times then ``.`` that end a line of ``shape``, from ``pos``
    (right after ``after``)."""
    rest = line[pos:]
    body = rest.split("#", 1)[0].rstrip()
    if not body.endswith("."):
        raise TermSyntaxError("expected times then '.' at the end of the statement "
                              f"(a line is: {shape})", pos + len(body))
    if rest[:1] not in (" ", "\t"):
        raise TermSyntaxError(f"expected whitespace then the start time after {after}", pos)
    tokens = body[:-1].split()
    if not tokens:
        raise TermSyntaxError(f"missing start time (a line is: {shape})", pos)
    if len(tokens) > 2:
        raise TermSyntaxError(f"expected at most two times (start, end) before '.', found "
                              f"{len(tokens)} items: {' '.join(tokens)}", pos)
    try:
        start = parse_time(tokens[0])
        end = parse_time(tokens[1]) if len(tokens) == 2 else None
    except ValueError as e:
        raise TermSyntaxError(str(e), pos + 1) from None
    _check_interval(start, end)
    return start, end


def _num_time(text: str) -> int | float:
    """A time the fast pattern matched, as :func:`parse_time` gives it."""
    if "." not in text:
        return int(text)
    v = float(text)
    return int(v) if v.is_integer() and abs(v) < 2**53 else v


def nt_texts_line(line: str) -> Row | None:
    """A line of the timestamped N-Triples format as N-Triples texts:
    without escapes the terms are cut out of the line as they are
    (checked as :func:`parse_nt_line` checks them), else parsed and
    written back canonically."""
    m = _FAST_NT_DEC_RE.fullmatch(line)
    if m is not None and "\\" not in line:
        g = m.groups()
        try:
            if g[0] is not None:
                iri(g[0], 0)
                s = f"<{g[0]}>"
            else:
                s = "_:" + g[1]
            iri(g[2], 0)
            p = f"<{g[2]}>"
            if g[3] is not None:
                iri(g[3], 0)
                o = f"<{g[3]}>"
            elif g[4] is not None:
                o = "_:" + g[4]
            elif g[6] is not None:
                o = f'"{g[5]}"@{g[6]}'
            elif g[7] is not None:
                iri(g[7], 0)
                o = f'"{g[5]}"^^<{g[7]}>'
            else:
                o = f'"{g[5]}"'
            start = _num_time(g[8])
            end = None if g[9] is None else _num_time(g[9])
            _check_interval(start, end)
            return (s, p, o, start, end)
        except TermSyntaxError:
            pass                           # the full parse says where
    row = parse_nt_line(line)
    if row is None:
        return None
    return (format_term(row[0]), format_term(row[1]), format_term(row[2]), row[3], row[4])


def _ws_required(line: str, pos: int, after: str) -> int:
    end = _WS_RE.match(line, pos).end()
    if end == pos:
        raise TermSyntaxError(f"expected whitespace after {after}", pos)
    return end


def _term_field(value: Any, key: str) -> Node:
    if isinstance(value, str):
        try:
            node, end = term_at(value.strip(), 0, "object")
        except TermSyntaxError as e:
            raise TermSyntaxError(f'"{key}": {e.message}') from None
        if end != len(value.strip()):
            raise TermSyntaxError(f'"{key}": unexpected text after the term: {value.strip()[end:]!r}')
    else:
        try:
            node = term_from_json(value)
        except ValueError as e:
            raise TermSyntaxError(f'"{key}": {e}') from None
    if key == "p" and not isinstance(node, URIRef):
        raise TermSyntaxError(f'"p": the predicate must be an IRI, got {value!r}')
    if key == "s" and isinstance(node, Literal):
        raise TermSyntaxError(f'"s": the subject must be an IRI or a blank node, got {value!r}')
    return node


def _stream_field(value: Any) -> str | None:
    """The ``stream`` of a JSON line or CSV row: an IRI as ``<...>``, bare,
    or a SPARQL JSON term object; None or empty: the default stream."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text.startswith("<"):
            text = f"<{text}>"
        try:
            node, end = term_at(text, 0, "stream")
        except TermSyntaxError as e:
            raise TermSyntaxError(f'"stream": {e.message}') from None
        if end != len(text):
            raise TermSyntaxError(f'"stream": unexpected text after the IRI: {text[end:]!r}')
        return str(node)
    try:
        node = term_from_json(value)
    except ValueError as e:
        raise TermSyntaxError(f'"stream": {e}') from None
    if not isinstance(node, URIRef):
        raise TermSyntaxError(f'"stream": a stream is an IRI, got {value!r}')
    return str(node)


def row_from_fields(get: Callable[[str], Any], has_end: bool, has_stream: bool = True) -> Row:
    s = _term_field(get("s"), "s")
    p = _term_field(get("p"), "p")
    o = _term_field(get("o"), "o")
    try:
        start = _time_value(get("start"), "start")
        e = get("end") if has_end else None
        end = None if e is None or e == "" else _time_value(e, "end")
    except ValueError as err:
        raise TermSyntaxError(str(err)) from None
    _check_interval(start, end)
    stream = _stream_field(get("stream")) if has_stream else None
    return (s, p, o, start, end) if stream is None else (s, p, o, start, end, stream)


def parse_jsonl_line(line: str) -> Row | None:
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise TermSyntaxError(f"invalid JSON: {e.msg}", e.colno - 1) from None
    if not isinstance(obj, dict):
        raise TermSyntaxError(f"expected a JSON object {{\"s\", \"p\", \"o\", \"start\"[, \"end\"]}}, "
                   f"got {type(obj).__name__}")
    missing = [k for k in ("s", "p", "o", "start") if obj.get(k) is None]
    if missing:
        raise TermSyntaxError("missing " + ", ".join(f'"{k}"' for k in missing)
                   + ' (an object has "s", "p", "o", "start" and optionally "end", "stream")')
    return row_from_fields(obj.get, True)
