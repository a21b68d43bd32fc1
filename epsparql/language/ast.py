"""Abstract syntax of EP-SPARQL queries, as produced by :func:`parse_query`.

The AST stays close to the surface syntax (it is *not* the SPARQL algebra):
a ``{ ... }`` block is a :class:`Group` whose elements are kept in source
order, so the algebra translation can apply SPARQL's scoping rules itself
(FILTERs scope over the whole group, OPTIONAL is a left join with what
precedes it, and so on).

Conventions
-----------
* All nodes are frozen dataclasses: hashable, comparable, usable as dict keys.
  Sequences are tuples.
* RDF terms are rdflib terms (``URIRef``, ``Literal``, ``BNode``); query
  variables are :class:`Var`.
* Nodes that can be the subject of an error message carry ``pos`` (a
  :class:`Pos`, 1-based line and column of the node's first character).  It is
  excluded from equality, hashing and ``repr``, so two parses of differently
  laid-out but equivalent texts compare equal.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import typing as t
from typing import Literal as _Lit

from rdflib import BNode, Literal, URIRef

__all__ = [
    "Pos", "Var", "Term",
    "PathSeq", "PathAlt", "PathInv", "PathMod", "Path",
    "TriplePattern", "BGP", "Group", "Union", "TemporalJoin", "Optional",
    "Minus", "Graph", "Filter", "Bind", "SubSelect", "Pattern", "GroupElement",
    "BinaryOp", "UnaryOp", "In", "NotIn", "FunctionCall", "Exists", "Expr",
    "Projection",
    "SelectQuery", "ConstructQuery", "AskQuery", "Query",
    "TEMPORAL_OPERATORS",
]


def _pos_field():
    """A ``pos`` field that does not take part in ==, hash() or repr()."""
    return field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class Pos:
    """Source position (1-based line and column) of a node."""

    line: int
    column: int

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"


# ------------------------------------------------------------------ terms

@dataclass(frozen=True)
class Var:
    """A query variable; ``name`` is given without the leading '?' or '$'."""

    name: str
    pos: Pos | None = _pos_field()

    def __repr__(self) -> str:
        return f"Var({self.name!r})"

    def __str__(self) -> str:
        return "?" + self.name


Term = t.Union[URIRef, Literal, BNode, Var]


# ----------------------------------------------------------------- paths

@dataclass(frozen=True)
class PathSeq:
    """``p1 / p2 / ...`` -- two or more steps, in order."""

    parts: tuple["Path", ...]
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class PathAlt:
    """``p1 | p2 | ...`` -- two or more alternatives, in order."""

    parts: tuple["Path", ...]
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class PathInv:
    """``^p`` -- the inverse of ``path``."""

    path: "Path"
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class PathMod:
    """``p*``, ``p+`` or ``p?``; ``mod`` is that character."""

    path: "Path"
    mod: _Lit["*", "+", "?"]
    pos: Pos | None = _pos_field()


#: A predicate: a plain IRI (``rdf:type`` for ``a``) or a property path.
Path = t.Union[URIRef, PathSeq, PathAlt, PathInv, PathMod]


# -------------------------------------------------------------- patterns

@dataclass(frozen=True)
class TriplePattern:
    """One triple pattern.  ``p`` is a Var, a URIRef or a property path."""

    s: Term
    p: t.Union[Var, Path]
    o: Term
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class BGP:
    """A basic graph pattern: consecutive triple patterns of one group."""

    triples: tuple[TriplePattern, ...]
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Group:
    """A ``{ ... }`` block; ``elements`` in source order (see GroupElement)."""

    elements: tuple["GroupElement", ...]
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Union:
    """``left UNION right``."""

    left: "Pattern"
    right: "Pattern"
    pos: Pos | None = _pos_field()


TEMPORAL_OPERATORS = ("SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL")


@dataclass(frozen=True)
class TemporalJoin:
    """``left OP right`` for OP in :data:`TEMPORAL_OPERATORS`.

    Algebra (paper, section 4.2): SEQ -> SeqJoin, EQUALS -> EqJoin,
    OPTIONALSEQ -> SeqRightJoin (the *left* side is optional),
    EQUALSOPTIONAL -> EqLeftJoin (the *right* side is optional).
    ``pos`` is the position of the operator keyword.
    """

    op: _Lit["SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL"]
    left: "Pattern"
    right: "Pattern"
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Optional:
    """``OPTIONAL { ... }`` inside a group."""

    pattern: Group
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Minus:
    """``MINUS { ... }`` inside a group."""

    pattern: Group
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Graph:
    """``GRAPH name { ... }``; ``name`` is a URIRef or a Var."""

    name: t.Union[URIRef, Var]
    pattern: Group
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Filter:
    """``FILTER expr`` -- scopes over the whole enclosing group."""

    expr: "Expr"
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Bind:
    """``BIND (expr AS ?var)``."""

    expr: "Expr"
    var: Var
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class SubSelect:
    """A sub-query ``{ SELECT ... }``; the only element of its Group."""

    projection: "Projection"
    where: Group
    distinct: bool = False
    reduced: bool = False
    pos: Pos | None = _pos_field()


#: What a join operand can be.
Pattern = t.Union[Group, Union, TemporalJoin]

#: What a Group may contain.
GroupElement = t.Union[BGP, Group, Union, TemporalJoin, Optional, Minus,
                     Graph, Filter, Bind, SubSelect]


# ------------------------------------------------------------ expressions

@dataclass(frozen=True)
class BinaryOp:
    """``left op right``; op is one of || && = != < > <= >= + - * /."""

    op: str
    left: "Expr"
    right: "Expr"
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class UnaryOp:
    """``op operand``; op is '!', '-' or '+'.

    A sign directly in front of a number literal is folded into the literal
    (``-5`` is ``Literal('-5', datatype=xsd:integer)``), as in SPARQL.
    """

    op: _Lit["!", "-", "+"]
    operand: "Expr"
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class In:
    """``expr IN (values...)``."""

    expr: "Expr"
    values: tuple["Expr", ...]
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class NotIn:
    """``expr NOT IN (values...)``."""

    expr: "Expr"
    values: tuple["Expr", ...]
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class FunctionCall:
    """A function call.

    ``name`` is an upper-case built-in name (``'BOUND'``, ``'REGEX'``,
    ``'GETDURATION'``, ...; ``isURI`` is normalised to ``'ISIRI'`` and ``URI``
    to ``'IRI'``) or a URIRef for an extension function (``ex:f(?x)``).
    """

    name: t.Union[str, URIRef]
    args: tuple["Expr", ...]
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Exists:
    """``EXISTS { ... }`` (``negated`` for ``NOT EXISTS``)."""

    pattern: Group
    negated: bool = False
    pos: Pos | None = _pos_field()


Expr = t.Union[Var, URIRef, Literal, BinaryOp, UnaryOp, In, NotIn,
             FunctionCall, Exists]

#: '*' or a tuple of Var / (Expr, Var) pairs.
Projection = t.Union[str, tuple[t.Union[Var, tuple[Expr, Var]], ...]]


# ---------------------------------------------------------------- queries

@dataclass(frozen=True)
class _QueryBase:
    """Fields shared by all query forms (declared prefixes, effective BASE)."""

    def prefix_map(self) -> dict[str, str]:
        """The prefixes declared in the query text, as a dict."""
        return dict(self.prefixes)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class SelectQuery(_QueryBase):
    """``SELECT projection WHERE where``.

    ``projection`` is ``'*'`` or a tuple whose items are Var or (Expr, Var).
    ``prefixes`` are the (prefix, IRI) pairs declared in the text, in order;
    ``base`` is the BASE in effect at the end of the prologue (the query's
    BASE, else the ``base`` argument of parse_query, else None).
    """

    projection: Projection
    where: Group
    distinct: bool = False
    reduced: bool = False
    prefixes: tuple[tuple[str, str], ...] = ()
    base: str | None = None
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class ConstructQuery(_QueryBase):
    """``CONSTRUCT { template } WHERE where``; template has plain predicates."""

    template: tuple[TriplePattern, ...]
    where: Group
    prefixes: tuple[tuple[str, str], ...] = ()
    base: str | None = None
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class AskQuery(_QueryBase):
    """``ASK WHERE where``."""

    where: Group
    prefixes: tuple[tuple[str, str], ...] = ()
    base: str | None = None
    pos: Pos | None = _pos_field()


Query = t.Union[SelectQuery, ConstructQuery, AskQuery]
