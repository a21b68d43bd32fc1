"""SPARQLstream: wind speed now against 2-3 hours ago (seed 004, Listing 1).

    .venv/bin/python examples/dialects/sparqlstream/run.py

Three sensors report a speed every minute for four hours (seeded); s2's
wind picks up in the last half hour.  wind.rq is registered as is (its
dialect is detected); the answers are printed per minute and checked
against the same averages computed in Python (:func:`expected`).
"""
from __future__ import annotations

import random
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from epsparql import Engine

HERE = Path(__file__).resolve().parent
WIND = "http://example.org/streams/wind"
NS = "http://example.org/wind#"
T0 = 1_717_200_000                  # 2024-06-01T00:00:00Z
SENSORS = ["s1", "s2", "s3"]
MINUTES = 240


def readings(seed: int = 4) -> list[tuple[int, str, Decimal]]:
    """(time, sensor, speed in m/s with one decimal), every minute, each
    sensor at its own second of the minute."""
    rnd = random.Random(seed)
    out = []
    for k in range(MINUTES):
        for i, s in enumerate(SENSORS):
            base = {"s1": 6.0, "s2": 8.0, "s3": 5.0}[s]
            if s == "s2" and k >= MINUTES - 30:
                base += 7.0                               # the gust
            v = Decimal(str(round(max(0.0, rnd.gauss(base, 1.5)), 1)))
            out.append((T0 + 60 * k + 10 * i, s, v))
    return out


def rows(data):
    sensor, speed = URIRef(NS + "sensor"), URIRef(NS + "speed")
    for t, s, v in data:
        obs = URIRef(f"{NS}obs-{s}-{t}")
        yield (obs, sensor, URIRef(NS + s), t, None, WIND)
        yield (obs, speed, Literal(v, datatype=XSD.decimal), t, None, WIND)


def run() -> list:
    with Engine() as engine:
        q = engine.register((HERE / "wind.rq").read_text(), name="wind")
        engine.push_many(rows(readings()))
        engine.flush()
        return q.results()


def expected(data) -> list[tuple[int, str, Decimal, Decimal]]:
    """The query's answers computed directly (SPARQLstream's default, as
    morph-streams under CSRBench's oracle: the windows [t - 10 min, t)
    closing at each minute t, from the first close after the first
    reading to the last window opened at or before the last reading):
    each sensor whose mean over [t - 10 min, t) exceeds its mean over
    (t - 3 h, t - 2 h] (a window ending before NOW keeps its definition)."""
    out = []
    first = (data[0][0] // 60 + 1) * 60
    last = data[-1][0] // 60 * 60 + 600
    for t in range(first, last + 1, 60):
        recent, past = defaultdict(list), defaultdict(list)
        for tau, s, v in data:
            if t - 600 <= tau < t:
                recent[s].append(v)
            if t - 10800 < tau <= t - 7200:
                past[s].append(v)
        for s in sorted(set(recent) & set(past)):
            r = sum(recent[s]) / len(recent[s])
            p = sum(past[s]) / len(past[s])
            if r > p:
                out.append((t, s, r, p))
    return out


def main() -> list:
    answers = run()
    by_minute = defaultdict(list)
    for a in answers:
        by_minute[int(a.end)].append(f"{str(a['sensor'])[len(NS):]} "
                                     f"{float(a['recent']):.2f} > {float(a['past']):.2f}")
    print(f"{len(answers)} answers over {len(by_minute)} minutes; the first and the last ones:")
    minutes = sorted(by_minute)
    for t in minutes[:3] + minutes[-3:]:
        print(f"  +{(t - T0) // 60:3d} min  " + ", ".join(by_minute[t]))
    return answers


if __name__ == "__main__":
    main()
