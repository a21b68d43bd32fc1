"""CityBench's queries over the slice in examples/citybench (issue 23).

    .venv/bin/python bench/citybench.py            # every query, each in a fresh process
    .venv/bin/python bench/citybench.py --quick    # Q1, Q5, Q10 of each dialect
    .venv/bin/python bench/citybench.py --dialect csparql --only Q3,Q10_8 --baseline /work/main

Each query is registered unchanged (dialect detected) in an engine of its
own, with the static graphs as examples/citybench/README.md gives them
(C-SPARQL: under the URLs of its ``FROM`` clauses; CQELS: SensorRepository
as the default graph, the events as named graphs under a base), and the
slice (3,528 triples, 19 streams, 24 s) is pushed in one ``push_many``,
then flushed.  Timed: the push, draining the answers and the flush (the
rows are read before).  Printed per query: answers, events/s (wall
clock) and per CPU second, the peak RSS while pushing (high-water mark
reset just before) and the load average around the run (harness
``run_child``).  The answers are the point of these queries (Q2 and
Q10_8 give 10^5 answers from 3,528 triples), so the rates are answer-bound.
Results: bench/results/citybench.json.

``--baseline TREE`` measures each query twice in turn, with TREE's
epsparql (its children get PYTHONPATH=TREE) then with this tree's, on the
same data: before/after figures under the same load, written to
bench/results/citybench_baseline.json (``--out`` to choose).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (
    ROOT,
    Clock,
    describe,
    machine,
    peak_rss_mb,
    reset_hwm,
    results_path,
    run_child,
    write_results,
)

CB = ROOT / "examples" / "citybench"
BASE = "file:///citybench/"
WEB = "http://127.0.0.1:9000/WebGlCity/"
GRAPHS = {"csparql": {WEB + "RDF/SensorRepository.rdf": "SensorRepository.nt",
                      WEB + "SensorRepository.rdf": "SensorRepository.nt",
                      WEB + "RDF/AarhusCulturalEvents.rdf": "AarhusCulturalEvents.nt",
                      WEB + "RDF/AarhusLibraryEvents.rdf": "AarhusLibraryEvents.nt"},
          "cqels": {None: "SensorRepository.nt",
                    BASE + "culturalevents": "AarhusCulturalEvents.nt",
                    BASE + "libraryevents": "AarhusLibraryEvents.nt"}}
QUICK = ("Q1", "Q5", "Q10")


def child(dialect: str, name: str) -> None:
    from epsparql import Engine
    from epsparql.io import read_stream
    rows = list(read_stream(CB / "stream" / "citybench.nqt.gz"))
    clock = Clock()
    with Engine(base=BASE) as eng:
        for g, f in GRAPHS[dialect].items():
            eng.load_background(CB / "background" / f, graph=g)
        q = eng.register((CB / dialect / f"{name}.rq").read_text(encoding="utf-8"), name=name)
        reset_hwm()
        n = 0
        with clock:
            eng.push_many(rows)
            n += sum(1 for _ in q.results())
            eng.flush()
            n += sum(1 for _ in q.results())
        peak = peak_rss_mb()
    print(json.dumps({"events": len(rows), "answers": n, "wall_s": round(clock.wall, 3),
                      "cpu_s": round(clock.cpu, 3), "peak_rss_mb": peak}))


def measure(dialect: str, name: str, tree: str | None = None) -> tuple[dict, dict]:
    """One query in a child process (``tree``: the epsparql to import)."""
    env = os.environ.get("PYTHONPATH")
    if tree is not None:
        os.environ["PYTHONPATH"] = str(Path(tree).resolve())
    try:
        return run_child([sys.executable, __file__, "--child", dialect, name],
                         log=f"citybench-{dialect}-{name}" + ("-baseline" if tree else ""))
    finally:
        if tree is not None:
            if env is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = env


def line(dialect: str, name: str, res: dict, run: dict, label: str = "") -> str:
    rate = res["events"] / res["wall_s"] if res["wall_s"] else float("inf")
    cpu_rate = res["events"] / res["cpu_s"] if res["cpu_s"] else float("inf")
    return (f"{dialect:8} {name:20}{label} {res['answers']:>8,} answers  {rate:>9,.0f} events/s  "
            f"{cpu_rate:>9,.0f} events/CPU s  peak {res['peak_rss_mb']:.0f} MB  "
            f"load {run['load_avg_before']:.2f}→{run['load_avg_after']:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dialect", choices=["csparql", "cqels"], help="one dialect only")
    ap.add_argument("--only", help="these queries only (comma-separated names)")
    ap.add_argument("--baseline", metavar="TREE",
                    help="also measure each query with TREE's epsparql, just before")
    ap.add_argument("--out", help="results file")
    ap.add_argument("--child", nargs=2, metavar=("DIALECT", "QUERY"))
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    info = machine()
    print(describe(info))
    only = set(args.only.split(",")) if args.only else None
    rows = []
    for dialect in ("csparql", "cqels"):
        if args.dialect and dialect != args.dialect:
            continue
        for p in sorted((CB / dialect).glob("*.rq")):
            if args.quick and p.stem not in QUICK or only and p.stem not in only:
                continue
            if args.baseline:
                res0, run0 = measure(dialect, p.stem, args.baseline)
                print(line(dialect, p.stem, res0, run0, " before"), flush=True)
            res, run = measure(dialect, p.stem)
            print(line(dialect, p.stem, res, run, " after " if args.baseline else ""), flush=True)
            row = {"dialect": dialect, "query": p.stem, **res, "run": run}
            if args.baseline:
                row["baseline"] = {"tree": str(Path(args.baseline).resolve()), **res0, "run": run0}
                if res0["answers"] != res["answers"]:
                    print(f"  answers differ: {res0['answers']} before, {res['answers']} after")
            rows.append(row)
    name = "citybench_baseline" if args.baseline else "citybench"
    partial = args.quick or bool(only) or bool(args.dialect)
    out = args.out or (None if args.baseline or not partial else str(results_path(name, True)))
    write_results({"machine": info, "rows": rows}, results_path(name, False, out))


if __name__ == "__main__":
    main()
