"""A SparkSession set up for epsparql: workers run this interpreter, logs quiet.

``local[*]`` is the embedded default; any master URL works unchanged.  The
Python workers must import the installed package (and janus-swi) from
the same interpreter as the driver, hence ``PYSPARK_PYTHON``; and janus-swi
must find the SWI-Prolog home it was built for, hence ``SWI_HOME_DIR`` set
in the driver (workers inherit it) and sent to executors.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def _log4j_file() -> str:
    path = Path(tempfile.gettempdir()) / "epsparql-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(_LOG4J)
        tmp.replace(path)
    return str(path)


def spark_session(master: str = "local[*]", app: str = "epsparql",
                  conf: dict[str, Any] | None = None):
    """Get (or create) a SparkSession for epsparql jobs.

    ``conf`` adds or overrides Spark settings.  Shuffle partitions default
    to the number of cores of a local master (Spark's 200 would make 200
    tiny engine groups)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from ..core.swipl import configure_environment
    swipl_home = configure_environment()
    from pyspark.sql import SparkSession
    log4j = _log4j_file()
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j}"
    cores = os.cpu_count() or 2
    settings: dict[str, Any] = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.extraJavaOptions": java_opts,
        "spark.executor.extraJavaOptions": java_opts,
        "spark.sql.shuffle.partitions": str(cores),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.python.worker.reuse": "true",
        "spark.sql.session.timeZone": "UTC",
        # pandas warns inside pyspark's own worker code about all-None columns
        "spark.executorEnv.PYTHONWARNINGS": "ignore::FutureWarning",
        "spark.executorEnv.SWI_HOME_DIR": swipl_home,
    }
    settings.update(conf or {})
    b = SparkSession.builder.master(master).appName(app)
    for k, v in settings.items():
        b = b.config(k, str(v))
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
