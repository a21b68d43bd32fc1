"""Arrow batches of triples into an engine: the one place the workers push.

``Engine.push_arrow(batch, source=...)`` (being built beside this branch)
will take a record batch of N-Triples text columns ``s``, ``p``, ``o``,
float64 ``start``, nullable ``end`` and ``stream``, dictionary-encode the
terms and cross into Prolog once, with no Python object per row.  Until
it is there, :func:`push_arrow` does the same through
``Engine.push_many``: each distinct term text of the batch is parsed once,
rows are tuples.  When the engine has it, this function's body becomes
``return engine.push_arrow(batch.select(COLUMNS), source=source)``.
"""
from __future__ import annotations

from typing import Any, Callable

from ..memo import Memo

#: The columns of a batch the engine takes.
COLUMNS = ["s", "p", "o", "start", "end", "stream"]


def times(col: Any) -> list[Any]:
    """A float64 column of seconds as Python numbers, whole seconds as int
    (how the stream reader gives them); null stays None."""
    import numpy as np
    if col.null_count:
        return [None if t is None else (int(t) if t.is_integer() and abs(t) < 2 ** 53 else t)
                for t in col.to_pylist()]
    arr = col.to_numpy(zero_copy_only=False)
    whole = (arr == np.floor(arr)) & (np.abs(arr) < 2.0 ** 53)
    if whole.all():
        return arr.astype(np.int64).tolist()
    out = arr.astype(object)
    out[whole] = arr[whole].astype(np.int64).astype(object)
    return out.tolist()


class TermCache:
    """N-Triples text -> rdflib term, shared by the batches of a worker."""

    def __init__(self) -> None:
        from ..rdf.ntriples import parse_term
        self.term: Callable[[str], Any] = Memo(parse_term).__getitem__

    def column(self, col: Any) -> list[Any]:
        """The terms of an Arrow string column, each distinct text parsed once."""
        import pyarrow.compute as pc
        enc = pc.dictionary_encode(col)
        terms = [self.term(t) for t in enc.dictionary.to_pylist()]
        return [terms[i] for i in enc.indices.to_numpy(zero_copy_only=False).tolist()]


def push_arrow(engine: Any, batch: Any, terms: TermCache, *, source: str = "default"
               ) -> list[int]:
    """Push a record batch of triples (``s``, ``p``, ``o``, ``start``, ``end``,
    ``stream``); returns the positions of late rows, as ``push_many``."""
    n = batch.num_rows
    s, p, o = (terms.column(batch.column(c)) for c in ("s", "p", "o"))
    start = times(batch.column("start"))
    names = batch.schema.names
    end = times(batch.column("end")) if "end" in names else [None] * n
    stream = batch.column("stream") if "stream" in names else None
    if stream is None or stream.null_count == n:
        rows: Any = zip(s, p, o, start, end)
    else:
        rows = zip(s, p, o, start, end, stream.to_pylist())
    return engine.push_many(list(rows), source=source)
