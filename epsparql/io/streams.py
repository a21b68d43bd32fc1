"""Timestamped RDF streams: read and write them in three formats.

Every format carries rows ``(s, p, o, start, end)``: rdflib terms and the
occurrence interval in seconds (``end`` is ``None`` when the input gave only
a start, meaning a point event).  Terms are written in N-Triples syntax in
all three formats; times are numbers of seconds (``1700000000``, ``12.5``)
or ``xsd:dateTime`` lexical forms (``2024-01-01T09:30:00Z``; no timezone
means UTC).

``nt`` -- the timestamped line format (``.nt``, ``.ntt``)::

    <http://ex/a> <http://ex/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> 1700000000 1700000005 .

  one triple in N-Triples syntax, whitespace, the start time, optionally
  whitespace and the end time, then ``.``; ``#`` comments and blank lines.

``jsonl`` -- one JSON object a line (``.jsonl``, ``.ndjson``)::

    {"s": "<http://ex/a>", "p": "<http://ex/p>", "o": "\\"1\\"", "start": 1700000000, "end": 1700000005}

  terms as N-Triples strings (or SPARQL 1.1 JSON term objects), times as
  JSON numbers or strings; ``end`` optional.

``csv`` -- a header naming the columns ``s,p,o,start[,end]`` (``.csv``).

Reading is incremental (a generator over lines), from a file, a ``.gz``
file, a binary or text file object, or standard input (``"-"``).  A
malformed line raises :class:`StreamFormatError` (``on_error="stop"``)
or is counted and skipped (``on_error="skip"``).  See docs/CLI.md.
"""
from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator, Sequence

from rdflib.term import BNode, Literal, Node, URIRef

__all__ = [
    "FORMATS", "Row", "StreamFormatError", "StreamReader", "StreamWriter",
    "read_stream", "write_stream", "guess_format", "open_output",
    "parse_term", "format_term", "parse_time", "format_time",
    "term_to_json", "term_from_json",
]

#: Stream formats, by name.
FORMATS = ("nt", "jsonl", "csv")

#: A stream row: subject, predicate, object, start, end (None: end = start).
Row = tuple  # (Node, Node, Node, int | float, int | float | None)

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


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


class _Bad(Exception):
    """A malformed line (internal): message and 0-based column."""

    def __init__(self, message: str, col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.col = col


# ---------------------------------------------------------------------------
# N-Triples terms

_IRI = r'<((?:[^\x00-\x20<>"{}|^`\\]++|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*+)>'
_IRI_RE = re.compile(_IRI)
_BNODE_RE = re.compile(
    r"_:((?:[A-Za-z0-9_]|[^\x00-\x7f])(?:(?:[A-Za-z0-9_\-.]|[^\x00-\x7f])*(?:[A-Za-z0-9_\-]|[^\x00-\x7f]))?)")
_STRING_RE = re.compile(
    r'"((?:[^"\\\n\r]++|\\(?:[tbnrf"\'\\]|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}))*+)"')
_LANG_RE = re.compile(r"@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*)")
_DT_RE = re.compile(r"\^\^" + _IRI)
_WS_RE = re.compile(r"[ \t]*")
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_ESCAPE_RE = re.compile(r"\\(?:([tbnrf\"'\\])|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_SURROGATE_RE = re.compile("[\ud800-\udfff]")

_iri_cache: dict[str, URIRef] = {}
_dt_cache: dict[str, URIRef] = {}


def _unescape(text: str, col: int) -> str:
    def repl(m: re.Match) -> str:
        if m.group(1) is not None:
            return _ECHAR[m.group(1)]
        cp = int(m.group(2) or m.group(3), 16)
        if cp > 0x10FFFF:
            raise _Bad(f"escape {m.group(0)} is beyond U+10FFFF", col + m.start())
        return chr(cp)

    out = _ESCAPE_RE.sub(repl, text)
    if _SURROGATE_RE.search(out):
        # \uD83D\uDE00 (a UTF-16 pair, as Java writes) is one character
        try:
            out = out.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise _Bad("unpaired surrogate escape (not a Unicode character)", col) from None
    return out


def _iri(raw: str, col: int) -> URIRef:
    node = _iri_cache.get(raw)
    if node is not None:
        return node
    text = _unescape(raw, col) if "\\" in raw else raw
    if not _SCHEME_RE.match(text):
        raise _Bad(f"relative IRI <{text}> (N-Triples IRIs are absolute)", col)
    node = URIRef(text)
    if len(_iri_cache) > 100_000:
        _iri_cache.clear()
    _iri_cache[raw] = node
    return node


def _term_at(line: str, pos: int, what: str) -> tuple[Node, int]:
    """Parse the term of kind ``what`` (subject/predicate/object) at pos."""
    ch = line[pos:pos + 1]
    if ch == "<":
        m = _IRI_RE.match(line, pos)
        if m is None:
            raise _Bad(f"malformed IRI in the {what} (an IRI is <...> without spaces, "
                       f"quotes or <>{{}}|^`\\ characters)", pos)
        return _iri(m.group(1), pos), m.end()
    if ch == "_" and what != "predicate":
        m = _BNODE_RE.match(line, pos)
        if m is None:
            raise _Bad(f"malformed blank node in the {what} (expected _:label)", pos)
        return BNode(m.group(1)), m.end()
    if ch == '"' and what == "object":
        m = _STRING_RE.match(line, pos)
        if m is None:
            raise _literal_problem(line, pos)
        raw = m.group(1)
        lex = _unescape(raw, pos) if "\\" in raw else raw
        end = m.end()
        nxt = line[end:end + 1]
        if nxt == "@":
            lm = _LANG_RE.match(line, end)
            if lm is None:
                raise _Bad("malformed language tag (expected @ and letters, e.g. @en or @en-GB)", end)
            return Literal(lex, lang=lm.group(1)), lm.end()
        if nxt == "^":
            dm = _DT_RE.match(line, end)
            if dm is None:
                raise _Bad("malformed datatype (expected ^^<IRI>)", end)
            key = dm.group(1)
            dt = _dt_cache.get(key)
            if dt is None:
                dt = _dt_cache[key] = _iri(key, end + 2)
            if str(dt) == RDF_LANGSTRING:
                raise _Bad("rdf:langString literals need a language tag (write \"...\"@lang)", end)
            return Literal(lex, datatype=dt, normalize=False), dm.end()
        return Literal(lex), end
    allowed = {"subject": "an IRI <...> or a blank node _:x",
               "predicate": "an IRI <...>",
               "object": "an IRI <...>, a blank node _:x or a literal \"...\""}[what]
    found = repr(line[pos:pos + 12]) if pos < len(line) else "the end of the line"
    raise _Bad(f"expected {allowed} as the {what}, found {found}", pos)


_BAD_ESCAPE_RE = re.compile(r'\\(?![tbnrf"\'\\]|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})')


def _literal_problem(line: str, pos: int) -> _Bad:
    """Why the literal starting at ``pos`` does not parse."""
    i = pos + 1
    while i < len(line):
        c = line[i]
        if c == '"':
            break
        if c == "\\":
            if _BAD_ESCAPE_RE.match(line, i):
                return _Bad(f"bad escape {line[i:i + 2]!r} in a literal (allowed: \\t \\b \\n "
                            f"\\r \\f \\\" \\' \\\\ \\uXXXX \\UXXXXXXXX)", i)
            i += 2
            continue
        if c in "\r\n":
            return _Bad("raw line break in a literal (write \\n or \\r)", i)
        i += 1
    return _Bad("literal without its closing quote", pos)


def parse_term(text: str) -> Node:
    """One RDF term in N-Triples syntax (``<iri>``, ``_:b``, ``"lit"``,
    ``"lit"@en``, ``"1"^^<dt>``) as an rdflib term.  Raises ValueError."""
    s = text.strip()
    try:
        node, end = _term_at(s, 0, "object")
    except _Bad as e:
        raise ValueError(f"{e.message}: {text!r}") from None
    if end != len(s):
        raise ValueError(f"unexpected text after the term: {s[end:]!r} in {text!r}")
    return node


_IRI_ESC_RE = re.compile(r'[\x00-\x20<>"{}|^`\\]')
_LIT_ESC_RE = re.compile('[\x00-\x1f"\\\\\x7f\x85\u2028\u2029\ud800-\udfff]')
_LIT_ESC = {"\t": "\\t", "\b": "\\b", "\n": "\\n", "\r": "\\r", "\f": "\\f",
            '"': '\\"', "\\": "\\\\"}


def _lit_esc(m: re.Match) -> str:
    c = m.group(0)
    return _LIT_ESC.get(c) or f"\\u{ord(c):04X}"


def _iri_text(iri: str) -> str:
    if _IRI_ESC_RE.search(iri):
        iri = _IRI_ESC_RE.sub(lambda m: f"\\u{ord(m.group(0)):04X}", iri)
    return f"<{iri}>"


def format_term(node: Node) -> str:
    """An rdflib term in (canonical) N-Triples syntax; :func:`parse_term`
    reads it back to an equal term."""
    if isinstance(node, URIRef):
        return _iri_text(str(node))
    if isinstance(node, Literal):
        lex = str(node)
        if _LIT_ESC_RE.search(lex):
            lex = _LIT_ESC_RE.sub(_lit_esc, lex)
        if node.language:
            return f'"{lex}"@{node.language}'
        if node.datatype is not None:
            return f'"{lex}"^^{_iri_text(str(node.datatype))}'
        return f'"{lex}"'
    if isinstance(node, BNode):
        label = str(node)
        if not _BNODE_RE.fullmatch("_:" + label):
            label = "x" + "".join(c if c.isalnum() or c in "_-" else f"_{ord(c):x}_" for c in label)
        return "_:" + label
    raise TypeError(f"not an RDF term: {node!r}")


def term_to_json(node: Node) -> dict[str, str]:
    """SPARQL 1.1 Query Results JSON form of a term:
    ``{"type": "uri"|"literal"|"bnode", "value": ..., ["xml:lang"|"datatype"]}``."""
    if isinstance(node, URIRef):
        return {"type": "uri", "value": str(node)}
    if isinstance(node, Literal):
        d = {"type": "literal", "value": str(node)}
        if node.language:
            d["xml:lang"] = node.language
        elif node.datatype is not None:
            d["datatype"] = str(node.datatype)
        return d
    if isinstance(node, BNode):
        return {"type": "bnode", "value": str(node)}
    raise TypeError(f"not an RDF term: {node!r}")


def term_from_json(obj: Any) -> Node:
    """The inverse of :func:`term_to_json`; also takes a string in
    N-Triples syntax.  Raises ValueError."""
    if isinstance(obj, str):
        return parse_term(obj)
    if not isinstance(obj, dict):
        raise ValueError(f"a term is an N-Triples string or a SPARQL JSON term object, got {obj!r}")
    kind, value = obj.get("type"), obj.get("value")
    if not isinstance(value, str):
        raise ValueError(f"a term object needs a string \"value\": {obj!r}")
    if kind == "uri":
        if not _SCHEME_RE.match(value):
            raise ValueError(f"relative IRI {value!r} (IRIs are absolute)")
        return URIRef(value)
    if kind == "bnode":
        return BNode(value)
    if kind in ("literal", "typed-literal"):
        lang, dt = obj.get("xml:lang"), obj.get("datatype")
        if lang:
            return Literal(value, lang=lang)
        if dt:
            return Literal(value, datatype=URIRef(dt), normalize=False)
        return Literal(value)
    raise ValueError(f"a term object's \"type\" is uri, literal or bnode, got {kind!r}")


# ---------------------------------------------------------------------------
# times

_NUM_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DATETIME_RE = re.compile(
    r"(-?)([0-9]{4,})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?")
_DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((m + 9) % 12) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def parse_time(text: str) -> int | float:
    """A time as seconds since the Unix epoch: a number (``1700000000``,
    ``-3.5``, ``1.7e9``) or an ``xsd:dateTime`` lexical form
    (``2024-01-01T09:30:00Z``, ``2024-01-01T09:30:00.25+02:00``; no
    timezone = UTC).  Whole seconds come back as ``int``.  Raises
    ValueError for anything else, including non-finite numbers."""
    t = text.strip()
    if _NUM_RE.fullmatch(t):
        if "." in t or "e" in t or "E" in t:
            v = float(t)
            if not math.isfinite(v):
                raise ValueError(f"time {text!r} is not finite")
            return int(v) if v.is_integer() and abs(v) < 2**53 else v
        return int(t)
    m = _DATETIME_RE.fullmatch(t)
    if m is None:
        low = t.lower().lstrip("+-")
        if low in ("nan", "inf", "infinity"):
            raise ValueError(f"time {text!r} is not finite")
        raise ValueError(f"time {text!r} is neither a number of seconds nor an "
                         f"xsd:dateTime (e.g. 2024-01-01T09:30:00Z)")
    sign, y, mo, d, h, mi, s, frac, tz = m.groups()
    year, month, day = int(y), int(mo), int(d)
    if sign:
        year = -year
    hour, minute, sec = int(h), int(mi), int(s)
    leap = month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not (1 <= month <= 12 and 1 <= day <= _DAYS_IN_MONTH[month] + leap):
        raise ValueError(f"time {text!r}: no such date")
    if hour == 24 and minute == 0 and sec == 0 and not (frac and frac.strip(".0")):
        pass                                   # 24:00:00 is the next midnight
    elif hour > 23 or minute > 59 or sec > 59:
        raise ValueError(f"time {text!r}: no such time of day")
    offset = 0
    if tz and tz != "Z":
        th, tm = int(tz[1:3]), int(tz[4:6])
        if th > 14 or tm > 59 or (th == 14 and tm):
            raise ValueError(f"time {text!r}: bad timezone offset")
        offset = (th * 3600 + tm * 60) * (-1 if tz[0] == "-" else 1)
    whole = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + sec - offset
    if frac and frac.strip(".0"):
        return float(f"{whole}{frac}") if whole >= 0 else whole + float("0" + frac)
    return whole


def format_time(t: float | int, style: str = "seconds") -> str:
    """A time as the stream formats write it: seconds (integral values
    without a fraction, others with the shortest exact decimal) or, with
    ``style="iso"``, an ``xsd:dateTime`` in UTC."""
    if style == "iso":
        return _iso(t)
    if isinstance(t, float):
        if t.is_integer() and abs(t) < 1e16:
            return str(int(t))
        return repr(t)
    return str(t)


def _iso(t: float | int) -> str:
    from datetime import datetime, timedelta, timezone
    whole = math.floor(t)
    frac = t - whole
    try:
        dt = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=int(whole))
    except OverflowError:
        return format_time(t)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        micro = round(frac * 1e6)
        if micro >= 1_000_000:
            return _iso(whole + 1)
        if micro:
            text += f".{micro:06d}".rstrip("0")
    return text + "Z"


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


def _check_interval(start: int | float, end: int | float | None) -> None:
    if end is not None and end < start:
        raise _Bad(f"end time {format_time(end)} is before start time {format_time(start)}")


# ---------------------------------------------------------------------------
# line parsers (one per format); each returns a row, or None for a line to ignore

_IRI_PLAIN = r'<([^\x00-\x20<>"{}|^`\\]*)>'
_BNODE_LABEL = _BNODE_RE.pattern[2:]
_FAST_NT_RE = re.compile(
    r"[ \t]*(?:" + _IRI_PLAIN + r"|_:" + _BNODE_LABEL + r")[ \t]+" + _IRI_PLAIN + r"[ \t]+"
    r"(?:" + _IRI_PLAIN + r"|_:" + _BNODE_LABEL + r"|" + _STRING_RE.pattern
    + r"(?:@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*)|\^\^" + _IRI_PLAIN + r")?)"
    r"[ \t]+([+-]?[0-9]+)(?:[ \t]+([+-]?[0-9]+))?[ \t]*\.[ \t]*(?:#.*)?")
_lit_cache: dict[tuple, Literal] = {}
_lit_cache_chars = 0


def _fast_literal(raw: str, lang: str | None, dt: str | None) -> Literal:
    key = (raw, lang, dt)
    node = _lit_cache.get(key)
    if node is not None:
        return node
    lex = _unescape(raw, 0) if "\\" in raw else raw
    if lang is not None:
        node = Literal(lex, lang=lang)
    elif dt is not None:
        dtn = _iri(dt, 0)
        if str(dtn) == RDF_LANGSTRING:
            raise _Bad("rdf:langString literals need a language tag")
        node = Literal(lex, datatype=dtn, normalize=False)
    else:
        node = Literal(lex)
    global _lit_cache_chars
    if len(raw) <= 4096:                   # bounded: at most ~8M characters kept
        if len(_lit_cache) >= 50_000 or _lit_cache_chars > 8_000_000:
            _lit_cache.clear()
            _lit_cache_chars = 0
        _lit_cache[key] = node
        _lit_cache_chars += len(raw)
    return node


def _parse_nt_line(line: str) -> Row | None:
    m = _FAST_NT_RE.fullmatch(line)
    if m is not None:                      # the common case, in one match
        try:
            g = m.groups()
            s = _iri(g[0], 0) if g[0] is not None else BNode(g[1])
            p = _iri(g[2], 0)
            if g[3] is not None:
                o = _iri(g[3], 0)
            elif g[4] is not None:
                o = BNode(g[4])
            else:
                o = _fast_literal(g[5], g[6], g[7])
            start = int(g[8])
            end = None if g[9] is None else int(g[9])
            _check_interval(start, end)
            return (s, p, o, start, end)
        except _Bad:
            pass                           # the detailed parse below says where
    pos = _WS_RE.match(line).end()
    if pos == len(line) or line[pos] == "#":
        return None
    s, pos = _term_at(line, pos, "subject")
    pos = _ws_required(line, pos, "the subject")
    p, pos = _term_at(line, pos, "predicate")
    pos = _ws_required(line, pos, "the predicate")
    o, pos = _term_at(line, pos, "object")
    rest = line[pos:]
    body = rest.split("#", 1)[0].rstrip()
    if not body.endswith("."):
        raise _Bad("expected times then '.' at the end of the statement "
                   "(a line is: subject predicate object start [end] .)", pos + len(body))
    if rest[:1] not in (" ", "\t"):
        raise _Bad("expected whitespace then the start time after the object", pos)
    tokens = body[:-1].split()
    if not tokens:
        raise _Bad("missing start time (a line is: subject predicate object start [end] .)", pos)
    if len(tokens) > 2:
        raise _Bad(f"expected at most two times (start, end) before '.', found {len(tokens)} "
                   f"items: {' '.join(tokens)}", pos)
    try:
        start = parse_time(tokens[0])
        end = parse_time(tokens[1]) if len(tokens) == 2 else None
    except ValueError as e:
        raise _Bad(str(e), pos + 1) from None
    _check_interval(start, end)
    return (s, p, o, start, end)


_TIME_INT = r"[ \t]+([+-]?[0-9]+)(?:[ \t]+([+-]?[0-9]+))?"
_TIME_DEC = r"[ \t]+([+-]?[0-9]+(?:\.[0-9]+)?)(?:[ \t]+([+-]?[0-9]+(?:\.[0-9]+)?))?"
assert _TIME_INT in _FAST_NT_RE.pattern
_FAST_NT_DEC_RE = re.compile(_FAST_NT_RE.pattern.replace(_TIME_INT, _TIME_DEC))


def _num_time(text: str) -> int | float:
    """A time the fast pattern matched, as :func:`parse_time` gives it."""
    if "." not in text:
        return int(text)
    v = float(text)
    return int(v) if v.is_integer() and abs(v) < 2**53 else v


def _nt_texts_line(line: str) -> Row | None:
    """A line of the timestamped N-Triples format as N-Triples texts:
    without escapes the terms are cut out of the line as they are
    (checked as :func:`_parse_nt_line` checks them), else parsed and
    written back canonically."""
    m = _FAST_NT_DEC_RE.fullmatch(line)
    if m is not None and "\\" not in line:
        g = m.groups()
        try:
            if g[0] is not None:
                _iri(g[0], 0)
                s = f"<{g[0]}>"
            else:
                s = "_:" + g[1]
            _iri(g[2], 0)
            p = f"<{g[2]}>"
            if g[3] is not None:
                _iri(g[3], 0)
                o = f"<{g[3]}>"
            elif g[4] is not None:
                o = "_:" + g[4]
            elif g[6] is not None:
                o = f'"{g[5]}"@{g[6]}'
            elif g[7] is not None:
                _iri(g[7], 0)
                o = f'"{g[5]}"^^<{g[7]}>'
            else:
                o = f'"{g[5]}"'
            start = _num_time(g[8])
            end = None if g[9] is None else _num_time(g[9])
            _check_interval(start, end)
            return (s, p, o, start, end)
        except _Bad:
            pass                           # the full parse says where
    row = _parse_nt_line(line)
    if row is None:
        return None
    return (format_term(row[0]), format_term(row[1]), format_term(row[2]), row[3], row[4])


def _ws_required(line: str, pos: int, after: str) -> int:
    end = _WS_RE.match(line, pos).end()
    if end == pos:
        raise _Bad(f"expected whitespace after {after}", pos)
    return end


def _term_field(value: Any, key: str) -> Node:
    if isinstance(value, str):
        try:
            node, end = _term_at(value.strip(), 0, "object")
        except _Bad as e:
            raise _Bad(f'"{key}": {e.message}') from None
        if end != len(value.strip()):
            raise _Bad(f'"{key}": unexpected text after the term: {value.strip()[end:]!r}')
    else:
        try:
            node = term_from_json(value)
        except ValueError as e:
            raise _Bad(f'"{key}": {e}') from None
    if key == "p" and not isinstance(node, URIRef):
        raise _Bad(f'"p": the predicate must be an IRI, got {value!r}')
    if key == "s" and isinstance(node, Literal):
        raise _Bad(f'"s": the subject must be an IRI or a blank node, got {value!r}')
    return node


def _row_from_fields(get: Callable[[str], Any], has_end: bool) -> Row:
    s = _term_field(get("s"), "s")
    p = _term_field(get("p"), "p")
    o = _term_field(get("o"), "o")
    try:
        start = _time_value(get("start"), "start")
        e = get("end") if has_end else None
        end = None if e is None or e == "" else _time_value(e, "end")
    except ValueError as err:
        raise _Bad(str(err)) from None
    _check_interval(start, end)
    return (s, p, o, start, end)


def _parse_jsonl_line(line: str) -> Row | None:
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise _Bad(f"invalid JSON: {e.msg}", e.colno - 1) from None
    if not isinstance(obj, dict):
        raise _Bad(f"expected a JSON object {{\"s\", \"p\", \"o\", \"start\"[, \"end\"]}}, "
                   f"got {type(obj).__name__}")
    missing = [k for k in ("s", "p", "o", "start") if obj.get(k) is None]
    if missing:
        raise _Bad("missing " + ", ".join(f'"{k}"' for k in missing)
                   + ' (an object has "s", "p", "o", "start" and optionally "end")')
    return _row_from_fields(obj.get, True)


# ---------------------------------------------------------------------------
# reading

_EXTENSIONS = {".nt": "nt", ".ntt": "nt", ".ntx": "nt", ".jsonl": "jsonl", ".ndjson": "jsonl",
               ".json": "jsonl", ".csv": "csv"}


def guess_format(path: str | os.PathLike | None, default: str = "nt") -> str:
    """The format of a file from its name (``.nt``/``.ntt``, ``.jsonl``/
    ``.ndjson``, ``.csv``, each optionally ``.gz``); ``default`` otherwise."""
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
    ``"jsonl"`` or ``"csv"`` (default: guessed from the file name, else
    ``"nt"``).  ``on_error="stop"`` raises :class:`StreamFormatError` at the
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
        return self._rows(_parse_nt_line)

    def texts(self) -> Iterator[Row]:
        """Rows with the terms as N-Triples text instead of rdflib terms
        (what travels between Spark stages): the same lines accepted and
        the same errors; plain N-Triples lines skip building terms."""
        if self.format == "nt":
            return self._rows(_nt_texts_line)
        return ((format_term(s), format_term(p), format_term(o), t1, t2)
                for s, p, o, t1, t2 in self._rows(_parse_nt_line))

    def _rows(self, parse_nt: Callable[[str], Row | None]) -> Iterator[Row]:
        f = self._open()
        self._file = f
        try:
            if self.format == "csv":
                yield from self._csv_rows(f)
            else:
                parse = parse_nt if self.format == "nt" else _parse_jsonl_line
                for line in self._lines(f):
                    self.line += 1
                    if line is None:
                        self._error("not valid UTF-8")
                        continue
                    try:
                        row = parse(line)
                    except _Bad as e:
                        self._error(e.message, e.col)
                        continue
                    if row is not None:
                        self.rows += 1
                        yield row
        finally:
            self.close()

    def _csv_rows(self, f: IO) -> Iterator[Row]:
        bad_utf8 = "\udcff"

        def lines() -> Iterator[str]:
            for line in self._lines(f):
                yield bad_utf8 if line is None else line

        reader = csv.reader(lines())
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
                    raise StreamFormatError("the header is not valid UTF-8", self.path, self.line)
                self._error("not valid UTF-8")
                continue
            if header is None:
                header = [h.strip().lower() for h in fields]
                index = {h: i for i, h in enumerate(header)}
                missing = [c for c in ("s", "p", "o", "start") if c not in index]
                if missing or len(index) != len(header):
                    raise StreamFormatError(
                        "the CSV header must name the columns s,p,o,start[,end] "
                        f"(found {','.join(fields)!r}" + (f"; missing {', '.join(missing)}" if missing else
                                                             "; a column is named twice") + ")",
                        self.path, self.line)
                continue
            if len(fields) != len(header):
                self._error(f"expected {len(header)} fields ({','.join(header)}), found {len(fields)}")
                continue
            has_end = "end" in index
            try:
                row = _row_from_fields(lambda k: fields[index[k]] if k in index else None, has_end)
            except _Bad as e:
                self._error(e.message)
                continue
            self.rows += 1
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
    """Write rows ``(s, p, o, start[, end])`` in a stream format.

    ``time_format="iso"`` writes times as ``xsd:dateTime`` in UTC."""

    def __init__(self, dest: str | os.PathLike | IO | None, format: str = "nt", *,
                 time_format: str = "seconds") -> None:
        if format not in FORMATS:
            raise ValueError(f"unknown stream format {format!r} (one of {', '.join(FORMATS)})")
        self.format = format
        self.time_format = time_format
        self.out, self._owned = open_output(dest)
        self.count = 0
        self._csv = None
        if format == "csv":
            self._csv = csv.writer(self.out, lineterminator="\n")
            self._csv.writerow(["s", "p", "o", "start", "end"])

    def _time(self, t: Any) -> Any:
        from ..engine import seconds
        return format_time(seconds(t), self.time_format)

    def write(self, row: Sequence[Any]) -> None:
        s, p, o, start = row[0], row[1], row[2], row[3]
        end = row[4] if len(row) > 4 else None
        st = self._time(start)
        en = None if end is None else self._time(end)
        if self.format == "nt":
            tail = st if en is None else f"{st} {en}"
            self.out.write(f"{format_term(s)} {format_term(p)} {format_term(o)} {tail} .\n")
        elif self.format == "jsonl":
            obj: dict[str, Any] = {"s": format_term(s), "p": format_term(p), "o": format_term(o),
                                   "start": _json_time(st)}
            if en is not None:
                obj["end"] = _json_time(en)
            self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        else:
            self._csv.writerow([format_term(s), format_term(p), format_term(o), st,
                                "" if en is None else en])
        self.count += 1

    def write_many(self, rows: Iterable[Sequence[Any]]) -> int:
        n = 0
        for row in rows:
            self.write(row)
            n += 1
        return n

    def close(self) -> None:
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
    if _NUM_RE.fullmatch(text):
        return float(text) if ("." in text or "e" in text or "E" in text) else int(text)
    return text


def write_stream(rows: Iterable[Sequence[Any]], dest: str | os.PathLike | IO | None,
                 format: str = "nt", *, time_format: str = "seconds") -> int:
    """Write rows ``(s, p, o, start[, end])`` to ``dest`` (a path, ``"-"``
    or a text file object) in ``format``; returns the number written."""
    with StreamWriter(dest, format, time_format=time_format) as w:
        return w.write_many(rows)
