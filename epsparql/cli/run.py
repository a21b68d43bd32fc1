"""``epsparql run QUERY.rq... --stream FILE``: the queries over a stream.

The stream is read incrementally and pushed in batches; answers are
written as they come (``--output-format``), progress and a summary go to
standard error.  Whatever stops a run (a malformed line, a cap, the engine
running out of memory, an interrupt, the reader of the output going away)
stops it with the answers found so far written and one line saying why
and which flag to change.  ``--trace`` hands over to :mod:`.trace`.  See
docs/CLI.md.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import signal
import sys
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..core.runtime import PrologError
from ..query_engine import DEFAULT_STREAM, AnswerLimitError, LimitError, StateLimitError
from ..io.results import OUTPUT_FORMATS, answer_writer
from ..io.streams import (FORMATS, StreamFormatError, StreamHeaderError, StreamReader,
                          guess_format)
from .common import (EXIT_OK, EXIT_RUNTIME, PROG, UsageError, add_dialect_option,
                     add_engine_options, count_arg, engine_failure, load_background, make_engine,
                     one_line, read_queries, register_queries, say, seconds_arg,
                     silence_closed_output, window_options)
from .late import LateRows

__all__ = ["add_parser", "cmd_run"]

#: The flag of each engine cap.
CAP_FLAGS = {"max_goals": "--max-goals", "max_answers": "--max-answers"}


def add_parser(sub: Any) -> None:
    """The ``run`` command."""
    r = sub.add_parser("run", help="run queries over a stream",
                       description="Run queries (EP-SPARQL, or C-SPARQL, CQELS-QL, SPARQLstream, "
                       "Streaming SPARQL, LUPOSDATE, RSP-QL: detected, or --dialect; CONSTRUCT "
                       "rules and SELECT/ASK queries together, in one engine) over a timestamped "
                       "stream.")
    r.add_argument("queries", nargs="+", metavar="QUERY.rq", help="query files")
    r.add_argument("--stream", required=True, metavar="FILE",
                   help="the stream: a file (.gz read too) or - for standard input")
    r.add_argument("--format", choices=FORMATS,
                   help="stream format (default: from the file name, else nt)")
    r.add_argument("--out", metavar="FILE", help="write answers here (default: standard output)")
    r.add_argument("--output-format", choices=OUTPUT_FORMATS,
                   help="answer format (default: table on a terminal, else jsonl)")
    r.add_argument("--on-error", choices=("stop", "skip"), default="stop",
                   help="at a malformed stream line: stop with exit code 1 (default), "
                   "or skip and count it")
    add_engine_options(r)
    add_dialect_option(r)
    r.add_argument("--background", action="append", metavar="[IRI=]FILE",
                   help="background knowledge (any RDF format rdflib reads), joined with "
                   "the stream and used for reasoning; IRI=FILE loads it as the named "
                   "graph IRI (GRAPH <IRI> { ... }, FROM NAMED <IRI>); repeatable")
    r.add_argument("--lateness", "--allowed-lateness", dest="lateness", type=seconds_arg,
                   default=0.0, metavar="SECONDS",
                   help="rows may come up to SECONDS out of order (by end time) and are "
                   "still processed in order; later ones are counted, not processed "
                   "(default 0)")
    r.add_argument("--max-goals", type=count_arg, metavar="N",
                   help="stop (exit 1) when more than N partial matches are stored")
    r.add_argument("--max-answers", type=count_arg, metavar="N",
                   help="stop (exit 1) after N answers, the first N written")
    r.add_argument("--time-format", choices=("seconds", "iso"), default="seconds",
                   help="write times as seconds (default) or xsd:dateTime in UTC")
    r.add_argument("--progress", action="store_true",
                   help="report progress every ~2 s even if standard error is not a terminal")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    r.add_argument("--batch-size", type=count_arg, default=5000, metavar="N",
                   help="stream rows pushed per engine call (default 5000)")
    r.add_argument("--trace", action="store_true",
                   help="push the stream one triple at a time and show, after each, the "
                   "partial matches it stored, checked or expired and the answers it "
                   "completed (text, or JSON lines with --output-format jsonl)")
    r.add_argument("--trace-limit", type=count_arg, metavar="N",
                   help="with --trace: refuse streams of more than N triples (default 10000)")
    r.add_argument("--justify", action="store_true",
                   help="with --trace: show under each answer why it was detected, as the "
                   "tree of rule steps and events that made it")
    r.set_defaults(func=cmd_run)


@dataclass
class _Progress:
    """Events read, events/s and answers every ~2 s on standard error."""

    enabled: bool
    tty: bool
    t0: float = field(default_factory=time.perf_counter)
    last: float = field(default_factory=time.perf_counter)
    shown: bool = False

    def update(self, events: int, answers: int, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < 2.0:
            return
        self.last = now
        el = max(now - self.t0, 1e-9)
        msg = f"{PROG}: {events:,} events read, {events / el:,.0f} events/s, {answers:,} answers"
        if self.tty:
            sys.stderr.write("\r" + msg + "\033[K")
            sys.stderr.flush()
            self.shown = True
        else:
            say(msg)

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.shown = False


def check_stream_path(args: argparse.Namespace) -> None:
    """The stream file exists and is a file (or is standard input)."""
    if args.stream == "-" and "-" in args.queries:
        raise UsageError("the queries and the stream cannot both come from standard input")
    if args.stream != "-":
        sp = Path(args.stream)
        if not sp.exists():
            raise UsageError(f"stream file not found: {args.stream}")
        if sp.is_dir():
            raise UsageError(f"stream path is a directory: {args.stream}")


def cmd_run(args: argparse.Namespace) -> int:
    """``epsparql run``: the queries over a stream, answers as they come."""
    qfs = read_queries(args.queries)
    check_stream_path(args)
    if args.trace:                 # one triple at a time, with what it did (explain/trace.py)
        from .trace import run_trace
        return run_trace(args, qfs)
    if args.trace_limit is not None:
        raise UsageError("--trace-limit goes with --trace")
    if args.justify:
        raise UsageError("--justify goes with --trace (run --trace --justify shows why each "
                         "answer of a small stream was detected)")
    fmt = args.format or guess_format(args.stream)

    engine = make_engine(args.base, reasoning=args.reasoning, allowed_lateness=args.lateness,
                         max_goals=args.max_goals, max_answers=args.max_answers,
                         batch_size=args.batch_size, **window_options(args),
                         on_late=lambda row, source: None)   # counted; LateRows names them
    queries = register_queries(engine, qfs, args.dialect)
    load_background(engine, args.background)

    out_format = args.output_format
    if out_format is None:
        out_format = "table" if args.out in (None, "-") and sys.stdout.isatty() else "jsonl"
    if out_format == "nt":
        skipped_forms = [q.name for q in queries if q.form != "CONSTRUCT"]
        if skipped_forms:
            say(f"{PROG}: note: --output-format nt writes the triples of CONSTRUCT answers; "
                f"the answers of {', '.join(skipped_forms)} are not written")
    options: dict[str, Any] = {"time_format": args.time_format}
    if out_format == "table" and args.base:
        options["prefixes"] = {"": args.base}
    try:
        writer = answer_writer(out_format, args.out, queries, **options)
    except OSError as e:
        raise UsageError(f"cannot write {args.out}: {e.strerror or e}") from None

    run = _Run(args, engine, queries, writer, fmt)
    # what start-up made (modules, rdflib, pyarrow, the compiled queries:
    # some 10^5 objects) lives as long as the process: out of the
    # collector's sight, as in `serve`, a full collection no longer scans
    # it (about 50 ms each, 6% of an answer-heavy run's CPU)
    gc.collect()
    gc.freeze()
    # the stream's objects (rows, chunks, answer lines) are acyclic and die
    # young: the collector's default pace (a young collection per 700
    # allocations, a full one per 70,000) spent ~0.37 CPU s per million
    # answers re-scanning them; a young collection per 50,000 allocations
    # keeps the cycles that do form (few) from piling up, for ~0.03 s
    gc.set_threshold(50_000, 20, 20)
    run.go()
    if not args.quiet:
        run.summary()
    return run.report()


class _OutputClosed(Exception):
    """Raised into the engine to stop a batch whose answers nobody reads."""


class _Interrupted(Exception):
    """Raised into the engine to stop a batch after Ctrl-C (the answers
    found until then are written)."""


class _Interrupts:
    """Ctrl-C held back while the engine runs and while answers are
    written: the signal only marks :attr:`came`, which the run looks at
    where stopping loses nothing (after a chunk of answers is written,
    after a batch).  Elsewhere (reading the input) it interrupts at once.
    Raising KeyboardInterrupt from inside the engine's callbacks could
    surface as an engine error instead, or cut a write in two."""

    def __init__(self) -> None:
        self.came = False
        self._depth = 0
        self._old: Any = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        if self._depth == 0:
            self._old = signal.signal(signal.SIGINT, self._note)
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                signal.signal(signal.SIGINT, self._old)

    def _note(self, signum: int, frame: Any) -> None:
        self.came = True


class _Run:
    """One run: the loop over the stream and what stopped it."""

    def __init__(self, args: argparse.Namespace, engine: Any, queries: Sequence[Any],
                 writer: Any, fmt: str) -> None:
        self.args, self.engine, self.queries, self.writer = args, engine, queries, writer
        self.shown_skips = 0
        self.reader = StreamReader(args.stream, fmt, on_error=args.on_error,
                                   on_skip=self._on_skip)
        self.late = LateRows(self.reader.path, None if args.quiet else
                             (lambda m: say(f"{PROG}: {m}")))
        self.progress = _Progress(enabled=not args.quiet and (args.progress or sys.stderr.isatty()),
                                  tty=sys.stderr.isatty())
        self.counts = {q.name: 0 for q in queries}
        self.events = 0
        self.failure: BaseException | None = None
        self.failed_lines: tuple[int, int] | None = None   # the batch the engine failed in
        self.output_closed = False
        self.write_error: OSError | None = None
        self.ended = False                 # the stream was ended (Engine.flush)
        self.elapsed = 0.0
        engine.on_answers = self.answers_came
        self.interrupts = _Interrupts()

    def _on_skip(self, err: StreamFormatError) -> None:
        if self.args.quiet:
            return
        self.shown_skips += 1
        if self.shown_skips <= 10:
            say(f"{PROG}: skipped {err}")
        elif self.shown_skips == 11:
            say(f"{PROG}: (further skipped lines are counted, not shown)")

    def drain(self) -> None:
        """Write the answers found so far (unless the output failed).  A
        query's answers are taken, written and counted as one step that
        Ctrl-C does not cut (it is acted on right after): what the summary
        counts is in the output."""
        for q in self.queries:
            with self.interrupts.held():
                got = q.results()
                if got:
                    if not self.output_closed:
                        self._output(self.writer.write_many, got)
                    self.counts[q.name] += len(got)
        if not self.output_closed:
            self._output(self.writer.flush)

    def _output(self, fn: Any, *args: Any) -> None:
        """Call a writer method; a closed pipe or a failing device stops the output."""
        try:
            fn(*args)
        except BrokenPipeError:
            self._closed()
        except OSError as e:               # a full disk, an I/O error
            self.output_closed = True
            self.write_error = e

    def answers_came(self) -> None:
        """The engine delivered answers inside a batch: write them now (a
        batch's answers are never all held); stop the batch if nobody reads."""
        self.drain()
        if self.output_closed:
            raise _OutputClosed()
        if self.interrupts.came:
            raise _Interrupted()

    def _closed(self) -> None:
        """The reader of standard output went away (``| head``)."""
        self.output_closed = True
        if self.args.out in (None, "-"):
            silence_closed_output()

    def go(self) -> None:
        t0 = time.perf_counter()
        try:
            self._loop()
        except KeyboardInterrupt:
            self.failure = KeyboardInterrupt()
            try:
                self.drain()
            except Exception:
                pass
        finally:
            self.progress.done()
            self.reader.close()
            if self.output_closed:         # what is buffered can go nowhere
                try:
                    self.writer.close()
                except OSError:
                    pass
            else:
                self._output(self.writer.close)
            self.elapsed = time.perf_counter() - t0

    def _loop(self) -> None:
        """Read the stream as Arrow batches (epsparql/io/stream_batches.py:
        a live pipe's rows come as they are written, a batch need not be
        full) and push each with Engine.push_arrow, then end the stream."""
        engine = self.engine
        batches = self.reader.batches(self.args.batch_size)
        while not self.output_closed:
            try:
                batch = next(batches, None)
            except (StreamFormatError, EOFError, zlib.error, OSError) as e:
                self.failure = e           # what was read before went in; stop here
                break
            if batch is None:
                break
            if batch.num_rows and not self._push(batch):
                return
            self.progress.update(self.events, sum(self.counts.values()))
            if self.interrupts.came:
                self.failure = KeyboardInterrupt()
                return
        if self.failure is None and not self.output_closed:
            try:
                with self.interrupts.held():
                    engine.flush()
                self.ended = True
            except (LimitError, PrologError) as e:
                self.failure = e
            except _OutputClosed:
                pass
            except _Interrupted:
                self.failure = KeyboardInterrupt()
            self.drain()
            if self.interrupts.came and self.failure is None:
                self.failure = KeyboardInterrupt()

    def _push(self, batch: Any) -> bool:
        """Push one batch, count it and write its answers, as one step
        Ctrl-C does not cut (answers written but the batch not counted
        would make the summary disagree with the output); False if the
        run must stop."""
        with self.interrupts.held():
            return self._push_held(batch)

    def _push_held(self, batch: Any) -> bool:
        lines = batch.column("line").to_pylist()
        try:
            late = self.engine.push_arrow(batch)
        except StateLimitError as e:       # the batch went in; the cap stopped the run after it
            self.failure = e
            self.events += batch.num_rows
            self.drain()
            return False
        except _OutputClosed:              # the batch stopped part way: nobody reads on
            self.failed_lines = (lines[0], lines[-1])
            return False
        except _Interrupted:               # Ctrl-C: the batch stopped part way
            self.failure = KeyboardInterrupt()
            self.failed_lines = (lines[0], lines[-1])
            self.drain()
            return False
        except (AnswerLimitError, PrologError) as e:    # the batch stopped part way
            self.failure = e
            self.failed_lines = (lines[0], lines[-1])
            self.drain()
            return False
        self.events += batch.num_rows
        if late:
            ends = batch.column("end").to_pylist()
            starts = batch.column("start").to_pylist()
            self.late.pushed_ends([s if e is None else e for s, e in zip(starts, ends)],
                                  lines, late)
        else:                              # only the latest end matters then
            import pyarrow.compute as pc
            latest = pc.max(pc.coalesce(batch.column("end"), batch.column("start"))).as_py()
            self.late.pushed_ends([latest], [], [])
        self.drain()
        if self.interrupts.came:
            self.failure = KeyboardInterrupt()
            return False
        return True

    # -- the end ----------------------------------------------------------------
    def summary(self) -> None:
        engine, queries = self.engine, self.queries
        rate = self.events / self.elapsed if self.elapsed > 0 else 0.0
        parts = [f"{self.events:,} events in {self.elapsed:.2f} s ({rate:,.0f} events/s)"]
        if self.failed_lines is not None:
            a, b = self.failed_lines
            parts[0] += f", then it stopped inside the batch of lines {a:,}-{b:,}"
        parts.append(f"{self.reader.skipped:,} skipped lines")
        self.late.count = engine.late
        late = self.late.summary()
        if late:
            parts.append(late)
        if engine.buffered and not self.ended:
            parts.append(f"{engine.buffered:,} rows still held for reordering (--lateness), "
                         f"not processed")
        say(f"{PROG}: " + ", ".join(parts))
        width = max([len(q.name) for q in queries] + [5])
        for q in queries:
            say(f"  {q.name:<{width}}  {q.form:<9}  {self.counts[q.name]:,} answers")
        if self.output_closed and self.write_error is None:
            say("  (the output was closed by its reader: the run stopped there)")
        errs = getattr(engine, "errors", [])
        if errs:
            say(f"  {len(errs):,} errors inside rules (first: {one_line(errs[0])})")
        self._unfed()

    def _unfed(self) -> None:
        """Say so when a windowed query read none of the streams the rows
        were on (issue 25, finding 9: an nt file's rows are all on the
        default stream)."""
        unfed = self.engine.unfed_queries()
        if not unfed:
            return
        where = self.engine.stream_rows()
        on = ", ".join(f"{n:,} on {'the default stream' if g == DEFAULT_STREAM else f'<{g}>'}"
                       for g, n in sorted(where.items(), key=lambda x: -x[1]))
        for q, streams in unfed:
            say(f"{PROG}: note: query {q.name} reads {', '.join(f'<{g}>' for g in streams)}, "
                f"which had no rows: the rows were {on}")
        if DEFAULT_STREAM in where:
            say(f"{PROG}: note: a row names its stream in the nqt format (before the times), "
                f"in a jsonl \"stream\" field or a csv stream column; nt lines name none "
                f"(docs/CLI.md, \"Stream formats\")")

    def report(self) -> int:
        """Say what stopped the run (if anything); the exit code."""
        failure, args = self.failure, self.args
        if self.write_error is not None:
            e = self.write_error
            say(f"{PROG}: error writing the answers to {args.out or 'standard output'}: "
                f"{e.strerror or e}; the run stopped there")
            return EXIT_RUNTIME
        if failure is None:
            return EXIT_OK
        if isinstance(failure, StreamHeaderError):
            say(f"{PROG}: error: {failure}")
            return EXIT_RUNTIME
        if isinstance(failure, StreamFormatError):
            say(f"{PROG}: error: {failure} (the answers found before it were written; "
                f"--on-error skip skips such lines)")
            return EXIT_RUNTIME
        if isinstance(failure, KeyboardInterrupt):
            say(f"{PROG}: interrupted; the answers found so far were written")
            return 130
        if isinstance(failure, LimitError):
            flag = CAP_FLAGS.get(failure.limit, failure.limit)
            if failure.limit == "max_goals":
                say(f"{PROG}: error: stopped: {failure.value:,} partial matches stored, more "
                    f"than {flag} {failure.cap:,}; the answers found so far were written "
                    f"(bound the queries with FILTER (getDURATION() < ...), or raise {flag})")
            else:
                say(f"{PROG}: error: stopped after {failure.cap:,} answers ({flag} "
                    f"{failure.cap:,}); they were written (raise {flag} for more)")
            return EXIT_RUNTIME
        if isinstance(failure, PrologError):
            where = ""
            if self.failed_lines is not None:
                a, b = self.failed_lines
                where = f" in the batch of lines {a:,}-{b:,} of {self.reader.path}"
            say(f"{PROG}: error in the engine{where}: {engine_failure(failure)} (the answers "
                f"found before were written)")
            return EXIT_RUNTIME
        say(f"{PROG}: error reading {self.reader.path}: {failure}")
        return EXIT_RUNTIME
