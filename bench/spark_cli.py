"""The Spark pipeline against one engine, through the command line (issue 22).

What a user runs, start-up included, side by side in one run:

* ``single``: ``epsparql run Q --stream F --out one.jsonl --output-format jsonl``;
* ``spark1``: ``epsparql spark run Q --stream F --out DIR --master local[1]
  --partitions 1`` (``--output-format jsonl``: the same output as the single
  engine; ``--outputs parquet,jsonl`` for the default of both);
* ``spark2``: the same on ``local[2]`` with 2 partitions.

``--routing`` as chosen (``auto``); a mode ``spark2-shuffle`` or
``spark1-scan`` forces one (``--modes single,spark2-shuffle,spark2-scan``).

Each command runs in a fresh process tree, sampled every 0.1 s: wall time;
CPU seconds of the driver JVM, of Spark's Python workers (the engines,
the readers) and of the command's own Python process; the peak resident
memory of every process (each worker's, and of the workers together).
The answers of every Spark run must equal the single engine's as a
multiset of JSON lines (count and a sum of 64-bit hashes of the lines).

Workloads: ``allpairs`` (issue 14's stream, 100 companies, one price a
second, every rising pair within 1,000 s: about 4.9 answers per event) and
``query1`` (the paper's query (1) over 1,000 companies, bench/spark.py's
stream: few answers).

    .venv/bin/python bench/spark_cli.py                  # N = 1,000,000, both workloads
    .venv/bin/python bench/spark_cli.py --n 300000 --workloads allpairs --repeat 2
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from harness import OUT, ROOT, describe, machine, results_path, write_results

from spark import QUERIES, digest, input_file

EPSPARQL = str(ROOT / ".venv" / "bin" / "epsparql")


class Sampler(threading.Thread):
    """The process tree of a command: per process its kind, last CPU time
    and peak resident size; the workers' summed peak too."""

    def __init__(self, root_pid: int) -> None:
        super().__init__(daemon=True)
        self.root = root_pid
        self.stop = False
        self.procs: dict[int, dict] = {}
        self.workers_peak = 0.0

    @staticmethod
    def kind(p, root: int) -> str:
        if p.pid == root:
            return "command"
        name = p.name()
        if "java" in name:
            return "jvm"
        return "workers" if "python" in name else "other"

    def run(self) -> None:
        import psutil
        root = psutil.Process(self.root)
        while not self.stop:
            try:
                tree = [root] + root.children(recursive=True)
            except psutil.Error:
                break
            workers = 0.0
            for p in tree:
                try:
                    rss = p.memory_info().rss / 2 ** 20
                    t = p.cpu_times()
                    rec = self.procs.setdefault(p.pid, {"peak_mb": 0.0, "cpu_s": 0.0})
                    rec["kind"] = self.kind(p, self.root)   # a script exec's into java
                    rec["name"] = " ".join(p.cmdline()[-2:])[-60:]
                    rec["peak_mb"] = max(rec["peak_mb"], rss)
                    rec["cpu_s"] = max(rec["cpu_s"], t.user + t.system)
                    if rec["kind"] == "workers":
                        workers += rss
                except psutil.Error:
                    pass
            self.workers_peak = max(self.workers_peak, workers)
            time.sleep(0.1)


def run(cmd: list[str], log: Path) -> dict:
    """Run a command, sampled; its wall time, CPU and memory by kind."""
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    with open(log, "w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT)
        s = Sampler(p.pid)
        s.start()
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    s.stop = True
    s.join()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({code}):\n{log.read_text()[-3000:]}")
    cpu = {k: 0.0 for k in ("command", "jvm", "workers", "other")}
    peak: dict[str, float] = {}
    for pid, rec in s.procs.items():
        k = rec["kind"]
        cpu[k] += rec["cpu_s"]
        peak[k] = max(peak.get(k, 0.0), rec["peak_mb"])
    # every process that lived over 0.1 s: its kind, peak resident MB, CPU s
    procs = sorted(({"kind": r["kind"], "name": r.get("name", ""), "peak_mb": round(r["peak_mb"]),
                     "cpu_s": round(r["cpu_s"], 2)} for r in s.procs.values()
                    if r["peak_mb"] > 1), key=lambda r: (r["kind"], -r["peak_mb"]))
    if not cpu["jvm"]:
        # no children: the command's own usage to its end (the sampler may
        # miss its last 0.1 s)
        cpu["command"] = max(cpu["command"], ru.ru_utime + ru.ru_stime)
    return {"seconds": round(wall, 2), "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
            "cpu_total_s": round(sum(cpu.values()), 2),
            "peak_mb": {k: round(v) for k, v in peak.items()},
            "workers_sum_peak_mb": round(s.workers_peak),
            "workers": sum(1 for r in s.procs.values() if r["kind"] == "workers"),
            "processes": procs,
            "load_before": round(load0, 2), "load_after": round(os.getloadavg()[0], 2)}


def commands(mode: str, query: Path, stream: Path, out: Path, outputs: str) -> list[str]:
    if mode == "single":
        return [EPSPARQL, "run", str(query), "--stream", str(stream), "--out", str(out),
                "--output-format", "jsonl", "-q"]
    base, _, routing = mode.partition("-")
    parts = {"spark1": 1, "spark2": 2}[base]
    return [EPSPARQL, "spark", "run", str(query), "--stream", str(stream), "--out", str(out),
            "--master", f"local[{parts}]", "--partitions", str(parts),
            "--routing", routing or "auto", "--output-format", outputs, "-q"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--workloads", default="allpairs,query1")
    ap.add_argument("--modes", default="single,spark1,spark2")
    ap.add_argument("--outputs", default="jsonl",
                    help="what the Spark runs write: jsonl (as the single engine), parquet, "
                    "or parquet,jsonl (epsparql spark run's default)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each mode, interleaved")
    ap.add_argument("--out", help="results JSON (default bench/results/spark_cli_<N>.json)")
    args = ap.parse_args()
    import pyspark
    info = machine(pyspark=pyspark.__version__)
    print(describe(info) + f", PySpark {info['pyspark']}", flush=True)
    work = OUT / "spark_cli"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for workload in args.workloads.split(","):
        stream = input_file(workload, args.n)
        query = work / f"{workload}.rq"
        query.write_text(QUERIES[workload])
        row: dict = {"workload": workload, "n": args.n, "outputs": args.outputs, "runs": []}
        want = None
        for rep in range(args.repeat):
            for mode in args.modes.split(","):
                out = work / f"{workload}_{mode}"
                shutil.rmtree(out, ignore_errors=True)
                if mode == "single":
                    out = out.with_suffix(".jsonl")
                r = run(commands(mode, query, stream, out, args.outputs),
                        work / f"{workload}_{mode}.log")
                files = [out] if mode == "single" else \
                    sorted((out / "answers.jsonl").glob("part-*")) if "jsonl" in args.outputs \
                    else []
                got = digest(files) if files else None
                # answers are compared by digest: their GBs are not kept (a 1M all-pairs
                # run writes ~1 GB of JSON lines per mode)
                shutil.rmtree(out, ignore_errors=True) if out.is_dir() else out.unlink(missing_ok=True)
                if mode == "single":
                    want = got
                r.update(mode=mode, repeat=rep, answers=got[0] if got else None,
                         equal_to_single=None if got is None or want is None else got == want,
                         events_per_s=round(args.n / r["seconds"]))
                row["runs"].append(r)
                jvm, wk = r["cpu_s"]["jvm"], r["cpu_s"]["workers"]
                print(f"{workload:8} {mode:7} N={args.n:,}: {r['events_per_s']:>7,} events/s "
                      f"({r['seconds']:.1f} s), {r['answers']:,} answers"
                      + ("" if r["equal_to_single"] is None else
                         f" ({'= single' if r['equal_to_single'] else 'DIFFERENT'})")
                      + f"; CPU s: JVM {jvm:.1f}, workers {wk:.1f}, command "
                      f"{r['cpu_s']['command']:.1f} (per event: JVM {jvm / args.n * 1e6:.1f} µs, "
                      f"workers {wk / args.n * 1e6:.1f} µs); peak MB: "
                      + ", ".join(f"{k} {v:,}" for k, v in r["peak_mb"].items())
                      + (f", {r['workers']} workers together {r['workers_sum_peak_mb']:,}"
                         if r["workers"] else "")
                      + f"; load {r['load_before']:.1f}-{r['load_after']:.1f}", flush=True)
                print("    processes (kind, peak MB, CPU s): " + "; ".join(
                    f"{x['kind']} {x['peak_mb']:,} MB {x['cpu_s']:.1f} s" for x in r["processes"]
                    if x["kind"] != "other"), flush=True)
                if r["equal_to_single"] is False:
                    return 1
        rows.append(row)
    dest = results_path(f"spark_cli_{args.n}", False, args.out)
    write_results({"machine": info, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "rows": rows}, dest, indent=1)
    print(f"results: {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
