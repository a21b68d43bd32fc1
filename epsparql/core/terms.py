"""Prolog terms as Python values, and their exact text and JSON encodings.

The bridge never pastes data into Prolog source: events are written as the
text of a Prolog list in which every atom is quoted and escaped, read on the
Prolog side with ``read_term`` (data, never called).  Detections come back
as JSON (see ``prolog/bridge_python.pl``) and are decoded here.

Mapping: ``str`` <-> atom, :class:`PlString` <-> string, ``int``/``float``
<-> numbers, ``list`` <-> list, :class:`Compound` <-> compound term,
``None`` <-> unbound variable (output only).
"""
from __future__ import annotations

import json
import math
import numbers
import re
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from operator import le as _le
from typing import Any, Iterable, NamedTuple, Sequence


_tuple_new = tuple.__new__


class PlString(str):
    """A Prolog string (as opposed to an atom, which is a plain ``str``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"PlString({str.__repr__(self)})"


class Raw(str):
    """Prolog text written verbatim into a batch.

    Only for text this package generated itself from data through
    :func:`to_prolog` (quoted and escaped), e.g. cached encodings of RDF
    terms; never for user input."""

    __slots__ = ()


class Compound(NamedTuple):
    """A compound term ``name(args...)``."""

    name: str
    args: tuple

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(map(repr, self.args))})"


def term(name: str, *args: Any) -> Compound | str:
    """Build ``name(args...)``; with no arguments, the atom ``name``."""
    return Compound(name, tuple(args)) if args else name


_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\a": "\\a",
            "\b": "\\b", "\f": "\\f", "\v": "\\v", "\0": "\\x0\\"}
_NEEDS_ESCAPE = re.compile(r"[\\'\"\x00-\x1f\x7f]")


def _escape(text: str, quote: str) -> str:
    if not _NEEDS_ESCAPE.search(text):
        return text

    def one(m: re.Match) -> str:
        c = m.group(0)
        if c == quote:
            return "\\" + c
        if c in _ESCAPES:
            return _ESCAPES[c]
        if c in "'\"":
            return c
        return "\\x%x\\" % ord(c)

    return _NEEDS_ESCAPE.sub(one, text)


@lru_cache(maxsize=1 << 16)
def quote_atom(text: str) -> str:
    """The atom ``text`` as quoted Prolog source (cached: atoms repeat)."""
    return "'" + _escape(text, "'") + "'"


def write_term(value: Any, out: list[str]) -> None:
    """Append the Prolog text of ``value`` to ``out``."""
    t = type(value)
    if t is str:
        out.append(quote_atom(value))
    elif t is Raw:
        out.append(value)
    elif t is PlString:
        out.append('"' + _escape(value, '"') + '"')
    elif t is int:
        out.append(str(value))
    elif t is float:
        if value - value != 0.0:  # inf or nan
            raise ValueError(f"non-finite number {value!r} cannot be an event argument")
        out.append(repr(value))
    elif t is Compound:
        args = value.args
        if not args:
            out.append(quote_atom(value.name) + "()")
            return
        out.append(quote_atom(value.name) + "(")
        first = True
        for a in args:
            if not first:
                out.append(",")
            first = False
            write_term(a, out)
        out.append(")")
    elif isinstance(value, PlString):
        out.append('"' + _escape(value, '"') + '"')
    elif isinstance(value, bool):
        raise TypeError("booleans have no Prolog term; use the atoms 'true'/'false'")
    elif isinstance(value, str):
        out.append(quote_atom(str(value)))
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        write_term(float(value), out)
    elif isinstance(value, Compound):
        write_term(_tuple_new(Compound, (str(value.name), tuple(value.args))), out)
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, a in enumerate(value):
            if i:
                out.append(",")
            write_term(a, out)
        out.append("]")
    else:
        raise TypeError(f"cannot pass {type(value).__name__} {value!r} to Prolog")


def to_prolog(value: Any) -> str:
    """The Prolog text of a single term."""
    out: list[str] = []
    write_term(value, out)
    return "".join(out)


def _check_time(t: Any, what: str) -> float | int:
    """A time as a plain int or float (numpy and other Real types converted)."""
    if isinstance(t, bool) or not isinstance(t, numbers.Real):
        raise TypeError(f"{what} must be a number of seconds, got {t!r}")
    t = int(t) if isinstance(t, numbers.Integral) else float(t)
    if isinstance(t, float) and not math.isfinite(t):
        raise ValueError(f"{what} must be finite, got {t!r}")
    return t


def batch_text(events: Iterable[Sequence[Any]]) -> tuple[str, int]:
    """The text of a batch ``[e(Event,T1,T2), ...]`` and its length.

    Each item is ``(event, start)`` or ``(event, start, end)``.  Validates
    every item before anything is sent, so a bad item rejects the whole
    batch with a message naming its position.
    """
    out: list[str] = ["["]
    n = 0
    for item in events:
        try:
            if len(item) == 2:
                ev, t1 = item
                t2 = t1
            elif len(item) == 3:
                ev, t1, t2 = item
                if t2 is None:
                    t2 = t1
            else:
                raise ValueError("expected (event, start) or (event, start, end)")
            tt1, tt2 = type(t1), type(t2)
            if not ((tt1 is int or tt1 is float) and (tt2 is int or tt2 is float)):
                t1 = _check_time(t1, "start")
                t2 = _check_time(t2, "end")
            elif t1 - t1 != 0 or t2 - t2 != 0:
                raise ValueError(f"times must be finite, got {t1!r}, {t2!r}")
            if t2 < t1:
                raise ValueError(f"end {t2!r} is before start {t1!r}")
            te = type(ev)
            if not (te is Compound or te is str):
                if not isinstance(ev, (str, Compound)) or isinstance(ev, PlString):
                    raise TypeError(f"an event is an atom (str) or a Compound, got {ev!r}")
            out.append(",e(" if n else "e(")
            write_term(ev, out)
            out.append(f",{t1!r},{t2!r})")
        except (TypeError, ValueError) as e:
            raise type(e)(f"batch item {n}: {e}") from None
        n += 1
    out.append("]")
    return "".join(out), n


_ROW_ARG_TYPES = frozenset({str, int, float})
_first, _second, _third = itemgetter(0), itemgetter(1), itemgetter(2)
_TIME_TYPES = frozenset({int, float})


def batch_rows(events: Sequence[Sequence[Any]]) -> list[tuple] | None:
    """The batch as rows ``(name, args, t1, t2)`` that janus passes to
    Prolog as data (``py_columns/5``, op ``push_rows``), when it is plain:
    every item ``(event, start)`` or every item ``(event, start, end)``
    (``end`` not None), ``int``/``float`` times with ``end >= start``, and
    every event a :class:`Compound` with an ASCII name and one or more
    arguments each an ASCII ``str``, an ``int`` or a finite ``float``.
    Anything else (or a bad item) gives None and the batch takes the text
    path (:func:`batch_text`), which writes any term and names a bad item.

    Why: writing a batch's text and Prolog reading it cost about 1.8 µs
    per event; these checks, done a column at a time, and janus converting
    the rows well under half that.  ``args`` is the Compound's tuple
    (janus makes it a ``-/N`` term); janus turns ``str`` into atoms, as
    the text path quotes them.  Only ASCII text is taken: janus rejects
    some ``str`` that are not UTF-8 (lone surrogates) in a way the text
    path reports as a ValueError."""
    try:
        lengths = set(map(len, events))
        evs = list(map(_first, events))
        t1s = list(map(_second, events))
        if lengths == {2}:
            t2s = t1s
        elif lengths == {3}:
            t2s = list(map(_third, events))
            if None in t2s or not all(map(_le, t1s, t2s)):
                return None
        else:
            return None
        if set(map(type, evs)) != {Compound} or not set(map(type, t1s)) <= _TIME_TYPES \
                or not set(map(type, t2s)) <= _TIME_TYPES \
                or not math.isfinite(sum(t1s)) or not math.isfinite(sum(t2s)):
            return None
        names = list(map(_first, evs))
        argss = list(map(_second, evs))
        if set(map(type, names)) != {str} or not "".join(names).isascii() \
                or set(map(type, argss)) != {tuple} or 0 in set(map(len, argss)):
            return None
        flat = list(chain.from_iterable(argss))
        kinds = set(map(type, flat))
        if not kinds <= _ROW_ARG_TYPES:
            return None
        if str in kinds and not "".join([a for a in flat if type(a) is str]).isascii():
            return None
        if float in kinds and not math.isfinite(math.fsum([a for a in flat if type(a) is float])):
            return None
    except Exception:       # not sequences, sums too large...: the text path says what
        return None
    return list(zip(names, argss, t1s, t2s))


def _object_hook(d: dict) -> Any:
    f = d.get("f")
    if f is not None:
        return _tuple_new(Compound, (f, tuple(d["a"])))
    if "s" in d and len(d) == 1:
        return PlString(d["s"])
    if "n" in d and len(d) == 1:
        return float(d["n"])
    return d


def from_json(text: str) -> Any:
    """Decode the bridge's JSON encoding of terms."""
    return json.loads(text, object_hook=_object_hook)
