"""Front ends of the window-based stream dialects: text -> DialectQuery.

>>> q = parse_dialect("SELECT ?s WHERE { STREAM <http://ex.org/s> [NOW] { ?s ?p ?o } }")
>>> q.dialect, q.r2s
('cqels', 'istream')

One module per dialect (``cqels``, ``csparql``, ...), each a grammar
fragment over ``sparql11.lark`` and a builder; :func:`detect_dialect`
tells them apart by the constructs only one of them has.  Semantics:
docs/DIALECTS.md.
"""
from __future__ import annotations

import re

from ..errors import QueryError
from ..sparql_builder import check_base
from .ast import DIALECTS, DialectQuery
from .cqels import CQELS
from .csparql import CSPARQL
from .frontend import Dialect
from .luposdate import LUPOSDATE
from .rspql import RSPQL
from .sparqlstream import SPARQLSTREAM
from .streaming_sparql import STREAMING_SPARQL

__all__ = ["parse_dialect", "detect_dialect", "DIALECTS", "DialectQuery", "FRONT_ENDS"]

#: The dialects implemented, by name.
FRONT_ENDS: dict[str, Dialect] = {d.name: d for d in (CQELS, CSPARQL, SPARQLSTREAM, STREAMING_SPARQL,
                                                  LUPOSDATE, RSPQL)}

_NOISE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
                    r'|#[^\n]*|<[^<>"{}|^`\\\s]*>')

#: (dialect, pattern over the text without strings, comments and IRIs),
#: first match wins: the marks only one dialect has come first.
_MARKS = [
    ("csparql", r"\bREGISTER\s+(QUERY|STREAM)\b"),
    ("rspql", r"\bREGISTER\s+(RSTREAM|ISTREAM|DSTREAM)\b|\bFROM\s+NAMED\s+WINDOW\b"),
    ("luposdate", r"\bWINDOW\s+TYPE\b|\bINTERMEDIATERESULT\b"),
    ("sparqlstream", r"\[\s*(FROM\s+)?NOW\s*[-–]|\bSELECT\s+(DISTINCT\s+)?(ISTREAM|DSTREAM|RSTREAM)\b"),
    ("streaming-sparql", r"\bWINDOW\s+(RANGE|ELEMS)\b"),
    ("csparql", r"\bFROM\s+(NAMED\s+)?STREAM\s*<>\s*\["),
    ("cqels", r"\bSTREAM\s*(<>|[?$]\w|\w*:\w*)\s*\["),
]


def detect_dialect(text: str) -> str | None:
    """The dialect of a query text, from the constructs only it has, or
    None (then it is no stream dialect: plain SPARQL or EP-SPARQL)."""
    bare = _NOISE.sub(lambda m: "<>" if m.group(0).startswith("<") else " ", text)
    for name, pattern in _MARKS:
        if re.search(pattern, bare, re.IGNORECASE):
            return name
    return None


def parse_dialect(text: str, dialect: str | None = None, base: str | None = None) -> DialectQuery:
    """Parse a stream-dialect query (``dialect`` forces one, see
    :data:`DIALECTS`).  Raises QuerySyntaxError/QueryError with line and
    column."""
    check_base(base)
    name = dialect or detect_dialect(text)
    if name is None:
        raise QueryError("this is not a query of a stream dialect (no window, no STREAM "
                         "clause): register it as EP-SPARQL, or name its dialect "
                         f"(one of {', '.join(DIALECTS)})")
    if name not in DIALECTS:
        raise ValueError(f"unknown dialect {name!r}: one of {', '.join(DIALECTS)}")
    front = FRONT_ENDS.get(name)
    if front is None:
        raise QueryError(f"the {name} front end is not implemented yet")
    return front.parse(text, base)
