"""What runs inside Spark's Python workers: engines, reused, fed Arrow batches.

SWI-Prolog starts once per Python worker process (workers are reused
across tasks), and so do the engines: each :class:`Runner` registers its
queries once and is reset between key groups (``Engine.clear_state``), or
has a group's state restored from Spark's state store
(``Engine.restore``).  Building a runner costs a parse and compile per
query and loading the background; that stays off the per-group path.

Rows come in as Arrow record batches (``Engine.push_arrow`` takes them
as they are); answers leave as :class:`~epsparql.spark.rows.AnswerBlock` s built
from each query's :class:`~epsparql.answers.Results`.  Late rows and rule
errors are counted (batch replay, :mod:`epsparql.spark.counts`) or become
side rows (streaming).
"""
from __future__ import annotations

import math
from typing import Any, Iterator, Sequence

from ..answers import AnswerBatch
from .counts import TaskCounts
from .job import BAD, WHOLE, JobSpec
from .rows import AnswerBlock, batch_block, record_batch

_RUNNERS: dict[tuple[str, str], "Runner"] = {}


def runner(spec: JobSpec, kind: str) -> "Runner":
    """This worker's runner for ``spec`` (``kind``: ``keyed`` or ``whole``)."""
    key = (spec.fingerprint, kind)
    r = _RUNNERS.get(key)
    if r is None:
        if len(_RUNNERS) >= 8:                     # another job's engines: free them
            for old in _RUNNERS.values():
                old.engine.close()
            _RUNNERS.clear()
        r = _RUNNERS[key] = Runner(spec, kind)
    return r


class Runner:
    """An engine for one kind of group, and the conversions around it."""

    def __init__(self, spec: JobSpec, kind: str) -> None:
        self.spec = spec
        self.kind = kind
        names = spec.keyed if kind == "keyed" else spec.whole
        #: rows later than the allowed lateness, since the last :meth:`side`
        self.late: list[tuple] = []
        self.engine = spec.engine(names, on_late=lambda row, src: self.late.append(row))
        self.keyvar = {q.name: (spec.key_vars.get(q.name) if kind == "keyed" else None)
                       for q in self.engine.queries}
        self.key: str | None = WHOLE
        self._errors_seen = 0
        #: the longest window of a store of partial matches (inf: unbounded)
        self.window = self.engine.largest_window

    # -- groups ---------------------------------------------------------------
    def start(self, key: str | None, state: bytes | None = None) -> None:
        """Begin a group: a fresh state, or the group's saved one.  ``key``
        None: a whole partition whose answers all belong to it."""
        self.engine.clear_state()
        if state:
            self.engine.restore(state)
        self.key = key
        self.late.clear()
        self._errors_seen = 0              # clear_state forgot the engine's errors

    def push(self, batch: Any) -> None:
        """Push a record batch of the group's triples, in time order."""
        self.engine.push_arrow(batch)

    def finish(self, last: float | None = None) -> list[AnswerBlock]:
        """End of the group's stream (batch replay): decide every waiting
        answer.  ``last``: the last time stamp of the whole input, which
        windowed queries evaluate up to in every group (as one engine over
        the whole stream would)."""
        if last is not None and math.isfinite(last):
            self.engine.advance(int(last) if float(last).is_integer() else last)
        self.engine.flush()
        return self.answers()

    # -- answers ----------------------------------------------------------------
    def answers(self) -> list[AnswerBlock]:
        """The answers found since the last call that belong to this group
        (a keyed group's engine also finds other keys' answers, which their
        own groups find too), one block per batch of a query's answers."""
        out: list[AnswerBlock] = []
        for q in self.engine.queries:
            var = self.keyvar.get(q.name)
            for b in q.results().batches:
                block = self._group_block(q.name, var, b)
                if block is not None:
                    out.append(block)
        return out

    def _group_block(self, name: str, var: str | None, b: AnswerBatch) -> AnswerBlock | None:
        if var is None:
            return batch_block(b, name, self.key)
        from ..io.results import nt_texts
        got = b.ids(var)
        keys = nt_texts(got[1], got[0]) if got is not None else [None] * len(b)
        if self.key is None:                 # the partition is the group: each row's key
            return batch_block(b, name, keys)
        keep = [j for j, k in enumerate(keys) if k == self.key]
        if not keep:
            return None
        if len(keep) < len(b):
            rows = b.row_ids()
            b = AnswerBatch(b.shape, b.cols, b.tables, b.start, b.end, [rows[j] for j in keep])
        return batch_block(b, name, self.key)

    def side(self) -> tuple[list[tuple], list[Any]]:
        """The late rows (s, p, o, start, end) and the rule errors since the
        last call."""
        late, self.late = self.late, []
        errors = self.engine.errors
        new = errors[self._errors_seen:]
        self._errors_seen = len(errors)
        return late, new


def late_text(row: Sequence[Any]) -> str:
    """A late row as an N-Triples line."""
    from ..rdf.ntriples import format_term
    s, p, o = row[:3]
    return f"{format_term(s)} {format_term(p)} {format_term(o)} ."


# -- batch replay ------------------------------------------------------------------
def run_partition(spec: JobSpec, fields: Sequence[str], batches: Iterator[Any], counts: Any,
                  last: float | None = None, flush_rows: int = 20_000,
                  text_blocks: bool = False) -> Iterator[Any]:
    """mapInArrow body of the engine stage: a partition's routed rows
    (:data:`~epsparql.spark.route.ROUTED_COLUMNS`), sorted by ``(grp, end,
    start, seq)`` when each key is a group of its own (``spec.per_key``: a
    clean engine per group, flushed at its end), else by ``(end, start,
    seq)`` (one keyed engine and one whole-stream engine take the rows in
    time order); answers out as record batches of ``fields``.  ``counts``:
    the job's accumulator (this task's :class:`TaskCounts` under
    ``("run", partition)``); ``last``: the whole input's last time stamp
    (windowed queries evaluate up to it in every group).  ``text_blocks``
    (``fields`` = ``("json",)``): each output row holds a block of up to
    ``flush_rows`` JSON lines joined by line ends, which Spark's text
    writer writes as they are (the same file as a row per answer, without
    the JVM's work per row)."""
    import numpy as np
    import pyarrow.compute as pc
    from pyspark import TaskContext
    tally = TaskCounts()
    live: dict[str, Runner] = {}            # kind -> the runner of the current group(s)
    current: list[str | None] = [None]      # per_key: the current group's key
    blocks: list[AnswerBlock] = []

    def close() -> None:
        for r in live.values():
            blocks.extend(r.finish(last))
            _note_side(r, tally)
        live.clear()

    def group(kind: str, key: str | None) -> Runner:
        r = live.get(kind)
        if r is None:
            r = live[kind] = runner(spec, kind)
            r.start(key)
        return r

    for rb in batches:
        if not rb.num_rows:
            continue
        tally.rows += rb.num_rows
        grp = rb.column("grp")
        if not spec.per_key:                 # two engines at most: split by kind, keep order
            whole = pc.equal(pc.fill_null(grp, "k"), WHOLE)
            n_whole = pc.sum(whole).as_py() or 0
            if n_whole < rb.num_rows:
                group("keyed", None).push(rb if not n_whole else rb.filter(pc.invert(whole)))
            if n_whole:
                group("whole", WHOLE).push(rb if n_whole == rb.num_rows else rb.filter(whole))
        else:                                # runs of one key: a group each
            enc = pc.dictionary_encode(grp)
            idx = enc.indices.to_numpy(zero_copy_only=False)
            names = enc.dictionary.to_pylist()
            cuts = [0, *(np.flatnonzero(np.diff(idx)) + 1).tolist(), rb.num_rows]
            for a, b in zip(cuts, cuts[1:]):
                key = names[idx[a]]
                if key != current[0]:
                    close()
                    current[0] = key
                group("whole" if key == WHOLE else "keyed", key).push(rb.slice(a, b - a))
        for r in live.values():
            blocks.extend(r.answers())
            _note_side(r, tally)
        if sum(map(len, blocks)) >= flush_rows:
            yield _counted(blocks, fields, tally, text_blocks)
            blocks = []
    close()
    yield _counted(blocks, fields, tally, text_blocks)
    task = TaskContext.get()
    counts.add({("run", task.partitionId() if task else 0): tally})


def _counted(blocks: list[AnswerBlock], fields: Sequence[str], tally: TaskCounts,
             text_blocks: bool = False) -> Any:
    for b in blocks:
        tally.answered(b.query, len(b))
    batch = record_batch(blocks, fields)
    return text_block(batch) if text_blocks else batch


def text_block(batch: Any) -> Any:
    """A record batch of JSON lines as one row: the lines joined by line ends
    (no row when there are none)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    lines = batch.column(0)
    if not len(lines):
        return batch
    whole = pa.ListArray.from_arrays(pa.array([0, len(lines)], pa.int32()), lines)
    return pa.RecordBatch.from_arrays([pc.binary_join(whole, "\n")], schema=batch.schema)


def _note_side(r: Runner, tally: TaskCounts) -> None:
    late, errors = r.side()
    for row in late:
        tally.note("late", f"{late_text(row)} at {row[3]}")
    for e in errors:
        tally.note("error", f"{','.join(e.queries)}: {e}")


# -- structured streaming ------------------------------------------------------------
#: The rows of the streaming stage: answers, and side rows (``kind``
#: ``late``, ``skipped``, ``error``, and ``stats`` with the events pushed).
STREAM_FIELDS = ("kind",) + ("query", "key", "start", "end", "bindings", "triples", "json") + \
    ("message", "count")
STATE_SCHEMA = "snapshot binary, last_end double"


def stream_frame(blocks: Sequence[AnswerBlock], side: Sequence[tuple]) -> Any:
    """The pandas frame of a group's streaming rows: its answers (built as
    Arrow, then converted) and side rows (tuples of STREAM_FIELDS)."""
    import pyarrow as pa
    answer_fields = STREAM_FIELDS[1:-2]
    schema = pa.schema([(f, _type(f)) for f in STREAM_FIELDS])
    parts = []
    for b in blocks:
        if len(b):
            n = len(b)
            arrays = [pa.repeat(pa.scalar("answer", pa.string()), n), *b.arrow(answer_fields),
                      pa.nulls(n, pa.string()), pa.nulls(n, pa.int64())]
            parts.append(pa.RecordBatch.from_arrays(arrays, schema=schema))
    if side or not parts:
        cols = list(zip(*side)) if side else [[] for _ in STREAM_FIELDS]
        parts.append(pa.RecordBatch.from_arrays(
            [pa.array(list(c), f.type) for c, f in zip(cols, schema)], schema=schema))
    table = pa.Table.from_batches(parts, schema=schema)
    return table.to_pandas(maps_as_pydicts="strict")


def _type(field: str) -> Any:
    from .rows import arrow_type
    return arrow_type(field)


def side_row(kind: str, key: str | None = None, message: str | None = None,
             count: int | None = None, start: float | None = None, end: float | None = None,
             triples: list[str] | None = None, query: str | None = None) -> tuple:
    return (kind, query, key, start, end, None, triples, None, message, count)


def run_with_state(spec: JobSpec, key: tuple, batches: Iterator[Any], state: Any) -> Iterator[Any]:
    """applyInPandasWithState body: restore the group's engine state, push
    this micro-batch's rows in time order, move to the watermark, save."""
    import pandas as pd
    import pyarrow as pa
    k = key[0]
    if k == BAD:
        yield stream_frame([], [side_row("skipped", message=m)
                                for pdf in batches for m in pdf["error"].tolist()])
        return
    r = runner(spec, "whole" if k == WHOLE else "keyed")
    saved = state.get if state.exists else None
    r.start(k, saved[0] if saved else None)
    last_end = saved[1] if saved else -math.inf
    parts = [pdf for pdf in batches if not pdf.empty]
    pushed = 0
    if parts:
        pdf = pd.concat(parts) if len(parts) > 1 else parts[0]
        pdf = pdf.sort_values(["end", "start", "s", "p", "o"], kind="stable")
        cols = ["s", "p", "o", "start", "end", "stream"]
        r.push(pa.RecordBatch.from_pandas(pdf[cols], preserve_index=False))
        pushed = len(pdf)
        last_end = max(last_end, float(pdf["end"].max()))
    wm_ms = state.getCurrentWatermarkMs()
    if wm_ms > 0:
        r.engine.advance(wm_ms / 1000.0)
    blocks = r.answers()
    late, errors = r.side()
    side = [side_row("late", k, "later than the allowed lateness", start=float(row[3]),
                     end=float(row[4] if row[4] is not None else row[3]),
                     triples=[late_text(row)]) for row in late]
    side += [side_row("error", k, str(e), query=",".join(e.queries)) for e in errors]
    side.append(side_row("stats", k, count=pushed))
    if state.hasTimedOut and not parts:
        r.engine.gc()                      # quiet key: expire what its windows allow
        if r.engine.idle:
            state.remove()                 # nothing left to wait for: forget the key
            yield stream_frame(blocks, side)
            return
    state.update((r.engine.snapshot(), last_end))
    if math.isfinite(last_end):
        # be called again once the watermark passes the key's last instant (to
        # close it), and once more when its partial matches have expired; a
        # windowed query also at its next evaluation instant
        dues = [last_end, last_end + r.window]
        if spec.windowed:
            w = r.engine.window_stats().get("due")
            if w is not None:
                dues.append(float(w))
        later = [d for d in dues if math.isfinite(d) and d * 1000 > wm_ms]
        if later:
            state.setTimeoutTimestamp(int(min(later) * 1000) + 1)
    yield stream_frame(blocks, side)
