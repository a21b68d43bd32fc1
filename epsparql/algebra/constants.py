"""Static checks of a query's constants and expression types, before it runs.

A mistake in a constant does not make a query fail on a stream: every
evaluation that meets it is a SPARQL error, an error is false, and the
query just never answers.  So these are found when the query is
registered (and by ``epsparql check``), on every road: an EP-SPARQL
query (algebra/translate.py) and a stream dialect's (prepare.py,
before its translation), both read through
:mod:`epsparql.language.query_parts`:

Errors (:class:`~epsparql.language.QueryError`, with line and column):

* a typed literal whose lexical form is not one of its datatype's, for
  the datatypes the engine computes with (the numeric types, boolean,
  dateTime, dateTimeStamp, date, duration, dayTimeDuration,
  yearMonthDuration): ``"P5"^^xsd:duration``, ``"5,0"^^xsd:decimal``,
  ``"2024-13-01T00:00:00"^^xsd:dateTime``; anywhere in the query
  (patterns, expressions, templates).  The check is the engine's own
  encoder (:mod:`epsparql.rdf.codec`), so it accepts exactly what the
  engine can compute with;
* a datatype or constant IRI in the XSD namespace that is not an XML
  Schema datatype (``xsd:integr``);
* REGEX or REPLACE with a constant pattern and flags the engine cannot run
  (:mod:`epsparql.language.regex`: the same PCRE2 the engine uses).

Warnings (:class:`~epsparql.language.QueryWarning`, through
:mod:`warnings`, so ``epsparql check`` and ``Engine.register`` show
them): an operator whose operand types are known from the query text and
can never fit, because the engine then gives an error (so false) for
every solution:

* ``<``, ``>``, ``<=``, ``>=`` between different kinds of value (number,
  string, language-tagged string, boolean, date-time, date, duration) or
  on IRIs: ``getDURATION() < 5`` compares a duration with a number (the
  fix: ``getDURATION() < "PT5S"^^xsd:duration``);
* ``=`` and ``!=`` between literals of different kinds, and ``=`` between
  an IRI and a literal (never equal);
* arithmetic on a value that is not a number (``getENDTIME() -
  getSTARTTIME()``: durations come from getDURATION());
* SUM or AVG of something that is not a number (an error for every group);
* a variable that no pattern binds (``FILTER(?prce > 5)``, a projected
  or template variable), see :func:`~epsparql.language.scope.unbound_variables`.

Types come from constants and from what built-in functions return
(getDURATION() a duration, getSTARTTIME() and a dialect's timestamp() a
date-time, STR() a string, STRLEN() a number, ...) and aggregates
compute (COUNT, SUM and AVG a number, MIN, MAX and SAMPLE their
argument's type); a variable bound only by ``AS ?v`` (SELECT, BIND,
GROUP BY) has its expressions' type, ``(COUNT(*) AS ?n)`` a number; a
variable a pattern binds can hold anything, so a comparison involving
one is never warned about.
"""
from __future__ import annotations

import copy
import warnings
from datetime import datetime, timezone
from typing import Any, Iterator

from rdflib import BNode, Literal, URIRef

from ..language import ast
from ..language.errors import QueryError, QueryWarning, relative_iri_message
from ..language.regex import regex_problem
from ..language.dialects import ast as D
from ..language.query_parts import Part, query_parts
from ..language.scope import unbound_variables
from ..rdf.literal_forms import (DURATION_TYPES as _DURATIONS, FLOAT_TYPES as _FLOATS,
                                 INTEGER_TYPES as _INTEGERS, INTERPRETED_DATATYPES,
                                 TIME_TYPES as _TIMES, XSD_DATATYPES, XSD_NS as _X,
                                 literal_problem)
from ..rdf.literal_forms import xsd_name as _xsd
from ..rdf.ntriples import SCHEME_RE
from ..trampoline import Walk, run

__all__ = ["check_constants", "literal_problem", "INTERPRETED_DATATYPES",
           "XSD_DATATYPES"]


# -- the walk ------------------------------------------------------------------

def check_constants(query: Any) -> None:
    """Raise QueryError for an invalid constant of ``query`` (an EP-SPARQL
    query or a stream dialect's); warn (QueryWarning) about operators whose
    operands can never fit and variables no pattern binds."""
    for problem, pos in _problems(query):
        if isinstance(problem, QueryError):
            raise problem
        warnings.warn(QueryWarning(problem, pos.line if pos else None,
                                   pos.column if pos else None), stacklevel=4)


def _error(message: str, pos: ast.Pos | None) -> QueryError:
    if pos is None:
        return QueryError(message)
    return QueryError(message, pos.line, pos.column)


#: How many aliases deep a variable's type is looked for (each a nested walk).
_MAX_ALIASES = 50


class _Context:
    """What typing the expressions of one query needs: the warnings so far,
    the expressions each variable is assigned (``AS ?v``; None for a
    pattern that binds it: then it can hold anything), and the road."""

    def __init__(self, query: Any, warned: list) -> None:
        self.warned = warned
        self.dialect = not isinstance(query, (ast.SelectQuery, ast.ConstructQuery,
                                              ast.AskQuery))
        self.assigned: dict[str, list[Any]] = {}
        self._types: dict[str, frozenset[str] | None] = {}
        self._open: list[str] = []               # the variables being typed

    def assign(self, name: str, expr: Any) -> None:
        self.assigned.setdefault(name, []).append(expr)

    def var_type(self, name: str) -> frozenset[str] | None:
        """A variable's type: the join of the types of the expressions
        assigned to it, when nothing else binds it (an aggregate's alias:
        ``(COUNT(*) AS ?n)`` is a number); otherwise unknown."""
        if name in self._types:
            return self._types[name]
        self._types[name] = None                 # while typing it (a cycle: unknown)
        exprs = self.assigned.get(name, [None])
        if any(x is None for x in exprs) or len(self._open) >= _MAX_ALIASES:
            return None                          # (a long chain of BINDs: unknown past it)
        quiet = copy.copy(self)                  # its operators are warned about where they are
        quiet.warned = []
        self._open.append(name)
        try:
            found = _join([run(_type(x, None, quiet)) for x in exprs])
        finally:
            self._open.pop()
        self._types[name] = found
        return found


def _problems(query: Any) -> Iterator[tuple[Any, ast.Pos | None]]:
    """Errors (QueryError) first in text order, then warnings (text)."""
    warned: list[tuple[str, ast.Pos | None]] = list(unbound_variables(query))
    ctx = _Context(query, warned)
    parts = list(query_parts(query))
    for part in parts:
        if part.kind == "triple":
            for x in (part.node.s, part.node.p, part.node.o):
                if isinstance(x, ast.Var):
                    ctx.assign(x.name, None)
        elif part.kind == "binds":
            ctx.assign(part.node.name, part.expr)
    relative: set[str] = set()
    for expr, pos in _expressions_and_terms(parts):
        if isinstance(expr, (URIRef, Literal, BNode)):
            problem = _term_problem(expr)
            if problem:
                yield _error(problem, pos), pos
            elif (isinstance(expr, URIRef) and not SCHEME_RE.match(expr) and expr not in relative
                  and not ctx.dialect):         # (a dialect's builder says it, names aside)
                relative.add(expr)
                warned.append((relative_iri_message(expr), pos))
            continue
        run(_type(expr, pos, ctx))
    for message, pos in warned:
        yield message, pos




def _term_problem(term: Any) -> str | None:
    if isinstance(term, Literal):
        return literal_problem(term)
    if isinstance(term, URIRef) and str(term).startswith(_X) and term not in XSD_DATATYPES:
        return f"{_xsd(term)} is not an XML Schema datatype"
    return None


def _expressions_and_terms(parts: list[Part]) -> Iterator[tuple[Any, ast.Pos | None]]:
    """Every expression (with a position near it) and every RDF term of a
    triple pattern, template or VALUES block (with its position)."""
    for p in parts:
        if p.kind in ("triple", "template"):
            for x in (p.node.s, p.node.p, p.node.o):
                yield x, p.pos
        elif p.kind in ("expr", "term"):
            yield p.node, p.pos


# -- static types ----------------------------------------------------------------
# A type is a frozenset of kinds, or None when anything is possible.
NUM, STR, LANG, BOOL, DATETIME, DATE, DURATION, IRI, BLANK, OTHER = (
    "a number", "a string", "a language-tagged string", "a boolean", "an xsd:dateTime",
    "an xsd:date", "an xsd:duration", "an IRI", "a blank node", "a literal")
_ORDERED = {NUM, STR, LANG, BOOL, DATETIME, DATE, DURATION}
_LITERALS = _ORDERED | {OTHER}

_RETURNS: dict[str, frozenset[str] | None] = {
    **{n: frozenset({STR}) for n in ("STR", "LANG", "ENCODE_FOR_URI", "TZ", "MD5", "SHA1",
                                     "SHA256", "SHA384", "SHA512", "STRUUID")},
    **{n: frozenset({STR, LANG}) for n in ("STRBEFORE", "STRAFTER", "CONCAT")},
    **{n: frozenset({NUM}) for n in ("STRLEN", "ABS", "CEIL", "FLOOR", "ROUND", "RAND",
                                     "YEAR", "MONTH", "DAY", "HOURS", "MINUTES",
                                     "SECONDS")},
    **{n: frozenset({BOOL}) for n in ("BOUND", "ISIRI", "ISBLANK", "ISLITERAL",
                                      "ISNUMERIC", "REGEX", "CONTAINS", "STRSTARTS",
                                      "STRENDS", "LANGMATCHES", "SAMETERM")},
    **{n: frozenset({IRI}) for n in ("DATATYPE", "IRI", "UUID")},
    "BNODE": frozenset({BLANK}), "STRLANG": frozenset({LANG}),
    "TIMEZONE": frozenset({DURATION}), "GETDURATION": frozenset({DURATION}),
    "GETSTARTTIME": frozenset({DATETIME}), "GETENDTIME": frozenset({DATETIME}),
    "NOW": frozenset({DATETIME}), "TIMESTAMP": frozenset({DATETIME}),
}
_BOOLEAN_OPS = {"||", "&&", "=", "!=", "<", ">", "<=", ">="}


def _literal_kind(lit: Literal) -> str:
    if lit.language is not None:
        return LANG
    return _datatype_kind(lit.datatype)


def _datatype_kind(dt: Any) -> str:
    if dt is None or str(dt) == _X + "string":
        return STR
    name = str(dt)[len(_X):] if str(dt).startswith(_X) else ""
    if name in _INTEGERS or name in _FLOATS or name == "decimal":
        return NUM
    if name == "boolean":
        return BOOL
    if name in _TIMES:
        return DATETIME if _TIMES[name] == "datetime" else DATE
    if name in _DURATIONS:
        return DURATION
    return OTHER


def _type(e: Any, pos: ast.Pos | None, ctx: _Context) -> Walk[frozenset[str] | None]:
    """The static type of ``e``; appends a warning for each operator whose
    operand types can never fit (and then types it as unknown, so one
    mistake is reported once)."""
    pos = getattr(e, "pos", None) or pos
    if isinstance(e, ast.Var):
        return ctx.var_type(e.name)
    if isinstance(e, D.Aggregate):
        return (yield _aggregate_type(e, pos, ctx))
    if isinstance(e, ast.Exists):
        return frozenset({BOOL})
    if isinstance(e, Literal):
        problem = literal_problem(e)
        if problem:
            raise _error(problem, pos)
        return frozenset({_literal_kind(e)})
    if isinstance(e, URIRef):
        problem = _term_problem(e)
        if problem:
            raise _error(problem, pos)
        return frozenset({IRI})
    if isinstance(e, ast.BinaryOp):
        left = yield _type(e.left, pos, ctx)
        right = yield _type(e.right, pos, ctx)
        if e.op in ("<", ">", "<=", ">="):
            _check_order(e, left, right, pos, ctx)
        elif e.op in ("=", "!="):
            _check_equal(e, left, right, pos, ctx)
        elif e.op in ("+", "-", "*", "/"):
            return _check_arith(e, (e.left, e.right), (left, right), pos, ctx)
        return frozenset({BOOL})
    if isinstance(e, ast.UnaryOp):
        inner = yield _type(e.operand, pos, ctx)
        if e.op == "!":
            return frozenset({BOOL})
        return _check_arith(e, (e.operand,), (inner,), pos, ctx)
    if isinstance(e, (ast.In, ast.NotIn)):
        yield _type(e.expr, pos, ctx)
        for v in e.values:
            yield _type(v, pos, ctx)
        return frozenset({BOOL})
    if isinstance(e, ast.FunctionCall):
        types = []
        for a in e.args:
            types.append((yield _type(a, pos, ctx)))
        if not isinstance(e.name, str) or isinstance(e.name, URIRef):
            return None                                  # an extension function
        name = e.name.upper()
        if name in ("REGEX", "REPLACE"):
            _check_regex(e, name, pos, ctx)
        if name == "IF":
            return _join(types[1:])
        if name == "COALESCE":
            return _join(types)
        if name in ("UCASE", "LCASE", "SUBSTR", "REPLACE"):    # the kind of the text
            return types[0] & {STR, LANG} if types[0] is not None else frozenset({STR, LANG})
        if name == "CONCAT" and types and all(t is not None and t <= {STR} for t in types):
            return frozenset({STR})
        if name == "STRDT" and len(e.args) == 2 and isinstance(e.args[1], URIRef):
            return frozenset({_datatype_kind(e.args[1])})
        return _RETURNS.get(name)
    return None


def _aggregate_type(e: D.Aggregate, pos, ctx: _Context) -> Walk[frozenset[str] | None]:
    """COUNT is a number; SUM and AVG too, of numbers (of anything else they
    are an error for every group); MIN, MAX and SAMPLE have their
    argument's type; GROUP_CONCAT makes text."""
    arg = None if e.arg is None else (yield _type(e.arg, pos, ctx))
    if e.name in ("SUM", "AVG") and arg is not None and NUM not in arg:
        ctx.warned.append((f"{_show(e)}: {e.name} of {_kinds(arg)} ({_show(e.arg)}) is an "
                           f"error for every group, so it has no value", pos))
        return None
    if e.name in ("MIN", "MAX", "SAMPLE"):
        return arg
    if e.name == "GROUP_CONCAT":
        return frozenset({STR, LANG})
    return frozenset({NUM})


def _join(types: list[frozenset[str] | None]) -> frozenset[str] | None:
    if not types or any(t is None for t in types):
        return None
    return frozenset().union(*types)


def _check_order(e: ast.BinaryOp, left, right, pos, ctx: _Context) -> None:
    if left is None or right is None:
        return
    if any(a == b and a in _ORDERED for a in left for b in right):
        return
    kinds = left | right
    why = ("IRIs and blank nodes have no order" if kinds <= {IRI, BLANK}
           else f"it compares {_kinds(left)} with {_kinds(right)}")
    ctx.warned.append((f"{_show(e)}: {why}, which is an error for every solution, so it "
                   f"is never true{_fix(e, left, right)}", pos))


def _check_equal(e: ast.BinaryOp, left, right, pos, ctx: _Context) -> None:
    if left is None or right is None or OTHER in left | right:
        return
    if left <= _LITERALS and right <= _LITERALS:
        if any(a == b for a in left for b in right):
            return
        ctx.warned.append((f"{_show(e)}: it compares {_kinds(left)} with {_kinds(right)}, "
                       "which is an error for every solution, so it is never true"
                       f"{_fix(e, left, right)}", pos))
    elif e.op == "=" and ((left <= {IRI, BLANK} and right <= _LITERALS)
                          or (right <= {IRI, BLANK} and left <= _LITERALS)):
        ctx.warned.append((f"{_show(e)}: {_kinds(left)} is never equal to {_kinds(right)}"
                       f"{_fix(e, left, right)}", pos))


def _check_arith(e: Any, operands: tuple, types: tuple, pos, ctx: _Context
                 ) -> frozenset[str] | None:
    for operand, t in zip(operands, types):
        if t is not None and NUM not in t:
            hint = ""
            if t <= {DATETIME, DURATION}:
                hint = ("; timestamp() is an xsd:dateTime, not C-SPARQL 0.9's milliseconds: "
                        "compare two with < or >" if ctx.dialect
                        else "; the length of a match is getDURATION()")
            ctx.warned.append((f"{_show(e)}: arithmetic on {_kinds(t)} ({_show(operand)}) is "
                               f"an error for every solution{hint}", pos))
            return None
    return frozenset({NUM})


def _check_regex(call: ast.FunctionCall, name: str, pos, ctx: _Context) -> None:
    """REGEX(text, pattern[, flags]) / REPLACE(text, pattern, with[, flags])
    with constants: check them as the engine will run them."""
    args = call.args
    at = 3 if name == "REPLACE" else 2
    pattern = args[1]
    flags = args[at] if len(args) > at else Literal("")
    for what, arg in (("pattern", pattern), ("flags", flags)):
        if isinstance(arg, URIRef) or (isinstance(arg, Literal)
                                       and _literal_kind(arg) != STR):
            ctx.warned.append((f"{name}: the {what} {_show(arg)} is not a string, which is "
                           "an error for every solution", pos))
            return
    if not (isinstance(pattern, Literal) and isinstance(flags, Literal)):
        return
    replacement = (str(args[2]) if name == "REPLACE" and isinstance(args[2], Literal)
                   else None)
    problem = regex_problem(str(pattern), str(flags), for_replace=name == "REPLACE",
                            replacement=replacement)
    if problem:
        raise _error(f"{name} with the pattern {_show(pattern)}"
                     + (f" and the flags {_show(flags)}" if str(flags) else "")
                     + f": {problem}", pos)


def _kinds(t: frozenset[str]) -> str:
    names = sorted(t)
    return names[0] if len(names) == 1 else " or ".join(names)


def _fix(e: ast.BinaryOp, left, right) -> str:
    """A suggested rewrite for the common mistakes, as '; write …'."""
    for this, other, constant in ((left, right, e.right), (right, left, e.left)):
        if not (isinstance(constant, Literal) and this is not None
                and len(this) == 1 and other is not None):
            continue
        kind = next(iter(this))
        if kind in (DURATION, DATETIME) and NUM in other and constant.datatype is not None:
            try:
                number = float(str(constant))
            except ValueError:
                continue
            if kind == DURATION:
                secs = f"{abs(number):.6f}".rstrip("0").rstrip(".")
                lit = f'"{"-" if number < 0 else ""}PT{secs}S"^^xsd:duration'
            else:
                try:
                    when = datetime.fromtimestamp(number, timezone.utc)
                except (OverflowError, OSError, ValueError):
                    continue
                lit = f'"{when.strftime("%Y-%m-%dT%H:%M:%S")}Z"^^xsd:dateTime'
            shown = _replace(e, constant, lit)
            return (f"; times are seconds, but {_show(constant)} must be written as "
                    f"{'a duration' if kind == DURATION else 'a date-time'}: {shown}")
        if kind in (DURATION, DATETIME, DATE, NUM, BOOL) and other == {STR}:
            dt = {DURATION: "xsd:duration", DATETIME: "xsd:dateTime", DATE: "xsd:date",
                  NUM: "xsd:decimal", BOOL: "xsd:boolean"}[kind]
            return (f"; to compare with {kind}, give the string a datatype: "
                    f"{_replace(e, constant, _show(constant) + '^^' + dt)}")
    return ""


def _replace(e: ast.BinaryOp, old: Any, new_text: str) -> str:
    left = new_text if e.left is old else _show(e.left)
    right = new_text if e.right is old else _show(e.right)
    return f"{left} {e.op} {right}"


def _show(e: Any, depth: int = 0) -> str:
    """Short query text of an expression (for messages)."""
    if depth > 3:
        return "…"
    if isinstance(e, ast.Var):
        return str(e)
    if isinstance(e, Literal):
        if e.language:
            return f'"{e}"@{e.language}'
        if e.datatype is None:
            return f'"{e}"'
        if _literal_kind(e) == NUM and str(e.datatype) in (_X + "integer", _X + "decimal",
                                                        _X + "double"):
            return str(e)
        if _literal_kind(e) == BOOL:
            return str(e)
        return f'"{e}"^^{_xsd(e.datatype)}'
    if isinstance(e, URIRef):
        return _xsd(e)
    if isinstance(e, ast.BinaryOp):
        return f"{_show(e.left, depth + 1)} {e.op} {_show(e.right, depth + 1)}"
    if isinstance(e, ast.UnaryOp):
        return f"{e.op}{_show(e.operand, depth + 1)}"
    if isinstance(e, D.Aggregate):
        arg = "*" if e.arg is None else _show(e.arg, depth + 1)
        return f"{e.name}({'DISTINCT ' if e.distinct else ''}{arg})"
    if isinstance(e, ast.FunctionCall):
        name = e.name if isinstance(e.name, str) and not isinstance(e.name, URIRef) \
            else _xsd(e.name)
        name = {"GETDURATION": "getDURATION", "GETSTARTTIME": "getSTARTTIME",
                "GETENDTIME": "getENDTIME", "TIMESTAMP": "timestamp"}.get(name, name)
        return f"{name}({', '.join(_show(a, depth + 1) for a in e.args)})"
    return "…"
