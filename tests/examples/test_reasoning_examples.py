"""Stream reasoning over the generated taxonomy, and the goods-delivery example.

The taxonomy generator's shape (40,080 classes below Tracheobionta, depth
at most 8, a DAG with classes outside the root); RDFS reasoning over it on
a sample stream, checked against the expected set computed in Python; the
delivery example on a hand-made city with hand-checked re-routings, and
on the bundled and generated data against a reference computed directly
from the data.
"""
from __future__ import annotations

import gzip
import importlib.util
import random
import sys
from collections import Counter
from pathlib import Path

import pytest
from rdflib import Graph, RDF, URIRef

from epsparql import Engine

from conftest import ROOT  # the repository root, wherever this file sits


def load(name: str, path: Path):
    """Import a script by path under its own name (several are called generate.py / run.py)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


tax = load("taxonomy_generate", ROOT / "ontologies" / "taxonomy" / "generate.py")
gen = load("delivery_generate", ROOT / "examples" / "delivery" / "generate.py")
delivery_run = load("delivery_run", ROOT / "examples" / "delivery" / "run.py")


# ---------------------------------------------------------------------------
# the taxonomy

@pytest.fixture(scope="module")
def taxonomy():
    edges, classes = tax.taxonomy()
    return edges, classes


def test_taxonomy_has_the_shape_of_the_paper(taxonomy):
    edges, classes = taxonomy
    s = tax.summary(edges)
    assert s["below_root"] == 40_080
    assert s["max_depth"] == 8
    assert s["per_level"] == list(tax.LEVELS)
    assert 300 <= s["two_parents"] <= 1000          # a DAG, not a tree
    assert 200 <= s["outside_root"] <= 500          # not every class is of concern
    assert len(classes) == len(set(classes)) == 40_080 + 1 + s["outside_root"]
    assert len(edges) == len(set(edges))
    # acyclic: every class's depth is 1 + the max of its parents' inside the root
    d = tax.depths(edges)
    parents = {}
    for c, p in edges:
        parents.setdefault(c, []).append(p)
    assert all(d[c] == 1 + max(d[p] for p in parents[c] if p in d) for c in d if c != tax.ROOT)
    # above the root: Plantae only; the Bryobionta subtree is outside
    assert tax.below(edges, tax.PLANTAE) >= tax.below(edges, tax.ROOT) | tax.below(edges, tax.BRYOBIONTA)
    assert not tax.below(edges, tax.BRYOBIONTA) & tax.below(edges, tax.ROOT)


def test_committed_taxonomy_is_what_the_generator_writes(taxonomy, tmp_path):
    edges, _ = taxonomy
    assert tax.OUT.name == "tracheobionta.nt.gz" and tax.OUT.stat().st_size < 5_000_000
    assert tax.load(tax.OUT) == edges
    fresh = tmp_path / "t.nt.gz"
    tax.write(fresh, edges)
    assert gzip.decompress(fresh.read_bytes()) == gzip.decompress(tax.OUT.read_bytes())


def test_generator_is_seeded():
    a, _ = tax.taxonomy(5)
    b, _ = tax.taxonomy(5)
    c, _ = tax.taxonomy(6)
    assert a == b and a != c
    assert tax.summary(c)["below_root"] == 40_080


@pytest.fixture(scope="module")
def reasoner():
    """An engine with the committed taxonomy loaded the documented way
    (rdflib parsing the gzip file, Engine.load_background)."""
    e = Engine()
    assert e.load_background(tax.graph()) == len(tax.load())
    yield e
    e.close()


def test_stream_reasoning_answers_exactly_the_instances_below_the_root(taxonomy, reasoner):
    edges, classes = taxonomy
    below = tax.below(edges, tax.ROOT)
    n_parents = Counter(c for c, _ in edges)
    two_parents = sorted(c for c in below if n_parents[c] > 1)[:5]
    rnd = random.Random(3)
    picks = [rnd.choice(classes) for _ in range(3000)]
    picks += [tax.ROOT, tax.PLANTAE, tax.BRYOBIONTA, tax.NS + "T8_00000", tax.NS + "B5_00000",
              tax.NS + "NotAClass"] + two_parents
    ex = "http://example.org/plants/i"
    root_q = reasoner.register(f"SELECT ?x WHERE {{ ?x a <{tax.ROOT}> }}")
    bryo_q = reasoner.register(f"SELECT ?x WHERE {{ ?x a <{tax.BRYOBIONTA}> }}")
    none_q = reasoner.register(f"SELECT ?x WHERE {{ ?x a <{tax.NS}Fungi> }}")
    reasoner.push_many([(URIRef(f"{ex}{k}"), RDF.type, URIRef(c), k) for k, c in enumerate(picks)])
    reasoner.flush()
    got = sorted(int(str(a["x"])[len(ex):]) for a in root_q.results())
    assert got == [k for k, c in enumerate(picks) if c in below]
    assert 0.9 < len(got) / len(picks) < 1.0                  # most, not all, are of concern
    bryo = tax.below(edges, tax.BRYOBIONTA)
    assert sorted(int(str(a["x"])[len(ex):]) for a in bryo_q.results()) == \
        [k for k, c in enumerate(picks) if c in bryo]
    assert none_q.results() == []


def test_without_reasoning_only_the_root_itself_matches(taxonomy):
    edges, classes = taxonomy
    e = Engine(reasoning="none")
    try:
        e.add_background([(URIRef(c), URIRef(tax.SUBCLASS), URIRef(p)) for c, p in edges])
        q = e.register(f"SELECT ?x WHERE {{ ?x a <{tax.ROOT}> }}")
        picks = [tax.ROOT, tax.NS + "T1_00000", tax.NS + "T8_00001", tax.ROOT]
        e.push_many([(URIRef(f"urn:x{k}"), RDF.type, URIRef(c), k) for k, c in enumerate(picks)])
        assert sorted(str(a["x"]) for a in q.results()) == ["urn:x0", "urn:x3"]
    finally:
        e.close()


# ---------------------------------------------------------------------------
# the delivery example on a hand-made city

D = gen.NS
CITY = f"""@prefix : <{D}> .
:l1 :road :l2 , :l3 , :l4 , :l7 .
:l2 :road :l5 .
:l3 :road :l2 , :l5 .
:l5 :road :l6 .
:l6 :road :l1 .
:l7 :road :l8 .
:l8 :road :l2 .
"""                                                   # :l4 is a dead end
PLANS = f"""@prefix : <{D}> .
:a1-1 :agent :agent1 ; :from :l1 ; :to :l2 .
:a1-2 :agent :agent1 ; :from :l2 ; :to :l5 .
:a1-3 :agent :agent1 ; :from :l5 ; :to :l6 .
:a2-1 :agent :agent2 ; :from :l3 ; :to :l5 .
:a2-2 :agent :agent2 ; :from :l5 ; :to :l6 .
"""


def ev(t, s, p, o):
    return (t, D + s, D + p, D + o)


HAND_STREAM = [
    ev(100, "l1", "blockedTo", "l2"), ev(300, "agent1", "at", "l1"),        # re-route
    ev(400, "l2", "blockedTo", "l5"), ev(1400, "agent1", "at", "l2"),       # expired (1000 s)
    ev(1500, "l5", "blockedTo", "l6"), ev(2400, "agent1", "at", "l5"),      # exactly 15 min
    ev(2500, "l3", "blockedTo", "l5"), ev(2550, "l3", "blockedTo", "l5"),
    ev(2600, "l3", "blockedTo", "l2"), ev(2700, "agent2", "at", "l3"),      # the only way round is blocked
    ev(3000, "l5", "blockedTo", "l6"), ev(3000, "agent2", "at", "l5"),      # same instant: not before
    ev(3100, "l1", "blockedTo", "l3"), ev(3200, "agent1", "at", "l1"),      # not agent1's next road
    ev(4000, "l1", "blockedTo", "l2"), ev(4050, "l1", "blockedTo", "l3"),
    ev(4100, "agent1", "at", "l1"),                                         # the nearer way round is blocked
]

# worked out by hand from CITY and PLANS:
# (time, agent, at, next stop, blocked since, alternatives, blocked roads, choice)
HAND_DECISIONS = [
    # l1 -> l2 blocked: l3 and l7 lead on to l2 (l3 directly, l7 via l8); l4 is a dead end
    (300, "agent1", "l1", "l2", 100, ("l3", "l7"), ("l2",), "l3"),
    # l5's only road is the blocked one: nothing to propose
    (2400, "agent1", "l5", "l6", 1500, (), ("l6",), None),
    # l3 -> l5 blocked (twice: since the first); l3 -> l2 -> l5 would do, but l3 -> l2 is blocked too
    (2700, "agent2", "l3", "l5", 2500, ("l2",), ("l2", "l5"), None),
    # l1 -> l2 blocked again; l1 -> l3 as well (the update at 3100 has expired, the one at 4050 not)
    (4100, "agent1", "l1", "l2", 4000, ("l3", "l7"), ("l2", "l3"), "l7"),
]


def decisions_as_names(decisions):
    short = lambda x: x[len(D):]  # noqa: E731
    return [(x.time, short(x.agent), short(x.at), short(x.dest), x.blocked_since,
             tuple(map(short, x.alternatives)), tuple(map(short, x.blocked)),
             short(x.choice) if x.choice else None) for x in decisions]


def test_reroute_query_answers_on_the_hand_made_city():
    d = delivery_run.delivery(CITY, PLANS)
    try:
        d.engine.push_many([(URIRef(s), URIRef(p), URIRef(o), t) for t, s, p, o in HAND_STREAM[:6]])
        d.engine.flush()
        got = sorted((str(a["agent"])[len(D):], str(a["dest"])[len(D):],
                      str(a["alt"])[len(D):] if "alt" in a.bindings else None, a.start, a.end)
                     for a in d.reroute.results())
        assert got == [("agent1", "l2", "l3", 100, 300), ("agent1", "l2", "l7", 100, 300),
                       ("agent1", "l6", None, 1500, 2400)]
        hops = sorted((str(a["from"])[len(D):], str(a["hop"])[len(D):], a.start, a.end)
                      for a in d.blocked_q.results())
        assert hops == [("l1", "l2", 100, 300), ("l5", "l6", 1500, 2400)]
    finally:
        d.engine.close()


def test_delivery_hand_checked_reroutings():
    d = delivery_run.delivery(CITY, PLANS)
    try:
        for row in HAND_STREAM:                       # one event at a time
            d.push([row])
        assert decisions_as_names(d.flush()) == HAND_DECISIONS
    finally:
        d.engine.close()
    d = delivery_run.delivery(CITY, PLANS)
    try:
        d.push(HAND_STREAM)                           # all at once
        assert decisions_as_names(d.flush()) == HAND_DECISIONS
    finally:
        d.engine.close()


def test_reference_agrees_with_the_hand_checked_decisions():
    idx = {f"l{i}": i - 1 for i in range(1, 9)}
    roads = {}
    g = Graph().parse(data=CITY, format="turtle")
    for s, _, o in g:
        roads[(idx[str(s)[len(D):]], idx[str(o)[len(D):]])] = 60
    c = gen.City([f"l{i}" for i in range(1, 9)], [(0.0, 0.0)] * 8, roads)
    plans = [[0, 1, 4, 5], [2, 4, 5]]                 # l1 l2 l5 l6 and l3 l5 l6
    want = [(t, D + a, D + at, D + to, since, tuple(D + x for x in alts), tuple(D + x for x in bl))
            for t, a, at, to, since, alts, bl, _ in HAND_DECISIONS]
    assert gen.reference(c, plans, HAND_STREAM) == want


# ---------------------------------------------------------------------------
# the delivery example on generated data

def as_tuples(decisions):
    return [(x.time, x.agent, x.at, x.dest, x.blocked_since, x.alternatives, x.blocked)
            for x in decisions]


def test_delivery_city_is_strongly_connected_and_tours_follow_roads():
    c = gen.city(seed=7)
    assert c.n == 20 and gen.strongly_connected(c)
    for path in gen.tours(c, 10, 7):
        assert sorted(path) == list(range(20))
        assert all((a, b) in c.roads for a, b in zip(path, path[1:]))


def test_bundled_delivery_files_are_what_the_generator_writes():
    c = gen.city(seed=7)
    plans = gen.tours(c, 3, 7)
    city_ttl, plans_ttl = gen.turtle(c, plans, 7)
    here = ROOT / "examples" / "delivery"
    assert (here / "city.ttl").read_text() == city_ttl
    assert (here / "plans.ttl").read_text() == plans_ttl
    assert gen.read_stream(here / "stream.csv") == gen.stream(c, plans, 1, 7)
    g = Graph().parse(here / "city.ttl", format="turtle")
    roads = {(str(s), str(o)) for s, _, o in g.triples((None, URIRef(D + "road"), None))}
    assert roads == {(c.iri(a), c.iri(b)) for a, b in c.roads}


def test_delivery_example_run_matches_the_reference(capsys):
    decisions = delivery_run.main(["--quiet"])
    c = gen.city(seed=7)
    plans = gen.tours(c, 3, 7)
    want = gen.reference(c, plans, gen.stream(c, plans, 1, 7))
    assert as_tuples(decisions) == want
    assert len(want) >= 20
    assert any(x.choice for x in decisions) and any(x.choice is None for x in decisions)
    for x in decisions:                               # the choice is a free alternative
        assert x.choice is None or (x.choice in x.alternatives and x.choice not in x.blocked)
    out = capsys.readouterr().out
    assert f"{len(want)} re-routings" in out


def test_delivery_ten_agents_match_the_reference():
    c = gen.city(seed=7)
    plans = gen.tours(c, 10, 7)
    rows = gen.stream(c, plans, 2, 7)
    d = delivery_run.delivery(*gen.turtle(c, plans))
    try:
        for i in range(0, len(rows), 250):            # in pieces, as a live feed would come
            d.push(rows[i:i + 250])
        assert as_tuples(d.flush()) == gen.reference(c, plans, rows)
    finally:
        d.engine.close()
