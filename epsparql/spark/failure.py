"""A failed Spark job said in one line: what ran out, where, and what to set.

A worker's Python exception, a JVM ``OutOfMemoryError`` or a driver JVM
that died arrive in the driver as Py4J errors wrapping pages of JVM stack
traces ("An error occurred while calling o125.unpersist").
:func:`explain` reads them and answers with one line for the user: the
epsparql stage that was running (the job description set around each
action, and the operators in the failing task's stack), and for memory
the setting that gives more (``--driver-memory`` in local mode, where the
executors live in the driver JVM; ``spark.executor.memory`` on a
cluster).  No Py4J object name survives.
"""
from __future__ import annotations

import re
from typing import Any

#: Stack frames that say which operator of the plan was running, in the
#: words of docs/SPARK.md ("the read stage", "the engine stage", ...).
_OPERATORS = [
    ("InMemoryRelation|CachedBatch|MemoryStore|DiskStore", "caching the answers"),
    ("ParquetOutputWriter|parquet\\.hadoop|parquet\\.column", "writing Parquet"),
    ("TextOutputWriter|FileFormatWriter|FileFormatDataWriter", "writing the answer files"),
    ("RangePartitioner|SamplingUtils", "sampling the answers for the time order"),
    ("UnsafeExternalSorter|UnsafeInMemorySorter|SortExec|UnsafeExternalRowSorter",
     "sorting rows within a partition"),
    ("ShuffleExternalSorter|SortShuffleWriter|BypassMergeSortShuffleWriter|ShuffleWriter|"
     "ShuffleBlockFetcher|ShuffledRowRDD", "shuffling rows between stages"),
    ("ArrowPythonRunner|PythonArrowOutput|ArrowConverters|MapInBatchExec|ArrowEvalPython|"
     "PythonRunner", "passing Arrow batches to or from the Python workers"),
    ("collect|executeCollect|TorrentBroadcast", "collecting results in the driver"),
]

_PY4J = re.compile(r"An error occurred while calling [a-z]?\d+\.\w+\.?\s*")
_OBJECT = re.compile(r"\bo\d+\.")


class JobFailed(RuntimeError):
    """A Spark job of epsparql failed: ``phase`` says which of its jobs ran."""

    def __init__(self, phase: str, cause: BaseException, exit_code: int | None = None) -> None:
        super().__init__(f"{phase}: {error_text(cause)}")
        self.phase = phase
        self.cause = cause
        #: the driver JVM's exit status when it died (52: out of memory)
        self.exit_code = exit_code


def jvm_exit_code(spark: Any, cause: BaseException | None = None) -> int | None:
    """The driver JVM's exit status if it has exited (local mode, launched
    by this process), else None.  ``cause``: the error that stopped the
    job; when it says the JVM is gone or out of memory, the JVM is given a
    few seconds to finish exiting (an OutOfMemoryError in a task makes
    Spark exit it with status 52)."""
    try:
        from pyspark import SparkContext
        proc = getattr(SparkContext._gateway, "proc", None)
    except Exception:                                   # no gateway at all
        return None
    if proc is None:
        return None
    if cause is not None and proc.poll() is None:
        text = _text(cause)
        if "OutOfMemoryError" in text or _jvm_gone(cause, text):
            try:
                return proc.wait(timeout=5)
            except Exception:                           # still running
                return None
    return proc.poll()


def explain(e: BaseException, *, local: bool = True, heap: str | None = None) -> str:
    """One line for the user about a failed job (no stack trace, no Py4J
    object names); ``heap``: the driver heap it ran with."""
    phase = e.phase if isinstance(e, JobFailed) else None
    exit_code = e.exit_code if isinstance(e, JobFailed) else None
    cause = e.cause if isinstance(e, JobFailed) else e
    text = _text(cause)
    where = f" in {phase}" if phase else ""
    more = (f"give the driver JVM more heap with --driver-memory (now {heap or 'the default'}; "
            "in local mode the executors run inside it)" if local else
            "give the executors more memory (spark.executor.memory, "
            "spark.executor.memoryOverhead for the Python workers)")
    if "OutOfMemoryError" in text or exit_code == 52:
        op = _operator(text)
        kind = _first(r"java\.lang\.OutOfMemoryError: ([^\n]+)", text) or "Java heap space"
        return (f"out of memory ({kind}){where}" + (f", {op}" if op else "") + f"; {more}, "
                "or use more partitions (--partitions)")
    if exit_code is not None or _jvm_gone(cause, text):
        status = f" (exit status {exit_code})" if exit_code is not None else ""
        return (f"the Spark driver JVM exited{status}{where}, most likely out of memory; "
                f"{more}")
    if "Python worker exited unexpectedly" in text or "worker crashed" in text.lower():
        return (f"a Python worker died{where} (killed for memory, or crashed); give the "
                "machine's Python workers room: fewer partitions at a time (--master "
                "local[N]) or more memory")
    said = _python_error(text)
    if said:
        return said[:500]
    return f"{_clean(text)[:500]}{where}"


def _python_error(text: str) -> str | None:
    """The message of a worker's Python exception: the last line of the
    traceback Spark passes on (``module.SomeError: message``)."""
    tb = text.rfind("Traceback (most recent call last):")
    if tb < 0:
        return None
    found = None
    for line in text[tb:].splitlines()[1:]:
        m = re.match(r"(?:[A-Za-z_][\w.]*\.)?([A-Za-z_]\w*(?:Error|Exception|Exit)): (.+)", line)
        if m:
            found = m.group(2).strip()
        elif found and not line.startswith((" ", "\t")):
            break
    return found


def error_text(e: BaseException) -> str:
    """``str(e)``, safely: a Py4J error asks the JVM for its text, and a JVM
    that has died answers that with another error (Connection refused)."""
    try:
        return str(e)
    except Exception as again:
        said = getattr(e, "errmsg", "") or type(e).__name__
        return f"{said}\n{type(again).__name__}: {again}"


def _text(e: BaseException) -> str:
    return error_text(e)


def _jvm_gone(e: BaseException, text: str) -> bool:
    names = {type(x).__name__ for x in (e, e.__cause__, e.__context__) if x is not None}
    names |= set(re.findall(r"\b(\w+Error): ", text))
    return bool(names & {"Py4JNetworkError", "ConnectionRefusedError", "ConnectionResetError",
                         "BrokenPipeError"}) or any(
        words in text for words in ("Answer from Java side is empty", "Connection refused",
                                    "SparkContext was shut down", "SparkContext has been shutdown",
                                    # a call into a context that the JVM's exit is stopping
                                    'SparkContext.dagScheduler()" is null'))


def _operator(text: str) -> str | None:
    frames = text[text.find("OutOfMemoryError"):]
    best = None
    for pattern, words in _OPERATORS:
        m = re.search(pattern, frames)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), words)
    return best[1] if best else None


def _first(pattern: str, text: str) -> str | None:
    m = re.search(pattern, text)
    return m.group(1).strip() if m else None


def _clean(text: str) -> str:
    """The first meaningful line of a Spark error, Py4J names removed."""
    for line in text.splitlines():
        line = _PY4J.sub("", line).strip(" :.")
        if line and not line.startswith(("at ", "Traceback", "File ")) and not _OBJECT.search(line):
            return line
    return "the Spark job failed"
