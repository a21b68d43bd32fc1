#!/usr/bin/env python
"""The language path against the core path, on the same workloads.

    .venv/bin/python bench/language.py [--n 200000] [--window 1000]

Workloads (100 keys, one price per second, seeded, prices as in
bench/seq2.py: mean-reverting with rare +6..12% spikes):

* seq2: ``?k :price ?p1`` SEQ ``?k :price ?p2`` with ``?p2 > ?p1 * 1.05``
  within W seconds, against the core rule
  ``rise(K,P1,P2) <- price(K,P1) seq price(K,P2) where P2 > P1*1.05 within W``;
* query (1) of the paper (fall below 70% then rise above 105% within W),
  against the same pattern written as a core rule.

Language path: EP-SPARQL text -> parse -> algebra -> rules; rdflib triples
pushed with Engine.push_many (encoding every term), answers decoded into
rdflib bindings.  Core path: CoreEngine with the hand-written rule, events
``price(Key, Price)`` pushed with push_many.  Both time only the pushing
(and answer delivery).  Prints events/s, answers, peak RSS, and the ratio
core/language (the target is <= 1.5).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NS = "http://epsparql.org/ns#"


def prices(n: int, keys: int = 100, seed: int = 1):
    """(key index, price, t) rows: AR(1) log-prices around a base, rare spikes."""
    rnd = random.Random(seed)
    base = [rnd.uniform(20, 200) for _ in range(keys)]
    dev = [0.0] * keys
    sd = 0.01 * math.sqrt(1 - 0.81)
    for t in range(1, n + 1):
        k = rnd.randrange(keys)
        dev[k] = 0.9 * dev[k] + rnd.gauss(0, sd)
        p = base[k] * math.exp(dev[k])
        if rnd.random() < 0.002:
            p *= 1 + rnd.uniform(0.06, 0.12)
        yield k, round(p, 2), t


def run_language(workload: str, n: int, w: int) -> dict:
    from rdflib import Literal, URIRef
    from epsparql.engine import Engine
    q_text = {
        "seq2": f"""PREFIX : <{NS}>
            SELECT ?k ?p1 ?p2 WHERE {{ ?k :price ?p1 }} SEQ {{ ?k :price ?p2 }}
            FILTER (?p2 > ?p1 * 1.05 && getDURATION() <= "PT{w}S"^^xsd:duration)""",
        "query1": f"""PREFIX : <{NS}>
            SELECT ?k WHERE {{ ?k :price ?p1 }} SEQ {{ ?k :price ?p2 }} SEQ {{ ?k :price ?p3 }}
            FILTER (?p2 < ?p1 * 0.7 && ?p3 > ?p1 * 1.05 && getDURATION() <= "PT{w}S"^^xsd:duration)""",
    }[workload]
    keys = [URIRef(f"{NS}k{i}") for i in range(100)]
    pred = URIRef(NS + "price")
    rows = [(keys[k], pred, Literal(p), t) for k, p, t in prices(n)]
    eng = Engine()
    q = eng.register(q_text)
    answers = 0
    t0 = time.perf_counter()
    for i in range(0, len(rows), 5000):
        eng.push_many(rows[i:i + 5000])
        answers += len(q.results())
    eng.flush()
    answers += len(q.results())
    dt = time.perf_counter() - t0
    return {"events_per_s": n / dt, "answers": answers, "seconds": dt}


def run_core(workload: str, n: int, w: int) -> dict:
    from epsparql.core import CoreEngine, term
    rule = {
        "seq2": f"rise(K,P1,P2) <- price(K,P1) seq price(K,P2) where P2 > P1 * 1.05 within {w}.",
        "query1": f"crash(K) <- (price(K,P1) seq price(K,P2) where P2 < P1 * 0.7) "
                  f"seq price(K,P3) where P3 > P1 * 1.05 within {w}.",
    }[workload]
    events = [(term("price", f"k{k}", p), t) for k, p, t in prices(n)]
    eng = CoreEngine()
    eng.add_rules(rule)
    answers = 0
    t0 = time.perf_counter()
    for i in range(0, len(events), 5000):
        eng.push_many(events[i:i + 5000])
        answers += len(eng.drain())
    dt = time.perf_counter() - t0
    return {"events_per_s": n / dt, "answers": answers, "seconds": dt}


def child(mode: str, workload: str, n: int, w: int) -> None:
    r = (run_language if mode == "language" else run_core)(workload, n, w)
    r["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(r))


def machine() -> dict:
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    swipl = subprocess.run(["swipl", "--version"], capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "swipl": swipl}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--window", type=int, default=1000)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.n, args.window)
        return 0
    info = machine()
    print(f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, {info['swipl']}")
    results = []
    for workload in ("seq2", "query1"):
        row = {"workload": workload, "n": args.n, "window": args.window}
        for mode in ("core", "language"):
            out = subprocess.run([sys.executable, __file__, "--n", str(args.n), "--window",
                                  str(args.window), "--child", mode, workload],
                                 capture_output=True, text=True, check=True).stdout
            row[mode] = json.loads(out.strip().splitlines()[-1])
        row["ratio"] = row["core"]["events_per_s"] / row["language"]["events_per_s"]
        results.append(row)
        print(f"{workload:7} W={args.window}: core {row['core']['events_per_s']:>9,.0f} ev/s "
              f"({row['core']['answers']} answers, {row['core']['peak_rss_mb']:.0f} MB)  "
              f"language {row['language']['events_per_s']:>9,.0f} ev/s "
              f"({row['language']['answers']} answers, {row['language']['peak_rss_mb']:.0f} MB)  "
              f"core/language = {row['ratio']:.2f}")
    out = ROOT / "bench" / "results" / "language.json"
    out.write_text(json.dumps({"machine": info, "results": results}, indent=2))
    print(f"written {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
