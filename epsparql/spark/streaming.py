"""Live streams on Spark Structured Streaming, with recovery.

    new files in a directory (or a socket) ──parse+route (mapInArrow: the
        batch replay's reader and router)──▶ (key, triple, times)
        ──withWatermark(end, allowed lateness)──▶ groupBy(key)
        ──applyInPandasWithState: restore the key's engine snapshot, push
          the micro-batch in time order, advance to the watermark, save──▶ rows
        ──foreachBatch: answers of batch N to answers.*/batch=N (overwrite),
          written by every partition in parallel

Exactly once: Spark's checkpoint records each micro-batch's input offsets,
watermark and the state store version; a micro-batch that was running
when the query died is run again after a restart with the same input and
the same state, so it produces the same rows, and the sink overwrites its
batch directory (idempotent).  Readers take only batch directories with a
``_SUCCESS`` marker (:func:`read_answers_dir`).

Spark's stateful operator for Python takes and gives pandas frames
(``applyInPandasWithState``; none takes Arrow batches with state): the
worker builds its answers as Arrow columns and converts them once.

Late data: rows behind Spark's watermark are dropped by the stateful
operator (counted by Spark: ``numRowsDroppedByWatermark``, reported in the
summary); rows within it but later than what a key's engine already
released go to ``side.jsonl`` (the side output).
"""
from __future__ import annotations

import glob
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

from .job import BAD, JobSpec
from .read import Piece, Problems, read_piece
from .route import ArrowRouter
from .rows import spark_schema
from .worker import STATE_SCHEMA, STREAM_FIELDS, run_with_state

ROUTED_SCHEMA = ("key string, s string, p string, o string, start double, end double, "
                 "error string, end_ts timestamp, stream string")
_ROUTED = ("key", "s", "p", "o", "start", "end", "error", "end_ts", "stream")
OUTPUT_SCHEMA = spark_schema(STREAM_FIELDS)


def parse_and_route(spec: JobSpec, format: str, on_error: str, whole_files: bool,
                    batches: Iterator[Any]) -> Iterator[Any]:
    """mapInArrow body over text rows (``value`` as bytes, ``file``): whole
    files (numbered lines) or single lines (socket), read as the batch
    replay reads a file, routed to their key groups; malformed lines as
    rows of key BAD."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from ..io.streams import StreamFormatError
    router = ArrowRouter(spec, per_key=True)
    for rb in batches:
        for value, name in zip(rb.column("value").to_pylist(), rb.column("file").to_pylist()):
            problems = Problems("skip")
            problems.KEEP = 1 << 30
            label = name if whole_files else f"{name} (line: {value[:80].decode('utf-8', 'replace')!r})"
            piece = Piece(0, label, 0, -1, format)
            data = value if whole_files else value + b"\n"
            for triples in read_piece(piece, problems, with_stream=spec.windowed, data=data):
                for routed in router.route(triples):
                    end = routed.column("end")
                    ts = pc.cast(pc.cast(pc.multiply(end, 1e6), pa.int64()),
                                 pa.timestamp("us", tz="UTC"))
                    yield pa.RecordBatch.from_arrays(
                        [routed.column("grp"), *(routed.column(c) for c in ("s", "p", "o")),
                         routed.column("start"), end, pa.nulls(len(end), pa.string()), ts,
                         routed.column("stream")], names=list(_ROUTED))
            if problems.skipped and on_error == "stop":
                raise StreamFormatError(problems.messages[0])
            if problems.messages:
                n = len(problems.messages)
                string = pa.string()
                yield pa.RecordBatch.from_arrays(
                    [pa.repeat(pa.scalar(BAD, string), n), *[pa.nulls(n, string)] * 3,
                     *[pa.nulls(n, pa.float64())] * 2, pa.array(problems.messages, string),
                     pa.nulls(n, pa.timestamp("us", tz="UTC")), pa.nulls(n, string)],
                    names=list(_ROUTED))


@dataclass
class StreamStats:
    batches: int = 0
    answers: int = 0
    events: int = 0
    late: int = 0
    dropped_by_watermark: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)


class _Sink:
    """foreachBatch: each micro-batch's rows to its own directories, overwritten
    on replay, so a re-run batch leaves exactly one copy."""

    def __init__(self, out: str, stats: StreamStats, say: Any = None) -> None:
        self.out = out.rstrip("/")
        self.stats = stats
        self.say = say

    def __call__(self, df: Any, batch_id: int) -> None:
        from pyspark import StorageLevel
        from pyspark.sql import functions as F
        df = df.persist(StorageLevel.DISK_ONLY)          # read for the counts and 3 outputs
        try:
            counts = {r["kind"]: (r["n"], r["c"]) for r in
                      df.groupBy("kind").agg(F.count("*").alias("n"), F.sum("count").alias("c")).collect()}
            part = f"batch={batch_id:08d}"
            # each partition writes its own file, in time order
            answers = df.filter(F.col("kind") == "answer") \
                .sortWithinPartitions("end", "start", "query", "json")
            answers.select("query", "key", "start", "end", "bindings", "triples") \
                .write.mode("overwrite").parquet(f"{self.out}/answers.parquet/{part}")
            answers.select("json").write.mode("overwrite").text(f"{self.out}/answers.jsonl/{part}")
            side = df.filter(F.col("kind").isin("late", "skipped", "error"))
            if counts.keys() & {"late", "skipped", "error"}:
                side.select(F.to_json(F.struct("kind", "query", "key", "start", "end", "triples",
                                               "message")).alias("json")) \
                    .write.mode("overwrite").text(f"{self.out}/side.jsonl/{part}")
            s = self.stats
            s.batches += 1
            s.answers += counts.get("answer", (0, 0))[0]
            s.events += counts.get("stats", (0, 0))[1] or 0
            s.late += counts.get("late", (0, 0))[0]
            s.skipped += counts.get("skipped", (0, 0))[0]
            if "error" in counts:
                s.errors.extend(r.message for r in df.filter(F.col("kind") == "error").collect())
            if self.say:
                self.say(f"batch {batch_id}: {counts.get('stats', (0, 0))[1] or 0} events, "
                         f"{counts.get('answer', (0, 0))[0]} answers")
        finally:
            df.unpersist()


def start_stream(spark: Any, spec: JobSpec, out: str, checkpoint: str, *,
                 watch: str | None = None, socket: tuple[str, int] | None = None,
                 format: str = "nt", on_error: str = "skip",
                 max_files_per_trigger: int | None = None, trigger_seconds: float | None = None,
                 available_now: bool = False, stats: StreamStats | None = None,
                 say: Any = None):
    """Start the streaming query; returns (StreamingQuery, StreamStats)."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout
    if (watch is None) == (socket is None):
        raise ValueError("give exactly one source: a directory to watch or a socket")
    if format not in ("nt", "nqt", "jsonl"):
        raise ValueError(f"streaming reads the line formats nt, nqt and jsonl, not {format!r}")
    if watch is not None:
        reader = spark.readStream.format("text").option("wholetext", "true")
        if max_files_per_trigger:
            reader = reader.option("maxFilesPerTrigger", int(max_files_per_trigger))
        lines = reader.load(watch).withColumn("file", F.input_file_name())
        whole = True
    else:
        host, port = socket
        lines = spark.readStream.format("socket").option("host", host).option("port", int(port)) \
            .load().withColumn("file", F.lit(f"socket {host}:{port}"))
        whole = False
    # the bytes as they are (a line that is not UTF-8 is reported as such)
    lines = lines.select(F.col("value").cast("binary").alias("value"), "file")
    routed = lines.mapInArrow(
        lambda it: parse_and_route(spec, format, on_error, whole, it), ROUTED_SCHEMA)
    lateness = spec.allowed_lateness
    wm = f"{int(lateness * 1000)} milliseconds"
    result = routed.withWatermark("end_ts", wm).groupBy("key").applyInPandasWithState(
        lambda key, it, state: run_with_state(spec, key, it, state),
        OUTPUT_SCHEMA, STATE_SCHEMA, "append", GroupStateTimeout.EventTimeTimeout)
    stats = stats or StreamStats()
    w = result.writeStream.foreachBatch(_Sink(out, stats, say)).option("checkpointLocation", checkpoint)
    if available_now:
        w = w.trigger(availableNow=True)
    elif trigger_seconds:
        w = w.trigger(processingTime=f"{trigger_seconds} seconds")
    return w.start(), stats


def dropped_by_watermark(query: Any, seen: dict[int, int]) -> int:
    """Rows Spark dropped as behind the watermark, over the progress reports
    seen so far (``seen``: batch id -> count, updated)."""
    for p in query.recentProgress or []:
        n = sum(op.get("numRowsDroppedByWatermark", 0) for op in p.get("stateOperators", []))
        seen[p["batchId"]] = n
    return sum(seen.values())


def read_answers_dir(out: str) -> list[dict]:
    """The answers a streaming job committed: JSON objects of every batch
    directory with a _SUCCESS marker, in batch order."""
    rows: list[dict] = []
    for d in sorted(glob.glob(os.path.join(out, "answers.jsonl", "batch=*"))):
        if not os.path.exists(os.path.join(d, "_SUCCESS")):
            continue
        for f in sorted(glob.glob(os.path.join(d, "part-*"))):
            with open(f, encoding="utf-8") as fh:
                rows.extend(json.loads(line) for line in fh if line.strip())
    return rows


def run_stream(spark: Any, spec: JobSpec, out: str, checkpoint: str, *,
               timeout: float | None = None, say: Any = None, **kw: Any) -> StreamStats:
    """Run until the source is exhausted (``available_now``), ``timeout``
    seconds pass, or the process is interrupted; then stop cleanly."""
    query, stats = start_stream(spark, spec, out, checkpoint, say=say, **kw)
    seen: dict[int, int] = {}
    t0 = time.monotonic()
    try:
        while query.isActive:
            query.awaitTermination(1.0)
            stats.dropped_by_watermark = dropped_by_watermark(query, seen)
            if timeout is not None and time.monotonic() - t0 > timeout:
                break
    finally:
        if query.isActive:
            query.stop()
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    stats.dropped_by_watermark = dropped_by_watermark(query, seen)
    return stats


__all__ = ["start_stream", "run_stream", "read_answers_dir", "StreamStats"]
