"""The main job on bundled data: stock patterns over a price stream.

Loads ``examples/stock/stock.rules`` into a core engine, streams
``examples/stock/prices.csv`` through it in batches and prints every
complex event with its interval.  ``python -m epsparql.demo --help``.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from .core import CoreEngine, term

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "stock"


def _day(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d")


def _describe(d) -> str:
    ev = d.event
    args_txt = ", ".join(f"{a:.2f}" if isinstance(a, float) else str(a) for a in ev.args)
    return f"{_day(d.start)} .. {_day(d.end)}  {ev.name}({args_txt})"


def read_prices(path: Path):
    with path.open(newline="") as f:
        for lineno, row in enumerate(csv.DictReader(f), start=2):
            try:
                yield term("price", row["company"], float(row["price"])), int(row["time"])
            except (KeyError, ValueError, TypeError) as e:
                raise SystemExit(f"{path}:{lineno}: malformed row {row!r}: {e}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m epsparql.demo", description=__doc__)
    ap.add_argument("--rules", type=Path, default=EXAMPLE / "stock.rules")
    ap.add_argument("--stream", type=Path, default=EXAMPLE / "prices.csv")
    ap.add_argument("--all", action="store_true",
                    help="print every match, not the first per pattern and company")
    ap.add_argument("--policy", default="unrestricted",
                    choices=["unrestricted", "recent", "chronological"])
    ap.add_argument("--sparql", type=Path, default=EXAMPLE / "query1.rq",
                    help="an EP-SPARQL query run over the same stream as triples")
    args = ap.parse_args(argv)

    engine = CoreEngine(policy=args.policy)
    engine.load_rules(args.rules)
    t0 = time.perf_counter()
    detections = engine.push_many(read_prices(args.stream))
    elapsed = time.perf_counter() - t0
    n = engine.stats()["events"]
    counts: dict[tuple[str, str], int] = {}
    for d in detections:
        key = (d.event.name, str(d.event.args[0]))
        counts[key] = counts.get(key, 0) + 1
        if args.all or counts[key] == 1:
            print(_describe(d))
    if not args.all and counts:
        print("\nmatches per pattern and company (first one shown above; --all prints all):")
        for (name, company), c in sorted(counts.items()):
            print(f"  {name:15} {company:10} {c:6}")
    print(f"-- {n} events, {len(detections)} complex events, "
          f"{n / elapsed:,.0f} events/s")
    for err in engine.errors:
        print(f"rule error: {err.message} ({err.context})", file=sys.stderr)
    if args.sparql is not None:
        run_sparql(args.sparql, args.stream)
    return 0


def run_sparql(query_path: Path, stream: Path) -> None:
    """The same stream as RDF triples, through an EP-SPARQL query."""
    from rdflib import Literal, URIRef

    from .query_engine import Engine
    ns = "http://epsparql.org/ns#"
    pred = URIRef(ns + "hasStockPrice")
    engine = Engine()
    q = engine.register(query_path.read_text())
    rows = [(URIRef(ns + ev.args[0]), pred, Literal(ev.args[1]), t) for ev, t in read_prices(stream)]
    t0 = time.perf_counter()
    engine.push_many(rows)
    engine.flush()
    elapsed = time.perf_counter() - t0
    answers = q.results()
    print(f"\nEP-SPARQL {query_path.name}: {len(answers)} answers")
    first: dict[str, object] = {}
    for a in answers:
        company = str(a["company"]).rsplit("#", 1)[-1]
        if company not in first or a.end < first[company].end:
            first[company] = a
    for company, a in sorted(first.items()):
        n = sum(1 for x in answers if str(x["company"]).endswith("#" + company))
        print(f"  {company:10} {n:5} answers, first {_day(a.start)} .. {_day(a.end)}")
    print(f"-- {len(rows)} triples, {len(rows) / elapsed:,.0f} triples/s")


if __name__ == "__main__":
    sys.exit(main())
