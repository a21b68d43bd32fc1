"""The data pipeline on Apache Spark: partitioned batch replay and
Structured Streaming with engine state in Spark's state store.

    from epsparql.spark import JobSpec, spark_session, run_batch
    spec = JobSpec.build([("q1", text)])
    result = run_batch(spark_session(), spec, ["prices.nt"], "out/")

See docs/SPARK.md.
"""
from .job import JobSpec, WHOLE, canonical_key, expand_paths
from .session import spark_session


def __getattr__(name: str):
    # the Spark-facing modules import pyspark lazily
    if name in ("run_batch", "plan_batch", "answers_frame", "collect_answers", "read_answers",
                "BatchResult"):
        from . import batch
        return getattr(batch, name)
    if name in ("start_stream", "run_stream", "read_answers_dir", "StreamStats"):
        from . import streaming
        return getattr(streaming, name)
    raise AttributeError(name)


__all__ = ["JobSpec", "WHOLE", "canonical_key", "expand_paths", "spark_session",
           "run_batch", "plan_batch", "answers_frame", "collect_answers", "read_answers",
           "BatchResult",
           "start_stream", "run_stream", "read_answers_dir", "StreamStats"]
