"""Bounded memo tables for the terms that repeat in streams.

A stream repeats a few IRIs, datatypes and literals many times, so
remembering a term's parse, encoding or text pays on the hot path; but a
stream's terms are not bounded, so every table is emptied all at once
when it reaches its limit (no per-hit bookkeeping, unlike an LRU; a
stream's working set refills it within a batch).  A hit is a plain
``dict.get`` (C speed); only a miss runs Python.

    _TEXT = BoundedCache(1 << 16)
    txt = _TEXT.get(key)
    if txt is None:
        txt = _TEXT.put(key, compute(key))

    parse = Memo(parse_term).__getitem__      # parse(text): remembered
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["BoundedCache", "Memo"]


#: a text key longer than this is not remembered: a large literal is
#: rarely seen twice, and a cache entry would keep it (and what it was
#: made into) alive after its row is gone (issue 25, finding 11)
LONG_KEY = 4096


class BoundedCache(dict):
    """A dict forgotten all at once when it holds ``limit`` entries; long
    text keys are not kept (:data:`LONG_KEY`)."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: Any, value: Any) -> Any:
        """Remember ``value`` under ``key`` (emptying the table first when it
        is full); returns ``value``."""
        if type(key) is str and len(key) > LONG_KEY:
            return value
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


class Memo(BoundedCache):
    """A one-argument function's results by argument: ``memo[arg]`` calls
    ``fn(arg)`` the first time (arguments must be hashable)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Any], Any], limit: int = 1 << 18) -> None:
        super().__init__(limit)
        self.fn = fn

    def __missing__(self, arg: Any) -> Any:
        return self.put(arg, self.fn(arg))
