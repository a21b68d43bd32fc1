"""Streaming SPARQL: ``FROM [NAMED] STREAM <s> WINDOW …`` and windows at the
end of group graph patterns.

Windows (the seed's grammar): ``WINDOW RANGE v SLIDE [v]`` (sliding δ;
SLIDE without a value is one unit of the RANGE), ``WINDOW RANGE v FIXED``
(tumbling), ``WINDOW ELEMS n`` (the last n elements).  A value is an
integer and a unit ``MS S MINUTE HOUR DAY WEEK`` (case-insensitive,
plurals accepted), milliseconds when no unit is given.  A window written
at the end of a group applies to that group's patterns instead of the
``FROM STREAM`` ones (the innermost wins).  Evaluated at the windows'
instants, RSTREAM (docs/DIALECTS.md, Streaming SPARQL).
"""
from __future__ import annotations

from fractions import Fraction

from lark import v_args
from rdflib import URIRef

from .. import ast as A
from . import ast as D
from .builder import DialectBuilder, check_window, pos_of, seconds
from .frontend import Dialect

_BASE_UNITS = {"ms": Fraction(1, 1000), "s": Fraction(1), "minute": Fraction(60),
               "hour": Fraction(3600), "day": Fraction(86400), "week": Fraction(604800)}
#: Unit words, lower case (plurals of the long names too).
UNITS = {**_BASE_UNITS, "minutes": Fraction(60), "hours": Fraction(3600),
         "days": Fraction(86400), "weeks": Fraction(604800)}

GRAMMAR = r"""
%extend dataset_clause: FROM NAMED? STREAM iri sts_window   -> stream_clause
sts_window: WINDOW RANGE sts_value SLIDE sts_value?          -> w_sliding
          | WINDOW RANGE sts_value FIXED                     -> w_fixed
          | WINDOW ELEMS INTEGER                             -> w_elems
sts_value: INTEGER UNIT_WORD?
%override group_graph_pattern: "{" (subselect | group_body sts_window?) "}"

STREAM: "STREAM"i
WINDOW: "WINDOW"i
RANGE: "RANGE"i
SLIDE: "SLIDE"i
FIXED: "FIXED"i
ELEMS: "ELEMS"i
UNIT_WORD.-1: /[A-Za-z]+/
"""


@v_args(meta=True)
class StreamingSparqlBuilder(DialectBuilder):
    dialect = "streaming-sparql"
    default_r2s = "rstream"

    def stream_clause(self, meta, c):
        named = any(getattr(x, "type", None) == "NAMED" for x in c)
        iri = next(x for x in c if isinstance(x, URIRef))
        return D.StreamDecl(iri, c[-1], iri if named else None, pos_of(meta))

    def sts_value(self, meta, c):
        """(seconds, its unit word or None, the token to point errors at)."""
        unit = str(c[1]).lower() if len(c) > 1 else "ms"
        return (seconds(str(c[0]), unit, UNITS, c[1] if len(c) > 1 else c[0]),
                unit, c[0])

    def w_sliding(self, meta, c):
        values = [x for x in c if isinstance(x, tuple)]
        width, unit, at = values[0]
        if len(values) > 1:
            step, _, step_at = values[1]
        else:
            step, step_at = UNITS[unit], at            # one unit of the RANGE
        return check_window(D.Window("range", width, step, pos=pos_of(c[0])), at, step_at)

    def w_fixed(self, meta, c):
        width, _, at = next(x for x in c if isinstance(x, tuple))
        return check_window(D.Window("range", width, width, pos=pos_of(c[0])), at)

    def w_elems(self, meta, c):
        return check_window(D.Window("count", count=int(str(c[-1])), pos=pos_of(c[0])), c[-1])

    def group_graph_pattern(self, meta, c):
        window = c[-1] if c and isinstance(c[-1], D.Window) else None
        group = super().group_graph_pattern(meta, c[:-1] if window is not None else c)
        if window is None:
            return group
        return A.Group((D.WindowedGroup(window, group, window.pos),), pos_of(meta))

    def policy(self, parts, streams):
        return D.Policy("close")


STREAMING_SPARQL = Dialect("streaming-sparql", GRAMMAR, StreamingSparqlBuilder, "Streaming SPARQL")
