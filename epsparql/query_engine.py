"""The EP-SPARQL engine: register continuous queries, push triples, get answers.

    from epsparql import Engine
    engine = Engine()
    q = engine.register(query_text, on_result=print)
    engine.push(s, p, o, start, end=None)      # rdflib terms; seconds or datetime
    engine.push_many(rows)                     # one Prolog crossing per batch
    engine.advance(t); engine.flush()          # close instants up to t / all
    answers = q.results()                      # drains: a sequence of Answer
    table = q.results(format="arrow")          # or as a pyarrow Table

Queries of the stream dialects (C-SPARQL, CQELS-QL, SPARQLstream,
Streaming SPARQL, LUPOSDATE, RSP-QL; detected, or ``dialect=``) register
the same way and read named streams: ``push(..., stream=IRI)``, rows
``(s, p, o, start, end, stream)``; a row without a stream is on
:data:`DEFAULT_STREAM`.  EP-SPARQL queries see every stream.  Their
windows run in the same Prolog module (epsparql/window_runtime.py,
prolog/stream_window.pl); docs/DIALECTS.md.

Each engine owns one module of the process's SWI-Prolog: its queries,
pending goals and answers are its own.  The stream is a set of triple
occurrences: pushing the same triple over the same interval twice counts
once, and a CONSTRUCT rule re-deriving a triple that is already there adds
nothing (this is what makes the Q-closure finite for rules that derive
what they consume).
"""
from __future__ import annotations

import itertools
import json
import math
import warnings
import zlib
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Callable, Iterable, Sequence

from rdflib.term import BNode, Literal, Node, URIRef

from .algebra.partition import NO_SCHEMA, Plan, Schema, plan
from .algebra.window_partition import window_plan
from .algebra.secret import WindowSettings, pragma_at
from .answer import Answer
from .answers import TermNodes
from .core import CoreEngine, Compound
from .core.columns import Columns
from .core.long_text import LongText, release_all
from .core.event_engine import unpack_state
from .core.rule_graph import RuleGraph
from .core.runtime import PROLOG_DIR, check, runtime, runtime_alive
from .core.terms import from_json
from .ordering import Reorderer
from .rdf.codec import decode
from .rdf.json_terms import node_from_json, node_to_json
from .rdf.ntriples import absolute_iri_problem
from .rdf.wire import term_text, triple_batch_text
from .rdf.wire_rows import triple_batch_rows
from .ep_query import EPQuery
from .prepare import EP_SPARQL, dialect_of, prepare, prepare_windowed
from .query import Query
from .times import seconds
from .language.dialects import DialectQuery
from .language.errors import QueryWarning
from .window_runtime import DEFAULT_STREAM, UnboundedWindowWarning, WindowQuery, WindowRuntime

__all__ = ["Engine", "Query", "EPQuery", "WindowQuery", "Answer", "EngineError", "LimitError",
           "StateLimitError", "AnswerLimitError", "StreamEndedError", "UnboundedStateWarning",
           "Source",
           "DEFAULT_STREAM", "BACKGROUND", "SNAPSHOT_MAGIC"]


#: First bytes of an Engine.snapshot() blob (then zlib-compressed: one line
#: of JSON for the Python side, a newline, the core's state text).
SNAPSHOT_MAGIC = b"EPSE1"


#: The background graph triples go to when no graph is named.
BACKGROUND = "urn:epsparql:background"


def _unbounded(p: Any) -> bool:
    """Does the pattern store partial matches with no window above them?
    (Iterative: chains of BINDs or OPTIONALs can be thousands deep.)"""
    from .algebra.nodes import (BGP, Background, EqJoin, EqLeftJoin, Join, LeftJoin,
                                SeqJoin, SeqRightJoin, Union_, Window)
    stack = [p]
    while stack:
        p = stack.pop()
        if isinstance(p, Window):
            continue
        if isinstance(p, BGP):
            if len(p.triples) > 1:
                return True
        elif isinstance(p, (Join, LeftJoin)) and isinstance(p.right, Background):
            stack.append(p.left)            # a background join stores nothing
        elif isinstance(p, Join) and isinstance(p.left, Background):
            stack.append(p.right)
        elif isinstance(p, (Join, SeqJoin, EqJoin, LeftJoin, SeqRightJoin, EqLeftJoin)):
            return True
        elif isinstance(p, Union_):
            stack += (p.right, p.left)
        else:
            inner = getattr(p, "pattern", None)
            if inner is not None:
                stack.append(inner)
    return False


_TERM_TYPES = (URIRef, Literal, BNode)


def _plain(t: float | int) -> float | int:
    """A time as an exact int or float (numpy and other subclasses converted:
    their repr is not Prolog number syntax)."""
    tp = type(t)
    if tp is int or tp is float:
        return t
    return float(t) if isinstance(t, float) else int(t)


@dataclass(frozen=True)
class EngineError:
    """An error inside a rule: the queries it concerns, a message, and what
    triggered it (the event ``event(Term, [Start, End])`` for rule errors,
    the arguments for extension functions); for errors of the core, the
    error's ``kind`` (``type_error``, ``event_loop``, ...) and the node
    of the rule graph it was raised in (``Engine.rule_graph()``)."""

    queries: list[str]
    message: str
    context: Any
    function: str | None = None
    exception: BaseException | None = None
    kind: str | None = None
    node: int | None = None

    def __str__(self) -> str:
        where = ", ".join(self.queries) or "a rule"
        return f"{where}: {self.message} (on {self.context})"


class UnboundedStateWarning(UserWarning):
    """A query keeps partial matches forever (no getDURATION() bound)."""


class LimitError(RuntimeError):
    """A cap set on the engine was reached: ``limit`` names it
    (``"max_goals"``, ``"max_answers"``), ``cap`` is its value and
    ``value`` what was reached.  The engine stopped at the end of the batch
    that crossed it; the answers found until then were delivered."""

    def __init__(self, message: str, limit: str, cap: int, value: int) -> None:
        super().__init__(message)
        self.limit, self.cap, self.value = limit, cap, value


class StateLimitError(LimitError):
    """The engine's stored partial matches exceeded ``max_goals``."""


class AnswerLimitError(LimitError):
    """The engine delivered ``max_answers`` answers (the first ones; the
    rest of the batch's answers were dropped)."""


class StreamEndedError(RuntimeError):
    """Rows or a heartbeat after :meth:`Engine.flush`: flush ends the
    stream (every instant is closed, every window evaluated for the last
    time), so nothing can come after it.  ``advance(t)`` closes instants
    without ending the stream; ``clear_state()`` starts a new one."""


class Source:
    """One input of an engine, with its own watermark (see Engine.source)."""

    def __init__(self, engine: "Engine", name: str) -> None:
        self.engine = engine
        self.name = name

    def push(self, s: Node, p: Node, o: Node, start: float | datetime,
             end: float | datetime | None = None) -> None:
        self.engine.push(s, p, o, start, end, source=self.name)

    def push_many(self, rows: Iterable[Sequence[Any]]) -> None:
        self.engine.push_many(rows, source=self.name)

    def advance(self, t: float | datetime) -> None:
        self.engine.advance(t, source=self.name)


class Engine:
    """An EP-SPARQL engine over one Prolog core engine.

    Options: ``base`` (an absolute IRI, for bare names and relative IRIs of
    the queries), ``reasoning`` (``"rdfs"``, ``"owlrl"``, ``"none"``),
    ``allowed_lateness`` (seconds a row may come out of order and still be
    processed) with ``on_late(row, source)`` for the later ones,
    ``max_goals`` and ``max_answers`` (caps: :class:`StateLimitError`,
    :class:`AnswerLimitError`), ``on_answers`` (called as answers come,
    during a push), ``justify`` (record why each answer was detected),
    ``incremental_windows`` (the stream dialects' aggregates kept per pane),
    ``window_semantics`` (``"engine"``: each stream dialect as its reference
    engine answers; ``"cql"``: the CQL reading of every dialect;
    ``"csrbench"``: as CSRBench's oracle reads them; docs/DIALECTS.md,
    "Window semantics"; ``register`` can set it per query),
    ``window_t0`` (seconds, or ``"first"``: the first event's time: the
    origin t0 of the windows [t0 + k·β, t0 + k·β + ω); None, the default, is
    each dialect's own), ``window_report`` (``"close"``, ``"change"``,
    ``"periodic(5s)"``, each maybe with ``",non-empty"``),
    ``window_content`` (``"[o,c)"`` or ``"(o,c]"``), ``window_tick``
    (``"time"`` or ``"tuple"``): the SECRET parameters of every windowed
    query, over its ``#pragma window`` and its dialect's defaults
    (docs/DIALECTS.md, "The SECRET parameters"; ``register`` can set each
    per query),
    ``gc_every``, ``gc_period``, ``batch_size``, ``max_depth`` (the core's,
    docs/CORE.md).

    A cap stops the engine where it is hit: ``max_goals`` after the batch
    that crosses it, ``max_answers`` at the answer after the last allowed
    one, inside its batch (the rest of that batch is not processed; the
    engine's state is then that of a batch cut short: :meth:`clear_state`
    or :meth:`restore` before going on).  Either way the answers delivered
    before are there to take with ``results()``.  Windowed queries' answers
    count toward ``max_answers`` too, and come the same way, chunk by
    chunk during the call that finds them.  :meth:`flush` ends the stream
    (:class:`StreamEndedError` after it)."""

    def __init__(self, *, base: str | None = None, reasoning: str = "rdfs",
                 allowed_lateness: float = 0.0,
                 on_late: Callable[[tuple, str], None] | None = None,
                 max_goals: int | None = None, gc_every: int = 100,
                 gc_period: float | None = None, batch_size: int = 5000,
                 max_depth: int = 200, justify: bool = False,
                 incremental_windows: bool = True,
                 window_semantics: str | None = None,
                 window_t0: "Fraction | int | float | str | None" = None,
                 window_report: Any = None, window_content: Any = None,
                 window_tick: Any = None,
                 max_answers: int | None = None,
                 on_answers: Callable[[], None] | None = None) -> None:
        if reasoning not in ("rdfs", "owlrl", "none"):
            raise ValueError(f"reasoning must be 'rdfs', 'owlrl' or 'none', got {reasoning!r}")
        if base is not None:
            problem = absolute_iri_problem(base)
            if problem is not None:
                raise ValueError(f"base must be an absolute IRI, got {base!r}: {problem}")
        self.base = base
        self.reasoning = reasoning
        for cap, v in (("max_goals", max_goals), ("max_answers", max_answers)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise ValueError(f"{cap} must be a whole number >= 0 or None, got {v!r}")
        self._order = Reorderer(allowed_lateness, on_late)
        self.max_goals = max_goals
        #: stop once this many answers were delivered (all queries together)
        self.max_answers = max_answers
        #: answers delivered so far (all queries; DISTINCT and ASK repeats not counted)
        self.answers = 0
        self._function_errors: list[tuple] = []
        from . import functions
        self._seen_function_errors = functions.error_count
        rt = runtime()
        for module in ("sparql_eval.pl", "sparql_construct.pl", "sparql_background.pl"):
            rt.consult(PROLOG_DIR / module)
        self.core = CoreEngine(gc_every=gc_every, gc_period=gc_period,
                               batch_size=batch_size, max_depth=max_depth)
        # set semantics: the core removes repeats of what it feeds back, each
        # query those of its answers (Query._deliver, on the columns)
        self.core.set_option("dedup", "listened")
        # answers are taken chunk by chunk during the core call that makes
        # them (_take), so a batch never holds all of its answers
        self.core.on_chunk = self._take
        #: called (no arguments) whenever answers were delivered during a
        #: push, flush or advance, as they come (after each chunk of up to
        #: 4,096 detections): take them with results() to write them out
        #: without holding a whole batch's answers
        self.on_answers = on_answers
        if justify:            # record why every answer was detected (epsparql.explain.justification)
            self.core.set_option("justify", True)
        self._background_call("mode", "none" if reasoning == "none" else "rdfs")
        self._queries: dict[str, Query] = {}
        #: the query each answer head goes to (EP-SPARQL and windowed alike)
        self._by_head: dict[str, Query] = {}
        self._nodes: TermNodes | None = None
        self._next_qid = 1
        #: the stream dialects' windows (created with the first windowed query)
        self._windows: WindowRuntime | None = None
        self.incremental_windows = incremental_windows
        #: the window parameters asked for every windowed query (None: not said)
        self.window_settings = WindowSettings.of(window_semantics, window_t0, window_report,
                                                 window_content, window_tick)
        self.window_semantics = self.window_settings.semantics or "engine"
        #: the t0 of the windows (None: each dialect's default)
        self.window_t0 = self.window_settings.t0
        self._core_fed = False          # has the core rules that read the stream?
        self._ended = False             # flush() ended the stream

    # -- queries ---------------------------------------------------------------
    def register(self, text: "str | DialectQuery", on_result: Callable[[Answer], None] | None = None,
                 name: str | None = None, *, dialect: str | None = None,
                 keep: bool | None = None, window_semantics: str | None = None,
                 window_t0: "Fraction | int | float | str | None" = None,
                 window_report: Any = None, window_content: Any = None,
                 window_tick: Any = None) -> Query:
        """Parse, compile and start a continuous query.

        Its answers are kept for :meth:`Query.results` unless it has an
        ``on_result`` callback: then each goes to the callback and is not
        kept (a program that only listens runs in bounded memory), unless
        ``keep=True`` asks for both.

        The language is detected: EP-SPARQL, or a stream dialect when the
        text has its constructs (``dialect=`` forces one of ``ep-sparql``,
        ``csparql``, ``cqels``, ``sparqlstream``, ``streaming-sparql``,
        ``luposdate``, ``rspql``); a dialect query becomes a
        :class:`~epsparql.window_runtime.WindowQuery` (docs/DIALECTS.md),
        an EP-SPARQL one a :class:`~epsparql.ep_query.EPQuery`: both are
        :class:`~epsparql.Query`, with the same results API.
        ``text`` may also be a parsed dialect query
        (:class:`~epsparql.language.dialects.DialectQuery`, e.g. built in
        code); ``window_semantics``, ``window_t0``, ``window_report``,
        ``window_content`` and ``window_tick`` override the engine's for
        this query (and the query's pragma).
        Raises QuerySyntaxError (with line and column) or QueryError."""
        if not isinstance(text, str) or dialect_of(text, dialect) != EP_SPARQL:
            settings = WindowSettings.of(window_semantics, window_t0, window_report,
                                         window_content, window_tick).over(self.window_settings)
            return self._register_windowed(text, on_result, name, dialect, keep, settings)
        at = pragma_at(text)
        if at is not None:
            warnings.warn(QueryWarning(
                "a '#pragma window' sets the windows of a stream dialect's query; this is an "
                "EP-SPARQL query (no windows), so the pragma has no effect", *at), stacklevel=2)
        qid = self._next_qid
        name = name or f"q{qid}"
        if name in self._queries:
            raise ValueError(f"a query named {name!r} is registered already")
        # prepare.py: parse, translate, rewrite, compile to core rules (each
        # stage's result is kept on the query)
        prepared = prepare(text, qid=qid, name=name, base=self.base,
                           is_function=self.has_function, module=self.core.module,
                           reasoning="none" if self.reasoning == "none" else "rdfs")
        self._next_qid += 1
        q = EPQuery(self, name, prepared, on_result, keep)
        if _unbounded(prepared.algebra.pattern):
            warnings.warn(UnboundedStateWarning(
                f"query {q.name} joins stream patterns without a getDURATION() < … bound: "
                f"its partial matches are kept forever on an unbounded stream "
                f"(a cap fails clearly: Engine(max_goals=…), --max-goals N on the command "
                f"line)"), stacklevel=2)
        # prolog/core_compile.pl: binarise the rules, compile them to EDBC clauses
        self.core.add_rules(prepared.compiled.rules)
        self._core_fed = True
        # answers: the core's detections of the rules' head go to this query
        self._queries[q.name] = q
        self._by_head[prepared.compiled.head] = q
        return q

    def _register_windowed(self, text: "str | DialectQuery", on_result: Callable[[Answer], None] | None,
                           name: str | None, dialect: str | None,
                           keep: bool | None = None,
                           settings: WindowSettings | None = None) -> WindowQuery:
        """A query of a stream dialect: prepared (prepare.py), then started
        in the window runtime of this engine's module."""
        qid = self._next_qid
        # prepare.py: parse the dialect, translate to the windowed algebra,
        # compile to stream_window.pl clauses (each stage kept on the query)
        prepared = prepare_windowed(text, qid=qid, dialect=dialect, base=self.base,
                                    is_function=self.has_function, module=self.core.module,
                                    reasoning="none" if self.reasoning == "none" else "rdfs",
                                    panes=self.incremental_windows,
                                    **(settings or WindowSettings()).arguments())
        name = name or prepared.syntax.name or f"q{qid}"
        if name in self._queries:
            raise ValueError(f"a query named {name!r} is registered already")
        self._next_qid += 1
        prepared = replace(prepared, name=name)
        if any(w.window.kind == "all" for w in prepared.algebra.windows):
            warnings.warn(UnboundedWindowWarning(
                f"query {name} has an [ALL] window: its content grows with the stream"),
                stacklevel=3)
        if self._windows is None:
            self._windows = WindowRuntime(self.core)
        q = WindowQuery(self, name, prepared, on_result, keep)
        self._mark()
        try:
            # prolog/stream_window.pl: the windows, policy and R2S start
            self._windows.register(q)
        finally:
            self._collect_function_errors()
        self._queries[name] = q
        # answers: the windows' evaluations under the query's head go to it
        self._by_head[q.head] = q
        return q

    def partitioning(self, schema: Schema = NO_SCHEMA) -> Plan:
        """How ``epsparql spark`` partitions this engine's queries (the key
        each can be partitioned on, or why not), given an RDFS ``schema``
        of the background (:func:`epsparql.algebra.partition.schema_of`;
        the default stands for no background).  Windowed queries are
        planned by :mod:`epsparql.algebra.window_partition`."""
        eps = [(q.name, q.algebra) for q in self._queries.values() if not q.windowed]
        win = [(q.name, q.algebra) for q in self._queries.values() if q.windowed]
        p = plan(eps, schema)
        if win:
            p = window_plan(p, win, schema, order=list(self._queries))
        return p

    def has_function(self, iri: str) -> bool:
        """Is ``iri`` a registered extension function (Python or Prolog)?"""
        reply = check(from_json(runtime().call("py_function_registered", str(iri))))
        return bool(reply.get("ok"))

    def register_function(self, iri: str, fn: Callable[..., Any] | str) -> None:
        """Make ``<iri>(args…)`` callable in FILTER and SELECT expressions.

        ``fn`` is a Python callable taking and returning rdflib terms (a
        plain Python value is turned into a Literal), or the name of a
        Prolog predicate (``"name"`` or ``"module:name"``, loaded with
        :meth:`load_prolog`) called as ``call(Pred, Arg…, Result)`` on the
        encoded terms (see docs/LANGUAGE.md).  Functions are process-wide:
        every engine sees them.  A function that raises or fails makes the
        expression a SPARQL error (the filter drops the solution)."""
        if callable(fn):
            from .functions import register
            register(str(iri), fn)
        else:
            check(from_json(runtime().call("py_register_prolog_function", str(iri),
                                            ("s", str(fn)))))

    def load_prolog(self, path: str) -> None:
        """Load a Prolog file (helper predicates, extension functions)."""
        from pathlib import Path
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"Prolog file not found: {p}")
        runtime().consult(p.resolve())

    # -- background knowledge ------------------------------------------------
    def load_background(self, source: Any, format: str | None = None,
                        graph: str | None = None) -> int:
        """Load background knowledge: a file path, RDF text, or an rdflib Graph
        (any format rdflib reads; guessed from the file name when not given).

        Triples go to the background graph ``graph`` (an IRI; default
        :data:`BACKGROUND`), matched by ``GRAPH <iri> { … }`` patterns and
        used for RDFS reasoning over the stream.  With ``reasoning="owlrl"``
        the OWL-RL closure is materialised first.  Returns the number of
        background triples the engine now holds."""
        from pathlib import Path

        from rdflib import Graph
        if isinstance(source, Graph):
            g = source
        else:
            g = Graph()
            p = Path(source) if isinstance(source, (str, Path)) and len(str(source)) < 4096 else None
            if p is not None and p.exists():
                g.parse(str(p), format=format)
            elif isinstance(source, str):
                g.parse(data=source, format=format or "turtle")
            else:
                raise FileNotFoundError(f"background source not found: {source!r}")
        if self.reasoning == "owlrl":
            import owlrl
            closed = Graph()
            for t in g:
                closed.add(t)
            owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(closed)
            g = closed
        return self.add_background(g, graph=graph)

    def add_background(self, triples: Iterable[Sequence[Node]], graph: str | None = None) -> int:
        """Add (s, p, o) triples to a background graph; takes effect for the
        events pushed afterwards.  Returns the background size."""
        return self._background_batches("add", triples, graph)

    def remove_background(self, triples: Iterable[Sequence[Node]], graph: str | None = None) -> int:
        """Remove (s, p, o) triples from a background graph (``graph=None``:
        from every graph).  Returns the background size."""
        return self._background_batches("remove", triples, graph)

    def _background_batches(self, op: str, triples: Iterable[Sequence[Node]],
                            graph: str | None) -> int:
        if op == "add" or graph is not None:
            g = term_text(URIRef(graph or BACKGROUND))
        else:
            g = "_"
        count = 0
        batch: list[str] = []
        for t in triples:
            s, p, o = t[0], t[1], t[2]
            batch.append(f"t({term_text(s)},{term_text(p)},{term_text(o)},{g})")
            if len(batch) >= 20000:
                count = self._background_call(op, "[" + ",".join(batch) + "]")["count"]
                batch = []
        if batch or count == 0:
            count = self._background_call(op, "[" + ",".join(batch) + "]")["count"]
        return count

    def _background_call(self, op: str, text: str) -> dict:
        return check(from_json(runtime().call("py_background", self.core.module, op, ("s", text))))

    def add_rules(self, text: str) -> None:
        """Add rules of the core's rule language (docs/CORE.md) next to the
        queries.  Stream triples are the events ``triple(S, P, O)`` (terms
        encoded as in docs/LANGUAGE.md); a rule whose head is such a triple
        feeds the stream as CONSTRUCT output does."""
        self.core.add_rules(text)
        self._core_fed = True

    def load_rules(self, path: str) -> None:
        """Load a rule file of the core's rule language (see add_rules)."""
        self.core.load_rules(path)
        self._core_fed = True

    @property
    def queries(self) -> list[Query]:
        """Every registered query, EP-SPARQL and windowed, in order."""
        return list(self._queries.values())

    # -- stream ----------------------------------------------------------------
    def push(self, s: Node, p: Node, o: Node, start: float | datetime,
             end: float | datetime | None = None, *, source: str = "default",
             stream: str | None = None) -> None:
        """Push one triple occurring over [start, end] (end defaults to start)
        on ``stream`` (an IRI; default :data:`DEFAULT_STREAM`)."""
        self.push_many([(s, p, o, start, end)], source=source, stream=stream)

    def push_many(self, rows: Iterable[Sequence[Any]], *, source: str = "default",
                  stream: str | None = None) -> list[int]:
        """Push (s, p, o, start[, end]) rows, batched (one Prolog crossing per
        ``batch_size`` rows; any iterable, consumed incrementally).  Rows may
        arrive out of order within the allowed lateness.  Each batch is
        validated before any of it is pushed: a bad row rejects its batch
        (earlier batches are in).

        Named streams (the stream dialects' windows read them): rows
        ``(s, p, o, start, end, stream)`` carry their own stream (``end``
        may be None); ``stream=`` names the stream of the rows without one;
        otherwise a row is on :data:`DEFAULT_STREAM`.  EP-SPARQL queries
        see every stream.

        Returns the positions (0-based, in ``rows``) of the rows that came
        too late to be processed (see :attr:`late`); usually empty."""
        self._not_ended("push rows")
        size = self.core.batch_size
        it = iter(rows)
        base = 0
        late: list[int] = []
        if stream is not None:
            stream = _stream_iri(stream)
        while True:
            chunk = list(itertools.islice(it, size))
            if not chunk:
                break
            norm = self._normalise(chunk, base, stream)
            found: list[int] = []
            ready = self._order.add(norm, source, found)
            late.extend(base + i for i in found)
            self._feed(ready)
            base += len(chunk)
        return late

    def source(self, name: str) -> "Source":
        """A named input whose watermark counts separately: the engine only
        moves time on to the minimum of its sources' watermarks."""
        self._order.register(name)
        return Source(self, name)

    @staticmethod
    def _normalise(rows: Sequence[Sequence[Any]], base: int = 0,
                   stream: str | None = None) -> list[tuple]:
        """Validated rows ``(s, p, o, t1, t2)``, times as plain finite
        ``int``/``float`` seconds, and ``(s, p, o, t1, t2, stream)`` for a
        row on a named stream (its own, or ``stream``).  The common case
        (exact rdflib term types, int/float times) takes the first branch;
        anything else is checked and converted by the general one."""
        out = []
        append = out.append
        checked = stream              # the last stream name found to be an IRI
        for i, row in enumerate(rows, start=base):
            n = len(row)
            g = stream
            if n == 4:
                s, p, o, t1 = row
                t2 = t1
            elif n == 5:
                s, p, o, t1, t2 = row
                if t2 is None:
                    t2 = t1
            elif n == 6:
                s, p, o, t1, t2, g = row
                if t2 is None:
                    t2 = t1
                if g is None:
                    g = stream
                elif g is not checked and (type(g) is not str or g != checked):
                    try:
                        g = checked = _stream_iri(g)
                    except (TypeError, ValueError) as e:
                        raise type(e)(f"row {i}: {e}") from None
            else:
                raise ValueError(f"row {i}: expected (s, p, o, start[, end[, stream]]), got {row!r}")
            tt1, tt2 = type(t1), type(t2)
            if ((type(s) in _TERM_TYPES and type(p) in _TERM_TYPES and type(o) in _TERM_TYPES)
                    and (tt1 is int or (tt1 is float and t1 - t1 == 0.0))
                    and (tt2 is int or (tt2 is float and t2 - t2 == 0.0))
                    and t1 <= t2):
                append((s, p, o, t1, t2) if g is None else (s, p, o, t1, t2, g))
                continue
            for x in (s, p, o):
                if not isinstance(x, (URIRef, Literal, BNode)):
                    raise TypeError(f"row {i}: a triple position must be an rdflib URIRef, "
                                    f"Literal or BNode, got {x!r}")
            try:
                t1 = _plain(seconds(t1))
                t2 = t1 if t2 is None else _plain(seconds(t2))
            except (TypeError, ValueError) as e:
                raise type(e)(f"row {i}: {e}") from None
            if t2 < t1:
                raise ValueError(f"row {i}: end {t2!r} is before start {t1!r}")
            append((s, p, o, t1, t2) if g is None else (s, p, o, t1, t2, g))
        return out

    def _mark(self) -> None:
        """Errors of extension functions from now on are this engine's."""
        from . import functions
        self._seen_function_errors = functions.error_count

    def push_arrow(self, batch: Any, *, source: str = "default") -> list[int]:
        """Push a pyarrow ``RecordBatch`` or ``Table`` of triples: columns
        ``s``, ``p``, ``o`` (each term in N-Triples syntax, e.g.
        ``<http://ex/a>``, ``_:b1``, ``"1"^^<http://www.w3.org/2001/XMLSchema#integer>``),
        ``start`` (seconds, int or float), optional ``end`` (null: the
        start) and ``stream`` (an IRI; null: :data:`DEFAULT_STREAM`); other
        columns are ignored.  One crossing per ``batch_size`` rows and no
        Python object per row: the terms are dictionary-encoded and each
        distinct text read once (:mod:`epsparql.rdf.wire_arrow`).  Rows
        out of order (within the allowed lateness) or from several sources
        go through the reorder buffer as :meth:`push_many`'s do.  A bad
        row (term, time, stream) raises ValueError naming it, before any of
        its slice is pushed.  Returns the positions of the rows that came
        too late to be processed."""
        import numpy as np
        from .rdf.wire_arrow import arrow_batch, arrow_rows
        self._not_ended("push rows")
        size = self.core.batch_size
        n = batch.num_rows
        late: list[int] = []
        for base in range(0, n, size):
            piece = batch.slice(base, size)
            b = arrow_batch(piece)
            if not b.rows:
                continue
            ends = b.ends
            ordered = bool(np.all(ends[1:] >= ends[:-1]))
            if b.data is not None and self._order.pass_through(float(ends[0]), float(ends[-1]),
                                                              ordered, source):
                self._mark()
                runs = None if b.streams is None else \
                    [[DEFAULT_STREAM if g is None else g, k] for g, k in b.streams]
                try:
                    self._send(b.data, runs)
                finally:
                    release_all(b.longs)      # (Prolog's blobs of them live on until its AGC)
                continue
            found: list[int] = []
            self._feed(self._order.add(self._normalise(arrow_rows(piece)), source, found))
            late.extend(base + i for i in found)
        return late

    def _feed(self, ready: list[tuple]) -> None:
        self._mark()
        windows = self._windows if self._windows is not None and self._windows.queries else None
        if ready and (windows is not None or self._core_fed or self._windows is None):
            size = self.core.batch_size
            core = self.core
            for i in range(0, len(ready), size):
                part = ready[i:i + size]
                if windows is not None:
                    # windows and core in one crossing (rows keep their streams)
                    self._route(windows.push(part, self._core_fed))
                    continue
                if max(map(len, part)) > 5:
                    part = [r[:5] for r in part]         # the core has no streams
                # as janus data (a term table and rows of ids) where it can,
                # else as text (epsparql/rdf/wire_rows.py, wire.py)
                longs: list[LongText] = []
                data = triple_batch_rows(part, longs)
                if data is not None:
                    try:
                        self._route(core.push_triple_rows_columns(data))
                    finally:
                        release_all(longs)
                else:
                    self._route(core.push_table_text_columns(triple_batch_text(part)))
            self._check_goals()

    def _send(self, data: list[Any], runs: list[list[Any]] | None) -> None:
        """One batch already made janus data (:mod:`epsparql.rdf.wire_rows`),
        in time order, its streams as runs (None: the default stream)."""
        windows = self._windows if self._windows is not None and self._windows.queries else None
        if windows is not None:
            if runs is None:
                runs = [[DEFAULT_STREAM, len(data[1])]]
            self._route(windows.push_data(data, runs, self._core_fed))
        elif self._core_fed or self._windows is None:
            self._route(self.core.push_triple_rows_columns(data))
        self._check_goals()

    def _check_goals(self) -> None:
        if self.max_goals is not None:
            goals = self.core.stats()["goals"]
            if goals > self.max_goals:
                raise StateLimitError(
                    f"{goals} partial matches stored, more than max_goals={self.max_goals}: "
                    f"bound the queries with FILTER (getDURATION() < …) or raise the cap "
                    f"(nothing was evicted; the answers so far were delivered)",
                    "max_goals", self.max_goals, goals)

    def advance(self, t: float | datetime, *, source: str | None = None) -> None:
        """A heartbeat: no more triples (from ``source``, or from any source)
        will end at or before ``t``.  Releases what the reorder buffer held
        and decides the answers that waited for an optional part."""
        self._not_ended("advance")
        self._feed(self._order.advance(seconds(t), source))
        wm = self._order.watermark
        if math.isfinite(wm):
            self._mark()
            if self._windows is not None:
                self._route(self._windows.advance(wm, True))     # and the core's instants
            else:
                self._route(self.core.advance_columns(wm))

    def _not_ended(self, what: str) -> None:
        if self._ended:
            raise StreamEndedError(
                f"cannot {what}: flush() ended the stream (every instant is closed and every "
                f"window evaluated for the last time); use advance(t) to close instants "
                f"without ending the stream, or clear_state() to start a new stream")

    def flush(self) -> None:
        """End of stream: release everything and decide every waiting
        answer.  Nothing can be pushed afterwards (:class:`StreamEndedError`)
        until :meth:`clear_state` or :meth:`restore`; calling it again does
        nothing more."""
        self._ended = True
        self._feed(self._order.flush())
        self._mark()
        if self._windows is not None:
            self._route(self._windows.flush(True))               # the core's, then the windows'
        else:
            self._route(self.core.flush_columns())

    @property
    def late(self) -> int:
        """Triples that arrived after the watermark had passed their end time
        (not processed; passed to ``on_late`` or kept in ``late_rows``)."""
        return self._order.late

    @property
    def allowed_lateness(self) -> float:
        """How late (seconds) a row may come and still be processed in order."""
        return self._order.lateness

    @property
    def buffered(self) -> int:
        """Rows held in the reorder buffer, waiting for the watermark to pass
        their end (processed by :meth:`advance` or :meth:`flush`)."""
        return self._order.buffered

    @property
    def late_rows(self) -> list[tuple]:
        return self._order.late_rows

    def _collect_function_errors(self) -> None:
        """The Python extension functions' errors since :meth:`_mark` are this engine's."""
        from . import functions
        new = functions.error_count - self._seen_function_errors
        if new > 0:
            self._function_errors.extend(functions.errors[-new:])
        self._seen_function_errors = functions.error_count

    def _route(self, chunks: list[Columns]) -> None:
        """Hand each run of detections the core returned (not taken during
        the call) to the query of its head; the core's detection buffer is
        not used: answers are kept per query."""
        self._collect_function_errors()
        self.core.discard_detections()
        for c in chunks:
            self._take(c, notify=False)

    def _take(self, chunk: Columns, notify: bool = True) -> None:
        """A chunk of detections, during the core call that makes it: its
        answers go to their query now, so a batch never holds all of its
        answers, and a cap stops the call at once (the first answers up to
        ``max_answers`` are delivered)."""
        q = self._by_head.get(chunk.name)
        if q is None:
            return
        cap = self.max_answers
        room = None if cap is None else max(cap - self.answers, 0)
        kept, cut = q._deliver(chunk, self._term_nodes(chunk.terms), room)
        self.answers += kept
        if cut:
            raise self._over_cap()
        if kept and notify and self.on_answers is not None:
            self.on_answers()

    def _term_nodes(self, terms: list[Any]) -> TermNodes:
        """The decoded view of the core's term table ``terms`` (one per
        dictionary generation; answers keep theirs)."""
        nodes = self._nodes
        if nodes is None or nodes.terms is not terms:
            nodes = self._nodes = TermNodes(terms)
        return nodes

    def _over_cap(self) -> "AnswerLimitError":
        cap = self.max_answers
        return AnswerLimitError(
            f"more than max_answers={cap} answers: the engine stopped at the next one "
            f"(the first {cap} were delivered; raise the cap, or bound the queries)",
            "max_answers", cap, self.answers + 1)

    @property
    def errors(self) -> list["EngineError"]:
        """What went wrong inside rules since the engine started, oldest
        first: exceptions in core rules or Prolog code (with the event that
        triggered them), and exceptions raised by Python extension functions
        (with their arguments).  Each names the queries concerned.  The
        engine goes on with the next event; a function that raises makes its
        expression a SPARQL error, so the filter drops that solution."""
        out: list[EngineError] = []
        for err in self.core.errors:
            ctx = err.context
            if isinstance(ctx, Compound) and ctx.name == "function" and len(ctx.args) == 2:
                iri = str(ctx.args[0])
                names = [q.name for q in self._queries.values() if iri in q.rules]
                out.append(EngineError(names, f"extension function <{iri}>: {err.message}",
                                       tuple(decode(a) for a in ctx.args[1]), iri, kind=err.kind))
                continue
            out.append(EngineError(self._queries_of_rules(err.rules), err.message, ctx,
                                   kind=err.kind, node=err.node))
        for iri, args, exc in self._function_errors:
            names = [q.name for q in self._queries.values() if iri in q.rules]
            out.append(EngineError(names, f"extension function <{iri}> raised "
                                          f"{type(exc).__name__}: {exc}", args, iri, exc))
        return out

    def _queries_of_rules(self, heads: Sequence[str]) -> list[str]:
        """The queries a rule error concerns, from the names of the rules
        the core recorded with it (a rule that is no query's: its name)."""
        names = set()
        for head in heads:
            q = self._by_head.get(head)
            names.add(q.name if q is not None else head)
        return sorted(names)

    # -- snapshots -------------------------------------------------------------
    def snapshot(self) -> bytes:
        """Everything needed to continue the stream later, as compact bytes:
        the core's state (partial matches of every query, clock, answers
        waiting for an instant to close, dedup set; see
        CoreEngine.export_state), the reorder buffer (buffered rows,
        watermarks, late count) and each query's DISTINCT seen-set and ASK
        flag.  Not in it: queries, functions, background knowledge, options,
        and answers not yet taken with ``results()`` (take the snapshot
        after draining) or ``late_rows``.  One Prolog crossing.

        ``other.restore(engine.snapshot())``, where ``other`` has the same
        queries registered in the same order, makes ``other`` continue
        exactly as ``engine`` would.  See docs/LANGUAGE.md, "State
        snapshots"."""
        core = self.core.state_text().encode("utf-8")
        py = {"v": 1,
              "order": self._order.export_state(node_to_json),
              "queries": [q._state() for q in self._queries.values()]}
        windows = b""
        if self._windows is not None:
            # the windows' state (prolog/stream_window.pl's sw_export/2) after the core's
            windows = self._windows.export().encode("utf-8")
            py["windows"] = len(windows)
        head = json.dumps(py, separators=(",", ":"))      # ASCII: no newline, any str
        return SNAPSHOT_MAGIC + zlib.compress(head.encode("utf-8") + b"\n" + core + windows, 1)

    def restore(self, state: bytes) -> None:
        """Replace this engine's stream state by a snapshot's (see
        :meth:`snapshot`).  Answers not yet taken, ``late_rows`` and errors
        are discarded.  Raises ValueError, changing nothing, for a snapshot
        of an engine with other queries or rules, or a malformed one; the
        snapshot is read as data, never run.  One Prolog crossing."""
        payload = unpack_state(state, SNAPSHOT_MAGIC, "Engine snapshot")
        head, sep, core = payload.partition(b"\n")
        try:
            if not sep:
                raise ValueError("no core state")
            py = json.loads(head.decode("utf-8"))
            wlen = py.get("windows", 0) if isinstance(py, dict) else 0
            if type(wlen) is not int or not 0 <= wlen <= len(core):
                raise ValueError(f"bad window state length {wlen!r}")
            window_text = core[len(core) - wlen:].decode("utf-8") if wlen else None
            core_text = core[:len(core) - wlen].decode("utf-8")
        except (UnicodeDecodeError, ValueError) as e:
            raise ValueError(f"malformed Engine snapshot: {e}") from None
        if not isinstance(py, dict) or py.get("v") != 1:
            raise ValueError("malformed Engine snapshot: unknown version "
                             f"{py.get('v') if isinstance(py, dict) else py!r}")
        if (window_text is None) != (self._windows is None or not self._windows.queries):
            raise ValueError("the snapshot's windowed queries are not this engine's: register "
                             "the same queries in the same order before restoring")
        order = self._order.restored(py.get("order"), node_from_json)
        qs = py.get("queries")
        mine = list(self._queries.values())
        if not isinstance(qs, list) or len(qs) != len(mine):
            n = len(qs) if isinstance(qs, list) else qs
            raise ValueError(f"the snapshot has {n} queries, this engine {len(mine)}: register "
                             f"the same queries in the same order before restoring")
        try:
            qstates = [q._restored(d) for q, d in zip(mine, qs)]
        except (TypeError, AttributeError) as e:
            raise ValueError(f"malformed Engine snapshot: {e}") from None
        if window_text is not None and self._windows is not None:
            # both parts validate before they replace; the windows' old state is
            # put back if the core's part is then refused
            before = self._windows.export()
            self._windows.restore(window_text)
            try:
                self.core.load_state_text(core_text)
            except BaseException:
                self._windows.restore(before)
                raise
        else:
            self.core.load_state_text(core_text)      # validates, then replaces (atomic)
        self._order = order
        for q, qstate in zip(mine, qstates):
            q._load(qstate)
        self._function_errors.clear()
        self._ended = False

    def clear_state(self) -> None:
        """Forget the stream state (partial matches, clock, reorder buffer,
        watermarks, DISTINCT and ASK memory, answers not yet taken,
        ``late_rows``, errors); keep the queries, functions, background
        knowledge, options and declared sources.  The engine then behaves
        as a fresh one with the same queries."""
        self.core.clear_state()
        if self._windows is not None:
            self._windows.clear()
        self._order = self._order.cleared()
        self.answers = 0
        for q in self._queries.values():
            q._reset()
        self._function_errors.clear()
        self._ended = False

    # -- state, for schedulers (the Spark worker) --------------------------------
    def gc(self) -> None:
        """Expire now the partial matches their windows no longer allow (the
        core also does this every ``gc_every`` events)."""
        self.core.gc()

    @property
    def idle(self) -> bool:
        """Is nothing waiting: no partial match stored, no answer waiting for
        its instant to close, no row held in the reorder buffer?"""
        st = self.core.stats()
        if self._windows is not None and self._windows.queries:
            ws = self._windows.stats()
            if ws.get("content", 0) or ws.get("pending", 0):
                return False
        return st.get("goals", 0) == 0 and st.get("waiting", 0) == 0 and self._order.buffered == 0

    def window_stats(self) -> dict[str, Any]:
        """The stream dialects' windows now: ``content`` (distinct triples
        all windows hold), ``pending`` (occurrences kept for windows in the
        past), ``late``, ``queries`` (windowed queries), ``due`` (the next
        instant a query waits for, in seconds; None: none)."""
        if self._windows is None:
            return {"content": 0, "pending": 0, "late": 0, "queries": 0, "due": None}
        return self._windows.stats()

    def stream_rows(self) -> dict[str, int]:
        """Rows pushed per stream IRI, once some windowed query is
        registered (rows without a stream count under
        :data:`DEFAULT_STREAM`)."""
        return dict(self._windows.stream_rows) if self._windows is not None else {}

    def unfed_queries(self) -> list[tuple[Query, list[str]]]:
        """The windowed queries none of whose streams had a row although
        rows were pushed (on other streams), each with the streams it
        reads: a query that silently answers nothing, most often because
        its rows came without a stream (an ``nt`` file)."""
        return list(self._windows.unfed()) if self._windows is not None else []

    @property
    def largest_window(self) -> float:
        """The longest window of a store of partial matches, in seconds
        (``math.inf``: some store keeps them without bound; 0: none is kept)."""
        longest = self.rule_graph().largest_window if self._core_fed else 0
        return max([longest, *(q.span for q in self._queries.values())])

    def rule_graph(self) -> RuleGraph:
        """The binarised rule graph of every query and rule of this engine,
        with the goals stored now (one crossing; see
        :mod:`epsparql.core.rule_graph`)."""
        return RuleGraph.of(self.core)

    def close(self) -> None:
        if self._windows is not None and runtime_alive():
            self._windows.close()
        self.core.close()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _stream_iri(g: Any) -> str:
    """A stream name as the IRI text the windows compare (str or URIRef)."""
    if isinstance(g, URIRef) or type(g) is str:
        g = str(g)
        if g and not any(c in g for c in ' <>"{}|^`\\') and not g.isspace():
            return g
        raise ValueError(f"a stream must be an IRI, got {g!r}")
    raise TypeError(f"a stream must be an IRI (str or URIRef), got {g!r}")
