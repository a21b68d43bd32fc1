"""The text of a batch of stream triples, with a term table.

A batch of RDF triple events goes to Prolog as the text of

    b([I0, I1, …, D0, …], ['http://…', 'http://…', …, 'http://…#double', …],
      [e(triple(I0, I1, n(123.45, D0, "123.45")), 10001, 10001), …])

read there as data (``read_term``, never called) by ``py_push_table/3`` in
``prolog/epsparql_bridge.pl``, which unifies the variable list with the
value list: every occurrence of ``I0`` is then the IRI atom.  So an IRI
(or blank node) that occurs many times in a batch is written, escaped and
parsed once, and a typed literal names its datatype by a variable instead
of the full datatype IRI.  The terms are exactly those of
:mod:`epsparql.rdf.codec` (``encode``): only the way they are written
changes.  Every value is written by :func:`epsparql.core.terms.to_prolog`
(atoms quoted and escaped, strings escaped), so no data is ever Prolog
source; variable names are generated here and never come from data.

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
from .codec import encode

__all__ = ["triple_batch_text"]

_DT_VARS: dict[str, str] = {}          # datatype IRI -> D<n>, append-only
_MAX_DT_VARS = 4096                    # beyond: datatype IRIs written in full
_dt_lock = threading.Lock()

#: (lexical form, datatype IRI or None, language or None) -> (literal text,
#: the datatype IRI its text names by a D variable, or None)
_LIT_WIRE: dict[tuple, tuple[str, str | None]] = {}
_MAX_LIT = 1 << 16
_MAX_CACHED_LEX = 64                   # long literals rarely repeat: not cached

# functor -> arity of the encodings that carry a datatype IRI as their
# second argument: n(Value, Dt, Lex), d(…), dur(…), t(Lex, Dt)
_WITH_DT = {"n": 3, "d": 3, "dur": 3, "t": 2}


def _dt_var(dt: str) -> str | None:
    v = _DT_VARS.get(dt)
    if v is None:
        with _dt_lock:
            v = _DT_VARS.get(dt)
            if v is None and len(_DT_VARS) < _MAX_DT_VARS:
                v = f"D{len(_DT_VARS)}"
                _DT_VARS[dt] = v
    return v


def literal_wire(node: Literal) -> tuple[str, str | None]:
    """The batch text of a literal and the datatype IRI it names by its
    ``D`` variable (None when the text is self-contained)."""
    enc = encode(node)
    if type(enc) is not Compound:
        return to_prolog(enc), None
    name, args = enc
    named = None
    if _WITH_DT.get(name) == len(args) and type(args[1]) is str:
        v = _dt_var(args[1])
        if v is not None:
            named = args[1]
            enc = Compound(name, (args[0], Raw(v)) + args[2:])
    txt = to_prolog(enc)
    # the codec's functors (n, d, dur, t, s, l, bool, b) are plain lower-case
    # names: written without quotes
    if name in _FUNCTORS and txt.startswith(f"'{name}'("):
        txt = name + txt[len(name) + 2:]
    return txt, named


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


if _lit_key_fast():
    def _lit_key(o: Literal, lex: str) -> tuple:
        dt = o._datatype                                                 # type: ignore[attr-defined]
        return (lex, None if dt is None else str(dt), o._language)       # type: ignore[attr-defined]
else:                                                                    # pragma: no cover
    def _lit_key(o: Literal, lex: str) -> tuple:
        dt = o.datatype
        return (lex, None if dt is None else str(dt), o.language)


def triple_batch_text(rows: Iterable[tuple]) -> str:
    """The text of ``b(Vars, Values, Batch)`` for rows ``(s, p, o, t1, t2)``:
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

    def other(x: Any) -> str:
        """Any term but an exact URIRef: its variable or its text."""
        if isinstance(x, URIRef):
            k = str(x)
            v = iris.get(k)
            if v is None:
                v = iris[k] = f"I{len(names)}"
                names.append(v)
                values.append(quote_atom(k))
            return v
        if isinstance(x, Literal):
            lex = str(x)
            if len(lex) > _MAX_CACHED_LEX:
                txt, dt = literal_wire(x)
            else:
                key = lit_key(x, lex)
                hit = lit_cache.get(key)
                if hit is None:
                    hit = literal_wire(x)
                    if len(lit_cache) >= _MAX_LIT:
                        lit_cache.clear()
                    lit_cache[key] = hit
                txt, dt = hit
            if dt is not None and dt not in dts:
                dts[dt] = _DT_VARS[dt]
            return txt
        if isinstance(x, BNode):
            k = str(x)
            v = bnodes.get(k)
            if v is None:
                v = bnodes[k] = f"I{len(names)}"
                names.append(v)
                values.append(to_prolog(encode(x)))
            return v
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
            if len(lex) > _MAX_CACHED_LEX:
                ov, dt = literal_wire(o)
            else:
                key = lit_key(o, lex)
                hit = lit_cache.get(key)
                if hit is None:
                    hit = literal_wire(o)
                    if len(lit_cache) >= _MAX_LIT:
                        lit_cache.clear()
                    lit_cache[key] = hit
                ov, dt = hit
            if dt is not None and dt not in dts:
                dts[dt] = _DT_VARS[dt]
        elif to is URIRef:
            k = str(o)
            ov = iris.get(k)
            if ov is None:
                ov = iris[k] = f"I{len(names)}"
                names.append(ov)
                values.append(quote_atom(k))
        else:
            ov = other(o)
        out.append(f"e(triple({sv},{pv},{ov}),{t1!r},{t2!r})")
    for dt, v in dts.items():
        names.append(v)
        values.append(quote_atom(dt))
    return f"b([{','.join(names)}],[{','.join(values)}],[{','.join(out)}])"
