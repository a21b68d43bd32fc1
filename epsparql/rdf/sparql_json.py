"""RDF terms in the JSON form of SPARQL 1.1 Query Results.

``{"type": "uri"|"literal"|"bnode", "value": ..., ["xml:lang"|"datatype"]}``:
how answers are written (JSON lines, SPARQL JSON results, traces) and one
of the two ways JSON-lines streams may write terms.
"""
from __future__ import annotations

from typing import Any

from rdflib.term import BNode, Literal, Node, URIRef

from .ntriples import SCHEME_RE, parse_term

__all__ = ["term_to_json", "term_from_json"]


def term_to_json(node: Node) -> dict[str, str]:
    """SPARQL 1.1 Query Results JSON form of a term:
    ``{"type": "uri"|"literal"|"bnode", "value": ..., ["xml:lang"|"datatype"]}``."""
    if isinstance(node, URIRef):
        return {"type": "uri", "value": str(node)}
    if isinstance(node, Literal):
        d = {"type": "literal", "value": str(node)}
        if node.language:
            d["xml:lang"] = node.language
        elif node.datatype is not None:
            d["datatype"] = str(node.datatype)
        return d
    if isinstance(node, BNode):
        return {"type": "bnode", "value": str(node)}
    raise TypeError(f"not an RDF term: {node!r}")


def term_from_json(obj: Any) -> Node:
    """The inverse of :func:`term_to_json`; also takes a string in
    N-Triples syntax.  Raises ValueError."""
    if isinstance(obj, str):
        return parse_term(obj)
    if not isinstance(obj, dict):
        raise ValueError(f"a term is an N-Triples string or a SPARQL JSON term object, got {obj!r}")
    kind, value = obj.get("type"), obj.get("value")
    if not isinstance(value, str):
        raise ValueError(f"a term object needs a string \"value\": {obj!r}")
    if kind == "uri":
        if not SCHEME_RE.match(value):
            raise ValueError(f"relative IRI {value!r} (IRIs are absolute)")
        return URIRef(value)
    if kind == "bnode":
        return BNode(value)
    if kind in ("literal", "typed-literal"):
        lang, dt = obj.get("xml:lang"), obj.get("datatype")
        if lang:
            return Literal(value, lang=lang)
        if dt:
            return Literal(value, datatype=URIRef(dt), normalize=False)
        return Literal(value)
    raise ValueError(f"a term object's \"type\" is uri, literal or bnode, got {kind!r}")
