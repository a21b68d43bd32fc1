"""``epsparql run QUERY.rq... --stream FILE``: the queries over a stream.

The stream is read incrementally and pushed in batches; answers are
written as they come (``--output-format``), progress and a summary go to
standard error.  ``--trace`` hands over to :mod:`.trace`.  See docs/CLI.md.
"""
from __future__ import annotations

import argparse
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..core.runtime import PrologError
from ..io.results import OUTPUT_FORMATS, answer_writer
from ..io.streams import FORMATS, StreamFormatError, StreamReader, guess_format
from .common import (EXIT_OK, EXIT_RUNTIME, PROG, UsageError, add_dialect_option, make_engine,
                     read_queries, register_queries, say)

__all__ = ["add_parser", "cmd_run"]


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
    r.add_argument("--base", metavar="IRI", help="base IRI of the queries (bare names)")
    add_dialect_option(r)
    r.add_argument("--time-format", choices=("seconds", "iso"), default="seconds",
                   help="write times as seconds (default) or xsd:dateTime in UTC")
    r.add_argument("--progress", action="store_true",
                   help="report progress every ~2 s even if standard error is not a terminal")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    r.add_argument("--batch-size", type=int, default=5000, metavar="N",
                   help="stream rows pushed per engine call (default 5000)")
    r.add_argument("--trace", action="store_true",
                   help="push the stream one triple at a time and show, after each, the "
                   "partial matches it stored, checked or expired and the answers it "
                   "completed (text, or JSON lines with --output-format jsonl)")
    r.add_argument("--trace-limit", type=int, metavar="N",
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


def cmd_run(args: argparse.Namespace) -> int:
    """``epsparql run``: the queries over a stream, answers as they come."""
    qfs = read_queries(args.queries)
    if args.stream == "-" and "-" in args.queries:
        raise UsageError("the queries and the stream cannot both come from standard input")
    if args.stream != "-":
        sp = Path(args.stream)
        if not sp.exists():
            raise UsageError(f"stream file not found: {args.stream}")
        if sp.is_dir():
            raise UsageError(f"stream path is a directory: {args.stream}")
    if args.trace:                 # one triple at a time, with what it did (epsparql/trace.py)
        from .trace import run_trace
        return run_trace(args, qfs)
    if args.trace_limit is not None:
        raise UsageError("--trace-limit goes with --trace")
    if args.justify:
        raise UsageError("--justify goes with --trace (run --trace --justify shows why each "
                         "answer of a small stream was detected)")
    fmt = args.format or guess_format(args.stream)
    if args.batch_size < 1:
        raise UsageError("--batch-size must be at least 1")

    engine = make_engine(args.base)
    queries = register_queries(engine, qfs, args.dialect)

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

    shown_skips = 0

    def on_skip(err: StreamFormatError) -> None:
        nonlocal shown_skips
        if args.quiet:
            return
        shown_skips += 1
        if shown_skips <= 10:
            say(f"{PROG}: skipped {err}")
        elif shown_skips == 11:
            say(f"{PROG}: (further skipped lines are counted, not shown)")

    reader = StreamReader(args.stream, fmt, on_error=args.on_error, on_skip=on_skip)
    progress = _Progress(enabled=not args.quiet and (args.progress or sys.stderr.isatty()),
                         tty=sys.stderr.isatty())
    counts = {q.name: 0 for q in queries}
    events = 0
    failure: BaseException | None = None
    code = EXIT_OK
    t0 = time.perf_counter()

    def drain() -> None:
        for q in queries:
            got = q.results()
            if got:
                counts[q.name] += len(got)
                writer.write_many(got)
        writer.flush()

    try:
        rows = iter(reader)
        batch = args.batch_size
        while True:
            chunk: list[tuple] = []
            try:
                for row in rows:
                    chunk.append(row)
                    if len(chunk) >= batch:
                        break
            except (StreamFormatError, EOFError, zlib.error) as e:
                failure = e                # push what was read before, then stop
            except OSError as e:
                if isinstance(e, BrokenPipeError):
                    raise
                failure = e
            if chunk:
                engine.push_many(chunk)
                events += len(chunk)
                drain()
            progress.update(events, sum(counts.values()))
            if failure is not None or len(chunk) < batch:
                break
        if failure is None:
            engine.flush()
            drain()
    except KeyboardInterrupt:
        failure = KeyboardInterrupt()
        code = 130
        try:
            drain()
        except Exception:
            pass
    except PrologError as e:
        failure = e
    except (OSError, EOFError, zlib.error) as e:   # reading the stream failed (I/O, bad gzip)
        if isinstance(e, BrokenPipeError):
            raise
        failure = e
    finally:
        progress.done()
        reader.close()
        writer.close()
    elapsed = time.perf_counter() - t0

    if not args.quiet:
        _summary(engine, queries, counts, events, reader, elapsed)
    if isinstance(failure, StreamFormatError):
        say(f"{PROG}: error: {failure}")
        if args.on_error == "stop":
            say(f"{PROG}: stopped at the malformed line; the answers found before it were "
                 f"written (--on-error skip skips such lines)")
        return EXIT_RUNTIME
    if isinstance(failure, KeyboardInterrupt):
        say(f"{PROG}: interrupted; the answers found so far were written")
        return code
    if isinstance(failure, PrologError):
        say(f"{PROG}: error in the engine: {failure}")
        return EXIT_RUNTIME
    if failure is not None:
        say(f"{PROG}: error reading {reader.path}: {failure}")
        return EXIT_RUNTIME
    return EXIT_OK


def _summary(engine: Any, queries: Sequence[Any], counts: dict[str, int], events: int,
             reader: Any, elapsed: float) -> None:
    rate = events / elapsed if elapsed > 0 else 0.0
    parts = [f"{events:,} events in {elapsed:.2f} s ({rate:,.0f} events/s)",
             f"{reader.skipped:,} skipped lines"]
    try:
        late = engine.core.stats().get("late", 0)
    except Exception:
        late = 0
    if late:
        parts.append(f"{late:,} late events (end time before an earlier one)")
    say(f"{PROG}: " + ", ".join(parts))
    width = max([len(q.name) for q in queries] + [5])
    for q in queries:
        say(f"  {q.name:<{width}}  {q.form:<9}  {counts[q.name]:,} answers")
    errs = getattr(engine, "errors", [])
    if errs:
        say(f"  {len(errs):,} errors inside rules (first: {errs[0].message})")
