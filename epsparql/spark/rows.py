"""Answers as Arrow columns: what the engine stage hands back to Spark.

A query's answers arrive as batches of columns (:class:`epsparql.answers.Results`);
each batch becomes an :class:`AnswerBlock`, whose output columns are built
only when an output asks for them (the JSON lines need ``json``, Parquet
``bindings``, ``key``, ``triples``), column by column: each distinct term
written as N-Triples or JSON once, the ``bindings`` map from the
variables' text columns by index arithmetic, the JSON line with Arrow's
string kernels; no dict, JSON string or pandas object per answer.

Output columns (:data:`ANSWER_FIELDS`): ``query``; ``key`` (the group key's
N-Triples text, null for an unpartitioned query); ``start``, ``end``
(seconds); ``bindings`` (variable -> N-Triples text, unbound variables
left out); ``triples`` (a CONSTRUCT answer's triples as N-Triples
lines); ``json`` (the line ``epsparql run --output-format jsonl`` writes).
"""
from __future__ import annotations

import json
from typing import Any, Callable, Sequence

ANSWER_FIELDS = ("query", "key", "start", "end", "bindings", "triples", "json")
_SPARK_TYPES = {"query": "string", "key": "string", "start": "double", "end": "double",
                "bindings": "map<string,string>", "triples": "array<string>", "json": "string",
                "kind": "string", "message": "string", "count": "long"}


def spark_schema(fields: Sequence[str]) -> str:
    """The DDL schema of rows with ``fields`` (answer fields, and the
    streaming stage's ``kind``, ``message``, ``count``)."""
    return ", ".join(f"`{f}` {_SPARK_TYPES[f]}" for f in fields)


_ARROW: dict[str, Any] = {}


def arrow_type(field: str) -> Any:
    """The Arrow type of a field as Spark converts it (map entries
    ``key``/``value``, list items ``element``)."""
    if not _ARROW:
        import pyarrow as pa
        _ARROW.update(query=pa.string(), key=pa.string(), start=pa.float64(),
                      end=pa.float64(), bindings=pa.map_(pa.string(), pa.string()),
                      triples=pa.list_(pa.field("element", pa.string())), json=pa.string(),
                      kind=pa.string(), message=pa.string(), count=pa.int64())
    return _ARROW[field]


def arrow_schema(fields: Sequence[str]) -> Any:
    import pyarrow as pa
    return pa.schema([(f, arrow_type(f)) for f in fields])


class AnswerBlock:
    """One batch of a query's answers in one group.

    ``key``: the group key of every row (a string, or None), or a list with
    each row's; ``make``: how to build the text columns, each called at
    most once: ``bindings`` -> [(variable, N-Triples texts, None where
    unbound)], ``triples`` -> per row its CONSTRUCT triples' lines, or None
    (SELECT), ``json`` -> the JSON lines (a list or an Arrow string array)."""

    __slots__ = ("query", "key", "starts", "ends", "_make", "_made")

    def __init__(self, query: str, key: "str | None | list[str | None]", starts: list[float],
                 ends: list[float], make: dict[str, Callable[[], Any]]) -> None:
        self.query, self.key, self.starts, self.ends = query, key, starts, ends
        self._make = make
        self._made: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.starts)

    def get(self, part: str) -> Any:
        if part not in self._made:
            self._made[part] = self._make[part]()
        return self._made[part]

    def arrow(self, fields: Sequence[str]) -> list[Any]:
        """The rows as Arrow arrays of ``fields``."""
        return [getattr(self, "_" + f)() for f in fields]

    # -- one method per field ---------------------------------------------------
    def _query(self) -> Any:
        import pyarrow as pa
        return pa.repeat(pa.scalar(self.query, pa.string()), len(self))

    def _key(self) -> Any:
        import pyarrow as pa
        key, n, string = self.key, len(self), pa.string()
        return pa.array(key, string) if isinstance(key, list) else \
            pa.nulls(n, string) if key is None else pa.repeat(pa.scalar(key, string), n)

    def _start(self) -> Any:
        import numpy as np
        import pyarrow as pa
        return pa.array(np.asarray(self.starts, dtype=np.float64))

    def _end(self) -> Any:
        import numpy as np
        import pyarrow as pa
        return pa.array(np.asarray(self.ends, dtype=np.float64))

    def _json(self) -> Any:
        import pyarrow as pa
        lines = self.get("json")
        return pa.array(lines, pa.string()) if isinstance(lines, list) else lines

    def _triples(self) -> Any:
        import numpy as np
        import pyarrow as pa
        triples = self.get("triples")
        if triples is None:
            return pa.ListArray.from_arrays(pa.array(np.zeros(len(self) + 1, dtype=np.int32)),
                                            pa.array([], pa.string()),
                                            type=arrow_type("triples"))
        return pa.array(triples, arrow_type("triples"))

    def _bindings(self) -> Any:
        """The map column from the variables' text columns: one string array
        over all of them, reordered row-major by index arithmetic, the
        unbound ones dropped; offsets from the counts."""
        import numpy as np
        import pyarrow as pa
        named = self.get("bindings")
        n, m, string = len(self), len(named), pa.string()
        texts = pa.array([v for _, col in named for v in col], string)        # variable-major
        order = np.arange(m * n, dtype=np.int64).reshape(m, n).T.ravel()    # row-major
        if texts.null_count:
            bound = texts.is_valid().to_numpy(zero_copy_only=False).reshape(m, n)
            order = order[bound.T.ravel()]
            counts = bound.sum(axis=0, dtype=np.int32)
        else:
            counts = np.full(n, m, dtype=np.int32)
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(counts, out=offsets[1:])
        names = pa.array([name for name, _ in named], string)
        return pa.MapArray.from_arrays(pa.array(offsets), names.take(pa.array(order // n)),
                                       texts.take(pa.array(order)))


def record_batch(blocks: Sequence[AnswerBlock], fields: Sequence[str]) -> Any:
    """One record batch of ``fields`` over the blocks' answers."""
    import pyarrow as pa
    schema = arrow_schema(fields)
    batches = [pa.RecordBatch.from_arrays(b.arrow(fields), schema=schema) for b in blocks if len(b)]
    if not batches:
        return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)
    return batches[0] if len(batches) == 1 else pa.concat_batches(batches)


# -- from a Results batch -----------------------------------------------------------
def batch_block(b: Any, query: str, key: "str | None | list[str | None]") -> AnswerBlock:
    """The block of an :class:`epsparql.answers.AnswerBatch` (its rows
    already those of the group)."""
    from ..io.results import nt_texts
    from ..rdf.ntriples import format_term
    starts, ends = b.starts(), b.ends()

    def triples() -> list[list[str]] | None:
        if b.shape.form != "CONSTRUCT":
            return None
        return [[f"{s} {p} {o} ." for s, p, o in t]
                for t in b.template_rows(nt_texts, format_term)]
    return AnswerBlock(query, key, starts, ends, {
        "bindings": lambda: [(name, nt_texts(*b.ids(name)[::-1])) for name in b.shape.names],
        "triples": triples,
        "json": lambda: json_lines(b, starts, ends)})


def json_lines(b: Any, starts: list[float], ends: list[float]) -> Any:
    """The JSON lines of a batch of answers (without line ends), as an Arrow
    string array: the text of :func:`epsparql.io.results.batch_json_lines`
    (``json.dumps(answer_to_json(a), ensure_ascii=False)``), put together
    column by column with Arrow's string kernels from each distinct term's
    JSON text and each distinct time's."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from ..io.results import batch_triples_json, json_texts
    sh = b.shape
    string = pa.string()
    join = pc.binary_join_element_wise
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
        tail = join(pa.array(batch_triples_json(b), string), "}", "")
    else:
        tail = "}"
    return join(head, time_texts(starts), ', "end": ', time_texts(ends), ', "bindings": {',
                bound, "}", tail, "")


def time_texts(ts: list[float]) -> Any:
    """``json.dumps(time_json(t))`` of each time, as an Arrow string array:
    whole seconds (below 10**15) cast by Arrow, other times written once
    per distinct value."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from ..io.results import time_json
    arr = np.asarray(ts, dtype=np.float64)
    finite = bool(len(arr)) and bool(np.isfinite(arr).all()) and np.abs(arr).max() < 2.0 ** 53
    if finite and np.abs(arr).max() < 1e15 and (arr == np.floor(arr)).all():
        return pc.cast(pa.array(arr.astype(np.int64)), pa.string())
    if finite:
        # equal numbers (5 and 5.0) give the same text: the float64 values do
        uniq, inv = np.unique(arr, return_inverse=True)
        texts = [json.dumps(time_json(float(t))) for t in uniq.tolist()]
        return pa.array(texts, pa.string()).take(pa.array(inv.ravel()))
    memo: dict[Any, str] = {}
    out = []
    for t in ts:
        v = memo.get(t)
        if v is None:
            v = memo[t] = json.dumps(time_json(t))
        out.append(v)
    return pa.array(out, pa.string())
