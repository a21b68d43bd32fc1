"""Batch replay of historical streams on Spark.

    files ──read+route (mapInPandas)──▶ (key, s, p, o, start, end, seq)
          ──repartition(key)──▶ sort within partitions by (key, end, start, seq)
          ──run one engine group per key (mapInPandas)──▶ answers
          ──▶ Parquet and JSON lines

Files are read whole by one task each (so malformed lines keep their file
and line number); a triple goes to every group the router names; each
group runs from a clean engine state and is flushed at its end, so the
answers are, as a multiset, those of one engine over the sorted stream.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from .job import JobSpec, Router
from .worker import BAD, OUTPUT_SCHEMA, run_sorted

ROUTED_SCHEMA = ("key string, s string, p string, o string, start double, end double, "
                 "seq long, error string")
ROUTED_COLUMNS = ["key", "s", "p", "o", "start", "end", "seq", "error"]


def read_and_route(spec: JobSpec, format: str | None, on_error: str,
                   batches: Iterator[Any], chunk: int = 50000) -> Iterator[Any]:
    """mapInPandas body over (idx, path) rows: read each file with the
    stream reader, route each row to its groups.  ``seq`` keeps the
    input order (file index, then row) for equal times."""
    import pandas as pd
    from ..io.streams import StreamReader
    router = Router(spec)
    groups = router.groups
    out: list[tuple] = []
    for pdf in batches:
        for idx, path in zip(pdf["idx"].tolist(), pdf["path"].tolist()):
            skipped: list[str] = []
            reader = StreamReader(path, format, on_error=on_error,
                                  on_skip=lambda e: skipped.append(str(e)))
            base = int(idx) << 36
            for n, (st, pt, ot, t1, t2) in enumerate(reader.texts()):
                t2 = t1 if t2 is None else t2
                seq = base + n
                for k in groups(st, pt, ot):
                    out.append((k, st, pt, ot, float(t1), float(t2), seq, None))
                if skipped:
                    out.extend((BAD, None, None, None, None, None, base, m) for m in skipped)
                    skipped.clear()
                if len(out) >= chunk:
                    yield pd.DataFrame(out, columns=ROUTED_COLUMNS)
                    out = []
            out.extend((BAD, None, None, None, None, None, base, m) for m in skipped)
    if out:
        yield pd.DataFrame(out, columns=ROUTED_COLUMNS)


@dataclass
class BatchResult:
    """What a batch replay did."""

    answers: int = 0
    events: int = 0
    routed: int = 0
    skipped: list[str] = field(default_factory=list)
    late: int = 0
    errors: list[str] = field(default_factory=list)
    per_query: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    partitions: int = 1
    outputs: dict[str, str] = field(default_factory=dict)


def answers_frame(spark: Any, spec: JobSpec, files: Sequence[str], *, format: str | None = None,
                  on_error: str = "stop", partitions: int | None = None):
    """The DataFrame of OUTPUT_SCHEMA rows of a replay (lazy)."""
    sc = spark.sparkContext
    n = partitions or sc.defaultParallelism
    paths = spark.createDataFrame([(i, str(p)) for i, p in enumerate(files)], "idx long, path string")
    paths = paths.repartition(max(1, min(len(files), n)), "idx")
    routed = paths.mapInPandas(lambda it: read_and_route(spec, format, on_error, it), ROUTED_SCHEMA)
    order = ("key", "end", "start", "seq") if spec.per_key else ("end", "start", "seq")
    grouped = routed.repartition(n, "key").sortWithinPartitions(*order)
    return grouped.mapInPandas(lambda it: run_sorted(spec, it), OUTPUT_SCHEMA)


def run_batch(spark: Any, spec: JobSpec, files: Sequence[str], out: str | None, *,
              format: str | None = None, on_error: str = "stop", partitions: int | None = None,
              write: Sequence[str] = ("parquet", "jsonl")) -> BatchResult:
    """Replay ``files`` through the queries of ``spec``; write the answers
    under ``out`` (``answers.parquet/``, ``answers.jsonl/``: Spark
    directories of part files, JSON lines in time order) and return counts."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    t0 = time.perf_counter()
    res = answers_frame(spark, spec, files, format=format, on_error=on_error,
                        partitions=partitions).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        info = res.filter(F.col("kind") != "answer").collect()
        answers = res.filter(F.col("kind") == "answer")
        result = BatchResult(partitions=partitions or spark.sparkContext.defaultParallelism)
        for row in info:
            if row.kind == "stats":
                result.events += row["count"]
            elif row.kind == "skipped":
                result.skipped.append(row.message)
            elif row.kind == "late":
                result.late += 1
            elif row.kind == "error":
                result.errors.append(f"{row.query}: {row.message}")
        for row in answers.groupBy("query").count().collect():
            result.per_query[row["query"]] = row["count"]
        result.answers = sum(result.per_query.values())
        if out is not None:
            cols = ["query", "key", "start", "end", "bindings", "triples"]
            ordered = answers.orderBy("end", "start", "query", "json")
            if "parquet" in write:
                path = f"{out.rstrip('/')}/answers.parquet"
                ordered.select(*cols).write.mode("overwrite").parquet(path)
                result.outputs["parquet"] = path
            if "jsonl" in write:
                path = f"{out.rstrip('/')}/answers.jsonl"
                ordered.select("json").coalesce(1).write.mode("overwrite").text(path)
                result.outputs["jsonl"] = path
        result.skipped.sort()
        result.seconds = time.perf_counter() - t0
        return result
    finally:
        res.unpersist()


def collect_answers(spark: Any, spec: JobSpec, files: Sequence[str], **kw: Any) -> list:
    """The answers of a replay as :class:`epsparql.Answer` objects (for
    notebooks and tests; everything comes to the driver)."""
    import json
    from ..io.results import answer_from_json
    df = answers_frame(spark, spec, files, **kw)
    return [answer_from_json(json.loads(r.json)) for r in
            df.filter("kind = 'answer'").select("json").collect()]
