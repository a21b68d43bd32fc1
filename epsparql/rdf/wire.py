"""The text of a batch of stream triples, with a term table.

A batch of RDF triple events goes to Prolog as the text of

    b([I0, I1, …, D0, …], ['http://…', 'http://…', …, 'http://…#double', …],
      [t(I0, I1, 123.45, 10001), n(I0, I1, 1.5, D0, "1.50", 10002),
       t(I2, I1, I0, 10002, 10003), …])

read there as data (``read_term``, never called) by ``py_push_table/3`` in
``prolog/bridge_python.pl``, which unifies the variable list with the
value list (every occurrence of ``I0`` is then the IRI atom) and turns
each item into the event it stands for: ``t(S, P, O, T1, T2)`` is
``e(triple(S, P, O), T1, T2)``, and ``n(S, P, V, D, L, T1, T2)`` (likewise
``d/7``, ``dur/7``) is ``e(triple(S, P, n(V, D, L)), T1, T2)``; a point
event (T1 = T2, the same number written the same way) leaves out T2.  So an IRI
(or blank node) that occurs many times in a batch is written, escaped and
parsed once, a typed literal names its datatype by a variable instead of
the full datatype IRI, the commonest literals (canonical xsd:integer and
xsd:double, bare numbers in the codec) are written as numbers, and the other
numeric ones without a nested term (reading nested terms is what costs).  The terms are exactly
those of :mod:`epsparql.rdf.codec` (``encode``): only the way they are
written changes.  Every value is written by
:func:`epsparql.core.terms.to_prolog` (atoms quoted and escaped, strings
escaped), so no data is ever Prolog source; variable names are generated
here and never come from data.

Variables: ``I<n>`` are per batch (IRIs and blank nodes in order of first
occurrence); ``D<n>`` name datatype IRIs for the whole process, so that the
text of a literal can be cached across batches; a batch binds the ``D``
variables its literals use.
"""
from __future__ import annotations

import threading
from typing import Any, Iterable

from rdflib.term import BNode, Literal, URIRef

from ..core.terms import Compound, Raw, quote_atom, to_prolog
from ..memo import BoundedCache
from .codec import canonical_number, encode

__all__ = ["triple_batch_text", "term_text", "literal_wire"]

_DT_VARS: dict[str, str] = {}          # datatype IRI -> D<n>, append-only
_MAX_DT_VARS = 4096                    # beyond: datatype IRIs written in full
_dt_lock = threading.Lock()

#: (lexical form, datatype IRI or None, language or None) -> (item functor,
#: the literal's text in the item, the datatype IRI it names by a D variable
#: or None)
_LIT_WIRE = BoundedCache(1 << 16)
_MAX_CACHED_LEX = 64                   # long literals rarely repeat: not cached

# functor -> arity of the encodings that carry a datatype IRI as their
# second argument: n(Value, Dt, Lex), d(…), dur(…), t(Lex, Dt)
_WITH_DT = {"n": 3, "d": 3, "dur": 3, "t": 2}
_XSD = "http://www.w3.org/2001/XMLSchema#"


def _dt_var(dt: str) -> str | None:
    v = _DT_VARS.get(dt)
    if v is None:
        with _dt_lock:
            v = _DT_VARS.get(dt)
            if v is None and len(_DT_VARS) < _MAX_DT_VARS:
                v = f"D{len(_DT_VARS)}"
                _DT_VARS[dt] = v
    return v


def literal_wire(node: Literal) -> tuple[str, str, str | None]:
    """How a literal object is written in a batch item: the item's functor
    (``n``, ``d``, ``dur``: the literal's arguments flat in the item; ``t``:
    the literal as one argument), the text that goes in, and the datatype
    IRI it names by its ``D`` variable (None when the text names none)."""
    enc = encode(node)
    if type(enc) is not Compound:
        return "t", to_prolog(enc), None
    name, args = enc
    named = None
    if _WITH_DT.get(name) == len(args) and type(args[1]) is str:
        v = _dt_var(args[1])
        if v is not None:
            named = args[1]
            args = (args[0], Raw(v)) + args[2:]
            if len(args) == 3:                  # n, d, dur: written flat
                return name, ",".join(to_prolog(a) for a in args), named
            enc = Compound(name, args)
    txt = to_prolog(enc)
    # the codec's functors (n, d, dur, t, s, l, bool, b) are plain lower-case
    # names: written without quotes
    if name in _FUNCTORS and txt.startswith(f"'{name}'("):
        txt = name + txt[len(name) + 2:]
    return "t", txt, named


_FUNCTORS = frozenset({"n", "d", "dur", "t", "s", "l", "bool", "b"})


def _lit_key_fast() -> bool:
    """rdflib keeps a literal's datatype and language in slots; reading them
    directly saves two property calls per literal.  Checked, not assumed."""
    try:
        a = Literal("1.5", datatype=URIRef("http://www.w3.org/2001/XMLSchema#double"))
        b = Literal("x", lang="en")
        return (a._datatype == a.datatype and a._language is None      # type: ignore[attr-defined]
                and b._language == b.language and b._datatype is None)  # type: ignore[attr-defined]
    except AttributeError:
        return False


_FAST_SLOTS = _lit_key_fast() and hasattr(Literal("1.5", datatype=URIRef(_XSD + "double")), "_value")

#: datatypes whose canonical literals are bare numbers (codec), and the
#: Python type of their value
_CANONICAL = {_XSD + "double": float, _XSD + "integer": int}

if _FAST_SLOTS:
    def _lit_key(o: Literal, lex: str) -> tuple:
        dt = o._datatype                                                 # type: ignore[attr-defined]
        return (lex, None if dt is None else str(dt), o._language)       # type: ignore[attr-defined]
else:                                                                    # pragma: no cover
    def _lit_key(o: Literal, lex: str) -> tuple:
        dt = o.datatype
        return (lex, None if dt is None else str(dt), o.language)


def triple_batch_text(rows: Iterable[tuple]) -> str:
    """The text of ``b(Vars, Values, Items)`` for rows ``(s, p, o, t1, t2)``:
    rdflib terms (URIRef, BNode, Literal, or subclasses) and times that are
    plain finite ``int``/``float`` with t1 <= t2 (``Engine`` validated them)."""
    iris: dict[str, str] = {}          # IRI -> its variable
    bnodes: dict[str, str] = {}        # blank node id -> its variable
    dts: dict[str, str] = {}           # datatype IRIs named in this batch
    names: list[str] = []
    values: list[str] = []
    out: list[str] = []
    lit_cache = _LIT_WIRE
    lit_key = _lit_key
    fast_num = _FAST_SLOTS

    def literal(x: Literal) -> tuple[str, str]:
        lex = str(x)
        if len(lex) > _MAX_CACHED_LEX:
            f, txt, dt = literal_wire(x)
        else:
            key = lit_key(x, lex)
            hit = lit_cache.get(key)
            if hit is None:
                hit = lit_cache.put(key, literal_wire(x))
            f, txt, dt = hit
        if dt is not None and dt not in dts:
            dts[dt] = _DT_VARS[dt]
        return f, txt

    def other(x: Any) -> str:
        """A subject or predicate, or an object that is not a Literal: its
        variable (the text of a literal subject, which RDF does not have but
        a CONSTRUCT may pass on)."""
        if isinstance(x, URIRef):
            k = str(x)
            v = iris.get(k)
            if v is None:
                v = iris[k] = f"I{len(names)}"
                names.append(v)
                values.append(quote_atom(k))
            return v
        if isinstance(x, BNode):
            k = str(x)
            v = bnodes.get(k)
            if v is None:
                v = bnodes[k] = f"I{len(names)}"
                names.append(v)
                values.append(to_prolog(encode(x)))
            return v
        if isinstance(x, Literal):
            f, txt = literal(x)
            return txt if f == "t" else f"{f}({txt})"
        raise TypeError(f"a triple position must be an rdflib URIRef, Literal or BNode, got {x!r}")

    for s, p, o, t1, t2 in rows:
        if type(s) is URIRef:
            k = str(s)
            sv = iris.get(k)
            if sv is None:
                sv = iris[k] = f"I{len(names)}"
                names.append(sv)
                values.append(quote_atom(k))
        else:
            sv = other(s)
        if type(p) is URIRef:
            k = str(p)
            pv = iris.get(k)
            if pv is None:
                pv = iris[k] = f"I{len(names)}"
                names.append(pv)
                values.append(quote_atom(k))
        else:
            pv = other(p)
        to = type(o)
        if to is Literal:
            lex = str(o)
            if fast_num:
                # an xsd:double / xsd:integer literal the codec encodes as the
                # bare number (rdflib parsed it): its text is the lexical form,
                # without encoding and caching it
                v = o._value                                             # type: ignore[attr-defined]
                tv = type(v)
                if tv is float or tv is int:
                    want = _CANONICAL.get(str(o._datatype))              # type: ignore[attr-defined]
                    if want is tv and len(lex) < 32 and canonical_number(v, lex):
                        r1 = repr(t1)
                        r2 = r1 if t2 is t1 else repr(t2)
                        if r1 == r2:
                            out.append(f"t({sv},{pv},{lex},{r1})")
                        else:
                            out.append(f"t({sv},{pv},{lex},{r1},{r2})")
                        continue
            f, ov = literal(o)
        elif to is URIRef:
            f = "t"
            k = str(o)
            ov = iris.get(k)
            if ov is None:
                ov = iris[k] = f"I{len(names)}"
                names.append(ov)
                values.append(quote_atom(k))
        elif isinstance(o, Literal):
            f, ov = literal(o)
        else:
            f = "t"
            ov = other(o)
        r1 = repr(t1)
        r2 = r1 if t2 is t1 else repr(t2)
        if r1 == r2:                    # a point event: the time once
            out.append(f"{f}({sv},{pv},{ov},{r1})")
        else:
            out.append(f"{f}({sv},{pv},{ov},{r1},{r2})")
    for dt, v in dts.items():
        names.append(v)
        values.append(quote_atom(dt))
    return f"b([{','.join(names)}],[{','.join(values)}],[{','.join(out)}])"


_IRI_TEXT = BoundedCache(1 << 17)      # IRI -> its Prolog text
_LIT_TEXT = BoundedCache(1 << 16)      # (lexical, datatype, language) -> its Prolog text


def term_text(node: Any) -> str:
    """The Prolog text of an RDF term (:func:`~epsparql.rdf.codec.encode`,
    quoted and escaped).  IRIs and short literals repeat, so their text is
    remembered (keyed by plain strings: rdflib's own ``__eq__`` is slow)."""
    tp = type(node)
    if tp is URIRef:
        key = str(node)
        txt = _IRI_TEXT.get(key)
        if txt is None:
            txt = _IRI_TEXT.put(key, to_prolog(encode(node)))
        return txt
    if tp is Literal:
        lex = str(node)
        if len(lex) > _MAX_CACHED_LEX:          # long literals rarely repeat: no caching
            return to_prolog(encode(node))
        dt = node.datatype
        key = (lex, None if dt is None else str(dt), node.language)
        txt = _LIT_TEXT.get(key)
        if txt is None:
            txt = _LIT_TEXT.put(key, to_prolog(encode(node)))
        return txt
    if not isinstance(node, (URIRef, Literal, BNode)):
        raise TypeError(f"a triple position must be an rdflib URIRef, Literal or BNode, got {node!r}")
    return to_prolog(encode(node))
