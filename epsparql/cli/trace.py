"""``epsparql run … --trace``: a small stream one triple at a time, with
what each triple did to the rule graph (:mod:`epsparql.explain.trace`),
as text or JSON lines.  See docs/CLI.md."""
from __future__ import annotations

from typing import Any, Sequence

from ..core.runtime import PrologError
from ..explain.trace import Tracer
from ..explain.trace_output import JsonRenderer, TextRenderer
from ..io.streams import StreamFormatError, StreamReader, guess_format, open_output
from .common import (EXIT_OK, EXIT_RUNTIME, PROG, UsageError, make_engine, register_queries,
                     say)

__all__ = ["run_trace", "DEFAULT_LIMIT"]

DEFAULT_LIMIT = 10_000


def run_trace(args: Any, qfs: Sequence[Any]) -> int:
    """``epsparql run QUERY.rq… --stream FILE --trace`` (``qfs``: the query
    files, already read by the command)."""
    fmt = args.format or guess_format(args.stream)
    limit = args.trace_limit if args.trace_limit is not None else DEFAULT_LIMIT
    if limit < 1:
        raise UsageError("--trace-limit must be at least 1")
    out_format = args.output_format
    if out_format not in (None, "table", "jsonl"):
        raise UsageError(f"--trace writes text (the default) or JSON lines "
                         f"(--output-format jsonl), not {out_format}")
    engine = make_engine(args.base, justify=bool(getattr(args, "justify", False)))
    queries = register_queries(engine, qfs, getattr(args, "dialect", None))
    windowed = [q.name for q in queries if getattr(q, "dialect", None)]
    if windowed:
        raise UsageError(f"--trace shows the partial matches of EP-SPARQL queries; "
                         f"{', '.join(windowed)} use windows (a stream dialect): run them "
                         f"without --trace (epsparql explain shows their windows)")

    # read first: a trace is for small streams, and refusing a long one
    # before printing anything is kinder than stopping half way
    reader = StreamReader(args.stream, fmt, on_error=args.on_error,
                          on_skip=None if args.quiet else
                          (lambda err: say(f"{PROG}: skipped {err}")))
    rows: list[tuple] = []
    failure: BaseException | None = None
    try:
        for row in reader:
            rows.append(row)
            if len(rows) > limit:
                raise UsageError(
                    f"--trace prints a block per triple and is meant for small streams: "
                    f"{reader.path} has more than {limit:,} triples (cut it, e.g. with head, "
                    f"or raise the limit with --trace-limit N)")
    except StreamFormatError as e:
        failure = e
    except OSError as e:
        if isinstance(e, BrokenPipeError):
            raise
        failure = e
    finally:
        reader.close()

    try:
        out, close = open_output(args.out)
    except OSError as e:
        raise UsageError(f"cannot write {args.out}: {e.strerror or e}") from None
    prefixes = {"": args.base} if args.base else None
    renderer_cls = JsonRenderer if out_format == "jsonl" else TextRenderer
    renderer = renderer_cls(out, queries, time_format=args.time_format, prefixes=prefixes)
    code = EXIT_OK
    try:
        tracer = Tracer(engine, queries, justify=bool(getattr(args, "justify", False)))
        renderer.header(tracer, reader.path, len(rows))
        for row in rows:
            renderer.step(tracer.push(row))
        if failure is None:
            renderer.step(tracer.end())
        renderer.finish(tracer)
    except PrologError as e:
        say(f"{PROG}: error in the engine: {e}")
        code = EXIT_RUNTIME
    finally:
        if close:
            out.close()
        else:
            out.flush()
    if failure is not None:
        if isinstance(failure, StreamFormatError):
            say(f"{PROG}: error: {failure}")
            say(f"{PROG}: stopped at the malformed line; the triples before it were traced "
                 f"(--on-error skip skips such lines)")
        else:
            say(f"{PROG}: error reading {reader.path}: {failure}")
        return EXIT_RUNTIME
    return code
