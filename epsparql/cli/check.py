"""``epsparql check QUERY.rq...``: parse and compile queries as ``run`` would,
and report ``FILE: ok (…)`` or the error with its line and column."""
from __future__ import annotations

import argparse
from typing import Any

from ..core.runtime import PrologError
from ..language import QueryError
from .common import (EXIT_OK, EXIT_USAGE, add_dialect_option, format_query_error, make_engine,
                     read_queries, say)

__all__ = ["add_parser", "cmd_check"]


def add_parser(sub: Any) -> None:
    """The ``check`` command."""
    c = sub.add_parser("check", help="parse and compile queries",
                       description="Parse and compile queries; report errors as "
                       "FILE:LINE:COLUMN: message.")
    c.add_argument("queries", nargs="+", metavar="QUERY.rq")
    c.add_argument("--base", metavar="IRI", help="base IRI of the queries (bare names)")
    add_dialect_option(c)
    c.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    """``epsparql check``: parse and compile each query, say ok or where it fails."""
    qfs = read_queries(args.queries)
    engine = make_engine(args.base)
    bad = 0
    for qf in qfs:
        try:
            q = engine.register(qf.text, name=qf.name, dialect=getattr(args, "dialect", None))
        except QueryError as e:
            say(format_query_error(qf, e))
            bad += 1
            continue
        except PrologError as e:
            say(f"{qf.path}: the core rejected the compiled rules: {e}")
            bad += 1
            continue
        what = q.form if q.form == "ASK" else f"{q.form} " + " ".join("?" + v for v in q.variables)
        dialect = getattr(q, "dialect", None)
        print(f"{qf.path}: ok ({dialect + ': ' if dialect else ''}{what.strip()})")
    return EXIT_USAGE if bad else EXIT_OK
