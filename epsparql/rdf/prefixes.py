"""RDF terms written short for people: IRIs abbreviated with prefixes.

What the table writer, ``epsparql explain`` and the trace show: an IRI in
a known namespace as ``prefix:local`` (the longest namespace wins; the
local part must be plain), numbers and booleans bare, other literals in
N-Triples syntax with their datatype abbreviated too.
"""
from __future__ import annotations

from rdflib.term import Literal, Node, URIRef

from .codec import XSD
from .ntriples import format_term

__all__ = ["DEFAULT_PREFIXES", "Prefixes"]

#: The prefixes every abbreviation knows.
DEFAULT_PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": XSD,
    "owl": "http://www.w3.org/2002/07/owl#",
}
_PLAIN_TYPES = {XSD + t for t in ("integer", "decimal", "double", "boolean")}


class Prefixes:
    """Abbreviates with ``prefixes`` (prefix -> namespace) on top of
    :data:`DEFAULT_PREFIXES`."""

    def __init__(self, prefixes: dict[str, str] | None = None) -> None:
        self.prefixes = dict(DEFAULT_PREFIXES)
        if prefixes:
            self.prefixes.update(prefixes)
        # longest namespace first, so the most specific prefix wins
        self._ns = sorted(((ns, p) for p, ns in self.prefixes.items() if ns),
                          key=lambda x: -len(x[0]))

    def iri(self, text: str) -> str:
        """``prefix:local``, or ``<iri>`` when no prefix fits."""
        for ns, p in self._ns:
            if text.startswith(ns) and len(text) > len(ns):
                local = text[len(ns):]
                if all(c.isalnum() or c in "_-." for c in local):
                    return f"{p}:{local}"
        return format_term(URIRef(text))

    def term(self, node: Node) -> str:
        """An IRI as :meth:`iri`; a number or boolean as its lexical form;
        another literal in N-Triples syntax with its datatype abbreviated; a
        blank node as ``_:label``."""
        if isinstance(node, URIRef):
            return self.iri(str(node))
        if isinstance(node, Literal):
            dt = str(node.datatype) if node.datatype is not None else None
            if dt in _PLAIN_TYPES:
                return str(node)
            text = format_term(Literal(str(node), lang=node.language or None))
            if dt is not None and dt != XSD + "string":
                text += "^^" + self.iri(dt)
            return text
        return format_term(node)
