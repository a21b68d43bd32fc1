"""Prepare a query once: every stage's result, kept for whoever reads it.

    query text ──language/parser.py──▶ syntax tree
               ──algebra/translate.py──▶ algebra (section 4.2)
               ──algebra/passes.py──▶ algebra after the rewrites (windows, filter placement)
               ──rules/from_algebra.py──▶ rules of the core's rule language
               (algebra/partition.py: the key Spark can partition the query on)

The engine registers the rules with its core (``prolog/core_compile.pl``
binarises and compiles them there); ``epsparql explain``, ``check``, the
trace and the Spark job read the prepared stages instead of parsing the
text again.  This is rdflib's ``prepareQuery`` (the prepared query keeps
its algebra) with the stages named as ETALIS's ``compile_event_rules``
names them.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Callable

from .algebra import translate
from .algebra.nodes import Query as AlgebraQuery
from .algebra.partition import KeyPlan, key_plan
from .algebra.passes import optimise
from .language import DEFAULT_BASE, QueryError, parse_query
from .language.ast import Query as SyntaxTree
from .rdf.codec import encode
from .rules import CompiledQuery, compile_query

__all__ = ["PreparedQuery", "prepare"]


@dataclass(frozen=True)
class PreparedQuery:
    """One query through every stage of the pipeline."""

    text: str
    syntax: SyntaxTree             # language/: what the text says
    algebra: AlgebraQuery          # algebra/: after the rewrites
    compiled: CompiledQuery        # rules/: the core rules and how to read their detections
    name: str = field(default="query", compare=False)

    @cached_property
    def key(self) -> KeyPlan:
        """The key this query alone can be partitioned on (no background
        schema; see :func:`epsparql.algebra.partition.plan` for several
        queries and a schema)."""
        return key_plan(self.algebra, self.name)

    @property
    def prefixes(self) -> dict[str, str]:
        """The prefixes the query declares, and ``""`` for the base its bare
        names resolve against."""
        out = {"": self.syntax.base or DEFAULT_BASE}
        out.update(dict(self.syntax.prefixes))
        return out


def prepare(text: str, *, qid: int, name: str = "query", base: str | None = None,
            is_function: Callable[[str], bool] = lambda iri: False, module: str = "",
            reasoning: str = "rdfs") -> PreparedQuery:
    """Parse, translate, rewrite and compile a query.

    ``qid`` numbers the rules' head (``sparql_q<qid>``), ``module`` is the
    engine's Prolog module (its background lives there), ``reasoning`` is
    ``"rdfs"`` (stream patterns match entailed triples) or ``"none"``,
    ``is_function`` tells registered extension functions.  Raises
    :class:`~epsparql.language.QuerySyntaxError` or
    :class:`~epsparql.language.QueryError` with line, column and the text."""
    # language/parser.py: text -> syntax tree (errors name the line and column)
    syntax = parse_query(text, base=base)
    try:
        # algebra/translate.py: syntax tree -> the algebra of section 4.2
        algebra: Any = translate(syntax)
        # algebra/passes.py: windows from getDURATION() bounds first (they read
        # whole filters), then filters placed as low as their variables allow
        algebra = replace(algebra, pattern=optimise(algebra.pattern))
        # rules/from_algebra.py: algebra -> rules of the core (a Window bounds every
        # binary step below it; prolog/core_compile.pl relies on that)
        compiled = compile_query(algebra, qid, encode=encode, is_function=is_function,
                                 module=module, reasoning=reasoning)
    except QueryError as e:
        raise e.with_source(text)
    return PreparedQuery(text, syntax, algebra, compiled, name)
