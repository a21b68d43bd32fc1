"""Recursion without Python's call stack, for walks over deep query trees.

A chain of 2,000 OPTIONALs, BINDs or additions is a tree 2,000 levels deep,
and a plain recursive walk over it stops at Python's recursion limit
(about 1,000 frames).  A walker written as a generator that *yields* each
recursive call instead of making it runs here on an explicit stack, so its
depth is bounded by memory only::

    def size(node):
        if isinstance(node, Leaf):
            return 1
        left = yield size(node.left)      # a sub-call: its result comes back
        right = yield size(node.right)
        return left + right + 1

    run(size(tree))

An exception raised by a sub-call is thrown into its caller at the
``yield``, so ``try``/``except`` around a sub-call works as usual.  This
module imports nothing of the project (ground floor).
"""
from __future__ import annotations

from types import GeneratorType
from typing import Any, Generator, TypeVar

__all__ = ["run", "Walk"]

T = TypeVar("T")

#: A walker: a generator that yields sub-walkers and returns a T.
Walk = Generator["Walk[Any]", Any, T]


def run(walk: "Walk[T]") -> T:
    """Drive ``walk`` and every sub-walker it yields to completion; its result."""
    stack: list[GeneratorType] = [walk]
    value: Any = None
    error: BaseException | None = None
    while True:
        top = stack[-1]
        try:
            if error is not None:
                pending, error = error, None
                sub = top.throw(pending)
            else:
                sub = top.send(value)
        except StopIteration as done:
            stack.pop()
            if not stack:
                return done.value
            value = done.value
            continue
        except BaseException as exc:  # noqa: BLE001 -- handed to the caller
            stack.pop()
            if not stack:
                raise
            error = exc
            continue
        if not isinstance(sub, GeneratorType):     # a bug in the walker: tell it
            error = TypeError(f"a walker yielded {type(sub).__name__}, not a walker")
            continue
        stack.append(sub)
        value = None
