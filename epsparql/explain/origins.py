"""Which element of which query each step of the rule graph implements.

The rules of a query carry the numbers of the algebra elements they were
written from (``rules/from_algebra.py``; numbering in
:mod:`epsparql.algebra.elements`), and the core keeps them on the steps
(:meth:`epsparql.core.rule_graph.RuleGraph.origins_of`).  This module
turns them back into the elements: the query, the element's number and
kind as the algebra tree prints them, and where the query text says it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..algebra.elements import Element, elements
from ..core.rule_graph import RuleGraph
from ..core.terms import Compound

__all__ = ["Origin", "GraphOrigins"]


@dataclass(frozen=True)
class Origin:
    """An element of a registered query that a step implements."""

    query: str
    element: Element

    @property
    def number(self) -> int:
        return self.element.number

    def text(self) -> str:
        """``q1 #5 SeqJoin (SEQ), line 2, column 3``."""
        out = f"{self.query} #{self.element.number} {self.element.kind}"
        pos = self.element.pos
        return out + (f", line {pos.line}, column {pos.column}" if pos is not None else "")

    def as_json(self) -> dict[str, Any]:
        pos = self.element.pos
        return {"query": self.query, "element": self.element.number,
                "kind": self.element.kind,
                "line": pos.line if pos is not None else None,
                "column": pos.column if pos is not None else None}


class GraphOrigins:
    """The origins of the nodes of ``graph`` among ``queries`` (the engine's
    :class:`~epsparql.Query` objects; a step of a rule no query wrote has
    none)."""

    def __init__(self, graph: RuleGraph, queries: Sequence[Any]) -> None:
        self.graph = graph
        self._parents = graph.parents()
        self._queries: dict[str, tuple[str, list[Element]]] = {
            q.compiled.head: (q.name, elements(q.algebra)) for q in queries}

    def origin(self, term: Any) -> Origin | None:
        """The element an origin term ``Head-Number`` names, if it is one of
        these queries'."""
        if not (isinstance(term, Compound) and term.name == "-" and len(term.args) == 2):
            return None
        head, number = term.args
        known = self._queries.get(head) if isinstance(head, str) else None
        if known is None or not isinstance(number, int) or not 0 <= number < len(known[1]):
            return None
        return Origin(known[0], known[1][number])

    def of(self, node: int) -> tuple[list[Origin], bool]:
        """The elements ``node`` implements, and whether it only is part of
        them (a step made from inside an element's text: the steps of a
        triple pattern under RDFS reasoning, the inner joins of a BGP)."""
        terms, inherited = self.graph.origins_of(node, self._parents)
        out = [o for o in (self.origin(t) for t in terms) if o is not None]
        out.sort(key=lambda o: (o.query, o.number))
        return out, inherited

    def lines(self, node: int, most: int = 4) -> list[str]:
        """The origins of ``node`` as detail lines for the printed graph."""
        found, inherited = self.of(node)
        word = "part of" if inherited else "implements"
        out = [f"{word} {o.text()}" for o in found[:most]]
        if len(found) > most:
            out.append(f"… and {len(found) - most} more elements")
        return out
