#!/usr/bin/env python
"""Query text -> AST on every road of the one SPARQL front end (issue 23).

    .venv/bin/python bench/parsing.py             # 3,000 queries a road, 3 repeats
    .venv/bin/python bench/parsing.py --quick     # 600 a road, 1 repeat, results to bench/out/

Roads: EP-SPARQL (``parse_query``) and the six stream dialects
(``parse_dialect`` with the dialect named), each over seeded queries of
one shape with varied constants: a few triple patterns, a FILTER of
arithmetic, comparisons and built-in calls, the road's own clauses
(SEQ, a window, REGISTER).  The parsers are built (or loaded from the
cache) before timing.  Printed per road: queries per wall and per CPU
second (median of the repeats); then the process's peak RSS and the load
average.  Results: bench/results/parsing.json.
"""
from __future__ import annotations

import argparse
import random
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (ROOT, describe, machine, median, peak_rss_mb, results_path, timed,  # noqa: E402
                     write_results)

sys.path.insert(0, str(ROOT))

P = "PREFIX ex: <http://ex.org/>\n"
BODY = ("?s ex:price ?p{i} ; ex:name \"n{i}\\t\" . ?s ex:tag/ex:of* ?t "
        "FILTER (?p{i} > {x} * 1.05 && STRLEN(STR(?t)) >= {i} || ?s IN (ex:a, ex:b))")
ROADS = {
    "ep-sparql": P + "SELECT ?s ?p{i} WHERE {{ " + BODY + " }} SEQ {{ ?s ex:price ?q }}",
    "csparql": "REGISTER QUERY q{i} AS " + P + "SELECT ?s FROM STREAM <http://ex.org/s> "
               "[RANGE {i}s STEP 1s] WHERE {{ " + BODY + " }}",
    "cqels": P + "SELECT ?s WHERE {{ STREAM <http://ex.org/s> [RANGE {i}s] {{ " + BODY + " }} }}",
    "sparqlstream": P + "SELECT ISTREAM ?s FROM NAMED STREAM <http://ex.org/s> "
                    "[NOW - {i} S SLIDE 1 S] WHERE {{ " + BODY + " }}",
    "streaming-sparql": P + "SELECT ?s FROM STREAM <http://ex.org/s> WINDOW RANGE {i} S "
                        "SLIDE 1 S WHERE {{ " + BODY + " }}",
    "luposdate": P + "SELECT ?s WHERE {{ WINDOW TYPE SLIDINGTRIPLES {i} {{ " + BODY + " }} }}",
    "rspql": P + "REGISTER RSTREAM <http://ex.org/o> AS SELECT ?s FROM NAMED WINDOW "
             "<http://ex.org/w> ON <http://ex.org/s> [RANGE PT{i}S STEP PT1S] "
             "WHERE {{ WINDOW <http://ex.org/w> {{ " + BODY + " }} }}",
}


def queries(road: str, n: int) -> list[str]:
    rnd = random.Random(7)
    return [ROADS[road].format(i=rnd.randint(1, 99), x=round(rnd.uniform(1, 500), 2))
            for _ in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=None, help="queries a road")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    n = args.n or (600 if args.quick else 3000)
    repeats = args.repeats or (1 if args.quick else 3)
    from epsparql.language import parse_query
    from epsparql.language.dialects import parse_dialect
    info = machine()
    print(describe(info))
    warnings.simplefilter("ignore")
    results = {}
    for road in ROADS:
        texts = queries(road, n)
        parse = parse_query if road == "ep-sparql" else (
            lambda t, road=road: parse_dialect(t, dialect=road))
        parse(texts[0])                         # the parser built or loaded
        walls, cpus = [], []
        for _ in range(repeats):
            _, wall, cpu = timed(lambda: [parse(t) for t in texts])
            walls.append(wall)
            cpus.append(cpu)
        results[road] = {"queries": n, "per_s": n / median(walls), "per_cpu_s": n / median(cpus)}
        print(f"{road:17s} {results[road]['per_s']:8,.0f} queries/s  "
              f"{results[road]['per_cpu_s']:8,.0f} per CPU s")
    info_end = machine()
    print(f"peak RSS {peak_rss_mb()} MB; load average {info_end['load_avg']:.2f}")
    write_results({"machine": info, "load_avg_end": info_end["load_avg"],
                   "peak_rss_mb": peak_rss_mb(), "roads": results},
                  results_path("parsing", args.quick, args.out))


if __name__ == "__main__":
    main()
