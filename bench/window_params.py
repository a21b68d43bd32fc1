"""The SECRET parameters' cost: one C-SPARQL query under each setting (issue 23).

    .venv/bin/python bench/window_params.py           # N = 200,000 per setting
    .venv/bin/python bench/window_params.py --quick   # N = 20,000 (results under bench/out/)

The stream and the sliding average of bench/windowed.py (100 keys, 1,000
events per second of stream time, ``[RANGE 10s STEP 1s]``, GROUP BY the
key), registered with each setting of docs/DIALECTS.md's "The SECRET
parameters": the default (t0 = 0, [o,c), close,non-empty: kept per
pane), t0 = first and content (o,c] (re-scanned at each close: no panes),
report close (empty windows too), periodic(2s), change (at each arrival
instant, over (t - 10 s, t]) and change with a tuple-driven tick (after
each event; N/20 events: it evaluates once per event).  Each in a fresh
process (bench/harness.py), timed as bench/windowed.py times it; printed:
events/s (wall and CPU), answers, peak RSS, and the load average around
each run.  Results: bench/results/window_params.json.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (Clock, describe, freeze, machine, peak_rss_mb, reset_hwm,  # noqa: E402
                     results_path, run_child, write_results)
from windowed import STREAM, batches, query_text  # noqa: E402

#: (name, register keywords, share of N)
SETTINGS: list[tuple[str, dict[str, str], float]] = [
    ("default", {}, 1),
    ("t0=first", {"window_t0": "first"}, 1),
    ("content=(o,c]", {"window_content": "(o,c]"}, 1),
    ("report=close", {"window_report": "close"}, 1),
    ("report=periodic(2s)", {"window_report": "periodic(2s)"}, 1),
    ("report=change", {"window_report": "change"}, 0.25),
    ("report=change tick=tuple", {"window_report": "change", "window_tick": "tuple"}, 0.05),
]


def measure(name: str, n: int) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from epsparql import Engine
    kw = next(k for s, k, _ in SETTINGS if s == name)
    with Engine(reasoning="none") as eng:
        q = eng.register(query_text("avg", 10), **kw)
        freeze()
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
    return {"setting": name, "n": n, "incremental": q.incremental,
            "events_per_s": round(n / clock.wall), "events_per_cpu_s": round(n / clock.cpu),
            "answers": answers, "peak_rss_mb": peak if reset else None}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200_000, help="events per run")
    ap.add_argument("--quick", action="store_true", help="N = 20,000 (results under bench/out/)")
    ap.add_argument("--out", help="results file (default bench/results/window_params.json)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print("RESULT " + json.dumps(measure(*json.loads(a.child))))
        return
    n = 20_000 if a.quick else a.n
    info = machine(benchmark="window_params")
    print(describe(info))
    results = []
    for name, _, share in SETTINGS:
        m = max(1000, int(n * share) // 5000 * 5000 or 5000)
        r, run = run_child([sys.executable, __file__, "--child", json.dumps([name, m])],
                           log=f"window_params-{name}")
        r.update(load_before=run["load_avg_before"], load_after=run["load_avg_after"])
        results.append(r)
        print(json.dumps(r), flush=True)
    print("| setting | N | per pane | events/s | events/s CPU | answers | peak RSS MB | load |")
    print("|---|---:|---|---:|---:|---:|---:|---|")
    for r in results:
        print(f"| {r['setting']} | {r['n']:,} | {'yes' if r['incremental'] else 'no'} | "
              f"{r['events_per_s']:,} | {r['events_per_cpu_s']:,} | {r['answers']:,} | "
              f"{r['peak_rss_mb']} | {r['load_before']}–{r['load_after']} |")
    write_results({"machine": info, "results": results},
                  results_path("window_params", a.quick, a.out), indent=1)


if __name__ == "__main__":
    main()
