"""``--trace`` for windowed queries (issue 25, finding 12): what each
window held at every instant a query answered at.

The content the trace shows is computed from the rows processed by the
definitions of docs/DIALECTS.md (epsparql/explain/window_trace.py), not
read from the engine; here it is checked against the engine: traced
with ``SELECT ?s ?p ?o`` over the window (C-SPARQL: RSTREAM, non-empty
windows), the content at every instant is exactly the set the engine
answers, for every kind of window, on many generated streams with
integer and decimal stamps, duplicates and rows on another stream."""
from __future__ import annotations

import json
import random
import sys

import pytest

from rdflib import Literal, URIRef

from epsparql import Engine
from epsparql.explain.window_trace import WindowTracer

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "cli"))
from test_cli import cli  # noqa: E402  (the CLI in a child process)

EX = "http://example.org/"
S, OTHER = EX + "s", EX + "other"
WINDOWS = ["RANGE 3s STEP 1s", "RANGE 2s TUMBLING", "RANGE 1500ms STEP 500ms",
           "TRIPLES 3", "NOW", "ALL"]


def _stream(rnd: random.Random, decimal: bool) -> list[tuple]:
    t, rows = 0.0 if decimal else 0, []
    for _ in range(rnd.randrange(5, 25)):
        t += rnd.choice([0, 0.1, 0.3, 0.5, 1.2]) if decimal else rnd.choice([0, 1, 1, 2, 3])
        t = round(t, 1) if decimal else t
        s = URIRef(f"{EX}x{rnd.randrange(4)}")
        o = Literal(rnd.randrange(3))
        g = OTHER if rnd.random() < 0.2 else S
        rows.append((s, URIRef(EX + "v"), o, t, t, URIRef(g)))
    return rows


@pytest.mark.filterwarnings("ignore::epsparql.window_runtime.UnboundedWindowWarning")
@pytest.mark.parametrize("window", WINDOWS)
def test_trace_content_is_what_the_engine_answers(window):
    rnd = random.Random(window)
    checked = 0
    for trial in range(25):
        eng = Engine()
        try:
            q = eng.register(f"REGISTER QUERY q AS SELECT ?s ?p ?o FROM STREAM <{S}> [{window}] "
                             f"WHERE {{ ?s ?p ?o }}", dialect="csparql")
            tracer = WindowTracer(eng, [q])
            recs = [tracer.push(r) for r in _stream(rnd, decimal=trial % 2 == 1)]
            recs.append(tracer.end())
            for rec in recs:
                for view in rec["instants"]:
                    (w,) = view.windows
                    content = {tracer.rows[i][:3] for i in w.members}
                    answered = {(a.bindings["s"], a.bindings["p"], a.bindings["o"])
                                for a in view.answers}
                    assert content == answered, (window, trial, view.t)
                    assert all(tracer.rows[i][5] == URIRef(S) for i in w.members)
                    checked += 1
        finally:
            eng.close()
    assert checked > 25


def test_cli_trace_of_a_sub_second_window(tmp_path):
    q = tmp_path / "q.rq"
    q.write_text("REGISTER QUERY q AS PREFIX ex: <http://example.org/>\n"
                 "SELECT (COUNT(*) AS ?n) (SUM(?v) AS ?sum)\n"
                 "FROM STREAM <http://example.org/s> [RANGE 300ms STEP 100ms]\n"
                 "WHERE { ?x ex:v ?v }\n")
    s = tmp_path / "s.nqt"
    s.write_text("".join(f'<{EX}x{i}> <{EX}v> "{i}"^^<http://www.w3.org/2001/XMLSchema#integer> '
                         f'<{S}> 1700000000.{i} .\n' for i in range(1, 6)))
    # C-SPARQL's engine reading: windows [c - 300ms, c) reported at their closes
    r = cli("run", q, "--stream", s, "--trace")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "with t0 = 0s, k ≥ 0" in out and "c − 300ms ≤ τ < c" in out
    block = out[out.index("instant   1700000000.4"):out.index("[5] ")]
    assert "window 0 [1700000000.1, 1700000000.4) holds 3 triples" in block
    assert "answer  q {?n=3, ?sum=6}" in block
    assert out.rstrip().endswith("totals: 5 triples processed, 7 instants with answers, 7 answers")
    r = cli("run", q, "--stream", s, "--trace", "--window-t0", "0.05")
    assert r.returncode == 0, r.stderr
    assert "window 0 [1700000000.05, 1700000000.35) holds 3 triples" in r.stdout

    r = cli("run", q, "--stream", s, "--trace", "--window-semantics", "cql")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "RANGE 300ms STEP 100ms" in out and "t − 300ms < τ ≤ t" in out
    block = out[out.index("instant   1700000000.4"):out.index("[end of stream]")]
    assert "window 0 (1700000000.1, 1700000000.4] holds 3 triples" in block
    assert "[2] ex:x2 ex:v 2 at 1700000000.2" in block and "[1] " not in block
    assert "answer  q {?n=3, ?sum=9}" in block
    assert out.rstrip().endswith("totals: 5 triples processed, 5 instants with answers, 5 answers")

    r = cli("run", q, "--stream", s, "--trace", "--output-format", "jsonl",
            "--window-semantics", "cql")
    assert r.returncode == 0, r.stderr
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    assert objs[0]["type"] == "header" and objs[0]["queries"][0]["windows"][0]["index"] == 0
    insts = [i for o in objs if o["type"] in ("triple", "end") for i in o["instants"]]
    assert [i["instant"] for i in insts] == [1700000000.1, 1700000000.2, 1700000000.3,
                                             1700000000.4, 1700000000.5]
    last = insts[-1]["windows"][0]
    assert [c["step"] for c in last["content"]] == [3, 4, 5]
    assert objs[-1] == {"type": "totals", "totals": {"rows": 5, "answers": 5, "instants": 5,
                                                     "late": 0}}
