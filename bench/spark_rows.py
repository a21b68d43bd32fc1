"""The Spark worker's output rows per answer, without Spark.

A worker-like loop over bench/spark.py's all-pairs stream (about 5 answers
per event): one keyed :class:`~epsparql.spark.worker.Runner` for the whole
partition takes the events 10,000 at a time (``push``), then its answers
become output rows (``Runner.results``) and are handed over as Spark gets
them: ``Rows.arrow()`` (the record batch ``mapInArrow`` sends to the JVM),
or, with ``--pandas`` or on a tree without Arrow rows (PYTHONPATH=OLD_TREE:
before/after pairs), the pandas frame and Spark's own pandas-to-Arrow
conversion (what ``mapInPandas`` and ``applyInPandasWithState`` run).
CPU seconds of this process, per event (push) and per answer (rows).

    .venv/bin/python bench/spark_rows.py [--n 100000] [--repeats 3] [--pandas]
    PYTHONPATH=/tmp/old .venv/bin/python bench/spark_rows.py    # the tree at /tmp/old
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
    from pyspark.sql.types import (ArrayType, DoubleType, LongType, MapType, StringType,
                                   StructField, StructType)
    s = StringType()
    return StructType([StructField("_0", StructType([
        StructField("kind", s), StructField("query", s), StructField("key", s),
        StructField("start", DoubleType()), StructField("end", DoubleType()),
        StructField("bindings", MapType(s, s)), StructField("triples", ArrayType(s)),
        StructField("json", s), StructField("message", s), StructField("count", LongType())]))])


def run(n: int, pandas: bool) -> dict:
    from epsparql.core.runtime import runtime
    runtime()
    from pyspark.sql.conversion import PandasToArrowConversion

    from epsparql.spark import JobSpec
    from epsparql.spark import worker as W
    rows = []
    with open(allpairs_file(n)) as f:
        for line in f:
            s, p, rest = line.split(" ", 2)
            o, t, _ = rest.rsplit(" ", 2)
            rows.append((s, p, o, float(t), float(t)))
    schema = spark_schema()
    arrow = hasattr(W.Rows, "arrow") and not pandas

    def hand_over(out):
        if arrow:
            return out.arrow()
        return PandasToArrowConversion.convert([W.frame(out)], schema, timezone="UTC",
                                               safecheck=True, arrow_cast=True)
    spec = JobSpec.build([("allpairs", QUERIES["allpairs"])])
    r = W.Runner(spec, "keyed")
    r.start(None)
    answers = 0
    push = build = over = 0.0
    for i in range(0, n, 10000):
        chunk = list(zip(*rows[i:i + 10000]))
        c0 = time.process_time()
        r.push(*chunk)
        if i + 10000 >= n:
            r.engine.flush()
        c1 = time.process_time()
        out = r.results()
        c2 = time.process_time()
        batch = hand_over(out)
        c3 = time.process_time()
        assert batch.num_rows == len(out)
        answers += len(out)
        push, build, over = push + c1 - c0, build + c2 - c1, over + c3 - c2
    r.engine.close()
    return {"events": n, "answers": answers, "push_us_per_event": push / n * 1e6,
            "results_us_per_answer": build / answers * 1e6,
            "handover_us_per_answer": over / answers * 1e6,
            "rows_us_per_answer": (build + over) / answers * 1e6,
            "handover": "arrow" if arrow else "pandas"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pandas", action="store_true",
                    help="hand over a pandas frame converted by Spark (the streaming path)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(run(args.n, args.pandas)))
        return 0
    import subprocess
    print(describe(machine()), flush=True)
    allpairs_file(args.n)
    for k in range(args.repeats):
        load = os.getloadavg()[0]
        cmd = [sys.executable, __file__, "--n", str(args.n), "--child"] + \
            (["--pandas"] if args.pandas else [])
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                      text=True).stdout.splitlines()[-1])
        print(f"run {k + 1}: {r['answers']:,} answers of {r['events']:,} events; push "
              f"{r['push_us_per_event']:.1f} us/event; rows ({r['handover']}) "
              f"{r['rows_us_per_answer']:.2f} us/answer (results {r['results_us_per_answer']:.2f}"
              f" + hand-over {r['handover_us_per_answer']:.2f}); load {load:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
