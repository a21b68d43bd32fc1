"""Routing: each triple of a read batch to the groups of its keys, in Arrow.

Every row gets ``part`` (the Spark partition it goes to, modulo the
number of partitions: a stable hash of its group key) and ``grp``: the
canonical key text when groups run one by one (``spec.per_key``), null for
a keyed row otherwise (the partition is the group), and
:data:`~epsparql.spark.job.WHOLE` (``""``) for a copy that goes to the
queries run on the whole stream.  Keys are canonicalised once per
distinct term of a batch (``pc.dictionary_encode``), not once per row.
"""
from __future__ import annotations

from typing import Any

from typing import Iterator

from ..memo import Memo
from .counts import TaskCounts
from .job import WHOLE, JobSpec, group_part, canonical_key
from .read import TRIPLE_COLUMNS, Piece, Problems, read_piece

ROUTED_COLUMNS = ("part", "grp") + TRIPLE_COLUMNS
#: What the engines take of a routed row (part and seq are spent on the way).
ENGINE_COLUMNS = ("grp", "s", "p", "o", "start", "end", "stream")
ROUTED_SCHEMA = ("part int, grp string, s string, p string, o string, start double, "
                 "end double, stream string, seq long")
_POSITIONS = ("s", "p", "o")


class ArrowRouter:
    """Routes record batches of triples (:data:`~epsparql.spark.read.TRIPLE_COLUMNS`)."""

    def __init__(self, spec: JobSpec, per_key: bool | None = None) -> None:
        self.positions = spec.positions
        self.whole = bool(spec.whole)
        #: give each row its key's text (streaming keeps state per key)
        self.per_key = spec.per_key if per_key is None else per_key
        self.canonical = Memo(canonical_key).__getitem__
        self.part_of = Memo(group_part).__getitem__

    def route(self, batch: Any) -> list[Any]:
        """The routed record batches of ``batch`` (:data:`ROUTED_COLUMNS`):
        a copy per key position (rows whose key an earlier position gave
        already left out) and one for the whole stream."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
        out = []
        seen: list[Any] = []                 # the canonical keys of earlier positions
        for i in self.positions:
            enc = pc.dictionary_encode(batch.column(_POSITIONS[i]))
            idx = enc.indices
            keys = [self.canonical(t) for t in enc.dictionary.to_pylist()]
            parts = np.array([self.part_of(k) for k in keys], dtype=np.int32)
            texts = pa.array(keys, pa.string()).take(idx)
            rows = batch
            part = pa.array(parts[idx.to_numpy(zero_copy_only=False)])
            if seen:
                fresh = pc.not_equal(texts, seen[0])
                for other in seen[1:]:
                    fresh = pc.and_(fresh, pc.not_equal(texts, other))
                rows, part, kept = batch.filter(fresh), part.filter(fresh), texts.filter(fresh)
            else:
                kept = texts
            seen.append(texts)
            grp = kept if self.per_key else pa.nulls(len(kept), pa.string())
            out.append(_routed(rows, part, grp))
        if self.whole:
            n = batch.num_rows
            out.append(_routed(batch, pa.array(np.full(n, self.part_of(WHOLE), dtype=np.int32)),
                               pa.repeat(pa.scalar(WHOLE, pa.string()), n)))
        return [b for b in out if b.num_rows]


def engine_order(spec: JobSpec) -> tuple[str, ...]:
    """The order a partition's rows reach its engines: by time, and key
    group by key group when each key runs in a group of its own."""
    return ("grp", "end", "start", "seq") if spec.per_key else ("end", "start", "seq")


def read_routed(spec: JobSpec, piece: Piece, router: ArrowRouter, on_error: str,
                counts: Any) -> Iterator[Any]:
    """The routed batches of ``piece``; its lines are counted under
    ``("read", piece)`` (malformed ones skipped and counted with
    ``on_error="skip"``, or failing the task with ``stop``)."""
    problems = Problems(on_error)
    tally = TaskCounts()
    for triples in read_piece(piece, problems, with_stream=spec.windowed):
        tally.rows += triples.num_rows
        yield from router.route(triples)
    tally.skipped, tally.skipped_messages = problems.skipped, problems.messages
    counts.add({("read", piece.idx): tally})


def _routed(rows: Any, part: Any, grp: Any) -> Any:
    import pyarrow as pa
    return pa.RecordBatch.from_arrays([part, grp] + [rows.column(c) for c in TRIPLE_COLUMNS],
                                      names=list(ROUTED_COLUMNS))
