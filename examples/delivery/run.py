#!/usr/bin/env python
"""Goods delivery in a city: re-route agents around blocked roads.

    .venv/bin/python examples/delivery/run.py [--stream FILE] [--quiet]

Loads the road graph (city.ttl) and the agents' tours (plans.ttl) as
background knowledge, registers reroute.rq and blocked.rq, streams
stream.csv (arrivals ``:agentN :at :lK`` and traffic updates
``:lA :blockedTo :lB``) through the engine, and prints a re-routing
decision for every arrival whose next road was blocked:

    day 1 08:19  agent1 at l5 Porta Venezia -> l18 Bovisa blocked since 08:13:
                 via l15 Corvetto (alternatives l4, l8, l15; blocked l4, l8)

The decision: the alternatives of reroute.rq (roads out of the location
from where the next stop is reachable) minus the roads blocked.rq reports
blocked at the same arrival; of those, the one with the fewest roads on to
the next stop (ties: the lowest location number); none left -> wait.
"""
from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

from rdflib import Graph, URIRef

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from epsparql import Engine  # noqa: E402

NS = "http://epsparql.org/delivery#"
ROAD = URIRef(NS + "road")
LABEL = URIRef("http://www.w3.org/2000/01/rdf-schema#label")


@dataclass(frozen=True)
class Decision:
    time: float                 # the arrival
    agent: str                  # IRIs as strings
    at: str
    dest: str
    blocked_since: float        # the earliest traffic update on at -> dest in the window
    alternatives: tuple[str, ...]
    blocked: tuple[str, ...]    # roads out of ``at`` blocked at the arrival (dest included)
    choice: str | None          # the next hop taken, None = wait


@dataclass
class Delivery:
    """An engine with the delivery queries over a road graph and tours."""

    engine: Engine
    roads: dict[str, set[str]]
    labels: dict[str, str] = field(default_factory=dict)
    reroute_text: str | None = None     # another re-routing query (same variables); default reroute.rq

    def __post_init__(self) -> None:
        self.reroute = self.engine.register(self.reroute_text or (HERE / "reroute.rq").read_text(),
                                            name="reroute")
        self.blocked_q = self.engine.register((HERE / "blocked.rq").read_text(), name="blocked")
        # answers of arrivals not decided yet, keyed by arrival
        self._alts: dict[tuple, set[str]] = {}          # (agent, at, dest, time) -> alternatives
        self._since: dict[tuple, float] = {}
        self._blocked: dict[tuple, set[str]] = {}       # (agent, at, time) -> blocked roads
        self._done: list[Decision] = []
        self._now = -math.inf

    def push(self, rows) -> None:
        """(time, s, p, o) rows (IRIs as strings or URIRefs), in time order."""
        rows = list(rows)
        self.engine.push_many([(URIRef(s), URIRef(p), URIRef(o), t) for t, s, p, o in rows])
        if rows:
            self._now = max(self._now, max(r[0] for r in rows))
        self.collect()
        # both queries answer an arrival while it is processed: every arrival
        # before the latest time pushed has all its answers
        self._decide(before=self._now)

    def collect(self) -> None:
        """Drain both queries' answers into the open arrivals."""
        for a in self.blocked_q.results():
            self._blocked.setdefault((str(a["agent"]), str(a["from"]), a.end), set()).add(str(a["hop"]))
        for a in self.reroute.results():
            key = (str(a["agent"]), str(a["from"]), str(a["dest"]), a.end)
            found = self._alts.setdefault(key, set())
            if "alt" in a.bindings:                     # unbound: no other road leads there
                found.add(str(a["alt"]))
            self._since[key] = min(self._since.get(key, a.start), a.start)

    def _decide(self, before: float) -> None:
        ready = sorted((k for k in self._alts if k[3] < before), key=lambda k: (k[3], number(k[0])))
        for key in ready:
            agent, at, dest, t = key
            alts = self._alts.pop(key)
            closed = self._blocked.get((agent, at, t), set())
            self._done.append(Decision(t, agent, at, dest, self._since.pop(key),
                                       tuple(sorted(alts, key=number)),
                                       tuple(sorted(closed, key=number)),
                                       choose(self.roads, alts, closed, dest)))
        for key in [k for k in self._blocked if k[2] < before]:
            del self._blocked[key]

    def flush(self) -> list[Decision]:
        """End of stream: decide the remaining arrivals; all decisions."""
        self.engine.flush()
        self.collect()
        self._decide(before=math.inf)
        return self.decisions()

    def decisions(self) -> list[Decision]:
        """The decisions so far, one per arrival with a blocked next road, in time order."""
        return list(self._done)

    def name(self, iri: str) -> str:
        short = iri[len(NS):] if iri.startswith(NS) else iri
        label = self.labels.get(iri)
        return f"{short} {label}" if label else short


def choose(roads: dict[str, set[str]], alternatives, blocked, dest: str) -> str | None:
    """The next hop: of the alternatives not blocked, the one with the
    fewest roads on to ``dest`` (ties: the lowest location number)."""
    free = sorted(set(alternatives) - set(blocked), key=lambda x: (hops(roads, x, dest), number(x)))
    return free[0] if free else None


def number(iri: str) -> tuple:
    """Sort key: the number in ``...#l12`` or ``...#agent3``, then the IRI."""
    tail = iri.rsplit("#", 1)[-1]
    digits = tail.lstrip("abcdefghijklmnopqrstuvwxyz")
    return (0, int(digits), tail) if digits.isdigit() else (1, 0, iri)


def hops(roads: dict[str, set[str]], a: str, b: str) -> int:
    """Fewest roads from a to b (breadth first); a large number if unreachable."""
    seen, todo = {a: 0}, deque([a])
    while todo:
        x = todo.popleft()
        if x == b:
            return seen[x]
        for y in roads.get(x, ()):
            if y not in seen:
                seen[y] = seen[x] + 1
                todo.append(y)
    return 1 << 30


def delivery(city: Path | str | Graph = HERE / "city.ttl",
             plans: Path | str | Graph = HERE / "plans.ttl", reroute: str | None = None,
             **engine_options) -> Delivery:
    """A Delivery over a road graph and tours (Turtle files, Turtle text or
    graphs); ``reroute`` replaces reroute.rq's text."""
    def graph(src) -> Graph:
        if isinstance(src, Graph):
            return src
        g = Graph()
        if isinstance(src, Path) or (isinstance(src, str) and "\n" not in src and Path(src).exists()):
            g.parse(str(src), format="turtle")
        else:
            g.parse(data=src, format="turtle")
        return g
    gc, gp = graph(city), graph(plans)
    engine = Engine(**engine_options)
    engine.load_background(gc)
    engine.load_background(gp)
    roads: dict[str, set[str]] = defaultdict(set)
    for s, _, o in gc.triples((None, ROAD, None)):
        roads[str(s)].add(str(o))
    labels = {str(s): str(o) for s, _, o in gc.triples((None, LABEL, None))}
    return Delivery(engine, dict(roads), labels, reroute)


def _generate():
    """The sibling generate.py, imported by path (other examples have one too)."""
    import importlib.util
    name = "delivery_generate"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "generate.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def clock(t: float) -> str:
    day, rest = divmod(int(t), 86400)
    return f"day {day + 1} {rest // 3600:02d}:{rest % 3600 // 60:02d}"


def describe(d: Delivery, x: Decision) -> str:
    alts = ", ".join(d.name(a).split()[0] for a in x.alternatives) or "none"
    others = [b for b in x.blocked if b != x.dest]
    blocked = f"; blocked {', '.join(d.name(b).split()[0] for b in others)}" if others else ""
    verdict = (f"via {d.name(x.choice)}" if x.choice else
               "wait: every alternative is blocked" if x.alternatives else "wait: no other road leads there")
    return (f"{clock(x.time)}  {d.name(x.agent)} at {d.name(x.at)} -> {d.name(x.dest)} "
            f"blocked since {clock(x.blocked_since)[-5:]}:\n"
            f"{'':13}{verdict} (alternatives {alts}{blocked})")


def main(argv: list[str] | None = None) -> list[Decision]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stream", type=Path, default=HERE / "stream.csv")
    ap.add_argument("--quiet", action="store_true", help="print the summary only")
    args = ap.parse_args(argv)
    rows = _generate().read_stream(args.stream)
    d = delivery()
    d.push(rows)
    decisions = d.flush()
    if not args.quiet:
        for x in decisions:
            print(describe(d, x))
    arrivals = sum(1 for r in rows if r[2] == NS + "at")
    waits = sum(1 for x in decisions if x.choice is None)
    print(f"{len(rows)} events ({arrivals} arrivals): {len(decisions)} re-routings, "
          f"{len(decisions) - waits} via an alternative road, {waits} waits")
    return decisions


if __name__ == "__main__":
    main()
