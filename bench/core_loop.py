"""The core's own per-event cost: issue 14's all-pairs workloads with a
detection sink that does nothing.

    .venv/bin/python bench/core_loop.py                        # seq2 and seq3, N = 100,000, 3 repeats
    .venv/bin/python bench/core_loop.py --trees /work/main,.   # before/after pairs in one session
    .venv/bin/python bench/core_loop.py --profile --workloads seq2   # SWI-Prolog's profiler

What bench/allpairs.py's ``core-columns`` path spends in the engine,
without the answers' crossing to Python: bench/core_loop_driver.pl, run by
the bridge's ``swipl`` in a fresh process per run, reads the stream of
allpairs.py (the same rules, W = 1,000 s) as ``e(price(K, P), T, T)``
terms, then times only ``engine_events/2`` per batch of 5,000 under
``with_detection_sink/2`` with a sink that does nothing.  A second,
untimed engine counts the answers (they must agree across trees).  The
trees of ``--trees`` run back to back in every repeat, their order
alternating; the table gives medians of events per CPU second.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from harness import OUT, describe, machine, results_path, run_child, swipl_executable, write_results

sys.path.insert(0, str(Path(__file__).resolve().parent))
from allpairs import RULES, prices  # noqa: E402  (the same stream and rules)

DRIVER = Path(__file__).resolve().parent / "core_loop_driver.pl"


def events_file(n: int) -> Path:
    """allpairs.py's stream as Prolog terms (made once per N)."""
    path = OUT / f"core_loop_{n}.pl"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as f:
            for k, p, t in prices(n):
                f.write(f"e(price(k{k}, {p!r}), {t}, {t}).\n")
    return path


def run(tree: Path, workload: str, efile: Path, window: int, batch: int, how: str) -> dict:
    core = str(tree / "prolog" / "epsparql_core")
    res, info = run_child([swipl_executable(), str(DRIVER), core, RULES[workload].format(w=window),
                           str(efile), str(batch), how], log=f"core_loop_{workload}")
    res.update(load=info["load_avg_before"])
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--window", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workloads", type=lambda s: s.split(","), default=["seq2", "seq3"])
    ap.add_argument("--trees", type=lambda s: [Path(x).resolve() for x in s.split(",")],
                    default=[Path(__file__).resolve().parent.parent])
    ap.add_argument("--profile", action="store_true", help="print SWI-Prolog's profile (first tree)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = machine()
    print(describe(info))
    efile = events_file(args.n)
    if args.profile:
        for w in args.workloads:
            run(args.trees[0], w, efile, args.window, args.batch, "profile")
            print((OUT / "logs" / f"core_loop_{w}.out").read_text())
        return
    rows = []
    for w in args.workloads:
        runs: dict[Path, list[dict]] = {t: [] for t in args.trees}
        for i in range(args.repeat):
            for t in (args.trees if i % 2 == 0 else args.trees[::-1]):
                runs[t].append(run(t, w, efile, args.window, args.batch, "run"))
        for t in args.trees:
            rs = runs[t]
            answers = {r["answers"] for r in rs}
            cpu = statistics.median(r["events"] / r["cpu_s"] for r in rs)
            rows.append({"workload": w, "tree": str(t), "answers": sorted(answers),
                         "events_per_cpu_s": round(cpu), "us_per_event": round(1e6 / cpu, 2),
                         "events_per_s": round(statistics.median(r["events"] / r["wall_s"] for r in rs)),
                         "peak_mb": round(max(r["peak_rss_kb"] for r in rs) / 1024, 1),
                         "load": [r["load"] for r in rs]})
    print("| workload | tree | answers | events/s CPU | µs/event | events/s wall | peak MB | load |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['workload']} | {r['tree']} | {','.join(map(str, r['answers']))} | "
              f"{r['events_per_cpu_s']:,} | {r['us_per_event']} | {r['events_per_s']:,} | "
              f"{r['peak_mb']} | {min(r['load']):.1f}–{max(r['load']):.1f} |")
    write_results({"machine": info, "n": args.n, "window": args.window, "rows": rows},
                  results_path("core_loop", args.n < 100_000, args.out))


if __name__ == "__main__":
    main()
