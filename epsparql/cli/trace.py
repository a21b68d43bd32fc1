"""``epsparql run … --trace``: a small stream one triple at a time, with
what each triple did to the rule graph (:mod:`epsparql.explain.trace`),
or, for the stream dialects' windowed queries, what each window held at
every instant they answered (:mod:`epsparql.explain.window_trace`), as
text or JSON lines.  See docs/CLI.md.

The triples are traced in the order the engine of a normal run processes
them: rows are put through the same reorder buffer (``--lateness``) first,
so a row held back appears where it was processed and a late row where it
arrived, marked late, exactly as ``run`` counts it.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..core.runtime import PrologError
from ..query_engine import LimitError
from ..explain.trace import Tracer
from ..explain.trace_output import JsonRenderer, TextRenderer
from ..explain.window_trace import WindowTracer
from ..explain.window_trace_output import WindowJsonRenderer, WindowTextRenderer
from ..io.streams import (StreamFormatError, StreamHeaderError, StreamReader, guess_format,
                          open_output)
from ..ordering import Reorderer
from .common import (EXIT_OK, EXIT_RUNTIME, PROG, UsageError, engine_failure, load_background,
                     make_engine, register_queries, say, silence_closed_output, window_options)
from .late import LateRows

__all__ = ["run_trace", "DEFAULT_LIMIT", "processing_order"]

DEFAULT_LIMIT = 10_000


def processing_order(rows: Sequence[tuple], lateness: float) -> list[tuple]:
    """The steps of a run over ``rows``: ``("row", i, released_by)`` when
    row ``i`` is processed (``released_by``: the row whose arrival released
    it, ``"end"`` for the end of the stream, None when it went straight
    through) and ``("late", i, gap)`` for a late row, in the order the
    engine's reorder buffer (:class:`~epsparql.ordering.Reorderer`) gives."""
    order = Reorderer(lateness, on_late=lambda row, source: None)
    index: dict[int, int] = {}
    norm = []
    for i, r in enumerate(rows):
        t = (r[0], r[1], r[2], r[3], r[3] if len(r) < 5 or r[4] is None else r[4])
        norm.append(t)
        index[id(t)] = i
    steps: list[tuple] = []
    max_end = float("-inf")
    for i, t in enumerate(norm):
        late: list[int] = []
        out = order.add([t], "default", late)
        if late:
            steps.append(("late", i, max_end - t[4]))
        for r in out:
            j = index[id(r)]
            steps.append(("row", j, None if j == i else i))
        max_end = max(max_end, t[4])
    for r in order.flush():
        steps.append(("row", index[id(r)], "end"))
    return steps


def run_trace(args: Any, qfs: Sequence[Any]) -> int:
    """``epsparql run QUERY.rq… --stream FILE --trace`` (``qfs``: the query
    files, already read by the command)."""
    fmt = args.format or guess_format(args.stream)
    limit = args.trace_limit if args.trace_limit is not None else DEFAULT_LIMIT
    out_format = args.output_format
    if out_format not in (None, "table", "jsonl"):
        raise UsageError(f"--trace writes text (the default) or JSON lines "
                         f"(--output-format jsonl), not {out_format}")
    for flag, value in (("--max-goals", args.max_goals), ("--max-answers", args.max_answers)):
        if value is not None:
            raise UsageError(f"{flag} goes with a normal run, not --trace (a trace is for "
                             f"small streams: --trace-limit bounds it)")
    justify = bool(getattr(args, "justify", False))
    engine = make_engine(args.base, reasoning=args.reasoning, justify=justify,
                         **window_options(args))
    queries = register_queries(engine, qfs, getattr(args, "dialect", None))
    windowed = [q.name for q in queries if q.windowed]
    plain = [q.name for q in queries if not q.windowed]
    if windowed and plain:
        raise UsageError(f"--trace shows EP-SPARQL queries' partial matches or windowed "
                         f"queries' windows, one kind at a time: trace {', '.join(plain)} "
                         f"and {', '.join(windowed)} in two runs")
    if windowed and justify:
        raise UsageError("--justify explains EP-SPARQL answers; a windowed query's trace "
                         "shows each window's content at the instants it answered")
    load_background(engine, args.background)

    try:
        out, close = open_output(args.out)
    except OSError as e:
        raise UsageError(f"cannot write {args.out}: {e.strerror or e}") from None
    # read first: a trace is for small streams, and refusing a long one
    # before printing anything is kinder than stopping half way
    reader = StreamReader(args.stream, fmt, on_error=args.on_error,
                          on_skip=None if args.quiet else
                          (lambda err: say(f"{PROG}: skipped {err}")))
    rows: list[tuple] = []
    lines: list[int] = []
    failure: BaseException | None = None
    try:
        for row in reader:
            rows.append(row)
            lines.append(reader.line)
            if len(rows) > limit:
                raise UsageError(
                    f"--trace prints a block per triple and is meant for small streams: "
                    f"{reader.path} has more than {limit:,} triples (cut it, e.g. with head, "
                    f"or raise the limit with --trace-limit N)")
    except StreamFormatError as e:
        failure = e
    except OSError as e:
        failure = e
    finally:
        reader.close()

    steps = processing_order(rows, args.lateness)
    late = LateRows(reader.path, None if args.quiet else (lambda m: say(f"{PROG}: {m}")))
    late.pushed(rows, lines, [i for kind, i, _ in steps if kind == "late"])

    prefixes = {"": args.base} if args.base else None
    if windowed:
        renderer_cls: Any = WindowJsonRenderer if out_format == "jsonl" else WindowTextRenderer
    else:
        renderer_cls = JsonRenderer if out_format == "jsonl" else TextRenderer
    renderer = renderer_cls(out, queries, time_format=args.time_format, prefixes=prefixes)
    code = EXIT_OK
    try:
        tracer: Any = WindowTracer(engine, queries) if windowed else \
            Tracer(engine, queries, justify=justify)

        def show(rec: dict) -> None:
            if windowed:
                renderer.step(rec, tracer)
            else:
                renderer.step(rec)
        renderer.header(tracer, reader.path, len(rows))
        for kind, i, extra in steps:
            if kind == "late":
                show(tracer.late(rows[i], i + 1, extra))
            elif failure is None or extra != "end":
                held = extra + 1 if isinstance(extra, int) else extra
                show(tracer.push(rows[i], step=i + 1, held=held))
        if failure is None:
            show(tracer.end())
        renderer.finish(tracer)
    except (PrologError, LimitError) as e:
        say(f"{PROG}: error in the engine: {engine_failure(e)}")
        code = EXIT_RUNTIME
    except BrokenPipeError:                # `| head`: the reader has seen enough
        silence_closed_output()
        return EXIT_OK
    except OSError as e:
        say(f"{PROG}: error writing the trace to {args.out or 'standard output'}: "
            f"{e.strerror or e}")
        return EXIT_RUNTIME
    finally:
        try:
            if close:
                out.close()
            else:
                out.flush()
        except OSError:                    # already reported; nothing more can go out
            if not close:
                silence_closed_output()
    if late.count and not args.quiet:
        say(f"{PROG}: {late.summary()}")
    if failure is not None:
        if isinstance(failure, StreamHeaderError):
            say(f"{PROG}: error: {failure}")
        elif isinstance(failure, StreamFormatError):
            say(f"{PROG}: error: {failure} (the triples before it were traced; --on-error "
                f"skip skips such lines)")
        else:
            say(f"{PROG}: error reading {reader.path}: {failure}")
        return EXIT_RUNTIME
    return code
