"""Prepare a query once: every stage's result, kept for whoever reads it.

    query text ──language/parser.py──▶ syntax tree
               ──algebra/translate.py──▶ algebra (section 4.2)
               ──algebra/passes.py──▶ algebra after the rewrites (windows, filter placement)
               ──rules/from_algebra.py──▶ rules of the core's rule language
               (algebra/partition.py: the key Spark can partition the query on)

A query of a stream dialect (C-SPARQL, CQELS-QL, ...; docs/DIALECTS.md)
takes the same road with its own stages (:func:`prepare_windowed`):

    query text ──language/dialects/──▶ syntax tree (windows, streams, policy)
               ──algebra/streams.py──▶ SPARQL algebra + windows, policy, R2S
               ──rules/window_compile.py──▶ clauses of prolog/stream_window.pl
               (algebra/window_partition.py: its Spark key)

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
from .algebra.constants import check_constants
from .algebra.nodes import Query as AlgebraQuery
from .algebra.partition import KeyPlan, key_plan
from .algebra.passes import optimise
from .language import DEFAULT_BASE, QueryError, parse_query
from .language.ast import Query as SyntaxTree
from .language.dialects import DialectQuery
from .language.scope import check_scopes
from .rdf.codec import encode
from .rules import CompiledQuery, compile_query

__all__ = ["PreparedQuery", "PreparedWindowQuery", "prepare", "prepare_windowed", "dialect_of",
           "EP_SPARQL"]

#: The name ``dialect=`` / ``--dialect`` takes for EP-SPARQL itself.
EP_SPARQL = "ep-sparql"


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


@dataclass(frozen=True)
class PreparedWindowQuery:
    """A query of a stream dialect through every stage of its pipeline."""

    text: str
    syntax: Any                    # language/dialects/: a DialectQuery
    algebra: Any                   # algebra/streams.py: a ContinuousQuery
    compiled: Any                  # rules/window_compile.py: a CompiledWindowQuery
    name: str = field(default="query", compare=False)

    @property
    def dialect(self) -> str:
        return self.algebra.dialect

    @cached_property
    def key(self) -> KeyPlan:
        """The key this query alone can be partitioned on (see
        :func:`epsparql.algebra.window_partition.window_key_plan`)."""
        from .algebra.window_partition import window_key_plan
        return window_key_plan(self.algebra, self.name)

    @property
    def prefixes(self) -> dict[str, str]:
        out = {"": self.syntax.base or DEFAULT_BASE}
        out.update(dict(self.syntax.prefixes))
        return out

    @property
    def span(self) -> float:
        """How long, in seconds, an occurrence can still count for this query
        (its longest window: ``FROM NOW - a TO NOW - d`` keeps an
        occurrence for a); ``math.inf`` for count windows and ``[ALL]``."""
        import math
        longest = 0.0
        for w in self.algebra.windows:
            win = w.window
            if win.kind in ("range", "past"):
                longest = max(longest, float(win.width))
            elif win.kind != "now":
                return math.inf
        return longest


def dialect_of(text: str, dialect: str | None = None) -> str:
    """The dialect a query text is registered as: ``dialect`` when given
    (one of :data:`~epsparql.language.dialects.DIALECTS` or
    :data:`EP_SPARQL`), else the one its constructs show, else EP-SPARQL."""
    from .language.dialects import DIALECTS, detect_dialect
    if dialect is not None:
        d = dialect.strip().lower()
        if d in ("ep-sparql", "epsparql", "sparql"):
            return EP_SPARQL
        if d == "streaming_sparql":
            d = "streaming-sparql"
        if d not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}: one of {EP_SPARQL}, {', '.join(DIALECTS)}")
        return d
    return detect_dialect(text) or EP_SPARQL


def prepare_windowed(text: "str | DialectQuery", *, qid: int, dialect: str | None = None, name: str = "query",
                     base: str | None = None,
                     is_function: Callable[[str], bool] = lambda iri: False, module: str = "",
                     reasoning: str = "rdfs", panes: bool = True,
                     window_semantics: str | None = None,
                     window_t0: "Fraction | int | float | str | None" = None,
                     window_report: Any = None, window_content: Any = None,
                     window_tick: Any = None
                     ) -> PreparedWindowQuery:
    """Parse, translate and compile a query of a stream dialect (``dialect``
    forces one; detected otherwise).  ``qid`` numbers its clauses, ``panes``
    keeps aggregates per pane where the query allows it (docs/DIALECTS.md,
    "Incremental aggregates").  The window parameters (SECRET's:
    ``window_semantics`` engine, cql or csrbench, ``window_t0`` seconds or ``first``,
    ``window_report``, ``window_content``, ``window_tick``; None: not said)
    win over the query's ``#pragma window`` comments, which win over the
    dialect's defaults (algebra/secret.py; docs/DIALECTS.md, "The SECRET
    parameters").  ``text`` may be a parsed (or built)
    :class:`~epsparql.language.dialects.DialectQuery` instead.  Raises
    QuerySyntaxError/QueryError with line, column and the text, ValueError
    for a bad argument."""
    from .algebra.secret import WindowSettings, read_pragmas, resolve
    from .algebra.streams import translate as translate_windowed
    from .language.dialects import parse_dialect
    from .rules.window_compile import compile_window_query
    args = WindowSettings.of(window_semantics, window_t0, window_report, window_content,
                             window_tick)
    # language/dialects/: text -> syntax tree of the dialect (errors: line, column)
    if isinstance(text, str):
        syntax = parse_dialect(text, dialect=dialect, base=base)
    else:
        syntax, text = text, ""
    try:
        # language/scope.py, algebra/constants.py: the static checks EP-SPARQL's
        # queries get (scope rules, constants, regular expressions, types,
        # variables no pattern binds)
        check_scopes(syntax)
        check_constants(syntax)
        # algebra/secret.py: the SECRET parameters in force (argument, pragma, default)
        pragma, where = read_pragmas(text)
        secret = resolve(syntax, args, pragma, where)
        # algebra/streams.py: the SPARQL algebra over windows, with policy and R2S
        algebra = translate_windowed(syntax, secret)
        # rules/window_compile.py: clauses of prolog/stream_window.pl (per-pane
        # aggregates where the query allows them)
        compiled = compile_window_query(algebra, qid, module=module, encode=encode,
                                        is_function=is_function, reasoning=reasoning,
                                        panes=panes)
    except QueryError as e:
        raise e.with_source(text) if text else e
    return PreparedWindowQuery(text, syntax, algebra, compiled, name)
