"""Answers to subscribers, without a slow one holding anyone up.

The engine room calls :meth:`Hub.publish` (through the event loop) with
each run of a deployment's answers.  Every subscriber has a queue of at
most ``bound`` answers; one that falls that far behind is dropped (told
so, then disconnected) rather than making the engines wait or the
service's memory grow.  A subscriber that comes back asks for the answers
after the last number it saw (SSE's ``Last-Event-ID``), read from the
deployment's recent answers or its answer file.
"""
from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["Hub", "Subscriber", "DROPPED", "CLOSING"]

#: put in a subscriber's queue when it is dropped
DROPPED = (-1, "")
#: put in every subscriber's queue when the service shuts down
CLOSING = (-2, "")


class Subscriber:
    """One connection reading a deployment's answers."""

    def __init__(self, name: str, bound: int) -> None:
        self.name = name
        self.bound = bound
        self.queue: asyncio.Queue[tuple[int, str]] = asyncio.Queue()
        self.dropped = False
        self.last = 0                    # the number of the last answer queued

    def offer(self, first: int, lines: list[str]) -> bool:
        """Queue answers; False (and dropped) if that would pass the bound."""
        if self.dropped:
            return False
        if self.queue.qsize() + len(lines) > self.bound:
            self.dropped = True
            self.queue.put_nowait(DROPPED)
            return False
        for i, line in enumerate(lines):
            n = first + i
            if n > self.last:
                self.queue.put_nowait((n, line))
                self.last = n
        return True


class Hub:
    """The subscribers of every deployment (used in the event loop only)."""

    def __init__(self) -> None:
        self.subs: dict[str, set[Subscriber]] = {}
        self.dropped = 0                 # subscribers dropped for being slow
        self.closing = False             # the service shuts down: no new subscribers

    def close_all(self) -> None:
        """End every subscription (the service shuts down): a server waits
        for open connections before it stops."""
        self.closing = True
        for subs in list(self.subs.values()):
            for s in subs:
                s.queue.put_nowait(CLOSING)
        self.subs.clear()

    def subscribe(self, name: str, bound: int) -> Subscriber:
        s = Subscriber(name, bound)
        self.subs.setdefault(name, set()).add(s)
        return s

    def unsubscribe(self, s: Subscriber) -> None:
        subs = self.subs.get(s.name)
        if subs is not None:
            subs.discard(s)
            if not subs:
                del self.subs[s.name]

    def publish(self, name: str, first: int, lines: list[str]) -> None:
        for s in list(self.subs.get(name, ())):
            if not s.offer(first, lines):
                self.dropped += 1
                self.unsubscribe(s)

    def count(self, name: str | None = None) -> int:
        if name is not None:
            return len(self.subs.get(name, ()))
        return sum(map(len, self.subs.values()))

    def listener(self, loop: asyncio.AbstractEventLoop) -> Any:
        """A function the engine room calls (from its thread) with answers."""
        def hand(name: str, first: int, lines: list[str]) -> None:
            if name in self.subs:
                loop.call_soon_threadsafe(self.publish, name, first, lines)
        return hand
