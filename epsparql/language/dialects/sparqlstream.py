"""SPARQLstream: ``FROM [NAMED] STREAM <s> [FROM NOW - a TO NOW [- d] [STEP b]]``
and ``SELECT ISTREAM|DSTREAM|RSTREAM``.

Windows (the seed's ``FROM Start TO End [STEP]``): the inner ``FROM`` may
be left out; ``TO NOW - d`` puts the window wholly in the past.  Amounts
are a number and a unit, ``DAY HOUR MINUTE SECOND MILLISECOND``, case-
insensitive, singular or plural.  The relation-to-stream operator follows
SELECT (``SELECT ISTREAM ?x`` or ``SELECT ISTREAM(?x …)``, no space before the parenthesis: with one, ``(`` opens a
projection expression).  Evaluated at
the windows' steps (arrival instants for a window without STEP), RSTREAM
unless said (docs/DIALECTS.md, SPARQLstream).
"""
from __future__ import annotations

from fractions import Fraction

from lark import Token, v_args
from rdflib import URIRef

from . import ast as D
from .builder import SelectClause, SparqlBuilder, check_window, error_at, pos_of, seconds
from .frontend import Dialect

_BASE_UNITS = {"day": Fraction(86400), "hour": Fraction(3600), "minute": Fraction(60),
               "second": Fraction(1), "millisecond": Fraction(1, 1000)}
#: Unit words, lower case: singular and plural.
UNITS = {**_BASE_UNITS, **{k + "s": v for k, v in _BASE_UNITS.items()}}

GRAMMAR = r"""
%extend dataset_clause: FROM NAMED? STREAM iri "[" ss_window "]"   -> stream_clause
ss_window: FROM? NOW _ss_minus ss_amount TO NOW (_ss_minus ss_amount)? (STEP ss_amount)?
_ss_minus: DASH | ENDASH
ss_amount: (INTEGER | DECIMAL) UNIT_WORD

%override select_clause: SELECT R2S? select_modifier? projection
                       | SELECT R2S_OPEN select_modifier? projection ")"   -> select_clause_paren

STREAM: "STREAM"i
NOW: "NOW"i
TO: "TO"i
STEP: "STEP"i
ENDASH: "–"
R2S.2: /(?i:ISTREAM|DSTREAM|RSTREAM)(?![\w(])/
R2S_OPEN.2: /(?i:ISTREAM|DSTREAM|RSTREAM)\(/
UNIT_WORD: /[A-Za-z]+/
"""


@v_args(meta=True)
class SparqlStreamBuilder(SparqlBuilder):
    dialect = "sparqlstream"
    default_r2s = "rstream"

    def select_clause(self, meta, c):
        r2s = next((str(x).lower().rstrip("(") for x in c
                    if isinstance(x, Token) and x.type in ("R2S", "R2S_OPEN")), None)
        modifier = next((x for x in c if isinstance(x, str) and not isinstance(x, Token)
                         and x in ("DISTINCT", "REDUCED")), None)
        projection = next(x for x in reversed(c) if not isinstance(x, Token) and x is not modifier)
        return SelectClause(projection, modifier == "DISTINCT", pos_of(c[0]), r2s)

    select_clause_paren = select_clause

    def stream_clause(self, meta, c):
        named = any(getattr(x, "type", None) == "NAMED" for x in c)
        iri = next(x for x in c if isinstance(x, URIRef))
        return D.StreamDecl(iri, c[-1], iri if named else None, pos_of(meta))

    def ss_amount(self, meta, c):
        unit = str(c[1])
        return (seconds(str(c[0]), unit.lower(), UNITS, c[1]), c[0])

    def ss_window(self, meta, c):
        amounts = [x for x in c if isinstance(x, tuple)]
        has_step = any(isinstance(x, Token) and x.type == "STEP" for x in c)
        width, width_at = amounts[0]
        delay, delay_at = (amounts[1] if len(amounts) > (2 if has_step else 1) else (Fraction(0), None))
        step, step_at = amounts[-1] if has_step else (None, None)
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
