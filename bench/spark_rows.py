"""The Spark worker's output rows per answer, without Spark.

A worker-like loop over bench/spark.py's all-pairs stream (about 5 answers
per event): one keyed :class:`~epsparql.spark.worker.Runner` for the whole
partition takes the events 10,000 at a time as an Arrow batch (``push``),
then its answers become output rows (``Runner.answers`` -> blocks) and are
handed over as Spark gets them: ``record_batch(blocks, fields)`` (the
record batch ``mapInArrow`` sends to the JVM; ``--fields`` as an output
asks for them: ``json`` for JSON lines, the Parquet columns, or all), or,
with ``--pandas``, the streaming stage's pandas frame and Spark's own
pandas-to-Arrow conversion (what ``applyInPandasWithState`` runs).  CPU
seconds of this process, per event (push) and per answer (rows).

    .venv/bin/python bench/spark_rows.py [--n 100000] [--repeats 3] [--pandas]
    .venv/bin/python bench/spark_rows.py --fields json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from harness import describe, machine

from spark import QUERIES, allpairs_file


def spark_schema():
    """The streaming stage's rows as Spark types (STREAM_FIELDS)."""
    from pyspark.sql.types import (ArrayType, DoubleType, LongType, MapType, StringType,
                                   StructField, StructType)
    s = StringType()
    return StructType([StructField("_0", StructType([
        StructField("kind", s), StructField("query", s), StructField("key", s),
        StructField("start", DoubleType()), StructField("end", DoubleType()),
        StructField("bindings", MapType(s, s)), StructField("triples", ArrayType(s)),
        StructField("json", s), StructField("message", s), StructField("count", LongType())]))])


def run(n: int, pandas: bool, fields: tuple[str, ...]) -> dict:
    import pyarrow as pa
    from epsparql.core.runtime import runtime
    runtime()
    from pyspark.sql.conversion import PandasToArrowConversion

    from epsparql.spark import JobSpec
    from epsparql.spark import worker as W
    from epsparql.spark.rows import record_batch
    rows = []
    with open(allpairs_file(n)) as f:
        for line in f:
            s, p, rest = line.split(" ", 2)
            o, t, _ = rest.rsplit(" ", 2)
            rows.append((s, p, o, float(t), float(t)))
    schema = spark_schema()

    def hand_over(blocks):
        if not pandas:
            return record_batch(blocks, fields)
        return PandasToArrowConversion.convert([W.stream_frame(blocks, [])], schema,
                                               timezone="UTC", safecheck=True, arrow_cast=True)

    def batch(chunk):
        s, p, o, t1, t2 = chunk
        return pa.RecordBatch.from_pydict({"s": list(s), "p": list(p), "o": list(o),
                                           "start": list(t1), "end": list(t2),
                                           "stream": pa.nulls(len(s), pa.string())})
    spec = JobSpec.build([("allpairs", QUERIES["allpairs"])])
    r = W.Runner(spec, "keyed")
    r.start(None)
    answers = 0
    push = build = over = 0.0
    for i in range(0, n, 10000):
        chunk = batch(list(zip(*rows[i:i + 10000])))
        c0 = time.process_time()
        r.push(chunk)
        if i + 10000 >= n:
            r.engine.flush()
        c1 = time.process_time()
        out = r.answers()
        c2 = time.process_time()
        got = hand_over(out)
        c3 = time.process_time()
        count = sum(map(len, out))
        assert got.num_rows == count
        answers += count
        push, build, over = push + c1 - c0, build + c2 - c1, over + c3 - c2
    r.engine.close()
    return {"events": n, "answers": answers, "push_us_per_event": push / n * 1e6,
            "results_us_per_answer": build / answers * 1e6,
            "handover_us_per_answer": over / answers * 1e6,
            "rows_us_per_answer": (build + over) / answers * 1e6,
            "handover": "pandas" if pandas else "arrow " + ",".join(fields)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pandas", action="store_true",
                    help="hand over a pandas frame converted by Spark (the streaming path)")
    ap.add_argument("--fields", default="query,key,start,end,bindings,triples,json",
                    help="the answer fields built (json: what JSON lines need)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(run(args.n, args.pandas, tuple(args.fields.split(",")))))
        return 0
    import subprocess
    print(describe(machine()), flush=True)
    allpairs_file(args.n)
    for k in range(args.repeats):
        load = os.getloadavg()[0]
        cmd = [sys.executable, __file__, "--n", str(args.n), "--child",
               "--fields", args.fields] + (["--pandas"] if args.pandas else [])
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                      text=True).stdout.splitlines()[-1])
        print(f"run {k + 1}: {r['answers']:,} answers of {r['events']:,} events; push "
              f"{r['push_us_per_event']:.1f} us/event; rows ({r['handover']}) "
              f"{r['rows_us_per_answer']:.2f} us/answer (results {r['results_us_per_answer']:.2f}"
              f" + hand-over {r['handover_us_per_answer']:.2f}); load {load:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
