"""EP-SPARQL query parser: query text -> AST (:mod:`epsparql.language.ast`).

This module is one pass, text to AST; it does no evaluation and no algebra.
The grammar (``grammar.lark``) is SPARQL 1.1's query syntax extended with the
temporal operators SEQ, EQUALS, OPTIONALSEQ and EQUALSOPTIONAL, which join
group graph patterns exactly like UNION (one left-associative level), and it
is parsed with Lark's LALR(1) parser, built once per machine (lark_cache.py).

Leniencies (so that the queries printed in the EP-SPARQL paper parse as is)
---------------------------------------------------------------------------
* **Bare names as IRIs.**  A bare word such as ``hasStockPrice``, ``rater``
  or ``downratedby`` in a subject, predicate or object position is read as
  the IRI ``BASE + name`` (plain string concatenation, no RFC 3986
  resolution).  BASE is the query's ``BASE``, else the ``base`` argument of
  :func:`parse_query`, else :data:`DEFAULT_BASE` (``http://epsparql.org/ns#``).
  A bare name starts with a letter and continues with letters, digits or
  ``_``; keywords (``SEQ``, ``FILTER``, ``a``, ``true``, ...) are never bare
  names.
  Bare names are *not* accepted in expressions (``FILTER(?x = foo)`` is an
  error), only as function names (``BOUND(?x)``, ``getDURATION()``).
* **The empty prefix** ``:`` means that same base unless declared.
* **Predeclared prefixes**: ``xsd``, ``rdf``, ``rdfs`` and ``owl`` have their
  standard IRIs unless the query declares them.
* **Paper-style WHERE clauses**: after ``WHERE`` (or in a sub-select) a chain
  of groups joined by SEQ/EQUALS/OPTIONALSEQ/EQUALSOPTIONAL/UNION may be
  followed by FILTERs outside any braces::

      WHERE { A } SEQ { B } FILTER (f)

  is represented exactly as ``WHERE { { A } SEQ { B } FILTER (f) }``, i.e.
  ``Group((TemporalJoin('SEQ', A, B), Filter(f)))``.
* **Paper-style CONSTRUCT templates** without braces:
  ``CONSTRUCT ?c downratedby ?r WHERE { ... }``.
* **Unparenthesised SELECT expressions** ``SELECT ?sum / ?count AS ?average``.
  Such an expression may not start with ``+``, ``-``, a signed number or
  ``NOT EXISTS`` (after a previous projection that would be ambiguous); write
  those in the standard form ``(expr AS ?v)``.
* Relative IRIs ``<x>`` are resolved (RFC 3986) against the BASE when the
  query declares one or ``base`` is given; otherwise they are left as written.
* ``FILTER NOT EXISTS``/``EXISTS``, ``IN``/``NOT IN``, ``MINUS``, sub-selects
  and ``CONSTRUCT WHERE { ... }`` are accepted as in SPARQL 1.1.

Not supported (syntax errors): RDF collections ``( ... )`` in triples and
negated property sets ``!(...)`` in paths.

Literals are rdflib Literals, so rdflib's lexical normalisation applies
(``+7`` -> ``"7"``, ``1e3`` -> ``"1000.0"``), except to a typed literal
rdflib finds ill-typed, which keeps its lexical form as written (rdflib
would turn ``"yes"^^xsd:boolean`` into ``"false"``; translation reports
the literal as invalid).  A sign in front of a number
literal is folded into it: ``-5`` and ``- 5`` are ``Literal('-5')``, not
``UnaryOp('-', 5)``.

Rejections (:class:`QueryError` naming the construct, with its position)
-----------------------------------------------------------------------
LIMIT, OFFSET and ORDER BY (meaningless on an unbounded stream); GROUP BY,
HAVING and aggregates (not supported yet); DESCRIBE, FROM, SERVICE and VALUES
(not supported); unknown prefixes; unknown built-in functions and wrong
numbers of arguments; property paths in CONSTRUCT templates.  Malformed text
raises :class:`QuerySyntaxError` with line, column and a readable message.
No other exception escapes :func:`parse_query` for any ``str`` argument.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable
from pathlib import Path as _FsPath
from urllib.parse import urljoin

from lark import Lark, Token, Tree, v_args
from lark.visitors import Transformer_NonRecursive
from lark.exceptions import (UnexpectedCharacters, UnexpectedEOF,
                             UnexpectedInput, UnexpectedToken, VisitError)
from rdflib import BNode, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, XSD

from . import ast as A
from .errors import QueryError, QuerySyntaxError
from .lark_cache import cached_lark
from .scope import check_scopes

__all__ = ["parse_query", "DEFAULT_BASE", "BUILTIN_ARITY", "MAX_NESTING", "check_nesting"]

#: Base for bare names and the undeclared empty prefix when there is no BASE.
DEFAULT_BASE = "http://epsparql.org/ns#"

_PREDECLARED = {"xsd": str(XSD), "rdf": str(RDF), "rdfs": str(RDFS),
                "owl": str(OWL)}

#: Built-in functions: upper-case name -> (min args, max args or None).
BUILTIN_ARITY: dict[str, tuple[int, int | None]] = {
    **{n: (1, 1) for n in (
        "STR", "LANG", "DATATYPE", "BOUND", "IRI", "ABS", "CEIL", "FLOOR",
        "ROUND", "STRLEN", "UCASE", "LCASE", "ENCODE_FOR_URI", "YEAR",
        "MONTH", "DAY", "HOURS", "MINUTES", "SECONDS", "TIMEZONE", "TZ",
        "MD5", "SHA1", "SHA256", "SHA384", "SHA512", "ISIRI", "ISBLANK",
        "ISLITERAL", "ISNUMERIC")},
    **{n: (2, 2) for n in (
        "LANGMATCHES", "CONTAINS", "STRSTARTS", "STRENDS", "STRBEFORE",
        "STRAFTER", "STRLANG", "STRDT", "SAMETERM")},
    **{n: (0, 0) for n in (
        "RAND", "NOW", "UUID", "STRUUID",
        "GETDURATION", "GETSTARTTIME", "GETENDTIME")},
    "BNODE": (0, 1), "SUBSTR": (2, 3), "REPLACE": (3, 4), "REGEX": (2, 3),
    "IF": (3, 3), "CONCAT": (0, None), "COALESCE": (0, None),
}
_BUILTIN_ALIASES = {"ISURI": "ISIRI", "URI": "IRI"}
_AGGREGATES = {"COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT"}

_NUMBER_TYPES = {
    "INTEGER": XSD.integer, "DECIMAL": XSD.decimal, "DOUBLE": XSD.double,
}
_STRING_QUOTES = {"STRING_LITERAL1": 1, "STRING_LITERAL2": 1,
                  "STRING_LITERAL_LONG1": 3, "STRING_LITERAL_LONG2": 3}
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f",
          '"': '"', "'": "'", "\\": "\\"}
_ABSOLUTE_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_NOT_IN_IRI = re.compile(r'[\x00-\x20<>"{}|^`\\]')


# ------------------------------------------------------------------ entry

def parse_query(text: str, *, base: str | None = None) -> A.Query:
    """Parse EP-SPARQL ``text`` into a SelectQuery, ConstructQuery or AskQuery.

    ``base`` is used as BASE when the query declares none (for relative IRIs
    and bare names).  Raises QuerySyntaxError for malformed text and
    QueryError for well-formed but unsupported or invalid queries; never any
    other exception for a ``str`` argument.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_query() needs a str, not {type(text).__name__}")
    if base is not None and not (isinstance(base, str) and _ABSOLUTE_IRI.match(base)
                                 and not _NOT_IN_IRI.search(base)):
        raise ValueError(f"base must be an absolute IRI, got {base!r}")
    try:
        return _parse(text, base)
    except QueryError as err:
        raise err.with_source(text) from None
    except RecursionError:
        raise QueryError("the query is nested too deeply to be parsed",
                         source=text) from None
    except Exception as err:  # noqa: BLE001 -- the "never escapes" promise
        raise QuerySyntaxError(f"cannot parse the query ({type(err).__name__}: "
                               f"{err})", *_end_position(text),
                               source=text) from None


#: Deepest nesting of groups, parentheses, brackets and prefix operators
#: ('!', '-', '+') a query may have.  Far beyond what people write or
#: tools generate for a chain (a chain is not nested: 2,000 UNIONs are
#: one level); it bounds the depth of what reaches the Prolog core.
MAX_NESTING = 1000

_OPEN = {"LBRACE", "LPAR", "LSQB"}
_CLOSE = {"RBRACE", "RPAR", "RSQB"}
_PREFIX = {"BANG", "PLUS", "DASH"}


def check_nesting(tokens: Iterable[Token]) -> None:
    """QueryError at the first bracket or prefix operator of ``tokens`` (a
    Lark lexer's, of this grammar or a stream dialect's) nested more than
    :data:`MAX_NESTING` levels deep; a lexing error ends the check (the
    parser reports it)."""
    depth = run = 0
    try:
        for token in tokens:
            if token.type in _PREFIX:
                run += 1
            else:
                run = 0
            if token.type in _OPEN:
                depth += 1
            elif token.type in _CLOSE:
                depth = max(0, depth - 1)
            if depth + run > MAX_NESTING:
                raise QueryError(
                    f"the query nests groups, parentheses, brackets or prefix operators "
                    f"more than {MAX_NESTING:,} levels deep, the limit", token.line,
                    token.column)
    except UnexpectedInput:
        return


def _check_nesting(text: str) -> None:
    check_nesting(_lark().lex(text))


def _parse(text: str, base: str | None) -> A.Query:
    """Parse, reject unsupported constructs, then build the AST."""
    _check_nesting(text)
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as err:
        raise _syntax_error(err, text) from None
    _reject_unsupported(tree)
    builder = _AstBuilder(base, _blank_labels(tree))
    try:
        query = builder.transform(tree)
    except VisitError as err:
        if isinstance(err.orig_exc, (QueryError, RecursionError)):
            raise err.orig_exc from None
        line, column = _meta_position(getattr(err, "obj", None))
        raise QuerySyntaxError(f"cannot parse the query: {err.orig_exc}",
                               line, column) from None
    check_scopes(query)
    return query


@lru_cache(maxsize=1)
def _lark() -> Lark:
    """The LALR parser, once per process, from the cache (grammar analysis is slow)."""
    grammar = (_FsPath(__file__).with_name("grammar.lark")
               .read_text(encoding="utf-8"))
    return cached_lark("ep-sparql", grammar, parser="lalr", lexer="basic",
                       propagate_positions=True, maybe_placeholders=False)


# --------------------------------------------------------- syntax errors

def _syntax_error(err: UnexpectedInput, text: str) -> QuerySyntaxError:
    """Translate a Lark error into a QuerySyntaxError a user can act on."""
    if isinstance(err, UnexpectedCharacters):
        return QuerySyntaxError(_bad_character_message(text, err.pos_in_stream),
                                err.line, err.column)
    if isinstance(err, UnexpectedToken):
        token = err.token
        if token.type == "$END":
            line, column = _after(token) or _end_position(text)
            found = "the end of the query"
        else:
            line, column = token.line, token.column
            found = _quote(token.value)
        expected = _expected_before(text, token) or err.expected
        message = f"expected {describe_expected(expected)}, found {found}"
        return QuerySyntaxError(message + _hint(token.type, expected), line, column)
    if isinstance(err, UnexpectedEOF):
        line, column = _end_position(text)
        return QuerySyntaxError("unexpected end of the query", line, column)
    line, column = getattr(err, "line", 1), getattr(err, "column", 1)
    return QuerySyntaxError(str(err), _int(line), _int(column))


_HINTS = [  # (found token type, expected terminal or None, hint)
    ("LT", "IRIREF", "an IRI is written <...>, without spaces inside"),
    ("QMARK", "VAR", "a variable name is missing after '?'"),
    ("LANGTAG", None, "a language tag must directly follow a string"),
    ("DCARET", None, "a datatype '^^' must directly follow a string"),
]


def _hint(found: str, expected: set[str]) -> str:
    """A parenthesised hint for a few common mistakes, else ''."""
    for token_type, needed, hint in _HINTS:
        if found == token_type and (needed is None or needed in expected):
            return f" ({hint})"
    return ""


def _bad_character_message(text: str, pos: int) -> str:
    """Explain why no token can start at ``text[pos]``."""
    char = text[pos]
    if char in "\"'":
        return ("unterminated string: a string must be closed on the same "
                'line (use """...""" for multi-line strings)')
    if char == "_" and text.startswith("_:", pos):
        return "a blank node label is missing after '_:'"
    if char == "@":
        return "invalid language tag after '@'"
    if char in "?$":
        return f"a variable name is missing after {char!r}"
    return f"unexpected character {char!r}"


def _expected_before(text: str, bad: Token) -> set[str]:
    """Terminals the parser accepts just before ``bad``.

    Lark reports the expected set *after* the reductions LALR performs on the
    bad lookahead, which can be much smaller than what the user could really
    have written there; re-feeding the tokens up to ``bad`` gives the set at
    the right point.
    """
    try:
        interactive = _lark().parse_interactive(text)
        for token in interactive.lexer_thread.lex(interactive.parser_state):
            if token.start_pos == bad.start_pos and bad.type != "$END":
                break
            interactive.feed_token(token)
        return set(interactive.accepts())
    except Exception:  # noqa: BLE001 -- best effort only
        return set()


def _after(token: Token) -> tuple[int, int] | None:
    """Position just after ``token`` (Lark's $END borrows the last token's)."""
    if getattr(token, "end_line", None) is None:
        return None
    return token.end_line, token.end_column


def _end_position(text: str) -> tuple[int, int]:
    """Line and column just after the last non-blank, non-comment text."""
    stripped = _strip_trailing_comments(text)
    line = stripped.count("\n") + 1
    column = len(stripped) - (stripped.rfind("\n") + 1) + 1
    return line, column


def _strip_trailing_comments(text: str) -> str:
    """``text`` without trailing whitespace and trailing ``#`` comment lines."""
    lines = text.rstrip().split("\n")
    while len(lines) > 1 and lines[-1].lstrip().startswith("#"):
        lines.pop()
        lines[-1] = lines[-1].rstrip()
    return "\n".join(lines).rstrip()


def _quote(value: str) -> str:
    """A token value for a message, shortened if long."""
    value = value if len(value) <= 40 else value[:37] + "..."
    return "'" + value.replace("\n", "\\n") + "'"


def _int(value: object) -> int:
    """Lark uses '?' for unknown positions; map anything odd to 1."""
    return value if isinstance(value, int) else 1


# ----------------------------------------------- readable expected tokens

_STRINGS = set(_STRING_QUOTES)
_NUMBERS = {"INTEGER", "DECIMAL", "DOUBLE", "INTEGER_POSITIVE",
            "DECIMAL_POSITIVE", "DOUBLE_POSITIVE", "INTEGER_NEGATIVE",
            "DECIMAL_NEGATIVE", "DOUBLE_NEGATIVE"}
_SIGNED = {n for n in _NUMBERS if "_" in n}
_IRIS = {"IRIREF", "PNAME_LN", "PNAME_NS"}
_TERM_START = (_IRIS | _STRINGS | _NUMBERS
               | {"VAR", "NAME", "BLANK_NODE_LABEL", "LSQB", "TRUE", "FALSE"})
_EXPR_START = (_IRIS | _STRINGS | _NUMBERS
               | {"VAR", "NAME", "LPAR", "BANG", "PLUS", "DASH", "TRUE",
                  "FALSE", "NOT", "EXISTS"})
_OPERATORS = {"OROR", "ANDAND", "EQ", "NE", "LT", "GT", "LE", "GE", "PLUS",
              "DASH", "STAR", "SLASH", "IN", "NOT"} | _SIGNED
_PATH_OPS = {"SLASH", "VBAR", "STAR", "PLUS", "QMARK"}
_PREDICATE_START = _IRIS | {"VAR", "NAME", "A", "CARET", "LPAR"}
_JOIN_OPS = ["SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL", "UNION"]
_PATTERN_KEYWORDS = ["FILTER", "OPTIONAL", "BIND", "MINUS", "GRAPH"]
#: Where to go for aggregates (the stream dialects have windows).
_WINDOWS_HINT = (" (EP-SPARQL has no windows to aggregate over: write it in a stream dialect, "
                 "e.g. C-SPARQL FROM STREAM <s> [RANGE 10s STEP 1s]; docs/DIALECTS.md)")

_UNSUPPORTED = {"SERVICE", "VALUES", "GROUP", "HAVING", "ORDER", "LIMIT",
                "OFFSET", "FROM", "DESCRIBE", "NAMED", "UNDEF", "SILENT"}
_WORDS = {
    "VAR": "a variable", "IRIREF": "an IRI", "PNAME_LN": "a prefixed name",
    "PNAME_NS": "a prefixed name", "NAME": "a name",
    "BLANK_NODE_LABEL": "a blank node", "LANGTAG": "a language tag",
    "TRUE": "true", "FALSE": "false", "A": "'a'", "$END": "the end of the query",
    "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'",
    "LSQB": "'['", "RSQB": "']'", "DOT": "'.'", "SEMICOLON": "';'",
    "COMMA": "','", "STAR": "'*'", "SLASH": "'/'", "PLUS": "'+'",
    "DASH": "'-'", "BANG": "'!'", "QMARK": "'?'", "VBAR": "'|'",
    "CARET": "'^'", "DCARET": "'^^'", "OROR": "'||'", "ANDAND": "'&&'",
    "EQ": "'='", "NE": "'!='", "LT": "'<'", "GT": "'>'", "LE": "'<='",
    "GE": "'>='",
    **{s: "a string" for s in _STRINGS}, **{n: "a number" for n in _NUMBERS},
}


def describe_expected(names: set[str] | frozenset[str]) -> str:
    """Readable words for a set of Lark terminal names.

    Sets that characterise a position are collapsed into one phrase ("a
    triple pattern", "an expression", "an operator"), unsupported keywords
    are not suggested, and the rest is listed as "x, y or z": punctuation
    first, then phrases and keywords, then the end of the query.
    """
    rest = set(names)
    phrases = _collapse(rest)
    if rest - _UNSUPPORTED or not phrases:
        rest -= _UNSUPPORTED
    punctuation = [_WORDS[n] for n in _PUNCTUATION_ORDER if n in rest]
    rest -= set(_PUNCTUATION_ORDER)
    words: list[str] = []
    for name in sorted(rest - {"$END"}):
        word = _WORDS.get(name, name)
        if word not in words:
            words.append(word)
    items = list(dict.fromkeys(punctuation + phrases + words))   # two names, one word: once
    if "$END" in rest:
        items.append(_WORDS["$END"])
    if not items:
        return "something else"
    if len(items) > 8:
        items = items[:7] + ["..."]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


_PUNCTUATION_ORDER = ["DOT", "SEMICOLON", "COMMA", "RPAR", "RSQB", "RBRACE",
                      "LBRACE", "LPAR", "LSQB", "OROR", "ANDAND", "EQ", "NE",
                      "LT", "GT", "LE", "GE", "PLUS", "DASH", "STAR", "SLASH",
                      "BANG", "QMARK", "VBAR", "CARET", "DCARET"]


def _collapse(rest: set[str]) -> list[str]:
    """Replace recognisable groups of terminals in ``rest`` by phrases."""
    phrases: list[str] = []

    def take(group, phrase):
        rest.difference_update(group)
        phrases.append(phrase)

    if {"SELECT", "CONSTRUCT"} <= rest:
        if {"PREFIX", "BASE"} <= rest:
            take({"PREFIX", "BASE"}, "PREFIX/BASE")
        take({"SELECT", "CONSTRUCT", "ASK", "DESCRIBE"}, "SELECT/CONSTRUCT/ASK")
    if {"VAR", "LSQB", "NAME"} <= rest and rest & {"RBRACE", "LBRACE", "WHERE"}:
        take(_TERM_START, "a triple pattern")
    elif {"VAR", "LSQB"} <= rest:
        take(_TERM_START | _PATH_OPS, "an RDF term or a variable")
    elif {"VAR", "BANG"} <= rest:
        take(_EXPR_START, "an expression")
    elif {"VAR", "A"} <= rest:
        take(_PREDICATE_START, "a predicate (an IRI, a variable or 'a')")
    elif {"A", "CARET"} <= rest:
        take(_PREDICATE_START, "a property path step (an IRI, 'a', '^' or '(')")
    elif {"LPAR", "NAME", "EXISTS"} <= rest:
        take(_EXPR_START, "'(', a function call or [NOT] EXISTS")
    if len(rest & _OPERATORS) >= 3:
        take(_OPERATORS | _PATH_OPS, "an operator")
    if set(_JOIN_OPS) <= rest:
        take(set(_JOIN_OPS), "/".join(_JOIN_OPS))
    if len(rest & set(_PATTERN_KEYWORDS)) >= 3:
        group = set(_PATTERN_KEYWORDS) | {"LBRACE"}
        take(group, "a graph pattern ({...}, "
             + ", ".join(k for k in _PATTERN_KEYWORDS if k in rest) + ")")
    if rest & _IRIS and "VAR" in rest:
        take(_IRIS | {"VAR"}, "an IRI or a variable")
    return phrases


# ----------------------------------------------------------- rejections

_REJECTED = {
    "limit_clause": "LIMIT is not supported on a stream: an EP-SPARQL query "
                    "runs continuously and reports each answer as it is "
                    "detected, so there is no result set to cut off",
    "offset_clause": "OFFSET is not supported on a stream: answers are "
                     "reported as they are detected, there is no result "
                     "list to skip into",
    "order_clause": "ORDER BY is not supported on a stream: answers are "
                    "reported in the order they are detected",
    "group_clause": "GROUP BY is not supported yet" + _WINDOWS_HINT,
    "having_clause": "HAVING is not supported yet" + _WINDOWS_HINT,
    "describe_query": "DESCRIBE queries are not supported; use SELECT, "
                      "CONSTRUCT or ASK",
    "dataset_clause": "FROM is not supported: a query runs over the event "
                      "stream and the engine's background knowledge",
    "service_pattern": "SERVICE is not supported",
    "values_clause": "VALUES is not supported yet",
    "inline_data": "VALUES is not supported yet",
}


def _reject_unsupported(tree: Tree) -> None:
    """Raise QueryError for the first (in text order) unsupported construct.

    Done on the parse tree before building the AST so that the error names
    the construct itself rather than something inside it.
    """
    found: list[tuple[int, int, str]] = []
    for sub in tree.iter_subtrees():
        message = _REJECTED.get(sub.data)
        if message is None and sub.data == "builtin_call":
            name = str(sub.children[0]).upper()
            if name in _AGGREGATES:
                message = f"aggregate {name}(...) is not supported yet" + _WINDOWS_HINT
        if message is not None:
            line, column = _meta_position(sub)
            found.append((line, column, message))
    if found:
        line, column, message = min(found)
        raise QueryError(message, line, column)


def _meta_position(tree: object) -> tuple[int, int]:
    """Line and column where a parse-tree node starts (1, 1 if unknown)."""
    meta = getattr(tree, "meta", None)
    if meta is None or getattr(meta, "empty", True):
        return 1, 1
    return meta.line, meta.column


def _blank_labels(tree: Tree) -> set[str]:
    """Labels of ``_:x`` blank nodes, so generated ones never clash."""
    return {str(child)[2:] for sub in tree.iter_subtrees()
            for child in sub.children
            if isinstance(child, Token) and child.type == "BLANK_NODE_LABEL"}


# ------------------------------------------------- AST building helpers

def _pos(item: Token | object) -> A.Pos | None:
    """Pos of a token or of a Lark meta object."""
    if isinstance(item, Token):
        return A.Pos(item.line, item.column)
    if item is None or getattr(item, "empty", True):
        return None
    return A.Pos(item.line, item.column)


def _error_at(message: str, where: A.Pos | Token | None) -> QueryError:
    """QueryError positioned at a token or Pos."""
    pos = where if isinstance(where, A.Pos) or where is None else _pos(where)
    if pos is None:
        return QueryError(message)
    return QueryError(message, pos.line, pos.column)


def _offset_position(token: Token, offset: int) -> tuple[int, int]:
    """Line/column of the character ``offset`` characters into ``token``."""
    before = token.value[:offset]
    newlines = before.count("\n")
    if newlines:
        return token.line + newlines, offset - before.rfind("\n")
    return token.line, token.column + offset


def _unescape_string(token: Token) -> str:
    """The value of a string token, with escapes decoded and validated."""
    quote = _STRING_QUOTES[token.type]
    body = token.value[quote:-quote]
    out: list[str] = []
    i = 0
    while True:
        j = body.find("\\", i)
        if j < 0:
            out.append(body[i:])
            return "".join(out)
        out.append(body[i:j])
        char, i = _decode_escape(token, body, j, quote)
        out.append(char)


def _decode_escape(token: Token, body: str, j: int, quote: int) -> tuple[str, int]:
    """Decode the escape at ``body[j]``; return (character, next index)."""
    code = body[j + 1:j + 2]
    if code in _ECHAR:
        return _ECHAR[code], j + 2
    if code in ("u", "U"):
        width = 4 if code == "u" else 8
        digits = body[j + 2:j + 2 + width]
        if len(digits) == width and all(c in "0123456789abcdefABCDEF" for c in digits):
            value = int(digits, 16)
            if value <= 0x10FFFF:
                return chr(value), j + 2 + width
    line, column = _offset_position(token, quote + j)
    shown = body[j:j + 2] if code not in ("u", "U") else body[j:j + 6]
    raise QuerySyntaxError(
        f"invalid escape sequence '{shown}' in a string (allowed: \\t \\b \\n "
        "\\r \\f \\\" \\' \\\\ \\uXXXX \\UXXXXXXXX)", line, column)


def _unescape_local(local: str) -> str:
    """Decode ``\\``-escapes of a prefixed name's local part (%XX is kept)."""
    return re.sub(r"\\(.)", r"\1", local)


@dataclass(frozen=True)
class _BNodeList:
    """A ``[ p o ; ... ]`` term: its blank node and the triples inside it."""

    node: BNode
    triples: tuple[A.TriplePattern, ...]


@dataclass(frozen=True)
class _Signed:
    """A product that starts with a signed number, e.g. ``-5 * ?x``."""

    expr: object
    pos: A.Pos | None


@dataclass(frozen=True)
class _Args:
    """A parsed argument list."""

    exprs: tuple
    distinct: bool = False
    star: bool = False
    separator: bool = False


@dataclass(frozen=True)
class _Select:
    """A parsed SELECT clause."""

    projection: A.Projection
    distinct: bool
    reduced: bool
    pos: A.Pos | None


@dataclass
class _Prologue:
    """Prefix and base state while the prologue is being read."""

    base: str | None
    prefixes: list[tuple[str, str]] = field(default_factory=list)


def _fold_sign(sign: str, operand: object) -> object | None:
    """``-5`` -> Literal('-5'); None if ``operand`` is not an unsigned number."""
    if (isinstance(operand, Literal) and operand.datatype in _NUMBER_TYPES.values()
            and not str(operand).startswith(("+", "-"))):
        return Literal(sign + str(operand), datatype=operand.datatype)
    return None


def _strip_leading_sign(expr: object) -> tuple[str, object]:
    """Split the sign off the leftmost literal of ``-5 * ?x`` -> ('-', 5 * ?x)."""
    spine: list[A.BinaryOp] = []
    while isinstance(expr, A.BinaryOp):      # iterative: chains can be long
        spine.append(expr)
        expr = expr.left
    text = str(expr)
    if not text.startswith(("+", "-")):
        # rdflib normalised "+1" to "1": the sign was a plus
        text = "+" + text
    result: object = Literal(text[1:], datatype=expr.datatype)
    for node in reversed(spine):
        result = A.BinaryOp(node.op, result, node.right, node.pos)
    return text[0], result


def _check_template(triples: tuple[A.TriplePattern, ...]) -> None:
    """CONSTRUCT templates produce triples, so predicates must be plain."""
    for triple in triples:
        if not isinstance(triple.p, (URIRef, A.Var)):
            raise _error_at("property paths are not allowed in a CONSTRUCT "
                            "template", triple.pos)


# ------------------------------------------------------------ AST builder

@v_args(meta=True)
class _AstBuilder(Transformer_NonRecursive):
    """Builds the AST from Lark's parse tree (one instance per parse).

    Lark transforms children before parents and left to right, so the
    prologue (PREFIX/BASE) is processed before any IRI that needs it.
    """

    def __init__(self, base: str | None, used_labels: set[str]) -> None:
        super().__init__()
        self._prologue = _Prologue(base)
        self._used_labels = used_labels
        self._fresh = 0

    # -- prologue and names

    @property
    def _bare_base(self) -> str:
        """Base for bare names and the undeclared empty prefix."""
        return self._prologue.base or DEFAULT_BASE

    def _resolve(self, iri: str) -> str:
        """Resolve a relative IRI against BASE (if there is one)."""
        base = self._prologue.base
        if base is None or _ABSOLUTE_IRI.match(iri):
            return iri
        resolved = urljoin(base, iri)
        if iri.endswith("#") and not resolved.endswith("#"):
            resolved += "#"            # urljoin drops an empty fragment
        return resolved

    def base_decl(self, meta, children):
        self._prologue.base = self._resolve(children[1][1:-1])

    def prefix_decl(self, meta, children):
        name = str(children[1])[:-1]
        iri = self._resolve(children[2][1:-1])
        self._prologue.prefixes = [(p, i) for p, i in self._prologue.prefixes
                                   if p != name] + [(name, iri)]

    def prologue(self, meta, children):
        return None

    def _namespace(self, prefix: str, token: Token) -> str:
        """IRI of ``prefix`` (declared, predeclared or the default ':')."""
        for name, iri in reversed(self._prologue.prefixes):
            if name == prefix:
                return iri
        if prefix == "":
            return self._bare_base
        if prefix in _PREDECLARED:
            return _PREDECLARED[prefix]
        raise _error_at(f"unknown prefix '{prefix}:' (declare it with "
                        f"PREFIX {prefix}: <...>)", token)

    def iri(self, meta, children):
        token = children[0]
        if token.type == "IRIREF":
            return URIRef(self._resolve(token[1:-1]))
        prefix, _, local = str(token).partition(":")
        return URIRef(self._namespace(prefix, token) + _unescape_local(local))

    def bare_name(self, meta, children):
        return URIRef(self._bare_base + str(children[0]))

    def rdf_type(self, meta, children):
        return RDF.type

    # -- literals and nodes

    def var(self, meta, children):
        return A.Var(str(children[0])[1:], _pos(children[0]))

    def string(self, meta, children):
        return _unescape_string(children[0])

    def rdf_literal(self, meta, children):
        value = children[0]
        if len(children) == 1:
            return Literal(value)
        extra = children[1]
        if isinstance(extra, Token):
            return Literal(value, lang=str(extra)[1:])
        try:
            with warnings.catch_warnings():     # rdflib warns about "weird booleans"
                warnings.simplefilter("ignore")
                literal = Literal(value, datatype=extra)
        except Exception:  # noqa: BLE001 -- rdflib's converters raise odd errors
            literal = None                 # ("-P1Y2M" stops isodate)
        if literal is None or literal.ill_typed:
            # keep what was written: rdflib would "normalise" "yes"^^xsd:boolean
            # to "false"; the check of constants reports it as invalid
            literal = Literal(value, datatype=extra, normalize=False)
        return literal

    def unsigned_number(self, meta, children):
        token = children[0]
        return Literal(str(token), datatype=_NUMBER_TYPES[token.type])

    def signed_number(self, meta, children):
        token = children[0]
        kind = token.type.split("_")[0]
        return Literal(str(token), datatype=_NUMBER_TYPES[kind])

    def boolean(self, meta, children):
        return Literal(str(children[0]).lower(), datatype=XSD.boolean)

    def labelled_bnode(self, meta, children):
        return BNode(str(children[0])[2:])

    def anon_bnode(self, meta, children):
        return self._new_bnode()

    def _new_bnode(self) -> BNode:
        """A fresh blank node, deterministic per parse, never a used label."""
        while True:
            label = f"anon{self._fresh}"
            self._fresh += 1
            if label not in self._used_labels:
                return BNode(label)

    # -- triples

    def blank_node_property_list(self, meta, children):
        node = self._new_bnode()
        return _BNodeList(node, self._expand(node, children[0], _pos(meta)))

    def verb_objects(self, meta, children):
        return (children[0], children[1], _pos(meta))

    def object_list(self, meta, children):
        return tuple(children)

    def property_list(self, meta, children):
        return tuple(children)

    def _expand(self, subject, property_list, pos) -> tuple[A.TriplePattern, ...]:
        """Triples for ``subject`` + a property list, nested lists flattened."""
        triples: list[A.TriplePattern] = []
        for i, (verb, objects, verb_pos) in enumerate(property_list):
            for obj in objects:
                nested = ()
                if isinstance(obj, _BNodeList):
                    obj, nested = obj.node, obj.triples
                triples.append(A.TriplePattern(subject, verb, obj,
                                               pos if i == 0 else verb_pos))
                triples.extend(nested)
        return tuple(triples)

    def triples_same_subject(self, meta, children):
        subject = children[0]
        triples: tuple[A.TriplePattern, ...] = ()
        if isinstance(subject, _BNodeList):
            subject, triples = subject.node, subject.triples
        if len(children) > 1:
            triples = self._expand(subject, children[1], _pos(meta)) + triples
        return triples

    def triples_block(self, meta, children):
        return A.BGP(tuple(t for group in children for t in group), _pos(meta))

    # -- paths

    def path_alternative(self, meta, children):
        return A.PathAlt(tuple(children), _pos(meta))

    def path_sequence(self, meta, children):
        return A.PathSeq(tuple(children), _pos(meta))

    def path_inverse(self, meta, children):
        return A.PathInv(children[0], _pos(meta))

    def path_modified(self, meta, children):
        return A.PathMod(children[0], str(children[1]), _pos(meta))

    # -- graph patterns

    def group_graph_pattern(self, meta, children):
        body = children[0]
        elements = (body,) if isinstance(body, A.SubSelect) else body
        return A.Group(tuple(elements), _pos(meta))

    def group_body(self, meta, children):
        return tuple(c for c in children if not isinstance(c, Token))

    def join_op(self, meta, children):
        return children[0]

    def group_or_union(self, meta, children):
        result = children[0]
        for op_token, right in zip(children[1::2], children[2::2]):
            op = str(op_token).upper()
            if op == "UNION":
                result = A.Union(result, right, _pos(op_token))
            else:
                result = A.TemporalJoin(op, result, right, _pos(op_token))
        return result

    def where_clause(self, meta, children):
        parts = [c for c in children if not isinstance(c, Token)]
        chain, filters = parts[0], parts[1:]
        if isinstance(chain, A.Group) and not filters:
            return chain
        return A.Group((chain, *filters), _leftmost_pos(chain))

    def optional_pattern(self, meta, children):
        return A.Optional(children[1], _pos(children[0]))

    def minus_pattern(self, meta, children):
        return A.Minus(children[1], _pos(children[0]))

    def graph_pattern(self, meta, children):
        return A.Graph(children[1], children[2], _pos(children[0]))

    def filter(self, meta, children):
        return A.Filter(children[1], _pos(children[0]))

    def bind(self, meta, children):
        return A.Bind(children[1], children[3], _pos(children[0]))

    # -- expressions

    def binop(self, meta, children):
        left, op, right = children
        return A.BinaryOp(str(op), left, right, _pos(op))

    def signed_product(self, meta, children):
        if len(children) == 1:
            return _Signed(children[0], _pos(meta))
        head, op, right = children
        return _Signed(A.BinaryOp(str(op), head.expr, right, _pos(op)), head.pos)

    def binop_signed(self, meta, children):
        left, product = children
        sign, right = _strip_leading_sign(product.expr)
        return A.BinaryOp(sign, left, right, product.pos)

    def unop(self, meta, children):
        op, operand = str(children[0]), children[1]
        folded = _fold_sign(op, operand) if op != "!" else None
        return folded if folded is not None else A.UnaryOp(op, operand, _pos(meta))

    def in_expr(self, meta, children):
        return A.In(children[0], children[2], _pos(children[1]))

    def not_in_expr(self, meta, children):
        return A.NotIn(children[0], children[3], _pos(children[1]))

    def expr_list(self, meta, children):
        return tuple(children)

    def arg_list(self, meta, children):
        distinct = any(isinstance(c, Token) and c.type == "DISTINCT" for c in children)
        separator = any(isinstance(c, Token) and c.type == "EQ" for c in children)
        exprs = [c for c in children if not isinstance(c, Token)]
        if separator:
            exprs = exprs[:-1]         # the separator string
        return _Args(tuple(exprs), distinct, False, separator)

    def star_args(self, meta, children):
        return _Args((), distinct=len(children) > 1, star=True)

    def builtin_call(self, meta, children):
        token, args = children
        name = str(token).upper()
        name = _BUILTIN_ALIASES.get(name, name)
        if name not in BUILTIN_ARITY:
            raise _error_at(f"unknown function {str(token)!r} (extension "
                            "functions are written as IRIs or prefixed "
                            "names, e.g. ex:f(?x))", token)
        self._check_args(str(token), name, args, token)
        if name == "BOUND" and not isinstance(args.exprs[0], A.Var):
            raise _error_at("BOUND needs a variable, e.g. BOUND(?x)", token)
        return A.FunctionCall(name, args.exprs, _pos(token))

    @staticmethod
    def _check_args(shown: str, name: str, args: _Args, token: Token) -> None:
        """Arity and argument-form checks for a built-in call."""
        if args.star or args.distinct or args.separator:
            raise _error_at(f"{shown}() does not take '*', DISTINCT or "
                            "SEPARATOR (only aggregates do)", token)
        low, high = BUILTIN_ARITY[name]
        count = len(args.exprs)
        if count < low or (high is not None and count > high):
            wanted = (f"{low}" if low == high else
                      f"at least {low}" if high is None else f"{low} to {high}")
            raise _error_at(f"{shown}() takes {wanted} argument"
                            f"{'' if wanted == '1' else 's'}, got {count}", token)

    def function_call(self, meta, children):
        name, args = children
        if args.star or args.distinct or args.separator:
            raise _error_at(f"extension function <{name}> does not take '*', "
                            "DISTINCT or SEPARATOR", _pos(meta))
        return A.FunctionCall(name, args.exprs, _pos(meta))

    def exists(self, meta, children):
        return A.Exists(children[1], False, _pos(meta))

    def not_exists(self, meta, children):
        return A.Exists(children[2], True, _pos(meta))

    # -- queries

    def select_modifier(self, meta, children):
        return str(children[0]).upper()

    def projection_all(self, meta, children):
        return "*"

    def projection_list(self, meta, children):
        seen: set[str] = set()
        for item in children:
            var = item[1] if isinstance(item, tuple) else item
            if var.name in seen:
                raise _error_at(f"variable ?{var.name} is projected twice",
                                var.pos)
            seen.add(var.name)
        return tuple(children)

    def projection_expr(self, meta, children):
        parts = [c for c in children if not isinstance(c, Token)]
        return (parts[0], parts[1])

    def select_clause(self, meta, children):
        modifier = children[1] if len(children) == 3 else None
        return _Select(children[-1], modifier == "DISTINCT",
                       modifier == "REDUCED", _pos(children[0]))

    def solution_modifier(self, meta, children):
        return None

    def subselect(self, meta, children):
        clause, where = children[0], children[1]
        return A.SubSelect(clause.projection, where, clause.distinct,
                           clause.reduced, clause.pos)

    def _header(self) -> dict:
        """Prefixes and base shared by all query forms."""
        return {"prefixes": tuple(self._prologue.prefixes),
                "base": self._prologue.base}

    def select_query(self, meta, children):
        clause = children[0]
        where = next(c for c in children[1:] if isinstance(c, A.Group))
        return A.SelectQuery(clause.projection, where, clause.distinct,
                             clause.reduced, **self._header(), pos=clause.pos)

    def construct_template(self, meta, children):
        return children[0].triples if children else ()

    def construct_query(self, meta, children):
        template = children[1]
        where = next(c for c in children[2:] if isinstance(c, A.Group))
        _check_template(template)
        return A.ConstructQuery(template, where, **self._header(),
                                pos=_pos(children[0]))

    def construct_where(self, meta, children):
        bgps = [c for c in children if isinstance(c, A.BGP)]
        template = bgps[0].triples if bgps else ()
        _check_template(template)
        where = A.Group(tuple(bgps), bgps[0].pos if bgps else _pos(children[1]))
        return A.ConstructQuery(template, where, **self._header(),
                                pos=_pos(children[0]))

    def ask_query(self, meta, children):
        where = next(c for c in children[1:] if isinstance(c, A.Group))
        return A.AskQuery(where, **self._header(), pos=_pos(children[0]))

    def start(self, meta, children):
        return children[-1]


def _leftmost_pos(node: object) -> A.Pos | None:
    """Position of the leftmost group of a join chain."""
    while isinstance(node, (A.Union, A.TemporalJoin)):
        node = node.left
    return getattr(node, "pos", None)
