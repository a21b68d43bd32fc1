"""RSP-QL: room occupancy at the conference, every 10 s over the last 30 s.

    .venv/bin/python examples/dialects/rspql/run.py

The RFID reads of examples/conference/rfid.csv on the stream
<http://deri.org/streams/rfid>, the floor plan as the background graph
<http://deri.org/floorplan/>; occupancy.rq registered in RSP-QL's syntax
(REGISTER RSTREAM <out> AS SELECT … FROM NAMED WINDOW <w> ON <s> [RANGE
PT30S STEP PT10S]).
"""
from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

from rdflib import URIRef

from epsparql import Engine

HERE = Path(__file__).resolve().parent
CONFERENCE = HERE.parent.parent / "conference"
RFID = "http://deri.org/streams/rfid"
DETECTED_AT = URIRef("http://deri.org/floorplan/detectedat")


def reads() -> list[tuple[int, str, str]]:
    with (CONFERENCE / "rfid.csv").open(newline="") as f:
        return [(int(r["time"]), r["person"], r["location"]) for r in csv.DictReader(f)]


def run() -> list:
    with Engine() as engine:
        engine.load_background(str(CONFERENCE / "floorplan.ttl"),
                               graph="http://deri.org/floorplan/")
        q = engine.register((HERE / "occupancy.rq").read_text(), name="occupancy")
        engine.push_many((URIRef(p), DETECTED_AT, URIRef(room), t, None, RFID)
                         for t, p, room in reads())
        engine.flush()
        return q.results()


def expected(data) -> list[tuple[int, str, int]]:
    """(close, room, distinct people read there in [t - 30, t)) for every
    window [10k, 10k + 30) (RSP-QL's, closed at the start, open at the end,
    t0 = 0) reported at its close t: from the first close after the first
    read to the last window opened by the last read."""
    first = (data[0][0] // 10 + 1) * 10
    last = (data[-1][0] + 30) // 10 * 10
    out = []
    for t in range(first, last + 1, 10):
        people = defaultdict(set)
        for tau, p, room in data:
            if t - 30 <= tau < t:
                people[room].add(p)
        out.extend((t, room, len(ps)) for room, ps in sorted(people.items()))
    return out


def main() -> list:
    answers = run()
    t0 = min(a.end for a in answers)
    by_t = defaultdict(list)
    for a in answers:
        by_t[a.end].append(f"{a['name']}: {int(a['people'])}")
    print(f"{len(answers)} answers at {len(by_t)} instants; every minute:")
    for t in sorted(by_t):
        if (t - t0) % 60 == 0:
            print(f"  +{int(t - t0):3d} s  " + ", ".join(sorted(by_t[t])))
    return answers


if __name__ == "__main__":
    main()
