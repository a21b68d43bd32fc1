"""RSP-QL (the W3C RSP community group's syntax): ``REGISTER
RSTREAM|ISTREAM|DSTREAM <out> AS SELECT|CONSTRUCT … FROM NAMED WINDOW <w>
ON <s> [RANGE d STEP d] WHERE { WINDOW <w> { … } }``.

Widths and steps are ``xsd:duration`` lexical forms (``PT10S``,
``PT0.5S``, ``P1DT2H``; a month counts 30 days and a year 365, as for
EP-SPARQL's durations).  ``REGISTER`` may come before or after the
prefixes.  Evaluated at each window close, empty windows included, with
the registered relation-to-stream operator (docs/DIALECTS.md, RSP-QL).
"""
from __future__ import annotations

import re
from fractions import Fraction

from lark import Token, v_args
from rdflib import URIRef

from . import ast as D
from .builder import DialectBuilder, check_window, error_at, pos_of
from .frontend import Dialect

GRAMMAR = r"""
%override start: prologue (rspql_register prologue)? query
rspql_register: REGISTER R2S_WORD iri AS
%extend dataset_clause: FROM NAMED WINDOW iri ON iri "[" rsp_window "]"   -> window_clause
rsp_window: RANGE XSD_DURATION STEP XSD_DURATION
%extend _not_triples: window_pattern
window_pattern: WINDOW var_or_iri group_graph_pattern

REGISTER: "REGISTER"i
R2S_WORD: /(?i:RSTREAM|ISTREAM|DSTREAM)(?!\w)/
WINDOW: "WINDOW"i
ON: "ON"i
RANGE: "RANGE"i
STEP: "STEP"i
XSD_DURATION: /-?P[0-9A-Za-z.]*/
"""

_DURATION = re.compile(r"(-)?P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?"
                       r"(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?"
                       r"(?:(\d+(?:\.\d+)?)S)?)?", re.IGNORECASE)
_FACTORS = (365 * 86400, 30 * 86400, 7 * 86400, 86400, 3600, 60, 1)


def duration_seconds(tok: Token) -> Fraction:
    """An xsd:duration as exact seconds; QueryError at the token when it is
    not one."""
    text = str(tok)
    m = _DURATION.fullmatch(text)
    if m is None or text.upper().rstrip("T") in ("P", "-P") or text.upper().endswith("T"):
        raise error_at(f"{text!r} is not an xsd:duration (e.g. PT10S, PT0.5S, P1DT2H)", tok)
    total = sum((Fraction(g) * f for g, f in zip(m.groups()[1:], _FACTORS) if g), Fraction(0))
    return -total if m.group(1) else total


@v_args(meta=True)
class RspqlBuilder(DialectBuilder):
    dialect = "rspql"
    default_r2s = "rstream"

    def rspql_register(self, meta, c):
        self.name_at(c[2], c[1])                  # the query's name: not data
        return ("register", {"r2s": str(c[1]).lower(), "output": c[2], "name": str(c[2])})

    def window_clause(self, meta, c):
        iris = [x for x in c if not isinstance(x, Token) and not isinstance(x, D.Window)]
        name, stream = iris[0], iris[1]
        self.name_at(name, next(x for x in c if isinstance(x, Token) and x.type == "WINDOW"))
        return D.StreamDecl(stream, c[-1], name, pos_of(meta))

    def rsp_window(self, meta, c):
        width, step = duration_seconds(c[1]), duration_seconds(c[3])
        return check_window(D.Window("range", width, step, pos=pos_of(c[0])), c[1], c[3])

    def window_pattern(self, meta, c):
        if isinstance(c[1], URIRef):
            self.name_at(c[1], c[0])              # WINDOW <w> { … }: a window's name
        return D.WindowPattern(c[1], c[2], pos_of(c[0]))

    def policy(self, parts, streams):
        return D.Policy("close")


RSPQL = Dialect("rspql", GRAMMAR, RspqlBuilder, "RSP-QL")
