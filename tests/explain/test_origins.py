"""Each step of the rule graph says which algebra element of which query
it implements (rules/from_algebra.py writes the numbers, core_compile.pl
keeps them on the steps, epsparql.explain.origins reads them back).

On generated queries (tests/sparql_reference.py's generator, SELECT and
CONSTRUCT, several per engine so steps are shared; RDFS reasoning on and
off), and on queries with BIND, GRAPH and rdf:type:

- every origin names a real element of one of the engine's queries;
- every step of a query's rules implements, or is part of, an element of
  that query;
- every operator, triple and template triple of a query is implemented by
  some step;
- the step implementing an element is the operator it compiles to (a
  SeqJoin a ``seq`` step, a Window a ``within``, a Filter a ``where``, …);
- the numbers are those the printed algebra shows.
"""
from __future__ import annotations

import random
import warnings

import pytest

import sparql_reference as R
from epsparql import Engine
from epsparql.algebra.elements import elements
from epsparql.algebra.nodes import Background, Empty
from epsparql.explain.algebra_tree import algebra_tree
from epsparql.algebra.passes import conjuncts, window_of
from epsparql.explain.origins import GraphOrigins
from epsparql.explain.tree import tree_lines
from epsparql.rdf.prefixes import Prefixes

#: the step (its operator, or its kind for a where) each element compiles to
STEPS = {"SeqJoin": {"seq"}, "EqJoin": {"equals"}, "Union_": {"or"},
         "SeqRightJoin": {"optseq"}, "EqLeftJoin": {"eqopt"},
         "LeftJoin": {"leftjoin", "where"}, "Join": {"and", "where"}, "Window": {"within"},
         "Filter": {"where"}, "Extend": {"where"},
         "BGP": {"and", "where", "triple", "or"}, "Triple": {"where", "triple", "or"}}


def step_kinds(node):
    return {node.op, node.kind}


def check(eng, handles):
    graph = eng.rule_graph()
    origins = GraphOrigins(graph, handles)
    by_head = {h.compiled.head: h for h in handles}
    implemented: dict[tuple[str, int], set[int]] = {}
    for nid, node in graph.nodes.items():
        for term in node.origins:
            o = origins.origin(term)
            assert o is not None, (node.text, term)          # a real element of a query
            implemented.setdefault((o.query, o.number), set()).add(nid)
            e = o.element
            if e.role == "query":
                assert node.kind == "where" or node.kind in by_head, node.text
            elif e.role == "template":
                assert node.kind == "where", node.text
            else:
                kind = type(e.node).__name__
                steps = STEPS[kind]
                if kind == "Filter" and all(window_of(c) is not None
                                            for c in conjuncts(e.node.expr)):
                    # only getDURATION() bounds: its window may enforce them
                    # all, and the filter is then implemented by the window's step
                    steps = steps | {"within"}
                assert step_kinds(node) & steps, (kind, node.text)
    for h in handles:
        part = h.rule_graph()
        for nid in part.nodes:
            found, _ = origins.of(nid)
            assert any(o.query == h.name for o in found), (h.name, graph.nodes[nid].text)
        for e in elements(h.algebra):
            if e.role == "query" or isinstance(e.node, (Background, Empty)):
                continue
            if isinstance(e.node, Background) or (e.role == "triple" and isinstance(
                    next(x.node for x in elements(h.algebra) if x.number == e.parent),
                    Background)):
                continue
            assert implemented.get((h.name, e.number)), (h.name, e.number, e.kind, h.text)
        # the printed algebra shows the same numbers
        printed = "\n".join(tree_lines(algebra_tree(h.algebra, Prefixes(h.prefixes))))
        for e in elements(h.algebra):
            assert f"#{e.number} " in printed, (e.number, printed)


def construct_of(rng, q):
    vs = sorted(R.pattern_vars(q.pattern))
    tpl = tuple((R.Var(rng.choice(vs)), R.PREDICATES[2], R.Var(rng.choice(vs)))
                for _ in range(rng.randint(1, 2)))
    return R.Construct(tpl, q.pattern)


@pytest.mark.parametrize("seed", range(40))
def test_generated_queries(seed):
    rng = random.Random(4100 + seed)
    queries = []
    for _ in range(rng.choice((1, 2, 3))):
        q = R.QueryGen(rng).select()
        queries.append(construct_of(rng, q) if rng.random() < 0.3 else q)
    if rng.random() < 0.3:                       # the same query twice: every step shared
        queries.append(queries[0])
    reasoning = rng.choice(("rdfs", "none"))
    with Engine(reasoning=reasoning) as eng, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        handles = [eng.register(R.render(q)) for q in queries]
        eng.push_many(R.gen_stream(rng))
        check(eng, handles)
        if queries[-1] is queries[0] and len(queries) > 1:
            graph = eng.rule_graph()
            first, last = handles[0], handles[-1]
            answer = [r.node for r in graph.rules if r.name == first.compiled.head]
            for nid in graph.below(answer):          # shared steps name both queries
                found, _ = GraphOrigins(graph, handles).of(nid)
                assert {first.name, last.name} <= {o.query for o in found}


SHAPES = [
    "SELECT ?s ?d WHERE { ?s :p ?o BIND(?o * 2 AS ?d) } SEQ { ?s :q ?x } FILTER(getDURATION() < \"PT5S\"^^xsd:duration)",
    "SELECT ?s ?c WHERE { ?s a :C . ?s :p ?o GRAPH <urn:g> { ?s :label ?c } }",
    "SELECT ?s WHERE { ?s :p ?o OPTIONAL { GRAPH <urn:g> { ?o :label ?l } } }",
    "CONSTRUCT { ?s :r _:b . _:b :q ?o } WHERE { { ?s :p ?o } EQUALSOPTIONAL { ?s :q ?o } }",
    "SELECT ?s (getDURATION() AS ?len) WHERE { { ?s :p ?o } OPTIONALSEQ { ?s :q ?x } }",
    "ASK { { ?s :p ?o } UNION { ?s :q ?o } UNION { ?s :r ?o } }",
]


@pytest.mark.parametrize("text", SHAPES, ids=range(len(SHAPES)))
@pytest.mark.parametrize("reasoning", ["rdfs", "none"])
def test_bind_graph_type_construct_and_projection(text, reasoning):
    with Engine(reasoning=reasoning) as eng, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        h = eng.register(R.PREFIXES + text)
        check(eng, [h])


def test_explain_names_the_element_and_its_position():
    from cli.test_cli import cli  # tests/cli/
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        q = Path(d) / "q.rq"
        q.write_text("PREFIX : <http://ex/>\nSELECT ?s WHERE { ?s :p ?o }\n"
                     "SEQ { ?s :q ?x }\nFILTER(getDURATION() < \"PT10S\"^^<http://www.w3.org/2001/XMLSchema#duration>)\n")
        r = cli("explain", str(q))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any("#3 SeqJoin (SEQ)" in line for line in lines), r.stdout        # the algebra
    seq = [line for line in lines if "implements q #3 SeqJoin (SEQ)" in line]
    assert seq and seq[0].endswith("line 3, column 1"), r.stdout             # the SEQ keyword
    assert any("implements q #5 Triple, line 2, column 19" in line for line in lines), r.stdout
