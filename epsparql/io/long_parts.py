"""The text of a large literal in an answer file, made as it is written.

An answer's literal with a long lexical form (longer than
:data:`~epsparql.memo.LONG_KEY`: a document, a payload) would cost a
writer an rdflib term (two copies of the text), its JSON or N-Triples
text (one more, escaped) and the line made of it.  Instead the writers
take a :class:`TextParts`, made straight from the encoded term (which
holds the text the push made, :mod:`epsparql.core.long_text`): a head, the
lexical form and a tail, the lexical form escaped and written a piece at
a time (escaping is character by character, so pieces escape to the
pieces of the escaped text).  ``str()`` of it is the whole text, which
:func:`~epsparql.io.results.term_json_text` and
:func:`~epsparql.rdf.ntriples.format_term` give for the decoded term.
"""
from __future__ import annotations

import json
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import IO, Any, Callable

from ..core.terms import Compound
from ..memo import LONG_KEY
from ..rdf.ntriples import escape_lexical

__all__ = ["TextParts", "WRITE_PIECE", "json_parts", "nt_parts", "csv_field", "write_pieces"]

#: a long text is written in pieces of this many characters (its UTF-8
#: bytes are made a piece at a time, not all at once)
WRITE_PIECE = 1 << 20


class TextParts:
    """``head + escape(lex) + tail``, written a piece of ``lex`` at a time."""

    __slots__ = ("head", "lex", "tail", "escape")

    def __init__(self, head: str, lex: str, tail: str, escape: Callable[[str], str]) -> None:
        self.head, self.lex, self.tail, self.escape = head, lex, tail, escape

    def __len__(self) -> int:         # (at least: escapes make the text longer)
        return len(self.head) + len(self.lex) + len(self.tail)

    def write_to(self, out: IO) -> None:
        """Write the text to ``out``, a piece of the lexical form at a time."""
        out.write(self.head)
        lex, escape, step = self.lex, self.escape, WRITE_PIECE
        for i in range(0, len(lex), step):
            out.write(escape(lex[i:i + step]))
        out.write(self.tail)

    def __str__(self) -> str:
        return "".join((self.head, self.escape(self.lex), self.tail))


def _long_literal(v: Any) -> tuple[str, str | None] | None:
    """``(lexical form, language or None)`` of an encoded simple or
    language-tagged literal (``s(Lex)``, ``l(Lex, Lang)``: see
    :mod:`epsparql.rdf.codec`) whose lexical form is long; else None."""
    if type(v) is not Compound:
        return None
    name, args = v
    if name == "s" and len(args) == 1:
        lang = None
    elif name == "l" and len(args) == 2 and isinstance(args[1], str):
        lang = str(args[1])
    else:
        return None
    lex = args[0]
    if not isinstance(lex, str) or len(lex) <= LONG_KEY:
        return None
    return lex, lang


def _json_escape(piece: str) -> str:
    return encode_basestring(piece)[1:-1]


def json_parts(v: Any) -> TextParts | None:
    """The SPARQL JSON term of a long simple or tagged literal (encoded),
    as ``json.dumps(term_to_json(decode(v)), ensure_ascii=False)`` writes
    it; None for any other term."""
    got = _long_literal(v)
    if got is None:
        return None
    lex, lang = got
    tail = '"}' if lang is None else \
        '", "xml:lang": ' + json.dumps(lang, ensure_ascii=False) + "}"
    return TextParts('{"type": "literal", "value": "', lex, tail, _json_escape)


def nt_parts(v: Any) -> TextParts | None:
    """The N-Triples text of a long simple or tagged literal (encoded), as
    ``format_term(decode(v))`` writes it; None for any other term."""
    got = _long_literal(v)
    if got is None:
        return None
    lex, lang = got
    return TextParts('"', lex, '"' if lang is None else '"@' + lang, escape_lexical)


def csv_field(p: TextParts) -> TextParts:
    """A text's parts as a CSV field, quoted, its quotes doubled (what
    ``csv.writer`` writes of a field with a quote in it: an N-Triples
    literal has two)."""
    escape = p.escape
    return TextParts('"' + p.head.replace('"', '""'), p.lex, p.tail.replace('"', '""') + '"',
                     lambda piece: escape(piece).replace('"', '""'))


def write_pieces(out: IO, parts: Any) -> None:
    """Write the texts (or :class:`TextParts`) one after the other, a long
    one a piece at a time."""
    for p in parts:
        if type(p) is TextParts:
            p.write_to(out)
            continue
        if len(p) <= WRITE_PIECE:
            out.write(p)
            continue
        for i in range(0, len(p), WRITE_PIECE):
            out.write(p[i:i + WRITE_PIECE])
