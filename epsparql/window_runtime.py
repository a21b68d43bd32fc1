"""The stream dialects' windowed queries inside an :class:`~epsparql.Engine`.

An engine registers a query of C-SPARQL, CQELS-QL, SPARQLstream,
Streaming SPARQL, LUPOSDATE or RSP-QL through ``prepare_windowed``
(epsparql/prepare.py) and hands it here: its windows, report policy and
relation-to-stream operator run in ``prolog/stream_window.pl`` inside the
engine's own Prolog module, next to the EP-SPARQL core's rules, with the
same background knowledge, reasoning and extension functions.
Semantics: docs/DIALECTS.md.

One crossing feeds both: a batch of stream triples goes, as janus data
(:mod:`epsparql.rdf.wire_rows`) with its streams as runs, to
``py_windows_columns/5`` (``prolog/bridge_windows.pl``), which pushes it
into the windows and into the core.  The windows' answers leave Prolog
through the core's columns sink under the head of their query, so the
engine hands them to their query as it hands the EP-SPARQL queries'
detections: one answer channel (:class:`~epsparql.query.Query`).
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .answer import Answer
from .answers import AnswerBatch, TermNodes
from .core.columns import Columns
from .core.long_text import LongText, release_all
from .core.runtime import PROLOG_DIR, PrologError, check, runtime
from .core.terms import from_json
from .query import Query, shape_of
from .rdf.wire import triple_batch_text
from .rdf.wire_rows import triple_batch_rows
from .rules.window_compile import template_bnodes

if TYPE_CHECKING:
    from .core import CoreEngine
    from .prepare import PreparedWindowQuery

__all__ = ["DEFAULT_STREAM", "UnboundedWindowWarning", "WindowQuery", "WindowRuntime", "stream_of"]

#: The stream of rows pushed without one.
DEFAULT_STREAM = "urn:epsparql:stream"

#: The Prolog modules of the window runtime (loaded once per process).
_MODULES = ("stream_relation.pl", "stream_window.pl", "stream_paths.pl", "bridge_windows.pl")
_BRIDGE = "bridge_windows"


class UnboundedWindowWarning(UserWarning):
    """A query keeps a window whose content grows with the stream ([ALL])."""


class WindowQuery(Query):
    """A registered query of a stream dialect: a :class:`~epsparql.Query`
    whose answers are :class:`~epsparql.Answer` with ``start`` the opening
    of the query's windows and ``end`` the evaluation instant
    (docs/DIALECTS.md, "Answers"); every evaluation's rows are answers (an
    ASK query's: ``ask`` bound to true or false)."""

    def __init__(self, engine: Any, name: str, prepared: "PreparedWindowQuery",
                 on_result: Callable[[Answer], None] | None, keep: bool | None = None) -> None:
        super().__init__(engine, name, prepared, on_result, keep)
        self.dialect: str = prepared.algebra.dialect
        names = list(self.compiled.variables)
        head = names + ["_:tpl:" + b for b in template_bnodes(self.template)] \
            if self.form == "CONSTRUCT" else names
        self._shape = shape_of(name, "CONSTRUCT" if self.form == "CONSTRUCT" else "SELECT",
                               names, head, self.template if self.form == "CONSTRUCT" else ())

    @property
    def variables(self) -> list[str]:
        """The variables an answer binds (SELECT's projection; for
        CONSTRUCT, those of the template)."""
        return list(self.compiled.variables)

    @property
    def rules(self) -> str:
        """The Prolog text this query compiled to (stream_window.pl clauses)."""
        return self.compiled.text

    @property
    def incremental(self) -> bool:
        """Are its aggregates kept per pane (updated per arrival, never
        re-scanned)?  See docs/DIALECTS.md, "Incremental aggregates"."""
        return self.compiled.incremental

    @property
    def span(self) -> float:
        return self.prepared.span

    def _deliver(self, chunk: Columns, nodes: TermNodes,
                 room: int | None = None) -> tuple[int, bool]:
        """An evaluation's answers (a run of this query's head): all kept."""
        if not len(chunk):
            return 0, False
        cols, tables = self._chunk_columns(chunk, nodes)
        return self._keep(AnswerBatch(self._shape, cols, tables, chunk.start, chunk.end, None),
                          room)


class WindowRuntime:
    """The windowed queries of one engine (its Prolog module, its core) and
    the calls that run them.  :meth:`push`, :meth:`advance` and
    :meth:`flush` also run the core (``core=True``) in the same crossing
    and return the chunks of answers and detections the call did not hand
    to the core's ``on_chunk``."""

    def __init__(self, core: "CoreEngine") -> None:
        rt = runtime()
        for m in _MODULES:
            rt.consult(PROLOG_DIR / m)
        self.core = core
        self.module = core.module
        self.queries: dict[int, WindowQuery] = {}
        #: rows pushed per stream IRI (to say where a query's rows went)
        self.stream_rows: dict[str, int] = {}

    def register(self, q: WindowQuery) -> None:
        """Start a compiled query (its clauses asserted into the module)."""
        self._call("sw_py_register", ("s", q.compiled.text))
        self.queries[q.compiled.qid] = q

    def push(self, rows: Sequence[tuple], core: bool) -> list[Columns]:
        """Rows ``(s, p, o, t1, t2[, stream])`` in time order (the reorder
        buffer released them), one crossing; a row without a stream is on
        :data:`DEFAULT_STREAM`."""
        if not rows:
            return []
        runs = [[g, len(list(run))] for g, run in itertools.groupby(rows, key=stream_of)]
        self._count(runs)
        part = [r[:5] for r in rows] if max(map(len, rows)) > 5 else list(rows)
        longs: list[LongText] = []
        data = triple_batch_rows(part, longs)
        if data is not None:
            try:
                return self._columns("push", [data, runs, core])
            finally:
                release_all(longs)
        text = LongText(triple_batch_text(part))
        try:
            return self._columns("push_text", [text, runs, core])
        finally:
            text.release()          # Prolog holds the object until atom-GC, not the text

    def push_data(self, data: list[Any], runs: list[list[Any]], core: bool) -> list[Columns]:
        """A batch already made janus data (:mod:`epsparql.rdf.wire_rows`)
        whose streams are the runs ``[iri, count]``, one crossing."""
        self._count(runs)
        return self._columns("push", [data, runs, core])

    def _count(self, runs: list[list[Any]]) -> None:
        counts = self.stream_rows
        for g, k in runs:
            counts[g] = counts.get(g, 0) + k

    def unfed(self) -> list[tuple[WindowQuery, list[str]]]:
        """The queries none of whose streams had a row, while rows were
        pushed (on other streams), with the streams each reads; a query
        with a window over every stream (or ``STREAM ?g``) is never unfed."""
        if not self.stream_rows:
            return []
        out = []
        for q in self.queries.values():
            streams = [w.stream for w in q.algebra.windows]
            if any(not isinstance(g, str) for g in streams):
                continue
            names = sorted({str(g) for g in streams})
            if names and not any(self.stream_rows.get(g) for g in names):
                out.append((q, names))
        return out

    def advance(self, t: float, core: bool) -> list[Columns]:
        """Evaluate every instant up to ``t`` (no row will end at or before it)."""
        return self._columns("advance", [t, core])

    def flush(self, core: bool) -> list[Columns]:
        """End of input: evaluate the remaining instants (docs/DIALECTS.md)."""
        return self._columns("flush", core)

    def clear(self) -> None:
        """Forget the stream (window contents, clocks, previous results)."""
        self._call("sw_py_clear")
        self.stream_rows.clear()

    def export(self) -> str:
        """The window state as text (one ground term: sw_export/2)."""
        reply = runtime().call("sw_py_export", self.module, module=_BRIDGE)
        if reply.startswith("{"):
            check(from_json(reply))
        return reply

    def restore(self, text: str) -> None:
        """Replace the window state by an exported one (read as data, checked
        against the registered queries before anything changes)."""
        reply = from_json(runtime().call("sw_py_import", self.module, ("s", text),
                                         module=_BRIDGE))
        if isinstance(reply, dict) and "error" in reply:
            raise ValueError(f"the snapshot's window state does not fit this engine (same "
                             f"queries, same order?): {reply['error'].strip()}")

    def stats(self) -> dict[str, Any]:
        """``content`` (distinct triples the windows hold), ``pending``
        (occurrences kept for windows in the past), ``late``, ``queries``,
        ``due`` (the next instant a query waits for; None: none)."""
        return check(from_json(runtime().call("sw_py_stats", self.module, module=_BRIDGE)))

    def close(self) -> None:
        """Remove the queries and their state from the module."""
        try:
            self._call("sw_py_destroy")
        except PrologError:
            pass
        self.queries.clear()

    def _columns(self, op: str, arg: Any) -> list[Columns]:
        return self.core.columns_entry(_BRIDGE, "py_windows_columns", op, arg)

    def _call(self, name: str, *args: Any) -> None:
        check(from_json(runtime().call(name, self.module, *args, module=_BRIDGE)))


def stream_of(row: Sequence[Any]) -> str:
    """The stream a row ``(s, p, o, start[, end[, stream]])`` is on."""
    return row[5] if len(row) > 5 and row[5] is not None else DEFAULT_STREAM
