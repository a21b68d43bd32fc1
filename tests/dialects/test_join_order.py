"""The join order of a windowed query's groups (epsparql/rules/join_order.py).

A group's units are evaluated bound variables first, independent parts
once each, filters where their variables are bound but in their own
scope.  Checked three ways: generated C-SPARQL queries of nested groups,
filters (on variables of other groups too: unbound there), OPTIONAL,
UNION, MINUS, BIND and VALUES answer as the brute-force reference
(rdflib, tests/dialects/dialect_reference.py) on generated streams; the
plan of CityBench-shaped groups is the expected one; and a cross product
of four groups costs SWI-Prolog inferences in proportion to its answers
and its window, not to their product (CityBench's Q10_8 took 29 CPU
seconds in the query's order, 0.6 s so).
"""
from __future__ import annotations

import random
from fractions import Fraction

import pytest
from dialect_cases import EX, PREFIX, S1, answers_key, background, run_engine, stream
from dialect_reference import RefQuery, RefWindow, evaluate
from rdflib import Literal, URIRef

from epsparql import Engine
from epsparql.algebra.streams import Quad
from epsparql.prepare import prepare_windowed
from epsparql.rules.join_order import Placed, plan_join

NODE_VARS = ["?a", "?b", "?c", "?d"]
NUM_VARS = ["?m", "?n"]


class _Gen:
    """A random WHERE body of nested groups (the same text for both)."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.binds = 0

    def triple(self) -> str:
        r = self.rnd
        x, y = r.sample(NODE_VARS, 2)
        return r.choice([f"{x} ex:p {y}", f"{x} ex:p {y}", f"{x} ex:q {y}",
                         f"{x} ex:v {r.choice(NUM_VARS)}", f"{x} ex:p ex:{r.choice('abcd')}",
                         f"ex:{r.choice('abcd')} ex:p {x}", f"{x} ex:name {r.choice(['?l', '?k'])}"])

    def condition(self, seen: str) -> str:
        """A filter on variables of ``seen`` (the group's text) mostly,
        sometimes on others (unbound in it, as SPARQL scopes a filter)."""
        r = self.rnd
        nodes = [v for v in NODE_VARS if v in seen] if r.random() < 0.8 else []
        x, y = r.sample(nodes if len(nodes) >= 2 else NODE_VARS, 2)
        nums = [v for v in NUM_VARS if v in seen] if r.random() < 0.8 else []
        m = r.choice(nums or NUM_VARS)
        return r.choice([f"{x} != {y}", f"{x} = ex:{r.choice('abcd')}", f"{m} > 1",
                         f"BOUND({x})", f"!BOUND({x})", f"COALESCE({x}, ex:z) != ex:a",
                         "?m + ?n < 5", f"{m} <= 2 || {x} = ex:b"])

    def group(self, depth: int) -> str:
        r = self.rnd
        # a triple first: rdflib 7.6 answers no row where SPARQL gives one
        # without bindings (an OPTIONAL that matches nothing, alone in a group)
        items = [self.triple() + " ."]
        for _ in range(r.randint(0, 2)):
            k = r.random()
            if k < 0.4 or depth >= 2:
                items.append(self.triple() + " .")
            elif k < 0.55:
                items.append("{ " + self.group(depth + 1) + " }")
            elif k < 0.7:
                items.append("OPTIONAL { " + self.group(depth + 1) + " }")
            elif k < 0.82:
                items.append("{ " + self.group(depth + 1) + " } UNION { "
                             + self.group(depth + 1) + " }")
            elif k < 0.9:
                self.binds += 1
                items.append(f"BIND (COALESCE(?{r.choice('abcd')}, ex:none) AS ?w{self.binds})")
            elif k < 0.95:
                items.append(f"VALUES {r.choice(NODE_VARS)} {{ ex:a ex:c }}")
            else:
                # on the first triple's variables only: rdflib 7.6 evaluates
                # MINUS with the bindings of the groups joined before it
                # (SPARQL: on its own), which differs when it has others
                vs = [v for v in NODE_VARS if v in items[0]] or ["?a"]
                items.append(f"MINUS {{ {vs[0]} ex:q {vs[-1]} }}")
        if r.random() < 0.35:           # anywhere in the group: it filters all of it
            items.insert(r.randint(0, len(items)), f"FILTER ({self.condition(' '.join(items))})")
        return " ".join(items)


def nested_query(rnd: random.Random) -> tuple[str, RefQuery]:
    """A C-SPARQL query over one default window of S1 (and the background)
    whose WHERE is random nested groups; the reference reads the same."""
    gen = _Gen(rnd)
    body = " ".join("{ " + gen.group(1) + " }" for _ in range(rnd.randint(1, 2)))
    if rnd.random() < 0.4:
        body += f" FILTER ({gen.condition(body)})"
    names = NODE_VARS + NUM_VARS + ["?l", "?k"] + [f"?w{i}" for i in range(1, gen.binds + 1)]
    select = "SELECT " + " ".join(names)
    a, b = rnd.choice([(10, 5), (8, 4), (6, 3)])
    text = (f"REGISTER QUERY q AS\n{PREFIX}{select}\nFROM STREAM <{S1}> [RANGE {a}s STEP {b}s]\n"
            f"WHERE {{ {body} }}")
    win = RefWindow(S1, "range", Fraction(a), Fraction(b), default=True, t0=Fraction(0),
                    from_t0=True)
    return text, RefQuery([win], f"{PREFIX}{select}\nWHERE {{ {body} }}", ("close", True),
                          "rstream")


@pytest.mark.parametrize("seed", range(100))
def test_nested_groups_answer_as_the_reference(seed):
    """As dialect_cases.check_against_reference, on longer streams (10 to
    40 rows: more joins answer something)."""
    rnd = random.Random(5100 + seed)
    rows = stream(rnd, rnd.randint(20, 50))
    bg = background(rnd)
    text, ref = nested_query(rnd)
    expected = evaluate(ref, rows, bg)
    got = run_engine(text, rows, bg, "csparql")
    assert answers_key(got) == answers_key(expected), text


#: The schema of the RDFS cases: ex:p under ex:r, domains and ranges, and
#: classes under ex:D
SCHEMA = [("p", "subPropertyOf", "r"), ("p", "domain", "A"), ("p", "range", "B"),
          ("q", "domain", "B"), ("v", "domain", "E"), ("A", "subClassOf", "D"),
          ("B", "subClassOf", "D")]
RDFS_BODIES = ["?x ex:p ?y . ?y a ?c", "?x a ex:D . ?x ex:q ?y", "?x a ?c . ?x ex:v ?n",
               "?x ex:r ?y . ?y a ex:B", "{ ?x ex:p ?y } { ?y a ex:D . ?x a ?c }",
               "?x a ex:A . ?y a ex:E . ?x ex:p ?y", "?x ex:q ?y . ?y a ?c . ?x a ?c"]


def entailed(rows) -> list:
    """The rows plus what RDFS entails from each under SCHEMA, at its time
    (written here from the rules, sharing nothing with the engine)."""
    from rdflib.namespace import RDF
    sup = {"p": {"p", "r"}}
    dom = {"p": "A", "q": "B", "v": "E"}
    rng = {"p": "B"}
    classes = {"A": {"A", "D"}, "B": {"B", "D"}, "D": {"D"}, "E": {"E"}}

    def name(x) -> str:
        return str(x)[len(EX):]
    out = []
    for r in rows:
        out.append(r)
        if r.p == RDF.type:
            out += [r.__class__(r.stream, r.s, RDF.type, URIRef(EX + c), r.tau)
                    for c in classes.get(name(r.o), ()) if c != name(r.o)]
            continue
        for q in sup.get(name(r.p), {name(r.p)}):
            if q != name(r.p):
                out.append(r.__class__(r.stream, r.s, URIRef(EX + q), r.o, r.tau))
            for subject, cls in ((r.s, dom.get(q)), (r.o, rng.get(q))):
                out += [r.__class__(r.stream, subject, RDF.type, URIRef(EX + c), r.tau)
                        for c in classes.get(cls, ())]
    return out


@pytest.mark.parametrize("seed", range(14))
def test_rdfs_entailment_in_any_order(seed):
    """With reasoning="rdfs" a window's triples match what RDFS entails
    from them (sub-property, domain, range, sub-class), also where a plan
    tests `?y a ?c` with ?y bound: the reference reads the entailed
    triples written out."""
    from rdflib.namespace import RDF, RDFS
    rnd = random.Random(5300 + seed)
    rows = stream(rnd, rnd.randint(15, 40))
    rows += [r.__class__(r.stream, r.s, RDF.type, URIRef(EX + rnd.choice("AB")), r.tau)
             for r in rows if rnd.random() < 0.15]
    rows.sort(key=lambda r: r.tau)
    schema = [(URIRef(EX + a), {"subPropertyOf": RDFS.subPropertyOf, "domain": RDFS.domain,
                                "range": RDFS.range, "subClassOf": RDFS.subClassOf}[k], URIRef(EX + b))
              for a, k, b in SCHEMA]
    body = RDFS_BODIES[seed % len(RDFS_BODIES)]
    select = "SELECT " + " ".join(v for v in ("?x", "?y", "?c", "?n") if v in body)
    text = (f"REGISTER QUERY q AS\n{PREFIX}{select}\nFROM STREAM <{S1}> [RANGE 6s STEP 3s]\n"
            f"WHERE {{ {body} }}")
    win = RefWindow(S1, "range", Fraction(6), Fraction(3), default=True, t0=Fraction(0),
                    from_t0=True)
    ref = RefQuery([win], f"{PREFIX}{select}\nWHERE {{ {body} }}", ("close", True), "rstream")
    from dialect_reference import BACKGROUND
    expected = evaluate(ref, entailed(rows), {BACKGROUND: schema})
    got = run_engine(text, rows, {BACKGROUND: schema}, "csparql", reasoning="rdfs")
    assert answers_key(got) == answers_key(expected), text


def test_a_filter_sees_only_its_own_group():
    """SPARQL scopes a FILTER to its group: ?c, bound by the other group,
    is unbound in it, whatever order the groups are joined in (rdflib 7.6
    evaluates some such joins with the first group's bindings, so this is
    checked against answers written out here)."""
    b, c = URIRef(EX + "b"), URIRef(EX + "c")
    rows = [(c, URIRef(EX + "q"), b, 1, None, S1), (b, URIRef(EX + "name"), Literal("B"), 1, None, S1)]
    head = f"REGISTER QUERY q AS {PREFIX}SELECT ?b ?k FROM STREAM <{S1}> [RANGE 3s STEP 1s] WHERE "

    def answers(where: str) -> list:
        with Engine(reasoning="none") as eng:
            q = eng.register(head + where)
            eng.push_many(rows)
            eng.flush()
            return sorted({(str(x.bindings["b"]), str(x.bindings["k"])) for x in q.results()})
    assert answers("{ { ?c ex:q ?b } { FILTER (BOUND(?c)) ?b ex:name ?k } }") == []
    assert answers("{ { ?c ex:q ?b } { FILTER (!BOUND(?c)) ?b ex:name ?k } }") == [(str(b), "B")]
    assert answers("{ ?c ex:q ?b . ?b ex:name ?k FILTER (BOUND(?c)) }") == [(str(b), "B")]
    assert answers("{ { ?b ex:name ?k FILTER (?c != ex:a) } ?c ex:q ?b }") == []


# ------------------------------------------------------------------- plans

SSN = "http://purl.oclc.org/NET/ssnx/ssn#"
CITYBENCH_Q3 = f"""REGISTER QUERY q AS
PREFIX ssn: <{SSN}> PREFIX sao: <http://purl.oclc.org/NET/sao/> PREFIX ct: <{EX}ct#>
SELECT ?obId1 ?obId3 ?v1 ?v3
FROM STREAM <{EX}s1> [RANGE 3s STEP 1s] FROM STREAM <{EX}s2> [RANGE 3s STEP 1s]
WHERE {{
  {{ ?p1 a ct:CongestionLevel . }}
  {{ ?p3 a ct:CongestionLevel . }}
  {{ ?obId1 a ?ob . ?obId1 ssn:observedProperty ?p1 . ?obId1 sao:hasValue ?v1 .
     ?obId1 ssn:observedBy <{EX}s1> . FILTER (?v1 > 0 && !BOUND(?v3)) }}
  {{ ?obId3 a ?ob . ?obId3 ssn:observedProperty ?p3 . ?obId3 sao:hasValue ?v3 .
     ?obId3 ssn:observedBy <{EX}s2> . }}
}}"""


def plan_of(text: str):
    q = prepare_windowed(text, qid=1).algebra
    return plan_join(q.relation.pattern)


def _triple(step) -> str:
    t = step.triple
    return " ".join(x.n3() if not hasattr(x, "name") else "?" + x.name for x in (t.s, t.p, t.o))


def test_a_group_starts_from_its_bound_triple_and_filters_keep_their_scope():
    plan = plan_of(CITYBENCH_Q3)
    assert len(plan.parts) == 1                 # ?ob links the two observations
    steps = plan.parts[0].steps
    triples = [_triple(s) for s in steps if isinstance(s, Quad)]
    # the observation given by its sensor first, then what it binds; the
    # property's class once ?p1 is bound; the second observation by its sensor
    assert triples[0] == f"?obId1 <{SSN}observedBy> <{EX}s1>"
    assert triples.index(f"?p1 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{EX}ct#CongestionLevel>") \
        == triples.index(f"?obId1 <{SSN}observedProperty> ?p1") + 1
    assert triples[5] == f"?obId3 <{SSN}observedBy> <{EX}s2>"
    # the filter right after ?v1's triple, in the scope of its group (?v3 unbound there)
    f = next(i for i, s in enumerate(steps) if isinstance(s, Placed))
    assert _triple(steps[f - 1]) == "?obId1 <http://purl.oclc.org/NET/sao/hasValue> ?v1"
    assert steps[f].scope == {"obId1", "ob", "p1", "v1"}
    # ?p1's class, bound by then, is tested once in each source (no distinct/2)
    text = prepare_windowed(CITYBENCH_Q3, qid=1).compiled.text
    check = text[text.index("once(( stream_window:win_holds("):]
    assert check.index(f"{EX}ct#CongestionLevel") < check.index("))")


def test_groups_sharing_no_variable_are_separate_parts():
    groups = " ".join(f"{{ ?o{i} <{SSN}observedBy> <{EX}s{i}> . ?o{i} <{EX}v> ?v{i} }}"
                      for i in range(3))
    plan = plan_of(f"REGISTER QUERY q AS SELECT * FROM STREAM <{EX}s0> [RANGE 3s STEP 1s] "
                   f"WHERE {{ {groups} FILTER (?v0 < ?v1) FILTER (?v2 > 0) }}")
    assert [p.variables for p in plan.parts] == [("o0", "v0"), ("o1", "v1"), ("o2", "v2")]
    # ?v2's filter inside its part; the one over two parts after them
    assert isinstance(plan.parts[2].steps[-1], Placed)
    assert [len(plan.after), len(plan.before)] == [1, 0]


def test_exists_keeps_the_query_order():
    assert plan_of(f"REGISTER QUERY q AS SELECT * FROM STREAM <{EX}s0> [RANGE 3s STEP 1s] "
                   f"WHERE {{ ?x <{EX}p> ?y . ?y <{EX}q> <{EX}a> "
                   f"FILTER EXISTS {{ ?y <{EX}p> ?z }} }}") is None


# ------------------------------------------------------------------- cost

def test_a_cross_product_costs_in_proportion_to_its_answers():
    """Four groups, one per sensor, as CityBench's Q10, in a window that
    also holds eight other sensors' observations: 4 observations a sensor
    in each 3 s window, 256 answers an evaluation.  In the query's order
    each group is evaluated again for every solution of the groups before
    it, scanning the window each time (3.5 million SWI-Prolog inferences
    here); joined as planned, each once (0.23 million, the push included).
    The bound: 100 inferences an answer and 100 a triple of each window
    evaluated."""
    k, noise, step = 4, 8, 0.75                   # 4 sensors queried; one observation each 0.75 s
    rnd = random.Random(7)
    rows = []
    times = [i * step for i in range(20)]         # 0 .. 14.25 s
    for t in times:
        for g in range(k + noise):
            o = URIRef(f"{EX}obs{len(rows)}")
            rows += [(o, URIRef(SSN + "observedBy"), URIRef(f"{EX}sensor{g}"), t, None, S1),
                     (o, URIRef(SSN + "observedProperty"), URIRef(f"{EX}prop{g}"), t, None, S1),
                     (o, URIRef(EX + "v"), Literal(rnd.randint(0, 9)), t, None, S1)]
    groups = " ".join(f"{{ ?o{g} <{SSN}observedProperty> ?p{g} . ?o{g} <{EX}v> ?v{g} . "
                      f"?o{g} <{SSN}observedBy> <{EX}sensor{g}> . }}" for g in range(k))
    text = (f"REGISTER QUERY q AS SELECT * FROM STREAM <{S1}> [RANGE 3s STEP 1s] "
            f"WHERE {{ {groups} }}")
    from epsparql.core.runtime import runtime
    with Engine(reasoning="none") as eng:
        q = eng.register(text)
        i0 = runtime().query_once("statistics(inferences, I)")["I"]
        eng.push_many(rows)
        eng.flush()
        i1 = runtime().query_once("statistics(inferences, I)")["I"]
        answers = list(q.results())
    # C-SPARQL's windows [j, j + 3) from t0 = 0, each non-empty one evaluated
    # at its close: the product of the sensors' observations in it
    per_window = [sum(1 for t in times if j <= t < j + 3) for j in range(15)]
    assert len(answers) == sum(n ** k for n in per_window if n) == 3345
    window_triples = sum(3 * (k + noise) * n for n in per_window)
    bound = 100 * len(answers) + 100 * window_triples
    assert i1 - i0 < bound, (i1 - i0, bound)
