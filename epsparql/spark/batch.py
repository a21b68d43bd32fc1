"""Batch replay of historical streams on Spark.

    files ──read+route (mapInPandas)──▶ (key, part, s, p, o, start, end, seq)
          ──repartition(part)──▶ sort within partitions by ([key,] end, start, seq)
          ──run one engine group per key (mapInArrow)──▶ answers
          ──▶ Parquet and JSON lines

Files are read whole by one task each (so malformed lines keep their file
and line number); a triple goes to every group the router names; each
group runs from a clean engine state and is flushed at its end, so the
answers are, as a multiset, those of one engine over the sorted stream.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from .job import WHOLE, JobSpec, Router
from .worker import BAD, OUTPUT_SCHEMA, run_sorted

ROUTED_SCHEMA = ("key string, part int, s string, p string, o string, start double, "
                 "end double, seq long, error string, stream string")
ROUTED_COLUMNS = ["key", "part", "s", "p", "o", "start", "end", "seq", "error", "stream"]
#: The key column of keyed rows when groups need not run one by one: the
#: partition (``part``, a hash of the group key) is all that matters then,
#: and the short text keeps the shuffle small.
KEYED = "k"


#: Line-format files larger than this are read by several tasks, in pieces.
SPLIT_BYTES = 32 << 20


def splits(files: Sequence[str], format: str | None, pieces: int) -> list[tuple]:
    """(path, first byte, end byte, lines before) read tasks: a plain (not
    gzipped) N-Triples or JSON lines file larger than SPLIT_BYTES is cut
    at line ends into about ``pieces`` parts, each knowing its first line
    number (so errors still name it); other files are one task each."""
    from ..io.streams import guess_format
    out: list[tuple] = []
    for path in files:
        size = os.path.getsize(path)
        fmt = format or guess_format(path)
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        if fmt == "csv" or gz or size <= SPLIT_BYTES or pieces < 2:
            out.append((path, 0, -1, 0))
            continue
        step = max(SPLIT_BYTES // 4, -(-size // pieces))
        start, lines = 0, 0
        with open(path, "rb") as f:
            while start < size:
                f.seek(min(start + step, size))
                f.readline()                        # to the end of that line
                end = min(f.tell(), size)
                out.append((path, start, end, lines))
                f.seek(start)
                left = end - start
                while left:                         # count its lines, 16 MB at a time
                    buf = f.read(min(left, 16 << 20))
                    lines += buf.count(b"\n")
                    left -= len(buf)
                start = end
    return out


class _Piece:
    """The lines of bytes ``first`` to ``end`` of a file, read lazily (what
    the stream reader iterates over)."""

    def __init__(self, path: str, first: int, end: int) -> None:
        self.path, self.first, self.end = path, first, end

    def __iter__(self) -> Iterator[bytes]:
        with open(self.path, "rb", buffering=1 << 20) as f:
            f.seek(self.first)
            left = self.end - self.first
            for line in f:
                yield line
                left -= len(line)
                if left <= 0:
                    return


def _piece(path: str, first: int, end: int) -> Any:
    return path if end < 0 else _Piece(path, first, end)


def read_and_route(spec: JobSpec, format: str | None, on_error: str,
                   batches: Iterator[Any], chunk: int = 50000) -> Iterator[Any]:
    """mapInPandas body over read tasks (idx, path, first, end, lines): read
    each piece with the stream reader, route each row to its groups.
    ``seq`` keeps the input order (task index, then row) for equal times."""
    import pandas as pd
    from ..io.streams import StreamReader, guess_format
    router = Router(spec)
    groups = router.groups
    cols: list[list] = [[] for _ in ROUTED_COLUMNS]
    key, part_, s_, p_, o_, t1_, t2_, seq_, err_, g_ = cols
    per_key = spec.per_key
    part = router.part

    def bad(messages: list[str], seq: int) -> None:
        for m in messages:
            for c, v in zip(cols, (BAD, 0, None, None, None, None, None, seq, m, None)):
                c.append(v)
        messages.clear()

    for pdf in batches:
        for idx, path, first, end, lines in zip(*(pdf[c].tolist() for c in
                                                 ("idx", "path", "first", "end", "lines"))):
            skipped: list[str] = []
            reader = StreamReader(_piece(path, first, end), format or guess_format(path),
                                  on_error=on_error, on_skip=lambda e: skipped.append(str(e)),
                                  name=path)
            reader.line = lines                     # numbering goes on from the piece's start
            base = int(idx) << 36
            for n, row in enumerate(reader.texts()):
                st, pt, ot, t1, t2 = row[:5]
                g = row[5] if len(row) > 5 else None
                if skipped:
                    bad(skipped, base + n)
                t1 = float(t1)
                t2 = t1 if t2 is None else float(t2)
                for k in groups(st, pt, ot):
                    key.append(k if per_key or k == WHOLE else KEYED)
                    part_.append(part(k))
                    s_.append(st)
                    p_.append(pt)
                    o_.append(ot)
                    t1_.append(t1)
                    t2_.append(t2)
                    seq_.append(base + n)
                    err_.append(None)
                    g_.append(g)
                if len(key) >= chunk:
                    yield pd.DataFrame(dict(zip(ROUTED_COLUMNS, cols)))
                    for c in cols:
                        c.clear()
            bad(skipped, base)
    if key:
        yield pd.DataFrame(dict(zip(ROUTED_COLUMNS, cols)))


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
    """The DataFrame of OUTPUT_SCHEMA rows of a replay (lazy; for windowed
    queries the routed rows stay cached, see :func:`_answers`)."""
    frame, _ = _answers(spark, spec, files, format, on_error, partitions)
    return frame


def _answers(spark: Any, spec: JobSpec, files: Sequence[str], format: str | None,
             on_error: str, partitions: int | None) -> tuple[Any, Any]:
    """The answers DataFrame and what releases its cache.  Windowed queries
    (the stream dialects) evaluate their windows up to the last time stamp
    of the whole input in every group, as one engine would: that time is
    found first, over the routed rows, which are cached for the replay."""
    sc = spark.sparkContext
    n = partitions or sc.defaultParallelism
    tasks = splits([str(p) for p in files], format, n)
    paths = spark.createDataFrame([(i, *t) for i, t in enumerate(tasks)],
                                  "idx long, path string, first long, end long, lines long")
    paths = paths.repartition(max(1, min(len(tasks), n)), "idx")
    routed = paths.mapInPandas(lambda it: read_and_route(spec, format, on_error, it), ROUTED_SCHEMA)
    release: Any = lambda: None
    last = None
    if spec.windowed:
        from pyspark import StorageLevel
        from pyspark.sql import functions as F
        routed = routed.persist(StorageLevel.MEMORY_AND_DISK)
        release = routed.unpersist
        last = routed.filter(F.col("key") != BAD).agg(F.max("end")).first()[0]
    order = ("key", "end", "start", "seq") if spec.per_key else ("end", "start", "seq")
    grouped = routed.repartition(n, "part").sortWithinPartitions(*order)
    return grouped.mapInArrow(lambda it: run_sorted(spec, it, last=last), OUTPUT_SCHEMA), release


def run_batch(spark: Any, spec: JobSpec, files: Sequence[str], out: str | None, *,
              format: str | None = None, on_error: str = "stop", partitions: int | None = None,
              write: Sequence[str] = ("parquet", "jsonl")) -> BatchResult:
    """Replay ``files`` through the queries of ``spec``; write the answers
    under ``out`` (``answers.parquet/``, ``answers.jsonl/``: Spark
    directories of part files, JSON lines in time order) and return counts."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    t0 = time.perf_counter()
    frame, release = _answers(spark, spec, files, format, on_error, partitions)
    res = frame.persist(StorageLevel.MEMORY_AND_DISK)
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
            ordered = answers.coalesce(1).sortWithinPartitions("end", "start", "query", "json")
            if "parquet" in write:
                path = f"{out.rstrip('/')}/answers.parquet"
                ordered.select(*cols).write.mode("overwrite").parquet(path)
                result.outputs["parquet"] = path
            if "jsonl" in write:
                path = f"{out.rstrip('/')}/answers.jsonl"
                ordered.select("json").write.mode("overwrite").text(path)
                result.outputs["jsonl"] = path
        result.skipped.sort()
        result.seconds = time.perf_counter() - t0
        return result
    finally:
        res.unpersist()
        release()


def collect_answers(spark: Any, spec: JobSpec, files: Sequence[str], **kw: Any) -> list:
    """The answers of a replay as :class:`epsparql.Answer` objects (for
    notebooks and tests; everything comes to the driver)."""
    import json
    from ..io.results import answer_from_json
    df, release = _answers(spark, spec, files, kw.get("format"), kw.get("on_error", "stop"),
                           kw.get("partitions"))
    try:
        return [answer_from_json(json.loads(r.json)) for r in
                df.filter("kind = 'answer'").select("json").collect()]
    finally:
        release()
