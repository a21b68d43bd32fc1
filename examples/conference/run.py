"""Conference tracking: the tutorial's queries Q1-Q5 in EP-SPARQL.

    .venv/bin/python examples/conference/run.py [--background] [--no-plot]

Pushes the floor plan (floorplan.ttl) and the author profiles
(profiles.ttl) as triples at the start of the stream (09:00:00), then the
RFID reads of rfid.csv (``?person lv:detectedat ?room``, every 5 s per
tag), through the five queries q1.rq .. q5.rq registered on one engine;
with --background, loads the two files as background knowledge instead
and runs background/q1.rq .. q5.rq (GRAPH patterns) over the reads;
prints the answers (repeated answers merged into episodes: the same answer
at consecutive reads) and draws the itinerary with the answers of Q3 and
Q4 into out/conference.png.
"""
from __future__ import annotations

import argparse
import csv
import importlib.util
import time
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rdflib import Graph, URIRef

from epsparql import Engine

HERE = Path(__file__).resolve().parent


def _load_generate():
    """generate.py of this example, under a name of its own (other examples
    have a generate.py too)."""
    spec = importlib.util.spec_from_file_location("conference_generate", HERE / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _load_generate()


LV = "http://deri.org/floorplan/"
DETECTED_AT = URIRef(LV + "detectedat")
QUERIES = ["q1", "q2", "q3", "q4", "q5"]
EPISODE_GAP = 10        # the same answer again within this many seconds continues an episode


@dataclass
class Result:
    answers: dict[str, list] = field(default_factory=dict)   # query -> list of Answer
    q1: list[tuple[int, str, str]] = field(default_factory=list)          # (t, name, room)
    q2: dict[tuple[str, str, str, str], list[tuple[int, int]]] = field(default_factory=dict)
    q3: dict[tuple[str, str, str], list[tuple[int, int]]] = field(default_factory=dict)
    q4: dict[tuple[str, str, str], list[tuple[int, int]]] = field(default_factory=dict)
    q5: dict[tuple[str, str, int], list[tuple[int, int]]] = field(default_factory=dict)
    reads: int = 0
    static: int = 0
    seconds: float = 0.0
    background: bool = False


def clock(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%H:%M:%S")


def episodes(times) -> list[tuple[int, int]]:
    """Merge answer times (seconds after T0) into (first, last) runs."""
    out: list[list[int]] = []
    for t in sorted(set(times)):
        if out and t - out[-1][1] <= EPISODE_GAP:
            out[-1][1] = t
        else:
            out.append([t, t])
    return [tuple(e) for e in out]


def load_static() -> Graph:
    g = Graph()
    g.parse(HERE / "floorplan.ttl")
    g.parse(HERE / "profiles.ttl")
    return g


def read_rfid(path: Path) -> list[tuple[URIRef, URIRef, URIRef, int]]:
    with path.open(newline="") as f:
        return [(URIRef(r["person"]), DETECTED_AT, URIRef(r["location"]), int(r["time"]))
                for r in csv.DictReader(f)]


def run(rfid: Path = HERE / "rfid.csv", background: bool = False) -> Result:
    """Run Q1-Q5 over the reads.  The static data is pushed as stream
    triples at T0 (q*.rq) or, with ``background``, loaded as background
    knowledge (background/q*.rq)."""
    res = Result(background=background)
    engine = Engine(reasoning="none")
    folder = HERE / "background" if background else HERE
    with warnings.catch_warnings():
        # Joins with the static triples have no time bound (and the first
        # read of a tag in Q1 is looked up in an unbounded OPTIONALSEQ
        # store): the engine rightly warns; see README.md, "Static data".
        warnings.simplefilter("ignore")
        queries = {n: engine.register((folder / f"{n}.rq").read_text(), name=n) for n in QUERIES}
    static = load_static()
    reads = read_rfid(rfid)
    t0 = time.perf_counter()
    if background:
        engine.load_background(static)
    else:
        # the static data: pushed once, at the start of the stream, before any read
        engine.push_many([(s, p, o, generate.T0) for s, p, o in static])
    engine.push_many(reads)
    engine.flush()
    res.seconds = time.perf_counter() - t0
    res.static, res.reads = len(static), len(reads)
    res.answers = {n: q.results() for n, q in queries.items()}
    engine.close()

    T0 = generate.T0
    res.q1 = sorted((int(a.end - T0), str(a["name"]), str(a["locName"])) for a in res.answers["q1"])

    names = {str(s): str(o) for s, p, o in static
             if str(p) in (LV + "name", "http://xmlns.com/foaf/0.1/name")}
    runs: dict = defaultdict(list)
    for a in res.answers["q2"]:
        key = (names[str(a["person1"])], names[str(a["loc1"])],
               names[str(a["person2"])], names[str(a["loc2"])])
        runs[key].append(int(a.end - T0))
    res.q2 = {k: episodes(v) for k, v in sorted(runs.items())}

    runs = defaultdict(list)
    for a in res.answers["q3"]:
        runs[(str(a["authName"]), str(a["coAuthName"]), str(a["locName"]))].append(int(a.end - T0))
    res.q3 = {k: episodes(v) for k, v in sorted(runs.items())}

    runs = defaultdict(list)
    for a in res.answers["q4"]:
        runs[(str(a["authName"]), str(a["editorName"]), str(a["locName"]))].append(int(a.end - T0))
    res.q4 = {k: episodes(v) for k, v in sorted(runs.items())}

    # Q5's COUNT(DISTINCT ?coAuth) ... GROUP BY ?loc2, per read of the author
    groups: dict = defaultdict(set)
    for a in res.answers["q5"]:
        groups[(str(a["authName"]), int(a.end - T0), str(a["locName"]))].add(str(a["coAuth"]))
    runs = defaultdict(list)
    for (author, t, loc), coauthors in groups.items():
        runs[(author, loc, len(coauthors))].append(t)
    res.q5 = {k: episodes(v) for k, v in sorted(runs.items())}
    return res


def _span(T0: int, eps: list[tuple[int, int]]) -> str:
    return ", ".join(f"{clock(T0 + a)}-{clock(T0 + b)}" for a, b in eps)


def report(r: Result) -> None:
    T0 = generate.T0
    how = "as background knowledge" if r.background else f"as stream triples at {clock(T0)}"
    print(f"{r.static} static triples {how}, {r.reads} RFID reads "
          f"{clock(T0 + 10)}-{clock(T0 + generate.END - 1)}, "
          f"{sum(len(v) for v in r.answers.values())} answers, {r.seconds:.1f} s")
    print("\nQ1  who just entered where (name and description of the location)")
    desc = {v[0]: v[1] for v in generate.ROOMS.values()}
    for t, name, room in r.q1:
        print(f"  {clock(T0 + t)}  {name:6} entered {room:11} {desc[room]}")
    print(f"\nQ2  who can reach whom from a nearby location ({len(r.answers['q2'])} answers; "
          "each pair once, the other direction is also derived)")
    for (p1, l1, p2, l2), eps in r.q2.items():
        if p1 < p2:
            print(f"  {p1:6} ({l1:11}) <-> {p2:6} ({l2:11})  {_span(T0, eps)}")
    print(f"\nQ3  co-authors in the author's location during the last 5 s ({len(r.answers['q3'])} answers)")
    for (a, c, loc), eps in r.q3.items():
        print(f"  {a:6} <- {c:6} in {loc:11}  {_span(T0, eps)}")
    print(f"\nQ4  editors of the author's papers in a nearby location during the last 15 s "
          f"({len(r.answers['q4'])} answers)")
    for (a, e, loc), eps in r.q4.items():
        print(f"  {a:6} <- editor {e:6} in {loc:11}  {_span(T0, eps)}")
    print(f"\nQ5  co-authors in nearby locations during the last 30 s, counted per location "
          f"({len(r.answers['q5'])} answers counted in Python)")
    for (a, loc, n), eps in r.q5.items():
        print(f"  {a:6} {loc:11} {n} co-author{'s' if n > 1 else ' '}  {_span(T0, eps)}")


def plot(r: Result, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    T0 = generate.T0
    rooms = list(generate.ROOMS)
    colours = dict(zip(rooms, ["tab:blue", "tab:orange", "tab:green", "tab:purple"]))
    people = list(generate.PEOPLE)
    fig, ax = plt.subplots(figsize=(12, 5.5), constrained_layout=True)
    for i, p in enumerate(people):
        for room, a, b in generate.ITINERARY[p]:
            ax.broken_barh([(a / 60, (b - a) / 60)], (i - 0.35, 0.7), color=colours[room], alpha=0.35)
            ax.text((a + b) / 120, i + 0.2, generate.ROOMS[room][0], ha="center", va="center", fontsize=7)
    name_row = {generate.PEOPLE[p][0]: i for i, p in enumerate(people)}
    for t, name, _ in r.q1:
        ax.plot(t / 60, name_row[name] - 0.42, marker="v", color="black", ms=5)
    for (a, c, _), eps in r.q3.items():
        for s, e in eps:
            ax.plot([s / 60, e / 60], [name_row[a] - 0.2] * 2, color="crimson", lw=2.5)
    for (a, ed, _), eps in r.q4.items():
        for s, e in eps:
            ax.plot([s / 60, e / 60], [name_row[a] - 0.05] * 2, color="navy", lw=1.5, ls="--")
    ax.plot([], [], marker="v", color="black", ls="", label="Q1: entered a location")
    ax.plot([], [], color="crimson", lw=2.5, label="Q3: a co-author in the same room (5 s)")
    ax.plot([], [], color="navy", lw=1.5, ls="--", label="Q4: an editor nearby (15 s)")
    ax.set_yticks(range(len(people)), [generate.PEOPLE[p][0] for p in people])
    ax.set_ylim(-0.6, len(people) - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel(f"minutes after {clock(T0)} UTC")
    ax.set_title("RFID itinerary (room per person) and the answers of Q1, Q3, Q4")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> Result:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--background", action="store_true",
                    help="load the floor plan and profiles as background knowledge "
                         "and run background/q*.rq")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    r = run(background=args.background)
    report(r)
    if not args.no_plot:
        out = HERE / "out" / "conference.png"
        plot(r, out)
        print(f"\nplot: {out}")
    return r


if __name__ == "__main__":
    main()
