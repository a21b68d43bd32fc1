"""Naming the rule graph after the queries (epsparql.explain.rule_graph).

On generated EP-SPARQL queries: the root of each query's rule carries
the query's variables (and those of queries sharing the step); every stream triple pattern of the
query's algebra has a triple step whose subject and object carry its
variables
(names travel down from parent to child through the graph's terms); a
CONSTRUCT query's feedback rules are told apart from its answer rule;
and the printed tree names no variable the query does not have.
"""
from __future__ import annotations

import random
import warnings

import pytest

import sparql_reference as R
from epsparql import Engine
from epsparql.algebra.partition import stream_patterns
from epsparql.core.rule_graph import Child, Var, functor
from epsparql.explain.rule_graph import GraphNames, rule_graph_tree
from epsparql.explain.tree import tree_lines
from epsparql.rdf.prefixes import Prefixes


def leaf_triples(graph):
    """(node id, the triple term) of every step whose pattern is a triple
    (under a where: the RDFS wrapper)."""
    for n in graph.nodes.values():
        t = n.term
        if functor(t) == "where":
            t = t.args[0]
        if isinstance(t, Child):
            t = t.term
        if functor(t) == "triple":
            yield n.id, t


@pytest.mark.parametrize("seed", range(40))
def test_names_follow_the_queries(seed):
    rng = random.Random(9000 + seed)
    queries = [R.QueryGen(rng).select() for _ in range(rng.choice((1, 2, 3)))]
    with Engine() as eng, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        handles = [eng.register(R.render(q)) for q in queries]
        graph = eng.rule_graph()
    names = GraphNames(graph, handles)
    leaves = list(leaf_triples(graph))
    for h, rule, label in zip(handles, graph.rules, names.rule_labels):
        assert label == f"query {h.name}"
        carried = set().union(*names.names[rule.node].values()) if names.names[rule.node] else set()
        # its own variables, and those of other queries that share the step
        assert carried >= {v for v in h.compiled.variables if not v.startswith("_:")}
        for pat in stream_patterns(h.algebra.pattern):
            # subject and object (a predicate variable under RDFS reasoning
            # names the super-property; the triple carries the one it has)
            wanted = [(i, x.name) for i, x in ((0, pat.s), (2, pat.o))
                      if type(x).__name__ == "Var"]
            assert any(all(isinstance(t.args[i], Var)
                           and name in names.names[nid].get(t.args[i].index, ())
                           for i, name in wanted)
                       for nid, t in leaves), (R.render(queries[handles.index(h)]), pat)
    lines = [line for root in rule_graph_tree(graph, names, Prefixes()) for line in tree_lines(root)]
    every = {v for h in handles for v in h.compiled.variables}
    for line in lines:
        for word in line.replace(",", " ").split():
            for part in word.split("|"):
                if part.startswith("?"):
                    assert part[1:] in every, line


def test_construct_feedback_rules_are_named_after_their_query():
    with Engine() as eng:
        c = eng.register("PREFIX ex: <http://example.org/ns#>\n"
                         "CONSTRUCT { ?s ex:alarm ?t } WHERE { ?s ex:temperature ?t }", name="alarm")
        graph = eng.rule_graph()
    names = GraphNames(graph, [c])
    assert names.rule_labels == ["query alarm", "query alarm, its triples into the stream"]
    feedback = graph.rules[1]
    assert feedback.name == "triple"
    # the derived triple's subject and object are the query's ?s and ?t
    s, _, o = feedback.head.args
    assert names.label(feedback.node, s.index) == "?s" and names.label(feedback.node, o.index) == "?t"
