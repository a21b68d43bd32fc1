#!/usr/bin/env python
"""The language path against the core path, on the same workloads.

    .venv/bin/python bench/language.py               # N = 200,000, 5 repeats (~3 min on 2 cores)
    .venv/bin/python bench/language.py --quick       # N = 50,000, 3 repeats, results to bench/out/
    .venv/bin/python bench/language.py --profile     # cProfile + SWI-Prolog profiler, to bench/out/

Workloads (100 keys, one price per second, seeded, prices as in
bench/seq2.py: mean-reverting with rare +6..12% spikes):

* seq2: ``?k :price ?p1`` SEQ ``?k :price ?p2`` with ``?p2 > ?p1 * 1.05``
  within W seconds, against the core rule
  ``rise(K,P1,P2) <- price(K,P1) seq price(K,P2) where P2 > P1*1.05 within W``;
* query (1) of the paper (fall below 70% then rise above 105% within W),
  against the same pattern written as a core rule.

Language path: EP-SPARQL text -> parse -> algebra -> rules; rdflib triples
pushed with Engine.push_many (encoding every term), answers decoded into
rdflib bindings.  Core path: CoreEngine with the hand-written rule, events
``price(Key, Price)`` pushed with push_many.  Both time only the pushing
(and answer delivery), wall clock and CPU (process time: Python and the
embedded Prolog), and the part of the wall time spent inside Prolog calls.
Each run is a fresh process; the input is built first and frozen out of
the cyclic garbage collector's reach (gc.freeze(), both paths).  Every
repeat runs both paths of a workload back to back (alternating which goes
first), so each ratio core/language compares runs under the same load; the
medians over the repeats are reported (the target is <= 1.5).
"""
from __future__ import annotations

import argparse
import functools
import gc
import json
import math
import random
import re
import resource
import sys
import time
from pathlib import Path

from harness import (OUT, ROOT, describe, machine, median, results_path, run_child,
                     write_results)

sys.path.insert(0, str(ROOT))

NS = "http://epsparql.org/ns#"


def prices(n: int, keys: int = 100, seed: int = 1):
    """(key index, price, t) rows: AR(1) log-prices around a base, rare spikes."""
    rnd = random.Random(seed)
    base = [rnd.uniform(20, 200) for _ in range(keys)]
    dev = [0.0] * keys
    sd = 0.01 * math.sqrt(1 - 0.81)
    for t in range(1, n + 1):
        k = rnd.randrange(keys)
        dev[k] = 0.9 * dev[k] + rnd.gauss(0, sd)
        p = base[k] * math.exp(dev[k])
        if rnd.random() < 0.002:
            p *= 1 + rnd.uniform(0.06, 0.12)
        yield k, round(p, 2), t


QUERIES = {
    "seq2": """PREFIX : <{ns}>
        SELECT ?k ?p1 ?p2 WHERE {{ ?k :price ?p1 }} SEQ {{ ?k :price ?p2 }}
        FILTER (?p2 > ?p1 * 1.05 && getDURATION() <= "PT{w}S"^^xsd:duration)""",
    "query1": """PREFIX : <{ns}>
        SELECT ?k WHERE {{ ?k :price ?p1 }} SEQ {{ ?k :price ?p2 }} SEQ {{ ?k :price ?p3 }}
        FILTER (?p2 < ?p1 * 0.7 && ?p3 > ?p1 * 1.05 && getDURATION() <= "PT{w}S"^^xsd:duration)""",
}
RULES = {
    "seq2": "rise(K,P1,P2) <- price(K,P1) seq price(K,P2) where P2 > P1 * 1.05 within {w}.",
    "query1": "crash(K) <- (price(K,P1) seq price(K,P2) where P2 < P1 * 0.7) "
              "seq price(K,P3) where P3 > P1 * 1.05 within {w}.",
}
BATCH = 5000


class _PrologClock:
    """Wall time spent inside Prolog calls (the bridge's one entry point)."""

    def __init__(self) -> None:
        from epsparql.core.runtime import runtime
        self.rt = runtime()
        self.seconds = 0.0
        self.calls = 0
        inner = self.rt.call

        def call(name, *args):
            t = time.perf_counter()
            try:
                return inner(name, *args)
            finally:
                self.seconds += time.perf_counter() - t
                self.calls += 1
        self.rt.call = call


_PROFILERS: list = []       # (start, stop) around the timed section, with --profile


def _timed(push_all) -> dict:
    clock = _PrologClock()
    gc.collect()
    gc.freeze()
    if _PROFILERS:
        _PROFILERS[0]()
    w0, c0 = time.perf_counter(), time.process_time()
    # run through a C function that nothing else calls, so that
    # --instructions can count this section alone (callgrind --toggle-collect)
    answers = functools.reduce(lambda acc, _: push_all(), (0,), 0)
    w1, c1 = time.perf_counter(), time.process_time()
    if _PROFILERS:
        _PROFILERS[1]()
    return {"seconds": w1 - w0, "cpu_seconds": c1 - c0, "prolog_seconds": clock.seconds,
            "answers": answers}


def run_language(workload: str, n: int, w: int) -> dict:
    from rdflib import Literal, URIRef
    from epsparql.query_engine import Engine
    keys = [URIRef(f"{NS}k{i}") for i in range(100)]
    pred = URIRef(NS + "price")
    rows = [(keys[k], pred, Literal(p), t) for k, p, t in prices(n)]
    eng = Engine()
    q = eng.register(QUERIES[workload].format(ns=NS, w=w))

    def push_all() -> int:
        answers = 0
        for i in range(0, len(rows), BATCH):
            eng.push_many(rows[i:i + BATCH])
            answers += len(q.results())
        eng.flush()
        return answers + len(q.results())
    return _timed(push_all)


def run_core(workload: str, n: int, w: int) -> dict:
    from epsparql.core import CoreEngine, term
    events = [(term("price", f"k{k}", p), t) for k, p, t in prices(n)]
    eng = CoreEngine()
    eng.add_rules(RULES[workload].format(w=w))

    def push_all() -> int:
        answers = 0
        for i in range(0, len(events), BATCH):
            eng.push_many(events[i:i + BATCH])
            answers += len(eng.drain())
        return answers
    return _timed(push_all)


def child(mode: str, workload: str, n: int, w: int, profile: bool) -> dict:
    run = run_language if mode == "language" else run_core
    if not profile:
        r = run(workload, n, w)
    else:
        import cProfile
        import io
        import pstats

        from epsparql.core.runtime import runtime
        rt = runtime()
        prof = cProfile.Profile()

        def start() -> None:
            rt.query_once("profiler(_, cputime)")
            prof.enable()

        def stop() -> None:
            prof.disable()
            rt.query_once("profiler(_, false)")
        _PROFILERS[:] = [start, stop]
        r = run(workload, n, w)
        text = rt.query_once(
            "with_output_to(string(S), show_profile([top(40), cumulative(false)]))")["S"]
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(30)
        OUT.mkdir(parents=True, exist_ok=True)
        stem = OUT / f"language_profile_{workload}_{mode}"
        Path(f"{stem}_python.txt").write_text(buf.getvalue())
        Path(f"{stem}_prolog.txt").write_text(text)
        r["profile_files"] = [f"{stem}_python.txt", f"{stem}_prolog.txt"]
    r["events_per_s"] = n / r["seconds"]
    r["events_per_cpu_s"] = n / r["cpu_seconds"]
    r["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return r


def run_mode(args: argparse.Namespace, mode: str, workload: str, profile: bool = False,
             n: int | None = None, valgrind: bool = False) -> dict:
    """One path of one workload in a fresh process (under callgrind with
    ``valgrind``: the instructions of the timed section)."""
    n = args.n if n is None else n
    cmd = [sys.executable, __file__, "--n", str(n), "--window", str(args.window),
           "--child", mode, workload] + (["--profile"] if profile else [])
    if valgrind:
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               "--collect-atstart=no", "--toggle-collect=functools_reduce"] + cmd
    tag = f"language_{mode}_{workload}"
    out, run = run_child(cmd, log=tag)
    if valgrind:
        m = re.search(r"Collected\s*:\s*(\d+)", (OUT / "logs" / f"{tag}.err").read_text())
        if m is None:
            raise RuntimeError("no instruction count from callgrind (see bench/out/logs/)")
        out["instructions"] = int(m.group(1))
        out["instructions_per_event"] = int(m.group(1)) / n
    out["load_avg_before"], out["load_avg_after"] = run["load_avg_before"], run["load_avg_after"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--window", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5, help="runs of each path per workload (default 5)")
    ap.add_argument("--workloads", default="seq2,query1")
    ap.add_argument("--quick", action="store_true", help="N = 50,000, 3 repeats, results to bench/out/")
    ap.add_argument("--profile", action="store_true",
                    help="one profiled run of each path and workload (cProfile and SWI-Prolog's "
                         "profiler, to bench/out/language_profile_*.txt)")
    ap.add_argument("--instructions", type=int, nargs="?", const=20_000, metavar="N",
                    help="count the instructions of the timed section instead (valgrind's callgrind, "
                         "N events, default 20,000; deterministic, unlike times on a shared machine; "
                         "~1 minute per run)")
    ap.add_argument("--out", help="results file (default bench/results/language.json; "
                                  "bench/out/language.json with --quick)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.n, args.window, args.profile)))
        return 0
    if args.quick:
        args.n, args.repeat = 50_000, 3
    workloads = args.workloads.split(",")
    info = machine()
    print(describe(info))
    if args.instructions:
        rows = []
        for workload in workloads:
            row = {"workload": workload, "n": args.instructions, "window": args.window}
            for mode in ("core", "language"):
                r = run_mode(args, mode, workload, n=args.instructions, valgrind=True)
                row[mode] = {"instructions_per_event": round(r["instructions_per_event"]),
                             "answers": r["answers"]}
            row["ratio"] = row["language"]["instructions_per_event"] / row["core"]["instructions_per_event"]
            rows.append(row)
            print(f"{workload:7} N={args.instructions:,}: core {row['core']['instructions_per_event']:,} "
                  f"instructions/event, language {row['language']['instructions_per_event']:,}: "
                  f"language/core {row['ratio']:.2f}")
        if args.out:
            write_results({"machine": info, "instructions": rows}, Path(args.out))
        return 0
    if args.profile:
        for workload in workloads:
            for mode in ("core", "language"):
                r = run_mode(args, mode, workload, profile=True)
                print(f"{workload:7} {mode:8} {r['events_per_s']:>9,.0f} ev/s under the profilers: "
                      + ", ".join(r["profile_files"]))
        return 0
    results = []
    for workload in workloads:
        runs = []
        for rep in range(args.repeat):
            order = ("core", "language") if rep % 2 == 0 else ("language", "core")
            pair = {mode: run_mode(args, mode, workload) for mode in order}
            pair["ratio"] = pair["core"]["events_per_s"] / pair["language"]["events_per_s"]
            pair["cpu_ratio"] = pair["core"]["events_per_cpu_s"] / pair["language"]["events_per_cpu_s"]
            runs.append(pair)
            c, l = pair["core"], pair["language"]
            print(f"{workload:7} #{rep + 1}: core {c['events_per_s']:>9,.0f} ev/s "
                  f"({c['events_per_cpu_s']:>9,.0f}/CPU s, Prolog {c['prolog_seconds']:.2f} of "
                  f"{c['seconds']:.2f} s)  language {l['events_per_s']:>9,.0f} ev/s "
                  f"({l['events_per_cpu_s']:>9,.0f}/CPU s, Prolog {l['prolog_seconds']:.2f} of "
                  f"{l['seconds']:.2f} s)  core/language {pair['ratio']:.2f} (CPU {pair['cpu_ratio']:.2f})"
                  f"  load {c['load_avg_before']:.2f}")
        answers = {runs[0]["core"]["answers"], runs[0]["language"]["answers"]}
        if len({r[m]["answers"] for r in runs for m in ("core", "language")}) != 1:
            raise SystemExit(f"{workload}: the paths disagree on the answers: {answers}")
        summary = {"workload": workload, "n": args.n, "window": args.window, "repeats": args.repeat,
                   "answers": runs[0]["core"]["answers"]}
        for mode in ("core", "language"):
            summary[mode] = {k: median([r[mode][k] for r in runs])
                             for k in ("events_per_s", "events_per_cpu_s", "seconds", "cpu_seconds",
                                       "prolog_seconds", "peak_rss_mb")}
        summary["ratio_median"] = median([r["ratio"] for r in runs])
        summary["cpu_ratio_median"] = median([r["cpu_ratio"] for r in runs])
        summary["load_avg"] = [r["core"]["load_avg_before"] for r in runs]
        summary["runs"] = runs
        results.append(summary)
        print(f"{workload:7} median: core {summary['core']['events_per_s']:,.0f} ev/s, language "
              f"{summary['language']['events_per_s']:,.0f} ev/s; core/language {summary['ratio_median']:.2f} "
              f"wall, {summary['cpu_ratio_median']:.2f} CPU")
    write_results({"machine": info, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "results": results}, results_path("language", args.quick, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
