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


class Rows:
    """Output rows kept as columns (one list per column of
    :data:`OUTPUT_COLUMNS`): answers are added a batch at a time, column by
    column, and the DataFrame is built from the columns."""

    __slots__ = ("cols",)

    def __init__(self) -> None:
        self.cols: list[list[Any]] = [[] for _ in OUTPUT_COLUMNS]

    def __len__(self) -> int:
        return len(self.cols[0])

    def append(self, row: Sequence[Any]) -> None:
        for c, v in zip(self.cols, row):
            c.append(v)

    def extend(self, rows: "Rows | Iterable[Sequence[Any]]") -> None:
        if isinstance(rows, Rows):
            for c, more in zip(self.cols, rows.cols):
                c.extend(more)
        else:
            for row in rows:
                self.append(row)

    def add_columns(self, n: int, columns: Sequence[Any]) -> None:
        """``n`` rows given column by column (a list, or one value for all)."""
        for c, v in zip(self.cols, columns):
            c.extend(v if isinstance(v, list) else [v] * n)

    def tuples(self) -> list[tuple]:
        return list(zip(*self.cols))


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
        and JSON once, not once per answer, and the rows are added column
        by column."""
        from ..io.results import batch_json_lines, batch_nt_columns
        from ..rdf.ntriples import format_term
        out = Rows()
        nt = lambda table, ids: table.mapped("nt", format_term, ids)  # noqa: E731
        for q in self.engine.queries:
            var = self.keyvar.get(q.name)
            got = q.results()
            if not isinstance(got, Results):       # a windowed query's Answer objects
                self._answer_rows(out, q.name, var, got)
                continue
            for b in got.batches:
                cols = batch_nt_columns(b)
                n = len(b)
                keys: list[str | None] = [self.key] * n
                if var is not None:
                    keys = dict(cols).get(var) or [None] * n
                keep = list(range(n)) if self.key is None or var is None else \
                    [j for j in range(n) if keys[j] == self.key]   # others: found in their group
                if not keep:
                    continue
                lines = batch_json_lines(b, end="")
                starts, ends = b.starts(), b.ends()
                if b.shape.form == "CONSTRUCT":
                    ts = b.template_rows(nt, format_term)
                    triples = [[f"{s} {p} {o} ." for s, p, o in ts[j]] for j in keep]
                else:
                    triples = [_NONE] * len(keep)
                named = [(name, col) for name, col in cols]
                out.add_columns(len(keep), (
                    "answer", q.name, [keys[j] for j in keep],
                    [float(starts[j]) for j in keep], [float(ends[j]) for j in keep],
                    [{name: col[j] for name, col in named if col[j] is not None} for j in keep],
                    triples, lines if len(keep) == n else [lines[j] for j in keep], None, None))
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
    return pd.DataFrame(dict(zip(OUTPUT_COLUMNS, rows.cols)), columns=OUTPUT_COLUMNS)


def stats_row(kind: str, count: int, message: str = "") -> tuple:
    return ("stats", None, kind, None, None, None, None, None, message, count)


# -- batch replay ----------------------------------------------------------------
def run_sorted(spec: JobSpec, batches: Iterator[Any], flush_every: int = 20000,
               last: float | None = None) -> Iterator[Any]:
    """mapInPandas body for a replay partition, rows sorted by (key, end,
    start, seq) when ``spec.per_key`` (each key's rows one group, run from a
    clean state and flushed at its end), else by (end, start, seq): one
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

    for pdf in batches:
        if pdf.empty:
            continue
        keys = pdf["key"].tolist()
        cols = [pdf[c].tolist() for c in ("s", "p", "o", "start", "end")]
        if spec.windowed:
            cols.append([None if g is None or g != g else g for g in pdf["stream"].tolist()])
        msgs = pdf["error"].tolist()
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
            yield frame(out)
            out = Rows()
    for r in runners.values():
        out.extend(r.finish(last))
    out.append(stats_row("events", pushed))
    yield frame(out)


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
