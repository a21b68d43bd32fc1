"""``epsparql explain QUERY.rq...``: what the queries became, stage by stage.

Per query its algebra after the rewrites (:mod:`epsparql.explain.algebra_tree`);
then how ``epsparql spark`` partitions the queries (``algebra/partition.py``);
then the binarised rule graph of all of them compiled together
(:mod:`epsparql.explain.rule_graph`), optionally drawn as a PNG
(:mod:`epsparql.explain.drawing`).  See docs/CLI.md.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..algebra.partition import NO_SCHEMA, schema_of
from ..explain.drawing import TooLargeToDraw, draw_png
from ..explain.report import explain
from .common import (EXIT_OK, PROG, UsageError, add_dialect_option, add_engine_options, flat,
                     make_engine, read_queries, register_queries, say, window_options)

__all__ = ["add_parser", "cmd_explain"]


def add_parser(sub: Any) -> None:
    """The ``explain`` command."""
    e = sub.add_parser("explain", help="show the algebra and the rule graph",
                       description="Print the algebra tree and the binarised rule graph "
                       "of queries (compiled together), optionally drawn as a PNG.")
    e.add_argument("queries", nargs="+", metavar="QUERY.rq")
    e.add_argument("--png", metavar="FILE", help="also draw both as a PNG image")
    add_engine_options(e)
    add_dialect_option(e)
    e.add_argument("--background", action="append", metavar="FILE",
                   help="background knowledge the partitioning must respect (RDFS schema)")
    e.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    """``epsparql explain``: print (and draw) the algebra and the rule graph."""
    qfs = read_queries(args.queries)
    engine = make_engine(args.base, reasoning=args.reasoning,
                         **window_options(args))
    queries = register_queries(engine, qfs, getattr(args, "dialect", None))
    ex = explain(engine, queries, [qf.path for qf in qfs], _schema(args.background or ()))
    print("\n".join(ex.lines))
    if args.png:
        panels = [("algebra", ex.algebra)]
        if ex.rule_graph is not None:
            panels.append(("binarised rule graph", ex.rule_graph))
        _draw(args.png, qfs, panels)
    return EXIT_OK


def _draw(path: str, qfs: Any, panels: list) -> None:
    title = "epsparql explain: " + ", ".join(Path(qf.path).name for qf in qfs)
    try:
        draw_png(path, panels, title)
    except TooLargeToDraw as e:
        raise UsageError(f"--png: {e}") from None
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror or e}") from None
    say(f"{PROG}: wrote {path}")


def _schema(paths: Any) -> Any:
    """The RDFS schema of the background files the partitioning must respect."""
    if not paths:
        return NO_SCHEMA
    from rdflib import Graph
    g = Graph()
    for b in paths:
        if not Path(b).is_file():
            raise UsageError(f"background file not found: {b}")
        try:
            g.parse(b)
        except Exception as e:            # rdflib's parsers raise many kinds
            raise UsageError(f"cannot read background file {b}: {flat(e)}") from None
    return schema_of(g)
