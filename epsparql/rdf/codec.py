"""RDF terms (rdflib) <-> the Prolog terms the core and sparql_eval.pl work on.

The encoding (the Python values are those of :mod:`epsparql.core.terms`):

=================================  =========================================
RDF term                           Prolog term
=================================  =========================================
IRI                                atom, the full IRI (``str``)
blank node                         ``b(Id)``, Id an atom
simple literal / ``xsd:string``    ``s(Lex)``, Lex a string (``PlString``)
language-tagged literal            ``l(Lex, Lang)``, Lang a lower-case atom
numeric literal                    ``n(Value, Datatype, Lex)``, or the
                                   bare number (see below)
``xsd:dateTime``/``date``/         ``d(Seconds, Datatype, Lex)``
``dateTimeStamp``
``xsd:duration`` and subtypes      ``dur(Seconds, Datatype, Lex)``
``xsd:boolean``                    ``bool(true|false, Lex)``
anything else                      ``t(Lex, Datatype)``
=================================  =========================================

The lexical form and the datatype are always kept, so two encoded terms
are the same RDF term iff they are equal (Prolog: unify), and joins by
unification are RDF-term equality.  The number in ``n/3``, ``d/3`` and
``dur/3`` is derived from the lexical form alone (the same rules as
``sparql_typed_literal/3`` in ``prolog/sparql_eval.pl``, which the tests
check), so a term built in Prolog and the same literal encoded here are
identical:

The two commonest numeric literals are bare numbers, so that a stream of
numbers costs the core what plain numbers cost (no compound to build,
copy, compare and hash per value): an ``xsd:integer`` in its canonical
form (``"42"``, no sign ``+``, no leading zero) is the ``int``, an
``xsd:double`` written as Python's ``repr`` of its value without exponent
(``"101.5"``, 1e-4 <= |value| < 1e15; see :func:`canonical_double`) is the
``float``.  Any other form of them (``"042"``, ``"1.5E2"``) is ``n/3``:
a different RDF term, a different Prolog term.

- ``n``: an ``int`` for ``xsd:integer`` and its derived types (range
  checked), a ``float`` for ``xsd:decimal``, ``xsd:double``, ``xsd:float``
  (``xsd:float`` is not rounded to single precision).
- ``d``: a ``float``, seconds since 1970-01-01T00:00:00Z; a value without
  timezone is taken as UTC; ``xsd:date`` is its midnight.
- ``dur``: seconds, counting a month as 30 days and a year as 365 days
  (an approximation: only used for comparisons and arithmetic); an ``int``
  when it is a whole number of seconds, else a ``float``.

An ill-typed lexical form (``"abc"^^xsd:integer``, ``"2024-13-01"^^xsd:date``)
and a valid one whose value is not a finite float (``"INF"``, ``"NaN"``,
``"1e400"`` as ``xsd:double``) are encoded generically as ``t(Lex,
Datatype)``: the bridge carries only finite numbers.  sparql_eval.pl still
treats those doubles as the IEEE specials.

Known losses: ``xsd:string`` literals decode as simple literals (the same
term in RDF 1.1, different objects in rdflib), and language tags come back
in lower case (they are case-insensitive).
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable

from rdflib.term import BNode, Literal, Node, URIRef

from ..core.terms import Compound, PlString
from ..memo import LONG_KEY, BoundedCache
from ..times import civil_from_days, date_days, tz_offset

__all__ = ["encode", "decode", "encode_seconds_as_datetime",
           "encode_seconds_as_duration", "canonical_double", "canonical_number",
           "BARE_DOUBLE_MIN", "BARE_DOUBLE_MAX", "XSD", "RDF_LANGSTRING"]

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
XSD_STRING = XSD + "string"
XSD_BOOLEAN = XSD + "boolean"
XSD_DATETIME = XSD + "dateTime"
XSD_DURATION = XSD + "duration"
ERROR = "$error"

_new = tuple.__new__

# ---------------------------------------------------------------------------
# Lexical spaces (XSD 1.1), ASCII digits only (Python's int()/float() accept
# far more: "1_000", " 5", "١٢", "inf").

_INT_RE = re.compile(r"[+-]?[0-9]+")
_DEC_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_DBL_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_YEAR = r"(-?)([1-9][0-9]{3,}|0[0-9]{3})-([0-9]{2})-([0-9]{2})"
_TZ = r"(Z|[+-][0-9]{2}:[0-9]{2})?"
_DATETIME_RE = re.compile(_YEAR + r"T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?" + _TZ)
_DATE_RE = re.compile(_YEAR + _TZ)
_DURATION_RE = re.compile(
    r"(-?)P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?"
    r"(?:(T)(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\.[0-9]*)?|\.[0-9]+)S)?)?")

_INT_RANGES: dict[str, tuple[int | None, int | None]] = {
    "integer": (None, None),
    "nonPositiveInteger": (None, 0),
    "negativeInteger": (None, -1),
    "nonNegativeInteger": (0, None),
    "positiveInteger": (1, None),
    "long": (-2**63, 2**63 - 1),
    "int": (-2**31, 2**31 - 1),
    "short": (-2**15, 2**15 - 1),
    "byte": (-2**7, 2**7 - 1),
    "unsignedLong": (0, 2**64 - 1),
    "unsignedInt": (0, 2**32 - 1),
    "unsignedShort": (0, 2**16 - 1),
    "unsignedByte": (0, 2**8 - 1),
}


def _generic(lex: str, dt: str) -> Compound:
    return _new(Compound, ("t", (PlString(lex), dt)))


def _int_encoder(lo: int | None, hi: int | None, bare: bool = False) -> Callable[[str, str], Any]:
    """``bare``: xsd:integer itself, whose canonical literals are bare ints."""
    def enc(lex: str, dt: str) -> Any:
        if _INT_RE.fullmatch(lex):
            try:
                v = int(lex)
            except ValueError:          # beyond Python's int-from-text limit
                return _generic(lex, dt)
            if (lo is None or v >= lo) and (hi is None or v <= hi):
                if bare and canonical_number(v, lex):
                    return v
                return _new(Compound, ("n", (v, dt, PlString(lex))))
        return _generic(lex, dt)
    return enc


def _float_encoder(pattern: re.Pattern, bare: bool = False) -> Callable[[str, str], Any]:
    """``bare``: xsd:double, whose canonical literals are bare floats."""
    def enc(lex: str, dt: str) -> Any:
        if pattern.fullmatch(lex):
            v = float(lex)
            if v - v == 0.0:            # finite
                if bare and canonical_double(v, lex):
                    return v
                return _new(Compound, ("n", (v, dt, PlString(lex))))
        return _generic(lex, dt)
    return enc


#: |v| of the xsd:doubles that may be bare floats: where Python's repr and
#: SWI-Prolog's ``~w`` write floats alike (checked by the tests)
BARE_DOUBLE_MIN, BARE_DOUBLE_MAX = 1e-4, 1e15


def canonical_double(v: float, lex: str) -> bool:
    """Is ``lex`` the form of xsd:double ``v`` that is encoded as the bare
    float?  Its shortest round-tripping numeral without exponent, as both
    Python's repr and SWI-Prolog's ``~w`` write it (BARE_DOUBLE_MIN <= |v|
    < BARE_DOUBLE_MAX), and not -0.0 (which Python takes as equal to 0.0).
    ``canonical_double/2`` in ``prolog/sparql_eval.pl`` is the same test."""
    if v == 0.0:
        return lex == "0.0"
    return BARE_DOUBLE_MIN <= abs(v) < BARE_DOUBLE_MAX and repr(v) == lex


def canonical_number(v: int | float, lex: str) -> bool:
    """Is ``lex`` (an xsd:integer or xsd:double lexical form read as ``v``)
    the form the codec encodes as the bare number ``v``?  An integer's
    numeral with no sign ``+`` and no leading zero (its repr), a double's
    :func:`canonical_double`."""
    return canonical_double(v, lex) if type(v) is float else repr(v) == lex


def _enc_boolean(lex: str, dt: str) -> Any:
    if lex == "true" or lex == "1":
        return _new(Compound, ("bool", ("true", PlString(lex))))
    if lex == "false" or lex == "0":
        return _new(Compound, ("bool", ("false", PlString(lex))))
    return _generic(lex, dt)


def _date_days(sign: str, year: str, month: str, day: str) -> int | None:
    y = int(year)
    return date_days(-y if sign else y, int(month), int(day))


def _exact_float(whole: int, frac: str) -> float:
    """The float nearest to ``whole + 0.frac`` (whole may be negative).

    Written out as a decimal numeral and read with float(): correctly
    rounded, exactly as sparql_eval.pl does with number_codes/2.
    """
    if not frac:
        return float(whole)
    k = len(frac)
    n = whole * 10**k + int(frac)
    a = -n if n < 0 else n
    p = 10**k
    text = f"{'-' if n < 0 else ''}{a // p}.{str(a % p).zfill(k)}"
    return float(text)


def _d_or_generic(value: float, lex: str, dt: str) -> Any:
    if value - value == 0.0:
        return _new(Compound, ("d", (value + 0.0, dt, PlString(lex))))
    return _generic(lex, dt)


def _datetime_encoder(need_tz: bool) -> Callable[[str, str], Any]:
    def enc(lex: str, dt: str) -> Any:
        m = _DATETIME_RE.fullmatch(lex)
        if m is None:
            return _generic(lex, dt)
        sign, year, month, day, hh, mi, ss, frac, tz = m.groups()
        days = _date_days(sign, year, month, day)
        off = tz_offset(tz)
        h, i, s = int(hh), int(mi), int(ss)
        frac = (frac or "").rstrip("0")
        if (days is None or off is None or i > 59 or s > 59 or (need_tz and not tz)
                or h > 24 or (h == 24 and (i or s or frac))):
            return _generic(lex, dt)
        whole = days * 86400 + h * 3600 + i * 60 + s - off
        try:
            value = _exact_float(whole, frac)
        except OverflowError:
            return _generic(lex, dt)
        return _d_or_generic(value, lex, dt)
    return enc


def _enc_date(lex: str, dt: str) -> Any:
    m = _DATE_RE.fullmatch(lex)
    if m is None:
        return _generic(lex, dt)
    sign, year, month, day, tz = m.groups()
    days = _date_days(sign, year, month, day)
    off = tz_offset(tz)
    if days is None or off is None:
        return _generic(lex, dt)
    try:
        value = float(days * 86400 - off)
    except OverflowError:
        return _generic(lex, dt)
    return _d_or_generic(value, lex, dt)


def _duration_encoder(kind: str) -> Callable[[str, str], Any]:
    """kind: 'all' (xsd:duration), 'dt' (dayTime), 'ym' (yearMonth)."""
    def enc(lex: str, dt: str) -> Any:
        m = _DURATION_RE.fullmatch(lex)
        if m is None:
            return _generic(lex, dt)
        neg, y, mo, d, t, h, mi, s = m.groups()
        if ((y is mo is d is h is mi is s is None)
                or (t and h is mi is s is None)
                or (kind == "dt" and (y or mo))
                or (kind == "ym" and (d or t))):
            return _generic(lex, dt)
        sint, _, frac = (s or "0").partition(".")
        frac = frac.rstrip("0")
        whole = (((int(y or 0) * 365 + int(mo or 0) * 30 + int(d or 0)) * 24
                  + int(h or 0)) * 60 + int(mi or 0)) * 60 + int(sint or 0)
        if not frac:
            value: int | float = -whole if neg else whole
        else:
            try:
                value = float(f"{neg}{whole}.{frac}")
            except OverflowError:
                return _generic(lex, dt)
            if value - value != 0.0:
                return _generic(lex, dt)
        return _new(Compound, ("dur", (value, dt, PlString(lex))))
    return enc


_ENCODERS: dict[str, Callable[[str, str], Any]] = {
    XSD + name: _int_encoder(lo, hi) for name, (lo, hi) in _INT_RANGES.items()}
_ENCODERS[XSD + "integer"] = _int_encoder(None, None, bare=True)
_ENCODERS[XSD + "decimal"] = _float_encoder(_DEC_RE)
_ENCODERS[XSD + "double"] = _float_encoder(_DBL_RE, bare=True)
_ENCODERS[XSD + "float"] = _float_encoder(_DBL_RE)
_ENCODERS[XSD_BOOLEAN] = _enc_boolean
_ENCODERS[XSD_DATETIME] = _datetime_encoder(False)
_ENCODERS[XSD + "dateTimeStamp"] = _datetime_encoder(True)
_ENCODERS[XSD + "date"] = _enc_date
_ENCODERS[XSD_DURATION] = _duration_encoder("all")
_ENCODERS[XSD + "dayTimeDuration"] = _duration_encoder("dt")
_ENCODERS[XSD + "yearMonthDuration"] = _duration_encoder("ym")

# Per-datatype dispatch keyed by the datatype's URIRef object itself: rdflib
# interns nothing, but a stream reuses a handful of datatype objects, and a
# dict keyed by them avoids str() + a second lookup per literal.
_BY_DT = BoundedCache(4096)     # datatype URIRef -> (its text, its encoder)


def _dispatch(dt: Any) -> tuple[str, Callable[[str, str], Any] | None]:
    s = str(dt)
    if s == XSD_STRING:
        entry: tuple[str, Callable[[str, str], Any] | None] = (s, _enc_string)
    else:
        entry = (s, _ENCODERS.get(s))
    return _BY_DT.put(dt, entry)


def _enc_string(lex: str, dt: str) -> Any:
    return _new(Compound, ("s", (PlString(lex),)))


# ---------------------------------------------------------------------------

def encode(term: Node) -> Any:
    """The Prolog term of an rdflib IRI, blank node or literal (see module doc)."""
    tp = type(term)
    if tp is URIRef:
        return str(term)
    if tp is Literal or isinstance(term, Literal):
        lex = str(term)
        lang = term.language
        if lang is not None:
            return _new(Compound, ("l", (PlString(lex), lang.lower())))
        dt = term.datatype
        if dt is None:
            return _new(Compound, ("s", (PlString(lex),)))
        entry = _BY_DT.get(dt)
        if entry is None:
            entry = _dispatch(dt)
        dts, enc = entry
        if enc is None:
            return _new(Compound, ("t", (PlString(lex), dts)))
        return enc(lex, dts)
    if tp is BNode or isinstance(term, BNode):
        return _new(Compound, ("b", (str(term),)))
    if isinstance(term, URIRef):
        return str(term)
    raise TypeError(f"not an RDF term: {term!r}")


# ---------------------------------------------------------------------------

def _decimal_digits(x: float) -> tuple[bool, int, int]:
    """``x`` as (negative, N, scale) with ``abs(x) == N / 10**scale`` for its
    shortest round-tripping decimal numeral (repr), trailing zeros removed."""
    r = repr(x)
    neg = r[0] == "-"
    if neg:
        r = r[1:]
    mant, _, exp = r.partition("e")
    ip, _, fp = mant.partition(".")
    n = int(ip + fp)
    scale = len(fp) - (int(exp) if exp else 0)
    if scale < 0:
        n *= 10 ** -scale
        scale = 0
    while scale > 0 and n % 10 == 0:
        n //= 10
        scale -= 1
    return neg, n, scale


def _finite(t: Any, what: str) -> float:
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        raise TypeError(f"{what} needs a number of seconds, got {t!r}")
    x = float(t)
    if not math.isfinite(x):
        raise ValueError(f"{what} needs a finite number of seconds, got {t!r}")
    return x + 0.0                      # no negative zero


def encode_seconds_as_datetime(t: float) -> Compound:
    """``d/3`` of the xsd:dateTime ``t`` seconds after the epoch, in UTC.

    Lexical form ``YYYY-MM-DDThh:mm:ss[.f+]Z``: the fraction is the exact
    decimal of the shortest numeral of ``t`` (so ``encode`` of that literal
    gives back the same float), omitted when ``t`` is whole.  Same output as
    GETSTARTTIME/GETENDTIME in sparql_eval.pl.
    """
    x = _finite(t, "encode_seconds_as_datetime")
    neg, n, scale = _decimal_digits(x)
    if neg:
        n = -n
    p = 10**scale
    whole = n // p
    frac = str(n - whole * p).zfill(scale).rstrip("0") if scale else ""
    days, sod = divmod(whole, 86400)
    y, m, d = civil_from_days(days)
    hh, rem = divmod(sod, 3600)
    mi, ss = divmod(rem, 60)
    year = f"-{-y:04d}" if y < 0 else f"{y:04d}"
    lex = f"{year}-{m:02d}-{d:02d}T{hh:02d}:{mi:02d}:{ss:02d}{'.' + frac if frac else ''}Z"
    return _new(Compound, ("d", (x, XSD_DATETIME, PlString(lex))))


def encode_seconds_as_duration(s: float) -> Compound:
    """``dur/3`` of an xsd:duration of ``s`` seconds.

    Canonical form (XSD's, for a duration without months):
    ``[-]P[nD][T[nH][nM][n[.f+]S]]`` with zero parts left out and ``PT0S``
    for zero, e.g. 90 -> ``PT1M30S``, 2592000 -> ``P30D``, 1.5 -> ``PT1.5S``.
    Same output as GETDURATION in sparql_eval.pl.
    """
    x = _finite(s, "encode_seconds_as_duration")
    value: int | float
    if x.is_integer():
        value = int(s) if type(s) is int else int(x)
        neg, n, scale = value < 0, abs(value), 0
    else:
        value = x
        neg, n, scale = _decimal_digits(x)
    p = 10**scale
    whole = n // p
    frac = str(n % p).zfill(scale).rstrip("0") if scale else ""
    days, rem = divmod(whole, 86400)
    h, rem = divmod(rem, 3600)
    mi, sec = divmod(rem, 60)
    tpart = ((f"{h}H" if h else "") + (f"{mi}M" if mi else "")
             + (f"{sec}{'.' + frac if frac else ''}S" if sec or frac else ""))
    body = (f"{days}D" if days else "") + (f"T{tpart}" if tpart else "")
    lex = ("-P" if neg else "P") + (body or "T0S")
    return _new(Compound, ("dur", (value, XSD_DURATION, PlString(lex))))


# ---------------------------------------------------------------------------

_DT_REFS = BoundedCache(4096)    # datatype IRI text -> URIRef


def _dtref(dt: str) -> URIRef:
    ref = _DT_REFS.get(dt)
    if ref is None:
        ref = _DT_REFS.put(dt, URIRef(dt))
    return ref


def _typed(lex: Any, dt: Any) -> Literal:
    return Literal(str(lex), datatype=_dtref(str(dt)), normalize=False)


_DECODERS: dict[tuple[str, int], Callable[..., Node]] = {
    ("s", 1): lambda lex: Literal(str(lex)),
    ("l", 2): lambda lex, lang: Literal(str(lex), lang=str(lang)),
    ("n", 3): lambda _v, dt, lex: _typed(lex, dt),
    ("d", 3): lambda _v, dt, lex: _typed(lex, dt),
    ("dur", 3): lambda _v, dt, lex: _typed(lex, dt),
    ("bool", 2): lambda _v, lex: _typed(lex, XSD_BOOLEAN),
    ("t", 2): lambda lex, dt: _typed(lex, dt),
    ("b", 1): lambda ident: BNode(str(ident)),
}


# Decoded terms, remembered: answers repeat IRIs and literals, and building
# an rdflib term (URIRef validation, Literal.__new__) costs microseconds.
# rdflib terms are immutable, so handing out the same object is safe.  Keys:
# IRI strings, and encoded terms of the known shapes (whose decoding depends
# only on their functor and the text of their arguments, so the Python
# equalities 1 == 1.0 and PlString("x") == "x" between keys are harmless).
_DEC_IRI = BoundedCache(1 << 15)     # IRI text -> URIRef
_DEC_TERM = BoundedCache(1 << 15)    # encoded literal -> Literal
_VALUE_FIRST = frozenset({"n", "d", "dur"})   # first argument: the value, not decoded


def decode(value: Any) -> Node | None:
    """The rdflib term of an encoded term; None for an unbound variable
    (``None``) or the evaluator's error marker ``'$error'`` (SPARQL leaves a
    variable unbound when its expression raised an error).

    Lenient for raw values an aggregate may produce: a bare number decodes
    as xsd:integer/xsd:double, a bare Prolog string as a simple literal.
    """
    tp = type(value)
    if tp is str:
        if value == ERROR:
            return None
        node = _DEC_IRI.get(value)
        if node is None:
            node = _DEC_IRI.put(value, URIRef(value))
        return node
    if tp is Compound:
        try:
            node = _DEC_TERM.get(value)
        except TypeError:               # an unhashable argument: not a term we know
            node = None
        if node is not None:
            return node
        dec = _DECODERS.get((value.name, len(value.args)))
        if dec is not None:
            node = dec(*value.args)
            # only well-formed terms are remembered (their text arguments are
            # strings); blank nodes are not (CONSTRUCT makes fresh ones), nor
            # large literals (the term would keep the text and two copies)
            args = value.args[1:] if value.name in _VALUE_FIRST else value.args
            if type(node) is not BNode and all(isinstance(a, str) and len(a) <= LONG_KEY
                                               for a in args):
                _DEC_TERM.put(value, node)
            return node
        raise ValueError(f"not an encoded RDF term: {value!r}")
    if value is None:
        return None
    if tp is PlString:
        return Literal(str(value))
    if tp is int:
        return Literal(str(value), datatype=_dtref(XSD + "integer"), normalize=False)
    if tp is float:
        return Literal(repr(value), datatype=_dtref(XSD + "double"), normalize=False)
    raise ValueError(f"not an encoded RDF term: {value!r}")
