"""Streaming SPARQL: wind turbine start and stop counts (seed 002, Listing 1.1).

    .venv/bin/python examples/dialects/streaming-sparql/run.py

Five turbines report their start counter (wtur:StrCnt) when they start and
their stop counter (wtur:StopCnt) when they stop, over two hours (seeded),
plus a busy stream of other readings, on the stream
<http://iec.org/61400/25/root/td.rdf>.  turbines.rq is registered as the
seed prints it; the answers are printed per evaluation instant.
"""
from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

from rdflib import Literal, URIRef

from epsparql import Engine

HERE = Path(__file__).resolve().parent
TD = "http://iec.org/61400/25/root/td.rdf"
WTUR = "http://iec.org/61400/25/root/ln/classes/WTUR#"
T0 = 1_717_200_000
TURBINES = [f"http://example.org/turbine/t{i}" for i in range(1, 6)]


def stream(seed: int = 2) -> list[tuple]:
    """Rows (s, p, o, time, None, TD), in time order: each turbine starts
    and stops now and then (its counters go up); every 2 s a power reading
    of some turbine, so that the last 1500 elements of the stream are about
    the last 50 minutes."""
    rnd = random.Random(seed)
    events = []
    for i, t in enumerate(TURBINES):
        running, starts, stops = False, 0, 0
        for m in range(0, 120, rnd.choice([7, 11, 13])):
            at = T0 + m * 60 + 3 * i
            if running:
                stops += 1
                events.append((at, URIRef(t), URIRef(WTUR + "StopCnt"), Literal(stops)))
            else:
                starts += 1
                events.append((at, URIRef(t), URIRef(WTUR + "StrCnt"), Literal(starts)))
            running = not running
    for k in range(0, 7200, 2):
        t = rnd.choice(TURBINES)
        events.append((T0 + k + 1, URIRef(t), URIRef(WTUR + "W"), Literal(rnd.randint(200, 900))))
    events.sort(key=lambda e: e[0])
    return [(s, p, o, at, None, TD) for at, s, p, o in events]


def run(rows=None) -> list:
    with Engine() as engine:
        q = engine.register((HERE / "turbines.rq").read_text(), name="turbines")
        engine.push_many(rows if rows is not None else stream())
        engine.flush()
        return q.results()


def main() -> list:
    answers = run()
    at: dict = defaultdict(lambda: defaultdict(lambda: (set(), set())))
    for a in answers:
        x = str(a["x"]).rsplit("/", 1)[-1]
        ys, zs = at[float(a.end)][x]
        ys.add(int(a["y"]))
        if "z" in a.bindings:
            zs.add(int(a["z"]))
    print(f"{len(answers)} answers at {len(at)} instants (RSTREAM: the whole result each time);")
    print("every 20 minutes, the start counts in the last 30 min and the stop counts in the "
          "last 1500 elements:")
    for t in sorted(at):
        if (t - T0) % 1200 == 0:
            parts = [f"{x} started {sorted(ys)}" + (f" stopped {sorted(zs)}" if zs else "")
                     for x, (ys, zs) in sorted(at[t].items())]
            print(f"  +{(t - T0) / 60:3.0f} min  " + "; ".join(parts))
    return answers


if __name__ == "__main__":
    main()
