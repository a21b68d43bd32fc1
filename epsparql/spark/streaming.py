"""Live streams on Spark Structured Streaming, with recovery.

    new files in a directory (or a socket) ──parse+route──▶ (key, triple, times)
        ──withWatermark(end, allowed lateness)──▶ groupBy(key)
        ──applyInPandasWithState: restore the key's engine snapshot, push the
          micro-batch in time order, advance to the watermark, save──▶ rows
        ──foreachBatch: answers of batch N to answers.*/batch=N (overwrite)

Exactly once: Spark's checkpoint records each micro-batch's input offsets,
watermark and the state store version; a micro-batch that was running
when the query died is run again after a restart with the same input and
the same state, so it produces the same rows, and the sink overwrites its
batch directory (idempotent).  Readers take only batch directories with a
``_SUCCESS`` marker (:func:`read_answers_dir`).

Late data: rows behind Spark's watermark are dropped by the stateful
operator (counted by Spark: ``numRowsDroppedByWatermark``, reported in the
summary); rows within it but later than what a key's engine already
released go to ``late.jsonl`` (the side output).
"""
from __future__ import annotations

import glob
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

from .job import JobSpec, Router
from .worker import BAD, OUTPUT_SCHEMA, STATE_SCHEMA, run_with_state

ROUTED_SCHEMA = ("key string, s string, p string, o string, start double, end double, "
                 "error string, end_ts timestamp, stream string")
ROUTED_COLUMNS = ["key", "s", "p", "o", "start", "end", "error", "end_ts", "stream"]


def parse_and_route(spec: JobSpec, format: str, on_error: str, whole_files: bool,
                    batches: Iterator[Any]) -> Iterator[Any]:
    """mapInPandas body over text rows (``value``, ``file``): whole files
    (numbered lines) or single lines (socket), routed to their groups."""
    import io

    import pandas as pd
    from ..io.streams import StreamFormatError, StreamReader, format_term
    router = Router(spec)
    out: list[tuple] = []
    for pdf in batches:
        for value, name in zip(pdf["value"].tolist(), pdf["file"].tolist()):
            skipped: list[str] = []
            src = io.BytesIO(value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value)
            reader = StreamReader(src, format, on_error="skip",
                                  on_skip=lambda e: skipped.append(str(e)),
                                  name=name if whole_files else f"{name} (line: {value[:80]!r})")
            for row in reader:
                s, p, o, t1, t2 = row[:5]
                g = row[5] if len(row) > 5 else None
                st, pt, ot = format_term(s), format_term(p), format_term(o)
                t2 = t1 if t2 is None else t2
                ts = pd.Timestamp(float(t2), unit="s")
                for k in router.groups(st, pt, ot):
                    out.append((k, st, pt, ot, float(t1), float(t2), None, ts, g))
            if skipped and on_error == "stop":
                raise StreamFormatError(skipped[0])
            out.extend((BAD, None, None, None, None, None, m, None, None) for m in skipped)
    yield pd.DataFrame(out, columns=ROUTED_COLUMNS)


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
        from pyspark.sql import functions as F
        df = df.persist()
        try:
            counts = {r["kind"]: (r["n"], r["c"]) for r in
                      df.groupBy("kind").agg(F.count("*").alias("n"), F.sum("count").alias("c")).collect()}
            part = f"batch={batch_id:08d}"
            # one file per batch, in time order (coalesce, then sort: no shuffle)
            answers = df.filter(F.col("kind") == "answer").coalesce(1) \
                .sortWithinPartitions("end", "start", "query", "json")
            answers.select("query", "key", "start", "end", "bindings", "triples") \
                .write.mode("overwrite").parquet(f"{self.out}/answers.parquet/{part}")
            answers.select("json").write.mode("overwrite").text(f"{self.out}/answers.jsonl/{part}")
            side = df.filter(F.col("kind").isin("late", "skipped", "error"))
            if counts.keys() & {"late", "skipped", "error"}:
                side.select(F.to_json(F.struct("kind", "query", "key", "start", "end", "triples",
                                               "message")).alias("json")) \
                    .coalesce(1).write.mode("overwrite").text(f"{self.out}/side.jsonl/{part}")
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
    routed = lines.mapInPandas(
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
