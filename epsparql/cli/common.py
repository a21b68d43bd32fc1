"""What every ``epsparql`` command shares: exit codes, errors, messages,
reading query files and registering them.

Exit codes: 0 ok, 2 usage or query error (:class:`UsageError`,
:class:`QueryFileError`), 1 runtime failure.  Messages go to standard
error as ``epsparql: ...``; query errors as ``FILE:LINE:COLUMN: message``
with the source line and a caret.
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..core.runtime import PrologError
from ..language import QueryError

__all__ = ["EXIT_OK", "EXIT_RUNTIME", "EXIT_USAGE", "PROG", "UsageError", "QueryFileError",
           "say", "warning_hook", "QueryFile", "read_queries", "format_query_error",
           "register_queries", "make_engine", "ArgumentParser", "DIALECT_CHOICES",
           "add_dialect_option"]

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
PROG = "epsparql"


class UsageError(Exception):
    """A problem with the command line or its files: exit 2."""


class QueryFileError(Exception):
    """A query that does not parse or compile, already formatted: exit 2."""


def say(msg: str) -> None:
    """A message for the user, on standard error."""
    print(msg, file=sys.stderr, flush=True)


def warning_hook(message, category, filename, lineno, file=None, line=None) -> None:
    """Python warnings (e.g. an unbounded query) as one line of the command."""
    say(f"{PROG}: warning: {message}")


# ---------------------------------------------------------------------------
# queries

@dataclass
class QueryFile:
    """A query as the command read it: where from, its text, its name."""

    path: str
    text: str
    name: str


def read_queries(paths: Sequence[str]) -> list[QueryFile]:
    """The query files (``-``: standard input), each named after its file
    (made unique)."""
    out: list[QueryFile] = []
    names: set[str] = set()
    for p in paths:
        if p == "-":
            text, label = sys.stdin.read(), "<stdin>"
        else:
            path = Path(p)
            if not path.is_file():
                raise UsageError(f"query file not found: {p}" if not path.exists()
                                 else f"not a query file: {p}")
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise UsageError(f"cannot read query file {p}: {e}") from None
            label = p
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(label).stem) or "query"
        name, k = base, 2
        while name in names:
            name, k = f"{base}-{k}", k + 1
        names.add(name)
        out.append(QueryFile(label, text, name))
    return out


def format_query_error(qf: QueryFile, e: Exception) -> str:
    """``FILE:LINE:COLUMN: message``, the source line and a caret."""
    message = getattr(e, "message", None) or str(e)
    line, column = getattr(e, "line", None), getattr(e, "column", None)
    if line is None:
        return f"{qf.path}: {message}"
    column = column or 1
    lines = qf.text.split("\n")
    src = lines[line - 1].rstrip("\r") if 1 <= line <= len(lines) else None
    out = f"{qf.path}:{line}:{column}: {message}"
    if src is not None:
        pad = "".join(ch if ch == "\t" else " " for ch in src[:column - 1])
        out += f"\n  {src}\n  {pad}^"
    return out


#: What ``--dialect`` takes: EP-SPARQL or one of the stream dialects.
DIALECT_CHOICES = ("ep-sparql", "csparql", "cqels", "sparqlstream", "streaming-sparql",
                   "luposdate", "rspql")


def add_dialect_option(parser: Any) -> None:
    """``--dialect``: the query language, when detection is not wanted."""
    parser.add_argument("--dialect", choices=DIALECT_CHOICES, metavar="NAME",
                        help="the language of the queries (default: detected per query): "
                        + ", ".join(DIALECT_CHOICES))


def register_queries(engine: Any, qfs: Sequence[QueryFile],
                     dialect: str | None = None) -> list[Any]:
    """Register every query (``dialect`` forces the language); all errors
    are collected, then raised."""
    queries, errors = [], []
    for qf in qfs:
        try:
            queries.append(engine.register(qf.text, name=qf.name, dialect=dialect))
        except QueryError as e:
            errors.append(format_query_error(qf, e))
        except PrologError as e:
            errors.append(f"{qf.path}: the core rejected the compiled rules: {e}")
    if errors:
        raise QueryFileError("\n".join(errors))
    return queries


def make_engine(base: str | None, **kw: Any) -> Any:
    """The engine a command runs its queries in."""
    from ..query_engine import Engine
    return Engine(base=base, **kw)


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, exiting with code 2 and the usage (no traceback)."""

    def error(self, message: str) -> None:
        self.print_usage(sys.stderr)
        say(f"{self.prog}: error: {message}")
        raise SystemExit(EXIT_USAGE)
