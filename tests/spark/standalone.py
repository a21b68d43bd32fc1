"""A Spark standalone cluster on this machine, for the cluster test and
bench/spark_cluster.py.

A master and two workers (one core, 2 GB each) are started from PySpark's
own scripts (``sbin/spark-daemon.sh`` of the installed package: what a
full Spark distribution's ``start-master.sh`` and ``start-worker.sh``
run), on 127.0.0.1, port 7077 or a free one; the all-pairs replay is
submitted with PySpark's ``spark-submit``.  The cluster is stopped
afterwards, also when the caller fails.  docs/SPARK.md shows the same
commands for a cluster of one's own.
"""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


def spark_home() -> Path:
    import pyspark
    return Path(pyspark.__file__).resolve().parent


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, what: str, logs: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    text = "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(logs.glob("*.out")))
    raise AssertionError(f"timed out waiting for {what}\n{text}")


def log_text(logs: Path, cls: str) -> str:
    return "".join(p.read_text() for p in logs.glob(f"*{cls}*.out"))


#: JVM options for JVMs that live a few seconds (the test's daemons, driver
#: and executors): the client JIT alone (C1) and the serial collector spend
#: far less CPU starting than C2 and the parallel collector's threads.
SHORT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@contextlib.contextmanager
def standalone_cluster(tmp_path: Path, short_lived: bool = False) -> Iterator[tuple[str, dict]]:
    """A standalone master and two workers (one core, 2 GB each) on
    127.0.0.1; yields the master URL and the environment the daemons ran
    with.  ``short_lived``: every JVM (daemons, and the jobs :func:`submit`
    starts with that environment) runs with :data:`SHORT_JVM` (a test's few
    seconds; not a benchmark's)."""
    home = spark_home()
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOG_DIR=str(tmp_path / "logs"),
               SPARK_PID_DIR=str(tmp_path / "pids"), SPARK_IDENT_STRING="epsparql-test",
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    if short_lived:
        env["SPARK_DAEMON_JAVA_OPTS"] = SHORT_JVM
        env["EPSPARQL_SHORT_JVM"] = SHORT_JVM
    daemon = [str(home / "sbin" / "spark-daemon.sh")]
    port = 7077 if port_free(7077) else free_port()
    url = f"spark://127.0.0.1:{port}"
    logs = tmp_path / "logs"
    started = []
    try:
        subprocess.run(daemon + ["start", MASTER, "1", "--host", "127.0.0.1", "--port", str(port),
                                 "--webui-port", str(free_port())],
                       env=env, check=True, capture_output=True)
        started.append((MASTER, "1"))
        wait_for(lambda: "I have been elected leader" in log_text(logs, MASTER), "the master", logs)
        for i in ("1", "2"):
            subprocess.run(daemon + ["start", WORKER, i, "--host", "127.0.0.1", "--cores", "1",
                                     "--memory", "2g", "--webui-port", str(free_port()), url],
                           env=env, check=True, capture_output=True)
            started.append((WORKER, i))
        wait_for(lambda: log_text(logs, WORKER).count("Successfully registered with master") == 2,
                 "the workers to register", logs)
        yield url, env
    finally:
        for cls, i in reversed(started):
            subprocess.run(daemon + ["stop", cls, i], env=env, capture_output=True)
        for pid_file in (tmp_path / "pids").glob("*.pid"):    # stop said it; make sure
            pid = int(pid_file.read_text().strip() or 0)
            for _ in range(60):
                try:
                    os.kill(pid, 0)
                except OSError:
                    break
                time.sleep(0.5)
            else:
                os.kill(pid, 9)


DRIVER = """\
import sys
from epsparql.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def submit(url: str, env: dict, tmp_path: Path, query: Path, stream: Path, out: Path,
           partitions: int = 2) -> subprocess.Popen:
    """``spark-submit`` of ``epsparql spark run`` (JSON lines out) to the
    cluster at ``url``; the process, started."""
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    submit = spark_home() / "bin" / "spark-submit"
    short = env.get("EPSPARQL_SHORT_JVM")
    # executors: defaultJavaOptions, which the driver's own extraJavaOptions
    # (epsparql.spark.spark_session) add to rather than replace
    jvm = (["--driver-java-options", short, "--conf", f"spark.executor.defaultJavaOptions={short}"]
           if short else [])
    return subprocess.Popen([str(submit), "--master", url, "--conf", "spark.ui.enabled=false",
                             "--conf", "spark.executor.memory=1g", *jvm, str(driver), "spark", "run",
                             str(query), "--stream", str(stream), "--out", str(out),
                             "--master", url, "--partitions", str(partitions),
                             "--output-format", "jsonl"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
