"""All-pairs workloads: answer-heavy streams, every pair (or triple) reported.

    .venv/bin/python bench/allpairs.py                  # N = 100,000, 3 repeats, every path
    .venv/bin/python bench/allpairs.py --quick          # N = 20,000, 1 repeat
    .venv/bin/python bench/allpairs.py --paths core-columns,engine --workloads seq2
    .venv/bin/python bench/allpairs.py --profile        # cProfile + SWI-Prolog's profiler

Stream (issue 14): 100 companies, one price per second (t = 1, 2, ...),
the company drawn at random, prices a mean-reverting AR(1) around a base
per company (seeded), so a price is higher than about half of the earlier
prices of its company.

Workloads, window W = 1,000 s:

* ``seq2``: a higher price after a lower one, every pair (about 4.9
  answers per event):
  core ``rise(K,P1,P2) <- price(K,P1) seq price(K,P2) where P2 > P1 within W``;
  EP-SPARQL ``{?k :price ?p1} SEQ {?k :price ?p2}
  FILTER (?p2 > ?p1 && getDURATION() <= "PT1000S"^^xsd:duration)``;
* ``seq3``: three rising prices, every triple:
  ``rise3(K,P1,P2,P3) <- (price(K,P1) seq price(K,P2) where P2 > P1) seq
  price(K,P3) where P3 > P2 within W`` and the EP-SPARQL query with a third
  SEQ.  The core counts every derivation (a bag: the same three prices
  over the same interval through two equal middle prices count twice);
  the Engine's answers are a set (EP-SPARQL's semantics), so it reports
  fewer; ``distinct`` (not timed) is the core's count without repeats,
  which must equal the Engine's.

Paths (each run in a fresh process, so peak memory is per run; only the
pushing and the delivery of answers is timed, input built beforehand and
frozen out of the cyclic garbage collector's reach):

* ``core``: CoreEngine.push_many + drain(), answers as Detection objects;
* ``core-columns``: CoreEngine.push_many_columns() + drain_columns():
  answers as columns (term ids per argument + start/end, docs/CORE.md),
  counted without building objects;
* ``engine``: Engine.push_many of rdflib triples + ``len(q.results())``
  after each batch, flush at the end: the EP-SPARQL path, answers as lazy
  Results (decoded when read; none is read here, as core-columns).

Per workload the paths run back to back in every repeat (the order
alternating), so the ratio Engine/CoreEngine of each repeat compares runs
under the same load; the table gives medians.  ``--trees A,B`` runs every
path in each of these source trees too (a directory holding ``epsparql/``
and ``prolog/``, e.g. a checkout of an older commit; ``.`` is this one),
back to back in each repeat: before/after pairs in one session.  Output: a table on
standard output and the results (bench/out/allpairs.json for quick runs,
bench/results/allpairs.json otherwise, or --out).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
from pathlib import Path
from typing import Callable

from harness import (OUT, Clock, describe, freeze, machine, peak_rss_mb, profiled, reset_hwm,
                     results_path, run_child, write_results)

KEYS = 100
BATCH = 5000
NS = "http://epsparql.org/ns#"

RULES = {
    "seq2": "rise(K,P1,P2) <- price(K,P1) seq price(K,P2) where P2 > P1 within {w}.",
    "seq3": "rise3(K,P1,P2,P3) <- (price(K,P1) seq price(K,P2) where P2 > P1) "
            "seq price(K,P3) where P3 > P2 within {w}.",
}
QUERIES = {
    "seq2": """PREFIX : <http://epsparql.org/ns#>
        SELECT ?k ?p1 ?p2 WHERE {{ ?k :price ?p1 }} SEQ {{ ?k :price ?p2 }}
        FILTER (?p2 > ?p1 && getDURATION() <= "PT{w}S"^^xsd:duration)""",
    "seq3": """PREFIX : <http://epsparql.org/ns#>
        SELECT ?k ?p1 ?p2 ?p3 WHERE {{ ?k :price ?p1 }} SEQ {{ ?k :price ?p2 }}
        SEQ {{ ?k :price ?p3 }}
        FILTER (?p2 > ?p1 && ?p3 > ?p2 && getDURATION() <= "PT{w}S"^^xsd:duration)""",
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
# paths: each takes (workload, n, window) and returns (the timed function,
# a function computing extra figures after timing, or None)

def _core_events(n: int) -> list:
    from epsparql.core import term
    names = [f"k{i}" for i in range(KEYS)]
    return [(term("price", names[k], p), t) for k, p, t in prices(n)]


def path_core(workload: str, n: int, w: int) -> tuple[Callable[[], int], None]:
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
    return run, None


def path_core_columns(workload: str, n: int, w: int) -> tuple[Callable[[], int], Callable]:
    """CoreEngine, answers as columns (push_many_columns)."""
    from epsparql.core import CoreEngine
    events = _core_events(n)

    def engine() -> CoreEngine:
        eng = CoreEngine(batch_size=BATCH)
        eng.add_rules(RULES[workload].format(w=w))
        return eng
    eng = engine()

    def run() -> int:
        count = 0
        for i in range(0, len(events), BATCH):
            eng.push_many_columns(events[i:i + BATCH])
            count += sum(map(len, eng.drain_columns()))
        return count

    def distinct() -> dict:
        """The answers without repeats, from a second run (not timed)."""
        again, seen = engine(), set()
        for i in range(0, len(events), BATCH):
            again.push_many_columns(events[i:i + BATCH])
            for c in again.drain_columns():
                seen.update(zip(*(c.column(i) for i in range(c.arity)), c.start, c.end))
        return {"distinct": len(seen)}
    return run, distinct


def path_engine(workload: str, n: int, w: int) -> tuple[Callable[[], int], None]:
    """Engine, the same query in EP-SPARQL (results() drained, counted)."""
    from rdflib import Literal, URIRef
    from epsparql import Engine
    keys = [URIRef(f"{NS}k{i}") for i in range(KEYS)]
    pred = URIRef(NS + "price")
    rows = [(keys[k], pred, Literal(p), t) for k, p, t in prices(n)]
    eng = Engine(batch_size=BATCH)
    q = eng.register(QUERIES[workload].format(w=w))

    def run() -> int:
        count = 0
        for i in range(0, len(rows), BATCH):
            eng.push_many(rows[i:i + BATCH])
            count += len(q.results())
        eng.flush()
        return count + len(q.results())
    return run, None


PATHS: dict[str, Callable[[str, int, int], tuple]] = {
    "core": path_core,
    "core-columns": path_core_columns,
    "engine": path_engine,
}


# ---------------------------------------------------------------------------
# the harness

def child(path: str, workload: str, n: int, w: int, profile: bool) -> dict:
    run, extra = PATHS[path](workload, n, w)
    freeze()
    reset_hwm()
    clock = Clock()
    r: dict = {}
    if profile:
        with clock:
            answers, files = profiled(run, OUT / f"allpairs_profile_{workload}_{path}")
        r["profile_files"] = files
    else:
        with clock:
            answers = run()
    r.update(answers=answers, seconds=clock.wall, cpu_seconds=clock.cpu,
             events_per_s=n / clock.wall, events_per_cpu_s=n / clock.cpu,
             peak_rss_mb=peak_rss_mb())
    if extra is not None:
        r.update(extra())
    return r


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
    ap.add_argument("--trees", default=".",
                    help="source trees to measure, comma-separated (default: this one)")
    ap.add_argument("--out", help="results JSON (default: see above)")
    ap.add_argument("--child", nargs=3, metavar=("PATH", "WORKLOAD", "PROFILE"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.quick:
        args.n, args.repeat = 20_000, 1
    if args.child:
        path, workload, profile = args.child
        print("RESULT " + json.dumps(child(path, workload, args.n, args.window, profile == "1")))
        return
    paths = args.paths.split(",")
    unknown = [p for p in paths if p not in PATHS]
    if unknown:
        ap.error(f"unknown path(s) {unknown}; known: {list(PATHS)}")
    info = machine()
    print(describe(info), flush=True)
    print(f"N = {args.n:,} events, W = {args.window:,} s, {KEYS} keys, "
          f"median of {args.repeat} run(s) each, paths back to back", flush=True)
    trees = [str(Path(t).resolve()) for t in args.trees.split(",")]
    runs: list[dict] = []
    for workload in args.workloads.split(","):
        for rep in range(1 if args.profile else args.repeat):
            pairs = [(tree, path) for tree in trees for path in paths]
            for tree, path in (pairs if rep % 2 == 0 else pairs[::-1]):
                cmd = [sys.executable, str(Path(__file__).resolve()), "--n", str(args.n),
                       "--window", str(args.window), "--child", path, workload,
                       "1" if args.profile else "0"]
                old = os.environ.get("PYTHONPATH")
                os.environ["PYTHONPATH"] = tree          # the child measures that tree
                try:
                    r, run = run_child(cmd, log=f"allpairs_{workload}_{path}")
                finally:
                    if old is None:
                        del os.environ["PYTHONPATH"]
                    else:
                        os.environ["PYTHONPATH"] = old
                r.update(path=path if len(trees) == 1 else f"{path}@{Path(tree).name}",
                         tree=tree, workload=workload, repeat=rep,
                         load_avg_before=run["load_avg_before"], load_avg_after=run["load_avg_after"],
                         maxrss_mb=run["maxrss_mb"])
                runs.append(r)
                print(f"  {workload} {r['path']:13s} repeat {rep}: {r['events_per_cpu_s']:,.0f} "
                      f"events per CPU s, load {run['load_avg_before']:.1f}", flush=True)
    if len(trees) > 1:
        paths = [f"{p}@{Path(t).name}" for t in trees for p in paths]
    print(f"\n{'workload':8s} {'path':13s} {'answers':>10s} {'per event':>9s} {'distinct':>10s} "
          f"{'events/s':>9s} {'ev/s CPU':>9s} {'peak MB':>8s} {'load':>9s}")
    summary: list[dict] = []
    for workload in args.workloads.split(","):
        for path in paths:
            rs = [r for r in runs if r["workload"] == workload and r["path"] == path]
            med = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
            loads = [r["load_avg_before"] for r in rs]
            row = {"workload": workload, "path": path, "answers": rs[0]["answers"],
                   "distinct": rs[0].get("distinct"), "events_per_s": med("events_per_s"),
                   "events_per_cpu_s": med("events_per_cpu_s"),
                   "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
                   "load": [min(loads), max(loads)]}
            summary.append(row)
            d = f"{row['distinct']:,}" if row["distinct"] is not None else ""
            print(f"{workload:8s} {path:13s} {row['answers']:10,d} {row['answers'] / args.n:9.2f} "
                  f"{d:>10s} {row['events_per_s']:9,.0f} {row['events_per_cpu_s']:9,.0f} "
                  f"{row['peak_rss_mb']:8.0f} {min(loads):4.1f}-{max(loads):.1f}")
        for tree in trees:
            suffix = "" if len(trees) == 1 else f"@{Path(tree).name}"
            if f"engine{suffix}" not in paths or f"core-columns{suffix}" not in paths \
                    or args.profile:
                continue
            ratios = []
            for rep in range(args.repeat):
                e = [r for r in runs if r["workload"] == workload and r["repeat"] == rep
                     and r["path"] == f"engine{suffix}"]
                c = [r for r in runs if r["workload"] == workload and r["repeat"] == rep
                     and r["path"] == f"core-columns{suffix}"]
                ratios.append(e[0]["events_per_cpu_s"] / c[0]["events_per_cpu_s"])
            ratio = statistics.median(ratios)
            summary.append({"workload": workload, "tree": tree,
                            "engine_over_core_columns_cpu": ratio, "per_repeat": ratios})
            print(f"{workload:8s} Engine/CoreEngine (columns){suffix}, events per CPU s, "
                  f"same-session pairs: median {ratio:.2f} ({', '.join(f'{x:.2f}' for x in ratios)})")
        engine = [r for r in runs if r["workload"] == workload and r["path"].startswith("engine")]
        distinct = [r["distinct"] for r in runs if r["workload"] == workload and r.get("distinct")]
        if engine and distinct and {r["answers"] for r in engine} != set(distinct):
            print(f"  ANSWERS DIFFER for {workload}: Engine {sorted({r['answers'] for r in engine})}"
                  f", core distinct {sorted(set(distinct))}")
    dest = results_path("allpairs", args.quick or args.profile, args.out)
    write_results({"machine": info, "n": args.n, "window": args.window, "trees": trees,
                   "summary": summary, "runs": runs}, dest, indent=1)


if __name__ == "__main__":
    main()
