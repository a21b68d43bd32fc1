"""A batch of stream triples given as Arrow columns of term texts, made janus data.

What :meth:`epsparql.Engine.push_arrow` takes (a columnar stream reader's
batches, a Spark worker's Arrow batches): columns ``s``, ``p``, ``o`` of
N-Triples term texts, ``start`` and optional ``end`` (seconds), optional
``stream`` (an IRI, null for the default stream).  Here it becomes the
batch of :mod:`epsparql.rdf.wire_rows` (``[Terms, Ss, Ps, Os, T1s, T2s]``)
without a Python object per row: the three term columns are dictionary
encoded together (in Arrow's C++), each distinct text is read once (and
remembered across batches), the places are the dictionary's indices, the
times numpy conversions.  A term this path cannot carry as janus data
makes the whole batch go the row way (:func:`arrow_rows`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..core.long_text import LongText
from ..core.terms import PlString
from ..memo import LONG_KEY, BoundedCache
from .ntriples import absolute_iri_problem, parse_term
from .wire_rows import term_data, valid_text

__all__ = ["ArrowBatch", "arrow_batch", "arrow_rows"]

#: N-Triples text -> the term as janus data (an IRI's text, a number, a tuple)
_TERMS = BoundedCache(1 << 16)
#: stream IRI text -> itself, checked
_STREAMS = BoundedCache(1 << 10)


@dataclass
class ArrowBatch:
    """A batch ready to cross: ``data`` (the wire_rows batch, or None when
    it must go as rows), the times as Python numbers, the streams as runs
    ``[iri, count]`` (iri None: the default stream; ``streams`` None: every
    row on it) and the end times as a numpy array (for the reorder
    buffer's check).  ``longs``: the long texts ``data`` hands over by
    reference (:mod:`epsparql.core.long_text`), to release after the push."""

    data: list[Any] | None
    start: list[Any]
    end: list[Any]
    streams: list[list[Any]] | None
    ends: Any
    rows: int
    longs: list[LongText] = field(default_factory=list)


def _column(batch: Any, name: str) -> Any:
    i = batch.schema.get_field_index(name)
    if i < 0:
        return None
    col = batch.column(i)
    return col.combine_chunks() if hasattr(col, "combine_chunks") else col


def _numpy(arr: Any, dtype: str) -> Any:
    """A primitive Arrow array without nulls as a numpy view of its data
    buffer (``to_numpy`` would import pandas, 0.4 s of a command's start)."""
    import numpy as np
    dt = np.dtype(dtype)
    return np.frombuffer(arr.buffers()[1], dtype=dt, count=len(arr), offset=arr.offset * dt.itemsize)


def _first_null(col: Any) -> int:
    return next(i for i, v in enumerate(col.is_valid().to_pylist()) if not v)


def _times(col: Any, what: str) -> Any:
    """A time column as float64 numpy (ValueError for nulls, text, non-finite)."""
    import numpy as np
    import pyarrow as pa
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        raise ValueError(f"column {what!r} must hold numbers of seconds, got {col.type}")
    if col.null_count:
        raise ValueError(f"row {_first_null(col)}: {what} time is missing")
    arr = _numpy(col.cast(pa.float64()), "float64")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"row {i}: {what} time {float(arr[i])!r} is not finite")
    return arr


def _numbers(col: Any, arr: Any) -> list[Any]:
    """Times as the engine takes them: integral ones as ``int``."""
    import numpy as np
    import pyarrow as pa
    if pa.types.is_integer(col.type):
        return _numpy(col.cast(pa.int64()), "int64").tolist()
    whole = (np.floor(arr) == arr) & (np.abs(arr) < 2.0 ** 53)
    if whole.all():
        return arr.astype(np.int64).tolist()
    if not whole.any():
        return arr.tolist()
    return [int(v) if w else v for v, w in zip(arr.tolist(), whole.tolist())]


def _term(text: str, row: int) -> Any:
    """The janus data of one term text (None: not carried as data)."""
    d = _TERMS.get(text)
    if d is not None:
        return d
    try:
        node = parse_term(text)
    except ValueError as e:
        raise ValueError(f"row {row}: {e}") from None
    if type(node).__name__ == "URIRef":
        d = str(node)
        if not valid_text(d):
            return None
    else:
        d = term_data(node)
        if d is None:
            return None
    return _TERMS.put(text, d)


_XSD_STRING = "<http://www.w3.org/2001/XMLSchema#string>"
#: no long texts in a batch
_NONE: Any = ()


def _long_term(view: memoryview, row: int) -> Any:
    """The janus data of a long term text (longer than
    :data:`~epsparql.memo.LONG_KEY`; ``view``: its UTF-8 bytes, in the
    Arrow column), with one copy of its lexical form where the text is a
    plain, language-tagged or ``xsd:string`` literal without escapes (the
    usual large literal: a document, a payload), decoded straight from the
    column, instead of rdflib's term and the codec's copies, and handed
    over by reference (a :class:`~epsparql.core.long_text.LongText`: an
    answer that carries it comes back with this very text); anything else
    the way every term goes."""
    tail = bytes(view[-(len(_XSD_STRING) + 4):])
    close = len(view) - len(tail) + tail.rfind(b'"')
    if view[:1] == b'"' and close > 0:
        try:
            suffix = bytes(view[close + 1:]).decode("utf-8")
        except UnicodeDecodeError:
            suffix = None
        if suffix is not None and (not suffix or suffix == "^^" + _XSD_STRING
                                   or (suffix[0] == "@" and len(suffix) < 100)):
            if _SPECIAL.search(view, 1, close) is None:
                probe = _term('"x"' + suffix, row) if suffix else ("s", 1, "x")
                if type(probe) is tuple and probe[0] in ("s", "l") and probe[2] == "x":
                    # (decoded from UTF-8: valid text for janus)
                    lex = LongText(PlString(view[1:close], "utf-8"))
                    return probe[:2] + (lex,) + probe[3:]
    return _term(str(view, "utf-8"), row)


#: what a literal's lexical form must be without to be taken as it stands
_SPECIAL = re.compile(rb'["\\\n\r]')


def _text_view(col: Any, j: int) -> memoryview:
    """The UTF-8 bytes of text ``j`` of a string array, without a copy."""
    import numpy as np
    offsets = np.frombuffer(col.buffers()[1], np.int32, count=2, offset=(col.offset + j) * 4)
    return memoryview(col.buffers()[2])[int(offsets[0]):int(offsets[1])]


def _int_array(xs: Any) -> Any:
    """A numpy int64 array as an Arrow one (``pa.array`` would import pandas)."""
    import pyarrow as pa
    return pa.Array.from_buffers(pa.int64(), len(xs), [None, pa.py_buffer(xs)])


def _stream(iri: str, row: int) -> str:
    if _STREAMS.get(iri) is None:
        problem = absolute_iri_problem(iri) if iri else "empty"
        if problem is not None or any(c in iri for c in ' <>"{}|^`\\'):
            raise ValueError(f"row {row}: a stream must be an IRI, got {iri!r}"
                             + (f" ({problem})" if problem else ""))
        _STREAMS.put(iri, iri)
    return iri


def arrow_batch(batch: Any) -> ArrowBatch:
    """Check and convert one Arrow batch (RecordBatch or Table); ValueError
    naming the row for a bad time, interval, term or stream."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    cols = {}
    for name in ("s", "p", "o"):
        c = _column(batch, name)
        if c is None:
            raise ValueError(f"an Arrow batch of triples needs the columns s, p, o and start "
                             f"(got {batch.schema.names})")
        if not (pa.types.is_string(c.type) or pa.types.is_large_string(c.type)):
            raise ValueError(f"column {name!r} must hold N-Triples terms as strings, got {c.type}")
        if c.null_count:
            raise ValueError(f"row {_first_null(c)}: {name} is missing")
        cols[name] = c.cast(pa.string()) if pa.types.is_large_string(c.type) else c
    start_col = _column(batch, "start")
    if start_col is None:
        raise ValueError(f"an Arrow batch of triples needs the columns s, p, o and start "
                         f"(got {batch.schema.names})")
    n = len(start_col)
    t1 = _times(start_col, "start")
    end_col = _column(batch, "end")
    if end_col is not None and end_col.null_count:
        end_col = pc.coalesce(end_col.cast(pa.float64()), start_col.cast(pa.float64()))
    t2 = t1 if end_col is None else _times(end_col, "end")
    before = t2 < t1
    if before.any():
        i = int(np.argmax(before))
        raise ValueError(f"row {i}: end {float(t2[i])!r} is before start {float(t1[i])!r}")
    start = _numbers(start_col, t1)
    end = start if end_col is None else _numbers(end_col, t2)
    streams = _runs(_column(batch, "stream"), n)
    # long texts (large literals) are left out of the dictionary: encoding
    # one would copy it twice more, and it is rarely seen twice; nor are
    # they copied into the column of every term the dictionary is made of
    long_rows = _NONE
    bare = _bare_integers(cols["o"]) if n else None
    names = ("s", "p") if bare is not None else ("s", "p", "o")
    lengths = [_numpy(pc.binary_length(cols[k]), "int32") for k in names]
    long_mask = None
    if n and max(int(x.max()) for x in lengths) > LONG_KEY:
        # (in numpy: pyarrow types a Python scalar by an inference that imports pandas)
        long_mask = np.concatenate([x > LONG_KEY for x in lengths])
        long_rows = np.flatnonzero(long_mask).tolist()
        parts = []                       # each column without its long texts
        for k, x in zip(names, lengths):
            short = x <= LONG_KEY
            parts.append(cols[k] if short.all() else
                         cols[k].take(_int_array(np.flatnonzero(short))))
        enc = pc.dictionary_encode(pa.concat_arrays(parts))
        del parts
    else:
        enc = pc.dictionary_encode(pa.concat_arrays([cols[k] for k in names]))
    del lengths
    texts = enc.dictionary.to_pylist()
    first = {}
    idx = _numpy(enc.indices.cast(pa.int64()), "int64")
    if long_mask is not None:
        full = np.full(len(names) * n, -1, np.int64)   # (-1: a long text, not in the dictionary)
        full[~long_mask] = idx
        idx = full
    terms = []
    for k, text in enumerate(texts):
        d = _TERMS.get(text)
        if d is None:
            if not first:
                # the first row of each distinct text, for messages
                u, pos = np.unique(idx, return_index=True)
                first = dict(zip(u.tolist(), (pos % n).tolist())) if n else {}
            d = _term(text, first.get(k, 0))
            if d is None:
                return ArrowBatch(None, start, end, streams, t2, n)
        terms.append(d)
    places = (idx.astype(np.int64) + 1)
    longs = []
    for i in list(long_rows):
        d = _long_term(_text_view(cols[names[i // n]], i % n), i % n)
        if d is None:
            return ArrowBatch(None, start, end, streams, t2, n)
        terms.append(d)
        places[i] = len(terms)
        if type(d) is tuple and type(d[2]) is LongText:
            longs.append(d[2])
    objects = ("bare", bare) if bare is not None else places[2 * n:].tolist()
    data = [terms, places[:n].tolist(), places[n:2 * n].tolist(), objects, start, end]
    return ArrowBatch(data, start, end, streams, t2, n, longs)


#: an object the codec makes a bare integer: a canonical xsd:integer literal
#: (no sign but "-", no leading zero, no "-0") of at most 18 digits
_INT_TAIL = '"^^<http://www.w3.org/2001/XMLSchema#integer>'
_BARE_INT = '^"(?:0|-?[1-9][0-9]{0,17})' + re.escape(_INT_TAIL) + "$"


def _bare_integers(col: Any) -> list[int] | None:
    """The values of an object column whose every term is a canonical
    xsd:integer literal that fits 64 bits (the codec's bare integers: what
    ``term_data`` makes of each), read in Arrow, or None.  Why: a column
    of readings has thousands of distinct values per batch, each a
    dictionary entry looked up (and the first time parsed) in Python;
    this way the values cross as one list of numbers (bridge_python.pl,
    ``object_terms/3``'s bare form)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    first = col[0].as_py()
    if not (first.endswith(_INT_TAIL) and first.startswith('"')):
        return None
    if not pc.all(pc.match_substring_regex(col, _BARE_INT)).as_py():
        return None
    digits = pc.utf8_slice_codeunits(col, 1, -len(_INT_TAIL))
    return _numpy(pc.cast(digits, pa.int64()), "int64").tolist()


def _runs(g: Any, n: int) -> list[list[Any]] | None:
    """The stream column as runs ``[iri, count]`` (``iri`` None: the
    default stream); None when every row is on the default stream."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    if g is None or g.null_count == n:
        return None
    g = g.cast(pa.string())
    codes = _numpy(pc.dictionary_encode(g, null_encoding="encode").indices.cast(pa.int64()),
                   "int64")
    cuts = (np.flatnonzero(codes[1:] != codes[:-1]) + 1).tolist()
    bounds = [0, *cuts, n]
    runs: list[list[Any]] = []
    for a, b in zip(bounds, bounds[1:]):
        iri = g[a].as_py()
        runs.append([None if iri is None else _stream(iri, a), b - a])
    return runs


def arrow_rows(batch: Any) -> list[tuple]:
    """The rows ``(s, p, o, start, end[, stream])`` of a batch as rdflib
    terms: the way for what :func:`arrow_batch` cannot carry as data, and
    for batches the reorder buffer must hold (out of order, late, several
    sources).  Checked as :func:`arrow_batch` checks (call that first)."""
    import pyarrow as pa
    b = arrow_batch(batch)
    cols = []
    for name in ("s", "p", "o"):
        memo: dict[str, Any] = {}
        col = []
        for i, text in enumerate(_column(batch, name).cast(pa.string()).to_pylist()):
            node = memo.get(text)
            if node is None:
                try:
                    node = memo[text] = parse_term(text)
                except ValueError as e:
                    raise ValueError(f"row {i}: {e}") from None
            col.append(node)
        cols.append(col)
    streams: list[Any] = []
    for iri, k in b.streams or [[None, b.rows]]:
        streams.extend([iri] * k)
    return [(s, p, o, t1, t2) if g is None else (s, p, o, t1, t2, g)
            for s, p, o, t1, t2, g in zip(*cols, b.start, b.end, streams)]
