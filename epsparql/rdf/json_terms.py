"""RDF terms as plain JSON data, for engine snapshots.

An IRI is its string, a blank node ``["b", id]``, a literal ``["l",
lexical, datatype, lang]`` (datatype or lang None).  The lexical form is
kept exactly as it was (no normalisation), so a term read back is the
term written.  The reorder buffer's rows and the DISTINCT memory of
queries travel this way inside ``Engine.snapshot()``.
"""
from __future__ import annotations

from typing import Any

from rdflib.term import BNode, Literal, Node, URIRef

__all__ = ["node_to_json", "node_from_json"]


def node_to_json(node: Node) -> Any:
    """An RDF term as JSON data (see the module docstring)."""
    if type(node) is URIRef:
        return str(node)
    if isinstance(node, Literal):
        dt = node.datatype
        return ["l", str(node), None if dt is None else str(dt), node.language]
    if isinstance(node, BNode):
        return ["b", str(node)]
    if isinstance(node, URIRef):
        return str(node)
    raise TypeError(f"not an RDF term: {node!r}")


def node_from_json(x: Any) -> Node:
    """The inverse of :func:`node_to_json`; ValueError for anything else."""
    if type(x) is str:
        return URIRef(x)
    if type(x) is list and len(x) == 2 and x[0] == "b" and type(x[1]) is str:
        return BNode(x[1])
    if type(x) is list and len(x) == 4 and x[0] == "l" and type(x[1]) is str \
            and (x[2] is None or type(x[2]) is str) and (x[3] is None or type(x[3]) is str) \
            and not (x[2] is not None and x[3] is not None):
        return Literal(x[1], lang=x[3], datatype=None if x[2] is None else URIRef(x[2]),
                       normalize=False)
    raise ValueError(f"not an encoded RDF term: {str(x)[:100]!r}")
