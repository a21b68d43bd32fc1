"""SPARQLstream: ``FROM [NAMED] STREAM <s> [window]`` and
``SELECT ISTREAM|DSTREAM|RSTREAM``.

Windows, in the seed's form ``[FROM NOW - a TO NOW [- d] [STEP b]]`` (the
inner ``FROM`` may be left out; ``TO NOW - d`` puts the window wholly in
the past) and in morph-streams' (the engine's grammar, and every SRBench
and CSRBench query): ``[NOW - a [TO NOW - d] [SLIDE [b]]]`` and
``[TRIPLES n]``; ``SLIDE`` without an amount slides by one unit of the
width.  Amounts are a number and a unit: ``DAY HOUR MINUTE SECOND
MILLISECOND WEEK MONTH YEAR``, singular or plural, and morph-streams'
``S MS MIN HR``, case-insensitive, with or without a space (``10S``).
The relation-to-stream operator follows SELECT (``SELECT ISTREAM ?x`` or
``SELECT ISTREAM(?x …)``, no space before the parenthesis: with one,
``(`` opens a projection expression).  The unnamed stream windows make
the default graph; a query with named ones only reads them there too
(morph-streams matches a ``FROM NAMED STREAM``'s triples with plain
patterns); a named one is read alone with ``GRAPH <s>``.  By default the
windows with a step are morph-streams' as CSRBench's oracle configures
them (closed-open from t0 = 0, evaluated at their closes when not all
empty: algebra/secret.py), a query without one at the arrival instants;
RSTREAM unless said (docs/DIALECTS.md, SPARQLstream).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, NamedTuple

from lark import Token, v_args
from rdflib import URIRef

from . import ast as D
from .builder import DialectBuilder, SelectClause, check_window, error_at, pos_of, seconds
from .frontend import Dialect

_BASE_UNITS = {"day": Fraction(86400), "hour": Fraction(3600), "minute": Fraction(60),
               "second": Fraction(1), "millisecond": Fraction(1, 1000),
               "week": Fraction(7 * 86400), "month": Fraction(30 * 86400),
               "year": Fraction(365 * 86400)}
#: Unit words, lower case: singular and plural, and morph-streams' short
#: ones (its TimeUnit: a month is 30 days, a year 365).
UNITS = {**_BASE_UNITS, **{k + "s": v for k, v in _BASE_UNITS.items()},
         "s": Fraction(1), "ms": Fraction(1, 1000), "min": Fraction(60), "hr": Fraction(3600)}


class _Amount(NamedTuple):
    seconds: Fraction
    at: Any                 # the number's token, for errors
    unit: Fraction          # one of its unit, in seconds


class _Delay(NamedTuple):   # TO NOW - amount
    amount: _Amount


class _Step(NamedTuple):    # STEP amount, SLIDE amount or a bare SLIDE (amount None)
    amount: _Amount | None
    at: Any

GRAMMAR = r"""
%extend dataset_clause: FROM NAMED? STREAM iri "[" (ss_window | ss_triples) "]"   -> stream_clause
ss_window: FROM? NOW _ss_minus ss_amount (TO NOW ss_delay?)? ss_step?
ss_delay: _ss_minus ss_amount
ss_step: STEP ss_amount | SLIDE ss_amount?
ss_triples: TRIPLES INTEGER
_ss_minus: DASH | ENDASH
ss_amount: (INTEGER | DECIMAL) UNIT_WORD

%override select_clause: SELECT R2S? select_modifier? projection
                       | SELECT R2S_OPEN select_modifier? projection ")"   -> select_clause_paren

STREAM: "STREAM"i
NOW: "NOW"i
TO: "TO"i
STEP: "STEP"i
SLIDE: "SLIDE"i
TRIPLES: "TRIPLES"i
ENDASH: "–"
R2S.2: /(?i:ISTREAM|DSTREAM|RSTREAM)(?![\w(])/
R2S_OPEN.2: /(?i:ISTREAM|DSTREAM|RSTREAM)\(/
UNIT_WORD: /[A-Za-z]+/
"""


@v_args(meta=True)
class SparqlStreamBuilder(DialectBuilder):
    dialect = "sparqlstream"
    default_r2s = "rstream"

    def select_clause(self, meta, c):
        r2s = next((str(x).lower().rstrip("(") for x in c
                    if isinstance(x, Token) and x.type in ("R2S", "R2S_OPEN")), None)
        modifier = next((x for x in c if isinstance(x, str) and not isinstance(x, Token)
                         and x in ("DISTINCT", "REDUCED")), None)
        projection = next(x for x in reversed(c) if not isinstance(x, Token) and x is not modifier)
        return SelectClause(projection, modifier == "DISTINCT", modifier == "REDUCED", pos_of(c[0]),
                            r2s)

    select_clause_paren = select_clause

    def stream_clause(self, meta, c):
        named = any(getattr(x, "type", None) == "NAMED" for x in c)
        iri = next(x for x in c if isinstance(x, URIRef))
        return D.StreamDecl(iri, c[-1], iri if named else None, pos_of(meta))

    def ss_amount(self, meta, c):
        unit = str(c[1]).lower()
        return _Amount(seconds(str(c[0]), unit, UNITS, c[1]), c[0], UNITS.get(unit))

    def ss_delay(self, meta, c):
        return _Delay(c[-1])

    def ss_step(self, meta, c):
        return _Step(c[1] if len(c) > 1 else None, c[0])

    def ss_triples(self, meta, c):
        return check_window(D.Window("count", count=int(str(c[1])), pos=pos_of(meta)), c[1])

    def ss_window(self, meta, c):
        width, width_at, unit = next(x for x in c if isinstance(x, _Amount))
        delay, delay_at = Fraction(0), None
        step, step_at = None, None
        for x in c:
            if isinstance(x, _Delay):
                delay, delay_at = x.amount.seconds, x.amount.at
            elif isinstance(x, _Step):
                if x.amount is None:          # morph-streams' bare SLIDE: one unit of the width
                    step, step_at = unit, x.at
                else:
                    step, step_at = x.amount.seconds, x.amount.at
        pos = pos_of(meta)
        if delay == 0:                       # TO NOW, or TO NOW - 0 MINUTES (the papers write both)
            w = D.Window("range", width, step, pos=pos)
        else:
            if delay < 0:
                raise error_at("a window's end must be NOW or before it (NOW - d, d >= 0)", delay_at)
            w = D.Window("past", width, step, delay=delay, pos=pos)
        return check_window(w, width_at, step_at)

    def policy(self, parts, streams):
        return D.Policy("close")


SPARQLSTREAM = Dialect("sparqlstream", GRAMMAR, SparqlStreamBuilder, "SPARQLstream")
