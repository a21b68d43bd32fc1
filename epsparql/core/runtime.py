"""One SWI-Prolog per process, reached through pyswip's ctypes handle.

pyswip starts SWI-Prolog when imported; we then call our own entry points
(``prolog/bridge_python.pl``) directly through the foreign interface:
arguments go in as UTF-8 text, the answer comes back as one JSON text.
That is one crossing per call with no per-term conversion, which is what
makes batching pay (pyswip's own query path converts every binding).
"""
from __future__ import annotations

import atexit
import ctypes
import threading
from pathlib import Path
from typing import Any

PROLOG_DIR = Path(__file__).resolve().parent.parent.parent / "prolog"
if not (PROLOG_DIR / "epsparql_core.pl").exists():  # installed as a wheel
    PROLOG_DIR = Path(__file__).resolve().parent.parent / "prolog"


class PrologError(RuntimeError):
    """An error raised inside Prolog, carrying Prolog's own message."""

    def __init__(self, message: str, term: str | None = None):
        super().__init__(message)
        self.prolog_term = term


class _Runtime:
    """The process-wide SWI-Prolog runtime (started on first use)."""

    def __init__(self) -> None:
        import pyswip.prolog  # noqa: F401  (starts SWI-Prolog: PL_initialise)
        from pyswip import core as pc

        lib = pc._lib
        self._lock = threading.RLock()
        self._c = pc
        f = lib.PL_open_foreign_frame
        f.restype, f.argtypes = ctypes.c_size_t, []
        f = lib.PL_discard_foreign_frame
        f.restype, f.argtypes = None, [ctypes.c_size_t]
        f = lib.PL_new_term_refs
        f.restype, f.argtypes = ctypes.c_size_t, [ctypes.c_int]
        f = lib.PL_put_chars
        f.restype, f.argtypes = ctypes.c_int, [ctypes.c_size_t, ctypes.c_int,
                                               ctypes.c_size_t, ctypes.c_char_p]
        f = lib.PL_put_variable
        f.restype, f.argtypes = None, [ctypes.c_size_t]
        f = lib.PL_predicate
        f.restype, f.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int,
                                                  ctypes.c_char_p]
        f = lib.PL_call_predicate
        f.restype, f.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_int,
                                               ctypes.c_void_p, ctypes.c_size_t]
        f = lib.PL_get_nchars
        f.restype, f.argtypes = ctypes.c_int, [ctypes.c_size_t,
                                               ctypes.POINTER(ctypes.c_size_t),
                                               ctypes.POINTER(ctypes.c_char_p),
                                               ctypes.c_uint]
        f = lib.PL_thread_self
        f.restype, f.argtypes = ctypes.c_int, []
        f = lib.PL_thread_attach_engine
        f.restype, f.argtypes = ctypes.c_int, [ctypes.c_void_p]
        # our own function objects for the string-buffer marks (pyswip declares
        # these with other argument types on its shared handle)
        own = ctypes.CDLL(lib._name)
        self._mark = own.PL_mark_string_buffers
        self._mark.restype, self._mark.argtypes = None, [ctypes.POINTER(ctypes.c_size_t)]
        self._release = own.PL_release_string_buffers_from_mark
        self._release.restype, self._release.argtypes = None, [ctypes.c_size_t]
        self._lib = lib
        self._preds: dict[tuple[str, int], int] = {}
        self._atom = pc.PL_ATOM | pc.REP_UTF8
        self._string = pc.PL_STRING | pc.REP_UTF8
        self._cvt = pc.CVT_STRING | pc.REP_UTF8 | pc.BUF_STACK
        self._flags = pc.PL_Q_NODEBUG | pc.PL_Q_CATCH_EXCEPTION
        self._main = threading.get_ident()
        self.consult(PROLOG_DIR / "bridge_python.pl")

    def _pred(self, name: str, arity: int) -> int:
        key = (name, arity)
        p = self._preds.get(key)
        if p is None:
            p = self._lib.PL_predicate(name.encode(), arity, b"bridge_python")
            self._preds[key] = p
        return p

    def call(self, name: str, *args: str | tuple[str, str]) -> str:
        """Call ``bridge_python:name(Args..., Reply)`` and return Reply.

        Each argument is text: a ``str`` goes in as an atom, ``("s", text)``
        as a Prolog string.  Reply is the JSON text the predicate wrote.
        """
        lib = self._lib
        with self._lock:
            if lib.PL_thread_self() == -1 and lib.PL_thread_attach_engine(None) < 0:
                raise PrologError("cannot attach a Prolog engine to this thread")
            # Replies are fetched with BUF_STACK: SWI frees those buffers only
            # at a string-buffer mark, not with the foreign frame.  Without
            # the mark every reply would stay allocated.
            mark = ctypes.c_size_t()
            self._mark(ctypes.byref(mark))
            fid = lib.PL_open_foreign_frame()
            try:
                n = len(args) + 1
                t0 = lib.PL_new_term_refs(n)
                for i, a in enumerate(args):
                    if isinstance(a, tuple):
                        data = a[1].encode("utf-8")
                        kind = self._string
                    else:
                        data = a.encode("utf-8")
                        kind = self._atom
                    if not lib.PL_put_chars(t0 + i, kind, len(data), data):
                        raise PrologError("could not pass an argument to Prolog")
                lib.PL_put_variable(t0 + len(args))
                ok = lib.PL_call_predicate(None, self._flags, self._pred(name, n), t0)
                if not ok:
                    raise PrologError(f"bridge_python:{name}/{n} failed or raised")
                length = ctypes.c_size_t()
                s = ctypes.c_char_p()
                if not lib.PL_get_nchars(t0 + len(args), ctypes.byref(length),
                                         ctypes.byref(s), self._cvt):
                    raise PrologError(f"bridge_python:{name}/{n} gave no text")
                return ctypes.string_at(s, length.value).decode("utf-8")
            finally:
                lib.PL_discard_foreign_frame(fid)
                self._release(mark.value)

    def consult(self, path: Path | str) -> None:
        """Load a Prolog file into the process (once)."""
        from .terms import from_json
        if not hasattr(self, "_bootstrapped"):
            # The bridge itself is loaded through pyswip's query path once.
            from pyswip import Prolog
            list(Prolog.query(f"load_files({_quote(str(path))}, [if(not_loaded)])"))
            self._bootstrapped = True
            return
        reply = from_json(self.call("py_consult", str(path)))
        check(reply)


def _quote(text: str) -> str:
    from .terms import quote_atom
    return quote_atom(text)


def check(reply: Any) -> Any:
    """Raise :class:`PrologError` if a bridge reply is an error."""
    if isinstance(reply, dict) and "error" in reply:
        raise PrologError(reply["error"].strip(), reply.get("term"))
    return reply


_runtime: _Runtime | None = None
_runtime_lock = threading.Lock()
_shutting_down = False


def _at_exit() -> None:
    # Prolog may be halted before our objects are collected: from now on
    # finalisers must not call into it.
    global _shutting_down
    _shutting_down = True


atexit.register(_at_exit)


def runtime() -> _Runtime:
    """The process's Prolog runtime, started on first use."""
    global _runtime
    if _runtime is None:
        with _runtime_lock:
            if _runtime is None:
                _runtime = _Runtime()
    return _runtime
