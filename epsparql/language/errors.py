"""Errors raised by :func:`epsparql.language.parse_query`, and the warning
category of queries that are valid but cannot do what they say.

Only these two exception types ever leave ``parse_query``: callers (a REST
endpoint, a REPL, the rule compiler) can catch :class:`QueryError` and show
``str(error)`` to the user, which points at the offending spot in the text.
"""
from __future__ import annotations

__all__ = ["QueryError", "QuerySyntaxError", "QueryWarning"]


class QueryError(ValueError):
    """A query that is invalid or uses a construct EP-SPARQL does not support.

    Attributes:
        message: what is wrong, naming the construct ("LIMIT is not supported
            on a stream: ...", "unknown prefix 'ex:'").
        line, column: 1-based position of the construct, or None if unknown.
        source_line: the text of that line (for the caret display), or None.
    """

    def __init__(self, message: str, line: int | None = None,
                 column: int | None = None, *, source: str | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.source_line = _line_of(source, line)
        super().__init__(self._render())

    def with_source(self, source: str) -> "QueryError":
        """Attach the query text (for the caret display) if not yet attached."""
        if self.source_line is None:
            self.source_line = _line_of(source, self.line)
            self.args = (self._render(),)
        return self

    def caret_lines(self) -> list[str]:
        """The source line (an excerpt around the column when it is long)
        and a caret under the column; [] without a position or source."""
        if self.line is None or self.source_line is None:
            return []
        shown, at = _excerpt(self.source_line, self.column or 1)
        return [shown, _caret(shown, at)]

    def _render(self) -> str:
        """``line L, column C: message``, then the source line and a caret."""
        if self.line is None:
            return self.message
        column = self.column if self.column is not None else 1
        head = f"line {self.line}, column {column}: {self.message}"
        return "\n".join([head, *self.caret_lines()])

    def __str__(self) -> str:
        return self._render()

    def __reduce__(self):
        """Keep position and source when pickled (e.g. across processes)."""
        return (_rebuild, (type(self), self.message, self.line, self.column,
                           self.source_line))


class QuerySyntaxError(QueryError):
    """The text is not a well-formed EP-SPARQL query.

    ``line`` and ``column`` are always set; ``message`` says what was found
    and what was expected, e.g. "expected '}' or a triple pattern, found 'SEQ'".
    """

    line: int
    column: int

    def __init__(self, message: str, line: int, column: int, *,
                 source: str | None = None) -> None:
        super().__init__(message, max(1, line), max(1, column), source=source)


class QueryWarning(UserWarning):
    """A valid query with a part that can never work as written, e.g.
    ``getDURATION() < 5`` (a duration compared with a number: an error,
    so false, for every solution).  The message starts with
    ``line L, column C:`` and says how to fix it.  Issued through
    :mod:`warnings` when a query is registered or checked; turn it into
    an error with ``warnings.simplefilter("error", QueryWarning)``.

    Attributes: ``message`` (without the position), ``line`` and
    ``column`` (1-based, or None)."""

    def __init__(self, message: str, line: int | None = None,
                 column: int | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        super().__init__(message if line is None
                         else f"line {line}, column {column or 1}: {message}")

    def __reduce__(self):
        return (type(self), (self.message, self.line, self.column))


def relative_iri_message(iri: str) -> str:
    """The warning for a relative IRI in a query without a base (every road
    gives it: algebra/constants.py for EP-SPARQL, the dialects' front end)."""
    return (f"<{iri}> is a relative IRI and the query has no BASE to resolve it against: "
            f"it never matches a triple of a stream or of the background, whose IRIs are "
            f"absolute (declare BASE <...> or give a base: --base, Engine(base=...))")


def _line_of(source: str | None, line: int | None) -> str | None:
    """The 1-based ``line`` of ``source`` without its line break, if any."""
    if source is None or line is None:
        return None
    lines = source.split("\n")
    if not 1 <= line <= len(lines):
        return None
    return lines[line - 1].rstrip("\r")


#: Longer source lines are shown as an excerpt around the column.
_EXCERPT = 100


def _excerpt(source_line: str, column: int) -> tuple[str, int]:
    """The part of a long line around ``column`` ("..." marking the cuts)
    and the column within it, so a generated one-line query of 100 kB
    gives a three-line error, not a 100 kB one."""
    if len(source_line) <= _EXCERPT:
        return source_line, column
    start = max(0, min(column - 1 - _EXCERPT // 2, len(source_line) - _EXCERPT))
    end = start + _EXCERPT
    text = source_line[start:end]
    at = column - start
    if start > 0:
        text, at = "..." + text, at + 3
    if end < len(source_line):
        text += "..."
    return text, at


def _caret(source_line: str, column: int) -> str:
    """Spaces (tabs kept, so it lines up) then '^' under ``column``."""
    prefix = source_line[:column - 1]
    pad = "".join(ch if ch == "\t" else " " for ch in prefix)
    return pad + " " * (column - 1 - len(prefix)) + "^"


def _rebuild(cls, message, line, column, source_line):
    """Unpickling helper: restore an error without re-running __init__ logic."""
    err = cls.__new__(cls)
    err.message, err.line, err.column, err.source_line = (
        message, line, column, source_line)
    err.args = (err._render(),)
    return err
