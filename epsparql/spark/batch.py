"""Batch replay of historical streams on Spark.

    pieces ──read (mapInArrow: Arrow fast path, stream reader for the rest)
           + route (a copy per group: part, grp)──▶ compact rows
           ──repartitionById(part)──▶ sort within partitions by ([grp,] end, start, seq)
           ──engines (mapInArrow: one engine per partition or key group)──▶ answers
           ──▶ written by every engine task in parallel: Parquet, JSON lines

That is the shuffle plan.  With few partitions over a small input the
scan plan (:mod:`epsparql.spark.scan`) replaces the read stage and the
exchange: each engine task reads every piece and keeps its own rows.

No stage funnels the answers through one task and nothing is cached that
is read once: with one output, the engines' answers go straight to the
writer; read twice (two outputs, or a total time order, whose range
partitioning samples them first) they are persisted on disk, not in the
heap.  The counts (events, answers per query, skipped lines, late rows,
rule errors) are added up by the tasks that make the rows
(:mod:`epsparql.spark.counts`), not by another pass over the answers.

Each group runs from a clean engine state and is flushed at its end, so
the answers are, as a multiset, those of one engine over the stream
sorted by time.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from .counts import JobTotals, accumulator
from .failure import JobFailed, jvm_exit_code
from .job import JobSpec
from .read import Piece, plan_pieces
from .route import ENGINE_COLUMNS, ROUTED_SCHEMA, ArrowRouter, engine_order, read_routed
from .rows import ANSWER_FIELDS, spark_schema
from .scan import choose, scan_and_run
from .worker import run_partition

#: The columns each output writes.
OUTPUT_FIELDS = {"parquet": ("query", "key", "start", "end", "bindings", "triples"),
                 "jsonl": ("json",)}
#: The total order of ``order="time"``: by end, then start, then query name.
TIME_ORDER = ("end", "start", "query")


def read_and_route(spec: JobSpec, pieces: Sequence[Piece], on_error: str, counts: Any,
                   batches: Iterator[Any]) -> Iterator[Any]:
    """mapInArrow body of the read stage, over the ids of its pieces (one a
    task): the pieces' triples, routed.  Malformed lines are counted under
    ``("read", piece)`` (``on_error="skip"``) or fail the task (``stop``)."""
    router = ArrowRouter(spec)
    for rb in batches:
        for idx in rb.column(0).to_pylist():
            yield from read_routed(spec, pieces[idx], router, on_error, counts)


@dataclass
class BatchPlan:
    """The DataFrames of a replay (lazy) and the accumulator its tasks count into."""

    routed: Any                     # None in the scan plan
    answers: Any
    counts: Any
    partitions: int
    pieces: int
    routing: str = "shuffle"

    def totals(self) -> JobTotals:
        """What the tasks run so far counted (complete after an action)."""
        return JobTotals.of(self.counts.value)


def plan_batch(spark: Any, spec: JobSpec, files: Sequence[str], *, format: str | None = None,
               on_error: str = "stop", partitions: int | None = None,
               fields: Sequence[str] = ANSWER_FIELDS, text_blocks: bool = False,
               routing: str = "auto") -> BatchPlan:
    """The replay as DataFrames: routed rows and answers of ``fields``
    (``text_blocks``: the JSON lines only, in blocks of lines a row, see
    :func:`~epsparql.spark.worker.run_partition`).
    Windowed queries (the stream dialects) evaluate their windows up to the
    last time stamp of the whole input in every group, as one engine would:
    that time is found first, by a pass over the input (not the answers).
    ``routing``: ``shuffle``, ``scan`` or ``auto``
    (:func:`~epsparql.spark.scan.choose`)."""
    from pyspark.sql import functions as F
    n = partitions or spark.sparkContext.defaultParallelism
    pieces = plan_pieces([str(p) for p in files], format, n)
    counts = accumulator(spark)
    if choose(routing, pieces, n) == "scan":
        ids = spark.range(0, n, numPartitions=n)
        answers = ids.mapInArrow(
            lambda it: scan_and_run(spec, pieces, n, on_error, fields, counts, text_blocks, it),
            spark_schema(fields))
        return BatchPlan(None, answers, counts, n, len(pieces), "scan")
    ids = spark.range(0, len(pieces), numPartitions=max(1, len(pieces)))
    routed = ids.mapInArrow(lambda it: read_and_route(spec, pieces, on_error, counts, it),
                            ROUTED_SCHEMA)
    last = None
    if spec.windowed:
        phase = ["the pass that finds the input's last time stamp (windowed queries)"]
        _describe(spark, phase, phase[0])
        try:
            last = routed.agg(F.max("end")).first()[0]
        except Exception as e:
            raise JobFailed(phase[0], e, jvm_exit_code(spark, e)) from e
    # the engines get what they push and how to group it (part and seq done)
    grouped = routed.repartitionById(n, "part").sortWithinPartitions(*engine_order(spec)) \
        .select(*ENGINE_COLUMNS)
    answers = grouped.mapInArrow(
        lambda it: run_partition(spec, fields, it, counts, last, text_blocks=text_blocks),
        spark_schema(fields))
    return BatchPlan(routed, answers, counts, n, len(pieces))


@dataclass
class BatchResult:
    """What a batch replay did."""

    answers: int = 0
    events: int = 0
    routed: int = 0
    skipped: int = 0
    skipped_lines: list[str] = field(default_factory=list)
    late: int = 0
    errors: int = 0
    error_messages: list[str] = field(default_factory=list)
    per_query: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    partitions: int = 1
    routing: str = "shuffle"
    outputs: dict[str, str] = field(default_factory=dict)


def run_batch(spark: Any, spec: JobSpec, files: Sequence[str], out: str | None, *,
              format: str | None = None, on_error: str = "stop", partitions: int | None = None,
              write: Sequence[str] = ("parquet", "jsonl"), order: str = "partition",
              routing: str = "auto") -> BatchResult:
    """Replay ``files`` through the queries of ``spec`` and write the answers
    under ``out`` (``answers.parquet/``, ``answers.jsonl/``: directories of
    part files, one per engine partition; ``out`` None: count only).

    ``order="partition"``: each part file holds its partition's answers in
    the order its engines found them (by time for each key group);
    ``order="time"``: a total order by :data:`TIME_ORDER`, the part files
    in name order (range partitioning: a distributed sort).  ``routing``:
    how rows reach the engines (:func:`plan_batch`)."""
    from pyspark import StorageLevel
    if order not in ("partition", "time"):
        raise ValueError(f"order is 'partition' or 'time', not {order!r}")
    unknown = set(write) - set(OUTPUT_FIELDS)
    if unknown:
        raise ValueError(f"unknown output format(s) {sorted(unknown)} (parquet, jsonl)")
    t0 = time.perf_counter()
    kinds = [w for w in OUTPUT_FIELDS if w in write] if out is not None else []
    needed = {f for k in kinds for f in OUTPUT_FIELDS[k]}
    if order == "time":
        needed |= set(TIME_ORDER)
    fields = [f for f in ANSWER_FIELDS if f in needed] or ["query"]
    # JSON lines alone, in no particular order: written in blocks of lines
    blocks = kinds == ["jsonl"] and order == "partition"
    plan = plan_batch(spark, spec, files, format=format, on_error=on_error,
                      partitions=partitions, fields=fields, text_blocks=blocks,
                      routing=routing)
    answers = plan.answers
    reads = len(kinds) + (order == "time")      # the range partitioner samples them
    if reads > 1:
        answers = answers.persist(StorageLevel.DISK_ONLY)
    result = BatchResult(partitions=plan.partitions, routing=plan.routing)
    phase = ["planning the replay"]
    try:
        # a distributed sort: ranges of time, one per partition, each sorted
        ordered = answers.repartitionByRange(plan.partitions, *TIME_ORDER) \
            .sortWithinPartitions(*TIME_ORDER) if order == "time" else answers
        if not kinds:
            _describe(spark, phase, "reading, routing and running the engines (answers counted)")
            ordered.write.format("noop").mode("overwrite").save()
        for kind in kinds:
            path = f"{out.rstrip('/')}/answers.{kind}"
            _describe(spark, phase, f"the job that reads, routes, runs the engines and writes "
                      f"{path}" if kind == kinds[0] else f"the job that writes {path}")
            writer = ordered.select(*OUTPUT_FIELDS[kind]).write.mode("overwrite")
            if kind == "parquet":
                writer.parquet(path)
            else:
                writer.text(path)
            result.outputs[kind] = path
    except Exception as e:
        failed = JobFailed(phase[0], e, jvm_exit_code(spark, e))
        _release(spark, answers if reads > 1 else None, failed=True)
        raise failed from e
    _release(spark, answers if reads > 1 else None, failed=False)
    t = plan.totals()
    result.events, result.routed, result.per_query = t.events, t.routed, t.per_query
    result.answers = sum(t.per_query.values())
    result.skipped, result.skipped_lines = t.skipped, t.skipped_messages
    result.late, result.errors, result.error_messages = t.late, t.errors, t.error_messages
    result.seconds = time.perf_counter() - t0
    return result


def _release(spark: Any, persisted: Any, failed: bool) -> None:
    """Drop the persisted answers and the job description; after a failure
    the JVM may be gone, and that must not hide what failed."""
    try:
        if persisted is not None:
            persisted.unpersist()
        spark.sparkContext.setJobDescription(None)
    except Exception:
        if not failed:
            raise


def _describe(spark: Any, phase: list[str], text: str) -> None:
    """Name the jobs that follow (Spark's UI and event log) and remember it
    for a failure report."""
    phase[0] = text
    spark.sparkContext.setJobDescription(f"epsparql: {text}")


def answers_frame(spark: Any, spec: JobSpec, files: Sequence[str], *, format: str | None = None,
                  on_error: str = "stop", partitions: int | None = None,
                  fields: Sequence[str] = ANSWER_FIELDS, routing: str = "auto"):
    """The DataFrame of a replay's answers (lazy)."""
    return plan_batch(spark, spec, files, format=format, on_error=on_error,
                      partitions=partitions, fields=fields, routing=routing).answers


def collect_answers(spark: Any, spec: JobSpec, files: Sequence[str], **kw: Any) -> list:
    """The answers of a replay as :class:`epsparql.Answer` objects (for
    notebooks and tests; everything comes to the driver)."""
    import json
    from ..io.results import answer_from_json
    df = answers_frame(spark, spec, files, fields=("json",), **kw)
    return [answer_from_json(json.loads(r.json)) for r in df.collect()]


def read_answers(out: str) -> Iterator[Any]:
    """The answers a replay wrote under ``out`` (``answers.jsonl/``), part
    file by part file in name order (with ``order="time"``: in time order)."""
    import glob
    import os
    from ..io.results import read_answers as read_file
    for f in sorted(glob.glob(os.path.join(out, "answers.jsonl", "part-*"))):
        yield from read_file(f)


def lines_digest(paths: Sequence[str]) -> tuple[int, int]:
    """(number of lines, sum of their 64-bit BLAKE2 hashes mod 2**64) of text
    files: equal for equal multisets of lines whatever their order, so two
    replays' (or a replay's and ``epsparql run``'s) JSON lines of millions
    of answers compare without holding them."""
    import hashlib
    n = total = 0
    for path in paths:
        with open(path, "rb") as f:
            for line in f:
                line = line.rstrip(b"\n")
                if line:
                    n += 1
                    total += int.from_bytes(hashlib.blake2b(line, digest_size=8).digest(), "big")
    return n, total % (1 << 64)
