"""SWI-Prolog's garbage collections per query run, through the command line.

    .venv/bin/python bench/atomgc.py                          # N = 200,000, every workload
    .venv/bin/python bench/atomgc.py --tree /tmp/base --repeat 2 --n 1000000
    .venv/bin/python bench/atomgc.py --workloads join --n 100000

Why: SWI-Prolog follows a clause garbage collection with an atom garbage
collection (which marks every thread's stacks) while clauses erased
through a clause reference are waiting to be reclaimed: a clause
reference is a blob in the atom table.  Erasing by reference per expired
or consumed goal made an atom collection run every few hundred events.
This benchmark counts them.

What a user runs: ``epsparql run QUERY --stream FILE --output-format jsonl
--out F`` in a fresh process per run, start-up included; after the run the
same process asks SWI-Prolog for its ``statistics/2`` counters (atom,
clause and stack garbage collections: count and seconds; inferences).
Per run: events per second of wall clock and per CPU second (the whole
process's rusage: the GC thread included), peak RSS, the load average
around it, and a digest of the answers (every tree's must equal the
first's).  ``--tree`` measures another checkout too, alternating.

Workloads:

* ``allpairs``: issue 14's stream (100 companies, one price a second) and
  the all-pairs SEQ (bench/spark.py): about 4.9 answers per event;
* ``query1``: the paper's query (1) over bench/spark.py's price stream
  (1,000 companies): a three-step SEQ, few answers;
* ``seq2``: a rise of 5% within 10 days over the same stream
  (bench/spark.py): a two-step SEQ, few answers;
* ``join``: a C-SPARQL window that is not kept per pane, the join of two
  patterns: ``{ ?s ex:alarm ?a . ?s ex:v ?v }`` over ``[RANGE 10s STEP
  1s]``; 100 sensors, one reading each a second, 1% of them alarms.

Results: bench/results/atomgc.json (bench/out/atomgc.json with --out or a
small N); bench/README.md holds the figures.
"""
from __future__ import annotations

import argparse
import hashlib
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (OUT, ROOT, describe, generated_file, machine, results_path, run_child,  # noqa: E402
                     write_results)
from spark import QUERIES as SPARK_QUERIES, allpairs_file, stream_file  # noqa: E402

EX = "http://example.org/"
XSD_INT = "http://www.w3.org/2001/XMLSchema#integer"
QUERIES = {
    "allpairs": SPARK_QUERIES["allpairs"],
    "query1": SPARK_QUERIES["query1"],
    "seq2": SPARK_QUERIES["seq2"],
    "join": (f"REGISTER QUERY j AS\nSELECT ?s ?a ?v\nFROM STREAM <{EX}s> [RANGE 10s STEP 1s]\n"
             f"WHERE {{ ?s <{EX}alarm> ?a . ?s <{EX}v> ?v }}\n"),
}

# the child: the command line's main, then SWI-Prolog's counters of this process
CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from epsparql.cli import main
rc = main(sys.argv[2:])
import janus_swi as janus
s = janus.query_once(
    "statistics(atom_garbage_collection, [AN, AF, AT]),"
    "statistics(clause_garbage_collection, [CN, CF, CT]),"
    "statistics(garbage_collection, [GN, _, GT|_]),"
    "statistics(inferences, I)")
print("RESULT " + json.dumps({k: s[k] for k in ("AN", "AF", "AT", "CN", "CF", "CT", "GN", "GT", "I")}))
sys.exit(rc)
"""


def join_stream(n: int) -> Path:
    """``join``'s stream: event i is sensor i mod 100 at t = i div 100, a
    reading (integer of 10,000) or, 1% of the time, an alarm (seeded)."""
    def lines():
        rnd = random.Random(1)
        for i in range(n):
            k, t = i % 100, i // 100
            if rnd.random() < 0.01:
                yield f'<{EX}k{k}> <{EX}alarm> "{rnd.choice(("low", "high"))}" <{EX}s> {t} .\n'
            else:
                yield f'<{EX}k{k}> <{EX}v> "{rnd.randrange(10000)}"^^<{XSD_INT}> <{EX}s> {t} .\n'
    return generated_file(OUT / f"atomgc_join_{n}.nqt", lines())


def stream(workload: str, n: int) -> Path:
    return {"allpairs": allpairs_file, "query1": stream_file, "seq2": stream_file,
            "join": join_stream}[workload](n)


def digest(path: Path) -> tuple[int, str]:
    """(lines, SHA-256) of an answers file, read in blocks."""
    h, lines = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
            lines += block.count(b"\n")
    return lines, h.hexdigest()[:16]


def run(tree: Path, workload: str, n: int) -> dict:
    OUT.mkdir(parents=True, exist_ok=True)
    q = OUT / f"atomgc_{workload}.rq"
    q.write_text(QUERIES[workload])
    out = OUT / f"atomgc_{workload}.jsonl"
    cmd = [sys.executable, "-c", CHILD, str(tree), "run", str(q), "--stream",
           str(stream(workload, n)), "--output-format", "jsonl", "--out", str(out), "--quiet"]
    res, r = run_child(cmd, log=f"atomgc_{workload}_{n}", check=False)
    if r["returncode"] != 0 or res is None:
        raise RuntimeError(f"{workload} failed: {r.get('stderr_tail')}")
    answers, dig = digest(out)
    out.unlink()
    row = {"tree": str(tree), "workload": workload, "events": n, "answers": answers,
           "digest": dig, "events_per_s": round(n / r["elapsed_s"]),
           "events_per_cpu_s": round(n / r["cpu_s"]), "cpu_s": r["cpu_s"],
           "elapsed_s": r["elapsed_s"], "peak_rss_mb": r["maxrss_mb"],
           "atom_gc": res["AN"], "atom_gc_s": round(res["AT"] / 1000, 3),
           "atoms_freed": res["AF"], "clause_gc": res["CN"],
           "clause_gc_s": round(res["CT"] / 1000, 3), "clauses_freed": res["CF"],
           "stack_gc": res["GN"], "stack_gc_s": round(res["GT"] / 1000, 3),
           "inferences": res["I"], "load": [r["load_avg_before"], r["load_avg_after"]]}
    print(f"  {workload:<8} {n:>9,} ev {answers:>9,} answers  {row['events_per_s']:>7,} ev/s  "
          f"{row['events_per_cpu_s']:>7,} ev/CPU-s  CPU {r['cpu_s']:6.2f} s  "
          f"peak {r['maxrss_mb']:6.1f} MB  atom GC {res['AN']:>5} ({row['atom_gc_s']:.2f} s)  "
          f"clause GC {res['CN']:>5} ({row['clause_gc_s']:.2f} s)  "
          f"GC {res['GN']:>5} ({row['stack_gc_s']:.2f} s)  load {r['load_avg_before']:.1f}  "
          f"[{tree}]", flush=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000, help="events per run")
    ap.add_argument("--workloads", default="allpairs,query1,join")
    ap.add_argument("--tree", action="append", default=[], type=Path,
                    help="another checkout to measure too, alternating with this one")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out", help="results JSON (default bench/results/atomgc.json)")
    args = ap.parse_args()
    info = machine(events=args.n)
    print(describe(info), flush=True)
    trees = [ROOT] + [t.resolve() for t in args.tree]
    rows = []
    for _ in range(args.repeat):
        for workload in args.workloads.split(","):
            first = None
            for tree in trees:
                row = run(tree, workload, args.n)
                rows.append(row)
                first = first or (row["answers"], row["digest"])
                if (row["answers"], row["digest"]) != first:
                    print(f"  answers differ from {trees[0]}'s", flush=True)
                    return 1
    write_results({"machine": info, "rows": rows},
                  results_path("atomgc", args.n < 200_000, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
