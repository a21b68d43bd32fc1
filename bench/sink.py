"""The answers' crossing alone: synthetic answers through the columns sink.

    .venv/bin/python bench/sink.py                              # this tree
    .venv/bin/python bench/sink.py --trees /work/main,.         # before/after pairs

N answers shaped like the all-pairs seq2 answers (five per event, the key
and the later price shared by the answers of one event; ``sink_driver.pl``)
go through ``bridge_columns:columns_sink/3`` inside one ``with_columns/3``
call and cross to a ``ColumnReceiver`` (chunks as Columns, no Detection
objects): shape ``core`` (an atom key and two floats: CoreEngine's
``rise(K, P1, P2)``) and ``engine`` (an IRI key and two literals
``n(V, DT, Lex)``: the Engine's head).  The loop without the sink is timed
too and subtracted: the figure is the sink, the buffers' crossing and the
chunks' decoding, per answer.  Each tree runs in a fresh child process
(PYTHONPATH), the trees back to back in every repeat, the order
alternating; the table gives medians.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness import describe, machine, peak_rss_mb, results_path, write_results

HERE = Path(__file__).resolve().parent
SHAPES = ("core", "engine")


def child(shape: str, n: int, rounds: int) -> dict:
    from epsparql.core.columns import ColumnReceiver, TermTable
    from epsparql.core.runtime import runtime
    rt = runtime()
    rt.query_once("use_module(F)", {"F": str(HERE / "sink_driver.pl")})
    rt.query_once(f"sink_driver:sink_dets({shape}, {n}, _Ds), nb_setval(bench_sink_ds, _Ds)")
    table = TermTable()
    out = {}
    for mode in ("none", "sink"):
        cpu = []
        for r in range(rounds + 1):          # the first round warms up
            rec = ColumnReceiver(table)
            c0 = time.process_time()
            rt.query_once(f"nb_getval(bench_sink_ds, _Ds), "
                          f"sink_driver:sink_run({mode}, bench_sink_{mode}, R, _Ds)", {"R": rec})
            dt = time.process_time() - c0
            got = sum(map(len, rec.chunks))
            assert got == (n if mode == "sink" else 0), got
            if r:
                cpu.append(dt)
        out[mode] = statistics.median(cpu)
    return {"shape": shape, "answers": n, "cpu_s": out["sink"] - out["none"],
            "loop_s": out["none"], "peak_mb": peak_rss_mb()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=500_000, help="answers per run")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds per child (median)")
    ap.add_argument("--repeat", type=int, default=3, help="children per tree and shape")
    ap.add_argument("--trees", default=".")
    ap.add_argument("--out", help="results JSON (default bench/out/sink.json)")
    ap.add_argument("--child", nargs=1, metavar="SHAPE", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print("RESULT " + json.dumps(child(args.child[0], args.n, args.rounds)))
        return
    info = machine()
    print(describe(info))
    trees = [os.path.abspath(t) for t in args.trees.split(",")]
    runs: dict[tuple[str, str], list[dict]] = {}
    for rep in range(args.repeat):
        for shape in SHAPES:
            order = trees if rep % 2 == 0 else trees[::-1]
            for tree in order:
                env = dict(os.environ, PYTHONPATH=tree)
                p = subprocess.run([sys.executable, __file__, "--child", shape, "--n", str(args.n),
                                    "--rounds", str(args.rounds)],
                                   env=env, capture_output=True, text=True, cwd=tree, timeout=3600)
                line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
                if line is None:
                    sys.exit(f"child failed ({tree}, {shape}):\n{p.stdout}\n{p.stderr}")
                r = json.loads(line[7:])
                r["load"] = os.getloadavg()[0]
                runs.setdefault((shape, tree), []).append(r)
                print(f"  {shape:6} {Path(tree).name:12} repeat {rep}: "
                      f"{r['cpu_s'] / r['answers'] * 1e6:.3f} µs per answer, load {r['load']:.1f}")
    print(f"\n{'shape':6} {'tree':20} {'answers':>9} {'µs/answer CPU':>14} {'answers/CPU s':>14} "
          f"{'peak MB':>8} {'load':>9}")
    rows = []
    for (shape, tree), rs in runs.items():
        us = statistics.median(r["cpu_s"] / r["answers"] * 1e6 for r in rs)
        loads = [r["load"] for r in rs]
        row = {"shape": shape, "tree": tree, "answers": rs[0]["answers"], "us_per_answer": us,
               "answers_per_cpu_s": 1e6 / us, "peak_mb": max(r["peak_mb"] for r in rs),
               "load": [min(loads), max(loads)], "runs": rs}
        rows.append(row)
        print(f"{shape:6} {tree[-20:]:20} {row['answers']:>9,} {us:>14.3f} {1e6 / us:>14,.0f} "
              f"{row['peak_mb']:>8.0f} {min(loads):>4.1f}-{max(loads):.1f}")
    write_results({"machine": info, "args": vars(args), "results": rows},
                         results_path("sink", True, args.out))


if __name__ == "__main__":
    main()
