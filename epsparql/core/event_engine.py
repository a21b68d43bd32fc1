"""CoreEngine: the Prolog event-processing core seen from Python.

One CoreEngine is one engine module inside the process's SWI-Prolog, with
its own rules, goals and detections.  Events cross into Prolog in batches
(one call per batch); the detections of a batch come back during the same
call, in chunks of columns (``columns.py``), from which Detection objects
are built when asked for.
"""
from __future__ import annotations

import itertools
import threading
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from .columns import ColumnReceiver, Columns, Detection, TermTable
from .runtime import PrologError, check, runtime, runtime_alive
from .terms import Compound, batch_rows, batch_text, from_json, to_prolog


class RuleError(NamedTuple):
    """An exception raised inside a rule, as data (``engine_errors/2`` in
    ``prolog/epsparql_core.pl``): Prolog's message, what triggered it
    (``event(E, [T1, T2])``, ``action(Head, [T1, T2])``, ``hook(...)``,
    ``close(T)``, ``alarm(...)``, ``function(IRI, Args)``, ...), the
    error's ``kind`` and term, the rule-graph ``node`` it was raised in
    (None: not in a step) and the ``rules`` concerned (their head names;
    ``heads``: the heads as text)."""

    message: str
    context: Any
    kind: str = "exception"
    error: Any = None
    node: int | None = None
    rules: tuple[str, ...] = ()
    heads: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, err: dict) -> "RuleError":
        """Read one error of a bridge reply (``write_errors`` in
        ``prolog/bridge_python.pl``)."""
        rules = err.get("rules") or ()
        return cls(err["message"].strip(), err.get("context"), err.get("kind", "exception"),
                   err.get("error"), err.get("node"), tuple(r["name"] for r in rules),
                   tuple(r["head"] for r in rules))


#: First bytes of a CoreEngine.export_state() blob (then zlib-compressed text).
CORE_STATE_MAGIC = b"EPSC1"


def _detections(chunks: list[Columns]) -> list[Detection]:
    if len(chunks) == 1:
        return list(chunks[0].detections())
    return [d for c in chunks for d in c.detections()]


def unpack_state(state: bytes, magic: bytes, what: str) -> bytes:
    """The payload of a state blob: check the magic, decompress.  Raises
    ValueError for anything that is not such a blob."""
    if not isinstance(state, (bytes, bytearray, memoryview)):
        raise TypeError(f"a {what} is bytes, got {type(state).__name__}")
    state = bytes(state)
    if not state.startswith(magic):
        raise ValueError(f"not a {what}: it does not start with {magic!r}")
    try:
        d = zlib.decompressobj()
        payload = d.decompress(state[len(magic):])
        if not d.eof or d.unused_data:
            raise ValueError("truncated or trailing data")
        return payload
    except (zlib.error, ValueError) as e:
        raise ValueError(f"malformed {what}: {e}") from None


_ids = itertools.count(1)
_ids_lock = threading.Lock()

POLICIES = ("unrestricted", "recent", "chronological")


class CoreEngine:
    """An engine of the Prolog core: add rules, push events, collect detections.

    Options (see ``prolog/epsparql_core.pl``): ``policy`` (consumption policy
    for rules added afterwards), ``gc_every`` (garbage collection every N
    events, 0 = never), ``gc_period`` (also every so many seconds of
    application time), ``max_depth`` (nesting of derived events); more with
    :meth:`set_option` (``max_queued``, ``out_of_order``, ``replace_bindings``,
    ``share``, ``justify``: docs/CORE.md).

    ``on_detected`` is called with each :class:`Detection` after the batch
    that produced it.  Detections are also kept until :meth:`drain`.
    """

    def __init__(self, *, policy: str = "unrestricted", gc_every: int = 100,
                 gc_period: float | None = None, max_depth: int = 200,
                 batch_size: int = 5000,
                 on_detected: Callable[[Detection], None] | None = None) -> None:
        self._rt = runtime()
        with _ids_lock:
            self.module = f"epsparql_engine_{next(_ids)}"
        self._call("py_create", self.module)
        self.batch_size = batch_size
        self.on_detected = on_detected
        #: if set, each chunk of detections goes here during the call that
        #: makes it, instead of being kept and returned; if it raises, the
        #: call stops and the exception is raised by it
        self.on_chunk: Callable[[Columns], None] | None = None
        self._terms = TermTable()
        self._pending: list[Columns] = []
        self.errors: list[RuleError] = []
        self.set_option("policy", policy)
        self.set_option("gc_every", gc_every)
        if gc_period is not None:
            self.set_option("gc_period", gc_period)
        self.set_option("max_depth", max_depth)

    # -- plumbing --------------------------------------------------------
    def _call(self, name: str, *args: Any) -> Any:
        return check(from_json(self._rt.call(name, *args)))

    def set_option(self, key: str, value: Any) -> None:
        """Set an engine option (a Prolog term given as a Python value)."""
        if key == "policy" and value not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {value!r}")
        if isinstance(value, bool):
            value = "true" if value else "false"
        if key == "gc_period" and value is not None and value != "inf":
            value = float(value)
        self._call("py_set_option", self.module, key, ("s", to_prolog(value)))

    # -- rules -------------------------------------------------------------
    def add_rules(self, text: str) -> None:
        """Add rules written in the rule language (clauses ending in '.')."""
        self._call("py_add_rules", self.module, ("s", text))

    def delete_rules(self, label: Any) -> None:
        """Delete the rules added as ``Label 'rule:' Head <- Body`` with this
        label (a str is an atom), their partial matches with them; other rules
        are untouched (docs/CORE.md, Rule deletion)."""
        self.add_rules(f":- epsparql_core:engine_delete_rules({to_prolog(self.module)}, "
                       f"{to_prolog(label)}).")

    def load_rules(self, path: str | Path) -> None:
        """Load a rule file."""
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"rule file not found: {p}")
        self._call("py_load_rules", self.module, str(p.resolve()))

    # -- events ------------------------------------------------------------
    def push(self, event: Compound | str, start: float, end: float | None = None) -> list[Detection]:
        """Push one event; returns what it made detectable (also buffered)."""
        return self.push_many([(event, start, end)])

    def push_many(self, events: Iterable[Sequence[Any]]) -> list[Detection]:
        """Push ``(event, start[, end])`` items in order, ``batch_size`` per crossing.

        Returns the detections these events produced (they are also kept
        for :meth:`drain` and passed to ``on_detected``).
        """
        return _detections(self.push_many_columns(events))

    def push_many_columns(self, events: Iterable[Sequence[Any]]) -> list[Columns]:
        """Like :meth:`push_many`, the detections as :class:`Columns` (one
        per run of detections of one rule head, in detection order): no
        Python object per detection unless asked for.  They are also kept
        for :meth:`drain` / :meth:`drain_columns` and passed to
        ``on_detected``."""
        out: list[Columns] = []
        batch: list[Sequence[Any]] = []
        for item in events:
            batch.append(item)
            if len(batch) >= self.batch_size:
                out.extend(self._push_batch(batch))
                batch = []
        if batch:
            out.extend(self._push_batch(batch))
        return out

    def _push_batch(self, batch: list[Sequence[Any]]) -> list[Columns]:
        """One crossing: plain events as janus data, others as text."""
        rows = batch_rows(batch)
        if rows is not None:
            return self._columns("push_rows", rows)
        return self._columns("push", ("s", batch_text(batch)[0]))

    def push_text(self, text: str) -> list[Detection]:
        """Push a batch already written as the text of a Prolog list of e/3."""
        return _detections(self._columns("push", ("s", text)))

    def push_table_text(self, text: str) -> list[Detection]:
        """Push a batch written with a term table: the text of
        ``b(Vars, Values, Batch)`` (see ``py_push_table/3`` in
        ``prolog/bridge_python.pl``): each variable of the list Vars
        stands for the term at the same place in Values wherever it occurs
        in Batch, a list of e/3."""
        return _detections(self._columns("push_table", ("s", text)))

    def push_table_text_columns(self, text: str) -> list[Columns]:
        """:meth:`push_table_text` with the detections as :class:`Columns`."""
        return self._columns("push_table", ("s", text))

    def push_triple_rows_columns(self, batch: list[Any]) -> list[Columns]:
        """Push a batch of stream triples given as janus data, the list
        ``[Terms, Ss, Ps, Os, T1s, T2s]`` of
        :func:`epsparql.rdf.wire_rows.triple_batch_rows` (op
        ``push_triples`` of ``py_columns/5`` in ``prolog/bridge_python.pl``):
        the events ``triple(S, P, O)``, no text written or parsed.  The
        detections as :class:`Columns`."""
        return self._columns("push_triples", batch)

    def columns_entry(self, module: str, name: str, op: str, arg: Any) -> list[Columns]:
        """Run the columns operation ``op`` of another bridge module's entry
        ``module:name(Op, Engine, Receiver, Arg, Reply)`` (as
        ``py_columns/5``: ``prolog/bridge_windows.pl`` runs the windows and
        this core in one crossing), its answers received as this engine's
        detections are (same term dictionary, ``on_chunk``, errors)."""
        return self._columns(op, arg, entry=(module, name))

    def _columns(self, op: str, arg: Any = "", notify: bool = True,
                 entry: tuple[str, str] | None = None) -> list[Columns]:
        """Run a columns operation of the bridge (``py_columns/5``, or
        ``entry``): the detections it releases (kept until drain(); passed
        to on_detected when ``notify``), its rule errors recorded.  Chunks
        received before an error are kept too."""
        take = self.on_chunk
        if take is not None and notify and self.on_detected is not None:
            take = self._notified(take)
        rec = ColumnReceiver(self._terms, take)
        try:
            if entry is None:
                reply = from_json(self._rt.call("py_columns", op, self.module, rec, arg))
            else:
                reply = from_json(self._rt.call(entry[1], op, self.module, rec, arg,
                                                module=entry[0]))
        finally:
            chunks, rec.chunks, rec.table = rec.chunks, [], None
            self._pending.extend(chunks)
        if rec.error is not None:          # on_chunk raised: the call stopped there
            raise rec.error
        if isinstance(reply, dict) and "e" in reply:
            self.errors.extend(RuleError.from_json(err) for err in reply["e"])
        check(reply)
        if notify and self.on_detected is not None:
            for c in chunks:
                for d in c.detections():
                    self.on_detected(d)
        return chunks

    def _notified(self, take: Callable[[Columns], None]) -> Callable[[Columns], None]:
        """``on_chunk`` with ``on_detected`` told of each detection first
        (chunks taken during the call are not returned, so not seen after)."""
        def both(chunk: Columns) -> None:
            for d in chunk.detections():
                self.on_detected(d)
            take(chunk)
        return both

    def advance(self, t: float) -> list[Detection]:
        """Declare that no more events end at or before ``t``: answers that
        waited for an optional part at those instants are decided now."""
        return _detections(self.advance_columns(t))

    def advance_columns(self, t: float) -> list[Columns]:
        """:meth:`advance` with the detections as :class:`Columns`."""
        if isinstance(t, bool) or not isinstance(t, (int, float)) or t != t or t in (float("inf"), float("-inf")):
            raise ValueError(f"advance() needs a finite number of seconds, got {t!r}")
        return self._columns("advance", repr(t))

    def flush(self) -> list[Detection]:
        """Close every instant (end of stream): emit all waiting answers."""
        return _detections(self._columns("flush"))

    def flush_columns(self) -> list[Columns]:
        """:meth:`flush` with the detections as :class:`Columns`."""
        return self._columns("flush")

    def drain(self) -> list[Detection]:
        """All detections not yet drained, in detection order."""
        return _detections(self.drain_columns())

    def drain_columns(self) -> list[Columns]:
        """All detections not yet drained, as :class:`Columns`, in
        detection order."""
        self._columns("drain", notify=False)
        out, self._pending = self._pending, []
        return out

    # -- state ---------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """events, late, now, goals (stored partial matches), stores, nodes,
        rules, pending (undrained detections), waiting (answers waiting for
        their instant to close)."""
        return self._call("py_stats", self.module)

    def rule_graph(self) -> dict[str, Any]:
        """The binarised rule graph: ``nodes`` (id, pattern, window, policy,
        children), ``rules`` (head, root node) and ``stores`` (name, node,
        window, goals stored now)."""
        return self._call("py_rule_graph", self.module)

    def justifications(self, name: str, arity: int, start: float, end: float) -> list[Any]:
        """Why the engine detected events ``name/arity`` over ``[start,
        end]``: one tree per recorded detection (rules added with the option
        ``justify`` on; docs/CORE.md, Justification), as terms:
        ``detection(Event, [T1, T2], RuleText, Why)``, Why being
        ``step(Node, Values, [T1, T2], Children)``, ``received(Event, [T1,
        T2])``, a ``detection(...)`` of another rule, ``alarm(Why)`` or
        ``unknown(Node, [T1, T2])``."""
        return self._call("py_justify", self.module, name, str(arity),
                          f"[{float(start)!r}, {float(end)!r}]")

    def goals(self) -> list[dict[str, Any]]:
        """Every stored goal (partial match) now: ``store``, ``node`` and the
        ``goal`` arguments (join values, other values, start, end).  For
        tracing small runs: it copies the whole goal store."""
        return self._call("py_goals", self.module)

    # -- snapshots -------------------------------------------------------------
    def export_state(self) -> bytes:
        """The engine's dynamic state, compact: every goal store, the clock
        and counters, the answers waiting for an instant to close, the dedup
        set of the open instant, the garbage collector's bookkeeping.  Not
        in it: rules, options, helper predicates, background knowledge, and
        detections not yet drained (take a snapshot after draining).  One
        Prolog crossing; see docs/CORE.md, "State snapshots"."""
        return CORE_STATE_MAGIC + zlib.compress(self._export_text().encode("utf-8"), 1)

    def import_state(self, state: bytes) -> None:
        """Replace this engine's dynamic state by one from :meth:`export_state`
        of an engine with the same rules added in the same order.  Detections
        and errors not yet drained are discarded.  Raises ValueError (and
        changes nothing) for a blob of an engine with other rules or a
        malformed one; the blob is read as data, never run."""
        payload = unpack_state(state, CORE_STATE_MAGIC, "CoreEngine state")
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"malformed CoreEngine state: {e}") from None
        self._import_text(text)

    def _export_text(self) -> str:
        """The state as the text of engine_export_state/2."""
        reply = self._rt.call("py_export_state", self.module)
        if reply.startswith("epsparql_state("):
            return reply
        check(from_json(reply))
        raise PrologError(f"unexpected reply to py_export_state: {reply[:200]!r}")

    def _import_text(self, text: str) -> None:
        """Import the text of engine_export_state/2 (one crossing)."""
        reply = from_json(self._rt.call("py_import_state", self.module, ("s", text)))
        if isinstance(reply, dict) and reply.get("kind") == "invalid_engine_state":
            raise ValueError(reply["error"].strip())
        check(reply)
        self._pending.clear()
        self.errors.clear()

    def gc(self) -> None:
        """Run the garbage collection of expired goals now."""
        self._call("py_gc", self.module)

    def clear_state(self) -> None:
        """Forget goals, detections and time; keep the rules."""
        self._call("py_clear", self.module)
        self._pending.clear()
        self.errors.clear()

    def reset(self) -> None:
        """Forget everything, rules included."""
        self._call("py_reset", self.module)
        self._pending.clear()
        self.errors.clear()

    def close(self) -> None:
        """Destroy the engine's Prolog module."""
        if self.module:
            self._call("py_destroy", self.module)
            self.module = ""

    def __enter__(self) -> "CoreEngine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- for a caller that routes detections and keeps state itself (epsparql.Engine)
    def discard_detections(self) -> None:
        """Forget the detections kept for :meth:`drain` (a caller that took
        them from the call that returned them needs no second copy)."""
        self._pending.clear()

    def state_text(self) -> str:
        """The state of :meth:`export_state` as uncompressed text."""
        return self._export_text()

    def load_state_text(self, text: str) -> None:
        """:meth:`import_state` of a :meth:`state_text` text."""
        self._import_text(text)

    def __del__(self) -> None:  # best effort; never raise from a finaliser
        try:
            if self.module and runtime_alive():
                self.close()
        except Exception:
            pass


__all__ = ["CoreEngine", "Columns", "Detection", "RuleError", "PrologError"]
