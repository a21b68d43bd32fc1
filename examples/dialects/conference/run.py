"""Conference tracking in CQELS-QL (Q1-Q5) and C-SPARQL (Q1), next to EP-SPARQL.

    .venv/bin/python examples/dialects/conference/run.py [--closed]

The RFID reads of examples/conference/rfid.csv on the stream
<http://deri.org/streams/rfid>, the floor plan as the named background
graph <http://deri.org/floorplan/>, the profiles as the default
background graph; q1.rq .. q5.rq (CQELS-QL) and csparql_q1.rq (C-SPARQL)
registered in one engine.  The answers are printed as the EP-SPARQL
example prints its own (the same answer at consecutive reads merged into
episodes), and compared with the answers of that example's EP-SPARQL
form (examples/conference/background/q*.rq).  ``--closed`` widens each
RANGE window by one second, which makes it closed on the left on these
whole-second reads, as EP-SPARQL's ``getDURATION() <= a`` is (see
README.md, "Where the answers differ").
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rdflib import Graph

from epsparql import Engine

HERE = Path(__file__).resolve().parent
CONFERENCE = HERE.parent.parent / "conference"
RFID = "http://deri.org/streams/rfid"
FLOORPLAN = "http://deri.org/floorplan/"
QUERIES = ["q1", "q2", "q3", "q4", "q5", "csparql_q1"]
#: RANGE windows and their closed-on-the-left forms (--closed)
CLOSED = {"q2": ("[RANGE 3s]", "[RANGE 4s]"), "q3": ("[RANGE 5s]", "[RANGE 6s]"),
          "q4": ("[RANGE 15s]", "[RANGE 16s]"), "q5": ("[RANGE 30s]", "[RANGE 31s]")}


def _load(name: str, path: Path):
    """A module of the EP-SPARQL example, under a name of its own."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


ep_example = _load("conference_ep_run", CONFERENCE / "run.py")
generate = ep_example.generate
T0 = generate.T0


@dataclass
class Result:
    answers: dict[str, list] = field(default_factory=dict)      # query -> Answers
    q1: list[tuple[int, str, str]] = field(default_factory=list)
    q2: set[tuple[str, str]] = field(default_factory=set)         # (person1, person2)
    q3: dict = field(default_factory=dict)                        # as the EP-SPARQL example's
    q4: dict = field(default_factory=dict)
    q5: dict = field(default_factory=dict)
    csparql_q1: list[tuple[int, str, str]] = field(default_factory=list)
    seconds: float = 0.0


def names() -> dict[str, str]:
    out = {}
    for f in ("floorplan.ttl", "profiles.ttl"):
        g = Graph()
        g.parse(CONFERENCE / f)
        for s, p, o in g:
            if str(p) in (FLOORPLAN + "name", "http://xmlns.com/foaf/0.1/name"):
                out[str(s)] = str(o)
    return out


def run(closed: bool = False) -> Result:
    """Register the six queries on one engine and push the reads."""
    res = Result()
    engine = Engine(reasoning="none")
    engine.load_background(str(CONFERENCE / "floorplan.ttl"), graph=FLOORPLAN)
    engine.load_background(str(CONFERENCE / "profiles.ttl"))
    queries = {}
    for n in QUERIES:
        text = (HERE / f"{n}.rq").read_text()
        if closed and n in CLOSED:
            text = text.replace(*CLOSED[n])
        queries[n] = engine.register(text, name=n)
    reads = ep_example.read_rfid(CONFERENCE / "rfid.csv")
    t0 = time.perf_counter()
    engine.push_many((s, p, o, t, None, RFID) for s, p, o, t in reads)
    engine.flush()
    res.seconds = time.perf_counter() - t0
    res.answers = {n: q.results() for n, q in queries.items()}
    engine.close()

    nm = names()
    res.q1 = sorted((int(a.end - T0), str(a["name"]), str(a["locName"])) for a in res.answers["q1"])
    res.csparql_q1 = sorted((int(a.end - T0), str(a["name"]), str(a["locName"]))
                            for a in res.answers["csparql_q1"])
    res.q2 = {(nm[str(a["person1"])], nm[str(a["person2"])]) for a in res.answers["q2"]}

    def eps(answers, key):
        runs = defaultdict(list)
        for a in answers:
            runs[key(a)].append(int(a.end - T0))
        return {k: ep_example.episodes(v) for k, v in sorted(runs.items())}

    res.q3 = eps(res.answers["q3"], lambda a: (str(a["authName"]), str(a["coAuthName"]),
                                               str(a["locName"])))
    res.q4 = eps(res.answers["q4"], lambda a: (str(a["authName"]), str(a["editorName"]),
                                               str(a["locName"])))
    res.q5 = eps(res.answers["q5"], lambda a: (str(a["authName"]), str(a["locName"]),
                                               int(a["noCoAuths"])))
    return res


def entries(csparql_q1: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """C-SPARQL's Q1 (where each attendee is, at every read) reduced to the
    reads where the location changed: what 'just entered' means."""
    last: dict[str, str] = {}
    out = []
    for t, name, room in sorted(csparql_q1):
        if last.get(name) != room:
            out.append((t, name, room))
        last[name] = room
    return out


def compare(r: Result, ep) -> list[str]:
    """Where the answers of the dialect forms and the EP-SPARQL form agree."""
    unordered = {frozenset(p) for p in r.q2}
    ep_pairs = {frozenset((a, b)) for (a, _, b, _) in ep.q2}
    return [
        f"Q1 (CQELS) and EP-SPARQL: {'the same' if r.q1 == ep.q1 else 'DIFFERENT'} "
        f"{len(r.q1)} entries",
        f"Q1 (C-SPARQL, every read) reduced to changes of location and EP-SPARQL's Q1: "
        f"{'the same' if entries(r.csparql_q1) == ep.q1 else 'DIFFERENT'}",
        f"Q2 pairs of people (either order): {len(unordered)} (CQELS), {len(ep_pairs)} (EP-SPARQL)"
        f"{', the same' if unordered == ep_pairs else ''}",
        f"Q3 episodes: {'the same' if r.q3 == ep.q3 else _diff(r.q3, ep.q3)}",
        f"Q4 episodes: {'the same' if r.q4 == ep.q4 else _diff(r.q4, ep.q4)}",
        f"Q5 episodes: {'the same' if r.q5 == ep.q5 else _diff(r.q5, ep.q5)}",
    ]


def _diff(a: dict, b: dict) -> str:
    keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return "differ at " + "; ".join(f"{' '.join(map(str, k))}: {a.get(k)} vs {b.get(k)}"
                                    for k in keys)


def report(r: Result) -> None:
    clock = ep_example.clock
    print(f"{sum(len(v) for v in r.answers.values())} answers, {r.seconds:.1f} s")
    print("\nQ1 (CQELS)  who just entered where")
    for t, name, room in r.q1:
        print(f"  {clock(T0 + t)}  {name:6} entered {room}")
    print(f"\nQ1 (C-SPARQL)  where each attendee is, at every read: {len(r.csparql_q1)} answers")
    print(f"\nQ2 (CQELS)  who can reach whom: {len(r.answers['q2'])} answers, "
          f"{len(r.q2)} ordered pairs")
    for title, eps, what in (("Q3 (CQELS)  co-authors in the author's location, last 5 s", r.q3, "<-"),
                             ("Q4 (CQELS)  editors of his papers nearby, last 15 s", r.q4, "<- editor"),
                             ("Q5 (CQELS)  COUNT(DISTINCT ?coAuth) nearby, last 30 s", r.q5, "")):
        print(f"\n{title}")
        for k, e in eps.items():
            span = ", ".join(f"{clock(T0 + a)}-{clock(T0 + b)}" for a, b in e)
            if what:
                print(f"  {k[0]:6} {what} {k[1]:6} in {k[2]:11}  {span}")
            else:
                print(f"  {k[0]:6} {k[1]:11} {k[2]} co-author{'s' if k[2] > 1 else ' '}  {span}")


def main(argv: list[str] | None = None) -> Result:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--closed", action="store_true",
                    help="widen each RANGE window by 1 s (closed on the left, as EP-SPARQL's <=)")
    args = ap.parse_args(argv)
    r = run(closed=args.closed)
    report(r)
    print("\nagainst the EP-SPARQL form (examples/conference/background/q*.rq):")
    for line in compare(r, ep_example.run(background=True)):
        print("  " + line)
    return r


if __name__ == "__main__":
    main()
