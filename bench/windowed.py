"""Windowed aggregation over a stream, through the Python API (issue 13).

    .venv/bin/python bench/windowed.py            # full run (N = 1,000,000; ~10 min on 2 cores)
    .venv/bin/python bench/windowed.py --quick    # smoke run (N = 50,000)

Stream: 100 keys ``ex:k0`` … ``ex:k99``; event i is ``ex:k(i mod 100)
ex:price P`` at t = i / rate seconds (rate 1,000 events per second of
stream time), P drawn from 10,000 integer prices (seeded), on the named
stream ``ex:stock``.  Queries, in C-SPARQL, registered with
``Engine.register`` (the dialect detected):

- tumbling count: ``SELECT (COUNT(*) AS ?n) … [RANGE 1s TUMBLING]``
- sliding average: ``SELECT ?k (AVG(?p) AS ?avg) … [RANGE Ws STEP 1s] …
  GROUP BY ?k`` for the window-size sweep W = 1, 10, 60, 300, 900 s
  (10 steps per window at W = 10), with its aggregates kept per pane
  (the default), and for the small windows also re-scanned at each step
  (``Engine(incremental_windows=False)``), the evaluation before panes;
- memory in the stream length: the sliding average at W = 10 over N/4,
  N/2 and N events.

Each configuration runs in a fresh process (bench/harness.py's
``run_child``).  Rows are built batch by batch (5,000, one Prolog
crossing each) outside the timed section; the timed section is
``push_many(rows, stream=…)`` plus draining the answers with
``results()``, then ``flush()``.  Printed per run: events/s (wall clock)
and events/s per CPU second (process time, Python and the embedded
Prolog), answers, the window content at the end, and memory: the peak
RSS while pushing (the kernel's high-water mark, reset just before) and
its growth over the RSS before pushing; the load average around each run
(harness ``machine()`` and ``run_child``; a run that started above 1.8 is
marked "under load": the benchmark's own previous run keeps the 1-minute
load average near 1 on its own).  Results: bench/results/windowed.json;
bench/README.md holds the figures.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (Clock, describe, freeze, machine, peak_rss_mb, proc_status_kb,  # noqa: E402
                     reset_hwm, results_path, run_child, write_results)

EX = "http://example.org/"
STREAM = EX + "stock"
RATE = 1000          # events per second of stream time
KEYS = 100
BATCH = 5000


# ------------------------------------------------------------------- stream

def batches(n: int, seed: int = 1) -> Iterator[list[tuple]]:
    """The stream, BATCH rows ``(s, p, o, t)`` at a time."""
    from rdflib import Literal, URIRef
    rnd = random.Random(seed)
    keys = [URIRef(f"{EX}k{i}") for i in range(KEYS)]
    price = URIRef(EX + "price")
    prices = [Literal(p) for p in range(1, 10001)]
    for start in range(0, n, BATCH):
        yield [(keys[i % KEYS], price, prices[rnd.randrange(10000)], i / RATE)
               for i in range(start, min(n, start + BATCH))]


def query_text(kind: str, width: int = 10) -> str:
    if kind == "count":
        return (f"REGISTER QUERY tumblingCount AS PREFIX ex: <{EX}>\n"
                f"SELECT (COUNT(*) AS ?n) FROM STREAM <{STREAM}> [RANGE 1s TUMBLING]\n"
                f"WHERE {{ ?k ex:price ?p }}")
    return (f"REGISTER QUERY slidingAverage AS PREFIX ex: <{EX}>\n"
            f"SELECT ?k (AVG(?p) AS ?avg) FROM STREAM <{STREAM}> [RANGE {width}s STEP 1s]\n"
            f"WHERE {{ ?k ex:price ?p }} GROUP BY ?k")


# ------------------------------------------------------------------ measure

def measure(kind: str, n: int, width: int, incremental: bool) -> dict[str, Any]:
    """One configuration, in this process."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from epsparql import Engine
    with Engine(reasoning="none", incremental_windows=incremental) as eng:
        q = eng.register(query_text(kind, width))
        assert q.incremental == incremental
        freeze()
        rss_before = proc_status_kb("VmRSS")
        reset = reset_hwm()
        clock = Clock()
        answers = 0
        for rows in batches(n):
            with clock:
                eng.push_many(rows, stream=STREAM)
                answers += len(q.results())
        with clock:
            eng.flush()
            answers += len(q.results())
        peak = peak_rss_mb()
        content = eng.window_stats()["content"]
        errors = len(eng.errors)
    return {"kind": kind, "n": n, "width": width, "incremental": incremental,
            "events_per_s": round(n / clock.wall), "events_per_cpu_s": round(n / clock.cpu),
            "wall_s": round(clock.wall, 2), "cpu_s": round(clock.cpu, 2), "answers": answers,
            "content_at_end": content, "errors": errors,
            "peak_rss_mb": peak if reset else None,
            "rss_growth_mb": round(peak - rss_before / 1024, 1) if reset else None}


def run_isolated(kind: str, n: int, width: int, incremental: bool) -> dict[str, Any]:
    """One configuration in a fresh process (so that peak memory is its own),
    with the load average around it."""
    res, run = run_child([sys.executable, __file__, "--child",
                          json.dumps([kind, n, width, incremental])],
                         log=f"windowed-{kind}-{width}-{n}-{'panes' if incremental else 'rescan'}")
    res.update(load_before=run["load_avg_before"], load_after=run["load_avg_after"],
               under_load=run["load_avg_before"] > 1.8)
    return res


# ------------------------------------------------------------------ the run

def configurations(n: int) -> list[tuple[str, int, int, bool]]:
    """(kind, events, window width, incremental) in the order they run."""
    small = min(n, 200_000)
    out = [("count", n, 1, True), ("avg", n, 10, True)]
    out += [("avg", n, w, True) for w in (1, 60, 300, 900)]
    out += [("avg", small, w, False) for w in (1, 10, 60)]
    out += [("avg", n // 4, 10, True), ("avg", n // 2, 10, True)]
    return out


def report(results: list[dict[str, Any]]) -> str:
    lines = ["| query | W | incremental | N | events/s | events/s CPU | answers | content | "
             "peak RSS MB | growth MB | load |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        name = "tumbling count" if r["kind"] == "count" else "sliding average"
        load = f"{r['load_before']}–{r['load_after']}" + (" (under load)" if r["under_load"] else "")
        lines.append(f"| {name} | {r['width']} s | {'yes' if r['incremental'] else 're-scan'} | "
                     f"{r['n']:,} | {r['events_per_s']:,} | {r['events_per_cpu_s']:,} | "
                     f"{r['answers']:,} | {r['content_at_end']:,} | {r['peak_rss_mb']} | "
                     f"{r['rss_growth_mb']} | {load} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="events per run")
    ap.add_argument("--quick", action="store_true", help="N = 50,000 (results under bench/out/)")
    ap.add_argument("--out", help="results file (default bench/results/windowed.json)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print("RESULT " + json.dumps(measure(*json.loads(a.child))))
        return
    n = 50_000 if a.quick else a.n
    info = machine(benchmark="windowed")
    print(describe(info))
    results = []
    for cfg in configurations(n):
        r = run_isolated(*cfg)
        results.append(r)
        print(json.dumps(r), flush=True)
    print(report(results))
    write_results({"machine": info, "results": results}, results_path("windowed", a.quick, a.out),
                  indent=1)


if __name__ == "__main__":
    main()
