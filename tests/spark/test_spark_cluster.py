"""The batch replay on a real Spark standalone cluster on this machine.

A master and two workers (one core each) on 127.0.0.1
(``standalone.py``); the replay of the all-pairs stream (about 4.9
answers per event) is submitted with PySpark's ``spark-submit`` to the
cluster with two partitions; both workers must have run an executor, and
the answers (the JSON lines the engine tasks wrote) must be, as a
multiset, those one engine writes over the same stream (compared by count
and a sum of 64-bit hashes of the lines, which no reordering changes and
a lost, extra or altered line does).

30,000 events here (``EPSPARQL_CLUSTER_EVENTS`` sets another number):
the same job at 1,000,000 events, with its figures, is
``bench/spark_cluster.py`` (bench/README.md).  Marked ``spark`` and
``slow``.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from allpairs_stream import ALLPAIRS, lines_digest, one_engine_lines, write_allpairs
from standalone import WORKER, log_text, standalone_cluster, submit

pytestmark = [pytest.mark.spark, pytest.mark.slow]

EVENTS = int(os.environ.get("EPSPARQL_CLUSTER_EVENTS", "30000"))


@pytest.fixture
def cluster(tmp_path):
    with standalone_cluster(tmp_path, short_lived=True) as (url, env):
        yield url, env


def test_allpairs_on_a_standalone_cluster_of_two_workers(cluster, tmp_path):
    url, env = cluster
    stream = write_allpairs(tmp_path / "in" / "prices.nt", EVENTS)
    query = tmp_path / "allpairs.rq"
    query.write_text(ALLPAIRS[1])
    out = tmp_path / "out"
    # one engine's answers, made meanwhile (the job leaves the cores idle at times)
    with ThreadPoolExecutor(1) as pool:
        reference = pool.submit(one_engine_lines, stream, tmp_path / "one.jsonl")
        p = submit(url, env, tmp_path, query, stream, out)
        _, stderr = p.communicate(timeout=1200)
        want = lines_digest([reference.result()])
    assert p.returncode == 0, stderr[-5000:]
    # the job ran on both of the cluster's workers, not in the driver
    launched = [log_text(tmp_path / "logs", f"{WORKER}-{i}") for i in (1, 2)]
    assert all("Asked to launch executor" in text for text in launched), launched
    parts = sorted((out / "answers.jsonl").glob("part-*"))
    assert len(parts) == 2                         # each engine partition wrote its own
    got = lines_digest(parts)
    assert want[0] > 4.5 * EVENTS
    assert got == want
