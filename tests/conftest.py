"""Shared fixtures for the tests of the Prolog event-processing core."""
from __future__ import annotations

import math
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:          # tests import core_reference
    sys.path.insert(0, str(TESTS))

from epsparql.core import CoreEngine, Compound  # noqa: E402

# The package's modules are compiled once and kept (__pycache__, ignored by
# git), not again by each of the suite's hundreds of `epsparql`, worker and
# script subprocesses: with PYTHONDONTWRITEBYTECODE set (this machine's
# shells have it) each compiled ~100 modules, ~0.15 s of CPU per start.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


#: The longest test files, in that order (serial CPU and wall seconds,
#: EPSPARQL_FILE_TIMES, 2026-11-29: test_spark.py with the two files that
#: share its SparkSession ~77 s, test_spark_memory 55, test_long_queries 35,
#: test_spark_cluster 33, the ETALIS examples 30 of wall (they sleep), then
#: 25 down to 14), then every other file by its number of tests:
#: scripts/test.sh runs xdist with --no-loadscope-reorder, so files are
#: handed out in this order and the long ones do not start last and leave
#: one worker running alone at the end.  xdist gives each worker two at
#: first (the 1st and 4th, the 2nd and 5th, ...): the ETALIS examples, which
#: mostly sleep, go with the SparkSession group.  Order only.
LONGEST_FIRST = (
    "spark/test_spark.py", "spark/test_spark_memory.py", "engine/test_long_queries.py",
    "etalis/test_etalis_examples.py", "spark/test_spark_cluster.py",
    "engine/test_sparql_differential.py", "explain/test_explain_deep.py",
    "io/test_stream_batches.py", "dialects/test_dialect_cli_runs.py",
    "engine/test_reliability.py", "cli/test_cli.py", "service/test_serve_mqtt.py",
    "cli/test_cli_stops.py", "spark/test_jvm_archive.py",
)


def pytest_configure(config):
    """``EPSPARQL_FILE_TIMES=out.tsv`` records each file's wall and CPU time
    (tests/file_times.py)."""
    out = os.environ.get("EPSPARQL_FILE_TIMES")
    if out:
        from file_times import FileTimes
        config.pluginmanager.register(FileTimes(Path(out)), "epsparql_file_times")


#: The files whose tests use this process's SparkSession (test_spark.py's
#: ``spark`` fixture; getOrCreate, never stopped): xdist hands them out as
#: one unit, so that one worker starts one driver JVM for all three.
SPARK_SESSION_FILES = ("spark/test_spark.py", "spark/test_spark_windowed.py",
                       "spark/test_spark_dialects.py")


@pytest.hookimpl(tryfirst=True, optionalhook=True)     # optional: xdist may be absent
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (scripts/test.sh) with :data:`SPARK_SESSION_FILES`
    one scope (xdist's own loadgroup does not group on pytest 9)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling
    together = {f"tests/{name}" for name in SPARK_SESSION_FILES}

    class FilesAndSpark(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return "tests/spark (one SparkSession)" if scope in together else scope

    return FilesAndSpark(config, log)


def pytest_collection_modifyitems(session, config, items):
    rank = {f"tests/{name}": i for i, name in enumerate(LONGEST_FIRST)}
    files = [item.nodeid.split("::")[0] for item in items]
    count = Counter(files)
    order = {id(item): (rank.get(f, len(rank)), -count[f], f) for item, f in zip(items, files)}
    items.sort(key=lambda item: order[id(item)])


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
