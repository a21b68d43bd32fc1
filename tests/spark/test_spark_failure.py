"""Failed Spark jobs said in one line (epsparql/spark/failure.py), no Spark needed.

The errors are those a job raises in the driver: Py4J's own exception
types, and Spark's messages as they arrive (the text of a task's
OutOfMemoryError with its stack, a worker's Python error).  The line must
say what ran out or failed, in which of epsparql's jobs, and what to set;
never a JVM stack frame or a Py4J object name.  The real out-of-memory
failure is in test_spark_memory.py.
"""
from __future__ import annotations

import re

from py4j.protocol import Py4JNetworkError

from epsparql.spark.failure import JobFailed, explain

PHASE = "the job that reads, routes, runs the engines and writes /o/answers.parquet"
OOM_IN_CACHE = """An error occurred while calling o125.unpersist.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 5.0 failed 1 \
times, most recent failure: Lost task 0.0 in stage 5.0 (TID 3) (127.0.0.1 executor driver): \
java.lang.OutOfMemoryError: Java heap space
\tat java.base/java.nio.HeapByteBuffer.<init>(HeapByteBuffer.java:64)
\tat org.apache.spark.sql.execution.columnar.ColumnBuilder$.ensureFreeSpace(ColumnBuilder.scala:177)
\tat org.apache.spark.sql.execution.columnar.CachedRDDBuilder$$anon$2.next(InMemoryRelation.scala:451)
\tat org.apache.spark.storage.memory.MemoryStore.putIterator(MemoryStore.scala:233)
"""
WORKER_ERROR = """An error occurred while calling o90.parquet.
: org.apache.spark.SparkException: Job aborted due to stage failure: ... \
org.apache.spark.api.python.PythonException: Traceback (most recent call last):
  File "/x/epsparql/spark/read.py", line 300, in _report
    raise err
epsparql.io.streams.StreamFormatError: /data/p.nt:51:1: expected an IRI, a blank node or a literal
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException
"""


def clean(line: str) -> None:
    assert "\n" not in line
    assert not re.search(r"\bo\d+\.|Py4J|py4j|An error occurred|\tat |\bat [a-z]+\.", line), line


def test_out_of_memory_names_the_stage_the_operator_and_the_setting():
    line = explain(JobFailed(PHASE, RuntimeError(OOM_IN_CACHE)), heap="1g")
    clean(line)
    assert line.startswith("out of memory (Java heap space) in " + PHASE)
    assert "caching the answers" in line and "--driver-memory (now 1g" in line
    cluster = explain(JobFailed(PHASE, RuntimeError(OOM_IN_CACHE)), local=False)
    clean(cluster)
    assert "spark.executor.memory" in cluster and "--driver-memory" not in cluster


def test_a_driver_jvm_that_died_of_it():
    gone = Py4JNetworkError("Answer from Java side is empty")
    line = explain(JobFailed(PHASE, gone, exit_code=52), heap="512m")
    clean(line)
    assert line.startswith("out of memory") and "--driver-memory (now 512m" in line
    line = explain(JobFailed(PHASE, gone, exit_code=None), heap="512m")
    clean(line)
    assert line.startswith("the Spark driver JVM exited in " + PHASE)


def test_a_workers_error_is_its_message():
    line = explain(JobFailed(PHASE, RuntimeError(WORKER_ERROR)))
    clean(line)
    assert line == "/data/p.nt:51:1: expected an IRI, a blank node or a literal"


def test_anything_else_keeps_its_first_meaningful_line():
    line = explain(RuntimeError("An error occurred while calling o7.count.\n: boom happened\n"
                                "\tat org.apache.spark.X"))
    clean(line)
    assert line == "boom happened"


def test_a_call_into_a_context_the_jvm_is_stopping_is_the_jvm_gone():
    """An OutOfMemoryError in a task makes Spark exit the driver JVM
    (status 52); a job call racing that exit fails with a
    NullPointerException of the stopped context instead of the OOM (seen
    in CI).  It reads as the JVM gone, so its exit status is waited for."""
    npe = ('An error occurred while calling o133.parquet.\n: java.lang.NullPointerException: '
           'Cannot invoke "org.apache.spark.scheduler.DAGScheduler.cleanupQueryJobs(long)" '
           'because the return value of "org.apache.spark.SparkContext.dagScheduler()" is null')
    line = explain(JobFailed(PHASE, RuntimeError(npe), None))
    assert line.startswith("the Spark driver JVM exited in the job that reads"), line
    assert "NullPointerException" not in line and "o133" not in line
    line = explain(JobFailed(PHASE, RuntimeError(npe), 52))
    assert line.startswith("out of memory (Java heap space) in the job that reads"), line
