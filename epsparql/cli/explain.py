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
from ..explain.algebra_tree import algebra_tree
from ..explain.drawing import TooLargeToDraw, draw_png
from ..explain.origins import GraphOrigins
from ..explain.rule_graph import GraphNames, rule_graph_tree
from ..explain.tree import TreeNode, duration_text, tree_lines
from ..explain.window_tree import window_algebra_tree
from ..rdf.prefixes import Prefixes
from .common import (EXIT_OK, PROG, UsageError, add_dialect_option, add_engine_options, flat,
                     make_engine, read_queries, register_queries, say)

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
                         window_semantics=args.window_semantics,
                         window_t0=args.window_t0)
    queries = register_queries(engine, qfs, getattr(args, "dialect", None))
    schema = _schema(args.background or ())
    known: dict[str, str] = {}
    alg_roots: list[TreeNode] = []
    out: list[str] = []
    for qf, q in zip(qfs, queries):
        dialect = q.dialect if q.windowed else None
        if dialect is None:
            tree = algebra_tree(q.algebra, Prefixes(q.prefixes))
        else:
            tree = window_algebra_tree(q.algebra, Prefixes(q.prefixes))
        tree.label = f"{q.name}: {tree.label}"
        alg_roots.append(tree)
        out.append(f"== {qf.path} (query {q.name}, {dialect + ' ' if dialect else ''}{q.form})")
        out.append("")
        if dialect is None:
            out.append("algebra (after filter placement and window extraction):")
        else:
            out.append("algebra (windows, report policy and relation-to-stream around SPARQL 1.1; "
                       "evaluated in prolog/stream_window.pl"
                       + (", aggregates kept per pane):" if q.incremental else "):"))
        out.extend("  " + line for line in tree_lines(tree))
        out.append("")
        known.update(q.prefixes)
    out.append("partitioning (epsparql spark): a key every stream pattern binds")
    out.extend("  " + line for line in engine.partitioning(schema).describe())
    out.append("")
    if all(q.windowed for q in queries):
        # only windowed queries: no core rules (their windows are above)
        print("\n".join(out))
        if args.png:
            _draw(args.png, qfs, [("algebra", alg_roots)])
        return EXIT_OK
    graph = engine.rule_graph()
    eps = [q for q in queries if not q.windowed]      # the core's rules
    roots = rule_graph_tree(graph, GraphNames(graph, eps), Prefixes(known),
                            GraphOrigins(graph, eps))
    stores = graph.stores
    out.append(f"rule graph: {len(graph.nodes)} nodes, {len(graph.rules)} rules, "
               f"{len(stores)} stores of partial matches")
    out.append("  (a node's variables are named after the query variables they carry; "
               "capital letters are internal; #n: the algebra element above it implements)")
    for r in roots:
        out.extend("  " + line for line in tree_lines(r))
    if stores:
        out.append("")
        out.append("stores (partial matches waiting for the other operand):")
        for s in stores:
            out.append(f"  {s.name:10}  node n{s.node}  window {duration_text(s.window)}"
                       f"  {s.goals} goals")
    print("\n".join(out))
    if args.png:
        _draw(args.png, qfs, [("algebra", alg_roots), ("binarised rule graph", roots)])
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
