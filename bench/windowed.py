"""Windowed aggregation over a stream, through the Python API (issue 13).

    .venv/bin/python bench/windowed.py            # full run (N = 1,000,000; ~10 min on 2 cores)
    .venv/bin/python bench/windowed.py --quick    # smoke run (N = 50,000)

Stream: 100 keys ``ex:k0`` … ``ex:k99``; event i is ``ex:k(i mod 100)
ex:price P`` at t = i / rate seconds (rate 1,000 events per second of
stream time), P drawn from 10,000 integer prices (seeded).  Queries, in
C-SPARQL (registered through ``epsparql.windowed.WindowEngine``):

- tumbling count: ``SELECT (COUNT(*) AS ?n) … [RANGE 1s TUMBLING]``
- sliding average: ``SELECT ?k (AVG(?p) AS ?avg) … [RANGE Ws STEP 1s] …
  GROUP BY ?k`` for the window-size sweep W = 1, 10, 60, 300, 900 s
  (10 steps per window at W = 10), with its aggregates kept per pane
  (the default), and for the small windows also re-scanned at each step
  (``WindowEngine(incremental=False)``), the evaluation before panes;
- memory in the stream length: the sliding average at W = 10 over N/4,
  N/2 and N events.

Each configuration runs in a fresh process.  Rows are built batch by
batch (5,000, one Prolog crossing each) outside the timed section; the
timed section is ``push_many`` plus draining the answers with
``results()``, then ``flush()``.  Printed per run: events/s (wall clock)
and events/s per CPU second (process time, Python and the embedded
Prolog), answers, the window content at the end, and memory: the peak
RSS while pushing (the kernel's high-water mark, reset just before) and
its growth over the RSS before pushing.  The machine (CPU, cores, RAM,
kernel, Python, SWI-Prolog) and the load average around each run are
recorded; a run that started with a load average above 1.8 is marked
"under load" (the benchmark's own previous run keeps the 1-minute load
average near 1 on its own).  Results: bench/results/windowed.json; bench/README.md
holds the figures.

The functions are small so that the benchmark can move onto a shared
harness: ``machine()``, ``batches()``, ``query_text()``, ``measure()``
(one configuration in this process), ``run_isolated()`` (in a child),
``configurations()``, ``report()``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
EX = "http://example.org/"
STREAM = EX + "stock"
RATE = 1000          # events per second of stream time
KEYS = 100
BATCH = 5000


# ------------------------------------------------------------------ machine

def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    info: dict[str, Any] = {"python": platform.python_version(), "kernel": platform.release(),
                            "cores": os.cpu_count()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["ram_gb"] = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        from pyswip import Prolog
        from epsparql.core.runtime import runtime
        runtime()
        v = list(Prolog.query("current_prolog_flag(version, V)"))[0]["V"]
        info["swipl"] = f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    except Exception:                                     # pragma: no cover
        pass
    return info


def load_average() -> float:
    return os.getloadavg()[0]


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

def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def measure(kind: str, n: int, width: int, incremental: bool) -> dict[str, Any]:
    """One configuration, in this process."""
    import gc

    from epsparql.windowed import WindowEngine
    load_before = load_average()
    with WindowEngine(reasoning="none", incremental=incremental) as eng:
        q = eng.register(query_text(kind, width))
        assert q.incremental == incremental
        gc.collect()
        rss_before = _rss_kb("VmRSS")
        reset = _reset_peak()
        wall = cpu = 0.0
        answers = 0
        for rows in batches(n):
            t0, c0 = time.perf_counter(), time.process_time()
            eng.push_many(rows, stream=STREAM)
            answers += len(q.results())
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        eng.flush()
        answers += len(q.results())
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        peak = _rss_kb("VmHWM")
        content = eng.stats()["content"]
        errors = len(eng.errors)
    return {"kind": kind, "n": n, "width": width, "incremental": incremental,
            "events_per_s": round(n / wall), "events_per_cpu_s": round(n / cpu),
            "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "answers": answers,
            "content_at_end": content, "errors": errors,
            "peak_rss_mb": round(peak / 1024, 1) if reset else None,
            "rss_growth_mb": round((peak - rss_before) / 1024, 1) if reset else None,
            "load_before": round(load_before, 2), "load_after": round(load_average(), 2),
            "under_load": load_before > 1.8}


def run_isolated(kind: str, n: int, width: int, incremental: bool) -> dict[str, Any]:
    """One configuration in a fresh process (so that peak memory is its own)."""
    args = [sys.executable, __file__, "--child", json.dumps([kind, n, width, incremental])]
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


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
    ap.add_argument("--quick", action="store_true", help="N = 50,000")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "windowed.json"))
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(measure(*json.loads(a.child))))
        return
    n = 50_000 if a.quick else a.n
    info = machine()
    print(json.dumps(info))
    results = []
    for cfg in configurations(n):
        r = run_isolated(*cfg)
        results.append(r)
        print(json.dumps(r), flush=True)
    print(report(results))
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps({"machine": info, "results": results,
                                       "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())},
                                      indent=1) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
