"""Which typed literals the engine can compute with: the XML Schema
datatypes it interprets, and whether a literal's lexical form is one of
its datatype's.

One definition for every road a constant comes by: the static checks of
EP-SPARQL queries (:mod:`epsparql.algebra.constants`) and the stream
dialects' front end (:mod:`epsparql.language.dialects.frontend`).  The
check is the engine's own encoder (:mod:`epsparql.rdf.codec`), so it
accepts exactly what the engine can compute with.
"""
from __future__ import annotations

import re
from typing import Any

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from .codec import encode

__all__ = ["literal_problem", "xsd_name", "INTERPRETED_DATATYPES", "XSD_DATATYPES", "XSD_NS",
           "INTEGER_TYPES", "FLOAT_TYPES", "TIME_TYPES", "DURATION_TYPES"]

XSD_NS = str(XSD)

INTEGER_TYPES = ("integer", "nonPositiveInteger", "negativeInteger", "nonNegativeInteger",
             "positiveInteger", "long", "int", "short", "byte", "unsignedLong",
             "unsignedInt", "unsignedShort", "unsignedByte")
FLOAT_TYPES = ("double", "float")
TIME_TYPES = {"dateTime": "datetime", "dateTimeStamp": "datetime", "date": "date"}
DURATION_TYPES = ("duration", "dayTimeDuration", "yearMonthDuration")

#: The datatypes the engine computes with; a literal of one of them must
#: have a valid lexical form.
INTERPRETED_DATATYPES = frozenset(
    URIRef(XSD_NS + n) for n in (*INTEGER_TYPES, "decimal", *FLOAT_TYPES, "boolean", *TIME_TYPES,
                             *DURATION_TYPES))

#: Every datatype name XML Schema 1.1 defines (part 2), for typos.
XSD_DATATYPES = frozenset(URIRef(XSD_NS + n) for n in (
    *INTEGER_TYPES, "decimal", *FLOAT_TYPES, "boolean", *TIME_TYPES, *DURATION_TYPES, "string",
    "normalizedString", "token", "language", "Name", "NCName", "NMTOKEN", "NMTOKENS",
    "ID", "IDREF", "IDREFS", "ENTITY", "ENTITIES", "QName", "NOTATION", "anyURI",
    "base64Binary", "hexBinary", "time", "gYearMonth", "gYear", "gMonthDay", "gDay",
    "gMonth", "anyType", "anySimpleType", "anyAtomicType", "precisionDecimal"))

#: Lexical forms of float/double that the engine reads as IEEE specials
#: (rdflib writes INF and NaN in lower case) or as numerals too large for
#: a float: valid, though not encoded as finite numbers.
_SPECIAL_FLOAT = re.compile(r"[+-]?(?:INF|inf)|NaN|nan|"
                            r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

_EXAMPLES = {
    **{XSD_NS + n: "42" for n in INTEGER_TYPES}, XSD_NS + "decimal": "4.2", XSD_NS + "double": "4.2E1",
    XSD_NS + "float": "4.2E1", XSD_NS + "boolean": "true", XSD_NS + "dateTime": "2024-01-31T12:00:00Z",
    XSD_NS + "dateTimeStamp": "2024-01-31T12:00:00Z", XSD_NS + "date": "2024-01-31",
    XSD_NS + "duration": "PT5S", XSD_NS + "dayTimeDuration": "P1DT2H",
    XSD_NS + "yearMonthDuration": "P1Y2M",
}


def xsd_name(iri: Any) -> str:
    """``xsd:name`` for an IRI of the XSD namespace, else ``<iri>``."""
    text = str(iri)
    return "xsd:" + text[len(XSD_NS):] if text.startswith(XSD_NS) else f"<{text}>"


def literal_problem(lit: Literal) -> str | None:
    """Why ``lit`` is a literal the engine cannot read, or None."""
    dt = lit.datatype
    if dt is None:
        return None
    if str(dt).startswith(XSD_NS) and dt not in XSD_DATATYPES:
        return f"{xsd_name(dt)} is not an XML Schema datatype"
    if dt not in INTERPRETED_DATATYPES:
        return None
    encoded = encode(lit)
    if getattr(encoded, "name", None) != "t":
        return None
    if str(dt)[len(XSD_NS):] in FLOAT_TYPES and _SPECIAL_FLOAT.fullmatch(str(lit)):
        return None
    return (f'"{lit}"^^{xsd_name(dt)} is not a valid {xsd_name(dt)} '
            f'(e.g. "{_EXAMPLES[str(dt)]}"^^{xsd_name(dt)})')
