"""The EP-SPARQL algebra of section 4.2 of the specification.

Each node denotes a set of solutions ⟨µ, tα, tω⟩ (bindings and an
interval).  Expressions stay in the parser's AST form.  Nodes are frozen
dataclasses so passes can rebuild trees without aliasing surprises.
Triples and operators carry ``pos``, where the query text says them (a
triple's first character, an operator's keyword), when the text says it:
it takes no part in ==, hash() or repr(), as in the syntax tree.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from rdflib.term import Node


def _pos_field() -> Any:
    """A ``pos`` field (a :class:`epsparql.language.ast.Pos` or None) that
    does not take part in ==, hash() or repr()."""
    return field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class Triple:
    """A triple pattern; positions are rdflib terms or language ``Var``s."""

    s: Any
    p: Any
    o: Any
    pos: Any = _pos_field()


@dataclass(frozen=True)
class BGP:
    """Basic graph pattern: all triples matched, interval [min start, max end]."""

    triples: tuple[Triple, ...]


@dataclass(frozen=True)
class Join:
    left: "Pattern"
    right: "Pattern"
    pos: Any = _pos_field()


@dataclass(frozen=True)
class Union_:
    left: "Pattern"
    right: "Pattern"
    pos: Any = _pos_field()


@dataclass(frozen=True)
class LeftJoin:
    """OPTIONAL: right is optional, ending no later than left."""

    left: "Pattern"
    right: "Pattern"
    expr: Any = None
    pos: Any = _pos_field()


@dataclass(frozen=True)
class SeqJoin:
    """SEQ: left ends strictly before right starts."""

    left: "Pattern"
    right: "Pattern"
    pos: Any = _pos_field()


@dataclass(frozen=True)
class EqJoin:
    """EQUALS: same start and same end."""

    left: "Pattern"
    right: "Pattern"
    pos: Any = _pos_field()


@dataclass(frozen=True)
class SeqRightJoin:
    """OPTIONALSEQ: ``right`` mandatory, an earlier ``left`` added if present."""

    left: "Pattern"
    right: "Pattern"
    expr: Any = None
    pos: Any = _pos_field()


@dataclass(frozen=True)
class EqLeftJoin:
    """EQUALSOPTIONAL: ``left`` mandatory, ``right`` optional, same interval."""

    left: "Pattern"
    right: "Pattern"
    expr: Any = None
    pos: Any = _pos_field()


@dataclass(frozen=True)
class Filter:
    expr: Any
    pattern: "Pattern"


@dataclass(frozen=True)
class Extend:
    """BIND(expr AS var)."""

    pattern: "Pattern"
    var: Any
    expr: Any
    pos: Any = _pos_field()


@dataclass(frozen=True)
class Window:
    """A duration bound taken from a filter: solutions last at most
    ``seconds`` (``strict``: less than).  Pushed into every binary step."""

    pattern: "Pattern"
    seconds: float
    strict: bool = False
    pos: Any = _pos_field()


@dataclass(frozen=True)
class Background:
    """``GRAPH g { triples }`` over loaded background knowledge: valid at all
    times, it adds bindings but no time; it is joined with stream patterns
    as a condition.  ``graph`` is an IRI or a Var; triples may use paths."""

    graph: Any
    triples: tuple[Triple, ...]


@dataclass(frozen=True)
class Empty:
    """The empty group ``{}``: one solution with no bindings."""


Pattern = Union[BGP, Join, Union_, LeftJoin, SeqJoin, EqJoin, SeqRightJoin,
                EqLeftJoin, Filter, Extend, Window, Background, Empty]


@dataclass(frozen=True)
class Query:
    """A translated query: its form, projection and algebra pattern."""

    form: str                      # "SELECT" | "CONSTRUCT" | "ASK"
    pattern: Pattern
    projection: tuple[Any, ...] = ()       # Vars or (expr, Var) pairs; () = all
    distinct: bool = False
    template: tuple[Triple, ...] = ()      # CONSTRUCT
    source: Any = field(default=None, compare=False)
