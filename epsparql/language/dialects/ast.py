"""Abstract syntax of the stream dialects' queries.

Terms, triple patterns, groups and expressions are the EP-SPARQL AST's
own nodes (:mod:`epsparql.language.ast`); this module adds what the
dialects need beyond them: windows and stream declarations, the window
patterns of CQELS, RSP-QL, Streaming SPARQL and LUPOSDATE, sub-queries
with solution modifiers, VALUES, aggregates, and the query itself with
its report policy and relation-to-stream operator.  Nodes are frozen
dataclasses; ``pos`` (line, column) does not take part in equality.
"""
from __future__ import annotations

import typing as t
from dataclasses import dataclass, field
from fractions import Fraction

from rdflib import URIRef

from ..ast import Group, Pos, Var

__all__ = ["Window", "StreamDecl", "StreamPattern", "WindowPattern", "WindowedGroup",
           "Aggregate", "SubQuery", "Values", "Modifiers", "Policy", "DialectQuery",
           "DIALECTS"]

#: The dialects, by the name ``--dialect`` and ``parse_dialect`` take.
DIALECTS = ("csparql", "cqels", "sparqlstream", "streaming-sparql", "luposdate", "rspql")


def _pos_field():
    return field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class Window:
    """A window over a stream (docs/DIALECTS.md, "Windows").

    ``kind`` is ``range`` (width, step or None), ``now``, ``all``,
    ``count`` (count) or ``past`` (width, delay, step or None).  Times
    are exact Fractions of seconds."""

    kind: str
    width: Fraction | None = None
    step: Fraction | None = None
    count: int | None = None
    delay: Fraction | None = None
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class StreamDecl:
    """A stream named in a dataset clause: C-SPARQL, SPARQLstream and
    Streaming SPARQL ``FROM [NAMED] STREAM <s> window``, RSP-QL ``FROM
    NAMED WINDOW <name> ON <s> window``.  ``name`` is the IRI a named
    window is read under (``GRAPH``/``WINDOW``), None for the default
    graph."""

    stream: URIRef
    window: Window
    name: URIRef | None = None
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class StreamPattern:
    """CQELS ``STREAM <s>|?g [window] { … }``."""

    stream: t.Union[URIRef, Var]
    window: Window
    pattern: Group
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class WindowPattern:
    """RSP-QL ``WINDOW <w> { … }`` (or ``WINDOW ?w``)."""

    name: t.Union[URIRef, Var]
    pattern: Group
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class WindowedGroup:
    """A group read through a window of the query's default streams:
    Streaming SPARQL's ``{ … WINDOW … }`` and LUPOSDATE's ``WINDOW TYPE
    … { … }``."""

    window: Window
    pattern: Group
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Aggregate:
    """``COUNT(DISTINCT ?x)``, ``SUM(?v)``, ``GROUP_CONCAT(?s; SEPARATOR=",")``;
    ``name`` upper case (COUNT SUM AVG MIN MAX SAMPLE GROUP_CONCAT),
    ``arg`` None for ``COUNT(*)``."""

    name: str
    arg: t.Any = None
    distinct: bool = False
    separator: str = " "
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Values:
    """``VALUES (?x ?y) { (…) … }``; rows hold None for UNDEF."""

    vars: tuple[Var, ...]
    rows: tuple[tuple[t.Any, ...], ...]
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Modifiers:
    """GROUP BY (Var or (expr, Var|None)), HAVING, ORDER BY ((expr, desc)),
    LIMIT, OFFSET."""

    group_by: tuple[t.Any, ...] = ()
    having: tuple[t.Any, ...] = ()
    order_by: tuple[tuple[t.Any, bool], ...] = ()
    limit: int | None = None
    offset: int = 0
    grouped: bool = False


@dataclass(frozen=True)
class SubQuery:
    """A sub-query ``{ SELECT … }`` (the only element of its group)."""

    projection: t.Any
    where: Group
    distinct: bool = False
    modifiers: Modifiers = Modifiers()
    values: Values | None = None
    pos: Pos | None = _pos_field()


@dataclass(frozen=True)
class Policy:
    """When a query is evaluated (docs/DIALECTS.md, "When a query is
    evaluated"): ``close`` (its windows' instants), ``eager`` (arrival
    instants), ``period`` (every ``period`` seconds), ``triples`` (after
    every ``count`` occurrences), ``final`` (once, at the end)."""

    kind: str
    period: Fraction | None = None
    count: int | None = None
    non_empty: bool = False


@dataclass(frozen=True)
class DialectQuery:
    """A continuous query of one of the stream dialects."""

    dialect: str
    form: str                                   # SELECT | CONSTRUCT | ASK
    where: Group
    projection: t.Any = "*"                     # '*' or tuple of Var / (expr, Var)
    distinct: bool = False
    template: tuple[t.Any, ...] = ()            # CONSTRUCT triples
    streams: tuple[StreamDecl, ...] = ()
    graphs: tuple[URIRef, ...] = ()             # FROM <g>
    named_graphs: tuple[URIRef, ...] = ()       # FROM NAMED <g>
    modifiers: Modifiers = Modifiers()
    values: Values | None = None
    r2s: str = "rstream"
    policy: Policy = Policy("close")
    name: str | None = None                     # REGISTER QUERY name
    output: URIRef | None = None                # REGISTER STREAM / RSP-QL <out>
    prefixes: tuple[tuple[str, str], ...] = ()
    base: str | None = None
    pos: Pos | None = _pos_field()
