"""RDF terms in N-Triples syntax: read them exactly, write them canonically.

``<iri>`` (absolute, ``\\u``/``\\U`` escapes), ``_:label``, ``"lexical"``
with ``@lang`` or ``^^<datatype>`` and the string escapes of N-Triples.
Every term of every stream format is written this way (see docs/CLI.md);
the line formats in :mod:`epsparql.io.streams` build on :func:`term_at`
and the patterns here.  IRIs and short literals repeat in streams, so
their parses are remembered (bounded, :mod:`epsparql.memo`).
"""
from __future__ import annotations

import re
from itertools import repeat
from operator import itemgetter
from typing import Callable

from rdflib.term import BNode, Literal, Node, URIRef

from ..core.terms import Compound
from ..memo import BoundedCache

__all__ = ["TermSyntaxError", "parse_term", "format_term", "format_encoded_numbers", "escape_lexical",
           "number_texts", "term_at", "iri", "literal",
           "unescape", "IRI_CHAR", "IRI_PATTERN", "IRI_PLAIN_PATTERN", "IRI_ABSOLUTE_PLAIN_PATTERN",
           "BNODE_LABEL_PATTERN", "STRING_PATTERN", "STRING_PLAIN_PATTERN", "LANG_PATTERN",
           "SCHEME_PATTERN", "SCHEME_RE", "RDF_LANGSTRING", "absolute_iri_problem"]

RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


class TermSyntaxError(ValueError):
    """A malformed term: ``message`` and the 0-based column ``col`` in the
    text read (None when not known)."""

    def __init__(self, message: str, col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.col = col


#: A character of an IRI as written between ``<>``, escapes aside.
IRI_CHAR = r'[^\x00-\x20<>"{}|^`\\]'
#: ``<iri>`` with escapes; group 1 is the text between the brackets.
IRI_PATTERN = r'<((?:' + IRI_CHAR + r'++|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*+)>'
#: ``<iri>`` without escapes (the common case, one regex step).
IRI_PLAIN_PATTERN = '<(' + IRI_CHAR + '*)>'
#: An IRI scheme (N-Triples IRIs are absolute).
SCHEME_PATTERN = r"[A-Za-z][A-Za-z0-9+.\-]*:"
#: ``<iri>`` without escapes that :func:`iri` takes as it is (absolute), so
#: a match needs no further check (also an RE2 pattern: the columnar reader
#: of :mod:`epsparql.io.stream_batches` matches lines with it).
IRI_ABSOLUTE_PLAIN_PATTERN = '<(' + SCHEME_PATTERN + IRI_CHAR + '*)>'
#: A blank node label (after ``_:``), as one group.
BNODE_LABEL_PATTERN = (r"((?:[A-Za-z0-9_]|[^\x00-\x7f])"
                       r"(?:(?:[A-Za-z0-9_\-.]|[^\x00-\x7f])*(?:[A-Za-z0-9_\-]|[^\x00-\x7f]))?)")
#: A quoted string with its escapes; group 1 is the raw text between the quotes.
STRING_PATTERN = r'"((?:[^"\\\n\r]++|\\(?:[tbnrf"\'\\]|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}))*+)"'
#: A quoted string without escapes (its raw text is its lexical form).
STRING_PLAIN_PATTERN = r'"([^"\\\n\r]*)"'
#: A language tag after its ``@``, as one group.
LANG_PATTERN = r"@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*)"
SCHEME_RE = re.compile(SCHEME_PATTERN)

_IRI_RE = re.compile(IRI_PATTERN)
_BNODE_RE = re.compile("_:" + BNODE_LABEL_PATTERN)
_STRING_RE = re.compile(STRING_PATTERN)
_LANG_RE = re.compile(LANG_PATTERN)
_DT_RE = re.compile(r"\^\^" + IRI_PATTERN)
_ESCAPE_RE = re.compile(r"\\(?:([tbnrf\"'\\])|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_SURROGATE_RE = re.compile("[\ud800-\udfff]")

_IRIS = BoundedCache(100_000)          # raw text between <> -> URIRef
_LITERALS = BoundedCache(50_000)       # (raw, lang, datatype raw) -> Literal
_MAX_CACHED_LITERAL = 160              # longer lexical forms rarely repeat: not kept


def unescape(text: str, col: int = 0) -> str:
    """The N-Triples string or IRI escapes of ``text`` resolved (``col``: where
    ``text`` starts, for errors)."""
    def repl(m: re.Match) -> str:
        if m.group(1) is not None:
            return _ECHAR[m.group(1)]
        cp = int(m.group(2) or m.group(3), 16)
        if cp > 0x10FFFF:
            raise TermSyntaxError(f"escape {m.group(0)} is beyond U+10FFFF", col + m.start())
        return chr(cp)

    out = _ESCAPE_RE.sub(repl, text)
    if _SURROGATE_RE.search(out):
        # \uD83D\uDE00 (a UTF-16 pair, as Java writes) is one character
        try:
            out = out.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise TermSyntaxError("unpaired surrogate escape (not a Unicode character)",
                                  col) from None
    return out


def iri(raw: str, col: int = 0) -> URIRef:
    """The IRI whose text between ``<>`` is ``raw`` (escapes resolved;
    relative IRIs refused)."""
    node = _IRIS.get(raw)
    if node is not None:
        return node
    text = unescape(raw, col) if "\\" in raw else raw
    if not SCHEME_RE.match(text):
        raise TermSyntaxError(f"relative IRI <{text}> (N-Triples IRIs are absolute)", col)
    return _IRIS.put(raw, URIRef(text))


_IRI_BODY_RE = re.compile(IRI_CHAR + '*')


def absolute_iri_problem(text: str) -> str | None:
    """Why ``text`` is not an absolute IRI (as written between ``<>``,
    without escapes), or None when it is one: a base IRI given on a
    command line or to :class:`~epsparql.Engine` is checked with this."""
    if not isinstance(text, str):
        return f"not text: {text!r}"
    if not SCHEME_RE.match(text):
        return "it has no scheme (such as http:)"
    bad = _IRI_BODY_RE.match(text).end()
    if bad < len(text):
        ch = text[bad]
        what = "a space" if ch == " " else f"the character {ch!r}"
        return f"{what} at position {bad + 1} is not allowed in an IRI"
    return None


def literal(raw: str, lang: str | None, dt: str | None) -> Literal:
    """The literal of a quoted string's raw text, with a language tag or the
    raw text of a datatype IRI (or neither)."""
    key = (raw, lang, dt)
    node = _LITERALS.get(key)
    if node is not None:
        return node
    lex = unescape(raw) if "\\" in raw else raw
    if lang is not None:
        node = Literal(lex, lang=lang)
    elif dt is not None:
        dtn = iri(dt)
        if str(dtn) == RDF_LANGSTRING:
            raise TermSyntaxError("rdf:langString literals need a language tag")
        node = Literal(lex, datatype=dtn, normalize=False)
    else:
        node = Literal(lex)
    if len(raw) <= _MAX_CACHED_LITERAL:
        _LITERALS.put(key, node)
    return node


def term_at(line: str, pos: int, role: str) -> tuple[Node, int]:
    """The term at ``pos`` of ``line`` in the ``role`` subject, predicate,
    object or stream (N-Quads' graph position: an IRI; which decides what
    may stand there), and where it ends.
    Raises :class:`TermSyntaxError` saying what is wrong, and where."""
    ch = line[pos:pos + 1]
    if ch == "<":
        m = _IRI_RE.match(line, pos)
        if m is None:
            raise TermSyntaxError(f"malformed IRI in the {role} (an IRI is <...> without spaces, "
                                  f"quotes or <>{{}}|^`\\ characters)", pos)
        return iri(m.group(1), pos), m.end()
    if ch == "_" and role not in ("predicate", "stream"):
        m = _BNODE_RE.match(line, pos)
        if m is None:
            raise TermSyntaxError(f"malformed blank node in the {role} (expected _:label)", pos)
        return BNode(m.group(1)), m.end()
    if ch == '"' and role == "object":
        m = _STRING_RE.match(line, pos)
        if m is None:
            raise _literal_problem(line, pos)
        raw = m.group(1)
        lex = unescape(raw, pos) if "\\" in raw else raw
        end = m.end()
        nxt = line[end:end + 1]
        if nxt == "@":
            lm = _LANG_RE.match(line, end)
            if lm is None:
                raise TermSyntaxError("malformed language tag (expected @ and letters, "
                                      "e.g. @en or @en-GB)", end)
            return Literal(lex, lang=lm.group(1)), lm.end()
        if nxt == "^":
            dm = _DT_RE.match(line, end)
            if dm is None:
                raise TermSyntaxError("malformed datatype (expected ^^<IRI>)", end)
            dt = iri(dm.group(1), end + 2)
            if str(dt) == RDF_LANGSTRING:
                raise TermSyntaxError("rdf:langString literals need a language tag "
                                      "(write \"...\"@lang)", end)
            return Literal(lex, datatype=dt, normalize=False), dm.end()
        return Literal(lex), end
    allowed = {"subject": "an IRI <...> or a blank node _:x",
               "predicate": "an IRI <...>",
               "stream": "an IRI <...>",
               "object": "an IRI <...>, a blank node _:x or a literal \"...\""}[role]
    found = repr(line[pos:pos + 12]) if pos < len(line) else "the end of the line"
    raise TermSyntaxError(f"expected {allowed} as the {role}, found {found}", pos)


_BAD_ESCAPE_RE = re.compile(r'\\(?![tbnrf"\'\\]|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})')


def _literal_problem(line: str, pos: int) -> TermSyntaxError:
    """Why the literal starting at ``pos`` does not parse."""
    i = pos + 1
    while i < len(line):
        c = line[i]
        if c == '"':
            break
        if c == "\\":
            if _BAD_ESCAPE_RE.match(line, i):
                return TermSyntaxError(f"bad escape {line[i:i + 2]!r} in a literal (allowed: \\t "
                                       f"\\b \\n \\r \\f \\\" \\' \\\\ \\uXXXX \\UXXXXXXXX)", i)
            i += 2
            continue
        if c in "\r\n":
            return TermSyntaxError("raw line break in a literal (write \\n or \\r)", i)
        i += 1
    return TermSyntaxError("literal without its closing quote", pos)


def parse_term(text: str) -> Node:
    """One RDF term in N-Triples syntax (``<iri>``, ``_:b``, ``"lit"``,
    ``"lit"@en``, ``"1"^^<dt>``) as an rdflib term.  Raises ValueError.
    Only N-Triples' white space around it is dropped (space, tab, line
    ends): ``str.strip()`` would also take U+0085 and the like, which a
    blank node label may end with."""
    s = text.strip(" \t\r\n")
    try:
        node, end = term_at(s, 0, "object")
    except TermSyntaxError as e:
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


def escape_lexical(lex: str) -> str:
    """A lexical form as it stands between the quotes of an N-Triples
    literal (character by character: a text cut anywhere escapes to the
    pieces of its escaped text)."""
    if _LIT_ESC_RE.search(lex):
        return _LIT_ESC_RE.sub(_lit_esc, lex)
    return lex


def _iri_text(text: str) -> str:
    if _IRI_ESC_RE.search(text):
        text = _IRI_ESC_RE.sub(lambda m: f"\\u{ord(m.group(0)):04X}", text)
    return f"<{text}>"


_NT_DOUBLE = '"^^<http://www.w3.org/2001/XMLSchema#double>'
_NT_INTEGER = '"^^<http://www.w3.org/2001/XMLSchema#integer>'


def format_encoded_numbers(values: list) -> list[str | None]:
    """The N-Triples text of each encoded term that is a number or a
    typed literal of the codec (a bare number, the codec's canonical
    xsd:double or xsd:integer, or any ``n/3``, ``d/3``, ``dur/3``: what
    aggregates and getDURATION() make), written without building the
    rdflib term: ``format_term(decode(value))``; None for any other
    encoded term."""
    return number_texts(values, '"', _NT_DOUBLE, _NT_INTEGER, _nt_typed, _nt_typed_tail)


def _nt_typed(lex: str, dt: str) -> str:
    lex = escape_lexical(lex)
    return f'"{lex}"^^{_iri_text(dt)}'


def _nt_typed_tail(dt: str) -> str:
    return '"^^' + _iri_text(dt)


#: A lexical form that N-Triples and JSON write as it is between quotes
#: (printable ASCII but the quote and the backslash): the numerals.
_PLAIN_LEX = re.compile(r'[ !#-\[\]-~]*\Z').match
_TYPED_NAMES = frozenset(("n", "d", "dur"))


def number_texts(values: list, head: str, double_tail: str, integer_tail: str,
                 typed: Callable[[str, str], str] | None = None,
                 typed_tail: Callable[[str], str] | None = None) -> list[str | None]:
    """``head + repr(v) + tail`` of each bare number of ``values`` (the
    tail of its type), ``typed(lexical, datatype)`` of each ``n/3``,
    ``d/3`` and ``dur/3`` term (the codec's other typed literals; the
    decoded literal keeps its lexical form), None for anything else; each
    distinct non-zero float written once (0.0 and -0.0 are equal in
    Python, not in RDF).  ``typed_tail(datatype)``: what follows a plain
    lexical form (:data:`_PLAIN_LEX`) after ``head``, made once per
    datatype, so that a column of computed numerals (each answer's own)
    costs a concatenation per value."""
    if typed_tail is not None and typed is not None and values:
        same = _same_typed(values)
        if same is not None:
            dt, lexes = same
            tail = typed_tail(dt)
            return [head + lex + tail for lex in lexes]
    memo: dict[float, str] = {}
    tails: dict[str, str] = {}
    out: list[str | None] = []
    add = out.append
    for v in values:
        tp = type(v)
        if tp is float:
            if v:
                t = memo.get(v)
                if t is None:
                    t = memo[v] = head + repr(v) + double_tail
                add(t)
            else:
                add(head + repr(v) + double_tail)
        elif tp is int:
            add(head + repr(v) + integer_tail)
        elif tp is Compound and typed is not None and v.name in _TYPED_NAMES and len(v.args) == 3 \
                and isinstance(v.args[1], str) and isinstance(v.args[2], str):
            dt, lex = v.args[1], v.args[2]
            if typed_tail is not None and _PLAIN_LEX(lex):
                t = tails.get(dt)
                if t is None:
                    t = tails[dt] = typed_tail(str(dt))
                add(head + lex + t)
            else:
                add(typed(str(lex), str(dt)))
        else:
            add(None)
    return out


_NAME, _ARGS = itemgetter(0), itemgetter(1)
_DATATYPE, _LEXICAL = itemgetter(1), itemgetter(2)


def _same_typed(values: list) -> tuple[str, list[str]] | None:
    """(datatype, lexical forms) when every value is an ``n/3``, ``d/3`` or
    ``dur/3`` term of one datatype whose lexical form is plain
    (:data:`_PLAIN_LEX`): a column of computed numerals (an AVG's, one per
    answer), checked and taken apart a column at a time; else None."""
    if set(map(type, values)) != {Compound} or not set(map(_NAME, values)) <= _TYPED_NAMES:
        return None
    args = list(map(_ARGS, values))
    if set(map(len, args)) != {3}:
        return None
    dts = set(map(_DATATYPE, args))
    if len(dts) != 1:
        return None
    dt = dts.pop()
    lexes = list(map(_LEXICAL, args))
    if not isinstance(dt, str) or not all(map(isinstance, lexes, repeat(str))) \
            or not _PLAIN_LEX("".join(lexes)):
        return None
    return str(dt), lexes


def format_term(node: Node) -> str:
    """An rdflib term in (canonical) N-Triples syntax; :func:`parse_term`
    reads it back to an equal term."""
    if isinstance(node, URIRef):
        return _iri_text(str(node))
    if isinstance(node, Literal):
        lex = escape_lexical(str(node))
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
