"""One SWI-Prolog per process, reached through janus-swi.

janus-swi is SWI-Prolog's own Python interface: importing it starts
SWI-Prolog inside this process (``epsparql.core.swipl`` first points it at
the right SWI-Prolog home).  We call our own entry points
(``prolog/bridge_python.pl``) with ``apply_once``, janus' cheapest call:
``bridge_python:name(Args..., Reply)`` with the arguments converted by
janus (text as atoms) and Reply a Prolog string (JSON) coming back as one
Python ``str``, so a call is one crossing with no per-term conversion.

Threads: janus releases the GIL while Prolog runs, and every Python thread
gets its own Prolog engine (attached on its first call, freed when the
thread ends).  The engines' state (dynamic predicates, global variables of
the core) is shared or per-thread in ways the core does not guard, so calls
are serialised by one re-entrant lock: a Python extension function called
from Prolog may call back into the runtime.
"""
from __future__ import annotations

import atexit
import threading
from pathlib import Path
from typing import Any

from .long_text import LongText
from .swipl import SwiplNotFound, configure_environment, swipl_executable, swipl_home

PROLOG_DIR = Path(__file__).resolve().parent.parent.parent / "prolog"
if not (PROLOG_DIR / "epsparql_core.pl").exists():  # installed as a wheel
    PROLOG_DIR = Path(__file__).resolve().parent.parent / "prolog"


class PrologError(RuntimeError):
    """An error raised inside Prolog, carrying Prolog's own message, and
    the error as data: ``kind`` (the error's name: ``type_error``,
    ``existence_error``, ``invalid_engine_state``, ...; ``exception`` for
    a ball that is not ``error(Formal, Context)``) and ``formal`` (that
    term, as :func:`epsparql.core.terms.from_json` reads terms)."""

    def __init__(self, message: str, term: str | None = None, kind: str | None = None,
                 formal: Any = None):
        super().__init__(message)
        self.prolog_term = term
        self.kind = kind
        self.formal = formal


class _Runtime:
    """The process-wide SWI-Prolog runtime (started on first use)."""

    def __init__(self) -> None:
        configure_environment()
        import janus_swi  # starts SWI-Prolog (PL_initialise) in this process

        self._janus = janus_swi
        self._apply = janus_swi.apply_once
        self._lock = threading.RLock()
        self._local = threading.local()
        self._local.attached = True        # the thread that started Prolog has an engine
        self.query_once("load_files(F, [if(not_loaded)])",
                        {"F": str(PROLOG_DIR / "bridge_python.pl")})

    def _attach(self) -> None:
        """Give this thread a Prolog engine (kept until the thread ends)."""
        if self._janus.engine() < 0:
            self._janus.attach_engine()
        self._local.attached = True

    def call(self, name: str, *args: Any, module: str | None = None) -> str:
        """Call ``bridge_python:name(Args..., Reply)`` and return Reply.

        Each argument is text: a ``str`` reaches Prolog as an atom (names,
        numbers, short values), ``("s", text)`` as a Prolog string (batches,
        rules, states: anything long; see ``py_text_call/3``); any other
        Python object as a reference to it (janus' ``PyObject`` blob), for
        Prolog to call back.  Reply is the JSON text the predicate wrote.
        ``module``: call the entry of another bridge module instead
        (``prolog/bridge_windows.pl``), through ``py_module_call/4``.
        """
        long = module is not None
        for a in args:
            t = type(a)
            if t is tuple:
                a = a[1]
                long = True
            elif t is not str:
                continue
            # janus leaves Prolog in a bad state on text that is not valid
            # Unicode (a lone surrogate): reject it here, as a ValueError
            if not a.isascii():
                a.encode("utf-8")
        with self._lock:
            if not getattr(self._local, "attached", False):
                self._attach()
            try:
                if long:
                    conv = [("s", LongText(a[1])) if type(a) is tuple else a for a in args]
                    try:
                        if module is None:
                            reply = self._apply("bridge_python", "py_text_call", name, conv,
                                                fail=None)
                        else:
                            reply = self._apply("bridge_python", "py_module_call", module,
                                                name, conv, fail=None)
                    finally:
                        # Prolog holds each LongText until atom garbage collection
                        # reclaims its blob: let the text go now
                        for a in conv:
                            if type(a) is tuple:
                                a[1].release()
                else:
                    reply = self._apply("bridge_python", name, *args, fail=None)
            except self._janus.PrologError as e:
                raise PrologError(f"{module or 'bridge_python'}:{name}/{len(args) + 1} "
                                  f"raised: {e}") from None
        if reply is None:
            raise PrologError(f"{module or 'bridge_python'}:{name}/{len(args) + 1} failed")
        return reply

    def query_once(self, goal: str, inputs: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Run a goal (text) once; its variables' bindings as a dict, or
        None when it fails.  For tools and tests: the hot paths use
        :meth:`call`.  Variables meant to stay unbound start with ``_``."""
        with self._lock:
            try:
                r = self._janus.query_once(goal, dict(inputs or {}))
            except self._janus.PrologError as e:
                raise PrologError(str(e)) from None
        if not r or r.get("truth") is False:
            return None
        r.pop("truth", None)
        return r

    def consult(self, path: Path | str) -> None:
        """Load a Prolog file into the process (once)."""
        from .terms import from_json
        check(from_json(self.call("py_consult", str(path))))


def check(reply: Any) -> Any:
    """Raise :class:`PrologError` if a bridge reply is an error."""
    if isinstance(reply, dict) and "error" in reply:
        raise PrologError(reply["error"].strip(), reply.get("term"), reply.get("kind"),
                          reply.get("formal"))
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


def runtime_alive() -> bool:
    """Is the runtime started and not shutting down?  (Finalisers ask this
    before calling into Prolog.)"""
    import sys
    return _runtime is not None and not _shutting_down and not sys.is_finalizing()


__all__ = ["LongText", "PrologError", "PROLOG_DIR", "check", "runtime", "runtime_alive",
           "swipl_executable", "swipl_home", "SwiplNotFound"]
