"""A batch of stream triples as janus data: a term table and rows of ids.

The fast way a batch of RDF triple events crosses into Prolog (op
``push_triples`` of ``py_columns/5`` in ``prolog/bridge_python.pl``):
janus converts Python lists, numbers and strings to Prolog terms itself,
so nothing is written as text and nothing is parsed.  The batch is the
list ``[Terms, Ss, Ps, Os, T1s, T2s]``:

- ``Terms``: the distinct subjects, predicates and objects of the batch,
  each once, as the codec encodes them (:func:`epsparql.rdf.codec.encode`):
  an IRI as its ``str`` (an atom in Prolog), a literal the codec makes a
  number as that number, any other term as the tuple
  ``(name, mask, arg, ...)``, which Prolog turns into ``name(arg, ...)``
  with the arguments whose bit is set in ``mask`` made strings (janus
  passes ``str`` as atoms);
- ``Ss``, ``Ps``: per triple, the 1-based place of its subject and
  predicate in ``Terms``;
- ``Os``: likewise the places of the objects, or, when every object is a
  number literal of one datatype (xsd:double, xsd:integer: what a stream
  of measurements holds) whose lexical form the codec reads to the value
  rdflib holds, ``("bare", values)`` when the codec makes each the bare
  number (its canonical form), else the tuple ``(name, datatype, values,
  lexical, flags)``: the codec's functor (``n``), the datatype IRI, the
  values, the lexical forms joined by spaces in one Python object whose
  ``str()`` Prolog reads as one string (:class:`Lexicals`) and splits, and
  per literal 1 if it is the bare number: no atom per literal, no table
  entry;
- ``T1s``, ``T2s``: the times, ``int`` or finite ``float``.

Why: writing a batch's text cost the Engine ~1.1 µs per triple in
Python and reading it ~0.9 µs in Prolog (bench/README.md, issue 14).  A
batch this path cannot take, or would not take faster (objects that are
mostly distinct literals of other kinds, whose table entries cost more
than their text; a term whose encoding is not flat and atomic; text that
is not valid UTF-8), gives None, and the caller sends it as text
(:mod:`epsparql.rdf.wire`), unchanged.  The data is never Prolog source:
Prolog looks terms up by number and splits one string.
"""
from __future__ import annotations

import math
from itertools import chain, count, repeat
from operator import attrgetter, is_
from typing import Any, Sequence

from rdflib.term import BNode, Literal, URIRef

from ..core.long_text import LongText
from ..core.terms import Compound, PlString
from ..memo import LONG_KEY, BoundedCache
from .codec import BARE_DOUBLE_MAX, BARE_DOUBLE_MIN, canonical_number, encode

__all__ = ["triple_batch_rows", "term_data", "valid_text"]


def _slots_ok() -> bool:
    """rdflib keeps a literal's datatype and language in slots; reading them
    saves two property calls per literal.  Checked, not assumed."""
    try:
        a = Literal("1.5", datatype=URIRef("http://www.w3.org/2001/XMLSchema#double"))
        b = Literal("x", lang="en")
        return (a._datatype == a.datatype and a._language is None      # type: ignore[attr-defined]
                and b._language == b.language and b._datatype is None)  # type: ignore[attr-defined]
    except AttributeError:                                               # pragma: no cover
        return False


if _slots_ok():
    _datatype, _language = attrgetter("_datatype"), attrgetter("_language")
else:                                                                    # pragma: no cover
    _datatype, _language = attrgetter("datatype"), attrgetter("language")


def _key(x: Any) -> Any:
    """A term's key: an IRI its text, a literal (lexical form, datatype
    text or None, language or None), a blank node ("b", id).  Equal keys,
    the same RDF term (and the same encoding)."""
    t = type(x)
    if t is URIRef:
        return str(x)
    if t is Literal:
        dt = _datatype(x)
        return (str(x), None if dt is None else str(dt), _language(x))
    if isinstance(x, Literal):
        dt = x.datatype
        return (str(x), None if dt is None else str(dt), x.language)
    if isinstance(x, BNode):
        return ("b", str(x))
    if isinstance(x, URIRef):
        return str(x)
    raise TypeError(f"a triple position must be an rdflib URIRef, Literal or BNode, got {x!r}")


def _keys(col: Sequence[Any]) -> list[Any]:
    """The keys of a column of terms, a column at a time when it is all
    IRIs or all typed literals (no Python step per term)."""
    kinds = set(map(type, col))
    if kinds == {URIRef}:
        return list(map(str, col))
    if kinds == {Literal}:
        dts = list(map(_datatype, col))
        if None not in dts:
            return list(zip(map(str, col), map(str, dts), map(_language, col)))
    return list(map(_key, col))


#: key -> the term as janus data (None: this path cannot take it)
_DATA = BoundedCache(1 << 16)
_ARG_TYPES = frozenset({str, PlString, int, float})


def term_data(node: Any) -> Any:
    """An RDF term (not an IRI) as janus data: ``(name, mask, args...)``
    of its encoding, or None when this path cannot take it (an argument
    that is not atomic, text that is not valid Unicode)."""
    enc = encode(node)
    te = type(enc)
    if te is int or (te is float and enc - enc == 0.0):
        return enc                              # a literal the codec makes a bare number
    if te is not Compound:
        return None
    name, args = enc
    mask = 0
    out: list[Any] = [name, 0]
    for i, a in enumerate(args):
        ta = type(a)
        if ta not in _ARG_TYPES or (ta is float and a - a != 0.0):
            return None
        if ta is PlString:
            mask |= 1 << i
            a = str(a)
        if ta is not int and ta is not float and not valid_text(a):
            return None
        out.append(a)
    out[1] = mask
    return tuple(out)


def valid_text(text: str) -> bool:
    """Can janus take this text (valid Unicode: no lone surrogates)?"""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Lexicals:
    """Lexical forms on their way to Prolog as one string: janus passes
    this object by reference, Prolog reads ``str()`` of it (a Prolog
    string, not an atom per form: atoms are reclaimed only by atom
    garbage collection)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


_XSD = "http://www.w3.org/2001/XMLSchema#"
#: datatypes whose literals may cross as values and lexical forms: the
#: Python type of the value (rdflib's, and the codec's), how the codec
#: reads a lexical form, and the characters of its lexical space.  A form
#: of these characters that ``float``/``int`` reads is in the codec's
#: lexical space (``_DBL_RE``/``_INT_RE`` of :mod:`epsparql.rdf.codec`):
#: what else Python reads needs a space, an underscore or a letter
#: other than e.
_NUMBER_TYPES = {_XSD + "double": (float, float, frozenset("0123456789+-.eE ")),
                 _XSD + "integer": (int, int, frozenset("0123456789+- "))}
_value = attrgetter("_value")


def _codec_as_assumed() -> bool:
    """Does the codec encode xsd:double and xsd:integer literals as the
    column path builds them: the bare number for a canonical form
    (:func:`~epsparql.rdf.codec.canonical_double`), else ``n(Value,
    Datatype, Lexical)``?  Checked on the codec itself, so that a codec
    that encodes them otherwise turns the column path off instead of
    making other terms than the text path."""
    probes = [(Literal("1.5", datatype=URIRef(_XSD + "double")), 1.5),
              (Literal("2", datatype=URIRef(_XSD + "integer")), 2),
              (Literal(101.25), 101.25), (Literal(7), 7),
              (Literal("1.50", datatype=URIRef(_XSD + "double"), normalize=False), None),
              (Literal("+2", datatype=URIRef(_XSD + "integer"), normalize=False), None)]
    for lit, bare in probes:
        enc = encode(lit)
        if bare is not None:
            if not (type(enc) is type(bare) and enc == bare):
                return False
        elif not (type(enc) is Compound and enc.name == "n" and len(enc.args) == 3
                  and enc.args[1] == str(lit.datatype) and enc.args[2] == str(lit)):
            return False
    return True


_COLUMN_PATH = _codec_as_assumed()


def _bare_flags(want: type, values: list[Any], lexes: list[str]) -> list[int] | None:
    """Per literal 1 when the codec makes it the bare number, else 0; None
    when every one is bare.  A column at a time when all are canonical."""
    if list(map(repr, values)) == lexes:
        if want is int:
            return None
        if values and BARE_DOUBLE_MIN <= min(map(abs, values)) \
                and max(map(abs, values)) < BARE_DOUBLE_MAX:
            return None                         # canonical_double, a column at a time
    flags = [int(canonical_number(v, x)) for v, x in zip(values, lexes)]
    return None if all(flags) else flags


def _numbers(col: list[Any]) -> tuple | None:
    """The objects of a column in which every term is an xsd:double or
    every one an xsd:integer literal with no language whose value is the
    codec's (its lexical form in the codec's lexical space, read as the
    value rdflib holds): ``("bare", values)`` when the codec makes every
    one the bare number (the common case: nothing but the values cross),
    else ``("n", datatype, values, Lexicals, flags)``, flags 1 where the
    literal is the bare number, 0 where it is ``n(value, datatype,
    lexical)``; None for any other column.  A column at a time: one set of
    the characters of all lexical forms, one map to read them."""
    if not _COLUMN_PATH or set(map(type, col)) != {Literal}:
        return None
    dts = list(map(_datatype, col))
    first = dts[0]
    if not all(map(is_, dts, repeat(first))) and len(set(map(str, dts))) != 1:
        return None
    dt = str(first)
    kind = _NUMBER_TYPES.get(dt)
    if kind is None or set(map(_language, col)) != {None}:
        return None
    want, read, chars = kind
    values = list(map(_value, col))
    if set(map(type, values)) != {want}:
        return None
    lexes = list(map(str, col))
    text = " ".join(lexes)
    if not set(text) <= chars or text.count(" ") != len(lexes) - 1:
        return None
    try:
        if list(map(read, lexes)) != values:
            return None
    except ValueError:                          # "", "+", "1e", "1-2", ...
        return None
    if want is float and not math.isfinite(math.fsum(values)):
        return None
    flags = _bare_flags(want, values, lexes)
    if flags is None:
        return ("bare", values)
    return ("n", dt, values, Lexicals(text), flags)


def _by_reference(d: tuple, longs: list[LongText]) -> tuple:
    """Term data ``(name, mask, args...)`` with each long string argument
    a :class:`~epsparql.core.long_text.LongText` (added to ``longs``)."""
    mask, args = d[1], list(d[2:])
    for i, a in enumerate(args):
        if mask >> i & 1 and len(a) > LONG_KEY:
            args[i] = w = LongText(PlString(a))
            longs.append(w)
    return (d[0], mask, *args)


def triple_batch_rows(rows: Sequence[tuple], longs: list[LongText] | None = None
                      ) -> list[Any] | None:
    """The batch ``[Terms, Ss, Ps, Os, T1s, T2s]`` (module doc) of rows
    ``(s, p, o, t1, t2)``: rdflib terms and times that are plain finite
    ``int``/``float`` with t1 <= t2 (``Engine`` validated them); None when
    the batch goes as text.  A literal with a long lexical form (longer
    than :data:`~epsparql.memo.LONG_KEY`) is not remembered, and with
    ``longs`` its lexical form crosses by reference
    (:mod:`epsparql.core.long_text`), the wrapper added to ``longs`` for
    the caller to release after the push."""
    if not rows:
        return None
    ss, ps, os_, t1s, t2s = map(list, zip(*rows))
    skeys, pkeys = _keys(ss), _keys(ps)
    numbers = _numbers(os_)
    okeys = _keys(os_) if numbers is None else []
    keys = list(dict.fromkeys(chain(skeys, pkeys, okeys)))
    ids = dict(zip(keys, count(1)))
    get = ids.__getitem__
    terms = list(map(_DATA.get, keys))          # IRIs (str keys) are never in _DATA
    if sum(type(k) is not str for k in keys) > len(rows) // 4 + 64:
        return None                 # many literals: their text costs less than table entries
    missing = [i for i, d in enumerate(terms) if d is None]
    iris: list[str] = []
    nodes: dict[Any, Any] | None = None
    for i in missing:
        k = keys[i]
        if type(k) is str:
            terms[i] = k
            iris.append(k)
            continue
        if nodes is None:                       # the terms to encode, by key
            nodes = {}
            for kc, col in ((skeys, ss), (pkeys, ps), (okeys, os_)):
                if kc and set(map(type, col)) != {URIRef}:
                    nodes.update(zip(kc, col))
        d = term_data(nodes[k])
        if d is None:
            return None
        if type(k) is tuple and len(k[0]) > LONG_KEY:      # (a literal's key: lexical first)
            terms[i] = d if longs is None or type(d) is not tuple else _by_reference(d, longs)
            continue
        terms[i] = _DATA.put(k, d)
    if not valid_text("".join(iris)):
        return None
    objects = numbers if numbers is not None else list(map(get, okeys))
    return [terms, list(map(get, skeys)), list(map(get, pkeys)), objects, t1s, t2s]
