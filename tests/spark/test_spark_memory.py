"""Memory: the replay fits a driver heap that the old plan ran out of.

150,000 events of the all-pairs stream (about 740,000 answers), two
partitions, a 512 MB driver heap (Spark's least is 450 MB; local mode runs
the executors in that JVM), each run in a process of its own:

* the old plan (every answer cached in memory, then ``coalesce(1)`` and
  one task sorting and writing them all; built here from the same read
  and engine stages, with the old serializer) runs out of memory, and the
  failure is reported in one line that names the stage and the setting
  (``--driver-memory``), no JVM stack and no Py4J object name
  ("An error occurred while calling o133.collectToPython" was the old one);
* ``epsparql spark run`` with both outputs (the answers then persisted on
  disk for the second one) writes them all: the JSON lines equal one
  engine's, as a multiset, and the Parquet rows are as many.

Marked ``spark`` and ``slow``.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from allpairs_stream import ALLPAIRS, lines_digest, one_engine_lines, write_allpairs

pytestmark = [pytest.mark.spark, pytest.mark.slow]

#: the old plan ran out of the heap at 120,000, 135,000, 150,000 and 200,000
#: events and wrote them all at 80,000 and 100,000 (2026-11-29)
N = 150_000
HEAP = "512m"
#: both plans' JVMs compile with the client JIT alone: it spends less CPU in
#: these runs of a minute, and the heap each plan needs is the data it keeps
JIT = "-XX:TieredStopAtLevel=1"

OLD_PLAN = """\
import sys
from pyspark import StorageLevel
from epsparql.spark import JobSpec, spark_session
from epsparql.spark.batch import plan_batch
from epsparql.spark.failure import JobFailed, explain, jvm_exit_code
stream, query, out = sys.argv[1:4]
spark = spark_session("local[2]", conf={{"spark.driver.memory": "{heap}",
    "spark.driver.defaultJavaOptions": "{jit}",
    "spark.serializer": "org.apache.spark.serializer.JavaSerializer"}})
spec = JobSpec.build([("allpairs", open(query).read())])
res = plan_batch(spark, spec, [stream], partitions=2, routing="shuffle").answers.persist(StorageLevel.MEMORY_AND_DISK)
try:
    print(res.groupBy("query").count().collect(), file=sys.stderr)
    one = res.coalesce(1).sortWithinPartitions("end", "start", "query", "json")
    one.select("query", "key", "start", "end", "bindings", "triples").write.parquet(out + "/p")
    one.select("json").write.text(out + "/j")
except Exception as e:
    print("FAILED: " + explain(JobFailed("the old plan's write", e, jvm_exit_code(spark, e)),
                              heap="{heap}"), flush=True)
    sys.exit(1)
print("PASSED")
"""


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    return write_allpairs(tmp_path_factory.mktemp("allpairs") / "prices.nt", N)


def test_the_old_plan_runs_out_of_memory_and_says_so_in_one_line(stream, tmp_path):
    script = tmp_path / "old_plan.py"
    script.write_text(OLD_PLAN.format(heap=HEAP, jit=JIT))
    query = tmp_path / "q.rq"
    query.write_text(ALLPAIRS[1])
    p = subprocess.run([sys.executable, str(script), str(stream), str(query), str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=1200)
    failed = [x for x in p.stdout.splitlines() if x.startswith("FAILED: ")]
    assert p.returncode == 1 and len(failed) == 1, (p.stdout, p.stderr[-3000:])
    line = failed[0]
    assert "OutOfMemoryError" in p.stderr             # what the JVM said, on its own stream
    assert line.startswith("FAILED: out of memory"), line
    assert "the old plan's write" in line and f"--driver-memory (now {HEAP}" in line, line
    assert not re.search(r"\bo\d+\.|Py4J|An error occurred|\bat [a-z]+\.", line), line


def test_the_replay_fits_a_heap_the_old_plan_did_not(stream, tmp_path):
    query = tmp_path / "allpairs.rq"            # the query's name: the file's
    query.write_text(ALLPAIRS[1])
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "epsparql.cli", "spark", "run", str(query),
                        "--stream", str(stream), "--out", str(out), "--master", "local[2]",
                        "--partitions", "2", "--driver-memory", HEAP,
                        "--conf", f"spark.driver.defaultJavaOptions={JIT}"],
                       capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0, p.stderr[-3000:]
    want = lines_digest([one_engine_lines(stream, tmp_path / "one.jsonl")])
    assert want[0] > 4.5 * N
    assert lines_digest(sorted((out / "answers.jsonl").glob("part-*"))) == want
    import pyarrow.parquet as pq
    assert sum(pq.read_metadata(f).num_rows
               for f in (out / "answers.parquet").glob("part-*.parquet")) == want[0]
    assert f"answers: allpairs {want[0]:,}" in p.stderr
