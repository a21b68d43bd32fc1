"""Why an answer was detected (``Engine(justify=True)``,
:mod:`epsparql.explain.justification`, ``epsparql run --trace --justify``).

Checked against the definitions on generated queries and streams: every
answer has a justification whose events received are occurrences of the
stream, whose interval is the answer's ([min start, max end] of what it
joined, section 4.2), and which carry every value the answer binds; a
triple a CONSTRUCT derived appears as that query's answer, justified in
turn.  And through the command line on the bundled examples, text and
JSON lines.
"""
from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import pytest
from rdflib import Literal, URIRef

import sparql_reference as R
from epsparql import Engine
from epsparql.explain.justification import (Alarm, Detection, Received, Step, Unknown,
                                            justify_answer)
from epsparql.io.streams import StreamReader
from epsparql.rdf.codec import decode
from epsparql.rdf.sparql_json import term_from_json

from cli.test_cli import cli  # tests/cli/

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ROOT / "examples" / "formats"


def leaves(w) -> list[tuple]:
    """The events received under a justification, as (s, p, o, start, end),
    through the detections of other rules (CONSTRUCT triples)."""
    if isinstance(w, Received):
        e = w.event
        return [tuple(decode(x) for x in e.args) + (w.start, w.end)]
    if isinstance(w, Detection):
        return leaves(w.why)
    if isinstance(w, Alarm):
        return leaves(w.why)
    if isinstance(w, Step):
        return [x for c in w.children for x in leaves(c)]
    assert not isinstance(w, Unknown), w
    return []


def same_time(a, b) -> bool:
    return float(a) == float(b)


def check_answer(engine, a, stream: set) -> None:
    j = justify_answer(engine, a)
    assert j is not None, a
    got = leaves(j)
    assert got, a
    for s, p, o, t1, t2 in got:
        assert any((s, p, o) == r[:3] and same_time(t1, r[3]) and same_time(t2, r[4])
                   for r in stream), (a, (s, p, o, t1, t2))
    assert same_time(min(x[3] for x in got), a.start), (a, got)
    assert same_time(max(x[4] for x in got), a.end), (a, got)
    terms = {x for leaf in got for x in leaf[:3]}
    for var, value in a.bindings.items():
        assert value in terms, (a, var, got)


@pytest.mark.parametrize("seed", range(40))
def test_generated_answers_are_justified_by_their_events(seed):
    rng = random.Random(5200 + seed)
    queries = []
    for _ in range(rng.choice((1, 2))):
        q = R.QueryGen(rng).select()
        queries.append(q)
    if rng.random() < 0.4:                      # a CONSTRUCT feeding a query of its triples
        vs = sorted(R.pattern_vars(queries[0].pattern))
        out = R.PREDICATES[2]
        queries.insert(0, R.Construct(((R.Var(vs[0]), out, R.Var(vs[-1])),), queries[0].pattern))
        queries.append(R.Select(R.BGP(((R.Var("s"), out, R.Var("o")),)), None))
    stream = R.gen_stream(rng)
    with Engine(justify=True, reasoning=rng.choice(("rdfs", "none"))) as eng, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        handles = [eng.register(R.render(q)) for q in queries]
        eng.push_many(stream)
        eng.flush()
        answers = [a for h in handles for a in h.results()]
        for a in answers:
            check_answer(eng, a, set(stream))


def test_an_engine_without_justify_has_none():
    with Engine() as eng:
        q = eng.register("SELECT ?s WHERE { ?s <http://ex/p> ?o }")
        eng.push(URIRef("http://ex/a"), URIRef("http://ex/p"), Literal(1), 1)
        (a,) = q.results()
        assert justify_answer(eng, a) is None


def stream_rows(path: Path) -> set:
    reader = StreamReader(str(path), "nt")
    try:
        return set(reader)
    finally:
        reader.close()


def json_leaves(w: dict) -> list[tuple]:
    if "received" in w:
        r = w["received"]
        return [tuple(term_from_json(r[k]) for k in "spo") + (w["start"], w["end"])]
    if "detection" in w:
        return json_leaves(w["why"])
    if "alarm" in w:
        return json_leaves(w["alarm"])
    return [x for c in w.get("children", ()) for x in json_leaves(c)]


def test_trace_justify_json_lines_on_the_example():
    r = cli("run", FORMATS / "overheat.rq", FORMATS / "repeated_alarm.rq", "--stream",
            FORMATS / "readings.nt", "--trace", "--justify", "--output-format", "jsonl")
    assert r.returncode == 0, r.stderr
    rows = stream_rows(FORMATS / "readings.nt")
    answers = [a for line in r.stdout.splitlines() for a in json.loads(line).get("answers", ())]
    assert {a["query"] for a in answers} == {"overheat", "repeated_alarm"}
    for a in answers:
        j = a["justification"]
        assert j["by"] == f"answer of query {a['query']}"
        got = json_leaves(j)
        assert got and all(any(x[:3] == row[:3] and same_time(x[3], row[3])
                               and same_time(x[4], row[4]) for row in rows) for x in got), a
        assert same_time(min(x[3] for x in got), a["start"])
        assert same_time(max(x[4] for x in got), a["end"])
        if a["query"] == "repeated_alarm":
            # two alarms, each a triple overheat constructed from one reading
            assert len(got) == 2 and got[0][4] < got[1][3]
            derived = [c for c in json.dumps(j).split('"by": ') if c.startswith('"triple constructed')]
            assert len(derived) == 2
            first, second = (term_from_json(a["bindings"][k]) for k in ("first", "second"))
            assert {got[0][2], got[1][2]} == {first, second}


def test_trace_justify_text_on_the_example():
    r = cli("run", FORMATS / "rise.rq", "--stream", FORMATS / "readings.nt", "--trace",
            "--justify")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    answers = [i for i, line in enumerate(lines) if line.startswith("    answer ")]
    assert answers
    for i in answers:
        assert lines[i + 1].startswith("    why       n1 where"), lines[i + 1]
        block = []
        for line in lines[i + 2:]:
            if not line.startswith("              "):
                break
            block.append(line)
        received = [line for line in block if "received <" in line]
        assert len(received) == 2, block                  # the two readings SEQ joined
        assert any("implements rise #" in line and "SeqJoin (SEQ)" in line for line in block)
        # the answer's values are the readings' (?before the first, ?after the second)
        before = lines[i].split("?before=")[1].split(",")[0]
        after = lines[i].split("?after=")[1].split("}")[0]
        assert f"ex:temperature {before} " in received[0] and f"ex:temperature {after} " in received[1]


def test_justify_needs_trace():
    r = cli("run", FORMATS / "rise.rq", "--stream", FORMATS / "readings.nt", "--justify")
    assert r.returncode == 2 and "--justify goes with --trace" in r.stderr
