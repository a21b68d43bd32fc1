"""The Spark pipeline against the single-process engine (issue: Spark).

Workloads, over one stream file of N prices of 1,000 companies (one price
every 86.4 s, so each company has about one price a day; mean-reverting
with rare spikes and crashes, seeded):

* ``seq2``: ``{?c :price ?p1} SEQ {?c :price ?p2}`` with ``?p2 > ?p1 * 1.05``
  within 10 days;
* ``query1``: the paper's query (1), as printed (30 days);

and over issue 14's all-pairs stream (100 companies, one price a second,
``bench/allpairs.py``'s generator, as ``xsd:double`` literals):

* ``allpairs``: ``{?k :price ?p1} SEQ {?k :price ?p2}`` with ``?p2 > ?p1``
  within 1,000 s, every pair reported (about 4.9 answers per event).

Spark answers are counted by the tasks that make them (the job's
accumulator, no pass over the answers), so that 50 million answers of the
all-pairs stream at N = 10,000,000 cost no driver memory.

``--check M``: answers = single-process answers on an M-event sample (the
first M events of the same generator): the single engine writes its
answers as JSON lines (``epsparql run``'s format), the Spark pipeline
(2 partitions) writes its JSON lines, and the two multisets must be equal
(line counts and a sum of 64-bit hashes of the lines).

Modes, each in a fresh process (peak memory per run): ``single`` (one
``Engine``: read the file, ``push_many``, drain), ``spark1`` (``local[1]``,
1 partition, the answers written as JSON lines), ``spark2`` (``local[2]``, 2
partitions); ``floor1``/``floor2``: the same jobs writing nothing (answers
counted: reading, routing, the engines and Spark without output rows).
Spark runs are timed from the job's start to its end (session start-up
excluded and reported apart; bench/spark_cli.py times the command lines
whole); all include reading and parsing the file.  Peak memory: the
driver's VmHWM, and the largest resident size seen for the JVM and the
Python workers (sampled every 0.2 s).  CPU per event of the JVM and of the
workers.

    .venv/bin/python bench/spark.py                 # N = 1,000,000 (about 15 min)
    .venv/bin/python bench/spark.py --n 10000000    # about 2.5 hours
    .venv/bin/python bench/spark.py --quick         # N = 100,000
    .venv/bin/python bench/spark.py --n 10000000 --workloads allpairs --check 1000000
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
from pathlib import Path

from harness import (OUT, describe, generated_file, machine, peak_rss_mb, results_path, run_child,
                     write_results)

HERE = Path(__file__).resolve().parent
NS = "http://epsparql.org/ns#"
DEC = "http://www.w3.org/2001/XMLSchema#decimal"
STEP = 86.4
QUERIES = {
    "seq2": ("SELECT ?company ?p1 ?p2 WHERE { ?company hasStockPrice ?p1 } "
             "SEQ { ?company hasStockPrice ?p2 } "
             "FILTER (?p2 > ?p1 * 1.05 && getDURATION() < \"P10D\"^^xsd:duration)"),
    "query1": (HERE.parent / "examples" / "stock" / "query1.rq").read_text(),
    "allpairs": ("PREFIX : <http://epsparql.org/ns#> "
                 "SELECT ?k ?p1 ?p2 WHERE { ?k :price ?p1 } SEQ { ?k :price ?p2 } "
                 "FILTER (?p2 > ?p1 && getDURATION() <= \"PT1000S\"^^xsd:duration)"),
}
DOUBLE = "http://www.w3.org/2001/XMLSchema#double"


def allpairs_file(n: int) -> Path:
    """bench/allpairs.py's stream as N-Triples (``:k<i> :price "p"^^xsd:double t``)."""
    def lines():
        from allpairs import prices
        from rdflib import Literal
        for k, p, t in prices(n):
            yield f"<{NS}k{k}> <{NS}price> \"{Literal(p)}\"^^<{DOUBLE}> {t} .\n"
    return generated_file(OUT / f"spark_allpairs_{n}.nt", lines())


def digest(paths) -> tuple[int, str]:
    """(lines, sum of their 64-bit hashes): a multiset's fingerprint."""
    from epsparql.spark.batch import lines_digest
    n, total = lines_digest([str(p) for p in paths])
    return n, f"{total:016x}"


def input_file(workload: str, n: int) -> Path:
    return allpairs_file(n) if workload == "allpairs" else stream_file(n)


def stream_file(n: int, keys: int = 1000, seed: int = 1) -> Path:
    def lines():
        rnd = random.Random(seed)
        base = {k: rnd.uniform(20, 200) for k in range(keys)}
        level = dict.fromkeys(range(keys), 0.0)
        t0 = 1_700_000_000
        for i in range(n):
            k = rnd.randrange(keys)
            level[k] = 0.9 * level[k] + rnd.gauss(0, 0.0044)
            p = base[k] * (2.718281828 ** level[k])
            r = rnd.random()
            if r < 0.002:
                p *= rnd.uniform(1.06, 1.12)          # spike
            elif r < 0.003:
                p *= rnd.uniform(0.55, 0.68)          # crash (query 1's first leg)
                level[k] -= 0.4
            yield (f"<{NS}C{k}> <{NS}hasStockPrice> \"{p:.2f}\"^^<{DEC}> "
                   f"{t0 + round(i * STEP, 1)} .\n")
    return generated_file(OUT / f"spark_prices_{n}_{keys}.nt", lines())


class ChildPeak(threading.Thread):
    """Samples the resident size of this process's children (the JVM, the
    Python workers it forks)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.jvm = 0.0
        self.workers = 0.0
        self.stop = False
        self.cpu: dict[int, tuple[str, float]] = {}     # pid -> (kind, CPU seconds so far)

    def cpu_seconds(self, kind: str) -> float:
        return sum(c for k, c in self.cpu.values() if k == kind)

    def run(self) -> None:
        import psutil
        me = psutil.Process()
        while not self.stop:
            jvm = workers = 0.0
            for c in me.children(recursive=True):
                try:
                    rss = c.memory_info().rss / 2**20
                    t = c.cpu_times()
                    kind = "jvm" if "java" in c.name() else "workers"
                    self.cpu[c.pid] = (kind, t.user + t.system)
                    if kind == "jvm":
                        jvm += rss
                    else:
                        workers += rss
                except psutil.Error:
                    pass
            self.jvm, self.workers = max(self.jvm, jvm), max(self.workers, workers)
            time.sleep(0.2)


def single(workload: str, path: Path, n: int, answers_out: Path | None = None) -> dict:
    """One Engine over the file: read, push_many in batches of 5,000, drain
    (answers counted, or written as JSON lines to ``answers_out``)."""
    from epsparql import Engine
    from epsparql.io import answer_writer
    from epsparql.io.streams import read_stream
    e = Engine()
    q = e.register(QUERIES[workload], name=workload)
    writer = answer_writer("jsonl", str(answers_out), [q]) if answers_out else None
    t, c = time.perf_counter(), time.process_time()
    answers = 0
    batch: list = []

    def drain() -> None:
        nonlocal answers
        got = q.results()
        answers += len(got)
        if writer is not None:
            writer.write_many(got)
    for row in read_stream(str(path)):
        batch.append(row)
        if len(batch) == 5000:
            e.push_many(batch)
            drain()
            batch = []
    e.push_many(batch)
    e.flush()
    drain()
    if writer is not None:
        writer.close()
    dt, cpu = time.perf_counter() - t, time.process_time() - c
    return {"seconds": dt, "events_per_s": n / dt, "cpu_s": {"driver": cpu}, "answers": answers,
            "peak_driver_mb": peak_rss_mb()}


def child(mode: str, workload: str, n: int) -> dict:
    path = input_file(workload, n)
    text = QUERIES[workload]
    if mode == "single":
        return single(workload, path, n)
    # Spark's Python workers start in the JVM's working directory, which
    # comes first on their sys.path: make it the measured tree's, so that
    # with PYTHONPATH=OTHER_TREE the workers run that tree too, not this one
    import epsparql
    os.chdir(Path(epsparql.__file__).resolve().parents[1])
    import shutil
    from epsparql.spark import JobSpec, run_batch, spark_session
    parts = 2 if mode.endswith("2") else 1
    floor = mode.startswith("floor")
    peak = ChildPeak()
    peak.start()
    t = time.perf_counter()
    spark = spark_session(f"local[{parts}]")
    startup = time.perf_counter() - t
    spec = JobSpec.build([(workload, text)])
    time.sleep(0.5)
    cpu0 = {k: peak.cpu_seconds(k) for k in ("jvm", "workers")}
    own0 = time.process_time()
    out = OUT / f"spark_{mode}_out"
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    res = run_batch(spark, spec, [str(path)], None if floor else str(out), partitions=parts,
                    write=("jsonl",))
    seconds = time.perf_counter() - t
    time.sleep(0.5)
    cpu = {k: peak.cpu_seconds(k) - cpu0[k] for k in ("jvm", "workers")}
    cpu["driver"] = time.process_time() - own0
    peak.stop = True
    spark.stop()
    shutil.rmtree(out, ignore_errors=True)
    assert res.events == n, res
    return {"seconds": seconds, "events_per_s": n / seconds, "answers": res.answers,
            "startup_s": startup, "peak_driver_mb": peak_rss_mb(), "peak_jvm_mb": peak.jvm,
            "peak_workers_mb": peak.workers, "late": res.late, "errors": res.errors,
            "cpu_s": cpu, "cpu_us_per_event": {k: v / n * 1e6 for k, v in cpu.items()}}


def check(workload: str, m: int) -> dict:
    """Answers = single-process answers on the first M events (see above)."""
    import glob
    import shutil
    path = input_file(workload, m)
    jsonl = OUT / f"spark_check_{workload}_{m}.jsonl"
    one = single(workload, path, m, jsonl)
    from epsparql.spark import JobSpec, run_batch, spark_session
    spark = spark_session("local[2]")
    out = OUT / "spark_check_out"
    try:
        spec = JobSpec.build([(workload, QUERIES[workload])])
        res = run_batch(spark, spec, [str(path)], str(out), partitions=2, write=("jsonl",))
        got = digest(sorted(glob.glob(str(out / "answers.jsonl" / "part-*"))))
        want = digest([jsonl])
    finally:
        spark.stop()
        jsonl.unlink()
        shutil.rmtree(out, ignore_errors=True)
    return {"events": m, "single_answers": one["answers"], "spark_answers": res.answers,
            "single_lines": want[0], "spark_lines": got[0],
            "equal": got == want and res.answers == one["answers"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true", help="N = 100,000, results to bench/out/")
    ap.add_argument("--workloads", default="seq2,query1")
    ap.add_argument("--modes", default="single,spark1,spark2,floor1,floor2")
    ap.add_argument("--out", help="results JSON (default bench/results/spark_<N>.json)")
    ap.add_argument("--check", type=int, metavar="M",
                    help="also check answers = single-process answers on an M-event sample")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    n = 100_000 if args.quick else args.n
    if args.child:
        if args.child[0] == "check":
            print(json.dumps(check(args.child[1], n)))
        else:
            print(json.dumps(child(args.child[0], args.child[1], n)))
        return 0
    import pyspark
    info = machine(pyspark=pyspark.__version__)
    print(describe(info) + f", PySpark {info['pyspark']}", flush=True)
    rows = []
    checks = []
    for workload in (args.workloads.split(",") if args.check else []):
        r, run = run_child([sys.executable, __file__, "--n", str(args.check), "--child", "check",
                            workload], log=f"spark_check_{workload}", check=False)
        if r is None:
            print(run.get("stderr_tail", ""), file=sys.stderr)
            return 1
        r.update(workload=workload, load_before=run["load_avg_before"],
                 load_after=run["load_avg_after"])
        checks.append(r)
        print(f"{workload:7} check on {args.check:,} events: single {r['single_answers']:,} "
              f"answers, Spark {r['spark_answers']:,}: "
              f"{'EQUAL' if r['equal'] else 'DIFFERENT'}", flush=True)
        if not r["equal"]:
            return 1
    for workload in args.workloads.split(","):
        input_file(workload, n)
    for workload in args.workloads.split(","):
        row = {"workload": workload, "n": n, "keys": 100 if workload == "allpairs" else 1000}
        for mode in args.modes.split(","):
            r, run = run_child([sys.executable, __file__, "--n", str(n), "--child", mode, workload],
                               log=f"spark_{workload}_{mode}", check=False)
            if r is None:
                print(run.get("stderr_tail", ""), file=sys.stderr)
                return 1
            load0 = r["load_before"] = run["load_avg_before"]
            row[mode] = r
            extra = (f", start-up {r['startup_s']:.1f} s, JVM {r['peak_jvm_mb']:.0f} MB, "
                     f"workers {r['peak_workers_mb']:.0f} MB; CPU s: "
                     + ", ".join(f"{k} {v:.1f}" for k, v in r["cpu_s"].items())
                     + "; CPU µs/event: " + ", ".join(
                         f"{k} {v:.1f}" for k, v in r["cpu_us_per_event"].items())) \
                if "startup_s" in r else ""
            print(f"{workload:7} {mode:7} N={n:>10,}: {r['events_per_s']:>9,.0f} events/s "
                  f"({r['seconds']:.1f} s), {r['answers']:,} answers, driver peak "
                  f"{r['peak_driver_mb']:.0f} MB{extra}; load {load0:.1f}-"
                  f"{run['load_avg_after']:.1f}", flush=True)
            r["load_after"] = run["load_avg_after"]
        if "single" in row and "spark1" in row:
            row["spark1_vs_single"] = row["single"]["events_per_s"] / row["spark1"]["events_per_s"]
        if "spark1" in row and "spark2" in row:
            row["speedup_2_partitions"] = row["spark2"]["events_per_s"] / row["spark1"]["events_per_s"]
        for k in ("spark1_vs_single", "speedup_2_partitions"):
            if k in row:
                print(f"{workload:7} {k}: {row[k]:.2f}", flush=True)
        rows.append(row)
    dest = results_path("spark_quick" if args.quick else f"spark_{n}", args.quick, args.out)
    write_results({"machine": info, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "rows": rows, "checks": checks}, dest, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
