"""The stream dialects' windowed queries inside an :class:`~epsparql.Engine`.

An engine registers a query of C-SPARQL, CQELS-QL, SPARQLstream,
Streaming SPARQL, LUPOSDATE or RSP-QL through ``prepare_windowed``
(epsparql/prepare.py) and hands it here: its windows, report policy and
relation-to-stream operator run in ``prolog/stream_window.pl`` inside the
engine's own Prolog module, next to the EP-SPARQL core's rules, with the
same background knowledge, reasoning and extension functions.  Python
batches the rows (one crossing per batch, rows grouped by stream), and
decodes the answers each call returns.  Semantics: docs/DIALECTS.md.

The bridge entries are ``bridge_python:sw_py_*`` (defined in
stream_window.pl as multifile clauses of the bridge module), called
through the runtime like every other entry: text in, JSON out.
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Callable, Sequence

from rdflib.term import BNode, Literal, Node

from .answer import Answer
from .core.runtime import PROLOG_DIR, PrologError, check, runtime
from .core.terms import from_json, quote_atom
from .rdf.codec import decode
from .rdf.wire import triple_batch_text

if TYPE_CHECKING:
    from .prepare import PreparedWindowQuery

__all__ = ["DEFAULT_STREAM", "UnboundedWindowWarning", "WindowQuery", "WindowRuntime"]

#: The stream of rows pushed without one.
DEFAULT_STREAM = "urn:epsparql:stream"

#: The Prolog modules of the window runtime (loaded once per process).
_MODULES = ("stream_relation.pl", "stream_window.pl", "stream_paths.pl")


class UnboundedWindowWarning(UserWarning):
    """A query keeps a window whose content grows with the stream ([ALL])."""


class WindowQuery:
    """A registered query of a stream dialect.  Its public face is
    :class:`~epsparql.Query`'s: ``name``, ``text``, ``form``,
    ``variables``, ``prepared`` (every stage), ``algebra``, ``results()``,
    ``to_dataframe()``, ``on_result``; answers are
    :class:`~epsparql.Answer` with ``start`` the opening of the query's
    windows and ``end`` the evaluation instant (docs/DIALECTS.md,
    "Answers")."""

    def __init__(self, engine: Any, name: str, prepared: "PreparedWindowQuery",
                 on_result: Callable[[Answer], None] | None) -> None:
        alg = prepared.algebra
        self.engine = engine
        self.name = name
        #: every stage: syntax tree, algebra, compiled Prolog (epsparql/prepare.py)
        self.prepared = prepared
        self.text = prepared.text
        self.compiled = prepared.compiled
        self.dialect: str = alg.dialect
        self.form: str = alg.form
        self.template = alg.template
        self.on_result = on_result
        self._answers: list[Answer] = []

    @property
    def variables(self) -> list[str]:
        """The variables an answer binds (SELECT's projection; for
        CONSTRUCT, those of the template)."""
        return list(self.compiled.variables)

    @property
    def algebra(self) -> Any:
        """The query's algebra: windows, policy, R2S around a SPARQL relation."""
        return self.prepared.algebra

    @property
    def prefixes(self) -> dict[str, str]:
        return self.prepared.prefixes

    @property
    def rules(self) -> str:
        """The Prolog text this query compiled to (stream_window.pl clauses)."""
        return self.compiled.text

    @property
    def incremental(self) -> bool:
        """Are its aggregates kept per pane (updated per arrival, never
        re-scanned)?  See docs/DIALECTS.md, "Incremental aggregates"."""
        return self.compiled.incremental

    def results(self) -> list[Answer]:
        """Answers found since the last call (drains), in order."""
        out, self._answers = self._answers, []
        return out

    def to_dataframe(self, **options: Any):
        """The answers found since the last call as a pandas DataFrame
        (drains; options as for :func:`epsparql.io.to_dataframe`)."""
        from .io.dataframe import to_dataframe
        return to_dataframe(self.results(), variables=self.variables, **options)

    def _answer(self, values: list[Any], start: float, end: float) -> Answer:
        """The answer one evaluation row of this query makes."""
        row = {}
        for name, v in zip(self.compiled.variables, values):
            if v is not None:
                row[name] = decode(v)
        if self.form == "CONSTRUCT":
            triples = []
            fresh: dict[str, BNode] = {}
            for t in self.template:
                pos = []
                for x in (t.s, t.p, t.o):
                    if type(x).__name__ == "Var":
                        pos.append(row.get(x.name))
                    elif isinstance(x, BNode):
                        pos.append(fresh.setdefault(str(x), BNode()))
                    else:
                        pos.append(x)
                if all(p is not None for p in pos) and not isinstance(pos[1], (Literal, BNode)) \
                        and not isinstance(pos[0], Literal):
                    triples.append(tuple(pos))
            ans = Answer(row, start, end, tuple(triples), self.name)
        elif self.form == "ASK":
            ans = Answer({"ask": row.get("ask")}, start, end, query=self.name)
        else:
            ans = Answer(row, start, end, query=self.name)
        return ans

    def _add(self, ans: Answer) -> None:
        """Deliver an answer: kept for results(), passed to on_result."""
        self._answers.append(ans)
        if self.on_result is not None:
            self.on_result(ans)

    # -- snapshots (the window state itself is the runtime's) ------------------
    def _state(self) -> dict:
        return {"name": self.name, "head": self.compiled.head}

    def _restored(self, data: Any) -> tuple[set, bool]:
        if not isinstance(data, dict) or data.get("name") != self.name \
                or data.get("head") != self.compiled.head:
            got = (data.get("name"), data.get("head")) if isinstance(data, dict) else data
            raise ValueError(f"the snapshot's query {str(got)[:100]} is not this engine's "
                             f"{(self.name, self.compiled.head)}: register the same queries in "
                             f"the same order before restoring")
        return set(), False

    def __repr__(self) -> str:
        return f"<WindowQuery {self.name} {self.dialect} {self.form} {self.variables}>"


class WindowRuntime:
    """The windowed queries of one engine module and the calls that run them.

    Every call returns the answers and errors it produced: errors go to
    :attr:`errors` as ``(message, context)``, then each answer to
    ``deliver(query, answer)`` (the engine's: it counts answers against its
    cap, which may stop the delivery by raising) or else straight to its
    query."""

    def __init__(self, module: str,
                 deliver: Callable[[WindowQuery, Answer], None] | None = None) -> None:
        rt = runtime()
        for m in _MODULES:
            rt.consult(PROLOG_DIR / m)
        self.module = module
        self.deliver = deliver
        self.queries: dict[int, WindowQuery] = {}
        self.errors: list[tuple[str, str]] = []

    def register(self, q: WindowQuery) -> None:
        """Start a compiled query (its clauses asserted into the module)."""
        self._call("sw_py_register", ("s", q.compiled.text))
        self.queries[q.compiled.qid] = q

    def push(self, rows: Sequence[tuple]) -> None:
        """Rows ``(s, p, o, t1, t2[, stream])`` in time order (the reorder
        buffer released them), one crossing; a row without a stream is on
        :data:`DEFAULT_STREAM`."""
        if not rows:
            return
        parts: list[str] = []
        for g, run in itertools.groupby(rows, key=_stream_of):
            parts.append(f"s({quote_atom(g)}).\n")
            parts.append(triple_batch_text(r[:5] for r in run) + ".\n")
        self._call("sw_py_push", ("s", "".join(parts)))

    def advance(self, t: float) -> None:
        """Evaluate every instant up to ``t`` (no row will end at or before it)."""
        self._call("sw_py_advance", repr(t))

    def flush(self) -> None:
        """End of input: evaluate the remaining instants (docs/DIALECTS.md)."""
        self._call("sw_py_flush")

    def clear(self) -> None:
        """Forget the stream (window contents, clocks, previous results)."""
        self._call("sw_py_clear")
        for q in self.queries.values():
            q._answers = []

    def export(self) -> str:
        """The window state as text (one ground term: sw_export/2)."""
        reply = runtime().call("sw_py_export", self.module)
        if reply.startswith("{"):
            check(from_json(reply))
        return reply

    def restore(self, text: str) -> None:
        """Replace the window state by an exported one (read as data, checked
        against the registered queries before anything changes)."""
        reply = from_json(runtime().call("sw_py_import", self.module, ("s", text)))
        if isinstance(reply, dict) and "error" in reply:
            raise ValueError(f"the snapshot's window state does not fit this engine (same "
                             f"queries, same order?): {reply['error'].strip()}")
        for q in self.queries.values():
            q._answers = []

    def stats(self) -> dict[str, Any]:
        """``content`` (distinct triples the windows hold), ``pending``
        (occurrences kept for windows in the past), ``late``, ``queries``,
        ``due`` (the next instant a query waits for; None: none)."""
        return check(from_json(runtime().call("sw_py_stats", self.module)))

    def close(self) -> None:
        """Remove the queries and their state from the module."""
        try:
            check(from_json(runtime().call("sw_py_destroy", self.module)))
        except PrologError:
            pass
        self.queries.clear()

    def _call(self, name: str, *args: Any) -> None:
        reply = check(from_json(runtime().call(name, self.module, *args)))
        for e in reply.get("e", ()):
            self.errors.append((e["message"].strip(), e["context"]))
        queries = self.queries
        deliver = self.deliver
        for qid, values, start, end in reply.get("a", ()):
            q = queries.get(qid)
            if q is not None:
                ans = q._answer(values, start, end)
                if deliver is None:
                    q._add(ans)
                else:
                    deliver(q, ans)


def _stream_of(row: tuple) -> str:
    return row[5] if len(row) > 5 else DEFAULT_STREAM

