"""Windowed continuous queries over named streams (the stream dialects).

    from epsparql.windowed import WindowEngine
    engine = WindowEngine()
    q = engine.register(cqels_text)                 # dialect detected, or dialect="cqels"
    engine.push(s, p, o, 5, stream="http://example.org/rfid")
    engine.push_many(rows, stream=...)              # (s, p, o, start[, end]) rows
    engine.push_quads(rows)                         # (s, p, o, stream, start[, end]) rows
    engine.advance(t); engine.flush()
    for a in q.results(): a.bindings, a.start, a.end

The queries run in the Prolog core (prolog/stream_window.pl) inside the
module of an :class:`epsparql.Engine`, with its background knowledge,
reasoning and extension functions; Python parses, compiles, batches the
rows (one crossing per batch) and decodes the answers.  Semantics:
docs/DIALECTS.md.  (This entry point is the dialects' own until they
join ``Engine.register`` and ``Engine.push(..., stream=)``.)
"""
from __future__ import annotations

import itertools
import json
import math
import warnings
import zlib
from datetime import datetime
from typing import Any, Callable, Iterable, Sequence

from rdflib.term import BNode, Literal, Node, URIRef

from .algebra.streams import ContinuousQuery, translate
from .core.event_engine import unpack_state
from .core.runtime import PROLOG_DIR, check, runtime
from .core.terms import from_json, quote_atom
from .answer import Answer
from .query_engine import Engine
from .times import seconds
from .language import QueryError
from .language.dialects import DialectQuery, parse_dialect
from .ordering import Reorderer
from .rdf.codec import decode, encode
from .rdf.wire import triple_batch_text
from .rules.window_compile import CompiledWindowQuery, compile_window_query

#: The stream of rows pushed without one.
DEFAULT_STREAM = "urn:epsparql:stream"

#: First bytes of a WindowEngine.snapshot() blob (then zlib-compressed: one
#: line of JSON for the reorder buffer, a newline, the window state's text).
SNAPSHOT_MAGIC = b"EPSW1"

_TERMS = (URIRef, Literal, BNode)
_TERM_TYPES = frozenset(_TERMS)


class UnboundedWindowWarning(UserWarning):
    """A query keeps a window whose content grows with the stream ([ALL])."""


class WindowQuery:
    """A registered windowed query."""

    def __init__(self, engine: "WindowEngine", name: str, text: str, algebra: ContinuousQuery,
                 compiled: CompiledWindowQuery,
                 on_result: Callable[[Answer], None] | None) -> None:
        self.engine = engine
        self.name = name
        self.text = text
        self.algebra = algebra
        self.compiled = compiled
        self.dialect = algebra.dialect
        self.form = algebra.form
        self.template = algebra.template
        self.on_result = on_result
        self._answers: list[Answer] = []

    @property
    def variables(self) -> list[str]:
        return list(self.compiled.variables)

    @property
    def incremental(self) -> bool:
        """Are its aggregates kept per pane (updated per arrival, never
        re-scanned)?  See docs/DIALECTS.md, "Incremental aggregates"."""
        return self.compiled.incremental

    def results(self) -> list[Answer]:
        """Answers found since the last call (drains), in order."""
        out, self._answers = self._answers, []
        return out

    def _deliver(self, values: list[Any], start: float, end: float) -> None:
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
        self._answers.append(ans)
        if self.on_result is not None:
            self.on_result(ans)

    def __repr__(self) -> str:
        return f"<WindowQuery {self.name} {self.dialect} {self.form} {self.variables}>"


class WindowEngine:
    """Windowed queries of the stream dialects over named streams.

    ``engine``: the :class:`epsparql.Engine` whose Prolog module, background
    knowledge and functions to use (a new one by default, made with
    ``engine_options``); ``allowed_lateness`` / ``on_late``: the reorder
    buffer, as for Engine; ``incremental=False`` evaluates every query by
    reading its windows at each instant, also those whose aggregates could
    be kept per pane (docs/DIALECTS.md, "Incremental aggregates")."""

    def __init__(self, *, engine: Engine | None = None, allowed_lateness: float = 0.0,
                 on_late: Callable[[tuple, str], None] | None = None, batch_size: int = 5000,
                 incremental: bool = True, **engine_options: Any) -> None:
        self.engine = engine if engine is not None else Engine(**engine_options)
        rt = runtime()
        for module in ("stream_relation.pl", "stream_window.pl", "stream_paths.pl"):
            rt.consult(PROLOG_DIR / module)
        self.module = self.engine.core.module
        self.batch_size = batch_size
        self.incremental = incremental
        self._order = Reorderer(allowed_lateness, on_late)
        self._queries: dict[int, WindowQuery] = {}
        self._names: dict[str, WindowQuery] = {}
        self._ids = itertools.count(1)
        #: What went wrong since the engine started, oldest first, as
        #: (message, context): an exception in a query's evaluation or in
        #: matching an arrival (context: the instant or the triple), and an
        #: exception raised by a Python extension function (context: its
        #: arguments).  The engine goes on; a function that raises makes its
        #: expression a SPARQL error.
        self.errors: list[tuple[str, str]] = []
        from . import functions
        self._seen_function_errors = functions.error_count

    # -- queries -------------------------------------------------------------
    def register(self, text: str, dialect: str | None = None,
                 on_result: Callable[[Answer], None] | None = None,
                 name: str | None = None) -> WindowQuery:
        """Parse (the dialect detected unless given), compile and start a
        windowed query.  Raises QuerySyntaxError/QueryError with line and
        column."""
        ast = parse_dialect(text, dialect=dialect, base=self.engine.base)
        return self.register_query(ast, text, on_result=on_result, name=name)

    def register_query(self, ast: DialectQuery, text: str = "",
                       on_result: Callable[[Answer], None] | None = None,
                       name: str | None = None) -> WindowQuery:
        """Compile and start an already parsed (or built) dialect query."""
        try:
            alg = translate(ast)
            qid = next(self._ids)
            compiled = compile_window_query(
                alg, qid, module=self.module, encode=encode,
                is_function=self.engine.has_function,
                reasoning="none" if self.engine.reasoning == "none" else "rdfs",
                panes=self.incremental)
        except QueryError as e:
            raise e.with_source(text) if text else e
        qname = name or ast.name or f"w{qid}"
        if qname in self._names:
            raise ValueError(f"a query named {qname!r} is registered already")
        if any(w.window.kind == "all" for w in alg.windows):
            warnings.warn(UnboundedWindowWarning(
                f"query {qname} has an [ALL] window: its content grows with the stream"),
                stacklevel=2)
        self._call("sw_py_register", ("s", compiled.text))
        q = WindowQuery(self, qname, text, alg, compiled, on_result)
        self._queries[qid] = q
        self._names[qname] = q
        return q

    @property
    def queries(self) -> list[WindowQuery]:
        return list(self._queries.values())

    def load_background(self, source: Any, format: str | None = None,
                        graph: str | None = None) -> int:
        """Background knowledge, as :meth:`epsparql.Engine.load_background`."""
        return self.engine.load_background(source, format=format, graph=graph)

    # -- the stream ------------------------------------------------------------
    def push(self, s: Node, p: Node, o: Node, start: float | datetime,
             end: float | datetime | None = None, *, stream: str | None = None) -> None:
        """Push one triple occurring over [start, end] on ``stream``."""
        self.push_many([(s, p, o, start, end)], stream=stream)

    def push_many(self, rows: Iterable[Sequence[Any]], *, stream: str | None = None) -> None:
        """Push ``(s, p, o, start[, end])`` rows on one stream (default
        :data:`DEFAULT_STREAM`), one crossing per ``batch_size`` rows."""
        g = str(stream) if stream is not None else DEFAULT_STREAM
        self.push_quads((r[0], r[1], r[2], g, *r[3:]) for r in rows)

    def push_quads(self, rows: Iterable[Sequence[Any]]) -> None:
        """Push ``(s, p, o, stream, start[, end])`` rows (stream an IRI or
        None for the default stream)."""
        it = iter(rows)
        base = 0
        while True:
            chunk = list(itertools.islice(it, self.batch_size))
            if not chunk:
                break
            norm = [_row(r, base + i) for i, r in enumerate(chunk)]
            self._feed(self._order.add(norm))
            base += len(chunk)

    def advance(self, t: float | datetime) -> None:
        """No more rows will end at or before ``t``: evaluate the instants up to it."""
        self._feed(self._order.advance(seconds(t)))
        wm = self._order.watermark
        if math.isfinite(wm):
            self._call("sw_py_advance", repr(wm))

    def flush(self) -> None:
        """End of input: release everything, evaluate the remaining instants."""
        self._feed(self._order.flush())
        self._call("sw_py_flush")

    @property
    def late(self) -> int:
        return self._order.late

    @property
    def late_rows(self) -> list[tuple]:
        return self._order.late_rows

    def stats(self) -> dict[str, int]:
        """content (distinct triples held by all windows), pending (kept
        for past windows), late, queries."""
        return check(from_json(runtime().call("sw_py_stats", self.module)))

    # -- snapshots -------------------------------------------------------------
    def snapshot(self) -> bytes:
        """The stream state, as compact bytes: every window's content
        (pending occurrences and per-pane aggregates included), each
        query's progress (its next instants, its previous result for
        ISTREAM/DSTREAM), the clock, and the reorder buffer.  Not in it:
        queries, functions, background, answers not yet taken.
        ``other.restore(engine.snapshot())``, where ``other`` has the same
        queries registered in the same order, continues exactly as
        ``engine`` would.  The Prolog part is prolog/stream_window.pl's
        sw_export/2."""
        reply = runtime().call("sw_py_export", self.module)
        if reply.startswith("{"):
            check(from_json(reply))
        head = json.dumps({"v": 1, "order": self._order.export_state(_node_json)},
                          separators=(",", ":"))
        return SNAPSHOT_MAGIC + zlib.compress(head.encode("utf-8") + b"\n" + reply.encode("utf-8"), 1)

    def restore(self, state: bytes) -> None:
        """Replace the stream state by a snapshot's (see :meth:`snapshot`).
        The snapshot is read as data, never run; a malformed one, or one of
        an engine with other queries, raises ValueError and changes
        nothing.  Answers not yet taken are dropped."""
        payload = unpack_state(state, SNAPSHOT_MAGIC, "WindowEngine snapshot")
        head, sep, text = payload.partition(b"\n")
        try:
            if not sep:
                raise ValueError("no window state")
            py = json.loads(head.decode("utf-8"))
            if not isinstance(py, dict) or py.get("v") != 1:
                raise ValueError("unknown version")
            order = self._order.restored(py.get("order"), _node_from_json)
            text_s = text.decode("utf-8")
        except (UnicodeDecodeError, ValueError) as e:
            raise ValueError(f"malformed WindowEngine snapshot: {e}") from None
        reply = from_json(runtime().call("sw_py_import", self.module, ("s", text_s)))
        if isinstance(reply, dict) and "error" in reply:
            raise ValueError(f"this snapshot does not fit this engine (same queries, same order?): "
                             f"{reply['error'].strip()}")
        self._order = order
        for q in self._queries.values():
            q._answers = []

    def clear_state(self) -> None:
        """Forget the stream (window contents, clocks, results); keep the queries."""
        self._call("sw_py_clear")
        self._order = self._order.cleared()
        for q in self._queries.values():
            q._answers = []

    def _feed(self, ready: list[tuple]) -> None:
        if not ready:
            return
        parts: list[str] = []
        for g, run in itertools.groupby(ready, key=lambda r: r[5]):
            parts.append(f"s({quote_atom(g)}).\n")
            parts.append(triple_batch_text(r[:5] for r in run) + ".\n")
        self._call("sw_py_push", ("s", "".join(parts)))

    def _call(self, name: str, *args: Any) -> None:
        from . import functions
        self._seen_function_errors = functions.error_count
        try:
            reply = check(from_json(runtime().call(name, self.module, *args)))
        finally:
            new = functions.error_count - self._seen_function_errors
            for iri, fargs, exc in functions.errors[-new:] if new > 0 else ():
                self.errors.append((f"extension function <{iri}> raised {type(exc).__name__}: {exc}",
                                    repr(fargs)))
            self._seen_function_errors = functions.error_count
        for qid, values, start, end in reply.get("a", ()):
            q = self._queries.get(qid)
            if q is not None:
                q._deliver(values, start, end)
        for e in reply.get("e", ()):
            self.errors.append((e["message"].strip(), e["context"]))

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> "WindowEngine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _node_json(node: Node) -> Any:
    """An RDF term as JSON data for snapshots (as Engine's): an IRI as its
    string, a blank node as ["b", id], a literal as ["l", lexical,
    datatype, lang]."""
    if isinstance(node, URIRef):
        return str(node)
    if isinstance(node, Literal):
        dt = node.datatype
        return ["l", str(node), None if dt is None else str(dt), node.language]
    if isinstance(node, BNode):
        return ["b", str(node)]
    raise TypeError(f"not an RDF term: {node!r}")


def _node_from_json(x: Any) -> Node:
    if type(x) is str:
        return URIRef(x)
    if type(x) is list and len(x) == 2 and x[0] == "b" and type(x[1]) is str:
        return BNode(x[1])
    if type(x) is list and len(x) == 4 and x[0] == "l" and type(x[1]) is str \
            and (x[2] is None or type(x[2]) is str) and (x[3] is None or type(x[3]) is str) \
            and not (x[2] is not None and x[3] is not None):
        return Literal(x[1], lang=x[3], datatype=None if x[2] is None else URIRef(x[2]),
                       normalize=False)
    raise ValueError(f"not an encoded RDF term: {str(x)[:100]!r}")


def _row(r: Sequence[Any], i: int) -> tuple:
    """A validated row ``(s, p, o, start, end, stream)``.  The common case
    (exact rdflib term types, int/float times, a stream given) takes the
    first branch; anything else is checked and converted by the general
    one."""
    n = len(r)
    if n == 5:
        s, p, o, g, t1 = r
        t2 = t1
    elif n == 6:
        s, p, o, g, t1, t2 = r
        if t2 is None:
            t2 = t1
    else:
        raise ValueError(f"row {i}: expected (s, p, o, stream, start[, end]), got {r!r}")
    tt1, tt2 = type(t1), type(t2)
    if (type(s) in _TERM_TYPES and type(p) in _TERM_TYPES and type(o) in _TERM_TYPES
            and type(g) is str
            and (tt1 is int or (tt1 is float and t1 - t1 == 0.0))
            and (tt2 is int or (tt2 is float and t2 - t2 == 0.0))
            and t1 <= t2):
        return (s, p, o, t1, t2, g)
    for x in (s, p, o):
        if not isinstance(x, _TERMS):
            raise TypeError(f"row {i}: a triple position must be an rdflib URIRef, Literal "
                            f"or BNode, got {x!r}")
    g = DEFAULT_STREAM if g is None else str(g)
    try:
        t1, t2 = seconds(t1), seconds(t2)
    except (TypeError, ValueError) as e:
        raise type(e)(f"row {i}: {e}") from None
    if t2 < t1:
        raise ValueError(f"row {i}: end {t2!r} is before start {t1!r}")
    return (s, p, o, t1, t2, g)
