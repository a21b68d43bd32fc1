"""Answers as an Apache Arrow table: ``start``, ``end``, one column per variable.

    table = q.results(format="arrow")            # drains the query
    table = epsparql.io.to_arrow(answers)        # any answers (a list too)

Each distinct term is converted once, not once per answer: the answers of
a query arrive as columns of dictionary ids (:mod:`epsparql.answers`), and
a variable's column is built from the distinct ids it holds.

``values="python"`` (default): a variable whose bound terms are all of
one kind gets a typed column:

==========================================  ===============================
terms                                       column
==========================================  ===============================
``xsd:integer`` and its derived types       ``int64``
numbers (``xsd:decimal``, ``double``,       ``float64`` (decimals as the
``float``, and integers mixed with them)    nearest double; INF, NaN)
``xsd:boolean``                             ``bool``
``xsd:dateTime``, ``xsd:dateTimeStamp``     ``timestamp[us, UTC]`` (no
                                            time zone: taken as UTC)
IRIs, blank nodes (``_:x``), plain and      ``dictionary<int32, string>``:
language-tagged strings, ``xsd:string``,    the IRI, ``_:`` + label, the
literals of other datatypes, ill-typed      lexical form
literals
==========================================  ===============================

Any other mix (numbers and IRIs in one variable, durations, dates, an
integer beyond 64 bits) gives the column as
N-Triples text (lossless), and the field's metadata says so
(``epsparql.values``: ``python`` or ``nt``).  ``values="nt"``: every
variable as N-Triples text.  Unbound is null.  A variable called
``query``, ``start`` or ``end`` is prefixed with ``?``.

``times="seconds"``: ``start``/``end`` as ``int64`` when every time is a
whole number, else ``float64``; ``times="datetime"``: ``timestamp[us,
UTC]``.  CONSTRUCT answers have a ``triples`` column (a list of
``{s, p, o}`` in N-Triples text).  The schema's metadata names the query
(``epsparql.query``, when the answers are one query's).
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..answers import Results
from ..core.terms import Compound
from ..rdf.codec import XSD
from ..rdf.ntriples import format_encoded_numbers, format_term

if TYPE_CHECKING:                       # pyarrow is imported when used
    import pyarrow as pa

    from ..answer import Answer

__all__ = ["to_arrow", "EPOCH", "META_NAMES", "answer_variables", "column_names", "python_kind",
           "Segment", "segments", "time_column"]

META_NAMES = ("query", "start", "end")
_DATETIMES = frozenset({XSD + "dateTime", XSD + "dateTimeStamp"})
_INT64 = (-2 ** 63, 2 ** 63 - 1)
_SPECIAL_REALS = frozenset({XSD + "double", XSD + "float"})
_SPECIALS = {"INF": float("inf"), "+INF": float("inf"), "-INF": float("-inf"), "NaN": float("nan")}

#: a run of answers' terms of one variable: (ids, their table), or (None, n)
#: for n answers that cannot bind it
Segment = tuple


def column_names(variables: Sequence[str]) -> list[str]:
    """The column of each variable: its name, with ``?`` prepended while
    it clashes with ``query``, ``start``, ``end`` or an earlier column."""
    taken = set(META_NAMES)
    out = []
    for v in variables:
        name = v
        while name in taken:
            name = "?" + name
        taken.add(name)
        out.append(name)
    return out


def python_kind(term: Any) -> tuple[str | None, Any]:
    """(kind, value) of an encoded term for a typed column: kind ``int``,
    ``float``, ``bool``, ``datetime`` (value: microseconds since the
    epoch, an int, see :func:`_micros`), ``str`` or ``other``; (None,
    None) for unbound."""
    if term is None or term == "$error":
        return None, None
    if type(term) is str:
        return "str", term                          # an IRI
    if type(term) is int:                           # a bare xsd:integer (the codec)
        return ("int", term) if _INT64[0] <= term <= _INT64[1] else ("other", None)
    if type(term) is float:                         # a bare xsd:double
        return "float", term
    if type(term) is Compound:
        name, args = term.name, term.args
        if name == "n" and len(args) == 3:
            v = args[0]
            if type(v) is int:
                return ("int", v) if _INT64[0] <= v <= _INT64[1] else ("other", None)
            return "float", v
        if name == "t" and len(args) == 2 and args[1] in _SPECIAL_REALS \
                and str(args[0]) in _SPECIALS:
            return "float", _SPECIALS[str(args[0])]     # INF, -INF, NaN (not encoded as n/3)
        if name in ("s", "l", "t"):
            return "str", str(args[0])
        if name == "b":
            return "str", "_:" + str(args[0])
        if name == "bool" and len(args) == 2:
            return "bool", args[0] == "true"
        if name == "d" and len(args) == 3 and args[1] in _DATETIMES:
            return "datetime", _micros(args[0], args[2])
    return "other", None


#: The epoch of the microseconds of a ``datetime`` python_kind.
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def _micros(seconds: float, lexical: Any) -> int:
    """A dateTime as whole microseconds since the epoch, read from its
    lexical form where Python can (the codec's seconds are a float: at
    dates past ~2100 it holds less than a microsecond), else rounded from
    the seconds (years beyond 9999, more than six fraction digits)."""
    try:
        dt = datetime.fromisoformat(str(lexical))
    except ValueError:
        return round(seconds * 1_000_000)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return (dt - EPOCH) // _MICROSECOND


def segments(answers: Any, variables: Sequence[str]) -> tuple[list[int], dict[str, list[Segment]],
                                                              list[Any], list[Any]]:
    """The answers as columns: lengths of the runs, per variable its
    segments (one per run), and the start and end times."""
    lengths: list[int] = []
    cols: dict[str, list[Segment]] = {v: [] for v in variables}
    starts: list[Any] = []
    ends: list[Any] = []
    for b in Results.of(answers).batches:
        n = len(b)
        lengths.append(n)
        starts.extend(b.starts())
        ends.extend(b.ends())
        for v in variables:
            got = b.ids(v)
            cols[v].append((None, n) if got is None else got)
    return lengths, cols, starts, ends


def answer_variables(answers: Any, variables: Sequence[str] | None) -> list[str]:
    """``variables``, else a Results' own, else the bound ones in order of
    first appearance."""
    if variables is not None:
        return list(variables)
    return list(Results.of(answers).variables)


def _unique(ids: Sequence[int]) -> tuple[Any, Any]:
    import numpy as np
    arr = np.asarray(ids, dtype=np.int64)
    return np.unique(arr, return_inverse=True)


def _kinds(segs: list[Segment]) -> set[str]:
    kinds: set[str] = set()
    for ids, table in segs:
        if ids is None:
            continue
        uniq, _ = _unique(ids)
        for i in uniq.tolist():
            k, _ = python_kind(table.terms[i])
            if k is not None:
                kinds.add(k)
    return kinds


def _column_type(kinds: set[str], values: str) -> str:
    if values == "nt":
        return "nt"
    if not kinds:
        return "null"
    if kinds == {"int"}:
        return "int"
    if kinds <= {"int", "float"}:
        return "float"
    if len(kinds) == 1 and next(iter(kinds)) in ("bool", "datetime", "str"):
        return next(iter(kinds))
    return "nt"


def _dictionary(uniq_vals: list[Any], inv: Any) -> "pa.Array":
    import numpy as np
    import pyarrow as pa
    null = np.fromiter((v is None for v in uniq_vals), dtype=bool, count=len(uniq_vals))
    texts = pa.array(["" if v is None else v for v in uniq_vals], pa.string())
    indices = pa.array(inv.astype(np.int32), mask=null[inv] if null.any() else None)
    return pa.DictionaryArray.from_arrays(indices, texts)


def _typed(uniq_vals: list[Any], inv: Any, kind: str) -> "pa.Array":
    import numpy as np
    import pyarrow as pa
    null = np.fromiter((v is None for v in uniq_vals), dtype=bool, count=len(uniq_vals))
    mask = null[inv] if null.any() else None
    if kind == "int":
        vals = np.array([0 if v is None else v for v in uniq_vals], dtype=np.int64)
        return pa.array(vals[inv], pa.int64(), mask=mask)
    if kind == "float":
        vals = np.array([0.0 if v is None else float(v) for v in uniq_vals], dtype=np.float64)
        return pa.array(vals[inv], pa.float64(), mask=mask)
    if kind == "bool":
        vals = np.array([bool(v) for v in uniq_vals], dtype=bool)
        return pa.array(vals[inv], pa.bool_(), mask=mask)
    # datetime: microseconds since the epoch
    vals = np.array([0 if v is None else v for v in uniq_vals], dtype=np.int64)
    return pa.array(vals[inv], pa.timestamp("us", tz="UTC"), mask=mask)


_ARROW_TYPES = {"int": "int64", "float": "float64", "bool": "bool_", "null": "null"}


def _chunks(segs: list[Segment], kind: str) -> list["pa.Array"]:
    import pyarrow as pa
    out = []
    for ids, table in segs:
        if ids is None:
            n = table
            out.append(pa.nulls(n, _arrow_type(kind)))
            continue
        if not ids:
            out.append(pa.array([], _arrow_type(kind)))
            continue
        uniq, inv = _unique(ids)
        uniq_list = uniq.tolist()
        if kind == "null":
            out.append(pa.nulls(len(ids)))
        elif kind == "nt":
            out.append(_dictionary(table.mapped("nt", format_term, uniq_list,
                                                format_encoded_numbers), inv))
        else:
            vals = [python_kind(table.terms[i])[1] for i in uniq_list]
            out.append(_dictionary(vals, inv) if kind == "str" else _typed(vals, inv, kind))
    return out


def _arrow_type(kind: str) -> "pa.DataType":
    import pyarrow as pa
    if kind in ("nt", "str"):
        return pa.dictionary(pa.int32(), pa.string())
    if kind == "datetime":
        return pa.timestamp("us", tz="UTC")
    return getattr(pa, _ARROW_TYPES[kind])()


def time_column(ts: list[Any], times: str) -> "pa.Array":
    """Start or end times: int64 when all whole, else float64; or UTC
    timestamps (``times="datetime"``)."""
    import numpy as np
    import pyarrow as pa
    if times == "datetime":
        us = np.array([round(float(t) * 1_000_000) for t in ts], dtype=np.int64)
        return pa.array(us, pa.timestamp("us", tz="UTC"))
    arr = np.array(ts, dtype=np.float64)
    if all(type(t) is int for t in ts) or (np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
                                           and np.all(np.abs(arr) < 2.0 ** 53)):
        return pa.array(np.array([int(t) for t in ts], dtype=np.int64), pa.int64())
    return pa.array(arr, pa.float64())


def _triples_column(answers: Any) -> "pa.Array | None":
    import pyarrow as pa
    typ = pa.list_(pa.struct([("s", pa.string()), ("p", pa.string()), ("o", pa.string())]))
    answers = Results.of(answers)
    if not any(b.shape.form == "CONSTRUCT" for b in answers.batches):
        return None
    rows: list[list[dict]] = []

    def nt(table: Any, ids: list[int]) -> list[str | None]:
        return table.mapped("nt", format_term, ids, format_encoded_numbers)
    for b in answers.batches:
        for ts in b.template_rows(nt, format_term):
            rows.append([{"s": s, "p": p, "o": o} for s, p, o in ts])
    return pa.array(rows, typ)


def to_arrow(answers: "Iterable[Answer] | Results", *, variables: Sequence[str] | None = None,
             values: str = "python", times: str = "seconds") -> "pa.Table":
    """The answers as a pyarrow Table (see the module doc): ``start``,
    ``end``, one column per variable (``variables``, else the query's, else
    in order of first appearance), ``triples`` for CONSTRUCT answers."""
    import pyarrow as pa
    if values not in ("python", "nt"):
        raise ValueError(f"values must be 'python' or 'nt' for Arrow, got {values!r}")
    if times not in ("seconds", "datetime"):
        raise ValueError(f"times must be 'seconds' or 'datetime', got {times!r}")
    answers = Results.of(answers)
    names = answer_variables(answers, variables)
    lengths, cols, starts, ends = segments(answers, names)
    fields = [pa.field("start", time_column(starts, times).type),
              pa.field("end", time_column(ends, times).type)]
    arrays: list[Any] = [time_column(starts, times), time_column(ends, times)]
    for v, col in zip(names, column_names(names)):
        kind = _column_type(_kinds(cols[v]), values)
        typ = _arrow_type(kind)
        chunks = [c for c in _chunks(cols[v], kind)]
        arrays.append(pa.chunked_array(chunks, typ) if chunks else pa.chunked_array([], typ))
        fields.append(pa.field(col, typ, metadata={
            b"epsparql.variable": v.encode("utf-8"),
            b"epsparql.values": b"python" if kind != "nt" else b"nt"}))
    triples = _triples_column(answers)
    if triples is not None:
        arrays.append(triples)
        fields.append(pa.field("triples", triples.type))
    meta = {}
    query = answers.query
    if query:
        meta[b"epsparql.query"] = query.encode("utf-8")
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=meta or None))
