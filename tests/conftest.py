"""Shared fixtures for the tests of the Prolog event-processing core."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:          # tests import core_reference
    sys.path.insert(0, str(TESTS))

from epsparql.core import CoreEngine, Compound  # noqa: E402


@pytest.fixture
def engine():
    """A fresh engine (default options), destroyed after the test."""
    eng = CoreEngine()
    yield eng
    eng.close()


@pytest.fixture
def make_engine():
    """Factory for engines with options; every engine made is closed after."""
    made: list[CoreEngine] = []

    def make(**options) -> CoreEngine:
        eng = CoreEngine(**options)
        made.append(eng)
        return eng

    yield make
    for eng in made:
        eng.close()


@pytest.fixture
def limits():
    """Set the answers' buffer and term-dictionary bounds for one test
    (``limits(rows, terms)``, bridge_columns:columns_set_limits/2), then
    the defaults back."""
    from epsparql.core.runtime import runtime
    rt = runtime()

    def set_(rows: int, terms: int) -> None:
        rt.query_once(f"bridge_columns:columns_set_limits({rows}, {terms})")
    yield set_
    set_(4096, 1048576)


def strict_form(x):
    """A comparable form of equal types all the way down: 1 is not 1.0, a
    str not a PlString, -0.0 not 0.0 (Python's == takes each pair as
    equal)."""
    if isinstance(x, float):
        return ("float", math.copysign(1, x), x)
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(strict_form(y) for y in x))
    return (type(x).__name__, x)


def same_strict(a, b) -> bool:
    """Equal, and of equal types all the way down (:func:`strict_form`)."""
    return strict_form(a) == strict_form(b)


def as_tuple(event):
    """A detected head as (name, args tuple); an atom head has no args."""
    if isinstance(event, Compound):
        return (event.name, tuple(event.args))
    return (event, ())


def dets(detections):
    """Detections as a sorted list of (head, start, end) for comparisons."""
    return sorted(((as_tuple(d.event), d.start, d.end) for d in detections), key=repr)
