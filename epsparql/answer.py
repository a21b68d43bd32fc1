"""Answers of continuous queries: what the engine delivers and the writers write."""
from __future__ import annotations

from dataclasses import dataclass

from rdflib.term import Node

__all__ = ["Answer"]


@dataclass(frozen=True)
class Answer:
    """One answer of a continuous query, with the interval it occupies:
    the bindings (projected for SELECT), ``start`` and ``end`` in seconds,
    the constructed triples of a CONSTRUCT answer, and the query's name."""

    bindings: dict[str, Node]
    start: float
    end: float
    triples: tuple[tuple[Node, Node, Node], ...] = ()
    query: str = ""

    def __getitem__(self, var: str) -> Node:
        return self.bindings[var.lstrip("?$")]
