"""Windowed aggregation through the command line (issue 22's targets).

    .venv/bin/python bench/windowed_cli.py             # N = 1,000,000 (~2 min on 2 cores)
    .venv/bin/python bench/windowed_cli.py --quick     # N = 100,000
    .venv/bin/python bench/windowed_cli.py --tree ../other/checkout   # that tree too, alternating

What a user runs: ``epsparql run QUERY --stream FILE.nqt --output-format
jsonl`` in a fresh process, start-up included, the answers written to a
file.  Stream: 100 keys ``ex:k0`` … ``ex:k99``, one reading per key per
second (event i is key i mod 100 at t = i div 100), an integer value
drawn from 10,000 (seeded), on the named stream ``ex:s``.  Queries, in
C-SPARQL:

- ``avg``: ``SELECT ?s (AVG(?v) AS ?a) … [RANGE 10s STEP 1s] … GROUP BY ?s``:
  one answer per event (100 groups every second);
- ``count``: ``SELECT (COUNT(*) AS ?n) … [RANGE 10s TUMBLING]``: one answer
  per 1,000 events.

Printed per run: events per second of wall clock and per CPU second (user
and system time of the whole process, from its rusage), answers, the
process's peak RSS, and the load average around it.  Memory in the stream
length: ``avg`` again over N/4 and N/2 events.  Targets (issue 22): avg at
least 100,000 events per CPU second, count at least 250,000.  Results:
bench/results/windowed_cli.json; bench/README.md holds the figures.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (OUT, ROOT, describe, generated_file, machine, results_path, run_child,  # noqa: E402
                     write_results)

EX = "http://example.org/"
QUERIES = {
    "avg": (f"REGISTER QUERY avg AS\nSELECT ?s (AVG(?v) AS ?a)\nFROM STREAM <{EX}s> "
            f"[RANGE 10s STEP 1s]\nWHERE {{ ?s <{EX}v> ?v }} GROUP BY ?s\n"),
    "count": (f"REGISTER QUERY cnt AS\nSELECT (COUNT(*) AS ?n)\nFROM STREAM <{EX}s> "
              f"[RANGE 10s TUMBLING]\nWHERE {{ ?s <{EX}v> ?v }}\n"),
}
TARGET = {"avg": 100_000, "count": 250_000}
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"


def stream(n: int) -> Path:
    def lines():
        rnd = random.Random(1)
        for i in range(n):
            yield (f'<{EX}k{i % 100}> <{EX}v> "{rnd.randrange(10000)}"^^<{XSD_INT}> '
                   f'<{EX}s> {i // 100} .\n')
    return generated_file(OUT / f"windowed_cli_{n}.nqt", lines())


def run(tree: Path, kind: str, n: int) -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    q = OUT / f"windowed_cli_{kind}.rq"
    q.write_text(QUERIES[kind])
    out = OUT / f"windowed_cli_{kind}.jsonl"
    py = str(ROOT / ".venv" / "bin" / "python")
    # the tree's own package first (the current directory would come first otherwise)
    cmd = [py, "-c", f"import sys; sys.path.insert(0, {str(tree)!r}); "
                     f"from epsparql.cli import main; sys.exit(main(sys.argv[1:]))",
           "run", str(q), "--stream", str(stream(n)), "--output-format", "jsonl",
           "--out", str(out), "--quiet"]
    _, r = run_child(cmd, log=f"windowed_cli_{kind}_{n}", check=False)
    if r["returncode"] != 0:
        raise RuntimeError(f"{kind} failed: {r.get('stderr_tail')}")
    answers = sum(1 for _ in open(out))
    row = {"tree": str(tree), "query": kind, "events": n, "answers": answers,
           "events_per_s": round(n / r["elapsed_s"]), "events_per_cpu_s": round(n / r["cpu_s"]),
           "cpu_s": r["cpu_s"], "elapsed_s": r["elapsed_s"], "peak_rss_mb": r["maxrss_mb"],
           "load": [r["load_avg_before"], r["load_avg_after"]]}
    mark = ""
    if n >= 1_000_000 and kind in TARGET:
        mark = "  target met" if row["events_per_cpu_s"] >= TARGET[kind] else \
            f"  target {TARGET[kind]:,}: not met"
    print(f"  {kind:<6} {n:>9,} events {answers:>9,} answers  {row['events_per_s']:>8,} ev/s  "
          f"{row['events_per_cpu_s']:>8,} ev/CPU-s  peak {r['maxrss_mb']:>6.1f} MB  "
          f"load {r['load_avg_before']:.1f}{mark}  [{tree.name}]", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100,000 events")
    ap.add_argument("-n", type=int, default=None, help="events (default 1,000,000)")
    ap.add_argument("--tree", action="append", default=[], type=Path,
                    help="another checkout to measure too, alternating with this one")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    n = args.n or (100_000 if args.quick else 1_000_000)
    info = machine(events=n)
    print(describe(info), flush=True)
    trees = [ROOT] + [t.resolve() for t in args.tree]
    rows = []
    for _ in range(args.repeat):
        for kind in ("count", "avg"):
            for tree in trees:
                rows.append(run(tree, kind, n))
    print("  memory in the stream length (avg):", flush=True)
    for m in (n // 4, n // 2):
        rows.append(run(ROOT, "avg", m))
    write_results({"machine": info, "rows": rows}, results_path("windowed_cli", args.quick))


if __name__ == "__main__":
    main()
