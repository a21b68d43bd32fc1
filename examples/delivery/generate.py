#!/usr/bin/env python
"""Generate the goods-delivery example: a city road graph, delivery tours, a stream.

    .venv/bin/python examples/delivery/generate.py [--agents 3] [--rounds 1] [--seed 7]

Writes, next to this file:

* ``city.ttl`` -- the background road graph: 20 locations named after
  districts of Milan (``:l1`` .. ``:l20`` with an ``rdfs:label``), and
  directed roads ``:lA :road :lB``.  Locations are points in a 10 km
  square; each is joined to its three nearest neighbours (both ways, or
  one way for a quarter of them) and a one-way ring through all of them
  in angular order makes the graph strongly connected.  Synthetic: the
  paper's Milan ontology (AMAT Milano / CEFRIEL) is not available.
* ``plans.ttl`` -- the agents' delivery tours, as background legs:
  ``:agent1-leg3 :agent :agent1 ; :from :l7 ; :to :l12``.  A tour visits
  every location once along roads (a Hamiltonian path found by randomised
  depth-first search), so an agent's location says which leg it is on.
* ``stream.csv`` -- ``time,subject,predicate,object`` rows (times in
  seconds since the first day's midnight; ``:`` names are in the example's
  namespace) for ``--rounds`` working days: arrivals ``:agent1 :at :l7``
  and traffic updates ``:l7 :blockedTo :l12`` (the road l7 -> l12 is
  blocked; an update is valid for BLOCK_VALID seconds).

Traffic per leg of a tour, seeded: with probability P_BLOCK (> 50%, as in
the paper) the road to the next stop is reported blocked within the
validity window before the agent arrives; each other road out of the
location is reported blocked with probability P_ALT; with probability
P_STALE the leg's road had an update that has expired by the arrival;
plus NOISE updates per agent and day on random roads at random times.  A
blocked leg takes the shortest detour (Dijkstra without that road), so
arrival times stay plausible; the stream does not depend on what the
queries decide.

From Python: ``city()``, ``tours()``, ``stream()``, ``background()``
build the same data in memory (the benchmark and the tests use them).
"""
from __future__ import annotations

import argparse
import csv
import heapq
import math
import random
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
NS = "http://epsparql.org/delivery#"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"

NAMES = ["Duomo", "Brera", "Navigli", "Porta Romana", "Porta Venezia", "Citta Studi",
         "Isola", "Garibaldi", "Centrale", "Sempione", "San Siro", "Lambrate",
         "Bicocca", "Niguarda", "Corvetto", "Barona", "Lorenteggio", "Bovisa",
         "Loreto", "Ticinese"]

BLOCK_VALID = 900          # s: a traffic update holds for 15 minutes (the queries' window)
P_BLOCK = 0.6              # the road to the next stop is blocked at arrival
P_ALT = 0.25               # another road out of the location is blocked too
P_STALE = 0.2              # an expired update on the leg's road
NOISE = 10                 # random updates per agent and day
SPEED_KMH = 25.0
DAY = 86_400
START = 8 * 3600           # tours start at 08:00


@dataclass
class City:
    names: list[str]                        # location i is :l{i+1}
    pos: list[tuple[float, float]]          # km
    roads: dict[tuple[int, int], int]       # (from, to) -> travel seconds

    @property
    def n(self) -> int:
        return len(self.names)

    def out(self, a: int) -> list[int]:
        return sorted(b for (x, b) in self.roads if x == a)

    def iri(self, i: int) -> str:
        return f"{NS}l{i + 1}"


def city(n: int = 20, seed: int = 7) -> City:
    """A strongly connected directed road graph over n locations."""
    rnd = random.Random(seed)
    pos = [(rnd.uniform(0, 10), rnd.uniform(0, 10)) for _ in range(n)]

    def secs(a: int, b: int) -> int:
        km = 1.3 * math.dist(pos[a], pos[b])            # streets are not straight
        return max(120, round(km / SPEED_KMH * 3600))

    roads: dict[tuple[int, int], int] = {}
    for a in range(n):
        near = sorted((math.dist(pos[a], pos[b]), b) for b in range(n) if b != a)[:3]
        for _, b in near:
            roads[(a, b)] = secs(a, b)
            if rnd.random() < 0.75:
                roads[(b, a)] = secs(b, a)
    cx = sum(p[0] for p in pos) / n
    cy = sum(p[1] for p in pos) / n
    ring = sorted(range(n), key=lambda i: math.atan2(pos[i][1] - cy, pos[i][0] - cx))
    for a, b in zip(ring, ring[1:] + ring[:1]):
        roads.setdefault((a, b), secs(a, b))
    names = [NAMES[i % len(NAMES)] + (f" {i // len(NAMES) + 1}" if i >= len(NAMES) else "")
             for i in range(n)]
    c = City(names, pos, dict(sorted(roads.items())))
    assert strongly_connected(c)
    return c


def reachable(c: City, a: int, skip: tuple[int, int] | None = None) -> set[int]:
    """Locations reachable from a by one or more roads (optionally without one road)."""
    seen: set[int] = set()
    todo = [a]
    while todo:
        x = todo.pop()
        for y in c.out(x):
            if (x, y) != skip and y not in seen:
                seen.add(y)
                todo.append(y)
    return seen


def strongly_connected(c: City) -> bool:
    return all(len(reachable(c, a) | {a}) == c.n for a in range(c.n))


def shortest(c: City, a: int, b: int, skip: tuple[int, int] | None = None) -> int | None:
    """Travel seconds of the fastest route a -> b (Dijkstra), optionally avoiding a road."""
    dist = {a: 0}
    heap = [(0, a)]
    while heap:
        d, x = heapq.heappop(heap)
        if x == b:
            return d
        if d > dist[x]:
            continue
        for y in c.out(x):
            if (x, y) == skip:
                continue
            nd = d + c.roads[(x, y)]
            if nd < dist.get(y, math.inf):
                dist[y] = nd
                heapq.heappush(heap, (nd, y))
    return None


def tour(c: City, rnd: random.Random, stops: int | None = None) -> list[int]:
    """A path along roads visiting ``stops`` distinct locations (all by default):
    randomised depth-first search, fewest onward roads first (Warnsdorff)."""
    k = stops or c.n
    for _ in range(200):
        start = rnd.randrange(c.n)
        path, seen = [start], {start}
        budget = [20_000]

        def dfs() -> bool:
            if len(path) == k:
                return True
            budget[0] -= 1
            if budget[0] < 0:
                return False
            nxt = [y for y in c.out(path[-1]) if y not in seen]
            rnd.shuffle(nxt)
            nxt.sort(key=lambda y: sum(1 for z in c.out(y) if z not in seen))
            for y in nxt:
                path.append(y)
                seen.add(y)
                if dfs():
                    return True
                path.pop()
                seen.discard(y)
            return False

        if dfs():
            return path
    raise RuntimeError("no tour found")


def tours(c: City, agents: int, seed: int = 7) -> list[list[int]]:
    rnd = random.Random(seed * 1000 + agents)
    return [tour(c, rnd) for _ in range(agents)]


def background(c: City, plans: list[list[int]]) -> list[tuple[str, str, str]]:
    """The background triples (IRIs as strings; labels as ('"text"')): roads,
    labels, legs."""
    out: list[tuple[str, str, str]] = []
    for i, name in enumerate(c.names):
        out.append((c.iri(i), RDFS_LABEL, f'"{name}"'))
    for (a, b) in c.roads:
        out.append((c.iri(a), NS + "road", c.iri(b)))
    for k, path in enumerate(plans, start=1):
        agent = f"{NS}agent{k}"
        for j, (a, b) in enumerate(zip(path, path[1:]), start=1):
            leg = f"{NS}agent{k}-leg{j}"
            out += [(leg, NS + "agent", agent), (leg, NS + "from", c.iri(a)), (leg, NS + "to", c.iri(b))]
    return out


def stream(c: City, plans: list[list[int]], rounds: int = 1, seed: int = 7,
           p_block: float = P_BLOCK, p_alt: float = P_ALT, p_stale: float = P_STALE,
           noise: int = NOISE) -> list[tuple[int, str, str, str]]:
    """(time, s, p, o) rows, IRIs as strings, sorted by time: arrivals and
    traffic updates for ``rounds`` days of every agent's tour."""
    rnd = random.Random(seed)
    rows: list[tuple[int, str, str, str]] = []
    at, blocked = NS + "at", NS + "blockedTo"
    roads = list(c.roads)
    for day in range(rounds):
        for k, path in enumerate(plans, start=1):
            agent = f"{NS}agent{k}"
            t = day * DAY + START + rnd.randrange(0, 1800)
            t0 = t
            rows.append((t, agent, at, c.iri(path[0])))
            for a, b in zip(path, path[1:]):
                arrived = t                              # the arrival at a asks for the road to b
                if rnd.random() < p_block:
                    rows.append((arrived - rnd.randrange(1, BLOCK_VALID - 60), c.iri(a), blocked, c.iri(b)))
                    detour = shortest(c, a, b, skip=(a, b))
                    drive = detour if detour is not None else c.roads[(a, b)]
                else:
                    drive = c.roads[(a, b)]
                if rnd.random() < p_stale:
                    rows.append((arrived - rnd.randrange(BLOCK_VALID + 60, 3 * BLOCK_VALID),
                                 c.iri(a), blocked, c.iri(b)))
                for y in c.out(a):
                    if y != b and rnd.random() < p_alt:
                        rows.append((arrived - rnd.randrange(1, BLOCK_VALID - 60), c.iri(a), blocked, c.iri(y)))
                t += rnd.randrange(300, 900) + drive     # delivering at a, then driving
                rows.append((t, agent, at, c.iri(b)))
            for _ in range(noise):
                x, y = rnd.choice(roads)
                rows.append((rnd.randrange(t0 - 1800, t), c.iri(x), blocked, c.iri(y)))
    rows.sort()
    return rows


def arrival_times(rows):
    """Arrivals only, as (time, agent, location)."""
    return [(t, s, o) for t, s, p, o in rows if p == NS + "at"]


def short(iri: str) -> str:
    return ":" + iri[len(NS):] if iri.startswith(NS) else f"<{iri}>"


def turtle(c: City, plans: list[list[int]], seed: int | None = None) -> tuple[str, str]:
    """(city.ttl, plans.ttl) texts."""
    head = f"@prefix : <{NS}> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
    origin = f" (generate.py --seed {seed})" if seed is not None else ""
    city_lines = [head, f"# {c.n} locations, {len(c.roads)} roads{origin}\n"]
    for i, name in enumerate(c.names):
        x, y = c.pos[i]
        roads = " , ".join(f":l{b + 1}" for b in c.out(i))
        city_lines.append(f':l{i + 1} rdfs:label "{name}" ;  # ({x:.1f} km, {y:.1f} km)\n'
                          f'    :road {roads} .\n')
    plan_lines = [head, f"# {len(plans)} agents, each visiting all {c.n} locations along roads\n"]
    for k, path in enumerate(plans, start=1):
        plan_lines.append(f"# agent{k}: " + " -> ".join(f"l{i + 1}" for i in path) + "\n")
        for j, (a, b) in enumerate(zip(path, path[1:]), start=1):
            plan_lines.append(f":agent{k}-leg{j} :agent :agent{k} ; :from :l{a + 1} ; :to :l{b + 1} .\n")
    return "".join(city_lines), "".join(plan_lines)


def reference(c: City, plans: list[list[int]], rows, window: int = BLOCK_VALID) -> list[tuple]:
    """What the queries must find, computed directly from the data: for
    every arrival whose next road had a traffic update at most ``window``
    seconds before it (strictly before), (time, agent, at, dest, since,
    alternatives, blocked): ``since`` the earliest such update,
    ``alternatives`` the other roads out of ``at`` from where ``dest`` is
    reachable, ``blocked`` every road out of ``at`` with such an update
    (IRIs as strings; tuples sorted)."""
    iri = {c.iri(i): i for i in range(c.n)}
    nxt = {}
    for k, path in enumerate(plans, start=1):
        for a, b in zip(path, path[1:]):
            nxt[(f"{NS}agent{k}", c.iri(a))] = c.iri(b)
    blocks = [(t, s, o) for t, s, p, o in rows if p == NS + "blockedTo"]
    out = []
    for t, agent, p, at in rows:
        if p != NS + "at" or (agent, at) not in nxt:
            continue
        dest = nxt[(agent, at)]
        recent = [(tb, hop) for tb, x, hop in blocks if x == at and t - window <= tb < t]
        since = [tb for tb, hop in recent if hop == dest]
        if not since:
            continue
        a, d = iri[at], iri[dest]
        alts = tuple(sorted((c.iri(y) for y in c.out(a) if y != d and d in reachable(c, y)),
                            key=lambda x: iri[x]))
        blocked = tuple(sorted({hop for _, hop in recent}, key=lambda x: iri.get(x, -1)))
        out.append((t, agent, at, dest, min(since), alts, blocked))
    return sorted(out, key=lambda r: (r[0], int(r[1].rsplit("agent", 1)[-1])))


def write(agents: int, rounds: int, seed: int, out: Path = HERE) -> tuple[City, list[list[int]], list]:
    c = city(seed=seed)
    plans = tours(c, agents, seed)
    rows = stream(c, plans, rounds, seed)
    city_ttl, plans_ttl = turtle(c, plans, seed)
    (out / "city.ttl").write_text(city_ttl)
    (out / "plans.ttl").write_text(plans_ttl)
    with open(out / "stream.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time", "subject", "predicate", "object"])
        for t, s, p, o in rows:
            w.writerow([t, short(s), short(p), short(o)])
    return c, plans, rows


def read_stream(path: Path = HERE / "stream.csv") -> list[tuple[int, str, str, str]]:
    """The rows of a written stream.csv, IRIs expanded."""
    def full(x: str) -> str:
        return NS + x[1:] if x.startswith(":") else x.strip("<>")
    with open(path, newline="") as f:
        r = csv.reader(f)
        next(r)
        return [(int(t), full(s), full(p), full(o)) for t, s, p, o in r]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1, help="working days")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    c, plans, rows = write(args.agents, args.rounds, args.seed)
    n_at = sum(1 for r in rows if r[2] == NS + "at")
    print(f"city.ttl: {c.n} locations, {len(c.roads)} roads; plans.ttl: {len(plans)} tours; "
          f"stream.csv: {len(rows)} events ({n_at} arrivals, {len(rows) - n_at} traffic updates)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
