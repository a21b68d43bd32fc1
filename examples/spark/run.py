"""The paper's query (1) on Apache Spark: batch replay, then a live stream.

Turns examples/stock/prices.csv into a timestamped N-Triples stream, replays
it with `epsparql.spark.run_batch` (partitioned by ?company), then lands it
as four files in a watched directory and follows it with Structured
Streaming (checkpointed).  Both find the companies whose price fell by more
than 30% and then rose above the first price by 5% within 30 days: ACME,
INITECH and HOOLI (planted in the data).

    .venv/bin/python examples/spark/run.py
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import time
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
STOCK = HERE.parent / "stock"
NS = "http://epsparql.org/ns#"
DEC = "http://www.w3.org/2001/XMLSchema#decimal"


def write_stream(out: Path, pieces: int) -> list[Path]:
    """prices.csv as `pieces` time-ordered stream files."""
    with (STOCK / "prices.csv").open() as f:
        rows = list(csv.DictReader(f))
    out.mkdir(parents=True, exist_ok=True)
    per = -(-len(rows) // pieces)
    paths = []
    for i in range(pieces):
        p = out / f"prices-{i:02d}.nt"
        with p.open("w") as f:
            for r in rows[i * per:(i + 1) * per]:
                f.write(f"<{NS}{r['company']}> <{NS}hasStockPrice> "
                        f"\"{r['price']}\"^^<{DEC}> {r['time']} .\n")
        paths.append(p)
    return paths


def main(spark=None) -> dict[str, Counter]:
    from epsparql.spark import JobSpec, read_answers_dir, run_batch, run_stream, spark_session
    work = HERE / "out"
    shutil.rmtree(work, ignore_errors=True)
    query = (STOCK / "query1.rq").read_text()
    spec = JobSpec.build([("query1", query)])
    print("\n".join(spec.plan.describe()))
    spark = spark or spark_session()
    found: dict[str, Counter] = {}

    files = write_stream(work / "stream", 1)
    res = run_batch(spark, spec, [str(f) for f in files], str(work / "batch"))
    lines = [json.loads(line) for f in sorted((work / "batch" / "answers.jsonl").glob("part-*"))
             for line in f.read_text().splitlines() if line]
    found["batch"] = Counter(a["bindings"]["company"]["value"][len(NS):] for a in lines)
    print(f"batch replay: {res.events} events, {res.answers} answers in {res.seconds:.1f} s: "
          + ", ".join(f"{c} {n}" for c, n in sorted(found["batch"].items())))

    incoming = work / "incoming"
    incoming.mkdir()
    # land files as a producer should: written under a hidden name, renamed
    # into place, in time order (Spark takes new files by modification time)
    for i, f in enumerate(write_stream(work / "pieces", 4)):
        tmp = incoming / ("." + f.name)
        shutil.copy(f, tmp)
        os.utime(tmp, (time.time() - 100 + i, time.time() - 100 + i))
        tmp.rename(incoming / f.name)
    st = run_stream(spark, spec, str(work / "live"), str(work / "checkpoint"),
                    watch=str(incoming), available_now=True, max_files_per_trigger=1)
    live = read_answers_dir(str(work / "live"))
    found["stream"] = Counter(a["bindings"]["company"]["value"][len(NS):] for a in live)
    print(f"streaming: {st.batches} micro-batches, {st.events} events "
          f"({st.dropped_by_watermark} behind the watermark), {st.answers} answers: "
          + ", ".join(f"{c} {n}" for c, n in sorted(found["stream"].items())))
    return found


if __name__ == "__main__":
    got = main()
    sys.exit(0 if set(got["batch"]) == set(got["stream"]) == {"ACME", "INITECH", "HOOLI"} else 1)
