"""The scan plan: every engine task reads the whole input and keeps its own rows.

    partition ids ──(mapInArrow: read every piece, route, keep part mod n = me,
                     sort in Arrow, run the engines)──▶ answers

The shuffle plan (:func:`epsparql.spark.batch.plan_batch`) reads each
piece once and moves the routed rows to the engines through Spark's
exchange: the JVM converts every row from Arrow, writes, reads and sorts
it, and converts it back (about 18 CPU µs per event at a million events,
as much as the engines' own work on an answer-heavy stream).  When the
partitions are few and the input is small enough to hold one partition's
rows in a worker, reading the input once per partition costs less: about
2 CPU µs per event per partition (the Arrow fast path and the router),
and nothing of the rows crosses into the JVM.  The choice is a threshold,
as Spark's broadcast join is (:func:`choose`); ``--routing`` overrides it.

Each task reads the same pieces and counts each piece's lines under the
same accumulator entry (a later entry wins), so the job's totals are those
of the shuffle plan.  A windowed job's last time stamp is the maximum the
task saw while reading: no extra pass over the input.
"""
from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

from .job import ROUTINGS, JobSpec
from .read import Piece
from .route import ENGINE_COLUMNS, ArrowRouter, engine_order, read_routed
from .worker import run_partition

#: ``auto`` scans when there are at most this many partitions ...
SCAN_MAX_PARTITIONS = 4
#: ... and each partition's share of the input is at most this many bytes
#: (gzip files counted at :data:`GZ_RATIO` times their size): a task holds
#: its share as Arrow columns, about 1.2 times its bytes, twice while it
#: sorts them, beside its engine (256 MiB: ~0.6 GB of a worker at most).
SCAN_MAX_SHARE = 256 << 20
GZ_RATIO = 8
#: Rows handed to the engines per Arrow batch: Spark's own
#: (``spark.sql.execution.arrow.maxRecordsPerBatch``).  A batch's answers
#: are held until it is pushed: 65,536 all-pairs rows made 0.3 M answers
#: at a time, a worker twice the size and its engine 30% slower.
CHUNK = 10_000


def choose(routing: str, pieces: Sequence[Piece], partitions: int) -> str:
    """``shuffle`` or ``scan`` for ``routing`` (``auto``: scan when at most
    :data:`SCAN_MAX_PARTITIONS` partitions share at most
    :data:`SCAN_MAX_SHARE` bytes of input each)."""
    if routing not in ROUTINGS:
        raise ValueError(f"routing is one of {', '.join(ROUTINGS)}, not {routing!r}")
    if routing != "auto":
        return routing
    if partitions > SCAN_MAX_PARTITIONS:
        return "shuffle"
    size = sum(_size(p) for p in pieces)
    return "scan" if size <= SCAN_MAX_SHARE * partitions else "shuffle"


def _size(piece: Piece) -> int:
    end = os.path.getsize(piece.path) if piece.end < 0 else piece.end
    return (end - piece.first) * (GZ_RATIO if piece.gz else 1)


def scan_and_run(spec: JobSpec, pieces: Sequence[Piece], partitions: int, on_error: str,
                 fields: Sequence[str], counts: Any, text_blocks: bool,
                 batches: Iterator[Any]) -> Iterator[Any]:
    """mapInArrow body over the partition ids (one a task): the rows of
    this partition, read from every piece, routed, sorted as the shuffle
    plan sorts them, through :func:`~epsparql.spark.worker.run_partition`."""
    for rb in batches:
        for me in rb.column(0).to_pylist():
            rows, last = _own_rows(spec, pieces, partitions, me, on_error, counts)
            yield from run_partition(spec, fields, iter(rows), counts, last,
                                     text_blocks=text_blocks)


def _own_rows(spec: JobSpec, pieces: Sequence[Piece], partitions: int, me: int,
              on_error: str, counts: Any) -> tuple[list[Any], float | None]:
    """Partition ``me``'s routed rows in engine order, and the input's last
    time stamp."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    router = ArrowRouter(spec)
    mine: list[Any] = []
    last: float | None = None
    for piece in pieces:
        for routed in read_routed(spec, piece, router, on_error, counts):
            if spec.windowed:                   # (only windowed queries read it)
                top = pc.max(routed.column("end")).as_py()
                last = top if last is None or top > last else last
            part = routed.column("part").to_numpy(zero_copy_only=False)
            keep = np.mod(part, partitions) == me
            if keep.all():
                mine.append(routed)
            elif keep.any():
                mine.append(routed.filter(pa.array(keep)))
    if not mine:
        return [], last
    table = pa.Table.from_batches(mine).sort_by([(c, "ascending") for c in engine_order(spec)])
    table = table.select(list(ENGINE_COLUMNS))
    return table.to_batches(max_chunksize=CHUNK), last
