"""``epsparql spark run`` (batch replay) and ``epsparql spark stream`` (live).

    epsparql spark run QUERY.rq... --stream PATH... --out DIR
                 [--master local[*]] [--partitions N] [--format nt|jsonl|csv]
                 [--output-format parquet,jsonl] [--order partition|time]
                 [--driver-memory SIZE] [--conf KEY=VALUE]...
                 [--background FILE]... [--on-error stop|skip] [--no-partition]
    epsparql spark stream QUERY.rq... (--watch DIR | --socket HOST:PORT)
                 --out DIR --checkpoint DIR [--available-now] [--trigger SECONDS]
                 [--max-files-per-trigger N] [--allowed-lateness SECONDS] ...

Exit codes as for ``epsparql run``.  The pipeline itself is
:mod:`epsparql.spark`; see docs/SPARK.md.
"""
from __future__ import annotations

import argparse
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, Callable

from ..io.streams import FORMATS
from ..spark.job import ROUTINGS, JobSpec, expand_paths
from .common import (EXIT_OK, EXIT_RUNTIME, PROG, ArgumentParser, UsageError,
                     add_engine_options, count_arg, load_background, make_engine, read_queries,
                     register_queries, say, seconds_arg, window_options)


def _spec(args: argparse.Namespace, qfs: list) -> JobSpec:
    """The job: background files checked, every bad query named with its file,
    line and column (all of them, before Spark starts)."""
    checker = make_engine(args.base, reasoning=args.reasoning,
                          **window_options(args))
    try:
        register_queries(checker, qfs)
        # read once here: errors name the file (the workers get one graph: no IRI=FILE)
        load_background(checker, args.background, named=False)
    finally:
        checker.close()
    return JobSpec.build([(qf.name, qf.text) for qf in qfs], base=args.base,
                         reasoning=args.reasoning, background=args.background or (),
                         allowed_lateness=args.allowed_lateness,
                         partition=not args.no_partition,
                         **window_options(args))


def _show_plan(spec: Any, quiet: bool) -> None:
    if not quiet:
        for line in spec.plan.describe():
            say(f"{PROG}: partitioning: {line}")


def _session(args: argparse.Namespace) -> Any:
    """The SparkSession of a command: --driver-memory and --conf applied;
    a replay that writes JSON lines alone leaves the JVM little work."""
    from ..spark.session import spark_session
    conf = dict(args.conf or [])
    if args.driver_memory:
        conf["spark.driver.memory"] = args.driver_memory
    light = tuple(getattr(args, "output_format", ())) == ("jsonl",) and \
        getattr(args, "order", "partition") == "partition"
    return spark_session(args.master, conf=conf, light_jvm=light)


def _start_session(args: argparse.Namespace) -> Callable[[], Any]:
    """Start the SparkSession in a thread: its JVM takes seconds to start,
    and the queries are compiled meanwhile.  Returns the function that
    waits for it (and raises what starting it raised)."""
    got: dict[str, Any] = {}

    def start() -> None:
        try:
            got["spark"] = _session(args)
        except BaseException as e:         # handed to the waiting thread
            got["error"] = e

    thread = threading.Thread(target=start, name="spark-session", daemon=True)
    thread.start()

    def wait() -> Any:
        thread.join()
        if "error" in got:
            raise got["error"]
        return got["spark"]
    return wait


def _failure(e: Exception, args: argparse.Namespace, spark: Any) -> str:
    """One line for a failed job (no JVM stack, no Py4J object names)."""
    from ..spark.failure import explain
    heap = args.driver_memory
    if heap is None and spark is not None:
        try:
            heap = spark.sparkContext.getConf().get("spark.driver.memory", "1g")
        except Exception:                  # the JVM is gone
            heap = None
    return explain(e, local=args.master.startswith("local"), heap=heap)


def cmd_spark_run(args: argparse.Namespace) -> int:
    """``epsparql spark run``: batch replay of stream files."""
    from ..spark.batch import run_batch
    from ..spark.failure import error_text
    qfs = read_queries(args.queries)
    try:
        files = expand_paths(args.stream)
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None
    session = _start_session(args)
    spec = _spec(args, qfs)
    _show_plan(spec, args.quiet)
    spark = None
    try:
        spark = session()
        res = run_batch(spark, spec, files, args.out, format=args.format,
                        on_error=args.on_error, partitions=args.partitions,
                        write=args.output_format, order=args.order, routing=args.routing)
    except KeyboardInterrupt:
        raise
    except Exception as e:                 # a worker's error arrives wrapped by Spark
        if os.environ.get("EPSPARQL_DEBUG"):
            raise
        line = _failure(e, args, spark)
        if "StreamFormatError" in error_text(e):
            say(f"{PROG}: error: {line} (nothing was written; --on-error skip skips such lines)")
        else:
            say(f"{PROG}: error: the Spark job failed: {line}")
        return EXIT_RUNTIME
    if not args.quiet:
        for m in res.skipped_lines:
            say(f"{PROG}: skipped {m}")
        for m in res.error_messages:
            say(f"{PROG}: error in a rule: {m}")
        rate = res.events / res.seconds if res.seconds else 0
        per = ", ".join(f"{q} {n:,}" for q, n in sorted(res.per_query.items())) or "none"
        say(f"{PROG}: {len(files)} file(s), {res.events:,} events routed to {res.partitions} "
            f"partition(s) ({res.routing}) in {res.seconds:.1f} s ({rate:,.0f} events/s); answers: {per}; "
            f"{res.skipped:,} skipped lines; {res.late:,} late; {res.errors:,} rule errors")
        for kind, path in res.outputs.items():
            say(f"{PROG}: wrote {path} ({kind})")
    return EXIT_OK


def cmd_spark_stream(args: argparse.Namespace) -> int:
    """``epsparql spark stream``: Structured Streaming with recovery."""
    from ..spark.streaming import run_stream
    qfs = read_queries(args.queries)
    if (args.watch is None) == (args.socket is None):
        raise UsageError("give --watch DIR or --socket HOST:PORT")
    socket = None
    if args.socket:
        host, _, port = args.socket.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise UsageError(f"--socket takes HOST:PORT, got {args.socket!r}")
        socket = (host, int(port))
    elif not Path(args.watch).is_dir():
        raise UsageError(f"--watch needs a directory: {args.watch}")
    fmt = args.format or "nt"
    if fmt not in ("nt", "nqt", "jsonl"):
        raise UsageError("streaming reads the line formats nt, nqt and jsonl")
    session = _start_session(args)
    spec = _spec(args, qfs)
    _show_plan(spec, args.quiet)
    spark = None
    report = None if args.quiet else (lambda m: say(f"{PROG}: {m}"))
    t0 = time.perf_counter()
    try:
        spark = session()
        st = run_stream(spark, spec, args.out, args.checkpoint, watch=args.watch, socket=socket,
                        format=fmt, on_error=args.on_error,
                        max_files_per_trigger=args.max_files_per_trigger,
                        trigger_seconds=args.trigger, available_now=args.available_now,
                        timeout=args.timeout, say=report)
    except KeyboardInterrupt:
        say(f"{PROG}: interrupted; committed batches are in {args.out}, "
             f"restart with the same --checkpoint to resume")
        return 130
    except Exception as e:                 # a worker's error arrives wrapped by Spark
        if os.environ.get("EPSPARQL_DEBUG"):
            raise
        say(f"{PROG}: error: the streaming query failed: {_failure(e, args, spark)}")
        return EXIT_RUNTIME
    if not args.quiet:
        say(f"{PROG}: {st.batches} batch(es), {st.events:,} events, {st.answers:,} answers in "
             f"{time.perf_counter() - t0:.1f} s; late: {st.late:,} to the side output, "
             f"{st.dropped_by_watermark:,} dropped behind the watermark; "
             f"{st.skipped:,} skipped lines; {len(st.errors):,} rule errors")
    return EXIT_OK


def _size_arg(text: str) -> str:
    if not re.fullmatch(r"[1-9][0-9]*[kmgtKMGT]?", text.strip()):
        raise argparse.ArgumentTypeError(f"a size like 512m or 4g, got {text!r}")
    return text.strip().lower()


def _conf_arg(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not eq or not key.strip().startswith("spark."):
        raise argparse.ArgumentTypeError(f"KEY=VALUE with a spark.* key, got {text!r}")
    return key.strip(), value


def _outputs_arg(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    if not kinds or set(kinds) - {"parquet", "jsonl"}:
        raise argparse.ArgumentTypeError(f"parquet, jsonl or parquet,jsonl, got {text!r}")
    return kinds


def add_parser(sub: Any) -> None:
    """The ``spark`` command group of ``epsparql``."""
    sp = sub.add_parser("spark", help="run queries on Apache Spark (batch replay, streaming)",
                        description="Run EP-SPARQL queries on Apache Spark: partitioned by a "
                        "key every stream pattern binds (see `epsparql explain`).")
    ssub = sp.add_subparsers(dest="spark_command", metavar="COMMAND", parser_class=ArgumentParser)
    ssub.required = True

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("queries", nargs="+", metavar="QUERY.rq", help="query files")
        p.add_argument("--out", required=True, metavar="DIR", help="output directory")
        p.add_argument("--master", default="local[*]",
                       help="Spark master URL (default local[*]: all cores of this machine)")
        p.add_argument("--background", action="append", metavar="FILE",
                       help="background knowledge (any RDF format rdflib reads); repeatable")
        add_engine_options(p)
        p.add_argument("--allowed-lateness", "--lateness", dest="allowed_lateness",
                       type=seconds_arg, default=0.0, metavar="SECONDS",
                       help="out-of-order tolerance (streaming: also the watermark delay)")
        p.add_argument("--no-partition", action="store_true",
                       help="run every query on the whole stream in one group")
        p.add_argument("--driver-memory", metavar="SIZE", type=_size_arg,
                       help="heap of the driver JVM, e.g. 4g (local mode: it runs the "
                       "executors too; default a quarter of the machine's RAM, 1g to 32g)")
        p.add_argument("--conf", action="append", type=_conf_arg, metavar="KEY=VALUE",
                       help="a Spark setting (repeatable), e.g. spark.executor.memory=8g")
        p.add_argument("-q", "--quiet", action="store_true", help="no plan, progress or summary")

    r = ssub.add_parser("run", help="batch replay of stream files",
                        description="Replay stream files (many files, directories, globs) "
                        "through the queries, partitioned by key; write answers as Parquet "
                        "and JSON lines.")
    common(r)
    r.add_argument("--stream", required=True, nargs="+", metavar="PATH",
                   help="stream files, directories or glob patterns")
    r.add_argument("--format", choices=FORMATS, help="stream format (default: from file names)")
    r.add_argument("--partitions", type=count_arg, metavar="N",
                   help="number of partitions (default: Spark's default parallelism)")
    r.add_argument("--on-error", choices=("stop", "skip"), default="stop",
                   help="at a malformed line: fail the job (default) or skip and count it")
    r.add_argument("--routing", choices=ROUTINGS, default="auto",
                   help="how rows reach the engines: shuffle (read once, Spark's exchange), "
                   "scan (each engine task reads the whole input and keeps its rows: no "
                   "exchange), auto (default: scan for at most 4 partitions with at most "
                   "256 MiB of input each)")
    r.add_argument("--output-format", type=_outputs_arg, default=("parquet", "jsonl"),
                   metavar="FORMATS", help="what to write under --out: parquet, jsonl, or "
                   "both as parquet,jsonl (default)")
    r.add_argument("--order", choices=("partition", "time"), default="partition",
                   help="partition (default): each part file in the order its engines found "
                   "the answers; time: one total order by end, start, query (a distributed "
                   "sort; part files in name order)")
    r.set_defaults(func=cmd_spark_run)

    s = ssub.add_parser("stream", help="Structured Streaming with recovery",
                        description="Run the queries continuously over new files in a "
                        "directory (or lines from a socket), with engine state in Spark's "
                        "state store; restart with the same --checkpoint to resume.")
    common(s)
    s.add_argument("--watch", metavar="DIR", help="a directory: each new file is input")
    s.add_argument("--socket", metavar="HOST:PORT", help="a socket sending lines (demos)")
    s.add_argument("--checkpoint", required=True, metavar="DIR", help="checkpoint directory")
    s.add_argument("--format", choices=("nt", "nqt", "jsonl"), help="line format (default nt)")
    s.add_argument("--on-error", choices=("stop", "skip"), default="skip",
                   help="at a malformed line: skip it to the side output (default) or fail")
    s.add_argument("--available-now", action="store_true",
                   help="process what is there now, then stop")
    s.add_argument("--trigger", type=seconds_arg, metavar="SECONDS",
                   help="start a micro-batch every SECONDS (default: as soon as possible)")
    s.add_argument("--max-files-per-trigger", type=count_arg, metavar="N",
                   help="at most N new files per micro-batch")
    s.add_argument("--timeout", type=seconds_arg, metavar="SECONDS",
                   help="stop cleanly after SECONDS")
    s.set_defaults(func=cmd_spark_stream)


__all__ = ["add_parser", "cmd_spark_run", "cmd_spark_stream"]
