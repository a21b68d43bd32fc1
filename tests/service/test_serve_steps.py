"""A deployment's processing steps and their live counters
(:mod:`epsparql.service.steps`), in process: an engine room, deployments,
events pushed; the graph is explain's and the counters are the engine's."""
from __future__ import annotations

import json

import pytest

from epsparql.explain.report import explain_text
from epsparql.service.engine_room import (
    EngineRoom,
    Ingest,
    NotFound,
    RoomConfig,
    parse_input,
)
from epsparql.service.registry import Deployment
from epsparql.service.steps import deployment_steps

SEQ = """PREFIX : <http://ex.org/>
SELECT ?x ?y WHERE { ?x :a ?y } SEQ { ?y :b ?z }
FILTER (getDURATION() < "PT10S"^^xsd:duration)"""

WINDOWED = """REGISTER QUERY w AS
PREFIX : <http://ex.org/>
SELECT ?s ?o FROM STREAM <http://ex.org/s> [RANGE 10s STEP 1s]
WHERE { ?s :a ?o }"""

COUNTING = """REGISTER QUERY c AS
PREFIX : <http://ex.org/>
SELECT (COUNT(?s) AS ?n) FROM STREAM <http://ex.org/t> [RANGE 5s STEP 5s]
WHERE { ?s :a ?o }"""


@pytest.fixture
def room():
    r = EngineRoom(RoomConfig())
    r.start()
    yield r
    r.stop(checkpoint=False)


def register(room: EngineRoom, body: dict) -> None:
    room.call(room.register, Deployment.from_request(body)).result()


def push(room: EngineRoom, lines: list[str], fmt: str = "nt") -> None:
    room.submit("events", parse_input(Ingest("".join(lines).encode(), fmt)), wait=True).result()


def steps(room: EngineRoom, name: str) -> dict:
    out = room.call(deployment_steps, room, name).result()
    json.dumps(out)                       # what the endpoint sends: JSON all through
    return out


def in_room(room: EngineRoom, fn, *args):
    return room.call(fn, *args).result()


def left(i: int, t: float) -> str:
    return f"<http://ex.org/e{i}> <http://ex.org/a> <http://ex.org/y{i}> {t} .\n"


def right(i: int, t: float) -> str:
    return f"<http://ex.org/y{i}> <http://ex.org/b> <http://ex.org/z> {t} .\n"


def node(out: dict, id_: str) -> dict:
    return next(n for n in out["nodes"] if n["id"] == id_)


def test_seq_graph_is_explains_rule_graph(room: EngineRoom) -> None:
    register(room, {"name": "seq", "query": SEQ})
    out = steps(room, "seq")
    d = room.deployments["seq"]
    graph = in_room(room, d.engine.rule_graph)
    text = in_room(room, explain_text, d.engine, d.queries)
    rule_nodes = [n for n in out["nodes"] if n["id"].startswith("n")]
    assert {n["id"] for n in rule_nodes} == {f"n{i}" for i in graph.nodes}
    for n in rule_nodes:                  # labelled as explain writes them
        assert n["label"] in text, n["label"]
        for line in n["details"]:
            assert line in text, line
    # the edges: operands into their step, the input into the leaves, the
    # root into the query's answers
    edges = {(e["from"], e["to"]) for e in out["edges"]}
    for nid, gn in graph.nodes.items():
        for c in gn.children:
            assert (f"n{c}", f"n{nid}") in edges
        if not gn.children:
            assert ("events", f"n{nid}") in edges
    (rule,) = graph.rules
    sink = next(n for n in out["nodes"] if n["kind"] == "answers")
    assert (f"n{rule.node}", sink["id"]) in edges and sink["query"] == "seq"
    join = [n for n in out["nodes"] if n["kind"] == "join"]
    assert len(join) == 1 and join[0]["label"].endswith(" seq")
    assert [s["side"] for s in join[0]["stores"]] == ["l"]
    sides = {e["side"] for e in out["edges"] if e["to"] == join[0]["id"]}
    assert sides == {"l", "r"}


def test_seq_counters_are_the_engines(room: EngineRoom) -> None:
    register(room, {"name": "seq", "query": SEQ})
    out = steps(room, "seq")
    join = next(n for n in out["nodes"] if n["kind"] == "join")
    assert join["held"] == 0 and out["partial_matches"] == 0
    assert node(out, "events")["in"] == 0

    # one partial match per pending left event
    push(room, [left(i, i) for i in range(3)])
    out = steps(room, "seq")
    join = node(out, join["id"])
    assert join["held"] == 3 == join["stores"][0]["goals"] == out["partial_matches"]
    d = room.deployments["seq"]
    assert out["partial_matches"] == in_room(room, lambda: d.engine.core.stats()["goals"])
    assert node(out, "events")["in"] == 3 == out["events"] == d.events

    # a right event completes one: one answer out; the left ones stay pending
    push(room, [right(1, 5)])
    out = steps(room, "seq")
    sink = next(n for n in out["nodes"] if n["kind"] == "answers")
    assert sink["out"] == 1 == out["answers"] == d.answers
    assert out["queries"][0]["answers"] == 1
    assert node(out, join["id"])["held"] == 3
    assert node(out, "events")["in"] == 4

    # later left events; after the window's garbage collection only those
    # within 10 s of the clock are held
    push(room, [left(10, 20), left(11, 21), "<http://ex.org/q> <http://ex.org/c> <http://ex.org/r> 25 .\n"])
    in_room(room, d.engine.gc)
    out = steps(room, "seq")
    goals = in_room(room, lambda: d.engine.core.stats()["goals"])
    assert node(out, join["id"])["held"] == 2 == goals == out["partial_matches"]
    assert out["late"] == 0 and out["state"] == "running"


def test_windowed_steps_and_counters(room: EngineRoom) -> None:
    register(room, {"name": "win", "query": WINDOWED})
    out = steps(room, "win")
    kinds = [n["kind"] for n in out["nodes"]]
    assert kinds.count("stream") == 1 and kinds.count("window") == 1
    assert kinds.count("answers") == 1 and "join" not in kinds
    stream = next(n for n in out["nodes"] if n["kind"] == "stream")
    window = next(n for n in out["nodes"] if n["kind"] == "window")
    assert stream["details"] == ["http://ex.org/s"]
    assert window["label"] == "window 0: RANGE 10s STEP 1s"
    edges = {(e["from"], e["to"]) for e in out["edges"]}
    assert ("events", stream["id"]) in edges and (stream["id"], window["id"]) in edges
    triple = next(n for n in out["nodes"] if n["label"].startswith("Triple over window 0"))
    assert (window["id"], triple["id"]) in edges
    assert window["held"] == 0 and stream["in"] == 0

    lines = [f"<http://ex.org/e{i}> <http://ex.org/a> <http://ex.org/o{i}> <http://ex.org/s> {i} .\n"
             for i in range(6)]
    lines.append("<http://ex.org/x> <http://ex.org/a> <http://ex.org/o> <http://ex.org/other> 6 .\n")
    push(room, lines, "nqt")
    out = steps(room, "win")
    d = room.deployments["win"]
    stats = in_room(room, d.engine.window_stats)
    window = node(out, window["id"])
    assert window["held"] == stats["content"] == out["window_content"]
    assert window["held"] == 6                  # the window holds the six triples of :s
    assert node(out, stream["id"])["in"] == 6 == in_room(room, d.engine.stream_rows)[
        "http://ex.org/s"]
    assert node(out, "events")["in"] == 7
    assert out["window_clock"] == 6.0
    # C-SPARQL's window from t0 = 0 that fills now and closes next
    assert window["bounds"] == {"kind": "closed-open", "from": 0.0, "to": 10.0, "filling": True}
    sink = next(n for n in out["nodes"] if n["kind"] == "answers")
    assert sink["out"] == d.answers == out["answers"] == 0      # [0, 10) closes at 10
    assert out["partial_matches"] == 0
    # what it holds: the oldest first (the next to leave), in the query's prefixes
    assert window["sample"][:2] == [{"s": ":e0", "p": ":a", "o": ":o0", "time": 0.0},
                                    {"s": ":e1", "p": ":a", "o": ":o1", "time": 1.0}]
    assert len(window["sample"]) == 5
    push(room, ["<http://ex.org/e11> <http://ex.org/a> <http://ex.org/o> <http://ex.org/s> 11 .\n"],
         "nqt")
    out = steps(room, "win")
    sink = next(n for n in out["nodes"] if n["kind"] == "answers")
    assert sink["out"] == d.answers == out["answers"] > 0


def test_window_kept_per_pane_has_no_sample(room: EngineRoom) -> None:
    register(room, {"name": "c", "query": COUNTING})
    push(room, [f"<http://ex.org/e{i}> <http://ex.org/a> <http://ex.org/o> <http://ex.org/t> "
                f"{i} .\n" for i in range(3)], "nqt")
    out = steps(room, "c")
    window = next(n for n in out["nodes"] if n["kind"] == "window")
    d = room.deployments["c"]
    assert window["held"] == in_room(room, d.engine.window_stats)["content"]
    assert "sample" not in window


def test_several_queries_answers_counted_per_query(room: EngineRoom) -> None:
    register(room, {"name": "two", "queries": {"seq": SEQ, "count": COUNTING}})
    lines = [f"<http://ex.org/e{i}> <http://ex.org/a> <http://ex.org/y{i}> <http://ex.org/t> {i} .\n"
             for i in range(12)]
    lines.append("<http://ex.org/y3> <http://ex.org/b> <http://ex.org/z> <http://ex.org/t> 12 .\n")
    push(room, lines, "nqt")
    out = steps(room, "two")
    d = room.deployments["two"]
    per = {q["name"]: q["answers"] for q in out["queries"]}
    assert set(per) == {"two/seq", "two/count"}
    assert per["two/seq"] == 1 and per["two/count"] >= 2
    assert sum(per.values()) == d.answers
    sinks = {n["query"]: n["out"] for n in out["nodes"] if n["kind"] == "answers"}
    assert sinks == per
    # both parts drawn: the rule graph's join and the window
    kinds = {n["kind"] for n in out["nodes"]}
    assert {"join", "window", "stream", "input"} <= kinds
    window = next(n for n in out["nodes"] if n["kind"] == "window")
    assert window["held"] is not None


def test_unknown_deleted_and_registered_anew(room: EngineRoom) -> None:
    with pytest.raises(NotFound):
        steps(room, "nope")
    register(room, {"name": "x", "query": SEQ})
    push(room, [left(1, 1)])
    assert next(n for n in steps(room, "x")["nodes"] if n["kind"] == "join")["held"] == 1
    in_room(room, room.delete, "x")
    with pytest.raises(NotFound):
        steps(room, "x")
    register(room, {"name": "x", "query": WINDOWED})      # the same name, another query
    out = steps(room, "x")
    assert "join" not in {n["kind"] for n in out["nodes"]}
    assert any(n["kind"] == "window" for n in out["nodes"])
    assert out["events"] == 0


def test_paused_and_failed_states(room: EngineRoom) -> None:
    register(room, {"name": "p", "query": SEQ})
    in_room(room, room.set_paused, "p", True)
    push(room, [left(1, 1)])
    out = steps(room, "p")
    assert out["state"] == "paused" and out["events"] == 0
    assert next(n for n in out["nodes"] if n["kind"] == "join")["held"] == 0
