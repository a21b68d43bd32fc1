"""All-pairs workloads: answer-heavy streams, every pair (or triple) reported.

    .venv/bin/python bench/allpairs.py                  # N = 100,000, 3 repeats, every path
    .venv/bin/python bench/allpairs.py --quick          # N = 20,000, 1 repeat
    .venv/bin/python bench/allpairs.py --paths core,core-columns --workloads seq2
    .venv/bin/python bench/allpairs.py --profile        # cProfile + SWI-Prolog's profiler

Stream (issue 14): 100 companies, one price per second (t = 1, 2, ...),
the company drawn at random, prices a mean-reverting AR(1) around a base
per company (seeded, as bench/language.py), so a price is higher than about
half of the earlier prices of its company.

Workloads, window W = 1,000 s:

* ``seq2``: a higher price after a lower one, every pair:
  ``rise(K,P1,P2) <- price(K,P1) seq price(K,P2) where P2 > P1 within W``
  (about 4.9 answers per event);
* ``seq3``: three rising prices, every triple:
  ``rise3(K,P1,P2,P3) <- (price(K,P1) seq price(K,P2) where P2 > P1) seq
  price(K,P3) where P3 > P2 within W``.

Paths (each run in a fresh process, so peak memory is per run; only the
pushing and the delivery of answers is timed, input built beforehand):

* ``core``: CoreEngine.push_many + drain(), answers as Detection objects;
* ``core-columns``: CoreEngine.push_many_columns() + drain_columns():
  answers as columns (term ids per argument + start/end arrays, see
  docs/CORE.md), counted without building objects.

A path is a function in ``PATHS``: add one (e.g. the Engine with the same
query in EP-SPARQL) beside these and it is run, counted and printed in
the same table.  Answer counts of all paths of a workload must agree; the
script says so when they do not.  Output: a table on standard output and
the JSON of every run (bench/out/allpairs.json, or --out).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "out"
KEYS = 100
BATCH = 5000

RULES = {
    "seq2": "rise(K,P1,P2) <- price(K,P1) seq price(K,P2) where P2 > P1 within {w}.",
    "seq3": "rise3(K,P1,P2,P3) <- (price(K,P1) seq price(K,P2) where P2 > P1) "
            "seq price(K,P3) where P3 > P2 within {w}.",
}


def prices(n: int, keys: int = KEYS, seed: int = 1):
    """(key index, price, t) rows: AR(1) log-prices around a base per key."""
    rnd = random.Random(seed)
    base = [rnd.uniform(20, 200) for _ in range(keys)]
    dev = [0.0] * keys
    sd = 0.01 * math.sqrt(1 - 0.81)
    for t in range(1, n + 1):
        k = rnd.randrange(keys)
        dev[k] = 0.9 * dev[k] + rnd.gauss(0, sd)
        yield k, round(base[k] * math.exp(dev[k]), 2), t


# ---------------------------------------------------------------------------
# paths: each takes (workload, n, window) and returns a result dict with at
# least "answers", "seconds" (wall) and "cpu_seconds" of the timed section

def _core_events(n: int) -> list:
    from epsparql.core import term
    names = [f"k{i}" for i in range(KEYS)]
    return [(term("price", names[k], p), t) for k, p, t in prices(n)]


def _timed(run: Callable[[], int]) -> dict:
    import gc
    gc.collect()
    gc.freeze()
    t0, c0 = time.perf_counter(), time.process_time()
    answers = run()
    return {"answers": answers, "seconds": time.perf_counter() - t0,
            "cpu_seconds": time.process_time() - c0}


def path_core(workload: str, n: int, w: int) -> dict:
    """CoreEngine, Detection objects (push_many + drain)."""
    from epsparql.core import CoreEngine
    events = _core_events(n)
    eng = CoreEngine(batch_size=BATCH)
    eng.add_rules(RULES[workload].format(w=w))

    def run() -> int:
        count = 0
        for i in range(0, len(events), BATCH):
            eng.push_many(events[i:i + BATCH])
            count += len(eng.drain())
        return count
    return _timed(run)


def path_core_columns(workload: str, n: int, w: int) -> dict:
    """CoreEngine, answers as columns (push_many_columns)."""
    from epsparql.core import CoreEngine
    events = _core_events(n)
    eng = CoreEngine(batch_size=BATCH)
    eng.add_rules(RULES[workload].format(w=w))

    def run() -> int:
        count = 0
        for i in range(0, len(events), BATCH):
            eng.push_many_columns(events[i:i + BATCH])
            count += sum(map(len, eng.drain_columns()))
        return count
    return _timed(run)


PATHS: dict[str, Callable[[str, int, int], dict]] = {
    "core": path_core,
    "core-columns": path_core_columns,
}


# ---------------------------------------------------------------------------
# the harness

def child(path: str, workload: str, n: int, w: int, profile: bool) -> dict:
    fn = PATHS[path]
    if not profile:
        r = fn(workload, n, w)
    else:
        import cProfile
        import io
        import pstats
        from epsparql.core.runtime import runtime
        rt = runtime()
        prof = cProfile.Profile()
        rt.query_once("profiler(_, cputime)")
        prof.enable()
        r = fn(workload, n, w)
        prof.disable()
        rt.query_once("profiler(_, false)")
        text = rt.query_once(
            "with_output_to(string(S), show_profile([top(40), cumulative(false)]))")["S"]
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(30)
        OUT.mkdir(parents=True, exist_ok=True)
        stem = OUT / f"allpairs_profile_{workload}_{path}"
        Path(f"{stem}_python.txt").write_text(buf.getvalue())
        Path(f"{stem}_prolog.txt").write_text(text)
        r["profile_files"] = [f"{stem}_python.txt", f"{stem}_prolog.txt"]
    r["events_per_s"] = n / r["seconds"]
    r["events_per_cpu_s"] = n / r["cpu_seconds"]
    r["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return r


def machine() -> dict:
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    try:
        from epsparql.core.swipl import swipl_executable
        exe = swipl_executable()
    except ImportError:                 # a tree of before the janus bridge (pyswip)
        exe = "swipl"
    swipl = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "swipl": swipl, "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--window", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="runs per path and workload (median)")
    ap.add_argument("--workloads", default="seq2,seq3")
    ap.add_argument("--paths", default=",".join(PATHS))
    ap.add_argument("--quick", action="store_true", help="N = 20,000, 1 repeat")
    ap.add_argument("--profile", action="store_true",
                    help="one profiled run per path and workload, to bench/out/")
    ap.add_argument("--out", type=Path, default=OUT / "allpairs.json")
    ap.add_argument("--child", nargs=3, metavar=("PATH", "WORKLOAD", "PROFILE"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.n, args.repeat = 20_000, 1
    if args.child:
        path, workload, profile = args.child
        print(json.dumps(child(path, workload, args.n, args.window, profile == "1")))
        return
    paths = args.paths.split(",")
    unknown = [p for p in paths if p not in PATHS]
    if unknown:
        ap.error(f"unknown path(s) {unknown}; known: {list(PATHS)}")
    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
          f"{info['swipl']}; commit {info['commit']}; load average {os.getloadavg()[0]:.2f}",
          flush=True)
    print(f"N = {args.n:,} events, W = {args.window:,} s, {KEYS} keys, "
          f"median of {args.repeat} run(s) each, paths back to back", flush=True)
    runs: list[dict] = []
    for workload in args.workloads.split(","):
        for rep in range(1 if args.profile else args.repeat):
            order = paths if rep % 2 == 0 else paths[::-1]
            for path in order:
                load = os.getloadavg()[0]
                cmd = [sys.executable, str(Path(__file__).resolve()), "--n", str(args.n),
                       "--window", str(args.window), "--child", path, workload,
                       "1" if args.profile else "0"]
                p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
                if p.returncode != 0:
                    print(p.stderr, file=sys.stderr)
                    raise SystemExit(f"{path} {workload} failed")
                r = json.loads(p.stdout.strip().splitlines()[-1])
                r.update(path=path, workload=workload, repeat=rep, loadavg_before=load)
                runs.append(r)
    print(f"\n{'workload':8s} {'path':14s} {'answers':>10s} {'per event':>9s} "
          f"{'events/s':>10s} {'ev/s CPU':>10s} {'peak MB':>8s}")
    for workload in args.workloads.split(","):
        counts = set()
        for path in paths:
            rs = [r for r in runs if r["workload"] == workload and r["path"] == path]
            med = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
            counts.update(r["answers"] for r in rs)
            print(f"{workload:8s} {path:14s} {rs[0]['answers']:10,d} "
                  f"{rs[0]['answers'] / args.n:9.2f} {med('events_per_s'):10,.0f} "
                  f"{med('events_per_cpu_s'):10,.0f} {max(r['peak_rss_mb'] for r in rs):8.0f}")
        if len(counts) != 1:
            print(f"  ANSWER COUNTS DIFFER for {workload}: {sorted(counts)}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": info, "n": args.n, "window": args.window,
                                    "runs": runs}, indent=1))
    print(f"\nruns written to {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
