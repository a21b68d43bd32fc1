"""Python functions callable from EP-SPARQL expressions.

Prolog calls :func:`call_function` through janus (``py_call/3`` in
``prolog/bridge_pyfun.pl``) with the function's number and its arguments
(RDF terms, in the bridge's JSON encoding); it decodes them, calls the
function and returns the encoded result as text.  Any exception (or a
result that is not an RDF term or a plain Python value) makes the call
fail: SPARQL then treats the expression as an error, the filter drops the
solution, and the engine goes on.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from rdflib import Literal
from rdflib.term import Node

from .core.runtime import PROLOG_DIR, runtime
from .core.terms import from_json, to_prolog

_functions: dict[int, Callable[..., Any]] = {}
_names: dict[int, str] = {}

#: Exceptions raised by Python extension functions, as
#: (function IRI, arguments, exception), oldest first (the last 10,000).
errors: list[tuple[str, tuple, BaseException]] = []
error_count = 0   # errors recorded so far, ever (engines take theirs by difference)
_lock = threading.Lock()
_installed = False


def call_function(fid: int, args_json: str) -> str | None:
    """Call Python function ``fid`` on JSON-encoded RDF terms; the Prolog
    text of the encoded result, or None (the expression is then an error).
    Called from Prolog only; never raises."""
    global error_count
    from .rdf.codec import decode, encode
    try:
        fn = _functions.get(fid)
        if fn is None:
            return None
        args = [decode(a) for a in from_json(args_json)]
        try:
            value = fn(*args)
        except Exception as e:  # reported, and the expression is an error
            if len(errors) >= 10_000:
                del errors[:1000]
            errors.append((_names.get(fid, "?"), tuple(args), e))
            error_count += 1
            return None
        if value is None:
            return None
        if not isinstance(value, Node):
            value = Literal(value)
        return to_prolog(encode(value))
    except Exception:  # a failing user function must not take the engine down
        return None


def _install() -> None:
    global _installed
    if _installed:
        return
    runtime().consult(PROLOG_DIR / "bridge_pyfun.pl")
    _installed = True


def register(iri: str, fn: Callable[..., Any]) -> None:
    """Make ``fn`` callable as ``<iri>(args…)`` in every engine's queries."""
    if not callable(fn):
        raise TypeError(f"{fn!r} is not callable")
    with _lock:
        _install()
        fid = len(_functions) + 1
        _functions[fid] = fn
        _names[fid] = str(iri)
    from .core.runtime import check
    check(from_json(runtime().call("py_register_function", str(iri), str(fid))))
