"""What runs inside Spark's Python workers: one engine per query set, reused.

SWI-Prolog starts once per Python worker process (workers are reused
across tasks), and so do the engines: each :class:`Runner` registers its
queries once and is reset between key groups (``Engine.clear_state``), or
has a group's state restored from Spark's state store
(``Engine.restore``).  Building a runner costs a parse and compile per
query and loading the background; that stays off the per-group path.

Answers leave as rows of :data:`OUTPUT_SCHEMA`: ``kind`` is ``answer``,
``late`` (a row later than the allowed lateness: the side output),
``skipped`` (a malformed stream line), ``error`` (an error inside a rule)
or ``stats`` (per task: events pushed in ``count``).
"""
from __future__ import annotations

import json
import math
from typing import Any, Iterable, Iterator, Sequence

from ..answers import Results
from ..memo import Memo
from .job import WHOLE, JobSpec

OUTPUT_SCHEMA = ("kind string, query string, key string, start double, end double, "
                 "bindings map<string,string>, triples array<string>, json string, "
                 "message string, count long")
OUTPUT_COLUMNS = ["kind", "query", "key", "start", "end", "bindings", "triples", "json",
                  "message", "count"]
#: Key of rows that are not triples (malformed lines travelling to the output).
BAD = "\x00bad"

_RUNNERS: dict[tuple[str, str], "Runner"] = {}


_NONE: list[str] = []          # the triples of a SELECT answer (shared, never changed)


class AnswerBlock:
    """The output rows of one batch of a query's answers, as columns of
    text (each distinct term written once): what :class:`Rows` turns into
    Arrow arrays (batch replay: no Python object per answer beyond its
    texts) or into Python rows (a pandas frame, streaming).

    ``key``: the group key of every row (a string, or None), or a list
    with each row's; ``bindings``: (variable, N-Triples texts) per
    variable, None where unbound; ``triples``: per row its CONSTRUCT
    triples' lines, or None (SELECT: no triples); ``json``: the JSON
    lines, a list or an Arrow string array (:func:`json_lines`)."""

    __slots__ = ("query", "key", "starts", "ends", "bindings", "triples", "json")

    def __init__(self, query: str, key: "str | None | list[str | None]", starts: list[float],
                 ends: list[float], bindings: list[tuple[str, list[str | None]]],
                 triples: list[list[str]] | None, json: list[str]) -> None:
        self.query, self.key, self.starts, self.ends = query, key, starts, ends
        self.bindings, self.triples, self.json = bindings, triples, json

    def __len__(self) -> int:
        return len(self.starts)

    def columns(self) -> list[list[Any]]:
        """The rows as Python values, column by column (the bindings map a
        dict per row)."""
        n = len(self.starts)
        named = self.bindings
        return [["answer"] * n, [self.query] * n,
                self.key if isinstance(self.key, list) else [self.key] * n,
                [float(t) for t in self.starts], [float(t) for t in self.ends],
                [{name: col[j] for name, col in named if col[j] is not None} for j in range(n)],
                self.triples if self.triples is not None else [_NONE] * n,
                self.json if isinstance(self.json, list) else self.json.to_pylist(),
                [None] * n, [None] * n]

    def arrow(self) -> list[Any]:
        """The rows as Arrow arrays of :func:`arrow_schema`, built column by
        column: the bindings map from the variables' text columns (one
        Arrow string array over all of them, reordered row-major by index
        arithmetic, unbound variables dropped), no dict per row."""
        import numpy as np
        import pyarrow as pa
        list_type = arrow_schema().field("triples").type
        n = len(self.starts)
        string = pa.string()
        key = self.key
        keys = pa.array(key, string) if isinstance(key, list) else \
            pa.nulls(n, string) if key is None else pa.repeat(pa.scalar(key, string), n)
        m = len(self.bindings)
        texts = pa.array([v for _, col in self.bindings for v in col], string)  # variable-major
        order = np.arange(m * n, dtype=np.int64).reshape(m, n).T.ravel()       # row-major
        if texts.null_count:
            bound = texts.is_valid().to_numpy(zero_copy_only=False).reshape(m, n)
            order = order[bound.T.ravel()]
            counts = bound.sum(axis=0, dtype=np.int32)
        else:
            counts = np.full(n, m, dtype=np.int32)
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(counts, out=offsets[1:])
        names = pa.array([name for name, _ in self.bindings], string)
        bindings = pa.MapArray.from_arrays(pa.array(offsets), names.take(pa.array(order // n)),
                                           texts.take(pa.array(order)))
        if self.triples is None:
            triples = pa.ListArray.from_arrays(pa.array(np.zeros(n + 1, dtype=np.int32)),
                                               pa.array([], string), type=list_type)
        else:
            triples = pa.array(self.triples, list_type)
        return [pa.repeat(pa.scalar("answer", string), n),
                pa.repeat(pa.scalar(self.query, string), n), keys,
                pa.array(np.asarray(self.starts, dtype=np.float64)),
                pa.array(np.asarray(self.ends, dtype=np.float64)), bindings, triples,
                self.json if not isinstance(self.json, list) else pa.array(self.json, string),
                pa.nulls(n, string), pa.nulls(n, pa.int64())]


def json_lines(b: Any, starts: list[float], ends: list[float]) -> Any:
    """The JSON lines of a batch of answers (without line ends), as an Arrow
    string array: the text of :func:`epsparql.io.results.batch_json_lines`
    (``json.dumps(answer_to_json(a), ensure_ascii=False)``), put together
    column by column with Arrow's string kernels from each distinct term's
    JSON text and each distinct time's."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from ..io.results import batch_triples_json, json_texts, time_json
    sh = b.shape
    string = pa.string()
    join = pc.binary_join_element_wise
    memo: dict[Any, str] = {}

    def times(ts: list[float]) -> Any:
        # json.dumps(time_json(t)), once per distinct time: equal numbers (5
        # and 5.0) give the same text, so the distinct float64 values are
        # enough when every time is one exactly (finite, below 2**53)
        arr = np.asarray(ts, dtype=np.float64)
        if len(arr) and np.isfinite(arr).all() and np.abs(arr).max() < 2.0 ** 53:
            uniq, inv = np.unique(arr, return_inverse=True)
            texts = [json.dumps(time_json(float(t))) for t in uniq.tolist()]
            return pa.array(texts, string).take(pa.array(inv.ravel()))
        out = []
        for t in ts:
            v = memo.get(t)
            if v is None:
                v = memo[t] = json.dumps(time_json(t))
            out.append(v)
        return pa.array(out, string)
    # each bound variable as ', "name": <term>' (null: unbound), all joined
    # with unbound ones as "", then the leading ", " cut
    parts = [join(", " + json.dumps(name, ensure_ascii=False) + ": ",
                  pa.array(json_texts(*b.ids(name)[::-1]), string), "")
             for name in sh.names]
    n = len(starts)
    if parts:
        bound = pc.utf8_slice_codeunits(
            join(*parts, "", null_handling="replace", null_replacement=""), 2)
    else:
        bound = pa.repeat(pa.scalar("", string), n)
    head = '{"query": ' + json.dumps(sh.query, ensure_ascii=False) + ', "start": '
    if sh.form == "CONSTRUCT":
        tail = pa.array(batch_triples_json(b), string)
        tail = join(tail, "}", "")
    else:
        tail = "}"
    return join(head, times(starts), ', "end": ', times(ends), ', "bindings": {', bound, "}",
                tail, "")


class Rows:
    """Output rows in order: blocks of answers (:class:`AnswerBlock`) and
    other rows (late rows, errors, stats, windowed queries' answers) kept
    as Python columns; turned into one Arrow record batch (batch replay,
    ``mapInArrow``) or one pandas frame (streaming)."""

    __slots__ = ("parts", "_n")

    def __init__(self) -> None:
        #: AnswerBlock, or a list per column of OUTPUT_COLUMNS
        self.parts: list[Any] = []
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def _plain(self) -> list[list[Any]]:
        if not self.parts or isinstance(self.parts[-1], AnswerBlock):
            self.parts.append([[] for _ in OUTPUT_COLUMNS])
        return self.parts[-1]

    def append(self, row: Sequence[Any]) -> None:
        for c, v in zip(self._plain(), row):
            c.append(v)
        self._n += 1

    def add_block(self, block: AnswerBlock) -> None:
        self.parts.append(block)
        self._n += len(block)

    def extend(self, rows: "Rows | Iterable[Sequence[Any]]") -> None:
        if isinstance(rows, Rows):
            for part in rows.parts:
                if isinstance(part, AnswerBlock):
                    self.parts.append(part)
                else:
                    for c, more in zip(self._plain(), part):
                        c.extend(more)
            self._n += len(rows)
        else:
            for row in rows:
                self.append(row)

    def columns(self) -> list[list[Any]]:
        """Every row as Python values, column by column."""
        if len(self.parts) == 1 and not isinstance(self.parts[0], AnswerBlock):
            return self.parts[0]
        cols: list[list[Any]] = [[] for _ in OUTPUT_COLUMNS]
        for part in self.parts:
            for c, more in zip(cols, part.columns() if isinstance(part, AnswerBlock) else part):
                c.extend(more)
        return cols

    def tuples(self) -> list[tuple]:
        return list(zip(*self.columns()))

    def arrow(self) -> Any:
        """One pyarrow RecordBatch of :func:`arrow_schema`."""
        import pyarrow as pa
        schema = arrow_schema()
        batches = []
        for part in self.parts:
            if isinstance(part, AnswerBlock):
                arrays = part.arrow()
            else:
                arrays = [pa.array(c, f.type) for c, f in zip(part, schema)]
            batches.append(pa.RecordBatch.from_arrays(arrays, schema=schema))
        if not batches:
            return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)
        return batches[0] if len(batches) == 1 else pa.concat_batches(batches)


_SCHEMA: list[Any] = []


def arrow_schema() -> Any:
    """The Arrow schema of OUTPUT_SCHEMA, as Spark converts it (map
    entries ``key``/``value``, list items ``element``)."""
    if not _SCHEMA:
        import pyarrow as pa
        _SCHEMA.append(pa.schema([
            ("kind", pa.string()), ("query", pa.string()), ("key", pa.string()),
            ("start", pa.float64()), ("end", pa.float64()),
            ("bindings", pa.map_(pa.string(), pa.string())),
            ("triples", pa.list_(pa.field("element", pa.string()))),
            ("json", pa.string()), ("message", pa.string()), ("count", pa.int64())]))
    return _SCHEMA[0]


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


def _time(t: float) -> float | int:
    return int(t) if float(t).is_integer() and abs(t) < 2 ** 53 else float(t)


class Runner:
    """An engine for one kind of group, and the conversions around it."""

    def __init__(self, spec: JobSpec, kind: str) -> None:
        self.spec = spec
        self.kind = kind
        names = spec.keyed if kind == "keyed" else spec.whole
        self.late: list[tuple] = []
        self.engine = spec.engine(names, on_late=lambda row, src: self.late.append(row))
        self.keyvar = {q.name: (spec.key_vars.get(q.name) if kind == "keyed" else None)
                       for q in self.engine.queries}
        from ..rdf.ntriples import parse_term
        #: rdflib term of an N-Triples text
        self.term = Memo(parse_term).__getitem__
        self.key = WHOLE
        self.pushed = 0
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

    def push(self, s: Sequence[str], p: Sequence[str], o: Sequence[str],
             start: Sequence[float], end: Sequence[float],
             stream: Sequence[str | None] | None = None) -> None:
        """Push a group's rows (N-Triples texts; ``stream``: each row's
        stream IRI or None for the default stream)."""
        term = self.term
        if stream is None:
            rows = [(term(a), term(b), term(c), _time(t1), _time(t2))
                    for a, b, c, t1, t2 in zip(s, p, o, start, end)]
        else:
            rows = [(term(a), term(b), term(c), _time(t1), _time(t2), g)
                    for a, b, c, t1, t2, g in zip(s, p, o, start, end, stream)]
        self.engine.push_many(rows)
        self.pushed += len(rows)

    # -- results ----------------------------------------------------------------
    def results(self) -> Rows:
        """Output rows for the answers found since the last call (those of
        this group's key only), the late rows and the rule errors.  Answers
        are taken as columns: each distinct term is written as N-Triples
        and JSON once, not once per answer (a bare number without building
        its rdflib term), and each batch of answers becomes an
        :class:`AnswerBlock` of text columns."""
        from ..io.results import nt_texts
        from ..rdf.ntriples import format_term
        out = Rows()
        for q in self.engine.queries:
            var = self.keyvar.get(q.name)
            got = q.results()
            if not isinstance(got, Results):       # a windowed query's Answer objects
                self._answer_rows(out, q.name, var, got)
                continue
            for b in got.batches:
                n = len(b)
                if not n:
                    continue
                cols = [(name, nt_texts(*b.ids(name)[::-1])) for name in b.shape.names]
                keys: Any = self.key                # every row's, or a list of each row's
                keep: list[int] | None = None       # None: every row
                if var is not None:
                    col = dict(cols).get(var) or [None] * n
                    if self.key is None:
                        keys = col
                    else:                           # others: found in their group
                        keep = [j for j in range(n) if col[j] == self.key]
                        if not keep:
                            continue
                        if len(keep) == n:
                            keep = None
                starts, ends = b.starts(), b.ends()
                lines = json_lines(b, starts, ends)
                triples = None
                if b.shape.form == "CONSTRUCT":
                    ts = b.template_rows(nt_texts, format_term)
                    triples = [[f"{s} {p} {o} ." for s, p, o in t] for t in ts]
                if keep is not None:
                    cols = [(name, [col[j] for j in keep]) for name, col in cols]
                    starts, ends = [starts[j] for j in keep], [ends[j] for j in keep]
                    lines = lines.take(keep)
                    triples = None if triples is None else [triples[j] for j in keep]
                out.add_block(AnswerBlock(q.name, keys, starts, ends, cols, triples, lines))
        for s, p, o, t1, t2 in self.late:
            out.append(("late", None, self.key, float(t1), float(t2), None,
                        [f"{format_term(s)} {format_term(p)} {format_term(o)} ."],
                        None, "later than the allowed lateness", None))
        self.late.clear()
        errors = self.engine.errors
        for e in errors[self._errors_seen:]:
            out.append(("error", ",".join(e.queries), self.key, None, None, None, None, None,
                        str(e), None))
        self._errors_seen = len(errors)
        return out

    def _answer_rows(self, out: Rows, name: str, var: str | None, answers: Iterable[Any]) -> None:
        """Output rows of answers given as Answer objects (windowed queries)."""
        from ..io.results import answer_to_json
        from ..rdf.ntriples import format_term
        for a in answers:
            k = self.key
            if var is not None:
                v = a.bindings.get(var)
                k = None if v is None else format_term(v)
                if self.key is not None and k != self.key:
                    continue        # another group's answer: it is found there
            out.append(("answer", name, k, float(a.start), float(a.end),
                        {x: format_term(v) for x, v in a.bindings.items()},
                        [f"{format_term(s)} {format_term(p)} {format_term(o)} ."
                         for s, p, o in a.triples] or _NONE,
                        json.dumps(answer_to_json(a), ensure_ascii=False), None, None))

    def finish(self, last: float | None = None) -> Rows:
        """End of the group's stream (batch replay): decide every waiting
        answer.  ``last``: the last time stamp of the whole input, which
        windowed queries evaluate up to in every group (as one engine over
        the whole stream would)."""
        if last is not None and math.isfinite(last):
            self.engine.advance(_time(last))
        self.engine.flush()
        return self.results()


def frame(rows: "Rows | list[tuple]"):
    """The pandas DataFrame of output rows (built column by column)."""
    import pandas as pd
    if not isinstance(rows, Rows):
        r = Rows()
        r.extend(rows)
        rows = r
    return pd.DataFrame(dict(zip(OUTPUT_COLUMNS, rows.columns())), columns=OUTPUT_COLUMNS)


def stats_row(kind: str, count: int, message: str = "") -> tuple:
    return ("stats", None, kind, None, None, None, None, None, message, count)


# -- batch replay ----------------------------------------------------------------
def run_sorted(spec: JobSpec, batches: Iterator[Any], flush_every: int = 20000,
               last: float | None = None) -> Iterator[Any]:
    """mapInArrow body for a replay partition (Arrow record batches in and
    out: the output rows are built as Arrow arrays, :meth:`Rows.arrow`),
    rows sorted by (key, end, start, seq) when ``spec.per_key`` (each key's
    rows one group, run from a clean state and flushed at its end), else by (end, start, seq): one
    keyed engine and one whole-stream engine take the partition's rows
    in time order.  ``last``: the whole input's last time stamp (windowed
    queries evaluate up to it in every group)."""
    runners: dict[str, Runner] = {}       # per_key: the current group's; else by kind
    key = None
    out = Rows()
    pushed = 0

    def group(k: str) -> Runner:
        nonlocal key
        kind = "whole" if k == WHOLE else "keyed"
        if spec.per_key:
            if k != key:
                for r in runners.values():
                    out.extend(r.finish(last))
                runners.clear()
                key = k
        r = runners.get(kind)
        if r is None:
            r = runners[kind] = runner(spec, kind)
            r.start(k if spec.per_key else None)
        return r

    for rb in batches:
        if not rb.num_rows:
            continue
        keys = rb.column("key").to_pylist()
        cols = [rb.column(c).to_pylist() for c in ("s", "p", "o", "start", "end")]
        if spec.windowed:
            cols.append(rb.column("stream").to_pylist())
        msgs = rb.column("error").to_pylist()
        n = len(keys)
        if not spec.per_key:               # two engines at most: split by kind, keep order
            bad = [i for i in range(n) if keys[i] == BAD]
            whole = [i for i in range(n) if keys[i] == WHOLE]
            if len(bad) + len(whole) == 0:
                spans = [(keys[0], list(range(n)))]
            else:
                skip = set(bad) | set(whole)
                spans = [(BAD, bad), (WHOLE, whole),
                         ("keyed", [i for i in range(n) if i not in skip])]
            for k, idx in spans:
                if not idx:
                    continue
                if k == BAD:
                    out.extend(_skipped(msgs[i]) for i in idx)
                    continue
                sel = [[c[i] for i in idx] for c in cols] if len(idx) < n else cols
                group(WHOLE if k == WHOLE else "keyed").push(*sel)
                pushed += len(idx)
        else:
            i = 0
            while i < n:
                k = keys[i]
                j = i + 1
                while j < n and keys[j] == k:
                    j += 1
                if k == BAD:
                    out.extend(_skipped(m) for m in msgs[i:j])
                else:
                    group(k).push(*(c[i:j] for c in cols))
                    pushed += j - i
                i = j
        for r in runners.values():
            if len(out) < flush_every:
                out.extend(r.results())
        if len(out) >= flush_every:
            yield out.arrow()
            out = Rows()
    for r in runners.values():
        out.extend(r.finish(last))
    out.append(stats_row("events", pushed))
    yield out.arrow()


def _skipped(message: str) -> tuple:
    return ("skipped", None, None, None, None, None, None, None, message, None)


# -- structured streaming ------------------------------------------------------------
STATE_SCHEMA = "snapshot binary, last_end double"


def run_with_state(spec: JobSpec, key: tuple, batches: Iterator[Any], state: Any) -> Iterator[Any]:
    """applyInPandasWithState body: restore the group's engine state, push
    this micro-batch's rows in time order, move to the watermark, save."""
    import pandas as pd
    k = key[0]
    if k == BAD:
        rows = [_skipped(m) for pdf in batches for m in pdf["error"].tolist()]
        yield frame(rows)
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
        r.push(pdf["s"].tolist(), pdf["p"].tolist(), pdf["o"].tolist(),
               pdf["start"].tolist(), pdf["end"].tolist(),
               [None if x is None or x != x else x for x in pdf["stream"].tolist()]
               if spec.windowed else None)
        pushed = len(pdf)
        last_end = max(last_end, float(pdf["end"].max()))
    wm_ms = state.getCurrentWatermarkMs()
    if wm_ms > 0:
        r.engine.advance(wm_ms / 1000.0)
    out = r.results()
    out.append(stats_row("events", pushed))
    if state.hasTimedOut and not parts:
        r.engine.gc()                      # quiet key: expire what its windows allow
        if r.engine.idle:
            state.remove()                 # nothing left to wait for: forget the key
            yield frame(out)
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
    yield frame(out)
