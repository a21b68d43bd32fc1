"""EP-SPARQL query parser: query text -> AST (:mod:`epsparql.language.ast`).

This module is one pass, text to AST; it does no evaluation and no algebra.
The grammar is the SPARQL 1.1 text every road shares (``sparql11.lark``)
extended by ``ep_sparql.lark`` with the temporal operators SEQ, EQUALS,
OPTIONALSEQ and EQUALSOPTIONAL, which join group graph patterns exactly like
UNION (one left-associative level), and the leniencies below; it is parsed
with Lark's LALR(1) parser and basic lexer, built once per machine
(grammar.py, lark_cache.py).  The AST is built by
:class:`~.sparql_builder.SparqlBuilder`, the stream dialects' builder too,
and :class:`EpSparqlBuilder` for what only EP-SPARQL has.

Leniencies (so that the queries printed in the EP-SPARQL paper parse as is)
---------------------------------------------------------------------------
* **Bare names as IRIs.**  A bare word such as ``hasStockPrice``, ``rater``
  or ``downratedby`` in a subject, predicate or object position is read as
  the IRI ``BASE + name`` (plain string concatenation, no RFC 3986
  resolution).  BASE is the query's ``BASE``, else the ``base`` argument of
  :func:`parse_query`, else :data:`DEFAULT_BASE` (``http://epsparql.org/ns#``).
  A bare name starts with a letter and continues with letters, digits or
  ``_``; keywords (``SEQ``, ``FILTER``, ``a``, ``true``, ...) are never bare
  names.
  Bare names are *not* accepted in expressions (``FILTER(?x = foo)`` is an
  error), only as function names (``BOUND(?x)``, ``getDURATION()``).
* **The empty prefix** ``:`` means that same base unless declared.
* **Predeclared prefixes**: ``xsd``, ``rdf``, ``rdfs`` and ``owl`` have their
  standard IRIs unless the query declares them.
* **Paper-style WHERE clauses**: after ``WHERE`` (or in a sub-select) a chain
  of groups joined by SEQ/EQUALS/OPTIONALSEQ/EQUALSOPTIONAL/UNION may be
  followed by FILTERs outside any braces::

      WHERE { A } SEQ { B } FILTER (f)

  is represented exactly as ``WHERE { { A } SEQ { B } FILTER (f) }``, i.e.
  ``Group((TemporalJoin('SEQ', A, B), Filter(f)))``.
* **Paper-style CONSTRUCT templates** without braces:
  ``CONSTRUCT ?c downratedby ?r WHERE { ... }``.
* **Unparenthesised SELECT expressions** ``SELECT ?sum / ?count AS ?average``.
  Such an expression may not start with ``+``, ``-``, a signed number or
  ``NOT EXISTS`` (after a previous projection that would be ambiguous); write
  those in the standard form ``(expr AS ?v)``.
* Relative IRIs ``<x>`` are resolved (RFC 3986) against the BASE when the
  query declares one or ``base`` is given; otherwise they are left as written.
* ``FILTER NOT EXISTS``/``EXISTS``, ``IN``/``NOT IN``, ``MINUS``, sub-selects
  and ``CONSTRUCT WHERE { ... }`` are accepted as in SPARQL 1.1.

Not supported (syntax errors): RDF collections ``( ... )`` in triples and
negated property sets ``!(...)`` in paths.

Literals are rdflib Literals, so rdflib's lexical normalisation applies
(``+7`` -> ``"7"``, ``1e3`` -> ``"1000.0"``), except to a typed literal
rdflib finds ill-typed, which keeps its lexical form as written (rdflib
would turn ``"yes"^^xsd:boolean`` into ``"false"``; translation reports
the literal as invalid).  A sign in front of a number
literal is folded into it: ``-5`` and ``- 5`` are ``Literal('-5')``, not
``UnaryOp('-', 5)``.

Rejections (:class:`QueryError` naming the construct, with its position)
-----------------------------------------------------------------------
LIMIT, OFFSET and ORDER BY (meaningless on an unbounded stream); GROUP BY,
HAVING and aggregates (not supported yet); DESCRIBE, FROM, SERVICE and VALUES
(not supported); unknown prefixes; unknown built-in functions and wrong
numbers of arguments; property paths in CONSTRUCT templates.  Malformed text
raises :class:`QuerySyntaxError` with line, column and a readable message.
No other exception escapes :func:`parse_query` for any ``str`` argument.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from lark import Lark, Tree, v_args
from rdflib import URIRef

from . import ast as A
from .errors import QueryError, QuerySyntaxError
from .grammar import sparql_parser
from .parsing import MAX_NESTING, check_nesting, describe_expected, end_position, parse_tree, run_builder
from .scope import check_scopes
from .sparql_builder import (AGGREGATES, BUILTIN_ARITY, SparqlBuilder, check_base,
                             check_template, pos_of)

__all__ = ["parse_query", "DEFAULT_BASE", "BUILTIN_ARITY", "MAX_NESTING", "check_nesting",
           "describe_expected", "EpSparqlBuilder"]

#: Base for bare names and the undeclared empty prefix when there is no BASE.
DEFAULT_BASE = "http://epsparql.org/ns#"



# ------------------------------------------------------------------ entry

def parse_query(text: str, *, base: str | None = None) -> A.Query:
    """Parse EP-SPARQL ``text`` into a SelectQuery, ConstructQuery or AskQuery.

    ``base`` is used as BASE when the query declares none (for relative IRIs
    and bare names).  Raises QuerySyntaxError for malformed text and
    QueryError for well-formed but unsupported or invalid queries; never any
    other exception for a ``str`` argument.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_query() needs a str, not {type(text).__name__}")
    check_base(base)
    try:
        return _parse(text, base)
    except QueryError as err:
        raise err.with_source(text) from None
    except RecursionError:
        raise QueryError("the query is nested too deeply to be parsed",
                         source=text) from None
    except Exception as err:  # noqa: BLE001 -- the "never escapes" promise
        raise QuerySyntaxError(f"cannot parse the query ({type(err).__name__}: "
                               f"{err})", *end_position(text),
                               source=text) from None


def _parse(text: str, base: str | None) -> A.Query:
    """Parse, reject unsupported constructs, then build the AST."""
    tree = parse_tree(_lark(), text)
    _reject_unsupported(tree)
    query = run_builder(EpSparqlBuilder(base), tree)
    check_scopes(query)
    return query


@lru_cache(maxsize=1)
def _lark() -> Lark:
    """The LALR parser, once per process, from the cache (grammar analysis is slow)."""
    extension = Path(__file__).with_name("ep_sparql.lark").read_text(encoding="utf-8")
    return sparql_parser("ep-sparql", extension, lexer="basic")


# ----------------------------------------------------------- rejections

#: Where to go for aggregates (the stream dialects have windows).
_WINDOWS_HINT = (" (EP-SPARQL has no windows to aggregate over: write it in a stream dialect, "
                 "e.g. C-SPARQL FROM STREAM <s> [RANGE 10s STEP 1s]; docs/DIALECTS.md)")

_REJECTED = {
    "limit_clause": "LIMIT is not supported on a stream: an EP-SPARQL query "
                    "runs continuously and reports each answer as it is "
                    "detected, so there is no result set to cut off",
    "offset_clause": "OFFSET is not supported on a stream: answers are "
                     "reported as they are detected, there is no result "
                     "list to skip into",
    "order_clause": "ORDER BY is not supported on a stream: answers are "
                    "reported in the order they are detected",
    "group_clause": "GROUP BY is not supported yet" + _WINDOWS_HINT,
    "having_clause": "HAVING is not supported yet" + _WINDOWS_HINT,
    "describe_query": "DESCRIBE queries are not supported; use SELECT, "
                      "CONSTRUCT or ASK",
    "dataset_clause": "FROM is not supported: a query runs over the event "
                      "stream and the engine's background knowledge",
    "service_pattern": "SERVICE is not supported",
    "values_clause": "VALUES is not supported yet",
    "inline_data": "VALUES is not supported yet",
}


def _reject_unsupported(tree: Tree) -> None:
    """Raise QueryError for the first (in text order) unsupported construct.

    Done on the parse tree before building the AST so that the error names
    the construct itself rather than something inside it.
    """
    found: list[tuple[int, int, str]] = []
    for sub in tree.iter_subtrees():
        message = _REJECTED.get(sub.data)
        if message is None and sub.data == "builtin_call":
            name = str(sub.children[0]).upper()
            if name in AGGREGATES:
                message = f"aggregate {name}(...) is not supported yet" + _WINDOWS_HINT
        if message is not None:
            line, column = _meta_position(sub)
            found.append((line, column, message))
    if found:
        line, column, message = min(found)
        raise QueryError(message, line, column)


def _meta_position(tree: object) -> tuple[int, int]:
    """Line and column where a parse-tree node starts (1, 1 if unknown)."""
    meta = getattr(tree, "meta", None)
    if meta is None or getattr(meta, "empty", True):
        return 1, 1
    return meta.line, meta.column


# ------------------------------------------------------------ AST builder

@v_args(meta=True)
class EpSparqlBuilder(SparqlBuilder):
    """What only EP-SPARQL builds: bare names, the default ``:``, its
    WHERE chains (SparqlBuilder.where_clause), sub-selects and query forms
    without solution modifiers (refused before building:
    :func:`_reject_unsupported`)."""

    @property
    def _bare_base(self) -> str:
        """Base for bare names and the undeclared empty prefix."""
        return self.base or DEFAULT_BASE

    def undeclared_namespace(self, prefix: str) -> str | None:
        return self._bare_base if prefix == "" else None

    def bare_name(self, meta, c):
        return URIRef(self._bare_base + str(c[0]))

    def solution_modifier(self, meta, c):
        return None

    def subselect(self, meta, c):
        clause, where = c[0], c[1]
        return A.SubSelect(clause.projection, where, clause.distinct, clause.reduced,
                           clause.pos)

    def _header(self) -> dict:
        """Prefixes and base shared by all query forms."""
        return {"prefixes": tuple(self.prefixes), "base": self.base}

    def select_query(self, meta, c):
        clause = c[0]
        where = next(x for x in c[1:] if isinstance(x, A.Group))
        return A.SelectQuery(clause.projection, where, clause.distinct,
                             clause.reduced, **self._header(), pos=clause.pos)

    def construct_query(self, meta, c):
        template = c[1]
        where = next(x for x in c[2:] if isinstance(x, A.Group))
        check_template(template)
        return A.ConstructQuery(template, where, **self._header(), pos=pos_of(c[0]))

    def construct_where(self, meta, c):
        bgps = [x for x in c if isinstance(x, A.BGP)]
        template = bgps[0].triples if bgps else ()
        check_template(template)
        where = A.Group(tuple(bgps), bgps[0].pos if bgps else pos_of(c[1]))
        return A.ConstructQuery(template, where, **self._header(), pos=pos_of(c[0]))

    def ask_query(self, meta, c):
        where = next(x for x in c[1:] if isinstance(x, A.Group))
        return A.AskQuery(where, **self._header(), pos=pos_of(c[0]))

    def start(self, meta, c):
        return c[-1]
