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
    args = ap.parse_args(argv)

    engine = CoreEngine()
    engine.load_rules(args.rules)
    t0 = time.perf_counter()
    detections = engine.push_many(read_prices(args.stream))
    elapsed = time.perf_counter() - t0
    n = engine.stats()["events"]
    for d in detections:
        ev = d.event
        args_txt = ", ".join(f"{a:.2f}" if isinstance(a, float) else str(a) for a in ev.args)
        print(f"{_day(d.start)} .. {_day(d.end)}  {ev.name}({args_txt})")
    print(f"-- {n} events, {len(detections)} complex events, "
          f"{n / elapsed:,.0f} events/s", file=sys.stderr)
    for err in engine.errors:
        print(f"rule error: {err.message} ({err.context})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
