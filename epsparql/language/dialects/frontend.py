"""What every dialect front end shares: building its parser, syntax errors.

A dialect is a :class:`Dialect`: a name, a grammar fragment appended to
the SPARQL 1.1 text every road shares (``language/sparql11.lark``), a
builder class (a :class:`~.builder.DialectBuilder` with the dialect's
rules) and its defaults (report policy, R2S).  Its parser is built once
per process, with Lark's contextual lexer: a dialect's keywords (RANGE,
STEP, NOW, ...) are keywords only where its grammar accepts them, so they
stay usable as function names (NOW()) and prefixes elsewhere.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lark import Lark
from lark.exceptions import UnexpectedToken

from ..errors import QueryError, QuerySyntaxError, QueryWarning, relative_iri_message
from ..grammar import sparql_parser
from ..parsing import describe_expected, parse_tree, run_builder
from . import ast as D


@dataclass(frozen=True)
class Dialect:
    """One stream dialect's front end."""

    name: str
    grammar: str            # appended to language/sparql11.lark
    builder: type
    title: str

    def parse(self, text: str, base: str | None = None) -> D.DialectQuery:
        """Text -> DialectQuery; QuerySyntaxError/QueryError with line and column."""
        if not isinstance(text, str):
            raise TypeError(f"a query is a str, not {type(text).__name__}")
        parser = _parser(self.name, self.grammar)
        b = self.builder(base)
        try:
            tree = parse_tree(parser, text, words=lambda names: _expected_words(names, self.name),
                              context=f" (in a {self.title} query)",
                              special=lambda err: _hint(err, text, self.title, self.name))
            query = b.finish(run_builder(b, tree))
        except QueryError as e:
            raise e.with_source(text) from None
        except RecursionError:
            raise QueryError("the query is nested too deeply to be parsed", source=text) from None
        for iri, (line, column) in b.relative.items():   # as EP-SPARQL's (algebra/constants.py)
            warnings.warn(QueryWarning(relative_iri_message(iri), line, column), stacklevel=4)
        return query


@lru_cache(maxsize=None)
def _parser(name: str, fragment: str) -> Lark:
    return sparql_parser(f"dialect-{name}", fragment, lexer="contextual")


#: the dialects' own terminals in words (the SPARQL ones are the parser's);
#: a keyword terminal reads as itself
_DIALECT_WORDS = {
    "R2S_WORD": "RSTREAM, ISTREAM or DSTREAM", "R2S": "ISTREAM, DSTREAM or RSTREAM",
    "R2S_OPEN": "ISTREAM(, DSTREAM( or RSTREAM(", "XSD_DURATION": "an xsd:duration such as PT10S",
    "UNIT_WORD": "a time unit (SECONDS, MINUTES, ...)", "ENDASH": "'-'",
}
#: a terminal that is a keyword in one dialect and a pattern in others
_DURATION_PATTERN = {"csparql": "a duration such as 10s or 5m", "cqels": "a duration such as 10s or 5m"}


def _expected_words(names: set[str], dialect: str) -> str:
    words = {n: _DIALECT_WORDS[n] for n in names if n in _DIALECT_WORDS}
    if dialect in _DURATION_PATTERN and "DURATION" in names:
        words["DURATION"] = _DURATION_PATTERN[dialect]
    return describe_expected({words.get(n, n) for n in names}, hidden=frozenset())


#: EP-SPARQL's event operators: not part of any stream dialect
_EVENT_OPERATORS = ("SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL")
_AFTER_NUMBER = re.compile(r"[ \t]+([A-Za-z]+)")


def _hint(err: Any, text: str, title: str, dialect: str) -> QuerySyntaxError | None:
    """A message that says what is meant where the parser only sees an
    unexpected token: an EP-SPARQL operator in a dialect query, a
    duration written with a space or an unknown unit (None: the shared
    message, language/parsing.py, says it)."""
    if not isinstance(err, UnexpectedToken):
        return None
    tok = err.token
    word = str(tok)
    if tok.type != "$END" and word.upper() in _EVENT_OPERATORS:
        return QuerySyntaxError(
            f"{word.upper()} is an EP-SPARQL event operator, not part of {title}: a query "
            f"with it is written in EP-SPARQL (without the stream clauses and windows; "
            f"docs/LANGUAGE.md)", tok.line, tok.column)
    if "DURATION" in err.expected and tok.type != "$END" and word[:1].isdigit():
        m = _AFTER_NUMBER.match(text, tok.end_pos) if tok.end_pos is not None else None
        if m is not None:
            unit = m.group(1)
            line = tok.line + text.count("\n", tok.end_pos, m.start(1))
            col = m.start(1) - (text.rfind("\n", 0, m.start(1)) + 1) + 1
            known = _DURATION_PATTERN.get(dialect, "a duration such as 10s or 5m")
            if _known_unit(unit, dialect):
                return QuerySyntaxError(
                    f"a duration is written without a space: {word}{unit}, not "
                    f"{word} {unit} (expected {known})", tok.line, tok.column)
            return QuerySyntaxError(f"unknown time unit {unit!r} (expected {known})", line, col)
    return None


#: the units of C-SPARQL's and CQELS' durations (10s, 5m)
_UNITS = frozenset({"ms", "s", "m", "h", "d"})


def _known_unit(unit: str, dialect: str) -> bool:
    return unit in _UNITS or unit.lower() in _UNITS
