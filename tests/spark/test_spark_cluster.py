"""The batch replay on a real Spark standalone cluster on this machine.

A master and two workers (one core each) are started from PySpark's own
scripts (``sbin/spark-daemon.sh`` of the installed package: what a full
Spark distribution's ``start-master.sh`` and ``start-worker.sh`` run), on
127.0.0.1; the replay of the all-pairs stream, 1,000,000 events and about
4.9 million answers, is submitted with PySpark's ``spark-submit`` to
``spark://127.0.0.1:7077`` (another free port if a cluster of someone else
holds 7077 on this shared machine) with two partitions; both workers must
have run an executor, and the answers (the JSON lines the engine tasks
wrote) must be, as a multiset, those one engine writes over the same
stream (compared by count and a sum of 64-bit hashes of the lines, which
no reordering changes and a lost, extra or altered line does).  The
cluster is stopped afterwards, also when the test fails.  docs/SPARK.md
shows the same commands for a cluster of one's own.  Marked ``spark`` and
``slow`` (about two minutes on two cores; docs/SPARK.md has the figure).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from allpairs_stream import ALLPAIRS, lines_digest, one_engine_lines, write_allpairs

pytestmark = [pytest.mark.spark, pytest.mark.slow]

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


@pytest.fixture
def cluster(tmp_path):
    """A standalone master and two workers (one core, 2 GB each) on
    127.0.0.1; yields the master URL and the environment the daemons ran
    with."""
    home = spark_home()
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOG_DIR=str(tmp_path / "logs"),
               SPARK_PID_DIR=str(tmp_path / "pids"), SPARK_IDENT_STRING="epsparql-test",
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
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


def test_allpairs_million_events_on_a_standalone_cluster_of_two_workers(cluster, tmp_path):
    url, env = cluster
    stream = write_allpairs(tmp_path / "in" / "prices.nt", 1_000_000)
    query = tmp_path / "allpairs.rq"
    query.write_text(ALLPAIRS[1])
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    out = tmp_path / "out"
    submit = spark_home() / "bin" / "spark-submit"
    # one engine's answers, made meanwhile (the job leaves the cores idle at times)
    with ThreadPoolExecutor(1) as pool:
        reference = pool.submit(one_engine_lines, stream, tmp_path / "one.jsonl")
        p = subprocess.run([str(submit), "--master", url, "--conf", "spark.ui.enabled=false",
                            "--conf", "spark.executor.memory=1g", str(driver), "spark", "run",
                            str(query), "--stream", str(stream), "--out", str(out),
                            "--master", url, "--partitions", "2", "--output-format", "jsonl"],
                           env=env, capture_output=True, text=True, timeout=1200)
        want = lines_digest([reference.result()])
    assert p.returncode == 0, p.stderr[-5000:]
    # the job ran on both of the cluster's workers, not in the driver
    launched = [log_text(tmp_path / "logs", f"{WORKER}-{i}") for i in (1, 2)]
    assert all("Asked to launch executor" in text for text in launched), launched
    parts = sorted((out / "answers.jsonl").glob("part-*"))
    assert len(parts) == 2                         # each engine partition wrote its own
    got = lines_digest(parts)
    assert want[0] > 4_500_000
    assert got == want
