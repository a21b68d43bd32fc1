"""The batch replay on a real Spark standalone cluster on this machine.

A master and one worker are started from PySpark's own scripts
(``sbin/spark-daemon.sh`` of the installed package: what a full Spark
distribution's ``start-master.sh`` and ``start-worker.sh`` run), on
127.0.0.1; the replay is submitted with PySpark's ``spark-submit`` to
``spark://127.0.0.1:7077`` (another free port if a cluster of someone else
holds 7077 on this shared machine); its answers must equal one engine's
over the same stream; the cluster is stopped afterwards, also when the
test fails.  docs/SPARK.md shows the same commands for a cluster of one's
own.  Marked ``spark`` and ``slow`` (about a minute).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from epsparql.io.results import read_answers

from test_spark import CRASH, RISE, key, single_engine, write_prices

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
    """A standalone master and one worker (2 cores) on 127.0.0.1; yields
    the master URL and the environment the daemons ran with."""
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
        started.append(MASTER)
        wait_for(lambda: "I have been elected leader" in log_text(logs, MASTER), "the master", logs)
        subprocess.run(daemon + ["start", WORKER, "1", "--host", "127.0.0.1", "--cores", "2",
                                 "--memory", "2g", "--webui-port", str(free_port()), url],
                       env=env, check=True, capture_output=True)
        started.append(WORKER)
        wait_for(lambda: "Successfully registered with master" in log_text(logs, WORKER),
                 "the worker to register", logs)
        yield url, env
    finally:
        for cls in reversed(started):
            subprocess.run(daemon + ["stop", cls, "1"], env=env, capture_output=True)
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


def test_batch_replay_on_a_standalone_cluster(cluster, tmp_path):
    url, env = cluster
    paths = write_prices(tmp_path / "in", 8000, 60, 2)
    queries = tmp_path / "q"
    queries.mkdir()
    files = []
    for name, text in (RISE, CRASH):
        f = queries / f"{name}.rq"
        f.write_text(text)
        files.append(str(f))
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    out = tmp_path / "out"
    submit = spark_home() / "bin" / "spark-submit"
    p = subprocess.run([str(submit), "--master", url, "--conf", "spark.ui.enabled=false",
                        "--conf", "spark.executor.memory=1g", str(driver), "spark", "run",
                        *files, "--stream", *map(str, paths), "--out", str(out),
                        "--master", url, "--partitions", "2"],
                       env=env, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-5000:]
    # the job ran on the cluster's worker, not in the driver
    assert "Asked to launch executor" in log_text(tmp_path / "logs", WORKER)
    got = Counter()
    for part in sorted((out / "answers.jsonl").glob("part-*")):
        got.update(key(a) for a in read_answers(part))
    expected = single_engine([RISE, CRASH], paths)
    assert sum(expected.values()) > 20
    assert got == expected, f"missing {expected - got}, extra {got - expected}"
