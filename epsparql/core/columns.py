"""Detections in columns: what the Prolog core sends, decoded in bulk.

During a bridge call Prolog hands over the detections in native buffers
of flat rows of 8-byte numbers (``prolog/bridge_columns.pl``,
``prolog/c/columns_buffer.c``): per detection the arguments (numbers as
they are, any other term as the integer id of an entry in the engine's
term dictionary) and the interval, and per run of detections of one head
the kind of each column.  Each distinct term crosses once per engine,
with the buffer that first uses it, except the typed literals that are
new in nearly every answer (a computed decimal, a time): those cross in
the buffer itself, value, datatype and lexical form, and are decoded in
bulk (:func:`_literals`).  Here a buffer is copied in one go
and each run becomes :class:`Columns` with a strided slice per column, no
per-value work but the dictionary look-up of id columns;
:class:`~epsparql.core.event_engine.Detection` objects are built from the
columns only when asked for.
"""
from __future__ import annotations

import ctypes
from functools import partial
from itertools import repeat
from typing import Any, Callable, NamedTuple, Sequence

from .long_text import LongText, long_text
from .terms import Compound, PlString, from_json

_tuple_new = tuple.__new__
ID, VALUE = "id", "value"


class Detection(NamedTuple):
    """A detected complex event and its occurrence interval (seconds)."""

    event: Compound | str
    start: float
    end: float


class TermTable:
    """The decoding side of an engine's term dictionary (ids are indexes).

    Prolog starts the dictionary afresh under a new generation when it
    grows past its bound or after a failed call; the table then starts a
    new list, so :class:`Columns` of older chunks keep theirs."""

    __slots__ = ("generation", "values")

    def __init__(self) -> None:
        self.generation = -1
        self.values: list[Any] = []

    def update(self, generation: int, new_terms: Sequence[Any]) -> None:
        """Start afresh for a new generation, then add the new terms
        (``kind, payload`` pairs, flat: ``[kind1, payload1, kind2, ...]``)."""
        if generation != self.generation:
            self.generation = generation
            self.values = []
        if new_terms:
            self.values.extend(map(_decode_term, new_terms[::2], new_terms[1::2]))


def _decode_term(kind: str, payload: Any) -> Any:
    if kind == "atom":
        return payload
    if kind == "string":        # (a LongText: a long text of the push, by reference)
        return PlString(payload) if type(payload) is not LongText else long_text(payload)
    if kind == "flat":          # [name, kinds, arg...]: a compound of atomic arguments
        name, kinds, *args = payload
        return _tuple_new(Compound, (name, tuple(
            (PlString(a) if type(a) is not LongText else long_text(a)) if k == "s" else a
            for k, a in zip(kinds, args))))
    return from_json(payload)


class Columns:
    """Detections of one rule head, in detection order, as columns.

    ``name``/``arity``: the head; ``start``, ``end``: the intervals (lists
    of numbers); ``kinds[i]``: ``"id"`` when argument i is given as term
    ids (:meth:`ids`, decoded through ``terms``), ``"value"`` when as the
    values themselves (numbers, or already decoded).  :meth:`column` gives
    the decoded values of an argument, :meth:`detections` the Detection
    objects (built once, on first use)."""

    __slots__ = ("name", "arity", "start", "end", "kinds", "_raw", "terms", "_dets")

    def __init__(self, name: str, arity: int, raw: list[list[Any]], kinds: list[str],
                 start: list, end: list, terms: list[Any]) -> None:
        self.name, self.arity = name, arity
        self._raw, self.kinds = raw, kinds
        self.start, self.end = start, end
        self.terms = terms
        self._dets: list | None = None

    def __len__(self) -> int:
        return len(self.start)

    def __repr__(self) -> str:
        return f"<Columns {self.name}/{self.arity}: {len(self)} detections>"

    def ids(self, i: int) -> list[Any]:
        """Argument i as sent: term ids (kind "id") or values (kind "value")."""
        return self._raw[i]

    def column(self, i: int) -> list[Any]:
        """Argument i, decoded (terms as in Detection: str atoms, PlString,
        numbers, Compound, lists, None for unbound)."""
        raw = self._raw[i]
        if self.kinds[i] == VALUE:
            return raw
        return list(map(self.terms.__getitem__, raw))

    def detections(self) -> list:
        """The Detection objects of these columns (built once)."""
        if self._dets is None:
            new = partial(_tuple_new, Detection)
            if self.arity == 0:
                events: Any = repeat(self.name, len(self))
            else:
                args = zip(*(self.column(i) for i in range(self.arity)))
                events = map(partial(_tuple_new, Compound), zip(repeat(self.name), args))
            self._dets = list(map(new, zip(events, self.start, self.end)))
        return self._dets


class ColumnReceiver:
    """Takes the chunks of one bridge call (Prolog calls :meth:`take`).

    With ``on_chunk`` each chunk is handed to it as it arrives, during the
    call, and not kept; if it raises, the exception is kept in
    :attr:`error` and the call stops (see ``send/6`` in
    ``prolog/bridge_columns.pl``)."""

    __slots__ = ("table", "chunks", "on_chunk", "error")

    def __init__(self, table: TermTable,
                 on_chunk: Callable[[Columns], None] | None = None) -> None:
        self.table = table
        self.chunks: list[Columns] = []
        self.on_chunk = on_chunk
        self.error: BaseException | None = None

    def take(self, generation: int, new_terms: list, runs: list, values: int, kinds: int,
             count: int, lits: list = ()) -> None:
        """One buffer of the C sink (``prolog/c/columns_buffer.c``):
        ``values`` and ``kinds`` are the addresses of its ``count`` values
        (8 bytes each: an int64 or a double) and their kind bytes (1 int,
        2 float, 4 term id, 8 inline literal), valid during this call
        only, so both are copied first; ``lits`` the inline literals
        (:func:`_literals`).  ``runs`` splits the values into runs of detections
        of one head, four items per run: name, arity, count and the kinds
        of its arity + 2 columns or-ed over the run; each detection is
        arity + 2 values (arguments, start, end).  Each run becomes one
        chunk."""
        try:
            self._take(generation, new_terms, runs, values, kinds, count, lits)
        except BaseException as e:        # Ctrl-C too: kept, the call stops, raised after it
            if self.error is None:
                self.error = e
            raise

    def _take(self, generation: int, new_terms: list, runs: list, values: int, kinds: int,
              count: int, lits: list) -> None:
        table = self.table
        table.update(generation, new_terms)
        terms = table.values
        inline = _literals(lits, terms) if lits else None
        raw = memoryview(_string_at(values, 8 * count))
        ints, floats = raw.cast("q"), raw.cast("d")
        per_value = None
        if any(k not in _ONE_KIND for ks in runs[3::4] for k in ks):
            per_value = _string_at(kinds, count)
        on_chunk = self.on_chunk
        off = 0
        for k in range(0, len(runs), 4):
            name, arity, n, col_kinds = runs[k:k + 4]
            end = off + n * (arity + 2)
            chunk = _chunk(name, arity, col_kinds, ints, floats, per_value, off, end, terms,
                           inline)
            off = end
            if on_chunk is None:
                self.chunks.append(chunk)
                continue
            on_chunk(chunk)


_string_at = ctypes.string_at
INT, FLOAT, TERM, INLINE = 1, 2, 4, 8
_ONE_KIND = frozenset((INT, FLOAT, TERM, INLINE))
#: An inline literal's functor, by its kind byte's upper bits.
_LIT_NAMES = ("n", "d", "dur")


def _literals(lits: list, terms: list) -> list[Compound]:
    """The inline literals of a buffer as encoded terms, in the order
    written: ``lits`` is ``[n, vals, dts, kinds, text, text_len]``, the
    addresses of ``n`` values (int64 or double), ``n`` datatype ids (into
    ``terms``), ``n`` kind bytes (the value's kind, 1 int or 2 float, plus
    4 for ``d/3`` or 8 for ``dur/3``, else ``n/3``) and the lexical forms,
    each ended by a newline (printable ASCII: the C sink sends no other
    inline).  Each becomes ``Compound(name, (value, datatype,
    PlString(lexical)))``, as the dictionary would have decoded it."""
    n, vals, dts, kinds, text, text_len = lits
    raw = memoryview(_string_at(vals, 8 * n))
    ks = _string_at(kinds, n)
    lexes = map(PlString, _string_at(text, text_len - 1).decode("ascii").split("\n"))
    datatypes = map(terms.__getitem__, memoryview(_string_at(dts, 8 * n)).cast("q").tolist())
    k0 = ks[0]
    if ks.count(k0) == n:                       # one kind (the usual case): in bulk
        values = (raw.cast("d") if k0 & 3 == FLOAT else raw.cast("q")).tolist()
        names: Any = repeat(_LIT_NAMES[k0 >> 2], n)
    else:
        ints, floats = raw.cast("q").tolist(), raw.cast("d").tolist()
        values = [f if k & 3 == FLOAT else i for i, f, k in zip(ints, floats, ks)]
        names = [_LIT_NAMES[k >> 2] for k in ks]
    # tuple.__new__ straight from map (no partial: about half the time per literal)
    return list(map(_tuple_new, repeat(Compound, n), zip(names, zip(values, datatypes, lexes))))


def _chunk(name: str, arity: int, col_kinds: list[int], ints: memoryview, floats: memoryview,
           per_value: bytes | None, off: int, end: int, terms: list,
           inline: list | None) -> Columns:
    """The columns of one run: its values are ``ints``/``floats`` (two
    views of the same buffer) from ``off`` to ``end``; a column of one
    kind is one strided slice, a column of mixed kinds (ints and floats,
    or numbers and terms) is read value by value with ``per_value``.
    ``inline``: the buffer's inline literals (kind 8 values index it)."""
    w = arity + 2
    raw: list[list[Any]] = []
    kinds: list[str] = []
    for j, kind in enumerate(col_kinds):
        sl = slice(off + j, end, w)
        if kind == INT:
            col, what = ints[sl].tolist(), VALUE
        elif kind == FLOAT:
            col, what = floats[sl].tolist(), VALUE
        elif kind == TERM:
            col, what = ints[sl].tolist(), ID
        elif kind == INLINE:
            col, what = list(map(inline.__getitem__, ints[sl].tolist())), VALUE  # type: ignore[union-attr]
        else:
            col = [i if k == INT else f if k == FLOAT else terms[i] if k == TERM
                   else inline[i]                                            # type: ignore[index]
                   for i, f, k in zip(ints[sl].tolist(), floats[sl].tolist(), per_value[sl])]
            what = VALUE
        if j >= arity and what == ID:       # the times are values, whatever they are
            col, what = list(map(terms.__getitem__, col)), VALUE
        raw.append(col)
        kinds.append(what)
    return Columns(name, arity, raw[:arity], kinds[:arity], raw[arity], raw[arity + 1], terms)


__all__ = ["Columns", "ColumnReceiver", "Detection", "TermTable"]
