"""A SparkSession set up for epsparql: workers run this interpreter, logs quiet,
the driver heap sized from the machine.

``local[*]`` is the embedded default; any master URL works unchanged.  The
Python workers must import the installed package (and janus-swi) from
the same interpreter as the driver, hence ``PYSPARK_PYTHON``; and janus-swi
must find the SWI-Prolog home it was built for, hence ``SWI_HOME_DIR`` set
in the driver (workers inherit it) and sent to executors.

Memory: the driver JVM's heap is fixed when it starts (Spark's default is
1 GB).  In local mode that JVM also runs the executors: their shuffle,
sort and write buffers live in it, so :func:`driver_memory` sizes it from
the machine's RAM unless the user said otherwise (``spark.driver.memory``
in ``conf``, ``epsparql spark --driver-memory``, or Spark's own
``SPARK_DRIVER_MEMORY``).  On a cluster the executors' memory is the
cluster's setting (``spark.executor.memory``; docs/SPARK.md).

Start-up: a local driver maps the classes an earlier one archived
(:mod:`epsparql.spark.jvm_archive`), about half of its start-up CPU.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from .jvm_archive import archive_options, note_class_path

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = error
"""
#: Spark's own loggers are given a level of their own: otherwise Spark, which
#: takes a PySpark driver for a shell, prints how to change the level.


def _log4j_file() -> str:
    path = Path(tempfile.gettempdir()) / "epsparql-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(_LOG4J)
        tmp.replace(path)
    return str(path)


def physical_memory() -> int:
    """Bytes of RAM of this machine."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def driver_memory(ram: int | None = None) -> str:
    """The heap for a local driver JVM: a quarter of the RAM (the Python
    workers, one engine each, and the page cache need the rest), at least
    1 GB, at most 32 GB (compressed object pointers end there)."""
    ram = physical_memory() if ram is None else ram
    mb = min(32 << 10, max(1 << 10, ram // 4 >> 20))
    return f"{mb // 1024}g" if mb % 1024 == 0 else f"{mb}m"


def _jvm_started() -> bool:
    """Is there a driver JVM already (a session of this process, or a
    driver started by spark-submit)?  Its heap can no longer change."""
    from pyspark import SparkContext
    return SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ


def spark_session(master: str = "local[*]", app: str = "epsparql",
                  conf: dict[str, Any] | None = None, *, light_jvm: bool = False):
    """Get (or create) a SparkSession for epsparql jobs.

    ``conf`` adds or overrides Spark settings.  Shuffle partitions default
    to the number of cores of a local master (Spark's 200 would make 200
    tiny engine groups); a local driver's heap is :func:`driver_memory`
    unless set.  ``light_jvm``: the job leaves the JVM little work per
    answer (JSON lines alone, handed over in blocks): a local driver then
    compiles with the client JIT only (C1), which halves the JVM's start-up
    CPU; Parquet's per-answer encoding wants the optimising JIT (C2)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from ..core.swipl import configure_environment
    swipl_home = configure_environment()
    from pyspark.sql import SparkSession
    log4j = _log4j_file()
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j}"
    local = master.startswith("local")
    # a local driver starts from the classes an earlier one archived
    archive, writes = archive_options() if local and not _jvm_started() else ("", None)
    cores = os.cpu_count() or 2
    settings: dict[str, Any] = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        # a local driver JVM also runs the job: the throughput collector, a
        # batch job's, spends less than G1; the client JIT alone (C1) saves
        # ~4 of ~22 JVM CPU seconds on a million answers written as JSON
        # lines and costs ~14 more of ~32 when they are written as Parquet
        # (bench/README.md, "bench/spark_cli.py"): only when asked for
        "spark.driver.extraJavaOptions": java_opts + (
            " -XX:+UseParallelGC" + (" -XX:TieredStopAtLevel=1" if light_jvm else "")
            + (" " + archive if archive else "") if local else ""),
        "spark.executor.extraJavaOptions": java_opts,
        "spark.sql.shuffle.partitions": str(cores),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.python.worker.reuse": "true",
        "spark.sql.session.timeZone": "UTC",
        # blocks written to disk (answers persisted for two outputs) with Kryo:
        # Java serialization keeps every object of a stream (100 cached
        # batches, ~4 MB each) until it resets, and ran a 512 MB heap out
        "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
        # pandas warns inside pyspark's own worker code about all-None columns
        "spark.executorEnv.PYTHONWARNINGS": "ignore::FutureWarning",
        "spark.executorEnv.SWI_HOME_DIR": swipl_home,
    }
    conf = dict(conf or {})
    if local and "spark.driver.memory" not in conf \
            and not os.environ.get("SPARK_DRIVER_MEMORY") and not _jvm_started():
        settings["spark.driver.memory"] = driver_memory()
    settings.update(conf)
    b = SparkSession.builder.master(master).appName(app)
    for k, v in settings.items():
        b = b.config(k, str(v))
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if writes is not None and "spark.driver.extraJavaOptions" not in conf:
        note_class_path(writes, spark)
    return spark
