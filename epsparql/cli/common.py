"""What every ``epsparql`` command shares: exit codes, errors, messages,
reading query files and registering them.

Exit codes: 0 ok, 2 usage or query error (:class:`UsageError`,
:class:`QueryFileError`), 1 runtime failure.  Messages go to standard
error as ``epsparql: ...``; query errors as ``FILE:LINE:COLUMN: message``
with the source line and a caret.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..algebra.secret import parse_content, parse_report
from ..algebra.streams import WINDOW_SEMANTICS, check_t0
from ..core.runtime import PrologError
from ..language import QueryError, QueryWarning
from ..rdf.ntriples import absolute_iri_problem
from ..messages import flat, one_line  # noqa: F401  (the commands' and tests' names)

__all__ = ["EXIT_OK", "EXIT_RUNTIME", "EXIT_USAGE", "PROG", "UsageError", "QueryFileError",
           "say", "warning_hook", "QueryFile", "read_queries", "format_query_error",
           "register_query", "register_queries", "make_engine", "ArgumentParser",
           "base_iri", "add_engine_options", "engine_failure", "one_line",
           "silence_closed_output", "load_background", "background_spec",
           "count_arg", "seconds_arg", "flat", "DIALECT_CHOICES", "add_dialect_option"]

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
PROG = "epsparql"


class UsageError(Exception):
    """A problem with the command line or its files: exit 2."""


class QueryFileError(Exception):
    """A query that does not parse or compile, already formatted: exit 2."""


def say(msg: str) -> None:
    """A message for the user, on standard error (nothing more once its
    reader has gone away)."""
    try:
        print(msg, file=sys.stderr, flush=True)
    except BrokenPipeError:
        silence_closed_output(sys.stderr)
    except ValueError:                    # standard error closed in this process
        pass


def silence_closed_output(stream: Any = None) -> None:
    """Standard output (or ``stream``) goes to /dev/null from now on: its
    reader went away (``| head``), and Python would complain when it
    flushes it at exit."""
    import os
    stream = sys.stdout if stream is None else stream
    try:
        fd = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (AttributeError, OSError, ValueError):
        return
    try:
        os.dup2(devnull, fd)
    except OSError:
        pass
    finally:
        os.close(devnull)


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
    """``FILE:LINE:COLUMN: message``, then the source line (an excerpt of a
    long one) and a caret under the column."""
    message = getattr(e, "message", None) or str(e)
    line, column = getattr(e, "line", None), getattr(e, "column", None)
    if line is None:
        return f"{qf.path}: {message}"
    out = f"{qf.path}:{line}:{column or 1}: {message}"
    if isinstance(e, QueryError):
        caret = e.with_source(qf.text).caret_lines()
    else:
        caret = QueryError(message, line, column, source=qf.text).caret_lines()
    return "\n".join([out, *("  " + x for x in caret)])


def _format_warning(qf: QueryFile, w: Warning) -> str:
    """A warning of registering ``qf``: ``FILE:LINE:COLUMN: warning: ...``
    with the caret when it has a position, else ``FILE: warning: ...``."""
    if isinstance(w, QueryWarning) and w.line is not None:
        caret = QueryError(w.message, w.line, w.column, source=qf.text).caret_lines()
        return "\n".join([f"{qf.path}:{w.line}:{w.column or 1}: warning: {w.message}",
                          *("  " + x for x in caret)])
    return f"{qf.path}: warning: {w}"


def register_query(engine: Any, qf: QueryFile, dialect: str | None = None) -> Any:
    """Register one query file (``dialect`` forces the language); its
    warnings are shown (every one, each with the file and position), a bad
    query raises :class:`QueryFileError`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            q = engine.register(qf.text, name=qf.name, dialect=dialect)
        except QueryError as e:
            raise QueryFileError(format_query_error(qf, e)) from None
        except PrologError as e:
            raise QueryFileError(f"{qf.path}: the core rejected the compiled rules: "
                                 f"{one_line(e)}") from None
    for w in caught:
        if issubclass(w.category, UserWarning):
            say(_format_warning(qf, w.message))
        else:                                  # not ours (a library's): as Python shows it
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return q


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
            queries.append(register_query(engine, qf, dialect))
        except QueryFileError as e:
            errors.append(str(e))
    if errors:
        raise QueryFileError("\n".join(errors))
    return queries


def engine_failure(e: BaseException) -> str:
    """One line for an error the engine raised while running, naming the
    cause and what the user can change."""
    text = one_line(e)
    term = str(getattr(e, "prolog_term", "") or "")
    if "resource_error" in term or "Stack limit" in text or "resource_error" in text:
        return (f"the engine ran out of memory ({text}): a batch too large, a query that "
                f"keeps too many partial matches or makes too many answers at once; push "
                f"fewer rows at a time (--batch-size N), bound the queries (FILTER "
                f"(getDURATION() < ...)), cap them (--max-goals N, --max-answers N), or "
                f"raise the limit (environment variable EPSPARQL_STACK_LIMIT, bytes)")
    return text


def make_engine(base: str | None, **kw: Any) -> Any:
    """The engine a command runs its queries in."""
    from ..query_engine import Engine
    return Engine(base=base, **kw)


def background_spec(text: str) -> tuple[str | None, str]:
    """``--background FILE`` or ``--background IRI=FILE`` as ``(graph IRI
    or None, file)``.  A text naming an existing file is that file (a file
    name may hold ``=``); else it is ``IRI=FILE`` when what stands before an
    ``=`` is an absolute IRI (the first such split whose file exists, so an
    IRI may hold ``=`` too)."""
    if Path(text).is_file():
        return None, text
    named: tuple[str, str] | None = None
    for i, ch in enumerate(text):
        if ch == "=" and absolute_iri_problem(text[:i]) is None:
            if Path(text[i + 1:]).is_file():
                return text[:i], text[i + 1:]
            named = named or (text[:i], text[i + 1:])
    return named if named is not None else (None, text)


def load_background(engine: Any, specs: Sequence[str] | None, *, named: bool = True) -> None:
    """Load ``--background`` files (``FILE``, or ``IRI=FILE`` into the named
    graph IRI when ``named``) into the engine; exit 2 for a file that is
    missing or that rdflib cannot read."""
    for spec in specs or ():
        graph, b = background_spec(spec)
        if graph is not None and not named:
            raise UsageError(f"--background {spec}: named background graphs (IRI=FILE) go "
                             f"with epsparql run; here the background is one graph of files")
        if not Path(b).is_file():
            raise UsageError(f"background file not found: {b}"
                             + (f" (for the named graph <{graph}>)" if graph else ""))
        try:
            engine.load_background(b, graph=graph)
        except PrologError:
            raise
        except Exception as e:            # rdflib's parsers raise many kinds
            raise UsageError(f"cannot read background file {b}: {flat(e)}") from None


def count_arg(text: str) -> int:
    """A whole number >= 1 (argparse type)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def seconds_arg(text: str) -> float:
    """A finite number of seconds >= 0 (argparse type)."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not (math.isfinite(x) and x >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text}")
    return x


def base_iri(text: str) -> str:
    """``--base``: an absolute IRI (argparse type; exit 2 otherwise)."""
    problem = absolute_iri_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"not an absolute IRI: {text!r}: {problem} "
                                         f"(e.g. --base http://example.org/ns#)")
    return text


def window_t0(text: str) -> Any:
    """``--window-t0``: seconds, a decimal number, as an exact Fraction,
    ``first`` or ``grid`` (argparse type; exit 2 otherwise)."""
    try:
        return check_t0(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r} (e.g. --window-t0 0, "
                                         f"--window-t0 1.5, --window-t0 first or --window-t0 grid)") from None


def _checked(parse: Any) -> Any:
    """An argparse type that checks a text with ``parse`` and keeps the text."""
    def check(text: str) -> str:
        try:
            parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return text
    return check


def window_options(args: argparse.Namespace) -> dict[str, Any]:
    """The SECRET parameters given on the command line, as the engine's
    ``window_*`` keyword arguments (None: not given; a query's pragma or
    its dialect's default then decides)."""
    return {f"window_{k}": getattr(args, f"window_{k}", None)
            for k in ("semantics", "t0", "report", "content", "tick")}


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """The options that shape how queries compile: ``--base``, ``--reasoning``,
    and the windows' parameters ``--window-semantics``, ``--window-t0``,
    ``--window-report``, ``--window-content``, ``--window-tick`` (over each
    query's ``#pragma window`` and its dialect's defaults)."""
    p.add_argument("--base", metavar="IRI", type=base_iri,
                   help="base IRI of the queries (bare names and relative IRIs)")
    p.add_argument("--reasoning", choices=("rdfs", "owlrl", "none"), default="rdfs",
                   help="reasoning over the background: rdfs (default), owlrl "
                   "(materialised first), none (stream patterns match only what is "
                   "written: smaller rules)")
    p.add_argument("--window-semantics", choices=WINDOW_SEMANTICS, default=None,
                   help="how the stream dialects' windows are read: engine (default: each "
                   "dialect as its reference engine answers, e.g. CQELS reports on content "
                   "change), cql (the CQL reading of every dialect) or csrbench (as "
                   "CSRBench's oracle reads them: CQELS's window at an arrival is the "
                   "earliest still open from t0 = 0, relations are sets); docs/DIALECTS.md")
    p.add_argument("--window-t0", metavar="T", type=window_t0, default=None,
                   help="the origin t0 of the windows [t0 + k·step, t0 + k·step + width): "
                   "seconds, first (the first event's time) or grid (the CQL grid: windows "
                   "closing on multiples of their step); default: each dialect's (0 for "
                   "C-SPARQL, SPARQLstream and RSP-QL)")
    p.add_argument("--window-report", metavar="POLICY", type=_checked(parse_report),
                   default=None,
                   help="when answers are reported: close, change or periodic(5s), maybe "
                   "with non-empty (close,non-empty); default: each dialect's")
    p.add_argument("--window-content", metavar="BOUNDS", type=_checked(parse_content),
                   default=None,
                   help="which boundary of a window is closed: [o,c) or (o,c]; default: "
                   "each dialect's")
    p.add_argument("--window-tick", choices=("time", "tuple"), default=None,
                   help="what drives the evaluations: time (after every event of one "
                   "time stamp) or tuple (after each event, with --window-report change)")


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, exiting with code 2 and one line saying what is
    wrong (the usage is one ``--help`` away)."""

    def error(self, message: str) -> None:
        say(f"{self.prog}: error: {message} (see {self.prog} --help)")
        raise SystemExit(EXIT_USAGE)
