"""Generate the bundled conference data: a floor plan, author profiles and
an RFID detection stream (the running example of the Linked Stream Data
tutorial, queries Q1-Q5).

    python examples/conference/generate.py          # writes the three files below

* floorplan.ttl  rooms with lv:name, lv:desc, and lv:connected (both ways)
* profiles.ttl   people (foaf:name), papers (dc:creator, dcterms:partOf),
                 proceedings (swrc:editor)
* rfid.csv       time,person,location: every attendee's tag is read every 5 s
                 (each tag has its own phase) by the reader of the room the
                 attendee is in, over ten minutes from 09:00:10 to 09:09:59

The itinerary is written out below (ITINERARY), not random, so that the
expected answers of Q1-Q5 can be checked by hand (tests/test_app_examples.py).
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
T0 = 1_301_302_800                  # 2011-03-28T09:00:00Z; static data is pushed at T0
PERIOD = 5                          # seconds between two reads of one tag
END = 600                           # the stream ends before T0 + 600

BASE = "http://example.org/conf/"
LV = "http://deri.org/floorplan/"

# room id -> (name, description)
ROOMS = {
    "hall": ("Main hall", "Registration desk, posters and coffee"),
    "auditorium": ("Auditorium", "Keynotes and plenary sessions"),
    "roomB": ("Room B", "Research track: stream reasoning"),
    "roomC": ("Room C", "Research track: linked data"),
}
# directly connected rooms ("nearby" in the tutorial); symmetric
CONNECTED = [("hall", "auditorium"), ("hall", "roomB"), ("roomB", "roomC")]

# person id -> (name, tag phase in seconds)
PEOPLE = {
    "alice": ("Alice", 0),
    "bob": ("Bob", 0),          # same phase as Alice: read at the same instants
    "carol": ("Carol", 2),
    "dave": ("Dave", 3),
    "erin": ("Erin", 1),
    "frank": ("Frank", 4),
}
# paper id -> (title, authors, proceedings)
PAPERS = {
    "paper1": ("Continuous queries over linked streams", ["alice", "bob"], "procWWW"),
    "paper2": ("Event processing in logic programming", ["alice", "carol"], "procWS"),
    "paper3": ("Tracking attendees with active RFID", ["dave"], "procWWW"),
}
# proceedings id -> (title, editors)
PROCEEDINGS = {
    "procWWW": ("Proceedings of the main conference", ["erin"]),
    "procWS": ("Proceedings of the stream reasoning workshop", ["frank"]),
}
# person -> [(room, from, to)], seconds after T0, 'to' exclusive
ITINERARY = {
    "alice": [("hall", 10, 120), ("auditorium", 120, 300), ("hall", 300, 360), ("roomB", 360, END)],
    "bob": [("auditorium", 10, 240), ("roomB", 240, 420), ("roomC", 420, END)],
    "carol": [("roomB", 10, END)],
    "dave": [("hall", 10, 180), ("roomC", 180, END)],
    "erin": [("roomB", 10, 200), ("roomC", 200, END)],
    "frank": [("auditorium", 10, END)],
}


def person(p: str) -> str:
    return f"{BASE}person/{p}"


def room(r: str) -> str:
    return f"{BASE}room/{r}"


def detections() -> list[tuple[int, str, str]]:
    """(time, person id, room id), in time order (ties by person id)."""
    out = []
    for p, stays in ITINERARY.items():
        phase = PEOPLE[p][1]
        for r, start, end in stays:
            for t in range(start, end):
                if t % PERIOD == phase:
                    out.append((T0 + t, p, r))
    out.sort()
    return out


def floorplan_ttl() -> str:
    lines = [f"@prefix lv: <{LV}> .", f"@prefix room: <{BASE}room/> .", ""]
    for r, (name, desc) in ROOMS.items():
        lines.append(f'room:{r} lv:name "{name}" ;\n    lv:desc "{desc}" .')
    lines.append("")
    for a, b in CONNECTED:
        lines.append(f"room:{a} lv:connected room:{b} .")
        lines.append(f"room:{b} lv:connected room:{a} .")
    return "\n".join(lines) + "\n"


def profiles_ttl() -> str:
    lines = ["@prefix foaf: <http://xmlns.com/foaf/0.1/> .",
             "@prefix dc: <http://purl.org/dc/elements/1.1/> .",
             "@prefix dcterms: <http://purl.org/dc/terms/> .",
             "@prefix swrc: <http://swrc.ontoware.org/ontology#> .",
             f"@prefix person: <{BASE}person/> .",
             f"@prefix paper: <{BASE}paper/> .",
             f"@prefix proc: <{BASE}proceedings/> .", ""]
    for p, (name, _) in PEOPLE.items():
        lines.append(f'person:{p} a foaf:Person ; foaf:name "{name}" .')
    lines.append("")
    for pid, (title, authors, proc) in PAPERS.items():
        creators = ", ".join(f"person:{a}" for a in authors)
        lines.append(f'paper:{pid} dc:title "{title}" ;\n    dc:creator {creators} ;\n'
                     f"    dcterms:partOf proc:{proc} .")
    for proc, (title, editors) in PROCEEDINGS.items():
        eds = ", ".join(f"person:{e}" for e in editors)
        lines.append(f'proc:{proc} dc:title "{title}" ;\n    swrc:editor {eds} .')
    return "\n".join(lines) + "\n"


def main() -> None:
    (HERE / "floorplan.ttl").write_text(floorplan_ttl())
    (HERE / "profiles.ttl").write_text(profiles_ttl())
    with (HERE / "rfid.csv").open("w") as f:
        f.write("time,person,location\n")
        for t, p, r in detections():
            f.write(f"{t},{person(p)},{room(r)}\n")


if __name__ == "__main__":
    main()
