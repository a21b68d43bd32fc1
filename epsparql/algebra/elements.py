"""The numbered elements of a query's algebra.

``epsparql explain`` prints the algebra with a number on every operator
and triple (``#3 SeqJoin (SEQ)``), and every step of the binarised rule
graph says which of these it implements: ``rules/from_algebra.py`` writes
each element's number around the rule text it makes for it, the core
keeps it on the step (``prolog/core_compile.pl``, node origins).  Both
number the same way, here:

- 0 is the query itself (its form, projection and template: the rule
  parts that compute ``SELECT (expr AS ?v)`` and the rules that feed a
  CONSTRUCT's triples back come from it);
- then the pattern in preorder (an operator before its operands, left
  before right), each BGP followed by its triples;
- then the CONSTRUCT template's triples.

Elements are numbered by identity of the algebra objects, so the numbers
hold for the very ``Query.algebra`` the rules were written from.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .nodes import BGP, Background, Filter, Query

__all__ = ["Element", "elements", "numbers"]

_KINDS = {"Union_": "Union", "LeftJoin": "LeftJoin (OPTIONAL)", "SeqJoin": "SeqJoin (SEQ)",
          "EqJoin": "EqJoin (EQUALS)", "SeqRightJoin": "SeqRightJoin (OPTIONALSEQ)",
          "EqLeftJoin": "EqLeftJoin (EQUALSOPTIONAL)", "Extend": "Extend (BIND)"}


@dataclass(frozen=True)
class Element:
    """One numbered element: an operator, a triple, or the query (0)."""

    number: int
    node: Any                      # a pattern node, a Triple, or the algebra Query
    parent: int | None             # the number of the element it is part of
    role: str = ""                 # "triple" (of a BGP), "template" (CONSTRUCT), "query" or ""

    @property
    def kind(self) -> str:
        """What it is, as the algebra tree names it (``SeqJoin (SEQ)``,
        ``Triple``, ``Template triple``, ``SELECT``, ...)."""
        if self.role == "query":
            return self.node.form
        if self.role == "template":
            return "Template triple"
        name = type(self.node).__name__
        return _KINDS.get(name, name)

    @property
    def pos(self) -> Any:
        """Where the query text says it (line and column), or None: a
        triple's first character, an operator's keyword, a filter's
        expression, a window's getDURATION() bound."""
        n = self.node
        if isinstance(n, Filter):
            return getattr(n.expr, "pos", None)
        if isinstance(n, BGP):
            return n.triples[0].pos if n.triples else None
        if self.role == "query":
            src = getattr(n, "source", None)
            return getattr(src, "pos", None)
        return getattr(n, "pos", None)


def elements(q: Query) -> list[Element]:
    """The elements of an algebra query, by number (see the module)."""
    out = [Element(0, q, None, "query")]
    stack: list[tuple[Any, int]] = [(q.pattern, 0)]
    while stack:
        node, parent = stack.pop()
        k = len(out)
        out.append(Element(k, node, parent))
        if isinstance(node, BGP):
            out.extend([Element(k + 1 + i, t, k, "triple") for i, t in enumerate(node.triples)])
            continue
        if isinstance(node, Background):
            continue
        left, right = getattr(node, "left", None), getattr(node, "right", None)
        if left is not None and right is not None:
            stack += ((right, k), (left, k))
        elif getattr(node, "pattern", None) is not None:
            stack.append((node.pattern, k))
    base = len(out)
    out.extend([Element(base + i, t, 0, "template") for i, t in enumerate(q.template)])
    return out


def numbers(q: Query) -> dict[int, int]:
    """``id(object) -> number`` for the elements of ``q`` (the first number
    of an object that occurs twice)."""
    out: dict[int, int] = {}
    for e in elements(q):
        out.setdefault(id(e.node), e.number)
    return out
