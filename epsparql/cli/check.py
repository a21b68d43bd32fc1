"""``epsparql check QUERY.rq...``: parse and compile queries as ``run`` would,
and report ``FILE: ok (…)`` or the error with its line and column."""
from __future__ import annotations

import argparse
from typing import Any

from .common import (EXIT_OK, EXIT_USAGE, QueryFileError, add_dialect_option,
                     add_engine_options, make_engine, read_queries, register_query, say,
                     window_options)

__all__ = ["add_parser", "cmd_check"]


def add_parser(sub: Any) -> None:
    """The ``check`` command."""
    c = sub.add_parser("check", help="parse and compile queries",
                       description="Parse and compile queries; report errors as "
                       "FILE:LINE:COLUMN: message.")
    c.add_argument("queries", nargs="+", metavar="QUERY.rq")
    add_engine_options(c)
    add_dialect_option(c)
    c.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    """``epsparql check``: parse and compile each query, say ok or where it fails."""
    qfs = read_queries(args.queries)
    engine = make_engine(args.base, reasoning=args.reasoning,
                         **window_options(args))
    bad = 0
    for qf in qfs:
        try:
            q = register_query(engine, qf, getattr(args, "dialect", None))
        except QueryFileError as e:
            say(str(e))
            bad += 1
            continue
        what = q.form if q.form == "ASK" else f"{q.form} " + " ".join("?" + v for v in q.variables)
        dialect = q.dialect if q.windowed else None
        secret = q.algebra.secret if q.windowed else None
        chosen = secret.chosen() if secret is not None else []
        params = "; window " + " ".join(chosen) if chosen else ""     # set by argument or pragma
        print(f"{qf.path}: ok ({dialect + ': ' if dialect else ''}{what.strip()}{params})",
              flush=True)
    return EXIT_USAGE if bad else EXIT_OK
