"""Python functions callable from EP-SPARQL expressions.

One foreign predicate, ``epsparql_pycall/3``, is registered in Prolog once
per process; it looks the Python function up by number, decodes the
arguments (RDF terms, JSON-encoded), calls it and returns the encoded
result.  Any exception (or a result that is not an RDF term or a plain
Python value) makes the call fail: SPARQL then treats the expression as an
error, the filter drops the solution, and the engine goes on.
"""
from __future__ import annotations

import ctypes
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
_callback = None  # keep the ctypes callback alive for the process


def _pycall(t_id: int, t_args: int, t_result: int) -> int:
    from .rdf.codec import decode, encode
    lib = runtime()._lib
    try:
        fid = ctypes.c_int()
        if not lib.PL_get_integer(t_id, ctypes.byref(fid)):
            return 0
        fn = _functions.get(fid.value)
        if fn is None:
            return 0
        length = ctypes.c_size_t()
        s = ctypes.c_char_p()
        rt = runtime()
        if not lib.PL_get_nchars(t_args, ctypes.byref(length), ctypes.byref(s), rt._cvt):
            return 0
        args = [decode(a) for a in from_json(ctypes.string_at(s, length.value).decode("utf-8"))]
        try:
            value = fn(*args)
        except Exception as e:  # reported, and the expression is an error
            global error_count
            if len(errors) >= 10_000:
                del errors[:1000]
            errors.append((_names.get(fid.value, "?"), tuple(args), e))
            error_count += 1
            return 0
        if value is None:
            return 0
        if not isinstance(value, Node):
            value = Literal(value)
        data = to_prolog(encode(value)).encode("utf-8")
        return 1 if lib.PL_unify_chars(t_result, rt._string, len(data), data) else 0
    except Exception:  # a failing user function must not take the engine down
        return 0


def _install() -> None:
    global _installed, _callback
    if _installed:
        return
    rt = runtime()
    lib = rt._lib
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_size_t)
    _callback = proto(_pycall)
    f = lib.PL_register_foreign_in_module
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    lib.PL_get_integer.restype = ctypes.c_int
    lib.PL_get_integer.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)]
    lib.PL_unify_chars.restype = ctypes.c_int
    lib.PL_unify_chars.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p]
    if not f(b"bridge_pyfun", b"epsparql_pycall", 3, ctypes.cast(_callback, ctypes.c_void_p), 0):
        raise RuntimeError("could not register the Python function bridge in Prolog")
    rt.consult(PROLOG_DIR / "bridge_pyfun.pl")
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
