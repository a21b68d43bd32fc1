"""Deprecated: the stream dialects' first entry point, now part of Engine.

``WindowEngine`` was the dialects' own entry before they joined
:class:`epsparql.Engine`; it stays as a thin alias so code written
against it runs:

    Engine().register(text)                     # the dialect is detected
    engine.push(s, p, o, t, stream=IRI)         # was WindowEngine.push
    engine.push_many(rows)                      # rows (s, p, o, start, end, stream)
    engine.window_stats()                       # was WindowEngine.stats()
"""
from __future__ import annotations

import warnings
from typing import Any, Iterable, Sequence

from .query_engine import Engine
from .window_runtime import DEFAULT_STREAM, UnboundedWindowWarning, WindowQuery

__all__ = ["WindowEngine", "WindowQuery", "DEFAULT_STREAM", "UnboundedWindowWarning"]


class WindowEngine(Engine):
    """Deprecated alias of :class:`epsparql.Engine` (``incremental`` is
    ``Engine(incremental_windows=...)``)."""

    def __init__(self, *, incremental: bool = True, **options: Any) -> None:
        warnings.warn("epsparql.windowed.WindowEngine is deprecated: use epsparql.Engine, "
                      "which registers the stream dialects' queries and takes "
                      "push(..., stream=IRI)", DeprecationWarning, stacklevel=2)
        super().__init__(incremental_windows=incremental, **options)

    @property
    def engine(self) -> Engine:
        """The engine itself (WindowEngine used to wrap one)."""
        return self

    def push_quads(self, rows: Iterable[Sequence[Any]]) -> None:
        """Rows ``(s, p, o, stream, start[, end])``: Engine.push_many takes
        ``(s, p, o, start, end, stream)``."""
        self.push_many((r[0], r[1], r[2], r[4], r[5] if len(r) > 5 else None, r[3]) for r in rows)

    def stats(self) -> dict[str, int]:
        """:meth:`Engine.window_stats`."""
        return self.window_stats()
