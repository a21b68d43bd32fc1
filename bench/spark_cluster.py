"""The all-pairs replay on a Spark standalone cluster on this machine (issue 22).

A master and two workers of one core and 2 GB on 127.0.0.1 (started and
stopped by ``tests/spark/standalone.py``, which the cluster test uses at
a size CI affords); the job, ``epsparql spark run`` of the all-pairs
query (about 4.9 answers per event) on two partitions, is submitted with
``spark-submit``; one engine (``epsparql run``) writes the same stream's
answers first.  Printed: events/s of both, wall time, CPU seconds and
peak resident memory of every process of the job (driver, executors and
their Python workers, sampled every 0.1 s), and whether the answers equal
one engine's as a multiset of JSON lines.

    .venv/bin/python bench/spark_cluster.py              # N = 1,000,000
    .venv/bin/python bench/spark_cluster.py --n 300000
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from harness import OUT, ROOT, describe, machine, results_path, write_results

from spark import digest
from spark_cli import Sampler, run as run_sampled

sys.path.insert(0, str(ROOT / "tests" / "spark"))
from allpairs_stream import ALLPAIRS, write_allpairs  # noqa: E402
from standalone import standalone_cluster, submit  # noqa: E402

EPSPARQL = str(ROOT / ".venv" / "bin" / "epsparql")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--out", help="results JSON (default bench/results/spark_cluster_<N>.json)")
    args = ap.parse_args()
    import pyspark
    info = machine(pyspark=pyspark.__version__)
    print(describe(info) + f", PySpark {info['pyspark']}", flush=True)
    work = OUT / "spark_cluster"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    stream = write_allpairs(OUT / "allpairs" / f"prices_{args.n}.nt", args.n)
    query = work / "allpairs.rq"
    query.write_text(ALLPAIRS[1])
    single = run_sampled([EPSPARQL, "run", str(query), "--stream", str(stream), "--out",
                          str(work / "one.jsonl"), "--output-format", "jsonl", "-q"],
                         work / "single.log")
    want = digest([work / "one.jsonl"])
    print(f"one engine  N={args.n:,}: {round(args.n / single['seconds']):>7,} events/s "
          f"({single['seconds']:.1f} s), {want[0]:,} answers; peak MB "
          f"{single['peak_mb'].get('command', 0):,}", flush=True)
    with standalone_cluster(work) as (url, env):
        samplers = []
        for pid_file in sorted((work / "pids").glob("*Worker*.pid")):
            samplers.append(Sampler(int(pid_file.read_text().strip())))
        t0 = time.perf_counter()
        p = submit(url, env, work, query, stream, work / "out")
        samplers.append(Sampler(p.pid))
        for s in samplers:
            s.start()
        _, stderr = p.communicate()
        wall = time.perf_counter() - t0
        for s in samplers:
            s.stop = True
            s.join()
    if p.returncode != 0:
        print(stderr[-3000:], file=sys.stderr)
        return 1
    got = digest(sorted((work / "out" / "answers.jsonl").glob("part-*")))
    procs = [dict(rec, pid=pid) for s in samplers for pid, rec in s.procs.items()
             if rec["peak_mb"] > 1]
    cpu = sum(r["cpu_s"] for r in procs)
    print(f"cluster 2×1 N={args.n:,}: {round(args.n / wall):>7,} events/s ({wall:.1f} s, "
          f"{wall / single['seconds']:.2f}× one engine's time), {got[0]:,} answers "
          f"({'= one engine' if got == want else 'DIFFERENT'}); CPU {cpu:.1f} s", flush=True)
    print("    processes (peak MB, CPU s): " + "; ".join(
        f"{r.get('name', '')[-40:]} {r['peak_mb']:,.0f} MB {r['cpu_s']:.1f} s"
        for r in sorted(procs, key=lambda r: -r["peak_mb"])), flush=True)
    dest = results_path(f"spark_cluster_{args.n}", False, args.out)
    write_results({"machine": info, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "n": args.n, "single": single, "cluster_seconds": round(wall, 2),
                   "cluster_events_per_s": round(args.n / wall), "answers": got[0],
                   "equal": got == want, "processes": procs}, dest)
    print(f"results: {dest}")
    return 0 if got == want else 1


if __name__ == "__main__":
    raise SystemExit(main())
