"""The service's engine room: one thread that owns every engine.

Prolog state belongs to the thread that uses it, and an engine is not
safe to call from two threads, so everything that touches an engine runs
here, in order: batches of events, advances of event time, and the
management commands (register, pause, resume, delete, graphs, what a
deployment shows).  Other threads (the HTTP server's, the MQTT client's)
hand work in through a bounded queue (:meth:`EngineRoom.submit`) and get a
:class:`concurrent.futures.Future` back; a full queue makes them wait,
which is how a producer faster than the engines is slowed down instead of
filling memory.

Each deployment (:class:`~epsparql.service.registry.Deployment`) runs in
an engine of its own: deleting one drops its engine, and its snapshot
restores alone.  Consecutive batches waiting in the queue are pushed as
one (one Prolog crossing per engine and group).  Answers leave as the
JSON lines ``epsparql run`` writes, numbered per deployment, to the
listeners (subscribers, MQTT) after they were written to the deployment's
answer file when there is one.  With a state directory every group is in
the input log before it is acknowledged or applied
(:mod:`epsparql.service.durable`).  An input is logged when it is
submitted, in the order of the queue (a lock keeps the two orders one),
and fsync'ed by a thread of its own
(:class:`~epsparql.service.durable.LogSyncer`), which acknowledges it once
it is durable: a sender gets its acknowledgement while the engines still
work on earlier inputs, sends the next, and the engine room takes what
waits as one group, as ``epsparql run`` pushes its batches.  Answers are
written and sent only once the inputs they come from are durable.  What
changes what runs (register, pause, delete, graphs, advance) is logged by
the engine room when it does it; while such a command waits in the queue,
new inputs wait to be logged, so that the log's order is the order things
were done.
"""
from __future__ import annotations

import io
import itertools
import queue
import threading
import time
import warnings
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..io.results import batch_json_lines
from ..io.stream_lines import StreamFormatError
from ..io.streams import FORMATS, StreamReader
from .durable import AnswerFile, Checkpoint, InputLog, LogSyncer, read_checkpoint
from .registry import Deployment

__all__ = ["EngineRoom", "RoomConfig", "Ingest", "ParsedInput", "parse_input", "Deployed",
           "ServiceError", "NotFound", "Conflict"]


class ServiceError(Exception):
    """A request the service refuses (the HTTP layer maps it to a status)."""

    status = 400


class NotFound(ServiceError):
    status = 404


class Conflict(ServiceError):
    status = 409


@dataclass
class RoomConfig:
    """How the engines are made and the engine room behaves."""

    base: str | None = None
    reasoning: str = "rdfs"
    allowed_lateness: float = 0.0
    window_semantics: str | None = None      # None: each query's pragma, else its dialect's
    #: the other SECRET parameters (``serve --window-t0 ...``; None: pragma or default)
    window_t0: Any = None
    window_report: str | None = None
    window_content: str | None = None
    window_tick: str | None = None
    max_goals: int | None = None
    allow_rules: bool = False
    state_dir: Path | None = None
    answers_dir: Path | None = None
    checkpoint_every: float = 30.0       # seconds between checkpoints (with state_dir)
    queue_size: int = 256                # waiting inputs before producers wait
    group_rows: int = 5000               # rows pushed in one crossing at most
    recent: int = 10000                  # answers kept in memory per deployment
    keys: int = 10000                    # idempotency keys remembered (latest)
    batch_size: int = 5000


@dataclass
class Ingest:
    """One input as it arrived and as the log keeps it: the body in a
    stream format, the stream its rows without one go to (None: the
    default stream), what to do with a malformed line, and its origin."""

    body: bytes
    format: str = "nt"
    stream: str | None = None
    on_error: str = "stop"
    origin: str = "http"
    #: the sender's name for this input (an idempotency key): an input with
    #: a key the service has taken already is not taken again, so a sender
    #: may repeat an input whose acknowledgement it did not get
    key: str | None = None

    def header(self) -> dict[str, Any]:
        return {"format": self.format, "stream": self.stream, "on_error": self.on_error,
                "origin": self.origin, "len": len(self.body), "key": self.key}


@dataclass
class ParsedInput:
    """An input read: its rows as Arrow batches, and what was skipped."""

    ingest: Ingest
    batches: list[Any]
    rows: int
    skipped: int
    errors: list[str]


def parse_input(ingest: Ingest) -> ParsedInput:
    """Read an input's body as the command line reads a stream (the same
    formats, errors and line numbers); its rows without a stream of their
    own go to ``ingest.stream``.  StreamFormatError (with the line) when
    ``on_error`` is ``"stop"`` and a line is malformed: nothing of it is
    taken then."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if ingest.format not in FORMATS:
        raise ServiceError(f"unknown format {ingest.format!r} (one of {', '.join(FORMATS)})")
    reader = StreamReader(io.BytesIO(ingest.body), ingest.format, on_error=ingest.on_error,
                          name="<request>")
    batches = []
    for b in reader.batches(5000):
        if not b.num_rows:
            continue
        if ingest.stream is not None:
            col = b.schema.get_field_index("stream")
            b = b.set_column(col, "stream", pc.fill_null(b.column(col),
                                                         pa.scalar(ingest.stream, pa.string())))
        batches.append(b)
    return ParsedInput(ingest, batches, sum(b.num_rows for b in batches), reader.skipped,
                       [str(e) for e in reader.errors[:10]])


class Deployed:
    """A deployment at work: its engine, queries and counters."""

    def __init__(self, spec: Deployment, engine: Any, queries: list[Any],
                 recent: int = 10000) -> None:
        self.spec = spec
        self.engine = engine
        self.queries = queries
        self.events = 0                   # rows fed to it
        self.answers = 0                  # answers it gave (numbered 1..answers)
        self.per_query: dict[str, int] = {}   # answers given, per query
        self.written = 0                  # answers in its answer file (or given, without one)
        self.late = 0                     # rows it did not process: too late
        self.error: str | None = None     # why it failed (it is not fed then)
        self.recent: deque[tuple[int, str]] = deque(maxlen=recent)
        self.file: AnswerFile | None = None
        self.registered = time.time()
        #: what the live view computed once for this deployment (steps.py)
        self.view_cache: dict[str, Any] = {}

    @property
    def state(self) -> str:
        if self.error is not None:
            return "failed"
        return "paused" if self.spec.paused else "running"

    @property
    def running(self) -> bool:
        return self.error is None and not self.spec.paused


@dataclass
class _Item:
    kind: str
    payload: Any = field(compare=False)
    future: Future = field(compare=False, default_factory=Future)
    received: float = field(compare=False, default_factory=time.perf_counter)
    wait: bool = field(compare=False, default=False)
    record: int = field(compare=False, default=0)     # its input log record (0: none)


class EngineRoom:
    """Every deployment's engine, fed by one thread (see the module's doc)."""

    def __init__(self, config: RoomConfig) -> None:
        self.config = config
        self.deployments: dict[str, Deployed] = {}
        #: background graphs: IRI ("" for the default background) -> (text, format)
        self.graphs: dict[str, tuple[str, str]] = {}
        self._parsed_graphs: dict[str, Any] = {}
        self._queue: queue.Queue[_Item] = queue.Queue()
        #: inputs queued at most (a producer faster than the engines waits)
        self._slots = threading.Semaphore(config.queue_size)
        #: the order of the queue and of the log are one: held to log and queue an
        #: input, and to rotate the log
        self._order = threading.Condition()
        self._barriers = 0                # logging commands queued: inputs wait to be logged
        self._applied = 0                 # the last log record applied
        self._closed = False              # stopped: nothing more is logged
        self._listeners: list[Callable[[str, int, list[str]], None]] = []
        self._thread: threading.Thread | None = None
        self._stop = False
        self._log: InputLog | None = None
        self._sync: LogSyncer | None = None
        self._last_checkpoint = time.monotonic()
        #: the latest inputs' idempotency keys, oldest first
        self._keys: dict[str, None] = {}
        # counters (written by the engine room only; read anywhere)
        self.events = 0                   # rows taken in
        self.inputs = 0                   # inputs (requests, messages) taken in
        self.late = 0                     # rows no running deployment could process (late)
        self.malformed = 0                # lines skipped as malformed
        self.answers = 0                  # answers given, all deployments
        self.started = time.time()
        #: per second: [unix second, events, answers, latency samples (s)]
        self.series: deque[list[Any]] = deque(maxlen=600)
        self.fatal: str | None = None
        #: the last MQTT messages logged, as the bridge keys them ([mid, hash]; an
        #: input's header "mqtt"), kept in checkpoints: after a crash the bridge
        #: knows a redelivered message it had logged but not acknowledged
        self.mqtt_logged: deque[list[int]] = deque(maxlen=8192)

    # -- listeners ---------------------------------------------------------------
    def add_listener(self, fn: Callable[[str, int, list[str]], None]) -> None:
        """``fn(deployment, first_number, lines)`` is called in the engine
        room for every run of answers, after they were written to the
        deployment's answer file.  It must not block."""
        self._listeners.append(fn)

    # -- life --------------------------------------------------------------------
    def start(self) -> None:
        """Restore the state directory's checkpoint and log (if any) and
        start the engine room's thread."""
        ready: Future = Future()
        self._thread = threading.Thread(target=self._main, args=(ready,),
                                        name="epsparql-engine-room", daemon=True)
        self._thread.start()
        ready.result()                    # raises what the restore raised

    def stop(self, checkpoint: bool = True) -> None:
        """Finish what is queued, checkpoint (with a state directory), stop."""
        if self._thread is None or not self._thread.is_alive():
            return
        item = _Item("stop", checkpoint)
        self._queue.put(item)
        item.future.result()
        self._thread.join()

    def submit(self, kind: str, payload: Any, *, wait: bool = False,
               timeout: float | None = None) -> Future:
        """Queue work for the engine room: ``"events"`` (a ParsedInput),
        ``"advance"`` (a time), or ``"call"`` (a function of the room,
        called there).  The future's result is, for events, the input's
        counts once it is durable (``wait``: once it was applied; an input
        whose idempotency key was taken before: ``duplicate``); for a
        call, what the function returned.  Blocks while the queue holds
        ``queue_size`` inputs (``timeout``: queue.Full after that long)."""
        if self.fatal is not None:
            raise ServiceError(f"the engine room stopped: {self.fatal}")
        item = _Item(kind, payload, wait=wait)
        if kind != "events":
            with self._order:
                if kind == "advance" or (kind == "call" and self._logs(payload[0])):
                    self._barriers += 1
                    item.record = -1      # a barrier: released once done
                self._queue.put(item)
            return item.future
        if not self._slots.acquire(timeout=-1 if timeout is None else timeout):
            raise queue.Full
        fd = None
        with self._order:
            while self._barriers:
                self._order.wait()
            if self._closed:
                self._slots.release()
                raise ServiceError("the service is stopping")
            key = payload.ingest.key
            if key is not None and key in self._keys:
                self._slots.release()
                item.future.set_result({"accepted": 0, "skipped": 0, "duplicate": True})
                return item.future
            if key is not None:
                self._remember(key)
            if self._log is not None:
                head = payload.ingest.header()
                item.record = self._log.append({"kind": "events", "parts": [head]},
                                               payload.ingest.body)
                fd = self._log.flush()
                self.mqtt_logged.extend(head.get("mqtt", ()))
            self._queue.put(item)
        if self._sync is not None and item.record:
            acks = [] if wait else [item]
            self._sync.request(item.record, fd, lambda err: self._acknowledge(acks, err))
        elif not wait:                    # without a log: acknowledged once queued
            self._acknowledge([item], None)
        return item.future

    def _logs(self, fn: Callable[..., Any]) -> bool:
        """Whether a call logs what it does (register, pause, ...)."""
        return getattr(fn, "__self__", None) is self and getattr(fn, "__name__", "") in \
            ("register", "delete", "set_paused", "put_graph", "delete_graph")

    def _unbarrier(self, item: _Item) -> None:
        if item.record == -1:
            with self._order:
                self._barriers -= 1
                self._order.notify_all()

    def call(self, fn: Callable[..., Any], *args: Any) -> Future:
        """Run ``fn(*args)`` in the engine room (it may touch the engines)."""
        return self.submit("call", (fn, args))

    @property
    def queued(self) -> int:
        return self._queue.qsize()

    def _main(self, ready: Future) -> None:
        try:
            self._open_state()
        except BaseException as e:        # a state directory that cannot be read
            self.fatal = str(e)
            ready.set_exception(e)
            return
        ready.set_result(None)
        while not self._stop:
            try:
                item = self._queue.get(timeout=1.0)
            except queue.Empty:
                self._maybe_checkpoint()
                continue
            try:
                self._handle(item)
            except BaseException as e:    # a bug: keep serving, say what failed
                if not item.future.done():
                    item.future.set_exception(e)
            finally:
                self._unbarrier(item)
            self._maybe_checkpoint()

    def _handle(self, item: _Item) -> None:
        if item.kind == "events":
            self._slots.release()
            group = [item]
            rows = item.payload.rows
            while rows < self.config.group_rows:      # consecutive inputs: one push
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt.kind != "events":
                    self._apply_events(group)
                    group = []
                    try:
                        self._handle(nxt)
                    finally:
                        self._unbarrier(nxt)
                    return
                self._slots.release()
                group.append(nxt)
                rows += nxt.payload.rows
            self._apply_events(group)
        elif item.kind == "advance":
            self._log_record({"kind": "advance", "time": item.payload})
            self._advance(item.payload)
            item.future.set_result({"advanced": item.payload})
        elif item.kind == "call":
            fn, args = item.payload
            try:
                item.future.set_result(fn(*args))
            except BaseException as e:
                item.future.set_exception(e)
        elif item.kind == "stop":
            if item.payload and self.config.state_dir is not None:
                self.checkpoint()
            for d in self.deployments.values():
                if d.file is not None:
                    d.file.close()
            if self._log is not None:
                self._durable()
                with self._order:         # no input logged after this
                    self._closed = True
                    self._log.close()
            if self._sync is not None:
                self._sync.stop()
            self._stop = True
            item.future.set_result(None)

    # -- events ------------------------------------------------------------------
    def _apply_events(self, group: list[_Item]) -> None:
        """Push a group of inputs (logged and being made durable already)."""
        self._applied = max(self._applied, group[-1].record)
        self._push([it.payload for it in group], group[0].received)
        waited = [it for it in group if it.wait]
        if waited:
            self._durable()
            for it in waited:
                it.future.set_result(self._counts(it.payload))

    def _acknowledge(self, items: list[_Item], err: BaseException | None) -> None:
        """Resolve inputs' futures: durable (err None), or the log failed."""
        if err is not None:
            self.fatal = f"the input log cannot be made durable: {err}"
        for it in items:
            if it.future.done():
                continue
            if err is None:
                it.future.set_result(self._counts(it.payload))
            else:
                it.future.set_exception(ServiceError(self.fatal or str(err)))

    def _durable(self) -> None:
        """Wait until every log record applied is durable (raises the
        fsync's error).  Before any answer is written or sent: an answer
        never comes from an input a crash could still take back."""
        if self._sync is not None:
            self._sync.wait(self._applied)

    def _remember(self, key: str) -> None:
        self._keys[key] = None
        while len(self._keys) > self.config.keys:
            del self._keys[next(iter(self._keys))]

    @staticmethod
    def _counts(p: ParsedInput) -> dict[str, Any]:
        out: dict[str, Any] = {"accepted": p.rows, "skipped": p.skipped}
        if p.errors:
            out["errors"] = p.errors
        return out

    def _push(self, inputs: list[ParsedInput], received: float) -> None:
        import pyarrow as pa
        batches = [b for p in inputs for b in p.batches]
        self.inputs += len(inputs)
        self.malformed += sum(p.skipped for p in inputs)
        if not batches:
            return
        table = pa.Table.from_batches(batches) if len(batches) > 1 else batches[0]
        n = table.num_rows
        late = 0
        fed = False
        for d in list(self.deployments.values()):
            if not d.running:
                continue
            fed = True
            try:
                got = d.engine.push_arrow(table)
            except Exception as e:        # this deployment fails; the others go on
                self._failed(d, e)
                continue
            d.events += n
            d.late += len(got)
            late = max(late, len(got))
            self._drain(d)
        if fed:
            self.late += late
        self.events += n                  # counted once applied, its answers given
        self._tick(events=n, latency=time.perf_counter() - received)

    def _advance(self, t: float) -> None:
        for d in list(self.deployments.values()):
            if d.running:
                try:
                    d.engine.advance(t)
                except Exception as e:
                    self._failed(d, e)
                    continue
                self._drain(d)

    def _failed(self, d: Deployed, e: BaseException) -> None:
        from ..messages import one_line
        d.error = f"{type(e).__name__}: {one_line(e)}"
        self._drain(d)                    # what it gave before it failed

    def _drain(self, d: Deployed) -> None:
        """Number and hand out the answers a deployment's queries hold."""
        for q in d.queries:
            res = q.results()
            if not len(res):
                continue
            lines = [line for b in res.batches for line in batch_json_lines(b)]
            self._emit(d, lines, q.name)

    def _emit(self, d: Deployed, lines: list[str], query: str) -> None:
        before = d.answers
        d.answers += len(lines)
        d.per_query[query] = d.per_query.get(query, 0) + len(lines)
        # after a restart, the answers replayed that the file already holds
        # were given before: not again
        fresh = lines[max(0, d.written - before):]
        if not fresh:
            return
        first = d.answers - len(fresh) + 1
        self._durable()
        if d.file is not None:
            d.file.append(fresh)
        d.written += len(fresh)
        self.answers += len(fresh)
        d.recent.extend(zip(range(first, first + len(fresh)), fresh))
        self._tick(answers=len(fresh))
        for fn in self._listeners:
            try:
                fn(d.spec.name, first, fresh)
            except Exception:             # a listener's bug must not stop the engines
                pass

    def _tick(self, events: int = 0, answers: int = 0, latency: float | None = None) -> None:
        now = int(time.time())
        if not self.series or self.series[-1][0] != now:
            self.series.append([now, 0, 0, []])
        s = self.series[-1]
        s[1] += events
        s[2] += answers
        if latency is not None and len(s[3]) < 1000:
            s[3].append(latency)

    # -- deployments (called in the engine room) --------------------------------------
    def _make_engine(self, spec: Deployment) -> Deployed:
        from ..query_engine import Engine
        cfg = self.config
        if spec.rules is not None and not cfg.allow_rules:
            raise ServiceError("rules are Prolog code: this service takes them only when "
                               "started with --allow-rules")
        engine = Engine(base=cfg.base, reasoning=cfg.reasoning,
                        allowed_lateness=cfg.allowed_lateness, max_goals=cfg.max_goals,
                        window_semantics=spec.window_semantics or cfg.window_semantics,
                        window_t0=cfg.window_t0, window_report=cfg.window_report,
                        window_content=cfg.window_content, window_tick=cfg.window_tick,
                        batch_size=cfg.batch_size, on_late=lambda row, source: None)
        try:
            for iri, (text, fmt) in self.graphs.items():
                engine.load_background(self._graph(iri, text, fmt), graph=iri or None)
            if spec.rules is not None:
                engine.add_rules(spec.rules)
            queries = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for qname, text in spec.queries.items():
                    queries.append(engine.register(text, name=qname, dialect=spec.dialect,
                                                   keep=True))
        except BaseException:
            engine.close()
            raise
        d = Deployed(spec, engine, queries, self.config.recent)
        engine.on_answers = lambda: self._drain(d)
        return d

    def _graph(self, iri: str, text: str, fmt: str) -> Any:
        g = self._parsed_graphs.get(iri)
        if g is None:
            from rdflib import Graph
            g = Graph()
            g.parse(data=text, format=fmt)
            self._parsed_graphs[iri] = g
        return g

    def _open_answers(self, d: Deployed) -> None:
        adir = self._answers_dir()
        if adir is not None:
            d.file = AnswerFile(adir / f"{d.spec.name}.jsonl")

    def _answers_dir(self) -> Path | None:
        if self.config.answers_dir is not None:
            return self.config.answers_dir
        if self.config.state_dir is not None:
            return self.config.state_dir / "answers"
        return None

    def register(self, spec: Deployment, logged: bool = True) -> Deployed:
        """Compile and start a deployment (QueryError, ServiceError, Conflict)."""
        if spec.name in self.deployments:
            raise Conflict(f"a deployment named {spec.name!r} exists: delete it first")
        d = self._make_engine(spec)
        if logged:
            self._log_record({"kind": "register", "deployment": spec.to_json()})
        self._open_answers(d)
        if d.file is not None:
            # answers of an earlier deployment of this name are not this one's
            if d.file.count and logged:
                d.file.close()
                d.file.path.unlink()
                d.file = AnswerFile(d.file.path)
            d.written = d.file.count
        self.deployments[spec.name] = d
        return d

    def delete(self, name: str, logged: bool = True) -> None:
        d = self._get(name)
        if logged:
            self._log_record({"kind": "delete", "name": name})
        del self.deployments[name]
        if d.file is not None:
            d.file.close()
        d.engine.close()

    def set_paused(self, name: str, paused: bool, logged: bool = True) -> Deployed:
        d = self._get(name)
        if d.error is not None:
            raise Conflict(f"deployment {name!r} failed ({d.error}): delete it and register "
                           f"it again")
        if d.spec.paused != paused:
            if logged:
                self._log_record({"kind": "pause" if paused else "resume", "name": name})
            d.spec.paused = paused
        return d

    def put_graph(self, iri: str, text: str, fmt: str, logged: bool = True) -> int:
        """Load (or replace) a background graph in every engine; its size."""
        from rdflib import Graph
        g = Graph()
        g.parse(data=text, format=fmt)          # refused whole before anything changes
        old = self._parsed_graphs.get(iri)
        if logged:
            self._log_record({"kind": "graph", "iri": iri, "format": fmt}, text.encode("utf-8"))
        for d in self.deployments.values():
            if old is not None:
                d.engine.remove_background(old, graph=iri or None)
            d.engine.load_background(g, graph=iri or None)
        self.graphs[iri] = (text, fmt)
        self._parsed_graphs[iri] = g
        return len(g)

    def delete_graph(self, iri: str, logged: bool = True) -> None:
        old = self._parsed_graphs.get(iri)
        if old is None:
            raise NotFound(f"no background graph {iri or '(default)'}")
        if logged:
            self._log_record({"kind": "graph-delete", "iri": iri})
        for d in self.deployments.values():
            d.engine.remove_background(old, graph=iri or None)
        del self.graphs[iri], self._parsed_graphs[iri]

    def _get(self, name: str) -> Deployed:
        d = self.deployments.get(name)
        if d is None:
            raise NotFound(f"no deployment named {name!r}")
        return d

    # -- durability -------------------------------------------------------------------
    def _log_record(self, header: dict[str, Any], body: bytes = b"") -> None:
        """Log a record and wait until it is durable (management, advance:
        called in the engine room while inputs wait to be logged)."""
        if self._log is not None and self._sync is not None:
            with self._order:
                n = self._log.append(header, body)
                fd = self._log.flush()
            self._applied = n
            self._sync.request(n, fd)
            self._sync.wait(n)

    def _open_state(self) -> None:
        sd = self.config.state_dir
        if sd is None:
            return
        sd.mkdir(parents=True, exist_ok=True)
        cp = read_checkpoint(sd)
        log = InputLog(sd / "log")
        applied = 0
        if cp is not None:
            applied = cp.applied
            for iri, (text, fmt) in ((k, tuple(v)) for k, v in cp.graphs.items()):
                self.graphs[iri] = (text, fmt)
            for k, v in cp.counters.items():
                if k == "keys":
                    for key in v:
                        self._remember(key)
                elif hasattr(self, k) and isinstance(getattr(self, k), int):
                    setattr(self, k, v)
            self.mqtt_logged.extend(cp.counters.get("mqtt_logged", ()))
            for rec in cp.deployments:
                spec = Deployment.from_json(rec["spec"])
                d = self._make_engine(spec)
                if rec.get("error") is not None:
                    d.error = rec["error"]
                else:
                    d.engine.restore(rec["snapshot"])
                d.answers, d.events, d.late = rec["answers"], rec["events"], rec["late"]
                d.per_query = dict(rec.get("per_query", {}))
                self._open_answers(d)
                d.written = d.file.count if d.file is not None else d.answers
                self.deployments[spec.name] = d
        for d in self.deployments.values():
            if d.file is not None and d.file.count < d.answers:
                raise ValueError(f"{d.file.path} holds {d.file.count} answers, the checkpoint "
                                 f"counts {d.answers}: the state directory is damaged")
        # the log after the checkpoint, applied as it was the first time
        for header, body in log.records(applied):
            self._replay(header, body)
        self._log = log
        self._applied = log.last
        self._sync = LogSyncer(log.last)
        self.checkpoint()                 # the replayed state, and a fresh log segment

    def _replay(self, h: dict[str, Any], body: bytes) -> None:
        kind = h["kind"]
        if kind == "events":
            inputs, pos = [], 0
            for part in h["parts"]:
                self.mqtt_logged.extend(part.get("mqtt", ()))
                chunk = body[pos:pos + part["len"]]
                pos += part["len"]
                ing = Ingest(chunk, part["format"], part["stream"], part["on_error"],
                             part["origin"], part.get("key"))
                if ing.key is not None:
                    self._remember(ing.key)
                try:
                    inputs.append(parse_input(ing))
                except (StreamFormatError, ServiceError):   # refused then too: not logged
                    continue
            self._push(inputs, time.perf_counter())
        elif kind == "advance":
            self._advance(h["time"])
        elif kind == "register":
            try:
                self.register(Deployment.from_json(h["deployment"]), logged=False)
            except Exception as e:        # compiled then; not now (another version?)
                import sys
                print(f"epsparql serve: the logged deployment {h['deployment'].get('name')!r} "
                      f"no longer registers, left out: {type(e).__name__}: {e}",
                      file=sys.stderr)
        elif kind == "delete":
            if h["name"] in self.deployments:
                self.delete(h["name"], logged=False)
        elif kind in ("pause", "resume"):
            if h["name"] in self.deployments:
                self.deployments[h["name"]].spec.paused = kind == "pause"
        elif kind == "graph":
            self.put_graph(h["iri"], body.decode("utf-8"), h["format"], logged=False)
        elif kind == "graph-delete":
            if h["iri"] in self.graphs:
                self.delete_graph(h["iri"], logged=False)

    def _maybe_checkpoint(self) -> None:
        if (self._log is not None
                and time.monotonic() - self._last_checkpoint >= self.config.checkpoint_every):
            self.checkpoint()

    def checkpoint(self) -> None:
        """Write a checkpoint of every engine (in the engine room)."""
        if self._log is None or self.config.state_dir is None:
            return
        self._durable()                   # what it holds came from durable inputs
        deps = []
        for d in self.deployments.values():
            if d.file is not None:
                d.file.sync()
            deps.append({"spec": d.spec.to_json(), "answers": d.answers, "events": d.events,
                         "per_query": d.per_query,
                         "late": d.late, "error": d.error,
                         "snapshot": b"" if d.error is not None else d.engine.snapshot()})
        counters = {k: getattr(self, k) for k in ("events", "inputs", "late", "malformed",
                                                   "answers")}
        with self._order:                 # inputs logged meanwhile: in the log after it
            # (their keys may be among these: they are logged, so taken)
            counters["keys"] = list(self._keys)           # type: ignore[assignment]
            counters["mqtt_logged"] = list(self.mqtt_logged)   # type: ignore[assignment]
        # written without the lock: inputs go on being logged meanwhile
        Checkpoint(self._applied, deps, {k: list(v) for k, v in self.graphs.items()},
                   counters).write(self.config.state_dir)
        with self._order:
            self._sync.wait(self._log.last)     # rotating closes the segment
            self._log.rotate(self._applied)
        self._last_checkpoint = time.monotonic()

    # -- what a deployment shows (called in the engine room) ---------------------------
    def describe(self, name: str) -> dict[str, Any]:
        d = self._get(name)
        out = self.summary(d)
        out["queries"] = [{"name": q.name, "text": q.text, "dialect": q.dialect,
                           "form": q.form, "variables": list(q.variables)} for q in d.queries]
        out["rules"] = d.spec.rules
        try:
            out["partial_matches"] = d.engine.core.stats()["goals"]
        except Exception:
            out["partial_matches"] = None
        return out

    def summary(self, d: Deployed) -> dict[str, Any]:
        """A deployment's state and counters (no engine call: any thread)."""
        return {"name": d.spec.name, "state": d.state, "error": d.error,
                "queries_count": len(d.queries), "events": d.events, "answers": d.answers,
                "late": d.late, "registered": d.registered,
                "dialects": sorted({q.dialect for q in d.queries})}

    def recent(self, name: str, after: int = 0, limit: int = 1000) -> list[tuple[int, str]]:
        """Answers numbered above ``after``, each with its number: from
        memory, else from the answer file; without a file, answers older
        than the last ``recent`` are gone (the first number returned then
        is above ``after + 1``)."""
        d = self._get(name)
        rec = d.recent
        if (not rec or rec[0][0] > after + 1) and d.file is not None and after < d.written:
            lines = d.file.read(after, limit)
            return [(after + i + 1, line) for i, line in enumerate(lines)]
        if not rec or after >= rec[-1][0]:
            return []
        start = max(0, after + 1 - rec[0][0])
        return list(itertools.islice(rec, start, start + limit))
