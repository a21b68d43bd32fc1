"""Hostile data through every path, and bounded resources over a long run."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from rdflib import Graph, Literal, URIRef

from epsparql import Engine

NS = "http://epsparql.org/ns#"
BG = "urn:epsparql:background"
HOSTILE = ["it's", 'say "hi"', "back\\slash", "), halt, foo(", ":- halt.", "a\nb",
           "nul\x00", "🚀 漢字", "0'c", "{}", "'" * 20, "%s %d ~w ~q", "x" * 20_000]


def U(x):
    return URIRef(NS + x)


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_terms_through_background_loading(text):
    e = Engine()
    try:
        g = Graph()
        iri = URIRef("http://ex.org/" + text.encode("unicode_escape").decode("ascii")[:100]
                     .replace("\\", "_").replace(" ", "_").replace('"', "_").replace("{", "_")
                     .replace("}", "_"))
        g.add((iri, U("label"), Literal(text)))
        g.add((iri, U("label2"), Literal(text, lang="en")))
        e.load_background(g)
        q = e.register(f"SELECT ?l ?m WHERE {{ ?x :at ?o GRAPH <{BG}> {{ ?o :label ?l ; :label2 ?m }} }}")
        e.push(U("van"), U("at"), iri, 1)
        (a,) = q.results()
        assert str(a["l"]) == text and str(a["m"]) == text and a["m"].language == "en"
        assert e.errors == []
    finally:
        e.close()


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_terms_through_construct_feedback(text):
    e = Engine()
    try:
        e.register("CONSTRUCT { ?s :copy ?o } WHERE { ?s :p ?o }")
        q = e.register("SELECT ?s ?o WHERE { ?s :copy ?o }")
        lit = Literal(text, datatype=URIRef("http://ex.org/dt#" + str(len(text))))
        e.push(U("a"), U("p"), lit, 1)
        (a,) = q.results()
        assert str(a["o"]) == text and a["o"].datatype == lit.datatype
        assert e.errors == []
    finally:
        e.close()


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _soak(n: int = 5_000_000, chunk: int = 50_000) -> dict:
    """The soak run itself (in a process of its own: see the test).  The
    rows go in as Arrow columns (what ``epsparql run`` pushes), drawn with
    numpy: building 5 M Python rows cost a third of the run."""
    import numpy as np
    import pyarrow as pa
    e = Engine(reasoning="none")        # no background: memory is the question
    q = e.register("""SELECT ?company WHERE { ?company hasStockPrice ?price1 }
        SEQ { ?company hasStockPrice ?price2 } SEQ { ?company hasStockPrice ?price3 }
        FILTER (?price2 < ?price1 * 0.7 && ?price3 > ?price1 * 1.05
                && getDURATION() < "PT10M"^^xsd:duration)""")
    companies = pa.array([f"<{U(f'c{i}')}>" for i in range(100)])
    pred = pa.array([f"<{U('hasStockPrice')}>"])
    xint = "<http://www.w3.org/2001/XMLSchema#integer>"
    # ordinary prices 95..105 (codes 0..10); one event in 2,000 is a crash to
    # 60 (code 11), so a fall below 70% followed by a rise above 105% is rare
    # (the answers are not what this test is about)
    prices = pa.array([f'"{p}"^^{xint}' for p in [*range(95, 106), 60]])
    rnd = np.random.default_rng(3)
    rss_at_500k = None
    max_goals = 0
    answers = 0
    for start in range(0, n, chunk):
        o = rnd.integers(0, 11, chunk)
        o[rnd.random(chunk) < 0.0005] = 11
        batch = pa.record_batch({
            "s": companies.take(pa.array(rnd.integers(0, 100, chunk))),
            "p": pred.take(pa.array(np.zeros(chunk, np.int64))),
            "o": prices.take(pa.array(o)),
            "start": pa.array(np.arange(start, start + chunk, dtype=np.float64)),  # one a second
        })
        e.push_arrow(batch)
        answers += len(q.results())
        if start % 500_000 == 0:
            max_goals = max(max_goals, e.core.stats()["goals"])
        if start + chunk == 500_000:
            rss_at_500k = _rss_mb()
    out = {"events": e.core.stats()["events"], "answers": answers, "max_goals": max_goals,
           "rss_at_500k": rss_at_500k, "rss_end": _rss_mb()}
    e.close()
    return out


@pytest.mark.slow
def test_soak_five_million_events_memory_stays_flat():
    """5,000,000 price triples through the paper's query (1) with a 10-minute
    window: resident memory at the end within 10% of memory after the first
    500,000 events, and the goal store bounded by the window.  Run in a
    process of its own, so that its memory is its own (not the suite's) and
    a crash of the embedded Prolog fails this test with its output instead
    of ending the suite."""
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(Path(__file__).parent)]))
    p = subprocess.run([sys.executable, "-X", "faulthandler", "-c",
                        "import json, test_reliability as t; print(json.dumps(t._soak()))"],
                       cwd=root, env=env, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, (p.returncode, p.stdout[-2000:], p.stderr[-4000:])
    r = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"\nsoak: {r['events']:,} events, {r['answers']} answers, RSS after 500k "
          f"{r['rss_at_500k']:.1f} MB, at the end {r['rss_end']:.1f} MB, max goals {r['max_goals']}")
    assert r["events"] == 5_000_000 and r["answers"] > 0
    # 600 events in the window: the first step stores at most that many
    # prices, the second the pairs among them that passed the first filter
    # (plus what the garbage collector has not swept yet)
    assert r["max_goals"] < 20_000, r["max_goals"]
    assert r["rss_end"] <= r["rss_at_500k"] * 1.10, (r["rss_at_500k"], r["rss_end"])
