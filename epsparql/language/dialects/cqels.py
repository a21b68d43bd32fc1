"""CQELS-QL: ``STREAM <s>|?g [window] { … }`` patterns inside WHERE.

Windows: ``[RANGE d]``, ``[RANGE d SLIDE d]``, ``[RANGE d TUMBLING]``,
``[NOW]``, ``[ALL]``, ``[TRIPLES n]``; durations an integer (or decimal)
with a unit ``d h m s ms ns``, several in a row (``1m30s``).  Evaluated
eagerly at each arrival instant, ISTREAM (docs/DIALECTS.md, CQELS-QL).
"""
from __future__ import annotations

import re
from fractions import Fraction

from lark import Token, v_args

from . import ast as D
from .builder import DialectBuilder, check_window, error_at, pos_of, seconds
from .frontend import Dialect

UNITS = {"d": Fraction(86400), "h": Fraction(3600), "m": Fraction(60), "s": Fraction(1),
         "ms": Fraction(1, 1000), "ns": Fraction(1, 10**9)}

GRAMMAR = r"""
%extend _not_triples: stream_pattern
stream_pattern: STREAM var_or_iri "[" cqels_window "]" group_graph_pattern
cqels_window: RANGE DURATION (SLIDE DURATION | TUMBLING)?   -> cqels_range
            | TRIPLES INTEGER                               -> cqels_triples
            | NOW                                           -> cqels_now
            | ALL                                           -> cqels_all

STREAM: "STREAM"i
RANGE: "RANGE"i
SLIDE: "SLIDE"i
TUMBLING: "TUMBLING"i
TRIPLES: "TRIPLES"i
NOW: "NOW"i
ALL: "ALL"i
DURATION.5: /[0-9]+(?:\.[0-9]+)?[a-zA-Z]+(?:[0-9]+(?:\.[0-9]+)?[a-zA-Z]+)*/
"""

_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)([a-zA-Z]+)")


def duration(tok: Token, units: dict[str, Fraction] = UNITS) -> Fraction:
    """``10s``, ``1m30s``, ``250ms`` as exact seconds."""
    total = Fraction(0)
    for value, unit in _PART.findall(str(tok)):
        if unit not in units:
            raise error_at(f"unknown time unit {unit!r} in {str(tok)!r} "
                           f"(known: {', '.join(units)})", tok)
        total += seconds(value, unit, units, tok)
    return total


@v_args(meta=True)
class CqelsBuilder(DialectBuilder):
    dialect = "cqels"
    default_r2s = "istream"

    def stream_pattern(self, meta, c):
        return D.StreamPattern(c[1], c[2], c[3], pos_of(c[0]))

    def cqels_range(self, meta, c):
        width = duration(c[1])
        step = None
        if len(c) > 2:
            step = width if c[2].type == "TUMBLING" else duration(c[3])
        return check_window(D.Window("range", width, step, pos=pos_of(c[0])), c[1],
                            c[3] if len(c) > 3 else None)

    def cqels_triples(self, meta, c):
        return check_window(D.Window("count", count=int(str(c[1])), pos=pos_of(c[0])), c[1])

    def cqels_now(self, meta, c):
        return D.Window("now", pos=pos_of(c[0]))

    def cqels_all(self, meta, c):
        return D.Window("all", pos=pos_of(c[0]))

    def policy(self, parts, streams):
        return D.Policy("eager")


CQELS = Dialect("cqels", GRAMMAR, CqelsBuilder, "CQELS-QL")
