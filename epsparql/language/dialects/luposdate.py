"""LUPOSDATE's stream queries: ``WINDOW TYPE SLIDINGDURATION d { … }``,
``WINDOW TYPE SLIDINGTRIPLES n { … }`` and ``STREAM INTERMEDIATERESULT
DURATION d | TRIPLES n``.

Durations are milliseconds, as in the seed (``DURATION 1000`` is every
second).  The aggregates ``lupos:average``, ``lupos:min``, ``lupos:max``,
``lupos:sum`` and ``lupos:count`` (``lupos:`` is
``http://www.luposdate.org/``) are AVG, MIN, MAX, SUM and COUNT, and
``expr AS ?v`` may stand unparenthesised in SELECT.  LUPOSDATE names no
streams: its windows read every stream, and a pattern outside every
window reads the whole stream so far.  Evaluated every d of time, after
every n-th triple, or once at the end of input; RSTREAM
(docs/DIALECTS.md, LUPOSDATE).
"""
from __future__ import annotations

from fractions import Fraction

from lark import v_args

from . import ast as D
from .builder import DialectBuilder, check_window, error_at, pos_of
from .frontend import Dialect

#: LUPOSDATE's namespace (its aggregate functions).
LUPOS = "http://www.luposdate.org/"
_AGGREGATES = {"average": "AVG", "avg": "AVG", "min": "MIN", "max": "MAX", "sum": "SUM",
               "count": "COUNT"}
MS = Fraction(1, 1000)

GRAMMAR = r"""
%override select_query: select_clause lupos_stream? dataset_clause* where_clause solution_modifier values_clause?
%override construct_query: CONSTRUCT construct_template lupos_stream? dataset_clause* where_clause solution_modifier values_clause?
lupos_stream: STREAM INTERMEDIATERESULT DURATION INTEGER   -> every_duration
            | STREAM INTERMEDIATERESULT TRIPLES INTEGER    -> every_triples
%extend _not_triples: lupos_window
lupos_window: WINDOW TYPE SLIDINGDURATION INTEGER group_graph_pattern   -> sliding_duration
            | WINDOW TYPE SLIDINGTRIPLES INTEGER group_graph_pattern    -> sliding_triples

STREAM: "STREAM"i
INTERMEDIATERESULT: "INTERMEDIATERESULT"i
DURATION: "DURATION"i
TRIPLES: "TRIPLES"i
WINDOW: "WINDOW"i
TYPE: "TYPE"i
SLIDINGDURATION: "SLIDINGDURATION"i
SLIDINGTRIPLES: "SLIDINGTRIPLES"i
"""


@v_args(meta=True)
class LuposdateBuilder(DialectBuilder):
    dialect = "luposdate"
    default_r2s = "rstream"

    def every_duration(self, meta, c):
        ms = int(str(c[-1]))
        if ms <= 0:
            raise error_at(f"a result period must be positive, got {ms} ms", c[-1])
        return ("lupos_policy", D.Policy("period", period=ms * MS))

    def every_triples(self, meta, c):
        n = int(str(c[-1]))
        if n <= 0:
            raise error_at(f"a result every n triples needs n > 0, got {n}", c[-1])
        return ("lupos_policy", D.Policy("triples", count=n))

    def sliding_duration(self, meta, c):
        w = check_window(D.Window("range", int(str(c[3])) * MS, None, pos=pos_of(c[0])), c[3])
        return D.WindowedGroup(w, c[4], pos_of(c[0]))

    def sliding_triples(self, meta, c):
        w = check_window(D.Window("count", count=int(str(c[3])), pos=pos_of(c[0])), c[3])
        return D.WindowedGroup(w, c[4], pos_of(c[0]))

    def construct_query(self, meta, c):
        return self._query("CONSTRUCT", None, c[2:], template=c[1], pos=pos_of(c[0]))

    def function_alias(self, iri):
        s = str(iri)
        if s.startswith(LUPOS):
            return _AGGREGATES.get(s[len(LUPOS):].lower())
        return None

    def clause(self, item, parts):
        if isinstance(item, tuple) and item[0] == "lupos_policy":
            parts["lupos_policy"] = item[1]
            return
        super().clause(item, parts)

    def policy(self, parts, streams):
        return parts.get("lupos_policy") or D.Policy("final")


LUPOSDATE = Dialect("luposdate", GRAMMAR, LuposdateBuilder, "LUPOSDATE")
