"""The text ``epsparql explain`` prints, for queries registered in an engine.

Per query its algebra after the rewrites (:mod:`epsparql.explain.algebra_tree`,
or the window operators of a dialect query,
:mod:`epsparql.explain.window_tree`, and the order its pattern is joined in,
:mod:`epsparql.explain.join_order_text`); how ``epsparql spark`` partitions
the queries; the binarised rule graph of the EP-SPARQL ones compiled
together (:mod:`epsparql.explain.rule_graph`) with its stores of partial
matches.  Used by the command (cli/explain.py) and by the service
(``GET /queries/NAME?explain=true``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..algebra.partition import NO_SCHEMA
from ..rdf.prefixes import Prefixes
from .algebra_tree import algebra_tree
from .join_order_text import join_order_lines
from .origins import GraphOrigins
from .rule_graph import GraphNames, rule_graph_tree
from .tree import TreeNode, duration_text, tree_lines
from .window_tree import window_algebra_tree

__all__ = ["Explained", "explain", "explain_text"]


@dataclass
class Explained:
    """The lines of the explanation, and the trees to draw."""

    lines: list[str] = field(default_factory=list)
    algebra: list[TreeNode] = field(default_factory=list)
    rule_graph: list[TreeNode] | None = None


def explain(engine: Any, queries: Sequence[Any], labels: Sequence[str] | None = None,
            schema: Any = NO_SCHEMA) -> Explained:
    """Explain ``queries`` (registered in ``engine``); ``labels`` head each
    query's part (default: its name)."""
    ex = Explained()
    out = ex.lines
    known: dict[str, str] = {}
    for i, q in enumerate(queries):
        dialect = q.dialect if q.windowed else None
        if dialect is None:
            tree = algebra_tree(q.algebra, Prefixes(q.prefixes))
        else:
            tree = window_algebra_tree(q.algebra, Prefixes(q.prefixes))
        tree.label = f"{q.name}: {tree.label}"
        ex.algebra.append(tree)
        label = labels[i] if labels is not None else q.name
        out.append(f"== {label} (query {q.name}, {dialect + ' ' if dialect else ''}{q.form})")
        out.append("")
        if dialect is None:
            out.append("algebra (after filter placement and window extraction):")
        else:
            out.append("algebra (windows, report policy and relation-to-stream around SPARQL 1.1; "
                       "evaluated in prolog/stream_window.pl"
                       + (", aggregates kept per pane):" if q.incremental else "):"))
        out.extend("  " + line for line in tree_lines(tree))
        out.append("")
        if dialect is not None and not q.incremental:
            out.append("evaluation order (each evaluation joins these in turn, bound variables "
                       "first; rules/join_order.py):")
            out.extend("  " + line for line in join_order_lines(q.algebra, Prefixes(q.prefixes)))
            out.append("")
        known.update(q.prefixes)
    out.append("partitioning (epsparql spark): a key every stream pattern binds")
    out.extend("  " + line for line in engine.partitioning(schema).describe())
    out.append("")
    if all(q.windowed for q in queries):
        return ex                         # only windowed queries: no core rules
    graph = engine.rule_graph()
    eps = [q for q in queries if not q.windowed]      # the core's rules
    roots = rule_graph_tree(graph, GraphNames(graph, eps), Prefixes(known),
                            GraphOrigins(graph, eps))
    ex.rule_graph = roots
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
    return ex


def explain_text(engine: Any, queries: Sequence[Any]) -> str:
    """:func:`explain`'s lines as one text."""
    return "\n".join(explain(engine, queries).lines)
