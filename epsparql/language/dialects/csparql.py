"""C-SPARQL: ``REGISTER QUERY|STREAM name AS`` and ``FROM [NAMED] STREAM
<s> [window]`` dataset clauses.

Windows: ``[RANGE d STEP d]``, ``[RANGE d TUMBLING]``, ``[TRIPLES n]``
(also ``[RANGE TRIPLES n]``), ``[NOW]``, ``[ALL]``; units ``ms s m h d``.
``REGISTER QUERY name COMPUTED EVERY d AS`` (the first C-SPARQL papers'
syntax) evaluates the query every d instead of at its windows' closes.
Evaluated at each window close, non-empty windows only, RSTREAM
(docs/DIALECTS.md, C-SPARQL).  ``REGISTER STREAM name AS CONSTRUCT``
writes its triples on the stream ``urn:epsparql:stream:name`` (or the
IRI written instead of the name), which other queries can read.
"""
from __future__ import annotations

from fractions import Fraction

from lark import v_args
from rdflib import URIRef

from . import ast as D
from .builder import DialectBuilder, check_window, error_at, pos_of
from .cqels import duration
from .frontend import Dialect

UNITS = {"d": Fraction(86400), "h": Fraction(3600), "m": Fraction(60), "s": Fraction(1),
         "ms": Fraction(1, 1000)}

#: The namespace of C-SPARQL's extension functions (f:timestamp).
CSPARQL_FUNCTIONS = "http://larkc.eu/csparql/sparql/jena/ext#"
#: The IRI of the stream a ``REGISTER STREAM name AS CONSTRUCT`` query
#: writes, for a name that is not an IRI: this prefix and the name.
OUTPUT_STREAMS = "urn:epsparql:stream:"

GRAMMAR = r"""
%override start: csparql_register? prologue query
csparql_register: REGISTER (QUERY | STREAM) (NAME | IRIREF) (COMPUTED EVERY DURATION)? AS
%extend dataset_clause: FROM NAMED? STREAM iri "[" csparql_window "]"   -> stream_clause
csparql_window: RANGE DURATION STEP DURATION                 -> w_sliding
              | RANGE DURATION TUMBLING                      -> w_tumbling
              | RANGE? TRIPLES INTEGER                       -> w_triples
              | NOW                                          -> w_now
              | ALL                                          -> w_all

REGISTER: "REGISTER"i
COMPUTED: "COMPUTED"i
EVERY: "EVERY"i
QUERY: "QUERY"i
STREAM: "STREAM"i
RANGE: "RANGE"i
STEP: "STEP"i
TUMBLING: "TUMBLING"i
TRIPLES: "TRIPLES"i
NOW: "NOW"i
ALL: "ALL"i
DURATION.5: /[0-9]+(?:\.[0-9]+)?[a-zA-Z]+(?:[0-9]+(?:\.[0-9]+)?[a-zA-Z]+)*/
"""


@v_args(meta=True)
class CsparqlBuilder(DialectBuilder):
    dialect = "csparql"
    default_r2s = "rstream"

    def csparql_register(self, meta, c):
        kind, tok = c[1].type, c[2]
        if tok.type == "IRIREF":
            iri = str(tok)[1:-1]
            name = iri
        else:
            name = str(tok)
            iri = OUTPUT_STREAMS + name
        parts = {"name": name, "register": kind}
        if len(c) > 4 and getattr(c[3], "type", None) == "COMPUTED":
            # the first papers' syntax: evaluated every that long
            parts["computed_every"] = (duration(c[5], UNITS), c[5])
        if kind == "STREAM":
            parts["output"] = URIRef(iri)
        return ("register", parts)

    def stream_clause(self, meta, c):
        named = any(getattr(x, "type", None) == "NAMED" for x in c)
        iri = next(x for x in c if isinstance(x, URIRef))
        window = c[-1]
        return D.StreamDecl(iri, window, iri if named else None, pos_of(meta))

    def w_sliding(self, meta, c):
        return check_window(D.Window("range", duration(c[1], UNITS), duration(c[3], UNITS),
                                     pos=pos_of(c[0])), c[1], c[3])

    def w_tumbling(self, meta, c):
        w = duration(c[1], UNITS)
        return check_window(D.Window("range", w, w, pos=pos_of(c[0])), c[1])

    def w_triples(self, meta, c):
        return check_window(D.Window("count", count=int(str(c[-1])), pos=pos_of(c[0])), c[-1])

    def w_now(self, meta, c):
        return D.Window("now", pos=pos_of(c[0]))

    def w_all(self, meta, c):
        return D.Window("all", pos=pos_of(c[0]))

    def function_alias(self, iri):
        if str(iri) == CSPARQL_FUNCTIONS + "timestamp":
            return "TIMESTAMP"
        return None

    def policy(self, parts, streams):
        if parts.get("output") is not None and parts["form"] != "CONSTRUCT":
            raise error_at("REGISTER STREAM is for CONSTRUCT queries (their triples make the "
                           "stream); use REGISTER QUERY", parts["pos"])
        every = parts.get("computed_every")
        if every is not None:
            period, at = every
            if period <= 0:
                    raise error_at("COMPUTED EVERY needs a positive duration", at)
            return D.Policy("period", period=period, non_empty=True)
        return D.Policy("close", non_empty=True)


CSPARQL = Dialect("csparql", GRAMMAR, CsparqlBuilder, "C-SPARQL")
